"""Chiasmus on characters, for languages whose words are made of characters (Chinese).

Chinese antimetabole (回环) repeats words crosswise, and often single characters inside
the words a segmenter makes: jieba reads "信言不美，美言不信" (Daodejing 81) as the two
words 信言不美 and 美言不信, so a search on its tokens finds nothing to invert. The finder
therefore searches a Chinese doc on a *character view*: a doc over the same vocab with
one token per character of every token that holds a Han character (other tokens, such
as punctuation, Latin words or numbers, stay whole). Each character takes its word's
part of speech and sentence start, and its own stop-word flag (spaCy's Chinese stop list
holds the function characters 不 而 则 之 者 也 and the pronouns 我 人 其). A word that
repeats as a whole repeats its characters, so every word-level antimetabole is a
character-level one too.

The candidates of the view are antimetaboles (every pair repeats its character; the
search on forms of ``ChiasmusSuggester.suggest_forms``), scored by the rules on the view,
and written on the doc's own tokens: a candidate's span runs from the word that holds A
to the word that holds A', its supporting spans are the words that hold A, B, B', A'
(one word may hold two roles), and the characters' offsets are kept in the groups'
attrs (``CHARACTERS_ATTR``). Several character candidates can fall on the same words
(信-美-美-信 and 信-言-言-信 both on 信言不美 ... 美言不信): only the best scoring one of
them is kept (``best_per_words``), in the finder and in the calibration alike.
"""

from typing import List, NamedTuple, Tuple

import numpy
from spacy.tokens import Doc

# languages the finder searches on characters (``units = "auto"``)
CHARACTER_LANGUAGES = ("zh",)
CHARACTERS_ATTR = "chiasmus_characters"


class CharacterView(NamedTuple):
    """A doc split into characters.

    doc (Doc): one token per character of the Han words (other tokens whole).
    token_of (numpy.ndarray): [n_view] the original token of each view token.
    offsets (numpy.ndarray): [n_view] the character offset of each view token in the
        original doc's text.
    """

    doc: Doc
    token_of: numpy.ndarray
    offsets: numpy.ndarray


def is_han(char: str) -> bool:
    """Whether a character is a CJK ideograph (the unified blocks and their extensions)."""
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2FA1F
        or 0xF900 <= code <= 0xFAFF
    )


def character_view(doc: Doc) -> CharacterView:
    """Split the Han words of a doc into characters (see the module docstring).

    doc (Doc): the doc (POS and sentence starts are carried over where it has them).
    RETURNS (CharacterView): the view and its map back to the doc.
    """
    words: List[str] = []
    spaces: List[bool] = []
    token_of: List[int] = []
    offsets: List[int] = []
    has_pos = doc.has_annotation("POS")
    has_sents = doc.has_annotation("SENT_START")
    pos: List[str] = []
    starts: List[bool] = []
    for token in doc:
        text = token.text
        pieces = list(text) if any(is_han(c) for c in text) and not token.is_space else [text]
        at = token.idx
        for k, piece in enumerate(pieces):
            words.append(piece)
            spaces.append(bool(token.whitespace_) and k == len(pieces) - 1)
            token_of.append(token.i)
            offsets.append(at)
            at += len(piece)
            if has_pos:
                pos.append(token.pos_ or "X")
            if has_sents:
                starts.append(bool(token.is_sent_start) and k == 0)
    view = Doc(
        doc.vocab,
        words=words,
        spaces=spaces,
        pos=pos if has_pos else None,
        sent_starts=starts if has_sents else None,
    )
    return CharacterView(
        view, numpy.asarray(token_of, dtype=numpy.int64), numpy.asarray(offsets, dtype=numpy.int64)
    )


def best_per_words(token_rows: numpy.ndarray, scores: numpy.ndarray) -> numpy.ndarray:
    """Of the character candidates that fall on the same words, the best scoring one
    (the first of equal scores).

    token_rows (numpy.ndarray): [k, 2 * depth] the words of each candidate's roles.
    scores (numpy.ndarray): [k] their scores.
    RETURNS (numpy.ndarray): the indices kept, in their original order.
    """
    if len(token_rows) == 0:
        return numpy.zeros(0, dtype=numpy.int64)
    order = numpy.argsort(-numpy.asarray(scores, dtype="float64"), kind="stable")
    _, first = numpy.unique(token_rows[order], axis=0, return_index=True)
    return numpy.sort(order[first])


def character_candidates(view: CharacterView, suggester) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The antimetaboles of a character view.

    view (CharacterView): the view.
    suggester (ChiasmusSuggester): its window, depth and settings are used.
    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): [k, 2 * depth] positions in the view and
        [k] antimetabole flags.
    """
    found = suggester.suggest_forms(view.doc)
    return found.indices, found.antimetabole
