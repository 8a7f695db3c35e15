"""Where chunks run: ``local`` (in this process, ``nlp.pipe`` with ``n_process``) or
``dask`` (one task per chunk on a Dask cluster: an embedded ``LocalCluster`` by default,
or an existing scheduler). Both call the same ``process_chunk``; the driver merges the
chunks' counts into one manifest (``manifest.json`` in the output directory).

On a real cluster, the workers need spacy_rhetoric installed and must see the input
files and the output directory at the same paths (a shared or network file system).
"""

import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import srsly

from ..about import __version__
from .chunks import (
    SHARD_PREFIX,
    Chunk,
    RunSettings,
    make_chunks,
    process_chunk,
    process_chunks,
    rss_mb,
)

BACKENDS = ("local", "dask")
MANIFEST_NAME = "manifest.json"


def prepare_output_dir(output_dir: Path, overwrite: bool) -> None:
    """Create ``output_dir``; refuse to mix shards of two runs unless ``overwrite``.

    RAISES ValueError: the directory holds shards or a manifest and overwrite is False.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    old = sorted(output_dir.glob(f"{SHARD_PREFIX}*")) + sorted(output_dir.glob(MANIFEST_NAME))
    if old and not overwrite:
        raise ValueError(
            f"{output_dir} already holds the output of a run ({old[0].name}, ...): "
            "choose another directory or pass --overwrite to replace it."
        )
    for path in old:
        path.unlink()


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

    workers (int): workers of the embedded cluster.
    scheduler (Optional[str]): address of an existing scheduler, e.g. tcp://host:8786.
    processes (bool): embedded cluster with worker processes (True) or threads.
    RETURNS (List[Dict[str, Any]]): the chunks' results, in chunk order.
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
    try:
        futures = client.map(process_chunk, list(chunks), settings=settings, pure=False)
        results: List[Dict[str, Any]] = []
        for future in as_completed(futures):
            result = future.result()
            results.append(result)
            if progress is not None:
                progress(result["files"])
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
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
    progress: Optional[Callable[[int], None]] = None,
) -> Dict[str, Any]:
    """Run ``settings.pipeline`` over ``paths`` and write shards plus ``manifest.json``.

    paths (Sequence[Path]): the text files (see ``textio.collect_files``).
    settings (RunSettings): pipeline, output directory and ``nlp.pipe`` settings.
    backend (str): "local" or "dask".
    shard_size (int): files per chunk and shard.
    workers, scheduler, processes: Dask settings (see ``run_dask``).
    overwrite (bool): replace the shards of an earlier run in the output directory.
    progress (Optional[Callable[[int], None]]): called with the number of files done.
    RETURNS (Dict[str, Any]): the manifest (also written to OUTPUT_DIR/manifest.json).
    """
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend '{backend}': use one of {', '.join(BACKENDS)}.")
    if settings.batch_size < 1 or settings.n_process < 1 or workers < 1:
        raise ValueError("batch size, n_process and workers must be at least 1.")
    output_dir = Path(settings.output_dir)
    prepare_output_dir(output_dir, overwrite)
    chunks = make_chunks(paths, shard_size)
    start = time.perf_counter()
    if backend == "local":
        results = run_local(chunks, settings, progress)
    else:
        results = run_dask(
            chunks,
            settings,
            workers=workers,
            scheduler=scheduler,
            processes=processes,
            progress=progress,
        )
    seconds = time.perf_counter() - start  # wall clock: loading and cluster start-up too
    totals = merge_results(results)
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
        "seconds": seconds,
        "words_per_second": totals["words"] / seconds if seconds else 0.0,
        "tokens_per_second": totals["tokens"] / seconds if seconds else 0.0,
        "pipeline_load_seconds": sum(result["load_seconds"] for result in results),
        "driver_rss_mb": rss_mb(),
        "driver_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children_peak_rss_mb": children_mb,
        "chunk_rss_mb": [round(result["rss_mb"], 1) for result in results],
        "chunks": [
            {key: value for key, value in result.items() if key not in ("skipped", "pipeline")}
            for result in results
        ],
        "python": sys.version.split()[0],
        "spacy_rhetoric": __version__,
    }
    srsly.write_json(output_dir / MANIFEST_NAME, manifest)
    return manifest
