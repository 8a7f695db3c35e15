"""Real Bible quotations in running text (benchmarks/data/bible-quotations), linked by the
shipped Bible indexes: which reranker and threshold (chosen on the dev halves and on
synthetic quotations, never on test), and then, once, the test halves.

English: the KJV index as shipped in ``en_rhetoric_intertext``; Latin: the Virgil +
Vulgate index of ``la_rhetoric_intertext`` 0.2.0. A query is a gold sentence (``text``;
rows with the same text are one query); a positive row is *found* when one of its verses
is linked to its sentence; *precision* is the share of all links made on the gold
sentences (quotations, allusions and negatives alike) whose verse is one of the
sentence's gold verses (an unannotated quotation counts as wrong).

Rerankers compared on dev (both read the candidates of the packaged reranker's fusion):
``packaged``: the reranker trained on the Loci Similes links (Latin, Virgil and nine other
authors; for an index without vectors, the lexical one trained on Virgil); ``bible``: a
logistic reranker over the same features trained on synthetic quotations as positives
(``embedded_quotations``: fragments of 4-12 words of verses put into sentences of the
first part of the running text; English: 400 KJV fragments and 120 each of the ASV,
Webster, Young's, Basic English and WEB, gold the KJV verse; Latin: 400 Vulgate
fragments and 400 of the second Latin psalter of the Tesserae Vulgate, gold the Vulgate
verse) with every candidate of that first part of the running text without scripture as
negatives (English: UD English-EWT dev, first half; Latin: Caesar, Bellum Gallicum 2,
and Cicero's Pro Archia, Pro Ligario and Pro Marcello, which can quote neither Virgil nor
the Vulgate; the sentences dealt in turn to three thirds). Index kinds compared
(English): the shipped one (lexical + int8 vectors) and one without vectors.
Threshold: the lowest at which the second half of that running
text gets at most ``--max-false`` links per 100 sentences and the dev precision is at
least 0.9; the reranker with more dev rows found at its threshold is chosen. Test,
once: the chosen reranker and threshold on the test halves; false links per 100
sentences of EWT test (English) and of the third third of the Latin prose (Latin).

Virgil (``--langs virgil``): the Loci Similes links to Virgil on the Latin index of
Virgil and the Vulgate, with the chosen reranker and threshold and with the packaged one
(which was trained on those links), so that the Vulgate's arrival is measured on Virgil too.

Two matchers (``--la-virgil VIRGIL_INDEX``, ``la_rhetoric_intertext`` 0.2.0): the Latin
pipeline links with Virgil's matcher (its index, ``--la-virgil-reranker`` at its own
threshold, fixed) and a second matcher over ``--la-index``, then the Vulgate alone, whose
reranker and threshold are chosen as above; every score counts both matchers' links (a
link to Virgil on a Bible quotation or on the prose is wrong). ``--la-extra-reranker``
adds a reranker trained elsewhere (the one-index candidate's) as a candidate, its
threshold chosen on dev the same way. ``--langs virgil`` then scores Virgil's matcher on
its own index and counts the Vulgate matcher's links to the 463 Loci Similes queries.

Speed: load + link of a 10,000-token English text (EWT test sentences joined, counted in
spaCy tokens), what the intertext pipeline adds to ``analyze --lang en``.

Precision (``--precision``, default the ``intertext_matcher``'s): the arithmetic every
query of the run (dev, test, running text, training pairs, the speed text) is encoded
in. With ``--en-reranker`` the shipped English reranker is also scored on dev at its own
threshold with the same queries (``en/dev_shipped_reranker``), so that two precisions
compare on one reranker; within the caps below it is also the first candidate, kept
(and exported as it is) unless another finds more dev rows. ``--speed-precisions
float32,auto`` only times the built English pipeline in each precision, alternating,
``--speed-repeats`` times each (medians; reads no gold).
"""

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spacy_rhetoric.intertext.bible import VULGATE_SUFFIX, read_bible  # noqa: E402
from spacy_rhetoric.intertext.component import DEFAULT_PRECISION  # noqa: E402
from spacy_rhetoric.intertext.dense import cpu_precision  # noqa: E402
from spacy_rhetoric.intertext.index import IntertextIndex  # noqa: E402
from spacy_rhetoric.intertext.rerank import (  # noqa: E402
    PACKAGED_DIR,
    FeatureReranker,
    apply_fusion,
    pair_features,
)

GOLD = Path("data/bible-quotations")
K, POOL = 10, 100


def conllu_sentences(path: Path) -> List[str]:
    return [
        line[len("# text = ") :].strip()
        for line in path.read_text("utf8").splitlines()
        if line.startswith("# text = ")
    ]


