"""Convert the Augustinian Sermon Parallelism (ASP) dataset to Docs.

ASP (Bothwell et al. 2023, CC BY-SA 4.0) annotates rhetorical parallelism in 80 Latin
sermons of Augustine. It ships the same annotation twice: as brat files
(``brat/NNN.txt`` + ``brat/NNN.ann``: text-bound arms, typed relations between them)
and as tokenized XML (``xml/tokenized/NNN_annotated.xml``: sermon > section > word,
each word with ``cont`` and, per stratum k, ``parallelism_id_k`` / ``branch_id_k``).
``splits/splits.json`` assigns the XML files to training/validation/optimization/test.
The XML is read by ``asp_xml``, the brat files by ``asp_brat``, ``asp_align`` aligns
the XML words to the brat text; this module combines them into Docs per split.

How the two sources are combined:

* **Tokens, branches, grouping and strata come from the XML**, which is what the
  published counts and the reference systems use. One Doc per ``<section>``; its words
  are the XML ``cont`` values, unchanged (lower-cased, enclitics split by CLTK). The
  stratum of a parallelism is the suffix of its XML attributes (1 = outermost).
* **Whitespace comes from the brat text.** The words are aligned to the section's
  text (case-insensitively); besides exact matches the aligner knows the three ways
  the CLTK tokenizer rewrites text: a split enclitic ("ame" "-ne" for "amen",
  "x" "-ne" for "xne"), the inverted "cum" ("cum" "te" for "tecum") and an HTML entity
  re-tokenized as three words ("&" "lt" ";" for "<"). Words of one text word get
  ``space=False``. A word that cannot be aligned gets a space and is reported.
* **Types come from brat.** Arms (``ParallelArm``, ``ChiasmA``, ``ChiasmB``) are mapped
  to token spans and matched to the XML branches after trimming punctuation-only
  tokens at both edges (the XML leaves edge punctuation out of branches, brat often
  includes it). A parallelism is ``"chiastic"`` if every brat relation between its
  arms is ``Chiasm``, ``"synchystic"`` if every one is ``Parallel`` (or the older
  ``Parallelism``, used in one file). **Mixed groups** (some ``Chiasm``, some
  ``Parallel`` links) are labelled by the majority of their links, ties going to
  ``"chiastic"``, and each is reported. A parallelism with no matching brat relation
  keeps the untyped label ``"parallelism"`` and is reported.
* **Cross-check.** Every disagreement between brat and XML is reported through
  ``Conversion.skip`` (the XML annotation is kept): an XML branch without a brat arm,
  a brat arm without an XML branch, a parallelism whose brat arms are grouped
  differently, a stratum that differs from the nesting of the brat arms.
* **A parallelism spanning two sections** (one in the corpus: sermon 179, sections 4
  and 5) cannot live in a section Doc, whose span group only holds parallelisms with
  >= 2 branches. It is kept, losslessly, in ``doc.user_data["cross_section_parallelisms"]``
  of every section it touches and reported; the span groups hold all other ones.
* brat annotator notes are kept in ``doc.user_data["notes"]`` (word span, arm, text).
* ``doc.user_data`` also holds ``dataset`` ("asp"), ``lang`` ("la": what a model that
  reads the language sees, see ``util.doc_language``), ``doc_id``, ``section_id``, ``split``.
* brat arms that no relation links are not branches (the XML has none for them); each
  is reported. Discontinuous arms are read as one span (reported unless only
  whitespace separates the fragments, as brat splits arms at line breaks).

On ASP v1.0 the cross-check finds no disagreement: all 4,651 linked arms match an XML
branch (3,383 only after trimming edge punctuation), the 2,062 brat groups are the XML
parallelisms with the same strata, no group mixes Chiasm and Parallel links (41 are
chiastic), and every word aligns. The reports are the 11 unlinked arms and the one
cross-section parallelism.

Malformed input (a bad .ann line, a relation to an undefined arm, an XML word without
``cont`` or with a bad attribute, a non-contiguous branch, a branch with no partner,
sections that differ between .txt and XML, ...) raises ``CorpusFormatError`` naming
the file and the line.
"""

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Dict, List, Sequence, Set, Tuple

