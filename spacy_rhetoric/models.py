"""The named trained pipelines that ``analyze`` needs, where to find them, and how to
build them once.

Each model has a name (``base-la``, ``parallelism-zh``, ``chiasmus-de``, ...) and a
recipe: the ``convert`` / ``base-corpus`` and ``spacy train`` commands that build it from
the datasets of the data mirror. A model is looked up, first match wins, in

1. an explicit path (``--model NAME=PATH``),
2. ``$SPACY_RHETORIC_MODELS/<name>`` (a directory of model directories),
3. the package data directory ``spacy_rhetoric/data/models/<name>`` (models shipped
   with the package: shipping one is a matter of dropping its directory there),
4. the user cache, ``$XDG_CACHE_HOME/spacy_rhetoric/models/<name>`` (default
   ``~/.cache/...``), where ``models build`` writes and ``models link`` links.

A directory counts as a model if it holds a spaCy pipeline (``config.cfg`` and
``meta.json``).
"""

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

from .assets import DATA_ENV

ENV_MODELS = "SPACY_RHETORIC_MODELS"
PACKAGE_MODELS = Path(__file__).parent / "data" / "models"
BUILD_INFO = "spacy_rhetoric_build.json"
SOURCES = ("option", "env", "package", "cache")


class ModelError(ValueError):
    """A model name, path or build that cannot be used."""


@dataclass(frozen=True)
class BuildContext:
    """What a recipe needs: the data mirror, a scratch directory, the output directory
    of ``spacy train``, the configs directory and already resolved models."""

    data: Path
    work: Path
    train_output: Path
    configs: Path
    models: Mapping[str, Path]

    def python(self, *args: str) -> List[str]:
        return [sys.executable, "-m", *args]


@dataclass(frozen=True)
class ModelSpec:
    """A named model: its language, role in ``analyze``, licence and recipe.

    name (str): e.g. "base-la".
    lang (str): the language code.
    role (str): "base" (tagger, lemmatizer, parser), "parallelism" or "chiasmus".
    description (str): what it is and what it is trained on.
    licence (str): the licence of its training data (decides whether it may be shipped).
    data (Tuple[str, ...]): folders of the data mirror the recipe reads.
    requires (Tuple[str, ...]): models that must exist before it is built.
    recipe (Callable[[BuildContext], List[List[str]]]): the commands that train it into
        ``BuildContext.train_output``.
    requires (Tuple[str, ...]): models that must be available before it is built.
    install (str): the directory under ``train_output`` that becomes the model.
    keep (Tuple[str, ...]): if given, only these components are kept in the installed
        model (e.g. the chiasmus scorer without the frozen tagger it was trained behind).
    """

    name: str
    lang: str
    role: str
    description: str
    licence: str
    data: Tuple[str, ...]
    recipe: Callable[[BuildContext], List[List[str]]]
    requires: Tuple[str, ...] = ()
    install: str = "model-best"
    keep: Tuple[str, ...] = ()


def _base_recipe(lang: str) -> Callable[[BuildContext], List[List[str]]]:
    def recipe(ctx: BuildContext) -> List[List[str]]:
        corpus = ctx.work / "corpus"
        train = ctx.python("spacy", "train", str(ctx.configs / "treebank" / f"base_{lang}.cfg"))
        train += ["--output", str(ctx.train_output)]
        train += ["--paths.train", str(corpus / "train.spacy")]
        train += ["--paths.dev", str(corpus / "dev.spacy")]
        return [
            ctx.python("spacy_rhetoric", "base-corpus", lang, str(ctx.data / "ud"), str(corpus)),
            train,
        ]

    return recipe


def _parallelism_recipe(fmt: str, folder: str, config: str) -> Callable:
    def recipe(ctx: BuildContext) -> List[List[str]]:
        corpus = ctx.work / "corpus"
        train = ctx.python("spacy", "train", str(ctx.configs / "parallelism" / config))
        train += ["--output", str(ctx.train_output)]
        train += ["--paths.train", str(corpus / "train.spacy")]
        train += ["--paths.dev", str(corpus / "dev.spacy")]
        # as project.yml's tune-parallelism-*: pick outside_penalty on the dev set
        tune = ctx.python("spacy_rhetoric", "tune-parallelism")
        tune += [str(ctx.train_output / "model-best"), str(corpus / "dev.spacy")]
        tune += [str(ctx.train_output / "model-tuned"), "--grid", TUNE_GRID]
        return [
            ctx.python("spacy_rhetoric", "convert", fmt, str(ctx.data / folder), str(corpus)),
            train,
            tune,
        ]

    return recipe


def _chiasmus_de(ctx: BuildContext) -> List[List[str]]:
    corpus = ctx.work / "corpus"
    train = ctx.python("spacy", "train", str(ctx.configs / "chiasmus" / "de.cfg"))
    train += ["--output", str(ctx.train_output), "--paths.corpus", str(corpus / "all.spacy")]
    return [
        ctx.python(
            "spacy_rhetoric",
            "convert",
            "chiasmus-de",
            str(ctx.data / "german-chiasmus"),
            str(corpus),
        ),
        train,
    ]


def _chiasmus_en(ctx: BuildContext) -> List[List[str]]:
    corpus = ctx.work / "corpus"
    source = ctx.data / "chiasmus-dubremetz-nivre"
    train = ctx.python("spacy", "train", str(ctx.configs / "chiasmus" / "en.cfg"))
    train += ["--output", str(ctx.train_output)]
    # model-best is chosen on a stratified fold of the training file (en.cfg), never on test
    train += ["--paths.train", str(corpus / "train.spacy")]
    train += ["--paths.tagger", str(ctx.models["base-en"])]
    # E features off: the scorer then depends only on POS and lemmas, not on the
    # tensor of the tagger it was trained with, so it can be sourced into any base.
    train += ["--components.chiasmus_finder.model.vectors", "none"]
    return [ctx.python("spacy_rhetoric", "convert", "chiasmus-en", str(source), str(corpus)), train]


