"""Chiasmus detection: candidate search (``candidates``; on characters for Chinese,
``characters``), the candidate suggesters (``suggester``), features (``features``), the
scorer architectures (``model``) and the hand-weighted rules (``rules``, calibrated by
``calibration`` and ``calibrate``), the ``chiasmus_finder`` component (``component``),
which candidates a doc keeps and one entry per passage (``passages``), how chiasmi live
in ``doc.spans`` and the extension attributes (``spans``), metrics and scorer
(``metrics``), the training reader (``corpus``), random negatives (``negatives``),
finding in text (``find``), displaCy rendering (``render``), and the evaluation
protocols: their shared cross-validation machinery (``crossval``) and one module per
dataset, German GerDraCor (``eval_german``), Dubremetz & Nivre English
(``eval_english``) and Meyer/Berthomet English (``eval_english_mb``). The CLI commands
are in ``spacy_rhetoric.cli.chiasmus``.
"""

from .candidates import Candidates, count_candidates, find_candidates, iter_candidates

__all__ = ["Candidates", "count_candidates", "find_candidates", "iter_candidates"]
