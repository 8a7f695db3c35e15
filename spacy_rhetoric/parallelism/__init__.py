"""Rhetorical parallelism: ``parallelism_tagger``, a CRF head over token vectors that
tags the branches of parallelisms and links each to the one it continues.

The pipe (``component``) and what it is made of: the tag schemes (``tags``), their
encoding and decoding (``tag_codec``) and transition constraints (``tag_constraints``);
the architecture (``model``) and its torch network (``network``: encoder, CRF in
``crf``, pairwise branch ``linker``), repetition features (``features``); how a doc is
read and tidied (``reading``) and cut into windows (``windows``); the decoder
(``decoding``), the gold it learns from (``gold``), the synchystic/chiastic typer
(``types``); the confidence of what it finds (``confidence``), the scores on spans
(``scores``), the review list (``review``) and their calibration (``calibrate``);
ensembles of trained heads (``ensemble``); metrics and scorer (``metrics``), evaluation
(``evaluate``), finding in text (``find``) and displaCy rendering (``render``). The
parallelism data model on a Doc is ``spacy_rhetoric.corpora.parallelisms``.
"""

from ..corpora.parallelisms import (
    CHIASTIC,
    DEFAULT_SPANS_KEY,
    SYNCHYSTIC,
    UNTYPED,
    Parallelism,
    assign_strata,
    get_parallelisms,
    set_parallelisms,
)

__all__ = [
    "CHIASTIC",
    "DEFAULT_SPANS_KEY",
    "SYNCHYSTIC",
    "UNTYPED",
    "Parallelism",
    "assign_strata",
    "get_parallelisms",
    "set_parallelisms",
]
