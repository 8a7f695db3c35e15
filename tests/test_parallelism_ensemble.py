"""The ensemble of parallelism taggers: members trained together or apart, decoded as
one (averaged emission, transition and link scores)."""

import itertools

import numpy
import pytest
import spacy
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parallelism_component import SMALL_MODEL, TEXTS, make_examples
from thinc.api import ConfigValidationError, fix_random_seed
from typer.testing import CliRunner

from spacy_rhetoric import get_parallelisms
from spacy_rhetoric.cli import app
from spacy_rhetoric.parallelism.crf import ConstrainedCRF
from spacy_rhetoric.parallelism.ensemble import assemble
from spacy_rhetoric.parallelism.model import member_tok2vecs

LINKED = {**SMALL_MODEL, "linker_width": 16}


def trained(seed: int, steps: int = 40, **model) -> spacy.Language:
    fix_random_seed(seed)
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": {**LINKED, **model}, "n_strata": 2})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return nlp


def found(nlp) -> list:
    return [[(p.offsets, p.stratum) for p in get_parallelisms(doc)] for doc in nlp.pipe(TEXTS)]


@pytest.fixture(scope="module")
def pipelines():
    # two seeds of one recipe, stopped early so that they still disagree
    return [trained(0, steps=12), trained(1, steps=12)]


def head(nlp):
    return nlp.get_pipe("parallelism_tagger").model.get_ref("head").shims[0]._model


def test_an_ensemble_of_copies_predicts_as_the_pipeline(pipelines, tmp_path):
    nlp = pipelines[0]
    copy = spacy.blank("la")
    copy.add_pipe("parallelism_tagger", config={"model": LINKED, "n_strata": 2})
    copy.from_bytes(nlp.to_bytes())
    for penalty in (0.0, 0.5, 3.0):
        nlp.get_pipe("parallelism_tagger").cfg["outside_penalty"] = penalty
        copy.get_pipe("parallelism_tagger").cfg["outside_penalty"] = penalty
        ensemble = assemble([nlp, copy, nlp])
        assert ensemble.get_pipe("parallelism_tagger").cfg["outside_penalty"] == penalty
        assert found(ensemble) == found(nlp)
    nlp.get_pipe("parallelism_tagger").cfg["outside_penalty"] = 0.0


def test_an_assembled_ensemble_round_trips(pipelines, tmp_path):
    first, second = pipelines
    first.get_pipe("parallelism_tagger").cfg["outside_penalty"] = 0.0
    second.get_pipe("parallelism_tagger").cfg["outside_penalty"] = 1.0
    ensemble = assemble(pipelines)
    tagger = ensemble.get_pipe("parallelism_tagger")
    assert tagger.cfg["outside_penalty"] == 0.5  # the members' mean
    model_config = ensemble.config["components"]["parallelism_tagger"]["model"]
    assert model_config["members"] == 2
    assert model_config["@architectures"] == "spacy-rhetoric.ParallelismTagger.v2"
    # each member keeps its own weights, its tok2vec's included
    for member, source in zip(head(ensemble).members, pipelines, strict=True):
        for (name, a), b in zip(member.state_dict().items(), head(source).state_dict().values()):
            assert torch.equal(a, b), name
    tok2vecs = member_tok2vecs(tagger.model)
    for tok2vec, source in zip(tok2vecs, pipelines, strict=True):
        theirs = source.get_pipe("parallelism_tagger").model.get_ref("tok2vec")
        for a, b in zip(tok2vec.walk(), theirs.walk(), strict=True):
            for name in a.param_names:
                if a.has_param(name) and a.get_param(name) is not None:
                    numpy.testing.assert_array_equal(a.get_param(name), b.get_param(name))
    predicted = found(ensemble)
    ensemble.to_disk(tmp_path / "ensemble")
    loaded = spacy.load(tmp_path / "ensemble")
    assert found(loaded) == predicted
    second.get_pipe("parallelism_tagger").cfg["outside_penalty"] = 0.0


