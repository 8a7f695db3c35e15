"""Repetition at the edges of cola: anaphora, epiphora, symploce.

* **anaphora** (*repetitio*): a maximal series of >= 2 cola of >= 2 words beginning with
  the same word (a leading conjunction skipped: "and a time to die"), consecutive
  members at most ``MAX_STEP`` cola apart (the Beatitudes alternate "Blessed are ...: for
  ..."); the support extends over every word the members share at their start
  ("Blessed are"). Where the doc is tagged (not Latin), a function word in two
  coarse classes is two words (``pos_keyed``: "To our sister republics" ADP, "to
  convert" PART), for epiphora and symploce too. Inside one colon without
  punctuation: a word opening >= ``INNER_MIN`` stretches of ``INNER_GAP`` words whose
  lengths differ by at most one ("omnia suffert omnia credit omnia sperat"). Chinese:
  also the first character of cola of at most ``ZH_MAX_OVERLAP`` characters
  ("积土成山…积水成渊").
* **epiphora** (*conversio*): the same at the end of cola (one-word cola too: "Quis
  produxit? Appius").
* **symploce** (*complexio*): a series sharing both the first and the last word; it
  replaces an anaphora or epiphora over the same cola; a series of identical cola (a
  refrain) is proposed as symploce, anaphora and epiphora. A series of two cola joined by
  an anadiplosis is that anadiplosis ("则事不成；事不成" is no epiphora), and a series
  whose shared words are an epizeuxis is that epizeuxis ("盼望着，盼望着"): both decided
  in ``repetition``.
"""

from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc

from ..names import UNTRUSTED_POS
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate, series
from .segment import QUESTION_MARKS, Segmentation
from .words import ColonWords, Words, is_weak, words_of

MAX_STEP = 3
MIN_EDGE_WORDS = 2
MAX_SHARED = 4
ZH_MAX_OVERLAP = 6
INNER_MIN = 3  # occurrences of an anaphora inside one colon ("omnia suffert omnia credit")
INNER_GAP = (2, 4)  # words from one occurrence to the next, inside one colon
PHRASE_MAX = (
    8  # words of the first phrase of an anaphora across a mark ("tam uelociter, tam rapide")
)
ANSWER_WORDS = 3  # words of the answer of a question-and-answer symploce
BINCOUNT_LIMIT = 1_000_000  # largest value counted with numpy.bincount (else numpy.unique)
# the classes of function words: where the doc is tagged, a particle and the same form
# in another class are two words for the edge figures ("To our sister republics" ADP,
# "to convert" PART); the other classes are one (telling ADP, SCONJ, CCONJ, DET and PRON
# apart too cost English anaphora on the corpus dev half 0.38 -> 0.21 recall: taggers
# part "that", "so", "for" either way)
FUNCTION_CLASSES = {"PART": 1}