import spacy
import srsly
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .asp_align import Alignment, align_words
from .asp_brat import ARM_TYPES_OF, RELATION_LABELS, Arm, read_brat
from .asp_xml import Section, Sermon, read_asp_xml, xml_parallelisms
from .parallelisms import CHIASTIC, SYNCHYSTIC, UNTYPED, set_parallelisms
from .util import LANGUAGE_KEY, Conversion, CorpusFormatError

DATASET = "asp"
LANGUAGE = "la"
# splits.json key -> our split name
SPLITS: Dict[str, str] = {
    "training": "train",
    "validation": "dev",
    "optimization": "opt",
    "test": "test",
}

# skip / warning reasons (the keys of Conversion.skip_summary())
SKIP_UNALIGNED_WORD = "word not found in the brat text (space assumed)"
SKIP_UNCOVERED_TEXT = "brat text not covered by any XML word"
SKIP_NOT_IN_SPLIT = "XML file listed in no split"
SKIP_CROSS_SECTION = "parallelism spans sections (kept in user_data, not in the span group)"
SKIP_MIXED = "parallelism with both Chiasm and Parallel links (labelled by majority)"
SKIP_UNTYPED = "parallelism without brat relation (labelled 'parallelism')"
SKIP_XML_ONLY = "XML branch without matching brat arm"
SKIP_BRAT_ONLY = "brat arm without matching XML branch"
SKIP_UNLINKED = "brat arm linked by no relation (not a branch)"
SKIP_ARM_TYPE = "brat relation type disagrees with the types of its arms"
SKIP_GROUPING = "brat and XML group the branches differently"
SKIP_STRATUM = "XML stratum differs from the nesting of the brat arms"
SKIP_ARM_PLACEMENT = "brat arm cannot be placed on the words of one section"
SKIP_DISCONTINUOUS_ARM = "discontinuous brat arm (read as one span)"
SKIP_NOTE = "brat note on an arm that cannot be placed"

_HEADER_RE = re.compile(r"<(\S+) (\S+)>[ \t]*")


def convert_asp(path: str | Path, vocab: Vocab | None = None) -> Conversion:
    """Convert the ASP dataset: one Doc per section, per split.

    path (str | Path): the dataset root, holding ``brat/``, ``xml/tokenized/`` and
        ``splits/splits.json``.
    vocab (Vocab | None): the vocab of the Docs; None: a blank Latin ("la") vocab.
    RETURNS (Conversion): Docs under "train", "dev" (validation), "opt" (optimization)
        and "test", and everything the converter had to report.
    """
    root = Path(path)
    if vocab is None:
        vocab = spacy.blank(LANGUAGE).vocab
    xml_dir = root / "xml" / "tokenized"
    brat_dir = root / "brat"
    conversion = Conversion(splits={name: [] for name in SPLITS.values()})
    assignment = _read_splits(root / "splits" / "splits.json", xml_dir)
    for name in sorted(p.name for p in xml_dir.glob("*.xml")):
        if name not in assignment:
            conversion.skip(xml_dir / name, None, SKIP_NOT_IN_SPLIT)
    for name, split in assignment.items():
        docs = _convert_sermon(xml_dir / name, brat_dir, split, vocab, conversion)
        conversion.splits[split].extend(docs)
    return conversion


def _read_splits(path: Path, xml_dir: Path) -> Dict[str, str]:
    """RETURNS (Dict[str, str]): XML file name -> split, in the order of the file."""
    if not path.exists():
        raise CorpusFormatError(path, None, "splits file not found")
    try:
        data = srsly.read_json(path)
    except ValueError as err:
        raise CorpusFormatError(path, None, f"not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise CorpusFormatError(path, None, "expected an object of split name -> file names")
    assignment: Dict[str, str] = {}
    for key, names in data.items():
        if key not in SPLITS:
            raise CorpusFormatError(path, key, f"unknown split (expected {', '.join(SPLITS)})")
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names):
            raise CorpusFormatError(path, key, "expected a list of file names")
        for name in names:
            if name in assignment:
                raise CorpusFormatError(path, key, f"{name} is also in another split")
            if not (xml_dir / name).exists():
                raise CorpusFormatError(path, key, f"{name} is not in {xml_dir}")
            assignment[name] = SPLITS[key]
    return assignment


