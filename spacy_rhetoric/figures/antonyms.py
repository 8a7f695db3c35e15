"""Antonym lexicons per language: the opposed words that an antithesis sets in matching
places of parallel cola.

One file per language in ``spacy_rhetoric/data/figures/antonyms/`` (``LANG.tsv``):
comment lines opening with ``#``, blank lines, and one pair per line, ``word<TAB>word``.
English is Open English WordNet's antonym relation; Latin, German and Chinese are
compiled lists (the folder's SOURCES.md names the sources and licences). Words are
compared in the figures' normal form (``words.normalize``: lower case; Latin u/v and
i/j folded), so "Krieg" matches "krieg" and "vivo" matches "uiuo".
"""

from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, Optional, Set

from .words import normalize

ANTONYMS_DIR = Path(__file__).resolve().parent.parent / "data" / "figures" / "antonyms"


@lru_cache(maxsize=16)
def load_antonyms(lang: str, path: Optional[Path] = None) -> Dict[str, FrozenSet[str]]:
    """The antonym lexicon of a language: each word -> the words opposed to it.

    The relation is symmetric: a pair in the file holds in both directions. The result
    is cached and shared between callers: do not change it.

    lang (str): the language code (``la``, ``de``, ``en``, ``zh``).
    path (Optional[Path]): a lexicon file to read instead of the packaged one.
    RETURNS (Dict[str, FrozenSet[str]]): normal form -> normal forms of its antonyms;
        empty for a language without a lexicon.
    RAISES FileNotFoundError: ``path`` is given and does not exist.
    RAISES ValueError: a line is not two different words joined by one tab.
    """
    if path is None:
        path = ANTONYMS_DIR / f"{lang}.tsv"
        if not path.is_file():
            return {}
    elif not Path(path).is_file():
        raise FileNotFoundError(f"antonym lexicon {path} does not exist")
    table: Dict[str, Set[str]] = {}
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            words = [normalize(field.strip(), lang) for field in fields]
            if len(words) != 2 or not all(words) or words[0] == words[1]:
                raise ValueError(
                    f"{path}, line {number}: expected two different words joined by a tab "
                    f"(word<TAB>word), got {line!r}"
                )
            a, b = words
            table.setdefault(a, set()).add(b)
            table.setdefault(b, set()).add(a)
    return {word: frozenset(opposed) for word, opposed in table.items()}


def are_antonyms(a: str, b: str, lang: str) -> bool:
    """Whether two words are opposed in the language's lexicon (in either order, any
    case; Latin u/v and i/j folded).

    a (str): a word (a lemma, or an English multiword lemma such as "at the least").
    b (str): another word.
    lang (str): the language code.
    RETURNS (bool): True where the lexicon pairs them.
    """
    opposed = load_antonyms(lang).get(normalize(a.strip(), lang))
    return opposed is not None and normalize(b.strip(), lang) in opposed
