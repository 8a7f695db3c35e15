"""How many intertext links `analyze` reports on a text that cannot quote the indexed
sources, next to the share of the Loci Similes gold links it finds.

Index: Virgil's Aeneid, Eclogues and Georgics (Tesserae lines), built as the README shows
(`intertext index ... --authors vergil`: multilingual-e5-small and the lexical channel,
with the index's default threshold, ``intertext/null.py``).

Allusion-free text: Cicero's De officiis (44 BC; Virgil's Eclogues appeared about 38 BC,
the Aeneid after 19 BC), its Tesserae sections joined as plain text. For comparison,
Jerome's Vita Pauli (Latin Library), which does echo Virgil. Both go through `analyze`'s
own pipeline for Latin (``build_analyzer``: base-la where built, else a rule-based
sentencizer; intertext_matcher with top k 10), so a query is a sentence.

Settings: (1) no reranker and a threshold of -1 (every top-10 candidate is a link: what
`analyze` did before the default threshold); (2) no reranker, the index's default
threshold; (3) the reranker `intertext train` fits on the Loci Similes links (for the
two texts, trained on all 545 links).

Loci Similes: the gold query passages (Jerome, Lactantius) against the same index; recall
over the 333 links whose source is Virgil (the others cannot be found in this index),
precision over the links predicted for those gold queries. For (3) the reranker is
trained on four grouped folds and scored on the fifth (``evaluate.query_folds``), so no
link is scored by a reranker that saw it.

    python benchmarks/intertext_false_links.py \
        --output benchmarks/results/intertext_false_links.json
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
from typing import Dict, List, Optional, Set

import srsly

from spacy_rhetoric.analysis.pipelines import build_analyzer
from spacy_rhetoric.corpora.tesserae import read_tesserae
from spacy_rhetoric.intertext.evaluate import query_folds, read_links
from spacy_rhetoric.intertext.index import IntertextIndex
from spacy_rhetoric.intertext.link import link_segments, link_threshold
from spacy_rhetoric.intertext.rerank import load_reranker
from spacy_rhetoric.intertext.train import source_rows, train_reranker
from spacy_rhetoric.textio import text_chunks

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))
K = 10
SETTINGS = ("all_top_k", "default_threshold", "reranker")


def paths(data: Path) -> Dict[str, Path]:
    """The mirror's (or the project assets') files this benchmark reads."""
    corpora = data / "latin-corpora"
    return {
        "tesserae": corpora / "tesserae" / "texts" / "la",
        "labels": data / "loci-similes" / "labels.csv",
        "vita_pauli": corpora / "latin-library" / "jerome" / "vitapauli.txt",
    }


def build_index(path: Path, tesserae: Path) -> Dict:
    """`intertext index` over Virgil, as a user runs it; RETURNS its summary."""
    stats = path.with_suffix(".build.json")
    command = [sys.executable, "-m", "spacy_rhetoric", "intertext", "index", str(tesserae)]
    command += ["--authors", "vergil", "-o", str(path), "--stats", str(stats)]
    subprocess.run(command, check=True)
    return srsly.read_json(stats)


def with_reranker(index_dir: Path, labels: Path, target: Path) -> Dict:
    """A copy of the index (embeddings linked, not copied) with a reranker trained on
    ``labels``. RETURNS the training summary."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for item in index_dir.iterdir():
        if item.name == "embeddings.npy":
            (target / item.name).symlink_to(item.resolve())
        elif item.is_file():
            shutil.copy(item, target / item.name)
    return train_reranker(labels, target, K)


def analyze_text(index_dir: Path, text: str, threshold: Optional[float]) -> Dict:
    """Links `analyze` reports for one text (its Latin pipeline, intertext only)."""
    analyzer = build_analyzer("la", index=index_dir, threshold=threshold, top_k=K)
    nlp = analyzer.nlp
    disabled = [n for n in ("chiasmus_finder", "displacement_analyzer") if nlp.has_pipe(n)]
    start = time.perf_counter()
    with nlp.select_pipes(disable=disabled):
        docs = list(nlp.pipe(text_chunks(text), batch_size=16))
    seconds = time.perf_counter() - start
    sentences = sum(len([s for s in d.sents if s.text.strip()]) for d in docs)
    spans = [s for d in docs for s in d.spans.get("intertext", [])]
    links = sum(len(s._.intertext_links) for s in spans)
    note = next(n.detail for n in analyzer.notes if n.component == "intertext")
    return {
        "sentences": sentences,
        "tokens": sum(len(d) for d in docs),
        "linked_sentences": len(spans),
        "links": links,
        "links_per_100_sentences": 100 * links / max(1, sentences),
        "linked_sentences_per_100": 100 * len(spans) / max(1, sentences),
        "seconds": seconds,
        "note": note,
        "examples": [
            {"query": s.text, "source_id": s._.intertext_links[0]["source_id"],
             "source_text": s._.intertext_links[0]["source_text"]}
            for s in spans[:10]
        ],
    }  # fmt: skip


