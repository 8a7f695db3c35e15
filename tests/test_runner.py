import importlib.util
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

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

import spacy_rhetoric
from spacy_rhetoric import set_parallelisms
from spacy_rhetoric.cli import app
from spacy_rhetoric.scale import (
    ChunksFailed,
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
    with pytest.raises(ValueError, match="--resume to continue it, --overwrite to replace it"):
        run(model_dir, files, out)
    manifest = run(model_dir, files[:1], out, overwrite=True)
    assert sorted(path.name for path in out.iterdir()) == [
        "manifest.json",
        "run.json",
        "shard-00000.done.json",
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
    with pytest.raises(ValueError, match="Code file not found: .*functions.py"):
        load_pipeline(PipelineSpec("blank", code=str(tmp_path / "functions.py")))


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


# Resuming a run, and runs whose processes die. The processes that die or block run a
# component from a --code file (which every process can import, Dask workers too): it acts
# on docs containing a marker word for as long as a "release" file does not exist.
COUNTS = ("files", "docs", "tokens", "words", "skipped", "skip_kinds", "skips", "shards")
MARKER_COMPONENT = """
import os
import signal
import time
from pathlib import Path

from spacy.language import Language

RELEASE = Path({release!r})


@Language.component({name!r})
def marker_component(doc):
    if {marker!r} in doc.text and not RELEASE.exists():
{action}
    return doc
"""
ACTIONS = {
    # wait until the test releases it
    "block": "        while not RELEASE.exists():\n            time.sleep(0.02)",
    # die, every time
    "kill": "        os.kill(os.getpid(), signal.SIGKILL)",
    # die once: the retry finds the release file (which names the process that died)
    "kill-once": "        RELEASE.write_text(str(os.getpid()))\n"
    "        os.kill(os.getpid(), signal.SIGKILL)",
}


def marker_component(tmp_path, action, marker):
    """Write a --code file registering a component that, on docs containing ``marker``,
    does ``action`` (see ACTIONS) unless tmp_path/release exists.

    RETURNS (Tuple[Path, str, Path]): the code file, the component's name (new for every
        file: spaCy refuses to register a name twice), the release file.
    """
    name = f"test_{action.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
    release = tmp_path / "release"
    code = tmp_path / f"{name}.py"
    source = MARKER_COMPONENT.format(
        release=str(release), name=name, marker=marker, action=ACTIONS[action]
    )
    code.write_text(source, encoding="utf8")
    return code, name, release


def numbered_corpus(root, n, marked=(), marker="MARKER", empty=()):
    """``n`` files text-00.txt, ... (sorted = numbered); the ``marked`` ones contain
    ``marker``, the ``empty`` ones no text (skipped)."""
    root.mkdir(parents=True)
    for i in range(n):
        text = f"{TEXTS[i % len(TEXTS)]} {i}" + (f" {marker}" if i in marked else "")
        (root / f"text-{i:02d}.txt").write_text("" if i in empty else text, encoding="utf8")
    return files_of(root)


def blank_run(files, out, code=None, add_pipes=(), batch_size=64, **kwargs):
    """run_corpus with a blank Latin pipeline (plus components from a --code file)."""
    spec = PipelineSpec("blank", lang="la", add_pipes=tuple(add_pipes), code=code and str(code))
    settings = RunSettings(pipeline=spec, output_dir=str(out), batch_size=batch_size)
    return run_corpus(files, settings, **kwargs)


def run_output(out):
    """What a run wrote, in shard order: (file, text) of every doc in the DocBins, and
    the JSONL records."""
    vocab = spacy.blank("la").vocab
    docs = []
    for path in sorted(out.glob("shard-*.spacy")):
        docs.extend(DocBin().from_disk(path).get_docs(vocab))
    return [(doc.user_data["file"], doc.text) for doc in docs], read_jsonl(out)


def assert_same_output(out, manifest, reference_out, reference):
    """Two runs wrote the same docs and records, once each, and count the same."""
    assert {key: manifest[key] for key in COUNTS} == {key: reference[key] for key in COUNTS}
    docs, records = run_output(out)
    assert (docs, records) == run_output(reference_out)
    files = [file for file, _ in docs]
    assert len(set(files)) == len(files) == manifest["docs"]
    assert [record["file"] for record in records] == files
    assert not list(out.glob("*.tmp"))


def test_resume_keeps_finished_chunks_and_redoes_the_rest(tmp_path):
    files = numbered_corpus(tmp_path / "corpus", 12, empty=(9,))
    full = blank_run(files, tmp_path / "full", shard_size=2)
    out = tmp_path / "out"
    first = blank_run(files, out, shard_size=2)
    assert (first["chunks_resumed"], first["chunks_processed"], first["resumed"]) == (0, 6, False)
    assert sorted(path.name for path in out.glob("*.done.json")) == [
        f"shard-0000{i}.done.json" for i in range(6)
    ]
    record = srsly.read_json(out / "shard-00004.done.json")
    assert record["paths"] == [str(files[8]), str(files[9])]
    assert (record["files"], record["docs"], record["skipped"][0]["kind"]) == (2, 1, "empty")
    assert record["shard_bytes"] == {
        name: (out / name).stat().st_size for name in ("shard-00004.spacy", "shard-00004.jsonl")
    }
    assert srsly.read_json(out / "run.json")["files"] == [str(path) for path in files]
    # what runs that stopped at different moments leave behind
    (out / "shard-00001.done.json").unlink()  # killed between the shards and the record
    with (out / "shard-00002.jsonl").open("a") as file:  # changed since
        file.write("\n")
    (out / "shard-00003.spacy").unlink()
    for path in out.glob("shard-00004*"):  # killed in the middle of the chunk
        path.unlink()
    (out / "shard-00004.jsonl.tmp").write_text('{"file": "half', encoding="utf8")
    (out / "manifest.json").unlink()
    (out / "manifest.json.tmp").write_text("{", encoding="utf8")
    kept = {path.name: path.stat() for path in out.glob("shard-0000[05]*")}
    manifest = blank_run(files, out, shard_size=2, resume=True)
    assert (manifest["chunks_resumed"], manifest["chunks_processed"]) == (2, 4)
    assert [chunk["resumed"] for chunk in manifest["chunks"]] == [True] + [False] * 4 + [True]
    assert [chunk["chunk"] for chunk in manifest["chunks"]] == list(range(6))
    assert_same_output(out, manifest, tmp_path / "full", full)
    written = srsly.read_json(out / "manifest.json")
    for key in (*COUNTS, "chunks_resumed", "chunks_processed"):
        assert written[key] == manifest[key], key
    for name, stat in kept.items():  # the finished chunks were not written again
        assert (out / name).stat().st_mtime_ns == stat.st_mtime_ns, name
    # a finished run resumed: nothing to do, the same manifest counts
    again = blank_run(files, out, shard_size=2, resume=True)
    assert (again["chunks_resumed"], again["chunks_processed"]) == (6, 0)
    assert_same_output(out, again, tmp_path / "full", full)


def test_resume_refuses_another_run(corpus_dir, tmp_path):
    files = files_of(corpus_dir)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="Cannot resume: .*run.json not found"):
        blank_run(files, out, resume=True)
    blank_run(files, out, shard_size=2)
    different = {
        "shard_size 2 there, 3 now": dict(shard_size=3),
        "input file #1 is .*latin1.txt there, .*text1.txt now": dict(files=files[1:]),
        "9 input files there, 8 now": dict(files=files[:-1]),
        "add_pipes": dict(add_pipes=("sentencizer",)),
    }
    for message, changes in different.items():
        kwargs = {"files": files, "out": out, "shard_size": 2, **changes}
        with pytest.raises(ValueError, match=f"describes a different run \\({message}"):
            blank_run(resume=True, **kwargs)
    with pytest.raises(ValueError, match="pass only one of them"):
        blank_run(files, out, shard_size=2, resume=True, overwrite=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "run.json").write_text("[]", encoding="utf8")
    with pytest.raises(ValueError, match="not a run description"):
        blank_run(files, tmp_path / "other", resume=True)
    assert blank_run(files, out, shard_size=2, resume=True)["chunks_resumed"] == 5
    args = ["corpus", "run", "blank", str(corpus_dir), "-o", str(out), "--lang", "la"]
    result = CliRunner().invoke(app, [*args, "--shard-size", "4", "--resume"])
    assert result.exit_code == 1
    assert "shard_size 2 there, 4 now" in result.output
    result = CliRunner().invoke(app, [*args, "--shard-size", "2", "--resume", "--overwrite"])
    assert result.exit_code == 1 and "pass only one of them" in result.output
    result = CliRunner().invoke(app, [*args, "--shard-size", "2", "--resume", "--json"])
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.output[result.output.index("{") :])
    assert (manifest["chunks_resumed"], manifest["chunks_processed"]) == (5, 0)
    assert "--resume" in CliRunner().invoke(app, args).output


