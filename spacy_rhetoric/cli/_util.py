"""What every command module shares: the typer app, the nouns' sub-apps, the option
shorthands, JSON output and the environment variables that paths may come from."""

import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import srsly
import typer

# The environment variables of paths (typer reads them through ``envvar=``). The data
# mirror's name is the assets module's, which also resolves its default.
from ..assets import DATA_ENV  # noqa: F401  (re-exported for the command modules)

COMMAND = "python -m spacy_rhetoric"

app = typer.Typer(
    name="spacy_rhetoric",
    help="spaCy components and tools for computational rhetoric and philology.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help: no boxes, no type tags on flags
    pretty_exceptions_enable=False,
)
Arg = typer.Argument
Opt = typer.Option

# the pipelines given by hand (analyze, demo, models): NAME=PATH, repeatable
MODELS_OPTION = Opt(None, "--model", "-m", help="NAME=PATH of a model (repeatable)")


def noun_app(name: str, help: str) -> typer.Typer:
    """A sub-app for one noun (``corpus``, ``chiasmus``, ...), added to ``app``.

    name (str): the noun, as typed on the command line.
    help (str): one line for ``--help``.
    RETURNS (typer.Typer): the sub-app whose ``command`` decorator registers its verbs.
    """
    sub = typer.Typer(name=name, help=help, no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(sub, name=name)
    return sub


def emit_json(data: Any, output: Optional[Path], as_json: bool) -> bool:
    """Write ``data`` to ``output`` (if given) and print it as JSON if ``as_json``.

    RETURNS (bool): whether it was printed (the caller then prints nothing else).
    """
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, data)
    if as_json:
        print(srsly.json_dumps(data, indent=2))
    return as_json


def print_ranked(sections: Sequence[Tuple[str, List[Tuple]]], header: Tuple[str, ...]) -> None:
    """What the ``find`` commands print: per section (a heading such as "For review: 12"
    and its rows, best first, without their rank) a ranked table, or "none".

    header (Tuple[str, ...]): the rows' column names (the rank column "#" is added).
    """
    from wasabi import msg

    for heading, rows in sections:
        msg.divider(heading)
        if not rows:
            msg.text("none")
            continue
        ranked = [(rank, *row) for rank, row in enumerate(rows, start=1)]
        msg.table(ranked, header=("#", *header), divider=True)


def set_torch_threads() -> None:
    """Offline hub, and as many torch threads as ``OMP_NUM_THREADS`` (1 if unset), for
    the commands that encode with a transformer."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    except ImportError:
        pass


def on_terminal() -> bool:
    """RETURNS (bool): whether progress bars may be drawn (standard error is a terminal)."""
    return sys.stderr.isatty()


def plain_output() -> None:
    """No ANSI colour codes where standard output or error is not a terminal (wasabi's
    printers decide at creation; the environment variable reaches those created later
    and subprocesses)."""
    if sys.stdout.isatty() and sys.stderr.isatty():
        return
    import wasabi

    os.environ["ANSI_COLORS_DISABLED"] = "1"
    wasabi.msg.show_color = False


def use_gpu(gpu_id: int) -> None:
    """Predict on GPU ``gpu_id`` (``spacy.require_gpu``); -1 keeps the CPU. A GPU that
    cannot be used ends the command with one line."""
    if gpu_id < 0:
        return
    import spacy
    from wasabi import msg

    try:
        spacy.require_gpu(gpu_id)
    except (ValueError, ImportError, RuntimeError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        msg.fail(f"GPU {gpu_id} cannot be used ({reason}); leave out --gpu-id for the CPU", exits=1)


def load_pipeline(model: Any) -> Any:
    """``spacy.load`` for a command: a path or package that cannot be loaded ends the
    command with one line (any error there is the pipeline's, so none is re-raised)."""
    import spacy
    from wasabi import msg

    if isinstance(model, Path) and not model.exists():
        if spacy.util.is_package(str(model)):  # an installed pipeline package by name
            model = str(model)
        else:
            msg.fail(f"Pipeline not found: {model} (no such path or installed package)", exits=1)
    try:
        return spacy.load(model)
    except Exception as err:  # a broken, foreign or incompatible pipeline
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        msg.fail(
            f"{model} cannot be loaded as a spaCy pipeline ({type(err).__name__}: {reason})",
            exits=1,
        )


def save_pipeline(nlp: Any, output: Path) -> None:
    """``nlp.to_disk`` for a command: missing parent folders are made; a path that
    cannot be written ends the command with one line."""
    from wasabi import msg

    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        nlp.to_disk(output)
    except OSError as err:
        msg.fail(f"cannot write the pipeline to {output}: {err.strerror or err}", exits=1)


def read_json_file(path: Path) -> Any:
    """The JSON data of a file a command was given; a malformed one ends the command."""
    from wasabi import msg

    try:
        return srsly.read_json(path)
    except (ValueError, OSError) as err:
        msg.fail(f"{path}: not readable as JSON ({err})", exits=1)


def stderr(text: str) -> None:
    """Print a line to standard error (progress and notes that JSON output must not mix
    with)."""
    print(text, file=sys.stderr)


def explicit_models(options: Optional[List[str]]) -> Dict[str, Path]:
    """The pipelines given with ``--model NAME=PATH``; a malformed one ends the command
    with its error.

    RETURNS (Dict[str, Path]): the model paths by name.
    """
    from wasabi import msg

    from ..models import ModelError, parse_model_options

    try:
        return parse_model_options(options or [])
    except ModelError as error:
        msg.fail(str(error), exits=1)
