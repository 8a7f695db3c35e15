"""Which pipelines the main job runs for a language, and how they are assembled from the
models that are available.

One :class:`Analyzer` per language holds

- the base pipeline (``base-<lang>``: tagger, morphologizer, lemmatizer, parser; for
  Chinese, or when the base model is missing, a blank tokenizer-only pipeline),
  extended with ``chiasmus_finder`` (sourced from ``chiasmus-<lang>``, else its rules),
  ``figure_finder`` (rules and the package's scorer: no model to build),
  ``displacement_analyzer`` (if the base has a parser) and ``intertext_matcher`` (over
  the index given, else the language's shipped index, ``intertext-<lang>``: Virgil for
  Latin, the King James Version for English);
- the parallelism pipeline (``parallelism-<lang>``), run as a second pipeline over the
  base tokens: it was trained on the datasets' own tokens and orthography (ASP: lower
  case, u for v, i for j), so each base doc is copied into its vocab with its words
  normalised the same way, and the branches it finds are copied back by token offsets.

Components that cannot run are skipped with a :class:`Note` saying why and how to
enable them; notes appear in the terminal, in the HTML report and in the JSON.
"""

from copy import deepcopy
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Tuple,
)

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from ..about import __version__
from ..chiasmus.calibration import HAND_SET, WEIGHTS_SOURCE
from ..chiasmus.component import DEFAULT_REVIEW_PER_1000
from ..corpora.latin import normalize_latin
from ..corpora.parallelisms import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from ..corpora.parallelisms import set_parallelisms
from ..corpora.util import LANGUAGE_KEY
from ..encoders.vectors import pipeline_precision
from ..figures.component import NOT_FOR
from ..intertext.component import STORED_INDEX
from ..intertext.index import META_FILE
from ..models import build_hint, get_spec, resolve
from ..parallelism.component import DEFAULT_CANDIDATES_KEY as PARALLELISM_CANDIDATES_KEY
from ..textio import CHUNK_CHARS, text_chunks
from .findings import Document, Note

LANGUAGES = ("la", "de", "en", "zh")
LANGUAGE_NAMES = {"la": "Latin", "de": "German", "en": "English", "zh": "Chinese"}
COMPONENTS = ("base", "parallelism", "chiasmus", "figures", "displacement", "intertext")
# The trained models each language can use, by component.
LANGUAGE_MODELS: Dict[str, Dict[str, str]] = {
    "la": {"base": "base-la-udante", "parallelism": "parallelism-la", "intertext": "intertext-la"},
    "de": {"base": "base-de", "chiasmus": "chiasmus-de", "parallelism": "parallelism-xx"},
    "en": {
        "base": "base-en",
        "chiasmus": "chiasmus-en",
        "parallelism": "parallelism-xx",
        "intertext": "intertext-en",
    },
    "zh": {"base": "base-zh", "parallelism": "parallelism-zh"},
}
# Languages for which chiasmus_finder runs with its hand-weighted rules where no trained
# scorer is available: those calibrated on running text in the package's
# spacy_rhetoric/data/chiasmus/calibration.json.
RULE_CHIASMUS = (
    "la",
    "de",
    "en",
    # Chinese (回环): searched on the characters of each word (chiasmus_finder's
    # units = "auto"), calibrated on UD Chinese-GSD
    "zh",
)
# How base tokens are spelled for the parallelism model (its training orthography).
PARALLELISM_NORMALIZERS: Dict[str, Callable[[str], str]] = {"la": normalize_latin}


PACKAGE_LICENCE = "MIT"  # setup.cfg's licence: the components that need no model


class AnalyzeError(ValueError):
    """Bad arguments to ``analyze`` (unknown language, unusable model or index)."""


# components that ``analyze --skip`` switches off (the base pipeline always runs)
SKIPPABLE = ("chiasmus", "displacement", "figures", "intertext", "parallelism")
SKIPPED = "switched off (--skip {})"


def check_language(lang: str) -> str:
    """RETURNS (str): ``lang`` if analyze supports it. RAISES AnalyzeError otherwise."""
    if lang not in LANGUAGES:
        names = ", ".join(f"{code} ({LANGUAGE_NAMES[code]})" for code in LANGUAGES)
        raise AnalyzeError(f"Unknown language '{lang}': analyze supports {names}.")
    return lang


