"""Queries inside the sentence (``spacy_rhetoric/intertext/units.py``) on the Bible
quotations gold set (benchmarks/data/bible-quotations): which reranker and thresholds
(chosen on the dev halves and on running text without scripture, never on test), then,
once, the test halves; Loci Similes (Virgil) with and without the units; the time the
English pipeline adds.

Rule, written before any result (2026-11-29): the candidates are
- ``sentence/shipped``: each sentence one query, the shipped reranker (0.7.0's matching;
  one threshold for every link, chosen again here),
- ``units/shipped``: units, the shipped reranker, a threshold for quotations and one for
  allusions,
- ``units/trained``: units, a reranker with the alignment features (``ALIGN_FEATURES``)
  trained on the units of synthetic quotations (``embedded_quotations``: verse fragments
  of 4-12 words put into sentences of the first part of the running text; English: 400
  KJV fragments and 120 each of the ASV, Webster, Young's, Basic English and WEB;
  Latin: 400 Vulgate fragments and 400 of the second psalter), every candidate of every
  unit of that first part of the running text a negative; two thresholds.
Thresholds (grid 0.05-1.00 by 0.01, and 1.01 for "off"): the pair with the most dev rows
found among those whose dev precision is at least 0.90 and that make at most
``--max-false`` links per 100 sentences of the second part of the running text; ties:
higher dev precision, fewer links on the running text, higher thresholds. The candidate
with the most dev rows found is chosen (ties: the earlier); the test halves are then
read once with it. Running text: English, UD English-EWT dev (first half: negatives;
second half: the cap) and test (the report); Latin, Caesar and Cicero (``latin-prose``),
dealt in turn to three thirds (training, cap, report). The Latin pipeline has two
matchers: Virgil's (its index, the packaged Loci Similes reranker at its threshold,
sentence queries or units as ``--virgil-units`` says) and the Vulgate's, whose links
are chosen here; every score counts both matchers' links.

Scores: a positive row is *found* when one of its verses is linked anywhere in its
sentence; *precision* is the share of all links made on the gold sentences whose verse
is one of the sentence's gold verses; *marked* is the share of found rows whose linked
words overlap the row's ``quote``. Virgil (``--langs virgil``): Loci Similes, all 463
queries, Virgil's matcher with sentence queries and with units: recall of the 333 links
to Virgil, precision over all queries. Speed (``--speed``): the English pipeline with
sentence queries (0.7.0's matching, the shipped reranker) and with the chosen units and
reranker, linking the same 10,000-token text (EWT test), alternating, medians.
"""

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from intertext_bible_quotations import (  # noqa: E402
    GOLD,
    conllu_sentences,
    english_pairs,
    gold_queries,
    gold_scores,
    latin_pairs,
    loci_similes_counts,
    loci_similes_gold,
    prose_sentences,
    speed_text,
)

from spacy_rhetoric.intertext.bible import VULGATE_SUFFIX  # noqa: E402
from spacy_rhetoric.intertext.index import IntertextIndex  # noqa: E402
from spacy_rhetoric.intertext.rerank import (  # noqa: E402
    ALIGN_FEATURES,
    FEATURES,
    FeatureReranker,
    apply_fusion,
)
from spacy_rhetoric.intertext.units import (  # noqa: E402
    fold_parallels,
    reranked,
    search_units,
    unit_links,
)

K, POOL = 10, 100
GRID = [round(0.05 + 0.01 * i, 2) for i in range(96)] + [1.01]
FLOOR = GRID[0]
QUOTED_ALONE = False  # --quoted-alone: the quoted words encoded on their own, not pooled
Entry = Tuple[str, float, bool, int, int]  # label, value, quoted, start, end


