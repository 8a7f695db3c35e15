"""A Doc's annotations as one JSON record, generically: every span group (parallelisms,
chiasmi, intertext links, ...) with its spans, attrs and scalar span extensions, and
every stored doc extension (e.g. ``doc._.med``). Nothing here knows our components, so
a new component's span groups and attributes appear in the JSONL without code changes.
"""

import math
from typing import Any, Dict, List, Optional

from spacy.tokens import Doc, Span
from spacy.tokens.underscore import Underscore

_SKIP = object()


def json_value(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data, or ``_SKIP`` if it has no JSON form.

    Numpy scalars become Python numbers, tuples lists; NaN and infinities become None;
    Spans become their token offsets. Objects (models, tensors, ...) are skipped.
    """
    if depth > 6:
        return _SKIP
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        return json_value(value.item(), depth + 1)
    if isinstance(value, Span):
        return [value.start, value.end]
    if isinstance(value, (list, tuple)):
        items = [json_value(item, depth + 1) for item in value]
        return _SKIP if any(item is _SKIP for item in items) else items
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item = json_value(item, depth + 1)
            if item is _SKIP:
                return _SKIP
            out[str(key)] = item
        return out
    return _SKIP


def doc_extensions(doc: Doc) -> Dict[str, Any]:
    """Stored (not computed) doc extension attributes that are set and JSON-serializable.

    Getters and methods are left out: they are derived from what is stored (e.g.
    ``doc._.parallelisms`` from the "parallelism" span group, which is written anyway).
    """
    out: Dict[str, Any] = {}
    for name, (default, method, getter, _setter) in sorted(Underscore.doc_extensions.items()):
        if method is not None or getter is not None:
            continue
        value = json_value(doc._.get(name))
        if value is not _SKIP and value is not None and value != default:
            out[name] = value
    return out


def span_extensions(span: Span) -> Dict[str, Any]:
    """Scalar span extension attributes (stored or computed) that are not None."""
    out: Dict[str, Any] = {}
    for name, (_default, method, _getter, _setter) in sorted(Underscore.span_extensions.items()):
        if method is not None:
            continue
        value = span._.get(name)
        if isinstance(value, (bool, int, float, str)) or (
            hasattr(value, "item") and getattr(value, "shape", None) == ()
        ):
            value = json_value(value)
            if value is not None:
                out[name] = value
    return out


def span_record(span: Span) -> Dict[str, Any]:
    """One span: token and character offsets, label, id, text and scalar extensions."""
    record: Dict[str, Any] = {
        "start": span.start,
        "end": span.end,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "label": span.label_,
        "text": span.text,
    }
    if span.id_:
        record["id"] = span.id_
    extensions = span_extensions(span)
    if extensions:
        record["_"] = extensions
    return record


def doc_record(doc: Doc, source: Optional[str] = None) -> Dict[str, Any]:
    """A doc's annotations as one JSON-serializable record (one JSONL line).

    doc (Doc): the processed doc.
    source (Optional[str]): the file it was read from.
    RETURNS (Dict[str, Any]): {"file", "tokens", "words", "sents", "_": doc extensions,
        "spans": {key: {"spans": [...], "attrs": {...}}}}.
    """
    record: Dict[str, Any] = {}
    if source is not None:
        record["file"] = source
    record["tokens"] = len(doc)
    record["words"] = count_words(doc)
    if doc.has_annotation("SENT_START") or doc.has_annotation("DEP"):
        record["sents"] = sum(1 for _ in doc.sents)
    record["_"] = doc_extensions(doc)
    groups: Dict[str, Any] = {}
    for key, group in sorted(doc.spans.items()):
        spans: List[Dict[str, Any]] = [span_record(span) for span in group]
        entry: Dict[str, Any] = {"spans": spans}
        attrs = {name: json_value(value) for name, value in group.attrs.items()}
        attrs = {name: value for name, value in attrs.items() if value is not _SKIP}
        if attrs:
            entry["attrs"] = attrs
        groups[key] = entry
    record["spans"] = groups
    return record


def count_words(doc: Doc) -> int:
    """Tokens that are neither punctuation nor whitespace: the "words" of words/s."""
    return sum(1 for token in doc if not (token.is_punct or token.is_space))
