"""Converter for PSE-I, the word-level "inside" subset of the Paibi Student Essays
(Song et al. 2016; Bothwell et al. 2023; github.com/Mythologos/Paibi-Student-Essays).

Each essay is one XML file::

    <doc score="50" score1="47" ...>
      <scrawl add="0" remove="2" modify="1" error="4" />
      <para id="1">
        <sent id="0">
          <word id="0" cont="如果" pos="c" ne="O" parent="2" relate="ADV"
                parallelism_id_1="0" branch_id_1="1" />

One Doc is made per ``<para>``: its words in order across its sentences, with no
spaces between them (Chinese). The LTP annotation is kept:

* ``token.tag_`` = ``pos``;
* sentence starts from ``<sent>``;
* ``token.head`` / ``token.dep_`` from ``parent`` / ``relate`` (``parent`` is the
  ``id`` of the head word in the same sentence, -1 for the root, whose ``relate`` is
  ``HED``). A few words point at a word id that the sentence no longer has (words
  removed from the essay after parsing); they are attached to the sentence root,
  keep their label, and every such repair is reported with ``Conversion.skip``.
* ``doc.ents`` from ``ne``, which is BIOES (``S-Nh``, ``B-Ns``/``I-Ns``/``E-Ns``);
  types stay LTP's ``Nh`` (person), ``Ns`` (place), ``Ni`` (organisation). BIOES
  is recovered exactly from the entity spans.
* parallelisms from ``parallelism_id_<n>`` / ``branch_id_<n>`` (``n`` = stratum;
  PSE-I only has stratum 1): a branch is the contiguous run of words sharing one
  (parallelism, branch) pair, which may cross sentence boundaries; the
  parallelisms are written with ``set_parallelisms`` under the untyped label
  "parallelism". Branch ids matter: adjacent branches of one parallelism occur.

``doc.user_data``: ``dataset`` ("pse"), ``lang`` ("zh"), ``doc_id`` (the essay's file stem),
``section_id`` (the ``para`` id as a string, like the ASP converter's; the ids
are not always consecutive in the data), ``split``, and ``essay`` (the essay's
``<doc>`` attributes: scores as floats or None for "", "NULL" or absent; other
attributes as stripped strings; ``scrawl`` counts as ints when present).
"""

import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from xml.parsers import expat

import srsly
from spacy.tokens import Doc
from spacy.util import get_lang_class
from spacy.vocab import Vocab, create_vocab

from .parallelisms import UNTYPED, set_parallelisms
from .util import LANGUAGE_KEY, Conversion, CorpusFormatError

DATASET = "pse"
LANG = "zh"
ALL_SPLIT = "all"
# splits.json key -> split name
SPLIT_NAMES: Dict[str, str] = {
    "training": "train",
    "validation": "dev",
    "optimization": "opt",
    "test": "test",
}
SCORE_ATTRS = ("score", "score1", "score2", "score3")
WORD_ATTRS = ("id", "cont", "pos", "ne", "parent", "relate")
DANGLING_HEAD = "dangling dependency head attached to the sentence root"

_STRATUM_ATTR = re.compile(r"^(parallelism|branch)_id_([1-9][0-9]*)$")
_NE_TAG = re.compile(r"^(O|[BIES]-\S+)$")
# element -> the elements allowed inside it (None: the document itself)
_CHILDREN: Dict[Optional[str], Tuple[str, ...]] = {
    None: ("doc",),
    "doc": ("scrawl", "para"),
    "para": ("sent",),
    "sent": ("word",),
}


