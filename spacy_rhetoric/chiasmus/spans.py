"""How chiasmi live in ``doc.spans``: the attrs of the finder's groups, the annotated
candidates of a gold doc, and the extension attributes that read them.

A group of ranked candidates keeps in its ``attrs`` the scores ("chiasmus_scores") and
token positions A, B, ..., A' ("chiasmus_positions") by span_id, the key of the support
group ("chiasmus_support_key"), each head's variants ("chiasmus_variants": [start, end,
score] per variant, best first) and, for Chinese, character offsets. The extension
attributes:

* ``span._.chiasmus_score`` (float or None),
* ``span._.chiasmus_support`` (the candidate's supporting single-token spans),
* ``span._.is_antimetabole`` (every pair repeats its lemma; lower-case form without lemmas).

Gold data (see ``spacy_rhetoric.corpora.chiasmus``) has the same layout: annotated
candidates in ``doc.spans["chiasmus"]`` labelled with the annotation code and their
four (or six) tokens in ``doc.spans["chiasmus_support"]`` (``gold_candidates``).
"""

from typing import Any, Dict, List, Optional, Tuple

import numpy
from spacy.tokens import Doc, Span, SpanGroup

from .candidates import roles
from .characters import CHARACTERS_ATTR

SCORES_ATTR = "chiasmus_scores"
POSITIONS_ATTR = "chiasmus_positions"
SUPPORT_KEY_ATTR = "chiasmus_support_key"
ABOVE_ATTR = "chiasmus_above_threshold"
VARIANTS_ATTR = "chiasmus_variants"


def gold_candidates(
    doc: Doc, spans_key: str = "chiasmus", support_key: str = "chiasmus_support"
) -> List[Tuple[Tuple[int, ...], str]]:
    """The annotated candidates of a (gold) doc.

    doc (Doc): a doc with candidate spans and their supporting tokens.
    spans_key (str): the group of the A..A' spans (labelled with the annotation).
    support_key (str): the group of the supporting single-token spans.
    RETURNS (List[Tuple[Tuple[int, ...], str]]): (token positions A, B, ..., A', label)
        per candidate, in the order of the spans group.
    """
    if spans_key not in doc.spans:
        return []
    support: Dict[str, List[int]] = {}
    if support_key in doc.spans:
        for span in doc.spans[support_key]:
            support.setdefault(span.id_, []).append(span.start)
    result = []
    for span in doc.spans[spans_key]:
        positions = sorted(support.get(span.id_, []))
        if (
            len(positions) in (4, 6)
            and positions[0] == span.start
            and positions[-1] == span.end - 1
        ):
            result.append((tuple(positions), span.label_))
    return result


def group_attrs(
    ranks: numpy.ndarray,
    ranked: numpy.ndarray,
    indices: numpy.ndarray,
    characters: Optional[numpy.ndarray],
    ids: Dict[int, str],
    support_key: str,
    variants: Optional[Dict[int, List[int]]],
) -> Dict[str, Any]:
    """The attrs of a group of ranked candidates: scores, positions, (character offsets,)
    and, where ``variants`` are given, each head's variants as [start, end, score]."""
    names = [ids[r] for r in ranks.tolist()]
    attrs: Dict[str, Any] = {
        SCORES_ATTR: dict(zip(names, ranked[ranks].tolist())),
        POSITIONS_ATTR: dict(zip(names, indices[ranks].tolist())),
        SUPPORT_KEY_ATTR: support_key,
    }
    if variants is not None:
        attrs[VARIANTS_ATTR] = {
            ids[r]: [
                [int(indices[v][0]), int(indices[v][-1]) + 1, float(ranked[v])] for v in variants[r]
            ]
            for r in ranks.tolist()
            if r in variants
        }
    if characters is not None:
        attrs[CHARACTERS_ATTR] = dict(zip(names, characters[ranks].tolist()))
    return attrs


def _own_group(span: Span) -> Optional[SpanGroup]:
    """The first group written by a chiasmus_finder that scored this span's candidate."""
    for group in span.doc.spans.values():
        positions = group.attrs.get(POSITIONS_ATTR)
        if positions and span.id_ in positions:
            found = positions[span.id_]
            if found[0] == span.start and found[-1] == span.end - 1:
                return group
    return None


def _span_score(span: Span) -> Optional[float]:
    group = _own_group(span)
    return float(group.attrs[SCORES_ATTR][span.id_]) if group is not None else None


def _span_support(span: Span) -> Tuple[Span, ...]:
    group = _own_group(span)
    key = group.attrs.get(SUPPORT_KEY_ATTR) if group is not None else "chiasmus_support"
    doc = span.doc
    if key in doc.spans:
        found = tuple(
            s
            for s in doc.spans[key]
            if s.id_ == span.id_ and span.start <= s.start and s.end <= span.end
        )
        if found:
            return found
    if group is not None:  # chosen below the threshold: rebuild from the positions
        positions = group.attrs[POSITIONS_ATTR][span.id_]
        return tuple(
            Span(doc, i, i + 1, label=role, span_id=span.id_)
            for role, i in zip(roles(len(positions) // 2), positions)
        )
    return tuple()


def _span_is_antimetabole(span: Span) -> Optional[bool]:
    group = _own_group(span)
    found_on = group.attrs.get(CHARACTERS_ATTR) if group is not None else None
    if found_on and span.id_ in found_on:  # found on characters: compare them
        chars = [span.doc.text[offset] for offset in found_on[span.id_]]
        return all(chars[k] == chars[-1 - k] for k in range(len(chars) // 2))
    support = _span_support(span)
    if len(support) not in (4, 6):
        return None
    doc = span.doc
    use_lemma = doc.has_annotation("LEMMA")
    forms = [s[0].lemma_.lower() if use_lemma else s[0].lower_ for s in support]
    return all(forms[k] == forms[-1 - k] for k in range(len(forms) // 2))


def register_chiasmus_extensions() -> None:
    """Register ``span._.chiasmus_score``, ``span._.chiasmus_support`` and
    ``span._.is_antimetabole`` (idempotent)."""
    for name, getter in (
        ("chiasmus_score", _span_score),
        ("chiasmus_support", _span_support),
        ("is_antimetabole", _span_is_antimetabole),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)
