"""What the chiasmus finders report on running text they never saw: candidates above the
threshold per 1,000 tokens, and among the 20 best, how many rest on a determiner, a
pronoun or punctuation.

German: the held-out second half of UD German-LIT (its sentences' text, tagged by the
shipped `de_rhetoric_base`), with the finder of `configs/chiasmus/de.cfg` trained on the
450 annotated candidates (positives a/c/fa/fc) without and with 4,000 random inversions
of German running text (GSD and the first half of LIT) as extra negatives, and the
hand-weighted rules. English: UD English-EWT test (tagged by `en_rhetoric_base`), the
finder of `configs/chiasmus/en.cfg` trained on the Dubremetz & Nivre training split, and
the rules.

    python benchmarks/chiasmus_running_text.py \
        --output benchmarks/results/chiasmus_running_text.json
"""

import argparse
import os
import time
from pathlib import Path

import spacy
import srsly

from spacy_rhetoric.chiasmus.crossval import (
    default_config_path,
    settings_from_config,
    train_finder,
)
from spacy_rhetoric.chiasmus.eval_english import ENGLISH_POSITIVE, english_examples
from spacy_rhetoric.chiasmus.eval_german import (
    GERMAN_FULL,
    german_examples,
    german_negatives,
    german_running_text,
)
from spacy_rhetoric.chiasmus.negatives import running_text, running_text_summary

DATA = Path(os.environ.get("SPACY_RHETORIC_DATA", "../shared/data"))


def with_finder(base_name, finder_nlp=None, suggester=None):
    """The base pipeline with a trained finder sourced in, or with the rules."""
    nlp = spacy.load(base_name)
    if finder_nlp is not None:
        finder = nlp.add_pipe("chiasmus_finder", source=finder_nlp)
        finder.cfg["review_per_1000"] = None  # every candidate: counted and ranked
    else:
        config = {"suggester": suggester} if suggester else {}
        nlp.add_pipe("chiasmus_finder", config={**config, "review_per_1000": None})
    return nlp


def summarise(nlp, texts, top):
    docs = list(nlp.pipe(texts, batch_size=16))
    threshold = nlp.get_pipe("chiasmus_finder").cfg["threshold"]
    return running_text_summary(docs, threshold, top)


def german(n_negatives, top, seed):
    settings = settings_from_config(default_config_path("de.cfg"))
    _, held_out = german_running_text(DATA / "ud", spacy.blank("de").vocab)
    texts = [doc.text for doc in held_out]
    results = {"held_out_docs": len(held_out)}
    rules = with_finder("de_rhetoric_base", suggester=settings["suggester"])
    results["rules"] = summarise(rules, texts, top)
    blank = spacy.blank("de")
    examples = german_examples(DATA / "german-chiasmus", blank)
    negatives = german_negatives(DATA / "ud", settings, n_negatives, seed)
    for name, train in (("trained_450", examples), ("trained_450_random", examples + negatives)):
        start = time.perf_counter()
        finder_nlp = spacy.blank("de")
        train_finder(finder_nlp, train, settings, GERMAN_FULL, seed=seed)
        results[name] = summarise(with_finder("de_rhetoric_base", finder_nlp), texts, top)
        results[name]["train_seconds"] = time.perf_counter() - start
    results["n_random_negatives"] = len(negatives)
    return results


def english(top, seed):
    settings = settings_from_config(default_config_path("en.cfg"))
    docs = running_text([DATA / "ud/UD_English-EWT/en_ewt-ud-test.conllu"], spacy.blank("en").vocab)
    texts = [doc.text for doc in docs]
    results = {"docs": len(docs)}
    results["rules"] = summarise(
        with_finder("en_rhetoric_base", suggester=settings["suggester"]), texts, top
    )
    tagger = spacy.load("en_rhetoric_base")
    train = english_examples(DATA / "chiasmus-dubremetz-nivre", tagger)["train"]
    finder_nlp = spacy.blank("en")
    train_finder(finder_nlp, train, settings, ENGLISH_POSITIVE, seed=seed)
    results["trained_europarl"] = summarise(with_finder("en_rhetoric_base", finder_nlp), texts, top)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-negatives", type=int, default=4000)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    results = {
        "german": german(args.n_negatives, args.top, args.seed),
        "english": english(args.top, args.seed),
    }
    results["seconds"] = time.perf_counter() - start
    for lang in ("german", "english"):
        for name, summary in results[lang].items():
            if isinstance(summary, dict):
                print(
                    f"{lang} {name}: {summary['above_threshold_per_1000_tokens']:.2f} above the "
                    f"threshold per 1,000 tokens; {summary['top_on_function_words']} of the top "
                    f"{summary['top']} on DET/PRON/PUNCT"
                )
    if args.output:
        srsly.write_json(args.output, results)


if __name__ == "__main__":
    main()
