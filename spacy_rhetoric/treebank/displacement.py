"""Edge displacement, mean edge displacement (MED), displacement histograms and the
edge displacement Vaserstein distance (EDV) between corpora.

After Anderson & Gómez-Rodríguez, "The Impact of Edge Displacement Vaserstein Distance
on UD Parsing Performance" (Computational Linguistics 48(3), 2022).

Definitions used throughout:

- The **edge displacement** of a token is its position minus its head's position, so a
  dependent left of its head has a negative displacement. Roots have no incoming edge and
  no displacement; in the flat arrays below they are stored as 0 (a real edge can never
  have displacement 0, so 0 unambiguously marks a root).
- The **MED** of a sentence is the mean displacement over its edges:
  ``sum(displacements) / (N - 1)`` for a tree of N tokens (in general: divided by the
  number of non-root tokens). A one-token sentence has no edges: its MED is undefined and
  reported as NaN (``span._.med`` is None).
- The **EDV** between two corpora is the Wasserstein-1 (Vaserstein) distance between
  their normalised displacement distributions over ``[-max_displacement,
  max_displacement]``. Two variants exist (see :func:`edv`):

  * ``"support"`` (default): the distributions live on the displacement values, i.e.
    ``wasserstein_distance(support, support, p, q)``. This is the distance in units of
    token positions: how far, on average, displacement mass has to move.
  * ``"samples"``: the two probability vectors are themselves treated as samples, i.e.
    ``wasserstein_distance(p, q)``. This compares the multisets of bin heights and ignores
    where the bins are. It is not a distance between the displacement distributions (a
    shifted or mirrored distribution has distance 0), but it is the variant whose values
    have the magnitudes the paper reports (about 3e-4 to 5e-3). Measured on the UD
    treebanks of the data mirror (train or dev vs test): "samples" gives 3.9e-4 to
    1.3e-3, "support" 0.06 to 0.46 (benchmarks/results/displacement_speed.json).
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.attrs import HEAD
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..corpora.util import CorpusFormatError

DEFAULT_MAX_DISPLACEMENT = 30
DEFAULT_LENGTH_RANGE = (3, 30)
EDV_VARIANTS = ("support", "samples")
OVERFLOW_MODES = ("clip", "drop")

PathLike = Union[str, Path]


@dataclass(frozen=True)
class Displacements:
    """The edge displacements of a corpus of dependency trees, stored flat.

    values (numpy.ndarray): int64 [T], the displacement of every token, 0 for roots.
    offsets (numpy.ndarray): int64 [S + 1], sentence s is ``values[offsets[s]:offsets[s + 1]]``.
    """

    values: numpy.ndarray
    offsets: numpy.ndarray

    def __post_init__(self) -> None:
        if self.offsets.ndim != 1 or len(self.offsets) == 0 or self.offsets[0] != 0:
            raise ValueError("Displacements: offsets must be 1D and start with 0.")
        if self.offsets[-1] != len(self.values):
            raise ValueError(
                f"Displacements: offsets end at {self.offsets[-1]} but there are "
                f"{len(self.values)} values."
            )

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sequence[int]]) -> "Displacements":
        """Build from per-sentence displacement lists (0 for roots)."""
        sentences = [numpy.asarray(s, dtype="int64").reshape(-1) for s in sentences]
        lengths = numpy.array([len(s) for s in sentences], dtype="int64")
        offsets = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
        values = numpy.concatenate(sentences) if sentences else numpy.zeros(0, "int64")
        return cls(values.astype("int64"), offsets)

    @classmethod
    def from_heads(cls, heads: Sequence[Sequence[int]]) -> "Displacements":
        """Build from CoNLL-U style heads per sentence (1-based, 0 = root)."""
        sentences = []
        for sent_heads in heads:
            sent_heads = numpy.asarray(sent_heads, dtype="int64")
            ids = numpy.arange(1, len(sent_heads) + 1)
            sentences.append(numpy.where(sent_heads == 0, 0, ids - sent_heads))
        return cls.from_sentences(sentences)

    @classmethod
    def concat(cls, parts: Sequence["Displacements"]) -> "Displacements":
        """Concatenate corpora (sentence order kept)."""
        if not parts:
            return cls(numpy.zeros(0, "int64"), numpy.zeros(1, "int64"))
        values = numpy.concatenate([p.values for p in parts])
        shifts = numpy.cumsum([0] + [len(p.values) for p in parts[:-1]])
        offsets = numpy.concatenate(
            [[0]] + [p.offsets[1:] + shift for p, shift in zip(parts, shifts)]
        )
        return cls(values, offsets.astype("int64"))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.values)

    @property
    def n_edges(self) -> int:
        return int(numpy.count_nonzero(self.values))

    @property
    def lengths(self) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): int64 [S], tokens per sentence."""
        return numpy.diff(self.offsets)

    @property
    def sentence_index(self) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): int64 [T], the sentence of every token."""
        return numpy.repeat(numpy.arange(self.n_sentences), self.lengths)

    @property
    def edges(self) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): int64 [E], the displacements of all edges (roots removed)."""
        return self.values[self.values != 0]

    def sentence(self, i: int) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): the displacement values of sentence i (0 for roots)."""
        return self.values[self.offsets[i] : self.offsets[i + 1]]

    def select(self, sentences: Union[Sequence[int], numpy.ndarray]) -> "Displacements":
        """A corpus of the given sentences, in the given order.

        sentences (Union[Sequence[int], numpy.ndarray]): sentence indices or a boolean mask.
        RETURNS (Displacements): the sub-corpus.
        """
        idx = numpy.asarray(sentences)
        if idx.dtype == bool:
            idx = numpy.flatnonzero(idx)
        idx = idx.astype("int64")
        lengths = self.lengths[idx]
        offsets = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype("int64")
        # token positions of the selected sentences, without a Python loop
        starts = numpy.repeat(self.offsets[:-1][idx] - offsets[:-1], lengths)
        positions = numpy.arange(offsets[-1]) + starts
        return Displacements(self.values[positions], offsets)


def sentence_med(data: Displacements) -> numpy.ndarray:
    """The mean edge displacement (MED) of every sentence.

    data (Displacements): the corpus.
    RETURNS (numpy.ndarray): float64 [S]; NaN for sentences without edges (one token).
    """
    starts = data.offsets[:-1]
    sums = numpy.zeros(data.n_sentences, dtype="float64")
    counts = numpy.zeros(data.n_sentences, dtype="float64")
    filled = data.lengths > 0
    if data.n_tokens:
        sums[filled] = numpy.add.reduceat(data.values, starts[filled])
        counts[filled] = numpy.add.reduceat(data.values != 0, starts[filled])
    with numpy.errstate(invalid="ignore", divide="ignore"):
        return numpy.where(counts > 0, sums / counts, numpy.nan)


def corpus_med(data: Displacements) -> Optional[float]:
    """The MED of a corpus taken over all its edges (each edge weighs the same).

    RETURNS (Optional[float]): the mean displacement, None without edges.
    """
    n_edges = data.n_edges
    return float(data.values.sum() / n_edges) if n_edges else None


@dataclass(frozen=True)
class Histogram:
    """Counts of edge displacements on the integer support [-max, max] (0 excluded
    from the data but kept as an empty bin so that the support is contiguous).

    counts (numpy.ndarray): int64 [2 * max + 1], edges per displacement value.
    max_displacement (int): the support is [-max_displacement, max_displacement].
    n_edges (int): all edges seen, including clipped or dropped ones.
    n_clipped (int): edges with |displacement| > max_displacement (clipped to the
        boundary bins or dropped, depending on ``overflow``).
    overflow (str): "clip" or "drop".
    """

    counts: numpy.ndarray
    max_displacement: int
    n_edges: int
    n_clipped: int
    overflow: str = "clip"

    @property
    def support(self) -> numpy.ndarray:
        return numpy.arange(-self.max_displacement, self.max_displacement + 1)

    @property
    def total(self) -> int:
        """RETURNS (int): edges counted in the histogram."""
        return int(self.counts.sum())

    @property
    def probabilities(self) -> numpy.ndarray:
        """RETURNS (numpy.ndarray): float64 [2 * max + 1], the normalised histogram."""
        total = self.total
        if total == 0:
            raise ValueError("Histogram: no edges, the distribution is undefined.")
        return self.counts / total

    @property
    def clipped_share(self) -> float:
        """RETURNS (float): the share of edges outside [-max, max]."""
        return self.n_clipped / self.n_edges if self.n_edges else 0.0


def histogram(
    data: Union[Displacements, numpy.ndarray],
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    overflow: str = "clip",
) -> Histogram:
    """Histogram of edge displacements on [-max_displacement, max_displacement].

    data (Union[Displacements, numpy.ndarray]): a corpus, or the edge displacements
        themselves (zeros, i.e. roots, are ignored).
    max_displacement (int): the largest |displacement| with its own bin.
    overflow (str): "clip" counts longer edges in the boundary bins; "drop" leaves them out.
        Either way their number is reported as ``n_clipped``.
    RETURNS (Histogram): the counts.
    """
    if overflow not in OVERFLOW_MODES:
        raise ValueError(f"histogram: overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
    if max_displacement < 1:
        raise ValueError(f"histogram: max_displacement must be >= 1, got {max_displacement}")
    edges = data.edges if isinstance(data, Displacements) else numpy.asarray(data, "int64")
    edges = edges[edges != 0]
    outside = numpy.abs(edges) > max_displacement
    n_clipped = int(numpy.count_nonzero(outside))
    if overflow == "drop":
        edges = edges[~outside]
    else:
        edges = numpy.clip(edges, -max_displacement, max_displacement)
    counts = numpy.bincount(edges + max_displacement, minlength=2 * max_displacement + 1)
    return Histogram(counts.astype("int64"), max_displacement, len(outside), n_clipped, overflow)


def _as_histogram(
    data: Union[Displacements, Histogram, numpy.ndarray], max_displacement: int, overflow: str
) -> Histogram:
    if isinstance(data, Histogram):
        return data
    return histogram(data, max_displacement, overflow)


def wasserstein_unit(p: numpy.ndarray, q: numpy.ndarray) -> numpy.ndarray:
    """Wasserstein-1 distance between distributions on the same evenly spaced integer
    support (spacing 1): the L1 distance between their CDFs. Vectorised over leading axes.

    p (numpy.ndarray): float [..., K], normalised.
    q (numpy.ndarray): float [..., K], normalised.
    RETURNS (numpy.ndarray): float [...].
    """
    return numpy.abs(numpy.cumsum(p - q, axis=-1)[..., :-1]).sum(axis=-1)


def distribution_distance(
    p: numpy.ndarray, q: numpy.ndarray, support: numpy.ndarray, variant: str = "support"
) -> float:
    """Wasserstein-1 distance between two normalised histograms on a common support.

    p (numpy.ndarray): float [K].
    q (numpy.ndarray): float [K].
    support (numpy.ndarray): the K values the bins stand for.
    variant (str): "support" (distributions over the support values) or "samples"
        (the probability vectors themselves as samples).
    RETURNS (float): the distance.
    """
    from scipy.stats import wasserstein_distance  # lazy: scipy.stats takes ~0.4s to import

    if variant == "support":
        return float(wasserstein_distance(support, support, p, q))
    if variant == "samples":
        return float(wasserstein_distance(p, q))
    raise ValueError(f"EDV variant must be one of {EDV_VARIANTS}, got {variant!r}")


def edv(
    a: Union[Displacements, Histogram, numpy.ndarray],
    b: Union[Displacements, Histogram, numpy.ndarray],
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    variant: str = "support",
    overflow: str = "clip",
) -> float:
    """Edge displacement Vaserstein distance between two corpora.

    a (Union[Displacements, Histogram, numpy.ndarray]): the first corpus (e.g. training data).
    b (Union[Displacements, Histogram, numpy.ndarray]): the second corpus (e.g. test data).
    max_displacement (int): histogram range [-max, max] (ignored for Histogram input).
    variant (str): "support" (default): ``wasserstein_distance(d, d, p, q)`` with the
        displacement values d as support and the normalised histograms p, q as weights;
        "samples": ``wasserstein_distance(p, q)``, the histogram values treated as samples
        (see the module docstring).
    overflow (str): how edges beyond max_displacement are counted ("clip" or "drop").
    RETURNS (float): the distance (0 for identical distributions).
    """
    ha = _as_histogram(a, max_displacement, overflow)
    hb = _as_histogram(b, max_displacement, overflow)
    if ha.max_displacement != hb.max_displacement:
        raise ValueError(
            "edv: the histograms have different ranges "
            f"({ha.max_displacement} vs {hb.max_displacement})"
        )
    return distribution_distance(ha.probabilities, hb.probabilities, ha.support, variant)


@dataclass
class BinnedEDV:
    """EDV computed separately for the sentences of each length.

    per_length (Dict[int, float]): EDV per sentence length present in both corpora.
    edges (Dict[int, int]): edges of both corpora together per sentence length.
    mean (float): unweighted mean over the lengths (NaN if none).
    weighted (float): mean weighted by the edges per length (NaN if none).
    """

    per_length: Dict[int, float] = field(default_factory=dict)
    edges: Dict[int, int] = field(default_factory=dict)
    mean: float = float("nan")
    weighted: float = float("nan")


def length_histograms(
    data: Displacements,
    lengths: Sequence[int],
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    overflow: str = "clip",
) -> numpy.ndarray:
    """Displacement histograms of the sentences of each given length, in one bincount.

    RETURNS (numpy.ndarray): int64 [len(lengths), 2 * max + 1].
    """
    lengths = numpy.asarray(lengths, dtype="int64")
    width = 2 * max_displacement + 1
    row_of_length = numpy.full(int(max(lengths.max(), data.lengths.max(initial=0))) + 1, -1)
    row_of_length[lengths] = numpy.arange(len(lengths))
    token_rows = row_of_length[numpy.repeat(data.lengths, data.lengths)]
    keep = (token_rows >= 0) & (data.values != 0)
    values = data.values[keep]
    rows = token_rows[keep]
    if overflow == "drop":
        inside = numpy.abs(values) <= max_displacement
        values, rows = values[inside], rows[inside]
    elif overflow != "clip":
        raise ValueError(f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
    cols = numpy.clip(values, -max_displacement, max_displacement) + max_displacement
    flat = numpy.bincount(rows * width + cols, minlength=len(lengths) * width)
    return flat.reshape(len(lengths), width).astype("int64")


def binned_edv(
    a: Displacements,
    b: Displacements,
    length_range: Tuple[int, int] = DEFAULT_LENGTH_RANGE,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    variant: str = "support",
    overflow: str = "clip",
) -> BinnedEDV:
    """Sentence-length-binned EDV: the EDV between the sentences of length L of ``a`` and
    those of ``b``, for every L in ``length_range`` (inclusive) present in both. This
    factors sentence length out of the comparison.

    a (Displacements): the first corpus.
    b (Displacements): the second corpus.
    length_range (Tuple[int, int]): the smallest and largest sentence length to compare.
    max_displacement (int): histogram range.
    variant (str): EDV variant (see :func:`edv`).
    overflow (str): "clip" or "drop".
    RETURNS (BinnedEDV): per-length values and their unweighted and edge-weighted means.
    """
    lengths = numpy.arange(length_range[0], length_range[1] + 1)
    ha = length_histograms(a, lengths, max_displacement, overflow)
    hb = length_histograms(b, lengths, max_displacement, overflow)
    support = numpy.arange(-max_displacement, max_displacement + 1)
    result = BinnedEDV()
    for length, ca, cb in zip(lengths, ha, hb):
        if ca.sum() == 0 or cb.sum() == 0:
            continue
        value = distribution_distance(ca / ca.sum(), cb / cb.sum(), support, variant)
        result.per_length[int(length)] = value
        result.edges[int(length)] = int(ca.sum() + cb.sum())
    if result.per_length:
        values = numpy.array(list(result.per_length.values()))
        weights = numpy.array(list(result.edges.values()), dtype="float64")
        result.mean = float(values.mean())
        result.weighted = float((values * weights).sum() / weights.sum())
    return result


def slv(a: Displacements, b: Displacements, variant: str = "support") -> float:
    """Sentence length Vaserstein distance: Wasserstein-1 between the sentence length
    distributions of two corpora.

    variant (str): "support": between the length distributions (in tokens);
        "samples": between their normalised histograms over lengths 1..max treated as
        samples (the analogue of the "samples" EDV variant).
    RETURNS (float): the distance.
    """
    from scipy.stats import wasserstein_distance

    if a.n_sentences == 0 or b.n_sentences == 0:
        raise ValueError("slv: both corpora need at least one sentence.")
    if variant == "support":
        return float(wasserstein_distance(a.lengths, b.lengths))
    top = int(max(a.lengths.max(), b.lengths.max()))
    pa = numpy.bincount(a.lengths, minlength=top + 1)[1:]
    pb = numpy.bincount(b.lengths, minlength=top + 1)[1:]
    return distribution_distance(pa / pa.sum(), pb / pb.sum(), numpy.arange(1, top + 1), variant)


def compare(
    a: Displacements,
    b: Displacements,
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT,
    length_range: Tuple[int, int] = DEFAULT_LENGTH_RANGE,
    overflow: str = "clip",
) -> Dict[str, object]:
    """Every displacement statistic of two corpora, as a JSON-friendly dict.

    RETURNS (Dict[str, object]): sizes, MEDs, clipped shares, EDV (both variants),
        length-binned EDV (both variants, unweighted mean) and SLV.
    """
    ha = histogram(a, max_displacement, overflow)
    hb = histogram(b, max_displacement, overflow)
    result: Dict[str, object] = {
        "a": _summary(a, ha),
        "b": _summary(b, hb),
        "max_displacement": max_displacement,
        "overflow": overflow,
    }
    for variant in EDV_VARIANTS:
        result[f"edv_{variant}"] = edv(ha, hb, variant=variant)
        binned = binned_edv(a, b, length_range, max_displacement, variant, overflow)
        result[f"binned_edv_{variant}"] = binned.mean
        result[f"binned_edv_{variant}_weighted"] = binned.weighted
        result[f"slv_{variant}"] = slv(a, b, variant)
    result["length_range"] = list(length_range)
    return result


def _summary(data: Displacements, hist: Histogram) -> Dict[str, object]:
    return {
        "sentences": data.n_sentences,
        "tokens": data.n_tokens,
        "edges": data.n_edges,
        "med": corpus_med(data),
        "clipped_share": hist.clipped_share,
    }


# --- reading -------------------------------------------------------------------------------

_DIGIT_0, _DIGIT_9, _TAB, _NEWLINE = 48, 57, 9, 10
_MAX_FIELD_WIDTH = 9
_SKIPPED_ID = re.compile(r"^\d+(-\d+|\.\d+)$")
_COLUMNS_ERROR = "a token line needs 10 tab-separated columns"


def _parse_int_fields(
    buf: numpy.ndarray, starts: numpy.ndarray, ends: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Parse the byte ranges [start, end) of ``buf`` as decimal integers, vectorised
    (Horner's scheme, one digit column at a time).

    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): the values (int64) and a mask of the
        fields that are non-empty runs of at most 9 digits (others get value 0).
    """
    widths = ends - starts
    valid = (widths > 0) & (widths <= _MAX_FIELD_WIDTH)
    values = numpy.zeros(len(starts), dtype="int64")
    last = len(buf) - 1
    for k in range(int(min(widths.max(initial=0), _MAX_FIELD_WIDTH))):
        active = widths > k
        digits = buf[numpy.minimum(starts + k, last)].astype("int64") - _DIGIT_0
        valid &= ~active | ((digits >= 0) & (digits <= 9))
        values = numpy.where(active, values * 10 + digits, values)
    return numpy.where(valid, values, 0), valid


