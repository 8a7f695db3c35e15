"""What the shipped Latin intertext indexes (``la_rhetoric_intertext``: Virgil, with the
reranker trained on the Loci Similes links to Virgil; since 0.2.0 also the Vulgate, with
its own reranker) cost and find in `analyze`.

1. Extra time: `python -m spacy_rhetoric analyze SAMPLE --lang la` with the shipped index
   (the default) and with ``--no-index``, each run as a fresh process (model loading
   included, as a user meets it), alternating, ``--repeats`` times; the median wall time
   of each and their difference. Sample: the bundled ``la_augustine_civitas.txt``
   (Augustine, De civitate Dei 1 praef. and 1.3, 253 tokens, quoting Aen. 6.853 and
   1.67-68); optionally other files (``--text``).
2. Loading: ``spacy.load("la_rhetoric_intertext")`` and its first doc (the encoder loads
   then), in this process.
3. The links `analyze` reports on the sample (source citation, reranker probability).

Accuracy against Loci Similes is measured elsewhere (grouped CV of this reranker against
this index: ``evaluate-intertext-paper``/``benchmark-intertext-false-links``); the shipped
reranker saw every Loci Similes link, so no accuracy is claimed here.

    python benchmarks/intertext_shipped.py --output benchmarks/results/intertext_shipped.json
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SAMPLES = Path(__file__).parents[1] / "spacy_rhetoric" / "data" / "samples"
SAMPLE = SAMPLES / "la_augustine_civitas.txt"


def analyze(text: Path, extra, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "spacy_rhetoric", "analyze", str(text), "--lang", "la",
         "-o", str(out / "r.html"), "-j", str(out / "r.json"), *extra],
        check=True, capture_output=True,
    )  # fmt: skip
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text", type=Path, default=SAMPLE)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    import spacy

    times = {"shipped_index": [], "no_index": []}
    links = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for _ in range(args.repeats):
            times["no_index"].append(analyze(args.text, ["--no-index"], out))
            times["shipped_index"].append(analyze(args.text, [], out))
            links = [
                {"source": f["label"], "probability": f["score"], "query": f["text"]}
                for f in json.loads((out / "r.json").read_text("utf8"))["findings"]
                if f["kind"] == "intertext"
            ]
    start = time.perf_counter()
    nlp = spacy.load("la_rhetoric_intertext")
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    nlp(args.text.read_text("utf8"))
    first_doc_s = time.perf_counter() - start
    median = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "text": args.text.name,
        "repeats": args.repeats,
        "analyze_s": times,
        "median_s": median,
        "extra_s": median["shipped_index"] - median["no_index"],
        "load_s": load_s,
        "first_doc_s": first_doc_s,
        "index_segments": len(nlp.get_pipe("intertext_matcher").index),
        "package": {
            "name": nlp.meta["name"],
            "version": nlp.meta["version"],
            "license": nlp.meta["license"],
        },  # fmt: skip
        "links": links,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf8")
    print(
        f"analyze --lang la: {median['shipped_index']:.1f} s with the shipped index, "
        f"{median['no_index']:.1f} s without (+{result['extra_s']:.1f} s); load "
        f"{load_s:.1f} s, first doc {first_doc_s:.1f} s; links: "
        + ", ".join(f"{x['source']} ({x['probability']:.3f})" for x in links)
    )


if __name__ == "__main__":
    main()
