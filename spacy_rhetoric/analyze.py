"""The main job: run every component that applies to a language over texts and collect
what they found (parallelisms, chiasmi, displacement/MED, intertext links).

One :class:`Analyzer` per language holds

- the base pipeline (``base-<lang>``: tagger, morphologizer, lemmatizer, parser; for
  Chinese, or when the base model is missing, a blank tokenizer-only pipeline),
  extended with ``chiasmus_finder`` (sourced from ``chiasmus-<lang>``),
  ``displacement_analyzer`` (if the base has a parser) and ``intertext_matcher`` (if an
  index is given);
- the parallelism pipeline (``parallelism-<lang>``), run as a second pipeline over the
  base tokens: it was trained on the datasets' own tokens and orthography (ASP: lower
  case, u for v, i for j), so each base doc is copied into its vocab with its words
  normalised the same way, and the branches it finds are copied back by token offsets.

Components that cannot run are skipped with a :class:`Note` saying why and how to
enable them; notes appear in the terminal, in the HTML report and in the JSON.
"""

import time
from collections import deque
from dataclasses import asdict, dataclass, field
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
    Sequence,
    Tuple,
)

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from .models import build_hint, resolve
from .parallelism.spans import get_parallelisms, set_parallelisms
from .textio import InputError, read_text
from .vectors import normalize_latin

LANGUAGES = ("la", "de", "en", "zh")
LANGUAGE_NAMES = {"la": "Latin", "de": "German", "en": "English", "zh": "Chinese"}
COMPONENTS = ("base", "parallelism", "chiasmus", "displacement", "intertext")
# The trained models each language can use, by component.
LANGUAGE_MODELS: Dict[str, Dict[str, str]] = {
    "la": {"base": "base-la", "parallelism": "parallelism-la"},
    "de": {"base": "base-de", "chiasmus": "chiasmus-de"},
    "en": {"base": "base-en", "chiasmus": "chiasmus-en"},
    "zh": {"parallelism": "parallelism-zh"},
}
# How base tokens are spelled for the parallelism model (its training orthography).
PARALLELISM_NORMALIZERS: Dict[str, Callable[[str], str]] = {"la": normalize_latin}
CHUNK_CHARS = 5000
DEFAULT_MAX_DISPLACEMENT = 10  # the report's histogram: [-10, 10], longer edges clipped


class AnalyzeError(ValueError):
    """Bad arguments to ``analyze`` (unknown language, unusable model or index)."""


@dataclass
class Note:
    """What happened to one component for one language.

    lang (str): the language.
    component (str): one of COMPONENTS.
    ran (bool): whether it ran.
    detail (str): the model used, or why it did not run and how to enable it.
    """

    lang: str
    component: str
    ran: bool
    detail: str

    def __str__(self) -> str:
        status = "ran" if self.ran else "not run"
        return f"[{self.lang}] {self.component}: {status} — {self.detail}"


@dataclass
class Document:
    """One analysed input: its chunks (one Doc per paragraph block) and metadata.

    name (str): how the report calls it (the file name).
    lang (str): its language.
    docs (List[Doc]): the analysed chunks, in order.
    offsets (List[int]): the character offset of each chunk in the input text.
    caption (str): an optional note shown under the heading (e.g. the source).
    summary (Optional[Dict[str, Any]]): set by ``summarize``, which releases the docs:
        the statistics, findings, displacement counts and (optionally) the rendering.
    """

    name: str
    lang: str
    docs: List[Doc]
    offsets: List[int] = field(default_factory=list)
    caption: str = ""
    summary: Optional[Dict[str, Any]] = None

    @property
    def n_tokens(self) -> int:
        if self.summary is not None:
            return self.summary["stats"]["tokens"]
        return sum(len(doc) for doc in self.docs)

    @property
    def rendered(self) -> bool:
        """Whether the report can show this document's displaCy renderings."""
        return self.summary is None or self.summary["html"] is not None

    def summarize(self, render: bool = True) -> "Document":
        """Keep only what the report and the JSON need (statistics, findings, the
        displacement counts and, if ``render``, the HTML of the renderings) and release
        the docs, so that a corpus of many files is held in bounded memory.

        render (bool): keep the displaCy renderings of this document.
        RETURNS (Document): this document, summarised.
        """
        if self.summary is not None:
            return self
        from .report_sections import document_section

        self.summary = {
            "stats": document_stats(self),
            "findings": document_findings(self),
            "histogram": _histogram_counts(self.docs),
            "html": document_section(self) if render else None,
        }
        self.docs = []
        return self


