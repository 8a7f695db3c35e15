"""Figures of thought: antithesis and the rhetorical question, proposed by rules.

**Antithesis** (opposed ideas set against each other) is proposed in four shapes, each a
candidate with two members (the opposed cola or phrases) and the opposed words as its
support (one support range per side, two where two pairs are opposed):

* ``corrective``: a negation and, later in its sentence, a corrective conjunction: "not a
  victory of party, but a celebration of freedom", *non ministeriis ... sed moribus*,
  "nicht ... sondern" (``NEGATIONS``, ``CORRECTIVES``); "not only ... but also" and its
  kin are additive, not opposed (``ADDITIVE``, ``ALSO``);
* ``negated``: "X, not Y" (a colon opened by a negation after a colon of its sentence);
* ``antonyms``: two words the antonym lexicon (``antonyms``) opposes, in one colon or
  in cola at most ``MAX_COLON_GAP`` apart in one sentence or adjacent sentences;
* ``contrast``: a colon opened by a contrastive connective (``CONTRASTS``: but, yet,
  whereas; *autem*, *vero*, *at*; *aber*, *doch*, *dagegen*) after a colon of its
  sentence; the opposed words are the first content words the two cola do not share.

**Rhetorical question**: every question in the text, one candidate per question mark:
from the start of its sentence, or the previous question mark in it, to the mark. The
scorer (``features``: interrogative opening, particles such as *num*, *nonne*, "doch",
a question series, an answer that follows, dialogue) tells the rhetorical ones from
questions that ask.

The cue lists hold the languages of the rhetoric corpus (Latin, English, German);
Chinese gets no candidate (the corpus holds no Chinese to fit or calibrate on).
"""

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from .antonyms import load_antonyms
from .candidates import Candidate, Range, make_candidate
from .segment import QUESTION_MARKS, Segmentation
from .words import ColonWords, Words, words_of

FIGURES = ("antithesis", "rhetorical_question")
LANGUAGES = ("la", "en", "de")
# the shapes of an antithesis candidate (``Candidate.members`` cannot say which: the
# features read it from here by position)
SHAPES = ("corrective", "negated", "antonyms", "contrast")
MAX_CORRECTIVE_TOKENS = 40  # from the negation to the corrective conjunction
MAX_SIDE_WORDS = 5  # content words of one side of a corrective antithesis in its support
MAX_COLON_GAP = 2  # antonyms in cola at most this far apart
MAX_INNER_WORDS = 10  # antonyms in one colon at most this many words apart
MAX_COLON_WORDS = 40  # content words of a colon compared with another colon's
RUN_SENTENCES = 20  # a wording proposed again within this many sentences: one run

NEGATIONS: Dict[str, FrozenSet[str]] = {
    "en": frozenset("not n't no never".split()),
    "la": frozenset("non nec neque haud nihil nemo numquam nusquam".split()),
    "de": frozenset(
        "nicht kein keine keinen keinem keiner keines nie niemals nichts niemand".split()
    ),
}
CORRECTIVES: Dict[str, FrozenSet[str]] = {
    "en": frozenset("but rather instead".split()),
    "la": frozenset("sed uerum at immo set".split()),
    "de": frozenset("sondern vielmehr".split()),
}
# after the negation: "not only", *non solum*, "nicht nur": additive, not opposed
ADDITIVE: Dict[str, FrozenSet[str]] = {
    "en": frozenset("only merely just simply alone".split()),
    "la": frozenset("solum modo tantum solummodo tantummodo".split()),
    "de": frozenset("nur bloß bloss allein lediglich".split()),
}
# after the corrective conjunction: "but also", *sed etiam*, "sondern auch"
ALSO: Dict[str, FrozenSet[str]] = {
    "en": frozenset("also too".split()),
    "la": frozenset("etiam quoque".split()),
    "de": frozenset("auch".split()),
}
# "no ... but", "nothing but": the "but" of an exception ("no appeal but to force"), not
# of a correction
EXCEPTIVE: Dict[str, FrozenSet[Tuple[str, str]]] = {
    "en": frozenset((neg, "but") for neg in ("no", "nothing", "none", "nobody")),
}
CONTRASTS: Dict[str, FrozenSet[str]] = {
    "en": frozenset("but yet whereas while however".split()),
    "la": frozenset("sed autem uero at tamen contra uerum".split()),
    "de": frozenset("aber doch dagegen jedoch hingegen während sondern".split()),
}
# a word and its negation by a prefix ("possible" / "impossible")
NEGATIVE_PREFIXES: Dict[str, Tuple[str, ...]] = {
    "en": ("un", "in", "im", "il", "ir", "dis", "non"),
    "la": ("in", "im", "ir", "il", "dis", "ne"),
    "de": ("un", "miss"),
}
SENTENCE_FINAL = frozenset([".", "!", "?", "…", "...", ";", "。", "！", "？"])


