"""Load the pipeline a corpus run applies, once per worker process (and thread)."""

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Set, Tuple

import spacy
from spacy.language import Language
from spacy.util import get_lang_class, load_config, load_model_from_config

BLANK = "blank"


@dataclass(frozen=True)
class PipelineSpec:
    """What to load; hashable and picklable, so tasks can carry it to remote workers.

    model (str): a package name or pipeline directory (``spacy.load``), a training
        config (``*.cfg``: built and initialized; only components that need no training
        data can be initialized this way), or "blank" (``spacy.blank(lang)``).
    lang (str): the language of a blank pipeline.
    add_pipes (Tuple[str, ...]): factories to append with their default settings, e.g.
        ("displacement_analyzer",) after a base pipeline's parser.
    code (Optional[str]): a Python file to import before loading, e.g. one that
        registers custom components or architectures (as ``spacy train --code``). Every
        process that loads the pipeline imports it, Dask workers too: give a path they
        can all read.
    """

    model: str
    lang: str = "xx"
    add_pipes: Tuple[str, ...] = ()
    code: Optional[str] = None


def load_pipeline(spec: PipelineSpec) -> Language:
    """Load the pipeline ``spec`` describes.

    spec (PipelineSpec): what to load.
    RETURNS (Language): the pipeline.
    RAISES ValueError: the model is neither an installed package, a pipeline directory,
        a config file nor "blank", or the language code is unknown.
    """
    import spacy_rhetoric  # noqa: F401  (registers our factories without entry points)

    if spec.code is not None:
        import_code(spec.code)
    model = spec.model
    if model == BLANK or model.startswith(BLANK + ":"):
        lang = model.split(":", 1)[1] if ":" in model else spec.lang
        try:
            get_lang_class(lang)
        except ImportError:
            raise ValueError(
                f"Unknown language code '{lang}' for a blank pipeline: use a spaCy "
                "language code such as la, de, en, zh or xx."
            ) from None
        nlp = spacy.blank(lang)
    elif model.endswith(".cfg"):
        path = Path(model)
        if not path.is_file():
            raise ValueError(f"Pipeline config not found: {path}")
        nlp = load_model_from_config(load_config(path), auto_fill=True, validate=True)
        nlp.initialize()
    else:
        path = Path(model)
        if not path.exists() and not spacy.util.is_package(model):
            raise ValueError(
                f"Pipeline '{model}' not found: give a trained pipeline directory (e.g. "
                "training/parallelism-asp/model-best), an installed pipeline package, a "
                "*.cfg config, or 'blank' with --lang."
            )
        nlp = spacy.load(model)
    for factory in spec.add_pipes:
        if factory in nlp.pipe_names:
            continue
        nlp.add_pipe(factory)
    return nlp


_CACHE: Dict[Tuple[PipelineSpec, int], Language] = {}
_LOCK = threading.Lock()
_IMPORTED: Set[Path] = set()
_IMPORT_LOCK = threading.Lock()


def import_code(path: str) -> None:
    """Import the Python file ``path`` once per process.

    Registering a component twice under one name with another function is an error in
    spaCy, so a file is executed only the first time a pipeline needs it.

    path (str): the file, e.g. functions.py with ``@Language.component`` definitions.
    RAISES ValueError: the file does not exist.
    """
    resolved = Path(path).resolve()
    with _IMPORT_LOCK:
        if resolved in _IMPORTED:
            return
        if not resolved.is_file():
            raise ValueError(
                f"Code file not found: {path} (--code must name a Python file that every "
                "worker can read at that path)."
            )
        spacy.util.import_file(f"spacy_rhetoric_code_{len(_IMPORTED)}", resolved)
        _IMPORTED.add(resolved)


def cached_pipeline(spec: PipelineSpec) -> Language:
    """The pipeline for ``spec``, loaded once per process and thread.

    Dask workers run one task after another in the same process, so a worker loads the
    pipeline for its first chunk and reuses it for the next ones. Keying by thread keeps
    a thread-based worker (``processes=False``, ``threads_per_worker > 1``) from running
    one pipeline in two threads at once.

    spec (PipelineSpec): what to load.
    RETURNS (Language): the loaded pipeline.
    """
    key = (spec, threading.get_ident())
    with _LOCK:
        nlp = _CACHE.get(key)
    if nlp is None:
        nlp = load_pipeline(spec)
        with _LOCK:
            _CACHE[key] = nlp
    return nlp


def use_pipeline(spec: PipelineSpec, nlp: Language) -> None:
    """Make ``cached_pipeline(spec)`` return ``nlp`` in this process and thread.

    For callers that assemble a pipeline in memory (e.g. ``analyze``) and run it with the
    local backend: ``spec.model`` then only names it. Dask workers cannot see it; give
    them a pipeline directory (``nlp.to_disk``) instead.
    """
    with _LOCK:
        _CACHE[(spec, threading.get_ident())] = nlp


def is_cached(spec: PipelineSpec) -> bool:
    """Whether this process and thread have loaded ``spec`` already."""
    with _LOCK:
        return (spec, threading.get_ident()) in _CACHE


def clear_pipeline_cache() -> None:
    """Forget every cached pipeline of this process."""
    with _LOCK:
        _CACHE.clear()
