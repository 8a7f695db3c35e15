"""The chiasmus candidate suggesters (``spacy-rhetoric.chiasmus_suggester.v1``, ``.v2``
and ``.v3``, which leaves out fixed binomials): ``ChiasmusSuggester`` proposes every
crosswise inversion A B B' A' (or A B C C' B' A') of a doc in a window, on its POS and
lemmas or, without POS, on its forms (see ``candidates`` for the search itself). The
``chiasmus_finder`` component scores what its suggester proposes.
"""

from typing import Iterable, List, Optional

import numpy
from spacy.tokens import Doc, Token
from spacy.util import registry

from .candidates import (
    DEFAULT_WINDOW,
    Candidates,
    empty_candidates,
    find_candidates,
    fixed_binomials,
    roles,
)
from .features import check_doc

# every part of speech of the A/B roles of the German set, plus ADV
DEFAULT_ALLOWED_POS = ["NOUN", "PROPN", "VERB", "ADJ", "ADV", "PRON", "DET"]
DEFAULT_FORM_POS = ["NUM", "PRON"]
# stand-in labels of the search on forms (docs without POS)
FORM_PUNCT, FORM_SPACE = "punct", "space"


class ChiasmusSuggester:
    """Propose the chiasmus candidates of docs (a picklable callable).

    With POS tags, a pair of positions matches when both are eligible by their POS and
    repeat their POS, or (``lemma_pairs``) their lemma; numerals and pronouns
    (``form_pos``) take part where the pair repeats its lower-case form. Lemmas are
    compared case-insensitively. A doc without POS tags (a blank pipeline) is searched
    on its forms: every token but punctuation and whitespace takes part, and only pairs
    that repeat their lower-case form match (antimetaboles). With ``binomials`` a fixed
    binomial ("hand in hand", "Schritt für Schritt": ``candidates.fixed_binomials``) is
    never a pair.

    window (int): a' - a < window.
    depth (int): 2 (A B B' A') or 3 (A B C C' B' A').
    allowed_pos (Optional[List[str]]): only tokens with these coarse POS take part.
    denied_pos (Optional[List[str]]): tokens with these coarse POS never take part.
    respect_sentences (bool): never cross a sentence boundary (if the doc has sentences).
    antimetabole_only (bool): only candidates whose pairs repeat their lemma.
    lexical_attr (str): "LEMMA" or "LOWER": what the antimetabole flag compares.
    lemma_pairs (bool): a pair repeating its lemma matches whatever its POS tags.
    form_pos (Optional[List[str]]): POS that take part only where the pair repeats its form.
    distinct (bool): drop candidates whose A and B (B' and A') share their lemma: mere
        repetition ("the ... the ... the ... the"), no inversion.
    stem_pairs (bool): a pair whose lower-case forms are one word up to an ending
        ("Glücklichen" / "glücklich", "amor" / "amoris"; ``stems.same_stem``) matches
        whatever its POS and lemmas, and counts as a repetition (antimetabole): a small
        tagger's or lemmatizer's slip must not hide the figure.
    """

    def __init__(
        self,
        window: int = DEFAULT_WINDOW,
        depth: int = 2,
        allowed_pos: Optional[List[str]] = None,
        denied_pos: Optional[List[str]] = None,
        respect_sentences: bool = False,
        antimetabole_only: bool = False,
        lexical_attr: str = "LEMMA",
        lemma_pairs: bool = False,
        form_pos: Optional[List[str]] = None,
        distinct: bool = False,
        stem_pairs: bool = False,
        binomials: bool = False,
    ) -> None:
        roles(depth)
        if window < 2 * depth:
            raise ValueError(f"chiasmus suggester: window must be >= {2 * depth}, got {window}")
        if lexical_attr not in ("LEMMA", "LOWER"):
            raise ValueError(
                f"chiasmus suggester: lexical_attr must be LEMMA or LOWER, got {lexical_attr!r}"
            )
        self.window = window
        self.depth = depth
        self.allowed_pos = list(allowed_pos) if allowed_pos is not None else None
        self.denied_pos = list(denied_pos) if denied_pos is not None else None
        self.respect_sentences = respect_sentences
        self.antimetabole_only = antimetabole_only
        self.lexical_attr = lexical_attr
        self.lemma_pairs = lemma_pairs
        self.form_pos = list(form_pos) if form_pos else None
        self.distinct = distinct
        self.stem_pairs = stem_pairs
        self.binomials = binomials

    def suggest(self, doc: Doc, name: str = "chiasmus_finder") -> Candidates:
        """doc (Doc): a doc, with POS (and lemmas) or without.
        RETURNS (Candidates): its candidates."""
        if len(doc) == 0:
            return empty_candidates(self.depth)
        sentences = None
        if self.respect_sentences and doc.has_annotation("SENT_START"):
            sentences = numpy.cumsum([t.is_sent_start is True for t in doc])
        if not doc.has_annotation("POS"):
            return self.suggest_forms(doc)
        forms = [t.text.lower() for t in doc]  # not lower_: unset in a bare Vocab()
        stems = forms if self.stem_pairs else None
        use_lemmas = self.lexical_attr == "LEMMA" and doc.has_annotation("LEMMA")
        if self.antimetabole_only and self.lexical_attr == "LEMMA" and not use_lemmas:
            check_doc(doc, "LEMMA", name)
        lemmas = [t.lemma_.lower() for t in doc] if use_lemmas else forms
        # whitespace, punctuation and symbols never take part, whatever POS a tagger gave
        # them (a small Latin tagger reads a quotation mark as a noun, and the editorial
        # brackets of "<ser>m<oni>" as an adverb and a verb)
        pos = [FORM_SPACE if t.is_space or _not_a_word(t) else t.pos_ for t in doc]
        return find_candidates(
            pos,
            lemmas=lemmas,
            window=self.window,
            depth=self.depth,
            allowed_pos=self.allowed_pos,
            denied_pos=(self.denied_pos or []) + [FORM_SPACE],
            sentences=sentences,
            antimetabole_only=self.antimetabole_only,
            lemma_pairs=self.lemma_pairs,
            forms=forms if self.form_pos else None,
            form_pos=self.form_pos,
            distinct=self.distinct,
            stems=stems,
            binomials=fixed_binomials(forms, pos) if self.binomials else None,
        )

    def suggest_forms(self, doc: Doc) -> Candidates:
        """The antimetaboles of a doc on its forms, whatever its POS: every token but
        punctuation and whitespace takes part, and pairs match when they repeat their
        lower-case form (with ``stem_pairs``: or their stem). The search of a doc
        without POS, and of the character view of a Chinese doc (``characters``).

        doc (Doc): a doc.
        RETURNS (Candidates): its candidates."""
        if len(doc) == 0:
            return empty_candidates(self.depth)
        sentences = None
        if self.respect_sentences and doc.has_annotation("SENT_START"):
            sentences = numpy.cumsum([t.is_sent_start is True for t in doc])
        forms = [t.text.lower() for t in doc]  # not lower_: unset in a bare Vocab()
        return find_candidates(
            [FORM_SPACE if t.is_space else FORM_PUNCT if _not_a_word(t) else "" for t in doc],
            lemmas=forms,
            window=self.window,
            depth=self.depth,
            denied_pos=[FORM_PUNCT, FORM_SPACE],
            sentences=sentences,
            antimetabole_only=True,
            distinct=self.distinct,
            stems=forms if self.stem_pairs else None,
            binomials=fixed_binomials(forms) if self.binomials else None,
        )

    def __call__(self, docs: Iterable[Doc]) -> List[Candidates]:
        """docs (Iterable[Doc]): the docs. RETURNS (List[Candidates]): per doc."""
        return [self.suggest(doc) for doc in docs]


