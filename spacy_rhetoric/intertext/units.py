"""Queries inside the sentence: a sentence is searched whole and by its parts (*units*),
so that a short quotation in a long sentence meets its source on its own terms, and a
sentence that quotes two verses links both.

Units of a query text (``query_units``), as character ranges of it:
- the text itself;
- its cola (the stretches between , ; : ! ? ( ) [ ] dashes and quotation marks) of
  ``MIN_COLON_WORDS`` words or more, when it has more than one;
- each two adjacent cola together (a verse quoted across a comma: "judge not, that ye
  be not judged"), when it has more than two;
- the words after an announcing cue ("dixit", "scriptum est", "saith", "as it is
  written", ...; ``CUES``), to the end of the text.

Then a second pass over the sources found: a source that shares ``QUOTE_TERMS`` or more
terms with the text *in order* (``aligned``), close together (gaps of at most
``MAX_GAP`` words in either text), weighing ``QUOTE_MASS`` or more in summed idf and
``QUOTE_DENSITY`` or more of the idf mass of the words they span in both texts, is
*quoted* there (``is_quoted``); the words from the first to the last of those terms
become a unit of their own, searched like the others, and the link marks them. Every
other link is an *allusion*: it holds at a threshold of its own
(``FeatureReranker.allusion_threshold``). A reranker trained on units reads the
alignment too (``rerank.ALIGN_FEATURES``).

The units' vectors come from one encoding of the text: each unit's is the mean of the
text's word-piece states over its characters (with the encoder's prompt and special
tokens, as a text encoded alone pools them), so the dense channel costs what the
sentence alone cost (``dense.encode_units``). Units past the encoder's length limit, and
every unit of an index with a tuned query encoder, are encoded on their own; so are the
quoted words with ``quoted_alone`` (on the Bible quotations dev halves it found the same
rows as pooling, at more cost: off).
"""

import math
import re
from dataclasses import dataclass, field
from itertools import groupby
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .dense import encode_units
from .fusion import Candidate
from .index import IntertextIndex
from .lexical import forms, stem
from .rerank import ALIGN_FEATURES, FeatureReranker, base_features, feature_names, pair_features

MIN_COLON_WORDS = 3
QUOTE_TERMS = 3  # terms shared in order ...
QUOTE_MASS = 7.5  # ... weighing this much idf together ...
MAX_GAP = 3  # ... with at most this many other words between two of them ...
QUOTE_DENSITY = 0.6  # ... and this share of the idf mass of the words they span
MIN_TERM_IDF = 1.0  # terms rarer than "the", "and", "et", "in" (idf in the sources)
QUERY_PROMPT = "query"

_BREAKS = '[,;:!?()\\[\\]"\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb\u2039\u203a\u2014\u2013]|--'
_COLON = re.compile(rf"(?:(?!{_BREAKS}).)+", re.S)
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
# cues that announce a quotation (Latin, English, German); the quotation follows
CUES = re.compile(
    r"\b(?:dixit|dicit|dicens|dicentes|dicebat|ait|aiebat|inquit|inquiunt|scriptum est|"
    r"scribitur|legimus|audiuimus|audivimus|cantauimus|cantavimus|cantamus|"
    r"saith|said|saying|it is written|as it is written|the scripture says|"
    r"spricht|sprach|sagt|steht geschrieben)\b\W*",
    re.I,
)


def _words(text: str, start: int, end: int) -> int:
    return len(_WORD.findall(text, start, end))


def _trim(text: str, start: int, end: int) -> Tuple[int, int]:
    """The range without surrounding spaces and punctuation."""
    while start < end and not (text[start].isalnum()):
        start += 1
    while end > start and not (text[end - 1].isalnum()):
        end -= 1
    return start, end


def cola(text: str) -> List[Tuple[int, int]]:
    """text (str): a query text.
    RETURNS (List[Tuple[int, int]]): its cola as character ranges (with a word or more).
    """
    out = []
    for m in _COLON.finditer(text):
        start, end = _trim(text, m.start(), m.end())
        if end > start and _words(text, start, end):
            out.append((start, end))
    return out


def query_units(text: str) -> List[Tuple[int, int]]:
    """text (str): a query text (a sentence).
    RETURNS (List[Tuple[int, int]]): its units as character ranges, the whole text first
        (see the module's docstring); no range twice, none for an empty text.
    """
    units = [(0, len(text))]  # the text as it is (its vector is the sentence's own)
    for m in CUES.finditer(text):
        announced = _trim(text, m.end(), len(text))
        if _words(text, *announced) >= MIN_COLON_WORDS:
            units.append(announced)
    parts = cola(text)
    if len(parts) > 1:
        units.extend(p for p in parts if _words(text, *p) >= MIN_COLON_WORDS)
    if len(parts) > 2:
        units.extend((a[0], b[1]) for a, b in zip(parts, parts[1:]))
    seen, out = set(), []
    for unit in units:
        if unit not in seen and unit[1] > unit[0]:
            seen.add(unit)
            out.append(unit)
    return out


