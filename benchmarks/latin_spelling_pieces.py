"""How each ``parallelism_tagger`` spelling of Latin meets multilingual-e5-small's
tokenizer: the share of words a spelling changes and the encoder pieces per word (the
encoder's cost grows with the pieces), over ASP's own u-only text and over a classical
edition with v (Tesserae Cicero, De officiis).

    python benchmarks/latin_spelling_pieces.py corpus/asp/dev.spacy \
        assets/latin-corpora/tesserae/texts/la/cicero.de_officiis.tess \
        --output benchmarks/results/latin_spelling_pieces.json
"""

import argparse
import re
from pathlib import Path
from typing import Dict, List

import spacy
import srsly
from spacy.tokens import DocBin

from spacy_rhetoric.encoders.convert import encoder_path
from spacy_rhetoric.parallelism.reading import SPELLINGS

SPELLING_NAMES = ("", "latin", "latin-v")


def pieces_per_word(tokenizer, words: List[str]) -> float:
    encoded = tokenizer.encode_batch(words, add_special_tokens=False)
    return sum(len(e.ids) for e in encoded) / max(len(words), 1)


def measure(tokenizer, words: List[str]) -> Dict[str, Dict[str, float]]:
    rows = {}
    for name in SPELLING_NAMES:
        fold = SPELLINGS.get(name, lambda w: w)
        read = [fold(w) for w in words]
        changed = [i for i, (a, b) in enumerate(zip(words, read)) if a != b]
        rows[name or "as written"] = {
            "words": len(words),
            "changed_share": round(len(changed) / max(len(words), 1), 4),
            "pieces_per_word": round(pieces_per_word(tokenizer, read), 4),
            "pieces_per_changed_word": round(
                pieces_per_word(tokenizer, [read[i] for i in changed]), 4
            )
            if changed
            else None,
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("asp", type=Path, help="an ASP .spacy split")
    parser.add_argument("tess", type=Path, help="a Tesserae .tess file")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(encoder_path() / "tokenizer.json"))
    nlp = spacy.blank("la")
    asp = [t.text for d in DocBin().from_disk(args.asp).get_docs(nlp.vocab) for t in d]
    lines = args.tess.read_text(encoding="utf8").splitlines()
    text = " ".join(re.sub(r"^<[^>]*>\s*", "", line) for line in lines)
    classical = [t.text for t in nlp.make_doc(text) if not t.is_space]
    result = {
        "asp": {"source": str(args.asp), **measure(tokenizer, asp)},
        "classical": {"source": str(args.tess), **measure(tokenizer, classical)},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(args.output, result)
    for corpus in ("asp", "classical"):
        for name, row in result[corpus].items():
            if name != "source":
                print(corpus, name, row)


if __name__ == "__main__":
    main()
