"""Parallelisms in a whole text: a pipeline with a ``parallelism_tagger`` over its
paragraphs, the reported parallelisms and the review list with their scores."""

from typing import Any, Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc

from ..corpora.parallelisms import get_parallelisms
from ..corpora.util import LANGUAGE_KEY
from ..textio import paragraphs
from .calibrate import tagger_of


def _items(doc: Doc, key: Optional[str], base: int, review: bool) -> List[Dict[str, Any]]:
    if not key or key not in doc.spans:
        return []
    found = []
    for parallelism in get_parallelisms(doc, key):
        first = parallelism.branches[0]
        score = first._.parallelism_score
        found.append(
            {
                "score": float(score) if score is not None else None,
                "review": review,
                "type": parallelism.label,
                "stratum": parallelism.stratum,
                "start_char": base + first.start_char,
                "end_char": base + parallelism.branches[-1].end_char,
                "branches": [
                    {
                        "text": span.text,
                        "score": span._.parallelism_branch_score,
                        "start_char": base + span.start_char,
                        "end_char": base + span.end_char,
                    }
                    for span in parallelism.branches
                ],
            }
        )
    return found


def find_in_text(
    nlp: Language,
    text: str,
    language: Optional[str] = None,
    batch_size: int = 16,
) -> Dict[str, Any]:
    """Run a pipeline with a parallelism_tagger over a text, paragraph by paragraph.

    nlp (Language): the pipeline.
    text (str): the text.
    language (Optional[str]): the language to state to the model (a multilingual head
        reads it), e.g. "la"; None: the pipeline's own.
    batch_size (int): chunks per nlp.pipe batch.
    RETURNS (Dict[str, Any]): {"parallelisms": the reported ones in text order,
        "review": the review list, best first, "tokens": tokens read}; each with its
        score (None where the model gives none), type, stratum, character offsets and
        branches (text, score, offsets).
    RAISES ValueError: the pipeline has no parallelism_tagger.
    """
    tagger = tagger_of(nlp)
    chunks = list(paragraphs(text))
    offsets = [0]
    for chunk in chunks:
        offsets.append(offsets[-1] + len(chunk))
    docs = []
    for chunk in chunks:
        doc = nlp.make_doc(chunk)
        if language:
            doc.user_data[LANGUAGE_KEY] = language
        docs.append(doc)
    reported: List[Dict[str, Any]] = []
    review: List[Dict[str, Any]] = []
    tokens = 0
    for base, doc in zip(offsets, nlp.pipe(docs, batch_size=batch_size)):
        tokens += len(doc)
        reported += _items(doc, tagger.cfg["spans_key"], base, False)
        review += _items(doc, tagger.candidates_key, base, True)
    reported.sort(key=lambda item: item["start_char"])
    review.sort(key=lambda item: (-(item["score"] or 0.0), item["start_char"]))
    return {"parallelisms": reported, "review": review, "tokens": tokens}
