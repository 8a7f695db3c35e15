"""Throughput of ``analyze`` on the bundled samples, per language, with the models that
are available (resolved as analyze resolves them: --model, $SPACY_RHETORIC_MODELS,
package data, user cache).

Each language's sample is analysed once to warm up (model loading is timed apart),
then ``--repeat`` copies are analysed as separate documents in one run; words/s counts
spaCy tokens. One thread (OMP_NUM_THREADS=1 is set before torch loads).

    python benchmarks/analyze_samples.py [--repeat 20] [--model NAME=PATH ...]

Writes benchmarks/results/analyze_samples.json.
"""

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import torch  # noqa: E402

from spacy_rhetoric.analysis.demo import SAMPLES, TEXT_SAMPLES, load_sample  # noqa: E402
from spacy_rhetoric.analysis.findings import analysis_data  # noqa: E402
from spacy_rhetoric.analysis.pipelines import build_analyzer  # noqa: E402
from spacy_rhetoric.analysis.run import analyze_files  # noqa: E402
from spacy_rhetoric.models import parse_model_options, resolve  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--model", action="append", default=[], help="NAME=PATH")
    parser.add_argument(
        "--output", type=Path, default=Path("benchmarks/results/analyze_samples.json")
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    explicit = parse_model_options(args.model)
    texts = {"la": load_sample().text}
    first = {}  # each language's first text sample (Latin: Augustine quoting Virgil)
    for lang, name in TEXT_SAMPLES:
        first.setdefault(lang, name)
    texts.update({lang: (SAMPLES / name).read_text("utf8") for lang, name in first.items()})
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for lang, text in texts.items():
            start = time.perf_counter()
            analyzer = build_analyzer(lang, explicit)
            load_s = time.perf_counter() - start
            files = []
            for i in range(args.repeat):
                path = Path(tmp) / f"{lang}-{i:03d}.txt"
                path.write_text(text, encoding="utf8")
                files.append(path)
            analyze_files(analyzer, files[:1])  # warm-up
            analysis = analyze_files(analyzer, files)
            data = analysis_data(analysis)
            counts = {}
            for item in data["findings"]:
                counts[item["kind"]] = counts.get(item["kind"], 0) + 1
            results[lang] = {
                "components_ran": [n.component for n in analyzer.notes if n.ran],
                "models": {
                    name: str(found.path.resolve())
                    for name in ("base-" + lang, "parallelism-" + lang, "chiasmus-" + lang)
                    if (found := _resolve(name, explicit)) is not None
                },
                "load_seconds": round(load_s, 2),
                "documents": len(files),
                "tokens": data["tokens"],
                "seconds": data["seconds"],
                "words_per_second": data["words_per_second"],
                "findings_per_copy": {k: v / len(files) for k, v in counts.items()},
            }
            print(lang, json.dumps(results[lang]))
    output = {
        "benchmark": "analyze_samples",
        "repeat": args.repeat,
        "threads": 1,
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
        "languages": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(output, indent=2), encoding="utf8")
    print(f"Wrote {args.output}")


def _resolve(name, explicit):
    try:
        return resolve(name, explicit)
    except ValueError:  # not a model of this language
        return None


if __name__ == "__main__":
    main()