def _copy_group(source: Doc, target: Doc, key: str) -> None:
    """Copy the span group ``key`` of ``source`` to ``target`` (same tokens), the spans'
    labels and ids and the group's attrs included."""
    group = source.spans[key]
    spans = [Span(target, s.start, s.end, label=s.label_, span_id=s.id_) for s in group]
    target.spans[key] = SpanGroup(target, name=key, spans=spans, attrs=deepcopy(dict(group.attrs)))


def parallelism_calibration(parallelism: Language) -> str:
    """What the parallelism tagger's scores are calibrated on, for the report: the dev
    data of the calibration in its cfg, with its expected calibration error
    ("ASP dev; ECE 0.036"), "uncalibrated" for a tagger without one, and "" for a
    pipeline whose tagger gives no scores."""
    for _, pipe in parallelism.pipeline:
        cfg = getattr(pipe, "cfg", None)
        if not isinstance(cfg, dict) or "calibration" not in cfg:
            continue
        calibration = cfg["calibration"]
        if not calibration:
            return "uncalibrated"
        text = str(calibration.get("data") or "dev data")
        ece = (calibration.get("ece") or {}).get("parallelisms")
        return text + (f"; ECE {float(ece):.3f}" if ece is not None else "")
    return ""


class Analyzer:
    """The pipelines of one language and the notes on what runs.

    lang (str): the language.
    nlp (Language): the base pipeline with the components sourced/added into it.
    parallelism (Optional[Language]): the parallelism pipeline, run over the base tokens.
    notes (List[Note]): per component, whether it runs and why (not).
    normalize (Optional[Callable[[str], str]]): spelling of base tokens for the
        parallelism pipeline (None: unchanged).
    """

    def __init__(
        self,
        lang: str,
        nlp: Language,
        parallelism: Optional[Language] = None,
        notes: Optional[List[Note]] = None,
        normalize: Optional[Callable[[str], str]] = None,
    ) -> None:
        self.lang = check_language(lang)
        self.nlp = nlp
        self.parallelism = parallelism
        self.notes = list(notes or [])
        self.normalize = normalize

    def pipe(self, texts: Iterable[str], batch_size: int = 16) -> Iterator[Doc]:
        """Analyse texts.

        texts (Iterable[str]): the texts (chunks).
        batch_size (int): docs per batch of nlp.pipe.
        YIELDS (Doc): the analysed docs (base vocab), parallelisms included.
        """
        docs = self.nlp.pipe(texts, batch_size=batch_size)
        if self.parallelism is None:
            yield from docs
            return
        batch: List[Doc] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._add_parallelisms(batch)
                batch = []
        if batch:
            yield from self._add_parallelisms(batch)

    def _add_parallelisms(self, docs: List[Doc]) -> List[Doc]:
        assert self.parallelism is not None
        normalize = self.normalize or (lambda word: word)
        copies = [
            Doc(
                self.parallelism.vocab,
                words=[normalize(t.text) for t in doc],
                spaces=[bool(t.whitespace_) for t in doc],
                # a multilingual head that reads the language learns it from here
                user_data={LANGUAGE_KEY: self.lang},
            )
            for doc in docs
        ]
        for doc, copy in zip(docs, self.parallelism.pipe(copies)):
            # token offsets are shared: the groups are copied with their ids and attrs
            # (strata, scores, the review list's sources)
            if PARALLELISM_KEY in copy.spans:
                _copy_group(copy, doc, PARALLELISM_KEY)
            else:
                set_parallelisms(doc, [])
            if PARALLELISM_CANDIDATES_KEY in copy.spans:
                _copy_group(copy, doc, PARALLELISM_CANDIDATES_KEY)
        return docs

    def analyze_text(
        self, text: str, name: str, batch_size: int = 16, max_chars: int = CHUNK_CHARS
    ) -> Document:
        """Analyse one text as one document, one Doc per chunk (see ``text_chunks``)."""
        chunks = list(text_chunks(text, max_chars))
        offsets = [0]
        for chunk in chunks[:-1]:
            offsets.append(offsets[-1] + len(chunk))
        docs = list(self.pipe(chunks, batch_size=batch_size))
        return Document(name, self.lang, docs, offsets)


