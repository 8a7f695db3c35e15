"""The figures of repetition as one search: ``repetition_candidates`` runs the rules of
each family (``edges``: anaphora, epiphora, symploce; ``linking``: anadiplosis, gradatio;
``in_place``: epizeuxis, ploce, epanalepsis, polyptoton), drops what another figure
already explains, and keeps what passes ``plausible``.

Words are compared by their normal form (``words.normalize``: lower case, Latin u/v and
i/j folded). Every rule is one pass over the cola or the words, with windows and caps
(``candidates.MAX_MEMBERS``): linear in the length of the doc.

Order: links first (a linked pair of cola is that anadiplosis, not a two-member edge
figure), then epizeuxis (an immediate repetition a link already joins is none), then the
edge figures, then ploce and polyptoton on the words none of these explains.

Every candidate then passes ``plausible`` (precision filters): edge figures on weak
words only (articles, pronouns, names, numbers) not across sentences and inside one with
>= 3 members; on articles alone only where the members share a second word; no identical
members (duplicated lines) beyond short cola of one sentence; in Chinese no numeral,
unit, date or name as support, and a 顶真 link of at least two characters unless the cola
are short and parallel.
"""

from typing import List, Optional, Sequence, Set

import numpy
from spacy.tokens import Doc

from ..names import DocNames, doc_names, is_name_list
from .candidates import Candidate, Range
from .edges import edge_candidates
from .in_place import (
    epanalepsis_candidates,
    epizeuxis_candidates,
    ploce_candidates,
    polyptoton_candidates,
    unexplained,
)
from .linking import ZH_SHORT_COLON, linking_candidates
from .segment import QUESTION_MARKS, SENTENCE_FINAL, Segmentation
from .words import ColonWords, Words, is_weak, is_zh_quantity

WEAK_MIN_MEMBERS = 3  # members of an edge figure on weak words (inside one sentence)
REFRAIN_MAX_TOKENS = 6  # identical members: only short cola inside one sentence
WEAK_RUN_MIN_MEMBERS = 4  # consecutive cola on one weak word: a figure across sentences

# articles: an edge figure on them alone needs a second shared word ("a time ..., a
# time ..."); "a drop ..., a deterioration ..., an increase ..." is a list, not a figure
ARTICLES = {
    "en": frozenset("a an the".split()),
    "de": frozenset("der die das den dem des ein eine einen einem einer eines".split()),
}

EDGE = ("anaphora", "epiphora", "symploce")
LINKING = ("anadiplosis", "gradatio")
IN_PLACE = ("epizeuxis", "ploce", "polyptoton")
FIGURES = EDGE + LINKING + IN_PLACE


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
        if c.support not in plain and unexplained([s for s, _ in c.support], immediate) >= 1
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