class UnitSearched:
    """The units of some texts searched once; their links under any reranker and pair
    of thresholds (with another matcher's links, fixed, added)."""

    def __init__(self, index, texts: Sequence[str], units: bool, other=None):
        start = time.perf_counter()
        self.index, self.texts = index, list(texts)
        names = FEATURES + ALIGN_FEATURES
        self.pairs = (
            search_units(index, self.texts, K, POOL, names, units, QUOTED_ALONE) if texts else []
        )
        self.other = other(self.texts) if other is not None else [[] for _ in self.texts]
        self.seconds = time.perf_counter() - start

    def entries(self, reranker: FeatureReranker) -> List[List[Dict]]:
        """Per text, its best ``K`` sources (``unit_links`` rows, every one a link)."""
        out = []
        for pairs in self.pairs:
            probs = None
            if len(pairs.candidates):
                probs = reranker.predict_proba(pairs.features[:, : len(reranker.features)])
            out.append(
                unit_links(self.index, pairs, probs, None, None, K) if probs is not None else []
            )
        return out


def links_at(
    entries: List[List[Dict]], other, tq: float, ta: float, fold: bool = True
) -> List[List[Entry]]:
    """Per text, its links at these thresholds, parallels folded as the matcher folds
    them (with units), and the other matcher's: (label, value, quoted, start, end)."""
    out = []
    for rows, o in zip(entries, other):
        kept = [
            {**r, "parallels": [], "link": True}
            for r in rows
            if r["probability"] >= (tq if r["kind"] == "quotation" else ta)
        ]
        if fold:
            fold_parallels(kept)
        out.append(
            [
                (
                    r["source_id"],
                    r["probability"],
                    r["kind"] == "quotation",
                    r["start_char"],
                    r["end_char"],
                )
                for r in kept
                if r["link"]
            ]  # fmt: skip
            + [(lab, 1.0, True, -1, -1) for lab in o]
        )
    return out


def gold_queries_quoted(path: Path, split: str, suffix: str) -> List[Dict]:
    """``gold_queries`` with each row's ``quote`` (the quoted words), for *marked*."""
    quotes = {}
    for line in path.read_text("utf8").splitlines():
        row = json.loads(line)
        quotes[row["id"]] = row["quote"]
    queries = gold_queries(path, split, suffix)
    for q in queries:
        for r in q["rows"]:
            r["quote"] = quotes[r["id"]]
    return queries


def scores(queries: List[Dict], linked: List[List[Entry]]) -> Dict:
    """``gold_scores`` of the links, and *marked*: the share of found rows whose linked
    words overlap the row's ``quote``."""
    out = gold_scores(queries, [[e[0] for e in links] for links in linked])
    marked = [0, 0]
    for q, links in zip(queries, linked):
        for r in q["rows"]:
            hits = [e for e in links if e[0] in r["verses"]]
            if r["kind"] == "none" or not hits:
                continue
            marked[1] += 1
            a = q["text"].find(r["quote"]) if r.get("quote") else -1
            b = a + len(r["quote"]) if a >= 0 else -1
            marked[0] += any(e[3] < b and e[4] > a for e in hits if e[3] >= 0)
    out["marked"] = marked[0] / max(1, marked[1])
    return out


def per_100(linked: List[List[Entry]]) -> float:
    return 100.0 * sum(map(len, linked)) / max(1, len(linked))


def choose(
    reranker, dev: UnitSearched, dev_q, null: UnitSearched, max_false: float, two: bool
) -> Tuple[float, float, Dict]:
    """The thresholds by the rule of the docstring (``two``: quotations and allusions
    apart; else one threshold for both)."""
    # rows under the grid's lowest threshold never become links (nor fold others)
    dev_e, null_e = (
        [[r for r in rows if r["probability"] >= FLOOR] for rows in searched.entries(reranker)]
        for searched in (dev, null)
    )
    best, best_key = (1.01, 1.01), None
    for tq in GRID:
        for ta in GRID if two else [tq]:
            false = per_100(links_at(null_e, null.other, tq, ta, two))
            if false > max_false:
                continue
            s = scores(dev_q, links_at(dev_e, dev.other, tq, ta, two))
            if s["precision"] < 0.9:
                continue
            key = (s["found"], s["precision"], -false, tq, ta)
            if best_key is None or key > best_key:
                best, best_key = (tq, ta), key
    tq, ta = best
    return (
        tq,
        ta,
        {
            **scores(dev_q, links_at(dev_e, dev.other, tq, ta, two)),
            "false_links_per_100_cap_text": per_100(links_at(null_e, null.other, tq, ta, two)),
        },
    )


