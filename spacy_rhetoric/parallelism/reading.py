"""How the parallelism tagger reads a doc and tidies what it decodes: the spellings
its encoder may read (``SPELLINGS``; a tagger's ``spelling`` setting), the respelled copy
of a doc it reads, and decoded branches tidied: trimmed of whitespace tokens, and dropped
where they are not words; and parallelisms dropped whose branches only name or address
people (``drop_name_lists``)."""

from typing import Callable, Dict, List, Sequence, Tuple

from spacy.attrs import ORTH, SPACY
from spacy.tokens import Doc, Span

from ..corpora.latin import classical_latin, normalize_latin
from ..corpora.util import carry_language, doc_language
from ..names import doc_names, is_name_list

SPELLINGS: Dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "latin": normalize_latin,
    "latin-v": classical_latin,
}


def word_share(span: Span) -> float:
    """RETURNS (float): the share of a span's tokens (whitespace tokens aside) whose text
    holds a letter or a digit, in any script; 0.0 for a span of whitespace only."""
    tokens = [token.text for token in span if not token.is_space]
    words = sum(any(char.isalnum() for char in text) for text in tokens)
    return words / len(tokens) if tokens else 0.0


def tidy_branches(
    doc: Doc,
    decoded: Sequence[Tuple[Sequence[Tuple[int, int]], int]],
    min_word_share: float = 0.0,
) -> List:
    """Decoded parallelisms as a reader should see them: whitespace tokens (line breaks)
    trimmed from the ends of each branch, and a branch dropped when it is left empty or
    when fewer than ``min_word_share`` of its tokens are words (a run of ``= = =`` or
    ``* * *`` separating e-mails is not a branch); a parallelism left with fewer than two
    branches is dropped.

    doc (Doc): the doc the offsets refer to.
    decoded (Sequence): (branch offsets, stratum) per parallelism.
    min_word_share (float): the least share of a branch's tokens that must hold a letter
        or a digit (0 keeps every branch that is not only whitespace).
    RETURNS (List): the same, tidied.
    """
    tidied = []
    for offsets, stratum in decoded:
        branches = []
        for start, end in offsets:
            while start < end and doc[start].is_space:
                start += 1
            while end > start and doc[end - 1].is_space:
                end -= 1
            if start < end and word_share(doc[start:end]) >= min_word_share:
                branches.append((start, end))
        if len(branches) >= 2:
            tidied.append((tuple(branches), stratum))
    return tidied


def drop_name_lists(doc: Doc, decoded: Sequence[Tuple]) -> Tuple[List, int]:
    """Decoded parallelisms without the lists of names, titles and forms of address
    ("Vice President Johnson, Mr. Speaker, Mr. Chief Justice, ..., reverend clergy,
    fellow citizens": ``names.is_name_list``): branches alike because names and titles
    are, which a reader dismisses at once.

    doc (Doc): the doc the offsets refer to (its language: ``doc_language``).
    decoded (Sequence[Tuple]): per parallelism a tuple whose first item is its branch
        offsets ((branch offsets, stratum) as decoded, or with more items).
    RETURNS (Tuple[List, int]): the parallelisms kept (as given), and how many were dropped.
    """
    names = doc_names(doc, doc_language(doc))
    kept = [item for item in decoded if not is_name_list(names, item[0])]
    return kept, len(decoded) - len(kept)


def respelled(doc: Doc, spelling: str) -> Doc:
    """The doc as the model reads it: a copy with each word respelled (same tokens,
    whitespace and stated language), or the doc itself where nothing changes."""
    fold = SPELLINGS.get(spelling)
    if fold is None:
        return doc
    strings = doc.vocab.strings
    # the words and spaces read from arrays: no Token object per word
    texts = [strings[orth] for orth in doc.to_array(ORTH).tolist()]
    words = [fold(text) for text in texts]
    if words == texts:
        return doc
    spaces = [bool(s) for s in doc.to_array(SPACY).tolist()]
    return carry_language(doc, Doc(doc.vocab, words=words, spaces=spaces))