class _Word:
    __slots__ = ("line", "id", "cont", "pos", "ne", "parent", "relate", "branches")

    def __init__(self, line: int, attrs: Dict[str, str], path: Path):
        self.line = line
        for name in WORD_ATTRS:
            if name not in attrs:
                raise CorpusFormatError(path, line, f"<word> lacks the attribute '{name}'")
        self.id = _parse_int(attrs["id"], "id", path, line, minimum=0)
        self.parent = _parse_int(attrs["parent"], "parent", path, line, minimum=-1)
        self.cont = attrs["cont"]
        if not self.cont or self.cont.isspace():
            raise CorpusFormatError(path, line, "<word> has an empty 'cont'")
        self.pos = attrs["pos"]
        self.relate = attrs["relate"]
        self.ne = attrs["ne"]
        if self.ne != "O" and not _NE_TAG.match(self.ne):
            raise CorpusFormatError(
                path, line, f"<word> has ne='{self.ne}': expected 'O' or a BIOES tag like 'S-Nh'"
            )
        # stratum -> (parallelism id, branch id)
        self.branches: Dict[int, Tuple[int, int]] = {}
        if len(attrs) == len(WORD_ATTRS):
            return
        strata: Dict[int, Dict[str, str]] = {}
        for name, value in attrs.items():
            if name in WORD_ATTRS:
                continue
            match = _STRATUM_ATTR.match(name)
            if match is None:
                raise CorpusFormatError(path, line, f"<word> has an unknown attribute '{name}'")
            strata.setdefault(int(match.group(2)), {})[match.group(1)] = value
        for stratum, pair in strata.items():
            if len(pair) != 2:
                (given,) = pair
                missing = "branch" if given == "parallelism" else "parallelism"
                raise CorpusFormatError(
                    path,
                    line,
                    f"<word> has {given}_id_{stratum} without {missing}_id_{stratum}",
                )
            self.branches[stratum] = (
                _parse_int(pair["parallelism"], f"parallelism_id_{stratum}", path, line, 0),
                _parse_int(pair["branch"], f"branch_id_{stratum}", path, line, 0),
            )


