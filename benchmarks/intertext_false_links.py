"""How many intertext links `analyze` reports on a text that cannot quote the indexed
sources, next to the share of the Loci Similes gold links it finds; and whether the
packaged reranker, trained on links to Virgil, holds on an index of other authors.

Indexes, built as the README shows (`intertext index TESSERAE --authors ...`:
multilingual-e5-small and the lexical channel, with the index's default threshold,
``intertext/null.py``): Virgil (Aeneid, Eclogues, Georgics; the index the packaged
reranker was trained against) and, for the transfer check, Horace, Ovid, Lucretius,
Propertius and Lucan.

Allusion-free text: Cicero's De officiis (44 BC; Virgil's Eclogues appeared about 38 BC,
the Aeneid after 19 BC), its Tesserae sections joined as plain text. For comparison,
Jerome's Vita Pauli (Latin Library), which does echo Virgil. Both go through `analyze`'s
own pipeline for Latin (``build_analyzer``: base-la where built, else a rule-based
sentencizer; intertext_matcher with top k 10), so a query is a sentence.

Settings: (1) ``all_top_k``: no reranker, threshold -1 (every top-10 candidate is a link:
what `analyze` did before); (2) ``default_threshold``: no reranker (``--no-packaged-
reranker``), the index's default cosine threshold; (3) ``packaged_reranker``: what
`analyze` does with an index that has no reranker of its own (the packaged one,
``spacy_rhetoric/data/intertext``: since 2026-11-27 the ``broad_distractors`` recipe below
trained on every link; before, ``broad``); ``by_cosine``: (1) cut at fixed cosines, for
information (nothing is chosen on it).

Loci Similes: the gold query passages (Jerome, Lactantius) against each index; link-level
recall over the links whose source the index holds (a link is found if one of its lines
is linked); precision over the source lines predicted for the queries with such links,
and over all 463 queries (``precision_all_queries``: a query whose sources are all
elsewhere is a distractor, and every line linked to it counts as wrong). On the Virgil index the
packaged reranker saw these links, so its score there is replaced by ``own_reranker_cv``:
a reranker trained on four grouped folds (``folds.query_folds``) and scored on the
fifth. On the other authors' index the packaged reranker never saw a positive link (it
was trained against Virgil), so its score there is a transfer score; ``own_reranker_cv``
is the same index's own cross-validated reranker for comparison.

A reranker that transfers (``broad``): trained against an index of all ten source
authors of Loci Similes (Cicero, Lucretius, Catullus, Virgil, Horace, Tibullus,
Propertius, Ovid, Lucan, Martial: the full pool), so that it has seen, as negatives,
the lines of other poets that share Virgil's diction; and the same with distractor
searches (``broad_distractors``, `intertext train --distractors`: each query also searched
without its sources' authors, every candidate a non-link, as it meets an index that lacks
its sources); and (2026-11-27) the same without the candidates of those searches that
share a two-term phrase with the query, possible echoes the gold links do not record
(``broad_distractors_nophrase``, `--no-distractor-phrases`). The recipes (``virgil``:
trained against Virgil, the packaged one until 2026-11-26; ``broad``;
``broad_distractors``; ``broad_distractors_nophrase``) are cross-validated on grouped folds: per
fold, trained without the fold's queries, exported with its fusion, and applied to the
fold's queries on the Virgil index and on the five poets' (``<recipe>_reranker_cv``);
trained on every link, the broad rerankers also run `analyze` on the two texts and
are scored in sample (``<recipe>_reranker``).

    python benchmarks/intertext_false_links.py \
        --broad-index training/intertext/full-index \
        --output benchmarks/results/intertext_false_links.json

``--packaged-only NAME=INDEX,...``: only the packaged reranker's settings (Loci Similes in
sample, Cicero) on given indexes of Virgil, e.g. 0.1.3's float16 index against copies
with int8 or fewer dimensions; no broad index needed.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import srsly

from spacy_rhetoric.analysis.pipelines import build_analyzer
from spacy_rhetoric.corpora.tesserae import read_tesserae
from spacy_rhetoric.intertext.benchmark import read_links
from spacy_rhetoric.intertext.folds import query_folds
from spacy_rhetoric.intertext.index import EMBEDDINGS_FILE, IntertextIndex
from spacy_rhetoric.intertext.link import link_segments, link_threshold
from spacy_rhetoric.intertext.rerank import RERANKER_FILE, index_reranker
from spacy_rhetoric.intertext.train import export_reranker, source_rows, train_reranker
from spacy_rhetoric.textio import text_chunks

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))
K = 10
SETTINGS = ("all_top_k", "default_threshold", "packaged_reranker")
# cosine thresholds swept without a reranker (for information: not chosen on anything)
COSINES = (0.80, 0.82, 0.84, 0.86, 0.88, 0.90, 0.92)
INDEXES = {"virgil": "vergil", "others": "horace,ovid,lucretius,propertius,lucan"}
# the broad index a reranker may be trained against: every source author of Loci Similes
# (the full pool of `intertext evaluate --pool full`, project command index-intertext-full)
BROAD_AUTHORS = "cicero,lucretius,catullus,vergil,horace,tibullus,propertius,ovid,lucan,martial"
# rerankers trained per grouped fold and applied to the test fold's queries on each index
RECIPES = {
    "virgil": "trained against Virgil (the packaged recipe)",
    "broad": "trained against all ten authors",
    "broad_distractors": "trained against all ten authors, each query also searched without "
    "its sources' authors (intertext train --distractors)",
    "broad_distractors_nophrase": "as broad_distractors, without the candidates of those "
    "searches that share a two-term phrase with the query (--no-distractor-phrases)",
}


def paths(data: Path) -> Dict[str, Path]:
    """The mirror's (or the project assets') files this benchmark reads."""
    corpora = data / "latin-corpora"
    return {
        "tesserae": corpora / "tesserae" / "texts" / "la",
        "labels": data / "loci-similes" / "labels.csv",
        "vita_pauli": corpora / "latin-library" / "jerome" / "vitapauli.txt",
    }


def build_index(path: Path, tesserae: Path, authors: str) -> Dict:
    """`intertext index` as a user runs it (kept and reused in a --workdir)."""
    stats = path.with_suffix(".build.json")
    if (path / "meta.json").is_file() and stats.is_file():
        return srsly.read_json(stats)
    command = [sys.executable, "-m", "spacy_rhetoric", "intertext", "index", str(tesserae)]
    command += ["--authors", authors, "-o", str(path), "--stats", str(stats)]
    subprocess.run(command, check=True)
    return srsly.read_json(stats)


def index_copy(index_dir: Path, target: Path) -> Path:
    """A copy of the index without its reranker (the embeddings linked, not copied)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for item in index_dir.iterdir():
        if item.name == EMBEDDINGS_FILE:
            (target / item.name).symlink_to(item.resolve())
        elif item.is_file() and item.name != RERANKER_FILE:
            shutil.copy(item, target / item.name)
    return target


