"""Speed of the edge displacement computation on the real UD treebanks, plus the EDV
table of the mirror (train<->test, dev<->test where train is missing, the halves of test
where test is the only split), in both EDV variants.

    python benchmarks/displacement_speed.py [--data ../shared/data/ud] [--repeats 5]

Writes benchmarks/results/displacement_speed.json.
"""

import argparse
import json
import os
import platform
import re
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy

from spacy_rhetoric.assets import CHECKOUT_DATA, data_root
from spacy_rhetoric.corpora.conllu import read_conllu_docs
from spacy_rhetoric.treebank.displacement import (
    Displacements,
    compare,
    from_docs,
    parse_conllu,
    read_conllu,
)

REPO = Path(__file__).resolve().parent.parent
SPLIT = re.compile(r"-ud-(train|dev|test)\.conllu$")


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def naive_parse(text: str) -> Displacements:
    """Line-by-line pure Python reference, for comparison only."""
    sentences: List[List[int]] = []
    current: List[int] = []
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            if not line and current:
                sentences.append(current)
                current = []
            continue
        cols = line.split("\t")
        if "-" in cols[0] or "." in cols[0]:
            continue
        head = int(cols[6])
        current.append(0 if head == 0 else int(cols[0]) - head)
    if current:
        sentences.append(current)
    return Displacements.from_sentences(sentences)


def edv_table(root: Path) -> Dict[str, Dict[str, object]]:
    table = {}
    for treebank in sorted(p for p in root.iterdir() if p.is_dir()):
        files = {SPLIT.search(f.name).group(1): f for f in treebank.glob("*-ud-*.conllu")}
        test = read_conllu(files["test"])
        if "train" in files or "dev" in files:
            pair = "train-test" if "train" in files else "dev-test"
            a = read_conllu(files.get("train", files.get("dev")))
            b = test
        else:
            pair = "test[:half]-test[half:]"
            half = test.n_sentences // 2
            a, b = (
                test.select(numpy.arange(half)),
                test.select(numpy.arange(half, test.n_sentences)),
            )
        result = compare(a, b)
        table[treebank.name] = {
            "pair": pair,
            "edges": [result["a"]["edges"], result["b"]["edges"]],
            "edv_support": result["edv_support"],
            "edv_samples": result["edv_samples"],
            "binned_edv_support": result["binned_edv_support"],
            "binned_edv_samples": result["binned_edv_samples"],
            "slv_support": result["slv_support"],
            "clipped_share": [result["a"]["clipped_share"], result["b"]["clipped_share"]],
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data", type=Path, default=(data_root(required=False) or CHECKOUT_DATA) / "ud"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--output", type=Path, default=REPO / "benchmarks" / "results" / "displacement_speed.json"
    )
    args = parser.parse_args()
    files = sorted(args.data.glob("*/*.conllu"))
    raw = {f: f.read_bytes() for f in files}
    edges = {f: parse_conllu(raw[f]).n_edges for f in files}
    total_edges = sum(edges.values())

    parse_s = best_of(args.repeats, lambda: [parse_conllu(raw[f]) for f in files])
    read_s = best_of(args.repeats, lambda: [read_conllu(f) for f in files])
    texts = {f: raw[f].decode("utf8") for f in files}
    naive_s = best_of(1, lambda: [naive_parse(texts[f]) for f in files])
    # the displacement arithmetic alone, on (id, head) arrays already parsed
    parsed = Displacements.concat([parse_conllu(raw[f]) for f in files])
    ids = numpy.arange(parsed.n_tokens) - numpy.repeat(parsed.offsets[:-1], parsed.lengths) + 1
    heads = numpy.where(parsed.values == 0, 0, ids - parsed.values)
    assert numpy.array_equal(numpy.where(heads == 0, 0, ids - heads), parsed.values)
    arith_s = best_of(args.repeats, lambda: numpy.where(heads == 0, 0, ids - heads))

    ewt_test = next(f for f in files if f.name == "en_ewt-ud-test.conllu")
    docs = read_conllu_docs(ewt_test)
    docs_s = best_of(args.repeats, lambda: from_docs(docs))
    ewt_train = next(f for f in files if f.name == "en_ewt-ud-train.conllu")
    a, b = read_conllu(ewt_train), read_conllu(ewt_test)
    compare_s = best_of(args.repeats, lambda: compare(a, b))

    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "note": "best of N runs; 2 shared CPU cores, a training job was running",
        "files": len(files),
        "edges": total_edges,
        "conllu_bytes_to_displacements": {"seconds": parse_s, "edges_per_s": total_edges / parse_s},
        "conllu_file_to_displacements": {"seconds": read_s, "edges_per_s": total_edges / read_s},
        "naive_python_line_parser": {"seconds": naive_s, "edges_per_s": total_edges / naive_s},
        "displacement_arithmetic_only": {"seconds": arith_s, "edges_per_s": total_edges / arith_s},
        "docs_to_displacements_en_ewt_test": {
            "docs": len(docs),
            "seconds": docs_s,
            "edges_per_s": b.n_edges / docs_s,
        },
        "compare_en_ewt_train_test": {
            "edges": a.n_edges + b.n_edges,
            "seconds": compare_s,
            "edges_per_s": (a.n_edges + b.n_edges) / compare_s,
        },
        "edv_table": edv_table(args.data),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    for key, value in result.items():
        if isinstance(value, dict) and "edges_per_s" in value:
            print(f"{key:40s} {value['edges_per_s'] / 1e6:8.2f} M edges/s")
    print(f"{'treebank':26s} {'pair':24s} {'EDV support':>12s} {'EDV samples':>12s}")
    for name, row in result["edv_table"].items():
        print(f"{name:26s} {row['pair']:24s} {row['edv_support']:12.4f} {row['edv_samples']:12.2e}")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
