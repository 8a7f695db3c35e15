"""The words of a doc as the figure rules see them: normalised forms, lemmas, stop words
and conjunctions per language, as flat arrays (one entry per token).

Normal form (``normalize``): lower case; Latin ``v`` -> ``u`` and ``j`` -> ``i`` (editions
spell "uenit"/"venit", "iam"/"jam"). A *word* is a token that is neither punctuation,
whitespace nor a symbol. A *content word* is a word that is not a stop word (spaCy's
stop list of the language plus ``EXTRA_STOP``), holds a letter, and, where the doc is
tagged, has an open-class part of speech (``CONTENT_POS``).
"""

import re
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple

import numpy
from spacy.attrs import IS_PUNCT, IS_SPACE, IS_STOP, LEMMA, ORTH, POS
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc

from ..stems import STEM_MIN_CHARS, same_stem

IDS_TO_POS = {int(v): k for k, v in POS_IDS.items()}
NON_WORD_POS = frozenset(["PUNCT", "SYM", "SPACE"])
CONTENT_POS = frozenset(["NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM", "INTJ", "X"])
# parts of speech of words too common or too accidental to carry a figure on their own
# across unrelated sentences (articles, pronouns, names, numbers)
WEAK_POS = frozenset(["DET", "PRON", "ADP", "AUX", "CCONJ", "SCONJ", "PART", "PROPN", "NUM"])
# Chinese numerals, measure words, units and date characters: their repetition is the
# wording of statistics and dates (平方公里, 人, 年, 1960年), not a figure
ZH_NUMERAL_CHARS = frozenset("〇零一二三四五六七八九十百千万萬亿億两兩几幾半第")
ZH_UNITS = frozenset(
    "年 月 日 号 號 时 時 秒 岁 歲 世纪 世紀 年代 人 位 个 個 只 隻 条 條 张 張 次 件 座 "
    "层 層 栋 棟 届 屆 辆 輛 架 艘 元 圆 圓 块 塊 米 公尺 公里 千米 厘米 公分 毫米 平方 "
    "平方米 平方公尺 平方公里 公顷 公頃 立方米 公斤 千克 克 吨 噸 倍 户 戶 万人 萬人 %".split()
)

# coordinating conjunctions per language (spaCy's data has no such list)
CONJUNCTIONS: Dict[str, FrozenSet[str]] = {
    "la": frozenset(["et", "ac", "atque", "aut", "vel", "uel", "nec", "neque", "sed"]),
    "de": frozenset(["und", "oder", "aber", "noch", "sowie"]),
    "en": frozenset(["and", "or", "nor", "but"]),
    "zh": frozenset(["和", "与", "及", "而", "且", "或"]),
}
# connectives that join a colon to the one before (a colon opening with one, or with a
# ``mark``/``cc`` word, is not asyndetic)
CONNECTIVES: Dict[str, FrozenSet[str]] = {
    "la": frozenset(
        "si nisi quod quia cum ut ne nam enim autem tamen igitur ergo quam dum".split()
    ),
    "de": frozenset("wenn weil dass daß ob als denn doch so dann jedoch sondern".split()),
    "en": frozenset("if when because although though while since for so yet then that".split()),
    "zh": frozenset("则 就 便 又 但 却 因 所以 因为 如果 虽然 然而 而且 故".split()),
}
# the languages whose edge figures compare words up to their ending (``stem_codes``)
STEM_LANGUAGES = frozenset(["la", "de"])
# Latin enclitic -que: a word ending in it, except the words that merely end so
ENCLITIC_QUE_EXCEPTIONS = frozenset(
    "quoque atque neque itaque usque quisque quaeque quodque quidque quicque utique ubique "
    "undique denique plerumque uterque utrumque cuique quemque quamque namque "
    "absque quinque quousque aeque utroque unusquisque quandoque".split()
)
EXTRA_STOP: Dict[str, FrozenSet[str]] = {
    "la": frozenset(
        "et ac atque aut vel uel nec neque sed in ad cum de ex e a ab per pro sub non est sunt "
        "esse erat qui quae quod hic haec hoc is ea id ille illa illud se sibi ut ne si".split()
    ),
    "zh": frozenset("的 了 是 在 也 就 都 而 之 其 者 乎 矣 焉 哉 以 于 於 则 所".split()),
}


