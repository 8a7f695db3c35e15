"""Where chunks run: ``local`` (in this process, ``nlp.pipe`` with ``n_process``) or
``dask`` (one task per chunk on a Dask cluster: an embedded ``LocalCluster`` by default,
or an existing scheduler). Both call the same ``process_chunk``; the driver merges the
chunks' counts into one manifest (``manifest.json`` in the output directory).

On a real cluster, the workers need spacy_rhetoric installed and must see the input
files and the output directory at the same paths (a shared or network file system).

A run that stopped (killed, out of memory, a Dask task that failed) can be resumed: the
finished chunks' shards are kept and only the others are processed (see ``records``).
"""

import re
import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..about import __version__
from .chunks import (
    SHARD_PREFIX,
    Chunk,
    RunSettings,
    make_chunks,
    process_chunk,
    process_chunks,
    rss_mb,
    shard_files,
)
from .records import (
    RUN_NAME,
    check_run_description,
    read_chunk_record,
    record_path,
    run_description,
    write_json_atomic,
    write_run_description,
)

BACKENDS = ("local", "dask")
MANIFEST_NAME = "manifest.json"


class ChunksFailed(RuntimeError):
    """Some chunks of a run could not be processed (e.g. their Dask workers died every
    time they ran them); the other chunks' shards are complete, so ``--resume``
    continues the run.

    failures (Dict[int, BaseException]): the failed chunks' indices and their errors.
    total (int): the chunks the run tried to process.
    """

    def __init__(self, failures: Dict[int, BaseException], total: int) -> None:
        self.failures = dict(sorted(failures.items()))
        self.total = total
        by_error: Dict[str, List[int]] = {}
        for index, err in self.failures.items():
            by_error.setdefault(f"{type(err).__name__}: {err}", []).append(index)
        shown = []
        for error, indices in list(by_error.items())[:3]:
            names = ", ".join(str(index) for index in indices[:5])
            more = f" and {len(indices) - 5} more" if len(indices) > 5 else ""
            shown.append(f"chunk{'s' * (len(indices) > 1)} {names}{more}: {error}")
        if len(by_error) > 3:
            shown.append("...")
        details = re.sub(r"\s+", " ", "; ".join(shown))
        super().__init__(
            f"{len(self.failures)} of {total} chunks failed ({details}). The other chunks' "
            "shards are complete: fix the cause if it is not a lost worker, then run the "
            "same command with --resume to process only the chunks that are missing."
        )


