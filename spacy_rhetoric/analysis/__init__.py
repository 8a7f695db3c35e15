"""The main job: what runs for each language (``languages``), which pipelines run and how
they are assembled (``pipelines``, with the model-free components it adds:
``components``), the texts streamed through them (``run``), what they found as plain
data (``findings``; the kinds of finding: ``kinds``), and the HTML pages (``report``,
from ``templates/``); the demo on the bundled samples (``demo``) and the project's
metrics as one results table (``results``).
"""
