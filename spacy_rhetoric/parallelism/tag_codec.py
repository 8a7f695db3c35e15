"""Encode parallelisms as one tag per token and decode tag rows back into
parallelisms, under a tag scheme of ``tags`` (see there for the tags and links).
``encode`` writes one stratum per row, ``encode_strata`` one row per stratum; the
decoders read any row of well-formed tags and report what they had to repair.

Decoding imperfect tags (``decode`` is total)
--------------------------------------------
Any sequence of well-formed tag strings decodes; only strings that are not tags
at all (``"X"``, ``"B-0"``, ``"B-x"``) raise ValueError. What ``decode`` does:

1. Tags outside the tagset are read by their meaning: ``M`` as outside, ``J`` as
   inside, ``E`` as closing inside (problem ``tag_not_in_tagset``).
2. An I/J/E with no open branch (at the start, after O/M or after an E) starts a
   new branch without link, as if it were ``B`` (``orphan``).
3. ``E`` always closes its branch. A branch of two or more tokens that ends
   without E under an E tagset still ends at its last inside token
   (``unclosed``). A J in a branch opened by ``B``, or an I in a branch opened by
   ``B-k``, under a J tagset is read as inside (``inside_mismatch``).
4. ``B-k`` joins the parallelism of the branch its link points to: under token
   links the branch whose last token is ``start - k``; under branch links the
   ``k``-th branch before it. A link that points nowhere (into a gap, into a
   branch's interior, before the start) leaves the branch unlinked
   (``link_unresolved``); with ``snap_links=True`` it attaches instead to the
   preceding branch whose last token is nearest ``start - k`` (ties: the later
   one) or, for branch links, to the first branch of the row if ``k`` overshoots.
   A link to a branch that already has a successor still joins that
   parallelism (``link_reused``).
5. Groups of one branch are dropped: a single branch is not a parallelism
   (``single_branch``).
6. Under M tagsets, M/O on outside tokens is checked against the decoded
   parallelisms (``middle_mismatch``) but never changes the result.

``tag_problems`` lists these repairs; ``decode(..., strict=True)`` raises on the
first. A row has no problems exactly when ``encode(decode(tags)) == tags``.
"""

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from .tags import (
    BEGIN,
    END,
    INSIDE,
    INSIDE_PREFIXES,
    JOINT,
    MIDDLE,
    OUTSIDE,
    Offsets,
    ParallelismOffsets,
    TagScheme,
    as_scheme,
    parse_tag,
)

PROBLEM_KINDS = (
    "tag_not_in_tagset",
    "orphan",
    "unclosed",
    "inside_mismatch",
    "link_unresolved",
    "link_reused",
    "single_branch",
    "middle_mismatch",
)
LOCAL_PROBLEMS = frozenset({"tag_not_in_tagset", "orphan", "unclosed", "inside_mismatch"})
"""Problem kinds that no path allowed by ``tag_constraints.transition_constraints`` can
contain."""


@dataclass(frozen=True)
class TagProblem:
    """One place where a tag row deviates from what ``encode`` would produce, and
    how ``decode`` read it.

    kind (str): one of PROBLEM_KINDS.
    index (int): the token index where the problem shows.
    message (str): a human-readable description.
    """

    kind: str
    index: int
    message: str


# --- encoding ----------------------------------------------------------------------


def _check_branches(
    parallelisms: Sequence[Sequence[Offsets]], length: int
) -> Tuple[List[List[Offsets]], List[Tuple[int, int, int]]]:
    """Validate one stratum and return its parallelisms (branches sorted) and all
    branches as (start, end, parallelism index) sorted by start."""
    if isinstance(length, bool) or int(length) != length or length < 0:
        raise ValueError(f"length must be an int >= 0, got {length!r}.")
    groups: List[List[Offsets]] = []
    branches: List[Tuple[int, int, int]] = []
    for n, parallelism in enumerate(parallelisms):
        group = sorted((int(s), int(e)) for s, e in parallelism)
        if len(group) < 2:
            raise ValueError(
                f"Parallelism {n} {group} has {len(group)} branch(es): a parallelism "
                "needs at least 2 branches."
            )
        for start, end in group:
            if not 0 <= start < end <= length:
                raise ValueError(
                    f"Branch ({start}, {end}) of parallelism {n} is empty or outside the "
                    f"row of length {length}: need 0 <= start < end <= {length}."
                )
            branches.append((start, end, n))
        groups.append(group)
    branches.sort()
    for (s1, e1, n1), (s2, e2, n2) in zip(branches, branches[1:], strict=False):
        if s2 < e1:
            raise ValueError(
                f"Branches overlap in one stratum: ({s1}, {e1}) of parallelism {n1} and "
                f"({s2}, {e2}) of parallelism {n2}. Put nested parallelisms into separate "
                "strata (encode_strata)."
            )
    return groups, branches


