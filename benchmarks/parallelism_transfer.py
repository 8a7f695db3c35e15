"""The transfer table over seeds: each monolingual head on its own test split and on the
other language's, the joint head on both, as mean ± sd (sample sd over seeds) of EPM
P/R/F1 and MWO F1, from the JSON files that parallelism_seeds.py and
``spacy project run evaluate-parallelism-transfer-scan`` wrote. Nothing is run here.

    python benchmarks/parallelism_transfer.py --la asp-me5-latinv-scan \
        --zh pse-me5-l8-scan --joint joint-me5-scan --seeds 0,1,2 \
        --output benchmarks/results/parallelism_transfer_scan.json
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List

from parallelism_seeds import metric_table


def cell(paths: List[Path]) -> Dict[str, dict]:
    """RETURNS: mean ± sd in % of every metric over the score files (one per seed)."""
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"parallelism_transfer: missing {', '.join(missing)}")
    return metric_table([json.loads(p.read_text()) for p in paths])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--la", required=True, help="the Latin seeds' run name")
    parser.add_argument("--zh", required=True, help="the Chinese seeds' run name")
    parser.add_argument("--joint", required=True, help="the joint seeds' run name")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--metrics", type=Path, default=Path("metrics"))
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    m = args.metrics
    files = {
        ("la", "asp"): [m / f"parallelism-{args.la}-seed{s}-test.json" for s in seeds],
        ("la", "pse"): [m / "transfer" / f"la-scan-seed{s}-on-pse-test.json" for s in seeds],
        ("zh", "asp"): [m / "transfer" / f"zh-scan-seed{s}-on-asp-test.json" for s in seeds],
        ("zh", "pse"): [m / f"parallelism-{args.zh}-seed{s}-test.json" for s in seeds],
        ("joint", "asp"): [m / f"parallelism-{args.joint}-seed{s}-test-asp.json" for s in seeds],
        ("joint", "pse"): [m / f"parallelism-{args.joint}-seed{s}-test-pse.json" for s in seeds],
    }
    table = {f"{model}-on-{test}": cell(paths) for (model, test), paths in files.items()}
    summary = {
        "runs": {"la": args.la, "zh": args.zh, "joint": args.joint},
        "seeds": seeds,
        "split": "test",
        "table": table,
        "joint_minus_monolingual_epm_f": {
            "asp": table["joint-on-asp"]["epm_f"]["mean"] - table["la-on-asp"]["epm_f"]["mean"],
            "pse": table["joint-on-pse"]["epm_f"]["mean"] - table["zh-on-pse"]["epm_f"]["mean"],
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(summary, indent=2))
    for name, row in table.items():
        p, r, f = (row[f"epm_{x}"] for x in "prf")
        print(
            f"{name:14} EPM P/R/F1 {p['mean']:.1f} / {r['mean']:.1f} / "
            f"{f['mean']:.1f} ± {f['sd']:.1f}  MWO F1 {row['mwo_f']['mean']:.1f}"
        )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
