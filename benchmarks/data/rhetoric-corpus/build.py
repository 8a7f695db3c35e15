"""Resolve the hand annotation of the rhetoric corpus into character offsets, check it, and
write the corpus files ``{la,en,de}.jsonl`` (the files the reader converts).

The hand format (docs/annotation.md, "The annotation file") in short: one annotation per
line, ``LABEL[(ATTRIBUTE)]: [@k ]MEMBER | MEMBER | ...[  # note]``; members are quoted
verbatim from ``text.txt`` (`` / `` stands for a line break), the support words inside
them in ``[square brackets]``; the first member is the ``k``-th whole-word occurrence of
its text (without ``@k`` it must occur once), every later member the first whole-word
occurrence after the end of the member before it. Blank lines and lines that begin with
``#`` are ignored.

    python build.py --check FILE [FILE ...]   # resolve and check hand annotation files
    python build.py                           # check every text's annotation.txt
    python build.py --write                   # ... and rewrite {la,en,de}.jsonl
    python build.py --stats                   # the counts, as Markdown tables
"""

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
TEXTS = HERE / "texts"
LANGS = ("la", "en", "de")

PARALLELISM = "parallelism"
FIGURES = (
    "anaphora", "epiphora", "symploce", "anadiplosis", "gradatio", "epizeuxis", "ploce",
    "polyptoton", "polysyndeton", "asyndeton", "alliteration", "antimetabole", "chiasmus",
    "antithesis", "rhetorical_question",
)  # fmt: skip
LABELS = (PARALLELISM,) + FIGURES
# the attributes a label may carry, the first one the default
ATTRIBUTES: Dict[str, Tuple[str, ...]] = {
    PARALLELISM: ("synchystic", "chiastic"),
    "rhetorical_question": ("erotema", "hypophora"),
}
# labels whose support may be left out (the members are then the support)
MEMBERS_ARE_SUPPORT = ("asyndeton", "rhetorical_question", "antithesis")
MIN_MEMBERS = {PARALLELISM: 2, "anaphora": 2, "epiphora": 2, "symploce": 2,
               "anadiplosis": 1, "gradatio": 1, "polysyndeton": 3, "asyndeton": 3}  # fmt: skip
MIN_SUPPORT = {"anaphora": 2, "epiphora": 2, "symploce": 4, "anadiplosis": 2, "gradatio": 4,
               "epizeuxis": 2, "ploce": 2, "polyptoton": 2, "polysyndeton": 2,
               "alliteration": 3, "antimetabole": 4, "chiasmus": 4, "antithesis": 2}  # fmt: skip
WORD = re.compile(r"\w", re.UNICODE)


class AnnotationError(ValueError):
    """A line of a hand annotation file that cannot be resolved (names file and line)."""


@dataclass
class Item:
    """One resolved annotation: label, attribute, members and support as character
    offsets [start, end) into the text, note, and the line it came from."""

    label: str
    attribute: Optional[str]
    members: List[Tuple[int, int]]
    support: List[Tuple[int, int]] = field(default_factory=list)
    note: Optional[str] = None
    line: int = 0

    def record(self) -> Dict[str, object]:
        if self.label == PARALLELISM:
            out: Dict[str, object] = {"branches": [list(m) for m in self.members],
                                      "type": self.attribute}  # fmt: skip
        else:
            out = {"label": self.label, "members": [list(m) for m in self.members],
                   "support": [list(s) for s in self.support]}  # fmt: skip
            if self.attribute:
                out["attribute"] = self.attribute
        if self.note:
            out["note"] = self.note
        return out


def whole_words(span: str) -> bool:
    """Whether a span begins with a word character and ends with one (or with an elision
    apostrophe after one: German "Ring'")."""
    if span != span.strip() or not WORD.match(span[:1]):
        return False
    end = span[:-1] if span.endswith(("'", "’")) and len(span) > 1 else span
    return bool(WORD.match(end[-1:]))


def occurrences(text: str, needle: str) -> List[int]:
    """RETURNS (List[int]): the starts of ``needle`` in ``text`` at word boundaries."""
    out, i = [], text.find(needle)
    while i >= 0:
        left = i == 0 or not (text[i - 1].isalnum() and needle[:1].isalnum())
        end = i + len(needle)
        right = end == len(text) or not (text[end].isalnum() and needle[-1:].isalnum())
        if left and right:
            out.append(i)
        i = text.find(needle, i + 1)
    return out


