"""Custom attributes that spacy_rhetoric adds to Doc, Span and Token."""

from spacy.tokens import Doc

from .corpora.parallelisms import get_parallelisms


def register_extensions() -> None:
    """Register the extension attributes (idempotent)."""
    if not Doc.has_extension("parallelisms"):
        Doc.set_extension("parallelisms", getter=get_parallelisms)
