"""The two weasel projects: the product's recipe (project.yml, explosion/projects size)
and the experiments (benchmarks/project.yml, run as ``spacy project run NAME
benchmarks``). Each command lives in one of them, ``models build`` finds its commands in
the product, and every ``spacy project run`` the docs cite exists where they say."""

import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import srsly

from spacy_rhetoric.models import MODEL_SPECS

REPO = Path(__file__).resolve().parents[1]
MAX_PRODUCT_COMMANDS = 40
# `spacy project run NAME` or `spacy project run NAME benchmarks` (NAME in lower case:
# placeholders such as NAME or COMMAND are not citations)
CITATION = re.compile(r"spacy project run\s+([a-z0-9][\w-]*)(\s+benchmarks\b)?")


def _names(project_file: Path) -> Tuple[Set[str], Set[str]]:
    """RETURNS: the project's command names and workflow names."""
    project = srsly.read_yaml(project_file)
    commands = {command["name"] for command in project["commands"]}
    return commands, set(project.get("workflows", {}))


def _pages() -> List[Path]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    pages += [REPO / "CHANGELOG.md", REPO / "benchmarks" / "README.md"]
    return [page for page in pages if page.is_file()]


def test_product_project_is_small_and_builds_every_model():
    commands, workflows = _names(REPO / "project.yml")
    assert len(commands) <= MAX_PRODUCT_COMMANDS
    assert {"package", "demo", "report", "all"} <= commands | workflows
    for spec in MODEL_SPECS.values():
        missing = [name for name in spec.commands if name not in commands]
        assert not missing, f"models build {spec.name}: not in project.yml: {missing}"


def test_projects_share_no_command():
    product, _ = _names(REPO / "project.yml")
    benchmarks, workflows = _names(REPO / "benchmarks" / "project.yml")
    assert benchmarks and not product & benchmarks
    assert not workflows & benchmarks
    steps = srsly.read_yaml(REPO / "benchmarks" / "project.yml")["workflows"].values()
    assert {step for workflow in steps for step in workflow} == benchmarks


def test_benchmark_paths_are_relative_to_benchmarks():
    """Weasel runs the experiments inside benchmarks/: no path names it again, and the
    root's folders are reached through ../"""
    project = srsly.read_yaml(REPO / "benchmarks" / "project.yml")
    root = re.compile(r"(?<![\w./-])(?:benchmarks|corpus|training|metrics|assets|configs)/")
    for command in project["commands"]:
        for text in (
            command.get("script", []) + command.get("deps", []) + command.get("outputs", [])
        ):
            assert not root.search(text), f"{command['name']}: {text}"


def test_cited_project_commands_exist():
    names: Dict[str, Set[str]] = {}
    for key, path in (
        ("", REPO / "project.yml"),
        ("benchmarks", REPO / "benchmarks" / "project.yml"),
    ):
        commands, workflows = _names(path)
        names[key] = commands | workflows
    wrong = []
    for page in _pages():
        text = page.read_text(encoding="utf8")
        for match in CITATION.finditer(text):
            name, where = match.group(1), "benchmarks" if match.group(2) else ""
            if name not in names[where]:
                line = text.count("\n", 0, match.start()) + 1
                other = [key or "project.yml" for key in names if name in names[key]]
                hint = f" (it is in {other[0]})" if other else ""
                wrong.append(f"{page.relative_to(REPO)}:{line}: {match.group(0)!r}{hint}")
    assert not wrong, "citations of commands that are not there:\n" + "\n".join(wrong)
