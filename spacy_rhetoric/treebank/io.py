"""Reading treebanks as Docs (CoNLL-U through spaCy's converter, or DocBins) and writing
DocBins, for the split and query tools."""

from pathlib import Path
from typing import Dict, Iterable, List, Optional, Union

from spacy.tokens import Doc, DocBin
from spacy.training.converters import conllu_to_docs
from spacy.vocab import Vocab

from ..corpora.util import CorpusFormatError
from .displacement import corpus_files

PathLike = Union[str, Path]
METADATA_KEYS = {"sent_id": "sent_id", "newdoc id": "newdoc_id", "text": "text"}


def _conllu_metadata(text: str) -> List[Dict[str, str]]:
    """The ``# key = value`` comments of each sentence block, split as spaCy's
    converter splits them (blocks separated by blank lines)."""
    records = []
    for block in text.strip().split("\n\n"):
        record: Dict[str, str] = {}
        for line in block.strip().split("\n"):
            if not line.startswith("#"):
                break
            key, sep, value = line[1:].partition("=")
            if sep and key.strip() in METADATA_KEYS:
                record[METADATA_KEYS[key.strip()]] = value.strip()
        records.append(record)
    return records


def default_vocab() -> Vocab:
    """A vocab that computes lexical attributes (LOWER, IS_PUNCT, ...), which a bare
    ``Vocab()`` (as spaCy's CoNLL-U converter uses) leaves unset, so that token
    patterns on them match."""
    import spacy

    return spacy.blank("xx").vocab


def read_conllu_docs(path: PathLike, vocab: Optional[Vocab] = None) -> List[Doc]:
    """Read a .conllu file into one Doc per sentence with spaCy's CoNLL-U converter
    (words, not multiword tokens, become tokens; "root" becomes "ROOT").

    Each doc's user_data gets ``dataset`` ("conllu"), ``source`` (the file name),
    ``sent_index`` (0-based position in the file), ``sent_id`` (if the file has one) and
    ``doc_id``: the current ``# newdoc id`` or, without any, the file's stem.

    path (PathLike): the .conllu file.
    vocab (Optional[Vocab]): the vocab of the docs (see default_vocab, used if None).
    RETURNS (List[Doc]): the sentence docs.
    """
    path = Path(path)
    text = path.read_text(encoding="utf8")
    try:
        docs = list(conllu_to_docs(text, n_sents=1, no_print=True))
    except (ValueError, IndexError, KeyError) as err:
        raise CorpusFormatError(path, None, f"spaCy's CoNLL-U converter failed: {err}") from err
    metadata = _conllu_metadata(text)
    if len(metadata) != len(docs):
        raise CorpusFormatError(
            path, None, f"found {len(metadata)} sentence blocks but {len(docs)} sentences"
        )
    vocab = vocab if vocab is not None else default_vocab()
    docs = [Doc(vocab).from_bytes(doc.to_bytes(exclude=["user_data"])) for doc in docs]
    doc_id = path.stem
    for i, (doc, record) in enumerate(zip(docs, metadata)):
        doc_id = record.get("newdoc_id", doc_id)
        doc.user_data.update(
            {"dataset": "conllu", "source": path.name, "sent_index": i, "doc_id": doc_id}
        )
        if "sent_id" in record:
            doc.user_data["sent_id"] = record["sent_id"]
    return docs


def read_docs(
    paths: Union[PathLike, Iterable[PathLike]], vocab: Optional[Vocab] = None
) -> List[Doc]:
    """Read .spacy DocBins and .conllu files (one Doc per sentence), or every such file in
    directories, in order.

    paths (Union[PathLike, Iterable[PathLike]]): files or directories.
    vocab (Optional[Vocab]): the vocab of the docs (see default_vocab, used if None).
    RETURNS (List[Doc]): the docs.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    vocab = vocab if vocab is not None else default_vocab()
    docs: List[Doc] = []
    for path in paths:
        for file in corpus_files(path):
            if file.suffix == ".conllu":
                docs.extend(read_conllu_docs(file, vocab))
            else:
                docs.extend(DocBin().from_disk(file).get_docs(vocab))
    return docs


def sentence_docs(docs: Iterable[Doc]) -> List[Doc]:
    """One Doc per sentence: a one-sentence doc is kept, longer docs are cut along
    ``doc.sents`` (user_data copied, plus ``doc_index`` and ``sent_in_doc``).

    RETURNS (List[Doc]): the sentence docs, in order.
    """
    result = []
    for i, doc in enumerate(docs):
        sents = list(doc.sents) if len(doc) and doc.has_annotation("SENT_START") else None
        if not sents or len(sents) == 1:
            result.append(doc)
            continue
        for j, sent in enumerate(sents):
            sent_doc = sent.as_doc(copy_user_data=True)
            sent_doc.user_data.update({"doc_index": i, "sent_in_doc": j})
            result.append(sent_doc)
    return result


def write_docbin(docs: Iterable[Doc], path: PathLike) -> Path:
    """Write docs (with their user_data) to a .spacy file, creating directories.

    RETURNS (Path): the path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path