def prepare_output_dir(
    output_dir: Path,
    description: Dict[str, Any],
    chunks: Sequence[Chunk],
    settings: RunSettings,
    *,
    overwrite: bool = False,
    resume: bool = False,
) -> Dict[int, Dict[str, Any]]:
    """Make ``output_dir`` ready for a run: new, replacing an old one, or resuming one.

    A new run needs an output directory without shards, manifest or run.json (unless
    ``overwrite``, which deletes them); it writes its run.json. A resumed run keeps the
    chunks whose completion record and shard files are intact and deletes every other
    shard file (half-written .tmp files too) and the old manifest.

    output_dir (Path): the output directory.
    description (Dict[str, Any]): the run's description (``records.run_description``).
    chunks (Sequence[Chunk]): the run's chunks.
    settings (RunSettings): the run's settings (which shard files a chunk has).
    overwrite (bool): replace the output of an earlier run.
    resume (bool): continue the run that run.json describes.
    RETURNS (Dict[int, Dict[str, Any]]): the completion records of the chunks to keep,
        by chunk index (empty unless ``resume``).
    RAISES ValueError: both ``overwrite`` and ``resume``; an earlier run's output and
        neither; ``resume`` and run.json missing or describing a different run.
    """
    if overwrite and resume:
        raise ValueError(
            "--resume continues the run in the output directory and --overwrite replaces "
            "it: pass only one of them."
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    old = sorted(output_dir.glob(f"{SHARD_PREFIX}*"))  # with .tmp files and records
    old += sorted(output_dir.glob(f"{MANIFEST_NAME}*")) + sorted(output_dir.glob(f"{RUN_NAME}*"))
    if resume:
        check_run_description(output_dir, description)
        kept: Dict[int, Dict[str, Any]] = {}
        keep = set()
        for chunk in chunks:
            record = read_chunk_record(output_dir, chunk, shard_files(chunk, settings))
            if record is not None:
                kept[chunk.index] = record
                keep.update(record["shards"])
                keep.add(record_path(output_dir, chunk.shard_name).name)
        for path in old:
            if path.name not in keep and path.name != RUN_NAME:
                path.unlink()
        return kept
    if old and not overwrite:
        raise ValueError(
            f"{output_dir} already holds the output of a run ({old[0].name}, ...): pass "
            "--resume to continue it, --overwrite to replace it, or choose another "
            "directory."
        )
    for path in old:
        path.unlink()
    write_run_description(output_dir, description)
    return {}


def run_local(
    chunks: Sequence[Chunk],
    settings: RunSettings,
    progress: Optional[Callable[[int], None]] = None,
) -> List[Dict[str, Any]]:
    """Process the chunks in this process, in one ``nlp.pipe`` stream with
    ``settings.n_process`` processes."""
    return list(process_chunks(chunks, settings, progress))


def run_dask(
    chunks: Sequence[Chunk],
    settings: RunSettings,
    *,
    workers: int = 2,
    scheduler: Optional[str] = None,
    processes: bool = True,
    progress: Optional[Callable[[int], None]] = None,
) -> List[Dict[str, Any]]:
    """Process the chunks as Dask tasks, one task per chunk.

    Without ``scheduler``, an embedded ``LocalCluster`` with ``workers`` single-threaded
    workers is started and closed again. Each worker loads the pipeline once (see
    ``cached_pipeline``) and reuses it for every chunk it gets.

    A worker that dies (killed, out of memory) loses nothing finished: every chunk's
    shard and completion record are written by the worker as soon as the chunk is done,
    and the scheduler gives the dead worker's chunks to other workers, up to
    ``distributed.scheduler.allowed-failures`` times per chunk (default 3). Chunks that
    still fail do not stop the others; they are reported together at the end. A chunk
    whose worker died after writing its shard and completion record, but before
    reporting it, counts as done.

    workers (int): workers of the embedded cluster.
    scheduler (Optional[str]): address of an existing scheduler, e.g. tcp://host:8786.
    processes (bool): embedded cluster with worker processes (True) or threads.
    RETURNS (List[Dict[str, Any]]): the chunks' completion records, in chunk order.
    RAISES ChunksFailed: some chunks failed (e.g. ``KilledWorker``): names them.
    """
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError(
            "The dask backend needs dask.distributed: pip install 'spacy_rhetoric[cluster]' "
            "(or pip install 'dask[distributed]')."
        ) from None
    if settings.n_process != 1:
        raise ValueError(
            "With the dask backend every worker is one process: use --workers for "
            "parallelism and leave --n-process at 1."
        )
    output_dir = Path(settings.output_dir)
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=None,
        )
        client = Client(cluster)
    results: List[Dict[str, Any]] = []
    failures: Dict[int, BaseException] = {}
    try:
        futures = client.map(process_chunk, list(chunks), settings=settings, pure=False)
        chunk_of = {future.key: chunk for future, chunk in zip(futures, chunks)}
        for future in as_completed(futures):
            try:
                result = future.result()
            except Exception as err:  # KilledWorker, or an error in process_chunk
                chunk = chunk_of[future.key]
                # a worker can die after finishing a chunk, before reporting it
                record = read_chunk_record(output_dir, chunk, shard_files(chunk, settings))
                if record is None:
                    failures[chunk.index] = err
                    continue
                result = record
            # the shard is on disk: if its worker dies now, nothing is computed again
            future.release()
            results.append(result)
            if progress is not None:
                progress(result["files"])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if failures:
        raise ChunksFailed(failures, len(chunks))
    return sorted(results, key=lambda result: result["chunk"])


