"""Repetition in place, wherever the cola begin and end: epizeuxis, ploce (with
epanalepsis) and polyptoton.

* **epizeuxis** (*geminatio*, 反复): a unit of 1-3 words repeated immediately (punctuation
  between allowed: "Words, words, words"), unless an anadiplosis or gradatio already
  links the occurrences ("endurance, endurance produces"); in Chinese an immediately doubled single
  character without punctuation between is reduplication (看看), not a figure; a word
  doubled with nothing between and capitalised the second time only is a heading run into the text
  ("security Security problems"), and weak words only (names, pronouns) repeated over a
  sentence end are the next sentence's subject ("... coalition, MMA. MMA also captured").
* **ploce** (diacope; 反复 with intervals): a content word repeated within
  ``PLOCE_WINDOW`` words, in one colon or adjacent cola, with occurrences not already
  the support of an edge, linking or epizeuxis candidate, and not spread over the
  members of one (there the repetition is the figure's parallelism). Epanalepsis, a
  unit opening a colon that returns at its end, is proposed as ploce
  (``epanalepsis_candidates``).
* **polyptoton** (*traductio*): content words of the same lemma (or, without lemmas or
  where the lemmatizer misses, the same stem: ``stems.same_stem``) in different
  forms within ``POLYPTOTON_WINDOW`` words and ``POLYPTOTON_COLA`` cola (not Chinese).
"""

from collections import Counter, deque
from typing import Deque, Dict, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from ..names import UNTRUSTED_POS
from ..stems import STEM_MIN_CHARS, same_stem, shared_prefix
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate, runs
from .segment import SENTENCE_FINAL, Segmentation
from .words import ColonWords, Words, is_weak

MAX_UNIT = 3
PLOCE_WINDOW = 8
POLYPTOTON_WINDOW = 10
DERIVED_MIN_CHARS = 4  # a word and its derivative: shared opening characters ...
DERIVED_MIN_SHARE = 0.66  # ... and their share of the shorter word
DERIVED_MIN_CHARS_MODERN = 5  # outside Latin: shared characters of a word and its derivative
DERIVED_MAX_SUFFIX = 4  # ... and the most characters the derivative adds ("-lich", "-sion")
POLYPTOTON_COLA = 3  # cola apart ("soles occidere et redire possunt: nobis, cum semel occidit")
EPANALEPSIS_COLA = 4  # cola from the opening of a unit to its return at an end
EPANALEPSIS_WORDS = 12  # words between the opening and the return
FRAME_POS = frozenset(["DET", "ADP", "CCONJ", "SCONJ", "PART", "PUNCT", "NUM", "PROPN"])
RECENT = 8  # earlier occurrences a word is compared with (polyptoton)
# English auxiliaries: a pronoun returning right after one closes a tag question
# ("They are ..., aren't they?") or a clause the grammar completes ("... being there")
EN_AUXILIARIES = frozenset(
    "am is are was were be been being do does did have has had will would shall should "
    "can could may might must".split()
)


def epizeuxis_candidates(
    doc: Doc, words: Words, cw: ColonWords, explained: Set[int] = frozenset()
) -> List[Candidate]:
    """Units of 1-3 words repeated immediately (see the module docstring); runs whose
    occurrences are all ``explained`` (linking support) are left out."""
    positions = cw.positions
    w = len(positions)
    codes = words.form_codes[positions]
    covered = numpy.zeros(w, dtype=bool)
    zh = words.lang == "zh"
    found: List[Candidate] = []
    for k in range(1, MAX_UNIT + 1):
        if w <= k:
            break
        equal = (codes[:-k] == codes[k:]) & ~covered[:-k] & ~covered[k:]
        if not equal.any():
            continue
        for a, e in runs(equal):
            if e - a < k:
                continue
            repetitions = (e - a) // k + 1
            unit = [int(p) for p in positions[a : a + k]]
            if not any(any(ch.isalpha() for ch in words.forms[p]) for p in unit):
                continue
            if k > 1 and all(words.is_stop[p] for p in unit):
                continue
            if k > 1 and len(set(codes[a : a + k].tolist())) == 1:
                continue
            if (
                zh
                and k == 1
                and repetitions == 2
                and positions[a + 1] == positions[a] + 1
                and len(words.forms[unit[0]]) == 1
            ):
                continue  # reduplication (看看), not a figure
            occurrences = [
                (int(positions[a + r * k]), int(positions[a + r * k + k - 1]) + 1)
                for r in range(min(repetitions, MAX_MEMBERS))
            ]
            last = a + (repetitions - 1) * k
            if all(t in explained for s, e in occurrences for t in range(s, e)):
                continue  # a link, not a repetition; a longer unit may still be one ("觚哉！觚哉")
            if repetitions == 2 and _accidental_doubling(doc, words, occurrences, unit):
                continue
            covered[a : last + k] = True
            found.append(
                make_candidate(
                    "epizeuxis",
                    occurrences,
                    occurrences,
                    repetitions,
                    False,
                    end=int(positions[last + k - 1]) + 1,
                )
            )
    return found