# a file name, address or URL: no word of a figure ("report.pdf", "a@b", "http://")
MACHINE_TOKEN = re.compile(r"[@/\\]|[^\W\d_]\.[^\W\d_]{2}")


@lru_cache(maxsize=500_000)
def normalize(text: str, lang: str) -> str:
    """The normal form of a word: lower case; Latin u/v and i/j folded."""
    form = text.lower()
    if lang == "la":
        form = form.replace("v", "u").replace("j", "i")
    return form


class StringTable:
    """Values of strings kept across docs and looked up by hash for a whole array at
    once (hashes are the same in every vocab): a sorted array of the known hashes, so
    that a doc costs Python work only for the strings it is the first to hold.

    describe (Callable[[str], Tuple[Any, Tuple[bool, ...]]]): a string's value and flags.
    width (int): the number of flags.
    limit (int): the most strings kept (then the table starts afresh).
    """

    def __init__(
        self, describe: Callable[[str], Tuple[Any, Tuple[bool, ...]]], width: int, limit: int
    ) -> None:
        self.describe = describe
        self.width = width
        self.limit = limit
        self.clear()

    def clear(self) -> None:
        self.size = 0
        self.keys = numpy.zeros(0, dtype=numpy.uint64)  # [v] the known hashes, sorted
        self.rows = numpy.zeros(0, dtype=numpy.int64)  # [v] the row of each key
        self.values = numpy.empty(64, dtype=object)  # [rows] the value of each string
        self.flags = numpy.zeros((64, self.width), dtype=bool)  # [rows, width]
        self.value_ids = numpy.zeros(64, dtype=numpy.int64)  # [rows] equal values equal ids
        self._ids: Dict[Any, int] = {}

    def lookup(self, strings: Any, hashes: numpy.ndarray) -> numpy.ndarray:
        """The rows of strings, adding those not yet known.

        strings (StringStore): where the hashes resolve.
        hashes (numpy.ndarray): [k] uint64 string hashes.
        RETURNS (numpy.ndarray): [k] their rows in ``values``, ``flags``, ``value_ids``
            (read those after the lookup: adding strings replaces them).
        """
        index = numpy.searchsorted(self.keys, hashes)
        known = index < len(self.keys)
        known[known] = self.keys[index[known]] == hashes[known]
        if not known.all():
            new = numpy.unique(hashes[~known])
            if self.size + len(new) > self.limit:  # start afresh with this doc's strings
                self.clear()
                new = numpy.unique(hashes)
            self._add(strings, new)
            index = numpy.searchsorted(self.keys, hashes)
        return self.rows[index]

    def _add(self, strings: Any, hashes: numpy.ndarray) -> None:
        first, stop = self.size, self.size + len(hashes)
        if stop > len(self.values):
            capacity = max(2 * len(self.values), stop)
            self.values = numpy.concatenate(
                [self.values, numpy.empty(capacity - len(self.values), dtype=object)]
            )
            self.flags = numpy.concatenate(
                [self.flags, numpy.zeros((capacity - len(self.flags), self.width), dtype=bool)]
            )
            self.value_ids = numpy.concatenate(
                [self.value_ids, numpy.zeros(capacity - len(self.value_ids), dtype=numpy.int64)]
            )
        described = [self.describe(strings[key]) for key in hashes.tolist()]
        values = [value for value, _ in described]
        self.values[first:stop] = values
        self.flags[first:stop] = [flags for _, flags in described]
        self.value_ids[first:stop] = [self._ids.setdefault(v, len(self._ids)) for v in values]
        self.size = stop
        at = numpy.searchsorted(self.keys, hashes)
        self.keys = numpy.insert(self.keys, at, hashes)
        self.rows = numpy.insert(self.rows, at, numpy.arange(first, stop, dtype=numpy.int64))


