"""``python -m spacy_rhetoric corpus run``: a pipeline over a corpus of text files."""

import sys
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ..cli import Arg, Opt, app, emit_json

corpus_app = typer.Typer(
    help="Run pipelines over corpora of text files (locally or on a Dask cluster).",
    no_args_is_help=True,
)
app.add_typer(corpus_app, name="corpus")


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
    pattern: str = Opt("*.txt", "--pattern", help="Glob for files inside directories"),
    encoding: str = Opt("utf-8", "--encoding", help="Encoding of the text files"),
    no_docbin: bool = Opt(False, "--no-docbin", help="Write no .spacy shards"),
    no_jsonl: bool = Opt(False, "--no-jsonl", help="Write no .jsonl shards"),
    overwrite: bool = Opt(False, "--overwrite", help="Replace an earlier run's shards"),
    as_json: bool = Opt(False, "--json", help="Print the manifest as JSON"),
):
    """Process every text file with a pipeline in bounded memory.

    Writes OUTPUT/shard-NNNNN.spacy (DocBin, one doc per file) and shard-NNNNN.jsonl
    (span groups and extension attributes, e.g. parallelisms, chiasmi, doc._.med) for
    every SHARD_SIZE files, and OUTPUT/manifest.json (files, words, skipped files with
    reasons, seconds, words/s, backend). Unreadable, badly encoded or empty files are
    skipped and listed, never dropped silently."""
    from tqdm import tqdm

    from ..textio import InputError, collect_files
    from .backends import run_corpus
    from .chunks import RunSettings
    from .pipeline import PipelineSpec

    try:
        paths = collect_files(inputs, pattern=pattern)
    except InputError as err:
        msg.fail(str(err), exits=1)
    if backend == "local" and n_process > 1 and "torch" in sys.modules:
        import torch

        # n_process workers share the cores: one torch thread each avoids oversubscription
        torch.set_num_threads(1)
    settings = RunSettings(
        pipeline=PipelineSpec(model=model, lang=lang, add_pipes=tuple(add_pipe)),
        output_dir=str(output_dir),
        batch_size=batch_size,
        n_process=n_process,
        encoding=encoding,
        docbin=not no_docbin,
        jsonl=not no_jsonl,
    )
    with tqdm(total=len(paths), unit="file", disable=as_json, file=sys.stderr) as bar:
        try:
            manifest = run_corpus(
                paths,
                settings,
                backend=backend,
                shard_size=shard_size,
                workers=workers,
                scheduler=scheduler,
                overwrite=overwrite,
                progress=bar.update,
            )
        except (ValueError, ImportError, OSError) as err:
            bar.close()
            msg.fail(str(err), exits=1)
    if emit_json(manifest, None, as_json):
        return
    msg.good(
        f"{manifest['docs']} docs, {manifest['words']} words in {manifest['seconds']:.1f}s "
        f"({manifest['words_per_second']:.0f} words/s, backend {backend}) -> {output_dir}"
    )
    if manifest["skipped"]:
        kinds = ", ".join(f"{kind}: {n}" for kind, n in manifest["skip_kinds"].items())
        msg.warn(
            f"Skipped {manifest['skipped']} files ({kinds}); reasons in "
            f"{output_dir / 'manifest.json'}"
        )
        for skip in manifest["skips"][:5]:
            msg.text(f"  {skip['reason']}")
