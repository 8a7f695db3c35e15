"""The same parallelisms however the text arrives: a parallelism pipeline applied to
whole documents (``nlp(text)`` on the raw text of consecutive test sections joined by
blank lines, as a user calls it) against the same sections one by one (also from raw
text, with the pipeline's own tokenizer). Gold parallelisms are mapped onto the
predicted tokens by characters.

    python benchmarks/parallelism_long_docs.py la_rhetoric_parallelism corpus/asp/test.spacy \
        --sections 10 --output benchmarks/results/parallelism_long_docs_la.json

``--window``/``--window-overlap`` override the tagger's head windows (choose them on
the dev split, never on test).
"""

import argparse
import time
from pathlib import Path

import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_rhetoric.corpora.parallelisms import get_parallelisms, set_parallelisms
from spacy_rhetoric.parallelism.metrics import score_parallelism

KEYS = ("epm", "mpbm", "mbawo", "mwo")
SEPARATOR = "\n\n"


def joined(sections):
    """One gold doc of several sections, separated by a blank line, with their
    parallelisms moved to its token offsets."""
    vocab = sections[0].vocab
    words, spaces, items, base = [], [], [], 0
    for k, section in enumerate(sections):
        words.extend(t.text for t in section)
        spaces.extend(bool(t.whitespace_) for t in section)
        if k < len(sections) - 1:
            spaces[-1] = False
            words.append(SEPARATOR)
            spaces.append(False)
        for p in get_parallelisms(section):
            offsets = [(start + base, end + base) for start, end in p.offsets]
            items.append((offsets, p.label, p.stratum))
        base += len(section) + (1 if k < len(sections) - 1 else 0)
    doc = Doc(vocab, words=words, spaces=spaces)
    set_parallelisms(doc, items)
    return doc


def scores_of(examples):
    found = score_parallelism(examples)
    return {f"{k}_{x}": round(100 * found[f"parallelism_{k}_{x}"], 2) for k in KEYS for x in "prf"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--sections", type=int, default=10, help="Sections per document")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--window", type=int, help="parallelism_tagger window (tokens)")
    parser.add_argument("--window-overlap", type=int, help="parallelism_tagger window_overlap")
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    tagger = nlp.get_pipe("parallelism_tagger")
    if args.window is not None:
        tagger.cfg["window"] = args.window
    if args.window_overlap is not None:
        tagger.cfg["window_overlap"] = args.window_overlap
    gold = [d for d in DocBin().from_disk(args.corpus).get_docs(nlp.vocab) if len(d)]
    documents = [joined(gold[i : i + args.sections]) for i in range(0, len(gold), args.sections)]
    results = {
        "model": args.model,
        "corpus": str(args.corpus),
        "sections": len(gold),
        "window": tagger.cfg["window"],
        "window_overlap": tagger.cfg["window_overlap"],
    }
    start = time.perf_counter()
    one_by_one = [Example(nlp(doc.text), doc) for doc in gold]
    results["section_by_section"] = {**scores_of(one_by_one), "docs": len(gold),
                                     "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip
    start = time.perf_counter()
    whole = [Example(nlp(doc.text), doc) for doc in documents]
    results["whole_documents"] = {
        **scores_of(whole),
        "docs": len(documents),
        "tokens_per_doc": round(sum(len(d) for d in documents) / len(documents), 1),
        "seconds": round(time.perf_counter() - start, 1),
    }
    for name in ("section_by_section", "whole_documents"):
        print(name, results[name], flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, results)


if __name__ == "__main__":
    main()