def split_member(raw: str, where: str) -> Tuple[str, List[Tuple[int, int]]]:
    """A member as written -> its plain text and its support ranges (relative)."""
    plain: List[str] = []
    support: List[Tuple[int, int]] = []
    position, opened = 0, None
    for char in raw:
        if char == "[":
            if opened is not None:
                raise AnnotationError(f"{where}: nested '[' in {raw!r}")
            opened = position
        elif char == "]":
            if opened is None or opened == position:
                raise AnnotationError(f"{where}: unmatched or empty ']' in {raw!r}")
            support.append((opened, position))
            opened = None
        else:
            plain.append(char)
            position += 1
    if opened is not None:
        raise AnnotationError(f"{where}: unclosed '[' in {raw!r}")
    return "".join(plain), support


def parse_line(
    line: str, where: str
) -> Tuple[str, Optional[str], int, bool, List[str], Optional[str]]:
    note = None
    if "  # " in line:
        line, note = line.split("  # ", 1)
        note = note.strip() or None
    match = re.match(r"^\s*([a-z_]+)(?:\(([a-z]+)\))?:\s+(.*)$", line)
    if not match:
        raise AnnotationError(f"{where}: expected 'label: member | member ...', got {line!r}")
    label, attribute, rest = match.group(1), match.group(2), match.group(3).rstrip()
    if label not in LABELS:
        raise AnnotationError(f"{where}: unknown label {label!r} (one of {', '.join(LABELS)})")
    allowed = ATTRIBUTES.get(label, ())
    if attribute is not None and attribute not in allowed:
        raise AnnotationError(
            f"{where}: {label} takes no attribute {attribute!r}"
            + (f" (one of {', '.join(allowed)})" if allowed else "")
        )
    if attribute is None and allowed:
        attribute = allowed[0]
    occurrence, explicit = 1, False
    at = re.match(r"@(\d+)\s+", rest)
    if at:
        occurrence, explicit, rest = int(at.group(1)), True, rest[at.end() :]
    members = [m.strip().replace(" / ", "\n") for m in rest.split(" | ")]
    if any(not m for m in members):
        raise AnnotationError(f"{where}: an empty member")
    return label, attribute, occurrence, explicit, members, note


def resolve_line(text: str, line: str, where: str) -> Item:
    """One annotation line -> an ``Item`` with offsets into ``text``."""
    label, attribute, occurrence, explicit, raw_members, note = parse_line(line, where)
    members: List[Tuple[int, int]] = []
    support: List[Tuple[int, int]] = []
    position = 0
    for k, raw in enumerate(raw_members):
        plain, relative = split_member(raw, where)
        if not whole_words(plain):
            raise AnnotationError(
                f"{where}: member {plain!r} must begin and end with a word (no leading or "
                "trailing space or punctuation; a final elision apostrophe is allowed)"
            )
        found = occurrences(text, plain)
        if k == 0:
            if len(found) < occurrence or (len(found) > 1 and not explicit):
                raise AnnotationError(
                    f"{where}: {len(found)} whole-word occurrences of {plain!r}"
                    + (" (write '@k ' before it to pick one)" if len(found) > 1 else "")
                )
            start = found[occurrence - 1]
        else:
            later = [o for o in found if o >= position]
            if not later:
                raise AnnotationError(
                    f"{where}: {plain!r} does not occur after the member before it"
                )
            start = later[0]
        members.append((start, start + len(plain)))
        for s, e in relative:
            piece = plain[s:e]
            if not whole_words(piece):
                raise AnnotationError(f"{where}: support [{piece}] must be whole words")
            if (s > 0 and plain[s - 1].isalnum()) or (e < len(plain) and plain[e].isalnum()):
                raise AnnotationError(f"{where}: support [{piece}] cuts a word")
            support.append((start + s, start + e))
        position = start + len(plain)
    if label != PARALLELISM and not support and label not in MEMBERS_ARE_SUPPORT:
        raise AnnotationError(f"{where}: {label} needs its support words in [brackets]")
    if label == PARALLELISM and support:
        raise AnnotationError(f"{where}: parallelism branches take no [brackets]")
    need = MIN_MEMBERS.get(label, 1)
    if len(members) < need:
        raise AnnotationError(f"{where}: {label} needs at least {need} members, got {len(members)}")
    need = MIN_SUPPORT.get(label, 0)
    if support and len(support) < need:
        raise AnnotationError(
            f"{where}: {label} needs at least {need} support words, got {len(support)}"
        )
    if label == "rhetorical_question" and attribute == "hypophora" and len(members) != 2:
        raise AnnotationError(f"{where}: rhetorical_question(hypophora) is 'question | answer'")
    return Item(label, attribute, members, support, note, int(where.rsplit(":", 1)[-1]))