def _not_a_word(token: Token) -> bool:
    """Punctuation, or a token without a letter or digit ("<", "+", "---")."""
    return token.is_punct or not any(ch.isalnum() for ch in token.text)


@registry.misc("spacy-rhetoric.chiasmus_suggester.v1")
def build_chiasmus_suggester(
    window: int = DEFAULT_WINDOW,
    depth: int = 2,
    allowed_pos: Optional[List[str]] = DEFAULT_ALLOWED_POS,
    denied_pos: Optional[List[str]] = None,
    respect_sentences: bool = False,
    antimetabole_only: bool = False,
    lexical_attr: str = "LEMMA",
) -> ChiasmusSuggester:
    """Create the chiasmus candidate suggester of earlier pipelines: pairs repeat their
    POS (see ``ChiasmusSuggester``; no ``lemma_pairs``, no ``form_pos``).

    RETURNS (ChiasmusSuggester): a callable docs -> per-doc Candidates.
    """
    settings = dict(locals())
    return ChiasmusSuggester(**settings)


@registry.misc("spacy-rhetoric.chiasmus_suggester.v2")
def build_chiasmus_suggester_v2(
    window: int = DEFAULT_WINDOW,
    depth: int = 2,
    allowed_pos: Optional[List[str]] = DEFAULT_ALLOWED_POS,
    denied_pos: Optional[List[str]] = None,
    respect_sentences: bool = False,
    antimetabole_only: bool = False,
    lexical_attr: str = "LEMMA",
    lemma_pairs: bool = True,
    form_pos: Optional[List[str]] = DEFAULT_FORM_POS,
    distinct: bool = True,
    stem_pairs: bool = False,
) -> ChiasmusSuggester:
    """Create the chiasmus candidate suggester (see ``ChiasmusSuggester``): pairs repeat
    their POS or their lemma; ``form_pos`` take part where the pair repeats its form;
    A and B never share their lemma (``distinct``); with ``stem_pairs`` (the
    ``chiasmus_finder`` default), pairs may repeat their form up to an ending.

    RETURNS (ChiasmusSuggester): a callable docs -> per-doc Candidates.
    """
    settings = dict(locals())
    return ChiasmusSuggester(**settings)


@registry.misc("spacy-rhetoric.chiasmus_suggester.v3")
def build_chiasmus_suggester_v3(
    window: int = DEFAULT_WINDOW,
    depth: int = 2,
    allowed_pos: Optional[List[str]] = DEFAULT_ALLOWED_POS,
    denied_pos: Optional[List[str]] = None,
    respect_sentences: bool = False,
    antimetabole_only: bool = False,
    lexical_attr: str = "LEMMA",
    lemma_pairs: bool = True,
    form_pos: Optional[List[str]] = DEFAULT_FORM_POS,
    distinct: bool = True,
    stem_pairs: bool = False,
) -> ChiasmusSuggester:
    """Create the chiasmus candidate suggester of ``chiasmus_finder`` since 0.9.0: ``.v2``
    and no fixed binomial ("hand in hand", "day by day") as one of its pairs.

    RETURNS (ChiasmusSuggester): a callable docs -> per-doc Candidates.
    """
    settings = dict(locals())
    return ChiasmusSuggester(**settings, binomials=True)
