"""figure_finder against FreeStylo on FreeStylo's own figures (epiphora, polysyndeton,
alliteration), on the same English texts: every English line of the figures gold set
(benchmarks/data/figures) and the first 758 sentences of UD English-EWT test, read as one
plain-text file. FreeStylo's side comes from ``freestylo_run.py`` (its JSON, run in an
environment of its own); ours is computed here with the shipped defaults
(``en_rhetoric_base`` + ``figure_finder``) and counted the same way:

- found: gold lines of the figure whose text has at least one report of that figure;
- false reports: reports of the figure on texts with no gold line of that figure (and of
  those, the ones on the "none" negatives);
- EWT: reports per 1,000 UD tokens.

    python figures_vs_freestylo.py --freestylo results/freestylo_english.json \\
        --ewt ../assets/ud/UD_English-EWT/en_ewt-ud-test.conllu \\
        --output results/figures_vs_freestylo.json
"""

import argparse
import json
from pathlib import Path
from typing import Dict, List

FIGURES = ("epiphora", "polysyndeton", "alliteration")


def ewt_text(path: Path, sentences: int) -> str:
    """RETURNS (str): the first ``sentences`` sentences of a CoNLL-U file, one a line."""
    lines = []
    for line in path.read_text(encoding="utf8").splitlines():
        if line.startswith("# text = "):
            lines.append(line[len("# text = ") :])
            if len(lines) == sentences:
                break
    return "\n".join(lines)


def count(texts: Dict[str, dict], reports: Dict[str, List[str]], figure: str, split: str) -> dict:
    """Found and false reports of one figure over the texts of one split ("all": both)."""
    chosen = {k: t for k, t in texts.items() if split == "all" or t["split"] == split}
    gold = [k for k, t in chosen.items() if figure in t["figures"]]
    found = [k for k in gold if figure in reports[k]]
    without = [k for k in chosen if figure not in chosen[k]["figures"]]
    false = sum(reports[k].count(figure) for k in without)
    on_none = sum(reports[k].count(figure) for k in without if chosen[k]["figures"] == ["none"])
    return {
        "gold": len(gold),
        "found": len(found),
        "false_reports": false,
        "texts_without_this_figure": len(without),
        "false_reports_on_none": on_none,
        "none_texts": sum(1 for k in without if chosen[k]["figures"] == ["none"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--freestylo", type=Path, required=True)
    parser.add_argument("--ewt", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    import spacy

    import spacy_rhetoric  # noqa: F401  (figure_finder)

    theirs = json.loads(args.freestylo.read_text(encoding="utf8"))
    texts = theirs["texts"]
    nlp = spacy.load("en_rhetoric_base")
    nlp.add_pipe("figure_finder")
    ours_reports = {}
    for key, doc in zip(texts, nlp.pipe(t["text"] for t in texts.values())):
        ours_reports[key] = [span.label_ for span in doc.spans["figures"]]
    theirs_reports = {k: [r["label"] for r in t["reports"]] for k, t in texts.items()}

    ewt = nlp(ewt_text(args.ewt, theirs["ewt"]["sentences"]))
    ud_tokens = theirs["ewt"]["ud_tokens"]
    ewt_ours = {f: sum(1 for s in ewt.spans["figures"] if s.label_ == f) for f in FIGURES}
    as_document = theirs["ewt"]["one_document"]
    result = {"texts": len(texts), "ewt_sentences": theirs["ewt"]["sentences"], "figures": {}}
    for figure in FIGURES:
        row = {}
        for split in ("dev", "test", "all"):
            row[split] = {
                "figure_finder": count(texts, ours_reports, figure, split),
                "freestylo": count(texts, theirs_reports, figure, split),
            }
        theirs_ewt = as_document.get(figure, {}).get("per_1000_ud_tokens")
        row["ewt_per_1000_ud_tokens"] = {
            "figure_finder": round(1000 * ewt_ours[figure] / ud_tokens, 2),
            "freestylo": theirs_ewt,
        }
        result["figures"][figure] = row
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf8")
    for figure, row in result["figures"].items():
        ours, fs = row["all"]["figure_finder"], row["all"]["freestylo"]
        print(
            f"{figure}: found {ours['found']}/{ours['gold']} vs {fs['found']}/{fs['gold']}; "
            f"false reports {ours['false_reports']} vs {fs['false_reports']}; EWT per 1,000 "
            f"{row['ewt_per_1000_ud_tokens']['figure_finder']} vs "
            f"{row['ewt_per_1000_ud_tokens']['freestylo']}"
        )


if __name__ == "__main__":
    main()
