"""The figures of repetition, conjunction and sound: ``figure_finder``.

Modules: ``segment`` (cola), ``words`` (normal forms, stop words, conjunctions per
language), ``candidates`` (the candidate type and the series search), one rule module
per family (``repetition``, ``conjunction``, ``sound``), ``features``, ``model`` (the
scorer), ``component`` (the pipeline component) and ``render`` (displaCy colours).
"""
