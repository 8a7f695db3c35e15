"""Registered architecture of the parallelism tagger:
tok2vec (+ repetition features) -> optional BiLSTM -> linear -> constrained CRF per stratum.

The torch network is built lazily in ``init`` because its output width and the
tagset's transition constraints are only known once the component has its labels;
the component stores them in ``model.attrs`` before initializing the model.
"""

import io
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy
import torch
from spacy.attrs import LOWER, SUFFIX
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchShim, PyTorchWrapper_v3, torch2xp, xp2torch
from thinc.types import Floats2d

from .features import N_FEATURES, batch_repetition_features, language_features
from .network import EnsembleNetwork, ParallelismNetwork

# (docs, gold or None, decoding) -> loss (training) or {"paths": per-stratum tag
# paths, "branches": per-stratum linked branches}. gold = {"tags": [S, B, T] array,
# "branches": per stratum, per doc, (start, end, is later, antecedent index)}. decoding:
# the outside penalty, subtracted from the outermost stratum's "O" score at prediction
# only, or a dict of ``network.decode``'s options ("outside_penalty", "confidence",
# "review_penalties").
InT = Tuple[List[Doc], Optional[Dict[str, Any]], Union[float, Dict[str, Any]]]

# the precisions the head's torch weights can be saved in (they always load into float32)
WEIGHTS_DTYPES = ("float32", "float16")


@registry.architectures("spacy-rhetoric.ParallelismTagger.v1")
def build_parallelism_tagger(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.2,
    repetition_features: bool = True,
    attention_heads: int = 0,
    linker_width: int = 0,
    max_back: int = 8,
    languages: Optional[List[str]] = None,
    language_dropout: float = 0.0,
) -> Model[InT, Any]:
    """Build the parallelism tagger model: one head (``ParallelismTagger.v2`` with
    ``members = 1``; the arguments are v2's)."""
    return build_parallelism_ensemble(
        tok2vec,
        hidden_width,
        depth,
        dropout,
        repetition_features,
        attention_heads,
        linker_width,
        max_back,
        members=1,
        languages=languages,
        language_dropout=language_dropout,
    )


@registry.architectures("spacy-rhetoric.ParallelismTagger.v2")
def build_parallelism_ensemble(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.2,
    repetition_features: bool = True,
    attention_heads: int = 0,
    linker_width: int = 0,
    max_back: int = 8,
    members: int = 1,
    languages: Optional[List[str]] = None,
    language_dropout: float = 0.0,
) -> Model[InT, Any]:
    """Build the parallelism tagger model, with one head or an ensemble of heads.

    tok2vec (Model[List[Doc], List[Floats2d]]): the token-to-vector layer.
    hidden_width (int): BiLSTM width per direction (0: no encoder; the emission
        layers read the token vectors directly).
    depth (int): BiLSTM layers.
    dropout (float): dropout around the encoder.
    repetition_features (bool): append features that mark nearby repeated forms and endings.
    attention_heads (int): heads of a residual self-attention layer after the encoder (0: none).
    linker_width (int): width of the pairwise branch linker (0: links are part of the
        tags; > 0: the CRF predicts link-free structure tags and the linker chooses
        each later branch's antecedent). Must match the component's ``links`` setting.
    max_back (int): candidate antecedents per branch for the linker.
    members (int): heads decoded together as an ensemble (their emission, transition
        and link scores averaged), each with its own copy of ``tok2vec``; copies of one
        frozen encoder share its states. 1: a single head. Separately trained
        pipelines become one ensemble with ``python -m spacy_rhetoric parallelism
        ensemble``; trained from scratch, each member learns on its own loss.
    languages (Optional[List[str]]): the languages the head is told apart (e.g. ["la",
        "zh"] for a head trained on ASP and PSE-I): each token's input gets a one-hot of
        its doc's language (``doc.user_data["lang"]``, else ``doc.lang_``), zeros for
        any other language. None or []: no language input.
    language_dropout (float): in training, the probability that a doc's language is
        read as unknown, so that the zero input (every other language: the head's
        zero-shot use) is trained too.
    RETURNS (Model[Tuple[List[Doc], Optional[Dict[str, Any]]], Any]): the model. In
        training (with gold) it returns the negative log-likelihood of the gold tags
        (plus the linker's loss); in prediction, {"paths": per stratum the best tag
        path of each doc, "branches": with a linker, the chosen antecedents}.
    """
    if members < 1:
        raise ValueError(f"ParallelismTagger.v2: members must be >= 1, got {members}")
    languages = list(languages or [])
    if len(set(languages)) != len(languages) or not 0.0 <= language_dropout <= 1.0:
        raise ValueError(
            "ParallelismTagger.v2: languages must be distinct and language_dropout in "
            f"[0, 1], got {languages} and {language_dropout}"
        )
    # copied before any weights exist: each member gets its own layer mix or tok2vec
    tok2vecs = [tok2vec] + [tok2vec.copy() for _ in range(members - 1)]
    refs = {member_ref(m): layer for m, layer in enumerate(tok2vecs)}
    return Model(
        "parallelism_tagger",
        forward,
        init=init,
        layers=tok2vecs,
        refs=refs,
        dims={"nO": None},
        attrs={
            "hidden_width": hidden_width,
            "depth": depth,
            "dropout": dropout,
            "repetition_features": repetition_features,
            "attention_heads": attention_heads,
            "linker_width": linker_width,
            "max_back": max_back,
            "members": members,
            "languages": languages,
            "language_dropout": float(language_dropout),
            "n_strata": 1,
            "constraints": None,
            "label_kinds": None,
        },
    )


