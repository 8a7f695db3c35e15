"""Which gold figures of the rhetoric corpus do figure_finder's rules propose at all?

Per language and figure, on the train and dev halves only (the test halves are never
read here): the gold figures, how many a candidate of the same label matches (the
metric of ``spacy_rhetoric.figures.metrics``; the candidate's score is ignored), and a
sample of the unproposed ones with their text, so that the rules can be mended where
they miss what readers mark. The text goes through each language's base pipeline.

    python figures_corpus_coverage.py --output results/figures_corpus_coverage.json \\
        [--splits train,dev] [--examples 8]
"""

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--splits", default="train,dev")
    parser.add_argument("--examples", type=int, default=8)
    parser.add_argument("--cache", type=Path, default=Path("../training/figures/cache"))
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s]
    if "test" in splits:
        parser.error("the test halves are not read here")

    import spacy

    from spacy_rhetoric.figures.component import FIGURES
    from spacy_rhetoric.figures.corpus import (
        CORPUS_LANGUAGES,
        candidate_finding,
        gold_findings,
        read_passages,
    )
    from spacy_rhetoric.figures.metrics import is_match
    from spacy_rhetoric.figures.training_data import feature_finder, process

    result = {"splits": splits}
    for lang in CORPUS_LANGUAGES:
        nlp = spacy.load(f"{lang}_rhetoric_base")
        finder = feature_finder(nlp)
        per = {f: {"gold": 0, "proposed": 0, "unproposed": []} for f in FIGURES}
        for split in splits:
            records = read_passages(None, lang, (split,))
            cache = args.cache / f"corpus-{lang}-{split}.spacy"
            docs = process(nlp, [r["text"] for r in records], cache)
            for record, doc in zip(records, docs):
                found = [candidate_finding(doc, c) for c in finder.find(doc)[0]]
                for gold, item in zip(
                    gold_findings(record), [f for f in record["figures"] if f["label"] in FIGURES]
                ):
                    entry = per[gold[0]]
                    entry["gold"] += 1
                    if any(is_match(gold, f) for f in found):
                        entry["proposed"] += 1
                    else:
                        members = " | ".join(record["text"][s:e] for s, e in item["members"])
                        support = [record["text"][s:e] for s, e in item["support"]]
                        entry["unproposed"].append(
                            {"passage": record["id"], "members": members[:300], "support": support}
                        )
        table = {}
        for figure, entry in per.items():
            if not entry["gold"]:
                continue
            table[figure] = {
                "gold": entry["gold"],
                "proposed": entry["proposed"],
                "share": round(entry["proposed"] / entry["gold"], 3),
                "unproposed_examples": entry["unproposed"][: args.examples],
            }
            print(f"{lang} {figure}: {entry['proposed']}/{entry['gold']} proposed")
        result[lang] = table
    args.output.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
