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

from typing import Dict, NamedTuple, Tuple

import numpy
from spacy.attrs import DEP, HEAD, IS_SPACE, ORTH, POS, SENT_START
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.strings import StringStore
from spacy.tokens import Doc

BREAK_PUNCT = frozenset(
    [",", ";", ":", ".", "!", "?", "…", "...", "–", "—", "--"]
    + ["，", "；", "：", "。", "！", "？", "、"]
)
SENTENCE_FINAL = frozenset([".", "!", "?", "…", "...", "。", "！", "？"])
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


_FLAGS: Dict[int, Tuple[bool, bool, bool]] = {}


def _flags(strings: StringStore, orth: int) -> Tuple[bool, bool, bool]:
    """(break punctuation, sentence-final, holds a newline) of a string, cached by its
    hash (the same in every vocab)."""
    found = _FLAGS.get(orth)
    if found is None:
        text = strings[orth]
        found = (text in BREAK_PUNCT, text in SENTENCE_FINAL, "\n" in text)
        if len(_FLAGS) < 1_000_000:
            _FLAGS[orth] = found
    return found


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
    strings = doc.vocab.strings
    array = (
        doc.to_array([ORTH, IS_SPACE, SENT_START, DEP, HEAD, POS])
        .reshape(n, 6)
        .astype(numpy.int64, copy=False)
        if n
        else numpy.zeros((0, 6), dtype=numpy.int64)
    )
    orth_codes, orth_index = numpy.unique(array[:, 0].astype(numpy.uint64), return_inverse=True)
    orth_index = orth_index.reshape(-1)
    flags = numpy.asarray([_flags(strings, int(h)) for h in orth_codes], dtype=bool)
    flags = flags.reshape(-1, 3)[orth_index]
    is_break, is_final, newline = flags[:, 0], flags[:, 1], flags[:, 2]
    is_space = array[:, 1] != 0
    # the token belongs to no colon: break punctuation or a line break
    boundary = (is_break & ~is_space) | (is_space & newline)
    if has_sentences(doc):
        sent_start = array[:, 2] == 1
    else:  # the first token after sentence-final punctuation (spaces skipped)
        final = numpy.where(is_space, -1, is_final.astype(numpy.int64))
        # the last non-space token before each token was sentence-final
        idx = numpy.where(final >= 0, numpy.arange(n), -1)
        last_seen = numpy.maximum.accumulate(idx) if n else idx
        previous = numpy.r_[-1, last_seen[:-1]] if n else last_seen
        prev_final = numpy.where(previous >= 0, final[numpy.maximum(previous, 0)] == 1, False)
        sent_start = prev_final & ~is_final & ~is_space
    if n:
        sent_start[0] = True
    opens = numpy.zeros(n, dtype=bool)  # a clause's conjunction opens a colon
    if use_parse:
        deps = numpy.asarray(array[:, 3], dtype=numpy.uint64)
        clause_dep = numpy.isin(deps, [strings.add(d) for d in CLAUSE_DEPS])
        heads = numpy.arange(n) + array[:, 4]
        head_pos = array[heads, 5]
        verbal = numpy.isin(head_pos, [int(POS_IDS[p]) for p in CLAUSE_HEADS])
        opens = clause_dep & (heads > numpy.arange(n)) & verbal
    token_sentence = (numpy.cumsum(sent_start) - 1).astype(numpy.int64)
    inside = ~boundary
    after_boundary = numpy.r_[True, boundary[:-1]] if n else boundary
    start_flag = inside & (after_boundary | opens | sent_start)
    next_start = numpy.r_[start_flag[1:], True] if n else start_flag
    before_boundary = numpy.r_[boundary[1:], True] if n else boundary
    end_flag = inside & (before_boundary | next_start)
    starts = numpy.flatnonzero(start_flag)
    ends = numpy.flatnonzero(end_flag) + 1
    colon_of = numpy.where(inside, numpy.cumsum(start_flag) - 1, -1).astype(numpy.int64)
    sentence = token_sentence[starts]
    return Segmentation(
        starts.astype(numpy.int64),
        ends.astype(numpy.int64),
        numpy.asarray(sentence, dtype=numpy.int64),
        colon_of,
        numpy.asarray(token_sentence, dtype=numpy.int64),
        boundary,
    )
