"""Transition masks for parallelism tags: which tag may start a row, follow another
tag, or end a row under a tag scheme of ``tags``, as first-order masks a CRF decodes
under.

Transition masks
----------------
``transition_constraints`` gives start/transition/end masks that rule out every
*local* problem (``tag_codec.LOCAL_PROBLEMS``): orphans, unclosed E branches, I/J
mismatches and tags outside the tagset can never appear on a path the masks allow.
They also encode the local part of the global constraints: no ``B-k`` at the start
(nothing to link to), no first-branch ``B`` (nor first-branch I under J tagsets) at
the end (its parallelism could never be completed), and under token links ``B-1``
only right after a branch token. Under M tagsets: no M at the start or end, no O->M
or M->O (the parallelism state cannot change between two outside tokens), no O->B-k
(a later branch means its parallelism is open, so an outside token before it is M)
and no O right after a first branch (its parallelism is now open). What a
first-order mask cannot express, and ``tag_codec.decode`` therefore repairs:
whether a link resolves to a branch (and to one without successor), whether a
first branch is ever linked to, and whether an M/O run agrees with the decoded
parallelisms.
"""

from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

from .tags import (
    BEGIN,
    END,
    INSIDE,
    INSIDE_PREFIXES,
    JOINT,
    LINKED_BEGIN,
    MIDDLE,
    OUTSIDE,
    TagScheme,
    as_scheme,
    parse_tag,
)


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
    if scheme.has_end and p in (INSIDE, JOINT) and q not in INSIDE_PREFIXES:
        return False  # an E must close the branch
    if q in INSIDE_PREFIXES:
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
    scheme = as_scheme(scheme)
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


__all__ = ["is_allowed", "transition_constraints"]
