"""Features of figure candidates: one row of named columns per candidate (numpy).

After Dubremetz & Nivre (2018): what separates rhetoric from accidental repetition is
the repeated word (its part of speech, whether it is a stop word, its length), the
shape of the series (members, their length similarity: isocolon), distance and
punctuation. The *repeated word* is the first support range (its first token for the
part of speech).

| column | meaning |
|---|---|
| `bias` | 1 |
| `pos_noun` ... `pos_other` | one-hot POS of the repeated word (`POS_COLUMNS`, other) |
| `tagged` | 1 where the doc has POS |
| `stop` | share of support ranges made of stop words or conjunctions only |
| `word_chars` | characters of the repeated word(s), at most 12 |
| `short_word` | 1 where those are at most 2 characters |
| `support_words` | mean words per support range (2 for "Blessed are"), at most 4 |
| `members` | members of the run, at most 10 |
| `extra_members` | members beyond 2, at most 8 |
| `length_ratio` | shortest / longest member in words (isocolon: 1) |
| `member_words` | log(1 + mean words per member) |
| `span_tokens` | log(1 + tokens from the first member to the last) |
| `distance` | log(1 + mean words between consecutive support ranges) |
| `punct_between` | share of consecutive support ranges with break punctuation between |
| `punct_boundaries` | share of members followed by break punctuation or a line break |
| `position` | first member's start, relative to its sentence (0: at the start) |
| `sentence_start` | 1 where the first member starts its sentence |
| `whole_cola` | 1 where the members are whole cola |
| `distinct_words` | distinct repeated forms in the support, at most 6 |
| `cross_sentence` | 1 where the instance spans more than one sentence |
| `support_all_stop` | 1 where every support word is a stop word or conjunction |
| `support_propn_num` | 1 where a support word is a name (PROPN), a number or numeral |
| `member_sentences` | share of consecutive members in different sentences |
| `identical_share` | share of the members' distinct words found in every member |
| `repeated_nearby` | log(1 + other uses of the repeated word near it: a topic word) |
| `shape_*` ... `q_*` | the figures of thought (``THOUGHT_FEATURES``; ``thought``) |
"""

import math
from bisect import bisect_left
from typing import Dict, List, Sequence

import numpy
from spacy.tokens import Doc

from .candidates import Candidate
from .segment import Segmentation
from .words import Words

# the columns of the figures of thought (``thought.thought_features``; 0 for the others)
THOUGHT_FEATURES = (
    "shape_corrective",
    "shape_negated",
    "shape_antonyms",
    "shape_contrast",
    "antonym_pairs",
    "negation_asymmetry",
    "contrast_word",
    "support_same_pos",
    "q_interrogative",
    "q_yes_no",
    "q_particle",
    "q_negated",
    "q_series",
    "q_answer",
    "q_dialogue",
    "q_words",
    "q_second_person",
)
POS_COLUMNS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "CCONJ")
FEATURES = (
    ("bias",)
    + tuple(f"pos_{p.lower()}" for p in POS_COLUMNS)
    + (
        "pos_other",
        "tagged",
        "stop",
        "word_chars",
        "short_word",
        "support_words",
        "members",
        "extra_members",
        "length_ratio",
        "member_words",
        "span_tokens",
        "distance",
        "punct_between",
        "punct_boundaries",
        "position",
        "sentence_start",
        "whole_cola",
        "distinct_words",
        "cross_sentence",
        "support_all_stop",
        "support_propn_num",
        "member_sentences",
        "identical_share",
        "repeated_nearby",
    )
    + THOUGHT_FEATURES
)
# ``repeated_nearby`` counts the repeated word (by lemma or stem) this many tokens either
# side of the instance, outside it: a topic word comes back ("rats ... a rat cage")
NEARBY_TOKENS = 60
COLUMN = {name: i for i, name in enumerate(FEATURES)}


