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