def text_terms(text: str, kind: str) -> List[Tuple[int, int, str]]:
    """The terms of a text with their character ranges: (start, end, term), one a word
    (a word the normalisation splits keeps its first piece)."""
    out = []
    for m in _WORD.finditer(text):
        pieces = forms(m.group())
        if pieces:
            term = stem(pieces[0]) if kind == "stem" else pieces[0]
            out.append((m.start(), m.end(), term))
    return out


def aligned(
    q_terms: Sequence[Tuple[int, int, str]], s_terms: Sequence[str], idf
) -> Optional[Tuple[int, int, int, float, float, float]]:
    """Where a text follows a source word for word: the longest run of terms the two
    share in the same order (terms of idf ``MIN_TERM_IDF`` or more; a longest common
    subsequence), cut where two of its terms lie more than ``MAX_GAP`` words apart in
    either text; its heaviest piece of two terms or more.

    q_terms: the text's ``text_terms``. s_terms: the source's terms in order.
    idf: term -> idf in the sources.
    RETURNS (Optional[Tuple[int, int, int, float, float, float]]): (start char, end
        char, terms, mass, density in the text, density in the source) of those words,
        or None; a density is the piece's idf mass over that of every term of idf
        ``MIN_TERM_IDF`` or more from its first word to its last (1.0: nothing between).
    """
    shared = {t for t in s_terms if idf(t) >= MIN_TERM_IDF} & {t for _, _, t in q_terms}
    if len(shared) < 2:
        return None
    qi = [i for i, (_, _, t) in enumerate(q_terms) if t in shared]
    si = [j for j, t in enumerate(s_terms) if t in shared]
    n, m = len(qi), len(si)
    # longest common subsequence over the shared terms only (short lists)
    # (Python lists: indexing a numpy table cell by cell costs more than the work)
    s_shared = [s_terms[j] for j in si]
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        ta, row, below = q_terms[qi[a]][2], table[a], table[a + 1]
        for b in range(m - 1, -1, -1):
            row[b] = below[b + 1] + 1 if ta == s_shared[b] else max(below[b], row[b + 1])
    matched, a, b = [], 0, 0
    while a < n and b < m:
        if q_terms[qi[a]][2] == s_shared[b]:
            matched.append((qi[a], si[b]))
            a, b = a + 1, b + 1
        elif table[a + 1][b] >= table[a][b + 1]:
            a += 1
        else:
            b += 1

    def weight(terms: Sequence[str]) -> float:
        return math.fsum(idf(t) for t in terms if idf(t) >= MIN_TERM_IDF)

    best: Optional[Tuple[int, int, int, float, float, float]] = None
    piece: List[Tuple[int, int]] = []
    for pair in matched + [None]:
        if pair is not None and (
            not piece
            or (pair[0] - piece[-1][0] <= MAX_GAP + 1 and pair[1] - piece[-1][1] <= MAX_GAP + 1)
        ):
            piece.append(pair)
            continue
        mass = math.fsum(idf(q_terms[i][2]) for i, _ in piece)
        if len(piece) >= 2 and (best is None or mass > best[3]):
            (q0, s0), (q1, s1) = piece[0], piece[-1]
            q_span = weight([t for _, _, t in q_terms[q0 : q1 + 1]])
            s_span = weight(s_terms[s0 : s1 + 1])
            best = (q_terms[q0][0], q_terms[q1][1], len(piece), mass,
                    mass / max(q_span, 1e-9), mass / max(s_span, 1e-9))  # fmt: skip
        piece = [pair] if pair is not None else []
    return best


def is_quoted(alignment: Optional[Tuple]) -> bool:
    """Whether an ``aligned`` run makes a quotation: ``QUOTE_TERMS`` terms or more,
    weighing ``QUOTE_MASS`` or more, with ``QUOTE_DENSITY`` or more of the mass of the
    words it spans in the text and in the source."""
    return (
        alignment is not None
        and alignment[2] >= QUOTE_TERMS
        and alignment[3] >= QUOTE_MASS
        and min(alignment[4], alignment[5]) >= QUOTE_DENSITY
    )


def _mass(terms: Sequence[str], idf) -> float:
    return math.fsum(idf(t) for t in set(terms) if idf(t) >= MIN_TERM_IDF) or 1.0


