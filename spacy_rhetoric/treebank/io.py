"""Reading treebanks as Docs (CoNLL-U files through ``corpora.conllu``, or DocBins) and
writing DocBins, for the split and query tools."""

from pathlib import Path
from typing import Iterable, List, Optional, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..corpora.conllu import default_vocab, read_conllu_docs
from .displacement import corpus_files

PathLike = Union[str, Path]


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