def test_cli_resume_after_sigkill(tmp_path):
    """A run killed half-way with SIGKILL and resumed writes what an uninterrupted run
    writes: the shards it had finished are kept, the rest are processed once."""
    files = numbered_corpus(tmp_path / "corpus", 14, marked=(7,), empty=(10,))
    code, name, release = marker_component(tmp_path, "block", "MARKER")
    args = ["corpus", "run", "blank", str(tmp_path / "corpus"), "--lang", "la"]
    # 7 chunks; file 7, the second of chunk 3, blocks: chunk 2 is closed when chunk 3's
    # first doc comes out of the pipeline (batches of 1), chunk 3 never is
    args += ["--shard-size", "2", "--batch-size", "1", "--code", str(code), "--add-pipe", name]
    out = tmp_path / "out"
    repo = Path(spacy_rhetoric.__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "spacy_rhetoric", *args, "-o", str(out)]
    log = tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + 180
        while len(list(out.glob("*.done.json"))) < 3:
            assert process.poll() is None, log.read_text(encoding="utf8", errors="replace")
            assert time.monotonic() < deadline, "no shards finished in 180 s"
            time.sleep(0.05)
        time.sleep(0.2)
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert sorted(path.name for path in out.glob("*.done.json")) == [
        f"shard-0000{i}.done.json" for i in range(3)
    ]
    assert (out / "shard-00003.jsonl.tmp").exists() and not (out / "manifest.json").exists()
    release.touch()
    result = CliRunner().invoke(app, [*args, "-o", str(out), "--resume", "--json"])
    assert result.exit_code == 0, result.output
    resumed = json.loads(result.output[result.output.index("{") :])
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "ref"), "--json"])
    assert result.exit_code == 0, result.output
    reference = json.loads(result.output[result.output.index("{") :])
    assert (resumed["chunks_resumed"], resumed["chunks_processed"]) == (3, 4)
    assert (reference["docs"], reference["skipped"], len(reference["chunks"])) == (13, 1, 7)
    assert_same_output(out, resumed, tmp_path / "ref", reference)
    assert [file for file, _ in run_output(out)[0]] == [
        str(path) for i, path in enumerate(files) if i != 10
    ]