def _read_sections(txt_path: Path, text: str, sermon: Sermon) -> List[Tuple[int, int]]:
    """Find the "<sermon section>" header lines of a brat text and check them
    against the XML sections.

    RETURNS (List[Tuple[int, int]]): (start, end) character range of each section's text.
    """
    headers: List[Tuple[int, int, int, str, str]] = []  # line, start, end, sermon, section
    offset = 0
    for n, line in enumerate(text.split("\n"), 1):
        match = _HEADER_RE.fullmatch(line.rstrip("\r"))
        if match:
            headers.append((n, offset, offset + len(line) + 1, *match.groups()))
        elif not headers and line.strip():
            raise CorpusFormatError(txt_path, n, "text before the first '<sermon section>' header")
        offset += len(line) + 1
    for k, section in enumerate(sermon.sections):
        if k >= len(headers):
            raise CorpusFormatError(
                txt_path, None, f"no header for section {section.id} of {sermon.path.name}"
            )
        n, _, _, sermon_id, section_id = headers[k]
        if (sermon_id, section_id) != (sermon.id, section.id):
            raise CorpusFormatError(
                txt_path,
                n,
                f"header <{sermon_id} {section_id}> but {sermon.path.name} has section "
                f"{section.id} of sermon {sermon.id} here",
            )
    if len(headers) > len(sermon.sections):
        raise CorpusFormatError(
            txt_path, headers[len(sermon.sections)][0], f"section not in {sermon.path.name}"
        )
    bounds = [h[1] for h in headers[1:]] + [len(text)]
    return [(h[2], min(b, len(text))) for h, b in zip(headers, bounds, strict=True)]


@dataclass
class _Placed:
    """A brat arm placed on the words of one section."""

    arm: Arm
    section: int
    start: int  # word offsets, full extent
    end: int
    core: Tuple[int, int]  # word offsets without edge punctuation


def _is_punct(word: str) -> bool:
    return not any(c.isalnum() for c in word)


def _place_arm(
    arm: Arm,
    bounds: List[Tuple[int, int]],
    starts: List[int],
    alignments: List[Alignment],
    sections: List[Section],
) -> _Placed | None:
    k = bisect.bisect_right(starts, arm.start) - 1
    if k < 0 or arm.end > bounds[k][1]:
        return None
    alignment = alignments[k]
    units = alignment.units
    lo = bisect.bisect_right(alignment.unit_ends, arm.start)
    covered: List[int] = []
    for u_start, _, first, last in units[lo:]:
        if u_start >= arm.end:
            break
        for i in range(first, last):
            span = alignment.offsets[i]
            if span is not None and span[0] < arm.end and span[1] > arm.start:
                covered.append(i)
    if not covered:
        return None
    start, end = min(covered), max(covered) + 1
    if len(set(covered)) != end - start:
        return None
    words = sections[k].words
    core_start, core_end = start, end
    while core_start < core_end and _is_punct(words[core_start]):
        core_start += 1
    while core_end > core_start and _is_punct(words[core_end - 1]):
        core_end -= 1
    return _Placed(arm, k, start, end, (core_start, core_end))


def _find(parent: Dict[str, str], x: str) -> str:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _brat_strata(placed: Dict[str, _Placed], group_of: Dict[str, str]) -> Dict[str, int]:
    """Stratum of each brat group from the nesting of its arms' character spans:
    1 + the largest number of other groups' arms that contain one of its arms."""
    by_section: Dict[int, List[_Placed]] = {}
    for p in placed.values():
        by_section.setdefault(p.section, []).append(p)
    strata: Dict[str, int] = {}
    for arms in by_section.values():
        for p in arms:
            depth = sum(
                1
                for q in arms
                if group_of[q.arm.id] != group_of[p.arm.id]
                and q.arm.start <= p.arm.start
                and p.arm.end <= q.arm.end
                and (q.arm.start, q.arm.end) != (p.arm.start, p.arm.end)
            )
            group = group_of[p.arm.id]
            strata[group] = max(strata.get(group, 1), depth + 1)
    return strata


