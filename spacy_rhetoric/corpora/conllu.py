"""CoNLL-U treebanks through spaCy's own converter (``spacy convert`` uses the same)."""

import re
from pathlib import Path
from typing import List, Optional

from spacy.training.converters import conllu_to_docs
from spacy.vocab import Vocab

from .util import Conversion, CorpusFormatError

SPLIT_PATTERN = re.compile(r"-ud-(train|dev|test)\.conllu$")


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
        text = file.read_text(encoding="utf8")
        try:
            docs = list(conllu_to_docs(text, n_sents=n_sents, no_print=True))
        except (ValueError, IndexError, KeyError) as err:
            raise CorpusFormatError(file, None, f"spaCy's CoNLL-U converter failed: {err}") from err
        for doc in docs:
            doc.user_data.update({"dataset": "conllu", "doc_id": file.stem, "split": split})
        conversion.splits.setdefault(split, []).extend(docs)
    return conversion
