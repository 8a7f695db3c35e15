"""A narrower multilingual-e5-small for the parallelism packages (#26 speed): the
encoder's first layers with each feed-forward cut to fewer units, distilled from the
full layers, and the shipped heads run unchanged on its states.

On CPUs without bfloat16 the encoder is 68-85 % of a parallelism package's time and
its matrix products already run at the CPU's bare-GEMM speed, so only fewer FLOPs make
it faster. The feed-forward is two thirds of a layer's FLOPs. ``train`` keeps, in each
of the first ``--layers`` layers, the ``--ffn`` feed-forward units with the largest mean
|activation| x |output column| on the training text, then trains the cut layers (the
embeddings frozen) to reproduce the full layers' outputs, every layer's, per dimension
scaled by the teacher's sd, over the windows the packages read (256 pieces at stride
224) of the given *training* corpora only. ``evaluate`` runs packages with the student
in place of the encoder: EPM F1 on dev and test, and tokens/s (float32, cache off) in
alternating turns beside the same package with the full encoder.

    OMP_NUM_THREADS=2 python benchmarks/encoder_distill.py train \
        --corpus corpus/pse/train.spacy= --corpus corpus/asp/train.spacy=latin \
        --layers 8 --ffn 768 --minutes 45 --output training/encoder-distill/ffn768.pt
    python benchmarks/encoder_distill.py export training/encoder-distill/ffn768.pt \
        --output training/encoder-distill/multilingual-e5-small-ffn768.msgpack
    OMP_NUM_THREADS=2 python benchmarks/encoder_distill.py evaluate \
        training/encoder-distill/multilingual-e5-small-ffn768.msgpack \
        --package zh_rhetoric_parallelism=corpus/pse --package la_rhetoric_parallelism=corpus/asp \
        --repeats 3 --output benchmarks/results/encoder_distill_ffn768.json

``export`` writes the narrow encoder's file (``spacy_rhetoric/encoders/narrow.py``: int8
deltas from the base), which any ``EncoderVectors`` layer reads when its ``name`` is the
file's path; ``evaluate`` takes that file (what a package would ship) or the trained
``.pt`` (float32).

Each ``--corpus PATH=SPELLING`` is read as the package that reads it respells it
(``latin``: lower case, u and i; empty: as it is).
"""

import argparse
import copy
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

# every document is encoded: no disk cache of encoder states
os.environ.pop("SPACY_RHETORIC_FEATURE_CACHE", None)

import numpy
import torch
from torch import nn

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.encoders import encoder_path
from spacy_rhetoric.encoders.vectors import (
    _first_layers,
    _shared_model,
    doc_pieces,
    frozen_encoder_slot,
    strided_windows,
)


