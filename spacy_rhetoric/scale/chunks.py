"""The unit of work of a corpus run: one chunk of files -> one shard.

``process_chunks`` is the only function that touches texts: the local backend runs it
in-process over all chunks (one ``nlp.pipe`` stream), the Dask backend ships one chunk
per task to the workers (``process_chunk``). It reads the files one at a time, streams
them through ``nlp.pipe`` and writes ``shard-NNNNN.spacy`` (DocBin, one doc per file,
the source path in ``doc.user_data["file"]``) and ``shard-NNNNN.jsonl`` (one record of
annotations per doc, same order), so memory is bounded by about one shard whatever the
corpus size. Files that cannot be used are counted as skips with reasons. Once a shard's
files are in place, the same process writes the chunk's completion record (see
``records``), which ``--resume`` relies on.
"""

import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from ..textio import InputError, read_text
from .annotations import count_words, doc_record
from .pipeline import PipelineSpec, cached_pipeline, is_cached
from .records import commit_file, write_chunk_record

SHARD_PREFIX = "shard-"


@dataclass(frozen=True)
class RunSettings:
    """Everything a worker needs to process a chunk (picklable).

    pipeline (PipelineSpec): the pipeline to run.
    output_dir (str): where shards are written (on a cluster: a path every worker sees).
    batch_size (int): ``nlp.pipe`` batch size.
    n_process (int): ``nlp.pipe`` processes (local backend only; Dask: 1 per worker).
    encoding (str): the text files' encoding.
    docbin (bool): write ``shard-NNNNN.spacy``.
    jsonl (bool): write ``shard-NNNNN.jsonl``.
    """

    pipeline: PipelineSpec
    output_dir: str
    batch_size: int = 64
    n_process: int = 1
    encoding: str = "utf-8"
    docbin: bool = True
    jsonl: bool = True


@dataclass(frozen=True)
class Chunk:
    """A slice of the corpus: ``index`` names its shard, ``paths`` are its files."""

    index: int
    paths: Tuple[str, ...]

    @property
    def shard_name(self) -> str:
        return f"{SHARD_PREFIX}{self.index:05d}"


def shard_files(chunk: Chunk, settings: RunSettings) -> List[str]:
    """The names of the shard files a finished chunk has, e.g. ["shard-00003.spacy",
    "shard-00003.jsonl"] (in the order ``ShardWriter.close`` writes them)."""
    suffixes = [".spacy"] * settings.docbin + [".jsonl"] * settings.jsonl
    return [chunk.shard_name + suffix for suffix in suffixes]


def make_chunks(paths: Sequence[Path], size: int) -> List[Chunk]:
    """Cut a file list into chunks of ``size`` files (the last one may be smaller).

    paths (Sequence[Path]): the files, in the order their docs should be written.
    size (int): files per chunk (= at most docs per shard).
    RETURNS (List[Chunk]): the chunks, numbered from 0.
    """
    if size < 1:
        raise ValueError(f"shard size must be at least 1, got {size}.")
    return [
        Chunk(index, tuple(str(path) for path in paths[start : start + size]))
        for index, start in enumerate(range(0, len(paths), size))
    ]


