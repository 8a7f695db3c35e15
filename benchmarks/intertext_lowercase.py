"""False links of a fresh install's `analyze --lang la` (the shipped Virgil index and its
own reranker) on Cicero's De officiis as Tesserae prints it and lower-cased. Many Latin
editions start sentences in lower case, so the base parser finds fewer sentence ends and
the intertext matcher gets fewer, longer queries; this measures whether that yields more
links on a text that cannot quote Virgil. Links are counted per 100 sentences of the
cased text (the same text either way).

    python benchmarks/intertext_lowercase.py --data assets \
        --output benchmarks/results/intertext_lowercase.json
"""

import argparse
import json
from pathlib import Path

from intertext_false_links import analyze_text

from spacy_rhetoric.corpora.tesserae import read_tesserae

FILE = "latin-corpora/tesserae/texts/la/cicero.de_officiis.tess"
KEYS = ("sentences", "tokens", "links", "linked_sentences", "seconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("assets"))
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    text = "\n\n".join(s.text for s in read_tesserae([args.data / FILE]).segments)
    result = {"text": FILE, "runs": {}}
    for name, variant in (("as_printed", text), ("lower_cased", text.lower())):
        run = analyze_text(None, variant, None, shipped_index=True)
        result["runs"][name] = {key: run[key] for key in KEYS}
        result["runs"][name]["note"] = run["note"]
        result["runs"][name]["examples"] = run["examples"][:5]
    cased = result["runs"]["as_printed"]["sentences"]
    for run in result["runs"].values():
        run["links_per_100_sentences_of_the_cased_text"] = round(100 * run["links"] / cased, 2)
        print(run["sentences"], run["links"], run["links_per_100_sentences_of_the_cased_text"])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
