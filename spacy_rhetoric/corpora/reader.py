"""A registered spaCy reader that streams a dataset straight from its own files.

In a training config::

    [corpora.train]
    @readers = "spacy-rhetoric.corpus_reader.v1"
    format = "asp"
    path = ${paths.asp}
    split = "train"
"""

from pathlib import Path
from typing import Callable, Iterator, List

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from . import CONVERTERS, convert
from .util import gold_tokens_doc


def gold_tokens_example(nlp: Language, reference: Doc) -> Example:
    """An Example whose predicted doc has the reference's tokens and nothing else."""
    return Example(gold_tokens_doc(nlp.vocab, reference), reference)


@registry.readers("spacy-rhetoric.corpus_reader.v1")
def create_corpus_reader(
    format: str, path: Path, split: str, limit: int = 0
) -> Callable[[Language], Iterator[Example]]:
    """Create a reader of one split of a dataset in one of the CONVERTERS formats.

    format (str): the dataset format, e.g. "asp" or "pse".
    path (Path): the dataset's location.
    split (str): the split to read, e.g. "train".
    limit (int): read at most this many docs (0: all).
    RETURNS (Callable[[Language], Iterator[Example]]): the reader.
    """
    if format not in CONVERTERS:
        raise ValueError(
            f"Unknown corpus format '{format}'. Choose one of: {', '.join(CONVERTERS)}."
        )

    references: List[Doc] = []  # converted on the first call, reused every epoch

    def read(nlp: Language) -> Iterator[Example]:
        if not references:
            conversion = convert(format, Path(path), vocab=nlp.vocab)
            if split not in conversion.splits:
                raise ValueError(
                    f"The {format} corpus at {path} has no split '{split}'. "
                    f"Its splits: {', '.join(conversion.splits)}."
                )
            references.extend(conversion.splits[split])
        for i, reference in enumerate(references):
            if limit and i >= limit:
                break
            yield gold_tokens_example(nlp, reference)

    return read


@registry.readers("spacy-rhetoric.gold_tokens_corpus.v1")
def create_gold_tokens_corpus(
    path: Path, limit: int = 0
) -> Callable[[Language], Iterator[Example]]:
    """Read .spacy DocBins as Examples whose predicted docs keep the gold tokens
    (and nothing else). Unlike ``spacy.Corpus.v1`` with ``gold_preproc``, docs are
    never split into sentences, so annotations that cross sentences survive.

    path (Path): a .spacy file or a directory of them.
    limit (int): read at most this many docs (0: all).
    RETURNS (Callable[[Language], Iterator[Example]]): the reader.
    """
    from .stats import read_docbins

    def read(nlp: Language) -> Iterator[Example]:
        for i, reference in enumerate(read_docbins([path], nlp.vocab)):
            if limit and i >= limit:
                break
            yield gold_tokens_example(nlp, reference)

    return read
