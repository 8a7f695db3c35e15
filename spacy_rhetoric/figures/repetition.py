"""Candidate rules of the figures of repetition: at the edges of cola (anaphora,
epiphora, symploce), linking (anadiplosis, gradatio) and in place (epizeuxis, ploce,
polyptoton).

Words are compared by their normal form (``words.normalize``: lower case, Latin u/v and
i/j folded). Every rule is one pass over the cola or the words, with windows and caps
(``candidates.MAX_MEMBERS``): linear in the length of the doc.

* **anaphora** (*repetitio*): a maximal series of >= 2 cola of >= 2 words beginning with
  the same word (a leading conjunction skipped: "and a time to die"), consecutive
  members at most ``MAX_STEP`` cola apart (the Beatitudes alternate "Blessed are ...: for
  ..."); the support extends over every word the members share at their start
  ("Blessed are"). Inside one colon without punctuation: a word opening >=
  ``INNER_MIN`` stretches of ``INNER_GAP`` words whose lengths differ by at most one
  ("omnia suffert omnia credit omnia sperat"). Chinese: also the first character of
  cola of at most ``ZH_MAX_OVERLAP`` characters ("积土成山…积水成渊").
* **epiphora** (*conversio*): the same at the end of cola (one-word cola too: "Quis
  produxit? Appius").
* **symploce** (*complexio*): a series sharing both the first and the last word; it
  replaces an anaphora or epiphora over the same cola; a series of identical cola (a
  refrain) is proposed as symploce, anaphora and epiphora. A series of two cola joined by
  an anadiplosis is that anadiplosis ("则事不成；事不成" is no epiphora), and a series
  whose shared words are an epizeuxis is that epizeuxis ("盼望着，盼望着").
* **anadiplosis** (*reduplicatio*, 顶真): the last word(s) of a colon of >= 2 words
  begin the next, up to ``MAX_LEAD`` leading conjunctions or stop words of the next
  skipped ("hic tamen vivit. Vivit?"; "and to virtue knowledge"; same form; with lemmas
  or stems also "virtutem, virtus" for content words); a one-word colon links where the
  next opens with skipped words after a stronger mark than a comma ("experience; and
  experience"); failing that, a content word among the last ``LINK_WINDOW`` words of a
  colon and the first of the next, not at the same place in both (free word order:
  "virtutem industria, virtus gloriam"); not where a comma alone separates a colon from
  its bare repetition ("O Romeo, Romeo": epizeuxis); Chinese
  cola are compared by characters (the longest overlap of up to ``ZH_MAX_OVERLAP``), so
  "则事不成；事不成" links whatever the word segmentation.
* **gradatio** (*climax*, 顶真): a chain of >= ``GRADATIO_MIN_LINKS`` anadiploses,
  consecutive links at most ``GRADATIO_STEP`` cola apart; it replaces its anadiploses.
* **epizeuxis** (*geminatio*, 反复): a unit of 1-3 words repeated immediately (punctuation
  between allowed: "Words, words, words"), unless an anadiplosis or gradatio already
  links the occurrences ("endurance, endurance produces"); in Chinese an immediately doubled single
  character without punctuation between is reduplication (看看), not a figure.
* **ploce** (diacope; 反复 with intervals): a content word repeated within
  ``PLOCE_WINDOW`` words, in one colon or adjacent cola, with occurrences not already
  the support of an edge, linking or epizeuxis candidate, and not spread over the
  members of one (there the repetition is the figure's parallelism).
* **polyptoton** (*traductio*): content words of the same lemma (or, without lemmas or
  where the lemmatizer misses, the same stem: ``chiasmus.stems.same_stem``) in different
  forms within ``POLYPTOTON_WINDOW`` words and ``POLYPTOTON_COLA`` cola (not Chinese).

Every candidate then passes ``plausible`` (precision filters): edge figures on weak
words only (articles, pronouns, names, numbers) not across sentences and inside one
with >= 3 members; no identical members (duplicated lines) beyond short cola of one
sentence; in Chinese no numeral, unit, date or name as support, and a 顶真 link of at
least two characters unless the cola are short and parallel.
"""

from collections import deque
from typing import Deque, Dict, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from ..chiasmus.stems import STEM_MIN_CHARS, same_stem
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate, runs, series
from .segment import Segmentation
from .words import ColonWords, Words, is_weak, is_zh_quantity, words_of

