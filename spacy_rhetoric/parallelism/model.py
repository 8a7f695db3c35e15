"""Registered architecture of the parallelism tagger:
tok2vec (+ repetition features) -> optional BiLSTM -> linear -> constrained CRF per stratum.

The torch network is built lazily in ``init`` because its output width and the
tagset's transition constraints are only known once the component has its labels;
the component stores them in ``model.attrs`` before initializing the model.
"""

from typing import Any, Callable, List, Optional, Tuple

import numpy
import torch
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchWrapper_v2, torch2xp, xp2torch
from thinc.types import Floats2d

from .features import N_FEATURES, batch_repetition_features
from .network import ParallelismNetwork

# (docs, gold tags [S, B, T] or None) -> loss (training) or per-stratum tag paths
InT = Tuple[List[Doc], Optional[numpy.ndarray]]


@registry.architectures("spacy-rhetoric.ParallelismTagger.v1")
def build_parallelism_tagger(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    depth: int = 1,
    dropout: float = 0.2,
    repetition_features: bool = True,
) -> Model[InT, Any]:
    """Build the parallelism tagger model.

    tok2vec (Model[List[Doc], List[Floats2d]]): the token-to-vector layer.
    hidden_width (int): BiLSTM width per direction (0: no encoder; the emission
        layers read the token vectors directly).
    depth (int): BiLSTM layers.
    dropout (float): dropout around the encoder.
    repetition_features (bool): append features that mark nearby repeated forms and endings.
    RETURNS (Model[Tuple[List[Doc], Optional[numpy.ndarray]], Any]): the model. In
        training it returns the negative log-likelihood of the gold tags; in
        prediction, per stratum, the best tag path of each doc.
    """
    return Model(
        "parallelism_tagger",
        forward,
        init=init,
        layers=[tok2vec],
        refs={"tok2vec": tok2vec},
        dims={"nO": None},
        attrs={
            "hidden_width": hidden_width,
            "depth": depth,
            "dropout": dropout,
            "repetition_features": repetition_features,
            "n_strata": 1,
            "constraints": None,
        },
    )


def init(model: Model, X: Optional[InT] = None, Y: Any = None) -> None:
    tok2vec = model.get_ref("tok2vec")
    tok2vec.initialize(X=X[0] if X is not None else None)
    if model.has_ref("head"):
        return
    if model.attrs["constraints"] is None or not model.has_dim("nO") or model.get_dim("nO") is None:
        raise ValueError(
            "parallelism_tagger model: set the labels (nO) and the tagset constraints "
            "before initializing; the component does this in initialize()."
        )
    n_input = tok2vec.get_dim("nO") + (N_FEATURES if model.attrs["repetition_features"] else 0)
    network = ParallelismNetwork(
        n_input=n_input,
        n_labels=model.get_dim("nO"),
        n_strata=model.attrs["n_strata"],
        constraints=model.attrs["constraints"],
        hidden=model.attrs["hidden_width"],
        depth=model.attrs["depth"],
        dropout=model.attrs["dropout"],
    )
    head = PyTorchWrapper_v2(
        network, convert_inputs=_convert_inputs, convert_outputs=_convert_outputs
    )
    model._layers.append(head)
    model.set_ref("head", head)


def forward(model: Model, inputs: InT, is_train: bool) -> Tuple[Any, Callable]:
    docs, tags = inputs
    tok2vec = model.get_ref("tok2vec")
    head = model.get_ref("head")
    vectors, backprop_vectors = tok2vec(docs, is_train)
    width = tok2vec.get_dim("nO")
    if model.attrs["repetition_features"]:
        features = batch_repetition_features(docs)
        X = [model.ops.xp.hstack((v, model.ops.asarray2f(f))) for v, f in zip(vectors, features)]
    else:
        X = vectors
    output, backprop_head = head((X, tags), is_train)

    def backprop(d_output: Any) -> Any:
        dX = backprop_head(d_output)
        return backprop_vectors([d[:, :width] for d in dX])

    return output, backprop


def _convert_inputs(
    model: Model, inputs: Tuple[List[Floats2d], Optional[numpy.ndarray]], is_train: bool
) -> Tuple[ArgsKwargs, Callable[[ArgsKwargs], List[Floats2d]]]:
    X, tags = inputs
    lengths = [len(x) for x in X]
    padded = model.ops.pad(X)  # [B, T, nI]
    x = xp2torch(padded, requires_grad=is_train)
    mask = torch.arange(padded.shape[1])[None, :] < torch.as_tensor(lengths)[:, None]  # [B, T]
    kwargs = {}
    if tags is not None:
        kwargs["tags"] = torch.as_tensor(tags, dtype=torch.long)  # [S, B, T]

    def reverse(d_inputs: ArgsKwargs) -> List[Floats2d]:
        d_padded = torch2xp(d_inputs.args[0])
        return [d_padded[i, :length] for i, length in enumerate(lengths)]

    return ArgsKwargs(args=(x, mask), kwargs=kwargs), reverse


def _convert_outputs(model: Model, inputs_outputs: Tuple[Any, Any], is_train: bool):
    _, output = inputs_outputs
    if isinstance(output, torch.Tensor):
        loss = output

        def backprop(d_loss: float) -> ArgsKwargs:
            return ArgsKwargs(args=(loss,), kwargs={"grad_tensors": torch.tensor(float(d_loss))})

        return float(loss.detach()), backprop
    return output, lambda d_output: ArgsKwargs(args=(), kwargs={})
