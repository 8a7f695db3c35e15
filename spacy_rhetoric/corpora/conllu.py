"""CoNLL-U treebanks as Docs, through spaCy's own converter (``spacy convert`` uses the
same): training conversions (``convert_conllu``) and one Doc per sentence with its
metadata (``read_conllu_docs``). The edge-displacement tools read the HEAD column
straight into arrays instead (``treebank.displacement.parse_conllu``), for speed."""

import re
from pathlib import Path
from typing import Dict, List, Optional, Union

from spacy.tokens import Doc
from spacy.training.converters import conllu_to_docs
from spacy.vocab import Vocab

from .util import Conversion, CorpusFormatError

SPLIT_PATTERN = re.compile(r"-ud-(train|dev|test)\.conllu$")
PathLike = Union[str, Path]


def conllu_docs(text: str, path: PathLike, n_sents: int = 1) -> List[Doc]:
    """CoNLL-U text as Docs with spaCy's converter; a malformed file is reported with
    its name.

    text (str): the CoNLL-U text.
    path (PathLike): its file, for the error message.
    n_sents (int): sentences per Doc.
    RETURNS (List[Doc]): the docs.
    RAISES CorpusFormatError: the converter failed.
    """
    try:
        return list(conllu_to_docs(text, n_sents=n_sents, no_print=True))
    except (ValueError, IndexError, KeyError) as err:
        raise CorpusFormatError(path, None, f"spaCy's CoNLL-U converter failed: {err}") from err


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
    docs = conllu_docs(text, path, n_sents=1)
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


def convert_conllu(path: Path, vocab: Optional[Vocab] = None, n_sents: int = 10) -> Conversion:
    """Convert one .conllu file or a UD treebank directory (``*-ud-{train,dev,test}.conllu``).

    path (Path): a .conllu file or a directory holding them.
    vocab (Optional[Vocab]): unused; spaCy's converter makes its own vocab.
    n_sents (int): sentences per Doc, as ``spacy convert --n-sents``.
    RETURNS (Conversion): one split per file ("train", "dev", "test", or the file stem).
    """
    path = Path(path)
    files: List[Path] = sorted(path.glob("*.conllu")) if path.is_dir() else [path]
    if not files:
        raise CorpusFormatError(path, None, "no .conllu files found")
    conversion = Conversion()
    for file in files:
        match = SPLIT_PATTERN.search(file.name)
        split = match.group(1) if match else file.stem
        docs = conllu_docs(file.read_text(encoding="utf8"), file, n_sents=n_sents)
        for doc in docs:
            doc.user_data.update({"dataset": "conllu", "doc_id": file.stem, "split": split})
        conversion.splits.setdefault(split, []).extend(docs)
    return conversion