def prose_sentences(folder: Path, authors: Sequence[str]) -> List[str]:
    """The sentences (spaCy's sentencizer, 4 tokens or more) of some authors' files in
    the data mirror's latin-prose folder, without the section numbers."""
    import spacy

    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    out = []
    for author in authors:
        for file in sorted((folder / author).glob("*.txt")):
            text = re.sub(r"\[\s*\d+\s*\]", " ", file.read_text("utf8"))
            text = re.sub(r"\s+", " ", text)
            out.extend(s.text.strip() for s in nlp(text).sents if len(s) >= 4)
    return out


def gold_queries(path: Path, split: str, suffix: str) -> List[Dict]:
    """Gold rows of one split grouped by sentence: text, rows (kind, verses)."""
    by_text: Dict[str, Dict] = {}
    for line in path.read_text("utf8").splitlines():
        row = json.loads(line)
        if row["split"] != split:
            continue
        q = by_text.setdefault(row["text"], {"text": row["text"], "rows": []})
        q["rows"].append(
            {"id": row["id"], "kind": row["kind"], "verses": [v + suffix for v in row["verses"]]}
        )
    return list(by_text.values())


class Searched:
    """The candidates of some queries, with their features, searched once."""

    def __init__(self, index: IntertextIndex, texts: Sequence[str], names, other=None):
        start = time.perf_counter()
        self.texts = list(texts)
        # the links another matcher of the same pipeline makes on these texts (its own
        # reranker and threshold, fixed): counted with this one's in every score
        self.other = other(self.texts) if other is not None else [[] for _ in self.texts]
        self.hits = index.search(self.texts, K, POOL) if self.texts else []
        self.features = [
            pair_features(index, t, h, POOL, names) if h else np.zeros((0, len(names)))
            for t, h in zip(self.texts, self.hits)
        ]
        self.labels = [[index.ids[c.row] for c in h] for h in self.hits]
        self.seconds = time.perf_counter() - start

    def links(self, reranker: FeatureReranker, threshold: float) -> List[List[str]]:
        out = []
        for feats, labels, other in zip(self.features, self.labels, self.other):
            p = reranker.predict_proba(feats) if len(feats) else np.zeros(0)
            out.append([lab for lab, q in zip(labels, p) if q >= threshold] + other)
        return out

    def probabilities(self, reranker: FeatureReranker) -> List[np.ndarray]:
        return [reranker.predict_proba(f) if len(f) else np.zeros(0) for f in self.features]


def gold_scores(queries: List[Dict], links: List[List[str]]) -> Dict[str, float]:
    found = {"quotation": [0, 0], "allusion": [0, 0]}
    right = total = 0
    for q, linked in zip(queries, links):
        gold = {v for r in q["rows"] for v in r["verses"]}
        right += sum(lab in gold for lab in linked)
        total += len(linked)
        for r in q["rows"]:
            if r["kind"] in found:
                found[r["kind"]][1] += 1
                found[r["kind"]][0] += any(v in linked for v in r["verses"])
    n_pos = found["quotation"][1] + found["allusion"][1]
    return {
        "found": (found["quotation"][0] + found["allusion"][0]) / max(1, n_pos),
        "found_quotation": found["quotation"][0] / max(1, found["quotation"][1]),
        "found_allusion": found["allusion"][0] / max(1, found["allusion"][1]),
        "positives": n_pos,
        "links": total,
        "precision": right / total if total else 1.0,
    }


def retrieval_found(queries: List[Dict], searched: Searched) -> float:
    hit = n = 0
    for q, labels in zip(queries, searched.labels):
        for r in q["rows"]:
            if r["kind"] != "none":
                n += 1
                hit += any(v in labels for v in r["verses"])
    return hit / max(1, n)


def false_links(searched: Searched, reranker, threshold) -> float:
    links = searched.links(reranker, threshold)
    return 100.0 * sum(len(x) for x in links) / max(1, len(links))


def choose_threshold(reranker, dev: Searched, dev_q, null: Searched, max_false: float):
    """The lowest threshold meeting the false-link cap on ``null`` and precision >= 0.9
    on dev (grid: every candidate probability of both)."""
    grid = sorted(
        {
            round(float(p), 4)
            for ps in dev.probabilities(reranker) + null.probabilities(reranker)
            for p in ps
        }
        | {0.5, 0.99}
    )
    for t in grid:
        if t < 0.05:
            continue
        if false_links(null, reranker, t) <= max_false:
            scores = gold_scores(dev_q, dev.links(reranker, t))
            if scores["precision"] >= 0.9:
                return t, scores
    return 1.01, gold_scores(dev_q, dev.links(reranker, 1.01))


