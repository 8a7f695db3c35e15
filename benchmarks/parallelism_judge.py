"""Judge zero-shot parallelism reports on running text by hand, blind to the model.

``benchmarks/parallelism_famous.py --reports FILE`` keeps every parallelism a model
reports on running text (UD English-EWT test, UD German-LIT test) with its context. A rate
of reports per 1,000 tokens cannot say whether they are right; a reader can. Two steps:

1. ``sheet``: pool the reports of several models, give a report that several models
   made one item, shuffle the items (fixed seed) and write a sheet that names no model
   (``--sheet``: it quotes the texts, so it stays out of the repository) and a key
   that holds no text (``--dir``: which models made each item, where):

       python benchmarks/parallelism_judge.py sheet \\
           0.2.0=metrics/parallelism-famous-xx-reports.json \\
           s4k=metrics/parallelism-famous-xx-joint-s4k-seed0-reports.json \\
           --dir benchmarks/data/running-judged --sheet metrics/running-judged-sheet.jsonl

2. The reader labels each sheet item in ``DIR/judgements.jsonl`` (``{"id": 3, "label":
   "right"}``; labels ``right``, ``partly``, ``wrong``; the criterion is in that
   folder's README.md), reading the sheet only. ``score`` joins the labels to the key:

       python benchmarks/parallelism_judge.py score --dir benchmarks/data/running-judged \\
           --output benchmarks/results/parallelism_running_judged.json

``score --still NAME=REPORTS`` counts, for model NAME, only the judged items it still
reports in REPORTS: the same model read again with a filter that can only remove reports
(e.g. ``parallelism_famous.py --min-word-share 0.5``); a report that was never judged
fails.

Per model and language: reports, right / partly / wrong, precision (right only, and
right or partly) and right reports per 1,000 tokens.
"""

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Dict, List, Tuple

LABELS = ("right", "partly", "wrong")


def pool(results: Dict[str, dict], seed: int) -> Tuple[List[dict], Dict[str, dict]]:
    """RETURNS: the sheet (items without models, shuffled) and the key (id -> the
    report's language, doc, offsets and the models that made it; "tokens" -> tokens per
    model and language)."""
    items: Dict[Tuple, dict] = {}
    tokens: Dict[str, Dict[str, int]] = {}
    for name, result in results.items():
        for lang, running in result["languages"].items():
            tokens.setdefault(name, {})[lang] = running["tokens"]
            for report in running["reports"]:
                where = (lang, report["doc"], tuple(map(tuple, report["offsets"])))
                item = items.setdefault(where, {"report": report, "lang": lang, "models": []})
                item["models"].append(name)
    order = sorted(items)
    random.Random(seed).shuffle(order)
    sheet, key = [], {"tokens": tokens, "items": {}}
    for i, where in enumerate(order):
        item = items[where]
        report = item["report"]
        sheet.append(
            {
                "id": i,
                "lang": item["lang"],
                "context": report["context"],
                "branches": report["branches"],
            }
        )
        key["items"][str(i)] = {
            "lang": item["lang"],
            "doc": report["doc"],
            "offsets": report["offsets"],
            "models": item["models"],
        }
    return sheet, key


def reported(path: Path) -> set:
    """RETURNS: (lang, doc, offsets) of each report in a ``parallelism_famous.py
    --reports`` file."""
    data = json.loads(path.read_text(encoding="utf8"))
    return {
        (lang, report["doc"], tuple(map(tuple, report["offsets"])))
        for lang, running in data["languages"].items()
        for report in running["reports"]
    }


def restricted(key: dict, still: Dict[str, set]) -> dict:
    """The key with each named model's items cut to those it still reports (a model read
    again with a filter that only removes reports: every report it still makes must be a
    judged item).

    RAISES ValueError: a report that is not an item of the key (never judged).
    """
    items = {}
    for i, item in key["items"].items():
        where = (item["lang"], item["doc"], tuple(map(tuple, item["offsets"])))
        models = [m for m in item["models"] if m not in still or where in still[m]]
        items[i] = {**item, "models": models}
    judged = {
        (item["lang"], item["doc"], tuple(map(tuple, item["offsets"])))
        for item in key["items"].values()
    }
    for name, where in still.items():
        new = where - judged
        if new:
            raise ValueError(f"{name}: {len(new)} reports were never judged, e.g. {min(new)}")
    return {**key, "items": items}