def model_provenance(name: str, path: Path, source: str) -> Dict[str, str]:
    """What the report says about a model that was found: its name, its pipeline's
    package name and version (from its meta.json), where it was found, its licence and
    its directory.

    name (str): the model's name (see ``models.MODEL_SPECS``).
    path (Path): its pipeline directory.
    source (str): where it was found (one of ``models.SOURCES``).
    RETURNS (Dict[str, str]): a Note's "model", "package", "source", "licence", "path".
    """
    package = ""
    try:
        meta = srsly.read_json(Path(path) / "meta.json")
        package = f"{meta['lang']}_{meta['name']} {meta['version']}"
    except (OSError, ValueError, KeyError, TypeError):  # the load then says what is wrong
        pass
    return {
        "model": name,
        "package": package,
        "source": source,
        "licence": get_spec(name).licence,
        "path": str(path),
    }


def _quiet_jieba() -> None:
    """jieba (the Chinese base's segmenter) logs its dictionary loading at DEBUG to
    stderr on every load; keep it to warnings."""
    import logging

    try:
        import jieba  # sets its logger to DEBUG on import: set it after
    except ImportError:  # the base's own load then says what is missing
        return
    jieba.setLogLevel(logging.WARNING)


def _load(path: Path, **kwargs: Any) -> Language:
    return spacy.load(path, **kwargs)


def _load_chiasmus(path: Path) -> Tuple[Language, str]:
    """Load a chiasmus pipeline so that its scorer sees, inside a base pipeline, the
    vector features it was trained with.

    With ``vectors = "auto"`` a scorer trained in a pipeline without vectors (no static
    vectors, no tok2vec tensor) saw zero E features; inside a base pipeline with a
    tensor, "auto" would feed it cosines it never saw, so it is reloaded with "none".
    RETURNS (Tuple[Language, str]): the pipeline and a remark for the note ("" if none).
    """
    source = _load(path)
    setting = source.config["components"]["chiasmus_finder"]["model"].get("vectors")
    if setting not in ("auto", "tensor"):
        return source, ""
    has_static = source.vocab.vectors.shape[0] > 0 or source.vocab.vectors.mode == "floret"
    has_tensor = any(name in source.pipe_names for name in ("tok2vec", "transformer"))
    if setting == "auto" and not has_static and not has_tensor:
        overrides = {"components.chiasmus_finder.model.vectors": "none"}
        return _load(path, config=overrides), ""
    if not has_static:
        return source, " (its E features now read the base pipeline's tensor, not its own)"
    return source, ""


