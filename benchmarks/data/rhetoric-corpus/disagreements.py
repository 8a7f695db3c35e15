"""List where the two annotations of an agreement passage disagree, for adjudication.

A parallelism agrees when the other annotation has one with exactly the same branches
(EPM); a figure when the other has a matching one (``spacy_rhetoric.figures.metrics``:
same label, two support words shared). Every other line of either file is listed, with
its line number, so that the adjudicator decides each one.

    python disagreements.py ID [ID ...]     # prints one section per passage
"""

import sys
from pathlib import Path
from typing import List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build  # noqa: E402

from spacy_rhetoric.figures.metrics import match_findings, support_units  # noqa: E402


def lines_of(path: Path) -> List[str]:
    return path.read_text(encoding="utf8").splitlines()


def disagreements(passage: str) -> str:
    text = build.text_of(passage)
    files = [HERE / "agreement" / f"{passage}.{who}.txt" for who in ("A", "B")]
    items = [build.read_annotation(path, text)[0] for path in files]
    source = [lines_of(path) for path in files]
    out = [f"## {passage}", ""]
    parallel = [[i for i in its if i.label == "parallelism"] for its in items]
    keys = [{tuple(i.members) for i in p} for p in parallel]
    for k, who in enumerate("AB"):
        only = [i for i in parallel[k] if tuple(i.members) not in keys[1 - k]]
        out.append(f"### parallelisms only {who} has ({len(only)})")
        out += [f"- {who}:{i.line}: {source[k][i.line - 1].strip()}" for i in only]
        out.append("")
    figures = [[i for i in its if i.label != "parallelism"] for its in items]
    findings = [
        [(i.label, support_units({"support": i.support, "members": i.members})) for i in f]
        for f in figures
    ]
    pairs = match_findings(findings[0], findings[1])
    matched = [{a for a, _ in pairs}, {b for _, b in pairs}]
    for k, who in enumerate("AB"):
        only = [i for n, i in enumerate(figures[k]) if n not in matched[k]]
        out.append(f"### figures only {who} has ({len(only)})")
        out += [f"- {who}:{i.line}: {source[k][i.line - 1].strip()}" for i in only]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    for passage in sys.argv[1:]:
        print(disagreements(passage))
