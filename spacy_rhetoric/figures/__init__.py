"""The figures of repetition, conjunction, sound and thought: ``figure_finder``.

Modules: ``segment`` (cola), ``words`` (normal forms, stop words, conjunctions per
language), ``candidates`` (the candidate type and the series search); the rules, one
module per family: repetition (``repetition`` runs ``edges``, ``linking`` and
``in_place`` and filters what they propose), ``conjunction``, ``sound`` and ``thought``
(antithesis, with ``antonyms``, and the rhetorical question); ``features``, ``model``
(the scorer), ``component`` (the pipeline component) and ``render`` (displaCy
colours). The scorer's training apart from its scoring: ``training_data`` (silver, gold
and running-text candidates), ``corpus`` (the rhetoric corpus as data), ``train`` (the
fit), ``judged`` (the guard of judged running text), ``calibrate`` (per-language
thresholds) and ``recipe`` (the whole recipe); ``metrics`` and ``evaluate`` measure it.
"""
