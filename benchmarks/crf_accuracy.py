"""How exact is the CRF loss's log Z in float32? For trained parallelism pipelines, the
emissions of training documents (as ``nlp.update`` computes them, dropout included) go
through the forward algorithm and the parallel scan in float32, and through the forward
algorithm in float64 as the reference, first as emitted, then centred as the loss
computes them (each position's best score taken out); reports the absolute errors per
batch and stratum, with the size of log Z and of the emissions.

    OMP_NUM_THREADS=2 python benchmarks/crf_accuracy.py training/crf-forward/model-last \
        training/crf-scan/model-last --gold corpus/asp/train.spacy --docs 40 \
        --output benchmarks/results/crf_accuracy.json

The forward algorithm adds T terms one after another, the scan in a tree of log2(T)
rounds, so its rounding error grows like log T instead of T (as pairwise summation).
"""

import argparse
import json
import statistics
from pathlib import Path

import spacy
import torch
from spacy.tokens import DocBin
from spacy.training import Example

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.parallelism import crf as crf_module
from spacy_rhetoric.parallelism.crf import ConstrainedCRF


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--batch", type=int, default=5)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = []
    original = ConstrainedCRF._log_z
    original_centred = crf_module._centred
    offsets = []

    def measured(self, emissions, mask):
        with torch.no_grad():
            raw = emissions + offsets[-1]  # as the network emitted them
            forward = self._forward_scores(raw, mask)[1]
            scan = self._scan_log_z(raw, mask)
            exact = self.double()._forward_scores(raw.double(), mask)[1]
            # what the loss computes since 2026-11-26: each position's best score out
            centred_forward = self.float()._forward_scores(emissions, mask)[1]
            centred_scan = self._scan_log_z(emissions, mask)
            centred_exact = self.double()._forward_scores(emissions.double(), mask)[1]
            self.float()
        rows[-1]["calls"].append(
            {
                "shape": list(emissions.shape),
                "forward_error_max": float((forward.double() - exact).abs().max()),
                "scan_error_max": float((scan.double() - exact).abs().max()),
                "centred_forward_error_max": float(
                    (centred_forward.double() - centred_exact).abs().max()
                ),
                "centred_scan_error_max": float(
                    (centred_scan.double() - centred_exact).abs().max()
                ),
                "log_z_max": float(exact.abs().max()),
                "centred_log_z_max": float(centred_exact.abs().max()),
                "emission_max": float(raw.abs().max()),
            }
        )
        return original(self, emissions, mask)

    def keep_offsets(emissions):  # the loss centres the emissions before _log_z
        offsets.append(emissions.detach().max(2, keepdim=True).values)
        return original_centred(emissions)

    ConstrainedCRF._log_z = measured
    crf_module._centred = keep_offsets
    try:
        for model in args.models:
            rows.append({"model": model, "calls": []})
            nlp = spacy.load(model)
            docs = list(DocBin().from_disk(args.gold).get_docs(nlp.vocab))[: args.docs]
            tagger = nlp.get_pipe("parallelism_tagger")
            for start in range(0, len(docs), args.batch):
                batch = [Example(doc.copy(), doc) for doc in docs[start : start + args.batch]]
                tagger.update(batch, drop=0.0, sgd=None, losses={})
            calls = rows[-1]["calls"]
            for key in [k for k in calls[0] if k != "shape"]:
                values = [c[key] for c in calls]
                rows[-1][key] = {"max": max(values), "median": statistics.median(values)}
            print(model, {k: rows[-1][k] for k in rows[-1] if k not in ("model", "calls")})
    finally:
        ConstrainedCRF._log_z = original
        crf_module._centred = original_centred
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps({"gold": str(args.gold), "docs": args.docs, "models": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
