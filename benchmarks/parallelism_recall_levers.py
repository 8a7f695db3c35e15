"""Which lever raises the recall of the shipped parallelism packages without losing F1?
Dev halves only: ASP dev (Latin package), PSE-I dev (Chinese package) and the dev halves
of the hand-annotated running text (benchmarks/data/rhetoric-corpus: Latin with the
Latin package; English and German with the multilingual one). No test split is read.

Levers, each scored by EPM P/R/F1 of what would be reported:

* ``penalty``: the decoder's ``outside_penalty`` over a grid (the packages ship 0);
* ``figures``: the figure series of ``figure_finder`` (run after the language's base
  pipeline on the same tokens) added as parallelisms, their members as branches, where
  they overlap no reported parallelism: the reported figures of the edge family
  (anaphora, epiphora, symploce), and the same plus asyndeton;
* both together, at each penalty.

    python benchmarks/parallelism_recall_levers.py \\
        --asp corpus/asp/dev.spacy --pse corpus/pse/dev.spacy \\
        --running benchmarks/data/rhetoric-corpus \\
        --output benchmarks/results/parallelism_recall_levers.json
"""

import argparse
import json
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import spacy
from parallelism_running_gold import candidates, token_offsets
from spacy.tokens import Doc

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.corpora.stats import read_docbins
from spacy_rhetoric.parallelism.metrics import score_parallelism_sets

PACKAGES = {"la": "la_rhetoric_parallelism", "zh": "zh_rhetoric_parallelism",
            "en": "xx_rhetoric_parallelism", "de": "xx_rhetoric_parallelism"}  # fmt: skip
BASES = {"la": "la_rhetoric_base", "zh": "zh_rhetoric_base", "en": "en_rhetoric_base",
         "de": "de_rhetoric_base"}  # fmt: skip
EDGES = ("anaphora", "epiphora", "symploce")
FIGURE_SETS = {"none": (), "edges": EDGES, "edges+asyndeton": EDGES + ("asyndeton",)}
PUNCT = set(".,;:!?·—–-()[]\"'“”‘’«»，。；：！？、")

Branches = List[Tuple[int, int]]


def running_dev(path: Path, nlp) -> Tuple[List[Doc], List[List[Branches]]]:
    """The dev passages of one language, tokenized by ``nlp``, with their gold branches."""
    docs, gold = [], []
    for line in path.open(encoding="utf8"):
        row = json.loads(line)
        if row["split"] != "dev":
            continue
        doc = nlp.make_doc(row["text"])
        docs.append(doc)
        gold.append([token_offsets(doc, p["branches"]) for p in row["parallelisms"]])
    return docs, gold


def corpus_dev(path: Path, nlp) -> Tuple[List[Doc], List[List[Branches]]]:
    """A converted dev split: its docs' words and their gold parallelisms."""
    docs, gold = [], []
    for doc in read_docbins([path], nlp.vocab):
        gold.append([list(p.offsets) for p in doc._.parallelisms])
        docs.append(Doc(nlp.vocab, words=[t.text for t in doc],
                        spaces=[bool(t.whitespace_) for t in doc]))  # fmt: skip
    return docs, gold


def fresh(nlp, docs: Sequence[Doc]):
    """The docs' words as new, unannotated docs of ``nlp``'s vocab."""
    for doc in docs:
        yield Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])


def figure_series(
    base, docs: Sequence[Doc]
) -> Tuple[List[List[Tuple[str, Branches]]], List[List[Tuple[str, Branches]]]]:
    """Per doc, the figures that the base pipeline with ``figure_finder`` (its last
    component) reports on the same words, with their members (trailing punctuation
    trimmed); and the same with the finder's review list ("figure_candidates") added."""
    reported, with_review = [], []
    for doc in base.pipe(fresh(base, docs)):
        groups = {key: [] for key in ("figures", "figure_candidates")}
        for key, found in groups.items():
            for span in doc.spans.get(key, []):
                members = []
                for member in span._.figure_members:
                    start, end = member.start, member.end
                    while end > start + 1 and doc[end - 1].text in PUNCT:
                        end -= 1
                    members.append((start, end))
                if len(members) >= 2:
                    found.append((span.label_, members))
        reported.append(groups["figures"])
        with_review.append(groups["figures"] + groups["figure_candidates"])
    return reported, with_review


