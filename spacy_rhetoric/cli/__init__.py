"""Command-line interface: ``python -m spacy_rhetoric NOUN VERB``, like ``spacy/cli``.

``_util`` holds the typer app; each module below adds one noun's commands to it when
imported here (``analyze``, ``chiasmus``, ``corpus``, ``demo``, ``figures``,
``intertext``, ``models``, ``parallelism``, ``report``, ``treebank``). The library
never imports this package.
"""

from ._util import app, plain_output
from .analyze import analyze_cli  # noqa: F401
from .chiasmus import chiasmus_evaluate_cli, chiasmus_find_cli  # noqa: F401
from .corpus import corpus_convert_cli, corpus_run_cli, corpus_stats_cli  # noqa: F401
from .demo import demo_cli  # noqa: F401
from .figures import figures_evaluate_cli, figures_find_cli, figures_train_cli  # noqa: F401
from .intertext import intertext_evaluate_cli, intertext_index_cli  # noqa: F401
from .models import models_build_cli, models_list_cli  # noqa: F401
from .parallelism import (  # noqa: F401
    parallelism_ensemble_cli,
    parallelism_evaluate_cli,
    parallelism_tune_cli,
)
from .report import report_cli  # noqa: F401
from .treebank import treebank_edv_cli, treebank_study_cli  # noqa: F401


def main() -> None:
    """The console script's entry point."""
    plain_output()
    app()
