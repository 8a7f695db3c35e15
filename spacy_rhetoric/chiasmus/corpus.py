"""A registered reader for training the chiasmus finder with ``spacy train``.

In a training config::

    [corpora.train]
    @readers = "spacy-rhetoric.chiasmus_corpus.v1"
    path = ${paths.train}
    n_folds = 5
    fold = 0
    part = "train"

It reads converted DocBins (``python -m spacy_rhetoric corpus convert chiasmus-de ...``) and
yields Examples whose predicted docs keep the reference's tokens and, with
``keep_annotations``, its POS, tags, morphology, lemmas and ``user_data["dep"]``: the
German candidates come with the dataset's own tagging, which the protocol uses as input.
With ``n_folds`` > 0 it yields one part of a stratified fold split (the split of the
``chiasmus-eval`` protocol), so that a dataset with a single split can be trained and
evaluated with ``spacy train``.
"""

from pathlib import Path
from typing import Callable, Iterator, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..corpora.util import gold_tokens_doc
from .component import DEFAULT_POSITIVE_LABELS
from .crossval import input_doc, stratified_folds
from .spans import gold_candidates

PARTS = ("train", "dev", "all")


@registry.readers("spacy-rhetoric.chiasmus_corpus.v1")
def create_chiasmus_corpus(
    path: Path,
    keep_annotations: bool = True,
    n_folds: int = 0,
    fold: int = 0,
    part: str = "all",
    positive_labels: List[str] = DEFAULT_POSITIVE_LABELS,
    seed: int = 0,
    limit: int = 0,
    negatives: Optional[Path] = None,
) -> Callable[[Language], Iterator[Example]]:
    """Create a reader of chiasmus candidates.

    path (Path): a .spacy file or a directory of them.
    keep_annotations (bool): give the predicted docs the reference's POS, tags,
        morphology, lemmas and user_data["dep"] (else only its tokens).
    n_folds (int): split the docs into this many stratified folds (0: no split).
    fold (int): the held-out fold.
    part (str): "train" (all folds but ``fold``), "dev" (``fold``) or "all".
    positive_labels (List[str]): the labels of chiasmi, for the stratification.
    seed (int): the seed of the fold assignment.
    limit (int): read at most this many docs (0: all).
    negatives (Optional[Path]): a DocBin of random inversions of running text
        (``python -m spacy_rhetoric chiasmus negatives``), read after ``path`` and split
        into the same folds: every part holds its share.
    RETURNS (Callable[[Language], Iterator[Example]]): the reader.
    """
    if part not in PARTS:
        raise ValueError(f"chiasmus_corpus: part must be one of {PARTS}, got {part!r}")
    if n_folds and not 0 <= fold < n_folds:
        raise ValueError(f"chiasmus_corpus: fold {fold} is not in 0..{n_folds - 1}")
    from ..corpora.stats import read_docbins

    def read(nlp: Language) -> Iterator[Example]:
        sources = [Path(path)] + ([Path(negatives)] if negatives else [])
        references = list(read_docbins(sources, nlp.vocab))
        if n_folds and part != "all":
            positive = set(positive_labels)
            is_positive = [
                any(label in positive for _, label in gold_candidates(doc)) for doc in references
            ]
            folds = stratified_folds(is_positive, n_folds, seed)
            wanted = (lambda f: f != fold) if part == "train" else (lambda f: f == fold)
            references = [doc for doc, f in zip(references, folds) if wanted(f)]
        for i, reference in enumerate(references):
            if limit and i >= limit:
                break
            if keep_annotations:
                predicted = input_doc(nlp.vocab, reference)
            else:
                predicted = gold_tokens_doc(nlp.vocab, reference)
            yield Example(predicted, reference)

    return read
