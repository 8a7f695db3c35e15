"""Chiasmus detection: candidate search (``candidates``), features (``features``), the
scorer architecture (``model``), the ``chiasmus_finder`` component (``component``),
metrics and scorer (``metrics``), the training reader (``corpus``), displaCy rendering
(``render``), the evaluation protocols (``evaluate``) and CLI commands (``commands``)."""

from .candidates import Candidates, count_candidates, find_candidates, iter_candidates

__all__ = ["Candidates", "count_candidates", "find_candidates", "iter_candidates"]
