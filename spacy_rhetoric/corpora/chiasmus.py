"""Converters for chiasmus datasets.

Every annotated candidate A B B' A' becomes one Doc carrying two span groups:

* ``doc.spans["chiasmus"]``: one Span from A to A' (A' included), labelled with
  the dataset's annotation, ``span_id`` "c0";
* ``doc.spans["chiasmus_support"]``: the four single-token spans of A, B, B', A',
  labelled "A", "B", "B'", "A'", with the same ``span_id``.

German (GerDraCor; Schneider et al. 2021, 2023; ``convert_chiasmus_de``): the JSON
list of the chiasmus-detector / chiasmus-annotations repositories. Each record has
the context tokens (``tokens``, ``pos``, ``lemmas``, ``dep``), ``cont_ids`` (the
play offsets of the first and last context token), ``ids`` (the play offsets of
A, B, B', A') and the annotation code. The Doc's words are the tokens, newline
tokens included; as the source keeps no spacing, a space follows every token
except whitespace tokens, the token before a whitespace token or before closing
punctuation, an opening bracket or quote, and the last token. ``token.pos_`` and
``token.lemma_`` are set; the ``dep`` labels come without heads, so they cannot be
a parse: they are kept in ``doc.user_data["dep"]``. The empty annotation code ""
becomes the span label "empty" (spaCy reads an empty label as "no label");
``user_data["annotation"]`` keeps the raw code.

English: either Dubremetz & Nivre's Europarl XML (``<category name="True">``
around ``<chi>`` records; ``convert_chiasmus_en`` on the directory or one file) or
the JSON lists of Meyer, Nurbakova & Berthomet (a directory of ``*.json`` or one
file). See ``convert_chiasmus_en`` for the details of each.
"""

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple
from xml.parsers import expat

import spacy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import get_lang_class
from spacy.vocab import Vocab, create_vocab

from .util import Conversion, CorpusFormatError

SPANS_KEY = "chiasmus"
SUPPORT_KEY = "chiasmus_support"
ROLES = ("A", "B", "B'", "A'")
CANDIDATE_ID = "c0"
EMPTY_CODE_LABEL = "empty"
DE_DATASET = "chiasmus-de"
EN_DATASET = "chiasmus-en"
ALL_SPLIT = "all"

DE_FILES = ("data.json", "data_example.json")
DE_FIELDS: Dict[str, type] = {
    "tokens": list,
    "ids": list,
    "cont_ids": list,
    "pos": list,
    "lemmas": list,
    "dep": list,
    "annotation": str,
    "original_file": str,
}
_NO_SPACE_AFTER = frozenset(("(", "[", "„"))
_NO_SPACE_BEFORE = frozenset((",", ".", "!", "?", "...", ";", ":", ")", "]", "“"))

# Dubremetz & Nivre: file name -> split. The intersections of both annotators are the
# published train and test sets; each annotator's own file covers the training part.
DUBREMETZ_SPLITS: Dict[str, str] = {
    "annotated0t16M_i_0t16J.xml": "train",
    "annotated16t24M_i_16t24J.xml": "test",
    "annotated0t16M.xml": "train_annotator_m",
    "annotated0t16J.xml": "train_annotator_j",
}
DUBREMETZ_NEWLINE = "##N##"
# Meyer/Berthomet: unions of the other files, skipped so that no record is doubled
MEYER_UNIONS = frozenset(("all-data.json", "all-chiasmi.json", "all-antimetaboles.json"))
UNALIGNED = "candidate offsets do not align to token boundaries"
NO_OFFSET_BASE = "no ibeg and no unique position of the extract in the sentence"
DUPLICATE_FILE = "byte-identical to another file of the dataset"
UNION_FILE = "union of other files of the dataset"


