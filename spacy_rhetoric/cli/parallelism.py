"""``python -m spacy_rhetoric parallelism find|evaluate|tune|calibrate|ensemble``: the
parallelisms of a text file with their scores and review list; score parallelisms with
EPM, MPBM, MBAWO and MWO; tune the tagger's outside penalty and calibrate its scores on
validation data; decode several trained taggers together."""

import time
from pathlib import Path
from typing import List, Optional

from wasabi import msg

from ._util import (
    Arg,
    Opt,
    emit_json,
    load_pipeline,
    noun_app,
    print_ranked,
    save_pipeline,
    use_gpu,
)

parallelism_app = noun_app(
    "parallelism",
    "Parallelism: find parallelisms in a text, evaluate a tagger, tune and calibrate it on "
    "validation data, ensemble taggers.",
)

# the package ``find --lang`` loads without --model
PACKAGES = {"la": "la_rhetoric_parallelism", "zh": "zh_rhetoric_parallelism"}
MULTILINGUAL_PACKAGE = "xx_rhetoric_parallelism"


@parallelism_app.command("find")
def parallelism_find_cli(
    file: Path = Arg(..., help="A UTF-8 text file", dir_okay=False),
    model: Optional[str] = Opt(
        None,
        "--model",
        "-m",
        help="A pipeline with a parallelism_tagger: a directory or an installed package "
        "(default with --lang: la_rhetoric_parallelism, zh_rhetoric_parallelism, else "
        "xx_rhetoric_parallelism)",
    ),
    lang: Optional[str] = Opt(
        None, "--lang", "-l", help="The text's language, stated to the model (e.g. la, en)"
    ),
    top: int = Opt(0, "--top", "-n", help="Show at most this many of each list (0: all)"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Find parallelisms in a text: print the reported ones (in text order) and the
    review list (best first), each with its score, the calibrated probability that it
    is exactly right, and its branches."""
    from ..parallelism.find import find_in_text
    from ..textio import InputError, read_text

    if model is None and lang is None:
        msg.fail("Give --model (a parallelism pipeline) or --lang (its language).", exits=1)
    try:
        text = read_text(file)
    except InputError as err:
        msg.fail(str(err), exits=1)
    if not text.strip():
        msg.fail(f"{file} is empty: there is no text to find parallelisms in.", exits=1)
    name = model if model is not None else PACKAGES.get(lang, MULTILINGUAL_PACKAGE)
    nlp = load_pipeline(Path(name))
    start = time.perf_counter()
    try:
        found = find_in_text(nlp, text, language=lang)
    except ValueError as err:
        msg.fail(f"{name}: {err}", exits=1)
    seconds = time.perf_counter() - start
    if top:
        found = {
            **found,
            "parallelisms": found["parallelisms"][:top],
            "review": found["review"][:top],
        }
    if emit_json(found, output, as_json):
        return
    sections = []
    for title, items in (
        ("Parallelisms", found["parallelisms"]),
        ("For review (below the reporting threshold)", found["review"]),
    ):
        rows = [
            (
                "-" if item["score"] is None else f"{item['score']:.2f}",
                item["type"],
                " | ".join(branch["text"].replace("\n", " ") for branch in item["branches"]),
            )
            for item in items
        ]
        sections.append((f"{title}: {len(items)}", rows))
    print_ranked(sections, ("score", "type", "branches"))
    msg.info(f"{found['tokens']} tokens in {seconds:.1f}s")


METRICS = ("epm", "mpbm", "mbawo", "mwo")


@parallelism_app.command("evaluate")
def parallelism_evaluate_cli(
    gold: Path = Arg(..., help="Gold .spacy file", exists=True),
    pred: Optional[Path] = Arg(None, help="Predicted .spacy file (same docs, same order)"),
    model: Optional[Path] = Opt(None, "--model", "-m", help="Predict with this pipeline instead"),
    spans_key: str = Opt("parallelism", "--spans-key", help="Span group of the branches"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the scores as JSON"),
    save_predictions: Optional[Path] = Opt(None, "--save", help="Write predicted docs (.spacy)"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    gpu_id: int = Opt(-1, "--gpu-id", help="Predict on this GPU (-1: CPU)"),
    language: Optional[str] = Opt(
        None,
        "--language",
        help="With --model: predict as if every doc were in this language (e.g. en, which "
        "a head trained on la and zh reads as unknown), not the language each doc states",
    ),
):
    """Score parallelisms with EPM, MPBM, MBAWO and MWO (P/R/F1, micro-averaged).

    Give either PRED or --model (which predicts on the gold tokens)."""

    from ..parallelism.evaluate import evaluate_parallelism

    if (pred is None) == (model is None):
        msg.fail("Give either PRED or --model.", exits=1)
    if language is not None and model is None:
        msg.fail("--language needs --model (it is what the model is told).", exits=1)
    if model is not None:
        use_gpu(gpu_id)
    nlp = load_pipeline(model) if model is not None else None
    try:
        scores = evaluate_parallelism(gold, pred, nlp, spans_key, save_predictions, language)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    if emit_json(scores, output, as_json):
        return
    rows = [
        (name.upper(), *(f"{100 * scores[f'parallelism_{name}_{part}']:.2f}" for part in "prf"))
        for name in METRICS
    ]
    msg.table(rows, header=("metric", "P", "R", "F1"), divider=True)
    if "tokens_per_second" in scores:
        msg.info(
            f"{scores['tokens']} tokens in {scores['seconds']:.1f}s "
            f"({scores['tokens_per_second']:.0f} tokens/s)"
        )


@parallelism_app.command("tune")
def parallelism_tune_cli(
    model: Path = Arg(..., help="Trained pipeline with a parallelism_tagger", exists=True),
    dev: Path = Arg(..., help="Validation .spacy file", exists=True),
    output_model: Path = Arg(..., help="Where to save the tuned pipeline"),
    grid: str = Opt("0,0.5,1,1.5,2,3,4", "--grid", help="Comma-separated penalties to try"),
    metric: str = Opt("parallelism_epm_f", "--metric", help="Score key to maximise"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the grid's scores as JSON"),
    gpu_id: int = Opt(-1, "--gpu-id", help="Predict on this GPU (-1: CPU)"),
):
    """Pick the tagger's outside_penalty (recall vs precision) on validation data and
    save the pipeline with it."""

    from ..corpora.util import CorpusFormatError
    from ..parallelism.evaluate import tune_outside_penalty

    use_gpu(gpu_id)
    nlp = load_pipeline(model)
    values = [float(v) for v in grid.split(",") if v.strip()]
    try:
        result = tune_outside_penalty(nlp, dev, values, metric)
    except CorpusFormatError as err:  # dev is no DocBin
        msg.fail(str(err), exits=1)
    save_pipeline(nlp, output_model)
    emit_json(result, output, False)
    for value, scores in result["scores"].items():
        msg.text(f"outside_penalty {value}: {metric} = {100 * scores[metric]:.2f}")
    msg.good(f"Best outside_penalty {result['best']}: saved {output_model}")


@parallelism_app.command("ensemble")
def parallelism_ensemble_cli(
    output_model: Path = Arg(..., help="Where to save the ensemble pipeline"),
    models: List[Path] = Arg(..., help="Two or more trained pipelines of one recipe", exists=True),
    weights_dtype: str = Opt(
        "float32", "--weights-dtype", help="Save the heads in float32 or float16 (half the size)"
    ),
    spelling: Optional[str] = Opt(
        None,
        "--spelling",
        help="How the ensemble reads words (default: as its members do), e.g. 'latin' for "
        "members trained lower-cased on text that ASP's spelling already folds",
    ),
):
    """Save one pipeline whose parallelism tagger decodes the given taggers together
    (their emission, transition and link scores averaged). Retune its outside_penalty
    on validation data afterwards (parallelism tune)."""

    from ..parallelism.ensemble import assemble

    pipelines = [load_pipeline(model) for model in models]
    try:
        nlp = assemble(pipelines, weights_dtype=weights_dtype, spelling=spelling)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    save_pipeline(nlp, output_model)
    msg.good(f"Ensemble of {len(pipelines)} taggers saved to {output_model}")


@parallelism_app.command("calibrate")
def parallelism_calibrate_cli(
    model: str = Arg(..., help="A pipeline with a parallelism_tagger (directory or package)"),
    dev: List[Path] = Arg(..., help="Validation .spacy file(s)", exists=True),
    output_model: Path = Opt(
        ..., "--output-model", help="Where to write the pipeline with its calibration"
    ),
    data: str = Opt("", "--data", help="What the dev data is, for the record (e.g. 'ASP dev')"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the fit and its grid as JSON"),
    gpu_id: int = Opt(-1, "--gpu-id", help="Predict on this GPU (-1: CPU)"),
):
    """Choose the review list's operating point and fit the score calibration on
    validation data, and write a copy of the pipeline whose tagger carries them (its
    weights and every other file copied unchanged)."""
    import shutil

    import srsly

    from ..corpora.stats import read_docbins
    from ..parallelism.calibrate import calibrate, tagger_of

    use_gpu(gpu_id)
    nlp = load_pipeline(Path(model))
    try:
        tagger = tagger_of(nlp)
        gold = list(read_docbins(list(dev), nlp.vocab))
        result = calibrate(nlp, gold, data or ", ".join(str(p) for p in dev))
    except ValueError as err:
        msg.fail(str(err), exits=1)
    source = Path(nlp.path) if nlp.path is not None else None
    cfg_path = Path(tagger.name) / "cfg"
    if source is not None and (source / cfg_path).is_file():
        if output_model.exists():
            msg.fail(f"{output_model} exists: give a new directory", exits=1)
        shutil.copytree(source, output_model)
        cfg = srsly.read_json(output_model / cfg_path)
        cfg["calibration"] = result["calibration"]
        srsly.write_json(output_model / cfg_path, cfg)
    else:  # a pipeline not loaded from a directory: save it whole
        tagger.cfg["calibration"] = result["calibration"]
        save_pipeline(nlp, output_model)
    report = {k: v for k, v in result.items() if k != "collected"}
    emit_json(report, output, False)
    calibration = result["calibration"]
    outcome = result["choice"]["outcome"]
    msg.good(
        f"Calibrated on {calibration['data']}: ECE branches {calibration['ece']['branches']}, "
        f"parallelisms {calibration['ece']['parallelisms']}; review penalty "
        f"{calibration['review_penalty']}: EPM recall {100 * outcome['report_recall']:.1f} -> "
        f"{100 * outcome['recall']:.1f} with the review list "
        f"({outcome['review_ratio']:.2f}x the reports); saved {output_model}"
    )