def loci_similes_scores(index_dir: Path, queries: List[str], query_text: Dict[str, str],
                        gold: Dict[str, Set[int]], threshold: Optional[float]) -> Dict:  # fmt: skip
    """Recall of the gold links (rows) and precision of the links predicted for ``queries``."""
    index = IntertextIndex.from_disk(index_dir)
    reranker = load_reranker(index_dir) if threshold is None else None
    ranked = link_segments(index, [query_text[q] for q in queries], reranker, k=K,
                           threshold=threshold)  # fmt: skip
    found = predicted = correct = n_gold = 0
    for q, rows in zip(queries, ranked):
        linked = {index.row_of[r["source_id"]] for r in rows if r["link"]}
        predicted += len(linked)
        correct += len(linked & gold.get(q, set()))
        n_gold += len(gold.get(q, set()))
        found += len(linked & gold.get(q, set()))
    return {"gold": n_gold, "found": found, "predicted": predicted, "correct": correct,
            "threshold": link_threshold(reranker, threshold, index)}  # fmt: skip


def summary(counts: List[Dict]) -> Dict:
    gold = sum(c["gold"] for c in counts)
    predicted = sum(c["predicted"] for c in counts)
    correct = sum(c["correct"] for c in counts)
    recall = sum(c["found"] for c in counts) / max(1, gold)
    precision = correct / predicted if predicted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"gold_links": gold, "predicted_links": predicted, "recall": recall,
            "precision": precision, "f1": f1,
            "thresholds": [c["threshold"] for c in counts]}  # fmt: skip


def main(output: Path, workdir: Path, data: Path) -> None:
    files = paths(data)
    tesserae, labels = files["tesserae"], files["labels"]
    workdir.mkdir(parents=True, exist_ok=True)
    index_dir = workdir / "virgil-index"
    started = time.perf_counter()
    build = build_index(index_dir, tesserae)
    full = with_reranker(index_dir, labels, workdir / "virgil-index-reranker")
    # the texts
    cicero = read_tesserae([tesserae / "cicero.de_officiis.tess"]).segments
    texts = {
        "cicero_de_officiis": "\n\n".join(s.text for s in cicero),
        "jerome_vita_pauli": files["vita_pauli"].read_text(encoding="utf-8"),
    }
    result: Dict = {"index": build, "k": K, "reranker_all_links": full, "texts": {}}
    for name, text in texts.items():
        result["texts"][name] = {
            "all_top_k": analyze_text(index_dir, text, -1.0),
            "default_threshold": analyze_text(index_dir, text, None),
            "reranker": analyze_text(workdir / "virgil-index-reranker", text, None),
        }
    # Loci Similes: the gold links whose sources this index holds
    query_text, source_text, links = read_links(labels)
    index = IntertextIndex.from_disk(index_dir)
    gold: Dict[str, Set[int]] = {}
    for link in links:
        gold.setdefault(link.query, set()).update(
            source_rows(index, link.source, source_text[link.source])
        )
    fold_of = {q: min(f) for q, f in query_folds(links, "grouped").items()}
    queries = sorted(q for q in gold if gold[q])
    loci: Dict = {"queries_with_virgil_links": len(queries)}
    loci["all_top_k"] = summary([loci_similes_scores(index_dir, queries, query_text, gold, -1.0)])
    loci["default_threshold"] = summary(
        [loci_similes_scores(index_dir, queries, query_text, gold, None)]
    )
    with open(labels, newline="", encoding="utf-8") as file_:
        reader = csv.DictReader(file_)
        fields, rows = reader.fieldnames, list(reader)
    query_of = {link.pair_id: link.query for link in links}
    per_fold = []
    for fold in sorted(set(fold_of.values())):
        train_csv = workdir / f"labels-train-{fold}.csv"
        with open(train_csv, "w", newline="", encoding="utf-8") as file_:
            writer = csv.DictWriter(file_, fieldnames=fields)
            writer.writeheader()
            writer.writerows(r for r in rows if fold_of[query_of[int(r["pair_id"])]] != fold)
        fold_dir = workdir / f"virgil-index-fold{fold}"
        with_reranker(index_dir, train_csv, fold_dir)
        test = [q for q in queries if fold_of[q] == fold]
        per_fold.append(loci_similes_scores(fold_dir, test, query_text, gold, None))
        shutil.rmtree(fold_dir)
    loci["reranker"] = summary(per_fold)
    result["loci_similes"] = loci
    result["seconds"] = time.perf_counter() - started
    output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(output, result)
    print(f"wrote {output}")
    for setting in SETTINGS:
        line = [setting]
        for name, by_setting in result["texts"].items():
            r = by_setting[setting]
            per_100 = (r["links_per_100_sentences"], r["linked_sentences_per_100"])
            line.append(f"{name}: {per_100[0]:.1f} links, {per_100[1]:.1f} linked per 100")
        s = loci[setting]
        line.append(f"Loci Similes recall {s['recall']:.3f} precision {s['precision']:.3f}")
        print("; ".join(line))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path("benchmarks/results/intertext_false_links.json")
    parser.add_argument("--output", type=Path, default=default)
    parser.add_argument("--workdir", type=Path, help="For the indexes (default: a temporary one)")
    parser.add_argument("--data", type=Path, default=DATA, help="The data mirror or assets/")
    args = parser.parse_args()
    if args.workdir is not None:
        main(args.output, args.workdir, args.data)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(args.output, Path(tmp), args.data)