def trained_copy(index_dir: Path, labels: Path, target: Path, **training) -> Dict:
    """A copy of the index with its own reranker trained on labels (``training``:
    ``train_reranker``'s seed, distractors and distractor_phrases)."""
    return train_reranker(labels, index_copy(index_dir, target), K, **training)


def with_reranker(index_dir: Path, reranker_file: Path, target: Path) -> Path:
    """A copy of the index whose own reranker is ``reranker_file`` (an exported one: it
    carries its fusion, which the index then takes on)."""
    shutil.copy(reranker_file, index_copy(index_dir, target) / RERANKER_FILE)
    return target


def exported_reranker(
    index_dir: Path,
    labels: Path,
    workdir: Path,
    output: Path,
    distractors: bool = False,
    seed: int = 0,
    distractor_phrases: bool = True,
) -> Path:
    """Train a reranker on ``labels`` against the index (as `intertext train --export`,
    with ``--distractors`` and ``--no-distractor-phrases`` if asked) and write it to
    ``output``."""
    copy = workdir / f"{output.stem}-index"
    summary = trained_copy(
        index_dir,
        labels,
        copy,
        seed=seed,
        distractors=distractors,
        distractor_phrases=distractor_phrases,
    )
    export_reranker(copy, output, summary)
    shutil.rmtree(copy)
    return output


