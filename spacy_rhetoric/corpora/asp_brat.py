"""Read the brat annotation of the Augustinian Sermon Parallelism (ASP) dataset.

Each ``brat/NNN.ann`` annotates the text of ``brat/NNN.txt``: text-bound arms
(``ParallelArm``, ``ChiasmA``, ``ChiasmB``; discontinuous arms as several fragments),
typed relations between two arms (``Parallel``, the older ``Parallelism``,
``Chiasm``) and annotator notes on arms. ``read_brat`` reads them and checks them
against the text: every arm's offsets must hold its mention, every relation and note
must refer to a defined arm. Malformed input raises ``CorpusFormatError`` naming the
file and the line. The converter (``asp``) places the arms on the XML words.
"""

import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Dict, List, Set, Tuple

from .parallelisms import CHIASTIC, SYNCHYSTIC
from .util import CorpusFormatError

ARM_TYPES = ("ParallelArm", "ChiasmA", "ChiasmB")
RELATION_LABELS: Dict[str, str] = {
    "Parallel": SYNCHYSTIC,
    "Parallelism": SYNCHYSTIC,
    "Chiasm": CHIASTIC,
}
# the arm types each relation type links
ARM_TYPES_OF: Dict[str, Set[str]] = {
    "Parallel": {"ParallelArm"},
    "Parallelism": {"ParallelArm"},
    "Chiasm": {"ChiasmA", "ChiasmB"},
}
NOTE_TYPES = ("AnnotatorNotes",)

_T_RE = re.compile(r"(T\d+)\t(\S+) (\d+ \d+(?:;\d+ \d+)*)\t(.*)")
_R_RE = re.compile(r"(R\d+)\t(\S+) Arg1:(\S+) Arg2:(\S+)\s*")
_NOTE_RE = re.compile(r"(#\d+)\t(\S+) (\S+)\t(.*)")


@dataclass
class Arm:
    """A text-bound arm: its id, type, character fragments and .ann line."""

    id: str
    type: str
    fragments: List[Tuple[int, int]]
    line: int

    @property
    def start(self) -> int:
        return self.fragments[0][0]

    @property
    def end(self) -> int:
        return self.fragments[-1][1]


@dataclass
class Relation:
    """A typed relation between two arms, with its .ann line."""

    id: str
    type: str
    arg1: str
    arg2: str
    line: int


@dataclass
class Note:
    """An annotator note on an arm, with its .ann line."""

    id: str
    target: str
    text: str
    line: int


@dataclass
class BratAnnotation:
    """What one .ann file holds: arms by id, relations and notes."""

    arms: Dict[str, Arm]
    relations: List[Relation]
    notes: List[Note]


def read_brat(ann_path: str | Path, text: str) -> BratAnnotation:
    """Read an ASP brat .ann file and check it against its text.

    ann_path (str | Path): the .ann file.
    text (str): the content of the matching .txt file.
    RETURNS (BratAnnotation): arms, relations and notes.
    """
    ann_path = Path(ann_path)
    arms: Dict[str, Arm] = {}
    relations: List[Relation] = []
    notes: List[Note] = []
    seen: Set[str] = set()
    with ann_path.open(encoding="utf8") as file_:
        lines = file_.read().split("\n")
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        ident = line.split("\t", 1)[0]
        if ident in seen:
            raise CorpusFormatError(ann_path, n, f"duplicate annotation id {ident}")
        seen.add(ident)
        if line.startswith("T"):
            arms[ident] = _read_arm(ann_path, n, line, text)
        elif line.startswith("R"):
            match = _R_RE.fullmatch(line)
            if match is None:
                raise CorpusFormatError(ann_path, n, f"cannot parse brat relation: {line!r}")
            rid, rtype, arg1, arg2 = match.groups()
            if rtype not in RELATION_LABELS:
                raise CorpusFormatError(
                    ann_path,
                    n,
                    f"unknown relation type {rtype!r} (expected {', '.join(RELATION_LABELS)})",
                )
            if arg1 == arg2:
                raise CorpusFormatError(ann_path, n, f"relation {rid} links arm {arg1} to itself")
            relations.append(Relation(rid, rtype, arg1, arg2, n))
        elif line.startswith("#"):
            match = _NOTE_RE.fullmatch(line)
            if match is None or match.group(2) not in NOTE_TYPES:
                raise CorpusFormatError(ann_path, n, f"cannot parse brat note: {line!r}")
            notes.append(Note(match.group(1), match.group(3), match.group(4), n))
        else:
            raise CorpusFormatError(ann_path, n, f"cannot parse brat line: {line!r}")
    for rel in relations:
        for arg in (rel.arg1, rel.arg2):
            if arg not in arms:
                raise CorpusFormatError(
                    ann_path, rel.line, f"relation {rel.id} refers to undefined arm {arg}"
                )
    for note in notes:
        if note.target not in arms:
            raise CorpusFormatError(
                ann_path, note.line, f"note {note.id} refers to undefined arm {note.target}"
            )
    return BratAnnotation(arms, relations, notes)


def _read_arm(ann_path: Path, n: int, line: str, text: str) -> Arm:
    match = _T_RE.fullmatch(line)
    if match is None:
        raise CorpusFormatError(ann_path, n, f"cannot parse brat text-bound annotation: {line!r}")
    tid, ttype, offsets, mention = match.groups()
    if ttype not in ARM_TYPES:
        raise CorpusFormatError(
            ann_path, n, f"unknown arm type {ttype!r} (expected {', '.join(ARM_TYPES)})"
        )
    fragments = [(int(a), int(b)) for a, b in (f.split(" ") for f in offsets.split(";"))]
    for prev, (start, end) in pairwise([(0, 0), *fragments]):
        if not prev[1] <= start < end <= len(text):
            raise CorpusFormatError(
                ann_path, n, f"arm {tid} has bad offsets {offsets} (text length {len(text)})"
            )
    if " ".join(text[s:e] for s, e in fragments) != mention:
        raise CorpusFormatError(
            ann_path,
            n,
            f"arm {tid}: the text at {offsets} is not {mention!r}: .ann and .txt do not match",
        )
    return Arm(tid, ttype, fragments, n)
