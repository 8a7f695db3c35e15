"""One segmentation of a doc into cola (clauses), shared by every figure rule.

A *colon* is a maximal stretch of word tokens between two boundaries. Boundaries are

* punctuation that closes a colon (``BREAK_PUNCT``: ``, ; : . ! ? … – —`` and the CJK
  ``，；：。！？、``), quotation marks and brackets excepted;
* line breaks (whitespace tokens holding a newline; other whitespace stays inside);
* sentence starts: ``doc.sents`` where the doc has sentence boundaries, else the token
  after sentence-final punctuation (``SENTENCE_FINAL``);
* optionally (``clauses="auto"`` with a parse, or ``"parse"``) a coordinating or
  subordinating conjunction (``cc``/``mark``) whose head is a verb after it: "I came |
  and I saw" (the conjunction opens the new colon).

Boundary tokens (punctuation, whitespace) belong to no colon. The result is compact:
three arrays over the cola (start, end, sentence id) and one over the tokens (the colon
of each token, -1 for boundaries). Figures may span several sentences (the Beatitudes
are separate sentences): the rules search series over windows of consecutive cola.
"""

from typing import NamedTuple, Tuple

import numpy
from spacy.attrs import DEP, HEAD, IS_SPACE, ORTH, POS, SENT_START
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.strings import get_string_id
from spacy.tokens import Doc

from .words import StringTable

BREAK_PUNCT = frozenset(
    [",", ";", ":", ".", "!", "?", "…", "...", "–", "—", "--"]
    + ["，", "；", "：", "。", "！", "？", "、"]
)
SENTENCE_FINAL = frozenset([".", "!", "?", "…", "...", "。", "！", "？"])
QUESTION_MARKS = frozenset(["?", "？"])
CLAUSE_DEPS = frozenset(["cc", "mark"])
CLAUSE_HEADS = frozenset(["VERB", "AUX"])
CLAUSES = ("auto", "parse", "punct")


class Segmentation(NamedTuple):
    """The cola of a doc.

    starts (numpy.ndarray): [m] the first token of each colon.
    ends (numpy.ndarray): [m] one past the last token of each colon.
    sentence (numpy.ndarray): [m] the sentence id of each colon (0, 1, ...).
    colon_of (numpy.ndarray): [n] the colon of each token, -1 for boundary tokens.
    token_sentence (numpy.ndarray): [n] the sentence id of each token.
    boundary (numpy.ndarray): [n] bool, break punctuation or a line break.
    """

    starts: numpy.ndarray
    ends: numpy.ndarray
    sentence: numpy.ndarray
    colon_of: numpy.ndarray
    token_sentence: numpy.ndarray
    boundary: numpy.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def lengths(self) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): [m] the number of tokens of each colon."""
        return self.ends - self.starts


def _describe_mark(text: str) -> Tuple[None, Tuple[bool, bool, bool]]:
    """(break punctuation, sentence-final, holds a newline) of a string."""
    return None, (text in BREAK_PUNCT, text in SENTENCE_FINAL, "\n" in text)


# the flags of every string seen, by hash (the same in every vocab), kept across docs
_MARKS = StringTable(_describe_mark, 3, 1_000_000)
CLAUSE_DEP_IDS = tuple(get_string_id(d) for d in sorted(CLAUSE_DEPS))
CLAUSE_HEAD_IDS = tuple(int(POS_IDS[p]) for p in sorted(CLAUSE_HEADS))


def is_boundary_token(text: str, is_space: bool) -> bool:
    """Whether a token is a colon boundary: break punctuation or whitespace."""
    return is_space or text in BREAK_PUNCT


def has_sentences(doc: Doc) -> bool:
    """Whether the doc's sentence boundaries were set (by a parser, senter, sentencizer)."""
    return len(doc) > 0 and (doc.has_annotation("SENT_START") or doc.has_annotation("DEP"))


def segment(doc: Doc, clauses: str = "auto") -> Segmentation:
    """Segment a doc into cola.

    doc (Doc): the doc.
    clauses (str): "auto": split before a ``cc``/``mark`` conjunction of a following verb
        where the doc has a parse; "parse": the same, and a doc without a parse is an
        error; "punct": punctuation, line breaks and sentences only.
    RETURNS (Segmentation): the cola.
    """
    if clauses not in CLAUSES:
        raise ValueError(f"figure_finder: clauses must be one of {CLAUSES}, got {clauses!r}")
    n = len(doc)
    use_parse = clauses != "punct" and doc.has_annotation("DEP")
    if clauses == "parse" and n and not use_parse:
        raise ValueError(
            "figure_finder: clauses = 'parse' needs token.dep: add a parser before it, "
            "or set clauses = 'auto'"
        )
    if not n:
        empty = numpy.zeros(0, dtype=numpy.int64)
        return Segmentation(empty, empty, empty, empty, empty, numpy.zeros(0, dtype=bool))
    raw = doc.to_array([ORTH, IS_SPACE, SENT_START, DEP, HEAD, POS]).reshape(n, 6)
    array = raw.view(numpy.int64)  # heads are signed offsets
    rows = _MARKS.lookup(doc.vocab.strings, raw[:, 0])
    flags = _MARKS.flags[rows]
    is_break, is_final, newline = flags[:, 0], flags[:, 1], flags[:, 2]
    is_space = array[:, 1] != 0
    # the token belongs to no colon: break punctuation or a line break
    boundary = (is_break & ~is_space) | (is_space & newline)
    index = numpy.arange(n)
    if has_sentences(doc):
        sent_start = array[:, 2] == 1
    else:  # the first token after sentence-final punctuation (spaces skipped)
        final = numpy.where(is_space, -1, is_final.astype(numpy.int64))
        # the last non-space token before each token was sentence-final
        last_seen = numpy.maximum.accumulate(numpy.where(final >= 0, index, -1))
        previous = numpy.concatenate(([-1], last_seen[:-1]))
        prev_final = numpy.where(previous >= 0, final[numpy.maximum(previous, 0)] == 1, False)
        sent_start = prev_final & ~is_final & ~is_space
    sent_start[0] = True
    opens = numpy.zeros(n, dtype=bool)  # a clause's conjunction opens a colon
    if use_parse:
        deps = raw[:, 3]
        clause_dep = (deps == CLAUSE_DEP_IDS[0]) | (deps == CLAUSE_DEP_IDS[1])
        heads = index + array[:, 4]
        head_pos = array[heads, 5]
        verbal = (head_pos == CLAUSE_HEAD_IDS[0]) | (head_pos == CLAUSE_HEAD_IDS[1])
        opens = clause_dep & (heads > index) & verbal
    token_sentence = numpy.cumsum(sent_start) - 1
    inside = ~boundary
    after_boundary = numpy.concatenate(([True], boundary[:-1]))
    start_flag = inside & (after_boundary | opens | sent_start)
    next_start = numpy.concatenate((start_flag[1:], [True]))
    before_boundary = numpy.concatenate((boundary[1:], [True]))
    end_flag = inside & (before_boundary | next_start)
    starts = numpy.flatnonzero(start_flag)
    colon_of = numpy.where(inside, numpy.cumsum(start_flag) - 1, -1)
    return Segmentation(
        starts,
        numpy.flatnonzero(end_flag) + 1,
        token_sentence[starts],
        colon_of,
        token_sentence,
        boundary,
    )
