"""Time and peak memory of ``analyze`` on pathological input: German text that repeats
"der Mann der Frau" (every chunk holds ~500,000 chiasmus candidates), and of one
parallelism pipeline applied to the same text as a single ``Doc`` (``nlp(text)``). Each
run is its own process; peak RSS is that process's ``ru_maxrss``.

    python benchmarks/analyze_memory.py --tokens 20000,60000 \
        --output benchmarks/results/analyze_memory.json

Rows: ``analyze --lang de`` with every component, with ``--skip parallelism``, and
``spacy.load("xx_rhetoric_parallelism")(text)``. Time on a shared machine is noisy:
compare rows of one run.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DIRECT = """
import sys, time, spacy
nlp = spacy.load(sys.argv[1])
text = open(sys.argv[2], encoding="utf8").read()
start = time.perf_counter()
doc = nlp(text)
print("tokens", len(doc), "seconds", time.perf_counter() - start,
      "parallelisms", len(doc.spans.get("parallelism", [])))
"""


# runs the command as its only child and prints that child's peak RSS (KB) last:
# RUSAGE_CHILDREN is the largest child a process ever waited for
WRAP = """
import resource, subprocess, sys
code = subprocess.call(sys.argv[1:])
print("peak_rss_kb", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(code)
"""


def measure(command):
    """Run a command in a child process: wall seconds, its peak RSS (MB), its output."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAP, *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stdout}\n{done.stderr}")
    peak = int(re.search(r"peak_rss_kb (\d+)", done.stdout).group(1)) / 1024
    return wall, peak, done.stdout + done.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="20000", help="comma-separated input sizes")
    parser.add_argument("--model", default="xx_rhetoric_parallelism")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted(int(t) for t in args.tokens.split(",")):
            text = Path(tmp) / f"repetitive_{n}.txt"
            text.write_text("der Mann der Frau " * (n // 4), encoding="utf8")
            runs = {
                "direct": [sys.executable, "-c", DIRECT, args.model, str(text)],
                "skip_parallelism": [sys.executable, "-m", "spacy_rhetoric", "analyze",
                                     str(text), "--lang", "de", "-o", f"{tmp}/r.html",
                                     "--skip", "parallelism"],
                "analyze": [sys.executable, "-m", "spacy_rhetoric", "analyze", str(text),
                            "--lang", "de", "-o", f"{tmp}/r.html"],
            }  # fmt: skip
            for name, command in runs.items():
                wall, peak, out = measure(command)
                found = re.search(r"tokens in ([\d.]+)s", out) or re.search(
                    r"seconds ([\d.]+)", out
                )
                row = {
                    "run": name,
                    "tokens": n,
                    "wall_s": round(wall, 1),
                    "work_s": round(float(found.group(1)), 1) if found else None,
                    "peak_rss_mb": round(peak),
                }
                print(json.dumps(row), flush=True)
                rows.append(row)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"rows": rows}, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
