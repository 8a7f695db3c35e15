"""Time the CRF loss's log Z: the forward algorithm (T sequential steps) against the
parallel reduction (log2(T) rounds of pairwise products, ``ConstrainedCRF.algorithm``),
forward and backward, over a grid of tag counts K, batch sizes B and lengths T, and
check that both give the same value and gradient (float64 difference reported).

    OMP_NUM_THREADS=1 python benchmarks/crf_scan.py --threads 1 \
        --output benchmarks/results/crf_scan.json [--device cuda]

The algorithms take turns (``--repeats`` turns each), so both see the same machine.
The parallelism tagger's CRFs have K = 7 (``biomje-branch``: O, M, B, B-*, I, J, E);
ASP batches hold 2-7 sections of up to about 640 tokens.
"""

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch

from spacy_rhetoric.parallelism.crf import ConstrainedCRF


def _time(crf, emissions, mask, device: str) -> float:
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    sync()
    start = time.perf_counter()
    crf.log_partition(emissions, mask).sum().backward()
    sync()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tags", default="5,7,9,11,13")
    parser.add_argument("--batches", default="4,16")
    parser.add_argument("--lengths", default="128,640")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rows = []
    for k in [int(x) for x in args.tags.split(",")]:
        allowed = torch.rand(k, k) > 0.3
        crf = ConstrainedCRF(k, trans_mask=allowed).to(args.device)
        for batch in [int(x) for x in args.batches.split(",")]:
            for length in [int(x) for x in args.lengths.split(",")]:
                lengths = torch.randint(length // 2, length + 1, (batch,))
                lengths[0] = length
                mask = (torch.arange(length)[None, :] < lengths[:, None]).to(args.device)
                emissions = torch.randn(batch, length, k, device=args.device)
                emissions.requires_grad_(True)
                # agreement in float64
                values, grads = {}, {}
                exact = emissions.detach().double().requires_grad_(True)
                crf64 = crf.double()
                for algorithm in ("forward", "scan"):
                    crf64.algorithm = algorithm
                    value = crf64.log_partition(exact, mask)
                    (grad,) = torch.autograd.grad(value.sum(), exact)
                    values[algorithm], grads[algorithm] = value.detach(), grad
                crf.float()
                times = {"forward": [], "scan": []}
                for turn in range(args.repeats + 1):
                    for algorithm in ("forward", "scan"):
                        crf.algorithm = algorithm
                        seconds = _time(crf, emissions, mask, args.device)
                        if turn:  # the first turn warms up
                            times[algorithm].append(seconds)
                forward = statistics.median(times["forward"])
                scan = statistics.median(times["scan"])
                rows.append(
                    {
                        "K": k,
                        "B": batch,
                        "T": length,
                        "forward_ms": round(1000 * forward, 2),
                        "scan_ms": round(1000 * scan, 2),
                        "speedup": round(forward / scan, 2),
                        "max_abs_diff_log_z_float64": float(
                            (values["forward"] - values["scan"]).abs().max()
                        ),
                        "max_abs_diff_grad_float64": float(
                            (grads["forward"] - grads["scan"]).abs().max()
                        ),
                    }
                )
                print(json.dumps(rows[-1]))
    result = {
        "device": args.device,
        "threads": args.threads,
        "repeats": args.repeats,
        "torch": torch.__version__,
        "machine": platform.processor() or platform.machine(),
        "what": "median seconds of log Z forward + backward per call, turns alternating",
        "rows": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
