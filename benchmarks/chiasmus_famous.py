"""Are well-known antimetaboles reported (above the threshold), not only ranked? The
hand-weighted rules of ``chiasmus_finder`` on ``benchmarks/data/antimetaboles.json``
(20 English, 10 German; never used to set a weight or a threshold), each text tagged by
the language's shipped base pipeline: the calibrated rules (``ChiasmusRules.v2``, the
default) against the Europarl settings (``ChiasmusRules.v1``), with the rate each
calibration lets through on held-out running text (from the shipped calibration file).

    python benchmarks/chiasmus_famous.py --output benchmarks/results/chiasmus_famous.json
"""

import argparse
from pathlib import Path

import spacy
import srsly

from spacy_rhetoric.chiasmus.calibration import load_calibrations

REPO = Path(__file__).resolve().parents[1]
BASES = {"en": "en_rhetoric_base", "de": "de_rhetoric_base", "la": "la_rhetoric_base"}
SETTINGS = {
    "calibrated": {},
    "europarl": {"model": {"@architectures": "spacy-rhetoric.ChiasmusRules.v1"}},
}


def words_of(span):
    return [word.text.lower() for word in span._.chiasmus_support]


def run(lang, items, setting):
    nlp = spacy.load(BASES[lang])
    nlp.add_pipe("chiasmus_finder", config=SETTINGS[setting])
    rows = []
    for item, doc in zip(items, nlp.pipe([i["text"] for i in items])):
        ranked = list(doc.spans["chiasmus_candidates"])
        rank = next((r for r, s in enumerate(ranked, 1) if words_of(s) == item["words"]), None)
        score = ranked[rank - 1]._.chiasmus_score if rank else None
        reported = any(words_of(s) == item["words"] for s in doc.spans["chiasmus"])
        others = [words_of(s) for s in doc.spans["chiasmus"] if words_of(s) != item["words"]]
        rows.append({"words": item["words"], "reported": reported, "rank": rank,
                     "score": score, "other_reported": others})  # fmt: skip
    n = len(rows)
    return {
        "n": n,
        "reported": sum(r["reported"] for r in rows),
        "recall": sum(r["reported"] for r in rows) / n,
        "ranked_first": sum(r["rank"] == 1 for r in rows),
        "items": rows,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=REPO / "benchmarks" / "data" / "antimetaboles.json"
    )
    output = REPO / "benchmarks" / "results" / "chiasmus_famous.json"
    parser.add_argument("--output", type=Path, default=output)
    args = parser.parse_args()
    data = srsly.read_json(args.data)
    calibrations = load_calibrations()
    results = {}
    for lang in ("en", "de"):
        results[lang] = {setting: run(lang, data[lang], setting) for setting in SETTINGS}
        held = calibrations.get(lang, {}).get("held_out")
        results[lang]["calibrated"]["held_out_running_text"] = held
        for setting, found in results[lang].items():
            print(f"{lang} {setting}: {found['reported']} of {found['n']} reported, "
                  f"{found['ranked_first']} ranked first")  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, results)


if __name__ == "__main__":
    main()