def parse_conllu(data: Union[str, bytes], source: str = "<string>") -> Displacements:
    """Read the basic dependency trees of CoNLL-U text into displacements, vectorised.

    Only the ID and HEAD columns are read. Multiword token lines (``1-2``) and empty
    nodes (``1.1``) are skipped, as are comments; a sentence starts at every word with
    ID 1. Malformed word lines (fewer than 10 columns, a non-integer HEAD, IDs that do not
    count up from 1, a HEAD beyond the sentence) raise an error naming the line.

    data (Union[str, bytes]): the CoNLL-U text.
    source (str): the file name, for error messages.
    RETURNS (Displacements): one sentence per tree.
    """
    raw = data.encode("utf8") if isinstance(data, str) else bytes(data)
    if not raw.endswith(b"\n"):
        raw += b"\n"
    buf = numpy.frombuffer(raw, dtype=numpy.uint8)
    newlines = numpy.flatnonzero(buf == _NEWLINE)
    line_starts = numpy.concatenate([[0], newlines[:-1] + 1])
    first = buf[numpy.minimum(line_starts, len(buf) - 1)]
    word_like = (first >= _DIGIT_0) & (first <= _DIGIT_9)
    line_no = numpy.flatnonzero(word_like)  # 0-based line numbers of token lines
    starts, ends = line_starts[word_like], newlines[word_like]
    tabs = numpy.flatnonzero(buf == _TAB)
    if len(starts) and len(tabs) == 0:
        raise CorpusFormatError(source, int(line_no[0]) + 1, _COLUMNS_ERROR)
    tab_index = numpy.searchsorted(tabs, starts)[:, None] + numpy.arange(9)  # [L, 9]
    complete = tab_index[:, 8] < len(tabs)
    tab_pos = tabs[numpy.minimum(tab_index, len(tabs) - 1)] if len(tabs) else tab_index
    complete &= tab_pos[:, 8] < ends
    if not complete.all():
        bad = int(line_no[numpy.argmin(complete)]) + 1
        raise CorpusFormatError(source, bad, _COLUMNS_ERROR)
    ids, is_int_id = _parse_int_fields(buf, starts, tab_pos[:, 0])
    heads, is_int_head = _parse_int_fields(buf, tab_pos[:, 5] + 1, tab_pos[:, 6])
    # multiword tokens (1-2) and empty nodes (1.1) have non-integer IDs; nothing else may
    for i in numpy.flatnonzero(~is_int_id):
        field = raw[starts[i] : tab_pos[i, 0]].decode("utf8", "replace")
        if not _SKIPPED_ID.match(field):
            raise CorpusFormatError(source, int(line_no[i]) + 1, f"bad ID {field!r}")
    words = is_int_id
    bad_head = words & ~is_int_head
    if bad_head.any():
        bad = int(line_no[numpy.argmax(bad_head)]) + 1
        raise CorpusFormatError(source, bad, "HEAD of a word must be an integer")
    ids, heads, line_no = ids[words], heads[words], line_no[words]
    if len(ids) == 0:
        return Displacements(numpy.zeros(0, "int64"), numpy.zeros(1, "int64"))
    sent_starts = numpy.flatnonzero(ids == 1)
    if len(sent_starts) == 0 or sent_starts[0] != 0:
        raise CorpusFormatError(source, int(line_no[0]) + 1, "the first word's ID must be 1")
    step_ok = numpy.ones(len(ids), dtype=bool)
    step_ok[1:] = (ids[1:] == ids[:-1] + 1) | (ids[1:] == 1)
    if not step_ok.all():
        bad = int(line_no[numpy.argmin(step_ok)]) + 1
        raise CorpusFormatError(source, bad, "word IDs must count up by one from 1")
    offsets = numpy.concatenate([sent_starts, [len(ids)]]).astype("int64")
    lengths = numpy.diff(offsets)
    head_ok = heads <= numpy.repeat(lengths, lengths)
    if not head_ok.all():
        bad = int(line_no[numpy.argmin(head_ok)]) + 1
        raise CorpusFormatError(source, bad, "HEAD points beyond the end of the sentence")
    values = numpy.where(heads == 0, 0, ids - heads)
    loops = (values == 0) & (heads != 0)
    if loops.any():
        bad = int(line_no[numpy.argmax(loops)]) + 1
        raise CorpusFormatError(source, bad, "a word cannot be its own head")
    return Displacements(values.astype("int64"), offsets)


