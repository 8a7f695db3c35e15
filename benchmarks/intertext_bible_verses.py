"""Every verse of the Bible in other translations, searched against the shipped Bible
indexes: how often is the verse itself ranked first (R@1) and in the top 10 (R@10)?

English: the King James index (``intertext index bible:kjv``; lexical channel +
multilingual-e5-small). Queries are the same verse in six other public-domain
translations, from close to paraphrastic: the American Standard Version (asv), Webster
(wbs), the World English Bible (web), Young's Literal Translation (ylt), the Douay-Rheims
(dr, translated from the Vulgate) and the Bible in Basic English (bbe), read from their
pythonbible packages (``intertext/bible.py``). The gold is the KJV verse of the same
reference. The lexical channel runs on every verse of each translation; the dense and
fused rankings on a fixed random sample (``--sample``, seed 0) of each, because encoding
every verse of six translations takes hours on two shared CPU cores. The Douay-Rheims
numbers the Psalms (and some other books) as the Vulgate does, so some of its verses
carry another verse's KJV reference: reported with and without the Psalms.

Latin: the Douay-Rheims against the Vulgate verses of the Latin index (Virgil + Vulgate),
cross-lingual, so the dense channel alone (and fused, for reference); a Douay-Rheims
verse's gold is the Vulgate verse of the same reference (both in the Vulgate's numbering).

Storage (``--storage``): the dense rankings again with the vectors as shipped
(``IntertextIndex.compress``: int8 codes, or fewer principal dimensions) against the
whole float16 vectors, on the same queries.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spacy_rhetoric.intertext.bible import VULGATE_SUFFIX, read_bible  # noqa: E402
from spacy_rhetoric.intertext.index import IntertextIndex  # noqa: E402

ENGLISH = ("asv", "wbs", "web", "ylt", "dr", "bbe")
KS = (1, 10)


def recall(ranked: Sequence[Sequence[int]], gold: Sequence[int]) -> Dict[str, float]:
    """RETURNS (Dict[str, float]): R@1 and R@10 of the gold row in each ranking."""
    out: Dict[str, float] = {"n": len(gold)}
    for k in KS:
        out[f"r@{k}"] = float(np.mean([g in list(r[:k]) for r, g in zip(ranked, gold)]))
    return out


def rankings(index: IntertextIndex, texts, channels, vectors=None) -> List[List[int]]:
    hits = index.search(texts, k=10, query_embeddings=vectors, channels=channels)
    return [[c.row for c in cands] for cands in hits]


def compressed(index: IntertextIndex, dims, int8: bool) -> IntertextIndex:
    """A copy of the index with its vectors compressed (``IntertextIndex.compress``)."""
    vectors = np.asarray(index.embeddings)
    copy = IntertextIndex(
        index.ids, index.texts, index.lexical, vectors, dict(index.cfg), index._encoder
    )
    copy.cfg.pop("dense_storage", None)
    copy.compress(dims, int8)
    return copy


def evaluate_translation(index, rows, texts, sample_idx, vectors, storage, parts):
    result: Dict[str, object] = {"verses": len(rows)}
    if "lexical" in parts:
        start = time.perf_counter()
        result["lexical"] = recall(rankings(index, texts, ("lexical",)), rows)
        result["lexical"]["seconds"] = round(time.perf_counter() - start, 1)
    if "dense" in parts:
        s_texts = [texts[i] for i in sample_idx]
        s_rows = [rows[i] for i in sample_idx]
        result["lexical_on_sample"] = recall(rankings(index, s_texts, ("lexical",)), s_rows)
        result["dense"] = recall(rankings(index, s_texts, ("dense",), vectors), s_rows)
        result["fused"] = recall(rankings(index, s_texts, ("lexical", "dense"), vectors), s_rows)
        result["storage"] = {}
        for label, variant in storage.items():
            projected = variant.project(vectors)
            result["storage"][label] = {
                "dense": recall(rankings(variant, s_texts, ("dense",), projected), s_rows),
                "fused": recall(
                    rankings(variant, s_texts, ("lexical", "dense"), projected), s_rows
                ),
            }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kjv-index", default="../training/intertext/kjv-index")
    parser.add_argument("--latin-index", default="../training/intertext/virgil-vulgate-index")
    parser.add_argument("--sample", type=int, default=3000, help="verses a translation, dense")
    parser.add_argument("--translations", default=",".join(ENGLISH))
    parser.add_argument("--storage", default="int8,pca256-int8,pca192-int8,pca128-int8")
    parser.add_argument("--parts", default="lexical,dense,latin", help="what to run")
    parser.add_argument("--output", default="results/intertext_bible_verses.json")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    out: Dict[str, object] = {
        "sample": args.sample,
        "seed": 0,
        "threads": os.environ.get("OMP_NUM_THREADS", "1"),
        "english": {},
        "latin": {},
    }
    variants = {}
    for spec in [s for s in args.storage.split(",") if s]:
        dims = int(spec[3:].split("-")[0]) if spec.startswith("pca") else None
        variants[spec] = (dims, spec.endswith("int8"))

    parts = set(args.parts.split(","))
    if Path(args.output).is_file():  # parts run apart are merged
        previous = json.loads(Path(args.output).read_text(encoding="utf-8"))
        out["english"] = previous.get("english", {})
        out["latin"] = previous.get("latin", {})
    kjv = IntertextIndex.from_disk(args.kjv_index, mmap=False)
    out["kjv_verses"] = len(kjv)
    dense = "dense" in parts and kjv.has_dense
    storage = {lab: compressed(kjv, d, q) for lab, (d, q) in variants.items()} if dense else {}
    for name in args.translations.split(","):
        text = read_bible(name)
        pairs = [(kjv.row_of[ref], t) for ref, t in text.verses if ref in kjv.row_of]
        rows = [r for r, _ in pairs]
        texts = [t for _, t in pairs]
        rng = np.random.default_rng(0)
        sample_idx = np.sort(rng.choice(len(pairs), min(args.sample, len(pairs)), replace=False))
        start = time.perf_counter()
        vectors = kjv.encode_queries([texts[i] for i in sample_idx]) if dense else None
        result = evaluate_translation(
            kjv, rows, texts, sample_idx, vectors, storage, parts if dense else {"lexical"} & parts
        )
        result.update(read=len(text.verses), skipped=text.skipped)
        if dense:
            result["encode_s"] = round(time.perf_counter() - start, 1)
        if name == "dr" and "lexical" in parts:
            keep = [i for i, r in enumerate(rows) if not kjv.ids[r].startswith("Psalms ")]
            result["lexical_without_psalms"] = recall(
                rankings(kjv, [texts[i] for i in keep], ("lexical",)), [rows[i] for i in keep]
            )
        out["english"][name] = {**out["english"].get(name, {}), **result}
        log(f"{name}: {json.dumps(result)}")
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(out, indent=2), encoding="utf-8")

    if "latin" in parts and Path(args.latin_index).is_dir():
        latin = IntertextIndex.from_disk(args.latin_index, mmap=False)
        dr = read_bible("dr")
        pairs = [
            (latin.row_of[ref + VULGATE_SUFFIX], t)
            for ref, t in dr.verses
            if ref + VULGATE_SUFFIX in latin.row_of
        ]
        rng = np.random.default_rng(0)
        idx = np.sort(rng.choice(len(pairs), min(args.sample, len(pairs)), replace=False))
        texts = [pairs[i][1] for i in idx]
        rows = [pairs[i][0] for i in idx]
        vectors = latin.encode_queries(texts)
        result = {
            "verses": len(pairs),
            "dense": recall(rankings(latin, texts, ("dense",), vectors), rows),
            "fused": recall(rankings(latin, texts, ("lexical", "dense"), vectors), rows),
            "storage": {},
        }
        for label, (d, q) in variants.items():
            variant = compressed(latin, d, q)
            projected = variant.project(vectors)
            result["storage"][label] = {
                "dense": recall(rankings(variant, texts, ("dense",), projected), rows)
            }
        log(f"latin dr: {json.dumps(result)}")
        out["latin"]["dr"] = result
    Path(args.output).write_text(json.dumps(out, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