def _describe(
    lang: str,
) -> Callable[[str], Tuple[str, Tuple[bool, bool, bool, bool, bool, bool]]]:
    """The normal form of a string and its flags (holds a letter or digit, holds a
    letter, a listed conjunction, a listed stop word; its text holds a digit, its text
    is a machine token: ``MACHINE_TOKEN``)."""
    conjunctions, stop_words = (
        CONJUNCTIONS.get(lang, frozenset()),
        EXTRA_STOP.get(lang, frozenset()),
    )

    def describe(text: str) -> Tuple[str, Tuple[bool, bool, bool, bool, bool, bool]]:
        form = normalize(text, lang)
        flags = (
            any(ch.isalnum() for ch in form),
            any(ch.isalpha() for ch in form),
            form in conjunctions,
            form in stop_words,
            any(ch.isdigit() for ch in text),
            MACHINE_TOKEN.search(text) is not None,
        )
        return form, flags

    return describe


_LEXICONS: Dict[str, StringTable] = {}


def lexicon(lang: str) -> StringTable:
    """RETURNS (StringTable): the normal forms and flags of a language's strings (one
    table per language, kept across docs)."""
    table = _LEXICONS.get(lang)
    if table is None:
        table = _LEXICONS[lang] = StringTable(_describe(lang), 6, 1_000_000)
    return table


def is_enclitic_que(form: str) -> bool:
    """Whether a normalised Latin form carries the enclitic -que ("populusque")."""
    return len(form) > 5 and form.endswith("que") and form not in ENCLITIC_QUE_EXCEPTIONS


class Words(NamedTuple):
    """A doc's tokens as the rules see them (arrays of length n = len(doc)).

    lang (str): the doc's language code.
    forms (List[str]): the normal form of each token.
    lemmas (Optional[List[str]]): the normalised lemma of each token (None: no lemmas).
    pos (Optional[List[str]]): the POS of each token (None: untagged).
    is_word (numpy.ndarray): [n] bool, neither punctuation, space nor symbol.
    is_stop (numpy.ndarray): [n] bool.
    is_content (numpy.ndarray): [n] bool.
    is_conj (numpy.ndarray): [n] bool, a coordinating conjunction (list or CCONJ).
    form_codes (numpy.ndarray): [n] int, equal forms equal codes.
    stem_codes (numpy.ndarray): [n] int, equal codes for one word up to an ending in
        Latin and German (``stem_codes``); elsewhere ``form_codes``.
    has_digit (numpy.ndarray): [n] bool, the token's text holds a digit.
    is_machine (numpy.ndarray): [n] bool, the token's text is a file name, address or
        URL (``MACHINE_TOKEN``).
    """

    lang: str
    forms: List[str]
    lemmas: Optional[List[str]]
    pos: Optional[List[str]]
    is_word: numpy.ndarray
    is_stop: numpy.ndarray
    is_content: numpy.ndarray
    is_conj: numpy.ndarray
    form_codes: numpy.ndarray
    stem_codes: numpy.ndarray
    has_digit: numpy.ndarray
    is_machine: numpy.ndarray


# per POS id: its name, and whether it is a content, non-word or CCONJ tag
_POS_NAMES = numpy.asarray(
    [IDS_TO_POS.get(i, "") for i in range(max(IDS_TO_POS) + 1)], dtype=object
)
_POS_CONTENT = numpy.asarray([name in CONTENT_POS for name in _POS_NAMES], dtype=bool)
_POS_NON_WORD = numpy.asarray([name in NON_WORD_POS for name in _POS_NAMES], dtype=bool)
_POS_CCONJ = _POS_NAMES == "CCONJ"