def build_analyzer(
    lang: str,
    models: Optional[Mapping[str, Path]] = None,
    index: Optional[Path] = None,
    threshold: Optional[float] = None,
    top_k: int = 10,
    packaged_reranker: bool = True,
    shipped_index: bool = False,
    skip: Iterable[str] = (),
) -> Analyzer:
    """Assemble the pipelines of a language from the models that are available.

    lang (str): one of LANGUAGES.
    models (Optional[Mapping[str, Path]]): explicit model paths (``--model NAME=PATH``).
    index (Optional[Path]): an intertext index; adds ``intertext_matcher``.
    threshold (Optional[float]): the intertext link threshold (None: the reranker's).
    top_k (int): intertext candidates per segment that may become links.
    packaged_reranker (bool): for an index without a reranker, the packaged one that fits.
    shipped_index (bool): without ``index``, link to the language's shipped source index
        (``intertext-<lang>``: Virgil for Latin, the King James Version for English)
        where it is installed.
    skip (Iterable[str]): components not to run (``--skip``): any of SKIPPABLE.
    RETURNS (Analyzer): the pipelines and the notes.
    RAISES AnalyzeError: unknown language or component; an explicit model or the index
        that fails to load.
    """
    check_language(lang)
    skip = set(skip)
    unknown = sorted(skip - set(SKIPPABLE))
    if unknown:
        raise AnalyzeError(
            f"--skip {', '.join(unknown)}: no such component; choose from {', '.join(SKIPPABLE)}"
        )
    if lang == "zh":
        _quiet_jieba()
    wanted = LANGUAGE_MODELS[lang]
    notes: List[Note] = []

    # per component: the provenance of its model (Note's model, package, source,
    # licence and path)
    origins: Dict[str, Dict[str, str]] = {}

    def locate(component: str, note_missing: bool = True) -> Optional[Path]:
        name = wanted.get(component)
        if name is None:
            return None
        found = resolve(name, models)
        if found is None:
            if note_missing:
                notes.append(
                    Note(lang, component, False, f"model {name} not built; {build_hint(name)}")
                )
            return None
        origins[component] = model_provenance(name, found.path, found.source)
        return found.path

    def load(component: str, path: Path, loader: Callable[[Path], Any]) -> Any:
        """Load a model; one that fails is an error if given explicitly, else skipped."""
        name = wanted[component]
        try:
            return loader(path)
        except Exception as err:  # a broken or incompatible model directory
            problem = f"model {name} at {path} cannot be loaded ({type(err).__name__}: {err})"
            if models and name in models:
                raise AnalyzeError(problem) from None
            source = origins[component]["source"]
            problem = problem.replace(f" at {path}", f" ({source})").replace(str(path), name)
            detail = f"{problem}; rebuild it: {build_hint(name)}"
            notes.append(Note(lang, component, False, detail, **origins[component]))
            return None

    base_path = locate("base")
    nlp = load("base", base_path, _load) if base_path is not None else None
    if nlp is not None:
        notes.append(
            Note(
                lang,
                "base",
                True,
                f"{wanted['base']} ({', '.join(nlp.pipe_names)})",
                **origins["base"],
            )
        )
    else:
        nlp = spacy.blank(lang)
        if "base" not in wanted:
            notes.append(
                Note(lang, "base", False, f"no base pipeline for {LANGUAGE_NAMES[lang]}: "
                     f"tokenizer only ({type(nlp.tokenizer).__name__})")
            )  # fmt: skip

    # chiasmus: a trained scorer sourced into the base pipeline (it reads POS and
    # lemmas), else the hand-weighted rules, which need no training
    chiasmus_path = None if "chiasmus" in skip else locate("chiasmus", note_missing=False)
    trained = None
    why = f"no trained scorer for {LANGUAGE_NAMES[lang]}"
    if chiasmus_path is not None and not _has_pos_and_lemmas(nlp):
        why = (
            f"{wanted['chiasmus']} needs POS and lemmas but the base pipeline has no tagger: "
            f"{build_hint(wanted['base'])}"
        )
    elif chiasmus_path is not None:
        trained = load("chiasmus", chiasmus_path, _load_chiasmus)
    elif "chiasmus" in wanted:
        why = f"model {wanted['chiasmus']} not built: {build_hint(wanted['chiasmus'])}"
    if trained is not None:
        source, remark = trained
        finder = nlp.add_pipe("chiasmus_finder", source=source)
        # a training config keeps every candidate (for evaluation); a reader gets the
        # chiasmi and a bounded review list
        if finder.cfg.get("review_per_1000") is None:
            finder.cfg["review_per_1000"] = DEFAULT_REVIEW_PER_1000
        detail = f"{wanted['chiasmus']}{remark}"
        notes.append(Note(lang, "chiasmus", True, detail, **origins["chiasmus"]))
    elif "chiasmus" in skip:
        notes.append(Note(lang, "chiasmus", False, SKIPPED.format("chiasmus")))
    elif lang in RULE_CHIASMUS:
        rules = nlp.add_pipe("chiasmus_finder")
        reads = "POS and lemmas" if _has_pos_and_lemmas(nlp) else "forms (no tagger)"
        if rules.cfg.get("units") in ("auto", "characters") and lang == "zh":
            reads = (
                "the characters of each word"
                + (" (with its POS)" if _has_pos(nlp) else "")
                + ", spans on the words"
            )
        calibrated = rules.model.attrs.get("calibrated_for")
        calibration = (
            f"calibrated for {LANGUAGE_NAMES.get(calibrated, calibrated)} on running text "
            f"(bias {rules.model.attrs['bias']:.2f}, spacy_rhetoric/data/chiasmus/calibration.json)"
            if calibrated
            else "Europarl settings"
        )
        weights = WEIGHTS_SOURCE.get(calibrated, HAND_SET)
        detail = (
            "chiasmus_finder with the rules (antimetaboles, Dubremetz & Nivre's features, "
            f"{weights}; no training needed; {calibration}) on {reads}; {why}"
        )
        notes.append(Note(lang, "chiasmus", True, detail))
    else:
        notes.append(Note(lang, "chiasmus", False, why))

    # figures: the rules and the package's scorer, after the base pipeline and chiasmus
    if "figures" in skip:
        notes.append(Note(lang, "figures", False, SKIPPED.format("figures")))
    else:
        notes.append(_add_figures(nlp, lang))

    # displacement: needs a parse
    if "displacement" in skip:
        notes.append(Note(lang, "displacement", False, SKIPPED.format("displacement")))
    elif "parser" in nlp.pipe_names or any(
        "token.dep" in (nlp.get_pipe_meta(name).assigns or []) for name in nlp.pipe_names
    ):
        nlp.add_pipe("displacement_analyzer")
        notes.append(
            Note(lang, "displacement", True, "edge displacement and MED from the base parser")
        )
    else:
        reason = (
            f"needs a dependency parser; {build_hint(wanted['base'])}"
            if "base" in wanted
            else f"no dependency parser for {LANGUAGE_NAMES[lang]}"
        )
        notes.append(Note(lang, "displacement", False, reason))

    # parallelism: a second pipeline over the base tokens
    parallelism = None
    if "parallelism" in skip:
        notes.append(Note(lang, "parallelism", False, SKIPPED.format("parallelism")))
    elif "parallelism" not in wanted:
        notes.append(
            Note(
                lang,
                "parallelism",
                False,
                f"no trained parallelism tagger for {LANGUAGE_NAMES[lang]}",
            )
        )
    else:
        parallelism_path = locate("parallelism")
        if parallelism_path is not None:
            parallelism = load("parallelism", parallelism_path, _load)
        if parallelism is not None:
            detail = wanted["parallelism"]
            if lang == "zh" and getattr(nlp.tokenizer, "segmenter", None) == "char":
                detail += (
                    " (tokens: spaCy's character segmentation; the model was trained on "
                    f"PSE-I's words: {build_hint(wanted['base'])})"
                )
            elif lang == "zh":
                detail += f" (tokens: {wanted['base']}'s words, as in PSE-I)"
            if get_spec(wanted["parallelism"]).lang == "xx":
                detail += " (zero-shot: trained on Latin and Chinese only)"
            precision = pipeline_precision(parallelism)
            if precision is not None:
                detail += f" (encoder in {precision})"
            notes.append(
                Note(
                    lang,
                    "parallelism",
                    True,
                    detail,
                    **origins["parallelism"],
                    calibration=parallelism_calibration(parallelism),
                )
            )

    if "intertext" in skip:
        notes.append(Note(lang, "intertext", False, SKIPPED.format("intertext")))
    elif index is not None:
        notes.append(_add_intertext(nlp, lang, Path(index), threshold, top_k, packaged_reranker))
    elif not shipped_index:
        notes.append(Note(lang, "intertext", False, "switched off (--no-index)"))
    elif "intertext" not in wanted:
        notes.append(
            Note(
                lang,
                "intertext",
                False,
                f"no shipped source index for {LANGUAGE_NAMES[lang]}: give one with --index "
                "(build it with `python -m spacy_rhetoric intertext index SOURCE -o INDEX`)",
            )
        )
    else:
        intertext_path = locate("intertext")
        if intertext_path is not None:
            # every intertext_matcher of the shipped pipeline, one per source (Latin:
            # Virgil, then the Vulgate), in its order, into one span group
            names = _intertext_matchers(intertext_path)
            stored = [intertext_path / name / STORED_INDEX for name in names]
            if not all((path / META_FILE).is_file() for path in stored):
                problem = f"model {wanted['intertext']} holds no index"
                detail = f"{problem}; {build_hint(wanted['intertext'])}"
                notes.append(Note(lang, "intertext", False, detail, **origins["intertext"]))
            else:
                label = f"shipped index {wanted['intertext']}"
                details = []
                try:
                    for i, (name, path) in enumerate(zip(names, stored)):
                        note = _add_intertext(
                            nlp, lang, path, threshold, top_k, packaged_reranker,
                            label=label if len(names) == 1 else f"{label}, {_source_name(path)}",
                            saved_with=intertext_path / name, provenance=origins["intertext"],
                            name=name, overwrite=i == 0,
                        )  # fmt: skip
                        details.append(note.detail)
                    if len(details) > 1:  # one note for the component, each source said
                        note = Note(lang, "intertext", True, "; then ".join(details),
                                    **origins["intertext"])  # fmt: skip
                except AnalyzeError as err:  # a broken installation: skipped, said why
                    for name in names:
                        if nlp.has_pipe(name):
                            nlp.remove_pipe(name)
                    hint = build_hint(wanted["intertext"])
                    problem = str(err).replace(str(intertext_path), wanted["intertext"])
                    note = Note(
                        lang, "intertext", False, f"{problem}; reinstall it, or {hint}",
                        **origins["intertext"],
                    )  # fmt: skip
                notes.append(note)
    normalize = PARALLELISM_NORMALIZERS.get(lang)
    return Analyzer(lang, nlp, parallelism, notes, normalize)