@dataclass
class Analysis:
    """The documents analysed and the notes of every language involved."""

    documents: List[Document] = field(default_factory=list)
    notes: List[Note] = field(default_factory=list)
    seconds: float = 0.0
    skipped: List[Dict[str, str]] = field(default_factory=list)  # {"path", "reason"}

    def extend(self, other: "Analysis") -> None:
        self.documents.extend(other.documents)
        self.notes.extend(n for n in other.notes if n not in self.notes)
        self.seconds += other.seconds
        self.skipped.extend(other.skipped)


def check_language(lang: str) -> str:
    """RETURNS (str): ``lang`` if analyze supports it. RAISES AnalyzeError otherwise."""
    if lang not in LANGUAGES:
        names = ", ".join(f"{code} ({LANGUAGE_NAMES[code]})" for code in LANGUAGES)
        raise AnalyzeError(f"Unknown language '{lang}': analyze supports {names}.")
    return lang


def text_chunks(text: str, max_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """Split a text into its paragraphs (at blank lines), a paragraph longer than
    ``max_chars`` at line ends (or spaces), keeping every character. Each chunk is
    analysed as one Doc: no figure is looked for across a paragraph break, and long
    files are analysed in bounded pieces.

    text (str): the text.
    max_chars (int): the longest chunk wanted.
    YIELDS (str): chunks that concatenate to the text.
    """
    from .textio import text_chunks as paragraphs

    chunk = ""
    for piece in paragraphs(text, max_chars):
        if chunk and not piece.strip():  # runs of blank lines stay with their paragraph
            chunk += piece
            continue
        if chunk:
            yield chunk
        chunk = piece
    if chunk:
        yield chunk


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
            )
            for doc in docs
        ]
        for doc, copy in zip(docs, self.parallelism.pipe(copies)):
            set_parallelisms(
                doc,
                [
                    (p.offsets, p.label, p.stratum)
                    for p in get_parallelisms(copy)  # token offsets are shared
                ],
            )
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


def _load(path: Path, **kwargs: Any) -> Language:
    import spacy_rhetoric  # noqa: F401  (registers our factories)

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
) -> Analyzer:
    """Assemble the pipelines of a language from the models that are available.

    lang (str): one of LANGUAGES.
    models (Optional[Mapping[str, Path]]): explicit model paths (``--model NAME=PATH``).
    index (Optional[Path]): an intertext index; adds ``intertext_matcher``.
    RETURNS (Analyzer): the pipelines and the notes.
    RAISES AnalyzeError: unknown language; an explicit model or the index that fails to load.
    """
    check_language(lang)
    wanted = LANGUAGE_MODELS[lang]
    notes: List[Note] = []

    def locate(component: str) -> Optional[Path]:
        name = wanted.get(component)
        if name is None:
            return None
        found = resolve(name, models)
        if found is None:
            notes.append(
                Note(lang, component, False, f"model {name} not built; run `{build_hint(name)}`")
            )
            return None
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
            notes.append(Note(lang, component, False, f"{problem}; rebuild it: {build_hint(name)}"))
            return None

    base_path = locate("base")
    nlp = load("base", base_path, _load) if base_path is not None else None
    if nlp is not None:
        notes.append(
            Note(
                lang,
                "base",
                True,
                f"{wanted['base']} ({', '.join(nlp.pipe_names)}) from {base_path}",
            )
        )
    else:
        nlp = spacy.blank(lang)
        if "base" not in wanted:
            notes.append(
                Note(lang, "base", False, f"no base pipeline for {LANGUAGE_NAMES[lang]}: "
                     f"tokenizer only ({type(nlp.tokenizer).__name__})")
            )  # fmt: skip

    # chiasmus: sourced into the base pipeline (it reads POS and lemmas)
    if "chiasmus" not in wanted:
        notes.append(
            Note(lang, "chiasmus", False, f"no trained chiasmus scorer for {LANGUAGE_NAMES[lang]}")
        )
    else:
        chiasmus_path = locate("chiasmus")
        if chiasmus_path is not None:
            if not _has_pos_and_lemmas(nlp):
                detail = (
                    "chiasmus_finder needs POS and lemmas but the base pipeline has no "
                    f"tagger; run `{build_hint(wanted['base'])}`"
                )
                notes.append(Note(lang, "chiasmus", False, detail))
            else:
                loaded = load("chiasmus", chiasmus_path, _load_chiasmus)
                if loaded is not None:
                    source, remark = loaded
                    nlp.add_pipe("chiasmus_finder", source=source)
                    detail = f"{wanted['chiasmus']} from {chiasmus_path}{remark}"
                    notes.append(Note(lang, "chiasmus", True, detail))

    # displacement: needs a parse
    if "parser" in nlp.pipe_names or any(
        "token.dep" in (nlp.get_pipe_meta(name).assigns or []) for name in nlp.pipe_names
    ):
        nlp.add_pipe("displacement_analyzer")
        notes.append(
            Note(lang, "displacement", True, "edge displacement and MED from the base parser")
        )
    else:
        reason = (
            f"needs a dependency parser; run `{build_hint(wanted['base'])}`"
            if "base" in wanted
            else f"no dependency parser for {LANGUAGE_NAMES[lang]}"
        )
        notes.append(Note(lang, "displacement", False, reason))

    # parallelism: a second pipeline over the base tokens
    parallelism = None
    if "parallelism" not in wanted:
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
            detail = f"{wanted['parallelism']} from {parallelism_path}"
            if lang == "zh":
                detail += (
                    " (tokens: spaCy's character segmentation; the model was trained on "
                    "PSE-I's words)"
                )
            notes.append(Note(lang, "parallelism", True, detail))

    if index is not None:
        notes.append(_add_intertext(nlp, lang, Path(index)))
    else:
        notes.append(Note(lang, "intertext", False, "no --index given"))
    normalize = PARALLELISM_NORMALIZERS.get(lang)
    return Analyzer(lang, nlp, parallelism, notes, normalize)


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


