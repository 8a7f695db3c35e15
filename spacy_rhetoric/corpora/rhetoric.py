"""The rhetoric corpus (``benchmarks/data/rhetoric-corpus``): Latin, English and German
orations, speeches and essays annotated by hand with parallelisms, figures, antithesis
and rhetorical questions, one JSONL record per passage (``{la,en,de}.jsonl``; the format
is in the corpus README).

``convert_rhetoric`` turns the passages into Docs per split (``train``, ``dev``,
``test``). A passage is cut into **sections** of about ``SECTION_WORDS`` words at
sentence ends that no annotation spans (ASP's sections are about as long), so that a
training batch holds several; each section is tokenized by the blank pipeline of its
language, with every annotation boundary made a token boundary, so that every span is
exact. On each section:

- ``doc.spans["parallelism"]``: the branches (``set_parallelisms``; label ``synchystic`` or
  ``chiastic``, one ``span.id_`` per parallelism, strata in the group's attrs);
- ``doc.spans["figures"]``: one span per figure, from its first member to its last,
  labelled with the figure (``anaphora`` ... ``antithesis``, ``rhetorical_question``),
  ``span.id_`` its number; the group's attrs hold ``attributes`` ({id: "hypophora"}) and
  ``notes`` ({id: note});
- ``doc.spans["figure_members"]`` and ``doc.spans["figure_support"]``: the members and
  the support words of each figure, with the figure's label and ``span.id_``;
- ``doc.user_data``: ``dataset`` ("rhetoric-corpus"), ``lang``, ``doc_id`` (the passage
  id), ``split``, ``section`` (0, 1, ...), ``start`` (the section's character offset in
  the passage), ``gap`` (the whitespace between this section and the next), ``work``,
  ``passage``, ``source``, ``licence``, and ``parallelism_notes`` ({id: note}).

``records_from_docs`` rebuilds the passages' records from the sections (the lossless
round trip the tests check). Passages not yet annotated (``"annotated": false``) are
skipped and counted.
"""

import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import spacy
import srsly
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from .parallelisms import CHIASTIC, SYNCHYSTIC, get_parallelisms, set_parallelisms
from .util import LANGUAGE_KEY, Conversion, CorpusFormatError

DATASET = "rhetoric-corpus"
LANGUAGES = ("la", "en", "de")
SPLITS = ("train", "dev", "test")
FIGURES_KEY = "figures"
MEMBERS_KEY = "figure_members"
SUPPORT_KEY = "figure_support"
SECTION_WORDS = 200
FIGURE_LABELS = (
    "anaphora", "epiphora", "symploce", "anadiplosis", "gradatio", "epizeuxis", "ploce",
    "polyptoton", "polysyndeton", "asyndeton", "alliteration", "antimetabole", "chiasmus",
    "antithesis", "rhetorical_question",
)  # fmt: skip
REQUIRED = ("id", "lang", "split", "text", "parallelisms", "figures")
META = ("work", "passage", "date", "source", "licence")
# a sentence ends after . ! ? ; : (and closing quotes or brackets), before whitespace
SENTENCE_END = re.compile(r"[.!?;:][\"'\u201d\u2019)]*(?=\s)")

Range = Tuple[int, int]


def _ranges(value: Any, path: Path, line: int, what: str, n: int) -> List[Range]:
    if not isinstance(value, list):
        raise CorpusFormatError(path, line, f"{what} is not a list of [start, end] pairs")
    out = []
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, int) for x in pair)
            or not 0 <= pair[0] < pair[1] <= n
        ):
            raise CorpusFormatError(
                path, line, f"{what}: {pair!r} is no [start, end) inside the text"
            )
        out.append((pair[0], pair[1]))
    return out


