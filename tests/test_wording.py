"""No file of the project tells its history in the words that issue #58 retired (a
history is told by dates and versions): ``WORDS`` below, in every file git tracks or
would track, outside the technical uses that keep one of them (``ALLOWED``) and the
texts that are not ours (``is_checked``).

Identifiers such as onnxruntime's ``InferenceSession`` and ``SessionOptions`` or
pytest's ``pytest_sessionstart`` and ``pytest_sessionfinish`` never match: the words are
matched whole."""

import re
import subprocess
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

REPO = Path(__file__).resolve().parent.parent

# written with a character class so that this file does not match itself
WORDS = re.compile(r"\b(?:se[s]sions?|sit[t]ing|le[n]t|device\s+t[i]me)\b", re.IGNORECASE)

# technical uses, blanked before WORDS is searched: pytest's fixture scope (and its
# name for the fixtures it makes, "...-scoped"), onnxruntime's option keys
# ("<scope>.intra_op.allow_spinning")
ALLOWED = re.compile(
    r"""scope\s*=\s*["']se[s]sion["']"""
    r"""|\bse[s]sion[- ]scoped\b"""
    r"""|["']se[s]sion\.[\w.]+["']""",
    re.IGNORECASE,
)

# machine-written results and datasets (their keys and texts are data), and binaries
SKIPPED_SUFFIXES = (".json", ".jsonl", ".whl", ".spacy", ".gz", ".tgz", ".zip", ".msgpack")
# folders of texts by others (corpora excerpts, public-domain samples: Latin and English
# prose and verse may use WORDS in their own sense, as do Open English WordNet's
# antonym pairs in en.tsv); their READMEs and
# SOURCES.md are ours and are checked, the judging sheets (sheet.md: the judged reports
# with their sentences, quoted from web, news and literary text) are not
THIRD_PARTY_TEXTS = (
    "tests/fixtures/",
    "benchmarks/data/",
    "spacy_rhetoric/data/samples/",
    "spacy_rhetoric/data/figures/antonyms/en.tsv",
)
QUOTING_SHEETS = "/sheet.md"


def is_checked(path: str) -> bool:
    """RETURNS (bool): whether the file at ``path`` (relative, with /) is the project's own
    writing."""
    if path.endswith(SKIPPED_SUFFIXES):
        return False
    if path.startswith(THIRD_PARTY_TEXTS):
        return path.endswith(".md") and not path.endswith(QUOTING_SHEETS)
    return True


def project_files() -> List[str]:
    """RETURNS (List[str]): the files git tracks, and the new ones it does not ignore."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return sorted(set(listed.splitlines()))


def retired_words(text: str) -> Iterator[Tuple[int, str]]:
    """YIELDS (Tuple[int, str]): the line number and the words of each use of WORDS in
    ``text`` that is not an ALLOWED one."""
    blanked = ALLOWED.sub(lambda m: re.sub(r"\S", "_", m.group()), text)
    for match in WORDS.finditer(blanked):
        yield blanked.count("\n", 0, match.start()) + 1, " ".join(match.group().split())


def test_the_guard_finds_the_words_and_spares_technical_uses():
    text = (
        '@pytest.fixture(scope="session")\n'
        'options.add_session_config_entry("session.intra_op.allow_spinning", "0")\n'
        "ort.InferenceSession(path)  # pytest_sessionstart\n"
        "measured in se" + "ssion 22, a speed sit" + "ting\n"
        "on a le" + "nt H200, with little device\ntime left\n"
    )
    found = list(retired_words(text))
    assert [line for line, _ in found] == [4, 4, 5, 5]
    assert found[-1][1].lower() == "device t" + "ime"
    assert not is_checked("spacy_rhetoric/data/samples/la_augustine_civitas.txt")
    assert not is_checked("benchmarks/results/speed.json")
    assert not is_checked("benchmarks/data/figures-judged-0.8-en-gum/sheet.md")
    assert is_checked("benchmarks/data/figures-judged-0.8-en-gum/README.md")
    assert is_checked("tests/fixtures/asp/README.md") and is_checked("benchmarks/gpu/README.md")


def test_no_file_uses_the_retired_words():
    problems = []
    for path in project_files():
        if not is_checked(path):
            continue
        try:
            text = (REPO / path).read_text(encoding="utf8")
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            continue  # deleted in the working tree, or a binary
        problems.extend(f"{path}:{line}: {words}" for line, words in retired_words(text))
    assert not problems, "\n".join(["say a date or a version instead (issue #58):", *problems])
