"""The joint head against the monolingual ones on their own test splits, over more seeds:
EPM P/R/F1 and MWO F1 as mean ± sd (sample sd over seeds), the gap of the means and its
95 % Welch interval. Nothing is run here.

The earlier seeds' test scores come from a transfer table that parallelism_transfer.py
wrote (``--earlier``, its per-seed ``values``; the seeds it names); the further seeds'
from the score files parallelism_seeds.py wrote for them (``--la-seeds``,
``--joint-seeds``), runs named as in parallelism_transfer.py. A head without further
seeds keeps its earlier ones.

    python benchmarks/parallelism_gap.py \\
        --earlier benchmarks/results/parallelism_transfer_scan.json \\
        --la asp-me5-latinv-scan --joint joint-me5-scan --la-seeds 3,4,5 \\
        --output benchmarks/results/parallelism_gap.json

With ``--joint-recipe NAME`` the joint head's cells hold only the seeds of that other
recipe (``--joint-seeds``, score files of run NAME), measured against the monolingual
heads' earlier and further seeds: a changed joint recipe against the same baseline.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Dict, List

from scipy.stats import ttest_ind

KEYS = ("epm_p", "epm_r", "epm_f", "mwo_f")


def summary(values: List[float]) -> Dict[str, object]:
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        "n": len(values),
        "values": values,
    }


def welch(a: List[float], b: List[float], level: float = 0.95) -> Dict[str, float]:
    """The difference of means (a - b) and its Welch t interval."""
    test = ttest_ind(a, b, equal_var=False)
    interval = test.confidence_interval(level)
    diff = statistics.fmean(a) - statistics.fmean(b)
    return {"diff": diff, "low": interval.low, "high": interval.high, "df": float(test.df)}


def further(paths: List[Path]) -> Dict[str, List[float]]:
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"parallelism_gap: missing {', '.join(missing)}")
    scores = [json.loads(p.read_text()) for p in paths]
    return {key: [100 * s[f"parallelism_{key}"] for s in scores] for key in KEYS}


def seed_list(text: str) -> List[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--earlier", type=Path, required=True, help="parallelism_transfer.py JSON")
    parser.add_argument("--la", required=True, help="the Latin seeds' run name")
    parser.add_argument("--joint", required=True, help="the joint seeds' run name")
    parser.add_argument("--la-seeds", default="", help="the Latin head's further seeds")
    parser.add_argument("--joint-seeds", default="", help="the joint head's further seeds")
    parser.add_argument(
        "--joint-recipe",
        default=None,
        help="another joint run: its --joint-seeds replace the earlier joint seeds",
    )
    parser.add_argument("--metrics", type=Path, default=Path("metrics"))
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    earlier = json.loads(args.earlier.read_text())
    if earlier["runs"]["la"] != args.la or earlier["runs"]["joint"] != args.joint:
        sys.exit(f"parallelism_gap: {args.earlier} holds runs {earlier['runs']}, not these")
    la_seeds, joint_seeds = seed_list(args.la_seeds), seed_list(args.joint_seeds)
    if args.joint_recipe and not joint_seeds:
        sys.exit("parallelism_gap: --joint-recipe needs --joint-seeds")
    # a changed joint recipe's seeds are its own; the same recipe's must be new ones
    further_seeds = la_seeds + ([] if args.joint_recipe else joint_seeds)
    clash = sorted(set(further_seeds) & set(earlier["seeds"]))
    if clash:
        sys.exit(f"parallelism_gap: seeds {clash} are already in {args.earlier}")
    m = args.metrics
    new = {}
    if la_seeds:
        new["la-on-asp"] = (
            la_seeds,
            further([m / f"parallelism-{args.la}-seed{s}-test.json" for s in la_seeds]),
        )
    joint_run = args.joint_recipe or args.joint
    if joint_seeds:
        for corpus in ("asp", "pse"):
            paths = [m / f"parallelism-{joint_run}-seed{s}-test-{corpus}.json" for s in joint_seeds]
            new[f"joint-on-{corpus}"] = (joint_seeds, further(paths))
    table = {}
    for cell, old in earlier["table"].items():
        seeds, added = new.get(cell, ([], {}))
        replaced = bool(args.joint_recipe) and cell.startswith("joint-")
        kept = [] if replaced else earlier["seeds"]
        table[cell] = {
            key: summary(([] if replaced else old[key]["values"]) + added.get(key, []))
            for key in KEYS
            if key in old
        }
        table[cell]["seeds"] = kept + seeds
    gaps = {
        "asp": welch(
            table["joint-on-asp"]["epm_f"]["values"], table["la-on-asp"]["epm_f"]["values"]
        ),
        "pse": welch(
            table["joint-on-pse"]["epm_f"]["values"], table["zh-on-pse"]["epm_f"]["values"]
        ),
    }
    result = {
        "runs": {**earlier["runs"], "joint": joint_run},
        "earlier": str(args.earlier),
        "earlier_seeds": earlier["seeds"],
        "further_seeds": {"la": la_seeds, "joint": joint_seeds},
        "split": "test",
        "table": table,
        "joint_minus_monolingual_epm_f": gaps,
        "further_seeds_alone_epm_f": {
            cell: summary(added["epm_f"]) for cell, (_, added) in new.items()
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2))
    for name, row in table.items():
        f = row["epm_f"]
        print(f"{name:14} seeds {row['seeds']}: EPM F1 {f['mean']:.1f} ± {f['sd']:.1f}")
    for name, gap in gaps.items():
        print(f"gap {name}: {gap['diff']:+.1f} (95 % {gap['low']:+.1f} .. {gap['high']:+.1f})")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
