"""Tag schemes for rhetorical parallelism detection: encode parallelisms as one tag
per token, decode tags back into parallelisms, and describe which tag transitions
a CRF may take.

The schemes are those of Bothwell et al. (2023), "Introducing Rhetorical Parallelism
Detection: A New Task with Datasets, Metrics, and Baselines" (EMNLP): BIO tagging
extended with up to three extra tags (M, J, E) and with a numerical link on the
B tag of every non-initial branch. 8 tagsets x 2 link types = 16 schemes, named
``"<tagset>-<link>"`` (e.g. ``"biomje-branch"``).

Tags
----
One row of tags encodes one *stratum*: parallelisms whose branches do not overlap.
Nested parallelisms go into further rows (``encode_strata``).

- ``O``: outside every branch.
- ``B``: first token of the *first* branch of a parallelism (no link).
- ``B-k``: first token of a later branch; ``k >= 1`` links it back to the previous
  branch of the same parallelism (see Links).
- ``I``: any other token of a branch. In J tagsets only inside the first branch.
- ``J`` (J tagsets): a non-first token of a branch that is *not* the first branch of
  its parallelism ("non-initial inside").
- ``E`` (E tagsets): the last token of a branch of two or more tokens; it takes
  precedence over I and J (a one-token branch is just its B tag).
- ``M`` (M tagsets): a token outside every branch but while some parallelism of
  this stratum is incomplete, i.e. after the end of its first branch and before
  the start of its last one ("middle"). Outside tokens elsewhere stay ``O``.

Links
-----
- ``token``: ``k`` = start of this branch minus the last token of the previous
  branch of the same parallelism, i.e. ``start - previous_end + 1`` with exclusive
  ends. Adjacent branches get 1; "tamquam dominum timetis , tamquam patrem
  diligitis" is ``B I I M B-2 J J`` under biomj-token.
- ``branch``: ``k`` = how many branches back, counting the branches of *all*
  parallelisms of this stratum, the previous branch of the same parallelism is.
  The next branch gets 1.

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

Transition masks
----------------
``transition_constraints`` gives start/transition/end masks that rule out every
*local* problem: orphans, unclosed E branches, I/J mismatches and tags outside the
tagset can never appear on a path the masks allow. They also encode the local
part of the global constraints: no ``B-k`` at the start (nothing to link to), no
first-branch ``B`` (nor first-branch I under J tagsets) at the end (its
parallelism could never be completed), and under token links ``B-1`` only right
after a branch token. Under M tagsets: no M at the start or end, no O->M or M->O
(the parallelism state cannot change between two outside tokens), no O->B-k (a
later branch means its parallelism is open, so an outside token before it is M)
and no O right after a first branch (its parallelism is now open). What a
first-order mask cannot express, and ``decode`` therefore repairs as above:
whether a link resolves to a branch (and to one without successor), whether a
first branch is ever linked to, and whether an M/O run agrees with the decoded
parallelisms.

Links and closed vocabularies
-----------------------------
A CRF over tags like ``B-17`` cannot predict link values it never saw. Split a
tag into a *structure* tag and a link (``split_link("B-3") == ("B-*", 3)``),
predict structures with the CRF over ``structure_vocabulary(scheme)`` (the
structure ``B-*`` stands for every ``B-k``) and links with a separate head, then
``join_link`` them back. ``transition_constraints`` accepts structure tags and
concrete tags alike.
"""

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Sequence, Tuple

import numpy as np

TAGSETS = ("bio", "bioe", "bioj", "biom", "bioje", "biome", "biomj", "biomje")
LINK_TYPES = ("token", "branch")

OUTSIDE = "O"
MIDDLE = "M"
BEGIN = "B"
INSIDE = "I"
JOINT = "J"
END = "E"
LINKED_BEGIN = "B-*"
"""The structure tag standing for every linked beginning ``B-k``."""

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
"""Problem kinds that no path allowed by ``transition_constraints`` can contain."""

_PREFIXES = (OUTSIDE, MIDDLE, BEGIN, INSIDE, JOINT, END)
_INSIDE_PREFIXES = frozenset({INSIDE, JOINT, END})