def _shared(
    codes: Sequence[int], lists: Sequence[Sequence[int]], from_end: bool, limit: int
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


def colon_text(doc: Doc, tokens: numpy.ndarray) -> str:
    return "".join(doc[int(i)].text for i in tokens)


def pos_keyed(words: Words, codes: numpy.ndarray) -> numpy.ndarray:
    """Word codes that also tell apart the coarse classes of function words
    (``FUNCTION_CLASSES``) where the doc is tagged and its tagger trusted (not
    ``UNTRUSTED_POS``): a preposition and an infinitive marker are not one word for an
    edge figure ("To our sister republics ..., to convert ..., to assist ...": ADP,
    PART, PART). Content words keep one code whatever their tag.

    words (Words): the doc's words.
    codes (numpy.ndarray): [n] codes of the forms or stems.
    RETURNS (numpy.ndarray): [n] codes, equal where the codes and the classes are.
    """
    if words.pos is None or words.lang in UNTRUSTED_POS:
        return codes
    classes = numpy.fromiter(
        (FUNCTION_CLASSES.get(p, 0) for p in words.pos), dtype=numpy.int64, count=len(codes)
    )
    if not classes.any():
        return codes
    return codes * (max(FUNCTION_CLASSES.values()) + 1) + classes


def edge_candidates(
    words: Words,
    seg: Segmentation,
    cw: ColonWords,
    doc: Optional[Doc] = None,
    parts: bool = True,
) -> List[Candidate]:
    """Anaphora, epiphora and symploce series (see the module docstring).

    parts (bool): also the anaphoras inside a series (``_subseries_anaphora``) and of
        phrases across a mark (``phrase_anaphora_candidates``).
    """
    codes = pos_keyed(words, words.form_codes)
    # anaphora compares openings up to their ending ("nullus gemitus, nulla vox"); a
    # changed form at the end of cola is a polyptoton to readers more often than not
    stems = pos_keyed(words, words.stem_codes)
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
        stems[cw.positions[numpy.minimum(lo + lead, max(len(cw.positions) - 1, 0))]].tolist()
        if len(cw.positions)
        else stems[numpy.maximum(cw.first, 0)].tolist()
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
            text = colon_text(doc, words_of(cw, c)) if cw.count[c] else ""
            ok = 2 <= len(text) <= ZH_MAX_OVERLAP and len(doc[int(cw.first[c])].text) > 1
            char_key.append(text[0] if ok else None)
        anaphora += [s for s in series(char_key, MAX_STEP) if (s.positions[0], s.last) not in seen]
    # the series as Python lists: a colon's words are positions[bounds[c]:bounds[c + 1]]
    form_list, stem_list = codes.tolist(), stems.tolist()
    positions, bounds = cw.positions.tolist(), cw.bounds
    starts, ends = seg.starts.tolist(), seg.ends.tolist()
    lead_list = lead.tolist()
    for figure, found_series in (
        ("symploce", symploce),
        ("anaphora", anaphora),
        ("epiphora", series(last_key, MAX_STEP)),
    ):
        code_list = stem_list if figure == "anaphora" else form_list
        for s in found_series:
            if figure != "symploce" and (s.positions[0], s.last, s.count) in replaced:
                continue
            lists = [positions[bounds[c] : bounds[c + 1]] for c in s.positions]
            if figure == "anaphora":
                lists = [w[lead_list[c] :] for w, c in zip(lists, s.positions)]
            shortest = min(len(w) for w in lists)
            members = [(starts[c], ends[c]) for c in s.positions]
            first_codes = [code_list[t] for t in lists[0]]
            identical = figure == "symploce" and all(
                [code_list[t] for t in w] == first_codes for w in lists
            )
            labels = ("symploce", "anaphora", "epiphora") if identical else (figure,)
            for label in labels:  # a repeated colon (refrain): also anaphora and epiphora
                support: List[Range] = []
                head = tail = 0
                if label in ("anaphora", "symploce"):
                    head = _shared(code_list, lists, False, min(MAX_SHARED, max(shortest - 1, 1)))
                if label == "symploce":  # head + tail <= the shortest member
                    tail = _shared(code_list, lists, True, min(MAX_SHARED, shortest - max(head, 1)))
                if label == "epiphora":
                    tail = _shared(code_list, lists, True, min(MAX_SHARED, shortest))
                for w in lists:
                    if head:
                        support.append((w[0], w[head - 1] + 1))
                    if tail:
                        support.append((w[-tail], w[-1] + 1))
                if not support:  # single-character anaphora: the first token
                    support = [(w[0], w[0] + 1) for w in lists]
                found.append(
                    make_candidate(label, members, support, s.count, True, end=ends[s.last])
                )
        if figure == "anaphora" and parts:
            found += _subseries_anaphora(
                words,
                seg.token_sentence,
                stems,
                found_series,
                positions,
                bounds,
                starts,
                ends,
                lead_list,
            )
    found += question_symploce_candidates(doc, words, seg, cw)
    found += inner_anaphora_candidates(words, cw)
    if parts:
        found += phrase_anaphora_candidates(words, seg, cw, stems)
    return found


def _subseries_anaphora(
    words: Words,
    token_sentence: numpy.ndarray,
    codes: numpy.ndarray,
    found_series: Sequence,
    positions: List[int],
    bounds: numpy.ndarray,
    starts: List[int],
    ends: List[int],
    lead: List[int],
) -> List[Candidate]:
    """Within a series whose members share only weak opening words ("I ..., I ..., I ..."),
    the members that share a longer opening with a content word ("I believe ... I
    believe"), and the members inside one sentence ("We have done everything ... . We
    have petitioned; we have remonstrated; we have supplicated"): anaphoras of their own
    (the series on its weak word across sentences is filtered as accidental)."""
    code_list = codes.tolist()
    content = words.is_content
    sentence = token_sentence
    out: List[Candidate] = []
    for s in found_series:
        if s.count < 3:
            continue
        lists = [positions[bounds[c] : bounds[c + 1]][lead[c] :] for c in s.positions]
        if any(len(w) < 2 for w in lists) or not all(is_weak(words, w[0]) for w in lists):
            continue
        groups: Dict[Tuple[int, int], List[int]] = {}
        for k, w in enumerate(lists):
            groups.setdefault((-1, int(sentence[w[0]])), []).append(k)  # per sentence
            if content[w[1]] or not is_weak(words, w[1]):
                groups.setdefault((code_list[w[0]], code_list[w[1]]), []).append(k)
        for members in groups.values():
            if len(members) < 2 or len(members) == len(lists):
                continue
            chosen = [lists[k] for k in members]
            head = _shared(
                code_list, chosen, False, min(MAX_SHARED, min(len(w) for w in chosen) - 1)
            )
            spans = [(starts[s.positions[k]], ends[s.positions[k]]) for k in members]
            support = [(w[0], w[max(head, 1) - 1] + 1) for w in chosen]
            out.append(make_candidate("anaphora", spans, support, len(members), True))
    return out


def phrase_anaphora_candidates(
    words: Words, seg: Segmentation, cw: ColonWords, codes: numpy.ndarray
) -> List[Candidate]:
    """Anaphora of phrases across a punctuation mark inside one sentence, the first
    occurrence not opening its colon ("quod haec tam uelociter, tam rapide"; "so voll,
    so warm"; "nicht zeichnen, nicht einen Strich"): the word that opens colon c + 1 (a
    leading conjunction skipped) also stands among the last ``PHRASE_MAX`` words of colon
    c, not first; following cola opening with it join the series. Members: the phrase
    from the occurrence to the end of its colon, and as many words of each next colon."""
    m = len(seg)
    if m < 2 or words.lang == "zh":
        return []
    code_list = codes.tolist()
    positions, bounds = cw.positions.tolist(), cw.bounds
    sentence = seg.token_sentence
    conj = words.is_conj
    out: List[Candidate] = []
    c = 0
    while c < m - 1:
        a = positions[bounds[c] : bounds[c + 1]]
        b = positions[bounds[c + 1] : bounds[c + 2]]
        if len(a) < 2 or not b or not seg.boundary[seg.ends[c] : seg.starts[c + 1]].any():
            c += 1
            continue
        lead = 1 if conj[b[0]] and len(b) > 1 else 0
        key = code_list[b[lead]]
        hit = next((k for k in range(len(a) - 1, 0, -1) if code_list[a[k]] == key), None)
        if (
            hit is None
            or not 2 <= len(a) - hit <= PHRASE_MAX  # a last word taken up is anadiplosis
            or sentence[a[hit]] != sentence[b[lead]]
            or not words.is_word[b[lead]]
        ):
            c += 1
            continue
        size = len(a) - hit
        members = [(a[hit], a[-1] + 1)]
        support = [(a[hit], a[hit] + 1)]
        d = c + 1
        while d < m:
            w = positions[bounds[d] : bounds[d + 1]]
            lead_d = 1 if w and conj[w[0]] and len(w) > 1 else 0
            if not w or code_list[w[lead_d]] != key or sentence[w[lead_d]] != sentence[a[hit]]:
                break
            stop = min(len(w), lead_d + size + 2)
            members.append((w[lead_d], w[stop - 1] + 1))
            support.append((w[lead_d], w[lead_d] + 1))
            d += 1
        out.append(make_candidate("anaphora", members, support, len(members), False))
        c = d
    return out


def _asks(words: Words, seg: Segmentation, c: int) -> bool:
    """Whether a question mark closes colon c (read on the normal forms: normalising
    changes no punctuation)."""
    if c + 1 >= len(seg):
        return False
    return not QUESTION_MARKS.isdisjoint(words.forms[int(seg.ends[c]) : int(seg.starts[c + 1])])


def question_symploce_candidates(
    doc: Optional[Doc], words: Words, seg: Segmentation, cw: ColonWords
) -> List[Candidate]:
    """Symploce over question and answer (*Ad Herennium* 4.14.20: "Quis eos postulavit?
    Appius. Quis produxit? Appius."): >= 2 exchanges, each a question (a colon closed by a
    question mark) and its answer (the next colon, at most ``ANSWER_WORDS`` words, not
    itself a question), sharing the question's first word and the answer's last; the
    members are the exchanges, the support the question's opening and the answer."""
    m = len(seg)
    if doc is None or m < 4:
        return []
    codes = words.form_codes
    keys: List[Optional[Tuple[int, int]]] = [None] * m
    sized = (cw.count[:-1] >= 1) & (cw.count[1:] >= 1) & (cw.count[1:] <= ANSWER_WORDS)
    for c in numpy.flatnonzero(sized).tolist():
        if _asks(words, seg, c) and not _asks(words, seg, c + 1):
            keys[c] = (int(codes[cw.first[c]]), int(codes[cw.last[c + 1]]))
    if keys.count(None) == m:
        return []
    found: List[Candidate] = []
    for s in series(keys, MAX_STEP):
        if any(b - a < 2 for a, b in zip(s.positions, s.positions[1:])):
            continue  # exchanges do not overlap
        members = [(int(seg.starts[c]), int(seg.ends[c + 1])) for c in s.positions]
        support: List[Range] = []
        answers = [words_of(cw, c + 1) for c in s.positions]
        tail = _shared(codes, answers, True, min(MAX_SHARED, min(len(w) for w in answers)))
        for c, answer in zip(s.positions, answers):
            support.append((int(cw.first[c]), int(cw.first[c]) + 1))
            support.append((int(answer[-tail]), int(answer[-1]) + 1))
        found.append(
            make_candidate(
                "symploce", members, support, s.count, False, end=int(seg.ends[s.last + 1])
            )
        )
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
    width = int(codes.max()) + 1
    pair = cw.colon.astype(numpy.int64) * width + codes[positions]
    if len(cw.count) * width <= BINCOUNT_LIMIT:  # counted by value
        counts = numpy.bincount(pair)[pair]
    else:
        _, inverse, counts = numpy.unique(pair, return_inverse=True, return_counts=True)
        counts = counts[inverse.reshape(-1)]
    kept = numpy.flatnonzero((counts >= INNER_MIN) & ~words.is_conj[positions])
    kept_tokens = positions[kept]
    for j, colon, code, stop in zip(
        kept.tolist(),
        cw.colon[kept].tolist(),
        codes[kept_tokens].tolist(),
        words.is_stop[kept_tokens].tolist(),
    ):
        run = open_.get(code)
        if (
            run is not None
            and run[1] == colon
            and lo_gap <= j - run[5] <= hi_gap
            and (not stop or len(run[0]) < 2 or j - run[5] == run[3])
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