MAX_STEP = 3
MIN_EDGE_WORDS = 2
MAX_SHARED = 4
ZH_MAX_OVERLAP = 6
GRADATIO_MIN_LINKS = 2
GRADATIO_STEP = 2
MAX_LEAD = 3  # leading conjunctions/stop words skipped before a link ("and to virtue")
LINK_WINDOW = 2  # words at the end of a colon / start of the next compared for a link
INNER_MIN = 3  # occurrences of an anaphora inside one colon ("omnia suffert omnia credit")
INNER_GAP = (2, 4)  # words from one occurrence to the next, inside one colon
MAX_UNIT = 3
PLOCE_WINDOW = 8
POLYPTOTON_WINDOW = 10
POLYPTOTON_COLA = 2  # cola apart ("soles occidere ...: nobis, cum semel occidit")
RECENT = 8  # earlier occurrences a word is compared with (polyptoton)
WEAK_MIN_MEMBERS = 3  # members of an edge figure on weak words (inside one sentence)
REFRAIN_MAX_TOKENS = 6  # identical members: only short cola inside one sentence
ZH_SHORT_COLON = 6  # characters of the short parallel cola a one-character link may join
ZH_MAX_LINK_COLON = 12  # characters of the longest colon a Chinese link may join

EDGE = ("anaphora", "epiphora", "symploce")
LINKING = ("anadiplosis", "gradatio")
IN_PLACE = ("epizeuxis", "ploce", "polyptoton")
FIGURES = EDGE + LINKING + IN_PLACE


def _shared(
    codes: numpy.ndarray, lists: Sequence[numpy.ndarray], from_end: bool, limit: int
) -> int:
    """How many words all lists share at their start (or end), at most ``limit``."""
    k = 0
    while k < limit:
        index = -1 - k if from_end else k
        first = codes[lists[0][index]]
        if any(codes[w[index]] != first for w in lists[1:]):
            break
        k += 1
    return k


def _colon_text(doc: Doc, tokens: numpy.ndarray) -> str:
    return "".join(doc[int(i)].text for i in tokens)