def train_units_reranker(index, pairs, negatives: UnitSearched, fusion) -> Tuple:
    searched = UnitSearched(index, [t for t, _ in pairs], True)
    X, y = [], []
    for (_, row), p in zip(pairs, searched.pairs):
        if len(p.candidates):
            X.append(p.features)
            y.append(np.asarray([c.row == row for c in p.candidates], dtype=np.float64))
    for p in negatives.pairs:
        if len(p.candidates):
            X.append(p.features)
            y.append(np.zeros(len(p.candidates)))
    reranker = FeatureReranker(
        fusion=fusion,
        features=FEATURES + ALIGN_FEATURES,
        origin="trained on the units of synthetic Bible quotations and of running text "
        "without scripture (queries inside the sentence)",
    )
    reranker.fit(np.vstack(X), np.concatenate(y))
    return reranker, {
        "pair_queries": len(pairs),
        "pairs": int(sum(len(v) for v in y)),
        "positive_pairs": int(sum(v.sum() for v in y)),
        "search_s": round(searched.seconds, 1),
    }


def retrieval_found(queries, searched: UnitSearched) -> float:
    hit = n = 0
    for q, p in zip(queries, searched.pairs):
        labels = {searched.index.ids[c.row] for c in p.candidates}
        for r in q["rows"]:
            if r["kind"] != "none":
                n += 1
                hit += any(v in labels for v in r["verses"])
    return hit / max(1, n)


