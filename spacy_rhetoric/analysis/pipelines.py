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
What each language can use is in ``languages``; the components added without a model
of their own (``figure_finder``, ``intertext_matcher``) in ``components``.
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

from ..chiasmus.calibration import HAND_SET, WEIGHTS_SOURCE
from ..chiasmus.component import DEFAULT_REVIEW_PER_1000
from ..corpora.parallelisms import DEFAULT_SPANS_KEY as PARALLELISM_KEY
from ..corpora.parallelisms import set_parallelisms
from ..corpora.util import LANGUAGE_KEY
from ..encoders.vectors import pipeline_precision
from ..intertext.component import STORED_INDEX
from ..intertext.index import META_FILE
from ..models import build_hint, get_spec, resolve
from ..parallelism.component import DEFAULT_CANDIDATES_KEY as PARALLELISM_CANDIDATES_KEY
from ..textio import CHUNK_CHARS, text_chunks
from .components import (
    add_figures,
    add_intertext,
    has_pos,
    has_pos_and_lemmas,
    intertext_matchers,
    source_name,
)
from .findings import Document, Note
from .languages import (
    LANGUAGE_MODELS,
    LANGUAGE_NAMES,
    PARALLELISM_NORMALIZERS,
    RULE_CHIASMUS,
    SKIPPABLE,
    SKIPPED,
    AnalyzeError,
    check_language,
)


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
    if chiasmus_path is not None and not has_pos_and_lemmas(nlp):
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
        reads = "POS and lemmas" if has_pos_and_lemmas(nlp) else "forms (no tagger)"
        if rules.cfg.get("units") in ("auto", "characters") and lang == "zh":
            reads = (
                "the characters of each word"
                + (" (with its POS)" if has_pos(nlp) else "")
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
        notes.append(add_figures(nlp, lang))

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
        notes.append(add_intertext(nlp, lang, Path(index), threshold, top_k, packaged_reranker))
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
            names = intertext_matchers(intertext_path)
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
                        note = add_intertext(
                            nlp, lang, path, threshold, top_k, packaged_reranker,
                            label=label if len(names) == 1 else f"{label}, {source_name(path)}",
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
    if not needs_pos or has_pos_and_lemmas(nlp) or nlp.lang not in LANGUAGE_MODELS:
        return nlp
    analyzer = build_analyzer(
        check_language(nlp.lang), {f"chiasmus-{nlp.lang}": model}, skip=("figures",)
    )
    if "chiasmus_finder" not in analyzer.nlp.pipe_names or not has_pos_and_lemmas(analyzer.nlp):
        base = LANGUAGE_MODELS[nlp.lang].get("base", f"base-{nlp.lang}")
        raise AnalyzeError(
            f"{model} holds only a chiasmus_finder, which needs POS and lemmas, and the base "
            f"pipeline {base} is not available: {build_hint(base)}."
        )
    return analyzer.nlp
