"""``python -m spacy_rhetoric chiasmus find|evaluate``: chiasmi ranked in a text file, and
the German and English evaluation protocols."""

import time
from pathlib import Path
from typing import Any, Dict, Optional

from wasabi import msg

from ._util import Arg, Opt, emit_json, noun_app, on_terminal, print_ranked

chiasmus_app = noun_app("chiasmus", "Chiasmus: find and rank chiasmi in a text, evaluate scorers.")


@chiasmus_app.command("find")
def chiasmus_find_cli(
    file: Path = Arg(..., help="A UTF-8 text file", exists=True, dir_okay=False),
    lang: Optional[str] = Opt(
        None, "--lang", "-l", help="la, de or en: its base pipeline and chiasmus model or rules"
    ),
    model: Optional[Path] = Opt(
        None, "--model", "-m", help="A pipeline with a chiasmus_finder (chained behind its base)"
    ),
    top: int = Opt(20, "--top", "-n", help="How many candidates to show (0: all)"),
    context: int = Opt(5, "--context", help="Tokens of context on either side"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Find chiasmi in a text and print the candidates ranked by score, with context
    (the supporting words in brackets, followed by their roles). With --lang, the
    language's base pipeline runs with its chiasmus model, or the hand-weighted rules;
    a --model that holds only the finder is chained behind its base pipeline."""
    from ..analysis.languages import AnalyzeError
    from ..analysis.pipelines import chiasmus_pipeline
    from ..chiasmus.find import find_in_text
    from ..textio import InputError, read_text

    try:
        nlp = chiasmus_pipeline(lang, model)
        text = read_text(file)
    except (AnalyzeError, InputError) as err:
        msg.fail(str(err), exits=1)
    start = time.perf_counter()
    try:
        found = find_in_text(
            nlp, text, top=top, context=context, progress=on_terminal() and len(text) > 20000
        )
    except ValueError as err:
        msg.fail(str(err), exits=1)
    seconds = time.perf_counter() - start
    if emit_json(found, output, as_json):
        return
    if not found:
        msg.warn(f"No chiasmus candidates in {file}")
        return
    sections = []
    for title, review in (
        ("Chiasmi (above the threshold)", False),
        ("For review (below the threshold)", True),
    ):
        rows = [
            (f"{i['score']:.3f}", i["type"], i["context"]) for i in found if i["review"] == review
        ]
        sections.append((f"{title}: {len(rows)}", rows))
    print_ranked(sections, ("score", "type", "candidate in context"))
    msg.info(f"{len(text)} characters in {seconds:.1f}s")


@chiasmus_app.command("negatives")
def chiasmus_negatives_cli(
    ud_dir: Path = Arg(..., help="The UD folder of the data mirror (German GSD and LIT)"),
    output: Path = Arg(
        ..., help="The DocBin to write (e.g. corpus/chiasmus-de-random/random.spacy)"
    ),
    config: Optional[Path] = Opt(
        None, "--config", help="Training config whose suggester samples (default: de.cfg)"
    ),
    n: int = Opt(4000, "--n", help="How many random inversions"),
    seed: int = Opt(0, "--seed", help="Sampling seed"),
):
    """Sample random inversions of German running text (UD GSD and the first half of
    LIT, gold POS and lemmas) with the training config's suggester, as extra negatives
    for the German scorer (the reader's `negatives`, Schneider et al.'s 4,000)."""
    from spacy.tokens import DocBin

    from ..chiasmus.crossval import settings_from_config
    from ..chiasmus.eval_german import german_negatives

    try:
        negatives = german_negatives(ud_dir, settings_from_config(config), n, seed)
    except (ValueError, OSError) as err:
        msg.fail(str(err), exits=1)
    docbin = DocBin(store_user_data=True)
    for example in negatives:
        docbin.add(example.reference)
    output.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output)
    msg.good(f"{len(negatives)} random inversions -> {output}")


@chiasmus_app.command("evaluate")
def chiasmus_evaluate_cli(
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
    config: Optional[Path] = Opt(
        None,
        "--config",
        help="Training config whose scorer settings the protocol uses "
        "(default: configs/chiasmus/de.cfg)",
    ),
    negatives: Optional[Path] = Opt(
        None,
        "--negatives",
        help="de: the mirror's UD folder; random inversions of German running text "
        "(GSD, half of LIT) join the folds as negatives",
    ),
    n_negatives: int = Opt(4000, "--n-negatives", help="de: how many random inversions"),
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
    from ..chiasmus.crossval import SCORER_V1, feature_ablation, settings_from_config
    from ..chiasmus.eval_english import evaluate_english
    from ..chiasmus.eval_english_mb import evaluate_english_mb
    from ..chiasmus.eval_german import evaluate_german

    if language not in ("de", "en", "en-mb"):
        msg.fail(f"Unknown language '{language}': use de, en or en-mb.", exits=1)
    try:
        defaults = settings_from_config(config)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    settings = {**defaults, "model": {**defaults["model"], "feature_groups": groups.split(",")}}
    if scorer_v1:
        settings["model"]["@architectures"] = SCORER_V1
        settings["model"]["vectors"] = "auto"
    fold_seeds = [int(x) for x in seeds.split(",")] if seeds else None
    progress = None if as_json else msg.text

    def run(changed: Dict[str, Any]) -> Dict[str, Any]:
        if language == "de":
            return evaluate_german(
                data_dir, changed, n_folds, seed, progress, fold_seeds, negatives, n_negatives
            )
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
    pm = lambda x: f"{x['ap_mean']:.3f} ± {x['ap_sd']:.3f}"  # noqa: E731
    if language == "de" and negatives is not None:
        rows = [
            (name, *(pm(results[name]["with_random"][m]) for m in ("ours", "baseline", "rules")))
            for name in ("full", "fp_removed")
        ]
        header = ("+ random negatives", "AP", "D+L logreg", "rules")
        msg.table(rows, header=header, divider=True)
    if language in ("de", "en-mb"):
        names = ("full", "fp_removed") if language == "de" else ("salient_vs_non",)
        rows = [
            (name, pm(results[name]), pm(results[name]["baseline_dl_logreg"]))
            + ((pm(results[name]["rules"]),) if "rules" in results[name] else ("–",))
            for name in names
        ]
        msg.table(rows, header=("setting", "AP", "D+L logreg", "rules"), divider=True)
        return
    rows = [
        (name, f"{results[name]['ap_test']:.3f}", f"{results[name]['rules_ap_test']:.3f}")
        for name in ("all_negative", "duplicates_removed")
    ]
    msg.table(rows, header=("setting", "AP", "rules"), divider=True)


@chiasmus_app.command("calibrate")
def chiasmus_calibrate_cli(
    lang: str = Arg(..., help="de, en, la or zh"),
    data_dir: Path = Arg(
        ..., help="The data mirror (ud/, german-chiasmus/, ...)", exists=True, file_okay=False
    ),
    base: Optional[str] = Opt(
        None, "--base", "-b", help="Base pipeline (default: the language's; none: forms)"
    ),
    per_1000: float = Opt(
        1.0, "--per-1000", help="Candidates per 1,000 calibration tokens allowed at 0.5"
    ),
    output: Optional[Path] = Opt(
        None, "--output", "-o", help="Calibration file to merge into (default: the package's)"
    ),
    metrics: Optional[Path] = Opt(None, "--metrics", help="Also write the entry as JSON here"),
):  # fmt: skip
    """Calibrate the hand-weighted chiasmus rules of a language on running text (see
    spacy_rhetoric/chiasmus/calibrate.py for the parts): the bias is chosen so that the
    calibration part has at most --per-1000 candidates per 1,000 tokens at 0.5; the
    held-out part's rate and the recall of the annotated chiasmi are recorded with it."""
    import spacy
    import srsly

    from ..analysis.languages import LANGUAGE_MODELS
    from ..chiasmus.calibrate import CALIBRATED_LANGUAGES, calibrate_language
    from ..chiasmus.calibration import CALIBRATION_PATH, CalibrationError, write_calibrations
    from ._util import load_pipeline

    if lang not in CALIBRATED_LANGUAGES:
        known = list(CALIBRATED_LANGUAGES)
        msg.fail(f"chiasmus calibrate: no running text for {lang!r}; use one of {known}", exits=1)
    if per_1000 < 0:
        msg.fail(f"--per-1000 must be >= 0, got {per_1000}", exits=1)
    if base == "none":
        nlp = spacy.blank(lang)
    elif base is not None:
        nlp = load_pipeline(Path(base) if Path(base).exists() else base)
    else:
        from ..models import resolve

        found = resolve(LANGUAGE_MODELS[lang]["base"], None)
        nlp = load_pipeline(found.path) if found is not None else spacy.blank(lang)
        msg.info(f"base: {found.path if found is not None else 'none (forms only)'}")
    start = time.perf_counter()
    try:
        entry = calibrate_language(lang, data_dir, nlp, per_1000, progress=msg.info)
        write_calibrations([entry], output or CALIBRATION_PATH)
    except (FileNotFoundError, ValueError, CalibrationError) as err:
        msg.fail(str(err), exits=1)
    entry["seconds"] = round(time.perf_counter() - start, 1)
    if metrics is not None:
        metrics.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(metrics, entry)
    held = entry["held_out"]
    recall = entry.get("positives", {}).get("recall")
    msg.good(
        f"{lang}: bias {entry['bias']:.3f}; held-out {held['reported_per_1000_tokens']:.2f} "
        f"reported per 1,000 tokens ({held['reported']} of {held['candidates']} candidates)"
        + (f"; recall of the annotated chiasmi {recall:.3f}" if recall is not None else "")
    )