def run_language(
    lang: str,
    index_dir: str,
    shipped_file: str,
    null_texts: List[str],
    split: int,
    report_null: List[str],
    pairs,
    args,
    log: Callable,
    other=None,
) -> Dict:
    suffix = VULGATE_SUFFIX if lang == "la" else ""
    gold_file = GOLD / ("latin.jsonl" if lang == "la" else "english.jsonl")
    dev_q = gold_queries_quoted(gold_file, "dev", suffix)
    index = IntertextIndex.from_disk(index_dir, mmap=False)
    index.query_precision = args.precision
    shipped = FeatureReranker.from_dict(json.loads(Path(shipped_file).read_text()))
    apply_fusion(index, shipped)
    out: Dict = {"index": index_dir, "shipped_reranker": shipped_file, "candidates": {}}
    searched = {}
    for units in (False, True):
        name = "units" if units else "sentence"
        dev = UnitSearched(index, [q["text"] for q in dev_q], units, other)
        null_a = UnitSearched(index, null_texts[:split], units, other)
        null_b = UnitSearched(index, null_texts[split:], units, other)
        searched[name] = (dev, null_a, null_b)
        out[f"{name}_search_s"] = round(dev.seconds + null_a.seconds + null_b.seconds, 1)
        out[f"{name}_dev_retrieval_found"] = retrieval_found(dev_q, dev)
        log(f"{lang} {name}: searched ({out[f'{name}_search_s']} s)")
    trained, training = train_units_reranker(index, pairs, searched["units"][1], shipped.fusion)
    out["units_reranker_training"] = training
    rerankers = {"shipped": shipped, "trained": trained}
    for key, (name, rname) in {
        "sentence/shipped": ("sentence", "shipped"),
        "units/shipped": ("units", "shipped"),
        "units/trained": ("units", "trained"),
    }.items():
        dev, _, null_b = searched[name]
        tq, ta, dev_scores = choose(
            rerankers[rname], dev, dev_q, null_b, args.max_false, name == "units"
        )
        out["candidates"][key] = {"threshold": tq, "allusion_threshold": ta, "dev": dev_scores}
        log(f"{lang} {key}: {json.dumps(out['candidates'][key])}")
    order = list(out["candidates"])
    chosen = max(order, key=lambda n: (out["candidates"][n]["dev"]["found"], -order.index(n)))
    c = out["candidates"][chosen]
    name, rname = chosen.split("/")
    reranker = FeatureReranker.from_dict(rerankers[rname].to_dict())
    reranker.threshold = c["threshold"]
    reranker.allusion_threshold = c["allusion_threshold"] if name == "units" else None
    reranker.origin = (
        re.sub(r"; thresholds? .*$", "", reranker.origin or "")
        + f"; thresholds {c['threshold']:.2f} (quotations), {c['allusion_threshold']:.2f} "
        f"(allusions) chosen on the {lang} Bible quotations dev half"
    )
    out["chosen"] = {"candidate": chosen, **c}
    # what the dev rows get from each units reranker: the best value of a gold verse
    dev = searched["units"][0]
    for rname_, rr_ in rerankers.items():
        rows_ = []
        for q, entries in zip(dev_q, dev.entries(rr_)):
            gold = {v for r in q["rows"] for v in r["verses"]}
            for r in q["rows"]:
                if r["kind"] == "none":
                    continue
                hit = [e for e in entries if e["source_id"] in r["verses"]]
                wrong = [e for e in entries if e["source_id"] not in gold][:1]
                rows_.append({
                    "id": r["id"], "kind": r["kind"],
                    "gold": [round(hit[0]["probability"], 3), hit[0]["kind"]] if hit else None,
                    "best_wrong": [wrong[0]["source_id"], round(wrong[0]["probability"], 3),
                                   wrong[0]["kind"]] if wrong else None,
                })  # fmt: skip
        out[f"dev_rows_units_{rname_}"] = rows_
    Path(args.export_dir).mkdir(parents=True, exist_ok=True)
    export = Path(args.export_dir) / f"reranker-bible-{lang}-units.json"
    export.write_text(json.dumps(reranker.to_dict(), indent=1))
    out["export"] = str(export)
    if args.no_test:
        return out
    test_q = gold_queries_quoted(gold_file, "test", suffix)
    test = UnitSearched(index, [q["text"] for q in test_q], name == "units", other)
    null_test = UnitSearched(index, report_null, name == "units", other)
    rr = rerankers[rname]
    test_e = test.entries(rr)
    linked = links_at(test_e, test.other, c["threshold"], c["allusion_threshold"], name == "units")
    out["test"] = {
        **scores(test_q, linked),
        "retrieval_found": retrieval_found(test_q, test),
        "report_sentences": len(report_null),
        "false_links_per_100_sentences": per_100(
            links_at(
                null_test.entries(rr),
                null_test.other,
                c["threshold"],
                c["allusion_threshold"],
                name == "units",
            )  # fmt: skip
        ),
        "per_row": [
            {"id": r["id"], "kind": r["kind"], "linked": [e[0] for e in links]}
            for q, links in zip(test_q, linked)
            for r in q["rows"]
        ],
    }
    brief = {k: v for k, v in out["test"].items() if k != "per_row"}
    log(f"{lang} test: {json.dumps(brief)}")
    return out


def matcher_links(index_dir: str, reranker: FeatureReranker, units: bool, precision: str):
    """texts -> the links of a matcher with this index and reranker (at its thresholds;
    an allusion at its allusion threshold, if it has one), as the component makes them."""
    index = IntertextIndex.from_disk(index_dir, mmap=False)
    index.query_precision = precision
    apply_fusion(index, reranker)
    allusion = (
        reranker.threshold if reranker.allusion_threshold is None else reranker.allusion_threshold
    )

    def links(texts: List[str]) -> List[List[str]]:
        out = []
        for pairs in search_units(index, texts, K, POOL, reranker.features, units, QUOTED_ALONE):
            probs = reranked(pairs, reranker)
            rows = unit_links(index, pairs, probs, reranker.threshold, allusion, K)
            out.append([r["source_id"] for r in rows if r["link"]])
        return out

    return links


def virgil_matcher(index_dir: str, reranker_file: str, units: bool, precision: str):
    """texts -> the links of Virgil's matcher (its reranker at its own threshold)."""
    reranker = FeatureReranker.from_dict(json.loads(Path(reranker_file).read_text()))
    return matcher_links(index_dir, reranker, units, precision)