def embedded_quotations(
    hosts: Sequence[str], sources: Sequence[Tuple[str, int]], n: int, seed: int = 1
) -> List[Tuple[str, int]]:
    """Synthetic quotations: ``n`` fragments of verses (4 to 12 consecutive words, or the
    whole verse) put at a word boundary of a running-text sentence, each with the index
    row of its verse. sources: (verse text in some translation, index row)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.choice(len(sources), n, replace=len(sources) < n):
        text, row = sources[i]
        words = text.split()
        size = int(rng.integers(4, 13))
        start = int(rng.integers(0, max(1, len(words) - size + 1)))
        fragment = " ".join(words[start : start + size])
        host = hosts[int(rng.integers(len(hosts)))].split()
        cut = int(rng.integers(0, len(host) + 1))
        out.append((" ".join(host[:cut] + [fragment] + host[cut:]), row))
    return out


def english_pairs(kjv: IntertextIndex, hosts: Sequence[str]) -> List[Tuple[str, int]]:
    """Synthetic English quotations: fragments of the KJV (400) and of five other
    translations (120 each) put into ``hosts``, each with its KJV verse's row."""
    pairs = embedded_quotations(
        hosts, [(t, kjv.row_of[r]) for r, t in read_bible("kjv").verses], 400
    )
    for seed, name in enumerate(("asv", "wbs", "ylt", "bbe", "web"), start=2):
        verses = [(t, kjv.row_of[r]) for r, t in read_bible(name).verses if r in kjv.row_of]
        pairs += embedded_quotations(hosts, verses, 120, seed)
    return pairs


def latin_pairs(latin: IntertextIndex, hosts: Sequence[str]) -> List[Tuple[str, int]]:
    """Synthetic Latin quotations: fragments of the index's Vulgate verses (400) and of
    the second Latin psalter of the Tesserae Vulgate (400) put into ``hosts``, each with
    its Vulgate verse's row."""
    from spacy_rhetoric.intertext.bible import vulgate_dir

    psalter = vulgate_dir() / "jerome.vulgate.part.21a.old_latin_psalms.tess"
    second = []
    for line in psalter.read_text("utf8").splitlines():
        m = re.match(r"<Vulgate Old Latin Psalms\.(\d+)\.(\d+)>\s*(.*)", line)
        label = f"Psalms {int(m.group(1))}:{int(m.group(2))}{VULGATE_SUFFIX}" if m else None
        if label in latin.row_of and m.group(3).strip():
            second.append((m.group(3).strip(), latin.row_of[label]))
    vulgate = [(latin.texts[r], r) for r, i in enumerate(latin.ids) if i.endswith(VULGATE_SUFFIX)]
    return embedded_quotations(hosts, vulgate, 400) + embedded_quotations(hosts, second, 400, 2)


def train_bible_reranker(index, pairs: List[Tuple[str, int]], negatives: Searched, names, fusion):
    searched = Searched(index, [t for t, _ in pairs], names)
    X, y = [], []
    for (_, row), feats, hits in zip(pairs, searched.features, searched.hits):
        if len(feats):
            X.append(feats)
            y.append(np.asarray([c.row == row for c in hits], dtype=np.float64))
    for feats in negatives.features:
        if len(feats):
            X.append(feats)
            y.append(np.zeros(len(feats)))
    reranker = FeatureReranker(
        fusion=fusion,
        features=names,
        origin="trained on synthetic Bible quotations and running text without scripture",
    )
    reranker.fit(np.vstack(X), np.concatenate(y))
    return reranker, {
        "pair_queries": len(pairs),
        "positives_retrieved": int(sum(v.sum() for v in y)),
        "negative_sentences": len(negatives.texts),
        "pairs_search_s": round(searched.seconds, 1),
    }


