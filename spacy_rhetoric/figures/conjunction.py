"""Candidate rules of the figures of conjunction: polysyndeton and asyndeton.

* **polysyndeton**: >= 2 occurrences of the same coordinating conjunction
  (``words.CONJUNCTIONS``; in Latin also the enclitic -que) in one sentence, consecutive
  ones at most ``POLYSYNDETON_GAP`` words apart, joining >= 3 non-empty members: the
  stretch before the first conjunction (the rest of its colon, at most ``MAX_FIRST``
  words; none where a conjunction opens the sentence too: "neque mors neque vita neque
  angeli", "Und es wallet und siedet und brauset", "tectumque laremque armaque"), the
  stretches between them, and the rest of the colon after the last. The support is the
  conjunctions. Where the parse is trusted (not Latin: ``UNTRUSTED_PARSE``), consecutive
  conjunctions must join conjuncts of one coordination (the same first conjunct up the
  ``conj`` chain): "zwischen ihm und Linares und der Abbruch" is two coordinations.
* **asyndeton** (*dissolutio*): a maximal run of >= 3 consecutive cola of one sentence,
  separated by commas, semicolons or dashes (in Chinese a 、 ends the run: a 、 list is
  ordinary enumeration, and so are coordinated words with 、 between), none after the
  first opening with a connective (``words.CONNECTIVES``, a ``mark``/``cc`` word of the
  parse, or a relative pronoun: "Die Briefe, die ... datieren, enthalten ...") unless
  the colon before opens with the same one ("si ..., si ..., si ...", "die ..., die
  ..."), none longer than ``MAX_ASYNDETON_WORDS`` words (or, without a conjunction at
  its head, ``MAX_LONG_MEMBER_WORDS`` words, a conjunction inside), no list of short
  items closed by a conjunction ("der Rhein, die Rhone, der Inn, der Tessin und der
  Po": ``LIST_CLOSING_WORDS``, ``LIST_ITEM_WORDS``), and not all the
  same words (that is epizeuxis): "Veni, vidi, vici"; and, where the doc has
  a parse, a word with >= 2 ``conj`` dependents, none of them (nor the word) with a
  ``cc`` dependent, separated by commas ("the strong, brave, loyal soldiers"): the
  words are the members; and >= 3 adjacent verbs with no conjunction ("abiit excessit
  erupit evasit"; in Latin also untagged words with a finite verb's ending). The
  support is the members' first words. Names, titles and forms of address are no
  members (``address_cola``, ``names.is_name_list``): "Vice President Johnson, Mr.
  Speaker, ..., fellow citizens" is the list of those addressed.
"""

import operator
from itertools import repeat
from typing import Dict, List, Optional, Set

import numpy
from spacy.attrs import DEP, HEAD
from spacy.strings import get_string_id
from spacy.tokens import Doc

from ..names import ADDRESS_WORDS, NAME_MAX_WORDS, DocNames, doc_names, is_address, is_name_list
from .candidates import MAX_MEMBERS, Candidate, Range, make_candidate, runs
from .segment import Segmentation
from .words import CONJUNCTIONS, CONNECTIVES, ColonWords, Words, is_enclitic_que, words_of

_MARK_ID, _CC_ID = get_string_id("mark"), get_string_id("cc")
_CONJ_ID = get_string_id("conj")
# languages whose base parser is not trusted to attach conjunctions (Latin: trained on
# Dante's Latin)
UNTRUSTED_PARSE = frozenset(["la"])

POLYSYNDETON_GAP = 12
MAX_FIRST = 8
MAX_ASYNDETON_WORDS = 10
# a longer member of a run may hold a conjunction inside ("Kindly separated by nature and
# a wide ocean ..., too high-minded to ..., possessing a chosen country, ...")
MAX_LONG_MEMBER_WORDS = 24
# a list of short items closed by a conjunction is no asyndeton: the closing part and
# the items, in words
LIST_CLOSING_WORDS = 5
LIST_ITEM_WORDS = 3
# endings of Latin finite verbs (perfect -it, -imus, -erunt; present -at, -et, -nt ...)
LATIN_VERB_ENDINGS = ("it", "at", "et", "nt", "mus", "tis", "isti", "erunt")
NOT_VERBAL = frozenset(["NOUN", "PROPN", "PRON", "DET", "ADP", "NUM", "PUNCT"])
SEPARATORS = frozenset([",", ";", "–", "—", "--", "，", "；", "、"])
FIGURES = ("polysyndeton", "asyndeton")


