"""Command-line interface: ``python -m spacy_rhetoric COMMAND``."""

import importlib
import importlib.util
import time
from pathlib import Path
from typing import Any, List, Optional

import srsly
import typer
from wasabi import msg

app = typer.Typer(
    name="spacy_rhetoric",
    help="spaCy components and tools for computational rhetoric and philology.",
    no_args_is_help=True,
    add_completion=False,
)
Arg = typer.Argument
Opt = typer.Option


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


@app.command("convert")
def convert_cli(
    format: str = Arg(
        ..., help="Dataset format: asp, pse, chiasmus-de, chiasmus-en, loci-similes, conllu"
    ),
    src: Path = Arg(..., help="The dataset's directory or file", exists=True),
    output_dir: Path = Arg(..., help="Directory for one <split>.spacy per split"),
):
    """Convert a dataset into one .spacy DocBin per split.

    Records skipped on purpose are counted and listed in OUTPUT_DIR/skipped.json."""
    from .corpora import convert, write_conversion
    from .corpora.stats import corpus_stats

    start = time.perf_counter()
    try:
        conversion = convert(format, src)
    except (ValueError, FileNotFoundError) as err:
        msg.fail(str(err), exits=1)
    paths = write_conversion(conversion, output_dir)
    seconds = time.perf_counter() - start
    for split, path in paths.items():
        stats = corpus_stats(conversion.splits[split])
        msg.good(f"{split}: {stats['sections']} docs, {stats['tokens']} tokens -> {path}")
    if conversion.skipped:
        msg.warn(
            f"Skipped {len(conversion.skipped)} records: {conversion.skip_summary()} "
            f"(details in {output_dir / 'skipped.json'})"
        )
    msg.info(f"Converted {format} in {seconds:.1f}s")


@app.command("stats")
def stats_cli(
    corpora: List[Path] = Arg(..., help=".spacy files or directories of them", exists=True),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Path = Opt(None, "--output", "-o", help="Also write the JSON to this file"),
):
    """Count documents, sections, tokens, parallelisms and branches in converted corpora.

    Also counts nested parallelisms and branches, chiasmus candidates by label and
    intertext links."""
    import spacy

    from .corpora.stats import corpus_stats, read_docbins

    vocab = spacy.blank("xx").vocab
    stats = corpus_stats(read_docbins(corpora, vocab))
    if emit_json(stats, output, as_json):
        return
    rows = [(key, value) for key, value in stats.items()]
    msg.table(rows, header=("statistic", "value"), divider=True)


@app.command("assets")
def assets_cli(
    project_file: Path = Arg(Path("project.yml"), help="The project.yml", exists=True),
    mirror: str = Opt("", "--mirror", help="Local mirror of the datasets (empty: download)"),
):
    """Fetch the project's assets, or link them from a local mirror directory.

    With a mirror, each asset's dest 'assets/<path>' is linked to '<mirror>/<path>' and
    its checksum verified; without one, weasel downloads them from their public URLs."""
    from .assets import fetch_assets

    try:
        for line in fetch_assets(project_file, mirror or None):
            msg.good(line)
    except (FileNotFoundError, ValueError) as err:
        msg.fail(str(err), exits=1)


@app.command("vectors")
def vectors_cli(
    sources: List[Path] = Arg(..., help="Raw text: .tess/.txt files or directories", exists=True),
    output_dir: Path = Arg(..., help="Where to write the spaCy vectors"),
    lang: str = Opt("la", "--lang", help="Language of the vectors (la: Latin orthography)"),
    dim: int = Opt(100, "--dim", help="Vector width"),
    epochs: int = Opt(5, "--epochs", help="Training epochs"),
    threads: int = Opt(2, "--threads", help="Training threads"),
):
    """Train floret subword vectors on raw text and convert them to spaCy vectors.

    Use them with [initialize] vectors = OUTPUT_DIR and include_static_vectors = true."""
    from spacy.training.initialize import convert_vectors
    from spacy.util import get_lang_class

    from .vectors import train_floret_vectors

    output_dir.mkdir(parents=True, exist_ok=True)
    floret_path = output_dir.with_suffix(".floret")
    start = time.perf_counter()
    counts = train_floret_vectors(
        sources, floret_path, dim=dim, epochs=epochs, threads=threads, latin=lang == "la"
    )
    msg.good(f"Trained on {counts['tokens']} tokens in {time.perf_counter() - start:.0f}s")
    nlp = get_lang_class(lang)()
    convert_vectors(nlp, floret_path, truncate=0, prune=-1, name=None, mode="floret")
    nlp.to_disk(output_dir)
    msg.good(f"Wrote floret vectors ({nlp.vocab.vectors.shape}) to {output_dir}")


@app.command("raw-text")
def raw_text_cli(
    sources: List[Path] = Arg(..., help="Raw text: .tess/.txt files or directories", exists=True),
    output: Path = Arg(..., help="JSONL file for spacy pretrain ({'text': ...} per line)"),
    lang: str = Opt("la", "--lang", help="Language (la: Latin orthography normalised)"),
):
    """Write raw text as JSONL for `spacy pretrain`, one line of normalised text each."""
    from .vectors import tokenized_corpus

    output.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with output.open("w", encoding="utf8") as file:
        for line in tokenized_corpus(sources, latin=lang == "la"):
            file.write(srsly.json_dumps({"text": line}) + "\n")
            n += 1
    msg.good(f"Wrote {n} lines to {output}")


@app.command("report")
def report_cli(
    inputs: List[Path] = Arg(..., help="Metrics directories (*.json) and/or files"),
    output: Path = Opt(Path("reports/results.md"), "--output", "-o", help="Markdown to write"),
    html_output: Path = Opt(None, "--html", help="Also write a self-contained HTML page"),
    project_file: Path = Opt(
        Path("project.yml"), "--project", help="project.yml naming each file's command"
    ),
):
    """Collect metrics JSON files into one results table, next to the published anchors.

    Each file is matched to the project command that writes it (from project.yml
    outputs); files of unknown layout are flattened to dotted keys."""
    from .results import ResultsError, write_report

    try:
        files = write_report(inputs, output, html_output, project_file)
    except ResultsError as err:
        msg.fail(str(err), exits=1)
    written = f"{output}, {html_output}" if html_output else str(output)
    msg.good(f"Reported {len(files)} metrics files -> {written}")


# Each capability adds its own commands to ``app`` in ``<capability>/commands.py``
# (``scale``: the ``corpus`` sub-commands).
CAPABILITY_COMMANDS = ("parallelism", "chiasmus", "intertext", "treebank", "scale")


def _register_capability_commands() -> None:
    # analyze, demo and models (the main job) live in analyze_commands.py
    importlib.import_module(f"{__package__}.analyze_commands")
    for name in CAPABILITY_COMMANDS:
        module = f"{__package__}.{name}.commands"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)


def main() -> None:
    _register_capability_commands()
    app()