def fold_labels(labels: Path, workdir: Path) -> Dict[int, Path]:
    """labels.csv without each grouped fold's queries (the training links of that fold)."""
    _, _, links = read_links(labels)
    fold_of = {q: min(f) for q, f in query_folds(links, "grouped").items()}
    query_of = {link.pair_id: link.query for link in links}
    with open(labels, newline="", encoding="utf-8") as file_:
        reader = csv.DictReader(file_)
        fields, rows = reader.fieldnames, list(reader)
    out = {}
    for fold in sorted(set(fold_of.values())):
        out[fold] = workdir / f"labels-train-{fold}.csv"
        with open(out[fold], "w", newline="", encoding="utf-8") as file_:
            writer = csv.DictWriter(file_, fieldnames=fields)
            writer.writeheader()
            writer.writerows(r for r in rows if fold_of[query_of[int(r["pair_id"])]] != fold)
    return out


def analyze_text(
    index_dir: Path,
    text: str,
    threshold: Optional[float],
    packaged: bool = True,
    cuts: Sequence[float] = (),
    shipped_index: bool = False,
) -> Dict:
    """Links `analyze` reports for one text (its Latin pipeline, intertext only); with
    ``cuts`` (cosines), also the links whose similarity reaches each. Without
    ``index_dir``, ``shipped_index`` takes the shipped index, as a fresh install does."""
    analyzer = build_analyzer(
        "la",
        index=index_dir,
        threshold=threshold,
        top_k=K,
        packaged_reranker=packaged,
        shipped_index=shipped_index,
    )
    nlp = analyzer.nlp
    disabled = [n for n in ("chiasmus_finder", "displacement_analyzer") if nlp.has_pipe(n)]
    start = time.perf_counter()
    with nlp.select_pipes(disable=disabled):
        docs = list(nlp.pipe(text_chunks(text), batch_size=16))
    seconds = time.perf_counter() - start
    sentences = sum(len([s for s in d.sents if s.text.strip()]) for d in docs)
    spans = [s for d in docs for s in d.spans.get("intertext", [])]
    links = [link for s in spans for link in s._.intertext_links]
    note = next(n.detail for n in analyzer.notes if n.component == "intertext")
    return {
        "sentences": sentences,
        "tokens": sum(len(d) for d in docs),
        "linked_sentences": len(spans),
        "links": len(links),
        "links_per_100_sentences": 100 * len(links) / max(1, sentences),
        "linked_sentences_per_100": 100 * len(spans) / max(1, sentences),
        "links_per_100_sentences_by_cosine": {
            f"{c:.3f}": 100 * sum(link["similarity"] >= c for link in links) / max(1, sentences)
            for c in cuts
        },
        "seconds": seconds,
        "note": note,
        "examples": [
            {"query": s.text, "source_id": s._.intertext_links[0]["source_id"],
             "source_text": s._.intertext_links[0]["source_text"],
             "probability": s._.intertext_links[0]["probability"]}
            for s in spans[:12]
        ],
    }  # fmt: skip


