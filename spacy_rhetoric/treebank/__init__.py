"""Treebanks and syntax: ``displacement_analyzer`` (``component``: edge displacement of
parsed docs), the displacement measures and the EDV between corpora
(``displacement``), EDV-guided, random and k-fold splits (``splits``), query-based
parser evaluation (``queries``, with named queries in ``queries/``), the EDV study
(``study``), the base pipelines trained from the UD treebanks (``pipelines``) and
treebank reading and writing (``io``).
"""