def set_candidate(
    doc: Doc,
    tokens: Sequence[int],
    label: str,
    span_id: str = CANDIDATE_ID,
) -> None:
    """Add one candidate A B B' A' to ``doc.spans["chiasmus"]`` (A..A') and
    ``doc.spans["chiasmus_support"]`` (the four tokens).

    doc (Doc): the doc.
    tokens (Sequence[int]): the token indices of A, B, B', A'.
    label (str): the label of the A..A' span.
    span_id (str): the identifier shared by the candidate's spans.
    """
    a, _, _, a2 = tokens
    for key in (SPANS_KEY, SUPPORT_KEY):
        if key not in doc.spans:
            doc.spans[key] = []
    doc.spans[SPANS_KEY].append(Span(doc, a, a2 + 1, label=label, span_id=span_id))
    for role, i in zip(ROLES, tokens):
        doc.spans[SUPPORT_KEY].append(Span(doc, i, i + 1, label=role, span_id=span_id))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise CorpusFormatError(path, err.lineno, f"invalid JSON: {err.msg}") from None


def _default_vocab(lang: str) -> Vocab:
    # a language's vocab without building a Language (which loads every plugin)
    return create_vocab(lang, get_lang_class(lang).Defaults)


def _blank(lang: str, vocab: Optional[Vocab]) -> Language:
    return spacy.blank(lang, vocab=vocab if vocab is not None else True)


def german_spaces(words: Sequence[str]) -> List[bool]:
    """Reconstruct the spacing of tokens given without it (see the module docstring).

    words (Sequence[str]): the tokens.
    RETURNS (List[bool]): whether each token is followed by a space.
    """
    spaces = []
    for i, word in enumerate(words):
        if i + 1 == len(words) or word.isspace() or word in _NO_SPACE_AFTER:
            spaces.append(False)
            continue
        following = words[i + 1]
        spaces.append(not (following.isspace() or following in _NO_SPACE_BEFORE))
    return spaces


def _de_record_doc(vocab: Vocab, record: Any, path: Path, index: int) -> Doc:
    where = f"record {index}"
    if not isinstance(record, dict):
        raise CorpusFormatError(path, where, "expected an object")
    for name, kind in DE_FIELDS.items():
        if name not in record:
            raise CorpusFormatError(path, where, f"missing field '{name}'")
        if not isinstance(record[name], kind):
            raise CorpusFormatError(path, where, f"field '{name}' is not a {kind.__name__}")
    tokens = record["tokens"]
    n = len(tokens)
    if not all(isinstance(t, str) and t for t in tokens):
        raise CorpusFormatError(path, where, "'tokens' must be non-empty strings")
    for name in ("pos", "lemmas", "dep"):
        values = record[name]
        if len(values) != n or not all(isinstance(v, str) for v in values):
            raise CorpusFormatError(
                path, where, f"'{name}' must be {n} strings, one per token (got {len(values)})"
            )
    bounds = record["cont_ids"]
    if len(bounds) != 2 or not all(isinstance(b, int) for b in bounds):
        raise CorpusFormatError(path, where, "'cont_ids' must be two integers [first, last]")
    if bounds[1] - bounds[0] + 1 != n:
        raise CorpusFormatError(
            path, where, f"'cont_ids' {bounds} span {bounds[1] - bounds[0] + 1} tokens, not {n}"
        )
    ids = record["ids"]
    if len(ids) != 4 or not all(isinstance(i, int) for i in ids):
        raise CorpusFormatError(path, where, "'ids' must be four integers (A, B, B', A')")
    positions = [i - bounds[0] for i in ids]
    if not all(0 <= p < n for p in positions):
        raise CorpusFormatError(path, where, f"'ids' {ids} lie outside 'cont_ids' {bounds}")
    if not all(p < q for p, q in zip(positions, positions[1:])):
        raise CorpusFormatError(path, where, f"'ids' {ids} are not in increasing order")
    try:
        doc = Doc(
            vocab,
            words=tokens,
            spaces=german_spaces(tokens),
            pos=record["pos"],
            lemmas=record["lemmas"],
        )
    except ValueError as err:
        raise CorpusFormatError(path, where, f"bad token annotation: {err}") from None
    code = record["annotation"]
    set_candidate(doc, positions, code if code else EMPTY_CODE_LABEL)
    doc.user_data.update(
        {
            "dataset": DE_DATASET,
            "doc_id": record["original_file"],
            "candidate": index,
            "annotation": code,
            "dep": list(record["dep"]),
            "split": ALL_SPLIT,
        }
    )
    return doc