# outside_penalty values tried on the dev set (as project.yml's tune-parallelism-*-me5)
TUNE_GRID = "0,0.25,0.5,0.75,1,1.5,2,3"

UD_LICENCE = "UD treebanks (various; some non-commercial): do not ship, build locally"

MODEL_SPECS: Dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "base-la", "la", "base",
            "Latin tagger, morphologizer, lemmatizer, parser (UD Perseus, UDante, PROIEL, ITTB)",
            UD_LICENCE, ("ud",), _base_recipe("la"),
        ),
        ModelSpec(
            "base-de", "de", "base",
            "German tagger, morphologizer, lemmatizer, parser (UD German-GSD dev)",
            UD_LICENCE, ("ud",), _base_recipe("de"),
        ),
        ModelSpec(
            "base-en", "en", "base",
            "English tagger, morphologizer, lemmatizer, parser (UD English-EWT)",
            UD_LICENCE, ("ud",), _base_recipe("en"),
        ),
        ModelSpec(
            "parallelism-la", "la", "parallelism",
            "parallelism_tagger on frozen multilingual-e5-small, trained on the Augustinian "
            "Sermon Parallelisms (ASP)",
            "CC BY-SA 4.0 (ASP); encoder MIT", ("asp",),
            _parallelism_recipe("asp", "asp", "asp-me5.cfg"),
            install="model-tuned",
        ),
        ModelSpec(
            "parallelism-zh", "zh", "parallelism",
            "parallelism_tagger on frozen multilingual-e5-small, trained on the Chinese "
            "PSE-I essays",
            "CC BY-SA 4.0 (PSE-I); encoder MIT", ("pse-i",),
            _parallelism_recipe("pse", "pse-i", "pse-me5.cfg"),
            install="model-tuned",
        ),
        ModelSpec(
            "chiasmus-de", "de", "chiasmus",
            "chiasmus_finder scorer trained on the GerDraCor chiasmus candidates",
            "see german-chiasmus/SOURCE.md", ("german-chiasmus",), _chiasmus_de,
        ),
        ModelSpec(
            "chiasmus-en", "en", "chiasmus",
            "chiasmus_finder scorer trained on the Europarl candidates (Dubremetz & Nivre)",
            "GPL-3.0 (data)", ("chiasmus-dubremetz-nivre",), _chiasmus_en, requires=("base-en",),
            keep=("chiasmus_finder",),
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


def configs_dir() -> Path:
    """RETURNS (Path): the training configs (package data if shipped, else the repository's)."""
    for candidate in (
        Path(__file__).parent / "data" / "configs",
        Path(__file__).parents[1] / "configs",
    ):
        if candidate.is_dir():
            return candidate
    raise ModelError(
        "The training configs were not found (looked in spacy_rhetoric/data/configs and "
        "the repository's configs/): build models from a checkout of the repository."
    )


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
    """RETURNS (str): the command that makes a missing model available."""
    spec = get_spec(name)
    return f"python -m spacy_rhetoric models build --lang {spec.lang} (or: models link {name} PATH)"


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
    explicit: Optional[Mapping[str, Path]] = None,
    log: Optional[Callable[[str], None]] = None,
    echo: Optional[Callable[[str], None]] = None,
) -> Dict[str, object]:
    """Train a model with its recipe and install ``model-best`` into the user cache.

    name (str): the model.
    data (Path): the data mirror (folders named as in ``ModelSpec.data``).
    explicit (Optional[Mapping[str, Path]]): paths of required models given explicitly.
    log (Optional[Callable[[str], None]]): receives each command.
    echo (Optional[Callable[[str], None]]): receives the commands' output lines (progress).
    RETURNS (Dict[str, object]): the build info (also written to BUILD_INFO in the model).
    RAISES ModelError: missing data, missing required models, or a failing command.
    """
    spec = get_spec(name)
    data = Path(data)
    for folder in spec.data:
        if not (data / folder).exists():
            raise ModelError(
                f"{name}: dataset folder {data / folder} not found; pass --data DIR (the data "
                f"mirror) or set ${DATA_ENV}."
            )
    required: Dict[str, Path] = {}
    for other in spec.requires:
        found = resolve(other, explicit)
        if found is None:
            raise ModelError(f"{name} needs {other}, which is not available: {build_hint(other)}")
        required[other] = found.path.resolve()
    configs = configs_dir()
    target = cache_dir() / name
    target.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=target.parent) as tmp:
        work = Path(tmp)
        ctx = BuildContext(data, work, work / "train", configs, required)
        commands = spec.recipe(ctx)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for command in commands:
            if log:
                log(" ".join(command))
            returncode, tail = _run(command, env, echo)
            if returncode != 0:
                raise ModelError(
                    f"{name}: command failed ({returncode}): {' '.join(command)}\n"
                    + "\n".join(tail)
                )
        best = ctx.train_output / spec.install
        if not is_pipeline_dir(best):
            raise ModelError(f"{name}: training wrote no pipeline to {best}.")
        if spec.keep:
            _keep_components(best, spec.keep)
        info = {
            "name": name,
            "seconds": round(time.perf_counter() - start, 1),
            "commands": [" ".join(c) for c in commands],
            "requires": {k: str(v) for k, v in required.items()},
            "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        (best / BUILD_INFO).write_text(json.dumps(info, indent=2), encoding="utf8")
        if target.is_symlink():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        shutil.move(str(best), str(target))
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