def stem_codes(lang: str, forms: List[str], form_codes: numpy.ndarray) -> numpy.ndarray:
    """[n] codes that are equal where two forms are one word up to an ending: in Latin
    and German, agreement and case ("nullus" / "nulla", "quanta" / "quanti", "Keinen" /
    "keinen"; ``stems.same_stem`` within groups of forms sharing their first
    ``STEM_MIN_CHARS`` characters), a Latin enclitic -que cut first ("quoniamque" ->
    "quoniam", not "atque"). Other languages: the form codes.

    lang (str): the doc's language code.
    forms (List[str]): the normal form of each token.
    form_codes (numpy.ndarray): [n] codes of the forms, returned for other languages.
    RETURNS (numpy.ndarray): [n] int codes.
    """
    if lang not in STEM_LANGUAGES:
        return form_codes
    distinct = sorted(set(forms))
    cut = {}
    for form in distinct:
        base = form
        if (
            lang == "la"
            and form.endswith("que")
            and len(form) > 5
            and form not in ENCLITIC_QUE_EXCEPTIONS
        ):
            base = form[:-3]
        cut[form] = base
    representative: Dict[str, str] = {}
    groups: Dict[str, List[str]] = {}
    for base in sorted(set(cut.values())):
        groups.setdefault(base[:STEM_MIN_CHARS], []).append(base)
    for bases in groups.values():
        heads: List[str] = []
        for base in bases:  # sorted: a form's stem comes before its longer endings
            head = next(
                (h for h in heads if len(base) >= STEM_MIN_CHARS and same_stem(h, base)), None
            )
            if head is None:
                heads.append(base)
                head = base
            representative[base] = head
    codes: Dict[str, int] = {}
    return numpy.fromiter(
        (codes.setdefault(representative[cut[f]], len(codes)) for f in forms),
        dtype=numpy.int64,
        count=len(forms),
    )


def _first_seen_codes(ids: numpy.ndarray) -> numpy.ndarray:
    """Codes 0, 1, ... of the distinct values of ``ids``, numbered in order of their
    first occurrence."""
    _, first, inverse = numpy.unique(ids, return_index=True, return_inverse=True)
    rank = numpy.empty(len(first), dtype=numpy.int64)
    rank[numpy.argsort(first, kind="stable")] = numpy.arange(len(first))
    return rank[inverse.reshape(-1)]


def doc_words(doc: Doc) -> Words:
    """RETURNS (Words): the arrays the rules read, computed once per doc (the strings'
    forms and flags from the language's table, ``lexicon``; the tags from tables over
    the POS ids: no Python work per token)."""
    lang = doc.lang_
    n = len(doc)
    strings = doc.vocab.strings
    table = lexicon(lang)
    array = doc.to_array([ORTH, LEMMA, POS, IS_PUNCT, IS_SPACE, IS_STOP]).reshape(n, 6)
    orth_codes, orth_index = numpy.unique(array[:, 0], return_inverse=True)
    orth_index = orth_index.reshape(-1)
    unique_rows = table.lookup(strings, orth_codes)
    rows = unique_rows[orth_index]
    flags = table.flags[rows]
    alnum, alpha, listed_conj, listed_stop = flags[:, 0], flags[:, 1], flags[:, 2], flags[:, 3]
    form_array = table.values[rows]
    forms = form_array.tolist()
    # equal normal forms, equal codes (e.g. "Venit" and "uenit"), numbered by the doc's
    # distinct strings in hash order
    form_codes = _first_seen_codes(table.value_ids[unique_rows])[orth_index]
    pos: Optional[List[str]] = None
    content_pos = numpy.ones(n, dtype=bool)
    non_word_pos = numpy.zeros(n, dtype=bool)
    cconj = numpy.zeros(n, dtype=bool)
    if doc.has_annotation("POS"):
        pos_ids = array[:, 2].astype(numpy.int64)
        pos_ids[pos_ids >= len(_POS_NAMES)] = 0  # not a POS id: no name
        pos = _POS_NAMES[pos_ids].tolist()
        content_pos = _POS_CONTENT[pos_ids]
        non_word_pos = _POS_NON_WORD[pos_ids]
        cconj = _POS_CCONJ[pos_ids]
    lemmas: Optional[List[str]] = None
    if doc.has_annotation("LEMMA"):
        lemma_rows = table.lookup(strings, array[:, 1])  # hash 0: the form ""
        lemmas = table.values[lemma_rows].tolist()
        if "" in lemmas:
            lemmas = [lemma or f for lemma, f in zip(lemmas, forms)]
    non_word = (array[:, 3] != 0) | (array[:, 4] != 0) | non_word_pos
    is_word = ~non_word & alnum
    is_stop = is_word & ((array[:, 5] != 0) | listed_stop)
    is_conj = is_word & (listed_conj | cconj)
    is_content = is_word & ~is_stop & ~is_conj & alpha & content_pos
    return Words(
        lang,
        forms,
        lemmas,
        pos,
        is_word,
        is_stop,
        is_content,
        is_conj,
        form_codes,
        stem_codes(lang, forms, form_codes),
        flags[:, 4],
        flags[:, 5],
    )