def _assigns(nlp: Language) -> set:
    """RETURNS (set): what the pipeline's components declare that they assign."""
    assigns: set = set()
    for name in nlp.pipe_names:
        assigns.update(nlp.get_pipe_meta(name).assigns or [])
    return assigns


def _has_pos(nlp: Language) -> bool:
    """Whether the pipeline sets POS (declared, or an attribute_ruler)."""
    factories = {nlp.get_pipe_meta(name).factory for name in nlp.pipe_names}
    return "attribute_ruler" in factories or "token.pos" in _assigns(nlp)


def _add_figures(nlp: Language, lang: str) -> Note:
    """Add ``figure_finder`` (its rules and the package's scorer need no model) and say
    which scorer ranks (the package's, calibrated per language, or the hand-weighted
    rule prior where no scorer ships), which figures the calibration leaves to the
    review list (a threshold above 1), and what the finder reads."""
    finder = nlp.add_pipe("figure_finder")
    scorer = finder.scorer_model
    remarks = []
    if scorer.source != "prior" and not _has_pos(nlp):
        # the packaged scorer was fitted on tagged text: untagged docs get the prior
        scorer = getattr(finder, "untagged_model", scorer)
        if scorer.source == "prior":
            remarks.append("the calibrated scorer needs the base pipeline's POS")
    version = ".".join(__version__.split(".")[:2])
    if scorer.source == "prior":
        ranked = "rules + the hand-weighted rule prior"
        if finder.scorer_model.source == "prior":
            remarks.append("no fitted scorer in this install")
    else:
        ranked = "rules + scorer calibrated per language"
    if scorer.source != "prior" and not any(
        lang in spec.get("languages", {}) for spec in scorer.figures.values()
    ):
        remarks.append(f"not calibrated for {LANGUAGE_NAMES[lang]}")
    figures = [f for f in finder.cfg["figures"] if lang not in NOT_FOR.get(f, ())]
    review_only = [f for f in figures if scorer.threshold(f, lang) > 1.0]
    if review_only:
        remarks.append(f"left to the review list by a threshold above 1: {', '.join(review_only)}")
    assigns = _assigns(nlp)
    reads = [
        what
        for what, found in (
            ("POS", _has_pos(nlp)),
            ("lemmas", _has_pos_and_lemmas(nlp) or "token.lemma" in assigns),
            ("the parse", "token.dep" in assigns),
        )
        if found
    ]
    if reads:
        remarks.append(f"on {', '.join(reads[:-1])}{' and ' if len(reads) > 1 else ''}{reads[-1]}")
    else:
        remarks.append("on word forms only: reduced features")
    detail = f"figure_finder, {ranked}, spacy_rhetoric {version} ({'; '.join(remarks)})"
    return Note(
        lang, "figures", True, detail, package=f"spacy_rhetoric {__version__}",
        source="package", licence=f"{PACKAGE_LICENCE} (the package's code)",
    )  # fmt: skip


