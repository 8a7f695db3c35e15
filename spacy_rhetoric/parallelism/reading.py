"""How the parallelism tagger reads a doc and tidies what it decodes: the spellings
its encoder may read (``SPELLINGS``; a tagger's ``spelling`` setting), the respelled copy
of a doc it reads, and decoded branches trimmed of whitespace tokens."""

from typing import Callable, Dict, List, Sequence, Tuple

from spacy.attrs import ORTH, SPACY
from spacy.tokens import Doc

from ..corpora.latin import classical_latin, normalize_latin
from ..corpora.util import carry_language

SPELLINGS: Dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "latin": normalize_latin,
    "latin-v": classical_latin,
}


def trim_spaces(doc: Doc, decoded: Sequence[Tuple[Sequence[Tuple[int, int]], int]]) -> List:
    """Decoded parallelisms with whitespace tokens (line breaks) trimmed from the ends of
    each branch; a branch left empty is dropped, and so is a parallelism left with fewer
    than two branches.

    doc (Doc): the doc the offsets refer to.
    decoded (Sequence): (branch offsets, stratum) per parallelism.
    RETURNS (List): the same, trimmed.
    """
    trimmed = []
    for offsets, stratum in decoded:
        branches = []
        for start, end in offsets:
            while start < end and doc[start].is_space:
                start += 1
            while end > start and doc[end - 1].is_space:
                end -= 1
            if start < end:
                branches.append((start, end))
        if len(branches) >= 2:
            trimmed.append((tuple(branches), stratum))
    return trimmed


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