def convert_chiasmus_de(path: Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert the German chiasmus candidates (GerDraCor) to one Doc per candidate,
    all in the split "all" (the dataset is evaluated by cross-validation).

    path (Path): the JSON file, or a directory holding ``data.json`` (the full set)
        or ``data_example.json`` (the chiasmus-detector sample).
    vocab (Optional[Vocab]): the vocab of the new Docs (default: a blank German one).
    RETURNS (Conversion): the Docs in the split "all".
    """
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in DE_FILES if (path / name).is_file()]
        if not found:
            raise CorpusFormatError(path, None, f"no {' or '.join(DE_FILES)} in this directory")
        path = found[0]
    vocab = vocab if vocab is not None else _default_vocab("de")
    records = _read_json(path)
    if not isinstance(records, list):
        raise CorpusFormatError(path, None, "expected a JSON list of candidate records")
    conversion = Conversion()
    conversion.splits[ALL_SPLIT] = [
        _de_record_doc(vocab, record, path, i) for i, record in enumerate(records)
    ]
    return conversion


class _Element:
    __slots__ = ("tag", "attrs", "line", "children", "text")

    def __init__(self, tag: str, attrs: Dict[str, str], line: int):
        self.tag = tag
        self.attrs = attrs
        self.line = line
        self.children: List[_Element] = []
        self.text = ""

    def find(self, tag: str) -> Optional["_Element"]:
        return next((child for child in self.children if child.tag == tag), None)


def _parse_xml(path: Path, data: bytes) -> _Element:
    """Parse XML into a small tree that remembers the line of every element."""
    stack: List[_Element] = []
    roots: List[_Element] = []
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def start(tag: str, attrs: Dict[str, str]) -> None:
        element = _Element(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(element)
        stack.append(element)

    def end(tag: str) -> None:
        stack.pop()

    def text(data: str) -> None:
        if stack:
            stack[-1].text += data

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as err:
        message = expat.errors.messages[err.code]
        raise CorpusFormatError(path, err.lineno, f"malformed XML: {message}") from None
    return roots[0]


def _fix_declaration(data: bytes) -> bytes:
    """The files declare encoding='utf8', which expat rejects."""
    return re.sub(rb"^(<\?xml[^>]*encoding=)(['\"])utf8\2", rb"\1\2utf-8\2", data, count=1)


def _int_attr(element: _Element, name: str, path: Path) -> int:
    value = element.attrs.get(name)
    if value is None:
        raise CorpusFormatError(path, element.line, f"<{element.tag}> lacks '{name}'")
    try:
        return int(value)
    except ValueError:
        raise CorpusFormatError(
            path, element.line, f"<{element.tag}> has {name}='{value}': expected an integer"
        ) from None


def _align(doc: Doc, offsets: Sequence[Tuple[int, int]]) -> Optional[List[Span]]:
    """The span of tokens of each (start, end) character offset, or None if any offset
    does not fall on token boundaries."""
    spans = []
    for start, end in offsets:
        span = doc.char_span(start, end) if 0 <= start < end <= len(doc.text) else None
        if span is None:
            return None
        spans.append(span)
    return spans


def _recover_base(doc: Doc, offsets: Sequence[Tuple[int, int]], extract: str) -> Optional[int]:
    """Find the absolute offset of the sentence's first character for a record without
    ``ibeg``: the extract runs from A to A', so its first and last words must sit at
    A and A', and all four words must be tokens. Only a unique solution counts."""
    words = extract.split()
    if not words:
        return None
    first, last = words[0], words[-1]
    text = doc.text
    (a_start, _), (d_start, _) = offsets[0], offsets[-1]
    bases = []
    for match in re.finditer(re.escape(first), text):
        base = a_start - match.start()
        d = d_start - base
        if text[d : d + len(last)] != last:
            continue
        if _align(doc, [(s - base, e - base) for s, e in offsets]) is not None:
            bases.append(base)
    return bases[0] if len(bases) == 1 else None


def _dubremetz_file(nlp: Language, path: Path, split: str, conversion: Conversion) -> List[Doc]:
    root = _parse_xml(path, _fix_declaration(path.read_bytes()))
    if root.tag != "annotated":
        raise CorpusFormatError(path, root.line, f"root element <{root.tag}>, not <annotated>")
    docs = []
    index = 0
    for category in root.children:
        if category.tag != "category":
            continue
        name = category.attrs.get("name")
        if not name:
            raise CorpusFormatError(path, category.line, "<category> lacks 'name'")
        for chi in category.children:
            if chi.tag != "chi":
                continue
            index += 1
            doc = _dubremetz_record(nlp, chi, name, path, index - 1, conversion)
            if doc is not None:
                doc.user_data["split"] = split
                docs.append(doc)
    return docs


def _dubremetz_record(
    nlp: Language,
    chi: _Element,
    category: str,
    path: Path,
    index: int,
    conversion: Conversion,
) -> Optional[Doc]:
    parts = {}
    for tag in ("wA", "wB", "sent"):
        element = chi.find(tag)
        if element is None:
            raise CorpusFormatError(path, chi.line, f"<chi> lacks <{tag}>")
        parts[tag] = element
    w_a, w_b, sent = parts["wA"], parts["wB"], parts["sent"]
    offsets = [
        (_int_attr(w_a, "begA", path), _int_attr(w_a, "endA", path)),
        (_int_attr(w_b, "begB", path), _int_attr(w_b, "endB", path)),
        (_int_attr(w_b, "begC", path), _int_attr(w_b, "endC", path)),
        (_int_attr(w_a, "begD", path), _int_attr(w_a, "endD", path)),
    ]
    # the corpus marks line breaks inside <sent> as ##N##; the offsets count one character
    doc = nlp.make_doc(sent.text.replace(DUBREMETZ_NEWLINE, "\n"))
    recovered = "ibeg" not in sent.attrs
    if recovered:
        extract = chi.find("extract")
        base = _recover_base(doc, offsets, extract.text if extract is not None else "")
        if base is None:
            conversion.skip(path, chi.line, NO_OFFSET_BASE)
            return None
    else:
        base = _int_attr(sent, "ibeg", path)
    relative = [(start - base, end - base) for start, end in offsets]
    spans = _align(doc, relative)
    if spans is None or not all(p.end <= q.start for p, q in zip(spans, spans[1:])):
        conversion.skip(path, chi.line, UNALIGNED)
        return None
    merged = sum(len(span) > 1 for span in spans)
    if merged:
        # a word of the annotation (CoreNLP) that spaCy splits, e.g. "non-smokers"
        with doc.retokenize() as retokenizer:
            for span in spans:
                if len(span) > 1:
                    retokenizer.merge(span)
        spans = _align(doc, relative)
    tokens = [span.start for span in spans]
    set_candidate(doc, tokens, category)
    doc.user_data.update(
        {
            "dataset": EN_DATASET,
            "corpus": "dubremetz-nivre",
            "doc_id": f"{path.stem}:{index}",
            "candidate": index,
            "category": category,
            "lemmas": [w_a.text, w_b.text],
            "sentence_ids": [sent.attrs.get(k) for k in ("idA", "idB", "idC", "idD")],
            "offset_base": base,
            "offset_base_recovered": recovered,
            "merged_tokens": merged,
        }
    )
    return doc


def _meyer_file(nlp: Language, path: Path, split: str) -> List[Doc]:
    records = _read_json(path)
    if not isinstance(records, list):
        raise CorpusFormatError(path, None, "expected a JSON list of records")
    texts = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise CorpusFormatError(path, f"record {i}", "expected an object")
        for name in ("text", "category"):
            if not isinstance(record.get(name), str):
                problem = "missing field" if name not in record else "non-string field"
                raise CorpusFormatError(path, f"record {i}", f"{problem} '{name}'")
        texts.append(record["text"])
    docs = []
    for i, (record, doc) in enumerate(zip(records, nlp.tokenizer.pipe(texts))):
        extra = {k: v for k, v in record.items() if k not in ("text", "category")}
        doc.user_data.update(
            {
                "dataset": EN_DATASET,
                "corpus": "meyer-berthomet",
                "doc_id": f"{split}:{i}",
                "record": i,
                "category": record["category"],
                **extra,
                "split": split,
            }
        )
        docs.append(doc)
    return docs


def _english_files(path: Path) -> Tuple[str, List[Path]]:
    if path.is_file():
        kind = {".xml": "xml", ".json": "json"}.get(path.suffix.lower())
        if kind is None:
            raise CorpusFormatError(path, None, "expected a .xml or .json file")
        return kind, [path]
    # the known Dubremetz files first, in the order of DUBREMETZ_SPLITS
    order = list(DUBREMETZ_SPLITS)
    xml_files = sorted(
        path.glob("*.xml"),
        key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name),
    )
    if xml_files:
        return "xml", xml_files
    json_files = sorted(
        path.rglob("*.json"),
        key=lambda p: (len(p.relative_to(path).parts), p.relative_to(path).parts),
    )
    if json_files:
        return "json", json_files
    raise CorpusFormatError(path, None, "no chiasmus files (*.xml or *.json) found")


