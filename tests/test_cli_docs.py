"""Every ``python -m spacy_rhetoric ...`` command written in the README, docs/, project.yml and
benchmarks/project.yml names a registered command and only options that command has."""

import re
import shlex
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
import srsly
import typer.main

from spacy_rhetoric.cli import app
from spacy_rhetoric.models import MODEL_SPECS, build_hint

REPO = Path(__file__).resolve().parents[1]
PREFIX = re.compile(r"python -m spacy_rhetoric\s+([^`\n]*(?:\\\n[^`\n]*)*)")


def _readme_commands() -> Iterator[Tuple[str, str]]:
    """The README's commands and those of the docs pages (docs/**/*.md)."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf8")
        where = "README.md" if page.name == "README.md" else "docs"
        for match in PREFIX.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield f"{where}:{page.relative_to(REPO)}:{line}", match.group(1)


def _project_commands() -> Iterator[Tuple[str, str]]:
    """The commands of both projects: the product's (project.yml) and the experiments'
    (benchmarks/project.yml; its paths read from benchmarks/, ../corpus and so on, which
    does not matter here: only commands and options are checked)."""
    for name in ("project.yml", "benchmarks/project.yml"):
        project = srsly.read_yaml(REPO / name)
        for command in project["commands"]:
            for script in command.get("script", []):
                for match in PREFIX.finditer(script):
                    yield f"{name}:{command['name']}", match.group(1)


def _tokens(text: str) -> List[str]:
    text = text.replace("\\\n", " ").split(" # ")[0].split("   #")[0]
    text = re.sub(r"\s+(&&|\||;|>).*$", "", text)
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote in a prose excerpt
        words = text.split()
    return [w.strip("[]") for w in words if w.strip("[]")]


def _resolve(words: List[str]) -> Tuple[Any, List[str]]:
    command = typer.main.get_command(app)
    rest = list(words)
    while hasattr(command, "commands") and rest and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    return command, rest


def _hint_commands() -> Iterator[Tuple[str, str]]:
    """The commands in backticks of the "not run" hints (they must work when pasted)."""
    for name in MODEL_SPECS:
        for command in re.findall(r"`([^`]*)`", build_hint(name)):
            assert command.startswith("python -m spacy_rhetoric "), command
            yield f"hint:{name}", command[len("python -m spacy_rhetoric ") :]


COMMANDS = list(_readme_commands()) + list(_project_commands()) + list(_hint_commands())


def test_documented_commands_were_found():
    places = {where.split(":")[0] for where, _ in COMMANDS}
    assert places == {"README.md", "docs", "project.yml", "benchmarks/project.yml", "hint"}
    assert len(COMMANDS) > 40


@pytest.mark.parametrize("where,text", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_exists(where, text):
    words = _tokens(text)
    command, rest = _resolve(words)
    assert not hasattr(command, "commands"), f"{where}: no command in {text!r}"
    known = {"--help"}
    for param in command.params:
        known.update(param.opts)
        known.update(param.secondary_opts)
    for word in rest:
        if word.startswith("-") and not re.fullmatch(r"-[0-9.]+", word):
            option = word.split("=")[0]
            assert option in known, f"{where}: {option} is no option of {command.name}"
