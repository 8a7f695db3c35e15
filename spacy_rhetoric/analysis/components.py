"""The components ``analyze`` adds to a base pipeline that need no model of their own
to be built: ``figure_finder`` (its rules and the package's scorer) and
``intertext_matcher`` (over a given index or the language's shipped one), each with
the :class:`Note` that says what runs, on what, and under which licence.
"""

from pathlib import Path
from typing import (
    Dict,
    List,
    Optional,
)

import spacy
import srsly
from spacy.language import Language

from ..about import __version__
from ..figures.component import NOT_FOR
from .findings import Note
from .languages import LANGUAGE_NAMES, AnalyzeError

PACKAGE_LICENCE = "MIT"  # setup.cfg's licence: the components that need no model


def _assigns(nlp: Language) -> set:
    """RETURNS (set): what the pipeline's components declare that they assign."""
    assigns: set = set()
    for name in nlp.pipe_names:
        assigns.update(nlp.get_pipe_meta(name).assigns or [])
    return assigns


def has_pos(nlp: Language) -> bool:
    """Whether the pipeline sets POS (declared, or an attribute_ruler)."""
    factories = {nlp.get_pipe_meta(name).factory for name in nlp.pipe_names}
    return "attribute_ruler" in factories or "token.pos" in _assigns(nlp)


def add_figures(nlp: Language, lang: str) -> Note:
    """Add ``figure_finder`` (its rules and the package's scorer need no model) and say
    which scorer ranks (the package's, calibrated per language, or the hand-weighted
    rule prior where no scorer ships), which figures the calibration leaves to the
    review list (a threshold above 1), and what the finder reads."""
    finder = nlp.add_pipe("figure_finder")
    scorer = finder.scorer_model
    remarks = []
    if scorer.source != "prior" and not has_pos(nlp):
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
            ("POS", has_pos(nlp)),
            ("lemmas", has_pos_and_lemmas(nlp) or "token.lemma" in assigns),
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


def has_pos_and_lemmas(nlp: Language) -> bool:
    """Whether the pipeline sets POS and lemmas (declared by its components, or an
    attribute_ruler, whose patterns may set both)."""
    assigns = set()
    for name in nlp.pipe_names:
        meta = nlp.get_pipe_meta(name)
        if meta.factory == "attribute_ruler":
            return True
        assigns.update(meta.assigns or [])
    return "token.pos" in assigns and "token.lemma" in assigns


def intertext_matchers(pipeline: Path) -> List[str]:
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


def source_name(index: Path) -> str:
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


def add_intertext(
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