def encode(
    parallelisms: Sequence[Sequence[Offsets]], length: int, scheme: TagScheme | str
) -> List[str]:
    """Encode one stratum of parallelisms as one tag per token.

    parallelisms (Sequence[Sequence[Tuple[int, int]]]): per parallelism, its >= 2
        branches as (start, end) token offsets (end exclusive). No two branches of
        the stratum may overlap.
    length (int): the number of tokens.
    scheme (Union[TagScheme, str]): the tag scheme.
    RETURNS (List[str]): the tags.
    """
    scheme = as_scheme(scheme)
    groups, branches = _check_branches(parallelisms, length)
    tags = [OUTSIDE] * length
    if scheme.has_middle and groups:
        # +1 where a parallelism's first branch ends, -1 where its last one starts.
        open_count = [0] * (length + 1)
        for group in groups:
            open_count[group[0][1]] += 1
            open_count[group[-1][0]] -= 1
        running = 0
        for i in range(length):
            running += open_count[i]
            if running > 0:
                tags[i] = MIDDLE
    by_token = scheme.link == "token"
    previous: Dict[int, Tuple[int, int]] = {}  # parallelism -> (end, branch index)
    for index, (start, end, n) in enumerate(branches):
        if n in previous:
            prev_end, prev_index = previous[n]
            link = start - prev_end + 1 if by_token else index - prev_index
            tags[start] = f"B-{link}"
            inside = JOINT if scheme.has_joint else INSIDE
        else:
            tags[start] = BEGIN
            inside = INSIDE
        if end - start > 1:
            tags[start + 1 : end] = [inside] * (end - start - 1)
            if scheme.has_end:
                tags[end - 1] = END
        previous[n] = (end, index)
    return tags


def _strata_items(items: Iterable[Any]) -> List[Tuple[List[Offsets], int]]:
    result = []
    for item in items:
        if hasattr(item, "offsets") and hasattr(item, "stratum"):
            result.append((list(item.offsets), int(item.stratum)))
        else:
            offsets, stratum = item
            result.append((list(offsets), int(stratum)))
    return result


def encode_strata(
    parallelisms_with_strata: Iterable[Any],
    length: int,
    scheme: TagScheme | str,
    n_strata: int,
) -> List[List[str]]:
    """Encode parallelisms on several strata, one tag row per stratum.

    parallelisms_with_strata (Iterable): (offsets, stratum) pairs, or objects with
        ``.offsets`` and ``.stratum`` such as ``spans.Parallelism``. Strata are
        1-based; the branches within one stratum may not overlap.
    length (int): the number of tokens.
    scheme (Union[TagScheme, str]): the tag scheme.
    n_strata (int): the number of rows to produce (>= 1).
    RETURNS (List[List[str]]): row i holds stratum i + 1.
    """
    scheme = as_scheme(scheme)
    if isinstance(n_strata, bool) or int(n_strata) != n_strata or n_strata < 1:
        raise ValueError(f"n_strata must be an int >= 1, got {n_strata!r}.")
    rows: List[List[List[Offsets]]] = [[] for _ in range(int(n_strata))]
    for offsets, stratum in _strata_items(parallelisms_with_strata):
        if not 1 <= stratum <= n_strata:
            raise ValueError(
                f"Parallelism {offsets} is on stratum {stratum}, but only strata 1..{n_strata} "
                "are encoded: raise n_strata or drop the deeper parallelisms."
            )
        rows[stratum - 1].append(offsets)
    return [encode(row, length, scheme) for row in rows]


# --- decoding ----------------------------------------------------------------------


