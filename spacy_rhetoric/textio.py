"""Find and read the plain-text input files of ``analyze`` and the corpus commands.

Every failure raises :class:`InputError` with a message that names the file and
says how to fix it, so commands can print it and exit instead of crashing deep
inside a pipeline.
"""

import re
from pathlib import Path
from typing import Iterator, List, Sequence, Union


class InputError(ValueError):
    """An input path or file that cannot be used (missing, unreadable, undecodable)."""


def collect_files(inputs: Sequence[Union[str, Path]], pattern: str = "*.txt") -> List[Path]:
    """Expand files and directories into a list of files.

    inputs (Sequence[Union[str, Path]]): Files (used as given, whatever their suffix)
        and directories (searched recursively for ``pattern``, sorted).
    pattern (str): The glob pattern for files inside directories.
    RETURNS (List[Path]): The files, in input order, without duplicates.
    RAISES InputError: A path does not exist, or no files were found at all.
    """
    if not inputs:
        raise InputError("No input files given: pass one or more files or directories.")
    files: List[Path] = []
    seen = set()
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob(pattern) if p.is_file())
            if not found:
                raise InputError(f"Directory {path} contains no files matching '{pattern}'.")
        elif path.is_file():
            found = [path]
        elif path.exists():
            raise InputError(f"{path} is neither a regular file nor a directory.")
        else:
            raise InputError(f"Input file or directory not found: {path}")
        for file in found:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    return files


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """Read a whole text file, with clear errors.

    path (Path): The file.
    encoding (str): Its encoding (any name Python's codecs accept).
    RETURNS (str): The text, with a leading byte-order mark removed.
    RAISES InputError: The file is missing or unreadable, is binary (a NUL byte, in an
        encoding that has none), the encoding is unknown, or the bytes are not valid in
        that encoding (the message gives the byte offset).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"Input file not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a text file.") from None
    except OSError as err:
        raise InputError(f"Cannot read {path}: {err.strerror or err}") from None
    nul = data.find(b"\x00")
    if nul >= 0 and not encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        raise InputError(
            f"{path} is a binary file, not text (a NUL byte at offset {nul}); give text "
            "files (.txt)."
        )
    try:
        text = data.decode(encoding)
    except LookupError:
        raise InputError(
            f"Unknown encoding '{encoding}' (for {path}); use a name such as utf-8, "
            "latin-1 or cp1252."
        ) from None
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            f"{path} is not valid {encoding}: byte 0x{data[err.start]:02x} at byte "
            f"offset {err.start}, line {line} ({err.reason}). Pass the file's encoding with "
            "--encoding (e.g. --encoding latin-1 or cp1252)."
        ) from None
    return text.lstrip("\ufeff")


CHUNK_CHARS = 5000


def paragraphs(text: str, max_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """Split a text at blank lines, and paragraphs longer than ``max_chars`` at line
    ends (or, failing that, at spaces), keeping every character.

    text (str): the text.
    max_chars (int): the longest chunk wanted.
    YIELDS (str): the chunks, which concatenate to the text.
    """
    for paragraph in re.split(r"(?<=\n\n)", text):
        while len(paragraph) > max_chars:
            cut = paragraph.rfind("\n", 0, max_chars)
            if cut <= 0:
                cut = paragraph.rfind(" ", 0, max_chars)
            cut = cut + 1 if cut > 0 else max_chars
            yield paragraph[:cut]
            paragraph = paragraph[cut:]
        if paragraph:
            yield paragraph


def text_chunks(text: str, max_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """Split a text into its paragraphs (at blank lines), a paragraph longer than
    ``max_chars`` at line ends (or spaces), keeping every character. Each chunk is
    analysed as one Doc: no figure is looked for across a paragraph break, and long
    files are analysed in bounded pieces.

    text (str): the text.
    max_chars (int): the longest chunk wanted.
    YIELDS (str): chunks that concatenate to the text.
    """
    chunk = ""
    for piece in paragraphs(text, max_chars):
        if chunk and not piece.strip():  # runs of blank lines stay with their paragraph
            chunk += piece
            continue
        if chunk:
            yield chunk
        chunk = piece
    if chunk:
        yield chunk
