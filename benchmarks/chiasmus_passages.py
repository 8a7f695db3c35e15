"""One chiasmus per passage: how many chiasmi ``chiasmus_finder`` reports per 1,000 tokens
of classical Latin when each candidate counts (the reports of 0.8.0 and before: every
candidate above the threshold) and when the variants of one passage are one report
(``chiasmus.passages.passage_heads``), and whether a gold chiasmus of the rhetoric corpus
that a report matched is still matched after.

The passages of ``benchmarks/data/rhetoric-corpus/la.jsonl`` (train and dev halves only;
the test halves are never read here), each one doc through ``la_rhetoric_base`` and the
default ``chiasmus_finder``. A report matches a gold inversion (labelled chiasmus or
antimetabole) when its four words overlap at least two of the gold support words (the
corpus's metric, ``figures.metrics``, without the label: the finder's antimetabole /
chiasmus split is not the corpus's); *found* counts gold inversions some report matches,
*matched* the largest one-to-one matching, *found with review* also counts the review
list (before: the next best candidates below the threshold; after: the next best
passages). With ``--running DIR``, the same two rates on the plain texts under DIR (by
paragraphs, as ``analyze`` reads them; no gold).

    python benchmarks/chiasmus_passages.py --running $SPACY_RHETORIC_DATA/latin-prose \
        --output benchmarks/results/chiasmus_passages.json
"""

import argparse
import time
from pathlib import Path

import numpy
import spacy
import srsly

from spacy_rhetoric.chiasmus.passages import kept_candidates
from spacy_rhetoric.corpora.rhetoric import read_records
from spacy_rhetoric.figures.metrics import match_findings, shared_units
from spacy_rhetoric.textio import collect_files, paragraphs, read_text

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "benchmarks" / "data" / "rhetoric-corpus" / "la.jsonl"
GOLD_LABELS = ("chiasmus", "antimetabole")


def words(doc, positions):
    """RETURNS: the character ranges of a candidate's words."""
    return [(doc[int(i)].idx, doc[int(i)].idx + len(doc[int(i)])) for i in positions]


def every_candidate(finder, doc):
    """The reports and the review list of 0.8.0: the candidates above the threshold,
    best first, bounded as ``kept_candidates`` bounds them, and the next best below."""
    (candidates,), (scores,) = finder.predict([doc])
    order = numpy.argsort(-scores, kind="stable")
    kept, n_findings = kept_candidates(
        scores[order], len(doc), finder.cfg["threshold"], finder.cfg["review_per_1000"]
    )
    found = [words(doc, candidates.indices[i]) for i in order[:kept]]
    return found[:n_findings], found[n_findings:]


def one_per_passage(doc):
    """The reports and the review list of the finder as it is: one per passage."""
    group, listed = doc.spans["chiasmus"], doc.spans["chiasmus_candidates"]
    reported = {span.id_ for span in group}
    positions = listed.attrs["chiasmus_positions"]
    found = [words(doc, positions[span.id_]) for span in group]
    review = [words(doc, positions[span.id_]) for span in listed if span.id_ not in reported]
    return found, review


def found(units_of, reports):
    """RETURNS: the indices of the gold inversions some report matches."""
    return {i for i, units in units_of if any(shared_units(units, r) >= 2 for r in reports)}


def compare(gold, before, after):
    """Per label: gold, found (with the review list too) and matched one to one,
    before and after; the gold inversions found before and not after."""
    result = {}
    for label in GOLD_LABELS:
        mine = [(i, units) for i, (lab, units) in enumerate(gold) if lab == label]
        row = {"gold": len(mine)}
        for name, (reports, review) in (("before", before), ("after", after)):
            pairs = match_findings(
                [(label, units) for _, units in mine], [(label, r) for r in reports]
            )
            row[f"found_{name}"] = found(mine, reports)
            row[f"found_with_review_{name}"] = found(mine, reports + review)
            row[f"matched_{name}"] = len(pairs)
        result[label] = row
    return result


