"""One finding per passage on the rhetoric corpus's test halves: how many pairs of
findings of one kind still share >= 80 % of their tokens after the finders merge their
variants (the issue's target: none), per language.

Each passage of ``benchmarks/data/rhetoric-corpus/{la,en,de}.jsonl`` of the chosen split
is one doc through the language's base pipeline (``la_rhetoric_base``, ...), a default
``figure_finder`` and a default ``chiasmus_finder``. For the figures (``doc.spans["figures"]``,
per label) and the chiasmi (``doc.spans["chiasmus"]``), a pair shares a passage when the
tokens they share are >= 80 % of the smaller one's (``figures.component.VARIANT_SHARE``);
the JSON holds per language the tokens, the findings, the pairs left and the variants the
finders merged.

    python benchmarks/one_finding.py --split test --output benchmarks/results/one_finding.json
"""

import argparse
import itertools
from pathlib import Path

import spacy
import srsly

import spacy_rhetoric  # noqa: F401  (registers the components)
from spacy_rhetoric.corpora.rhetoric import read_records
from spacy_rhetoric.figures.component import VARIANT_SHARE

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "benchmarks" / "data" / "rhetoric-corpus"
BASES = {"la": "la_rhetoric_base", "en": "en_rhetoric_base", "de": "de_rhetoric_base"}


def shared_pairs(spans) -> int:
    """RETURNS (int): the pairs of spans of one label sharing >= VARIANT_SHARE of the
    smaller one's tokens."""
    count = 0
    for a, b in itertools.combinations(spans, 2):
        if a.label_ != b.label_:
            continue
        overlap = min(a.end, b.end) - max(a.start, b.start)
        if overlap > 0 and overlap >= VARIANT_SHARE * min(len(a), len(b)):
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    result = {"split": args.split, "share": VARIANT_SHARE, "languages": {}}
    for lang, base in BASES.items():
        nlp = spacy.load(base)
        nlp.add_pipe("figure_finder")
        nlp.add_pipe("chiasmus_finder")
        entry = dict.fromkeys(
            ("passages", "tokens", "figures", "figure_pairs", "figure_variants",
             "chiasmi", "chiasmus_pairs", "chiasmus_variants"), 0)  # fmt: skip
        records = [r for _, r in read_records(CORPUS / f"{lang}.jsonl") if r["split"] == args.split]
        for doc in nlp.pipe(r["text"] for r in records):
            figures, chiasmi = doc.spans["figures"], doc.spans["chiasmus"]
            entry["passages"] += 1
            entry["tokens"] += len(doc)
            entry["figures"] += len(figures)
            entry["figure_pairs"] += shared_pairs(list(figures))
            entry["figure_variants"] += sum(
                len(v) for v in figures.attrs.get("figure_variants", {}).values()
            )
            entry["chiasmi"] += len(chiasmi)
            entry["chiasmus_pairs"] += shared_pairs(list(chiasmi))
            entry["chiasmus_variants"] += sum(
                len(v) for v in chiasmi.attrs.get("chiasmus_variants", {}).values()
            )
        result["languages"][lang] = entry
        print(lang, entry)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)


if __name__ == "__main__":
    main()