def _add_intertext(nlp: Language, lang: str, index: Path) -> Note:
    """Add ``intertext_matcher`` with an index (opened now, so that a bad index fails
    here with a clear message rather than on the first document)."""
    import importlib.util

    if importlib.util.find_spec(f"{__package__}.intertext.component") is None:
        return Note(lang, "intertext", False, "intertext_matcher is not part of this version")
    importlib.import_module(f"{__package__}.intertext.component")
    if not index.exists():
        raise AnalyzeError(
            f"Intertext index not found: {index} (build one with "
            "`python -m spacy_rhetoric intertext index ...`)"
        )
    matcher = nlp.add_pipe("intertext_matcher", config={"index_path": str(index)})
    try:
        size = len(matcher.index)
    except (OSError, ValueError, KeyError) as err:
        raise AnalyzeError(f"intertext_matcher cannot open the index {index}: {err}") from None
    splits = any(nlp.has_pipe(name) for name in ("parser", "senter", "sentencizer"))
    segment = "sentences" if splits else "whole chunks"
    return Note(
        lang,
        "intertext",
        True,
        f"intertext_matcher, index {index} ({size} source segments; queries: {segment})",
    )


def iter_documents(
    analyzer: Analyzer,
    files: Iterable[Path],
    encoding: str = "utf-8",
    batch_size: int = 16,
    skip: Optional[Callable[[Path, str], None]] = None,
    max_chars: int = CHUNK_CHARS,
) -> Iterator[Document]:
    """Analyse files lazily, each one document: a file is read when the pipeline needs
    its text, and the chunks of consecutive files share the batches of ``nlp.pipe``.
    Only about ``batch_size`` docs are alive besides the document just yielded.

    analyzer (Analyzer): the language's pipelines.
    files (Iterable[Path]): the files (see textio.collect_files).
    encoding (str): their encoding.
    batch_size (int): docs (chunks) per batch of nlp.pipe.
    skip (Optional[Callable[[Path, str], None]]): called with (path, reason) for a file
        that cannot be read or decoded, which is then left out; None: raise.
    max_chars (int): the longest chunk (see ``text_chunks``).
    YIELDS (Document): the documents, in the order of the files.
    RAISES InputError: a file that cannot be read or decoded (without ``skip``).
    """
    pending: deque = deque()  # (name, offsets) of the files whose chunks were queued

    def chunks() -> Iterator[str]:
        for path in files:
            try:
                text = read_text(Path(path), encoding)
            except InputError as err:
                if skip is None:
                    raise
                skip(Path(path), str(err))
                continue
            pieces = list(text_chunks(text, max_chars))
            offsets = [0]
            for piece in pieces[:-1]:
                offsets.append(offsets[-1] + len(piece))
            pending.append((Path(path).name, offsets[: len(pieces)]))
            del text
            yield from pieces

    current: List[Doc] = []
    for doc in analyzer.pipe(chunks(), batch_size=batch_size):
        while not pending[0][1]:  # files without chunks (empty) before this doc's file
            name, _ = pending.popleft()
            yield Document(name, analyzer.lang, [], [])
        current.append(doc)
        if len(current) == len(pending[0][1]):
            name, offsets = pending.popleft()
            yield Document(name, analyzer.lang, current, offsets)
            current = []
    while pending:  # only files without chunks remain
        name, offsets = pending.popleft()
        yield Document(name, analyzer.lang, [], offsets)


