"""Zero-shot parallelism where no annotated data exists: does a parallelism model find
well-known parallelisms in English and German (``benchmarks/data/parallelisms_famous.json``,
20 English and 10 German passages; never used to train, choose or tune), and how many
parallelisms does it report per 1,000 tokens of running text (UD English-EWT test, UD
German-LIT test, or the files of ``--running``; ten sentences a doc), where few are
expected? With ``--reports`` each running-text report is written with its context to a
file of its own, for judging by hand
(``benchmarks/parallelism_judge.py``; kept out of the results, since UD German-LIT is
CC BY-NC-SA).

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
from typing import Dict, List, Optional, Sequence, Tuple

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


def running_corpora(spec: Optional[str]) -> Dict[str, str]:
    """The running text of each language: the defaults, with ``spec`` (``LANG=PATH,...``,
    paths under the data folder) replacing some.

    RAISES ValueError: a part of ``spec`` that is not LANG=PATH.
    """
    corpora = dict(RUNNING)
    for pair in filter(None, (spec or "").split(",")):
        lang, sep, path = pair.partition("=")
        if not sep or not lang.strip() or not path.strip():
            raise ValueError(f"--running takes LANG=PATH pairs, got {pair!r}")
        corpora[lang.strip()] = path.strip()
    return corpora


def first_tokens(docs: Sequence[Doc], max_tokens: Optional[int]) -> List[Doc]:
    """The first whole docs, in order, until they hold ``max_tokens`` tokens (the doc that
    reaches it included; None: all of them)."""
    if max_tokens is None:
        return list(docs)
    if max_tokens < 1:
        raise ValueError(f"--running-tokens must be >= 1, got {max_tokens}")
    kept, total = [], 0
    for doc in docs:
        if total >= max_tokens:
            break
        kept.append(doc)
        total += len(doc)
    return kept


def running(nlp, lang: str, data_dir: Path, corpus: str, max_tokens: Optional[int] = None) -> Dict:
    texts = [doc.text for doc in running_text([data_dir / corpus], nlp.vocab)]
    inputs = first_tokens(tokenized(nlp, lang, texts), max_tokens)
    start = time.perf_counter()
    docs = list(nlp.pipe(inputs))
    seconds = time.perf_counter() - start
    tokens = sum(len(doc) for doc in docs)
    reports = [
        report(doc, i, parallelism.offsets)
        for i, doc in enumerate(docs)
        for parallelism in get_parallelisms(doc)
    ]
    return {
        "corpus": corpus,
        "docs": len(docs),
        "tokens": tokens,
        "parallelisms": len(reports),
        "per_1000_tokens": 1000 * len(reports) / max(1, tokens),
        "tokens_per_second": tokens / max(seconds, 1e-9),
        "reports": reports,
    }


def report(doc: Doc, index: int, offsets: Sequence[Branch], context: int = 12) -> Dict:
    """One predicted parallelism of running text as a reader judges it: its branches and
    the words around them, each branch in [brackets] (``benchmarks/parallelism_judge.py``)."""
    start = max(0, offsets[0][0] - context)
    end = min(len(doc), max(e for _, e in offsets) + context)
    opens = {s for s, _ in offsets}
    closes = {e for _, e in offsets}
    words = []
    for i in range(start, end):
        word = doc[i].text
        if i in opens:
            word = "[" + word
        if i + 1 in closes:
            word += "]"
        words.append(word)
    return {
        "doc": index,
        "offsets": [list(o) for o in offsets],
        "branches": [doc[s:e].text for s, e in offsets],
        "context": " ".join(words),
    }


def load(model: str, precision: Optional[str] = None):
    """RETURNS (Language): the pipeline, its parallelism tagger's encoder at ``precision``
    (None: as configured)."""
    if precision is None:
        return spacy.load(model)
    tok2vec = {"model": {"tok2vec": {"precision": precision}}}
    return spacy.load(model, config={"components": {"parallelism_tagger": tok2vec}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="an installed package or a pipeline directory")
    parser.add_argument("--langs", default="en,de")
    default_data = os.environ.get("SPACY_RHETORIC_DATA", REPO.parent / "shared" / "data")
    parser.add_argument("--data", type=Path, default=Path(default_data))
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument(
        "--running",
        default=None,
        help="the running text per language instead of the default, as LANG=PATH,... "
        "(CoNLL-U paths under --data)",
    )
    parser.add_argument(
        "--reports", type=Path, default=None, help="write the running-text reports here"
    )
    parser.add_argument(
        "--running-tokens",
        type=int,
        default=None,
        help="read only the first whole docs of each running text, up to this many tokens",
    )
    parser.add_argument(
        "--precision",
        choices=("float32", "bfloat16", "auto"),
        default=None,
        help="the encoder's precision (default: the pipeline's; a package predicts at "
        "'auto', the pipeline it was built from at its training config's)",
    )
    parser.add_argument(
        "--min-word-share",
        type=float,
        default=None,
        help="the taggers' min_word_share (default: the pipeline's; 0 reads as before "
        "2026-11-28, when branches that are not words were kept)",
    )
    args = parser.parse_args()
    try:
        corpora = running_corpora(args.running)
    except ValueError as err:
        parser.error(str(err))
    if args.running_tokens is not None and args.running_tokens < 1:
        parser.error(f"--running-tokens must be >= 1, got {args.running_tokens}")
    items = srsly.read_json(REPO / "benchmarks" / "data" / "parallelisms_famous.json")
    nlp = load(args.model, args.precision)
    if args.min_word_share is not None:
        for name, pipe in nlp.pipeline:
            if nlp.get_pipe_meta(name).factory == "parallelism_tagger":
                pipe.min_word_share = args.min_word_share
    result = {
        "model": args.model,
        "min_word_share": args.min_word_share,
        "precision": args.precision,
        "running_tokens": args.running_tokens,
        "languages": {},
    }
    for lang in args.langs.split(","):
        result["languages"][lang] = {
            "famous": famous(nlp, lang, items[lang]),
            "running_text": running(nlp, lang, args.data, corpora[lang], args.running_tokens),
        }
        famous_ = result["languages"][lang]["famous"]
        print(
            f"{lang}: found {famous_['found']}/{famous_['n']}, exact {famous_['exact']}, "
            f"branch recall {famous_['branch_recall']:.2f}; running text "
            f"{result['languages'][lang]['running_text']['per_1000_tokens']:.2f} per 1,000 tokens"
        )
    reports = {"model": args.model, "languages": {}}
    for lang, parts in result["languages"].items():
        running_ = parts["running_text"]
        reports["languages"][lang] = {
            "tokens": running_["tokens"],
            "reports": running_.pop("reports"),
        }
    for path, data in ((args.output, result), (args.reports, reports)):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False))
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