def _has_pos_and_lemmas(nlp: Language) -> bool:
    """Whether the pipeline sets POS and lemmas (declared by its components, or an
    attribute_ruler, whose patterns may set both)."""
    assigns = set()
    for name in nlp.pipe_names:
        meta = nlp.get_pipe_meta(name)
        if meta.factory == "attribute_ruler":
            return True
        assigns.update(meta.assigns or [])
    return "token.pos" in assigns and "token.lemma" in assigns


def _intertext_matchers(pipeline: Path) -> List[str]:
    """RETURNS (List[str]): the names of a saved pipeline's ``intertext_matcher``
    components, in its order (its config lists none or cannot be read: the default
    name, whose folder then says what is missing)."""
    try:
        config = spacy.util.load_config(pipeline / "config.cfg")
    except (OSError, ValueError):
        return ["intertext_matcher"]
    components = config.get("components", {})
    names = [
        name
        for name in config.get("nlp", {}).get("pipeline", [])
        if components.get(name, {}).get("factory") == "intertext_matcher"
    ]
    return names or ["intertext_matcher"]


def _source_name(index: Path) -> str:
    """A shipped index's source in a few words, from its first segment's id: "the
    Vulgate" for verses labelled "... (Vulgate)", else the author the id begins with
    ("verg.")."""
    from ..intertext.bible import VULGATE_SUFFIX

    try:
        with (index / "segments.jsonl").open(encoding="utf8") as lines:
            first = srsly.json_loads(lines.readline())["id"]
    except (OSError, ValueError, KeyError, TypeError):
        return index.parent.name
    if first.endswith(VULGATE_SUFFIX):
        return f"the {VULGATE_SUFFIX.strip(' ()')}"
    return first.split()[0] if first.split() else index.parent.name


