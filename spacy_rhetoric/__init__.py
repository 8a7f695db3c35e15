"""spacy_rhetoric: a spaCy extension for computational rhetoric and philology.

Importing the package registers its extension attributes, factories, architectures,
scorers and readers with spaCy. ``cli`` calls ``analysis`` (the main job), which
assembles the capabilities, one package each, none importing another's:
``parallelism``, ``chiasmus``, ``figures``, ``intertext``, ``treebank``; ``scale`` runs
a pipeline over a corpus. Below them: ``corpora``, ``encoders``, ``models`` and
``model_specs`` (the named trained pipelines), and what several share (``stems``,
``names``, ``displacy_spans``, ``textio``, ``logistic``).
"""

from .about import __version__
from .chiasmus import component as chiasmus_component  # noqa: F401  (chiasmus_finder)
from .chiasmus import corpus as chiasmus_corpus  # noqa: F401
from .chiasmus import metrics as chiasmus_metrics  # noqa: F401
from .chiasmus import model as chiasmus_model  # noqa: F401
from .chiasmus import suggester as chiasmus_suggester  # noqa: F401  (suggesters)
from .corpora import reader  # noqa: F401  (registers the readers)
from .encoders import adapted as encoder_adapted  # noqa: F401  (AdaptedEncoder)
from .encoders import transformer as encoder_transformer  # noqa: F401  (EncoderTransformer)
from .encoders import vectors as encoder_vectors  # noqa: F401  (EncoderVectors)
from .extensions import register_extensions
from .figures import component as figures_component  # noqa: F401  (figure_finder)
from .intertext import component as intertext_component  # noqa: F401  (intertext_matcher)
from .parallelism import Parallelism, component, get_parallelisms, metrics, model, set_parallelisms  # noqa: F401  (registers the tagger)
from .parallelism.render import render
from .treebank import component as treebank_component  # noqa: F401  (displacement_analyzer)

register_extensions()

__all__ = ["Parallelism", "__version__", "get_parallelisms", "render", "set_parallelisms"]