def _accidental_doubling(
    doc: Doc, words: Words, occurrences: Sequence[Range], unit: Sequence[int]
) -> bool:
    """Whether two immediate occurrences are an accident of the text, not epizeuxis: a
    word doubled with nothing between and capitalised the second time only (a heading
    run into the text: "security Security problems"), capitalised words only with
    nothing between (a name line doubled: "Dale Dale,"; "O Romeo, Romeo" has its
    comma), or weak words only (names, pronouns, numbers) with a sentence end between
    (the next sentence's subject: "MMA. MMA also")."""
    (s0, e0), (s1, e1) = occurrences[0], occurrences[1]
    first, second = doc[s0].text, doc[s1].text
    if e0 == s1 and e0 - s0 == 1 and first[:1].islower() and second[:1].isupper():
        return True  # "Me me, adsum qui feci": a sentence's first word doubled stays
    capitals = [doc[t].text[:1].isupper() for t in range(s0, e1) if words.is_word[t]]
    if e0 == s1 and words.lang != "zh" and capitals and all(capitals):
        return True  # a name line doubled ("Dale Dale,"; "Sara Shackleton Sara Shackleton")
    between = words.forms[e0:s1]  # normalising changes no punctuation
    return not SENTENCE_FINAL.isdisjoint(between) and all(is_weak(words, t) for t in unit)


def epanalepsis_candidates(words: Words, seg: Segmentation, cw: ColonWords) -> List[Candidate]:
    """Ploce at opposite edges (epanalepsis; Peacham's "echo sound", Puttenham's "slow
    return"): a unit of 1-``MAX_UNIT`` words opening a colon returns as the end of the
    same colon or of one at most ``EPANALEPSIS_COLA`` cola later in the same sentence,
    with 1-``EPANALEPSIS_WORDS`` words between ("Nothing will come of nothing"; "To be, or
    not to be"; "Once more unto the breach, dear friends, once more"; "Ich grolle nicht,
    … ich grolle nicht"). Function words count here (the handbooks' examples are
    pronouns and auxiliaries), but a unit needs one word that is no article,
    preposition, conjunction, particle, number or name. Not Chinese (its word
    segmentation decides nothing here)."""
    if words.lang == "zh":
        return []
    codes = words.form_codes
    sentence = seg.token_sentence
    found: List[Candidate] = []
    m = len(seg)

    if not m or not len(cw.positions):
        return found
    # a return needs the unit's first word among the last MAX_UNIT words of a colon at
    # most EPANALEPSIS_COLA cola on: only cola passing this test are searched
    first_code = numpy.where(cw.count >= 1, codes[numpy.maximum(cw.first, 0)], -1)
    ends = numpy.asarray(cw.bounds[1:])
    # possible[k - 1, c]: a unit of k words opening colon c may return (its first word is
    # the k-th last word of a colon at most EPANALEPSIS_COLA cola on)
    possible = numpy.zeros((MAX_UNIT, m), dtype=bool)
    units = numpy.arange(1, MAX_UNIT + 1)[:, None]
    end_code = numpy.where(  # [MAX_UNIT, m]: the k-th last word of each colon
        cw.count >= units, codes[cw.positions[numpy.maximum(ends - units, 0)]], -2
    )
    for offset in range(min(EPANALEPSIS_COLA + 1, m)):
        possible[:, : m - offset] |= first_code[: m - offset] == end_code[:, offset:]
    opening = possible.any(axis=0)
    if not opening.any():
        return found
    # the words as lists, by word index (colon c: bounds[c] to bounds[c + 1])
    bounds = cw.bounds
    tokens = cw.positions.tolist()
    code = codes[cw.positions].tolist()
    conj = words.is_conj[cw.positions].tolist()
    in_sentence = sentence[cw.positions].tolist()
    pos = words.pos

    def framing(start: int, stop: int) -> bool:
        if all(conj[start:stop]):
            return False
        if pos is None:
            return True
        return any(pos[t] not in FRAME_POS for t in tokens[start:stop])

    opening_cola = numpy.flatnonzero(opening)
    for c, unit_possible in zip(opening_cola.tolist(), possible[:, opening_cola].T.tolist()):
        a0, a1 = bounds[c], bounds[c + 1]
        s_a = in_sentence[a0]
        for k in range(min(MAX_UNIT, a1 - a0), 0, -1):
            if not unit_possible[k - 1] or not framing(a0, a0 + k):
                continue
            unit = code[a0 : a0 + k]
            hit = -1  # the word index of the return
            for d in range(c, min(m, c + EPANALEPSIS_COLA + 1)):
                b0, b1 = bounds[d], bounds[d + 1]
                if b1 - b0 < k or in_sentence[b1 - 1] != s_a:
                    if b1 > b0 and in_sentence[b0] != s_a:
                        break
                    continue
                lo = a0 + k  # the words between: lo to hi
                hi = b1 - k
                if (
                    1 <= hi - lo <= EPANALEPSIS_WORDS
                    and code[hi:b1] == unit
                    # other words between, not the unit again ("word, word, word")
                    and not set(code[lo:hi]).issubset(unit)
                ):
                    hit = hi
                    break
            if hit >= 0 and k == 1 and _after_auxiliary(words, tokens[hit]):
                hit = -1
            if hit >= 0:
                u = (tokens[a0], tokens[a0 + k - 1] + 1)
                v = (tokens[hit], tokens[hit + k - 1] + 1)
                found.append(make_candidate("ploce", [(u[0], v[0]), v], [u, v], 2))
                break
    return found


