"""Candidate rules of the figures of repetition: at the edges of cola (anaphora,
epiphora, symploce), linking (anadiplosis, gradatio) and in place (epizeuxis, ploce,
polyptoton).

Words are compared by their normal form (``words.normalize``: lower case, Latin u/v and
i/j folded). Every rule is one pass over the cola or the words, with windows and caps
(``candidates.MAX_MEMBERS``): linear in the length of the doc.

* **anaphora** (*repetitio*): a maximal series of >= 2 cola of >= 2 words beginning with
  the same word, consecutive members at most ``MAX_STEP`` cola apart (the Beatitudes
  alternate "Blessed are ...: for ..."); the support extends over every word the
  members share at their start ("Blessed are").
* **epiphora** (*conversio*): the same at the end of cola.
* **symploce** (*complexio*): a series sharing both the first and the last word; it
  replaces an anaphora or epiphora over the same cola. A series of two cola joined by
  an anadiplosis is that anadiplosis ("则事不成；事不成" is no epiphora), and a series
  whose shared words are an epizeuxis is that epizeuxis ("盼望着，盼望着").
* **anadiplosis** (*reduplicatio*, 顶真): the last word(s) of a colon of >= 2 words
  begin the next, a leading conjunction of the next skipped ("hic tamen vivit. Vivit?";
  same form; with lemmas or stems also "virtutem, virtus" for content words); Chinese
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
  forms within ``POLYPTOTON_WINDOW`` words, one colon or adjacent cola (not Chinese).
"""

from collections import deque
from typing import Deque, Dict, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from ..chiasmus.stems import STEM_MIN_CHARS, same_stem
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate, runs, series
from .segment import Segmentation
from .words import ColonWords, Words, words_of

MAX_STEP = 2
MIN_EDGE_WORDS = 2
MAX_SHARED = 4
ZH_MAX_OVERLAP = 6
GRADATIO_MIN_LINKS = 2
GRADATIO_STEP = 2
MAX_UNIT = 3
PLOCE_WINDOW = 8
POLYPTOTON_WINDOW = 10
RECENT = 8  # earlier occurrences a word is compared with (polyptoton)

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


def edge_candidates(words: Words, seg: Segmentation, cw: ColonWords) -> List[Candidate]:
    """Anaphora, epiphora and symploce series (see the module docstring)."""
    codes = words.form_codes
    eligible = (cw.count >= MIN_EDGE_WORDS).tolist()
    first = codes[numpy.maximum(cw.first, 0)].tolist()
    last = codes[numpy.maximum(cw.last, 0)].tolist()
    first_key = [f if ok else None for f, ok in zip(first, eligible)]
    last_key = [x if ok else None for x, ok in zip(last, eligible)]
    pair_key = [(f, x) if ok else None for f, x, ok in zip(first, last, eligible)]
    found: List[Candidate] = []
    symploce = series(pair_key, MAX_STEP)
    replaced = {(s.positions[0], s.last, s.count) for s in symploce}
    for figure, found_series in (
        ("symploce", symploce),
        ("anaphora", series(first_key, MAX_STEP)),
        ("epiphora", series(last_key, MAX_STEP)),
    ):
        for s in found_series:
            if figure != "symploce" and (s.positions[0], s.last, s.count) in replaced:
                continue
            lists = [words_of(cw, c) for c in s.positions]
            shortest = min(len(w) for w in lists)
            members = [(int(seg.starts[c]), int(seg.ends[c])) for c in s.positions]
            support: List[Range] = []
            head = tail = 0
            if figure in ("anaphora", "symploce"):
                head = _shared(codes, lists, False, min(MAX_SHARED, shortest - 1))
            if figure in ("epiphora", "symploce"):  # head + tail <= the shortest member
                tail = _shared(codes, lists, True, min(MAX_SHARED, shortest - max(head, 1)))
            for w in lists:
                if head:
                    support.append((int(w[0]), int(w[head - 1]) + 1))
                if tail:
                    support.append((int(w[-tail]), int(w[-1]) + 1))
            found.append(
                make_candidate(figure, members, support, s.count, True, end=int(seg.ends[s.last]))
            )
    return found


def _word_overlap(words: Words, a: numpy.ndarray, b: numpy.ndarray) -> int:
    """The most words (at most MAX_SHARED) that end ``a`` and begin ``b``."""
    codes = words.form_codes
    limit = min(MAX_SHARED, len(a) - 1, len(b))
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


def linking_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords
) -> List[Candidate]:
    """Anadiploses and gradatio chains (see the module docstring)."""
    m = len(seg)
    if m < 2:
        return []
    zh = words.lang == "zh"
    # the first colon has words before the link; the next may be the link alone
    # ("hic tamen vivit. Vivit?")
    maybe = (cw.count[:-1] >= MIN_EDGE_WORDS) & (cw.count[1:] >= 1)
    links: List[Tuple[int, Range, Range]] = []  # (colon, support in it, support in the next)
    for c in numpy.flatnonzero(maybe).tolist():
        a, b = words_of(cw, c), words_of(cw, c + 1)
        if len(b) > 1 and words.is_conj[b[0]]:  # "..., and patience, experience"
            b = b[1:]
        if zh:  # by characters, over the tokens that can hold the overlap
            start, end = _char_overlap(doc, a[-ZH_MAX_OVERLAP:], b[:ZH_MAX_OVERLAP])
            if start >= 0 and start > a[0]:
                links.append((c, (start, int(a[-1]) + 1), (int(b[0]), end)))
            continue
        k = _word_overlap(words, a, b)
        if not k and _related(words, int(a[-1]), int(b[0])):
            k = 1  # one lemma or stem ("virtutem, virtus")
        if k:
            links.append((c, (int(a[-k]), int(a[-1]) + 1), (int(b[0]), int(b[k - 1]) + 1)))
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

    for j, (p, colon) in enumerate(zip(cw.positions.tolist(), cw.colon.tolist())):
        if not words.is_content[p] or (words.lang == "zh" and len(words.forms[p]) < 2):
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
    for j, (p, colon) in enumerate(zip(cw.positions.tolist(), cw.colon.tolist())):
        if not words.is_content[p]:
            continue
        form = words.forms[p]
        keys = []
        if words.lemmas is not None:
            keys.append("l:" + words.lemmas[p])
        if len(form) >= STEM_MIN_CHARS:
            keys.append("s:" + form[:STEM_MIN_CHARS])
        for key in keys:
            queue = recent.setdefault(key, deque(maxlen=RECENT))
            for i, q, c in queue:
                if j - i <= POLYPTOTON_WINDOW and colon - c <= 1 and _related(words, q, p):
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
        for c in edge_candidates(words, seg, cw)
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
    found = edge + linking + epizeuxis + ploce + polyptoton
    if figures is not None:
        found = [c for c in found if c.figure in figures]
    return found