def read_conllu(path: PathLike) -> Displacements:
    """Read a .conllu file (see :func:`parse_conllu`)."""
    path = Path(path)
    return parse_conllu(path.read_bytes(), str(path))


def doc_displacements(doc: Doc) -> numpy.ndarray:
    """The displacement of every token of a parsed Doc (0 for roots), from
    ``doc.to_array([HEAD])`` (relative head offsets: displacement = -offset).

    RETURNS (numpy.ndarray): int64 [len(doc)].
    """
    if len(doc) == 0:
        return numpy.zeros(0, dtype="int64")
    return -doc.to_array([HEAD]).view("int64").reshape(-1)


def from_docs(docs: Iterable[Doc]) -> Displacements:
    """The displacements of parsed Docs, one sentence per ``doc.sents`` sentence.

    docs (Iterable[Doc]): docs with a dependency parse.
    RETURNS (Displacements): the corpus.
    """
    values: List[numpy.ndarray] = []
    offsets: List[numpy.ndarray] = [numpy.zeros(1, "int64")]
    total = 0
    for i, doc in enumerate(docs):
        if not len(doc):
            continue
        if not doc.has_annotation("DEP"):
            raise ValueError(
                f"Doc {i} ('{doc[:8].text}...') has no dependency parse: EDV needs parsed docs."
            )
        values.append(doc_displacements(doc))
        starts = [sent.start for sent in doc.sents]
        offsets.append(numpy.array(starts[1:] + [len(doc)], dtype="int64") + total)
        total += len(doc)
    if not values:
        return Displacements(numpy.zeros(0, "int64"), numpy.zeros(1, "int64"))
    return Displacements(numpy.concatenate(values), numpy.concatenate(offsets))