def member_ref(m: int) -> str:
    """RETURNS (str): the ref name of member ``m``'s tok2vec ("tok2vec" for the first)."""
    return "tok2vec" if m == 0 else f"tok2vec_{m}"


def member_tok2vecs(model: Model) -> List[Model]:
    """RETURNS (List[Model]): the tok2vec of each member, the first one first."""
    return [model.get_ref(member_ref(m)) for m in range(model.attrs.get("members", 1))]


def init(model: Model, X: Optional[InT] = None, Y: Any = None) -> None:
    for tok2vec in member_tok2vecs(model):
        tok2vec.initialize(X=X[0] if X is not None else None)
    if model.has_ref("head"):
        return
    if model.attrs["constraints"] is None or not model.has_dim("nO") or model.get_dim("nO") is None:
        raise ValueError(
            "parallelism_tagger model: set the labels (nO) and the tagset constraints "
            "before initializing; the component does this in initialize()."
        )
    tok2vec = model.get_ref("tok2vec")
    n_input = tok2vec.get_dim("nO") + (N_FEATURES if model.attrs["repetition_features"] else 0)
    n_input += len(model.attrs["languages"])
    networks = [
        ParallelismNetwork(
            n_input=n_input,
            n_labels=model.get_dim("nO"),
            n_strata=model.attrs["n_strata"],
            constraints=model.attrs["constraints"],
            hidden=model.attrs["hidden_width"],
            depth=model.attrs["depth"],
            dropout=model.attrs["dropout"],
            attention_heads=model.attrs["attention_heads"],
            label_kinds=model.attrs["label_kinds"],
            linker_width=model.attrs["linker_width"],
            max_back=model.attrs["max_back"],
        )
        for _ in range(model.attrs.get("members", 1))
    ]
    network = networks[0] if len(networks) == 1 else EnsembleNetwork(networks)
    head = PyTorchWrapper_v3(
        network,
        convert_inputs=_convert_inputs,
        convert_outputs=_convert_outputs,
        serialize_model=partial(serialize_head, model.attrs),
    )
    model._layers.append(head)
    model.set_ref("head", head)


def set_weights_dtype(model: Model, dtype: str) -> None:
    """Save the head's torch weights in ``dtype`` from now on: "float16" halves the
    saved model (an ensemble of three heads: 11.8 -> 5.9 MB); the weights load back
    into float32, rounded to float16's precision.

    RAISES ValueError: a dtype not in WEIGHTS_DTYPES.
    """
    if dtype not in WEIGHTS_DTYPES:
        raise ValueError(
            f"parallelism_tagger: weights_dtype {dtype!r} is not one of {', '.join(WEIGHTS_DTYPES)}"
        )
    model.attrs["weights_dtype"] = dtype


def serialize_head(attrs: Dict[str, Any], network: torch.nn.Module) -> bytes:
    """RETURNS (bytes): the head's state dict (``torch.save``), its floating-point
    tensors in ``attrs["weights_dtype"]`` (float32 without it)."""
    state = network.state_dict()
    if attrs.get("weights_dtype", "float32") == "float16":
        state = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def member_vectors(
    tok2vecs: List[Model], docs: List[Doc], is_train: bool
) -> List[Tuple[List[Floats2d], Callable]]:
    """Each member's token vectors and backprop. Copies of an ``EncoderVectors`` layer
    share its frozen encoder's slot, so the members compute its states once."""
    slot = tok2vecs[0].attrs.get("frozen_encoder")
    if len(tok2vecs) > 1 and slot is not None:
        if all(tok2vec.attrs.get("frozen_encoder") is slot for tok2vec in tok2vecs):
            states = slot.states(tok2vecs[0], docs)
            return [slot.mix(tok2vec, states, is_train) for tok2vec in tok2vecs]
    return [tok2vec(docs, is_train) for tok2vec in tok2vecs]


def forward(model: Model, inputs: InT, is_train: bool) -> Tuple[Any, Callable]:
    docs, gold, decoding = inputs
    tok2vecs = member_tok2vecs(model)
    head = model.get_ref("head")
    vectors = member_vectors(tok2vecs, docs, is_train)
    width = tok2vecs[0].get_dim("nO")
    features = input_features(model, docs, is_train)
    X: List[List[Floats2d]] = []
    for member_X, _ in vectors:
        if features is not None:
            member_X = [
                model.ops.xp.hstack((v, model.ops.asarray2f(f))) for v, f in zip(member_X, features)
            ]
        X.append(member_X)
    keys = token_keys(docs) if model.attrs["linker_width"] else None
    options = dict(decoding) if isinstance(decoding, dict) else {"outside_penalty": decoding}
    if is_train:
        options = {"outside_penalty": 0.0}
    output, backprop_head = head((X, gold, keys, options), is_train)

    def backprop(d_output: Any) -> Any:
        dX = backprop_head(d_output)  # per member, per doc
        d_docs = [
            backprop_vectors([d[:, :width] for d in member_dX])
            for (_, backprop_vectors), member_dX in zip(vectors, dX, strict=True)
        ]
        return d_docs[0]

    return output, backprop