def _trim(doc: Doc, words: Words, start: int, end: int) -> Range:
    """A range without the non-words at its edges (start == end where none is left)."""
    while start < end and not words.is_word[start]:
        start += 1
    while end > start and not words.is_word[end - 1]:
        end -= 1
    return start, end


def _conjunction_key(words: Words, p: int) -> Optional[str]:
    form = words.forms[p]
    if words.is_conj[p] and form in CONJUNCTIONS.get(words.lang, ()):
        return form
    if words.lang == "la" and is_enclitic_que(form):
        return "-que"
    return None


ENDS_QUE, VERB_ENDING, COMMA_OR_SPACE = 1, 2, 4  # bits of ``_form_bits``


class _FormBits(dict):
    """Bits of a normal form (``ENDS_QUE``, ``VERB_ENDING``, ``COMMA_OR_SPACE``), kept
    across docs."""

    def __missing__(self, form: str) -> int:
        if len(self) > 1_000_000:
            self.clear()
        bits = (
            ENDS_QUE * form.endswith("que")
            + VERB_ENDING * (len(form) >= 4 and form.endswith(LATIN_VERB_ENDINGS))
            + COMMA_OR_SPACE * (form in (",", "，") or not form.strip())
        )
        self[form] = bits
        return bits


_FORM_BITS = _FormBits()


def _form_bits(words: Words) -> numpy.ndarray:
    """RETURNS (numpy.ndarray): [n] the bits of each token's form."""
    forms = words.forms
    return numpy.fromiter(map(_FORM_BITS.__getitem__, forms), dtype=numpy.int64, count=len(forms))


def _coordination_roots(doc: Doc) -> Optional[List[int]]:
    """Per token: for a ``cc`` word, the first conjunct of its coordination (its head,
    followed up the ``conj`` chain); -1 for other tokens. None without a trusted parse."""
    if doc.lang_ in UNTRUSTED_PARSE or not doc.has_annotation("DEP"):
        return None
    arr = doc.to_array([DEP, HEAD])
    deps = arr[:, 0].tolist()
    heads = (numpy.arange(len(doc)) + arr[:, 1].astype("int64")).tolist()
    roots = [-1] * len(doc)
    for t, dep in enumerate(deps):
        if dep != _CC_ID:
            continue
        x, steps = heads[t], 0
        while deps[x] == _CONJ_ID and heads[x] != x and steps < len(doc):
            x, steps = heads[x], steps + 1
        roots[t] = x
    return roots


def polysyndeton_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords
) -> List[Candidate]:
    """Polysyndeta (see the module docstring)."""
    found: List[Candidate] = []
    sentence = seg.token_sentence
    roots = _coordination_roots(doc)
    # key -> [conjunction tokens (capped), last word index, count, first word index,
    # the coordination's first conjunct (-1: unknown)]
    open_: Dict[str, List] = {}

    def close(key: str, group: List) -> None:
        conj = group[0]
        if group[2] < 2:
            return
        que = key == "-que"
        members: List[Range] = []
        first = conj[0]
        n_members = group[2] + 1
        if que:  # the word before the first -que word, then each -que word
            before = [p for p in cw.positions[max(0, group[3] - 1) : group[3]].tolist()]
            if not before or seg.colon_of[before[0]] < 0 or sentence[before[0]] != sentence[first]:
                before = []  # the series opens with a -que word ("tectumque laremque ...")
                n_members = group[2]
            members = [(b, b + 1) for b in before] + [(p, p + 1) for p in conj]
        else:
            colon = int(seg.colon_of[first])
            leading = False  # a conjunction before the first member too ("neque mors neque vita")
            if seg.starts[colon] == first:  # the conjunction opens its colon: the one before
                colon -= 1
                leading = colon < 0 or seg.sentence[colon] != seg.sentence[colon + 1]
            if leading:
                n_members = group[2]
            else:
                colon_words = words_of(cw, colon)
                colon_words = colon_words[colon_words < first][-MAX_FIRST:]
                if not len(colon_words):
                    return
                members.append((int(colon_words[0]), int(colon_words[-1]) + 1))
            for p, q in zip(conj, conj[1:]):
                members.append(_trim(doc, words, p + 1, q))
            after = conj[-1] + 1
            stop, limit = after, min(len(doc), after + 2 * POLYSYNDETON_GAP)
            while stop < limit and seg.colon_of[stop] >= 0 and not words.is_conj[stop]:
                stop += 1
            members.append(_trim(doc, words, after, stop))
        if n_members < 3 or any(s >= e for s, e in members):
            return
        found.append(make_candidate("polysyndeton", members, [(p, p + 1) for p in conj], n_members))

    # only conjunctions and (Latin) words ending in -que can be keyed; j is a word index
    maybe = words.is_conj[cw.positions]
    if words.lang == "la":
        maybe = maybe | (_form_bits(words)[cw.positions] & ENDS_QUE != 0)
    for j in numpy.flatnonzero(maybe).tolist():
        p = int(cw.positions[j])
        key = _conjunction_key(words, p)
        if key is None:
            continue
        group = open_.get(key)
        if (
            group is not None
            and j - group[1] <= POLYSYNDETON_GAP
            and sentence[p] == sentence[group[0][-1]]
            and (roots is None or roots[p] < 0 or group[4] < 0 or roots[p] == group[4])
        ):
            if len(group[0]) < MAX_MEMBERS:
                group[0].append(p)
            group[1] = j
            group[2] += 1
            continue
        if group is not None and group[2] >= 2:
            close(key, group)
        open_[key] = [[p], j, 1, j, -1 if roots is None else roots[p]]
    for key, group in open_.items():
        if group[2] >= 2:
            close(key, group)
    found.sort(key=lambda c: c.start)
    return found