def score(key: dict, labels: Dict[int, str]) -> Dict[str, Dict[str, dict]]:
    """RETURNS: model -> language -> counts, precisions and right reports per 1,000
    tokens. Every item of the key must be labelled, with one of LABELS."""
    missing = sorted(int(i) for i in key["items"] if int(i) not in labels)
    if missing:
        raise ValueError(f"{len(missing)} items not judged, e.g. {missing[:5]}")
    unknown = sorted({label for label in labels.values() if label not in LABELS})
    if unknown:
        raise ValueError(f"labels not in {LABELS}: {unknown}")
    out: Dict[str, Dict[str, dict]] = {}
    for name, by_lang in key["tokens"].items():
        for lang, tokens in by_lang.items():
            counts = {label: 0 for label in LABELS}
            for i, item in key["items"].items():
                if item["lang"] == lang and name in item["models"]:
                    counts[labels[int(i)]] += 1
            n = sum(counts.values())
            out.setdefault(name, {})[lang] = {
                "tokens": tokens,
                "reports": n,
                **counts,
                "precision_right": counts["right"] / n if n else None,
                "precision_right_or_partly": (counts["right"] + counts["partly"]) / n
                if n
                else None,
                "right_per_1000_tokens": 1000 * counts["right"] / max(1, tokens),
            }
    return out


def read_labels(path: Path) -> Dict[int, str]:
    labels: Dict[int, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if int(row["id"]) in labels:
                raise ValueError(f"{path}:{n}: item {row['id']} judged twice")
            labels[int(row["id"])] = row["label"]
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("sheet", help="pool and shuffle the reports, blind")
    make.add_argument("results", nargs="+", help="NAME=parallelism_famous.py --reports file")
    make.add_argument("--dir", type=Path, required=True, help="for the key")
    make.add_argument("--sheet", type=Path, required=True)
    make.add_argument("--seed", type=int, default=0)
    judge = commands.add_parser("score", help="join the judgements to the key")
    judge.add_argument("--dir", type=Path, required=True)
    judge.add_argument("--output", type=Path, required=True)
    judge.add_argument(
        "--still",
        nargs="*",
        default=[],
        help="NAME=REPORTS: count only the items model NAME still reports in this "
        "parallelism_famous.py --reports file (the same model read with a filter)",
    )
    args = parser.parse_args()
    if args.command == "sheet":
        results = {}
        for arg in args.results:
            name, _, path = arg.partition("=")
            results[name] = json.loads(Path(path).read_text(encoding="utf8"))
        sheet, key = pool(results, args.seed)
        old_key = args.dir / "key.json"
        if (args.dir / "judgements.jsonl").exists() and old_key.exists():
            if json.loads(old_key.read_text(encoding="utf8")) != key:
                sys.exit(
                    f"parallelism_judge: {args.dir} holds judgements of other reports; "
                    "write this sheet to another --dir"
                )
        for path in (args.dir, args.sheet.parent):
            path.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(item, ensure_ascii=False) for item in sheet]
        args.sheet.write_text("\n".join(lines) + "\n", encoding="utf8")
        (args.dir / "key.json").write_text(json.dumps(key, indent=1), encoding="utf8")
        print(f"{len(sheet)} items -> {args.sheet}; key -> {args.dir / 'key.json'}")
        return
    key = json.loads((args.dir / "key.json").read_text(encoding="utf8"))
    try:
        still = {}
        for arg in args.still:
            name, sep, path = arg.partition("=")
            if not sep or name not in key["tokens"]:
                raise ValueError(f"--still takes NAME=REPORTS with NAME in the key, got {arg!r}")
            still[name] = reported(Path(path))
        result = score(restricted(key, still), read_labels(args.dir / "judgements.jsonl"))
    except (ValueError, OSError, KeyError) as err:
        sys.exit(f"parallelism_judge: {err}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf8")
    for name, by_lang in result.items():
        for lang, row in by_lang.items():
            print(
                f"{name} {lang}: {row['reports']} reports, right {row['right']}, partly "
                f"{row['partly']}, wrong {row['wrong']}; {row['right_per_1000_tokens']:.2f} "
                "right per 1,000 tokens"
            )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