def rss_mb() -> float:
    """This process's resident memory in MB (peak RSS where psutil is missing)."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_texts(
    paths: Iterable[Union[str, Path]],
    encoding: str,
    max_length: int,
    skip: Callable[[str, str, str], None],
) -> Iterator[Tuple[str, str]]:
    """Read text files one at a time, reporting the ones that cannot be used.

    For streaming many files into ``nlp.pipe(..., as_tuples=True)``: nothing is read
    before it is needed, and a bad file costs one ``skip`` call, not the run.

    paths (Iterable[Union[str, Path]]): the files.
    encoding (str): their encoding.
    max_length (int): longest usable text (``nlp.max_length``).
    skip (Callable[[str, str, str], None]): called with (path, kind, reason) for each
        file left out; kind is "unreadable" (missing, unreadable or not valid in
        ``encoding``), "empty" or "too_long".
    YIELDS (Tuple[str, str]): (text, path) of every usable file, in order.
    """
    for path in paths:
        path = str(path)
        try:
            text = read_text(Path(path), encoding=encoding)
        except InputError as err:
            skip(path, "unreadable", str(err))
            continue
        if not text.strip():
            skip(path, "empty", f"{path} contains no text.")
            continue
        if len(text) > max_length:
            skip(
                path,
                "too_long",
                f"{path} has {len(text)} characters, more than nlp.max_length "
                f"({max_length}): split the file, or raise max_length if the pipeline "
                "has no parser or NER (memory grows with length).",
            )
            continue
        yield text, path


class ShardWriter:
    """Collects one chunk's docs and skips and writes its shard files on ``close``.

    The JSONL is written as docs arrive; the DocBin (at most one shard of docs) is kept
    in memory and written, like the JSONL, under a temporary name that is renamed when
    complete, so a crashed run never leaves a shard that looks finished.
    """

    def __init__(self, chunk: Chunk, settings: RunSettings) -> None:
        self.chunk = chunk
        self.out_dir = Path(settings.output_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.docbin = DocBin(store_user_data=True) if settings.docbin else None
        self.jsonl_path = self.out_dir / f"{chunk.shard_name}.jsonl"
        self.jsonl_tmp = self.jsonl_path.with_suffix(".jsonl.tmp")
        self.jsonl = self.jsonl_tmp.open("w", encoding="utf8") if settings.jsonl else None
        self.skipped: List[Dict[str, str]] = []
        self.docs = self.tokens = self.words = 0

    def add(self, doc: Doc, path: str) -> None:
        self.docs += 1
        self.tokens += len(doc)
        self.words += count_words(doc)
        if self.jsonl is not None:
            self.jsonl.write(srsly.json_dumps(doc_record(doc, path)) + "\n")
        if self.docbin is not None:
            doc.user_data["file"] = path
            self.docbin.add(doc)

    def skip(self, path: str, kind: str, reason: str) -> None:
        self.skipped.append({"file": path, "kind": kind, "reason": reason})

    def close(self) -> Dict[str, Any]:
        shards: List[str] = []
        if self.docbin is not None:
            spacy_path = self.out_dir / f"{self.chunk.shard_name}.spacy"
            spacy_tmp = spacy_path.with_suffix(".spacy.tmp")
            self.docbin.to_disk(spacy_tmp)
            commit_file(spacy_tmp, spacy_path)
            shards.append(spacy_path.name)
            self.docbin = None
        if self.jsonl is not None:
            self.jsonl.close()
            commit_file(self.jsonl_tmp, self.jsonl_path)
            shards.append(self.jsonl_path.name)
        return {
            "chunk": self.chunk.index,
            "files": len(self.chunk.paths),
            "docs": self.docs,
            "tokens": self.tokens,
            "words": self.words,
            "skipped": self.skipped,
            "shards": shards,
        }

    def abort(self) -> None:
        if self.jsonl is not None:
            self.jsonl.close()
            self.jsonl_tmp.unlink(missing_ok=True)


def pipeline_info(nlp: Language) -> Dict[str, Any]:
    """What ran: language, name, version and components of the pipeline."""
    return {
        "lang": nlp.lang,
        "name": f"{nlp.meta.get('lang', nlp.lang)}_{nlp.meta.get('name', '')}",
        "version": nlp.meta.get("version"),
        "pipe_names": list(nlp.pipe_names),
    }


def process_chunks(
    chunks: Sequence[Chunk],
    settings: RunSettings,
    progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Dict[str, Any]]:
    """Process chunks of files with one ``nlp.pipe`` stream and write one shard per chunk.

    All chunks go through a single ``nlp.pipe`` call, so with ``n_process > 1`` the worker
    processes start once per call, not once per shard. Docs come back in input order; a
    shard is written as soon as the first doc of a later chunk arrives, so at most the
    chunks that ``nlp.pipe`` is reading ahead are held in memory.

    chunks (Sequence[Chunk]): the chunks, in order.
    settings (RunSettings): pipeline, output and ``nlp.pipe`` settings.
    progress (Optional[Callable[[int], None]]): called with 1 for every file done
        (processed or skipped); in-process runs use it for the progress bar.
    YIELDS (Dict[str, Any]): per chunk, in order, its completion record (written to
        OUTPUT_DIR/shard-NNNNN.done.json once its shard files are complete), with
        JSON-serializable counts: chunk, files, docs, tokens, words, skipped (list of
        {"file", "kind", "reason"}), shards, seconds (since the previous shard; the
        first includes load_seconds, loading the pipeline), loaded_pipeline (False: the
        worker's cached copy), rss_mb, worker, pipeline, paths (the input files) and
        shard_bytes ({shard file: size in bytes}).
    """
    start = time.perf_counter()
    loaded_here = not is_cached(settings.pipeline)
    nlp = cached_pipeline(settings.pipeline)
    load_seconds = time.perf_counter() - start
    writers: Dict[int, ShardWriter] = {}

    def texts() -> Iterator[Tuple[str, Tuple[int, str]]]:
        for chunk in chunks:
            writer = writers[chunk.index] = ShardWriter(chunk, settings)

            def skip(path: str, kind: str, reason: str, writer: ShardWriter = writer) -> None:
                writer.skip(path, kind, reason)
                if progress is not None:
                    progress(1)

            for text, path in read_texts(chunk.paths, settings.encoding, nlp.max_length, skip):
                yield text, (chunk.index, path)

    last = start
    position = 0  # the next chunk to close

    def close_next() -> Dict[str, Any]:
        nonlocal last, position
        chunk = chunks[position]
        result = writers.pop(chunk.index).close()
        now = time.perf_counter()
        result.update(
            seconds=now - last,
            load_seconds=load_seconds if position == 0 else 0.0,
            loaded_pipeline=loaded_here and position == 0,
            rss_mb=rss_mb(),
            pipeline=pipeline_info(nlp),
            worker=f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}",
        )
        last = now
        position += 1
        return write_chunk_record(Path(settings.output_dir), chunk.shard_name, chunk.paths, result)

    try:
        docs = nlp.pipe(
            texts(), as_tuples=True, batch_size=settings.batch_size, n_process=settings.n_process
        )
        for doc, (index, path) in docs:
            while chunks[position].index != index:
                yield close_next()
            writers[index].add(doc, path)
            if progress is not None:
                progress(1)
        while position < len(chunks):
            if chunks[position].index not in writers:  # never reached: no texts at all
                writers[chunks[position].index] = ShardWriter(chunks[position], settings)
            yield close_next()
    finally:
        for writer in writers.values():
            writer.abort()


def process_chunk(
    chunk: Chunk,
    settings: RunSettings,
    progress: Optional[Callable[[int], None]] = None,
) -> Dict[str, Any]:
    """Process one chunk of files and write its shard (one Dask task).

    RETURNS (Dict[str, Any]): the chunk's completion record (see ``process_chunks``).
    """
    (result,) = process_chunks([chunk], settings, progress)
    return result