def _match_arms(
    placed: Dict[str, _Placed],
    linked: Set[str],
    group_of: Dict[str, str],
    branch_at: Dict[Tuple[int, int, int], List[Tuple[int, int]]],
    ann_path: Path,
    conversion: Conversion,
) -> Dict[Tuple[int, int], str]:
    """Match brat arms to XML branches by section and word span: the span without
    edge punctuation first, then the full span. Where several branches have the same
    span (at different strata), prefer the one whose parallelism already holds an arm
    of the same brat group.

    RETURNS (Dict[Tuple[int, int], str]): (parallelism id, branch id) -> arm id.
    """
    arm_of: Dict[Tuple[int, int], str] = {}
    ambiguous: List[Tuple[str, List[Tuple[int, int]]]] = []
    for tid, p in sorted(placed.items(), key=lambda x: x[1].arm.line):
        if tid not in linked:
            conversion.skip(ann_path, p.arm.line, SKIP_UNLINKED)
            continue
        candidates = branch_at.get((p.section, *p.core)) or branch_at.get(
            (p.section, p.start, p.end), []
        )
        if len(candidates) == 1 and candidates[0] not in arm_of:
            arm_of[candidates[0]] = tid
        else:
            ambiguous.append((tid, candidates))
    for tid, candidates in ambiguous:
        free = [c for c in candidates if c not in arm_of]
        if not free:
            conversion.skip(ann_path, placed[tid].arm.line, SKIP_BRAT_ONLY)
            continue
        grouped = {pid for (pid, _), other in arm_of.items() if group_of[other] == group_of[tid]}
        arm_of[next((c for c in free if c[0] in grouped), free[0])] = tid
    return arm_of