def _after_auxiliary(words: Words, t: int) -> bool:
    """English: whether the word at ``t`` follows an auxiliary or a negated one: a
    one-word return there is grammar (a tag question, "They are ..., aren't they?"; a
    clause completed, "There have no business being there"), not a figure."""
    if words.lang != "en" or t == 0:
        return False
    before = words.forms[t - 1].lower()
    if words.pos is not None and words.pos[t - 1] == "AUX":
        return True
    return before in EN_AUXILIARIES or before.endswith("n't")


def _stretches(occurrences: Sequence[int]) -> List[Range]:
    """Members of an in-place figure: from each occurrence to the next (the last: itself)."""
    return [(p, q) for p, q in zip(occurrences, occurrences[1:])] + [
        (occurrences[-1], occurrences[-1] + 1)
    ]


def unexplained(occurrences: Sequence[int], explained: Set[int]) -> int:
    return sum(p not in explained for p in occurrences)


def ploce_candidates(
    words: Words, cw: ColonWords, explained: Set[int], structured: Optional[numpy.ndarray] = None
) -> List[Candidate]:
    """Content words repeated within a short window (see the module docstring).

    structured (Optional[numpy.ndarray]): [n] bool, tokens inside the members of an edge
        or linking figure: a repetition across its cola is that figure's parallelism.
    """
    found: List[Candidate] = []
    open_: Dict[
        int, List
    ] = {}  # code -> [occurrences (capped), last word index, last colon, count]
    codes = words.form_codes
    colon_of = numpy.zeros(len(words.forms), dtype=numpy.int64)
    colon_of[cw.positions] = cw.colon

    def close(group: List) -> None:
        if group[3] < 2:
            return
        occ = group[0]
        if structured is not None and structured[occ].all():
            if len({int(colon_of[p]) for p in occ}) > 1:
                return
        if unexplained(occ, explained) >= 2:
            found.append(
                make_candidate("ploce", _stretches(occ), [(p, p + 1) for p in occ], group[3])
            )

    content = words.is_content[cw.positions]
    if not content.any():
        return found
    # only forms occurring twice or more in the doc can repeat
    content_codes = codes[cw.positions[content]]
    keep = numpy.zeros(len(cw.positions), dtype=bool)
    keep[numpy.flatnonzero(content)[numpy.bincount(content_codes)[content_codes] >= 2]] = True
    kept = numpy.flatnonzero(keep)
    zh = words.lang == "zh"
    for j, p, colon, code in zip(
        kept.tolist(),
        cw.positions[kept].tolist(),
        cw.colon[kept].tolist(),
        codes[cw.positions[kept]].tolist(),
    ):
        if zh and len(words.forms[p]) < 2:
            continue
        group = open_.get(code)
        if group is not None and j - group[1] <= PLOCE_WINDOW and colon - group[2] <= 1:
            if len(group[0]) < MAX_MEMBERS:
                group[0].append(p)
            group[1], group[2] = j, colon
            group[3] += 1
            continue
        if group is not None:
            close(group)
        open_[code] = [[p], j, colon, 1]
    for group in open_.values():
        close(group)
    found.sort(key=lambda c: c.start)
    return found