def edge_candidates(
    words: Words, seg: Segmentation, cw: ColonWords, doc: Optional[Doc] = None
) -> List[Candidate]:
    """Anaphora, epiphora and symploce series (see the module docstring)."""
    codes = words.form_codes
    m = len(seg)
    if not m:
        return []
    lo = numpy.searchsorted(cw.colon, numpy.arange(m), "left")
    safe = numpy.minimum(lo, max(len(cw.positions) - 1, 0))
    # a colon opening with a conjunction is keyed (anaphora) by its next word ("and a time")
    lead = numpy.zeros(m, dtype=numpy.int64)
    if len(cw.positions):
        lead = (words.is_conj[cw.positions[safe]] & (cw.count >= 3)).astype(numpy.int64)
    eligible = (cw.count >= MIN_EDGE_WORDS).tolist()
    one_word = (cw.count >= 1).tolist()
    first = codes[numpy.maximum(cw.first, 0)].tolist()
    opening = (
        codes[cw.positions[numpy.minimum(lo + lead, max(len(cw.positions) - 1, 0))]].tolist()
        if len(cw.positions)
        else first
    )
    last = codes[numpy.maximum(cw.last, 0)].tolist()
    first_key = [f if ok else None for f, ok in zip(opening, eligible)]
    # epiphora also over one-word cola ("Quis eos postulavit? Appius. Quis produxit? Appius")
    last_key = [x if ok else None for x, ok in zip(last, one_word)]
    pair_key = [(f, x) if ok else None for f, x, ok in zip(first, last, eligible)]
    found: List[Candidate] = []
    symploce = series(pair_key, MAX_STEP)
    replaced = {(s.positions[0], s.last, s.count) for s in symploce}
    anaphora = series(first_key, MAX_STEP)
    if words.lang == "zh" and doc is not None:  # single-character anaphora (积土…积水…)
        seen = {(s.positions[0], s.last) for s in anaphora}
        char_key: List[Optional[str]] = []
        for c in range(m):
            text = _colon_text(doc, words_of(cw, c)) if cw.count[c] else ""
            ok = 2 <= len(text) <= ZH_MAX_OVERLAP and len(doc[int(cw.first[c])].text) > 1
            char_key.append(text[0] if ok else None)
        anaphora += [s for s in series(char_key, MAX_STEP) if (s.positions[0], s.last) not in seen]
    for figure, found_series in (
        ("symploce", symploce),
        ("anaphora", anaphora),
        ("epiphora", series(last_key, MAX_STEP)),
    ):
        for s in found_series:
            if figure != "symploce" and (s.positions[0], s.last, s.count) in replaced:
                continue
            lists = [words_of(cw, c) for c in s.positions]
            if figure == "anaphora":
                lists = [w[int(lead[c]) :] for w, c in zip(lists, s.positions)]
            shortest = min(len(w) for w in lists)
            members = [(int(seg.starts[c]), int(seg.ends[c])) for c in s.positions]
            identical = figure == "symploce" and all(
                len(w) == len(lists[0]) and (codes[w] == codes[lists[0]]).all() for w in lists
            )
            labels = ("symploce", "anaphora", "epiphora") if identical else (figure,)
            for label in labels:  # a repeated colon (refrain): also anaphora and epiphora
                support: List[Range] = []
                head = tail = 0
                if label in ("anaphora", "symploce"):
                    head = _shared(codes, lists, False, min(MAX_SHARED, max(shortest - 1, 1)))
                if label == "symploce":  # head + tail <= the shortest member
                    tail = _shared(codes, lists, True, min(MAX_SHARED, shortest - max(head, 1)))
                if label == "epiphora":
                    tail = _shared(codes, lists, True, min(MAX_SHARED, shortest))
                for w in lists:
                    if head:
                        support.append((int(w[0]), int(w[head - 1]) + 1))
                    if tail:
                        support.append((int(w[-tail]), int(w[-1]) + 1))
                if not support:  # single-character anaphora: the first token
                    support = [(int(w[0]), int(w[0]) + 1) for w in lists]
                found.append(
                    make_candidate(
                        label, members, support, s.count, True, end=int(seg.ends[s.last])
                    )
                )
    found += inner_anaphora_candidates(words, cw)
    return found


def inner_anaphora_candidates(words: Words, cw: ColonWords) -> List[Candidate]:
    """Anaphora inside one colon, where no punctuation splits the members ("omnia suffert
    omnia credit omnia sperat omnia sustinet"): a word (not a conjunction: that is
    polysyndeton) occurring >= ``INNER_MIN`` times in one colon, consecutive occurrences
    ``INNER_GAP`` words apart, the gaps differing by at most one word (parallel members).
    One pass over the words with one open run per form."""
    found: List[Candidate] = []
    codes = words.form_codes
    open_: Dict[int, List] = {}  # code -> [word indices (capped), colon, count, min gap,
    # max gap, last word index]
    positions = cw.positions

    def close(run: List) -> None:
        if run[2] >= INNER_MIN and run[4] - run[3] <= 1:
            idx = run[0]
            occ = [int(positions[j]) for j in idx]
            members = [(p, int(positions[j - 1]) + 1) for p, j in zip(occ, idx[1:])]
            last_end = int(positions[min(idx[-1] + run[4] - 1, len(positions) - 1)]) + 1
            members.append((occ[-1], last_end))
            found.append(
                make_candidate(
                    "anaphora", members, [(p, p + 1) for p in occ], run[2], False, end=last_end
                )
            )

    lo_gap, hi_gap = INNER_GAP
    if len(positions) < INNER_MIN:
        return found
    # only words whose form occurs >= INNER_MIN times in their colon take part
    pair = cw.colon.astype(numpy.int64) * (int(codes.max()) + 1) + codes[positions]
    _, inverse, counts = numpy.unique(pair, return_inverse=True, return_counts=True)
    keep = (counts[inverse.reshape(-1)] >= INNER_MIN) & ~words.is_conj[positions]
    for j in numpy.flatnonzero(keep).tolist():
        p, colon = int(positions[j]), int(cw.colon[j])
        code = int(codes[p])
        run = open_.get(code)
        if (
            run is not None
            and run[1] == colon
            and lo_gap <= j - run[5] <= hi_gap
            and (not words.is_stop[p] or len(run[0]) < 2 or j - run[5] == run[3])
        ):
            gap = j - run[5]
            if len(run[0]) < MAX_MEMBERS:
                run[0].append(j)
            run[2] += 1
            run[3], run[4], run[5] = min(run[3], gap), max(run[4], gap), j
            continue
        if run is not None:
            close(run)
        open_[code] = [[j], colon, 1, hi_gap + 1, 0, j]
    for run in open_.values():
        close(run)
    found.sort(key=lambda c: c.start)
    return found