class _Branch:
    __slots__ = ("start", "end", "link", "linked")

    def __init__(self, start: int, link: int | None, linked: bool) -> None:
        self.start = start
        self.end = start + 1
        self.link = link
        self.linked = linked


def _read_branches(
    tags: Sequence[str], scheme: TagScheme, problems: List[TagProblem]
) -> List[_Branch]:
    """Rules 1-3 of the module docstring: cut a row into branches."""
    allowed = frozenset(scheme.prefixes)
    branches: List[_Branch] = []
    current: _Branch | None = None
    ended_by_e = False

    def close() -> None:
        if current is not None and scheme.has_end and not ended_by_e:
            if current.end - current.start > 1:
                problems.append(
                    TagProblem(
                        "unclosed",
                        current.end - 1,
                        f"branch ({current.start}, {current.end}) does not end with E",
                    )
                )

    for i, tag in enumerate(tags):
        prefix, link = parse_tag(tag)
        if prefix not in allowed:
            problems.append(
                TagProblem("tag_not_in_tagset", i, f"'{tag}' is not in tagset {scheme.tagset}")
            )
        if prefix == BEGIN:
            close()
            current = _Branch(i, link, link is not None)
            ended_by_e = False
            branches.append(current)
        elif prefix in INSIDE_PREFIXES:
            if current is None:
                problems.append(
                    TagProblem("orphan", i, f"'{tag}' without an open branch starts one")
                )
                current = _Branch(i, None, False)
                branches.append(current)
            else:
                current.end = i + 1
                if scheme.has_joint and (
                    (prefix == JOINT and not current.linked)
                    or (prefix == INSIDE and current.linked)
                ):
                    where = "a later" if current.linked else "a first"
                    problems.append(
                        TagProblem("inside_mismatch", i, f"'{tag}' inside {where} branch")
                    )
            ended_by_e = prefix == END
            if ended_by_e:
                current = None
        else:
            close()
            current = None
            ended_by_e = False
    close()
    return branches


def _resolve_links(
    branches: List[_Branch], scheme: TagScheme, snap_links: bool, problems: List[TagProblem]
) -> List[int]:
    """Rule 4: the parallelism (index of its first branch) of every branch."""
    group = list(range(len(branches)))
    has_successor = [False] * len(branches)
    lasts = [b.end - 1 for b in branches]
    by_last = {last: index for index, last in enumerate(lasts)}
    for index, branch in enumerate(branches):
        if branch.link is None:
            continue
        target: int | None
        snapped: int | None = None
        if scheme.link == "token":
            wanted = branch.start - branch.link
            target = by_last.get(wanted)
            if target is None and snap_links and index > 0:
                pos = bisect_right(lasts, wanted, 0, index)
                candidates = [c for c in (pos - 1, pos) if 0 <= c < index]
                snapped = min(candidates, key=lambda c: (abs(lasts[c] - wanted), -c))
        else:
            target = index - branch.link
            if target < 0:
                target = None
                snapped = 0 if snap_links and index > 0 else None
        if target is None:
            action = "leaves it unlinked" if snapped is None else "snapped to the nearest branch"
            problems.append(
                TagProblem(
                    "link_unresolved",
                    branch.start,
                    f"link {branch.link} of the branch at {branch.start} points to no branch "
                    f"({action})",
                )
            )
            if snapped is None:
                continue
            target = snapped
        if has_successor[target]:
            problems.append(
                TagProblem(
                    "link_reused",
                    branch.start,
                    f"branch at {branch.start} links to the branch at "
                    f"{branches[target].start}, which already has a successor",
                )
            )
        has_successor[target] = True
        group[index] = group[target]
    return group


def _decode(
    tags: Sequence[str], scheme: TagScheme, snap_links: bool
) -> Tuple[List[ParallelismOffsets], List[TagProblem]]:
    problems: List[TagProblem] = []
    branches = _read_branches(tags, scheme, problems)
    group = _resolve_links(branches, scheme, snap_links, problems)
    members: Dict[int, ParallelismOffsets] = {}
    for branch, root in zip(branches, group, strict=True):
        members.setdefault(root, []).append((branch.start, branch.end))
    parallelisms: List[ParallelismOffsets] = []
    for root in sorted(members):
        if len(members[root]) < 2:
            start = members[root][0][0]
            problems.append(
                TagProblem("single_branch", start, f"the branch at {start} has no partner")
            )
        else:
            parallelisms.append(members[root])
    if scheme.has_middle:
        _check_middle(tags, branches, parallelisms, problems)
    problems.sort(key=lambda p: p.index)
    return parallelisms, problems


