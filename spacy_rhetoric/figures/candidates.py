"""What a figure rule proposes, and the search every series rule shares.

A ``Candidate`` is one instance of a figure: its members (token ranges: cola for the
figures at the edges of cola, the repeated units for epizeuxis, the stretches from one
occurrence to the next for ploce and polyptoton) and its support (token ranges of the
repeated, linking or alliterating words). A run of any length becomes one candidate:
it keeps at most ``MAX_MEMBERS`` members and ``MAX_SUPPORT`` support ranges, and
``n_members`` counts them all, so 100,000 repetitions of one word cost one candidate.

``series`` is the search of the edge figures (anaphora, epiphora, symploce): the
maximal groups of positions sharing a key whose consecutive members are at most
``max_step`` positions apart. It runs in one pass with one open group per key.
"""

from typing import Dict, Hashable, List, NamedTuple, Optional, Sequence, Tuple

import numpy

MAX_MEMBERS = 32
MAX_SUPPORT = 64

Range = Tuple[int, int]


class Candidate(NamedTuple):
    """One instance of a figure.

    figure (str): the label ("anaphora", ...).
    members (Tuple[Range, ...]): token ranges (start, end) of the members, in order
        (at most ``MAX_MEMBERS``: the first ones of a longer run).
    support (Tuple[Range, ...]): token ranges of the repeated or linking words.
    start (int): the first token of the instance.
    end (int): one past its last token.
    n_members (int): the number of members of the whole run.
    whole_cola (bool): whether the members are whole cola.
    """

    figure: str
    members: Tuple[Range, ...]
    support: Tuple[Range, ...]
    start: int
    end: int
    n_members: int
    whole_cola: bool


def make_candidate(
    figure: str,
    members: Sequence[Range],
    support: Sequence[Range],
    n_members: Optional[int] = None,
    whole_cola: bool = False,
    end: Optional[int] = None,
) -> Candidate:
    """A candidate from its members and support (capped; see the module docstring).

    end (Optional[int]): the end of the whole run where ``members`` were capped.
    """
    members = tuple((int(s), int(e)) for s, e in members)
    support = tuple((int(s), int(e)) for s, e in support)
    start = min(members[0][0], support[0][0] if support else members[0][0])
    stop = max(members[-1][1], max(e for _, e in support) if support else members[-1][1])
    if end is not None:
        stop = max(stop, int(end))
    return Candidate(
        figure,
        members[:MAX_MEMBERS],
        support[:MAX_SUPPORT],
        start,
        stop,
        len(members) if n_members is None else int(n_members),
        whole_cola,
    )


class Series(NamedTuple):
    """A maximal series: the key, its first positions (at most ``MAX_MEMBERS``), the
    last position and the number of members."""

    key: Hashable
    positions: Tuple[int, ...]
    last: int
    count: int


def series(keys: Sequence[Optional[Hashable]], max_step: int, min_size: int = 2) -> List[Series]:
    """The maximal series of positions sharing a key.

    Positions i and j (i < j) with ``keys[i] == keys[j]`` (not None) and
    ``j - i <= max_step`` are linked; a series is a connected group of linked positions.
    One pass, O(len(keys)) time; memory O(distinct keys) plus the output.

    keys (Sequence[Optional[Hashable]]): one key per position (None: takes no part).
    max_step (int): the largest distance between consecutive members.
    min_size (int): the fewest members of a series.
    RETURNS (List[Series]): the series, ordered by their first position.
    """
    if max_step < 1:
        raise ValueError(f"figure_finder: max_step must be >= 1, got {max_step}")
    open_: Dict[Hashable, List] = {}  # key -> [positions (capped), last, count]
    found: List[Series] = []

    def close(key: Hashable, group: List) -> None:
        if group[2] >= min_size:
            found.append(Series(key, tuple(group[0]), group[1], group[2]))

    for i, key in enumerate(keys):
        if key is None:
            continue
        group = open_.get(key)
        if group is not None and i - group[1] <= max_step:
            if len(group[0]) < MAX_MEMBERS:
                group[0].append(i)
            group[1] = i
            group[2] += 1
            continue
        if group is not None and group[2] >= min_size:
            close(key, group)
        open_[key] = [[i], i, 1]
    for key, group in open_.items():
        if group[2] >= min_size:
            close(key, group)
    found.sort(key=lambda s: s.positions[0])
    return found


def runs(flags: Sequence[bool]) -> List[Tuple[int, int]]:
    """The maximal runs of True: (start, end) index pairs, end exclusive (vectorised)."""
    array = numpy.asarray(flags, dtype=bool)
    if not len(array):
        return []
    edges = numpy.diff(numpy.concatenate(([0], array.view(numpy.int8), [0])))
    starts = numpy.flatnonzero(edges == 1)
    ends = numpy.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), ends.tolist()))
