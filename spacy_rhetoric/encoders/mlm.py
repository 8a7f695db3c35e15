"""Continued masked-language-model pretraining of the multilingual encoder on raw text
(the GPU recipe's first step: the Latin of the data mirror, spelled as ASP spells it),
written as a new encoder directory that ``AdaptedEncoder.v1`` and ``EncoderVectors.v1``
take as their ``name``.

multilingual-e5-small ships no language-model head: a fresh one (a dense layer with
layer norm, and an output bias) is trained with the encoder, its output matrix tied to
the word embeddings. The word embeddings (96 M of the 118 M parameters) stay frozen, as
in the fine-tuning recipes; the layers below ``trainable_layers`` do too.
"""

import hashlib
import json
import math
import random
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence

import srsly

from .convert import ENCODER_NAME, encoder_path

INFO_FILE = "spacy_rhetoric_encoder.json"


def read_texts(paths: Sequence[Path]) -> Iterator[str]:
    """The texts of JSONL files ({"text": ...} per line, as ``corpus raw-text`` writes
    them), of plain .txt files (one text per line) and of DocBins (.spacy, one text
    per doc: a training split's own text); directories are searched.

    RAISES (ValueError): a JSONL line without a "text" string (file and line named).
    """
    for path in paths:
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            if file.suffix == ".spacy":
                yield from _docbin_texts(file)
                continue
            if file.suffix not in (".jsonl", ".txt"):
                continue
            with file.open(encoding="utf8") as lines:
                for n, line in enumerate(lines, 1):
                    if not line.strip():
                        continue
                    if file.suffix == ".txt":
                        yield line.strip()
                        continue
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as error:
                        raise ValueError(f"{file}:{n}: not JSON ({error.msg})") from None
                    if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                        raise ValueError(f'{file}:{n}: expected {{"text": "..."}}')
                    yield record["text"]


def _docbin_texts(path: Path) -> Iterator[str]:
    import spacy
    from spacy.tokens import DocBin

    try:
        docs = DocBin().from_disk(path).get_docs(spacy.blank("xx").vocab)
    except Exception as error:  # a DocBin that does not unpack
        raise ValueError(f"{path}: not a spaCy DocBin ({type(error).__name__})") from None
    for doc in docs:
        if doc.text.strip():
            yield doc.text


