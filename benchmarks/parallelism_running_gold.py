"""The shipped parallelism packages on the hand-annotated rhetoric corpus
(benchmarks/data/rhetoric-corpus: Latin, English and German orations, speeches, sermons,
essays and dramatic speeches), on its dev and test halves.

Per language and split: EPM / MPBM / MBAWO / MWO P, R, F1 of the reported parallelisms
(``doc._.parallelisms``), and the EPM recall of the reports together with the review list
(``doc.spans["parallelism_candidates"]``), both mapped onto the package's tokens. The
package is the one ``analyze`` uses: ``la_rhetoric_parallelism`` for Latin,
``xx_rhetoric_parallelism`` (zero-shot) for English and German. Nothing is chosen here:
``--penalty LANG=VALUE`` scores a decoder ``outside_penalty`` chosen elsewhere (on the
dev halves, by parallelism_recall_levers.py) instead of the package's.

    python parallelism_running_gold.py --gold data/rhetoric-corpus \\
        --output results/parallelism_running_gold.json [--penalty la=0.5]
"""

import argparse
import json
from pathlib import Path
from typing import Dict, List, Tuple

from spacy_rhetoric.parallelism.metrics import score_parallelism_sets

PACKAGES = {"la": "la_rhetoric_parallelism", "en": "xx_rhetoric_parallelism",
            "de": "xx_rhetoric_parallelism"}  # fmt: skip


def token_offsets(doc, branches: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """Character branches -> token (start, end) in ``doc`` (expanded to whole tokens)."""
    out = []
    for start, end in branches:
        span = doc.char_span(start, end, alignment_mode="expand")
        out.append((span.start, span.end))
    return out


def candidates(doc) -> List[List[Tuple[int, int]]]:
    """The review list's parallelisms: its branches grouped by their shared id."""
    groups: Dict[int, List[Tuple[int, int]]] = {}
    for span in doc.spans.get("parallelism_candidates", []):
        groups.setdefault(span.id, []).append((span.start, span.end))
    return [sorted(branches) for branches in groups.values() if len(branches) >= 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--penalty", action="append", default=[], metavar="LANG=VALUE",
                        help="score this outside_penalty instead of the package's")  # fmt: skip
    args = parser.parse_args()
    penalties = {}
    for spec in args.penalty:
        lang, sep, value = spec.partition("=")
        if not sep or lang not in PACKAGES:
            parser.error(
                f"--penalty: expected LANG=VALUE with LANG in {sorted(PACKAGES)}, got {spec!r}"
            )
        try:
            penalties[lang] = float(value)
        except ValueError:
            parser.error(f"--penalty: {value!r} is not a number")

    import spacy

    result = {}
    for lang, package in PACKAGES.items():
        rows = [json.loads(line) for line in (args.gold / f"{lang}.jsonl").open(encoding="utf8")]
        nlp = spacy.load(package)
        tagger = nlp.get_pipe("parallelism_tagger")
        tagger.cfg["outside_penalty"] = penalties.get(lang, tagger.cfg["outside_penalty"])
        docs = list(nlp.pipe(row["text"] for row in rows))
        result[lang] = {"package": f"{package} {nlp.meta['version']}",
                        "outside_penalty": tagger.cfg["outside_penalty"]}  # fmt: skip
        for split in ("dev", "test"):
            reported, reviewed, tokens = [], [], 0
            for row, doc in zip(rows, docs):
                if row["split"] != split:
                    continue
                tokens += len(doc)
                gold = [token_offsets(doc, p["branches"]) for p in row["parallelisms"]]
                pred = [list(p.offsets) for p in doc._.parallelisms]
                reported.append((gold, pred))
                reviewed.append((gold, pred + candidates(doc)))
            scores = score_parallelism_sets(reported)
            with_review = score_parallelism_sets(reviewed)
            n_pred = sum(len(p) for _, p in reported)
            n_review = sum(len(p) for _, p in reviewed) - n_pred
            result[lang][split] = {
                "documents": len(reported),
                "tokens": tokens,
                "gold": sum(len(g) for g, _ in reported),
                "reported": n_pred,
                "review_list": n_review,
                **{k: round(100 * v, 2) for k, v in scores.items()},
                "epm_r_with_review": round(100 * with_review["epm_r"], 2),
            }
            row = result[lang][split]
            print(
                f"{lang} {split}: EPM P/R/F1 {row['epm_p']} / {row['epm_r']} / {row['epm_f']}, "
                f"recall with the review list {row['epm_r_with_review']} "
                f"({row['reported']} reported, {row['review_list']} for review, {row['gold']} gold)"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
