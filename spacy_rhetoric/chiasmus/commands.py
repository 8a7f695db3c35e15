"""CLI commands of the chiasmus capability: ``chiasmus`` (find and rank chiasmi in a
text file) and ``chiasmus-eval`` (the German and English evaluation protocols)."""

import re
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from wasabi import msg

from ..cli import Arg, Opt, app, emit_json

CHUNK_CHARS = 5000


def text_chunks(text: str, max_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """Split a text at blank lines, and paragraphs longer than ``max_chars`` at line
    ends (or, failing that, at spaces), keeping every character.

    text (str): the text.
    max_chars (int): the longest chunk wanted.
    YIELDS (str): the chunks, which concatenate to the text.
    """
    for paragraph in re.split(r"(?<=\n\n)", text):
        while len(paragraph) > max_chars:
            cut = paragraph.rfind("\n", 0, max_chars)
            if cut <= 0:
                cut = paragraph.rfind(" ", 0, max_chars)
            cut = cut + 1 if cut > 0 else max_chars
            yield paragraph[:cut]
            paragraph = paragraph[cut:]
        if paragraph:
            yield paragraph


def find_in_text(
    nlp: Any,
    text: str,
    top: int = 20,
    context: int = 5,
    key: Optional[str] = None,
    progress: bool = False,
    batch_size: int = 32,
) -> List[Dict[str, Any]]:
    """Run a pipeline with a chiasmus_finder over a text and rank its candidates.

    nlp (Language): the pipeline (POS, lemmas, chiasmus_finder).
    text (str): the text.
    top (int): how many candidates to return (0: all).
    context (int): tokens of context on either side.
    key (Optional[str]): the span group to rank (default: the finder's candidates group,
        else its chiasmus group).
    progress (bool): show a progress bar.
    batch_size (int): chunks per nlp.pipe batch.
    RETURNS (List[Dict[str, Any]]): candidates, best first, with score, type, words,
        character offsets and context.
    """
    finder = next(
        (pipe for name, pipe in nlp.pipeline if getattr(pipe, "cfg", {}).get("support_key")),
        None,
    )
    if finder is None:
        raise ValueError("The pipeline has no chiasmus_finder: add one and train it first.")
    if key is None:
        key = finder.cfg["candidates_key"] or finder.cfg["spans_key"]
    chunks = list(text_chunks(text))
    offsets = [0]
    for chunk in chunks:
        offsets.append(offsets[-1] + len(chunk))
    docs = nlp.pipe(chunks, batch_size=batch_size)
    if progress:
        from tqdm import tqdm

        docs = tqdm(docs, total=len(chunks), unit="chunk", desc="chiasmus")
    found: List[Dict[str, Any]] = []
    for base, doc in zip(offsets, docs):
        group = doc.spans[key] if key in doc.spans else []
        for span in group:
            score = span._.chiasmus_score
            support = span._.chiasmus_support
            marked = {word.start: word.label_ for word in support}
            left = doc[max(0, span.start - context) : span.start].text
            right = doc[span.end : span.end + context].text
            inner = " ".join(f"[{t.text}]{marked[t.i]}" if t.i in marked else t.text for t in span)
            found.append(
                {
                    "score": float(score) if score is not None else 0.0,
                    "type": span.label_,
                    "text": span.text,
                    "start_char": base + span.start_char,
                    "end_char": base + span.end_char,
                    "words": {word.label_: word.text for word in support},
                    "context": f"{left} {inner} {right}".replace("\n", " ").strip(),
                }
            )
        if top and len(found) > 4 * top:  # bounded memory on long texts
            found.sort(key=lambda item: -item["score"])
            del found[top:]
    found.sort(key=lambda item: (-item["score"], item["start_char"]))
    return found[:top] if top else found


@app.command("chiasmus")
def chiasmus_cli(
    file: Path = Arg(..., help="A UTF-8 text file", exists=True, dir_okay=False),
    model: Path = Opt(..., "--model", "-m", help="A pipeline with a trained chiasmus_finder"),
    top: int = Opt(20, "--top", "-n", help="How many candidates to show (0: all)"),
    context: int = Opt(5, "--context", help="Tokens of context on either side"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Find chiasmi in a text and print the candidates ranked by score, with context
    (the supporting words in brackets, followed by their roles)."""
    import spacy

    import spacy_rhetoric  # noqa: F401

    from . import metrics  # noqa: F401  (registers the component and scorer)
    from .model import build_chiasmus_scorer  # noqa: F401  (registers the architecture)

    nlp = spacy.load(model)
    text = file.read_text(encoding="utf8")
    start = time.perf_counter()
    try:
        found = find_in_text(
            nlp, text, top=top, context=context, progress=not as_json and len(text) > 20000
        )
    except ValueError as err:
        msg.fail(str(err), exits=1)
    seconds = time.perf_counter() - start
    if emit_json(found, output, as_json):
        return
    if not found:
        msg.warn(f"No chiasmus candidates in {file}")
        return
    rows = [
        (rank, f"{item['score']:.3f}", item["type"], item["context"])
        for rank, item in enumerate(found, start=1)
    ]
    msg.table(rows, header=("#", "score", "type", "candidate in context"), divider=True)
    msg.info(f"{len(text)} characters in {seconds:.1f}s")


@app.command("chiasmus-eval")
def chiasmus_eval_cli(
    language: str = Arg(
        ...,
        help="de (GerDraCor, 5-fold CV), en (Dubremetz & Nivre) or en-mb (Meyer/Berthomet)",
    ),
    data_dir: Path = Arg(..., help="The dataset's directory or file", exists=True),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the metrics as JSON"),
    tagger: Optional[Path] = Opt(
        None,
        "--tagger",
        help="en: pipeline giving POS, lemmas, parse (configs/chiasmus/en_tagger.cfg)",
    ),
    n_folds: int = Opt(5, "--folds", help="de, en-mb: number of folds"),
    seed: int = Opt(0, "--seed", help="Seed of the folds and of training"),
    seeds: Optional[str] = Opt(
        None, "--seeds", help="de, en-mb: fold seeds of a repeated CV, e.g. 0,1,2,3,4"
    ),
    groups: str = Opt("D,L,E", "--groups", help="Feature groups, e.g. D,L"),
    ablation: bool = Opt(False, "--ablation", help="Also run D, L, E, D+L"),
    scorer_v1: bool = Opt(
        False, "--v1", help="ChiasmusScorer.v1 (E from static vectors/tensor, no encoder)"
    ),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
):
    """Run a chiasmus evaluation protocol and report average precision.

    de: stratified k-fold CV over the annotated candidates, positives {a, c, fa, fc}
    ("full") and {a, c} with fa/fc removed ("fp_removed"); mean and sample sd of AP
    over all folds of all fold seeds, the plain D+L logistic regression beside it.
    en: train on the train split, AP on test; True is positive, the other categories
    negative ("all_negative") or with duplicates removed ("duplicates_removed").
    en-mb: salient chiasmi vs non-chiasmi (whole texts), grouped k-fold CV.
    The E features come from the multilingual encoder (ChiasmusScorer.v2), their layers
    chosen by an inner CV on each training set."""
    import spacy_rhetoric  # noqa: F401

    from . import component, metrics, model  # noqa: F401  (registers)
    from .evaluate import (
        DEFAULT_SETTINGS,
        SCORER_V1,
        evaluate_english,
        evaluate_english_mb,
        evaluate_german,
        feature_ablation,
    )

    if language not in ("de", "en", "en-mb"):
        msg.fail(f"Unknown language '{language}': use de, en or en-mb.", exits=1)
    settings = {
        **DEFAULT_SETTINGS,
        "model": {**DEFAULT_SETTINGS["model"], "feature_groups": groups.split(",")},
    }
    if scorer_v1:
        settings["model"]["@architectures"] = SCORER_V1
        settings["model"]["vectors"] = "auto"
    fold_seeds = [int(x) for x in seeds.split(",")] if seeds else None
    progress = None if as_json else msg.text

    def run(changed: Dict[str, Any]) -> Dict[str, Any]:
        if language == "de":
            return evaluate_german(data_dir, changed, n_folds, seed, progress, fold_seeds)
        if language == "en-mb":
            return evaluate_english_mb(
                data_dir, tagger, changed, n_folds, fold_seeds or [seed], progress
            )
        return evaluate_english(data_dir, tagger, changed, seed, progress)

    start = time.perf_counter()
    try:
        results = run(settings)
        if ablation:
            combos = [["D"], ["L"], ["E"], ["D", "L"]]
            results["ablation"] = feature_ablation(run, combos, settings)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    results["seconds"] = time.perf_counter() - start
    if emit_json(results, output, as_json):
        return
    if language in ("de", "en-mb"):
        names = ("full", "fp_removed") if language == "de" else ("salient_vs_non",)
        rows = [
            (
                name,
                f"{results[name]['ap_mean']:.3f} ± {results[name]['ap_sd']:.3f}",
                f"{results[name]['baseline_dl_logreg']['ap_mean']:.3f} ± "
                f"{results[name]['baseline_dl_logreg']['ap_sd']:.3f}",
            )
            for name in names
        ]
        msg.table(rows, header=("setting", "AP", "D+L logreg"), divider=True)
        return
    else:
        rows = [
            (name, f"{results[name]['ap_test']:.3f}")
            for name in ("all_negative", "duplicates_removed")
        ]
    msg.table(rows, header=("setting", "AP"), divider=True)
