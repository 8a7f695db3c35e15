"""Intertextuality: quotations of and allusions to a source corpus (Virgil and the
classical authors of Loci Similes, the Bible in English and Latin, or an index of one's
own). Latin normalisation and the shared-rarity lexical channel (``lexical``), character
n-grams (``chars``), the bi-encoder channel (``dense``), the persisted two-channel index
(``index``; its candidates and their fused ranking: ``fusion``), Bible texts as sources
(``bible``), the pair-feature reranker (``rerank``, trained by ``train``; the tuned
query encoder ``query_encoder``, ``query_crossfit``), queries inside the sentence and
quotation alignment (``units``), where a candidate becomes a link (``link``; the default
threshold of an index without a reranker, ``null``), the ``intertext_matcher`` component
(``component``) and its pipelines (``pipeline``), metrics (``metrics``), the Loci
Similes benchmark pools (``benchmark``), their folds (``folds``) and the
cross-validation protocols (``evaluate``), and HTML rendering (``render``).
sentence-transformers is imported only when an encoder is loaded.
"""

from .fusion import Candidate
from .index import IntertextIndex

__all__ = ["Candidate", "IntertextIndex"]
