"""Reader for Tesserae ``.tess`` files (github.com/tesserae/tesserae, ``texts/la``) and
the mapping between Tesserae citation ids and Loci Similes ids.

A ``.tess`` file holds one segment per line: a citation tag ``<verg. aen. 2.774>``, a
separator (a TAB or a single space, depending on the file) and the text. Files may
start with a UTF-8 BOM, use CRLF line ends and contain blank lines; tags vary in case
and spacing (``<Cic. Acad. 1.1>``, ``<cic. perd.  1.1>``). Some works restart their line
numbers inside a file, so an id can occur twice: the reader keeps every segment and
makes repeated ids unique as ``"<id> #2"``, ``"<id> #3"`` (counted in
``TessCorpus.duplicates``).

Loci Similes ids add a final sentence index and use other work abbreviations for some
works (``<verg. georg. 1.1.1>`` is Tesserae ``<verg. g. 1.1>``); ``loci_to_tesserae``
maps one to the other.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .util import CorpusFormatError

# The query authors and the ten classical source authors of Loci Similes, as the
# file name prefixes of Tesserae's texts/la.
QUERY_AUTHORS = ("jerome", "lactantius")
SOURCE_AUTHORS = (
    "cicero",
    "lucretius",
    "catullus",
    "vergil",
    "horace",
    "tibullus",
    "propertius",
    "ovid",
    "lucan",
    "martial",
)

# Loci Similes work prefix -> Tesserae work prefix (both normalised: lower case, single
# spaces). Prefixes not listed are the same in both. Longest prefix wins.
LOCI_TO_TESSERAE = {
    "hier. epist.": "jer. ep.",
    "lact. inst.": "lactantius. div_inst.",
    "lact. epit.": "lact. epitome.",
    "lact. ira": "lact. de_ira.",
    "lact. opif.": "lact. opificio.",
    "lact. mort. pers.": "lact. de_mort.",
    "verg. georg.": "verg. g.",
    "lucan.": "luc.",
    "hor. carm.": "hor. od.",
    "hor. sat.": "hor. s.",
    "hor. epist.": "hor. ep.",
    "hor. ars.": "hor. a.p.",
    "cic. de orat.": "cic. orat.",
    "cic. orat.": "cic. orator.",
    "cic. cato": "cic. sen.",
    "cic. lael.": "cic. amicit.",
    "cic. ac. 1.": "cic. acad. 1.",
    "cic. ac. 2.": "cic. luc. ",
    "cic. s.rosc.": "cic. roscio.",
    "cic. manil.": "cic. man.",
    "cic. cluent.": "cic. clu.",
    "cic. flacc.": "cic. flac.",
    "cic. verr.": "cic. ver.",
    "cic. div. in caec.": "cic. div. cae.",
    "cic. nat. deor.": "cic. nat.",
    "cic. opt. gen.": "cic. opt.",
}

_TAG = re.compile(r"^<([^>]*)>[ \t]?(.*)$", re.DOTALL)
_SPACES = re.compile(r"\s+")
_BOM = "\ufeff"


def normalize_citation(cit: str) -> str:
    """cit (str): a citation id, with or without angle brackets.
    RETURNS (str): lower case, single spaces, no brackets ("cic. acad. 1.1").
    """
    cit = cit.strip()
    if cit.startswith("<") and cit.endswith(">"):
        cit = cit[1:-1]
    return _SPACES.sub(" ", cit.strip().lower())


def loci_to_tesserae(seg_id: str) -> str:
    """Map a Loci Similes id to the Tesserae id of the line or section holding it.

    seg_id (str): e.g. "verg. georg. 1.466.1" or "<hier. epist. 21.2.5.1>".
    RETURNS (str): the normalised Tesserae id, e.g. "verg. g. 1.466".
    """
    cit = normalize_citation(seg_id)
    head, sep, last = cit.rpartition(".")
    if sep and last.isdigit() and head and head[-1].isdigit():
        cit = head
    for loci in sorted(LOCI_TO_TESSERAE, key=len, reverse=True):
        if cit.startswith(loci):
            return _SPACES.sub(" ", LOCI_TO_TESSERAE[loci] + cit[len(loci) :])
    return cit


@dataclass
class TessSegment:
    """One line of a ``.tess`` file."""

    seg_id: str  # normalised citation (unique within a TessCorpus)
    text: str
    path: str
    line: int


@dataclass
class TessCorpus:
    """Segments read from one or more ``.tess`` files, in file and line order."""

    segments: List[TessSegment] = field(default_factory=list)
    duplicates: int = 0
    blank_lines: int = 0
    files: int = 0

    def index(self) -> Dict[str, int]:
        """RETURNS (Dict[str, int]): position of each segment id."""
        return {seg.seg_id: i for i, seg in enumerate(self.segments)}


def read_tess(path: Union[str, Path], corpus: Optional[TessCorpus] = None) -> TessCorpus:
    """Read one ``.tess`` file.

    path (Union[str, Path]): the file.
    corpus (Optional[TessCorpus]): a corpus to append to (ids stay unique across files).
    RETURNS (TessCorpus): the corpus with this file's segments appended.
    """
    path = Path(path)
    corpus = corpus if corpus is not None else TessCorpus()
    seen = {seg.seg_id for seg in corpus.segments}
    text = path.read_text(encoding="utf-8")
    if text.startswith(_BOM):
        text = text[1:]
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            corpus.blank_lines += 1
            continue
        match = _TAG.match(line)
        if match is None:
            raise CorpusFormatError(
                path,
                number,
                "line does not start with a citation tag '<...>' (Tesserae .tess format)",
            )
        seg_id = normalize_citation(match.group(1))
        if not seg_id:
            raise CorpusFormatError(path, number, "empty citation tag '<>'")
        if seg_id in seen:
            corpus.duplicates += 1
            n = 2
            while f"{seg_id} #{n}" in seen:
                n += 1
            seg_id = f"{seg_id} #{n}"
        seen.add(seg_id)
        corpus.segments.append(TessSegment(seg_id, match.group(2).strip(), str(path), number))
    corpus.files += 1
    return corpus


def tess_files(directory: Union[str, Path], authors: Sequence[str]) -> List[Path]:
    """The whole-work ``.tess`` files of some authors in a Tesserae ``texts/la`` folder.

    directory (Union[str, Path]): the folder (subfolders such as ``jerome.vulgate/`` are
        not read).
    authors (Sequence[str]): file name prefixes, e.g. ("vergil", "ovid").
    RETURNS (List[Path]): the files, sorted by name.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CorpusFormatError(directory, None, "not a directory of .tess files")
    files = sorted(p for p in directory.glob("*.tess") if p.name.split(".", 1)[0] in set(authors))
    if not files:
        raise CorpusFormatError(
            directory, None, f"no .tess files of {', '.join(authors)} in this directory"
        )
    return files