def _add_intertext(
    nlp: Language,
    lang: str,
    index: Path,
    threshold: Optional[float] = None,
    top_k: int = 10,
    packaged: bool = True,
    label: Optional[str] = None,
    saved_with: Optional[Path] = None,
    provenance: Optional[Dict[str, str]] = None,
    name: str = "intertext_matcher",
    overwrite: bool = True,
) -> Note:
    """Add ``intertext_matcher`` with an index (opened now, so that a bad index fails
    here with a clear message rather than on the first document), behind a rule-based
    ``sentencizer`` where nothing else splits sentences, so that the queries are
    sentences. Without a reranker in the index and without ``threshold`` the index's
    default threshold applies (``intertext.null``): the note says so, loudly. ``label``
    names the index in the note (default: its directory's name; the path is the note's
    ``path``). ``saved_with``: the directory of a saved ``intertext_matcher`` (a shipped
    pipeline's) whose reranker links, not the index's own or the packaged one.
    ``provenance``: the note's model, package, source, licence and path (default: the
    index given with --index). ``name``, ``overwrite``: the component's name and whether
    it replaces the span group (False: a further source of the same pipeline adds to
    it)."""
    from ..intertext.null import NULL_KEY
    from ..intertext.rerank import RERANKER_FILE, load_reranker

    if not index.exists():
        raise AnalyzeError(
            f"Intertext index not found: {index} (build one with "
            "`python -m spacy_rhetoric intertext index ...`)"
        )
    if top_k < 1:
        raise AnalyzeError(f"--top-k must be at least 1, got {top_k}")
    if not any(nlp.has_pipe(name) for name in ("parser", "senter", "sentencizer")):
        nlp.add_pipe("sentencizer")
    config = {"index_path": str(index), "k": top_k, "threshold": threshold,
              "packaged_reranker": packaged, "overwrite": overwrite}  # fmt: skip
    if saved_with is not None and (saved_with / "cfg").is_file():  # as the pipeline saved it
        saved_cfg = srsly.read_json(saved_with / "cfg")
        for key in ("precision", "allusion_threshold"):
            if saved_cfg.get(key) is not None:
                config[key] = saved_cfg[key]
        config["units"] = saved_cfg.get("units", False)  # saved before units: sentences
    matcher = nlp.add_pipe("intertext_matcher", name=name, config=config)
    try:
        saved = load_reranker(saved_with) if saved_with is not None else None
        if saved is not None:
            matcher.set_reranker(saved)
        size = len(matcher.index)
        used, allusions = matcher.thresholds(matcher.reranker)
    except (OSError, ValueError, KeyError) as err:
        raise AnalyzeError(f"intertext_matcher cannot open the index {index}: {err}") from None
    splitter = "parser" if nlp.has_pipe("parser") else "senter"
    if nlp.has_pipe("sentencizer"):
        splitter = "rule-based sentencizer"
    label = label or f"index {index.name}"
    origin = provenance or {"source": "option", "path": str(index)}
    queries = "sentences and their units" if matcher.cfg["units"] else "sentences"
    detail = f"intertext_matcher, {label} ({size} source segments; queries: {queries} "
    detail += f"({splitter})"
    if allusions is not None and used is not None and allusions != used:
        allusion_note = f" (allusions >= {allusions:.3f})"
    else:
        allusion_note = ""
    train = "train a reranker with `python -m spacy_rhetoric intertext train LABELS --index INDEX`"
    if saved is not None:
        detail += (
            f"; reranker saved with the pipeline ({saved.origin}), links with probability "
            f">= {used:.3f}{allusion_note} among the top {top_k})"
        )
        return Note(lang, "intertext", True, detail, **origin)
    own = (index / RERANKER_FILE).is_file()
    if matcher.reranker is not None and own:
        detail += (
            f"; reranker, links with probability >= {used:.3f}{allusion_note} among the "
            f"top {top_k})"
        )
        return Note(lang, "intertext", True, detail, **origin)
    if matcher.reranker is not None:
        detail += (
            f"; the index has no reranker of its own: the packaged Loci Similes reranker "
            f"({matcher.reranker.origin}), links with probability >= {used:.3f} among the "
            f"top {top_k}; for other sources or query texts, {train})"
        )
        return Note(lang, "intertext", True, detail, **origin)
    score = "cosine similarity" if matcher.index.has_dense else "lexical score"
    if threshold is not None:
        detail += f"; no reranker: candidates among the top {top_k} with {score} >= {threshold})"
    elif used is None:
        detail += (
            f"). WARNING: the index has no reranker and is too small to estimate a default "
            f"threshold, so each of the top {top_k} candidates of every sentence is reported "
            f"as a link; {train} or pass --threshold ({score})"
        )
    else:
        share = 100 * (1 - matcher.index.cfg[NULL_KEY]["quantile"])
        detail += (
            f"). WARNING: the index has no reranker; links are the top {top_k} candidates "
            f"with {score} >= {used:.3f}, the index's default threshold (a similarity that "
            f"about {share:.0f} % of its source segments reach with unrelated sources): expect "
            f"missed allusions and some chance links; {train}, or pass --threshold"
        )
    return Note(lang, "intertext", True, detail, **origin)