def run_language(
    lang: str,
    indexes: Dict[str, str],
    full_dir: str,
    null_texts: List[str],
    pairs,
    report_null: List[str],
    args,
    log,
    split: int = 0,
    other=None,
) -> Dict:
    """Choose an index kind (``indexes``: name -> directory; "dense" is the shipped kind,
    "lexical" an index without vectors), a reranker and a threshold on dev; test once.
    ``other``: texts -> the links a second matcher of the pipeline makes on them (fixed),
    counted in every score (dev precision, false links, test)."""
    suffix = VULGATE_SUFFIX if lang == "la" else ""
    gold_file = GOLD / ("latin.jsonl" if lang == "la" else "english.jsonl")
    dev_q = gold_queries(gold_file, "dev", suffix)
    half = split or len(null_texts) // 2
    out: Dict = {
        "indexes": indexes,
        "precision": args.precision,
        "precision_here": cpu_precision(args.precision),
        "candidates": {},
    }
    kept = {}
    for kind, index_dir in indexes.items():
        index = IntertextIndex.from_disk(index_dir, mmap=False)
        index.query_precision = args.precision
        file = "reranker-multilingual-e5-small.json" if index.has_dense else "reranker-lexical.json"
        packaged = FeatureReranker.from_dict(json.loads((PACKAGED_DIR / file).read_text()))
        apply_fusion(index, packaged)
        names = packaged.features
        dev = Searched(index, [q["text"] for q in dev_q], names, other)
        null_a = Searched(index, null_texts[:half], names, other)
        null_b = Searched(index, null_texts[half:], names, other)
        log(
            f"{lang} {kind}: searched dev and running text "
            f"({null_a.seconds + null_b.seconds:.0f} s)"
        )
        if kind == "dense" and getattr(args, f"{lang}_reranker", ""):
            shipped = FeatureReranker.from_dict(
                json.loads(Path(getattr(args, f"{lang}_reranker")).read_text())
            )
            if shipped.features == names and shipped.fusion == packaged.fusion:
                t = shipped.threshold
                out["dev_shipped_reranker"] = {
                    "file": getattr(args, f"{lang}_reranker"),
                    "threshold": t,
                    "dev": gold_scores(dev_q, dev.links(shipped, t)),
                    "dev_links": dev.links(shipped, t),
                    "false_links_per_100_null_a": false_links(null_a, shipped, t),
                    "false_links_per_100_null_b": false_links(null_b, shipped, t),
                    "false_links_per_100_running_text": 100.0
                    * (
                        sum(map(len, null_a.links(shipped, t)))
                        + sum(map(len, null_b.links(shipped, t)))
                    )
                    / max(1, len(null_a.texts) + len(null_b.texts)),
                }
                brief = {k: v for k, v in out["dev_shipped_reranker"].items() if k != "dev_links"}
                log(f"{lang} shipped reranker on dev: {json.dumps(brief)}")
                scores = out["dev_shipped_reranker"]["dev"]
                if (
                    out["dev_shipped_reranker"]["false_links_per_100_null_b"] <= args.max_false
                    and scores["precision"] >= 0.9
                ):  # within the caps: kept unless a new candidate finds more on dev
                    out["candidates"][f"{kind}/shipped"] = {
                        "threshold": t,
                        "dev": scores,
                        "false_links_per_100_null_b": brief["false_links_per_100_null_b"],
                        "dev_at_own_threshold": scores,
                    }
                    kept[f"{kind}/shipped"] = (index, index_dir, shipped, names, dev)
        extra = getattr(args, f"{lang}_extra_reranker", "")
        if kind == "dense" and extra:  # a reranker trained elsewhere, its threshold chosen here
            other_reranker = FeatureReranker.from_dict(json.loads(Path(extra).read_text()))
            if other_reranker.features == names and other_reranker.fusion == packaged.fusion:
                t, scores = choose_threshold(other_reranker, dev, dev_q, null_b, args.max_false)
                key = f"{kind}/given"
                out["candidates"][key] = {
                    "file": extra,
                    "threshold": t,
                    "dev": scores,
                    "false_links_per_100_null_b": false_links(null_b, other_reranker, t),
                }
                kept[key] = (index, index_dir, other_reranker, names, dev)
                log(f"{lang} {key}: {json.dumps(out['candidates'][key])}")
        bible, training = train_bible_reranker(index, pairs, null_a, names, packaged.fusion)
        out[f"{kind}_index"] = {
            "segments": len(index),
            "dev_retrieval_found_at_10": retrieval_found(dev_q, dev),
            "bible_reranker_training": training,
            "null_a_sentences": len(null_a.texts),
            "null_b_sentences": len(null_b.texts),
        }
        for name, reranker in (("packaged", packaged), ("bible", bible)):
            t, scores = choose_threshold(reranker, dev, dev_q, null_b, args.max_false)
            key = f"{kind}/{name}"
            out["candidates"][key] = {
                "threshold": t,
                "dev": scores,
                "false_links_per_100_null_b": false_links(null_b, reranker, t),
                "dev_at_own_threshold": gold_scores(dev_q, dev.links(reranker, reranker.threshold)),
            }
            kept[key] = (index, index_dir, reranker, names, dev)
            log(f"{lang} {key}: {json.dumps(out['candidates'][key])}")
    # ties: the first (the shipped reranker, else the shipped kind's packaged reranker)
    order = list(out["candidates"])
    chosen = max(order, key=lambda n: (out["candidates"][n]["dev"]["found"], -order.index(n)))
    index, index_dir, reranker, names, dev = kept[chosen]
    threshold = out["candidates"][chosen]["threshold"]
    out["chosen"] = {"candidate": chosen, "index": index_dir, "threshold": threshold}
    export = FeatureReranker.from_dict(reranker.to_dict())
    if not chosen.endswith("/shipped"):  # the shipped one is exported as it is
        export.threshold = threshold
        earlier = re.sub(r"; threshold [\d.]+ chosen on the \w+ Bible quotations dev half", "",
                         reranker.origin or "")  # fmt: skip
        export.origin = (
            earlier + f"; threshold {threshold:.3f} chosen on the {lang} Bible quotations dev half"
        )
    Path(args.export_dir).mkdir(parents=True, exist_ok=True)
    export_file = Path(args.export_dir) / f"reranker-bible-{lang}.json"
    export_file.write_text(json.dumps(export.to_dict(), indent=1))
    # storage: the whole float16 vectors against the shipped ones, on dev
    if index.has_dense and full_dir and Path(full_dir).is_dir():
        full = IntertextIndex.from_disk(full_dir, mmap=False)
        full.query_precision = args.precision
        apply_fusion(full, reranker)
        full_dev = Searched(full, [q["text"] for q in dev_q], names)
        out["dev_whole_vectors"] = {
            "retrieval_found_at_10": retrieval_found(dev_q, full_dev),
            **gold_scores(dev_q, full_dev.links(reranker, threshold)),
        }
        out["dev_shipped_vectors"] = {
            "retrieval_found_at_10": retrieval_found(dev_q, dev),
            **out["candidates"][chosen]["dev"],
        }
    out["_export"] = str(export_file)
    if args.no_test:  # dev only (trying the script out): the test halves stay unread
        return out
    # test, once
    test_q = gold_queries(gold_file, "test", suffix)
    test = Searched(index, [q["text"] for q in test_q], names, other)
    null_test = Searched(index, report_null, names, other)
    out["test"] = {
        **gold_scores(test_q, test.links(reranker, threshold)),
        "retrieval_found_at_10": retrieval_found(test_q, test),
        "null_sentences": len(report_null),
        "false_links_per_100_sentences": false_links(null_test, reranker, threshold),
        "per_row": [
            {"id": r["id"], "kind": r["kind"], "linked": linked}
            for q, linked in zip(test_q, test.links(reranker, threshold))
            for r in q["rows"]
        ],
    }
    log(f"{lang} test: {json.dumps({k: v for k, v in out['test'].items() if k != 'per_row'})}")
    out["_export"] = str(export_file)
    return out