def link_counts(
    index_dir: Path,
    queries: List[str],
    query_text: Dict[str, str],
    items: Dict[str, List[Set[int]]],
    threshold: Optional[float],
    rerank: bool,
    cuts: Sequence[float] = (),
) -> Dict:
    """Link-level counts: a gold link is found if one of its rows is a link; a predicted
    link is correct if its row belongs to a gold link of the query. Queries without a
    gold link in this index (their sources are elsewhere) count as distractors: every
    link predicted for them is wrong (``predicted`` counts them, ``predicted_gold``
    does not).
    rerank: the index's own reranker, else the packaged one; False: none. With ``cuts``
    (cosines), the same counts for the candidates whose similarity reaches each."""
    index = IntertextIndex.from_disk(index_dir)
    reranker = index_reranker(index, index_dir) if rerank else None
    texts = [query_text[q] for q in queries]
    ranked = link_segments(index, texts, reranker, k=K, threshold=threshold)

    def counts(keep) -> Dict:
        found = predicted = predicted_gold = correct = gold = 0
        for q, rows in zip(queries, ranked):
            linked = {index.row_of[r["source_id"]] for r in rows if keep(r)}
            gold_links = items.get(q, [])
            gold += len(gold_links)
            found += sum(bool(linked & rows_of_link) for rows_of_link in gold_links)
            predicted += len(linked)
            predicted_gold += len(linked) if gold_links else 0
            correct += len(linked & set().union(*gold_links))
        return {"gold": gold, "found": found, "predicted": predicted,
                "predicted_gold": predicted_gold, "correct": correct}  # fmt: skip

    out = counts(lambda r: r["link"])
    out["threshold"] = link_threshold(reranker, threshold, index)
    out["reranker"] = None if reranker is None else (reranker.origin or "own")
    out["by_cosine"] = {f"{c:.3f}": counts(lambda r, c=c: r["similarity"] >= c) for c in cuts}
    return out


def summary(counts: List[Dict]) -> Dict:
    """Recall, precision and F1 over pooled link counts: precision and F1 over the
    queries with gold links in the index, and over all queries (``*_all_queries``)."""
    keys = ("gold", "found", "predicted", "predicted_gold", "correct")
    total = {key: sum(c[key] for c in counts) for key in keys}
    recall = total["found"] / max(1, total["gold"])

    def f1(precision: float) -> float:
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    precision = total["correct"] / max(1, total["predicted_gold"])
    precision_all = total["correct"] / max(1, total["predicted"])
    return {"gold_links": total["gold"], "predicted_links": total["predicted_gold"],
            "recall": recall, "precision": precision, "f1": f1(precision),
            "predicted_links_all_queries": total["predicted"],
            "precision_all_queries": precision_all, "f1_all_queries": f1(precision_all),
            "thresholds": [c.get("threshold") for c in counts]}  # fmt: skip


def gold_items(
    index_dir: Path, labels: Path
) -> Tuple[Dict[str, str], Dict[str, List[Set[int]]], Dict[str, int]]:
    """The Loci Similes queries' texts; per query, the index rows of each of its gold
    links that the index holds; and each query's grouped fold."""
    query_text, source_text, links = read_links(labels)
    index = IntertextIndex.from_disk(index_dir)
    items: Dict[str, List[Set[int]]] = {}
    for link in links:
        rows_of_link = source_rows(index, link.source, source_text[link.source])
        if rows_of_link:
            items.setdefault(link.query, []).append(rows_of_link)
    fold_of = {q: min(f) for q, f in query_folds(links, "grouped").items()}
    return query_text, items, fold_of


def loci_similes(
    index_dir: Path,
    labels: Path,
    workdir: Path,
    cuts: Sequence[float],
    fold_rerankers: Dict[str, Dict[int, Path]],
    trained: Dict[str, Path],
) -> Dict:
    """Every setting on the Loci Similes links whose sources the index holds: each
    recipe of ``fold_rerankers`` (recipe -> grouped fold -> exported reranker trained
    without that fold; "own": trained against this index) cross-validated on this index
    (``<recipe>_reranker_cv``), and each reranker of ``trained`` (recipe -> reranker
    trained on every link) in sample (``<recipe>_reranker``)."""
    query_text, items, fold_of = gold_items(index_dir, labels)
    queries = sorted(query_text)  # all of them: those without a link here are distractors
    out: Dict = {"queries": len(queries), "queries_with_gold_links": len(items)}
    every = link_counts(index_dir, queries, query_text, items, -1.0, False, cuts)
    out["all_top_k"] = summary([every])
    out["by_cosine"] = {cut: summary([c]) for cut, c in every["by_cosine"].items()}
    out["default_threshold"] = summary(
        [link_counts(index_dir, queries, query_text, items, None, False)]
    )
    out["packaged_reranker"] = summary(
        [link_counts(index_dir, queries, query_text, items, None, True)]
    )
    for recipe, file in trained.items():
        copy = with_reranker(index_dir, file, workdir / f"{recipe}-copy-index")
        counted = link_counts(copy, queries, query_text, items, None, True)
        out[f"{recipe}_reranker"] = summary([counted])
        shutil.rmtree(copy)
    for recipe, by_fold in fold_rerankers.items():
        per_fold = []
        for fold, file in sorted(by_fold.items()):
            copy = with_reranker(index_dir, file, workdir / f"{recipe}-fold{fold}-copy-index")
            test = [q for q in queries if fold_of[q] == fold]
            per_fold.append(link_counts(copy, test, query_text, items, None, True))
            shutil.rmtree(copy)
        out[f"{recipe}_reranker_cv"] = summary(per_fold)
    return out


