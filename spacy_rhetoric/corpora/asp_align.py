"""Align the words of the ASP tokenized XML to the brat text of their section.

The XML words are the CLTK Latin tokenizer's output, lower-cased. Besides exact
(case-insensitive) matches, ``align_words`` knows the three ways the tokenizer
rewrites text: a split enclitic ("uirum" "-que" for "uirumque", "ame" "-ne" for
"amen", "x" "-ne" for "xne"), the inverted "cum" ("cum" "te" for "tecum") and an HTML
entity re-tokenized as three words ("&" "lt" ";" for "<"). The alignment gives each
word its character offsets and its trailing space (words of one text word are
glued), and lists the words it could not place and the text no word covers.
"""

import html
from dataclasses import dataclass, field
from typing import List, Sequence, Tuple


@dataclass
class Alignment:
    """Where each word of a section sits in the brat text."""

    # per word: (start, end) character offsets in the .txt, or None if unaligned
    offsets: List[Tuple[int, int] | None]
    spaces: List[bool]
    # words that could not be aligned
    unaligned: List[int]
    # non-whitespace text no word covers: (start, end) character offsets
    uncovered: List[Tuple[int, int]]
    # text units in text order: (char start, char end, first word, end word)
    units: List[Tuple[int, int, int, int]]
    unit_ends: List[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.unit_ends = [unit[1] for unit in self.units]


def _skip_space(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos].isspace():
        pos += 1
    return pos


def _match_unit(
    words: Sequence[str], i: int, text: str, pos: int, end: int
) -> List[Tuple[int, int]] | None:
    """Match the words starting at ``words[i]`` to the text word(s) at ``pos``.

    RETURNS (List[Tuple[int, int]] | None): the character offsets of the 1-3 words
        that make up the unit at ``pos``, or None if no rule applies.
    """
    word = words[i]
    nxt = words[i + 1] if i + 1 < len(words) else ""
    if len(nxt) > 1 and nxt[0] == "-":
        # split enclitic: "uirum" "-que" <- "uirumque"; "ame" "-ne" <- "amen"
        mid = pos + len(word)
        if text.startswith(word + nxt[1:], pos, end):
            return [(pos, mid), (mid, mid + len(nxt) - 1)]
        if nxt == "-ne" and text.startswith(word + "n", pos, end):
            return [(pos, mid), (mid, mid + 1)]
    if text.startswith(word, pos, end):
        return [(pos, pos + len(word))]
    if nxt and text.startswith(nxt + word, pos, end):
        # inverted postposition: "cum" "te" <- "tecum"
        mid = pos + len(nxt)
        return [(mid, mid + len(word)), (pos, mid)]
    if word == "&" and i + 2 < len(words) and words[i + 2] == ";":
        char = html.unescape(f"&{words[i + 1]};")
        if len(char) == 1 and text.startswith(char, pos, end):
            # an HTML entity re-tokenized: "&" "lt" ";" <- "<"
            return [(pos, pos + 1)] * 3
    return None


def _resumes(words: Sequence[str], i: int, text: str, pos: int, end: int, count: int = 2) -> bool:
    """Whether ``count`` words from ``words[i]`` (at least one) match the text from
    ``pos`` on."""
    for k in range(count):
        if i >= len(words):
            return k > 0
        pos = _skip_space(text, pos, end)
        unit = _match_unit(words, i, text, pos, end)
        if unit is None:
            return False
        i += len(unit)
        pos = max(e for _, e in unit)
    return True


def align_words(
    words: Sequence[str], text: str, start: int, end: int, window: int = 80
) -> Alignment:
    """Align tokenized words to ``text[start:end]``. Besides exact matches, this
    knows the rewrites of the CLTK Latin tokenizer (see the module docstring). A word
    that matches nowhere is left unaligned; text that no word matches is skipped, if
    the next words match within ``window`` characters.

    words (Sequence[str]): the words, in order (lower-cased like ``text``).
    text (str): the lower-cased document text.
    start (int): where the section's text starts.
    end (int): where it ends.
    window (int): how far to look ahead for the words after an unmatched stretch.
    RETURNS (Alignment): per word its character offsets and trailing space.
    """
    n = len(words)
    offsets: List[Tuple[int, int] | None] = [None] * n
    unaligned: List[int] = []
    uncovered: List[Tuple[int, int]] = []
    units: List[Tuple[int, int, int, int]] = []
    pos = start
    i = 0
    while i < n:
        pos = _skip_space(text, pos, end)
        unit = _match_unit(words, i, text, pos, end)
        if unit is None:
            if _resumes(words, i + 1, text, pos, end):
                unaligned.append(i)  # a word the text does not have
                i += 1
                continue
            ahead = next(
                (
                    p
                    for p in range(pos + 1, min(end, pos + window))
                    if text[p - 1].isspace() and _resumes(words, i, text, p, end)
                ),
                None,
            )
            if ahead is None:
                unaligned.append(i)
                i += 1
                continue
            uncovered.append((pos, ahead))  # text the words do not have
            pos = ahead
            continue
        for k, span in enumerate(unit):
            offsets[i + k] = span
        unit_end = max(e for _, e in unit)
        units.append((pos, unit_end, i, i + len(unit)))
        pos = unit_end
        i += len(unit)
    pos = _skip_space(text, pos, end)
    if pos < end:
        uncovered.append((pos, end))
    # words of one text unit are glued; a unit's last word has a space if
    # whitespace follows the unit; unaligned words keep an (assumed) space.
    spaces = [True] * n
    for k, (_, unit_end, first, last) in enumerate(units):
        for j in range(first, last - 1):
            spaces[j] = False
        following = units[k + 1][0] if k + 1 < len(units) else end
        spaces[last - 1] = following > unit_end
    if n:
        spaces[-1] = False
    return Alignment(offsets, spaces, unaligned, uncovered, units)