def speed_text(texts: List[str], tokens: int = 10000) -> str:
    """The first EWT test sentences whose spaCy English tokens reach ``tokens``, joined
    (the issue's unit is the token: 10,000 whitespace words are about 12,000 tokens)."""
    import spacy

    tokenizer = spacy.blank("en").tokenizer
    count, chosen = 0, []
    for t in texts:
        if count >= tokens:
            break
        chosen.append(t)
        count += len(tokenizer(t))
    return " ".join(chosen)


def english_speed(
    index_dir: str, reranker_file: str, texts: List[str], pipeline: str = "", precision: str = ""
) -> Dict:
    """Seconds to load the shipped kind of English pipeline (sentencizer +
    intertext_matcher over the chosen index, with the chosen reranker; or the built
    pipeline ``pipeline``, as ``analyze`` loads it) and to link a 10,000-token text (EWT
    test sentences joined), with the queries encoded in ``precision`` (""; the
    pipeline's own). Loading the encoder happens on the first doc, so it counts in
    ``link_s``."""
    import tempfile

    import spacy

    from spacy_rhetoric.intertext.pipeline import index_pipeline

    with tempfile.TemporaryDirectory() as tmp:
        if pipeline:
            tmp = pipeline
        else:
            index_pipeline(index_dir, "en", reranker=reranker_file).to_disk(tmp)
        start = time.perf_counter()
        nlp = spacy.load(tmp)
        matcher = nlp.get_pipe("intertext_matcher")
        if precision:
            matcher.cfg["precision"] = precision
        load = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        doc = nlp(speed_text(texts))
        run, run_cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "tokens": len(doc),
        "sentences": len(list(doc.sents)),
        "load_s": round(load, 2),
        "link_s": round(run, 2),
        "link_cpu_s": round(run_cpu, 2),
        "added_s": round(load + run, 2),
        "links": len(doc.spans.get("intertext", [])),
        "threads": os.environ.get("OMP_NUM_THREADS", "1"),
        "precision": matcher.cfg["precision"],
        "precision_here": cpu_precision(matcher.cfg["precision"]),
        "pipeline": pipeline or "built from the chosen index and reranker",
    }


