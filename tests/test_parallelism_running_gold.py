"""Data tests for the hand-annotated running-text parallelism sets
(benchmarks/data/parallelism-running/{la,en,de}.jsonl): schema, character offsets, branches
(two or more, whole words, no overlap within a parallelism), the dev/test split rule, the
token counts per language, agreement with the annotation source files and, where the data
mirror is present, that the Latin passages are the mirror's text."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "parallelism-running"
LANGS = ("la", "en", "de")
# whitespace tokens each language must reach (targets: la 5,000, en 3,000, de 3,000)
MIN_TOKENS = {"la": 4000, "en": 2500, "de": 2500}
KEYS = ("id", "lang", "source", "text", "split", "parallelisms")
TYPES = {"synchystic", "chiastic"}


def rows_of(lang):
    path = DATA / f"{lang}.jsonl"
    rows = []
    with path.open(encoding="utf8") as f:
        for n, line in enumerate(f, 1):
            assert line.strip(), f"{path.name}: blank line {n}"
            rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def gold():
    return {lang: rows_of(lang) for lang in LANGS}


def all_rows(gold):
    return [row for lang in LANGS for row in gold[lang]]


def test_schema(gold):
    ids = set()
    for lang in LANGS:
        assert gold[lang], f"{lang}: no documents"
        for row in gold[lang]:
            assert tuple(row) == KEYS, row.get("id")
            assert row["lang"] == lang
            assert re.fullmatch(rf"{lang}-\d\d", row["id"]), row["id"]
            assert row["id"] not in ids
            ids.add(row["id"])
            assert isinstance(row["text"], str) and row["text"].strip()
            assert row["text"] == row["text"].strip()
            assert row["split"] in ("dev", "test")
            source = row["source"]
            assert isinstance(source, dict)
            for key in ("work", "passage", "edition"):
                assert isinstance(source.get(key), str) and source[key], (row["id"], key)
            assert isinstance(row["parallelisms"], list) and row["parallelisms"], row["id"]
            for par in row["parallelisms"]:
                assert set(par) <= {"branches", "type", "note"}, row["id"]
                assert par["type"] in TYPES
                if "note" in par:
                    assert isinstance(par["note"], str) and par["note"]


def test_branches(gold):
    for row in all_rows(gold):
        text = row["text"]
        seen = set()
        for par in row["parallelisms"]:
            branches = par["branches"]
            assert len(branches) >= 2, (row["id"], branches)
            key = tuple(map(tuple, branches))
            assert key not in seen, (row["id"], "duplicate parallelism", branches)
            seen.add(key)
            for span in branches:
                assert isinstance(span, list) and len(span) == 2
                start, end = span
                assert isinstance(start, int) and isinstance(end, int)
                assert 0 <= start < end <= len(text), (row["id"], span)
                piece = text[start:end]
                # whole words: starts and ends on a letter or digit (a word may end in an
                # elision apostrophe: "Ring'", "Freud'"), and no word is cut
                assert piece[0].isalnum() and piece.rstrip("'’")[-1].isalnum(), (row["id"], piece)
                assert piece == piece.strip(), (row["id"], piece)
                assert start == 0 or not text[start - 1].isalnum(), (row["id"], piece)
                assert end == len(text) or not text[end].isalnum(), (row["id"], piece)
            ordered = sorted(branches)
            assert ordered == branches, (row["id"], "branches out of text order", branches)
            for (_s1, e1), (s2, _e2) in zip(ordered, ordered[1:]):
                assert e1 <= s2, (row["id"], "overlapping branches", branches)


def test_nested_parallelisms_nest(gold):
    """A branch shared by two parallelisms lies inside a branch of the other or contains it:
    branches may nest, never cross."""
    for row in all_rows(gold):
        spans = {tuple(s) for par in row["parallelisms"] for s in par["branches"]}
        for s1, e1 in spans:
            for s2, e2 in spans:
                crossing = s1 < s2 < e1 < e2
                assert not crossing, (row["id"], row["text"][s1:e1], row["text"][s2:e2])


def test_split_rule(gold):
    """Documents alternate dev, test, dev, ... in id order within each language."""
    for lang in LANGS:
        rows = sorted(gold[lang], key=lambda r: r["id"])
        expected = ["dev" if i % 2 == 0 else "test" for i in range(len(rows))]
        assert [r["split"] for r in rows] == expected
        tokens = {
            s: sum(len(r["text"].split()) for r in rows if r["split"] == s) for s in ("dev", "test")
        }
        assert tokens["dev"] and tokens["test"]
        share = tokens["dev"] / (tokens["dev"] + tokens["test"])
        assert 0.35 <= share <= 0.65, (lang, tokens)


def test_token_counts(gold):
    for lang in LANGS:
        tokens = sum(len(r["text"].split()) for r in gold[lang])
        assert tokens >= MIN_TOKENS[lang], (lang, tokens)


def test_types_present(gold):
    kinds = {par["type"] for row in all_rows(gold) for par in row["parallelisms"]}
    assert kinds == TYPES


def test_annotation_source_agrees():
    """The jsonl offsets are what annotation/resolve.py makes of the hand-written files."""
    spec = importlib.util.spec_from_file_location("resolve", DATA / "annotation" / "resolve.py")
    resolve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(resolve)
    for lang in LANGS:
        ann = resolve.parse(DATA / "annotation" / f"{lang}.txt")
        rows = rows_of(lang)
        assert set(ann) == {r["id"] for r in rows}, lang
        for row in rows:
            resolved = resolve.resolve(row["id"], row["text"], ann[row["id"]])
            assert resolved == row["parallelisms"], row["id"]


def test_latin_passages_are_the_mirror_text(gold):
    """Where the data mirror is present: every Latin document is its Latin Library file
    with the layout stripped (section numbers, chapter numerals, editorial [deletions])."""
    try:
        from spacy_rhetoric.assets import data_root
    except ImportError:  # pragma: no cover
        pytest.skip("spacy_rhetoric not importable")
    root = data_root(required=False)
    if root is None or not (root / "latin-prose").is_dir():
        pytest.skip("latin-prose not in the data mirror")

    def words(s):
        s = re.sub(r"\[[^\]]*\]", " ", s)
        # chapter numerals (III., IV.) are layout; roman-numeral words drop on both sides
        return [w for w in re.findall(r"[^\W\d_]+", s) if not re.fullmatch(r"[IVXLC]+", w)]

    for row in gold["la"]:
        path = root / row["source"]["file"]
        assert path.is_file(), row["source"]["file"]
        haystack = " ".join(words(path.read_text(encoding="utf8")))
        needle = [w for w in words(row["text"])]
        assert " ".join(needle) in haystack, row["id"]
        starts = [m["start"] for m in row["source"]["sections"]]
        assert starts[0] == 0 and starts == sorted(starts)