def main(output: Path, workdir: Path, data: Path, broad_index: Optional[Path] = None) -> None:
    files = paths(data)
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    built = {
        name: build_index(workdir / f"{name}-index", files["tesserae"], authors)
        for name, authors in INDEXES.items()
    }
    if broad_index is None:
        built["all"] = build_index(workdir / "all-index", files["tesserae"], BROAD_AUTHORS)
        broad_index = workdir / "all-index"
    else:
        built["all"] = {"reused": str(broad_index)}
    # the rerankers: per grouped fold, trained without that fold's queries against each
    # index (its own) and against the broad one; and the broad one trained on every link
    train_csv = fold_labels(files["labels"], workdir)

    def fold_rerankers(
        name: str, index_dir: Path, distractors: bool = False, phrases: bool = True
    ) -> Dict[int, Path]:
        return {
            fold: exported_reranker(
                index_dir,
                csv_file,
                workdir,
                workdir / f"reranker-{name}-fold{fold}.json",
                distractors,
                distractor_phrases=phrases,
            )
            for fold, csv_file in train_csv.items()
        }

    own = {name: fold_rerankers(name, workdir / f"{name}-index") for name in INDEXES}
    broad_folds = fold_rerankers("broad", broad_index)
    distractor_folds = fold_rerankers("broad-distractors", broad_index, True)
    nophrase_folds = fold_rerankers("broad-distractors-nophrase", broad_index, True, False)
    broad = exported_reranker(
        broad_index, files["labels"], workdir, workdir / "reranker-broad.json"
    )
    broad_distractors = exported_reranker(
        broad_index, files["labels"], workdir, workdir / "reranker-broad-distractors.json", True
    )
    broad_nophrase = exported_reranker(
        broad_index,
        files["labels"],
        workdir,
        workdir / "reranker-broad-distractors-nophrase.json",
        True,
        distractor_phrases=False,
    )
    trained = {
        "broad": broad,
        "broad_distractors": broad_distractors,
        "broad_distractors_nophrase": broad_nophrase,
    }
    virgil = workdir / "virgil-index"
    cuts = sorted(set(COSINES) | {built["virgil"]["default_threshold"]})
    cicero = read_tesserae([files["tesserae"] / "cicero.de_officiis.tess"]).segments
    texts = {
        "cicero_de_officiis": "\n\n".join(s.text for s in cicero),
        "jerome_vita_pauli": files["vita_pauli"].read_text(encoding="utf-8"),
    }
    result: Dict = {"indexes": built, "k": K, "texts": {}, "loci_similes": {}}
    for name, text in texts.items():
        result["texts"][name] = {
            "all_top_k": analyze_text(virgil, text, -1.0, False, cuts),
            "default_threshold": analyze_text(virgil, text, None, False),
            "packaged_reranker": analyze_text(virgil, text, None, True),
            **{
                f"{recipe}_reranker": analyze_text(
                    with_reranker(virgil, file, workdir / f"{recipe}-virgil-index"),
                    text,
                    None,
                    True,
                )
                for recipe, file in trained.items()
            },
        }
    for name in INDEXES:
        own_cuts = sorted(set(COSINES) | {built[name]["default_threshold"]})
        # the packaged recipe is the one trained against Virgil
        recipes = {
            "own": own[name],
            "virgil": own["virgil"],
            "broad": broad_folds,
            "broad_distractors": distractor_folds,
            "broad_distractors_nophrase": nophrase_folds,
        }
        result["loci_similes"][name] = loci_similes(
            workdir / f"{name}-index", files["labels"], workdir, own_cuts, recipes, trained
        )
    result["seconds"] = time.perf_counter() - started
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, result)
    print(f"wrote {output}")
    for setting in SETTINGS + (
        "broad_reranker",
        "broad_distractors_reranker",
        "broad_distractors_nophrase_reranker",
        "own_reranker_cv",
        "virgil_reranker_cv",
        "broad_reranker_cv",
        "broad_distractors_reranker_cv",
        "broad_distractors_nophrase_reranker_cv",
    ):
        line = [setting]
        for name, by_setting in result["texts"].items():
            if setting in by_setting:
                r = by_setting[setting]
                line.append(f"{name} {r['links_per_100_sentences']:.1f} links per 100 sentences")
        for name, scores in result["loci_similes"].items():
            s = scores.get(setting)
            if s is None:
                continue
            line.append(
                f"Loci Similes {name}: R {s['recall']:.3f} P {s['precision']:.3f} "
                f"(all queries {s['precision_all_queries']:.3f})"
            )
        print("; ".join(line))