def read_tesserae(paths: Iterable[Union[str, Path]]) -> TessCorpus:
    """Read several ``.tess`` files into one corpus.

    paths (Iterable[Union[str, Path]]): the files.
    RETURNS (TessCorpus): their segments.
    """
    corpus = TessCorpus()
    for path in paths:
        read_tess(path, corpus)
    return corpus


def verse_span(text: str) -> int:
    """The number of verse lines of a Loci Similes passage (lines are joined by " / ").

    text (str): the passage.
    RETURNS (int): >= 1.
    """
    return max(1, len([part for part in text.split("/") if part.strip()]))


def locate(
    seg_id: str, text: str, corpus_index: Dict[str, int], window: int = 0
) -> Optional[Tuple[int, int]]:
    """Find the Tesserae segments a Loci Similes passage covers.

    seg_id (str): the Loci Similes id.
    text (str): its text (its " / " count gives the number of verse lines).
    corpus_index (Dict[str, int]): ``TessCorpus.index()``.
    window (int): extra segments on either side that also count.
    RETURNS (Optional[Tuple[int, int]]): [start, end) positions, or None if the id is
        not in the corpus.
    """
    position = corpus_index.get(loci_to_tesserae(seg_id))
    if position is None:
        return None
    return max(0, position - window), position + verse_span(text) + window
