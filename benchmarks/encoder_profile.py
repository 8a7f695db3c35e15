"""Where the encoder's prediction time goes on this CPU, and how close its matrix
products run to the machine's own GEMM speed: a bound on what kernel-level work
(fused ops, another runtime) could still gain for the parallelism taggers.

Times the first LAYERS layers of the shipped multilingual-e5-small on random windows of
BATCH x LENGTH word pieces (the taggers' batch and window), float32, with THREADS
threads: seconds a forward, word pieces/s, the share of each operator in a profiled
forward (torch.profiler, self CPU time, over REPEATS forwards), the GFLOP/s of the
linear layers inside the model (their multiply-adds over aten::addmm's time) and of a
bare ``linear`` of the same shapes outside it.

    OMP_NUM_THREADS=2 python benchmarks/encoder_profile.py --layers 8 --name l8
    OMP_NUM_THREADS=2 python benchmarks/encoder_profile.py --layers 12 --name l12 \
        --pipeline la_rhetoric_parallelism --gold corpus/asp/test.spacy

With ``--pipeline`` and ``--gold`` it also counts what that pipeline's encoder reads
of the split: tokens, word pieces, pieces inside its windows (the overlap of strided
windows is read twice) and after padding each batch to its longest window.

Writes benchmarks/results/encoder_profile_NAME.json. Run on an otherwise idle machine.
"""

import argparse
import functools
import json
import platform
import time
from pathlib import Path
from typing import Dict, List

import torch

from spacy_rhetoric.encoders import encoder_path
from spacy_rhetoric.encoders.vectors import doc_pieces, frozen_encoder_slot, native_bfloat16


def reading(pipeline: str, gold: Path) -> Dict[str, object]:
    """RETURNS (dict): what the parallelism tagger's encoder in ``pipeline`` (a directory
    or an installed package) reads of the docs in ``gold``."""
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.load(pipeline)
    nlp("a b c")  # load the encoder
    encoder = frozen_encoder_slot(nlp.get_pipe("parallelism_tagger").model).get()
    docs = list(DocBin().from_disk(gold).get_docs(nlp.vocab))
    lengths: List[int] = []
    pieces = 0
    for doc in docs:
        ids, _ = doc_pieces(encoder.tokenizer, doc)
        pieces += len(ids)
        spans = encoder.windows(len(ids), encoder.window, encoder.stride)
        lengths += [end - start + 2 for start, end in spans]
    lengths.sort()  # as the encoder batches them: windows of similar length together
    size = encoder.batch_size
    batches = [lengths[b : b + size] for b in range(0, len(lengths), size)]
    tokens = sum(len(doc) for doc in docs)
    windowed = sum(lengths)
    padded = sum(max(batch) * len(batch) for batch in batches)
    return {
        "pipeline": pipeline,
        "gold": str(gold),
        "layers_read": list(encoder.layers),
        "window": encoder.window,
        "stride": encoder.stride,
        "docs": len(docs),
        "tokens": tokens,
        "pieces": pieces,
        "windows": len(lengths),
        "window_pieces": windowed,
        "padded_pieces": padded,
        "pieces_per_token": round(pieces / tokens, 3),
        "pieces_run_per_token": round(padded / tokens, 3),
    }


def seconds(call, repeats: int) -> float:
    """RETURNS (float): the median wall time of ``call`` over ``repeats`` runs, after one
    untimed run."""
    call()
    times: List[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def main() -> None:
    from transformers import AutoModel

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--layers", type=int, default=8, help="transformer layers run")
    parser.add_argument("--batch", type=int, default=8, help="windows a forward")
    parser.add_argument("--length", type=int, default=256, help="word pieces a window")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pipeline", default=None, help="a parallelism pipeline (or package)")
    parser.add_argument("--gold", type=Path, default=None, help="a .spacy split it reads")
    args = parser.parse_args()
    if (args.pipeline is None) != (args.gold is None):
        parser.error("--pipeline and --gold go together")
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = AutoModel.from_pretrained(str(encoder_path())).eval()
    if not 1 <= args.layers <= len(model.encoder.layer):
        parser.error(f"--layers must be 1..{len(model.encoder.layer)}")
    model.encoder.layer = model.encoder.layer[: args.layers]
    config = model.config
    hidden, inner = config.hidden_size, config.intermediate_size
    ids = torch.randint(1000, 50000, (args.batch, args.length))
    mask = torch.ones_like(ids)

    def forward() -> None:
        with torch.no_grad():
            model(input_ids=ids, attention_mask=mask, output_hidden_states=True)

    forward_s = seconds(forward, args.repeats)
    rows = args.batch * args.length
    # multiply-adds of the linear layers: Q, K, V, output (h x h each), FFN up and down
    linear_macs = rows * args.layers * (4 * hidden * hidden + 2 * hidden * inner)
    with torch.profiler.profile() as prof:
        for _ in range(args.repeats):
            forward()
    ops: Dict[str, float] = {}
    for event in prof.key_averages():
        ops[event.key] = ops.get(event.key, 0.0) + event.self_cpu_time_total / 1e6
    total = sum(ops.values())
    shares = {
        key: round(value / total, 3)
        for key, value in sorted(ops.items(), key=lambda kv: -kv[1])
        if value / total >= 0.005
    }
    addmm_s = ops.get("aten::addmm", 0.0) / args.repeats  # a forward's
    bare = {}
    for n_in, n_out in [(hidden, hidden), (hidden, inner), (inner, hidden)]:
        x, w, b = torch.randn(rows, n_in), torch.randn(n_out, n_in), torch.randn(n_out)
        took = seconds(functools.partial(torch.nn.functional.linear, x, w, b), args.repeats)
        bare[f"{rows}x{n_in} @ {n_in}x{n_out}"] = round(2 * rows * n_in * n_out / took / 1e9, 1)
    results = {
        "machine": platform.processor() or platform.machine(),
        "bfloat16_native": native_bfloat16(torch.device("cpu")),
        "torch": torch.__version__,
        "threads": args.threads,
        "layers": args.layers,
        "batch": args.batch,
        "length": args.length,
        "forward_seconds": round(forward_s, 4),
        "pieces_per_second": round(rows / forward_s, 1),
        "linear_gflop": round(2 * linear_macs / 1e9, 2),
        "linear_gflops_in_model": round(2 * linear_macs / addmm_s / 1e9, 1) if addmm_s else None,
        "bare_linear_gflops": bare,
        "op_share_of_profiled_forward": shares,
    }
    if args.pipeline:
        results["reading"] = reading(args.pipeline, args.gold)
    for key, value in results.items():
        print(f"{key}: {value}")
    out = Path(__file__).resolve().parent / "results" / f"encoder_profile_{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