def _word_overlap(words: Words, a: numpy.ndarray, b: numpy.ndarray, whole: bool = False) -> int:
    """The most words (at most MAX_SHARED) that end ``a`` and begin ``b`` (``whole``: all
    of ``a`` may be the overlap)."""
    codes = words.form_codes
    limit = min(MAX_SHARED, len(a) - (0 if whole else 1), len(b))
    for k in range(limit, 0, -1):
        if all(codes[a[len(a) - k + j]] == codes[b[j]] for j in range(k)):
            return k
    return 0


def _related(words: Words, i: int, j: int) -> bool:
    """Two content words of one lemma, or one stem, in different forms."""
    if not (words.is_content[i] and words.is_content[j]):
        return False
    a, b = words.forms[i], words.forms[j]
    if a == b:
        return False
    if words.lemmas is not None and words.lemmas[i] == words.lemmas[j]:
        return True
    return same_stem(a, b)


def _char_overlap(doc: Doc, a: numpy.ndarray, b: numpy.ndarray) -> Tuple[int, int]:
    """Chinese: the tokens of ``a`` and ``b`` covering their longest character overlap
    (the end of ``a`` equal to the start of ``b``). RETURNS (first token of the overlap
    in ``a``, last token + 1 of the overlap in ``b``), or (-1, -1)."""
    text_a = "".join(doc[int(i)].text for i in a)
    text_b = "".join(doc[int(i)].text for i in b)
    limit = min(ZH_MAX_OVERLAP, len(text_a) - 1, len(text_b))
    for k in range(limit, 0, -1):
        if text_a[-k:] == text_b[:k]:
            # token of a holding character len(text_a) - k; token of b holding char k - 1
            offset, start = 0, -1
            for i in a:
                offset += len(doc[int(i)].text)
                if offset > len(text_a) - k:
                    start = int(i)
                    break
            offset, end = 0, -1
            for i in b:
                offset += len(doc[int(i)].text)
                if offset >= k:
                    end = int(i) + 1
                    break
            return start, end
    return -1, -1


def _zh_link_ok(doc: Doc, a: numpy.ndarray, b: numpy.ndarray) -> bool:
    """Chinese: whether the character overlap of cola ``a`` and ``b`` may be a 顶真 link:
    not a numeral, unit, date or name; at least two characters unless both cola are
    short (``ZH_SHORT_COLON``) and parallel (lengths within two characters); and no
    colon longer than ``ZH_MAX_LINK_COLON`` (topic chaining in expository prose:
    "均為租住戶，租住戶大都在…")."""
    text_a, text_b = _colon_text(doc, a), _colon_text(doc, b)
    k = 0
    for size in range(min(ZH_MAX_OVERLAP, len(text_a) - 1, len(text_b)), 0, -1):
        if text_a[-size:] == text_b[:size]:
            k = size
            break
    if not k or is_zh_quantity(text_b[:k]):
        return False
    la, lb = len(text_a), len(text_b)
    if la <= ZH_SHORT_COLON and lb <= ZH_SHORT_COLON and abs(la - lb) <= 2:
        return True
    return k >= 2 and max(la, lb) <= ZH_MAX_LINK_COLON


def _comma_only(doc: Doc, seg: Segmentation, c: int) -> bool:
    """Whether only a comma (or 、, or nothing) separates colon c from colon c + 1."""
    between = [doc[i].text for i in range(int(seg.ends[c]), int(seg.starts[c + 1]))]
    marks = [t for t in between if t.strip()]
    return all(t in (",", "，", "、") for t in marks)


def _window_link(words: Words, a: numpy.ndarray, b: numpy.ndarray) -> Optional[Tuple[int, int]]:
    """A content word of ``a`` equal (form or lemma) to one of ``b``: the pair of tokens,
    the closest one first; None where there is none."""
    codes = words.form_codes
    for x in a[::-1].tolist():
        if not words.is_content[x]:
            continue
        for y in b.tolist():
            if words.is_content[y] and (codes[x] == codes[y] or _related(words, x, y)):
                return x, y
    return None