def convert_chiasmus_en(path: Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert an English chiasmus dataset; its format is recognised from the files.

    Dubremetz & Nivre (``*.xml``): one Doc per ``<chi>``, the text of ``<sent>``
    tokenized by spaCy's English tokenizer, its ``##N##`` line marks turned back into
    the newline the offsets count. The candidate's character offsets (begA, begB,
    begC, begD) are absolute in the Europarl text; ``ibeg`` is the sentence's start.
    Where ``ibeg`` is missing, it is recovered as the unique position at which the
    ``extract``'s first and last words sit at A and A' and all four words are tokens.
    A candidate word that spaCy splits into several tokens (hyphenated compounds like
    "non-smokers", one word for CoreNLP) is merged into one token, so that A, B, B'
    and A' are always single tokens (``user_data["merged_tokens"]`` counts the
    merges). Records whose offsets do not fall on token boundaries are skipped and
    reported.
    The span label is the category (True, False, Borderline, Duplicate,
    DuplicateOfBorderline, Other). Splits: ``DUBREMETZ_SPLITS`` (train and test are
    the annotators' intersections; each annotator's own file of the training part
    is the split "train_annotator_m"/"train_annotator_j", for agreement studies, not
    for training together with "train"); other files by stem; byte-identical copies
    are skipped and reported. The ``featSpec`` feature vectors are not kept.

    Meyer, Nurbakova & Berthomet (``*.json``, searched recursively): one Doc per
    record ({"text", "category", ...}), no candidate spans (the data gives no
    positions), ``user_data["category"]`` and any further fields (source,
    originalauthor); one split per file, named after its stem. The "all-*.json"
    unions are skipped and reported.

    path (Path): a directory or one file of either dataset.
    vocab (Optional[Vocab]): the vocab of the new Docs (default: a blank English one).
    RETURNS (Conversion): the Docs per split and the skipped records.
    """
    path = Path(path)
    kind, files = _english_files(path)
    nlp = _blank("en", vocab)
    conversion = Conversion()
    seen: Dict[str, Path] = {}
    for file_ in files:
        if kind == "json" and file_.name in MEYER_UNIONS:
            conversion.skip(file_, None, UNION_FILE)
            continue
        digest = hashlib.sha1(file_.read_bytes()).hexdigest()
        if digest in seen:
            conversion.skip(file_, None, DUPLICATE_FILE)
            continue
        seen[digest] = file_
        split = DUBREMETZ_SPLITS.get(file_.name, file_.stem) if kind == "xml" else file_.stem
        if split in conversion.splits:
            raise CorpusFormatError(file_, None, f"a second file for the split '{split}'")
        if kind == "xml":
            conversion.splits[split] = _dubremetz_file(nlp, file_, split, conversion)
        else:
            conversion.splits[split] = _meyer_file(nlp, file_, split)
    return conversion
