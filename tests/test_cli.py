import json
import os
from pathlib import Path

import pytest
import srsly
from typer.testing import CliRunner

from spacy_rhetoric.cli import app

runner = CliRunner()


def test_convert_and_stats(fixtures_dir, tmp_path):
    result = runner.invoke(
        app, ["corpus", "convert", "asp", str(fixtures_dir / "asp"), str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert {p.name for p in tmp_path.glob("*.spacy")} == {
        "train.spacy",
        "dev.spacy",
        "opt.spacy",
        "test.spacy",
    }
    out = tmp_path / "stats.json"
    result = runner.invoke(app, ["corpus", "stats", str(tmp_path), "--json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    stats = srsly.read_json(out)
    assert stats["documents"] == 2
    assert stats["sections"] == 3
    assert stats["tokens"] == 551
    assert stats == json.loads(result.output)


def test_convert_unknown_format(tmp_path):
    result = runner.invoke(app, ["corpus", "convert", "nope", str(tmp_path), str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "Unknown corpus format 'nope'" in result.output


def test_convert_malformed_input_names_file(fixtures_dir, tmp_path):
    source = tmp_path / "asp"
    for path in (fixtures_dir / "asp").rglob("*"):
        target = source / path.relative_to(fixtures_dir / "asp")
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    ann = source / "brat" / "147.ann"
    ann.write_text(ann.read_text(encoding="utf8") + "T999\tParallelArm oops\n", encoding="utf8")
    result = runner.invoke(app, ["corpus", "convert", "asp", str(source), str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "147.ann:" in result.output


def test_evaluate_parallelism_gold_vs_gold(fixtures_dir, tmp_path):
    runner.invoke(app, ["corpus", "convert", "asp", str(fixtures_dir / "asp"), str(tmp_path)])
    gold = str(tmp_path / "train.spacy")
    out = tmp_path / "scores.json"
    result = runner.invoke(app, ["parallelism", "evaluate", gold, gold, "--output", str(out)])
    assert result.exit_code == 0, result.output
    scores = srsly.read_json(out)
    for metric in ("epm", "mpbm", "mbawo", "mwo"):
        assert scores[f"parallelism_{metric}_f"] == 1.0
    assert scores["docs"] == 1
    result = runner.invoke(app, ["parallelism", "evaluate", gold])
    assert result.exit_code == 1 and "Give either PRED or --model" in result.output
    result = runner.invoke(app, ["parallelism", "evaluate", gold, gold, "--language", "en"])
    assert result.exit_code == 1 and "--language needs --model" in result.output


def test_assets_from_mirror(tmp_path):
    data = tmp_path / "mirror" / "thing"
    data.mkdir(parents=True)
    (data / "a.txt").write_text("hello", encoding="utf8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text(
        "title: t\nassets:\n  - dest: assets/thing\n    url: https://example.org/thing\n",
        encoding="utf8",
    )
    result = runner.invoke(
        app,
        ["corpus", "assets", str(project / "project.yml"), "--mirror", str(tmp_path / "mirror")],
    )
    assert result.exit_code == 0, result.output
    assert (project / "assets" / "thing" / "a.txt").read_text(encoding="utf8") == "hello"
    result = runner.invoke(
        app,
        ["corpus", "assets", str(project / "project.yml"), "--mirror", str(tmp_path / "missing")],
    )
    assert result.exit_code == 1


@pytest.mark.skipif(not os.environ.get("CI"), reason="runs the real project commands in CI only")
def test_project_convert_from_mirror(data_dir, tmp_path):
    """`spacy project run convert` builds every corpus from the mirror and from the
    repository's own rhetoric corpus (counted as the benchmarks project's `stats` counts
    them)."""
    from weasel.cli.run import project_run

    data = data_dir("asp").parent
    repo = Path(__file__).resolve().parent.parent
    os.environ["SPACY_RHETORIC_DATA"] = str(data)
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_bytes((repo / "project.yml").read_bytes())
    rhetoric = Path("benchmarks") / "data" / "rhetoric-corpus"
    (project / rhetoric).mkdir(parents=True)
    for lang in ("la", "en", "de"):
        (project / rhetoric / f"{lang}.jsonl").write_bytes(
            (repo / rhetoric / f"{lang}.jsonl").read_bytes()
        )
    cwd = os.getcwd()
    try:
        os.chdir(project)
        project_run(project, "convert")
    finally:
        os.chdir(cwd)
    output = project / "metrics" / "stats-asp.json"
    result = runner.invoke(
        app, ["corpus", "stats", str(project / "corpus" / "asp"), "--json", "--output", str(output)]
    )
    assert result.exit_code == 0, result.output
    stats = srsly.read_json(output)
    assert stats["parallelisms"] == 2062
    for lang in ("la", "en", "de"):
        gold = sum(
            len(doc["parallelisms"]) for doc in srsly.read_jsonl(repo / rhetoric / f"{lang}.jsonl")
        )
        result = runner.invoke(
            app,
            [
                "corpus",
                "stats",
                str(project / "corpus" / f"rhetoric-{lang}"),
                "--json",
                "--output",
                str(output),
            ],
        )
        assert result.exit_code == 0, result.output
        assert srsly.read_json(output)["parallelisms"] == gold
    assert sorted(path.name for path in (project / "corpus" / "joint" / "train").iterdir()) == [
        "asp.spacy",
        "pse.spacy",
        "rhetoric-de.spacy",
        "rhetoric-en.spacy",
        "rhetoric-la.spacy",
    ]


def test_raw_text_jsonl(tmp_path):
    source = tmp_path / "ovid.tess"
    source.write_text(
        "<ov. met. 1.1>\tIn nova fert animus mutatas dicere formas\n", encoding="utf8"
    )
    output = tmp_path / "raw.jsonl"
    result = runner.invoke(app, ["corpus", "raw-text", str(source), str(output)])
    assert result.exit_code == 0, result.output
    assert list(srsly.read_jsonl(output)) == [{"text": "in noua fert animus mutatas dicere formas"}]


def test_redirected_output_is_plain(tmp_path):
    """No ANSI colour codes or progress bars when stdout/stderr are not terminals, and
    plain --help without type tags on flags."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ANSI_COLORS_DISABLED"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    missing = tmp_path / "missing.txt"
    for args in (["models", "list"], ["analyze", str(missing), "--lang", "en"]):
        done = subprocess.run(
            [sys.executable, "-m", "spacy_rhetoric", *args],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert "\x1b[" not in done.stdout + done.stderr, args
        assert "Traceback" not in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "spacy_rhetoric", "chiasmus", "find", "--help"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert "--json" in done.stdout and "<bool>" not in done.stdout and "╭" not in done.stdout
