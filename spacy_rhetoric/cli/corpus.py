"""``python -m spacy_rhetoric corpus convert|stats|run|raw-text|assets``: datasets into
DocBins, their counts, pipelines over corpora of text files, raw text for pretraining,
and the project's assets."""

import sys
import time
from pathlib import Path
from typing import List, Optional

import srsly
from wasabi import msg

from ._util import DATA_ENV, Arg, Opt, emit_json, noun_app, on_terminal

corpus_app = noun_app(
    "corpus",
    "Datasets and corpora: convert them to DocBins, count them, run pipelines over "
    "text files, fetch the project's assets.",
)


@corpus_app.command("convert")
def corpus_convert_cli(
    format: str = Arg(
        ...,
        help="Dataset format: asp, pse, chiasmus-de, chiasmus-en, loci-similes, conllu, "
        "rhetoric-corpus",
    ),
    src: Path = Arg(..., help="The dataset's directory or file", exists=True),
    output_dir: Path = Arg(..., help="Directory for one <split>.spacy per split"),
):
    """Convert a dataset into one .spacy DocBin per split.

    Records skipped on purpose are counted and listed in OUTPUT_DIR/skipped.json."""
    from ..corpora import convert, write_conversion
    from ..corpora.stats import corpus_stats

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


@corpus_app.command("stats")
def corpus_stats_cli(
    corpora: List[Path] = Arg(..., help=".spacy files or directories of them", exists=True),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Path = Opt(None, "--output", "-o", help="Also write the JSON to this file"),
):
    """Count documents, sections, tokens, parallelisms and branches in converted corpora.

    Also counts nested parallelisms and branches, chiasmus candidates by label and
    intertext links."""
    import spacy

    from ..corpora.stats import corpus_stats, read_docbins

    vocab = spacy.blank("xx").vocab
    try:
        stats = corpus_stats(read_docbins(corpora, vocab))
    except ValueError as err:  # CorpusFormatError: names the file
        msg.fail(str(err), exits=1)
    if emit_json(stats, output, as_json):
        return
    rows = [(key, value) for key, value in stats.items()]
    msg.table(rows, header=("statistic", "value"), divider=True)


