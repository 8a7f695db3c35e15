"""Static subword (floret) vectors trained here from raw text, for languages with no
pretrained pipeline offline (Latin first). Tesserae ``.tess`` lines lose their
citation tag; Latin orthography is normalised the way ASP spells it (lowercase,
v -> u, j -> i), so the vectors' keys match the tokens the models see."""

import re
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, List, Union

from ..corpora.latin import normalize_latin
from ..corpora.tesserae import read_tess

WORD = re.compile(r"[^\W\d_]+|[^\w\s]", re.UNICODE)


def raw_lines(paths: Iterable[Union[str, Path]]) -> Iterator[str]:
    """Text lines of .tess and .txt files (directories: every such file below them)."""
    for path in paths:
        path = Path(path)
        files: List[Path] = (
            sorted(p for p in path.rglob("*") if p.suffix in (".tess", ".txt"))
            if path.is_dir()
            else [path]
        )
        for file in files:
            if file.suffix == ".tess":
                lines = (segment.text for segment in read_tess(file).segments)
            else:
                lines = file.read_text(encoding="utf8", errors="replace").splitlines()
            yield from (line for line in lines if line.strip())


def tokenized_corpus(paths: Iterable[Union[str, Path]], latin: bool = True) -> Iterator[str]:
    """One line of space-separated tokens (words and punctuation) per input line."""
    for line in raw_lines(paths):
        text = normalize_latin(line) if latin else line.lower()
        tokens = WORD.findall(text)
        if tokens:
            yield " ".join(tokens)


def train_floret_vectors(
    paths: Iterable[Union[str, Path]],
    output: Union[str, Path],
    dim: int = 100,
    epochs: int = 5,
    bucket: int = 50000,
    min_count: int = 3,
    threads: int = 2,
    latin: bool = True,
) -> dict:
    """Train floret vectors on raw text and write them in floret's text format
    (``spacy init vectors LANG OUTPUT DIR --mode floret`` turns them into spaCy vectors).

    RETURNS (dict): lines and tokens trained on.
    RAISES ValueError: the sources hold no text.
    """
    try:
        import floret
    except ImportError as err:
        raise ImportError("Training vectors needs floret: pip install floret") from err
    lines = tokens = 0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.txt"
        with corpus.open("w", encoding="utf8") as file:
            for line in tokenized_corpus(paths, latin=latin):
                file.write(line + "\n")
                lines += 1
                tokens += line.count(" ") + 1
        if lines == 0:
            names = ", ".join(str(path) for path in paths)
            raise ValueError(f"No text to train vectors on in {names} (.tess or .txt files)")
        model = floret.train_unsupervised(
            str(corpus),
            model="cbow",
            mode="floret",
            hashCount=2,
            bucket=bucket,
            minn=3,
            maxn=5,
            minCount=min_count,
            dim=dim,
            epoch=epochs,
            thread=threads,
            verbose=0,
        )
        model.save_floret_vectors(str(output))
    return {"lines": lines, "tokens": tokens}