def linking_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords
) -> List[Candidate]:
    """Anadiploses and gradatio chains (see the module docstring)."""
    m = len(seg)
    if m < 2:
        return []
    zh = words.lang == "zh"
    codes = words.form_codes
    # the first colon has words before the link; the next may be the link alone
    # ("hic tamen vivit. Vivit?"); a one-word colon links where the next opens with a
    # conjunction or stop words ("patience, experience; and experience, hope")
    maybe = (cw.count[:-1] >= 1) & (cw.count[1:] >= 1)
    stopish = words.is_stop | words.is_conj
    links: List[Tuple[int, Range, Range]] = []  # (colon, support in it, support in the next)
    for c in numpy.flatnonzero(maybe).tolist():
        a, b = words_of(cw, c), words_of(cw, c + 1)
        full_b = b
        skipped = 0  # leading conjunctions and stop words of the next ("and to virtue")
        if zh:  # a conjunction only (Chinese function characters may be the link)
            skipped = int(len(b) > 1 and bool(words.is_conj[b[0]]))
        else:
            while skipped < MAX_LEAD and len(b) - skipped > 1 and stopish[b[skipped]]:
                skipped += 1
        b = b[skipped:]
        if len(a) < MIN_EDGE_WORDS and (not skipped or _comma_only(doc, seg, c)):
            continue  # "Words, words": epizeuxis; "Vivis, et vivis": ploce
        if zh:  # by characters, over the tokens that can hold the overlap
            start, end = _char_overlap(doc, a[-ZH_MAX_OVERLAP:], b[:ZH_MAX_OVERLAP])
            if start >= 0 and start > a[0] and _zh_link_ok(doc, a, b):
                links.append((c, (start, int(a[-1]) + 1), (int(b[0]), end)))
            continue
        k = _word_overlap(words, a, b, whole=len(a) < MIN_EDGE_WORDS)
        if k:
            if (
                k == len(b)
                and _comma_only(doc, seg, c)
                and all(codes[a[len(a) - k + j]] == codes[b[j]] for j in range(k))
            ):
                continue  # "O Romeo, Romeo!": immediate repetition, epizeuxis
            links.append((c, (int(a[-k]), int(a[-1]) + 1), (int(b[0]), int(b[k - 1]) + 1)))
            continue
        # free word order: a content word among the last words of one colon and the first
        # of the next, same form or one lemma ("virtutem industria, virtus gloriam")
        pair = _window_link(words, a[-LINK_WINDOW:], b[:LINK_WINDOW])
        if pair is not None:
            x, y = pair
            # the same place in both cola is parallelism ("Das Wasser rauscht', das
            # Wasser schwoll": anaphora), not a link
            if int(numpy.searchsorted(a, x)) != int(numpy.searchsorted(full_b, y)):
                links.append((c, (x, x + 1), (y, y + 1)))
    found: List[Candidate] = []
    chain: List[Tuple[int, Range, Range]] = []

    def close() -> None:
        if not chain:
            return
        if len(chain) >= GRADATIO_MIN_LINKS:
            first_colon, last_colon = chain[0][0], chain[-1][0] + 1
            cola = range(first_colon, min(last_colon + 1, first_colon + MAX_MEMBERS))
            members = [(int(seg.starts[c]), int(seg.ends[c])) for c in cola]
            support = [r for _, x, y in chain for r in (x, y)]
            found.append(
                make_candidate(
                    "gradatio",
                    members,
                    support,
                    last_colon - first_colon + 1,
                    True,
                    end=int(seg.ends[last_colon]),
                )
            )
        else:
            c, x, y = chain[0]
            members = [
                (int(seg.starts[c]), int(seg.ends[c])),
                (int(seg.starts[c + 1]), int(seg.ends[c + 1])),
            ]
            found.append(make_candidate("anadiplosis", members, [x, y], 2, True))
        chain.clear()

    for link in links:
        if chain and link[0] - chain[-1][0] > GRADATIO_STEP:
            close()
        chain.append(link)
    close()
    return found


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
        for a, e in runs(equal.tolist()):
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
            covered[a : last + k] = True
            if all(t in explained for s, e in occurrences for t in range(s, e)):
                continue
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


