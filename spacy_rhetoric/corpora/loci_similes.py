"""Converter for Loci Similes (Latin intertextuality: Jerome and Lactantius quoting
classical sources; github.com/julianschelb/locisimiles).

Two layouts are read:

* the gold links ``labels.csv`` (one row per link: ``pair_id``, both passages'
  citation ids ``position_query``/``position_corpus`` like "<hier. epist. 21.2.5.1>",
  their texts, author prefixes and a cross-validation ``fold_id``);
* a directory in the package's own format: segment files (``seg_id,text``) plus
  ``ground_truth.csv`` (``query_id,source_id,label``).

Every query segment and every source segment becomes one Doc (blank Latin
tokenizer) with ``user_data`` {"dataset": "loci-similes", "seg_id", "role":
"query"|"source", "author", "work"} (``seg_id`` without the angle brackets of
labels.csv; ``author``/``work`` from the id, e.g. "hier" / "hier. epist."). A query
Doc carries its gold links in ``user_data["links"]``: a list of {"pair_id",
"source_id", "fold", "label"} (label 1 = an intertext, 0 = a gold non-link).

Splits of labels.csv: "sources" (each source once) and "fold0".."fold4"; a query
linked in several folds is in each of those folds' splits, with that fold's links
only. Splits of the package format: "sources" and "queries" (fold None).
"""

import csv
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from .util import Conversion, CorpusFormatError

DATASET = "loci-similes"
LABELS_FILE = "labels.csv"
GROUND_TRUTH_FILE = "ground_truth.csv"
SOURCES_SPLIT = "sources"
QUERIES_SPLIT = "queries"
LABELS_COLUMNS = (
    "pair_id",
    "position_query",
    "position_corpus",
    "text_query",
    "text_corpus",
    "prefix_query",
    "prefix_corpus",
    "prefix_query_author",
    "prefix_corpus_author",
    "fold_id",
)
SEGMENT_HEADER = ("seg_id", "text")
LINK_HEADER = ("query_id", "source_id", "label")
UNUSED_SEGMENTS = "segment file not referenced by ground_truth.csv"

_CITATION = re.compile(r"^<(.*)>$")
# "hier. adv. iovin. 1.1" -> work "hier. adv. iovin.", author "hier"
_WORK = re.compile(r"^(.*?)\s*[0-9][^\s]*$")


def _rows(path: Path) -> Iterator[Tuple[int, List[str]]]:
    """Yield (line of the record's first line, fields) for each CSV record."""
    with path.open(newline="", encoding="utf-8-sig") as file_:
        reader = csv.reader(file_, strict=True)
        line = 1
        try:
            for fields in reader:
                yield line, fields
                line = reader.line_num + 1
        except csv.Error as err:
            raise CorpusFormatError(path, line, f"malformed CSV record: {err}") from None


def _header(path: Path, rows: Iterator[Tuple[int, List[str]]], expected: Tuple[str, ...]) -> None:
    first = next(rows, None)
    if first is None:
        raise CorpusFormatError(path, None, "empty file")
    line, fields = first
    if tuple(f.strip() for f in fields) != expected:
        raise CorpusFormatError(
            path, line, f"header {','.join(fields)}; expected {','.join(expected)}"
        )


def read_segments_csv(path: Path) -> List[Tuple[str, str]]:
    """Read a segment file in the locisimiles format (header ``seg_id,text``).

    path (Path): the CSV file.
    RETURNS (List[Tuple[str, str]]): (seg_id, text) per segment, in file order.
    """
    path = Path(path)
    rows = _rows(path)
    _header(path, rows, SEGMENT_HEADER)
    segments: List[Tuple[str, str]] = []
    seen: Dict[str, int] = {}
    for line, fields in rows:
        if not fields:
            continue
        if len(fields) != 2:
            raise CorpusFormatError(path, line, f"{len(fields)} columns; expected 2 (seg_id,text)")
        seg_id, text = fields[0].strip(), fields[1]
        if not seg_id:
            raise CorpusFormatError(path, line, "empty seg_id")
        if seg_id in seen:
            raise CorpusFormatError(
                path, line, f"duplicate seg_id '{seg_id}' (first on line {seen[seg_id]})"
            )
        seen[seg_id] = line
        segments.append((seg_id, text))
    return segments