def blocks(tokenizer, texts: Iterable[str], length: int) -> List[List[int]]:
    """Concatenate the texts' word pieces (each text closed by </s>) and cut them into
    blocks of ``length`` pieces, each framed by <s> and </s>: every piece is used once.

    RETURNS (List[List[int]]): the blocks (the last one may be shorter).
    """
    stream: List[int] = []
    out: List[List[int]] = []
    inner = length - 2
    bos, eos = tokenizer.cls_token_id, tokenizer.sep_token_id
    for text in texts:
        stream.extend(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
        stream.append(eos)
        while len(stream) >= inner:
            out.append([bos, *stream[:inner], eos])
            stream = stream[inner:]
    if stream:
        out.append([bos, *stream, eos])
    return out


def mask_pieces(input_ids, special, vocab_size: int, mask_id: int, probability: float, generator):
    """BERT's masking: ``probability`` of the non-special pieces become targets; of
    those 80% are replaced by <mask>, 10% by a random piece, 10% kept.

    input_ids (torch.Tensor): [B, T] piece ids (not changed).
    special (torch.Tensor): [B, T] bool, pieces never masked (<s>, </s>, padding).
    RETURNS (Tuple[torch.Tensor, torch.Tensor]): the masked ids and the labels (-100
        where there is no target).
    """
    import torch

    chosen = (torch.rand(input_ids.shape, generator=generator) < probability) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    draw = torch.rand(input_ids.shape, generator=generator)
    masked = input_ids.clone()
    masked[chosen & (draw < 0.8)] = mask_id
    randomized = chosen & (draw >= 0.8) & (draw < 0.9)
    masked[randomized] = torch.randint(
        vocab_size, (int(randomized.sum()),), generator=generator, dtype=input_ids.dtype
    )
    return masked, labels


def continue_pretraining(
    texts: Iterable[str],
    output: Path,
    name: str = ENCODER_NAME,
    steps: int = 1000,
    batch_size: int = 32,
    length: int = 128,
    learning_rate: float = 5e-5,
    warmup: float = 0.06,
    mask_probability: float = 0.15,
    trainable_layers: int = 12,
    seed: int = 0,
    device: Optional[str] = None,
    log: Optional[Callable[[Dict[str, float]], None]] = None,
    log_every: int = 50,
) -> Dict[str, object]:
    """Train the encoder with masked-language modelling and save it to ``output``.

    texts (Iterable[str]): the training text.
    output (Path): the new encoder directory (a BertModel, its tokenizer, and
        spacy_rhetoric_encoder.json naming the base and the run).
    name (str): the encoder to start from (a directory or "multilingual-e5-small").
    steps (int): optimizer steps; the blocks are shuffled and cycled.
    batch_size (int): blocks per step.
    length (int): pieces per block, <s> and </s> included.
    learning_rate (float): AdamW's peak learning rate (linear warm-up, linear decay).
    warmup (float): the fraction of steps spent warming up.
    mask_probability (float): the fraction of pieces predicted.
    trainable_layers (int): the top layers trained (the word embeddings never are).
    seed (int): the seed of the order and of the masking.
    device (Optional[str]): "cuda", "cpu" (default: cuda when available).
    log (Optional[Callable]): called every ``log_every`` steps with the step, loss and
        seconds.
    RETURNS (Dict[str, object]): the run's summary (also in the info file).
    RAISES (ValueError): no text, or settings out of range.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    if steps < 1 or batch_size < 1 or not 8 <= length <= 512:
        raise ValueError("pretrain-encoder: need steps >= 1, batch size >= 1, 8 <= length <= 512")
    torch.manual_seed(seed)
    source = encoder_path(name)
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    config = BertConfig.from_pretrained(str(source))
    model = BertForMaskedLM.from_pretrained(str(source), config=config)
    n_layers = config.num_hidden_layers
    if not 1 <= trainable_layers <= n_layers:
        raise ValueError(f"pretrain-encoder: trainable_layers must be 1..{n_layers}")
    data = blocks(tokenizer, texts, length)
    if not data:
        raise ValueError("pretrain-encoder: the sources hold no text")
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model.to(device).train()
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    for layer in model.bert.encoder.layer[: n_layers - trainable_layers]:
        for param in layer.parameters():
            param.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.01)
    n_warmup = max(1, int(warmup * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min((s + 1) / n_warmup, max(0.0, (steps - s) / max(1, steps - n_warmup))),
    )
    generator = torch.Generator().manual_seed(seed)
    order = list(range(len(data)))
    rng = random.Random(seed)
    rng.shuffle(order)
    position = 0
    start = time.perf_counter()
    losses: List[float] = []
    for step in range(steps):
        batch = []
        for _ in range(batch_size):
            if position == len(order):
                rng.shuffle(order)
                position = 0
            batch.append(data[order[position]])
            position += 1
        width = max(len(b) for b in batch)
        ids = torch.full((len(batch), width), tokenizer.pad_token_id, dtype=torch.long)
        for row, block in enumerate(batch):
            ids[row, : len(block)] = torch.as_tensor(block)
        attention = ids != tokenizer.pad_token_id
        special = (
            (ids == tokenizer.pad_token_id)
            | (ids == tokenizer.cls_token_id)
            | (ids == tokenizer.sep_token_id)
        )
        masked, labels = mask_pieces(
            ids, special, config.vocab_size, tokenizer.mask_token_id, mask_probability, generator
        )
        # the 250k-piece output layer only at the masked positions (not every position)
        hidden = model.bert(
            input_ids=masked.to(device), attention_mask=attention.to(device)
        ).last_hidden_state
        targets = labels.to(device)
        chosen = targets != -100
        loss = torch.nn.functional.cross_entropy(model.cls(hidden[chosen]), targets[chosen])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        if log is not None and ((step + 1) % log_every == 0 or step + 1 == steps):
            recent = losses[-log_every:]
            log(
                {
                    "step": step + 1,
                    "loss": sum(recent) / len(recent),
                    "seconds": time.perf_counter() - start,
                }
            )
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    model.bert.save_pretrained(str(output))
    tokenizer.save_pretrained(str(output))
    digest = hashlib.sha256()
    for weights in sorted(output.glob("*.safetensors")):
        digest.update(weights.read_bytes())
    base_info = source / INFO_FILE
    summary: Dict[str, object] = {
        "source_sha256": digest.hexdigest(),
        "base": str(name),
        "base_source_sha256": json.loads(base_info.read_text())["source_sha256"]
        if base_info.is_file()
        else None,
        "continued_pretraining": {
            "steps": steps,
            "batch_size": batch_size,
            "length": length,
            "learning_rate": learning_rate,
            "mask_probability": mask_probability,
            "trainable_layers": trainable_layers,
            "seed": seed,
            "blocks": len(data),
            "pieces": sum(len(b) for b in data),
            "first_loss": losses[0],
            "last_loss": sum(losses[-min(50, len(losses)) :]) / min(50, len(losses)),
            "seconds": time.perf_counter() - start,
            "device": str(device),
            "epochs": steps * batch_size / len(data),
        },
    }
    srsly.write_json(output / INFO_FILE, summary)
    if not math.isfinite(losses[-1]):
        raise ValueError(f"pretrain-encoder: the loss diverged ({losses[-1]})")
    return summary