def _stretches(occurrences: Sequence[int]) -> List[Range]:
    """Members of an in-place figure: from each occurrence to the next (the last: itself)."""
    return [(p, q) for p, q in zip(occurrences, occurrences[1:])] + [
        (occurrences[-1], occurrences[-1] + 1)
    ]


def _unexplained(occurrences: Sequence[int], explained: Set[int]) -> int:
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
        occ = group[0]
        if structured is not None and structured[occ].all():
            if len({int(colon_of[p]) for p in occ}) > 1:
                return
        if group[3] >= 2 and _unexplained(occ, explained) >= 2:
            found.append(
                make_candidate("ploce", _stretches(occ), [(p, p + 1) for p in occ], group[3])
            )

    content = words.is_content[cw.positions]
    if not content.any():
        return found
    # only forms occurring twice or more in the doc can repeat
    _, inverse, counts = numpy.unique(
        codes[cw.positions[content]], return_inverse=True, return_counts=True
    )
    keep = numpy.zeros(len(cw.positions), dtype=bool)
    keep[numpy.flatnonzero(content)[counts[inverse.reshape(-1)] >= 2]] = True
    for j in numpy.flatnonzero(keep).tolist():
        p, colon = int(cw.positions[j]), int(cw.colon[j])
        if words.lang == "zh" and len(words.forms[p]) < 2:
            continue
        code = int(codes[p])
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


def polyptoton_candidates(words: Words, cw: ColonWords, explained: Set[int]) -> List[Candidate]:
    """One lemma (or stem) in different forms within a short window (see the module
    docstring)."""
    if words.lang == "zh":
        return []
    parent: Dict[int, int] = {}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    recent: Dict[str, Deque[Tuple[int, int, int]]] = {}
    index = numpy.flatnonzero(words.is_content[cw.positions])
    if len(index) < 2:
        return []
    tokens = cw.positions[index].tolist()
    forms = [words.forms[p] for p in tokens]
    lemmas = [words.lemmas[p] for p in tokens] if words.lemmas is not None else forms
    # the keys (lemma, stem) shared by two forms, found over the distinct (form, lemma)
    # pairs; only tokens with such a key are compared
    seen: Dict[str, set] = {}  # key -> the forms with it
    pairs = set(zip(forms, lemmas))
    for form, lemma in pairs:
        if words.lemmas is not None:
            seen.setdefault("l:" + lemma, set()).add(form)
        if len(form) >= STEM_MIN_CHARS:
            seen.setdefault("s:" + form[:STEM_MIN_CHARS], set()).add(form)
    shared = {k for k, v in seen.items() if len(v) >= 2}
    if not shared:
        return []
    keyed = []
    colons = cw.colon[index].tolist()
    for j, p, colon, form, lemma in zip(index.tolist(), tokens, colons, forms, lemmas):
        keys = []
        if words.lemmas is not None and "l:" + lemma in shared:
            keys.append("l:" + lemma)
        if len(form) >= STEM_MIN_CHARS and "s:" + form[:STEM_MIN_CHARS] in shared:
            keys.append("s:" + form[:STEM_MIN_CHARS])
        if keys:
            keyed.append((j, p, colon, keys))
    for j, p, colon, keys in keyed:
        for key in keys:
            queue = recent.setdefault(key, deque(maxlen=RECENT))
            for i, q, c in queue:
                if (
                    j - i <= POLYPTOTON_WINDOW
                    and colon - c <= POLYPTOTON_COLA
                    and _related(words, q, p)
                ):
                    parent.setdefault(q, q)
                    parent.setdefault(p, p)
                    parent[root(p)] = root(q)
            queue.append((j, p, colon))
    groups: Dict[int, List[int]] = {}
    for p in parent:
        groups.setdefault(root(p), []).append(p)
    found = []
    for occ in groups.values():
        occ.sort()
        if len({words.forms[p] for p in occ}) < 2 or _unexplained(occ, explained) < 2:
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


def _sentences(seg: Segmentation, members: Sequence[Range]) -> Set[int]:
    """The sentences the members touch."""
    ts = seg.token_sentence
    return {int(ts[s]) for s, _ in members} | {int(ts[max(e - 1, s)]) for s, e in members}


