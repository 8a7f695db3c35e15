"""Tag schemes for rhetorical parallelism detection: the tagsets and link types, the
tags a scheme uses, and how a concrete tag splits into a structure tag and a link.
Encoding parallelisms as tags and decoding them back live in ``tag_codec``; the
transition masks a CRF decodes under live in ``tag_constraints``.

The schemes are those of Bothwell et al. (2023), "Introducing Rhetorical Parallelism
Detection: A New Task with Datasets, Metrics, and Baselines" (EMNLP): BIO tagging
extended with up to three extra tags (M, J, E) and with a numerical link on the
B tag of every non-initial branch. 8 tagsets x 2 link types = 16 schemes, named
``"<tagset>-<link>"`` (e.g. ``"biomje-branch"``).

Tags
----
One row of tags encodes one *stratum*: parallelisms whose branches do not overlap.
Nested parallelisms go into further rows (``tag_codec.encode_strata``).

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

Links and closed vocabularies
-----------------------------
A CRF over tags like ``B-17`` cannot predict link values it never saw. Split a
tag into a *structure* tag and a link (``split_link("B-3") == ("B-*", 3)``),
predict structures with the CRF over ``structure_vocabulary(scheme)`` (the
structure ``B-*`` stands for every ``B-k``) and links with a separate head, then
``join_link`` them back. ``tag_constraints.transition_constraints`` accepts structure
tags and concrete tags alike.
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, List, Tuple

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

PREFIXES = (OUTSIDE, MIDDLE, BEGIN, INSIDE, JOINT, END)
"""Every tag prefix, in vocabulary order."""
INSIDE_PREFIXES = frozenset({INSIDE, JOINT, END})
"""The prefixes that continue an open branch."""

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
        return tuple(p for p in PREFIXES if extra.get(p, True))

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


def as_scheme(scheme: TagScheme | str) -> TagScheme:
    """scheme (Union[TagScheme, str]): a scheme or a scheme name such as "bio-token".
    RETURNS (TagScheme): the scheme.
    """
    if isinstance(scheme, TagScheme):
        return scheme
    if isinstance(scheme, str):
        return TagScheme.from_name(scheme)
    raise TypeError(f"Expected a TagScheme or a scheme name, got {type(scheme).__name__}.")


# --- single tags -------------------------------------------------------------------


@lru_cache(maxsize=4096)
def parse_tag(tag: str) -> Tuple[str, int | None]:
    """Split a concrete tag into its prefix and its link.

    tag (str): e.g. "O", "B", "B-3", "J".
    RETURNS (Tuple[str, Optional[int]]): the prefix (one of O, M, B, I, J, E) and the
        link (an int >= 1 for "B-k", else None).
    """
    if tag in PREFIXES:
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
    if structure not in PREFIXES:
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
    scheme = as_scheme(scheme)
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
    scheme = as_scheme(scheme)
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


__all__ = [
    "BEGIN",
    "END",
    "INSIDE",
    "INSIDE_PREFIXES",
    "JOINT",
    "LINKED_BEGIN",
    "LINK_TYPES",
    "MIDDLE",
    "OUTSIDE",
    "PREFIXES",
    "TAGSETS",
    "Offsets",
    "ParallelismOffsets",
    "TagScheme",
    "all_schemes",
    "as_scheme",
    "join_link",
    "link_values",
    "parse_tag",
    "split_link",
    "structure_vocabulary",
    "tag_vocabulary",
]
