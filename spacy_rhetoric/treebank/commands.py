"""Treebank commands: ``edv``, ``split`` and ``queries``."""

from pathlib import Path
from typing import List, Optional

import srsly
from wasabi import msg

from ..cli import Arg, Opt, app, emit_json

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


@app.command("edv")
def edv_cli(
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
    from .displacement import compare, load_displacements

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


@app.command("split")
def split_cli(
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
    from .io import read_docs
    from .splits import SPLIT_METHODS, split_kfold, split_sentences, write_split

    if method not in SPLIT_METHODS:
        msg.fail(f"Unknown split method {method!r}: use one of {', '.join(SPLIT_METHODS)}", exits=1)
    try:
        docs = read_docs(input_path)
        if method == "kfold":
            mapping = srsly.read_json(strata) if strata is not None else None
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


@app.command("queries")
def queries_cli(
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
    from .queries import QueryFileError, load_queries, pair_fold_files, run_query_evaluation

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