CORPUS_SUFFIXES = (".conllu", ".spacy")


def corpus_files(path: PathLike) -> List[Path]:
    """The .conllu and .spacy files of a path (a file, or every one inside a directory).

    RETURNS (List[Path]): the files, sorted.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in CORPUS_SUFFIXES)
        if not files:
            raise FileNotFoundError(f"{path}: no .conllu or .spacy files found")
        return files
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix not in CORPUS_SUFFIXES:
        raise ValueError(f"{path}: expected a .conllu or .spacy file")
    return [path]


def load_displacements(
    paths: Union[PathLike, Iterable[PathLike]], vocab: Optional[Vocab] = None
) -> Displacements:
    """Read the displacements of .conllu files (fast path, no Docs are built) and .spacy
    DocBins (through Docs), or of every such file in directories.

    paths (Union[PathLike, Iterable[PathLike]]): files or directories.
    vocab (Optional[Vocab]): vocab for reading DocBins (a blank one if None).
    RETURNS (Displacements): the concatenated corpus.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    parts = []
    for path in paths:
        for file in corpus_files(path):
            if file.suffix == ".conllu":
                parts.append(read_conllu(file))
            else:
                if vocab is None:
                    vocab = Vocab()
                parts.append(from_docs(DocBin().from_disk(file).get_docs(vocab)))
    return Displacements.concat(parts)