def _separated(forms: List[str], end: int, next_start: int) -> bool:
    """Whether a colon ending at ``end`` is followed by the next (from ``next_start``)
    after a list separator only (a sentence start the parser put after a comma does not
    count: "dediderim periculis omnibus, optulerim insidiis, obiecerim invidiae"). Read
    on the normal forms: normalising changes no punctuation and no space."""
    between = forms[end : min(next_start, end + 4)]
    return (
        bool(between)
        and all(t in SEPARATORS or not t.strip() for t in between)
        and any(t in SEPARATORS for t in between)
    )


def _enumerated(forms: List[str], end: int, next_start: int) -> bool:
    """Whether the enumeration comma 、 separates a colon ending at ``end`` from the
    next (Chinese: an ordinary list of names or things, not an asyndeton; read on the
    normal forms)."""
    return "、" in forms[end : min(next_start, end + 4)]


def _verbal(words: Words, p: int) -> bool:
    """A verb by its tag, or (Latin) a word with a finite verb's ending not tagged as a
    noun or function word (the Latin taggers miss asyndetic verbs: "abiit excessit")."""
    if not words.is_word[p] or words.is_stop[p] or words.is_conj[p]:
        return False
    tag = words.pos[p] if words.pos is not None else ""
    if tag == "VERB":
        return True
    form = words.forms[p]
    return (
        words.lang == "la"
        and len(form) >= 4
        and form.endswith(LATIN_VERB_ENDINGS)
        and tag not in NOT_VERBAL
    )


def verb_runs(doc: Doc, words: Words) -> List[List[Range]]:
    """Asyndeta of verbs without punctuation ("abiit excessit erupit evasit", "didicimus
    accepimus legimus"): maximal runs of >= 3 adjacent verbs (``_verbal``; commas may
    stand between), distinct forms, no conjunction. Vectorised; the rare verb runs are
    then read one by one."""
    if words.pos is None and words.lang != "la":
        return []
    n = len(doc)
    candidate = words.is_word & ~words.is_stop & ~words.is_conj
    if words.pos is not None:
        verbal = candidate & numpy.fromiter(
            map(operator.eq, words.pos, repeat("VERB")), dtype=bool, count=n
        )
    else:
        verbal = numpy.zeros(n, dtype=bool)
    bits: Optional[numpy.ndarray] = None
    if words.lang == "la":  # untagged as a verb, not a noun or function word: by its ending
        bits = _form_bits(words)
        maybe = candidate & ~verbal
        if words.pos is not None:
            maybe &= ~numpy.fromiter(map(NOT_VERBAL.__contains__, words.pos), dtype=bool, count=n)
        verbal |= maybe & (bits & VERB_ENDING != 0)
    if verbal.sum() < 3:
        return []
    # three verbal words in a row among the words (commas are no words): needed for a run
    in_words = verbal[words.is_word]
    if not (in_words[:-2] & in_words[1:-1] & in_words[2:]).any():
        return []
    if bits is None:
        bits = _form_bits(words)
    comma = bits & COMMA_OR_SPACE != 0
    keep = ~comma  # commas and spaces do not break a run
    index = numpy.flatnonzero(keep)
    flags = verbal[index]
    found: List[List[Range]] = []
    if not (flags[:-2] & flags[1:-1] & flags[2:]).any():
        return found  # no three adjacent verbs
    for a, e in runs(flags):
        run = index[a:e].tolist()
        if len(run) >= 3 and len({words.forms[p] for p in run}) == len(run):
            found.append([(p, p + 1) for p in run[:MAX_MEMBERS]])
    return found


