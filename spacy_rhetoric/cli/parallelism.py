"""``python -m spacy_rhetoric parallelism evaluate|tune|ensemble``: score parallelisms
with EPM, MPBM, MBAWO and MWO; tune the tagger's outside penalty on validation data;
decode several trained taggers together."""

from pathlib import Path
from typing import List, Optional

from wasabi import msg

from ._util import Arg, Opt, emit_json, load_pipeline, noun_app, save_pipeline, use_gpu

parallelism_app = noun_app(
    "parallelism",
    "Parallelism: evaluate a tagger, tune its decoding on validation data, ensemble taggers.",
)

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
