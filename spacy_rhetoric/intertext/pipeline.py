"""A self-contained intertext pipeline: ``sentencizer`` + ``intertext_matcher`` with its
index saved inside (``store_index``), so that ``spacy package`` ships the index and
``spacy.load`` reopens it from the package (the shipped ``la_rhetoric_intertext``)."""

from pathlib import Path
from typing import Optional, Union

import spacy
import srsly
from spacy.language import Language

from .index import IntertextIndex
from .rerank import RERANKER_FILE, FeatureReranker, apply_fusion


def index_pipeline(
    index_dir: Union[str, Path],
    lang: str = "la",
    k: int = 10,
    threshold: Optional[float] = None,
    name: str = "intertext",
    description: str = "",
    reranker: Optional[Union[str, Path]] = None,
    precision: Optional[str] = None,
) -> Language:
    """Build the pipeline around an index (opened now, so a bad index fails here).

    index_dir (Union[str, Path]): the index ("python -m spacy_rhetoric intertext index";
        its reranker, if trained into it, travels with it).
    lang (str): the language of the blank pipeline (tokenizer and sentencizer).
    k (int): candidates per sentence that may become links.
    threshold (Optional[float]): the link threshold (None: the reranker's, see
        ``link.link_segments``).
    name (str): the pipeline's meta name.
    description (str): the pipeline's meta description.
    reranker (Optional[Union[str, Path]]): a portable reranker file (``intertext train
        --export``, or a packaged one) saved with the component instead of the index's
        own; it carries the fusion it was trained with, so it must come from an index of
        the same kind (the same dense model, or lexical only).
    precision (Optional[str]): the query encoder's arithmetic ("float32", "bfloat16",
        "auto"; None: the component's default).
    RETURNS (Language): the pipeline; ``nlp.to_disk`` copies the index into it.
    RAISES FileNotFoundError, ValueError: the folder is not a readable index, or the
        reranker file is missing, malformed or carries no fusion.
    """
    index_dir = Path(index_dir)
    index = IntertextIndex.from_disk(index_dir)  # fails now, with the index's own message
    chosen = read_portable_reranker(reranker) if reranker is not None else None
    apply_fusion(index, chosen)  # fails now if the reranker does not fit the index
    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    config = {"index_path": str(index_dir), "k": k, "threshold": threshold,
              "store_index": True}  # fmt: skip
    if precision is not None:
        config["precision"] = precision
    matcher = nlp.add_pipe("intertext_matcher", config=config)  # opens the index on first use
    if chosen is not None:
        matcher.set_reranker(chosen)
    nlp.meta["name"] = name
    own = (index_dir / RERANKER_FILE).is_file()
    which = (
        f"the reranker {Path(reranker).name}"
        if chosen is not None
        else ("its own reranker" if own else "no reranker of its own")
    )
    nlp.meta["description"] = description or (
        f"intertext_matcher over the index {index_dir.name} ({which})"
    )
    return nlp


def read_portable_reranker(path: Union[str, Path]) -> FeatureReranker:
    """RETURNS (FeatureReranker): the reranker in a portable file (with its fusion).
    RAISES FileNotFoundError, ValueError: a missing, malformed or fusion-less file, in one
        line naming it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"intertext pipeline: reranker file {path} not found")
    try:
        found = FeatureReranker.from_dict(srsly.read_json(path))
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"intertext pipeline: {path} is not a reranker file: {first}") from None
    if not found.fusion:
        raise ValueError(
            f"intertext pipeline: {path} carries no fusion (an index's own reranker.json); "
            "export a portable one with 'intertext train --export'"
        )
    return found
