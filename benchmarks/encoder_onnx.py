"""multilingual-e5-small under onnxruntime against PyTorch on the CPU (#26): the
encoder alone, over the strided windows that `EncoderVectors` runs on a corpus (256
pieces, stride 192, batches of 8 windows sorted by length), all 12 layers. Runs torch
and onnxruntime in turns (``--repeats`` each) and writes JSON: seconds and tokens/s per
run and backend, the ratio of the medians, and the largest difference of the last
layer's states. Needs ``pip install onnxruntime==1.31.1 onnx==1.23.2`` (not dependencies
of the package).

    OMP_NUM_THREADS=2 python benchmarks/encoder_onnx.py corpus/asp/dev.spacy \
        --threads 2 --output benchmarks/results/encoder_onnx_asp_dev.json
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy


def windows_of(docs, tokenizer, window: int, stride: int, batch_size: int):
    from spacy_rhetoric.encoders.vectors import doc_pieces, strided_windows

    rows = []
    for doc in docs:
        ids, _ = doc_pieces(tokenizer, doc)
        for start, end in strided_windows(len(ids), window, stride):
            rows.append([tokenizer.cls_token_id, *ids[start:end], tokenizer.sep_token_id])
    rows.sort(key=len)
    batches = []
    for b in range(0, len(rows), batch_size):
        chunk = rows[b : b + batch_size]
        width = max(map(len, chunk))
        ids = numpy.full((len(chunk), width), tokenizer.pad_token_id, dtype=numpy.int64)
        mask = numpy.zeros_like(ids)
        for r, row in enumerate(chunk):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        batches.append((ids, mask))
    return batches, sum(map(len, rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a .spacy file")
    parser.add_argument("--lang", default="la")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--fused", action="store_true", help="onnxruntime's BERT fusions too")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit("needs onnxruntime: pip install onnxruntime==1.31.1 onnx==1.23.2")
    import spacy
    import torch
    from spacy.tokens import DocBin
    from transformers import AutoModel, AutoTokenizer

    from spacy_rhetoric.encoders.convert import default_encoder_dir, import_encoder

    torch.set_num_threads(args.threads)
    path = import_encoder(default_encoder_dir())
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model = AutoModel.from_pretrained(str(path)).eval()
    docs = list(DocBin().from_disk(args.corpus).get_docs(spacy.blank(args.lang).vocab))
    n_tokens = sum(len(doc) for doc in docs)
    batches, n_pieces = windows_of(docs, tokenizer, 256, 192, 8)

    class AllStates(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
            )
            return tuple(out.hidden_states)

    n_out = model.config.num_hidden_layers + 1
    work = Path(tempfile.mkdtemp(prefix="encoder-onnx-"))
    onnx_path = work / "encoder.onnx"
    example = tuple(torch.from_numpy(a) for a in batches[-1])
    names = ["input_ids", "attention_mask", *(f"h{i}" for i in range(n_out))]
    dynamic = {name: {0: "batch", 1: "pieces"} for name in names}
    torch.onnx.export(
        AllStates(model),
        example,
        str(onnx_path),
        input_names=["input_ids", "attention_mask"],
        output_names=[f"h{i}" for i in range(n_out)],
        dynamic_axes=dynamic,
        opset_version=17,
        dynamo=False,
    )
    model.eval()  # the exporter leaves the module in training mode (dropout on)
    if args.fused:
        from onnxruntime.transformers import optimizer

        fused = optimizer.optimize_model(
            str(onnx_path),
            model_type="bert",
            num_heads=model.config.num_attention_heads,
            hidden_size=model.config.hidden_size,
        )
        onnx_path = work / "encoder-fused.onnx"
        fused.save_model_to_file(str(onnx_path))
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # no spinning threads left behind to slow the torch runs that follow
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    inference = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    last = f"h{n_out - 1}"

    def run_torch():
        with torch.no_grad():
            return [
                model(
                    input_ids=torch.from_numpy(ids),
                    attention_mask=torch.from_numpy(mask),
                    output_hidden_states=True,
                )
                .hidden_states[-1]
                .numpy()
                for ids, mask in batches
            ]

    def run_ort():
        return [
            inference.run([last], {"input_ids": ids, "attention_mask": mask})[0]
            for ids, mask in batches
        ]

    seconds = {"torch": [], "onnxruntime": []}
    outputs = {}
    for _ in range(args.repeats):
        for name, run in (("torch", run_torch), ("onnxruntime", run_ort)):
            start = time.perf_counter()
            outputs[name] = run()
            seconds[name].append(time.perf_counter() - start)
    diff = max(
        float(numpy.abs(a - b)[mask.astype(bool)].max())
        for a, b, (_, mask) in zip(outputs["torch"], outputs["onnxruntime"], batches)
    )
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    result = {
        "corpus": str(args.corpus),
        "tokens": n_tokens,
        "pieces": n_pieces,
        "threads": args.threads,
        "fused": args.fused,
        "onnxruntime": ort.__version__,
        "torch": torch.__version__,
        "seconds": seconds,
        "tokens_per_second": {name: n_tokens / s for name, s in medians.items()},
        "speedup": medians["torch"] / medians["onnxruntime"],
        "max_abs_diff_last_layer": diff,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2))
    shown = ("tokens_per_second", "speedup", "max_abs_diff_last_layer")
    print(json.dumps({key: result[key] for key in shown}))


if __name__ == "__main__":
    main()