@corpus_app.command("run")
def corpus_run_cli(
    model: str = Arg(
        ..., help="Pipeline: a directory or package for spacy.load, a *.cfg, or 'blank'"
    ),
    inputs: List[Path] = Arg(..., help="Text files and/or directories (searched recursively)"),
    output_dir: Path = Opt(..., "--output", "-o", help="Directory for shards and manifest.json"),
    batch_size: int = Opt(64, "--batch-size", "-b", help="nlp.pipe batch size"),
    n_process: int = Opt(1, "--n-process", "-n", help="nlp.pipe processes (local backend)"),
    backend: str = Opt("local", "--backend", help="local or dask"),
    workers: int = Opt(2, "--workers", help="Workers of the embedded Dask cluster"),
    scheduler: Optional[str] = Opt(
        None, "--scheduler", help="Address of an existing Dask scheduler (tcp://host:8786)"
    ),
    shard_size: int = Opt(1000, "--shard-size", help="Docs per shard (and per Dask task)"),
    lang: str = Opt("xx", "--lang", help="Language of a 'blank' pipeline"),
    add_pipe: List[str] = Opt(
        [], "--add-pipe", help="Append this component (e.g. displacement_analyzer); repeatable"
    ),
    code: Optional[Path] = Opt(
        None,
        "--code",
        help="Python file to import first, e.g. registering custom components (every "
        "worker imports it)",
        exists=True,
        dir_okay=False,
    ),
    pattern: str = Opt("*.txt", "--pattern", help="Glob for files inside directories"),
    encoding: str = Opt("utf-8", "--encoding", help="Encoding of the text files"),
    no_docbin: bool = Opt(False, "--no-docbin", help="Write no .spacy shards"),
    no_jsonl: bool = Opt(False, "--no-jsonl", help="Write no .jsonl shards"),
    overwrite: bool = Opt(False, "--overwrite", help="Replace an earlier run's shards"),
    resume: bool = Opt(
        False, "--resume", help="Continue a stopped run: keep its finished shards, do the rest"
    ),
    as_json: bool = Opt(False, "--json", help="Print the manifest as JSON"),
):
    """Process every text file with a pipeline in bounded memory.

    Writes OUTPUT/shard-NNNNN.spacy (DocBin, one doc per file) and shard-NNNNN.jsonl
    (span groups and extension attributes, e.g. parallelisms, chiasmi, doc._.med) for
    every SHARD_SIZE files, and OUTPUT/manifest.json (files, words, skipped files with
    reasons, seconds, words/s, backend). Unreadable, badly encoded or empty files are
    skipped and listed, never dropped silently. OUTPUT/run.json describes the run and
    every finished shard gets a completion record (shard-NNNNN.done.json), so a run that
    stopped continues with --resume, processing only the unfinished shards."""
    from tqdm import tqdm

    from ..scale.backends import ChunksFailed, run_corpus
    from ..scale.chunks import RunSettings
    from ..scale.pipeline import PipelineSpec
    from ..textio import InputError, collect_files

    try:
        paths = collect_files(inputs, pattern=pattern)
    except InputError as err:
        msg.fail(str(err), exits=1)
    if backend == "local" and n_process > 1 and "torch" in sys.modules:
        import torch

        # n_process workers share the cores: one torch thread each avoids oversubscription
        torch.set_num_threads(1)
    settings = RunSettings(
        pipeline=PipelineSpec(
            model=model,
            lang=lang,
            add_pipes=tuple(add_pipe),
            code=str(code.resolve()) if code is not None else None,
        ),
        output_dir=str(output_dir),
        batch_size=batch_size,
        n_process=n_process,
        encoding=encoding,
        docbin=not no_docbin,
        jsonl=not no_jsonl,
    )
    with tqdm(
        total=len(paths), unit="file", disable=as_json or not on_terminal(), file=sys.stderr
    ) as bar:
        try:
            manifest = run_corpus(
                paths,
                settings,
                backend=backend,
                shard_size=shard_size,
                workers=workers,
                scheduler=scheduler,
                overwrite=overwrite,
                resume=resume,
                progress=bar.update,
            )
        except (ValueError, ImportError, OSError, ChunksFailed) as err:
            bar.close()
            msg.fail(str(err), exits=1)
    if emit_json(manifest, None, as_json):
        return
    msg.good(
        f"{manifest['docs']} docs, {manifest['words']} words in {manifest['seconds']:.1f}s "
        f"({manifest['words_per_second']:.0f} words/s, backend {backend}) -> {output_dir}"
    )
    if resume:
        msg.info(
            f"Resumed: kept {manifest['chunks_resumed']} finished shards, processed "
            f"{manifest['chunks_processed']}"
        )
    if manifest["skipped"]:
        kinds = ", ".join(f"{kind}: {n}" for kind, n in manifest["skip_kinds"].items())
        msg.warn(
            f"Skipped {manifest['skipped']} files ({kinds}); reasons in "
            f"{output_dir / 'manifest.json'}"
        )
        for skip in manifest["skips"][:5]:
            msg.text(f"  {skip['reason']}")


@corpus_app.command("raw-text")
def corpus_raw_text_cli(
    sources: List[Path] = Arg(..., help="Raw text: .tess/.txt files or directories", exists=True),
    output: Path = Arg(..., help="JSONL file for spacy pretrain ({'text': ...} per line)"),
    lang: str = Opt("la", "--lang", help="Language (la: Latin orthography normalised)"),
):
    """Write raw text as JSONL for `spacy pretrain`, one line of normalised text each."""
    from ..encoders.floret import tokenized_corpus

    output.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with output.open("w", encoding="utf8") as file:
        for line in tokenized_corpus(sources, latin=lang == "la"):
            file.write(srsly.json_dumps({"text": line}) + "\n")
            n += 1
    if n == 0:
        output.unlink()
        msg.fail(f"No text in {', '.join(map(str, sources))} (.tess or .txt files)", exits=1)
    msg.good(f"Wrote {n} lines to {output}")


@corpus_app.command("assets")
def corpus_assets_cli(
    project_file: Path = Arg(Path("project.yml"), help="The project.yml", exists=True),
    mirror: str = Opt(
        "",
        "--mirror",
        envvar=DATA_ENV,
        help="Local mirror of the datasets (default: $SPACY_RHETORIC_DATA; empty: download)",
    ),
):
    """Fetch the project's assets, or link them from a local mirror directory.

    With a mirror, each asset's dest 'assets/<path>' is linked to '<mirror>/<path>' and
    its checksum verified; without one, weasel downloads them from their public URLs."""
    from ..assets import fetch_assets

    try:
        for line in fetch_assets(project_file, mirror or None):
            msg.good(line)
    except (FileNotFoundError, ValueError) as err:
        msg.fail(str(err), exits=1)