# the columns as constants (read once per candidate)
_BIAS = COLUMN["bias"]
_TAGGED = COLUMN["tagged"]
_POS_OTHER = COLUMN["pos_other"]
_STOP = COLUMN["stop"]
_WORD_CHARS = COLUMN["word_chars"]
_SHORT_WORD = COLUMN["short_word"]
_SUPPORT_WORDS = COLUMN["support_words"]
_MEMBERS = COLUMN["members"]
_EXTRA_MEMBERS = COLUMN["extra_members"]
_LENGTH_RATIO = COLUMN["length_ratio"]
_MEMBER_WORDS = COLUMN["member_words"]
_SPAN_TOKENS = COLUMN["span_tokens"]
_DISTANCE = COLUMN["distance"]
_PUNCT_BETWEEN = COLUMN["punct_between"]
_PUNCT_BOUNDARIES = COLUMN["punct_boundaries"]
_POSITION = COLUMN["position"]
_SENTENCE_START = COLUMN["sentence_start"]
_WHOLE_COLA = COLUMN["whole_cola"]
_DISTINCT_WORDS = COLUMN["distinct_words"]
_CROSS_SENTENCE = COLUMN["cross_sentence"]
_SUPPORT_ALL_STOP = COLUMN["support_all_stop"]
_SUPPORT_PROPN_NUM = COLUMN["support_propn_num"]
_MEMBER_SENTENCES = COLUMN["member_sentences"]
_IDENTICAL_SHARE = COLUMN["identical_share"]
_REPEATED_NEARBY = COLUMN["repeated_nearby"]


# the one-hot column of each tagged POS
POS_COLUMN = {tag: COLUMN[f"pos_{tag.lower()}"] for tag in POS_COLUMNS}


def word_keys(words: Words) -> List[object]:
    """Per token, the key of its word: the lemma where the base pipeline gives trusted
    lemmas (not Latin: its tagger is trained on Dante's Latin), else the stem code
    (``Words.stem_codes``); None for punctuation."""
    if words.lemmas is not None and words.lang != "la":
        keys: List[object] = list(words.lemmas)
    else:
        keys = words.stem_codes.tolist()
    is_word = words.is_word.tolist()
    return [key if ok else None for key, ok in zip(keys, is_word)]


def _positions(keys: Sequence[object]) -> Dict[object, List[int]]:
    """RETURNS: per key, the sorted token positions that carry it."""
    at: Dict[object, List[int]] = {}
    for t, key in enumerate(keys):
        if key is not None:
            at.setdefault(key, []).append(t)
    return at