def _coordinated(doc: Doc, words: Words, taken: Set[int], names: DocNames) -> List[Candidate]:
    """Coordinated words without a conjunction (see the module docstring), from the
    parse as arrays (``Doc.to_array``): only heads with >= 2 ``conj`` dependents are
    looked at; not names ("Johnson, Speaker, Eisenhower": ``names.is_name_list``)."""
    n = len(doc)
    strings = doc.vocab.strings
    array = doc.to_array([DEP, HEAD]).reshape(n, 2).astype(numpy.int64, copy=False)
    deps = array[:, 0].astype(numpy.uint64)
    heads = numpy.arange(n) + array[:, 1]
    is_conj_dep = deps == strings.add("conj")
    if is_conj_dep.sum() < 2:
        return []
    conj_heads = heads[is_conj_dep]
    per_head = numpy.bincount(conj_heads, minlength=n)
    has_cc = numpy.zeros(n, dtype=bool)  # a token with a cc dependent
    cc = deps == strings.add("cc")
    has_cc[heads[cc]] = True
    found: List[Candidate] = []
    conj_tokens = numpy.flatnonzero(is_conj_dep)
    for h in numpy.flatnonzero(per_head >= 2).tolist():
        if h in taken:
            continue
        items = [h] + conj_tokens[conj_heads == h].tolist()
        if has_cc[items].any() or words.is_conj[items].any():
            continue
        if len({words.forms[t] for t in items}) == 1:
            continue
        if is_name_list(names, [(t, t + 1) for t in items]):
            continue  # "Johnson, Speaker, Eisenhower": names
        positions = sorted(items)
        if words.lang == "zh" and any(
            words.forms[i] == "、" for i in range(positions[0], positions[-1])
        ):
            continue  # a 、 list is ordinary enumeration
        gaps_ok = all(
            q - p <= 4 and any(words.forms[i] in SEPARATORS for i in range(p + 1, q))
            for p, q in zip(positions, positions[1:])
        )
        if not gaps_ok:
            continue
        members = [(p, p + 1) for p in positions]
        found.append(make_candidate("asyndeton", members, members, len(members)))
        taken.update(positions)
    return found


def _same_opening(forms: List[str], positions: List[int], bounds: numpy.ndarray, c: int) -> bool:
    """Whether colon c opens with the same word as colon c - 1 (an anaphoric series of
    clauses opening with one connective: "si ..., si ..., si ..." is asyndetic)."""
    a, b = positions[bounds[c - 1] : bounds[c]], positions[bounds[c] : bounds[c + 1]]
    return bool(a and b) and forms[a[0]] == forms[b[0]]


def address_cola(names: DocNames, seg: Segmentation, cw: ColonWords) -> numpy.ndarray:
    """The cola that only name or address people ("Vice President Johnson, Mr. Speaker,
    ..., reverend clergy, fellow citizens, we observe ..."; ``names.is_address``): no
    members of an asyndeton, so they end a run. Only cola of at most
    ``names.NAME_MAX_WORDS`` words holding a capital or a word of address are read.

    names (DocNames): the doc as the name questions read it (``names.doc_names``).
    seg (Segmentation): its cola.
    cw (ColonWords): the words of its cola.
    RETURNS (numpy.ndarray): [m] bool, per colon.
    """
    doc = names.doc
    m = len(seg)
    address = numpy.zeros(m, dtype=bool)
    starts, ends = seg.starts.tolist(), seg.ends.tolist()
    for c in numpy.flatnonzero((cw.count >= 1) & (cw.count <= NAME_MAX_WORDS)).tolist():
        tokens = doc[starts[c] : ends[c]]
        if any(t.text[:1].isupper() or t.text.lower() in ADDRESS_WORDS for t in tokens):
            address[c] = is_address(names, starts[c], ends[c])
    return address


