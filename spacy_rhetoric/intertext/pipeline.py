"""A self-contained intertext pipeline: ``sentencizer`` + ``intertext_matcher`` with its
index saved inside (``store_index``), so that ``spacy package`` ships the index and
``spacy.load`` reopens it from the package (the shipped ``la_rhetoric_intertext``)."""

from pathlib import Path
from typing import Optional, Union

import spacy
from spacy.language import Language

from .index import IntertextIndex
from .rerank import RERANKER_FILE


def index_pipeline(
    index_dir: Union[str, Path],
    lang: str = "la",
    k: int = 10,
    threshold: Optional[float] = None,
    name: str = "intertext",
    description: str = "",
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
    RETURNS (Language): the pipeline; ``nlp.to_disk`` copies the index into it.
    RAISES FileNotFoundError, ValueError: the folder is not a readable index.
    """
    index_dir = Path(index_dir)
    IntertextIndex.from_disk(index_dir)  # fails now, with the index's own message
    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    config = {"index_path": str(index_dir), "k": k, "threshold": threshold,
              "store_index": True}  # fmt: skip
    nlp.add_pipe("intertext_matcher", config=config)  # opens the index on first use
    nlp.meta["name"] = name
    own = (index_dir / RERANKER_FILE).is_file()
    nlp.meta["description"] = description or (
        f"intertext_matcher over the index {index_dir.name} "
        f"({'its own reranker' if own else 'no reranker of its own'})"
    )
    return nlp
