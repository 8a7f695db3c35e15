"""Repetition that links cola: anadiplosis and gradatio.

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
"""

import re
from typing import List, Sequence, Set, Tuple

import numpy
from spacy.tokens import Doc

from ..stems import STEM_MIN_CHARS, same_stem
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate
from .edges import MAX_SHARED, MIN_EDGE_WORDS, ZH_MAX_OVERLAP, colon_text
from .segment import SENTENCE_FINAL, Segmentation
from .words import ColonWords, Words, is_zh_quantity, words_of

GRADATIO_MIN_LINKS = 2
GRADATIO_STEP = 2
MAX_LEAD = 3  # leading conjunctions/stop words skipped before a link ("and to virtue")
LINK_WINDOW = 2  # words at the end of a colon / start of the next compared for a link
ZH_SHORT_COLON = 6  # characters of the short parallel cola a one-character link may join
ZH_MAX_LINK_COLON = 12  # characters of the longest colon a Chinese link may join
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
    text_a, text_b = colon_text(doc, a), colon_text(doc, b)
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
    text_a, text_b = colon_text(doc, a), colon_text(doc, b)
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
            text_a = colon_text(doc, a)
            if (
                len(text_a) >= 2
                and colon_text(doc, b).startswith(text_a)
                and _sentence_link(doc, seg, c)
            ):
                stop = next(
                    (int(t) + 1 for t in b if len(colon_text(doc, b[b <= t])) >= len(text_a)),
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