def asyndeton_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords
) -> List[Candidate]:
    """Asyndeta of cola and, with a parse, of coordinated words (see the module docstring)."""
    m = len(seg)
    found: List[Candidate] = []
    names = doc_names(doc, words.lang)
    if m >= 3:
        conj_per_colon = (
            numpy.bincount(cw.colon[words.is_conj[cw.positions]], minlength=m)
            if len(cw.positions)
            else numpy.zeros(m, dtype=numpy.int64)
        )
        # a conjunction inside a long member joins its words, not the members; a colon
        # that opens with one ("..., and C") ends the run
        first_word = numpy.maximum(cw.first, 0)
        opens_conj = words.is_conj[first_word] & (cw.first >= 0)
        fits = (cw.count >= 1) & (
            ((cw.count <= MAX_ASYNDETON_WORDS) & (conj_per_colon == 0))
            | ((cw.count <= MAX_LONG_MEMBER_WORDS) & ~opens_conj)
        )
        fits &= ~address_cola(names, seg, cw)
        connectives = CONNECTIVES.get(words.lang, frozenset())
        forms = words.forms
        opens = numpy.zeros(m, dtype=bool)  # the colon opens with a connective
        looked = numpy.flatnonzero(fits & (cw.first >= 0))
        if len(looked):
            firsts = cw.first[looked]
            if doc.has_annotation("DEP"):  # or a mark/cc word
                deps = doc.to_array(DEP)[firsts]
                opens[looked] = (deps == _MARK_ID) | (deps == _CC_ID)
            for c, first in zip(looked.tolist(), firsts.tolist()):
                # a relative pronoun opens a relative clause, no member
                if forms[first] in connectives or "Rel" in doc[first].morph.get("PronType"):
                    opens[c] = True
        run: List[int] = []
        zh = words.lang == "zh"
        starts, ends = seg.starts.tolist(), seg.ends.tolist()
        bounds, positions = cw.bounds, cw.positions.tolist()

        counts, conj_in = cw.count.tolist(), (conj_per_colon > 0).tolist()

        def syndetic_list(closing: int) -> bool:
            """Whether the run is a list of short items closed by a conjunction ("der
            Rhein, die Rhone, der Inn, der Tessin und der Po"): its last member holds
            one, or the next colon (``closing``, -1: none) opens with one, that closing
            part short, and >= 2 members after the first short too."""
            last = run[-1]
            if conj_in[last]:
                part = counts[last]
            elif (
                closing >= 0 and conj_in[closing] and _separated(forms, ends[last], starts[closing])
            ):
                part = counts[closing]
            else:
                return False
            short = sum(counts[c] <= LIST_ITEM_WORDS for c in run[1:])
            return part <= LIST_CLOSING_WORDS and short >= 2

        def close(closing: int = -1) -> None:  # a run of >= 3 cola
            if syndetic_list(closing):
                run.clear()
                return
            cola = run[:MAX_MEMBERS]
            texts = {tuple(forms[t] for t in positions[bounds[c] : bounds[c + 1]]) for c in cola}
            if len(texts) > 1:
                members = [(starts[c], ends[c]) for c in cola]
                support = [(positions[bounds[c]], positions[bounds[c]] + 1) for c in cola]
                found.append(
                    make_candidate("asyndeton", members, support, len(run), True, end=ends[run[-1]])
                )
            run.clear()

        opens_list = opens.tolist()
        for c, fit in enumerate(fits.tolist()):
            if not fit:
                if len(run) >= 3:
                    close(c if run[-1] == c - 1 else -1)
                run.clear()
                continue
            if run and not (
                run[-1] == c - 1
                and (
                    not opens_list[c]
                    or (opens_list[c - 1] and _same_opening(forms, positions, bounds, c))
                )
                and _separated(forms, ends[c - 1], starts[c])
                and not (zh and _enumerated(forms, ends[c - 1], starts[c]))
            ):
                if len(run) >= 3:
                    close()
                run.clear()
            run.append(c)
        if len(run) >= 3:
            close()
    taken: Set[int] = {t for c in found for s, e in c.members for t in range(s, e)}
    for members in verb_runs(doc, words):
        if not any(s in taken for s, _ in members):
            found.append(make_candidate("asyndeton", members, members, len(members)))
            taken.update(s for s, _ in members)
    if doc.has_annotation("DEP"):
        found += _coordinated(doc, words, taken, names)
    found.sort(key=lambda c: c.start)
    return found


def conjunction_candidates(
    doc: Doc, words: Words, seg: Segmentation, cw: ColonWords, figures: Optional[Set[str]] = None
) -> List[Candidate]:
    """RETURNS (List[Candidate]): the polysyndeta and asyndeta of a doc."""
    found: List[Candidate] = []
    if figures is None or "polysyndeton" in figures:
        found += polysyndeton_candidates(doc, words, seg, cw)
    if figures is None or "asyndeton" in figures:
        found += asyndeton_candidates(doc, words, seg, cw)
    return found