def read_links_csv(
    path: Path,
    query_ids: Optional[Set[str]] = None,
    source_ids: Optional[Set[str]] = None,
) -> List[Tuple[str, str, int]]:
    """Read a ground-truth file in the locisimiles format (``query_id,source_id,label``).

    path (Path): the CSV file.
    query_ids (Optional[Set[str]]): if given, every query_id must be one of these.
    source_ids (Optional[Set[str]]): if given, every source_id must be one of these.
    RETURNS (List[Tuple[str, str, int]]): (query_id, source_id, label) per row.
    """
    path = Path(path)
    rows = _rows(path)
    _header(path, rows, LINK_HEADER)
    links = []
    for line, fields in rows:
        if not fields:
            continue
        if len(fields) != 3:
            raise CorpusFormatError(
                path, line, f"{len(fields)} columns; expected 3 (query_id,source_id,label)"
            )
        query_id, source_id, label = (f.strip() for f in fields)
        if not query_id or not source_id:
            raise CorpusFormatError(path, line, "empty query_id or source_id")
        if label not in ("0", "1"):
            raise CorpusFormatError(path, line, f"label '{label}'; expected 0 or 1")
        if query_ids is not None and query_id not in query_ids:
            raise CorpusFormatError(path, line, f"unknown query_id '{query_id}'")
        if source_ids is not None and source_id not in source_ids:
            raise CorpusFormatError(path, line, f"unknown source_id '{source_id}'")
        links.append((query_id, source_id, int(label)))
    return links


def split_citation(seg_id: str) -> Tuple[str, str]:
    """seg_id (str): a citation id like "hier. epist. 21.2.5.1".
    RETURNS (Tuple[str, str]): its author and work prefixes ("hier", "hier. epist.").
    """
    match = _WORK.match(seg_id)
    work = match.group(1) if match and match.group(1) else seg_id
    return work.split(".")[0].strip(), work


def _segment_doc(nlp: Language, text: str, seg_id: str, role: str, author: str, work: str) -> Doc:
    doc = nlp.make_doc(text)
    doc.user_data.update(
        {"dataset": DATASET, "seg_id": seg_id, "role": role, "author": author, "work": work}
    )
    return doc


def _strip_citation(value: str) -> str:
    match = _CITATION.match(value.strip())
    return (match.group(1) if match else value).strip()


def _convert_labels(path: Path, nlp: Language) -> Conversion:
    rows = _rows(path)
    first = next(rows, None)
    if first is None:
        raise CorpusFormatError(path, None, "empty file")
    header_line, header = first
    missing = [c for c in LABELS_COLUMNS if c not in header]
    if missing:
        raise CorpusFormatError(path, header_line, f"missing columns: {', '.join(missing)}")
    column = {name: header.index(name) for name in LABELS_COLUMNS}
    # seg_id -> (text, author, work, line)
    queries: Dict[str, Tuple[str, str, str, int]] = {}
    sources: Dict[str, Tuple[str, str, str, int]] = {}
    # fold -> query id -> links
    folds: Dict[int, Dict[str, List[Dict[str, object]]]] = {}
    pair_ids: Dict[int, int] = {}
    for line, fields in rows:
        if not fields:
            continue
        if len(fields) != len(header):
            raise CorpusFormatError(
                path, line, f"{len(fields)} columns; expected {len(header)} as in the header"
            )
        value = {name: fields[i] for name, i in column.items()}
        numbers = {}
        for name in ("pair_id", "fold_id"):
            try:
                numbers[name] = int(value[name])
            except ValueError:
                raise CorpusFormatError(
                    path, line, f"{name} '{value[name]}' is not an integer"
                ) from None
        pair_id, fold = numbers["pair_id"], numbers["fold_id"]
        if fold < 0:
            raise CorpusFormatError(path, line, f"fold_id {fold} is negative")
        if pair_id in pair_ids:
            raise CorpusFormatError(
                path, line, f"duplicate pair_id {pair_id} (first on line {pair_ids[pair_id]})"
            )
        pair_ids[pair_id] = line
        ids = []
        for role, table in (("query", queries), ("corpus", sources)):
            seg_id = _strip_citation(value[f"position_{role}"])
            if not seg_id:
                raise CorpusFormatError(path, line, f"empty position_{role}")
            entry = (
                value[f"text_{role}"],
                value[f"prefix_{role}_author"].strip(),
                value[f"prefix_{role}"].strip(),
                line,
            )
            known = table.setdefault(seg_id, entry)
            if known[0] != entry[0]:
                raise CorpusFormatError(
                    path, line, f"'{seg_id}' has another text on line {known[3]}"
                )
            ids.append(seg_id)
        query_id, source_id = ids
        links = folds.setdefault(fold, {}).setdefault(query_id, [])
        links.append({"pair_id": pair_id, "source_id": source_id, "fold": fold, "label": 1})
    conversion = Conversion()
    conversion.splits[SOURCES_SPLIT] = [
        _segment_doc(nlp, text, seg_id, "source", author, work)
        for seg_id, (text, author, work, _) in sources.items()
    ]
    for fold in sorted(folds):
        docs = []
        for query_id, links in folds[fold].items():
            text, author, work, _ = queries[query_id]
            doc = _segment_doc(nlp, text, query_id, "query", author, work)
            doc.user_data["links"] = links
            doc.user_data["split"] = f"fold{fold}"
            docs.append(doc)
        conversion.splits[f"fold{fold}"] = docs
    for doc in conversion.splits[SOURCES_SPLIT]:
        doc.user_data["split"] = SOURCES_SPLIT
    return conversion


