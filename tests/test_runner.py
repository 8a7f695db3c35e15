import json
import math
import os

import numpy
import pytest
import spacy
import srsly
from hypothesis import given
from hypothesis import strategies as st
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import fix_random_seed
from typer.testing import CliRunner

from spacy_rhetoric import set_parallelisms
from spacy_rhetoric.cli import app
from spacy_rhetoric.scale import (
    PipelineSpec,
    RunSettings,
    load_pipeline,
    make_chunks,
    read_texts,
    run_corpus,
    use_pipeline,
)
from spacy_rhetoric.scale.annotations import _SKIP, doc_record, json_value

TEXTS = [
    "non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus .",
    "ex toto corde suo et ex tota anima sua et ex tota mente sua .",
    "discite ergo quod amare debetis , ut amare possitis .",
    "sermo habitus in regione tertia in basilica .",
    "quod vidimus et audivimus , adnuntiamus vobis .",
    "in principio erat verbum et verbum erat apud deum .",
    "amor dei usque ad contemptum sui , amor sui usque ad contemptum dei .",
]
GOLD = [[([(0, 4), (5, 9)], "synchystic", 1)], [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)]]
SMALL_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2",
    "pretrained_vectors": None,
    "width": 16,
    "depth": 1,
    "embed_size": 300,
    "window_size": 1,
    "maxout_pieces": 2,
    "subword_features": False,
}


