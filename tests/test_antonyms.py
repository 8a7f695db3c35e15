"""The antonym lexicons of the antithesis rule (spacy_rhetoric/data/figures/antonyms/):
counts, symmetry, known pairs, Latin u/v and i/j, the file format, a one-line error for
a bad line, that the package data ships them, and (where a clone of Open English
WordNet is at hand) that en.tsv is what the build script makes from it."""

import configparser
import fnmatch
import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest

from spacy_rhetoric.assets import data_root
from spacy_rhetoric.figures.antonyms import ANTONYMS_DIR, are_antonyms, load_antonyms

REPO = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = REPO / "benchmarks" / "scripts" / "build_antonyms.py"
# the least pairs each file must hold
MINIMUM_PAIRS = {"en": 3000, "la": 400, "de": 400, "zh": 150}
# a clone of github.com/globalwordnet/english-wordnet (bare or with a work tree)
OEWN_ENV = "SPACY_RHETORIC_OEWN"
COMPILED_HEADER = (
    "compiled for spacy_rhetoric 0.9.0 from general dictionary knowledge; CC BY-SA 4.0"
)


def pair_lines(lang: str):
    """RETURNS (List[Tuple[str, str]]): the pairs of a packaged file, as written."""
    text = (ANTONYMS_DIR / f"{lang}.tsv").read_text(encoding="utf-8")
    return [tuple(line.split("\t")) for line in text.splitlines() if not line.startswith("#")]


@pytest.mark.parametrize("lang", sorted(MINIMUM_PAIRS))
def test_counts_match_the_sources_page_and_the_minimums(lang):
    pairs = pair_lines(lang)
    assert len(pairs) >= MINIMUM_PAIRS[lang]
    sources = (ANTONYMS_DIR / "SOURCES.md").read_text(encoding="utf-8")
    stated = re.search(rf"`{lang}\.tsv` \((\d+) pairs\)", sources)
    assert stated, f"SOURCES.md names no count for {lang}.tsv"
    assert int(stated.group(1)) == len(pairs)
    table = load_antonyms(lang)
    # each pair twice (both directions), no pair lost to normalisation
    assert sum(len(opposed) for opposed in table.values()) == 2 * len(pairs)