def related_forms(a: str, b: str, lang: str = "la") -> bool:
    """Whether two forms are one word up to an ending (``same_stem``) or a word and its
    derivative sharing at least ``DERIVED_MIN_CHARS`` characters that make
    ``DERIVED_MIN_SHARE`` of the shorter ("indigna" / "indignissimum", "libere" /
    "libertati", "liebten" / "lieben"). Outside Latin a derivative also shares at least
    ``DERIVED_MIN_CHARS_MODERN`` characters and adds a suffix, not a word: the longer
    rest at most ``DERIVED_MAX_SUFFIX`` characters, the shorter at most two ("nation" /
    "national", "extend" / "extension", "Schuld" / "schuldig"; not "rest" /
    "restaurant", "Wüste" / "Wüstengrenzen", "Immobilienrat" / "Immobilienmarkt")."""
    if same_stem(a, b):
        return True
    n = shared_prefix(a, b)
    if n < DERIVED_MIN_CHARS or n < DERIVED_MIN_SHARE * min(len(a), len(b)):
        return False
    if lang == "la":
        return True
    rests = sorted((len(a) - n, len(b) - n))
    return n >= DERIVED_MIN_CHARS_MODERN and rests[0] <= 2 and rests[1] <= DERIVED_MAX_SUFFIX


def polyptoton_candidates(words: Words, cw: ColonWords, explained: Set[int]) -> List[Candidate]:
    """One lemma (or stem) in different forms within a short window (see the module
    docstring). Each content word is compared with the ``RECENT`` content words before
    it that share its lemma or its first ``STEM_MIN_CHARS`` characters (only keys that
    two distinct forms share); the related pairs are joined into groups."""
    if words.lang == "zh":
        return []
    content = words.is_content
    if words.lang in UNTRUSTED_POS:  # a tagger of other Latin: any word not a stop word
        content = words.is_word & ~words.is_stop & ~words.has_digit
    index = numpy.flatnonzero(content[cw.positions])
    if len(index) < 2:
        return []
    tokens = cw.positions[index].tolist()
    all_forms = words.forms
    forms = [all_forms[p] for p in tokens]
    # the keys (lemma; stem) shared by two distinct forms: only tokens with one are compared
    distinct = set(forms)
    stem_count = Counter([f[:STEM_MIN_CHARS] for f in distinct if len(f) >= STEM_MIN_CHARS])
    shared_stems = {stem for stem, count in stem_count.items() if count >= 2}
    # a form shorter than a stem is no shared stem (those have STEM_MIN_CHARS characters)
    stem_keys = [f[:STEM_MIN_CHARS] for f in forms]
    stem_keys = [stem if stem in shared_stems else None for stem in stem_keys]
    if words.lemmas is not None:
        all_lemmas = words.lemmas
        lemmas = [all_lemmas[p] for p in tokens]
        lemma_count = Counter([lemma for _, lemma in set(zip(forms, lemmas))])
        shared_lemmas = {lemma for lemma, count in lemma_count.items() if count >= 2}
        lemma_keys = [lemma if lemma in shared_lemmas else None for lemma in lemmas]
    else:
        shared_lemmas = set()
        lemmas = forms
        lemma_keys = [None] * len(tokens)
    if not shared_stems and not shared_lemmas:
        return []
    parent: Dict[int, int] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    recent_lemma: Dict[str, Deque[Tuple[int, int, int, str, str]]] = {}
    recent_stem: Dict[str, Deque[Tuple[int, int, int, str, str]]] = {}
    with_lemmas = words.lemmas is not None
    for j, p, colon, form, lemma, lemma_key, stem_key in zip(
        index.tolist(), tokens, cw.colon[index].tolist(), forms, lemmas, lemma_keys, stem_keys
    ):
        if lemma_key is None and stem_key is None:
            continue
        item = (j, p, colon, form, lemma)
        for key, recent in ((lemma_key, recent_lemma), (stem_key, recent_stem)):
            if key is None:
                continue
            queue = recent.get(key)
            if queue is None:
                queue = recent[key] = deque(maxlen=RECENT)
            for i, q, c, other, other_lemma in queue:
                if (
                    j - i <= POLYPTOTON_WINDOW
                    and colon - c <= POLYPTOTON_COLA
                    and other != form
                    and (
                        (with_lemmas and other_lemma == lemma)
                        or related_forms(other, form, words.lang)
                    )
                ):
                    parent.setdefault(q, q)
                    parent.setdefault(p, p)
                    parent[root(p)] = root(q)
            queue.append(item)
    groups: Dict[int, List[int]] = {}
    for p in parent:
        groups.setdefault(root(p), []).append(p)
    found = []
    for occ in groups.values():
        occ.sort()
        if len({all_forms[p] for p in occ}) < 2 or unexplained(occ, explained) < 2:
            continue
        capped = occ[:MAX_MEMBERS]
        found.append(
            make_candidate(
                "polyptoton",
                _stretches(capped),
                [(p, p + 1) for p in capped],
                len(occ),
                end=occ[-1] + 1,
            )
        )
    found.sort(key=lambda c: c.start)
    return found