def is_char_tokenized(doc: Doc) -> bool:
    """Whether a (Chinese) doc is tokenised into single characters."""
    words = [t for t in doc if not (t.is_punct or t.is_space)]
    return bool(words) and all(len(t.text) == 1 for t in words)


class ColonWords(NamedTuple):
    """The words of each colon.

    first (numpy.ndarray): [m] the token of the colon's first word (-1: none).
    last (numpy.ndarray): [m] the token of its last word (-1: none).
    count (numpy.ndarray): [m] its number of words.
    positions (numpy.ndarray): [w] the tokens that are words inside a colon, in order.
    colon (numpy.ndarray): [w] the colon of each of those.
    bounds (List[int]): [m + 1] colon c's words are ``positions[bounds[c]:bounds[c + 1]]``.
    """

    first: numpy.ndarray
    last: numpy.ndarray
    count: numpy.ndarray
    positions: numpy.ndarray
    colon: numpy.ndarray
    bounds: List[int]


def colon_words(is_word: numpy.ndarray, colon_of: numpy.ndarray, n_cola: int) -> ColonWords:
    """RETURNS (ColonWords): the words of each colon, vectorised."""
    positions = numpy.flatnonzero(is_word & (colon_of >= 0))
    colon = colon_of[positions]
    first = numpy.full(n_cola, -1, dtype=numpy.int64)
    last = numpy.full(n_cola, -1, dtype=numpy.int64)
    count = numpy.bincount(colon, minlength=n_cola).astype(numpy.int64)
    if len(positions):  # colon ids do not decrease along the positions
        change = numpy.flatnonzero(numpy.concatenate(([True], colon[1:] != colon[:-1])))
        first[colon[change]] = positions[change]
        ends = numpy.concatenate((change[1:], [len(positions)])) - 1
        last[colon[ends]] = positions[ends]
    bounds = numpy.searchsorted(colon, numpy.arange(n_cola + 1)).tolist()
    return ColonWords(first, last, count, positions, colon, bounds)


def words_of(cw: ColonWords, colon: int) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): the word tokens of one colon."""
    return cw.positions[cw.bounds[colon] : cw.bounds[colon + 1]]


def is_weak(words: "Words", t: int) -> bool:
    """Whether token t is a function word, a stop word, a name or a number: no content
    of its own to make its repetition across unrelated sentences a figure."""
    if not words.is_word[t] or words.is_stop[t] or words.is_conj[t]:
        return True
    if words.pos is not None and words.pos[t] in WEAK_POS:
        return True
    return not any(ch.isalpha() for ch in words.forms[t])


def is_zh_quantity(text: str, pos: Optional[str] = None) -> bool:
    """Chinese: whether a string is a numeral, a measure word or unit, a date or a name
    ("1960年", "平方公里", "人", "三月"; ``pos`` PROPN or NUM)."""
    if pos in ("PROPN", "NUM"):
        return True
    text = text.strip()
    if not text:
        return True
    if text in ZH_UNITS:
        return True
    core = text
    for unit in sorted(ZH_UNITS, key=len, reverse=True):
        if len(core) > len(unit) and core.endswith(unit):
            core = core[: -len(unit)]
            break
    return all(ch.isdigit() or ch in ZH_NUMERAL_CHARS or ch in ".,·:/%-~ " for ch in core)