def read_windows(
    corpora: Sequence[Tuple[str, str]], tokenizer: Any, window: int, stride: int
) -> List[List[int]]:
    """RETURNS (List[List[int]]): the piece ids (with <s> and </s>) of every window the
    packages read over the corpora's docs, each doc respelled as its package reads it."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    from spacy_rhetoric.parallelism.reading import respelled

    vocab = Vocab()
    rows = []
    for path, spelling in corpora:
        for doc in DocBin().from_disk(path).get_docs(vocab):
            ids, _ = doc_pieces(tokenizer, respelled(doc, spelling))
            for start, end in strided_windows(len(ids), window, stride):
                rows.append([tokenizer.cls_token_id, *ids[start:end], tokenizer.sep_token_id])
    return rows


def batch_tensors(rows: Sequence[List[int]], pad: int) -> Tuple[torch.Tensor, torch.Tensor]:
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = torch.as_tensor(row)
        mask[r, : len(row)] = 1
    return ids, mask


def with_layers(model: Any, layers: Sequence[nn.Module]) -> Any:
    """RETURNS: a view of ``model`` (its embeddings shared) running ``layers``."""
    top = _first_layers(model, len(layers))
    top.encoder.layer = nn.ModuleList(layers)
    return top


def cut_feed_forward(layer: nn.Module, keep: torch.Tensor) -> None:
    """Keep only the feed-forward units ``keep`` of a BERT layer (in place)."""
    dense_in, dense_out = layer.intermediate.dense, layer.output.dense
    cut_in = nn.Linear(dense_in.in_features, len(keep))
    cut_in.weight.data = dense_in.weight.data[keep].clone()
    cut_in.bias.data = dense_in.bias.data[keep].clone()
    cut_out = nn.Linear(len(keep), dense_out.out_features)
    cut_out.weight.data = dense_out.weight.data[:, keep].clone()
    cut_out.bias.data = dense_out.bias.data.clone()
    layer.intermediate.dense, layer.output.dense = cut_in, cut_out


def cut_layers(model: Any, keep: Sequence[Sequence[int]]) -> List[nn.Module]:
    """RETURNS (List[nn.Module]): copies of the first ``len(keep)`` layers of ``model``,
    layer i keeping the feed-forward units ``keep[i]``."""
    layers = [copy.deepcopy(layer) for layer in list(model.encoder.layer)[: len(keep)]]
    for layer, units in zip(layers, keep):
        cut_feed_forward(layer, torch.as_tensor(list(units), dtype=torch.long))
    return layers


def save_student(path: Path, layers: Sequence[nn.Module], keep: Sequence[Sequence[int]], **info):
    """Write the cut layers (their units and weights) and ``info`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = nn.ModuleList(layers).state_dict()
    torch.save(
        {"layers": len(layers), "keep": [list(k) for k in keep], "state_dict": state, **info}, path
    )


def load_student(path: Path, teacher: Any) -> Any:
    """RETURNS: the student saved at ``path``, as a view of ``teacher`` (the full
    encoder) with the cut layers in place of its first ones."""
    saved = torch.load(path, map_location="cpu", weights_only=False)
    stack = nn.ModuleList(cut_layers(teacher, saved["keep"]))
    stack.load_state_dict(saved["state_dict"])
    return with_layers(teacher, list(stack.eval()))


def train(args: argparse.Namespace) -> None:
    from transformers import AutoTokenizer

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    path = encoder_path()
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    corpora = [tuple(spec.split("=", 1)) if "=" in spec else (spec, "") for spec in args.corpus]
    rows = read_windows(corpora, tokenizer, args.window, args.stride)
    print(f"{len(rows)} windows, {sum(map(len, rows))} pieces", flush=True)
    full = _shared_model(path, False, torch.device("cpu"))
    teacher = _first_layers(full, args.layers)
    for p in full.parameters():
        p.requires_grad_(False)
    n_units = teacher.encoder.layer[0].intermediate.dense.out_features
    # importance of each feed-forward unit, and the teacher's sd per layer and dimension
    sample = rng.sample(rows, min(args.importance_windows, len(rows)))
    activity = [torch.zeros(n_units) for _ in range(args.layers)]
    moments = torch.zeros(2, args.layers, full.config.hidden_size, dtype=torch.float64)
    count = 0
    current: Dict[str, torch.Tensor] = {}

    def hook(index: int):
        def record(module, inputs, output):
            m = current["mask"].unsqueeze(-1).float()
            activity[index] += (output.abs() * m).sum((0, 1))

        return record

    handles = [
        layer.intermediate.register_forward_hook(hook(i))
        for i, layer in enumerate(teacher.encoder.layer)
    ]
    with torch.no_grad():
        for b in range(0, len(sample), args.batch_size):
            ids, mask = batch_tensors(sample[b : b + args.batch_size], tokenizer.pad_token_id)
            current["mask"] = mask
            out = teacher(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            keep = mask.bool()
            for layer in range(args.layers):
                h = out.hidden_states[layer + 1][keep].double()
                moments[0, layer] += h.sum(0)
                moments[1, layer] += (h * h).sum(0)
            count += int(keep.sum())
    for handle in handles:
        handle.remove()
    mean = moments[0] / count
    sd = (moments[1] / count - mean**2).clamp(min=1e-8).sqrt().float()  # [L, H]
    kept = []
    for i, layer in enumerate(teacher.encoder.layer):
        score = activity[i] / count * layer.output.dense.weight.norm(dim=0)
        kept.append(sorted(torch.topk(score, args.ffn).indices.tolist()))
    student_layers = cut_layers(teacher, kept)
    for p in (p for layer in student_layers for p in layer.parameters()):
        p.requires_grad_(True)
    student = with_layers(full, student_layers)
    params = [p for layer in student_layers for p in layer.parameters()]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)

    def rate(step: int) -> float:
        if step < args.warmup:
            return (step + 1) / args.warmup
        return max(0.0, 1 - (step - args.warmup) / max(1, args.steps - args.warmup))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    log: List[Dict[str, Any]] = []
    started = time.time()
    order: List[int] = []
    step = 0
    running = []
    while step < args.steps and time.time() - started < 60 * args.minutes:
        if len(order) < args.batch_size:
            order = list(range(len(rows)))
            rng.shuffle(order)
        batch = [rows[order.pop()] for _ in range(args.batch_size)]
        ids, mask = batch_tensors(batch, tokenizer.pad_token_id)
        keep = mask.bool()
        with torch.no_grad():
            target = teacher(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        out = student(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        losses = [
            (((out.hidden_states[k + 1] - target.hidden_states[k + 1])[keep] / sd[k]) ** 2).mean()
            for k in range(args.layers)
        ]
        loss = torch.stack(losses).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        step += 1
        running.append([x.item() for x in losses])
        if step % args.log_every == 0:
            per_layer = numpy.mean(running, 0)
            entry = {
                "step": step,
                "minutes": round((time.time() - started) / 60, 2),
                "loss": round(float(per_layer.mean()), 5),
                "per_layer": [round(float(x), 5) for x in per_layer],
            }
            log.append(entry)
            print(entry, flush=True)
            running = []
    settings = {k: str(v) for k, v in vars(args).items()}
    save_student(args.output, student_layers, kept, settings=settings, steps=step, log=log)
    print(f"wrote {args.output} after {step} steps, {(time.time() - started) / 60:.1f} min")


def export(args: argparse.Namespace) -> None:
    """Write a trained student as a narrow encoder file (``encoders/narrow.py``), and
    beside it (``.json``) its training settings and loss log."""
    from safetensors.numpy import load_file

    from spacy_rhetoric.encoders.convert import INFO_FILE
    from spacy_rhetoric.encoders.narrow import serialize_narrow

    base_dir = encoder_path()
    base = load_file(str(base_dir / "model.safetensors"))
    base_sha = json.loads((base_dir / INFO_FILE).read_text())["source_sha256"]
    saved = torch.load(args.student, map_location="cpu", weights_only=False)
    layers = {
        f"encoder.layer.{name}": tensor.float().numpy()
        for name, tensor in saved["state_dict"].items()
    }
    data = serialize_narrow(base, layers, saved["keep"], base_sha)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(data)
    # how the student was trained and how close it came, beside the file
    log = saved.get("log") or [{}]
    summary = {
        "file": str(args.output),
        "megabytes": round(len(data) / 1e6, 2),
        "settings": saved.get("settings"),
        "steps": saved.get("steps"),
        "last_logged": log[-1],
        "log": log,
    }
    args.output.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    print(f"wrote {args.output} ({len(data) / 1e6:.1f} MB) and its .json")


def evaluate(args: argparse.Namespace) -> None:
    import spacy

    from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism

    torch.set_num_threads(args.threads)
    results: Dict[str, Any] = {
        "student": str(args.student),
        "machine": platform.processor() or platform.machine(),
        "threads": args.threads,
        "packages": {},
    }
    for spec in args.package:
        name, corpus = spec.split("=", 1)
        models = {}
        for label in ("full", "student"):
            encoder_settings: Dict[str, Any] = {"cache_tokens": 0}
            narrow_file = args.student.suffix == ".msgpack"
            if label == "student" and narrow_file:  # the exported form, read by its path
                encoder_settings["name"] = str(args.student)
            overrides = {
                "components": {"parallelism_tagger": {"model": {"tok2vec": encoder_settings}}}
            }
            nlp = spacy.load(name, config=overrides)
            nlp("uerbum caro factum est")  # load the encoder
            encoder = frozen_encoder_slot(nlp.get_pipe("parallelism_tagger").model).get()
            if label == "student" and not narrow_file:  # a trained student (.pt)
                teacher = _shared_model(encoder_path(), False, encoder.device)
                encoder.model = load_student(args.student, teacher)
            if len(encoder.model.encoder.layer) < max(encoder.layers):
                raise SystemExit(f"{name} reads layer {max(encoder.layers)}: the student has fewer")
            models[label] = nlp
        row: Dict[str, Any] = {}
        for label, nlp in models.items():
            for split in ("dev", "test"):
                scores = evaluate_parallelism(Path(corpus) / f"{split}.spacy", None, nlp)
                row[f"{label}_{split}_epm_f"] = round(100 * scores["parallelism_epm_f"], 2)
                row[f"{label}_{split}_mwo_f"] = round(100 * scores["parallelism_mwo_f"], 2)
                print(name, label, split, row[f"{label}_{split}_epm_f"], flush=True)
        speeds: Dict[str, List[float]] = {"full": [], "student": []}
        for _ in range(args.repeats):
            for label, nlp in models.items():
                scores = evaluate_parallelism(Path(corpus) / "test.spacy", None, nlp)
                speeds[label].append(round(scores["tokens_per_second"], 1))
                print(name, label, "tokens/s", speeds[label][-1], flush=True)
        for label, values in speeds.items():
            row[f"{label}_tokens_per_second"] = values
            row[f"{label}_tokens_per_second_mean"] = round(statistics.mean(values), 1)
            row[f"{label}_tokens_per_second_sd"] = (
                round(statistics.stdev(values), 1) if len(values) > 1 else 0.0
            )
        row["speedup"] = round(
            row["student_tokens_per_second_mean"] / row["full_tokens_per_second_mean"], 3
        )
        results["packages"][name] = row
        print(name, row, flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    t = commands.add_parser("train")
    t.add_argument("--corpus", action="append", required=True, help="PATH=SPELLING")
    t.add_argument("--layers", type=int, default=8)
    t.add_argument("--ffn", type=int, default=768)
    t.add_argument("--window", type=int, default=256)
    t.add_argument("--stride", type=int, default=224)
    t.add_argument("--batch-size", type=int, default=8)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--warmup", type=int, default=100)
    t.add_argument("--steps", type=int, default=1500)
    t.add_argument("--minutes", type=float, default=45)
    t.add_argument("--importance-windows", type=int, default=256)
    t.add_argument("--log-every", type=int, default=25)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--output", type=Path, required=True)
    x = commands.add_parser("export")
    x.add_argument("student", type=Path)
    x.add_argument("--output", type=Path, required=True)
    e = commands.add_parser("evaluate")
    e.add_argument(
        "student", type=Path, help="a trained student (.pt) or its exported file (.msgpack)"
    )
    e.add_argument("--package", action="append", required=True, help="NAME=CORPUS_DIR")
    e.add_argument("--repeats", type=int, default=3)
    e.add_argument("--threads", type=int, default=2)
    e.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    {"train": train, "export": export, "evaluate": evaluate}[args.command](args)


if __name__ == "__main__":
    main()