def _parse_int(value: str, name: str, path: Path, line: int, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise CorpusFormatError(
            path, line, f"attribute {name}='{value}' is not an integer >= {minimum}"
        )
    return number


def _parse_score(value: Optional[str], name: str, path: Path, line: int) -> Optional[float]:
    if value is None or value.strip() in ("", "NULL"):
        return None
    try:
        return float(value)
    except ValueError:
        raise CorpusFormatError(
            path, line, f"<doc> has {name}='{value}': expected a number, '' or 'NULL'"
        ) from None


class _EssayParser:
    """Stream one essay with expat, which reports the line of every element."""

    def __init__(self, path: Path):
        self.path = path
        self.essay: Dict[str, Any] = {}
        # per paragraph: (line, para id, sentences); a sentence is (line, words)
        self.paragraphs: List[Tuple[int, int, List[Tuple[int, List[_Word]]]]] = []
        self._stack: List[str] = []
        self._parser = expat.ParserCreate()
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end

    def parse(self) -> None:
        with self.path.open("rb") as file_:
            try:
                self._parser.ParseFile(file_)
            except expat.ExpatError as err:
                message = expat.errors.messages[err.code]
                raise CorpusFormatError(
                    self.path, err.lineno, f"malformed XML: {message}"
                ) from None

    def _error(self, message: str) -> CorpusFormatError:
        return CorpusFormatError(self.path, self._parser.CurrentLineNumber, message)

    def _start(self, tag: str, attrs: Dict[str, str]) -> None:
        parent = self._stack[-1] if self._stack else None
        if tag not in _CHILDREN.get(parent, ()):
            where = f"inside <{parent}>" if parent else "as the root element"
            raise self._error(f"unexpected element <{tag}> {where}")
        line = self._parser.CurrentLineNumber
        if tag == "word":
            self.paragraphs[-1][2][-1][1].append(_Word(line, attrs, self.path))
        elif tag == "sent":
            self.paragraphs[-1][2].append((line, []))
        elif tag == "para":
            if "id" not in attrs:
                raise self._error("<para> lacks the attribute 'id'")
            para_id = _parse_int(attrs["id"], "id", self.path, line, minimum=0)
            if any(para_id == other for _, other, _ in self.paragraphs):
                raise self._error(f"duplicate <para id='{para_id}'>")
            self.paragraphs.append((line, para_id, []))
        elif tag == "scrawl":
            counts = {}
            for name, value in attrs.items():
                counts[name] = _parse_int(value, name, self.path, line, minimum=0)
            self.essay["scrawl"] = counts
        else:
            for name, value in attrs.items():
                if name in SCORE_ATTRS:
                    self.essay[name] = _parse_score(value, name, self.path, line)
                else:
                    self.essay[name] = value.strip() or None
            for name in SCORE_ATTRS:
                self.essay.setdefault(name, None)
        self._stack.append(tag)

    def _end(self, tag: str) -> None:
        self._stack.pop()


def _sentence_heads(
    sentence: List[_Word], offset: int, path: Path, conversion: Conversion
) -> List[int]:
    """Absolute head indices for one sentence whose first word is at ``offset``."""
    position: Dict[int, int] = {}
    for i, word in enumerate(sentence):
        if word.id in position:
            raise CorpusFormatError(path, word.line, f"duplicate <word id='{word.id}'> in sentence")
        position[word.id] = i
    roots = [i for i, word in enumerate(sentence) if word.parent == -1]
    if len(roots) != 1:
        raise CorpusFormatError(
            path,
            sentence[0].line,
            f"sentence has {len(roots)} root words (parent='-1'); expected exactly 1",
        )
    heads = []
    for i, word in enumerate(sentence):
        if word.parent == -1:
            heads.append(i)
        elif word.parent in position:
            heads.append(position[word.parent])
        else:
            conversion.skip(path, word.line, DANGLING_HEAD)
            heads.append(roots[0])
    for i in range(len(heads)):
        j, steps = i, 0
        while heads[j] != j:
            j = heads[j]
            steps += 1
            if steps > len(heads):
                raise CorpusFormatError(path, sentence[i].line, "dependency cycle in sentence")
    return [offset + h for h in heads]


def _iob(words: List[_Word], path: Path) -> List[str]:
    """Validate BIOES tags and return the IOB tags spaCy's Doc accepts."""
    tags = []
    open_type: Optional[str] = None
    for word in words + [None]:
        tag = "O" if word is None else word.ne
        prefix, label = tag[0], tag[2:]
        if open_type is not None and not (prefix in "IE" and label == open_type):
            line = word.line if word is not None else words[-1].line
            raise CorpusFormatError(path, line, f"entity {open_type} is not closed by an E- tag")
        if open_type is None and prefix in "IE":
            raise CorpusFormatError(path, word.line, f"ne='{tag}' does not continue an entity")
        if word is None:
            break
        if prefix == "B":
            open_type = label
        elif prefix == "E":
            open_type = None
        tags.append("O" if prefix == "O" else ("B-" if prefix in "BS" else "I-") + label)
    return tags


def _parallelisms(words: List[_Word], path: Path) -> List[Tuple[List[Tuple[int, int]], str, int]]:
    # (stratum, parallelism id) -> branch id -> [start, end, line of first word]
    groups: Dict[Tuple[int, int], Dict[int, List[int]]] = {}
    for i, word in enumerate(words):
        for stratum, (pid, bid) in word.branches.items():
            branches = groups.setdefault((stratum, pid), {})
            if bid not in branches:
                branches[bid] = [i, i + 1, word.line]
            elif branches[bid][1] == i:
                branches[bid][1] = i + 1
            else:
                raise CorpusFormatError(
                    path,
                    word.line,
                    f"branch {bid} of parallelism {pid} (stratum {stratum}) is not contiguous",
                )
    result = []
    for (stratum, pid), branches in groups.items():
        if len(branches) < 2:
            (first,) = branches.values()
            raise CorpusFormatError(
                path, first[2], f"parallelism {pid} (stratum {stratum}) has a single branch"
            )
        offsets = [(start, end) for start, end, _ in branches.values()]
        result.append((offsets, UNTYPED, stratum))
    return result


def _paragraph_doc(
    vocab: Vocab,
    sentences: List[Tuple[int, List[_Word]]],
    path: Path,
    conversion: Conversion,
) -> Doc:
    words: List[_Word] = []
    heads: List[int] = []
    sent_starts: List[bool] = []
    for _, sentence in sentences:
        if not sentence:
            continue
        heads.extend(_sentence_heads(sentence, len(words), path, conversion))
        sent_starts.extend([True] + [False] * (len(sentence) - 1))
        words.extend(sentence)
    if not words:
        doc = Doc(vocab, words=[])
        set_parallelisms(doc, [])
        return doc
    doc = Doc(
        vocab,
        words=[w.cont for w in words],
        spaces=[False] * len(words),
        tags=[w.pos for w in words],
        heads=heads,
        deps=[w.relate for w in words],
        sent_starts=sent_starts,
        ents=_iob(words, path),
    )
    set_parallelisms(doc, _parallelisms(words, path))
    return doc


def read_pse_essay(path: Path, vocab: Vocab, conversion: Optional[Conversion] = None) -> List[Doc]:
    """Read one PSE-I essay into one Doc per paragraph.

    path (Path): the essay's XML file.
    vocab (Vocab): the vocab of the new Docs.
    conversion (Optional[Conversion]): receives the reports of repaired records.
    RETURNS (List[Doc]): the paragraph Docs (``split`` not yet set in user_data).
    """
    path = Path(path)
    conversion = conversion if conversion is not None else Conversion()
    parser = _EssayParser(path)
    parser.parse()
    docs = []
    seen: Dict[Tuple[int, int], int] = {}  # (stratum, parallelism id) -> para id
    for _, para_id, sentences in parser.paragraphs:
        for _, sentence in sentences:
            for word in sentence:
                for stratum, (pid, _) in word.branches.items():
                    other = seen.setdefault((stratum, pid), para_id)
                    if other != para_id:
                        raise CorpusFormatError(
                            path,
                            word.line,
                            f"parallelism {pid} (stratum {stratum}) continues from paragraph "
                            f"{other}; a parallelism must lie within one paragraph",
                        )
        doc = _paragraph_doc(vocab, sentences, path, conversion)
        doc.user_data.update(
            {
                "dataset": DATASET,
                LANGUAGE_KEY: LANG,
                "doc_id": path.stem,
                "section_id": str(para_id),
                "essay": {
                    k: dict(v) if isinstance(v, dict) else v for k, v in parser.essay.items()
                },
            }
        )
        docs.append(doc)
    return docs


def _natural_key(path: Path) -> Tuple[int, str]:
    return (int(path.stem), path.name) if path.stem.isdigit() else (1 << 62, path.name)


def _locate(path: Path) -> Tuple[List[Path], Optional[Path]]:
    """Find the essay files and splits.json for a dataset root, an XML directory or a file."""
    if path.is_file():
        return [path], None
    xml_dir = path
    candidates = [path / "splits.json", path.parent.parent / "splits" / "splits.json"]
    if (path / "augmented" / "full").is_dir():
        xml_dir = path / "augmented" / "full"
        candidates = [path / "splits" / "splits.json"]
    files = sorted(xml_dir.glob("*.xml"), key=_natural_key)
    if not files:
        raise CorpusFormatError(xml_dir, None, "no PSE-I essay files (*.xml) found")
    splits = next((c for c in candidates if c.is_file()), None)
    return files, splits


def _read_splits(path: Path) -> Tuple[Dict[str, str], List[str]]:
    """splits.json ({"training": ["312.xml", ...], ...}) -> ({file name: split}, splits)."""
    try:
        data = srsly.read_json(path)
    except ValueError as err:
        raise CorpusFormatError(path, None, f"invalid JSON: {err}") from None
    if not isinstance(data, dict):
        raise CorpusFormatError(path, None, "expected an object {split: [file names]}")
    assignment: Dict[str, str] = {}
    for key, names in data.items():
        if key not in SPLIT_NAMES:
            raise CorpusFormatError(
                path, key, f"unknown split '{key}'; expected one of {', '.join(SPLIT_NAMES)}"
            )
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise CorpusFormatError(path, key, "expected a list of file names")
        for name in names:
            if name in assignment:
                raise CorpusFormatError(
                    path, key, f"{name} is in both '{assignment[name]}' and '{SPLIT_NAMES[key]}'"
                )
            assignment[name] = SPLIT_NAMES[key]
    return assignment, [split for key, split in SPLIT_NAMES.items() if key in data]


def convert_pse(path: Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert PSE-I (word level) to one Doc per paragraph, in the splits of
    ``splits/splits.json`` (training/validation/optimization/test -> train/dev/opt/test).

    path (Path): the dataset root (with ``augmented/full/*.xml`` and
        ``splits/splits.json``), a directory of essay XML files (split assignment from
        a ``splits.json`` beside them or in ``../../splits/``), or one essay file.
        Without a splits file every Doc goes to the split "all".
    vocab (Optional[Vocab]): the vocab of the new Docs (default: a blank Chinese one).
    RETURNS (Conversion): the Docs per split and the reported repairs.
    """
    path = Path(path)
    if vocab is None:
        # the Chinese vocab without building a Language (which loads every plugin)
        vocab = create_vocab(LANG, get_lang_class(LANG).Defaults)
    files, splits_path = _locate(path)
    conversion = Conversion()
    if splits_path is None:
        assignment = {f.name: ALL_SPLIT for f in files}
        conversion.splits[ALL_SPLIT] = []
    else:
        assignment, splits = _read_splits(splits_path)
        on_disk = {f.name for f in files}
        for name, split in assignment.items():
            if name not in on_disk:
                raise CorpusFormatError(
                    splits_path, None, f"{name} ({split}) is not among the essay files"
                )
        for split in splits:
            conversion.splits[split] = []
    for file_ in files:
        split = assignment.get(file_.name)
        if split is None:
            raise CorpusFormatError(splits_path, None, f"{file_.name} is in no split")
        for doc in read_pse_essay(file_, vocab, conversion):
            doc.user_data["split"] = split
            conversion.splits[split].append(doc)
    return conversion