def input_features(model: Model, docs: List[Doc], is_train: bool) -> Optional[List[Any]]:
    """Per doc, the features appended to every member's token vectors (repetition, then
    language), or None where the model reads none."""
    parts = []
    if model.attrs["repetition_features"]:
        parts.append(batch_repetition_features(docs))
    languages = model.attrs["languages"]
    if languages:
        drop = model.attrs["language_dropout"] if is_train else 0.0
        parts.append(language_features(docs, languages, drop))
    if not parts:
        return None
    return [numpy.hstack(per_doc) for per_doc in zip(*parts, strict=True)]


def token_keys(docs: List[Doc]) -> List[List[Tuple[int, int]]]:
    """Per doc, the (lowercase form, ending) hashes of its tokens, for the linker."""
    return [[tuple(row) for row in doc.to_array([LOWER, SUFFIX]).tolist()] for doc in docs]


def _convert_inputs(
    model: Model,
    inputs: Tuple[List[List[Floats2d]], Optional[Dict[str, Any]], Any, Dict[str, Any]],
    is_train: bool,
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], List[List[Floats2d]]]]:
    # X: per member, per doc [T, nI]. A single network reads [B, T, nI]; an ensemble
    # reads the members' inputs stacked, [M, B, T, nI].
    X, gold, keys, options = inputs
    lengths = [len(x) for x in X[0]]
    single = len(X) == 1
    if single:
        padded = model.ops.pad(X[0])  # [B, T, nI]
    else:
        padded = model.ops.xp.stack([model.ops.pad(member_X) for member_X in X])
    # onto the network's own device, not the current ops' default: a pipeline loaded on
    # the CPU keeps working after spacy.prefer_gpu()
    x = xp2torch(padded, requires_grad=is_train, device=model.shims[0].device)
    positions = torch.arange(padded.shape[-2], device=x.device)
    mask = positions[None, :] < torch.as_tensor(lengths, device=x.device)[:, None]  # [B, T]
    kwargs: Dict[str, Any] = {"keys": keys, **options}
    if gold is not None:
        kwargs["tags"] = torch.as_tensor(gold["tags"], dtype=torch.long, device=x.device)  # [S,B,T]
        kwargs["branches"] = gold.get("branches")

    def reverse(d_inputs: ArgsKwargs) -> List[List[Floats2d]]:
        d_padded = torch2xp(d_inputs.args[0])
        if single:
            d_padded = d_padded[None]
        return [[d[i, :length] for i, length in enumerate(lengths)] for d in d_padded]

    return ArgsKwargs(args=(x, mask), kwargs=kwargs), reverse


def _convert_outputs(model: Model, inputs_outputs: Tuple[Any, Any], is_train: bool):
    _, output = inputs_outputs
    if isinstance(output, torch.Tensor):
        loss = output

        def backprop(d_loss: float) -> ArgsKwargs:
            grad = torch.tensor(float(d_loss), device=loss.device)
            return ArgsKwargs(args=(loss,), kwargs={"grad_tensors": grad})

        return float(loss.detach()), backprop
    return output, lambda d_output: ArgsKwargs(args=(), kwargs={})


def with_torch_averages(model: Model, params: Dict[Any, Any]) -> Dict[Any, Any]:
    """The optimizer's parameter averages in the keys ``Model.use_params`` reads for the
    torch head too. thinc's optimizer keys a torch parameter's average ``(shim id,
    name)``, but ``PyTorchShim.use_params`` looks for ``"pytorch_{id}_{name}"`` and loads
    a whole state dict: without this, ``use_averages = true`` would average the layer mix
    and silently leave the head as it is.

    model (Model): the tagger model.
    params (Dict): the optimizer's averages (``optimizer.averages``).
    RETURNS (Dict): params plus, per torch shim with averages, its full state dict
        (buffers and parameters without an average at their current values).
    """
    translated = dict(params)
    for node in model.walk():
        for shim in node.shims:
            if not isinstance(shim, PyTorchShim):
                continue
            averaged = {
                name: params[(shim.id, name)]
                for name, _ in shim._model.named_parameters()
                if (shim.id, name) in params
            }
            if not averaged:
                continue
            for name, tensor in shim._model.state_dict().items():
                value = averaged.get(name)
                if value is None:
                    value = torch2xp(tensor.detach().clone())
                translated[f"pytorch_{shim.id}_{name}"] = value.reshape(tuple(tensor.shape))
    return translated
