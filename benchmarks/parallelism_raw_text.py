"""Parallelism from raw text, as ``analyze`` runs it: the test docs' text is tokenized
by a base pipeline's tokenizer (Chinese: spaCy's characters, or the words of
``zh_rhetoric_base``'s jieba segmentation; Latin: spaCy's Latin tokenizer or
``la_rhetoric_base``), copied into the parallelism model's vocab as analyze does
(Latin spelled as in ASP), tagged, and scored against the gold parallelisms mapped onto
those tokens by characters (``score_parallelism``). Gold tokens are the upper bound.

    python benchmarks/parallelism_raw_text.py zh_rhetoric_parallelism corpus/pse/test.spacy \
        --lang zh --base zh_rhetoric_base --output benchmarks/results/parallelism_raw_text_zh.json
"""

import argparse
import time
from pathlib import Path

import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_rhetoric.analysis.languages import PARALLELISM_NORMALIZERS
from spacy_rhetoric.parallelism.metrics import score_parallelism

KEYS = ("epm", "mpbm", "mbawo", "mwo")


def tokens_of(mode, lang, base, gold):
    """The tokenizer's words (and spaces) of each gold doc's text."""
    if mode == "gold":
        return [([t.text for t in d], [bool(t.whitespace_) for t in d]) for d in gold]
    make = spacy.blank(lang).make_doc if mode == "blank" else spacy.load(base).make_doc
    out = []
    for doc in gold:
        made = make(doc.text)
        out.append(([t.text for t in made], [bool(t.whitespace_) for t in made]))
    return out


def run(nlp, lang, gold, mode, base):
    normalize = PARALLELISM_NORMALIZERS.get(lang, lambda word: word)
    start = time.perf_counter()
    words = tokens_of(mode, lang, base, gold)
    copies = [Doc(nlp.vocab, words=[normalize(w) for w in ws], spaces=sp) for ws, sp in words]
    predicted = list(nlp.pipe(copies, batch_size=16))
    # the copies keep the text's characters (normalisation keeps each word's length)
    examples = [Example(p, g) for p, g in zip(predicted, gold)]
    scores = score_parallelism(examples)
    return {
        "tokens": sum(len(ws) for ws, _ in words),
        "seconds": round(time.perf_counter() - start, 1),
        **{f"{k}_{x}": round(100 * scores[f"parallelism_{k}_{x}"], 2) for k in KEYS for x in "prf"},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="The parallelism pipeline (package or path)")
    parser.add_argument("corpus", type=Path, help="Gold test DocBin")
    parser.add_argument("--lang", required=True)
    parser.add_argument("--base", help="The base pipeline whose tokenizer gives words")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    gold = list(DocBin().from_disk(args.corpus).get_docs(nlp.vocab))
    modes = ["gold", "blank"] + (["base"] if args.base else [])
    results = {"model": args.model, "corpus": str(args.corpus), "base": args.base}
    for mode in modes:
        results[mode] = run(nlp, args.lang, gold, mode, args.base)
        print(mode, results[mode], flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, results)


if __name__ == "__main__":
    main()
