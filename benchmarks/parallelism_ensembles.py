"""Ensembles of parallelism taggers trained over several seeds: for each group of seeds,
``parallelism ensemble`` joins the seeds' tuned pipelines (trained and tuned on the dev
split by parallelism_seeds.py); the ensemble decodes at the mean of the members'
``outside_penalty`` (``--grid members``, the default: nothing new is chosen) or at the
value of ``--grid`` best on the dev split; ``parallelism evaluate`` scores it on the opt
and test splits. Reports mean ±
sd (sample sd over the groups) next to the single seeds' mean ± sd; the group best on
validation is named as such; test scores are only recorded, never used to choose.

    python benchmarks/parallelism_ensembles.py --trained-as asp-me5-latinv \
        --corpus corpus/asp --groups "0,1,2;3,4,5;6,7,8"

Writes metrics/parallelism-TRAINED_AS-ens{G}SUFFIX-{tune,opt,test}.json and
metrics/parallelism-TRAINED_AS-ensemblesSUFFIX.json; the pipelines go to
training/parallelism-TRAINED_AS-ens{G}SUFFIX/model-{best,tuned}. Seeds of a head trained on
several corpora take the same --dev, --metric and --eval as parallelism_seeds.py:

    python benchmarks/parallelism_ensembles.py --trained-as joint-me5 \
        --corpus corpus/joint --dev corpus/joint/dev --metric parallelism_epm_f_macro \
        --eval asp=corpus/asp,pse=corpus/pse
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Dict

from parallelism_seeds import (
    add_corpus_arguments,
    best_test,
    eval_splits,
    metric_table,
    print_f1,
    read_scores,
    run,
    summarize,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trained-as", required=True, help="the seeds' run name, e.g. asp-me5")
    parser.add_argument("--corpus", type=Path, required=True, help="dir with dev/opt/test.spacy")
    parser.add_argument("--groups", default="0,1,2", help="seed groups: '0,1,2;3,4,5'")
    parser.add_argument(
        "--grid",
        default="members",
        help="outside_penalty values tried on dev, or 'members': their mean penalty",
    )
    parser.add_argument("--suffix", default="", help="added to the ensembles' names")
    parser.add_argument("--training", type=Path, default=Path("training"))
    parser.add_argument("--metrics", type=Path, default=Path("metrics"))
    add_corpus_arguments(parser)
    args = parser.parse_args()
    dev_path = args.dev or args.corpus / "dev.spacy"
    evaluated = eval_splits(args.eval, args.corpus)
    tests = [split for split in evaluated if split.startswith("test")]
    groups = [[int(s) for s in g.split(",") if s.strip()] for g in args.groups.split(";")]
    py = [sys.executable, "-m", "spacy_rhetoric", "parallelism"]
    name = args.trained_as
    per_group: Dict[int, Dict[str, dict]] = {}
    for g, seeds in enumerate(groups):
        members = [args.training / f"parallelism-{name}-seed{s}" / "model-tuned" for s in seeds]
        for member in members:
            if not member.is_dir():
                sys.exit(f"parallelism_ensembles: no trained model at {member}")
        out = args.training / f"parallelism-{name}-ens{g}{args.suffix}"
        out.mkdir(parents=True, exist_ok=True)
        log = out / "log.txt"
        metrics = {
            s: args.metrics / f"parallelism-{name}-ens{g}{args.suffix}-{s}.json"
            for s in ("tune", *evaluated)
        }
        if not (out / "model-best").is_dir():
            run(py + ["ensemble", str(out / "model-best"), *map(str, members)], log)
        grid = args.grid
        if grid == "members":
            config = json.loads((out / "model-best" / "parallelism_tagger" / "cfg").read_text())
            grid = str(config["outside_penalty"])
        if not metrics["tune"].exists():
            run(
                py
                + ["tune", str(out / "model-best"), str(dev_path)]
                + [str(out / "model-tuned"), "--grid", grid, "--metric", args.metric]
                + ["--output", str(metrics["tune"])],
                log,
            )
        for split, (corpus, part) in evaluated.items():
            if not metrics[split].exists():
                run(
                    py
                    + ["evaluate", str(corpus / f"{part}.spacy")]
                    + ["--model", str(out / "model-tuned"), "--output", str(metrics[split])],
                    log,
                )
        per_group[g] = read_scores(metrics)
    # the member seeds alone, as parallelism_seeds.py tuned and evaluated them
    singles: Dict[int, Dict[str, dict]] = {}
    for seed in sorted({s for seeds in groups for s in seeds}):
        tune = json.loads((args.metrics / f"parallelism-{name}-seed{seed}-tune.json").read_text())
        singles[seed] = {"dev": tune["scores"][str(tune["best"])]}
        for split in tests:
            path = args.metrics / f"parallelism-{name}-seed{seed}-{split}.json"
            singles[seed][split] = json.loads(path.read_text())
    summary: Dict[str, object] = {
        "trained_as": name,
        "groups": groups,
        "grid": args.grid,
        "metric": args.metric,
        "ensembles": {},
        "single_seeds": {},
    }
    for split in ("dev", *evaluated):
        summary["ensembles"][split] = metric_table([per_group[g][split] for g in per_group])
    for split in ("dev", *tests):
        summary["single_seeds"][split] = metric_table([singles[s][split] for s in singles])
    summary["dev_metric"] = {
        "ensembles": summarize([100 * per_group[g]["dev"][args.metric] for g in per_group]),
        "single_seeds": summarize([100 * singles[s]["dev"][args.metric] for s in singles]),
    }
    best = max(per_group, key=lambda g: per_group[g]["dev"][args.metric])
    summary["best_group_on_validation"] = best
    summary["best_group_test"] = best_test(per_group[best], tests)
    summary["outside_penalty"] = {g: per_group[g]["outside_penalty"] for g in per_group}
    summary["tokens_per_second_test"] = {
        g: per_group[g][tests[0]].get("tokens_per_second") for g in per_group
    }
    path = args.metrics / f"parallelism-{name}-ensembles{args.suffix}.json"
    path.write_text(json.dumps(summary, indent=2))
    print_f1(summary["ensembles"], "ensembles")
    print_f1(summary["single_seeds"], "single")
    print(f"best group on validation: {best} {groups[best]}; wrote {path}")


if __name__ == "__main__":
    main()
