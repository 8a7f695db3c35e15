"""Corpus statistics over converted DocBins (``python -m spacy_rhetoric corpus stats``)."""

from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from .parallelisms import DEFAULT_SPANS_KEY, get_parallelisms
from .util import CorpusFormatError

CHIASMUS_KEY = "chiasmus"


def corpus_stats(docs: Iterable[Doc], spans_key: str = DEFAULT_SPANS_KEY) -> Dict[str, Any]:
    """Count what a corpus holds.

    docs (Iterable[Doc]): the docs (sections, paragraphs, candidates or segments).
    spans_key (str): the span group holding parallelism branches.
    RETURNS (Dict[str, Any]): documents (distinct dataset/doc_id), sections (docs),
        tokens, parallelisms, branches, nested parallelisms and branches (stratum > 1;
        parallelisms whose branches lie in different docs are counted once, too),
        parallelism types, chiasmus candidates by label, and intertext links.
    """
    documents = set()
    cross_section: Dict[Any, Dict[str, Any]] = {}
    counts: Counter = Counter()
    types: Counter = Counter()
    chiasmus: Counter = Counter()
    for doc in docs:
        documents.add((doc.user_data.get("dataset"), doc.user_data.get("doc_id")))
        counts["sections"] += 1
        counts["tokens"] += len(doc)
        for parallelism in get_parallelisms(doc, spans_key):
            counts["parallelisms"] += 1
            counts["branches"] += len(parallelism)
            types[parallelism.label] += 1
            if parallelism.stratum > 1:
                counts["nested_parallelisms"] += 1
                counts["nested_branches"] += len(parallelism)
        for record in doc.user_data.get("cross_section_parallelisms", ()):
            # kept on every section it touches: count it once
            cross_section[(doc.user_data.get("dataset"), record["id"])] = record
        if CHIASMUS_KEY in doc.spans:
            chiasmus.update(span.label_ for span in doc.spans[CHIASMUS_KEY])
        counts["links"] += len(doc.user_data.get("links", ()))
    for record in cross_section.values():
        counts["parallelisms"] += 1
        counts["branches"] += len(record["branches"])
        types[record["label"]] += 1
        if record["stratum"] > 1:
            counts["nested_parallelisms"] += 1
            counts["nested_branches"] += len(record["branches"])
    return {
        "documents": len(documents),
        "sections": counts["sections"],
        "tokens": counts["tokens"],
        "parallelisms": counts["parallelisms"],
        "branches": counts["branches"],
        "nested_parallelisms": counts["nested_parallelisms"],
        "nested_branches": counts["nested_branches"],
        "parallelism_types": dict(sorted(types.items())),
        "cross_section_parallelisms": len(cross_section),
        "chiasmus_candidates": sum(chiasmus.values()),
        "chiasmus_labels": dict(sorted(chiasmus.items())),
        "links": counts["links"],
    }


def read_docbins(paths: Iterable[Union[str, Path]], vocab: Vocab) -> Iterable[Doc]:
    """Yield the docs of several .spacy files (directories: every .spacy inside, each
    doc's ``user_data["corpus"]`` set to its file's stem, so that scores can be given
    per corpus, see ``score_parallelism``).

    RAISES CorpusFormatError: a file that is no DocBin, or a directory without any.
    """
    for path in paths:
        path = Path(path)
        files = sorted(path.glob("*.spacy")) if path.is_dir() else [path]
        if not files:
            raise CorpusFormatError(path, None, "no .spacy files in this directory")
        for file in files:
            try:
                docbin = DocBin().from_disk(file)
            except (ValueError, OSError) as err:  # srsly/msgpack/zlib errors are ValueErrors
                reason = "not a DocBin (.spacy) file" if isinstance(err, ValueError) else err
                raise CorpusFormatError(file, None, str(reason)) from None
            if not path.is_dir():
                yield from docbin.get_docs(vocab)
                continue
            for doc in docbin.get_docs(vocab):
                doc.user_data.setdefault("corpus", file.stem)
                yield doc
