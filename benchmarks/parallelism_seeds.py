"""Train, tune and evaluate one parallelism config over several seeds and report
mean ± sd (sample sd over seeds) of every metric on the validation and test splits.

For each seed: ``spacy train CONFIG --system.seed N`` (model selection on the dev
split), ``parallelism tune`` (``outside_penalty`` on the dev split), then
``parallelism evaluate`` on the opt and test splits. Finished steps are skipped, so
an interrupted run resumes; ``--trained-as NAME`` retunes and re-evaluates the models an
earlier run trained (another grid) without training again. The seed with the best
validation (dev, tuned) EPM F1 is named as such; test scores are only recorded, never
used to choose. Speed is measured apart, by encoder_speed.py: with
$SPACY_RHETORIC_FEATURE_CACHE set, evaluation reads cached encoder states.

    python benchmarks/parallelism_seeds.py configs/parallelism/asp-me5.cfg \
        --name asp-me5 --corpus corpus/asp --seeds 0,1,2

Writes metrics/parallelism-NAME-seed{N}-{tune,opt,test}.json and
metrics/parallelism-NAME-seeds.json.

A head trained on several corpora (the joint corpus: directories of DocBins) names its
train and dev paths, the dev score that chooses checkpoint, penalty and best seed, and
the corpora whose opt and test splits it is evaluated on; their files and summary
splits are then suffixed with the corpus name (``test-asp``):

    python benchmarks/parallelism_seeds.py configs/parallelism/joint-me5.cfg \
        --name joint-me5 --corpus corpus/joint --train corpus/joint/train \
        --dev corpus/joint/dev --metric parallelism_epm_f_macro \
        --eval asp=corpus/asp,pse=corpus/pse
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

from spacy.tokens import DocBin
from spacy.vocab import Vocab

METRICS = ("epm", "mpbm", "mbawo", "mwo")
PARTS = ("p", "r", "f")


def run(command: List[str], log: Path) -> float:
    start = time.perf_counter()
    with log.open("a", encoding="utf8") as handle:
        handle.write("$ " + " ".join(command) + "\n")
        handle.flush()
        subprocess.run(command, check=True, stdout=handle, stderr=subprocess.STDOUT)
    return time.perf_counter() - start


def summarize(values: List[float]) -> Dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        "values": values,
    }


def metric_table(scores: List[dict]) -> Dict[str, Dict[str, float]]:
    """RETURNS: per metric and part (e.g. "epm_f"), mean ± sd in % over the score dicts."""
    return {
        f"{m}_{p}": summarize([100 * s[f"parallelism_{m}_{p}"] for s in scores])
        for m in METRICS
        for p in PARTS
    }


def read_scores(metrics: Dict[str, Path]) -> Dict[str, dict]:
    """RETURNS: the dev scores at the tuned penalty, the scores of every evaluated split
    and the penalty, from one model's "tune" JSON file and one file per split (e.g.
    "opt", "test", or "test-asp")."""
    tune = json.loads(metrics["tune"].read_text())
    scores = {
        split: json.loads(path.read_text()) for split, path in metrics.items() if split != "tune"
    }
    return {"dev": tune["scores"][str(tune["best"])], **scores, "outside_penalty": tune["best"]}


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """--dev, --metric and --eval, shared with parallelism_ensembles.py: where a head
    trained on several corpora is validated, chosen and evaluated."""
    parser.add_argument(
        "--dev", type=Path, default=None, help="validation data (default: CORPUS/dev.spacy)"
    )
    parser.add_argument(
        "--metric",
        default="parallelism_epm_f",
        help="the dev score that chooses outside_penalty and the best seed or group (the "
        "config's score_weights choose the checkpoint), e.g. parallelism_epm_f_macro",
    )
    parser.add_argument(
        "--eval",
        default="",
        help="NAME=DIR,... : evaluate on each DIR's opt and test splits, files and summary "
        "splits suffixed -NAME (default: CORPUS's)",
    )


def eval_splits(value: str, corpus: Path) -> Dict[str, Tuple[Path, str]]:
    """RETURNS: the evaluated splits by summary name ("test", or "test-asp" for
    "asp=DIR"), each as (corpus directory, split), from --eval's "NAME=DIR,NAME=DIR"
    (empty: --corpus's opt and test)."""
    named = {"": corpus}
    if value.strip():
        named = {}
        for item in value.split(","):
            name, sep, path = item.partition("=")
            if not sep or not name.strip() or not path.strip():
                sys.exit(f"parallelism_seeds: --eval takes NAME=DIR,NAME=DIR, not {item!r}")
            named[name.strip()] = Path(path.strip())
    return {
        f"{split}-{name}" if name else split: (path, split)
        for name, path in named.items()
        for split in ("opt", "test")
        if split == "test" or (path / f"{split}.spacy").exists()  # a corpus without opt
    }


def best_test(scores: Dict[str, dict], tests: List[str]) -> Dict[str, object]:
    """RETURNS: the test scores in % of one seed or group: one dict for a single test
    split, else one per split name."""
    if tests == ["test"]:
        return in_percent(scores["test"])
    return {split: in_percent(scores[split]) for split in tests}


def print_f1(splits: Dict[str, Dict[str, Dict[str, float]]], label: str = "") -> None:
    """Print each metric's F1 mean ± sd on the dev and test splits of a summary."""
    for split in ("dev", *(s for s in splits if s.startswith("test"))):
        row = splits[split]
        f1 = (
            f"{m.upper()} F1 {row[m + '_f']['mean']:.1f} ± {row[m + '_f']['sd']:.1f}"
            for m in METRICS
        )
        print(*([label] if label else []), split, " ".join(f1))


def in_percent(scores: dict) -> Dict[str, float]:
    """RETURNS: one score dict's metrics in %, keyed as ``metric_table``'s."""
    return {f"{m}_{p}": 100 * scores[f"parallelism_{m}_{p}"] for m in METRICS for p in PARTS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--name", required=True, help="e.g. asp-me5")
    parser.add_argument(
        "--corpus", type=Path, required=True, help="dir with train/dev/opt/test.spacy"
    )
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--grid", default="0,0.25,0.5,0.75,1")
    parser.add_argument("--training", type=Path, default=Path("training"))
    parser.add_argument("--metrics", type=Path, default=Path("metrics"))
    parser.add_argument("--gpu-id", default="-1")
    parser.add_argument(
        "--train-splits",
        default="train",
        help="splits of --corpus trained on, e.g. train,opt (joined in that order into "
        "TRAINING/parallelism-NAME-train.spacy)",
    )
    parser.add_argument(
        "--trained-as",
        default=None,
        help="take each seed's model-best from TRAINING/parallelism-TRAINED_AS-seedN (an "
        "earlier run) instead of training: retune and re-evaluate it, e.g. over a finer grid",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="the summary JSON (default: METRICS/parallelism-NAME-seeds.json)",
    )
    parser.add_argument(
        "--train", type=Path, default=None, help="training data (default: CORPUS/train.spacy)"
    )
    add_corpus_arguments(parser)
    # anything else is passed to `spacy train` as config overrides (--a.b value)
    args, args.overrides = parser.parse_known_args()
    py = [sys.executable, "-m"]
    args.metrics.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    train_path = args.train or args.corpus / "train.spacy"
    dev_path = args.dev or args.corpus / "dev.spacy"
    evaluated = eval_splits(args.eval, args.corpus)
    tests = [split for split in evaluated if split.startswith("test")]
    splits = [s.strip() for s in args.train_splits.split(",") if s.strip()]
    if splits != ["train"]:
        train_path = args.training / f"parallelism-{args.name}-train.spacy"
        if not train_path.exists():
            joined = DocBin(store_user_data=True)
            vocab = Vocab()
            for split in splits:
                for doc in DocBin().from_disk(args.corpus / f"{split}.spacy").get_docs(vocab):
                    joined.add(doc)
            train_path.parent.mkdir(parents=True, exist_ok=True)
            joined.to_disk(train_path)
    per_seed: Dict[int, Dict[str, dict]] = {}
    timings: Dict[int, Dict[str, float]] = {}
    for seed in seeds:
        out = args.training / f"parallelism-{args.name}-seed{seed}"
        out.mkdir(parents=True, exist_ok=True)
        trained = out
        if args.trained_as:
            trained = args.training / f"parallelism-{args.trained_as}-seed{seed}"
            if not (trained / "model-best").is_dir():
                sys.exit(f"parallelism_seeds: no trained model at {trained / 'model-best'}")
        log = out / "log.txt"
        metrics = {
            s: args.metrics / f"parallelism-{args.name}-seed{seed}-{s}.json"
            for s in ("tune", *evaluated)
        }
        timings[seed] = {}
        # written when `spacy train` returns (model-best and model-last are saved at
        # every evaluation, so they do not say that training ended)
        timing = trained / "train_seconds.json"
        if not timing.exists() and not args.trained_as:
            timings[seed]["train_s"] = run(
                py
                + [
                    "spacy",
                    "train",
                    str(args.config),
                    "--output",
                    str(out),
                    "--paths.train",
                    str(train_path),
                    "--paths.dev",
                    str(dev_path),
                    "--system.seed",
                    str(seed),
                    "--gpu-id",
                    args.gpu_id,
                    *args.overrides,
                ],
                log,
            )
            timing.write_text(json.dumps(timings[seed]["train_s"]))
        if timing.exists():
            timings[seed]["train_s"] = json.loads(timing.read_text())
        if not metrics["tune"].exists():
            run(
                py
                + [
                    "spacy_rhetoric",
                    "parallelism",
                    "tune",
                    str(trained / "model-best"),
                    str(dev_path),
                    str(out / "model-tuned"),
                    "--grid",
                    args.grid,
                    "--metric",
                    args.metric,
                    "--output",
                    str(metrics["tune"]),
                    "--gpu-id",
                    args.gpu_id,
                ],
                log,
            )
        for split, (corpus, part) in evaluated.items():
            if not metrics[split].exists():
                run(
                    py
                    + [
                        "spacy_rhetoric",
                        "parallelism",
                        "evaluate",
                        str(corpus / f"{part}.spacy"),
                        "--model",
                        str(out / "model-tuned"),
                        "--output",
                        str(metrics[split]),
                        "--gpu-id",
                        args.gpu_id,
                    ],
                    log,
                )
        per_seed[seed] = read_scores(metrics)
    summary: Dict[str, object] = {
        "config": str(args.config),
        "seeds": seeds,
        "grid": [float(g) for g in args.grid.split(",")],
        "trained_as": args.trained_as or args.name,
        "metric": args.metric,
        "splits": {},
    }
    for split in ("dev", *evaluated):
        summary["splits"][split] = metric_table([per_seed[s][split] for s in seeds])
    summary["dev_metric"] = summarize([100 * per_seed[s]["dev"][args.metric] for s in seeds])
    best = max(seeds, key=lambda s: per_seed[s]["dev"][args.metric])
    summary["best_seed_on_validation"] = best
    summary["best_seed_test"] = best_test(per_seed[best], tests)
    summary["outside_penalty"] = {s: per_seed[s]["outside_penalty"] for s in seeds}
    summary["tokens_per_second_test"] = {
        s: per_seed[s][tests[0]].get("tokens_per_second") for s in seeds
    }
    summary["train_seconds"] = {s: t.get("train_s") for s, t in timings.items()}
    path = args.output or args.metrics / f"parallelism-{args.name}-seeds.json"
    path.write_text(json.dumps(summary, indent=2))
    print_f1(summary["splits"])
    print(f"best seed on validation: {best}; wrote {path}")


if __name__ == "__main__":
    main()
