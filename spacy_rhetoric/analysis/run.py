"""The main job's run: text files streamed through a language's pipelines in bounded
memory, each file one summarised document."""

import time
from collections import deque
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from spacy.tokens import Doc

from ..textio import CHUNK_CHARS, InputError, read_text, text_chunks
from .findings import Analysis, Document
from .pipelines import Analyzer


def iter_documents(
    analyzer: Analyzer,
    files: Iterable[Path],
    encoding: str = "utf-8",
    batch_size: int = 16,
    skip: Optional[Callable[[Path, str], None]] = None,
    max_chars: int = CHUNK_CHARS,
) -> Iterator[Document]:
    """Analyse files lazily, each one document: a file is read when the pipeline needs
    its text, and the chunks of consecutive files share the batches of ``nlp.pipe``.
    Only about ``batch_size`` docs are alive besides the document just yielded.

    analyzer (Analyzer): the language's pipelines.
    files (Iterable[Path]): the files (see textio.collect_files).
    encoding (str): their encoding.
    batch_size (int): docs (chunks) per batch of nlp.pipe.
    skip (Optional[Callable[[Path, str], None]]): called with (path, reason) for a file
        that cannot be read or decoded, which is then left out; None: raise.
    max_chars (int): the longest chunk (see ``text_chunks``).
    YIELDS (Document): the documents, in the order of the files.
    RAISES InputError: a file that cannot be read or decoded (without ``skip``).
    """
    pending: deque = deque()  # (name, offsets) of the files whose chunks were queued

    def chunks() -> Iterator[str]:
        for path in files:
            try:
                text = read_text(Path(path), encoding)
            except InputError as err:
                if skip is None:
                    raise
                skip(Path(path), str(err))
                continue
            if skip is not None and not text.strip():
                skip(Path(path), f"{path} is empty (no text).")
                continue
            pieces = list(text_chunks(text, max_chars))
            offsets = [0]
            for piece in pieces[:-1]:
                offsets.append(offsets[-1] + len(piece))
            pending.append((Path(path).name, offsets[: len(pieces)]))
            del text
            yield from pieces

    current: List[Doc] = []
    for doc in analyzer.pipe(chunks(), batch_size=batch_size):
        while not pending[0][1]:  # files without chunks (empty) before this doc's file
            name, _ = pending.popleft()
            yield Document(name, analyzer.lang, [], [])
        current.append(doc)
        if len(current) == len(pending[0][1]):
            name, offsets = pending.popleft()
            yield Document(name, analyzer.lang, current, offsets)
            current = []
    while pending:  # only files without chunks remain
        name, offsets = pending.popleft()
        yield Document(name, analyzer.lang, [], offsets)


def analyze_files(
    analyzer: Analyzer,
    files: Sequence[Path],
    encoding: str = "utf-8",
    batch_size: int = 16,
    progress: bool = False,
    max_rendered: Optional[int] = 50,
) -> Analysis:
    """Analyse files (each one document) in bounded memory: the documents are streamed
    through ``nlp.pipe`` (see ``iter_documents``) and each is summarised (see
    ``Document.summarize``) as soon as it is done, so no Doc is kept.

    A file that cannot be read or decoded is left out and listed in ``Analysis.skipped``
    (with the reason and the fix); if no file can be read, that is an error.

    analyzer (Analyzer): the language's pipelines.
    files (Sequence[Path]): the files (see textio.collect_files).
    encoding (str): their encoding.
    batch_size (int): docs per batch.
    progress (bool): show a progress bar (on stderr).
    max_rendered (Optional[int]): keep the displaCy renderings of the first this many
        documents only (None: all).
    RETURNS (Analysis): the summarised documents, the skipped files and the notes.
    RAISES InputError: none of the files can be read or decoded.
    """
    files = list(files)
    skipped: List[Dict[str, str]] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(files), unit="file", desc="analyze")

    def skip(path: Path, reason: str) -> None:
        skipped.append({"path": str(path), "reason": reason})
        if bar is not None:
            bar.update(1)

    start = time.perf_counter()
    documents: List[Document] = []
    n_rendered = 0
    for document in iter_documents(analyzer, files, encoding, batch_size, skip):
        render = max_rendered is None or n_rendered < max_rendered
        documents.append(document.summarize(render=render))
        n_rendered += render
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if skipped and not documents:
        if len(skipped) == 1:
            raise InputError(skipped[0]["reason"])
        raise InputError(
            f"None of the {len(skipped)} files can be read; the first: {skipped[0]['reason']}"
        )
    return Analysis(documents, list(analyzer.notes), time.perf_counter() - start, skipped)