def chiasmus_pipeline(lang: Optional[str] = None, model: Optional[Path] = None) -> Language:
    """The pipeline ``chiasmus find`` runs: a trained chiasmus pipeline that tags its own
    text as it is; one that holds only the finder (as ``models build`` installs it),
    chained behind the base pipeline of its language as ``analyze`` does; with only a
    language, that language's base pipeline with its chiasmus model or the rules.

    lang (Optional[str]): the language (default: the model's).
    model (Optional[Path]): a pipeline directory with a chiasmus_finder.
    RETURNS (Language): a pipeline that ends in a chiasmus_finder.
    RAISES AnalyzeError: no language and no model, a model that is no pipeline or has no
        chiasmus_finder.
    """
    if model is None:
        if lang is None:
            raise AnalyzeError("Give --lang (la, de, en, zh) or --model (a chiasmus pipeline).")
        return build_analyzer(check_language(lang), skip=("figures",)).nlp
    model = Path(model)
    if not (model / "config.cfg").is_file() or not (model / "meta.json").is_file():
        raise AnalyzeError(f"{model} is not a spaCy pipeline (config.cfg and meta.json missing).")
    try:
        nlp = spacy.load(model)
    except Exception as err:  # an incompatible or broken pipeline directory
        raise AnalyzeError(f"{model} cannot be loaded ({type(err).__name__}: {err})") from None
    if "chiasmus_finder" not in nlp.pipe_names:
        raise AnalyzeError(f"{model} has no chiasmus_finder (its components: {nlp.pipe_names}).")
    if lang is not None and lang != nlp.lang:
        raise AnalyzeError(f"{model} is a '{nlp.lang}' pipeline, not '{lang}'.")
    finder = nlp.get_pipe("chiasmus_finder")
    needs_pos = finder.model.attrs.get("needs_pos", True)
    if not needs_pos or _has_pos_and_lemmas(nlp) or nlp.lang not in LANGUAGE_MODELS:
        return nlp
    analyzer = build_analyzer(
        check_language(nlp.lang), {f"chiasmus-{nlp.lang}": model}, skip=("figures",)
    )
    if "chiasmus_finder" not in analyzer.nlp.pipe_names or not _has_pos_and_lemmas(analyzer.nlp):
        base = LANGUAGE_MODELS[nlp.lang].get("base", f"base-{nlp.lang}")
        raise AnalyzeError(
            f"{model} holds only a chiasmus_finder, which needs POS and lemmas, and the base "
            f"pipeline {base} is not available: {build_hint(base)}."
        )
    return analyzer.nlp