def read_records(path: Path) -> List[Tuple[int, Dict[str, Any]]]:
    """The passages of one ``{lang}.jsonl`` file, checked.

    RETURNS (List[Tuple[int, Dict[str, Any]]]): (line number, record) per passage.
    RAISES CorpusFormatError: a malformed record (file and line named).
    """
    records = []
    for number, line in enumerate(Path(path).read_text(encoding="utf8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = srsly.json_loads(line)
        except ValueError as err:
            raise CorpusFormatError(path, number, f"not JSON ({err})") from None
        if not isinstance(record, dict):
            raise CorpusFormatError(path, number, "not a JSON object")
        missing = [key for key in REQUIRED if key not in record]
        if missing:
            raise CorpusFormatError(path, number, f"missing {', '.join(missing)}")
        if record["lang"] not in LANGUAGES or record["split"] not in SPLITS:
            raise CorpusFormatError(
                path, number, f"lang {record['lang']!r} / split {record['split']!r} unknown"
            )
        n = len(record["text"])
        for item in record["parallelisms"]:
            if item.get("type") not in (SYNCHYSTIC, CHIASTIC):
                raise CorpusFormatError(path, number, f"parallelism type {item.get('type')!r}")
            if len(_ranges(item.get("branches"), path, number, "branches", n)) < 2:
                raise CorpusFormatError(path, number, "a parallelism with fewer than 2 branches")
        for item in record["figures"]:
            if item.get("label") not in FIGURE_LABELS:
                raise CorpusFormatError(path, number, f"figure label {item.get('label')!r}")
            if not _ranges(item.get("members"), path, number, "members", n):
                raise CorpusFormatError(path, number, f"a {item['label']} without members")
            _ranges(item.get("support", []), path, number, "support", n)
        records.append((number, record))
    return records


def _extents(record: Dict[str, Any]) -> List[Range]:
    """Every annotation's extent (first to last member or branch)."""
    out = []
    for item in record["parallelisms"]:
        branches = item["branches"]
        out.append((min(s for s, _ in branches), max(e for _, e in branches)))
    for item in record["figures"]:
        spans = item["members"] + item.get("support", [])
        out.append((min(s for s, _ in spans), max(e for _, e in spans)))
    return out


def section_bounds(text: str, extents: Sequence[Range], words: int = SECTION_WORDS) -> List[Range]:
    """Cut a passage into sections of at least ``words`` whitespace words (the last may be
    shorter) at sentence ends or line breaks that no annotation extent spans.

    RETURNS (List[Range]): (start, end) per section; the text between two sections is
    whitespace only.
    """
    cuts = sorted(
        {m.end() for m in SENTENCE_END.finditer(text)}
        | {m.start() for m in re.finditer(r"\n", text)}
    )
    bounds, start = [], 0
    for cut in cuts:
        if cut <= start or any(s < cut < e for s, e in extents):
            continue
        if len(text[start:cut].split()) >= words and len(text[cut:].split()) >= words // 2:
            end = len(text[:cut].rstrip())
            bounds.append((start, end))
            start = cut + (len(text[cut:]) - len(text[cut:].lstrip()))
    bounds.append((start, len(text.rstrip())))
    return bounds


def _tokens(nlp: Any, text: str, boundaries: Iterable[int]) -> Tuple[List[str], List[bool]]:
    """The words and spaces of ``text`` by ``nlp``'s tokenizer, every offset of
    ``boundaries`` made a token boundary (a token that spans one is split there)."""
    cuts = sorted(set(boundaries))
    words: List[str] = []
    spaces: List[bool] = []
    for token in nlp.tokenizer(text):
        start, end = token.idx, token.idx + len(token.text)
        inner = [c for c in cuts if start < c < end]
        pieces = [start] + inner + [end]
        for k, (a, b) in enumerate(zip(pieces, pieces[1:])):
            words.append(text[a:b])
            spaces.append(bool(token.whitespace_) and k == len(pieces) - 2)
    return words, spaces


def _shift(ranges: Iterable[Sequence[int]], offset: int) -> List[Range]:
    return [(s - offset, e - offset) for s, e in ranges]


def _span(doc: Doc, start: int, end: int, label: str, span_id: str) -> Span:
    span = doc.char_span(start, end, label=label, span_id=span_id)
    if span is None:  # cannot happen: every boundary is a token boundary
        raise ValueError(f"{doc.user_data.get('doc_id')}: no token span for [{start}, {end})")
    return span


def passage_docs(
    record: Dict[str, Any], nlp: Any, vocab: Optional[Vocab] = None, words: int = SECTION_WORDS
) -> List[Doc]:
    """One passage's record -> its section Docs (see the module docstring).

    nlp (Language): a pipeline of the passage's language, whose tokenizer cuts the words.
    vocab (Optional[Vocab]): the vocab of the Docs (None: ``nlp``'s).
    """
    vocab = vocab if vocab is not None else nlp.vocab
    text = record["text"]
    extents = _extents(record)
    bounds = section_bounds(text, extents, words)
    docs = []
    for number, (a, b) in enumerate(bounds):
        inside = [k for k, (s, e) in enumerate(extents) if a <= s and e <= b]
        n_par = len(record["parallelisms"])
        parallelisms = [(k, record["parallelisms"][k]) for k in inside if k < n_par]
        figures = [(k - n_par, record["figures"][k - n_par]) for k in inside if k >= n_par]
        boundaries = {x - a for _, p in parallelisms for span in p["branches"] for x in span}
        for _, f in figures:
            boundaries |= {x - a for span in f["members"] + f.get("support", []) for x in span}
        token_words, spaces = _tokens(nlp, text[a:b], boundaries)
        if spaces:
            spaces[-1] = False
        doc = Doc(vocab, words=token_words, spaces=spaces)
        gap = text[b : bounds[number + 1][0]] if number + 1 < len(bounds) else text[b:]
        doc.user_data.update({
            "dataset": DATASET, LANGUAGE_KEY: record["lang"], "doc_id": record["id"],
            "split": record["split"], "section": number, "start": a, "gap": gap,
        })  # fmt: skip
        for key in META:
            if key in record:
                doc.user_data[key] = record[key]
        groups = []
        for _, item in parallelisms:
            offsets = []
            for s, e in _shift(item["branches"], a):
                span = _span(doc, s, e, "", "")
                offsets.append((span.start, span.end))
            groups.append((offsets, item["type"], None))
        set_parallelisms(doc, groups)
        doc.user_data["parallelism_notes"] = {
            str(i + 1): item["note"] for i, (_, item) in enumerate(parallelisms) if item.get("note")
        }
        finds, members, support = [], [], []
        attributes, notes = {}, {}
        for i, (_, item) in enumerate(figures, 1):
            key, label = str(i), item["label"]
            spans = _shift(item["members"], a)
            finds.append(_span(doc, spans[0][0], spans[-1][1], label, key))
            members += [_span(doc, s, e, label, key) for s, e in spans]
            support += [_span(doc, s, e, label, key) for s, e in _shift(item.get("support", []), a)]
            if item.get("attribute"):
                attributes[key] = item["attribute"]
            if item.get("note"):
                notes[key] = item["note"]
        doc.spans[FIGURES_KEY] = finds
        doc.spans[FIGURES_KEY].attrs["attributes"] = attributes
        doc.spans[FIGURES_KEY].attrs["notes"] = notes
        doc.spans[MEMBERS_KEY] = members
        doc.spans[SUPPORT_KEY] = support
        docs.append(doc)
    return docs


def convert_rhetoric(path: str | Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert the rhetoric corpus (a directory holding ``{la,en,de}.jsonl``, or one of
    those files) into section Docs per split.

    path (str | Path): the corpus directory or one language's file.
    vocab (Optional[Vocab]): the vocab of the Docs (None: a blank multilingual one);
        each language is tokenized by its blank pipeline.
    RETURNS (Conversion): ``train``, ``dev`` and ``test`` (those that hold passages);
        unannotated passages are skipped and counted.
    RAISES CorpusFormatError: a malformed record (file and line named).
    """
    path = Path(path)
    files = [path] if path.is_file() else [path / f"{lang}.jsonl" for lang in LANGUAGES]
    files = [f for f in files if f.is_file()]
    if not files:
        raise FileNotFoundError(f"rhetoric-corpus: no {{la,en,de}}.jsonl in {path}")
    vocab = vocab if vocab is not None else spacy.blank("xx").vocab
    conversion = Conversion()
    tokenizers: Dict[str, Any] = {}
    for file in files:
        for number, record in read_records(file):
            if not record.get("annotated", True):
                conversion.skip(file, number, "passage not annotated yet")
                continue
            if record["lang"] not in tokenizers:
                tokenizers[record["lang"]] = spacy.blank(record["lang"])
            docs = passage_docs(record, tokenizers[record["lang"]], vocab)
            conversion.splits.setdefault(record["split"], []).extend(docs)
    conversion.splits = {s: conversion.splits[s] for s in SPLITS if s in conversion.splits}
    return conversion


def _char_ranges(spans: Iterable[Span], offset: int) -> List[List[int]]:
    return [[span.start_char + offset, span.end_char + offset] for span in spans]


def records_from_docs(docs: Iterable[Doc]) -> List[Dict[str, Any]]:
    """Rebuild the passages' records (text, metadata, annotations as character offsets)
    from their section Docs, in the order of their first section.

    RETURNS (List[Dict[str, Any]]): one record per passage.
    """
    by_passage: Dict[str, List[Doc]] = {}
    for doc in docs:
        by_passage.setdefault(doc.user_data["doc_id"], []).append(doc)
    records = []
    for passage, sections in by_passage.items():
        sections.sort(key=lambda d: d.user_data["section"])
        first = sections[0].user_data
        record: Dict[str, Any] = {
            "id": passage,
            "lang": first[LANGUAGE_KEY],
            "split": first["split"],
        }
        for key in META:
            if key in first:
                record[key] = first[key]
        record["text"] = "".join(d.text + d.user_data["gap"] for d in sections)
        parallelisms, figures = [], []
        for doc in sections:
            a = doc.user_data["start"]
            notes = doc.user_data.get("parallelism_notes", {})
            for p in get_parallelisms(doc):
                item: Dict[str, Any] = {"branches": _char_ranges(p.branches, a), "type": p.label}
                if p.id in notes:
                    item["note"] = notes[p.id]
                parallelisms.append(item)
            group = doc.spans[FIGURES_KEY]
            members: Dict[str, List[Span]] = {}
            support: Dict[str, List[Span]] = {}
            for span in doc.spans[MEMBERS_KEY]:
                members.setdefault(span.id_, []).append(span)
            for span in doc.spans[SUPPORT_KEY]:
                support.setdefault(span.id_, []).append(span)
            for span in group:
                item = {"label": span.label_, "members": _char_ranges(members[span.id_], a),
                        "support": _char_ranges(support.get(span.id_, []), a)}  # fmt: skip
                if span.id_ in group.attrs["attributes"]:
                    item["attribute"] = group.attrs["attributes"][span.id_]
                if span.id_ in group.attrs["notes"]:
                    item["note"] = group.attrs["notes"][span.id_]
                figures.append(item)
        record["parallelisms"] = parallelisms
        record["figures"] = figures
        records.append(record)
    return records
