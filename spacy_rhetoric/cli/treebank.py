"""``python -m spacy_rhetoric treebank edv|split|queries|base-corpus|evaluate|study|plots``:
edge displacement between corpora, EDV-guided splits, query-based parser evaluation, the
base pipelines' corpora and scores, and the EDV study."""

from pathlib import Path
from typing import List, Optional

from wasabi import msg

from ._util import Arg, Opt, emit_json, load_pipeline, noun_app, read_json_file

treebank_app = noun_app(
    "treebank",
    "Treebanks: edge displacement, EDV-guided splits, query-based parser evaluation.",
)

SPLIT_HELP = "edv-min, edv-max, random or kfold"


def _proportions(text: str) -> List[float]:
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or any(v < 0 for v in values) or sum(values) <= 0:
        msg.fail(f"--proportions needs three non-negative numbers like 0.6,0.2,0.2, got {text!r}")
        raise SystemExit(1)
    return values


@treebank_app.command("edv")
def treebank_edv_cli(
    a: Path = Arg(..., help="First corpus: a .conllu or .spacy file or a directory", exists=True),
    b: Path = Arg(..., help="Second corpus: a .conllu or .spacy file or a directory", exists=True),
    max_displacement: int = Opt(30, "--max-displacement", help="Histogram range [-M, M]"),
    min_length: int = Opt(3, "--min-length", help="Shortest sentence length for binned EDV"),
    max_length: int = Opt(30, "--max-length", help="Longest sentence length for binned EDV"),
    overflow: str = Opt("clip", "--overflow", help="Longer edges: clip (to the end bins) or drop"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Edge displacement Vaserstein distance (EDV) between two treebanks.

    Reports EDV in both variants ("support": Wasserstein-1 between the displacement
    distributions; "samples": between the histogram values as samples, the magnitudes of
    Anderson & Gómez-Rodríguez 2022), sentence-length-binned EDV, the sentence length
    Vaserstein distance (SLV), MEDs and the share of edges beyond the histogram range."""
    from ..treebank.displacement import compare, load_displacements

    try:
        data_a, data_b = load_displacements(a), load_displacements(b)
        result = compare(data_a, data_b, max_displacement, (min_length, max_length), overflow)
    except (ValueError, FileNotFoundError) as err:
        msg.fail(str(err), exits=1)
    result = {"a_path": str(a), "b_path": str(b), **result}
    if emit_json(result, output, as_json):
        return
    rows = []
    for side in ("a", "b"):
        for key, value in result[side].items():
            rows.append((f"{side}: {key}", _fmt(value)))
    for key, value in result.items():
        if key.startswith(("edv_", "binned_edv_", "slv_")):
            rows.append((key, _fmt(value)))
    msg.table(rows, header=("statistic", "value"), divider=True)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


@treebank_app.command("split")
def treebank_split_cli(
    method: str = Arg(..., help=SPLIT_HELP),
    input_path: Path = Arg(..., help="A .conllu or .spacy file or a directory", exists=True),
    output_dir: Path = Arg(..., help="Directory for the DocBins and manifest.json"),
    seed: int = Opt(0, "--seed", help="Random seed"),
    proportions: str = Opt("0.6,0.2,0.2", "--proportions", help="train,dev,test shares"),
    refine: int = Opt(5000, "--refine", help="edv-*: local search proposals (0: none)"),
    reverse: bool = Opt(False, "--reverse", help="edv-max: high-MED sentences into train"),
    k: int = Opt(5, "--k", help="kfold: number of folds"),
    group_key: str = Opt("doc_id", "--group-key", help="kfold: user_data key of the document"),
    stratum_key: Optional[str] = Opt(None, "--stratum-key", help="kfold: user_data stratum key"),
    strata: Optional[Path] = Opt(
        None, "--strata", help="kfold: JSON file mapping document ids to strata", exists=True
    ),
    dev: bool = Opt(True, "--dev/--no-dev", help="kfold: also write a dev fold per run"),
    max_displacement: int = Opt(30, "--max-displacement", help="Histogram range for EDV"),
):
    """Split a treebank into train/dev/test DocBins plus manifest.json.

    edv-min / edv-max: sentence-level splits with the smallest / largest train-test EDV
    at balanced sentence lengths; random: a seeded random sentence-level split; kfold:
    k folds of whole documents with a stratum (e.g. period) balanced across them."""
    from ..treebank.io import read_docs
    from ..treebank.splits import SPLIT_METHODS, split_kfold, split_sentences, write_split

    if method not in SPLIT_METHODS:
        msg.fail(f"Unknown split method {method!r}: use one of {', '.join(SPLIT_METHODS)}", exits=1)
    try:
        docs = read_docs(input_path)
        if method == "kfold":
            mapping = read_json_file(strata) if strata is not None else None
            split = split_kfold(
                docs,
                k=k,
                seed=seed,
                group_key=group_key or None,
                stratum_key=stratum_key,
                strata=mapping,
                dev=dev,
                max_displacement=max_displacement,
            )
        else:
            split = split_sentences(
                docs,
                method,
                _proportions(proportions),
                seed=seed,
                n_refine=refine,
                reverse=reverse,
                max_displacement=max_displacement,
            )
    except (ValueError, FileNotFoundError) as err:
        msg.fail(str(err), exits=1)
    paths = write_split(split, output_dir)
    for name, path in paths.items():
        if name != "manifest":
            msg.good(f"{name}: {len(split.parts[name])} docs -> {path}")
    for pair, values in split.manifest.get("edv", {}).items():
        msg.info(f"EDV {pair}: support {values['support']:.4g}, samples {values['samples']:.3g}")
    msg.info(f"Manifest: {paths['manifest']}")


@treebank_app.command("queries")
def treebank_queries_cli(
    queries: str = Arg(..., help="Query file (.yml/.json) or a bundled name (en_diagnostics)"),
    gold: Path = Arg(..., help="Gold .conllu/.spacy file, or a directory of folds", exists=True),
    pred: Path = Arg(..., help="Predicted file, or a directory mirroring GOLD", exists=True),
    level: str = Opt("anchor", "--level", help="Instances per anchor token or per sentence"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    instances: bool = Opt(False, "--instances", help="JSON: list every miss and false alarm"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Query-based parser evaluation: gold hits, matches, misses, false alarms and P/R/F1
    of each query; with directories, one pair per fold and mean ± sd across folds."""
    from ..treebank.queries import (
        QueryFileError,
        load_queries,
        pair_fold_files,
        run_query_evaluation,
    )

    try:
        loaded = load_queries(queries)
        pairs = pair_fold_files(gold, pred)
        folds, summary = run_query_evaluation(loaded, pairs, level)
    except (QueryFileError, ValueError, FileNotFoundError) as err:
        msg.fail(str(err), exits=1)
    result = {
        "queries": str(queries),
        "level": level,
        "folds": [
            {
                "gold": str(g),
                "pred": str(p),
                "results": {name: r.to_dict(instances) for name, r in fold.items()},
            }
            for (g, p), fold in zip(pairs, folds)
        ],
        "summary": summary,
    }
    if emit_json(result, output, as_json):
        return
    rows = []
    for name, entry in summary.items():
        scores = [_mean_sd(entry[key]) for key in ("precision", "recall", "f1")]
        counts = [entry[key] for key in ("gold_hits", "matches", "misses", "false_alarms")]
        rows.append((name, *counts, *scores))
    header = ("query", "gold", "matches", "misses", "false alarms", "P", "R", "F1")
    msg.table(rows, header=header, divider=True)
    msg.info(f"{len(folds)} fold(s), level: {level}")


def _mean_sd(score) -> str:
    if score["mean"] is None:
        return "-"
    if score["sd"] is None:
        return f"{score['mean']:.3f}"
    return f"{score['mean']:.3f} ± {score['sd']:.3f}"


# --- base pipelines and the EDV study ------------------------------------------------------


@treebank_app.command("base-corpus")
def treebank_base_corpus_cli(
    lang: str = Arg(..., help="la, la-udante, de, en or zh"),
    ud_dir: Path = Arg(..., help="Directory with the UD_* treebank folders", exists=True),
    output_dir: Path = Arg(..., help="Where to write train/dev/test DocBins"),
    n_sents: int = Opt(10, "--n-sents", help="Sentences per training doc"),
):
    """Build the corpus of a base pipeline (see spacy_rhetoric/treebank/pipelines.py):
    pooled train.spacy, dev.spacy and test/<treebank>.spacy plus manifest.json."""
    from ..corpora.util import CorpusFormatError
    from ..treebank.pipelines import build_base_corpus

    try:
        manifest = build_base_corpus(lang, ud_dir, output_dir, n_sents=n_sents)
    except (CorpusFormatError, ValueError, FileNotFoundError) as err:
        msg.fail(str(err), exits=1)
    for part in ("train", "dev"):
        n = sum(r["sentences"] for r in manifest[part])
        tokens = sum(r["tokens"] for r in manifest[part])
        msg.good(f"{part}: {n} sentences, {tokens} tokens")
    for name, record in manifest["test"].items():
        msg.good(f"test {name}: {record['sentences']} sentences, {record['tokens']} tokens")


@treebank_app.command("evaluate")
def treebank_evaluate_cli(
    model: Path = Arg(..., help="The trained pipeline", exists=True),
    tests: List[Path] = Arg(..., help="Test .spacy/.conllu files (or directories)", exists=True),
    train: Optional[Path] = Opt(None, "--train", help="Training corpus, for EDV(train, test)"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Score a tagger/morphologizer/lemmatizer/parser pipeline on each test set (and on
    all of them pooled): UPOS, XPOS, morphology, lemma accuracy, UAS, LAS on gold tokens
    and on the pipeline's own tokenization, plus EDV(train, test) if --train is given."""

    from ..treebank.displacement import corpus_files
    from ..treebank.pipelines import evaluate_pipeline

    try:
        files = [f for path in tests for f in corpus_files(path)]
    except (ValueError, OSError) as err:  # no corpus files there, or the wrong kind
        msg.fail(str(err), exits=1)
    names = [f.stem for f in files]
    if len(set(names)) != len(names):
        msg.fail(f"evaluate-base: test files need distinct names, got {names}", exits=1)
    nlp = load_pipeline(model)
    result = {
        "model": str(model),
        "pipeline": nlp.pipe_names,
        "train": str(train) if train else None,
        "tests": evaluate_pipeline(nlp, list(zip(names, files)), train),
    }
    if emit_json(result, output, as_json):
        return
    rows = []
    for name, entry in result["tests"].items():
        for mode in ("gold_tokens", "raw_text"):
            scores = entry[mode]
            values = [scores[k] for k in ("pos_acc", "tag_acc", "lemma_acc", "dep_uas", "dep_las")]
            rows.append((name, mode, *[_pct(v) for v in values]))
    header = ("test", "tokenization", "UPOS", "XPOS", "lemma", "UAS", "LAS")
    msg.table(rows, header=header, divider=True)


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


@treebank_app.command("study")
def treebank_study_cli(
    ud_dir: Path = Arg(..., help="Directory with the UD_* treebank folders", exists=True),
    work_dir: Path = Arg(..., help="Where the splits and models go (<treebank>/<method>/)"),
    output: Path = Opt(Path("metrics/edv-study.json"), "--output", "-o", help="Result JSON"),
    plots: Optional[Path] = Opt(None, "--plots", help="Directory for the PNG plots"),
    treebanks: str = Opt("", "--treebanks", help="Comma-separated names (default: all)"),
    config: Path = Opt(
        Path("configs/treebank/study_parser.cfg"), "--config", help="Tagger+parser config"
    ),
    max_sentences: int = Opt(1500, "--max-sentences", help="Subsample larger treebanks (0: no)"),
    max_steps: int = Opt(0, "--max-steps", help="Override training.max_steps (0: the config's)"),
    seed: int = Opt(0, "--seed", help="Random seed (subsampling, splits)"),
    refine: int = Opt(5000, "--refine", help="Local search proposals of the EDV splits"),
):
    """The EDV study: min- and max-EDV 60/20/20 splits of every treebank, a small
    tagger+parser trained and scored on each, ΔLAS, ΔEDV, Spearman and plots."""
    from ..treebank.study import STUDY_TREEBANKS, StudySettings, plot_study, run_study

    names = [n.strip() for n in treebanks.split(",") if n.strip()] or list(STUDY_TREEBANKS)
    unknown = [n for n in names if n not in STUDY_TREEBANKS]
    if unknown:
        msg.fail(f"Unknown treebanks {unknown}: use some of {', '.join(STUDY_TREEBANKS)}", exits=1)
    files = {n: [ud_dir / f for f in STUDY_TREEBANKS[n]] for n in names}
    missing = [str(f) for fs in files.values() for f in fs if not f.exists()]
    if missing:
        msg.fail(f"Missing treebank files: {', '.join(missing)} (run the assets step)", exits=1)
    settings = StudySettings(
        config=str(config),
        max_sentences=max_sentences or None,
        seed=seed,
        n_refine=refine,
        overrides={"training.max_steps": max_steps} if max_steps else None,
    )
    result = run_study(files, work_dir, settings, output=output, log=msg.info)
    if plots is not None:
        for path in plot_study(result, work_dir, plots):
            msg.good(f"Plot: {path}")
    summary = result["summary"]
    rows = []
    for name, record in result["treebanks"].items():
        mn, mx = record["splits"]["edv-min"], record["splits"]["edv-max"]
        rows.append(
            (
                name,
                record["sentences_used"],
                f"{mn['edv_train_test']['support']:.3f}",
                f"{mx['edv_train_test']['support']:.3f}",
                _pct(mn["dep_las"]),
                _pct(mx["dep_las"]),
                _pct(record["delta_las"]),
            )
        )
    header = ("treebank", "sents", "EDV min", "EDV max", "LAS min", "LAS max", "ΔLAS")
    msg.table(rows, header=header, divider=True)
    rho = summary["spearman_las_edv"]["support"]
    msg.info(f"Spearman LAS vs EDV over {rho['n']} splits: rho {rho['rho']}, p {rho['p']}")
    msg.good(f"Wrote {output}")


@treebank_app.command("plots")
def treebank_plots_cli(
    result: Path = Arg(..., help="The JSON of treebank study", exists=True),
    work_dir: Path = Arg(..., help="The study's work directory (splits)", exists=True),
    plots: Path = Arg(..., help="Directory for the PNG plots"),
):
    """Draw the plots of a (possibly partial) `treebank study` result again."""
    from ..treebank.study import plot_study, summarize

    data = read_json_file(result)
    if not isinstance(data, dict) or not data.get("treebanks"):
        msg.fail(f"{result}: no treebank results to plot", exits=1)
    data["summary"] = summarize(data["treebanks"])
    for path in plot_study(data, work_dir, plots):
        msg.good(f"Plot: {path}")
