"""`spacy package` turns a pipeline with our components into an installable package
whose requirements name spacy_rhetoric, and the packaged pipeline loads by name and
predicts what the original predicted."""

import json
import subprocess
import sys
import tarfile

import spacy
import srsly
from spacy.training import Example
from thinc.api import fix_random_seed

from spacy_rhetoric import set_parallelisms

TEXTS = [
    "ex toto corde suo et ex tota anima sua et ex tota mente sua .",
    "discite ergo quod amare debetis , ut amare possitis .",
]
GOLD = [[([(0, 4), (5, 9), (10, 14)], "synchystic", 1)], [([(3, 5), (7, 9)], "chiastic", 1)]]
SMALL_MODEL = {
    "hidden_width": 16,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 16,
        "depth": 1,
        "embed_size": 300,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": False,
    },
}
LOAD_AND_PREDICT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import spacy
nlp = spacy.load("la_tiny_rhetoric")
doc = nlp(sys.argv[2])
spans = [(s.start, s.end, s.label_, s.id_) for s in doc.spans["parallelism"]]
module = type(nlp.get_pipe("parallelism_tagger")).__module__
print(json.dumps({"pipes": nlp.pipe_names, "module": module, "spans": spans}))
"""


def run(args, cwd):
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def test_spacy_package_builds_installable_pipeline(tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": SMALL_MODEL})
    examples = []
    for text, gold in zip(TEXTS, GOLD):
        reference = nlp.make_doc(text)
        set_parallelisms(reference, gold)
        examples.append(Example(nlp.make_doc(text), reference))
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    pipeline_dir = tmp_path / "pipeline"
    nlp.to_disk(pipeline_dir)
    doc = nlp(TEXTS[1])
    expected = [(s.start, s.end, s.label_, s.id_) for s in doc.spans["parallelism"]]
    assert expected  # the package must reproduce real predictions, not an empty group

    out = tmp_path / "packages"
    out.mkdir()
    command = [sys.executable, "-m", "spacy", "package", str(pipeline_dir), str(out)]
    run(command + ["--name", "tiny_rhetoric", "--version", "0.0.1", "--build", "sdist"], tmp_path)
    package_dir = out / "la_tiny_rhetoric-0.0.1"
    requirements = srsly.read_json(package_dir / "meta.json")["requirements"]
    # our factory comes from the spacy_rhetoric distribution, so spacy records it
    assert any(req.startswith("spacy_rhetoric>=") for req in requirements), requirements
    sdist = package_dir / "dist" / "la_tiny_rhetoric-0.0.1.tar.gz"
    assert sdist.is_file() and sdist.stat().st_size > 1000

    # unpack the sdist and import the package from it by name, as an install would
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "site", filter="data")
    source = tmp_path / "site" / "la_tiny_rhetoric-0.0.1"
    assert (source / "la_tiny_rhetoric" / "meta.json").is_file()
    output = run([sys.executable, "-c", LOAD_AND_PREDICT, str(source), TEXTS[1]], tmp_path)
    loaded = json.loads(output.strip().splitlines()[-1])
    assert loaded["pipes"] == ["parallelism_tagger"]
    assert loaded["module"] == "spacy_rhetoric.parallelism.component"
    assert [tuple(span) for span in loaded["spans"]] == expected


def test_shipped_packages_carry_performance_and_an_open_requirement():
    """Every shipped package's meta reports numbers (`performance`), and a package with our
    components requires spacy_rhetoric from its version on, up to 1.0 (a registered name
    never changes once released), which the installed spacy_rhetoric satisfies."""
    import importlib.metadata
    from pathlib import Path

    from packaging.requirements import Requirement

    from spacy_rhetoric import models

    wheels = sorted((Path(models.__file__).parents[1] / "models").glob("*.whl"))
    specs = {spec.package: spec for spec in models.MODEL_SPECS.values() if spec.package}
    own = importlib.metadata.version("spacy_rhetoric")
    for wheel in wheels:
        package, version = wheel.name.split("-")[:2]
        spec = specs[package]
        meta = json.loads((models.installed_path(spec) / "meta.json").read_text("utf8"))
        assert meta["version"] == version, package
        performance = meta["performance"]
        assert performance and all(
            isinstance(value, (int, float, dict)) for value in performance.values()
        ), package
        ours = [
            Requirement(r) for r in meta.get("requirements", []) if r.startswith("spacy_rhetoric")
        ]
        if spec.role == "base":
            assert not ours, package
        else:
            (requirement,) = ours
            assert own in requirement.specifier and "1.0.0" not in requirement.specifier, package
    intertext = json.loads(
        (models.installed_path(models.get_spec("intertext-la")) / "meta.json").read_text("utf8")
    )["performance"]
    # the grouped-fold scores of the shipped reranker recipe, read from its results file
    expected = models.read_performance(
        models.project_dir() / models.get_spec("intertext-la").performance[0],
        models.get_spec("intertext-la"),
    )
    assert intertext == expected and 0.5 < intertext["intertext_virgil_p"] <= 1.0


def test_read_performance_names_a_missing_file_or_figure(tmp_path):
    import pytest

    from spacy_rhetoric.models import ModelError, get_spec, read_performance

    spec = get_spec("intertext-la")
    with pytest.raises(ModelError, match="cannot read its scores"):
        read_performance(tmp_path / "missing.json", spec)
    (tmp_path / "partial.json").write_text(json.dumps({"loci_similes": {}}), encoding="utf8")
    with pytest.raises(ModelError, match="holds no number at loci_similes/virgil"):
        read_performance(tmp_path / "partial.json", spec)