def loci_similes(labels: Path, virgil: str, reranker_file: str, vulgate_links, precision) -> Dict:
    """Loci Similes, all queries: Virgil's matcher with sentence queries and with units
    (recall of the links to Virgil, precision over all queries), and the links the
    Vulgate's matcher adds to them (all outside the gold)."""
    index = IntertextIndex.from_disk(virgil, mmap=False)
    queries, items = loci_similes_gold(index, labels)
    names = sorted(queries)
    texts = [queries[q] for q in names]
    out: Dict = {"queries": len(names), "virgil_links": sum(len(v) for v in items.values())}
    for units in (False, True):
        start = time.perf_counter()
        links = virgil_matcher(virgil, reranker_file, units, precision)(texts)
        found, right, total = loci_similes_counts(index, names, items, links)
        extra = sum(map(len, vulgate_links(texts))) if vulgate_links is not None else 0
        out["units" if units else "sentence"] = {
            "recall": found / max(1, out["virgil_links"]),
            "precision_all_queries": right / total if total else 1.0,
            "links": total,
            "vulgate_matcher_links": extra,
            "precision_all_links": right / (total + extra) if total + extra else 1.0,
            "seconds": round(time.perf_counter() - start, 1),
        }
    return out


_TIMED = """
import json, sys, time
start = time.perf_counter()
import spacy, spacy_rhetoric
imported = time.perf_counter()
nlp = spacy.load(sys.argv[1])
loaded = time.perf_counter()
doc = nlp(open(sys.argv[2], encoding="utf8").read())
done = time.perf_counter()
print(json.dumps({"load_s": loaded - imported, "link_s": done - loaded, "tokens": len(doc),
                  "spans": len(doc.spans.get("intertext", [])),
                  "code": spacy_rhetoric.__file__}))
"""