def _convert_directory(path: Path, nlp: Language) -> Conversion:
    truth = path / GROUND_TRUTH_FILE
    segment_files = sorted(p for p in path.glob("*.csv") if p.name != GROUND_TRUTH_FILE)
    segments = {p: read_segments_csv(p) for p in segment_files}
    links = read_links_csv(truth)
    query_ids = {q for q, _, _ in links}
    source_ids = {s for _, s, _ in links}

    def best(ids: Set[str], exclude: Optional[Path] = None) -> Path:
        scores = {
            p: len(ids & {seg_id for seg_id, _ in segs})
            for p, segs in segments.items()
            if p != exclude
        }
        if not scores or max(scores.values()) == 0:
            raise CorpusFormatError(truth, None, f"no segment file in {path} holds its ids")
        return max(scores, key=lambda p: (scores[p], -segment_files.index(p)))

    query_file = best(query_ids)
    source_file = best(source_ids, exclude=query_file)
    # validate every row against the chosen files (names the offending line)
    read_links_csv(
        truth,
        {seg_id for seg_id, _ in segments[query_file]},
        {seg_id for seg_id, _ in segments[source_file]},
    )
    conversion = Conversion()
    for unused in segment_files:
        if unused not in (query_file, source_file):
            conversion.skip(unused, None, UNUSED_SEGMENTS)
    by_query: Dict[str, List[Dict[str, object]]] = {}
    for pair_id, (query_id, source_id, label) in enumerate(links):
        by_query.setdefault(query_id, []).append(
            {"pair_id": pair_id, "source_id": source_id, "fold": None, "label": label}
        )
    for split, role, file_ in (
        (SOURCES_SPLIT, "source", source_file),
        (QUERIES_SPLIT, "query", query_file),
    ):
        docs = []
        for seg_id, text in segments[file_]:
            doc = _segment_doc(nlp, text, seg_id, role, *split_citation(seg_id))
            if role == "query":
                doc.user_data["links"] = by_query.get(seg_id, [])
            doc.user_data["split"] = split
            docs.append(doc)
        conversion.splits[split] = docs
    return conversion


def convert_loci_similes(path: Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert Loci Similes to segment Docs with their gold links.

    path (Path): ``labels.csv``, a directory holding it, or a directory in the
        locisimiles format (segment CSVs + ``ground_truth.csv``; the query and source
        files are the ones holding the ground truth's query and source ids, other
        segment files are skipped and reported).
    vocab (Optional[Vocab]): the vocab of the new Docs (default: a blank Latin one).
    RETURNS (Conversion): "sources" and "fold0".."fold4" (labels.csv), or "sources"
        and "queries" (package format).
    """
    path = Path(path)
    nlp = spacy.blank("la", vocab=vocab if vocab is not None else True)
    if path.is_file():
        return _convert_labels(path, nlp)
    if (path / LABELS_FILE).is_file():
        return _convert_labels(path / LABELS_FILE, nlp)
    if (path / GROUND_TRUTH_FILE).is_file():
        return _convert_directory(path, nlp)
    raise CorpusFormatError(
        path, None, f"neither {LABELS_FILE} nor {GROUND_TRUTH_FILE} in this directory"
    )
