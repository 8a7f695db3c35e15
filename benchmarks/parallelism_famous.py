"""Zero-shot parallelism where no annotated data exists: does a parallelism model find
well-known parallelisms in English and German (``benchmarks/data/parallelisms_famous.json``,
20 English and 10 German passages; never used to train, choose or tune), and how many
parallelisms does it report per 1,000 tokens of running text (UD English-EWT test, UD
German-LIT test; ten sentences a doc), where few are expected?

Each text is tokenized by spaCy's tokenizer for its language and read by the model as a
whole. A passage counts as found when one predicted parallelism overlaps at least two of
its gold branches (each with a branch of its own); exact when a predicted parallelism has
exactly the gold branches; branch recall counts gold branches predicted with the same
boundaries.

    python benchmarks/parallelism_famous.py xx_rhetoric_parallelism \
        --output benchmarks/results/parallelism_famous_xx.json
"""

import argparse
import json
import os
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import spacy
import srsly
from spacy.tokens import Doc

from spacy_rhetoric.chiasmus.negatives import running_text
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.corpora.util import LANGUAGE_KEY

REPO = Path(__file__).resolve().parents[1]
RUNNING = {
    "en": "ud/UD_English-EWT/en_ewt-ud-test.conllu",
    "de": "ud/UD_German-LIT/de_lit-ud-test.conllu",
}
Branch = Tuple[int, int]


def gold_branches(doc: Doc, text: str, branches: Sequence[str]) -> List[Branch]:
    """Token offsets of each gold branch, found in order in the text."""
    offsets, start = [], 0
    for branch in branches:
        begin = text.index(branch, start)
        span = doc.char_span(begin, begin + len(branch), alignment_mode="expand")
        offsets.append((span.start, span.end))
        start = begin + len(branch)
    return offsets


def overlapped(gold: Sequence[Branch], predicted: Sequence[Branch]) -> int:
    """How many gold branches overlap a predicted branch of their own (greedy, in order)."""
    used, hits = set(), 0
    for g_start, g_end in gold:
        for i, (p_start, p_end) in enumerate(predicted):
            if i not in used and p_start < g_end and g_start < p_end:
                used.add(i)
                hits += 1
                break
    return hits


def tokenized(nlp, lang: str, texts: Sequence[str]) -> List[Doc]:
    """The texts in spaCy's tokens for ``lang``, as docs of the model's vocab that
    state their language (as ``analyze`` states it; a head with a language input reads
    a language it was not trained on as unknown)."""
    tokenizer = spacy.blank(lang).tokenizer
    return [
        Doc(
            nlp.vocab,
            words=[t.text for t in doc],
            spaces=[bool(t.whitespace_) for t in doc],
            user_data={LANGUAGE_KEY: lang},
        )
        for doc in map(tokenizer, texts)
    ]


def famous(nlp, lang: str, items: List[Dict]) -> Dict:
    docs = tokenized(nlp, lang, [item["text"] for item in items])
    rows = []
    for item, doc in zip(items, nlp.pipe(docs)):
        gold = gold_branches(doc, item["text"], item["branches"])
        predicted = [list(p.offsets) for p in get_parallelisms(doc)]
        best = max((overlapped(gold, p) for p in predicted), default=0)
        branches = {b for p in predicted for b in p}
        rows.append(
            {
                "source": item["source"],
                "found": best >= 2,
                "exact": any(p == gold for p in predicted),
                "gold_branches": len(gold),
                "branches_exact": sum(b in branches for b in gold),
                "predicted": [[doc[s:e].text for s, e in p] for p in predicted],
            }
        )
    n = len(rows)
    return {
        "n": n,
        "found": sum(r["found"] for r in rows),
        "exact": sum(r["exact"] for r in rows),
        "branch_recall": sum(r["branches_exact"] for r in rows)
        / max(1, sum(r["gold_branches"] for r in rows)),
        "items": rows,
    }


def running(nlp, lang: str, data_dir: Path) -> Dict:
    texts = [doc.text for doc in running_text([data_dir / RUNNING[lang]], nlp.vocab)]
    start = time.perf_counter()
    docs = list(nlp.pipe(tokenized(nlp, lang, texts)))
    seconds = time.perf_counter() - start
    tokens = sum(len(doc) for doc in docs)
    found = sum(len(get_parallelisms(doc)) for doc in docs)
    return {
        "corpus": RUNNING[lang],
        "docs": len(docs),
        "tokens": tokens,
        "parallelisms": found,
        "per_1000_tokens": 1000 * found / max(1, tokens),
        "tokens_per_second": tokens / max(seconds, 1e-9),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="an installed package or a pipeline directory")
    parser.add_argument("--langs", default="en,de")
    default_data = os.environ.get("SPACY_RHETORIC_DATA", REPO.parent / "shared" / "data")
    parser.add_argument("--data", type=Path, default=Path(default_data))
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    items = srsly.read_json(REPO / "benchmarks" / "data" / "parallelisms_famous.json")
    nlp = spacy.load(args.model)
    result = {"model": args.model, "languages": {}}
    for lang in args.langs.split(","):
        result["languages"][lang] = {
            "famous": famous(nlp, lang, items[lang]),
            "running_text": running(nlp, lang, args.data),
        }
        famous_ = result["languages"][lang]["famous"]
        print(
            f"{lang}: found {famous_['found']}/{famous_['n']}, exact {famous_['exact']}, "
            f"branch recall {famous_['branch_recall']:.2f}; running text "
            f"{result['languages'][lang]['running_text']['per_1000_tokens']:.2f} per 1,000 tokens"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