def _check_middle(
    tags: Sequence[str],
    branches: List[_Branch],
    parallelisms: List[ParallelismOffsets],
    problems: List[TagProblem],
) -> None:
    """Rule 6: compare M/O on outside tokens with the decoded parallelisms."""
    length = len(tags)
    delta = [0] * (length + 1)
    for group in parallelisms:
        delta[group[0][1]] += 1
        delta[group[-1][0]] -= 1
    covered = [False] * length
    for branch in branches:
        covered[branch.start : branch.end] = [True] * (branch.end - branch.start)
    running = 0
    for i in range(length):
        running += delta[i]
        if covered[i]:
            continue
        expected = MIDDLE if running > 0 else OUTSIDE
        if tags[i] != expected:
            problems.append(
                TagProblem(
                    "middle_mismatch", i, f"'{tags[i]}' where the parallelisms imply '{expected}'"
                )
            )


def decode(
    tags: Sequence[str],
    scheme: TagScheme | str,
    *,
    snap_links: bool = False,
    strict: bool = False,
) -> List[ParallelismOffsets]:
    """Decode one tag row into parallelisms (see the module docstring for how
    imperfect rows are read).

    tags (Sequence[str]): the tags.
    scheme (Union[TagScheme, str]): the tag scheme.
    snap_links (bool): attach links that point nowhere to the nearest branch.
    strict (bool): raise ValueError on the first problem instead of repairing it.
    RETURNS (List[List[Tuple[int, int]]]): parallelisms sorted by their first branch,
        each a sorted list of >= 2 (start, end) branches.
    """
    scheme = as_scheme(scheme)
    parallelisms, problems = _decode(tags, scheme, snap_links)
    if strict and problems:
        first = problems[0]
        raise ValueError(
            f"Invalid {scheme.name} tags at token {first.index} ({first.kind}): {first.message}."
        )
    return parallelisms


def tag_problems(
    tags: Sequence[str], scheme: TagScheme | str, *, snap_links: bool = False
) -> List[TagProblem]:
    """List everything ``decode`` has to repair in a tag row.

    tags (Sequence[str]): the tags.
    scheme (Union[TagScheme, str]): the tag scheme.
    snap_links (bool): as in ``decode``.
    RETURNS (List[TagProblem]): the problems, by token index; empty exactly when
        ``encode(decode(tags), len(tags), scheme) == list(tags)``.
    """
    return _decode(tags, as_scheme(scheme), snap_links)[1]


def decode_strata(
    rows: Sequence[Sequence[str]],
    scheme: TagScheme | str,
    *,
    snap_links: bool = False,
    strict: bool = False,
) -> List[Tuple[ParallelismOffsets, int]]:
    """Decode one tag row per stratum.

    rows (Sequence[Sequence[str]]): row i holds stratum i + 1; all of one length.
    scheme (Union[TagScheme, str]): the tag scheme.
    snap_links (bool): as in ``decode``.
    strict (bool): as in ``decode``.
    RETURNS (List[Tuple[List[Tuple[int, int]], int]]): (branches, stratum) pairs sorted
        by first branch, then stratum.
    """
    scheme = as_scheme(scheme)
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        raise ValueError(f"All tag rows must have the same length, got lengths {sorted(lengths)}.")
    result: List[Tuple[ParallelismOffsets, int]] = []
    for stratum, row in enumerate(rows, 1):
        for parallelism in decode(row, scheme, snap_links=snap_links, strict=strict):
            result.append((parallelism, stratum))
    result.sort(key=lambda item: (item[0][0], item[1]))
    return result


__all__ = [
    "LOCAL_PROBLEMS",
    "PROBLEM_KINDS",
    "TagProblem",
    "decode",
    "decode_strata",
    "encode",
    "encode_strata",
    "tag_problems",
]