def read_annotation(path: Path, text: str) -> Tuple[List[Item], List[str]]:
    """A hand annotation file -> its items, and the errors (each names file and line)."""
    items: List[Item] = []
    errors: List[str] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            items.append(resolve_line(text, line, f"{path}:{number}"))
        except AnnotationError as err:
            errors.append(str(err))
    seen: Dict[Tuple[str, Tuple[Tuple[int, int], ...], Tuple[Tuple[int, int], ...]], int] = {}
    for item in items:
        key = (item.label, tuple(item.members), tuple(item.support))
        if key in seen:
            errors.append(f"{path}:{item.line}: the same {item.label} as line {seen[key]}")
        seen[key] = item.line
        if item.label == PARALLELISM:
            ordered = sorted(item.members)
            if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
                errors.append(f"{path}:{item.line}: branches of one parallelism overlap")
    return items, errors


def text_of(passage: str) -> str:
    return (TEXTS / passage / "text.txt").read_text(encoding="utf8")[:-1]  # final newline


def check_files(paths: Sequence[Path]) -> int:
    bad = 0
    for path in paths:
        path = Path(path)
        passage = path.parent.name if path.name == "annotation.txt" else path.name.split(".")[0]
        if not (TEXTS / passage / "text.txt").is_file():
            print(f"{path}: no text for passage {passage!r} (texts/{passage}/text.txt)")
            bad += 1
            continue
        items, errors = read_annotation(path, text_of(passage))
        for error in errors:
            print(error)
        bad += len(errors)
        counts: Dict[str, int] = {}
        for item in items:
            counts[item.label] = counts.get(item.label, 0) + 1
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{path}: {len(items)} annotations ({summary}); {len(errors)} errors")
    return bad


def build(write: bool) -> int:
    manifest = json.loads((HERE / "passages.json").read_text(encoding="utf8"))
    bad = 0
    for lang in LANGS:
        rows = []
        for entry in manifest:
            if entry["lang"] != lang:
                continue
            folder = TEXTS / entry["id"]
            text = text_of(entry["id"])
            annotation = folder / "annotation.txt"
            items, errors = read_annotation(annotation, text) if annotation.is_file() else ([], [])
            for error in errors:
                print(error)
            bad += len(errors)
            source = (folder / "SOURCE.md").read_text(encoding="utf8")
            row = {k: entry[k] for k in ("id", "lang", "work", "passage", "date", "split")}
            row["source"] = (
                source.split("**Origin:** ", 1)[1].split("\n", 1)[0]
                if "**Origin:** " in source
                else ""
            )
            row["licence"] = (
                source.split("**Licence:** ", 1)[1].split("\n", 1)[0]
                if "**Licence:** " in source
                else ""
            )
            row["annotated"] = annotation.is_file()
            if entry.get("sections"):
                row["sections"] = entry["sections"]
            row["text"] = text
            row["parallelisms"] = [i.record() for i in items if i.label == PARALLELISM]
            row["figures"] = [i.record() for i in items if i.label != PARALLELISM]
            rows.append(row)
        out = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        path = HERE / f"{lang}.jsonl"
        if write:
            path.write_text(out, encoding="utf8")
        elif not path.is_file() or path.read_text(encoding="utf8") != out:
            print(f"{path.name}: differs from the annotation files (run build.py --write)")
            bad += 1
    print("consistent" if not bad else f"{bad} problems")
    return 1 if bad else 0


def stats() -> str:
    """RETURNS (str): Markdown tables of the corpus: passages, tokens, parallelisms and
    figures per language and split, and figures per label and language."""
    rows = {
        lang: [
            json.loads(line)
            for line in (HERE / f"{lang}.jsonl").read_text(encoding="utf8").splitlines()
        ]
        for lang in LANGS
    }
    out = [
        "| language | split | passages | tokens | parallelisms | figures |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for lang in LANGS:
        for split in ("train", "dev", "test"):
            part = [r for r in rows[lang] if r["split"] == split]
            tokens = sum(len(r["text"].split()) for r in part)
            parallelisms = sum(len(r["parallelisms"]) for r in part)
            figures = sum(len(r["figures"]) for r in part)
            out.append(
                f"| {lang} | {split} | {len(part)} | {tokens:,} | {parallelisms:,} | {figures:,} |"
            )
    out += ["", "| label | " + " | ".join(LANGS) + " | all |", "|---|" + "---:|" * (len(LANGS) + 1)]
    for label in FIGURES:
        counts = [
            sum(f["label"] == label for r in rows[lang] for f in r["figures"]) for lang in LANGS
        ]
        out.append(f"| {label} | " + " | ".join(f"{c:,}" for c in counts) + f" | {sum(counts):,} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--stats", action="store_true", help="print the counts as Markdown tables")
    args = parser.parse_args()
    if args.stats:
        print(stats())
        return 0
    if args.check:
        return 1 if check_files(args.check) else 0
    return build(args.write)


if __name__ == "__main__":
    sys.exit(main())