def english_speed_precisions(
    pipeline: str, texts: List[str], precisions: Sequence[str], repeats: int
) -> Dict:
    """``english_speed`` of the built pipeline in each precision, alternating (one run of
    each per round, ``repeats`` rounds), with the median of each and the links that
    differ from the first precision's."""
    runs: Dict[str, List[Dict]] = {p: [] for p in precisions}
    for _ in range(repeats):
        for p in precisions:
            runs[p].append(english_speed("", "", texts, pipeline, p))
    out: Dict = {"pipeline": pipeline, "repeats": repeats, "precisions": {}}
    for p, rows in runs.items():
        out["precisions"][p] = {
            "precision_here": rows[0]["precision_here"],
            "added_s_median": float(np.median([r["added_s"] for r in rows])),
            "link_s_median": float(np.median([r["link_s"] for r in rows])),
            "load_s_median": float(np.median([r["load_s"] for r in rows])),
            "added_s": [r["added_s"] for r in rows],
            "links": [r["links"] for r in rows],
            "tokens": rows[0]["tokens"],
            "sentences": rows[0]["sentences"],
        }
    out["threads"] = os.environ.get("OMP_NUM_THREADS", "1")
    return out


def english_profile(pipeline: str, texts: List[str], precision: str) -> Dict:
    """Where the seconds of ``english_speed`` go: the built pipeline links the same
    10,000-token text under cProfile; cumulative seconds of its steps (the encoder's
    loading is inside ``encode_queries``)."""
    import cProfile
    import pstats

    import spacy

    nlp = spacy.load(pipeline)
    nlp.get_pipe("intertext_matcher").cfg["precision"] = precision
    text = speed_text(texts)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    doc = nlp(text)
    profiler.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler).stats  # (file, line, function) -> (.., .., .., cumulative, ..)
    steps = {
        "encode_queries_s": ("intertext/index.py", "encode_queries"),
        "encoder_load_s": ("intertext/dense.py", "load_encoder"),
        "lexical_search_s": ("intertext/lexical.py", "search"),
        "dense_search_s": ("intertext/index.py", "dense_topk"),
        "rerank_s": ("intertext/rerank.py", "rerank"),
    }
    out: Dict = {
        "pipeline": pipeline,
        "sentences": len(list(doc.sents)),
        "total_s": round(total, 2),
    }
    for key, (file, function) in steps.items():
        out[key] = round(
            sum(v[3] for k, v in stats.items() if k[0].endswith(file) and k[2] == function), 2
        )
    out["threads"] = os.environ.get("OMP_NUM_THREADS", "1")
    out["precision"], out["precision_here"] = precision, cpu_precision(precision)
    return out


def loci_similes_gold(index: IntertextIndex, labels: Path) -> Tuple[Dict[str, str], Dict]:
    """The Loci Similes queries (seg_id -> text) and, per query, the index rows of each of
    its gold links whose source the index holds (seg_id -> [rows, ...])."""
    from spacy_rhetoric.corpora.loci_similes import convert_loci_similes
    from spacy_rhetoric.intertext.train import source_rows

    conversion = convert_loci_similes(labels)
    source_texts = {d.user_data["seg_id"]: d.text for d in conversion.splits["sources"]}
    queries: Dict[str, str] = {}
    items: Dict[str, List[set]] = {}
    for split, docs in conversion.splits.items():
        if split == "sources":
            continue
        for doc in docs:
            q = doc.user_data["seg_id"]
            queries[q] = doc.text
            for link in doc.user_data["links"]:
                if link["label"] == 1:
                    rows = source_rows(index, link["source_id"], source_texts[link["source_id"]])
                    if rows:
                        items.setdefault(q, []).append(rows)
    return queries, items


def loci_similes_counts(index: IntertextIndex, names, items, links) -> Tuple[int, int, int]:
    """Gold links found, links right and links made, over the queries ``names`` and their
    links (source labels), against ``loci_similes_gold``'s items."""
    found = right = total = 0
    for q, linked in zip(names, links):
        rows = {index.row_of[lab] for lab in linked}
        gold = set().union(*items.get(q, [set()]))
        found += sum(bool(r & rows) for r in items.get(q, []))
        right += len(rows & gold)
        total += len(rows)
    return found, right, total


def virgil_links(index_dir: str, labels: Path, rerankers: Dict[str, Tuple[str, float]]) -> Dict:
    """The Loci Similes links to Virgil on the Latin index (Virgil + Vulgate): recall over
    the links whose source is a line of Virgil, precision over every link made to any of
    the 463 queries (a link outside the gold rows counts as wrong), per reranker
    (name -> (file, threshold)). The packaged reranker was trained on these links."""
    index = IntertextIndex.from_disk(index_dir, mmap=False)
    queries, items = loci_similes_gold(index, labels)
    names = sorted(queries)
    out: Dict = {"queries": len(names), "virgil_links": sum(len(v) for v in items.values())}
    for name, (file, threshold) in rerankers.items():
        reranker = FeatureReranker.from_dict(json.loads(Path(file).read_text()))
        apply_fusion(index, reranker)
        searched = Searched(index, [queries[q] for q in names], reranker.features)
        links = searched.links(reranker, threshold)
        found, right, total = loci_similes_counts(index, names, items, links)
        out[name] = {
            "threshold": threshold,
            "recall": found / max(1, out["virgil_links"]),
            "precision_all_queries": right / total if total else 1.0,
            "links": total,
            "vulgate_links": sum(lab.endswith(VULGATE_SUFFIX) for x in links for lab in x),
        }
    return out


