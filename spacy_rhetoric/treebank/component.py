"""The ``displacement_analyzer`` pipeline component: edge displacement and mean edge
displacement (MED) of parsed docs. Nothing to train."""

from typing import Iterable, Iterator, List

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, Token
from spacy.vocab import Vocab

from .displacement import doc_displacements

DOC_MED_MODES = ("edges", "sentences")


def register_treebank_extensions() -> None:
    """Register ``token._.displacement``, ``span._.med`` and ``doc._.med`` (idempotent)."""
    if not Token.has_extension("displacement"):
        Token.set_extension("displacement", default=None)
    if not Span.has_extension("med"):
        Span.set_extension("med", default=None)
    if not Doc.has_extension("med"):
        Doc.set_extension("med", default=None)


register_treebank_extensions()


@Language.factory(
    "displacement_analyzer",
    assigns=["token._.displacement", "span._.med", "doc._.med"],
    requires=["token.dep", "token.head"],
    default_config={"doc_med": "edges"},
)
def make_displacement_analyzer(nlp: Language, name: str, doc_med: str) -> "DisplacementAnalyzer":
    """Create a displacement analyzer.

    doc_med (str): how ``doc._.med`` averages: "edges" (every edge of the doc weighs the
        same: total displacement / number of edges) or "sentences" (the mean of the
        sentences' MEDs, sentences without edges left out).
    """
    return DisplacementAnalyzer(nlp.vocab, name, doc_med=doc_med)


class DisplacementAnalyzer:
    """Annotate parsed docs with edge displacements (see treebank/displacement.py):

    - ``token._.displacement`` (Optional[int]): the token's position minus its head's
      position; None for roots (in spaCy a root is its own head).
    - ``span._.med`` (Optional[float]): for every sentence in ``doc.sents``, the mean
      displacement of its edges, i.e. sum / (N - 1) for N tokens; None for one-token
      sentences (no edges). Other spans keep None.
    - ``doc._.med`` (Optional[float]): see ``doc_med``; None without edges (e.g. empty docs).
    """

    def __init__(
        self, vocab: Vocab, name: str = "displacement_analyzer", *, doc_med: str = "edges"
    ) -> None:
        if doc_med not in DOC_MED_MODES:
            raise ValueError(f"{name}: doc_med must be one of {DOC_MED_MODES}, got {doc_med!r}.")
        self.vocab = vocab
        self.name = name
        self.cfg = {"doc_med": doc_med}

    def __call__(self, doc: Doc) -> Doc:
        """Annotate one doc.

        doc (Doc): a doc with a dependency parse.
        RETURNS (Doc): the same doc.
        """
        if len(doc) == 0:
            doc._.med = None
            return doc
        if not doc.has_annotation("DEP"):
            raise ValueError(
                f"{self.name} needs a dependency parse: add a parser before it "
                f"(doc '{doc[:8].text}...' has no token.dep)."
            )
        values = doc_displacements(doc)
        for token, value in zip(doc, values.tolist()):
            token._.displacement = value if value != 0 else None
        meds: List[float] = []
        for sent in doc.sents:
            sent_values = values[sent.start : sent.end]
            n_edges = int(numpy.count_nonzero(sent_values))
            med = float(sent_values.sum() / n_edges) if n_edges else None
            sent._.med = med
            if med is not None:
                meds.append(med)
        n_edges = int(numpy.count_nonzero(values))
        if not n_edges:
            doc._.med = None
        elif self.cfg["doc_med"] == "edges":
            doc._.med = float(values.sum() / n_edges)
        else:
            doc._.med = float(numpy.mean(meds))
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate a stream of docs.

        stream (Iterable[Doc]): the docs.
        batch_size (int): unused, for API compatibility.
        YIELDS (Doc): the annotated docs.
        """
        for doc in stream:
            yield self(doc)