def flat_parse(nlp, text):
    """Gold parse for the tiny parser: every token attached to the first, the root."""
    doc = nlp.make_doc(text)
    heads = [0] * len(doc)
    deps = ["ROOT"] + ["nmod"] * (len(doc) - 1)
    return Doc(nlp.vocab, words=[t.text for t in doc], heads=heads, deps=deps)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A small real pipeline: parser -> displacement_analyzer -> parallelism_tagger."""
    fix_random_seed(0)
    nlp = spacy.blank("la")
    nlp.add_pipe(
        "parser",
        config={
            "model": {
                "@architectures": "spacy.TransitionBasedParser.v2",
                "state_type": "parser",
                "extra_state_tokens": False,
                "hidden_width": 16,
                "maxout_pieces": 2,
                "use_upper": True,
                "nO": None,
                "tok2vec": SMALL_TOK2VEC,
            }
        },
    )
    nlp.add_pipe("displacement_analyzer")
    nlp.add_pipe(
        "parallelism_tagger", config={"model": {"hidden_width": 16, "tok2vec": SMALL_TOK2VEC}}
    )
    examples = []
    for i, text in enumerate(TEXTS):
        reference = flat_parse(nlp, text)
        set_parallelisms(reference, GOLD[i] if i < len(GOLD) else [])
        examples.append(Example(nlp.make_doc(text), reference))
    # explicit label: inferred from 7 examples, rare labels would be pruned to "dep"
    nlp.get_pipe("parser").add_label("nmod")
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("model") / "pipeline"
    nlp.to_disk(path)
    return path


@pytest.fixture
def corpus_dir(tmp_path):
    """Seven good files, one not valid UTF-8 and one empty, in two directories."""
    root = tmp_path / "corpus"
    for i, text in enumerate(TEXTS):
        sub = root / ("a" if i % 2 else "b")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"text{i}.txt").write_text(text, encoding="utf8")
    (root / "a" / "latin1.txt").write_bytes("vir bonus et caf\u00e9".encode("latin-1"))
    (root / "b" / "empty.txt").write_text("  \n", encoding="utf8")
    return root


def files_of(root):
    return sorted(root.rglob("*.txt"))


def read_jsonl(out_dir):
    records = []
    for path in sorted(out_dir.glob("shard-*.jsonl")):
        records.extend(srsly.read_jsonl(path))
    return records


def run(model_dir, files, out_dir, **kwargs):
    settings_keys = ("batch_size", "n_process")
    settings = RunSettings(
        pipeline=PipelineSpec(str(model_dir)),
        output_dir=str(out_dir),
        **{key: kwargs.pop(key) for key in settings_keys if key in kwargs},
    )
    return run_corpus(files, settings, **kwargs)


@given(n=st.integers(0, 200), size=st.integers(1, 50))
def test_make_chunks_partitions_in_order(n, size):
    paths = [f"f{i}" for i in range(n)]
    chunks = make_chunks(paths, size)
    assert [path for chunk in chunks for path in chunk.paths] == paths
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    assert all(len(chunk.paths) == size for chunk in chunks[:-1])
    assert all(0 < len(chunk.paths) <= size for chunk in chunks)
    assert len(chunks) == -(-n // size)


def test_make_chunks():
    paths = [f"f{i}" for i in range(7)]
    chunks = make_chunks(paths, 3)
    assert [len(chunk.paths) for chunk in chunks] == [3, 3, 1]
    assert [chunk.shard_name for chunk in chunks] == ["shard-00000", "shard-00001", "shard-00002"]
    assert [path for chunk in chunks for path in chunk.paths] == paths
    assert make_chunks([], 3) == []
    with pytest.raises(ValueError):
        make_chunks(paths, 0)


def test_local_backend_shards_manifest_and_skips(model_dir, corpus_dir, tmp_path):
    files = files_of(corpus_dir)
    out = tmp_path / "out"
    manifest = run(model_dir, files, out, shard_size=4, batch_size=2)
    assert manifest["files"] == 9
    assert manifest["docs"] == 7
    assert manifest["skipped"] == 2
    assert manifest["skip_kinds"] == {"unreadable": 1, "empty": 1}
    reasons = {skip["file"].rsplit("/", 1)[-1]: skip["reason"] for skip in manifest["skips"]}
    assert "not valid utf-8" in reasons["latin1.txt"] and "--encoding" in reasons["latin1.txt"]
    assert "no text" in reasons["empty.txt"]
    assert manifest["shards"] == [
        f"shard-0000{i}.{ext}" for i in range(3) for ext in ("spacy", "jsonl")
    ]
    assert manifest["backend"] == "local"
    assert manifest["pipeline"]["pipe_names"] == [
        "parser",
        "displacement_analyzer",
        "parallelism_tagger",
    ]
    assert srsly.read_json(out / "manifest.json")["docs"] == 7
    # the shards hold exactly what the pipeline gives for each file, in file order
    nlp = load_pipeline(PipelineSpec(str(model_dir)))
    good = [path for path in files if path.name not in ("latin1.txt", "empty.txt")]
    records = read_jsonl(out)
    assert [record["file"] for record in records] == [str(path) for path in good]
    expected = [doc_record(nlp(path.read_text()), str(path)) for path in good]
    assert records == json.loads(json.dumps(expected))
    assert all("parallelism" in record["spans"] for record in records)
    assert all(isinstance(record["_"]["med"], float) for record in records)
    assert manifest["words"] == sum(record["words"] for record in records)
    assert (
        manifest["tokens"]
        == sum(record["tokens"] for record in records)
        == sum(len(nlp.make_doc(path.read_text())) for path in good)
    )
    docs = []
    for path in sorted(out.glob("shard-*.spacy")):
        docs.extend(DocBin().from_disk(path).get_docs(nlp.vocab))
    assert [doc.user_data["file"] for doc in docs] == [str(path) for path in good]
    assert [doc._.med for doc in docs] == [record["_"]["med"] for record in records]
    assert [doc.text for doc in docs] == [path.read_text() for path in good]


def test_local_n_process_2_matches_one_process(model_dir, corpus_dir, tmp_path):
    files = files_of(corpus_dir)
    one = run(model_dir, files, tmp_path / "one", shard_size=5)
    # one file per shard: shards of skipped files are written too, empty
    two = run(model_dir, files, tmp_path / "two", shard_size=1, n_process=2, batch_size=2)
    assert two["n_process"] == 2
    assert (two["docs"], two["skipped"], two["words"]) == (
        one["docs"],
        one["skipped"],
        one["words"],
    )
    assert [chunk["docs"] for chunk in two["chunks"]] == [
        0 if path.name in ("latin1.txt", "empty.txt") else 1 for path in files
    ]
    assert len(list((tmp_path / "two").glob("shard-*.jsonl"))) == len(files)
    assert not list((tmp_path / "two").glob("*.tmp"))
    assert read_jsonl(tmp_path / "two") == read_jsonl(tmp_path / "one")


def test_dask_local_cluster(model_dir, corpus_dir, tmp_path):
    pytest.importorskip(
        "distributed",
        reason="dask.distributed not installed: pip install 'spacy_rhetoric[cluster]'",
    )
    files = files_of(corpus_dir)
    local = run(model_dir, files, tmp_path / "local", shard_size=2)
    dask = run(
        model_dir,
        files,
        tmp_path / "dask",
        shard_size=2,
        backend="dask",
        workers=2,
        processes=False,
    )
    assert dask["backend"] == "dask" and dask["workers"] == 2
    assert len(dask["chunks"]) == 5
    assert dask["workers_used"] == 2
    for key in ("files", "docs", "tokens", "words", "skipped", "skip_kinds", "shards"):
        assert dask[key] == local[key], key
    assert read_jsonl(tmp_path / "dask") == read_jsonl(tmp_path / "local")
    with pytest.raises(ValueError, match="n-process"):
        run(model_dir, files, tmp_path / "d2", backend="dask", n_process=2)


def test_dask_existing_scheduler(model_dir, corpus_dir, tmp_path):
    distributed = pytest.importorskip(
        "distributed",
        reason="dask.distributed not installed: pip install 'spacy_rhetoric[cluster]'",
    )
    files = files_of(corpus_dir)
    run(model_dir, files, tmp_path / "local", shard_size=3)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        manifest = run(
            model_dir,
            files,
            tmp_path / "remote",
            shard_size=3,
            backend="dask",
            scheduler=cluster.scheduler_address,
        )
        assert manifest["scheduler"] == cluster.scheduler_address
        assert len(cluster.scheduler_info["workers"]) == 1  # the run left it running
    assert read_jsonl(tmp_path / "remote") == read_jsonl(tmp_path / "local")


def test_refuses_to_mix_runs_and_bad_settings(model_dir, corpus_dir, tmp_path):
    files = sorted(corpus_dir.rglob("text*.txt"))[:2]
    out = tmp_path / "out"
    run(model_dir, files, out, shard_size=1)
    with pytest.raises(ValueError, match="--overwrite"):
        run(model_dir, files, out)
    manifest = run(model_dir, files[:1], out, overwrite=True)
    assert sorted(path.name for path in out.iterdir()) == [
        "manifest.json",
        "shard-00000.jsonl",
        "shard-00000.spacy",
    ]
    assert manifest["docs"] == 1
    with pytest.raises(ValueError, match="backend"):
        run(model_dir, files, tmp_path / "x", backend="spark")
    with pytest.raises(ValueError, match="not found"):
        load_pipeline(PipelineSpec(str(tmp_path / "no-such-model")))
    with pytest.raises(ValueError, match="language code"):
        load_pipeline(PipelineSpec("blank", lang="notalang"))


def test_json_value():
    assert json_value(numpy.float32(0.5)) == 0.5
    assert json_value(numpy.int64(3)) == 3
    assert json_value(math.nan) is None
    assert json_value({"a": (1, 2.0), 3: [None, "x"]}) == {"a": [1, 2.0], "3": [None, "x"]}
    assert json_value(object()) is _SKIP
    assert json_value([1, object()]) is _SKIP


def test_doc_record_blank_pipeline():
    nlp = load_pipeline(PipelineSpec("blank", lang="la", add_pipes=("parallelism_tagger",)))
    assert nlp.lang == "la" and nlp.pipe_names == ["parallelism_tagger"]
    doc = nlp.make_doc("ex toto corde , ex tota anima .")
    set_parallelisms(doc, [([(0, 3), (4, 7)], "synchystic", 1)])
    record = doc_record(doc, "x.txt")
    assert record["file"] == "x.txt"
    assert (record["tokens"], record["words"]) == (8, 6)
    spans = record["spans"]["parallelism"]["spans"]
    assert [(s["start"], s["end"], s["label"], s["id"]) for s in spans] == [
        (0, 3, "synchystic", "1"),
        (4, 7, "synchystic", "1"),
    ]
    assert spans[1]["text"] == "ex tota anima"
    assert "parallelisms" not in record["_"]  # a getter: derived from the span group


def test_cli_corpus_run(corpus_dir, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["corpus", "run", "blank", str(corpus_dir), "-o", str(out), "--lang", "la", "--json"],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.output[result.output.index("{") :])
    assert (manifest["docs"], manifest["skipped"]) == (7, 2)
    assert manifest["pipeline"]["lang"] == "la"
    result = CliRunner().invoke(
        app, ["corpus", "run", "blank", str(tmp_path / "missing"), "-o", str(out)]
    )
    assert result.exit_code == 1
    assert "not found" in result.output


def test_dask_worker_processes_load_pipeline_once(model_dir, corpus_dir, tmp_path):
    pytest.importorskip(
        "distributed",
        reason="dask.distributed not installed: pip install 'spacy_rhetoric[cluster]'",
    )
    files = files_of(corpus_dir)
    manifest = run(model_dir, files, tmp_path / "out", shard_size=2, backend="dask", workers=2)
    assert (manifest["docs"], manifest["skipped"]) == (7, 2)
    workers = {chunk["worker"] for chunk in manifest["chunks"]}
    loads = [chunk["worker"] for chunk in manifest["chunks"] if chunk["loaded_pipeline"]]
    # every worker process loads the pipeline for its first chunk only
    assert sorted(loads) == sorted(workers)
    assert len(manifest["chunks"]) == 5
    assert all(chunk["worker"].split(":")[1] != str(os.getpid()) for chunk in manifest["chunks"])


def test_in_memory_pipeline_with_local_backend(corpus_dir, tmp_path):
    nlp = spacy.blank("la")
    nlp.add_pipe("sentencizer")
    spec = PipelineSpec("in-memory:test")  # names it only: no such directory exists
    use_pipeline(spec, nlp)
    settings = RunSettings(pipeline=spec, output_dir=str(tmp_path / "out"))
    manifest = run_corpus(files_of(corpus_dir), settings, shard_size=4)
    assert manifest["pipeline"]["pipe_names"] == ["sentencizer"]
    assert [record["sents"] for record in read_jsonl(tmp_path / "out")] == [1] * 7


def test_read_texts_streams_and_reports_skips(corpus_dir, tmp_path):
    skips = []
    files = files_of(corpus_dir) + [tmp_path / "missing.txt"]
    texts = read_texts(files, "utf-8", 70, lambda *skip: skips.append(skip))
    assert next(texts)[1].endswith("text1.txt")  # lazily: the first good file
    rest = list(texts)
    long_files = [
        path for path in files if path.name.startswith("text") and path.stat().st_size > 70
    ]
    assert long_files
    assert {kind for _, kind, _ in skips} == {"unreadable", "empty", "too_long"}
    assert [path for path, kind, _ in skips if kind == "too_long"] == [str(p) for p in long_files]
    assert "not found" in [reason for path, _, reason in skips if "missing" in path][0]
    assert len(rest) + 1 + len(skips) == len(files)