def speed(pipelines: Dict[str, Tuple[str, str]], texts: List[str], repeats: int) -> Dict:
    """Seconds to load each pipeline and link the same 10,000-token text, in a fresh
    process each (name -> (pipeline, the spacy_rhetoric source folder it runs with, or
    "" for this one)), alternating, ``repeats`` rounds; medians."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(speed_text(texts))
    runs: Dict[str, List[Dict]] = {name: [] for name in pipelines}
    for _ in range(repeats):
        for name, (path, code) in pipelines.items():
            env = dict(os.environ)
            if code:
                env["PYTHONPATH"] = str(Path(code).resolve())
            result = subprocess.run(
                [sys.executable, "-c", _TIMED, str(Path(path).resolve()), f.name],
                env=env, capture_output=True, text=True, cwd="/",
            )  # fmt: skip
            if result.returncode:
                raise SystemExit(f"speed: {name} failed: {result.stderr.strip()[-2000:]}")
            runs[name].append(json.loads(result.stdout.strip().splitlines()[-1]))
    os.unlink(f.name)
    out: Dict = {"repeats": repeats, "threads": os.environ.get("OMP_NUM_THREADS")}
    for name, rows in runs.items():
        out[name] = {
            "pipeline": pipelines[name][0],
            "code": rows[0]["code"],
            "tokens": rows[0]["tokens"],
            "added_s_median": round(float(np.median([r["load_s"] + r["link_s"] for r in rows])), 2),
            "link_s_median": round(float(np.median([r["link_s"] for r in rows])), 2),
            "added_s": [round(r["load_s"] + r["link_s"], 2) for r in rows],
            "spans": rows[0]["spans"],
        }
    names = list(pipelines)
    out["ratio"] = round(out[names[-1]]["added_s_median"] / out[names[0]]["added_s_median"], 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--en-index", default="../training/intertext/kjv-index-shipped")
    parser.add_argument(
        "--en-reranker", default="../spacy_rhetoric/data/intertext/reranker-bible-en.json"
    )
    parser.add_argument("--la-index", default="../training/intertext/vulgate-index-int8")
    parser.add_argument(
        "--la-reranker", default="../spacy_rhetoric/data/intertext/reranker-bible-la-vulgate.json"
    )
    parser.add_argument("--virgil-index", default="../training/intertext/virgil-index-int8")
    parser.add_argument(
        "--virgil-reranker",
        default="../spacy_rhetoric/data/intertext/reranker-multilingual-e5-small.json",
    )
    parser.add_argument("--virgil-units", action="store_true", help="Virgil's matcher by units")
    parser.add_argument("--ud", default="../assets/ud/UD_English-EWT")
    parser.add_argument(
        "--latin-prose",
        default=str(Path(os.environ.get("SPACY_RHETORIC_DATA", "../assets")) / "latin-prose"),
    )
    parser.add_argument("--loci-similes", default="../assets/loci-similes/labels.csv")
    parser.add_argument("--max-false", type=float, default=1.0)
    parser.add_argument("--precision", default="float32", choices=("float32", "bfloat16", "auto"))
    parser.add_argument("--no-test", action="store_true", help="choose on dev, read no test")
    parser.add_argument("--langs", default="en,la,virgil")
    parser.add_argument("--export-dir", default="results/intertext_units_rerankers")
    parser.add_argument(
        "--speed", default="", help="OLD,NEW: time two built English pipelines (reads no gold)"
    )
    parser.add_argument(
        "--old-code", default="", help="the spacy_rhetoric source folder OLD runs with"
    )
    parser.add_argument("--speed-repeats", type=int, default=3)
    parser.add_argument("--quoted-alone", action="store_true", help="see QUOTED_ALONE")
    parser.add_argument("--output", default="results/intertext_units.json")
    args = parser.parse_args()
    global QUOTED_ALONE
    QUOTED_ALONE = args.quoted_alone

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    out: Dict = {}
    if Path(args.output).is_file():
        out = json.loads(Path(args.output).read_text())
    out.update({"k": K, "max_false_links_per_100": args.max_false, "precision": args.precision})
    langs = args.langs.split(",")
    ud = Path(args.ud)
    if args.speed:
        old, new = args.speed.split(",")
        ewt_test = conllu_sentences(ud / "en_ewt-ud-test.conllu")
        out["speed"] = speed(
            {"sentence": (old, args.old_code), "units": (new, "")}, ewt_test, args.speed_repeats
        )
        log(f"speed: {json.dumps(out['speed'])}")
        Path(args.output).write_text(json.dumps(out, indent=2))
        return
    if "en" in langs:
        ewt_dev = conllu_sentences(ud / "en_ewt-ud-dev.conllu")
        ewt_test = conllu_sentences(ud / "en_ewt-ud-test.conllu")
        kjv = IntertextIndex.from_disk(args.en_index, mmap=False)
        hosts = ewt_dev[: len(ewt_dev) // 2]
        pairs = english_pairs(kjv, hosts)
        out["en"] = run_language(
            "en", args.en_index, args.en_reranker, ewt_dev, len(hosts), ewt_test, pairs,
            args, log,
        )  # fmt: skip
        Path(args.output).write_text(json.dumps(out, indent=2))
    if "la" in langs:
        prose = prose_sentences(Path(args.latin_prose), ("caesar", "cicero"))
        thirds = [prose[i::3] for i in range(3)]
        latin = IntertextIndex.from_disk(args.la_index, mmap=False)
        pairs = latin_pairs(latin, thirds[0])
        other = virgil_matcher(args.virgil_index, args.virgil_reranker, args.virgil_units,
                               args.precision)  # fmt: skip
        out["la"] = run_language(
            "la", args.la_index, args.la_reranker, thirds[0] + thirds[1], len(thirds[0]),
            thirds[2], pairs, args, log, other,
        )  # fmt: skip
        out["la"]["virgil_units"] = args.virgil_units
        out["la"]["prose_sentences"] = len(prose)
        Path(args.output).write_text(json.dumps(out, indent=2))
    if "virgil" in langs:
        vulgate_links: Optional[Callable] = None
        export = Path(args.export_dir) / "reranker-bible-la-units.json"
        if export.is_file():
            chosen = FeatureReranker.from_dict(json.loads(export.read_text()))
            vulgate_links = matcher_links(args.la_index, chosen, True, args.precision)

        out["virgil"] = loci_similes(
            Path(args.loci_similes), args.virgil_index, args.virgil_reranker, vulgate_links,
            args.precision,
        )  # fmt: skip
        log(f"virgil: {json.dumps(out['virgil'])}")
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
