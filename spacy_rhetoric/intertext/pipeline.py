"""A self-contained intertext pipeline: ``sentencizer`` + ``intertext_matcher`` with its
index saved inside (``store_index``), so that ``spacy package`` ships the index and
``spacy.load`` reopens it from the package (the shipped ``la_rhetoric_intertext``).

``add_source`` adds a further ``intertext_matcher`` over another index, with its own
reranker and threshold, writing into the same span group (``la_rhetoric_intertext``:
Virgil, then the Vulgate). From the shell::

    python -m spacy_rhetoric.intertext.pipeline PIPELINE INDEX --name intertext_vulgate \
        --reranker RERANKER.json --precision float32 --description TEXT
"""

import argparse
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
    units: bool = True,
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
    units (bool): query each sentence by its parts too (``units.py``); False: the
        sentence alone.
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
              "store_index": True, "units": units}  # fmt: skip
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


def add_source(
    nlp: Language,
    index_dir: Union[str, Path],
    name: str,
    reranker: Optional[Union[str, Path]] = None,
    k: int = 10,
    threshold: Optional[float] = None,
    precision: Optional[str] = None,
    units: bool = True,
) -> Language:
    """Add an ``intertext_matcher`` over a further source index behind the pipeline's
    last one; it adds its links to the same span group (``overwrite = false``), so a
    sentence linked to both sources has one span and both sources' links, the earlier
    matcher's first.

    nlp (Language): a pipeline with an ``intertext_matcher`` (``index_pipeline``).
    index_dir (Union[str, Path]): the further source's index (saved inside the pipeline).
    name (str): the new component's name (e.g. "intertext_vulgate").
    reranker (Optional[Union[str, Path]]): its portable reranker file (see
        ``index_pipeline``); None: the index's own, else the packaged one.
    k (int): candidates per sentence that may become links.
    threshold (Optional[float]): its link threshold (None: its reranker's).
    precision (Optional[str]): the query encoder's arithmetic (None: the component's).
    units (bool): query each sentence by its parts too; False: the sentence alone.
    RETURNS (Language): the same pipeline.
    RAISES ValueError: no matcher before it, a name in use, or a reranker that does not
        fit the index.
    """
    matchers = [n for n, p in nlp.pipeline if p.__class__.__name__ == "IntertextMatcher"]
    if not matchers:
        raise ValueError(
            "intertext pipeline: add_source needs a pipeline with an intertext_matcher "
            f"(its components: {nlp.pipe_names})"
        )
    if name in nlp.pipe_names:
        raise ValueError(f"intertext pipeline: a component is already named '{name}'")
    index_dir = Path(index_dir)
    index = IntertextIndex.from_disk(index_dir)
    chosen = read_portable_reranker(reranker) if reranker is not None else None
    apply_fusion(index, chosen)
    first = nlp.get_pipe(matchers[0])
    config = {"index_path": str(index_dir), "k": k, "threshold": threshold,
              "store_index": True, "overwrite": False, "units": units,
              "spans_key": first.cfg["spans_key"]}  # fmt: skip
    if precision is not None:
        config["precision"] = precision
    matcher = nlp.add_pipe("intertext_matcher", name=name, config=config, after=matchers[-1])
    if chosen is not None:
        matcher.set_reranker(chosen)
    return nlp


def main(argv: Optional[list] = None) -> None:
    """Add a source to a saved intertext pipeline, in place (see ``add_source``)."""
    import spacy

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("pipeline", type=Path, help="a saved intertext pipeline (changed)")
    parser.add_argument("index", type=Path, help="the further source's index")
    parser.add_argument("--name", required=True, help="the new component's name")
    parser.add_argument("--reranker", type=Path, help="its portable reranker file")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--precision", choices=("float32", "bfloat16", "auto"))
    parser.add_argument(
        "--sentences", action="store_true", help="query each sentence alone (no units)"
    )
    parser.add_argument("--description", default="", help="the pipeline's new description")
    args = parser.parse_args(argv)
    nlp = spacy.load(args.pipeline)
    try:
        add_source(nlp, args.index, args.name, args.reranker, args.top_k,
                   precision=args.precision, units=not args.sentences)  # fmt: skip
    except (FileNotFoundError, ValueError, KeyError, OSError) as err:
        raise SystemExit(str(err)) from None
    if args.description:
        nlp.meta["description"] = args.description
    nlp.to_disk(args.pipeline)
    size = sum(f.stat().st_size for f in args.pipeline.rglob("*") if f.is_file())
    print(
        f"Added {args.name} -> {args.pipeline} ({', '.join(nlp.pipe_names)}; {size / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
