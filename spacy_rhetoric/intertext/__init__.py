"""Intertextuality (Loci Similes): Latin normalisation and the shared-rarity lexical
channel (``lexical``), the bi-encoder channel (``dense``), the persisted two-channel
index (``index``), the pair-feature reranker (``rerank``, trained by ``train``), the
``intertext_matcher`` component (``component``), metrics (``metrics``), the Loci
Similes benchmark pools (``benchmark``), their folds (``folds``) and the
cross-validation protocols (``evaluate``), HTML rendering (``render``) and CLI
commands (``commands``). sentence-transformers is imported only when an encoder is
loaded."""

from .index import Candidate, IntertextIndex

__all__ = ["Candidate", "IntertextIndex"]