def analyze_files(
    analyzer: Analyzer,
    files: Sequence[Path],
    encoding: str = "utf-8",
    batch_size: int = 16,
    progress: bool = False,
    max_rendered: Optional[int] = 50,
) -> Analysis:
    """Analyse files (each one document) in bounded memory: the documents are streamed
    through ``nlp.pipe`` (see ``iter_documents``) and each is summarised (see
    ``Document.summarize``) as soon as it is done, so no Doc is kept.

    A file that cannot be read or decoded is left out and listed in ``Analysis.skipped``
    (with the reason and the fix); if no file can be read, that is an error.

    analyzer (Analyzer): the language's pipelines.
    files (Sequence[Path]): the files (see textio.collect_files).
    encoding (str): their encoding.
    batch_size (int): docs per batch.
    progress (bool): show a progress bar (on stderr).
    max_rendered (Optional[int]): keep the displaCy renderings of the first this many
        documents only (None: all).
    RETURNS (Analysis): the summarised documents, the skipped files and the notes.
    RAISES InputError: none of the files can be read or decoded.
    """
    files = list(files)
    skipped: List[Dict[str, str]] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(files), unit="file", desc="analyze")

    def skip(path: Path, reason: str) -> None:
        skipped.append({"path": str(path), "reason": reason})
        if bar is not None:
            bar.update(1)

    start = time.perf_counter()
    documents: List[Document] = []
    n_rendered = 0
    for document in iter_documents(analyzer, files, encoding, batch_size, skip):
        render = max_rendered is None or n_rendered < max_rendered
        documents.append(document.summarize(render=render))
        n_rendered += render
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if skipped and not documents:
        if len(skipped) == 1:
            raise InputError(skipped[0]["reason"])
        raise InputError(
            f"None of the {len(skipped)} files can be read; the first: {skipped[0]['reason']}"
        )
    return Analysis(documents, list(analyzer.notes), time.perf_counter() - start, skipped)


# --- findings and statistics -------------------------------------------------------------


def document_findings(document: Document) -> List[Dict[str, Any]]:
    """The findings of one document, as plain data: kind, id, label, text, score,
    character offsets in the input, and the parts (branches / supporting words)."""
    if document.summary is not None:
        return document.summary["findings"]
    findings: List[Dict[str, Any]] = []
    n_par = n_chi = n_int = 0
    for doc, base in zip(document.docs, document.offsets or [0] * len(document.docs)):
        for parallelism in get_parallelisms(doc):
            n_par += 1
            first, last = parallelism.branches[0], parallelism.branches[-1]
            findings.append(
                {
                    "kind": "parallelism",
                    "doc": document.name,
                    "id": f"P{n_par}",
                    "label": parallelism.label,
                    "text": " | ".join(branch.text for branch in parallelism.branches),
                    "score": None,
                    "start_char": base + first.start_char,
                    "end_char": base + last.end_char,
                    "parts": [branch.text for branch in parallelism.branches],
                    "stratum": parallelism.stratum,
                }
            )
        if "chiasmus" in doc.spans:
            for span in doc.spans["chiasmus"]:
                n_chi += 1
                score = span._.chiasmus_score
                findings.append(
                    {
                        "kind": "chiasmus",
                        "doc": document.name,
                        "id": f"C{n_chi}",
                        "label": span.label_,
                        "text": span.text,
                        "score": float(score) if score is not None else None,
                        "start_char": base + span.start_char,
                        "end_char": base + span.end_char,
                        "parts": [f"{w.label_}: {w.text}" for w in span._.chiasmus_support],
                    }
                )
        if "intertext" in doc.spans:
            for span in doc.spans["intertext"]:
                n_int += 1
                dense = any(link.get("similarity") for link in span._.intertext_links or [])
                findings.append(_intertext_finding(document.name, f"I{n_int}", span, base, dense))
    return findings


def _intertext_finding(name: str, ident: str, span: Any, base: int, dense: bool) -> Dict[str, Any]:
    """An intertext link: the query span and its best sources. Score: the reranker's
    probability; without a reranker the cosine similarity (dense index) or the lexical
    shared-rarity score (lexical-only index)."""
    links = span._.intertext_links or []
    score = None
    if links:
        best = links[0]
        keys = ("probability", "similarity") if dense else ("probability", "lexical")
        for key in keys:
            if best.get(key) is not None:
                score = float(best[key])
                break
    return {
        "kind": "intertext",
        "doc": name,
        "id": ident,
        "label": links[0]["source_id"] if links else span.label_,
        "text": span.text,
        "score": score,
        "start_char": base + span.start_char,
        "end_char": base + span.end_char,
        "parts": [f"{link['source_id']}: {link['source_text']}" for link in links[:3]],
    }


