"""The main job: which pipelines run for a language (``pipelines``), the texts streamed
through them (``run``), what they found as plain data (``findings``), and the HTML pages
(``report``, from ``templates/``); the demo on the bundled samples (``demo``) and the
project's metrics as one results table (``results``)."""
