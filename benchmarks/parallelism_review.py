"""How sure is each shipped parallelism package of what it reports, and what does a
review list add? Per package: the review decode's penalty and lowest score are chosen,
and the score maps fitted, on the package's dev splits only (ASP dev for the Latin
package, PSE-I dev for the Chinese one, both for the multilingual one); every split then
gets the reports' EPM P/R/F1, the EPM recall of reports + review list, the review list's
size (per 1,000 tokens and relative to the reports) and the reliability tables and
expected calibration error (10 bins) of the calibrated branch and parallelism scores.
Test splits are scored with what dev chose, never used to choose.

    python benchmarks/parallelism_review.py \\
        la=la_rhetoric_parallelism:corpus/asp/dev.spacy:corpus/asp/test.spacy \\
        zh=zh_rhetoric_parallelism:corpus/pse/dev.spacy:corpus/pse/test.spacy \\
        xx=xx_rhetoric_parallelism:corpus/asp/dev.spacy,corpus/pse/dev.spacy:\\
corpus/asp/test.spacy,corpus/pse/test.spacy \\
        --output benchmarks/results/parallelism_review.json [--dev-only]

MODEL is a pipeline directory or an installed package.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import spacy

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.corpora.stats import read_docbins
from spacy_rhetoric.parallelism.calibrate import (
    MIN_SCORE_GRID,
    PENALTY_GRID,
    choose_review,
    collect,
    outcomes,
    reliability_of,
    review_outcome,
    tagger_of,
)


def parse(spec: str) -> Tuple[str, str, List[str], List[str]]:
    """``NAME=MODEL:DEV[,DEV]:TEST[,TEST]`` -> (name, model, dev paths, test paths).

    RAISES ValueError: an argument not of that form.
    """
    name, sep, rest = spec.partition("=")
    parts = rest.split(":")
    if not (sep and name and len(parts) == 3 and all(parts)):
        raise ValueError(f"expected NAME=MODEL:DEV[,DEV]:TEST[,TEST], got {spec!r}")
    return name, parts[0], parts[1].split(","), parts[2].split(",")


def merged(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Collected data of several splits as one."""
    result: Dict[str, Any] = {"docs": [], "reports": [], "review": {}}
    for part in parts:
        result["docs"] += part["docs"]
        result["reports"] += part["reports"]
        for penalty, rows in part["review"].items():
            result["review"].setdefault(penalty, []).extend(rows)
    return result


def split_name(path: str) -> str:
    """RETURNS (str): e.g. "asp/dev" for ../corpus/asp/dev.spacy."""
    p = Path(path)
    return f"{p.parent.name}/{p.stem}"


def summary(collected: Dict[str, Any], chosen: Dict[str, Any], per_1000) -> Dict:
    penalty, min_score, maps = chosen["review_penalty"], chosen["review_min_score"], chosen["maps"]
    outcome = review_outcome(collected, penalty, maps, min_score, per_1000)
    table = reliability_of(outcomes(collected, penalty, maps, min_score, per_1000))
    return {
        "epm": collected.get("scores"),
        "reports": outcome["reports"],
        "review": outcome["review"],
        "gold": outcome["gold"],
        "report_recall": round(100 * outcome["report_recall"], 2),
        "recall_with_review": round(100 * outcome["recall"], 2),
        "review_per_1000_tokens": round(outcome["review_per_1000"], 2),
        "review_to_reports": round(outcome["review_ratio"], 2),
        "ece": {name: table[name]["ece"] for name in table},
        "reliability": table,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=MODEL:DEV[,DEV]:TEST[,TEST]")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--dev-only", action="store_true", help="choose on dev, score no test")
    args = parser.parse_args()
    results: Dict[str, Any] = {
        "rule": (
            "per package, on its dev splits pooled: Platt maps fitted on the reported "
            "branches, the reported parallelisms and each review source's candidates; the "
            f"review penalty (of {list(PENALTY_GRID)}) and lowest calibrated score (of "
            f"{list(MIN_SCORE_GRID)}) with the highest EPM recall of reports + review list "
            "whose review list is at most 3x the reports (ties: the shorter list)"
        ),
        "packages": {},
    }
    for name, model, devs, tests in map(parse, args.runs):
        start = time.perf_counter()
        nlp = spacy.load(model)
        tagger = tagger_of(nlp)
        per_1000 = tagger.review_per_1000
        dev_data = {path: collect(nlp, list(read_docbins([path], nlp.vocab))) for path in devs}
        pooled = merged(list(dev_data.values()))
        chosen = choose_review(pooled, per_1000)
        row: Dict[str, Any] = {
            "model": model,
            "version": nlp.meta.get("version"),
            "review_per_1000": per_1000,
            "chosen": {k: v for k, v in chosen.items() if k not in ("grid", "maps")},
            "grid": chosen["grid"],
            "maps": chosen["maps"],
            "splits": {},
        }
        for path, data in dev_data.items():
            row["splits"][split_name(path)] = summary(data, chosen, per_1000)
            print(name, split_name(path), row["splits"][split_name(path)]["epm"], flush=True)
        if not args.dev_only:
            for path in tests:
                gold = list(read_docbins([path], nlp.vocab))
                data = collect(nlp, gold, [chosen["review_penalty"]])
                row["splits"][split_name(path)] = summary(data, chosen, per_1000)
                print(name, split_name(path), row["splits"][split_name(path)]["epm"], flush=True)
        row["seconds"] = round(time.perf_counter() - start, 1)
        for split, found in row["splits"].items():
            print(
                f"{name} {split}: EPM {found['epm']}, recall +review "
                f"{found['recall_with_review']}, review/1000 {found['review_per_1000_tokens']}, "
                f"x reports {found['review_to_reports']}, ECE {found['ece']}",
                flush=True,
            )
        results["packages"][name] = row
        args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