@dataclass
class UnitPairs:
    """The candidates of one query text's units: a row per (unit, candidate)."""

    text: str
    units: List[Tuple[int, int]]
    marks_words: bool = True  # a quotation's link marks its words (else its unit)
    unit_of: List[int] = field(default_factory=list)  # per pair: its unit
    candidates: List[Candidate] = field(default_factory=list)
    features: Optional[np.ndarray] = None
    # source row -> where the text follows it word for word (``aligned``), or None
    aligned: Dict[int, Optional[Tuple]] = field(default_factory=dict)

    def quoted(self, row: int) -> Optional[Tuple]:
        """The words of the text that quote a source (``is_quoted``), or None."""
        run = self.aligned.get(row)
        return run if is_quoted(run) else None


def unit_vectors(
    index: IntertextIndex, texts: Sequence[str], units, alone: bool = False
) -> List[np.ndarray]:
    """Per text, the vectors of its units in the index's space: pooled from one encoding
    of the text (see the docstring), or with ``alone`` each unit encoded on its own."""
    if index.query_encoder is not None or alone:
        flat = [t[a:b] for t, us in zip(texts, units) for a, b in us]
        vectors = index.encode_queries(flat)
        out, i = [], 0
        for us in units:
            out.append(vectors[i : i + len(us)])
            i += len(us)
        return out
    pooled = encode_units(
        index.encoder, texts, units, prompt_name=QUERY_PROMPT, precision=index.query_precision
    )
    return [index.project(v) for v in pooled]


def search_units(
    index: IntertextIndex,
    texts: Sequence[str],
    k: int = 10,
    pool: int = 100,
    names: Optional[Sequence[str]] = None,
    units: bool = True,
    quoted_alone: bool = False,
) -> List[UnitPairs]:
    """Search every unit of every text (two passes: the units, then the quoted words the
    first pass finds), with the reranker's features of each (unit, candidate) pair.

    index (IntertextIndex): the source index.
    texts (Sequence[str]): the query texts (sentences).
    k (int): candidates per unit.
    pool (int): candidates per channel before fusion.
    names (Optional[Sequence[str]]): the reranker's features (None: the index's); with
        ALIGN_FEATURES, each pair's alignment (``aligned``) where the unit holds it.
    units (bool): False: every text is one unit, itself, and every link marks it (the
        queries of ``link.link_segments``); the quoted words are still found, to tell a
        quotation from an allusion.
    quoted_alone (bool): encode the quoted words of the second pass on their own; False:
        pool their vectors from the text's encoding, like the first pass's.
    RETURNS (List[UnitPairs]): per text.
    """
    kind, idf = index.lexical.kind, index.lexical.term_idf
    names = tuple(names) if names is not None else feature_names(index)
    base = base_features(names)
    with_align = base != names
    out = [UnitPairs(t, query_units(t) if units else [(0, len(t))], units) for t in texts]
    q_terms = [text_terms(t, kind) for t in texts]
    source_terms: Dict[int, List[str]] = {}

    def terms_of(row: int) -> List[str]:
        if row not in source_terms:
            source_terms[row] = [t for _, _, t in text_terms(index.texts[row], kind)]
        return source_terms[row]

    def run(todo: List[Tuple[int, List[Tuple[int, int]]]], alone: bool = False) -> None:
        todo = [(i, us) for i, us in todo if us]
        if not todo:
            return
        flat = [(i, u) for i, us in todo for u in us]
        vectors = None
        if index.has_dense:
            per_text = unit_vectors(
                index, [texts[i] for i, _ in todo], [us for _, us in todo], alone
            )
            vectors = np.vstack(per_text)
        hits = index.search([texts[i][a:b] for i, (a, b) in flat], k, pool, vectors)
        for (i, unit), found in zip(flat, hits):
            pairs = out[i]
            u = pairs.units.index(unit)
            for c in found:
                pairs.unit_of.append(u)
                pairs.candidates.append(c)
                if c.row not in pairs.aligned:
                    pairs.aligned[c.row] = aligned(q_terms[i], terms_of(c.row), idf)

    run([(i, list(p.units)) for i, p in enumerate(out)])
    if units:
        second = []
        for i, pairs in enumerate(out):
            quoted = {pairs.quoted(r) for r in pairs.aligned} - {None}
            new = sorted({(q[0], q[1]) for q in quoted} - set(pairs.units))
            pairs.units.extend(new)
            second.append((i, new))
        run(second, alone=quoted_alone)
    source_mass: Dict[int, float] = {}
    for i, pairs in enumerate(out):
        # each unit's candidates lie together, in the order the units were searched
        blocks = [np.zeros((0, len(names)), dtype=np.float32)]
        start = 0
        for u, group in groupby(pairs.unit_of):
            end = start + len(list(group))
            a, b = pairs.units[u]
            block = pair_features(index, pairs.text[a:b], pairs.candidates[start:end], pool, base)
            if with_align:
                unit_mass = _mass([t for s, e, t in q_terms[i] if s >= a and e <= b], idf)
                extra = np.zeros((end - start, len(ALIGN_FEATURES)), dtype=np.float32)
                for j, c in enumerate(pairs.candidates[start:end]):
                    run_ = pairs.aligned.get(c.row)
                    if run_ is not None and a <= run_[0] and run_[1] <= b:
                        if c.row not in source_mass:
                            source_mass[c.row] = _mass(terms_of(c.row), idf)
                        extra[j] = (
                            run_[2],
                            run_[3],
                            run_[3] / source_mass[c.row],
                            run_[3] / unit_mass,
                            run_[4],
                            run_[5],
                        )
                block = np.hstack([block, extra])
            blocks.append(block)
            start = end
        pairs.features = np.vstack(blocks).astype(np.float32)
    return out