def test_chunks_failed_names_the_chunks_and_resume():
    failures = {7: OSError("disk\nfull"), 3: ValueError("x"), 1: ValueError("x")}
    failures.update({i: RuntimeError("y") for i in range(10, 17)})
    err = ChunksFailed(failures, 20)
    assert list(err.failures) == [1, 3, 7, *range(10, 17)]
    assert "\n" not in str(err)
    assert str(err).startswith(
        "10 of 20 chunks failed (chunks 1, 3: ValueError: x; chunk 7: OSError: disk full; "
        "chunks 10, 11, 12, 13, 14 and 2 more: RuntimeError: y). The other chunks' shards "
        "are complete"
    )
    assert str(err).endswith("with --resume to process only the chunks that are missing.")


needs_distributed = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="dask.distributed not installed: pip install 'spacy_rhetoric[cluster]'",
)


@needs_distributed
def test_dask_worker_killed_once_loses_nothing(tmp_path):
    """A worker process dies in the middle of a chunk; the scheduler gives the chunk to
    another worker and the run ends with the full output."""
    files = numbered_corpus(tmp_path / "corpus", 8, marked=(5,), empty=(2,))
    code, name, release = marker_component(tmp_path, "kill-once", "MARKER")
    local = blank_run(files, tmp_path / "local", shard_size=2)
    manifest = blank_run(
        files, tmp_path / "dask", code, [name], shard_size=2, backend="dask", workers=2
    )
    killed = release.read_text()  # the worker process that died in chunk 2
    assert manifest["pipeline"]["pipe_names"] == [name]
    assert manifest["chunks_processed"] == 4
    assert manifest["chunks"][2]["worker"].split(":")[1] != killed
    assert_same_output(tmp_path / "dask", manifest, tmp_path / "local", local)


@needs_distributed
def test_dask_chunk_killing_its_workers_fails_clearly_then_resumes(tmp_path):
    """A chunk that kills every worker that runs it fails with KilledWorker; the run
    says which chunks failed and that --resume continues, which then completes it."""
    import dask

    files = numbered_corpus(tmp_path / "corpus", 8, marked=(5,), empty=(2,))
    code, name, release = marker_component(tmp_path, "kill", "MARKER")
    local = blank_run(files, tmp_path / "local", shard_size=2)
    out = tmp_path / "dask"
    args = ["corpus", "run", "blank", str(tmp_path / "corpus"), "-o", str(out), "--lang", "la"]
    args += ["--shard-size", "2", "--code", str(code), "--add-pipe", name]
    # the scheduler gives up on a task after its first dead worker (default: 3 retries)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        result = CliRunner().invoke(app, [*args, "--backend", "dask", "--workers", "2"])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())  # wasabi wraps the line to the terminal
    assert "Traceback" not in output
    assert "run the same command with --resume" in output
    # chunk 2, and the chunks waiting on the same worker (allowed failures: 0)
    named = re.findall(r"chunks? ((?:\d+, )*\d+): KilledWorker", output)
    failed = {int(index) for group in named for index in group.split(", ")}
    assert 2 in failed and f"{len(failed)} of 4 chunks failed" in output
    finished = [index for index in range(4) if (out / f"shard-0000{index}.done.json").exists()]
    assert finished == [index for index in range(4) if index not in failed]
    release.touch()
    result = CliRunner().invoke(app, [*args, "--resume", "--json"])  # local backend
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.output[result.output.index("{") :])
    assert manifest["chunks_resumed"] == len(finished)
    assert manifest["chunks_processed"] == 4 - len(finished)
    assert_same_output(out, manifest, tmp_path / "local", local)