@pytest.mark.parametrize("lang", sorted(MINIMUM_PAIRS))
def test_file_is_sorted_ordered_and_without_repeats(lang):
    lines = (ANTONYMS_DIR / f"{lang}.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    if lang != "en":
        assert lines[0].endswith(COMPILED_HEADER)
    pairs = pair_lines(lang)
    assert all(len(pair) == 2 and pair[0] < pair[1] for pair in pairs)
    assert pairs == sorted(set(pairs))


@pytest.mark.parametrize("lang", sorted(MINIMUM_PAIRS))
def test_relation_is_symmetric(lang):
    table = load_antonyms(lang)
    assert table
    for word, opposed in table.items():
        assert word not in opposed
        for other in opposed:
            assert word in table[other], (word, other)


@pytest.mark.parametrize(
    "a,b,lang",
    [
        ("good", "bad", "en"),
        ("war", "peace", "en"),
        ("at the least", "at the most", "en"),
        ("bonus", "malus", "la"),
        ("vita", "mors", "la"),
        ("amo", "odi", "la"),
        ("semper", "numquam", "la"),
        ("hic", "ille", "la"),
        ("possum", "nequeo", "la"),
        ("Krieg", "Frieden", "de"),
        ("lieben", "hassen", "de"),
        ("gut", "schlecht", "de"),
        ("生", "死", "zh"),
        ("大", "小", "zh"),
        ("古", "今", "zh"),
    ],
)
def test_known_pairs_in_either_order_and_any_case(a, b, lang):
    assert are_antonyms(a, b, lang)
    assert are_antonyms(b, a, lang)
    assert are_antonyms(a.upper(), b.title(), lang)


def test_words_that_are_not_opposed():
    assert not are_antonyms("good", "good", "en")
    assert not are_antonyms("good", "dog", "en")
    assert not are_antonyms("Krieg", "Leben", "de")
    assert not are_antonyms("unknownword", "bad", "en")
    assert not are_antonyms("good", "bad", "xx")


def test_latin_folds_u_v_and_i_j_on_both_sides():
    raw = {word for pair in pair_lines("la") for word in pair}
    assert "vivo" in raw and "iustus" in raw
    assert not any("j" in word.lower() for word in raw)
    assert are_antonyms("uiuo", "morior", "la")
    assert are_antonyms("VIVO", "morior", "la")
    assert are_antonyms("iustus", "injustus", "la")
    assert are_antonyms("Justus", "iniustus", "la")
    assert are_antonyms("uerus", "falsus", "la")
    # the other languages keep v and j
    assert are_antonyms("valid", "invalid", "en")
    assert not are_antonyms("ualid", "inualid", "en")


def test_unknown_language_has_an_empty_lexicon():
    assert load_antonyms("xx") == {}


def test_lexicon_is_cached():
    assert load_antonyms("de") is load_antonyms("de")


def test_reads_a_given_file(tmp_path):
    path = tmp_path / "lexicon.tsv"
    path.write_text("# a header\n\nvivo\tmorior\r\nlux\ttenebrae\n", encoding="utf-8")
    table = load_antonyms("la", path)
    assert table == {
        "uiuo": frozenset(["morior"]),
        "morior": frozenset(["uiuo"]),
        "lux": frozenset(["tenebrae"]),
        "tenebrae": frozenset(["lux"]),
    }


@pytest.mark.parametrize(
    "line,lang",
    [
        ("good bad", "en"),
        ("good\tbad\tugly", "en"),
        ("good\t", "en"),
        ("good\tgood", "en"),
        ("Good\tgood", "en"),
        ("vivo\tuiuo", "la"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, lang):
    path = tmp_path / "bad.tsv"
    path.write_text(f"# header\nlight\tdark\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_antonyms(lang, path)
    message = str(error.value)
    assert message.startswith(f"{path}, line 3: ")
    assert "\n" not in message


def test_missing_given_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_antonyms("en", tmp_path / "absent.tsv")


def test_package_data_ships_the_files():
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    patterns = [p.strip() for p in config["options.package_data"]["spacy_rhetoric"].split(",")]
    package = REPO / "spacy_rhetoric"
    files = sorted(ANTONYMS_DIR.iterdir())
    assert {f.name for f in files} >= {"en.tsv", "la.tsv", "de.tsv", "zh.tsv", "SOURCES.md"}
    for path in files:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def oewn_clone() -> Path:
    """RETURNS (Path): the clone of Open English WordNet named by $SPACY_RHETORIC_OEWN, or
    ``english-wordnet`` in the data mirror; skips the test where there is none."""
    if os.environ.get(OEWN_ENV):
        path = Path(os.environ[OEWN_ENV])
    else:
        root = data_root(required=False)
        path = root / "english-wordnet" if root else Path("english-wordnet")
    if not path.exists():
        pytest.skip(f"no clone of Open English WordNet at {path} (set {OEWN_ENV})")
    return path


@pytest.mark.data
def test_english_file_is_the_build_of_its_source_commit():
    pytest.importorskip("yaml")
    text = (ANTONYMS_DIR / "en.tsv").read_text(encoding="utf-8")
    commit = re.search(r"commit ([0-9a-f]{40})", text.splitlines()[0]).group(1)
    clone = oewn_clone()
    present = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True
    )
    if present.returncode != 0:
        pytest.skip(f"the clone at {clone} lacks commit {commit}")
    spec = importlib.util.spec_from_file_location("build_antonyms", BUILD_SCRIPT)
    build_antonyms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_antonyms)
    rebuilt, counts = build_antonyms.build(clone, commit)
    assert counts["commit"] == commit
    assert counts["pairs"] == len(pair_lines("en"))
    assert rebuilt == text