def document_stats(document: Document) -> Dict[str, Any]:
    """Per-document statistics: tokens, sentences, parallelisms, chiasmi, intertext
    links, parsed edges and MED (None where no component provides them)."""
    from .treebank.displacement import corpus_med, from_docs

    if document.summary is not None:
        return document.summary["stats"]
    docs = document.docs
    has_sents = bool(docs) and all(
        doc.has_annotation("SENT_START") or doc.has_annotation("DEP") for doc in docs if len(doc)
    )
    parsed = bool(docs) and all(doc.has_annotation("DEP") for doc in docs if len(doc))
    med = n_edges = None
    if parsed and any(len(doc) for doc in docs):
        data = from_docs(doc for doc in docs if len(doc))
        med, n_edges = corpus_med(data), data.n_edges
    return {
        "doc": document.name,
        "lang": document.lang,
        "tokens": document.n_tokens,
        "sentences": sum(len(list(doc.sents)) for doc in docs if len(doc)) if has_sents else None,
        "parallelisms": sum(len(get_parallelisms(doc)) for doc in docs),
        "chiasmi": sum(len(doc.spans["chiasmus"]) for doc in docs if "chiasmus" in doc.spans),
        "intertext": sum(len(doc.spans["intertext"]) for doc in docs if "intertext" in doc.spans),
        "edges": n_edges,
        "med": med,
    }


def displacement_histogram(
    documents: Sequence[Document], max_displacement: int = DEFAULT_MAX_DISPLACEMENT
) -> Optional[Dict[str, Any]]:
    """The histogram of edge displacements over the parsed documents (None if none is
    parsed): the sum of the documents' histograms (clipping is per edge)."""
    total: Optional[Dict[str, Any]] = None
    for document in documents:
        if document.summary is not None:
            if max_displacement != DEFAULT_MAX_DISPLACEMENT:
                raise ValueError(
                    f"displacement_histogram: {document.name} is summarised, with the counts "
                    f"on [-{DEFAULT_MAX_DISPLACEMENT}, {DEFAULT_MAX_DISPLACEMENT}] only."
                )
            counts = document.summary["histogram"]
        else:
            counts = _histogram_counts(document.docs, max_displacement)
        if counts is None:
            continue
        if total is None:
            total = {
                "support": list(range(-max_displacement, max_displacement + 1)),
                "counts": [0] * (2 * max_displacement + 1),
                "n_edges": 0,
                "n_clipped": 0,
                "max_displacement": max_displacement,
            }
        total["counts"] = [a + b for a, b in zip(total["counts"], counts["counts"])]
        total["n_edges"] += counts["n_edges"]
        total["n_clipped"] += counts["n_clipped"]
    return total


def _histogram_counts(
    docs: Sequence[Doc], max_displacement: int = DEFAULT_MAX_DISPLACEMENT
) -> Optional[Dict[str, Any]]:
    """The displacement counts of some docs (None if none is parsed)."""
    from .treebank.displacement import from_docs, histogram

    parsed = [doc for doc in docs if len(doc) and doc.has_annotation("DEP")]
    if not parsed:
        return None
    hist = histogram(from_docs(parsed), max_displacement=max_displacement)
    return {
        "counts": hist.counts.tolist(),
        "n_edges": hist.n_edges,
        "n_clipped": hist.n_clipped,
    }


def analysis_data(analysis: Analysis) -> Dict[str, Any]:
    """The analysis as JSON-serialisable data (what ``--json`` writes)."""
    tokens = sum(d.n_tokens for d in analysis.documents)
    return {
        "components": [asdict(note) for note in analysis.notes],
        "documents": [document_stats(d) for d in analysis.documents],
        "findings": [f for d in analysis.documents for f in document_findings(d)],
        "displacement_histogram": displacement_histogram(analysis.documents),
        "skipped": list(analysis.skipped),
        "tokens": tokens,
        "seconds": round(analysis.seconds, 3),
        "words_per_second": round(tokens / analysis.seconds, 1) if analysis.seconds > 0 else None,
    }


__all__ = [
    "LANGUAGES",
    "Analysis",
    "AnalyzeError",
    "Analyzer",
    "Document",
    "InputError",
    "Note",
    "analysis_data",
    "analyze_files",
    "build_analyzer",
    "iter_documents",
]