def _side(words: Words, seg: Segmentation, start: int, end: int, to_colon: bool) -> List[Range]:
    """One side of a correction in its support: its first ``MAX_SIDE_WORDS`` content
    words in [start, end) (with ``to_colon``: up to the end of the first word's colon),
    adjacent ones joined into one range; empty where there is none."""
    first = _next_word(words, start, end)
    if first is None:
        return []
    colon = int(seg.colon_of[first])
    stop = min(end, int(seg.ends[colon])) if to_colon and colon >= 0 else end
    chosen: List[int] = []
    for t in range(first, stop):
        if words.is_content[t]:
            chosen.append(t)
            if len(chosen) == MAX_SIDE_WORDS:
                break
    ranges: List[Range] = []
    for t in chosen:
        if ranges and ranges[-1][1] == t:
            ranges[-1] = (ranges[-1][0], t + 1)
        else:
            ranges.append((t, t + 1))
    return ranges


def _last_content(words: Words, start: int, end: int) -> Optional[Range]:
    """The stretch of the last ``MAX_SIDE_WORDS`` content words in [start, end), as one
    token range; None where there is none."""
    chosen: List[int] = []
    for t in range(end - 1, start - 1, -1):
        if words.is_content[t]:
            chosen.append(t)
            if len(chosen) == MAX_SIDE_WORDS:
                break
    if not chosen:
        return None
    return chosen[-1], chosen[0] + 1


def _colon_span(seg: Segmentation, c: int) -> Range:
    return int(seg.starts[c]), int(seg.ends[c])


