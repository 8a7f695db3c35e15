"""The named trained pipelines that ``analyze`` needs, where to find them, and how to
build them once.

Each model has a name (``base-la``, ``parallelism-zh``, ``chiasmus-de``, ...; the catalogue,
one ``ModelSpec`` each, is ``model_specs``) and the
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

from .model_specs import (
    ENV_MODELS,
    LANGUAGES,
    MODEL_SPECS,
    ModelError,
    ModelSpec,
    cache_dir,
    get_spec,
)

PACKAGE_MODELS = Path(__file__).parent / "data" / "models"
BUILD_INFO = "spacy_rhetoric_build.json"
SOURCES = ("option", "env", "package", "cache", "installed")
WHEEL_DIR = "models"
AUTHOR = "spacy_rhetoric"
PACKAGE = "spacy_rhetoric"


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model was found: its path and which source (see ``SOURCES``)."""

    name: str
    path: Path
    source: str


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