Offsets = Tuple[int, int]
ParallelismOffsets = List[Offsets]


@dataclass(frozen=True)
class TagScheme:
    """A tag scheme: a tagset (which of M, J, E are used) and a link type.

    tagset (str): one of TAGSETS.
    link (str): one of LINK_TYPES.
    """

    tagset: str
    link: str

    def __post_init__(self) -> None:
        if self.tagset not in TAGSETS:
            raise ValueError(
                f"Unknown parallelism tagset '{self.tagset}'. Choose one of: {', '.join(TAGSETS)}."
            )
        if self.link not in LINK_TYPES:
            raise ValueError(
                f"Unknown parallelism link type '{self.link}'. "
                f"Choose one of: {', '.join(LINK_TYPES)}."
            )

    @property
    def name(self) -> str:
        """RETURNS (str): the scheme's name, e.g. "biomje-branch"."""
        return f"{self.tagset}-{self.link}"

    @property
    def has_middle(self) -> bool:
        """RETURNS (bool): whether the tagset uses M."""
        return "m" in self.tagset[3:]

    @property
    def has_joint(self) -> bool:
        """RETURNS (bool): whether the tagset uses J."""
        return "j" in self.tagset[3:]

    @property
    def has_end(self) -> bool:
        """RETURNS (bool): whether the tagset uses E."""
        return "e" in self.tagset[3:]

    @property
    def prefixes(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): the tag prefixes of the tagset."""
        extra = {MIDDLE: self.has_middle, JOINT: self.has_joint, END: self.has_end}
        return tuple(p for p in _PREFIXES if extra.get(p, True))

    @classmethod
    def from_name(cls, name: str) -> "TagScheme":
        """Parse a scheme name such as "biomje-branch".

        name (str): "<tagset>-<link>".
        RETURNS (TagScheme): the scheme.
        """
        tagset, sep, link = str(name).strip().lower().partition("-")
        if not sep:
            names = ", ".join(s.name for s in all_schemes())
            raise ValueError(
                f"Invalid parallelism tag scheme name '{name}': expected '<tagset>-<link>', "
                f"one of: {names}."
            )
        return cls(tagset, link)

    def __str__(self) -> str:
        return self.name


def all_schemes() -> List[TagScheme]:
    """RETURNS (List[TagScheme]): the 16 schemes, tagsets in TAGSETS order, token first."""
    return [TagScheme(tagset, link) for tagset in TAGSETS for link in LINK_TYPES]


def _as_scheme(scheme: TagScheme | str) -> TagScheme:
    if isinstance(scheme, TagScheme):
        return scheme
    if isinstance(scheme, str):
        return TagScheme.from_name(scheme)
    raise TypeError(f"Expected a TagScheme or a scheme name, got {type(scheme).__name__}.")


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


# --- single tags -------------------------------------------------------------------


@lru_cache(maxsize=4096)
def parse_tag(tag: str) -> Tuple[str, int | None]:
    """Split a concrete tag into its prefix and its link.

    tag (str): e.g. "O", "B", "B-3", "J".
    RETURNS (Tuple[str, Optional[int]]): the prefix (one of O, M, B, I, J, E) and the
        link (an int >= 1 for "B-k", else None).
    """
    if tag in _PREFIXES:
        return tag, None
    if isinstance(tag, str) and tag.startswith("B-"):
        value = tag[2:]
        if value.isdigit() and value.isascii() and int(value) >= 1:
            return BEGIN, int(value)
    raise ValueError(
        f"Not a parallelism tag: {tag!r}. Tags are O, M, B, B-<k> (k >= 1), I, J or E."
    )


def split_link(tag: str) -> Tuple[str, int | None]:
    """Split a concrete tag into its structure tag and its link value.

    tag (str): e.g. "B-3".
    RETURNS (Tuple[str, Optional[int]]): ("B-*", 3) for a linked beginning, else
        (tag, None).
    """
    prefix, link = parse_tag(tag)
    if link is None:
        return prefix, None
    return LINKED_BEGIN, link


def join_link(structure: str, link: int | None) -> str:
    """Inverse of ``split_link``.

    structure (str): a structure tag (O, M, B, B-*, I, J, E).
    link (Optional[int]): the link value; required (>= 1) for "B-*", None otherwise.
    RETURNS (str): the concrete tag.
    """
    if structure == LINKED_BEGIN:
        if link is None or isinstance(link, bool) or int(link) != link or link < 1:
            raise ValueError(f"Structure tag 'B-*' needs a link >= 1, got {link!r}.")
        return f"B-{int(link)}"
    if structure not in _PREFIXES:
        raise ValueError(
            f"Not a parallelism structure tag: {structure!r}. Use O, M, B, B-*, I, J or E."
        )
    if link is not None:
        raise ValueError(f"Only 'B-*' carries a link; got link {link!r} for '{structure}'.")
    return structure


def structure_vocabulary(scheme: TagScheme | str) -> List[str]:
    """The structure tags of a scheme (links abstracted to "B-*").

    scheme (Union[TagScheme, str]): the scheme.
    RETURNS (List[str]): e.g. ["O", "M", "B", "B-*", "I", "J", "E"] for biomje.
    """
    scheme = _as_scheme(scheme)
    labels: List[str] = []
    for prefix in scheme.prefixes:
        labels.append(prefix)
        if prefix == BEGIN:
            labels.append(LINKED_BEGIN)
    return labels


def tag_vocabulary(scheme: TagScheme | str, max_link: int) -> List[str]:
    """The concrete tags of a scheme with links 1..max_link.

    scheme (Union[TagScheme, str]): the scheme.
    max_link (int): the largest link value (>= 0).
    RETURNS (List[str]): e.g. ["O", "B", "B-1", "B-2", "I"] for bio with max_link=2.
    """
    scheme = _as_scheme(scheme)
    if isinstance(max_link, bool) or int(max_link) != max_link or max_link < 0:
        raise ValueError(f"max_link must be an int >= 0, got {max_link!r}.")
    labels: List[str] = []
    for prefix in scheme.prefixes:
        labels.append(prefix)
        if prefix == BEGIN:
            labels.extend(f"B-{k}" for k in range(1, int(max_link) + 1))
    return labels


def link_values(tags: Iterable[str]) -> List[int]:
    """tags (Iterable[str]): a tag row.
    RETURNS (List[int]): the link values of its linked beginnings, in order.
    """
    return [link for link in (parse_tag(t)[1] for t in tags) if link is not None]


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
    scheme = _as_scheme(scheme)
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
    scheme = _as_scheme(scheme)
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
        elif prefix in _INSIDE_PREFIXES:
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
    scheme = _as_scheme(scheme)
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
    return _decode(tags, _as_scheme(scheme), snap_links)[1]


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
    scheme = _as_scheme(scheme)
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        raise ValueError(f"All tag rows must have the same length, got lengths {sorted(lengths)}.")
    result: List[Tuple[ParallelismOffsets, int]] = []
    for stratum, row in enumerate(rows, 1):
        for parallelism in decode(row, scheme, snap_links=snap_links, strict=strict):
            result.append((parallelism, stratum))
    result.sort(key=lambda item: (item[0][0], item[1]))
    return result


# --- transition constraints -------------------------------------------------------


@dataclass(frozen=True)
class _Label:
    prefix: str
    linked: bool
    link: int | None


def _classify(label: str, scheme: TagScheme) -> _Label:
    if label == LINKED_BEGIN:
        result = _Label(BEGIN, True, None)
    else:
        prefix, link = parse_tag(label)
        result = _Label(prefix, link is not None, link)
    if result.prefix not in scheme.prefixes:
        raise ValueError(
            f"Label '{label}' is not part of tagset {scheme.tagset} "
            f"(prefixes: {', '.join(scheme.prefixes)})."
        )
    return result


def _may_start(label: _Label) -> bool:
    return label.prefix == OUTSIDE or (label.prefix == BEGIN and not label.linked)


def _may_end(label: _Label, scheme: TagScheme) -> bool:
    prefix = label.prefix
    if prefix == MIDDLE or (prefix == BEGIN and not label.linked):
        return False
    if prefix in (INSIDE, JOINT) and scheme.has_end:
        return False
    return not (prefix == INSIDE and scheme.has_joint)


def _may_follow(prev: _Label, nxt: _Label, scheme: TagScheme) -> bool:
    p, q = prev.prefix, nxt.prefix
    if scheme.has_end and p in (INSIDE, JOINT) and q not in _INSIDE_PREFIXES:
        return False  # an E must close the branch
    if q in _INSIDE_PREFIXES:
        if p in (OUTSIDE, MIDDLE, END):
            return False  # no open branch to continue
        if scheme.has_joint:
            later_branch = prev.linked if p == BEGIN else p == JOINT
            if (q == JOINT and not later_branch) or (q == INSIDE and later_branch):
                return False
        return True
    if q in (OUTSIDE, MIDDLE):
        if p in (OUTSIDE, MIDDLE):
            return p == q
        if scheme.has_middle and q == OUTSIDE:
            if p == BEGIN and not prev.linked:
                return False  # a one-token first branch leaves its parallelism open
            if p == INSIDE and scheme.has_joint:
                return False  # so does a longer first branch
        return True
    # q is a beginning.
    if nxt.linked:
        if scheme.has_middle and p == OUTSIDE:
            return False
        if scheme.link == "token" and nxt.link == 1 and p in (OUTSIDE, MIDDLE):
            return False  # B-1 must directly follow the previous branch
    return True


def transition_constraints(
    labels: Sequence[str], scheme: TagScheme | str
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which label sequences the tagset allows, as first-order masks.

    labels (Sequence[str]): the model's labels: concrete tags ("B-3") and/or
        structure tags ("B-*"), all within the scheme's tagset.
    scheme (Union[TagScheme, str]): the tag scheme.
    RETURNS (Tuple[np.ndarray, np.ndarray, np.ndarray]): boolean ``start`` (K,),
        ``trans`` (K, K) with ``trans[i, j]`` = label j may follow label i, and
        ``end`` (K,).
    """
    scheme = _as_scheme(scheme)
    classified = [_classify(label, scheme) for label in labels]
    size = len(classified)
    start = np.array([_may_start(c) for c in classified], dtype=bool).reshape(size)
    end = np.array([_may_end(c, scheme) for c in classified], dtype=bool).reshape(size)
    trans = np.zeros((size, size), dtype=bool)
    for i, prev in enumerate(classified):
        for j, nxt in enumerate(classified):
            trans[i, j] = _may_follow(prev, nxt, scheme)
    return start, trans, end


