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
  whose shared words are an epizeuxis is that epizeuxis ("盼望着，盼望着").
* **anadiplosis** (*reduplicatio*, 顶真): the last word(s) of a colon of >= 2 words
  begin the next, up to ``MAX_LEAD`` leading conjunctions or stop words of the next
  skipped ("hic tamen vivit. Vivit?"; "and to virtue knowledge"; same form; with lemmas
  or stems also "virtutem, virtus" for content words); a one-word colon links where the
  next opens with skipped words after a stronger mark than a comma ("experience; and
  experience"); failing that, a content word among the last ``LINK_WINDOW`` words of a
  colon and the first of the next, not at the same place in both (free word order:
  "virtutem industria, virtus gloriam"); not where a comma alone separates a colon from
  its bare repetition ("O Romeo, Romeo": epizeuxis), nor by a possessive alone next to
  different words ("delicta mea, deus meus": ``possessive_link``); Chinese
  cola are compared by characters (the longest overlap of up to ``ZH_MAX_OVERLAP``), so
  "则事不成；事不成" links whatever the word segmentation.
* **gradatio** (*climax*, 顶真): a chain of >= ``GRADATIO_MIN_LINKS`` anadiploses,
  consecutive links at most ``GRADATIO_STEP`` cola apart; it replaces its anadiploses.
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
  members of one (there the repetition is the figure's parallelism).
* **polyptoton** (*traductio*): content words of the same lemma (or, without lemmas or
  where the lemmatizer misses, the same stem: ``stems.same_stem``) in different
  forms within ``POLYPTOTON_WINDOW`` words and ``POLYPTOTON_COLA`` cola (not Chinese).

Every candidate then passes ``plausible`` (precision filters): edge figures on weak
words only (articles, pronouns, names, numbers) not across sentences and inside one with
>= 3 members; on articles alone only where the members share a second word; no identical
members (duplicated lines) beyond short cola of one sentence; in Chinese no numeral,
unit, date or name as support, and a 顶真 link of at least two characters unless the cola
are short and parallel.
"""

import re
from collections import Counter, deque
from typing import Deque, Dict, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from ..names import DocNames, doc_names, is_name_list
from ..stems import STEM_MIN_CHARS, same_stem, shared_prefix
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
PHRASE_MAX = (
    8  # words of the first phrase of an anaphora across a mark ("tam uelociter, tam rapide")
)
PLOCE_WINDOW = 8
POLYPTOTON_WINDOW = 10
DERIVED_MIN_CHARS = 4  # a word and its derivative: shared opening characters ...
DERIVED_MIN_SHARE = 0.66  # ... and their share of the shorter word
DERIVED_MIN_CHARS_MODERN = 5  # outside Latin: shared characters of a word and its derivative
DERIVED_MAX_SUFFIX = 4  # ... and the most characters the derivative adds ("-lich", "-sion")
# languages whose base tagger misses classical forms (Latin: trained on Dante's Latin):
# polyptoton compares every word that is not a stop word, whatever its tag
UNTRUSTED_POS = frozenset(["la"])
POLYPTOTON_COLA = 3  # cola apart ("soles occidere et redire possunt: nobis, cum semel occidit")
EPANALEPSIS_COLA = 4  # cola from the opening of a unit to its return at an end
EPANALEPSIS_WORDS = 12  # words between the opening and the return
FRAME_POS = frozenset(["DET", "ADP", "CCONJ", "SCONJ", "PART", "PUNCT", "NUM", "PROPN"])
RECENT = 8  # earlier occurrences a word is compared with (polyptoton)
WEAK_MIN_MEMBERS = 3  # members of an edge figure on weak words (inside one sentence)
REFRAIN_MAX_TOKENS = 6  # identical members: only short cola inside one sentence
ZH_SHORT_COLON = 6  # characters of the short parallel cola a one-character link may join
ZH_MAX_LINK_COLON = 12  # characters of the longest colon a Chinese link may join
ANSWER_WORDS = 3  # words of the answer of a question-and-answer symploce
QUESTION_MARKS = frozenset(["?", "？"])
SENTENCE_FINAL = frozenset([".", "!", "?", "…", "...", "。", "！", "？"])
WEAK_RUN_MIN_MEMBERS = 4  # consecutive cola on one weak word: a figure across sentences
BINCOUNT_LIMIT = 1_000_000  # largest value counted with numpy.bincount (else numpy.unique)
# the classes of function words: where the doc is tagged, a particle and the same form
# in another class are two words for the edge figures ("To our sister republics" ADP,
# "to convert" PART); the other classes are one (telling ADP, SCONJ, CCONJ, DET and PRON
# apart too cost English anaphora on the corpus dev half 0.38 -> 0.21 recall: taggers
# part "that", "so", "for" either way)
FUNCTION_CLASSES = {"PART": 1}
# possessives by form where the doc says nothing (lower case, Latin u/v and i/j folded):
# linking by one of them alone joins different nouns ("delicta mea, deus meus")
POSSESSIVES = frozenset(
    "my your his her its our their thy mine yours hers ours theirs thine "
    "mein meine meiner meines meinem meinen dein deine deiner deines deinem deinen "
    "sein seine seiner seines seinem seinen ihr ihre ihrer ihres ihrem ihren "
    "unser unsere unserer unseres unserem unseren unsre unsrer unsres unsrem unsren "
    "euer eure eurer eures eurem euren".split()
)
LATIN_POSSESSIVE = re.compile(
    r"(me|tu|su)(us|a|um|i|ae|o|am|os|as|is|orum|arum)|(nost|uest)(er|ra|rum|ri|rae|ro"
    r"|ram|ros|ras|ris|rorum|rarum)"
)

# articles: an edge figure on them alone needs a second shared word ("a time ..., a
# time ..."); "a drop ..., a deterioration ..., an increase ..." is a list, not a figure
ARTICLES = {
    "en": frozenset("a an the".split()),
    "de": frozenset("der die das den dem des ein eine einen einem einer eines".split()),
}
# English auxiliaries: a pronoun returning right after one closes a tag question
# ("They are ..., aren't they?") or a clause the grammar completes ("... being there")
EN_AUXILIARIES = frozenset(
    "am is are was were be been being do does did have has had will would shall should "
    "can could may might must".split()
)

# a token of a file name, address or URL ("ENRON.XLS", "Compaq.com", "a@b.com"): its
# repetition is a list of attachments or a header, not a figure

EDGE = ("anaphora", "epiphora", "symploce")
LINKING = ("anadiplosis", "gradatio")
IN_PLACE = ("epizeuxis", "ploce", "polyptoton")
FIGURES = EDGE + LINKING + IN_PLACE


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


def _colon_text(doc: Doc, tokens: numpy.ndarray) -> str:
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
            text = _colon_text(doc, words_of(cw, c)) if cw.count[c] else ""
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


def _zh_numeral_link(doc: Doc, a: numpy.ndarray, b: numpy.ndarray) -> bool:
    """Chinese: whether short parallel cola are linked by a numeral ("道生一，一生二"); such a
    link counts only inside a gradatio chain (``linking_candidates``)."""
    text_a, text_b = _colon_text(doc, a), _colon_text(doc, b)
    la, lb = len(text_a), len(text_b)
    if not (la <= ZH_SHORT_COLON and lb <= ZH_SHORT_COLON and abs(la - lb) <= 2):
        return False
    return bool(text_a) and text_a[-1] == text_b[0] and is_zh_quantity(text_b[0])


def _sentence_link(doc: Doc, seg: Segmentation, c: int) -> bool:
    """Whether colon c, repeated whole at the start of colon c + 1, ends a sentence that
    holds more before it, and colon c + 1 begins one that goes on: the end of one
    sentence taken up by the next (顶真: "少年不识愁滋味，爱上层楼。爱上层楼，为赋新词强说愁"),
    not an immediate repetition."""
    if c < 1 or c + 2 >= len(seg):
        return False
    between = [doc[i].text for i in range(int(seg.ends[c]), int(seg.starts[c + 1]))]
    if not any(t in SENTENCE_FINAL for t in between):
        return False
    before = [doc[i].text for i in range(int(seg.ends[c - 1]), int(seg.starts[c]))]
    after = [doc[i].text for i in range(int(seg.ends[c + 1]), int(seg.starts[c + 2]))]
    return not any(t in SENTENCE_FINAL for t in before + after)


def _comma_only(words: Words, seg: Segmentation, c: int) -> bool:
    """Whether only a comma (or 、, or nothing) separates colon c from colon c + 1 (read
    on the normal forms: normalising changes no punctuation and no space)."""
    between = words.forms[int(seg.ends[c]) : int(seg.starts[c + 1])]
    return all(t in (",", "，", "、") for t in between if t.strip())


def is_possessive(doc: Doc, words: Words, t: int) -> bool:
    """Whether token t is a possessive: Poss=Yes in its morphology, or by its form
    (``POSSESSIVES``; Latin ``LATIN_POSSESSIVE``, the forms of meus, tuus, suus, noster,
    vester, whatever the tag: the Latin tagger reads "meus" as an adjective) unless the
    doc tags it a verb or noun (German "sein" the verb).

    doc (Doc): the doc.
    words (Words): its words.
    t (int): the token.
    RETURNS (bool): whether the token is a possessive.
    """
    if "Yes" in doc[t].morph.get("Poss"):
        return True
    form = words.forms[t]
    if words.lang == "la":
        return LATIN_POSSESSIVE.fullmatch(form) is not None
    if words.pos is not None and words.pos[t] in ("VERB", "AUX", "NOUN", "PROPN"):
        return False
    return form in POSSESSIVES


def _neighbours(words: Words, colon: Sequence[int], start: int, end: int) -> Set[int]:
    """The stem codes of the words of a colon right before and after the token range
    [start, end) (the words a possessive there goes with)."""
    inside = [k for k, t in enumerate(colon) if start <= t < end]
    if not inside:
        return set()
    stems = words.stem_codes
    around = [inside[0] - 1, inside[-1] + 1]
    return {int(stems[colon[k]]) for k in around if 0 <= k < len(colon)}


def possessive_link(doc: Doc, words: Words, cw: ColonWords, link: Tuple[int, Range, Range]) -> bool:
    """Whether a link of two cola is only a possessive agreeing with different nouns
    ("delicta mea, deus meus": mea / meus; "my sins, my God"): the same possessive
    with other words is no anadiplosis; with the same word it links ("peccatum meum,
    meum peccatum").

    doc (Doc): the doc.
    words (Words): its words.
    cw (ColonWords): the words of its cola.
    link (Tuple[int, Range, Range]): the colon, the link's words in it and in the next.
    RETURNS (bool): whether the link is a possessive alone, next to different words.
    """
    c, (s0, e0), (s1, e1) = link
    is_word = words.is_word
    linking = [t for t in range(s0, e0) if is_word[t]] + [t for t in range(s1, e1) if is_word[t]]
    if not linking or not all(is_possessive(doc, words, t) for t in linking):
        return False
    before = _neighbours(words, words_of(cw, c).tolist(), s0, e0)
    after = _neighbours(words, words_of(cw, c + 1).tolist(), s1, e1)
    return before.isdisjoint(after)


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
    numeral: Set[int] = set()  # Chinese links by a numeral: only inside a gradatio
    # the words as lists, by word index (colon c: bounds[c] to bounds[c + 1])
    bounds = cw.bounds
    tokens = cw.positions.tolist()
    code = codes[cw.positions].tolist()
    content = words.is_content[cw.positions].tolist()
    stopish_w = stopish[cw.positions].tolist()
    conj = words.is_conj[cw.positions].tolist()
    forms, lemmas = words.forms, words.lemmas
    for c in numpy.flatnonzero(maybe).tolist():
        a0, a1, b1 = bounds[c], bounds[c + 1], bounds[c + 2]
        b0 = a1  # the next colon's words follow
        skipped = 0  # leading conjunctions and stop words of the next ("and to virtue")
        if zh:  # a conjunction only (Chinese function characters may be the link)
            skipped = int(b1 - b0 > 1 and conj[b0])
        else:
            while skipped < MAX_LEAD and b1 - b0 - skipped > 1 and stopish_w[b0 + skipped]:
                skipped += 1
        bs = b0 + skipped
        if a1 - a0 < MIN_EDGE_WORDS and (not skipped or _comma_only(words, seg, c)):
            continue  # "Words, words": epizeuxis; "Vivis, et vivis": ploce
        if zh:  # by characters, over the tokens that can hold the overlap
            a, b = words_of(cw, c), words_of(cw, c + 1)[skipped:]
            start, end = _char_overlap(doc, a[-ZH_MAX_OVERLAP:], b[:ZH_MAX_OVERLAP])
            text_a = _colon_text(doc, a)
            if (
                len(text_a) >= 2
                and _colon_text(doc, b).startswith(text_a)
                and _sentence_link(doc, seg, c)
            ):
                stop = next(
                    (int(t) + 1 for t in b if len(_colon_text(doc, b[b <= t])) >= len(text_a)),
                    int(b[-1]) + 1,
                )
                links.append((c, (int(a[0]), int(a[-1]) + 1), (int(b[0]), stop)))
                continue
            if start < 0 or start <= a[0]:
                continue
            if _zh_link_ok(doc, a, b):
                links.append((c, (start, int(a[-1]) + 1), (int(b[0]), end)))
            elif _zh_numeral_link(doc, a, b):
                links.append((c, (start, int(a[-1]) + 1), (int(b[0]), end)))
                numeral.add(c)
            continue
        # the most words (at most MAX_SHARED) that end the colon and begin the next (all
        # of a one-word colon)
        k = min(MAX_SHARED, a1 - a0 - (0 if a1 - a0 < MIN_EDGE_WORDS else 1), b1 - bs)
        while k > 0 and code[a1 - k : a1] != code[bs : bs + k]:
            k -= 1
        if k:
            if k == b1 - bs and _comma_only(words, seg, c):
                continue  # "O Romeo, Romeo!": immediate repetition, epizeuxis
            link = (tokens[a1 - k], tokens[a1 - 1] + 1), (tokens[bs], tokens[bs + k - 1] + 1)
            links.append((c, *link))
            continue
        # free word order: a content word among the last words of one colon and the first
        # of the next, same form or one lemma ("virtutem industria, virtus gloriam"); the
        # closest pair first
        pair = None
        for x in range(a1 - 1, max(a0, a1 - LINK_WINDOW) - 1, -1):
            if not content[x]:
                continue
            form_x = forms[tokens[x]]
            for y in range(bs, min(b1, bs + LINK_WINDOW)):
                # one stem shares its first STEM_MIN_CHARS characters (``same_stem``)
                if content[y] and (
                    code[x] == code[y]
                    or (lemmas is not None and lemmas[tokens[x]] == lemmas[tokens[y]])
                    or (
                        form_x[:STEM_MIN_CHARS] == forms[tokens[y]][:STEM_MIN_CHARS]
                        and same_stem(form_x, forms[tokens[y]])
                    )
                ):
                    pair = x, y
                    break
            if pair is not None:
                break
        if pair is not None:
            x, y = pair
            # the same place in both cola is parallelism ("Das Wasser rauscht', das
            # Wasser schwoll": anaphora), not a link
            if x - a0 != y - b0:
                links.append((c, (tokens[x], tokens[x] + 1), (tokens[y], tokens[y] + 1)))
    if not zh:  # a possessive alone agreeing with different nouns links nothing
        links = [link for link in links if not possessive_link(doc, words, cw, link)]
    found: List[Candidate] = []
    chain: List[Tuple[int, Range, Range]] = []

    def close() -> None:
        if not chain:
            return
        if len(chain) < GRADATIO_MIN_LINKS and chain[0][0] in numeral:
            chain.clear()
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
        if group[3] < 2:
            return
        occ = group[0]
        if structured is not None and structured[occ].all():
            if len({int(colon_of[p]) for p in occ}) > 1:
                return
        if _unexplained(occ, explained) >= 2:
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
        if len({all_forms[p] for p in occ}) < 2 or _unexplained(occ, explained) < 2:
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


def plausible(
    doc: Doc,
    words: Words,
    seg: Segmentation,
    cand: Candidate,
    names: Optional[DocNames] = None,
) -> bool:
    """Whether a repetition candidate may be a figure at all (precision filters):

    * an edge figure (anaphora, epiphora, symploce) whose support is only weak words
      (stop and function words, names, numbers: ``words.is_weak``) is not proposed across
      sentences ("Die FDP hat … . Die FDP werde …"), and inside one sentence only with
      >= ``WEAK_MIN_MEMBERS`` members ("I came, I saw, I conquered");
    * identical members are no figure where they are longer than
      ``REFRAIN_MAX_TOKENS`` tokens, or whole sentences of >= 2 words repeated
      (duplicated lines);
    * Chinese: the support is no numeral, unit, date or name (平方公里, 人, 1960年);
    * no support word is a file name, address or URL (``words.MACHINE_TOKEN``), and no edge
      figure has a number in every member (schedules, phone lists);
    * the members of an edge or linking figure are no list of names, titles and
      addresses (``names.is_name_list``: "Mr. Speaker, Mr. Chief Justice, President
      Eisenhower, Vice President Nixon, President Truman").

    names (Optional[DocNames]): the doc as the name questions read it (None: read here).
    """
    is_word = words.is_word
    support = [t for s, e in cand.support for t in range(s, e) if is_word[t]]
    if words.is_machine[support].any():
        return False
    if cand.figure in EDGE + LINKING:
        names = names or doc_names(doc, words.lang)
        if is_name_list(names, cand.members):
            return False  # "Mr. Speaker, Mr. Chief Justice": a list of names and titles
    if cand.figure in EDGE and words.lang != "zh" and len(cand.members) >= 2:
        has_digit = words.has_digit  # the span's text holds a digit where a token's does
        if all(has_digit[s:e].any() for s, e in cand.members):
            return False  # a schedule or a list of numbers ("(713) 345-9945 Fax: (713)")
    if words.lang == "zh" and not _zh_numeral_chain(doc, words, cand):
        tagged = []
        for s, e in cand.support:
            text = "".join(doc[t].text for t in range(s, e) if words.is_word[t])
            if is_zh_quantity(text):
                return False
            tags = {words.pos[t] for t in range(s, e)} if words.pos is not None else set()
            tagged.append(tags.pop() if len(tags) == 1 else None)
        # a name only where the tagger says so of every occurrence (on classical text it
        # calls half the words PROPN: "出门看火伴，火伴皆惊忙")
        if tagged and all(t in ("PROPN", "NUM") for t in tagged):
            return False
    if cand.figure not in EDGE:
        return True
    cross = len(_sentences(seg, cand.members)) > 1
    articles = ARTICLES.get(words.lang)
    if articles and support and all(words.forms[t].lower() in articles for t in support):
        shared = len(support) / max(min(cand.n_members, len(cand.members)), 1)
        if shared / (2.0 if cand.figure == "symploce" else 1.0) < 2:
            return False
    if support and all(is_weak(words, t) for t in support):
        if not _weak_edge_ok(doc, words, seg, cand, support, cross):
            return False
    codes = words.form_codes
    is_word = words.is_word
    member_codes = [tuple(codes[s:e][is_word[s:e]].tolist()) for s, e in cand.members]
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


def _final_between(words: Words, members: Sequence[Range]) -> bool:
    """Whether sentence-final punctuation stands between consecutive members."""
    forms = words.forms  # normalising changes no punctuation
    return any(
        not SENTENCE_FINAL.isdisjoint(forms[e : max(e, s)])
        for (_, e), (s, _) in zip(members, members[1:])
    )


def _weak_edge_ok(
    doc: Doc, words: Words, seg: Segmentation, cand: Candidate, support: Sequence[int], cross: bool
) -> bool:
    """Whether an edge figure on weak words only (articles, pronouns, particles, names)
    may be one. The handbooks' *repetitio* repeats such words at the heads of successive
    cola of one period ("nam neque Parnasi vobis iuga, nam neque Pindi"; "dum innupta
    manet, dum cara suis est"; "Sie sprach zu ihm, sie sang zu ihm"); across unrelated
    sentences they are accidental ("Die FDP hat … . Die FDP werde …"). Kept: >=
    ``WEAK_MIN_MEMBERS`` members inside one sentence; inside one period (no sentence-final
    mark between the members, whatever the parser's sentences) also two members that
    share >= 2 words at the edge, or are adjacent cola parted by punctuation and of
    lengths within two words; >= ``WEAK_RUN_MIN_MEMBERS`` members on
    consecutive cola anywhere ("父兮生我，母兮鞠我。抚我畜我"); a question and its answer
    ("Quis …? Appius.")."""
    members = cand.members
    forms = words.forms  # normalising changes no punctuation
    if all(not QUESTION_MARKS.isdisjoint(forms[s : e - 1]) for s, e in members):
        return True  # question-and-answer symploce: the exchange is the structure
    if cand.figure == "anaphora" and not cand.whole_cola and not cross:
        return True  # phrases opening alike inside one sentence ("tam uelociter, tam rapide")
    if not cross and cand.n_members >= WEAK_MIN_MEMBERS:
        return True
    colon = [int(seg.colon_of[s]) for s, _ in members]
    consecutive = cand.whole_cola and all(b - a == 1 for a, b in zip(colon, colon[1:]))
    if consecutive and cand.n_members >= WEAK_RUN_MIN_MEMBERS:
        return True
    if _final_between(words, members):
        return False
    shared = len(support) / max(min(cand.n_members, len(members)), 1)
    if cand.figure == "symploce":
        shared /= 2.0  # head and tail
    if cand.n_members >= WEAK_MIN_MEMBERS or shared >= 2:
        return True
    # two adjacent cola: punctuation between them (not a clause the parser split off at
    # a conjunction: "I'm a decision-maker | and I can") and lengths within two words
    sizes = [int(words.is_word[s:e].sum()) for s, e in members]
    return (
        consecutive
        and all(seg.boundary[e:s].any() for (_, e), (s, _) in zip(members, members[1:]))
        and max(sizes) - min(sizes) <= 2
    )


def _zh_numeral_chain(doc: Doc, words: Words, cand: Candidate) -> bool:
    """Chinese: whether a gradatio links short parallel cola by numerals ("道生一，一生二，
    二生三"): a chain of numbers, not the wording of statistics."""
    if cand.figure != "gradatio":
        return False
    lengths = [
        len("".join(doc[t].text for t in range(s, e) if words.is_word[t])) for s, e in cand.members
    ]
    return max(lengths) <= ZH_SHORT_COLON and max(lengths) - min(lengths) <= 2


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
    plain = {c.support for c in ploce}
    immediate = repeated | _support_tokens(linking)  # an epizeuxis or a link explains it
    ploce += [
        c
        for c in epanalepsis_candidates(words, seg, cw)
        if c.support not in plain and _unexplained([s for s, _ in c.support], immediate) >= 1
    ]
    polyptoton = polyptoton_candidates(words, cw, explained)
    names = doc_names(doc, words.lang)
    found = [
        c
        for c in edge + linking + epizeuxis + ploce + polyptoton
        if plausible(doc, words, seg, c, names)
    ]
    if figures is not None:
        found = [c for c in found if c.figure in figures]
    return found
