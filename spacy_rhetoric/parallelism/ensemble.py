"""Several trained parallelism pipelines made into one: its tagger holds every
pipeline's head (and layer mix) and decodes them together, averaging their emission,
transition and link scores (see ``network.EnsembleNetwork``). Seeds of one recipe
disagree a lot on ASP; their ensemble is steadier than any one of them."""

import copy
from typing import Optional, Sequence

from spacy.language import Language
from spacy.util import load_model_from_config

from .model import member_tok2vecs, set_weights_dtype
from .reading import SPELLINGS

# settings of the tagger that its members must share
SHARED_SETTINGS = (
    "labels",
    "spans_key",
    "tagset",
    "link",
    "n_strata",
    "spelling",
    "window",
    "window_overlap",
)


def assemble(
    pipelines: Sequence[Language],
    component: str = "parallelism_tagger",
    weights_dtype: str = "float32",
    spelling: Optional[str] = None,
) -> Language:
    """Make one pipeline whose tagger decodes the taggers of ``pipelines`` together.

    pipelines (Sequence[Language]): >= 2 trained pipelines, each a parallelism tagger
        alone, of the same recipe (the same model config, labels and settings; seeds
        and training may differ). The first one gives the typer; the ensemble's
        ``outside_penalty`` is the mean of the members' (each one's tuned on
        validation data: pass the tuned pipelines), where the members' potentials are
        averaged too.
    component (str): the tagger's name.
    weights_dtype (str): the precision the heads are saved in ("float16": half the
        size, each weight rounded to float16 when saved and loaded).
    spelling (Optional[str]): how the ensemble reads words, if not as its members do
        ("" or a key of ``reading.SPELLINGS``): e.g. "latin" for heads trained
        lower-cased on ASP, whose text is already so spelled, to read classical
        spelling as ASP's.
    RETURNS (Language): the new pipeline (not saved).
    """
    if len(pipelines) < 2:
        raise ValueError(f"parallelism ensemble: give >= 2 pipelines, got {len(pipelines)}")
    if spelling and spelling not in SPELLINGS:
        raise ValueError(
            f"parallelism ensemble: spelling must be '' or one of {sorted(SPELLINGS)}, "
            f"got {spelling!r}"
        )
    for i, nlp in enumerate(pipelines, 1):
        if nlp.pipe_names != [component]:
            raise ValueError(
                f"parallelism ensemble: pipeline {i} has the components {nlp.pipe_names}; "
                f"give pipelines with a {component} alone"
            )
    taggers = [nlp.get_pipe(component) for nlp in pipelines]
    model_configs = [nlp.config["components"][component]["model"] for nlp in pipelines]
    for i, (tagger, model_config) in enumerate(zip(taggers, model_configs, strict=True), 1):
        if model_config.get("members", 1) != 1:
            raise ValueError(f"parallelism ensemble: pipeline {i} is an ensemble already")
        if not tagger.model.has_ref("head"):
            raise ValueError(f"parallelism ensemble: pipeline {i}'s {component} is not trained")
        if model_config != model_configs[0]:
            raise ValueError(
                f"parallelism ensemble: pipeline {i}'s model config differs from the first's"
            )
        for key in SHARED_SETTINGS:
            if tagger.cfg.get(key) != taggers[0].cfg.get(key):
                raise ValueError(
                    f"parallelism ensemble: pipeline {i}'s {component} differs from the "
                    f"first's in {key!r}"
                )
    config = pipelines[0].config.copy()
    model_config = config["components"][component]["model"]
    model_config["@architectures"] = "spacy-rhetoric.ParallelismTagger.v2"
    model_config["members"] = len(pipelines)
    if spelling is not None:
        config["components"][component]["spelling"] = spelling
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    nlp.meta.update(copy.deepcopy(pipelines[0].meta))
    tagger = nlp.get_pipe(component)
    tagger.cfg.update(copy.deepcopy(taggers[0].cfg))
    if spelling is not None:
        tagger.cfg["spelling"] = spelling
    penalties = [float(t.cfg.get("outside_penalty", 0.0)) for t in taggers]
    tagger.cfg["outside_penalty"] = sum(penalties) / len(penalties)
    tagger._setup_model()
    tagger.model.initialize()
    set_weights_dtype(tagger.model, weights_dtype)
    tagger.cfg["weights_dtype"] = weights_dtype
    ensemble = tagger.model.get_ref("head").shims[0]._model
    for m, (source, target) in enumerate(zip(taggers, member_tok2vecs(tagger.model), strict=True)):
        # thinc's own serialization of the layer tree (params and shims); the frozen
        # encoder itself is no parameter and is shared
        target.from_bytes(source.model.get_ref("tok2vec").to_bytes())
        network = source.model.get_ref("head").shims[0]._model
        ensemble.members[m].load_state_dict(network.state_dict())
    return nlp