def candidate_features(
    doc: Doc, words: Words, seg: Segmentation, candidates: Sequence[Candidate]
) -> numpy.ndarray:
    """The feature rows of a doc's candidates: the doc's arrays are read once as Python
    lists and each row is built as a list (no numpy call per candidate).

    doc (Doc): the doc.
    words (Words): its words (``words.doc_words``).
    seg (Segmentation): its cola.
    candidates (Sequence[Candidate]): the candidates.
    RETURNS (numpy.ndarray): [k, len(FEATURES)] float32.
    """
    if not candidates:
        return numpy.zeros((0, len(FEATURES)), dtype="float32")
    n = len(doc)
    forms, pos, tagged = words.forms, words.pos, words.pos is not None
    is_word = words.is_word.tolist()
    codes = words.form_codes.tolist()
    word_cum = numpy.concatenate(([0], numpy.cumsum(words.is_word))).tolist()
    # break punctuation or a line break; the end of the doc closes a member too
    breaks = seg.boundary.tolist() + [True]
    break_cum = numpy.concatenate(([0], numpy.cumsum(seg.boundary))).tolist()
    stopish = (words.is_stop | words.is_conj).tolist()
    sentence = seg.token_sentence.tolist()
    change = numpy.flatnonzero(numpy.diff(seg.token_sentence)) + 1
    sent_start = numpy.concatenate(([0], change)).tolist()  # per sentence id
    sent_end = numpy.concatenate((change, [n])).tolist()
    keys = word_keys(words)
    key_at = _positions(keys)
    rows = []
    for cand in candidates:
        x = [0.0] * len(FEATURES)
        x[_BIAS] = 1.0
        x[_TAGGED] = float(tagged)
        s0, e0 = cand.support[0] if cand.support else cand.members[0]
        if tagged:
            x[POS_COLUMN.get(pos[s0], _POS_OTHER)] = 1.0
        word_ranges = [(s, e) for s, e in cand.support if word_cum[e] - word_cum[s] > 0] or [
            (s0, e0)
        ]
        stops = [all(stopish[t] or not is_word[t] for t in range(s, e)) for s, e in word_ranges]
        x[_STOP] = sum(stops) / len(stops)
        chars = sum(len(forms[t]) for t in range(s0, e0) if is_word[t])
        x[_WORD_CHARS] = min(chars, 12)
        x[_SHORT_WORD] = float(chars <= 2)
        support_words = [word_cum[e] - word_cum[s] for s, e in word_ranges]
        x[_SUPPORT_WORDS] = min(sum(support_words) / len(support_words), 4)
        x[_MEMBERS] = min(cand.n_members, 10)
        x[_EXTRA_MEMBERS] = min(max(cand.n_members - 2, 0), 8)
        lengths = [max(word_cum[e] - word_cum[s], 1) for s, e in cand.members]
        x[_LENGTH_RATIO] = min(lengths) / max(lengths)
        x[_MEMBER_WORDS] = math.log1p(sum(lengths) / len(lengths))
        x[_SPAN_TOKENS] = math.log1p(cand.end - cand.start)
        if len(cand.support) > 1:
            pairs = list(zip(cand.support, cand.support[1:]))
            gaps = [max(word_cum[b] - word_cum[a], 0) for (_, a), (b, _) in pairs]
            x[_DISTANCE] = math.log1p(sum(gaps) / len(gaps))
            punct = [b > a and break_cum[b] - break_cum[a] > 0 for (_, a), (b, _) in pairs]
            x[_PUNCT_BETWEEN] = sum(punct) / len(punct)
        followed = [breaks[e] if e < n else True for _, e in cand.members]
        x[_PUNCT_BOUNDARIES] = sum(followed) / len(followed)
        start = cand.members[0][0]
        sid = sentence[start]
        first = sent_start[sid]
        x[_POSITION] = (start - first) / max(sent_end[sid] - first, 1)
        first_word = start
        while first_word > first and not is_word[first_word - 1]:
            first_word -= 1
        x[_SENTENCE_START] = float(first_word == first)
        x[_WHOLE_COLA] = float(cand.whole_cola)
        distinct = {" ".join(forms[t] for t in range(s, e) if is_word[t]) for s, e in word_ranges}
        x[_DISTINCT_WORDS] = min(len(distinct), 6)
        x[_CROSS_SENTENCE] = float(sentence[cand.end - 1] != sentence[start])
        support_tokens = [t for s, e in word_ranges for t in range(s, e) if is_word[t]]
        x[_SUPPORT_ALL_STOP] = float(
            bool(support_tokens) and all(stopish[t] for t in support_tokens)
        )
        x[_SUPPORT_PROPN_NUM] = float(
            any(
                (tagged and pos[t] in ("PROPN", "NUM")) or not any(ch.isalpha() for ch in forms[t])
                for t in support_tokens
            )
        )
        if len(cand.members) > 1:
            member_sent = [sentence[s] for s, _ in cand.members]
            x[_MEMBER_SENTENCES] = sum(a != b for a, b in zip(member_sent, member_sent[1:])) / (
                len(member_sent) - 1
            )
            sets = [{codes[t] for t in range(s, e) if is_word[t]} for s, e in cand.members]
            union = set().union(*sets)
            if union:
                x[_IDENTICAL_SHARE] = len(set.intersection(*sets)) / len(union)
        if support_tokens:
            at = key_at.get(keys[support_tokens[0]], [])
            lo, hi = cand.start - NEARBY_TOKENS, cand.end + NEARBY_TOKENS
            around = bisect_left(at, hi) - bisect_left(at, lo)
            inside = bisect_left(at, cand.end) - bisect_left(at, cand.start)
            x[_REPEATED_NEARBY] = math.log1p(around - inside)
        rows.append(x)
    return numpy.asarray(rows, dtype="float32")


def feature_names() -> List[str]:
    """RETURNS (List[str]): the column names, in order."""
    return list(FEATURES)
