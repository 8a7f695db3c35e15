"""What a corpus run leaves on disk besides its shards, so that it can be resumed.

- ``run.json``: the run's description (pipeline, shard size, encoding, outputs and the
  ordered input files), written before any chunk is processed. ``--resume`` continues a
  run only if it describes the same run.
- ``shard-NNNNN.done.json``: one completion record per chunk, written after the chunk's
  shard files were renamed into place, by the process that wrote them. It names the
  chunk's input files, its shard files with their sizes in bytes, and its counts. A
  shard without a record, or whose files no longer have the recorded sizes, is not
  finished: ``--resume`` deletes it and processes the chunk again.

Every file here, like every shard file, is written under a temporary name (``.tmp``),
flushed to disk and renamed (``os.replace``), so a killed process leaves either the
complete file or none.
"""

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import srsly

RUN_NAME = "run.json"
RECORD_SUFFIX = ".done.json"
# the settings that decide what a run writes; batch size, processes and backend do not
DESCRIPTION_KEYS = (
    "model",
    "lang",
    "add_pipes",
    "code",
    "shard_size",
    "encoding",
    "docbin",
    "jsonl",
    "files",
)


def commit_file(tmp: Path, path: Path) -> None:
    """Flush the finished file ``tmp`` to disk and rename it to ``path``, so that
    ``path`` is either absent or complete, even after a crash.

    tmp (Path): the file as written, e.g. shard-00003.jsonl.tmp.
    path (Path): its final name, e.g. shard-00003.jsonl.
    """
    with tmp.open("rb") as file:
        os.fsync(file.fileno())
    os.replace(tmp, path)


def write_json_atomic(path: Union[str, Path], data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that readers see all of it or nothing
    (written to ``<path>.tmp`` first, see ``commit_file``).

    path (Union[str, Path]): the file to write.
    data (Any): JSON-serializable data.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(srsly.json_dumps(data, indent=2) + "\n", encoding="utf8")
    commit_file(tmp, path)


def run_description(
    paths: Sequence[Union[str, Path]], settings: Any, shard_size: int
) -> Dict[str, Any]:
    """The settings that decide a run's output, as written to ``run.json``.

    paths (Sequence[Union[str, Path]]): the input files, in order.
    settings (Any): the run's ``RunSettings`` (scale.chunks; not imported here, since
        chunks writes the records).
    shard_size (int): files per chunk.
    RETURNS (Dict[str, Any]): the description (plain JSON data).
    """
    spec = settings.pipeline
    return {
        "model": spec.model,
        "lang": spec.lang,
        "add_pipes": list(spec.add_pipes),
        "code": spec.code,
        "shard_size": shard_size,
        "encoding": settings.encoding,
        "docbin": settings.docbin,
        "jsonl": settings.jsonl,
        "files": [str(path) for path in paths],
    }


def write_run_description(output_dir: Path, description: Dict[str, Any]) -> None:
    """Write ``description`` to OUTPUT_DIR/run.json (atomically)."""
    write_json_atomic(output_dir / RUN_NAME, description)


def check_run_description(output_dir: Path, description: Dict[str, Any]) -> None:
    """Make sure OUTPUT_DIR/run.json describes the run ``description`` describes.

    output_dir (Path): the output directory of the run to resume.
    description (Dict[str, Any]): this run's description (see ``run_description``).
    RAISES ValueError: run.json is missing or unreadable, or a setting differs (the
        message names the first one).
    """
    path = output_dir / RUN_NAME
    if not path.is_file():
        raise ValueError(
            f"Cannot resume: {path} not found, so {output_dir} holds no run started with "
            "this version (run.json is written when a run starts). Start a new run, with "
            "--overwrite to replace what is there."
        )
    try:
        old = srsly.read_json(path)
    except ValueError as err:
        raise ValueError(f"Cannot resume: {path} is not valid JSON ({err}).") from None
    if not isinstance(old, dict):
        raise ValueError(f"Cannot resume: {path} is not a run description (a JSON object).")
    new = srsly.json_loads(srsly.json_dumps(description))
    for key in DESCRIPTION_KEYS:
        if old.get(key) != new[key]:
            difference = describe_difference(key, old.get(key), new[key])
            raise ValueError(
                f"Cannot resume: {path} describes a different run ({difference}). "
                "Resume with the same settings, or start a new run in another directory "
                "(or with --overwrite)."
            )


def describe_difference(key: str, old: Any, new: Any) -> str:
    """One phrase saying how setting ``key`` differs between run.json and this run."""
    if key != "files" or not isinstance(old, list):
        return f"{key} {old!r} there, {new!r} now"
    for i, (before, now) in enumerate(zip(old, new)):
        if before != now:
            return f"input file #{i + 1} is {before} there, {now} now"
    return f"{len(old)} input files there, {len(new)} now"


def record_path(output_dir: Path, shard_name: str) -> Path:
    """Where the completion record of the chunk with shard ``shard_name`` lives."""
    return output_dir / f"{shard_name}{RECORD_SUFFIX}"


def write_chunk_record(
    output_dir: Path, shard_name: str, paths: Sequence[str], result: Dict[str, Any]
) -> Dict[str, Any]:
    """Record that a chunk is finished, after its shard files are in place.

    output_dir (Path): the run's output directory.
    shard_name (str): the chunk's shard name, e.g. "shard-00003".
    paths (Sequence[str]): the chunk's input files.
    result (Dict[str, Any]): the chunk's counts (see ``chunks.process_chunks``); its
        "shards" are the names of the shard files, which must exist.
    RETURNS (Dict[str, Any]): the record: ``result`` plus "paths" and "shard_bytes"
        ({file name: size in bytes}).
    """
    sizes = {name: (output_dir / name).stat().st_size for name in result["shards"]}
    record = {**result, "paths": list(paths), "shard_bytes": sizes}
    write_json_atomic(record_path(output_dir, shard_name), record)
    return record


def read_chunk_record(output_dir: Path, chunk: Any, shards: List[str]) -> Optional[Dict[str, Any]]:
    """The completion record of ``chunk`` if the chunk is finished and intact.

    output_dir (Path): the run's output directory.
    chunk (Any): the ``Chunk`` (scale.chunks): its index, paths and shard name.
    shards (List[str]): the shard files the chunk must have, e.g. ["shard-00003.spacy",
        "shard-00003.jsonl"].
    RETURNS (Optional[Dict[str, Any]]): the record, or None if it is missing or unreadable, names
        other files, or a shard file is missing or has another size than recorded.
    """
    path = record_path(output_dir, chunk.shard_name)
    try:
        record = srsly.read_json(path)
    except (OSError, ValueError):
        return None
    if (
        not isinstance(record, dict)
        or record.get("chunk") != chunk.index
        or record.get("paths") != list(chunk.paths)
        or record.get("shards") != shards
        or not isinstance(record.get("shard_bytes"), dict)
    ):
        return None
    for name in shards:
        shard = output_dir / name
        if not shard.is_file() or shard.stat().st_size != record["shard_bytes"].get(name):
            return None
    return record