def unit_links(
    index: IntertextIndex,
    pairs: UnitPairs,
    probabilities: Optional[np.ndarray],
    threshold: Optional[float],
    allusion_threshold: Optional[float],
    k: int = 10,
) -> List[Dict]:
    """The links of one text from its units' candidates: a source's best (unit,
    candidate) pair speaks for it; a quoted source (``aligned``) is a link at
    ``threshold``, any other at ``allusion_threshold``.

    probabilities: the reranker's, per pair (None: without a reranker, the cosine
        similarity, or the lexical score of an index without vectors).
    RETURNS (List[Dict]): the sources linked and the best ``k`` others, best first:
        source_id, source_text, retrieval_score, lexical, similarity, probability, rank,
        kind ("quotation" or "allusion"), start_char, end_char (the quoted words, or the
        unit; in the text), parallels (the sources quoted at the same words that are
        not links of their own, ``fold_parallels``; with units only) and link (whether
        it is a link).
    """
    if probabilities is not None:
        values = np.asarray(probabilities, dtype=np.float64)
    elif index.has_dense:
        values = np.asarray([c.dense for c in pairs.candidates], dtype=np.float64)
    else:
        values = np.asarray([c.lexical for c in pairs.candidates], dtype=np.float64)
    best: Dict[int, int] = {}  # source row -> its best pair: by value, then fused score
    for j, c in enumerate(pairs.candidates):
        b = best.get(c.row)
        if b is None or (values[j], -c.score) > (values[b], -pairs.candidates[b].score):
            best[c.row] = j
    order = sorted(best.items(), key=lambda rj: (-values[rj[1]], rj[0]))[:k]
    rows = []
    for rank, (row, j) in enumerate(order, start=1):
        c = pairs.candidates[j]
        quoted = pairs.quoted(row)
        kind = "quotation" if quoted is not None else "allusion"
        cut = threshold if kind == "quotation" or allusion_threshold is None else allusion_threshold
        marked = quoted is not None and pairs.marks_words
        start, end = (quoted[0], quoted[1]) if marked else pairs.units[pairs.unit_of[j]]
        rows.append(
            {
                "source_id": index.ids[row],
                "source_text": index.texts[row],
                "retrieval_score": c.score,
                "lexical": c.lexical,
                "similarity": c.dense,
                "probability": float(values[j]) if probabilities is not None else None,
                "rank": rank,
                "kind": kind,
                "start_char": int(start),
                "end_char": int(end),
                "parallels": [],
                "link": cut is None or bool(values[j] >= cut),
            }
        )
    return fold_parallels(rows) if pairs.marks_words else rows


def fold_parallels(rows: List[Dict]) -> List[Dict]:
    """One link per quoted words: a linked quotation whose words overlap those of a better
    one (a parallel passage: Luke 11:2 beside Matthew 6:9, 1 Peter 5:5 beside James 4:6) is no
    link of its own but one of the better link's ``parallels``.

    rows (List[Dict]): a text's ``unit_links`` rows, best first (changed in place).
    RETURNS (List[Dict]): the same rows.
    """
    kept: List[Dict] = []
    for row in rows:
        if not row["link"] or row["kind"] != "quotation":
            continue
        for better in kept:
            if row["start_char"] < better["end_char"] and better["start_char"] < row["end_char"]:
                row["link"] = False
                better["parallels"].append(row["source_id"])
                break
        else:
            kept.append(row)
    return rows


def reranked(pairs: UnitPairs, reranker: Optional[FeatureReranker]) -> Optional[np.ndarray]:
    """The reranker's probability of each pair (None without a reranker)."""
    return None if reranker is None else reranker.predict_proba(pairs.features)