def test_members_trained_together_each_learn(tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("la")
    with pytest.raises(ConfigValidationError):  # a released architecture keeps its arguments
        spacy.blank("la").add_pipe("parallelism_tagger", config={"model": {**LINKED, "members": 2}})
    model = {**LINKED, "@architectures": "spacy-rhetoric.ParallelismTagger.v2", "members": 2}
    nlp.add_pipe("parallelism_tagger", config={"model": model})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    network = head(nlp)
    before = [{k: v.clone() for k, v in m.state_dict().items()} for m in network.members]
    # the members start apart: each its own initialization
    assert not torch.equal(before[0]["emitters.0.weight"], before[1]["emitters.0.weight"])
    losses = [nlp.update(examples, sgd=optimizer, losses={})["parallelism_tagger"]]
    for _ in range(59):
        losses.append(nlp.update(examples, sgd=optimizer, losses={})["parallelism_tagger"])
    assert losses[-1] < losses[0] / 10
    for member, old in zip(network.members, before, strict=True):
        assert not torch.equal(member.state_dict()["emitters.0.weight"], old["emitters.0.weight"])
    predicted = found(nlp)
    assert predicted[1] == [(((0, 4), (5, 9), (10, 14)), 1)]
    nlp.to_disk(tmp_path / "pipeline")
    assert found(spacy.load(tmp_path / "pipeline")) == predicted


def test_mismatched_pipelines_are_refused(pipelines):
    with pytest.raises(ValueError, match=">= 2 pipelines"):
        assemble(pipelines[:1])
    wider = trained(2, steps=1, hidden_width=16)
    with pytest.raises(ValueError, match="pipeline 2's model config differs"):
        assemble([pipelines[0], wider])
    untrained = spacy.blank("la")
    untrained.add_pipe("parallelism_tagger", config={"model": LINKED, "n_strata": 2})
    with pytest.raises(ValueError, match="not trained"):
        assemble([pipelines[0], untrained])
    with_other = trained(3, steps=1)
    with_other.add_pipe("sentencizer")
    with pytest.raises(ValueError, match="pipeline 2 has the components"):
        assemble([pipelines[0], with_other])
    one_stratum = spacy.blank("la")
    one_stratum.add_pipe("parallelism_tagger", config={"model": LINKED, "n_strata": 1})
    one_stratum.initialize(lambda: make_examples(one_stratum))
    with pytest.raises(ValueError, match="n_strata|labels"):
        assemble([pipelines[0], one_stratum])


def test_cli_ensemble_saves_a_pipeline_and_fails_in_one_line(pipelines, tmp_path):
    for i, nlp in enumerate(pipelines):
        nlp.to_disk(tmp_path / f"seed{i}")
    runner = CliRunner()
    out = tmp_path / "ensemble"
    result = runner.invoke(
        app, ["parallelism", "ensemble", str(out), str(tmp_path / "seed0"), str(tmp_path / "seed1")]
    )
    assert result.exit_code == 0, result.output
    assert found(spacy.load(out)) == found(assemble(pipelines))
    result = runner.invoke(app, ["parallelism", "ensemble", str(out), str(tmp_path / "seed0")])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and ">= 2 pipelines" in result.output
    # an output folder whose parents do not exist yet is made (it raised a traceback)
    nested = tmp_path / "new" / "folders" / "ensemble"
    seeds = [str(tmp_path / "seed0"), str(tmp_path / "seed1")]
    result = runner.invoke(app, ["parallelism", "ensemble", str(nested), *seeds])
    assert result.exit_code == 0, result.output
    assert found(spacy.load(nested)) == found(assemble(pipelines))
    (tmp_path / "a-file").write_text("x", encoding="utf8")
    result = runner.invoke(app, ["parallelism", "ensemble", str(tmp_path / "a-file" / "x"), *seeds])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "cannot write the pipeline to" in " ".join(result.output.split())


def test_an_ensemble_can_read_another_spelling(pipelines, tmp_path):
    """--spelling: members trained on lower-cased u-text read classical spelling as ASP
    spells it; the setting survives saving, a v-text then reads as its u-text does, and
    an unknown spelling fails in one line."""
    ensemble = assemble(pipelines, spelling="latin")
    assert ensemble.get_pipe("parallelism_tagger").cfg["spelling"] == "latin"
    ensemble.to_disk(tmp_path / "latin")
    loaded = spacy.load(tmp_path / "latin")
    tagger = loaded.get_pipe("parallelism_tagger")
    assert tagger.cfg["spelling"] == "latin"
    assert loaded.config["components"]["parallelism_tagger"]["spelling"] == "latin"
    u_text = [[(p.offsets, p.stratum) for p in get_parallelisms(loaded(t.lower()))] for t in TEXTS]
    v_text = [
        [(p.offsets, p.stratum) for p in get_parallelisms(loaded(t.replace("u", "v").upper()))]
        for t in TEXTS
    ]
    assert any(u_text) and v_text == u_text
    assert assemble(pipelines).get_pipe("parallelism_tagger").cfg["spelling"] == ""
    with pytest.raises(ValueError, match="spelling must be"):
        assemble(pipelines, spelling="gothic")
    for i, nlp in enumerate(pipelines):
        nlp.to_disk(tmp_path / f"seed{i}")
    seeds = [str(tmp_path / "seed0"), str(tmp_path / "seed1")]
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app, ["parallelism", "ensemble", str(out), *seeds, "--spelling", "gothic"]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    result = CliRunner().invoke(
        app, ["parallelism", "ensemble", str(out), *seeds, "--spelling", "latin"]
    )
    assert result.exit_code == 0, result.output
    assert spacy.load(out).get_pipe("parallelism_tagger").cfg["spelling"] == "latin"


def test_float16_weights_halve_the_file_and_load_rounded(pipelines, tmp_path):
    full = assemble(pipelines)
    half = assemble(pipelines, weights_dtype="float16")
    full.to_disk(tmp_path / "full")
    half.to_disk(tmp_path / "half")
    size = {
        name: (tmp_path / name / "parallelism_tagger" / "model").stat().st_size
        for name in ("full", "half")
    }
    # the heads' floating-point weights take 2 bytes instead of 4 (the tok2vec is thinc's)
    head_bytes = sum(
        w.numel() * 4 for w in head(full).state_dict().values() if w.is_floating_point()
    )
    assert size["full"] - size["half"] > 0.45 * head_bytes
    loaded = spacy.load(tmp_path / "half")
    assert loaded.get_pipe("parallelism_tagger").cfg["weights_dtype"] == "float16"
    # every floating-point weight loads into float32, rounded to float16's precision
    for name, weight in head(half).state_dict().items():
        got = head(loaded).state_dict()[name]
        assert got.dtype == weight.dtype, name
        expected = weight.half().float() if weight.is_floating_point() else weight
        assert torch.equal(got, expected), name
    # a pipeline saved again keeps its precision (no float32 copy of rounded weights)
    loaded.to_disk(tmp_path / "again")
    again = (tmp_path / "again" / "parallelism_tagger" / "model").stat().st_size
    assert again == size["half"]
    assert found(spacy.load(tmp_path / "full")) == found(full)
    with pytest.raises(ValueError, match="weights_dtype 'float64' is not one of"):
        assemble(pipelines, weights_dtype="float64")


def test_a_bad_weights_dtype_in_a_saved_pipeline_names_the_file(pipelines, tmp_path):
    pipelines[0].to_disk(tmp_path / "pipeline")
    cfg = tmp_path / "pipeline" / "parallelism_tagger" / "cfg"
    cfg.write_text(cfg.read_text().replace('"labels"', '"weights_dtype":"int4","labels"', 1))
    with pytest.raises(ValueError, match=r"parallelism_tagger/model: .*weights_dtype 'int4'"):
        spacy.load(tmp_path / "pipeline")


@settings(max_examples=40, deadline=None)
@given(
    n_members=st.integers(1, 3),
    length=st.integers(1, 4),
    seed=st.integers(0, 10_000),
)
def test_averaged_crf_decodes_the_best_mean_path(n_members, length, seed):
    """Viterbi over the averaged emissions with ConstrainedCRF.mean's scores finds the
    path with the highest mean score over the members (brute force over all paths)."""
    generator = torch.Generator().manual_seed(seed)
    n_tags = 3
    trans_mask = torch.ones(n_tags, n_tags, dtype=torch.bool)
    trans_mask[0, 2] = False  # 2 may not follow 0
    start_mask = torch.tensor([True, True, False])
    crfs = []
    for _ in range(n_members):
        crf = ConstrainedCRF(n_tags, start_mask=start_mask, trans_mask=trans_mask)
        with torch.no_grad():
            for param in crf.parameters():
                param.copy_(torch.randn(param.shape, generator=generator, dtype=param.dtype))
        crfs.append(crf)
    emissions = [torch.randn(1, length, n_tags, generator=generator) for _ in crfs]
    mean = ConstrainedCRF.mean(crfs)
    decoded = mean.decode(torch.stack(emissions).mean(0))[0]

    def mean_score(path):
        tags = torch.tensor([path])
        return sum(crf.path_score(e, tags).item() for crf, e in zip(crfs, emissions)) / len(crfs)

    best = max(itertools.product(range(n_tags), repeat=length), key=mean_score)
    assert mean_score(tuple(decoded)) == pytest.approx(mean_score(best), abs=1e-4)
    with pytest.raises(ValueError, match="differ"):
        ConstrainedCRF.mean([crfs[0], ConstrainedCRF(n_tags)])
