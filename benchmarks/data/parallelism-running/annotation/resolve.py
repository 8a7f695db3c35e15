"""Resolve the hand annotation (annotation/{la,en,de}.txt) against the texts in
{la,en,de}.jsonl and check (default) or rewrite (--write) the "parallelisms" field.

Annotation format: "## <doc id>" opens a document; every further line is one
parallelism, its branches quoted verbatim and separated by " | "; " / " inside a branch
stands for a line break; "C: " marks a chiastic parallelism; "@k " before the first branch
picks its k-th whole-word occurrence (otherwise it must occur once); every later branch is
the first whole-word occurrence after the end of the branch before it; "  # ..." is a note.

    python benchmarks/data/parallelism-running/annotation/resolve.py [--write]
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
LANGS = ("la", "en", "de")


def occurrences(text, s):
    out, i = [], text.find(s)
    while i >= 0:
        left = i == 0 or not text[i - 1].isalnum()
        right = i + len(s) == len(text) or not text[i + len(s)].isalnum()
        if left and right:
            out.append(i)
        i = text.find(s, i + 1)
    return out


def parse(path):
    docs, cur = {}, None
    for ln, line in enumerate(path.read_text(encoding="utf8").splitlines(), 1):
        if not line.strip() or line.startswith("# "):
            continue
        if line.startswith("## "):
            cur = line[3:].strip()
            docs[cur] = []
            continue
        note = None
        if "  # " in line:
            line, note = line.split("  # ", 1)
        kind = "synchystic"
        if line.startswith("C: "):
            kind, line = "chiastic", line[3:]
        occ, explicit = 1, False
        m = re.match(r"@(\d+) ", line)
        if m:
            occ, explicit, line = int(m.group(1)), True, line[m.end():]
        branches = [b.strip().replace(" / ", "\n") for b in line.split(" | ")]
        docs[cur].append((ln, branches, kind, note, occ, explicit))
    return docs


def resolve(doc_id, text, items):
    out = []
    for ln, branches, kind, note, occ, explicit in items:
        spans, pos = [], 0
        for k, b in enumerate(branches):
            found = occurrences(text, b)
            if k == 0:
                if len(found) < occ or (len(found) > 1 and not explicit):
                    raise ValueError(f"line {ln} ({doc_id}): {len(found)} occurrences of {b!r}")
                start = found[occ - 1]
            else:
                later = [o for o in found if o >= pos]
                if not later:
                    raise ValueError(f"line {ln} ({doc_id}): {b!r} not after the branch before")
                start = later[0]
            spans.append([start, start + len(b)])
            pos = start + len(b)
        entry = {"branches": spans, "type": kind}
        if note:
            entry["note"] = note
        out.append(entry)
    return out


def main(write=False):
    ok = True
    for lang in LANGS:
        path = DATA / f"{lang}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]
        ann = parse(HERE / f"{lang}.txt")
        for row in rows:
            resolved = resolve(row["id"], row["text"], ann.get(row["id"], []))
            if resolved != row["parallelisms"]:
                ok = False
                print(f"{row['id']}: the annotation file and the jsonl differ")
                row["parallelisms"] = resolved
        if write:
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            path.write_text(lines, encoding="utf8")
    print("consistent" if ok else ("rewritten" if write else "inconsistent"))
    return 0 if ok or write else 1


if __name__ == "__main__":
    sys.exit(main("--write" in sys.argv))
