"""MkDocs hook: the parts of the docs that are generated, not written by hand.

- ``<!-- cli-reference -->`` becomes the reference of every command of the typer app
  (``spacy_rhetoric.cli.app``): its help, arguments and options with their defaults.
- ``<!-- factory: NAME -->`` becomes the table of a spaCy factory's settings (from
  spaCy's registry: defaults, and the descriptions in the factory's docstring), what the
  component assigns and requires, and its score weights.

Both are importable for the tests (``tests/test_docs.py``).
"""

import inspect
import json
import re
from typing import Any, Dict, Iterator, List, Tuple

CLI_MARKER = "<!-- cli-reference -->"
FACTORY_MARKER = re.compile(r"<!-- factory: ([a-z_]+) -->")


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _commands() -> Iterator[Tuple[str, Any]]:
    import typer.main

    from spacy_rhetoric.cli import app

    def walk(command: Any, prefix: Tuple[str, ...]) -> Iterator[Tuple[str, Any]]:
        if hasattr(command, "commands"):  # a group (typer vendors click: duck-typed)
            for name in sorted(command.commands):
                yield from walk(command.commands[name], prefix + (name,))
        else:
            yield " ".join(prefix), command

    yield from walk(typer.main.get_command(app), ())


def cli_reference() -> str:
    """RETURNS (str): Markdown, one section per registered command."""
    out: List[str] = []
    for name, command in _commands():
        out += [f"### `{name}`", "", (command.help or "").strip(), ""]
        rows = []
        for param in command.params:
            if param.name == "help":
                continue
            if param.param_type_name == "argument":
                flag = f"`{param.name.upper()}`" + (" ..." if param.nargs == -1 else "")
                default = "required" if param.required else param.default
            else:
                flags = list(param.opts) + list(param.secondary_opts)
                flag = ", ".join(f"`{f}`" for f in flags)
                if getattr(param, "is_flag", False) and not param.secondary_opts:
                    default = "off" if not param.default else "on"
                else:
                    default = "required" if param.required else param.default
            if default is None or default == "":
                default = "–"
            rows.append(f"| {flag} | {_cell(param.help or '')} | {_cell(default)} |")
        if rows:
            out += ["| argument / option | meaning | default |", "|---|---|---|", *rows, ""]
        out += [f"`python -m spacy_rhetoric {name} --help` prints the same.", ""]
    return "\n".join(out)


def _described(doc: str) -> Dict[str, str]:
    """Setting descriptions from a spaCy-style docstring (``name (type): text``)."""
    found: Dict[str, str] = {}
    current = None
    for line in doc.splitlines():
        match = re.match(r"^(\w+) \(([^)]*)\): (.*)$", line.strip())
        if match and not line.startswith("        "):
            current = match.group(1)
            found[current] = match.group(3)
        elif current and line.startswith("    ") and line.strip():
            found[current] += " " + line.strip()
        else:
            current = None
    return found


def factory_reference(name: str) -> str:
    """RETURNS (str): Markdown: the settings of spaCy factory ``name`` and its meta."""
    from spacy import registry
    from spacy.language import Language

    import spacy_rhetoric  # noqa: F401  (registers the factories)

    meta = Language.get_factory_meta(name)
    described = _described(inspect.getdoc(registry.factories.get(name)) or "")
    out = [
        f'Settings of `nlp.add_pipe("{name}", config={{...}})` (defaults from spaCy\'s registry):',
        "",
        "| setting | default | meaning |",
        "|---|---|---|",
    ]
    for key, value in meta.default_config.items():
        default = value if isinstance(value, str) and value else json.dumps(value)
        out.append(f"| `{key}` | `{_cell(default)}` | {_cell(described.get(key, ''))} |")
    out.append("")
    if meta.assigns:
        out.append("Assigns: " + ", ".join(f"`{a}`" for a in meta.assigns) + ".")
    if meta.requires:
        out.append("Requires: " + ", ".join(f"`{r}`" for r in meta.requires) + ".")
    if meta.default_score_weights:
        weights = ", ".join(f"`{k}` ({v})" for k, v in meta.default_score_weights.items())
        out.append(f"Scores (`nlp.evaluate` keys, with their weights): {weights}.")
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return FACTORY_MARKER.sub(lambda m: factory_reference(m.group(1)), markdown)