def _sentence_starts(seg: Segmentation) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): per token, the first token of its sentence."""
    sent = seg.token_sentence
    starts = numpy.concatenate(([0], numpy.flatnonzero(numpy.diff(sent)) + 1))
    return starts[sent]


def corrective_candidates(
    words: Words, seg: Segmentation, cw: ColonWords
) -> List[Tuple[str, Candidate]]:
    """ "not X but Y" and "X, not Y" (see the module docstring). A corrective
    conjunction pairs with the nearest negation before it in its sentence (*non
    pecuniae, non orbitati, ... sed sibi ipsi*: the last one)."""
    lang = words.lang
    negations, correctives = NEGATIONS.get(lang), CORRECTIVES.get(lang)
    if not negations:
        return []
    forms, n = words.forms, len(words.forms)
    sent_start = _sentence_starts(seg)
    found: List[Tuple[str, Candidate]] = []
    additive, also = ADDITIVE[lang], ALSO[lang]
    last_negation = -1
    for j in range(n):
        form = forms[j]
        if form in negations and words.is_word[j]:
            after = _next_word(words, j + 1, n)
            last_negation = -1 if after is not None and forms[after] in additive else j
            _negated(words, seg, cw, j, found)
            continue
        if form not in correctives or not words.is_word[j] or last_negation < 0:
            continue
        i, last_negation = last_negation, -1
        if j - i > MAX_CORRECTIVE_TOKENS or i < int(sent_start[j]) or j - i < 2:
            continue
        nxt = _next_word(words, j + 1, n)
        if nxt is None or forms[nxt] in also:
            continue
        if (forms[i], form) in EXCEPTIVE.get(lang, ()):
            continue
        x = _side(words, seg, i + 1, j, False)
        colon = int(seg.colon_of[nxt])
        y_end = int(seg.ends[colon]) if colon >= 0 else nxt + 1
        y = _side(words, seg, j + 1, y_end, True)
        if x and y:
            found.append(("corrective", make_candidate("antithesis", [(i, j), (j, y_end)], x + y)))
    return found


def _negated(
    words: Words, seg: Segmentation, cw: ColonWords, i: int, found: List[Tuple[str, Candidate]]
) -> None:
    """ "X, not Y": the negation at token i opens a colon after a colon of its sentence."""
    c = int(seg.colon_of[i])
    if c <= 0 or int(cw.first[c]) != i or int(seg.sentence[c - 1]) != int(seg.sentence[c]):
        return
    y = _side(words, seg, i + 1, int(seg.ends[c]), True)
    x = _last_content(words, int(seg.starts[c - 1]), int(seg.ends[c - 1]))
    if x is not None and y:
        members = [_colon_span(seg, c - 1), _colon_span(seg, c)]
        found.append(("negated", make_candidate("antithesis", members, [x] + y)))


def _next_word(words: Words, start: int, n: int) -> Optional[int]:
    for t in range(start, n):
        if words.is_word[t]:
            return t
    return None


@lru_cache(maxsize=200_000)
def latin_entry(form: str) -> str:
    """The packaged Latin lexicon's lemma of a normalised form ("" where none; cached
    per form)."""
    lexicon = load_antonyms("la")
    return _latin_entry(form, lexicon, _latin_stems(lexicon))


def _latin_entry(form: str, lexicon: Dict[str, FrozenSet[str]], stems: Dict[str, str]) -> str:
    """The lexicon lemma of a Latin form: the form itself, else the lemma whose stem
    (``latin_stem``) is the longest prefix of the form leaving an ending of at most
    five letters; "" where none."""
    if form in lexicon:
        return form
    for k in range(len(form) - 1, 2, -1):
        if len(form) - k > 5:
            break
        lemma = stems.get(form[:k])
        if lemma is not None:
            return lemma
    return ""


def latin_stem(lemma: str) -> str:
    """The stem of a Latin lexicon lemma: without its last two letters (*bonus* ->
    *bon*, *vita* -> *vi*...), at least three letters (*vita* -> *vit*)."""
    return lemma[: max(3, len(lemma) - 2)]


_LATIN_STEMS: Dict[int, Dict[str, str]] = {}


def _latin_stems(lexicon: Dict[str, FrozenSet[str]]) -> Dict[str, str]:
    key = id(lexicon)
    if key not in _LATIN_STEMS:
        stems: Dict[str, str] = {}
        for lemma in sorted(lexicon, key=len):
            stems.setdefault(latin_stem(lemma), lemma)
        _LATIN_STEMS[key] = stems
    return _LATIN_STEMS[key]


def antonym_pairs(words: Words, tokens: Optional[Sequence[int]] = None) -> Dict[int, str]:
    """The tokens with an entry in the antonym lexicon, and that entry.

    tokens (Optional[Sequence[int]]): the tokens to look up (None: every token).
    RETURNS (Dict[int, str]): token -> its lexicon entry.
    """
    lexicon = load_antonyms(words.lang)
    if not lexicon:
        return {}
    content = words.is_content
    todo = range(len(words.forms)) if tokens is None else tokens
    entries: Dict[int, str] = {}
    if words.lang == "la":
        for t in todo:
            if content[t]:
                entry = latin_entry(words.forms[t])
                if entry:
                    entries[t] = entry
        return entries
    keys = words.lemmas if words.lemmas is not None else words.forms
    for t in todo:
        if content[t]:
            key = keys[t].lower()
            if key in lexicon:
                entries[t] = key
    return entries


def opposed(words: Words, a: int, b: int, entries: Dict[int, str], lexicon: Dict) -> bool:
    """Whether tokens a and b are opposed words: antonyms in the lexicon, or one is the
    other with a negative prefix ("possible" / "impossible", *felix* / *infelix*,
    "gesund" / "ungesund"); both content words."""
    if a in entries and b in entries and entries[b] in lexicon.get(entries[a], ()):
        return True
    x, y = words.forms[a], words.forms[b]
    if len(x) > len(y):
        x, y = y, x
    if len(x) < 3 or x == y:
        return False
    return any(y == prefix + x for prefix in NEGATIVE_PREFIXES.get(words.lang, ()))


def is_merism(words: Words, a: int, b: int) -> bool:
    """Whether opposed words a < b make a merism, a whole named by its two ends, not an
    antithesis: joined by a coordinating conjunction with at most one function word
    between ("large and small", "North and South", "external or internal", *publici
    privatique* with its enclitic, *facti dictive*)."""
    between = [t for t in range(a + 1, b) if words.is_word[t]]
    if len(between) > 2 or any(words.is_content[t] for t in between):
        return False
    if any(words.is_conj[t] for t in between):
        return True
    form = words.forms[b]
    return words.lang == "la" and not between and form.endswith(("que", "ue")) and len(form) > 4


def _prefixed(words: Words) -> Set[int]:
    """The content tokens in a negative-prefix relation with another word of the doc
    ("possible" and "impossible" both; ``NEGATIVE_PREFIXES``)."""
    prefixes = NEGATIVE_PREFIXES.get(words.lang, ())
    at: Dict[str, List[int]] = {}
    for t, form in enumerate(words.forms):
        if words.is_content[t]:
            at.setdefault(form, []).append(t)
    found: Set[int] = set()
    for form, tokens in at.items():
        for prefix in prefixes:
            if form.startswith(prefix) and len(form) - len(prefix) >= 3:
                base = at.get(form[len(prefix) :])
                if base:
                    found.update(tokens)
                    found.update(base)
    return found


def antonym_candidates(
    words: Words, seg: Segmentation, cw: ColonWords
) -> List[Tuple[str, Candidate]]:
    """Two opposed words (``opposed``), in one colon (at most ``MAX_INNER_WORDS`` words
    apart) or in cola at most ``MAX_COLON_GAP`` apart of one sentence or adjacent ones."""
    entries = antonym_pairs(words)
    lexicon = load_antonyms(words.lang)
    opposable = set(entries) | _prefixed(words)
    if len(opposable) < 2:
        return []
    by_colon: Dict[int, List[int]] = {}
    for t in sorted(opposable):
        c = int(seg.colon_of[t])
        if c >= 0:
            by_colon.setdefault(c, []).append(t)
    word_cum = numpy.concatenate(([0], numpy.cumsum(words.is_word))).tolist()
    found: List[Tuple[str, Candidate]] = []
    for c, tokens in sorted(by_colon.items()):
        for d in range(c, min(c + MAX_COLON_GAP + 1, len(seg))):
            if d not in by_colon or abs(int(seg.sentence[d]) - int(seg.sentence[c])) > 1:
                continue
            if d == c:  # a window of MAX_INNER_WORDS words: linear in the colon
                pairs = [
                    (a, b)
                    for k, a in enumerate(tokens)
                    for b in tokens[k + 1 : k + 1 + MAX_INNER_WORDS]
                    if word_cum[b] - word_cum[a] <= MAX_INNER_WORDS
                    and opposed(words, a, b, entries, lexicon)
                    and not is_merism(words, a, b)
                ]
            else:  # the first MAX_COLON_WORDS content words of each colon
                pairs = [
                    (a, b)
                    for a in tokens[:MAX_COLON_WORDS]
                    for b in by_colon[d][:MAX_COLON_WORDS]
                    if opposed(words, a, b, entries, lexicon)
                ]
            if not pairs:
                continue
            members = [_colon_span(seg, c)] if d == c else [
                _colon_span(seg, c), _colon_span(seg, d)]  # fmt: skip
            support = sorted({r for a, b in pairs[:2] for r in ((a, a + 1), (b, b + 1))})
            found.append(
                ("antonyms", make_candidate("antithesis", members, support, whole_cola=True))
            )
    return found


def contrast_candidates(
    words: Words, seg: Segmentation, cw: ColonWords
) -> List[Tuple[str, Candidate]]:
    """A colon opened by a contrastive connective after a colon of its sentence (or the
    sentence before); the support: the first content word of each colon that the other
    does not hold (by lemma or stem)."""
    contrasts = CONTRASTS.get(words.lang)
    if not contrasts:
        return []
    keys = words.stem_codes
    found: List[Tuple[str, Candidate]] = []
    for c in range(1, len(seg)):
        first = int(cw.first[c])
        if first < 0 or words.forms[first] not in contrasts:
            continue
        if int(seg.sentence[c]) - int(seg.sentence[c - 1]) > 1:
            continue
        if _additive(words, int(seg.starts[c - 1]), int(seg.ends[c]), first):
            continue
        a_words = [t for t in words_of(cw, c - 1).tolist() if words.is_content[t]]
        b_words = [t for t in words_of(cw, c).tolist()[1:] if words.is_content[t]]
        if not a_words or not b_words:
            continue
        a_keys, b_keys = {int(keys[t]) for t in a_words}, {int(keys[t]) for t in b_words}
        a_own = [t for t in a_words if int(keys[t]) not in b_keys]
        b_own = [t for t in b_words if int(keys[t]) not in a_keys]
        if not a_own or not b_own:
            continue
        a, b = _same_pos_pair(words, a_own, b_own)
        found.append(
            (
                "contrast",
                make_candidate(
                    "antithesis",
                    [_colon_span(seg, c - 1), _colon_span(seg, c)],
                    [(a, a + 1), (b, b + 1)],
                    whole_cola=True,
                ),
            )
        )
    return found


def _additive(words: Words, start: int, end: int, connective: int) -> bool:
    """Whether a connective continues an additive "not only ... but (also)": "also",
    *etiam*, *quoque*, "auch" within two words after it, or "not only", *non solum*,
    *non modo*, "nicht nur" in the cola before it."""
    lang, forms = words.lang, words.forms
    negations, additive, also = NEGATIONS[lang], ADDITIVE[lang], ALSO[lang]
    after = [t for t in range(connective + 1, min(end, connective + 4)) if words.is_word[t]]
    if any(forms[t] in also for t in after[:2]):
        return True
    before = [t for t in range(start, connective) if words.is_word[t]]
    return any(forms[x] in negations and forms[y] in additive for x, y in zip(before, before[1:]))


def _same_pos_pair(words: Words, a_own: Sequence[int], b_own: Sequence[int]) -> Tuple[int, int]:
    """The first pair of own words with one part of speech (nouns and adjectives
    first), else the first own word of each colon."""
    if words.pos is not None:
        for tag in ("NOUN", "ADJ", "VERB", "ADV"):
            a = [t for t in a_own if words.pos[t] == tag]
            b = [t for t in b_own if words.pos[t] == tag]
            if a and b:
                return a[0], b[0]
    return a_own[0], b_own[0]


def question_candidates(words: Words, seg: Segmentation) -> List[Candidate]:
    """One candidate per question mark: from the start of its sentence, or the word
    after the previous sentence-final mark, to the mark (see the module docstring)."""
    forms, n = words.forms, len(words.forms)
    sent_start = _sentence_starts(seg)
    found: List[Candidate] = []
    previous = -1  # the last sentence-final mark
    for t in range(n):
        form = forms[t]
        if form not in SENTENCE_FINAL:
            continue
        if form in QUESTION_MARKS:
            start = max(int(sent_start[t]), previous + 1)
            while start < t and not words.is_word[start]:
                start += 1
            if start < t:
                found.append(make_candidate("rhetorical_question", [(start, t + 1)], []))
        previous = t
    return found


def thought_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords, wanted: Set[str]
) -> Tuple[List[Candidate], List[str]]:
    """The candidates of the figures of thought in ``wanted``.

    RETURNS (Tuple[List[Candidate], List[str]]): the candidates and, per candidate, its
        shape (``SHAPES``; "question" for a question).
    """
    if words.lang not in LANGUAGES:
        return [], []
    shaped: List[Tuple[str, Candidate]] = []
    if "antithesis" in wanted:
        shaped += corrective_candidates(words, seg, cw)
        shaped += antonym_candidates(words, seg, cw)
        shaped += contrast_candidates(words, seg, cw)
        shaped = _once_per_run(_distinct(shaped), words, seg)
    if "rhetorical_question" in wanted:
        shaped += [("question", c) for c in _question_runs(question_candidates(words, seg), words)]
    return [c for _, c in shaped], [s for s, _ in shaped]


def _question_runs(questions: List[Candidate], words: Words) -> List[Candidate]:
    """A question repeated word for word right after itself ("why? why? why?") is one
    candidate, the first; a question asked again later ("Quid? ... Quid?") is another."""
    kept: List[Candidate] = []
    previous: Optional[Tuple[Tuple[str, ...], int]] = None
    for cand in questions:
        start, end = cand.members[0]
        key = tuple(words.forms[t] for t in range(start, end) if words.is_word[t])
        repeated = previous is not None and previous[0] == key and previous[1] >= start - 1
        previous = (key, end)
        if not repeated:
            kept.append(cand)
    return kept


def _once_per_run(
    shaped: List[Tuple[str, Candidate]], words: Words, seg: Segmentation
) -> List[Tuple[str, Candidate]]:
    """A run of one antithesis repeated word for word becomes its first candidate: a
    candidate whose support words were proposed at most
    ``RUN_SENTENCES`` sentences before is left out ("good, bad, good, bad, ..."), so
    repetition of any length costs one candidate per distinct wording."""
    last: Dict[Tuple[str, ...], int] = {}
    kept: List[Tuple[str, Candidate]] = []
    sentence = seg.token_sentence
    for shape, cand in shaped:
        ranges = cand.support or cand.members
        key = tuple(words.forms[t] for s, e in ranges for t in range(s, e) if words.is_word[t])
        here = int(sentence[cand.start])
        before = last.get(key)
        last[key] = here
        if before is not None and here - before <= RUN_SENTENCES:
            continue
        kept.append((shape, cand))
    return kept


def _distinct(shaped: List[Tuple[str, Candidate]]) -> List[Tuple[str, Candidate]]:
    """One candidate per pair of opposed words: the first shape in ``SHAPES`` order."""
    order = {shape: k for k, shape in enumerate(SHAPES)}
    kept: Dict[Tuple[Range, ...], Tuple[str, Candidate]] = {}
    for shape, cand in sorted(shaped, key=lambda item: order[item[0]]):
        kept.setdefault(cand.support, (shape, cand))
    return sorted(kept.values(), key=lambda item: (item[1].start, item[1].end))


# --- features ----------------------------------------------------------------------------

INTERROGATIVES: Dict[str, FrozenSet[str]] = {
    "en": frozenset("who whom whose what which where when why how whither whence".split()),
    "la": frozenset(
        "quis quid cur quare quomodo quando ubi unde quo quantus quanta quantum qualis quot "
        "quotiens quamdiu quousque quidnam quisnam ecquis ecquid utrum".split()
    ),
    "de": frozenset(
        "wer was wen wem wessen wie warum weshalb wieso wo woher wohin wann welche welcher "
        "welches welchen welchem wozu womit wodurch worauf woran".split()
    ),
}
# a yes/no question opens with a finite verb (English auxiliaries; German verbs are read
# from the tags)
YES_NO_OPENERS: Dict[str, FrozenSet[str]] = {
    "en": frozenset(
        "do does did is are was were am have has had can could shall should will would may "
        "might must dare".split()
    ),
}
PARTICLES: Dict[str, FrozenSet[str]] = {
    "en": frozenset("not n't".split()),
    "la": frozenset("num nonne an numquid ecquid anne".split()),
    "de": frozenset("etwa denn doch wohl nicht".split()),
}
SECOND_PERSON: Dict[str, FrozenSet[str]] = {
    "en": frozenset("you your yours ye thou thee thy".split()),
    "la": frozenset("tu te tibi tuus tua tuum uos uobis uester uestra uestrum".split()),
    "de": frozenset("du dich dir dein deine ihr euch euer eure sie ihnen".split()),
}
# the next line opens with a speaker's name in capitals and a full stop
SPEAKER_LINE = re.compile(r"[\s\"'»«“”]*\n\s*[A-ZÄÖÜ][A-ZÄÖÜ'’ \-]+[.:]")
QUESTION_WINDOW = 3  # sentences either side of a question that count for its series
ANSWER_MAX_WORDS = 12  # an answer that follows a question is short


def _enclitic_ne(form: str) -> bool:
    """Latin: a first word with the interrogative enclitic -ne ("estne", "videsne")."""
    return len(form) > 4 and form.endswith("ne") and form not in ("bene", "paene", "sine")


def thought_features(
    X: numpy.ndarray,
    doc: Doc,
    words: Words,
    seg: Segmentation,
    candidates: Sequence[Candidate],
    shapes: Sequence[str],
) -> None:
    """Fill the ``THOUGHT_FEATURES`` columns of the figures of thought's rows of ``X``
    in place (the other rows keep 0).

    X (numpy.ndarray): [k, len(FEATURES)] the candidates' features.
    shapes (Sequence[str]): [k] per candidate its shape ("" for the other figures).
    """
    from .features import COLUMN

    if not any(shapes):
        return
    lang, forms, n = words.lang, words.forms, len(words.forms)
    negations = NEGATIONS.get(lang, frozenset())
    contrasts = CONTRASTS.get(lang, frozenset())
    questions = [k for k, shape in enumerate(shapes) if shape == "question"]
    text = doc.text if questions else ""
    q_sentences = [int(seg.token_sentence[candidates[k].end - 1]) for k in questions]
    sentence_of = seg.token_sentence
    for k, shape in enumerate(shapes):
        if not shape:
            continue
        cand, x = candidates[k], X[k]
        if shape != "question":
            x[COLUMN[f"shape_{shape}"]] = 1.0
            support = [t for s, e in cand.support for t in range(s, e)]
            entries = antonym_pairs(words, support)
            x[COLUMN["antonym_pairs"]] = min(_antonym_count(words, cand, entries), 3)
            negated = [any(forms[t] in negations for t in range(s, e)) for s, e in cand.members]
            x[COLUMN["negation_asymmetry"]] = float(len(negated) > 1 and len(set(negated)) > 1)
            if len(cand.members) > 1:
                second = _next_word(words, cand.members[1][0], cand.members[1][1])
                x[COLUMN["contrast_word"]] = float(
                    second is not None and forms[second] in contrasts
                )
            if words.pos is not None and len(cand.support) > 1:
                x[COLUMN["support_same_pos"]] = float(
                    words.pos[cand.support[0][0]] == words.pos[cand.support[1][0]]
                )
            continue
        start, end = cand.members[0]
        tokens = [t for t in range(start, end) if words.is_word[t]]
        opening = tokens[:3]
        x[COLUMN["q_interrogative"]] = float(
            any(forms[t] in INTERROGATIVES.get(lang, ()) for t in tokens[:4])
        )
        first = tokens[0] if tokens else start
        x[COLUMN["q_yes_no"]] = float(
            forms[first] in YES_NO_OPENERS.get(lang, ())
            or (lang == "de" and words.pos is not None and words.pos[first] in ("VERB", "AUX"))
            or (lang == "la" and _enclitic_ne(forms[first]))
        )
        x[COLUMN["q_particle"]] = float(
            any(forms[t] in PARTICLES.get(lang, ()) for t in tokens[:6])
            or (lang == "la" and any(_enclitic_ne(forms[t]) for t in opening))
        )
        x[COLUMN["q_negated"]] = float(any(forms[t] in negations for t in tokens))
        here = int(sentence_of[end - 1])
        near = (
            bisect_right(q_sentences, here + QUESTION_WINDOW)
            - bisect_left(q_sentences, here - QUESTION_WINDOW)
            - 1
        )
        x[COLUMN["q_series"]] = float(numpy.log1p(max(near, 0)))
        x[COLUMN["q_answer"]] = float(_answered(words, seg, end, n))
        x[COLUMN["q_dialogue"]] = float(_ends_speech(doc, text, end))
        x[COLUMN["q_words"]] = float(numpy.log1p(len(tokens)))
        x[COLUMN["q_second_person"]] = float(
            any(forms[t] in SECOND_PERSON.get(lang, ()) for t in tokens)
        )


def _antonym_count(words: Words, cand: Candidate, entries: Dict[int, str]) -> int:
    """The pairs of opposed words (``opposed``) among the candidate's support words:
    across its two members, or within its one member (bounded by the support's size)."""
    lexicon = load_antonyms(words.lang)
    tokens = [t for s, e in cand.support for t in range(s, e) if words.is_content[t]]
    if len(cand.members) > 1:
        split = cand.members[1][0]
        first = [t for t in tokens if t < split]
        second = [t for t in tokens if t >= split]
        return sum(opposed(words, a, b, entries, lexicon) for a in first for b in second)
    return sum(
        opposed(words, a, b, entries, lexicon)
        for i, a in enumerate(tokens)
        for b in tokens[i + 1 :]
    )


def _answered(words: Words, seg: Segmentation, end: int, n: int) -> bool:
    """Whether a short statement (not a question) follows the question: hypophora."""
    words_after = 0
    for t in range(end, n):
        form = words.forms[t]
        if form in QUESTION_MARKS:
            return False
        if form in SENTENCE_FINAL:
            return words_after > 0
        if words.is_word[t]:
            words_after += 1
            if words_after > ANSWER_MAX_WORDS:
                return False
    return words_after > 0


def _ends_speech(doc: Doc, text: str, end: int) -> bool:
    """Whether the question ends a speech of a play that another speaker answers: the
    line after it opens with a speaker's name in capitals ("KOTTWITZ. Von mir.").

    text (str): ``doc.text`` (read once per doc).
    """
    if end >= len(doc):
        return False
    last = doc[end - 1]
    after = last.idx + len(last.text)
    return SPEAKER_LINE.match(text, after, after + 200) is not None