def plausible(doc: Doc, words: Words, seg: Segmentation, cand: Candidate) -> bool:
    """Whether a repetition candidate may be a figure at all (precision filters):

    * an edge figure (anaphora, epiphora, symploce) whose support is only weak words
      (stop and function words, names, numbers: ``words.is_weak``) is not proposed across
      sentences ("Die FDP hat … . Die FDP werde …"), and inside one sentence only with
      >= ``WEAK_MIN_MEMBERS`` members ("I came, I saw, I conquered");
    * identical members are no figure where they are longer than
      ``REFRAIN_MAX_TOKENS`` tokens, or whole sentences of >= 2 words repeated
      (duplicated lines);
    * Chinese: the support is no numeral, unit, date or name (平方公里, 人, 1960年).
    """
    support = [t for s, e in cand.support for t in range(s, e) if words.is_word[t]]
    if words.lang == "zh":
        for s, e in cand.support:
            text = "".join(doc[t].text for t in range(s, e) if words.is_word[t])
            tags = {words.pos[t] for t in range(s, e)} if words.pos is not None else set()
            if is_zh_quantity(text, tags.pop() if len(tags) == 1 else None):
                return False
    if cand.figure not in EDGE:
        return True
    cross = len(_sentences(seg, cand.members)) > 1
    if support and all(is_weak(words, t) for t in support):
        if cross or cand.n_members < WEAK_MIN_MEMBERS:
            return False
    codes = words.form_codes
    member_codes = [
        tuple(codes[t] for t in range(s, e) if words.is_word[t]) for s, e in cand.members
    ]
    if member_codes[0] and len(set(member_codes)) == 1:
        short = all(e - s <= REFRAIN_MAX_TOKENS for s, e in cand.members)
        repeated_line = (
            cross
            and len(member_codes[0]) > 1  # "Quis produxit? Appius.": a one-word answer
            and all(_whole_sentence(words, seg, m) for m in cand.members)
        )
        if not short or repeated_line:
            return False
    return True


def _whole_sentence(words: Words, seg: Segmentation, member: Range) -> bool:
    """Whether a member holds every word of its sentence (a duplicated line)."""
    ts = seg.token_sentence
    s, e = member
    sid = ts[s]
    lo = int(numpy.searchsorted(ts, sid, "left"))
    hi = int(numpy.searchsorted(ts, sid, "right"))
    outside = numpy.r_[words.is_word[lo:s], words.is_word[e:hi]]
    return not outside.any()


def _support_tokens(candidates: Sequence[Candidate]) -> Set[int]:
    return {t for c in candidates for s, e in c.support for t in range(s, e)}


def repetition_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords, figures: Optional[Set[str]] = None
) -> List[Candidate]:
    """Every repetition candidate of a doc; ``figures`` filters the output only (ploce
    and polyptoton are never reported where an edge, linking or epizeuxis candidate
    already explains the repetition, reported or not).

    RETURNS (List[Candidate]): the candidates, family by family.
    """
    linking = linking_candidates(doc, words, seg, cw)
    linked = {
        (c.members[k][0], c.members[k + 1][0]) for c in linking for k in range(len(c.members) - 1)
    }
    epizeuxis = epizeuxis_candidates(doc, words, cw, _support_tokens(linking))
    repeated = _support_tokens(epizeuxis)
    edge = [
        c
        for c in edge_candidates(words, seg, cw, doc)
        if not (c.n_members == 2 and (c.members[0][0], c.members[1][0]) in linked)
        and not all(t in repeated for s, e in c.support for t in range(s, e))
    ]
    explained = _support_tokens(edge) | _support_tokens(linking) | _support_tokens(epizeuxis)
    structured = numpy.zeros(len(doc), dtype=bool)
    for c in edge + linking:
        for s, e in c.members:
            structured[s:e] = True
    ploce = ploce_candidates(words, cw, explained, structured)
    polyptoton = polyptoton_candidates(words, cw, explained)
    found = [
        c for c in edge + linking + epizeuxis + ploce + polyptoton if plausible(doc, words, seg, c)
    ]
    if figures is not None:
        found = [c for c in found if c.figure in figures]
    return found