def packaged_only(indexes: Dict[str, Path], output: Path, workdir: Path, data: Path) -> None:
    """Only the settings that need no broad index, per given index of Virgil (e.g. the
    shipped one and copies with int8 or fewer dimensions): the packaged reranker (the
    one ``la_rhetoric_intertext`` saves, at its threshold) on the Loci Similes links over
    all 463 queries, in sample as ``packaged_reranker`` above, and the links `analyze`
    reports on Cicero's De officiis with it. Results go under ``packaged_only``."""
    files = paths(data)
    workdir.mkdir(parents=True, exist_ok=True)
    cicero = read_tesserae([files["tesserae"] / "cicero.de_officiis.tess"]).segments
    text = "\n\n".join(s.text for s in cicero)
    result = srsly.read_json(output) if output.is_file() else {}
    for name, index_dir in indexes.items():
        query_text, items, _ = gold_items(index_dir, files["labels"])
        queries = sorted(query_text)
        started = time.perf_counter()
        scores = summary([link_counts(index_dir, queries, query_text, items, None, True)])
        cicero_links = analyze_text(index_dir, text, None, True)
        cicero_links.pop("examples")
        result.setdefault("packaged_only", {})[name] = {
            "index": str(index_dir),
            "loci_similes_virgil": scores,
            "cicero_de_officiis": cicero_links,
            "seconds": time.perf_counter() - started,
        }
        print(
            f"{name}: Loci Similes R {scores['recall']:.4f} P(all queries) "
            f"{scores['precision_all_queries']:.4f}; Cicero "
            f"{cicero_links['links_per_100_sentences']:.2f} links per 100 sentences",
            flush=True,
        )
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, result)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path("benchmarks/results/intertext_false_links.json")
    parser.add_argument("--output", type=Path, default=default)
    parser.add_argument("--workdir", type=Path, help="For the indexes (default: a temporary one)")
    parser.add_argument("--data", type=Path, default=DATA, help="The data mirror or assets/")
    parser.add_argument(
        "--broad-index",
        type=Path,
        help="An index of the ten source authors to reuse (index-intertext-full's "
        "training/intertext/full-index; default: built in the workdir, about 17 min)",
    )
    parser.add_argument(
        "--packaged-only",
        default="",
        help="NAME=INDEX,...: only the packaged reranker's settings on these Virgil indexes "
        "(no broad index needed; written under packaged_only in --output)",
    )
    args = parser.parse_args()
    if args.packaged_only:
        chosen = dict(item.split("=", 1) for item in args.packaged_only.split(","))
        main_dir = args.workdir or Path(tempfile.mkdtemp())
        packaged_only({k: Path(v) for k, v in chosen.items()}, args.output, main_dir, args.data)
    elif args.workdir is not None:
        main(args.output, args.workdir, args.data, args.broad_index)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(args.output, Path(tmp), args.data, args.broad_index)