def matcher_links(index_dir: str, reranker_file: str, precision: str = "float32"):
    """RETURNS: texts -> the links of a matcher with this index and reranker at the
    reranker's own threshold (the Virgil matcher of a two-matcher Latin pipeline)."""
    index = IntertextIndex.from_disk(index_dir, mmap=False)
    index.query_precision = precision
    reranker = FeatureReranker.from_dict(json.loads(Path(reranker_file).read_text()))
    apply_fusion(index, reranker)

    def links(texts: List[str]) -> List[List[str]]:
        if not texts:
            return []
        return Searched(index, texts, reranker.features).links(reranker, reranker.threshold)

    return links


def combined_virgil(virgil: Dict, vulgate: Dict, name: str) -> Dict:
    """Loci Similes over all 463 queries with two matchers: the Virgil matcher's links
    (``virgil``: ``virgil_links`` on the Virgil index) and the Vulgate matcher's
    (``vulgate``: on the Vulgate index, where every link is outside the gold rows)."""
    v, b = virgil["packaged"], vulgate[name]
    right = v["precision_all_queries"] * v["links"]
    total = v["links"] + b["links"]
    return {
        "recall": v["recall"],
        "precision_all_queries": right / total if total else 1.0,
        "virgil_matcher_links": v["links"],
        "vulgate_matcher_links": b["links"],
        "virgil_matcher_precision_all_queries": v["precision_all_queries"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--en-index", default="../training/intertext/kjv-index-shipped")
    parser.add_argument("--en-full", default="../training/intertext/kjv-index")
    parser.add_argument("--la-index", default="../training/intertext/virgil-vulgate-index-shipped")
    parser.add_argument("--la-full", default="../training/intertext/virgil-vulgate-index")
    parser.add_argument("--ud", default="../assets/ud/UD_English-EWT")
    parser.add_argument(
        "--latin-prose",
        default=str(Path(os.environ.get("SPACY_RHETORIC_DATA", "../assets")) / "latin-prose"),
    )
    parser.add_argument("--en-lexical", default="", help="a KJV index without vectors, compared")
    parser.add_argument("--max-false", type=float, default=1.0)
    parser.add_argument("--no-test", action="store_true", help="choose on dev, read no test")
    parser.add_argument("--no-speed", action="store_true", help="skip the English speed")
    parser.add_argument(
        "--en-pipeline", default="", help="the built English pipeline whose speed is measured"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="only profile the English pipeline's linking (en/speed_profile); reads no gold",
    )
    parser.add_argument(
        "--precision",
        default=DEFAULT_PRECISION,
        choices=("float32", "bfloat16", "auto"),
        help="the arithmetic of the query encoder (default: intertext_matcher's)",
    )
    parser.add_argument(
        "--en-reranker",
        default="../spacy_rhetoric/data/intertext/reranker-bible-en.json",
        help="the shipped English reranker, also scored on dev at its own threshold",
    )
    parser.add_argument(
        "--speed-precisions",
        default="",
        help="only time the built English pipeline in these precisions, e.g. float32,auto",
    )
    parser.add_argument("--speed-repeats", type=int, default=3)
    parser.add_argument("--export-dir", default="results/intertext_bible_rerankers")
    parser.add_argument("--loci-similes", default="../assets/loci-similes/labels.csv")
    parser.add_argument("--langs", default="en,la,virgil")
    parser.add_argument(
        "--la-virgil",
        default="",
        help="a Virgil index: the Latin pipeline has two matchers, this one with --la-virgil-"
        "reranker at its threshold (fixed) and one over --la-index (then the Vulgate alone), "
        "whose reranker and threshold are chosen; both matchers' links are scored",
    )
    parser.add_argument(
        "--la-virgil-reranker",
        default="../spacy_rhetoric/data/intertext/reranker-multilingual-e5-small.json",
    )
    parser.add_argument(
        "--la-extra-reranker",
        default="",
        help="a Latin reranker trained elsewhere, a candidate with its threshold chosen on dev",
    )
    parser.add_argument(
        "--la-key", default="la", help="the results' key for the Latin run (e.g. la_two)"
    )
    parser.add_argument("--output", default="results/intertext_bible_quotations.json")
    args = parser.parse_args()

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    out: Dict = {"k": K, "max_false_links_per_100": args.max_false}
    if Path(args.output).is_file():
        out = {**json.loads(Path(args.output).read_text()), **out}
    langs = args.langs.split(",")
    args.la_reranker = ""
    if args.speed_precisions:
        ewt_test = conllu_sentences(Path(args.ud) / "en_ewt-ud-test.conllu")
        if "en" not in out or not Path(args.en_pipeline or "-").is_dir():
            parser.error("--speed-precisions needs --en-pipeline and a results file with en")
        out["en"]["speed_precisions"] = english_speed_precisions(
            args.en_pipeline, ewt_test, args.speed_precisions.split(","), args.speed_repeats
        )
        log(f"en speed by precision: {json.dumps(out['en']['speed_precisions'])}")
        Path(args.output).write_text(json.dumps(out, indent=2))
        return
    if args.profile:
        ewt_test = conllu_sentences(Path(args.ud) / "en_ewt-ud-test.conllu")
        if "en" not in out or not Path(args.en_pipeline or "-").is_dir():
            parser.error("--profile needs --en-pipeline and a results file with the en run")
        out["en"]["speed_profile"] = english_profile(args.en_pipeline, ewt_test, args.precision)
        log(f"en profile: {json.dumps(out['en']['speed_profile'])}")
        Path(args.output).write_text(json.dumps(out, indent=2))
        return
    if "en" in langs:
        ud = Path(args.ud)
        ewt_dev = conllu_sentences(ud / "en_ewt-ud-dev.conllu")
        ewt_test = conllu_sentences(ud / "en_ewt-ud-test.conllu")
        kjv = IntertextIndex.from_disk(args.en_index, mmap=False)
        # training queries: fragments of the KJV (400) and of five other translations
        # (120 each) put into EWT dev sentences of the first half (the reranker's
        # negatives), each with its KJV verse
        hosts = ewt_dev[: len(ewt_dev) // 2]
        pairs = english_pairs(kjv, hosts)
        indexes = {"dense": args.en_index}
        if args.en_lexical:
            indexes["lexical"] = args.en_lexical
        out["en"] = run_language("en", indexes, args.en_full, ewt_dev, pairs, ewt_test, args, log)
        if not args.no_speed:
            pipeline = args.en_pipeline if Path(args.en_pipeline or "-").is_dir() else ""
            out["en"]["speed"] = english_speed(
                out["en"]["chosen"]["index"], out["en"]["_export"], ewt_test, pipeline,
                args.precision,
            )  # fmt: skip
            log(f"en speed: {json.dumps(out['en']['speed'])}")
        Path(args.output).write_text(json.dumps(out, indent=2))
    if "la" in langs:
        prose = prose_sentences(Path(args.latin_prose), ("caesar", "cicero"))
        thirds = [prose[i::3] for i in range(3)]
        latin = IntertextIndex.from_disk(args.la_index, mmap=False)
        pairs = latin_pairs(latin, thirds[0])
        other = None
        if args.la_virgil:
            other = matcher_links(args.la_virgil, args.la_virgil_reranker)
        key = args.la_key
        out[key] = run_language(
            "la",
            {"dense": args.la_index},
            args.la_full,
            thirds[0] + thirds[1],
            pairs,
            thirds[2],
            args,
            log,
            split=len(thirds[0]),
            other=other,
        )
        out[key]["prose_sentences"] = len(prose)
        if args.la_virgil:
            out[key]["virgil_matcher"] = {
                "index": args.la_virgil,
                "reranker": args.la_virgil_reranker,
            }
        Path(args.output).write_text(json.dumps(out, indent=2))
    if "virgil" in langs:
        packaged = PACKAGED_DIR / "reranker-multilingual-e5-small.json"
        chosen = Path(args.export_dir) / "reranker-bible-la.json"
        on_index = virgil_links(
            args.la_index,
            Path(args.loci_similes),
            {
                "chosen": (str(chosen), json.loads(chosen.read_text())["threshold"]),
                "packaged": (str(packaged), json.loads(packaged.read_text())["threshold"]),
            },
        )
        if args.la_virgil:  # two matchers: Virgil's on its index, the Vulgate's on its own
            virgil = virgil_links(args.la_virgil, Path(args.loci_similes), {
                "packaged": (args.la_virgil_reranker, json.loads(
                    Path(args.la_virgil_reranker).read_text())["threshold"])})  # fmt: skip
            out[f"{args.la_key}_virgil"] = {
                "virgil_index": virgil,
                "vulgate_index": on_index,
                "combined": combined_virgil(virgil, on_index, "chosen"),
            }
            log(f"la virgil (two matchers): {json.dumps(out[args.la_key + '_virgil'])}")
        else:
            out["la_virgil"] = on_index
            log(f"la virgil: {json.dumps(out['la_virgil'])}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