def merge_results(results: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Add up the chunks' counts; list every skip with its reason."""
    skips = [skip for result in results for skip in result["skipped"]]
    return {
        "files": sum(result["files"] for result in results),
        "docs": sum(result["docs"] for result in results),
        "tokens": sum(result["tokens"] for result in results),
        "words": sum(result["words"] for result in results),
        "skipped": len(skips),
        "skip_kinds": dict(Counter(skip["kind"] for skip in skips)),
        "skips": skips,
        "shards": [name for result in results for name in result["shards"]],
        "workers_used": len({result["worker"] for result in results}),
    }


def run_corpus(
    paths: Sequence[Path],
    settings: RunSettings,
    *,
    backend: str = "local",
    shard_size: int = 1000,
    workers: int = 2,
    scheduler: Optional[str] = None,
    processes: bool = True,
    overwrite: bool = False,
    resume: bool = False,
    progress: Optional[Callable[[int], None]] = None,
) -> Dict[str, Any]:
    """Run ``settings.pipeline`` over ``paths`` and write shards plus ``manifest.json``.

    The run first writes OUTPUT_DIR/run.json and then, per chunk, its shard files and a
    completion record (see ``records``). With ``resume``, the chunks an earlier run of
    the same description finished are kept and only the others are processed; the
    manifest merges both, in chunk order.

    paths (Sequence[Path]): the text files (see ``textio.collect_files``).
    settings (RunSettings): pipeline, output directory and ``nlp.pipe`` settings.
    backend (str): "local" or "dask".
    shard_size (int): files per chunk and shard.
    workers, scheduler, processes: Dask settings (see ``run_dask``).
    overwrite (bool): replace the shards of an earlier run in the output directory.
    resume (bool): continue the earlier run in the output directory.
    progress (Optional[Callable[[int], None]]): called with the number of files done
        (for a resumed run, first with the files of the chunks it keeps).
    RETURNS (Dict[str, Any]): the manifest (also written to OUTPUT_DIR/manifest.json);
        "chunks_resumed" and "chunks_processed" say how many chunks were kept and
        processed; seconds and words per second count this run's work only.
    RAISES ValueError: bad settings, or an output directory that cannot be used (see
        ``prepare_output_dir``).
    RAISES ChunksFailed: chunks failed on the Dask backend; the rest are written.
    """
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend '{backend}': use one of {', '.join(BACKENDS)}.")
    if settings.batch_size < 1 or settings.n_process < 1 or workers < 1:
        raise ValueError("batch size, n_process and workers must be at least 1.")
    output_dir = Path(settings.output_dir)
    chunks = make_chunks(paths, shard_size)
    description = run_description(paths, settings, shard_size)
    kept = prepare_output_dir(
        output_dir, description, chunks, settings, overwrite=overwrite, resume=resume
    )
    todo = [chunk for chunk in chunks if chunk.index not in kept]
    if progress is not None and kept:
        progress(sum(record["files"] for record in kept.values()))
    start = time.perf_counter()
    if not todo:
        processed: List[Dict[str, Any]] = []
    elif backend == "local":
        processed = run_local(todo, settings, progress)
    else:
        processed = run_dask(
            todo,
            settings,
            workers=workers,
            scheduler=scheduler,
            processes=processes,
            progress=progress,
        )
    seconds = time.perf_counter() - start  # wall clock: loading and cluster start-up too
    results = sorted([*kept.values(), *processed], key=lambda result: result["chunk"])
    totals = merge_results(results)
    done = merge_results(processed)
    children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    manifest: Dict[str, Any] = {
        "model": settings.pipeline.model,
        "pipeline": results[0]["pipeline"] if results else None,
        "add_pipes": list(settings.pipeline.add_pipes),
        "backend": backend,
        "n_process": settings.n_process,
        "workers": workers if backend == "dask" else None,
        "scheduler": scheduler if backend == "dask" else None,
        "batch_size": settings.batch_size,
        "shard_size": shard_size,
        "encoding": settings.encoding,
        **totals,
        "resumed": resume,
        "chunks_resumed": len(kept),
        "chunks_processed": len(processed),
        "seconds": seconds,
        "words_per_second": done["words"] / seconds if seconds else 0.0,
        "tokens_per_second": done["tokens"] / seconds if seconds else 0.0,
        "pipeline_load_seconds": sum(result["load_seconds"] for result in processed),
        "driver_rss_mb": rss_mb(),
        "driver_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children_peak_rss_mb": children_mb,
        "chunk_rss_mb": [round(result["rss_mb"], 1) for result in results],
        "chunks": [
            {
                **{
                    key: value
                    for key, value in result.items()
                    if key not in ("skipped", "pipeline", "paths")
                },
                "resumed": result["chunk"] in kept,
            }
            for result in results
        ],
        "python": sys.version.split()[0],
        "spacy_rhetoric": __version__,
    }
    write_json_atomic(output_dir / MANIFEST_NAME, manifest)
    return manifest
