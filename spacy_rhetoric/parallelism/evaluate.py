"""Evaluate parallelism predictions against gold DocBins (the paper's protocol:
gold tokens, all four metrics, micro-averaged over documents)."""

import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from ..corpora.parallelisms import CHIASTIC, DEFAULT_SPANS_KEY, SYNCHYSTIC, get_parallelisms
from ..corpora.stats import read_docbins
from ..corpora.util import LANGUAGE_KEY, gold_tokens_doc
from .metrics import score_parallelism, score_types


def _strip(doc: Doc, language: Optional[str] = None) -> Doc:
    """A copy of a doc with its tokens only (the model sees the gold tokenization) and
    the language the doc states, or ``language`` where given."""
    copy = gold_tokens_doc(doc.vocab, doc)
    if language:
        copy.user_data[LANGUAGE_KEY] = language
    return copy


def predict_docs(
    nlp: Language,
    gold: List[Doc],
    batch_size: int = 16,
    n_process: int = 1,
    language: Optional[str] = None,
) -> List[Doc]:
    """Run a pipeline over the gold tokens of each doc (stated to be in ``language``
    where given, else in the language the gold doc states)."""
    inputs = (_strip(doc, language) for doc in gold)
    return list(nlp.pipe(inputs, batch_size=batch_size, n_process=n_process))


def evaluate_parallelism(
    gold_path: Union[str, Path],
    pred_path: Optional[Union[str, Path]] = None,
    nlp: Optional[Language] = None,
    spans_key: str = DEFAULT_SPANS_KEY,
    save_predictions: Optional[Union[str, Path]] = None,
    language: Optional[str] = None,
) -> Dict[str, Any]:
    """Score predicted parallelisms against gold ones.

    gold_path (Union[str, Path]): gold .spacy file (or directory of them).
    pred_path (Optional[Union[str, Path]]): predicted .spacy file(s), aligned with the
        gold docs by order; or None to predict with ``nlp`` on the gold tokens.
    nlp (Optional[Language]): the pipeline to predict with when pred_path is None.
    spans_key (str): the span group of the branches.
    save_predictions (Optional[Union[str, Path]]): write the predicted docs here.
    language (Optional[str]): predict as if every doc were in this language (e.g. "en"
        for a multilingual head trained with a language input on Latin and Chinese
        only: its zero-shot case); None: the language each gold doc states.
    RETURNS (Dict[str, Any]): the scorer's keys plus docs, tokens, seconds and
        tokens_per_second (of prediction, when it ran).
    """
    vocab = nlp.vocab if nlp is not None else Vocab()
    gold = list(read_docbins([gold_path], vocab))
    result: Dict[str, Any] = {}
    if pred_path is not None:
        predicted = list(read_docbins([pred_path], vocab))
    elif nlp is not None:
        start = time.perf_counter()
        predicted = predict_docs(nlp, gold, language=language)
        seconds = time.perf_counter() - start
        tokens = sum(len(doc) for doc in gold)
        result.update({"seconds": seconds, "tokens_per_second": tokens / max(seconds, 1e-9)})
    else:
        raise ValueError("evaluate_parallelism needs predictions (pred_path) or a pipeline (nlp).")
    if len(predicted) != len(gold):
        raise ValueError(
            f"{len(predicted)} predicted docs but {len(gold)} gold docs: the files must hold "
            "the same docs in the same order."
        )
    for i, (p, g) in enumerate(zip(predicted, gold)):
        if p.text != g.text:
            raise ValueError(f"doc {i}: the predicted text differs from the gold text.")
    if save_predictions is not None:
        DocBin(store_user_data=True, docs=predicted).to_disk(save_predictions)
    examples = [Example(p, g) for p, g in zip(predicted, gold)]
    result.update(score_parallelism(examples, spans_key=spans_key))
    if nlp is not None:
        typing = type_gold_parallelisms(nlp, gold, spans_key)
        if typing is not None:
            result["type_on_gold"] = typing
    result["docs"] = len(gold)
    result["tokens"] = sum(len(doc) for doc in gold)
    return result


def type_gold_parallelisms(
    nlp: Language, gold: List[Doc], spans_key: str = DEFAULT_SPANS_KEY
) -> Optional[Dict[str, float]]:
    """Type the typed (synchystic/chiastic) gold parallelisms with the pipeline's
    parallelism_tagger classifier: typing measured apart from span detection.

    RETURNS (Optional[Dict[str, float]]): ``score_types`` of the gold parallelisms, or
        None when the pipeline has no parallelism_tagger or the gold is untyped.
    """
    taggers = [
        pipe
        for name, pipe in nlp.pipeline
        if nlp.get_pipe_meta(name).factory == "parallelism_tagger"
    ]
    if not taggers:
        return None
    if not taggers[0].cfg.get("type_weights"):
        return None
    pairs = []
    for doc in gold:
        typed = [
            parallelism
            for parallelism in get_parallelisms(doc, spans_key)
            if parallelism.label in (SYNCHYSTIC, CHIASTIC)
        ]
        predicted = taggers[0].type_parallelisms(doc, [p.offsets for p in typed])
        pairs.extend((p.label, label) for p, label in zip(typed, predicted, strict=True))
    return score_types(pairs) if pairs else None


def tune_outside_penalty(
    nlp: Language,
    gold_path: Union[str, Path],
    grid: List[float],
    metric: str = "parallelism_epm_f",
    component: str = "parallelism_tagger",
) -> Dict[str, Any]:
    """Choose the tagger's ``outside_penalty`` on validation data: score every value
    of the grid and keep the best (ties: the smaller penalty).

    RETURNS (Dict[str, Any]): {"best": value, "metric": metric, "scores": {value: scores}};
        the pipeline's component is left set to the best value.
    """
    tagger = nlp.get_pipe(component)
    gold = list(read_docbins([gold_path], nlp.vocab))
    table: Dict[str, Dict[str, float]] = {}
    best, best_score = grid[0], -1.0
    for value in grid:
        tagger.cfg["outside_penalty"] = float(value)
        examples = [Example(p, g) for p, g in zip(predict_docs(nlp, gold), gold)]
        scores = score_parallelism(examples, spans_key=tagger.cfg["spans_key"])
        table[str(value)] = scores
        if scores[metric] > best_score:
            best, best_score = value, scores[metric]
    tagger.cfg["outside_penalty"] = float(best)
    return {"best": best, "metric": metric, "scores": table}
