"""Run a spaCy pipeline over a corpus of text files in bounded memory, on one machine
(``nlp.pipe`` with ``n_process``) or on a Dask cluster, writing DocBin and JSONL shards
and a manifest.

- ``pipeline``: load a pipeline from a name, path, config or ``blank``; one cached copy
  per worker process.
- ``annotations``: a Doc's span groups and extension attributes as JSON.
- ``chunks``: the work shared by every backend: chunks of files -> one shard each.
- ``records``: run.json and the chunks' completion records, which ``--resume`` reads.
- ``backends``: ``local`` and ``dask`` executors and the manifest that merges their results.
"""

from .backends import BACKENDS, ChunksFailed, run_corpus
from .chunks import Chunk, RunSettings, make_chunks, process_chunk, process_chunks, read_texts
from .pipeline import PipelineSpec, cached_pipeline, load_pipeline, use_pipeline

__all__ = [
    "BACKENDS",
    "Chunk",
    "ChunksFailed",
    "PipelineSpec",
    "RunSettings",
    "cached_pipeline",
    "load_pipeline",
    "make_chunks",
    "process_chunk",
    "process_chunks",
    "read_texts",
    "run_corpus",
    "use_pipeline",
]