def _convert_sermon(
    xml_path: Path, brat_dir: Path, split: str, vocab: Vocab, conversion: Conversion
) -> List[Doc]:
    sermon = read_asp_xml(xml_path)
    stem = xml_path.name.split("_", 1)[0]
    if stem != sermon.id:
        raise CorpusFormatError(
            xml_path, None, f"file of sermon {stem} has <sermon id='{sermon.id}'>"
        )
    txt_path, ann_path = brat_dir / f"{stem}.txt", brat_dir / f"{stem}.ann"
    for p in (txt_path, ann_path):
        if not p.exists():
            raise CorpusFormatError(p, None, f"brat file for {xml_path.name} not found")
    with txt_path.open(encoding="utf8", newline="") as file_:
        text = file_.read()
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    parallelisms = xml_parallelisms(sermon)
    brat = read_brat(ann_path, text)
    bounds = _read_sections(txt_path, text, sermon)

    alignments: List[Alignment] = []
    for section, (start, end) in zip(sermon.sections, bounds, strict=True):
        alignment = align_words(section.words, lowered, start, end)
        for i in alignment.unaligned:
            conversion.skip(xml_path, section.lines[i], SKIP_UNALIGNED_WORD)
        for u_start, _ in alignment.uncovered:
            conversion.skip(txt_path, text.count("\n", 0, u_start) + 1, SKIP_UNCOVERED_TEXT)
        alignments.append(alignment)

    # brat arms -> words; brat relations -> groups
    placed: Dict[str, _Placed] = {}
    starts = [b[0] for b in bounds]
    for arm in brat.arms.values():
        if any(text[end:start].strip() for (_, end), (start, _) in pairwise(arm.fragments)):
            conversion.skip(ann_path, arm.line, SKIP_DISCONTINUOUS_ARM)
        p = _place_arm(arm, bounds, starts, alignments, sermon.sections)
        if p is None:
            conversion.skip(ann_path, arm.line, SKIP_ARM_PLACEMENT)
        else:
            placed[arm.id] = p
    parent = {tid: tid for tid in brat.arms}
    for rel in brat.relations:
        parent[_find(parent, rel.arg1)] = _find(parent, rel.arg2)
    group_of = {tid: _find(parent, tid) for tid in brat.arms}
    linked = {rel.arg1 for rel in brat.relations} | {rel.arg2 for rel in brat.relations}

    # match arms to XML branches by (section, trimmed word span)
    branch_at: Dict[Tuple[int, int, int], List[Tuple[int, int]]] = {}
    for pid, par in parallelisms.items():
        for bid, (sec, start, end) in par.branches.items():
            branch_at.setdefault((sec, start, end), []).append((pid, bid))
    arm_of = _match_arms(placed, linked, group_of, branch_at, ann_path, conversion)

    brat_strata = _brat_strata({tid: p for tid, p in placed.items() if tid in linked}, group_of)
    rel_types: Dict[str, List[str]] = {}
    for rel in brat.relations:
        rel_types.setdefault(group_of[rel.arg1], []).append(rel.type)
        arm_types = {brat.arms[rel.arg1].type, brat.arms[rel.arg2].type}
        if arm_types != ARM_TYPES_OF[rel.type]:
            conversion.skip(ann_path, rel.line, SKIP_ARM_TYPE)

    per_section: List[List[Tuple[List[Tuple[int, int]], str, int]]] = [[] for _ in sermon.sections]
    cross: Dict[int, List[Dict[str, object]]] = {}
    for pid, par in sorted(parallelisms.items()):
        first_sec, first_start, _ = min(par.branches.values())
        line = sermon.sections[first_sec].lines[first_start]
        arms = {bid: arm_of.get((pid, bid)) for bid in par.branches}
        for bid, tid in arms.items():
            if tid is None:
                sec, start, _ = par.branches[bid]
                conversion.skip(xml_path, sermon.sections[sec].lines[start], SKIP_XML_ONLY)
        groups = {group_of[tid] for tid in arms.values() if tid is not None}
        label = UNTYPED
        if groups:
            members = {tid for tid, g in group_of.items() if g in groups and tid in linked}
            if len(groups) > 1 or members != {t for t in arms.values() if t is not None}:
                conversion.skip(xml_path, line, SKIP_GROUPING)
            group = next(iter(groups)) if len(groups) == 1 else None
            if group is not None and brat_strata.get(group, par.stratum) != par.stratum:
                conversion.skip(xml_path, line, SKIP_STRATUM)
            label = _label([t for g in sorted(groups) for t in rel_types.get(g, [])])
            if label is None:
                conversion.skip(xml_path, line, SKIP_MIXED)
                label = _majority([t for g in sorted(groups) for t in rel_types.get(g, [])])
        else:
            conversion.skip(xml_path, line, SKIP_UNTYPED)
        sections_used = {sec for sec, _, _ in par.branches.values()}
        if len(sections_used) == 1:
            offsets = [(start, end) for _, start, end in par.branches.values()]
            per_section[first_sec].append((offsets, label, par.stratum))
        else:
            conversion.skip(xml_path, line, SKIP_CROSS_SECTION)
            record = {
                "id": f"{sermon.id}:{pid}",
                "label": label,
                "stratum": par.stratum,
                "branches": [
                    {"section_id": sermon.sections[sec].id, "start": start, "end": end}
                    for _, (sec, start, end) in sorted(par.branches.items())
                ],
            }
            for sec in sorted(sections_used):
                cross.setdefault(sec, []).append(record)

    notes: Dict[int, List[Dict[str, object]]] = {}
    for note in brat.notes:
        p = placed.get(note.target)
        if p is None:
            conversion.skip(ann_path, note.line, SKIP_NOTE)
            continue
        notes.setdefault(p.section, []).append(
            {"start": p.start, "end": p.end, "note": note.text, "arm": note.target}
        )

    docs: List[Doc] = []
    for k, section in enumerate(sermon.sections):
        doc = Doc(vocab, words=section.words, spaces=alignments[k].spaces)
        items = sorted(per_section[k], key=lambda x: (min(x[0]), x[2]))
        set_parallelisms(doc, items)
        doc.user_data.update(
            {
                "dataset": DATASET,
                LANGUAGE_KEY: LANGUAGE,
                "doc_id": sermon.id,
                "section_id": section.id,
                "split": split,
            }
        )
        if k in cross:
            doc.user_data["cross_section_parallelisms"] = cross[k]
        if k in notes:
            doc.user_data["notes"] = notes[k]
        docs.append(doc)
    return docs


def _label(types: Sequence[str]) -> str | None:
    """RETURNS (str | None): the label all relation types agree on, or None if mixed."""
    labels = {RELATION_LABELS[t] for t in types}
    return labels.pop() if len(labels) == 1 else None


def _majority(types: Sequence[str]) -> str:
    counts = Counter(RELATION_LABELS[t] for t in types)
    return CHIASTIC if counts[CHIASTIC] >= counts[SYNCHYSTIC] else SYNCHYSTIC