def is_allowed(
    tags: Sequence[str],
    labels: Sequence[str],
    masks: Tuple[np.ndarray, np.ndarray, np.ndarray],
) -> bool:
    """Whether a path is allowed by masks from ``transition_constraints``.

    tags (Sequence[str]): the path, as labels.
    labels (Sequence[str]): the labels the masks were built for.
    masks (Tuple[np.ndarray, np.ndarray, np.ndarray]): (start, trans, end).
    RETURNS (bool): True if every step of the path is allowed (an empty path is).
    """
    if not tags:
        return True
    start, trans, end = masks
    index = {label: i for i, label in enumerate(labels)}
    unknown = [t for t in tags if t not in index]
    if unknown:
        raise ValueError(f"Tags {sorted(set(unknown))} are not among the masks' labels.")
    ids = [index[t] for t in tags]
    if not (start[ids[0]] and end[ids[-1]]):
        return False
    return all(trans[a, b] for a, b in zip(ids, ids[1:], strict=False))


__all__ = [
    "END",
    "INSIDE",
    "JOINT",
    "LINKED_BEGIN",
    "LINK_TYPES",
    "LOCAL_PROBLEMS",
    "MIDDLE",
    "OUTSIDE",
    "PROBLEM_KINDS",
    "TAGSETS",
    "BEGIN",
    "TagProblem",
    "TagScheme",
    "all_schemes",
    "decode",
    "decode_strata",
    "encode",
    "encode_strata",
    "is_allowed",
    "join_link",
    "link_values",
    "parse_tag",
    "split_link",
    "structure_vocabulary",
    "tag_problems",
    "tag_vocabulary",
    "transition_constraints",
]