def running_rates(nlp, finder, directory):
    """Reports before and after on the plain texts under a directory, by paragraphs."""
    texts = [chunk for path in collect_files([directory]) for chunk in paragraphs(read_text(path))]
    tokens, before, after = 0, 0, 0
    with nlp.select_pipes(disable=[finder.name]):
        docs = nlp.pipe(texts, batch_size=32)
        for doc in docs:
            before += len(every_candidate(finder, doc)[0])
            after += len(finder(doc).spans["chiasmus"])
            tokens += len(doc)
    return {
        "directory": Path(directory).name,
        "texts": len(collect_files([directory])),
        "paragraphs": len(texts),
        "tokens": tokens,
        "reports_before": before,
        "reports_after": after,
        "reports_per_1000_tokens": {
            "before": round(1000.0 * before / max(tokens, 1), 3),
            "after": round(1000.0 * after / max(tokens, 1), 3),
        },
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--splits", default="train,dev")
    parser.add_argument("--base", default="la_rhetoric_base")
    parser.add_argument("--running", type=Path, default=None, help="plain Latin texts")
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s]
    if "test" in splits:
        parser.error("the test halves are not read here")
    start = time.perf_counter()
    nlp = spacy.load(args.base)
    finder = nlp.add_pipe("chiasmus_finder")
    records = [
        r for _, r in read_records(CORPUS) if r["split"] in splits and r.get("annotated", True)
    ]
    totals = {"tokens": 0, "reports_before": 0, "reports_after": 0, "variants": 0}
    counts = ("gold", "found_before", "found_after", "found_with_review_before")
    counts += ("found_with_review_after", "matched_before", "matched_after")
    per_label = {label: {**dict.fromkeys(counts, 0), "lost": []} for label in GOLD_LABELS}
    passages = []
    with nlp.select_pipes(disable=[finder.name]):
        docs = list(nlp.pipe(r["text"] for r in records))
    for record, doc in zip(records, docs):
        before = every_candidate(finder, doc)
        finder(doc)
        after = one_per_passage(doc)
        n_variants = sum(map(len, doc.spans["chiasmus"].attrs["chiasmus_variants"].values()))
        gold = [
            (f["label"], [tuple(u) for u in f.get("support") or f["members"]])
            for f in record["figures"]
            if f["label"] in GOLD_LABELS
        ]
        table = compare(gold, before, after)
        for label, row in table.items():
            total = per_label[label]
            total["gold"] += row["gold"]
            for key in counts[1:]:
                total[key] += row[key] if key.startswith("matched") else len(row[key])
            for i in sorted(row["found_before"] - row["found_after"]):
                total["lost"].append({"passage": record["id"], "gold": gold[i][1]})
        totals["tokens"] += len(doc)
        totals["reports_before"] += len(before[0])
        totals["reports_after"] += len(after[0])
        totals["variants"] += n_variants
        passages.append(
            {
                "id": record["id"],
                "split": record["split"],
                "tokens": len(doc),
                "reports_before": len(before[0]),
                "reports_after": len(after[0]),
            }
        )
    per_1000 = {
        name: round(1000.0 * totals[f"reports_{name}"] / max(totals["tokens"], 1), 3)
        for name in ("before", "after")
    }
    result = {
        "corpus": "benchmarks/data/rhetoric-corpus/la.jsonl",
        "splits": splits,
        "base": args.base,
        "passages": len(records),
        **totals,
        "reports_per_1000_tokens": per_1000,
        "gold": per_label,
        "per_passage": passages,
    }
    if args.running:
        result["running"] = running_rates(nlp, finder, args.running)
    result["seconds"] = round(time.perf_counter() - start, 1)
    print(
        f"{len(records)} passages, {totals['tokens']} tokens: {totals['reports_before']} reports "
        f"({per_1000['before']:.2f} per 1,000 tokens) before, {totals['reports_after']} "
        f"({per_1000['after']:.2f}) after, {totals['variants']} variants listed"
    )
    for label, row in per_label.items():
        print(
            f"gold {label}: {row['gold']}; found {row['found_before']} -> {row['found_after']}, "
            f"with review {row['found_with_review_before']} -> {row['found_with_review_after']}, "
            f"matched one to one {row['matched_before']} -> {row['matched_after']}, "
            f"lost {len(row['lost'])}"
        )
    if args.running:
        running = result["running"]
        rates = running["reports_per_1000_tokens"]
        print(
            f"running text ({running['texts']} texts, {running['tokens']} tokens): "
            f"{running['reports_before']} reports ({rates['before']:.2f} per 1,000 tokens) "
            f"before, {running['reports_after']} ({rates['after']:.2f}) after"
        )
    if args.output:
        srsly.write_json(args.output, result)


if __name__ == "__main__":
    main()