def with_figures(pred: List[Branches], figures, labels: Sequence[str]) -> List[Branches]:
    """The reported parallelisms plus the figures of ``labels`` that overlap none of them
    (nor an added one)."""
    out = list(pred)
    taken = [(min(s for s, _ in p), max(e for _, e in p)) for p in out]
    for label, members in figures:
        if label not in labels:
            continue
        start, end = members[0][0], members[-1][1]
        if any(start < e and s < end for s, e in taken):
            continue
        out.append(members)
        taken.append((start, end))
    return out


def review_lever(nlp, docs, gold, figures, more) -> Dict[str, Dict]:
    """EPM recall of reports + review list, with the figure series added to the review
    list (the reported figures, or those and the figures' own review list), and the
    review list's size relative to the reports."""
    preds = list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in d],
                              spaces=[bool(t.whitespace_) for t in d]) for d in docs))  # fmt: skip
    out = {}
    for source, series in (("none", None), ("figures", figures), ("figures+candidates", more)):
        for variant, labels in FIGURE_SETS.items():
            if (series is None) != (variant == "none"):
                continue
            reported = sum(len(d._.parallelisms) for d in preds)
            pairs = []
            for g, d, f in zip(gold, preds, series or [[] for _ in preds]):
                base = [list(p.offsets) for p in d._.parallelisms] + candidates(d)
                pairs.append((g, with_figures(base, f, labels)))
            total = sum(len(p) for _, p in pairs)
            out[f"review+{source}={variant}"] = {
                "reports": reported,
                "review": total - reported,
                "review_ratio": round((total - reported) / max(reported, 1), 2),
                "epm_r": round(100 * score_parallelism_sets(pairs)["epm_r"], 2),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asp", type=Path, required=True)
    parser.add_argument("--pse", type=Path, required=True)
    parser.add_argument("--running", type=Path, required=True)
    parser.add_argument("--grid", default="0,0.5,1,1.5,2,3")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    grid = [float(v) for v in args.grid.split(",")]
    sets = [("la", "asp-dev"), ("la", "running-dev"), ("zh", "pse-dev"),
            ("en", "running-dev"), ("de", "running-dev")]  # fmt: skip
    result: Dict[str, Dict] = {}
    for lang, name in sets:
        nlp = spacy.load(PACKAGES[lang])
        tagger = nlp.get_pipe("parallelism_tagger")
        if name == "running-dev":
            docs, gold = running_dev(args.running / f"{lang}.jsonl", nlp)
        else:
            docs, gold = corpus_dev(args.asp if lang == "la" else args.pse, nlp)
        base = spacy.load(BASES[lang])
        base.add_pipe("figure_finder")
        figures, more = figure_series(base, docs)
        rows = {}
        shipped = tagger.cfg["outside_penalty"]
        for penalty in grid:
            tagger.cfg["outside_penalty"] = penalty
            preds = [
                [list(p.offsets) for p in d._.parallelisms] for d in nlp.pipe(fresh(nlp, docs))
            ]
            for variant, labels in FIGURE_SETS.items():
                pairs = [(g, with_figures(p, f, labels)) for g, p, f in zip(gold, preds, figures)]
                scores = score_parallelism_sets(pairs)
                rows[f"penalty={penalty} figures={variant}"] = {
                    "reported": sum(len(p) for _, p in pairs),
                    **{k: round(100 * scores[k], 2) for k in ("epm_p", "epm_r", "epm_f")},
                }
        tagger.cfg["outside_penalty"] = shipped
        review = review_lever(nlp, docs, gold, figures, more)
        key = f"{lang}/{name}"
        result[key] = {
            "package": f"{PACKAGES[lang]} {nlp.meta['version']}",
            "documents": len(docs),
            "tokens": sum(len(d) for d in docs),
            "gold": sum(len(g) for g in gold),
            "figures_found": {
                v: sum(1 for f in figures for lab, _ in f if lab in labels)
                for v, labels in FIGURE_SETS.items()
            },  # fmt: skip
            "levers": rows,
            "review": review,
        }
        print(key, "review", review, flush=True)
        best = max(rows.items(), key=lambda kv: kv[1]["epm_f"])
        print(key, "shipped", rows[f"penalty={shipped} figures=none"], "best", best, flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
