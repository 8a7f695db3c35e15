import re

import pytest
import srsly
from typer.testing import CliRunner

from spacy_rhetoric.analysis.results import (
    ANCHORS,
    MAX_LIST,
    ResultsError,
    collect,
    flatten,
    format_value,
    project_commands,
    render_html,
    render_markdown,
    write_report,
)
from spacy_rhetoric.cli import app

PROJECT = """
commands:
  - name: "evaluate-chiasmus-de"
    outputs: ["metrics/chiasmus-de.json"]
"""
# the experiments' project: run inside benchmarks/, its outputs relative to it
BENCHMARKS = """
commands:
  - name: "evaluate-parallelism-asp"
    outputs: ["../metrics/parallelism-asp-test.json", "../metrics/parallelism-asp-opt.json"]
  - name: "benchmark-speed"
    outputs: ["results/speed.json"]
"""


@pytest.fixture
def project(tmp_path):
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    srsly.write_json(
        metrics / "parallelism-asp-test.json",
        {"parallelism_epm_f": 0.1457, "parallelism_mwo_f": 0.3236, "tokens_per_second": 7244.6},
    )
    srsly.write_json(
        metrics / "chiasmus-de.json",
        {"full": {"ap_mean": 0.6137, "ap_sd": 0.0618, "ap_per_fold": [0.6, 0.7]}},
    )
    srsly.write_json(
        metrics / "intertext-loci-similes.json",
        {
            "shipped": {
                "retrieval": {"lexical": {"recall@10": 0.4}, "fused": {"recall@10": 0.5123}},
                "rerank@5": {"f1": 0.4321},
            },
            "grouped": {"retrieval": {"fused": {"recall@10": 0.5}}},
        },
    )
    srsly.write_json(
        metrics / "mystery.json",
        {"a": {"b": {"c": {"d": {"e": 1.0}}}, "x": 2}, "name": "text", "flag": True, "n": 7},
    )
    (tmp_path / "project.yml").write_text(PROJECT, encoding="utf8")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "project.yml").write_text(BENCHMARKS, encoding="utf8")
    return tmp_path


def test_flatten_numeric_leaves_with_depth_limit():
    data = {"a": 1, "b": {"c": 0.5, "d": "text", "e": [1, 2]}, "f": True, "g": list(range(20))}
    leaves, hidden = flatten(data)
    assert leaves == [("a", 1), ("b.c", 0.5), ("b.e", [1, 2])]
    assert hidden == 20  # the long list
    leaves, hidden = flatten({"x": {"y": {"z": 3, "w": [{"v": 4}]}}}, max_depth=2)
    assert leaves == []
    assert hidden == 2
    assert flatten([{"p": 1}, {"p": 2}])[0] == [("0.p", 1), ("1.p", 2)]
    assert flatten(list(range(MAX_LIST)))[0] == [("value", list(range(MAX_LIST)))]


def test_format_value():
    assert format_value(7244.6) == "7,244.6"
    assert format_value(0.14567) == "0.146"
    assert format_value(-4.26) == "-4.260"
    assert format_value(123456) == "123,456"
    assert format_value(0.00143) == "0.00143"
    assert format_value([0.5, 2]) == "0.500, 2"


def test_collect_families_values_anchors_and_commands(project):
    files = collect([project / "metrics"], project / "project.yml")
    by_name = {item.path.name: item for item in files}
    assert sorted(by_name) == [
        "chiasmus-de.json",
        "intertext-loci-similes.json",
        "mystery.json",
        "parallelism-asp-test.json",
    ]
    asp = by_name["parallelism-asp-test.json"]
    assert asp.family == "parallelism asp (test)"
    assert asp.command == "spacy project run evaluate-parallelism-asp benchmarks"
    assert asp.headlines[0] == ("EPM F1", 0.1457, ANCHORS["parallelism-asp-epm"])
    assert ("MWO F1", 0.3236, None) in asp.headlines
    chiasmus = by_name["chiasmus-de.json"]
    assert chiasmus.headlines[0] == ("AP, positives a/c/fa/fc", 0.6137, ANCHORS["chiasmus-de-ap"])
    intertext = by_name["intertext-loci-similes.json"]
    # of several recall@10 values, the one the family prefers, named by its key
    assert intertext.headlines == [
        (
            "recall@10 (shipped.retrieval.fused.recall@10)",
            0.5123,
            ANCHORS["intertext-recall@10"],
        ),
        ("F1@5 (shipped.rerank@5.f1)", 0.4321, ANCHORS["intertext-f1@5"]),
    ]
    assert "not an output declared in project.yml" in intertext.command
    mystery = by_name["mystery.json"]
    assert mystery.family == "mystery"
    assert mystery.headlines == []
    assert mystery.values == [("a.x", 2), ("n", 7)]  # no strings, no booleans
    assert mystery.hidden == 1  # a.b.c.d.e is deeper than MAX_DEPTH


def test_outputs_of_both_projects_map_to_their_command(project):
    commands = project_commands(project / "project.yml")
    asp = "spacy project run evaluate-parallelism-asp benchmarks"
    assert commands == {
        "metrics/chiasmus-de.json": "spacy project run evaluate-chiasmus-de",
        "metrics/parallelism-asp-test.json": asp,
        "metrics/parallelism-asp-opt.json": asp,
        "benchmarks/results/speed.json": "spacy project run benchmark-speed benchmarks",
    }
    # a file both projects write is cited by the root project's command
    (project / "benchmarks" / "project.yml").write_text(
        BENCHMARKS + '  - name: "again"\n    outputs: ["../metrics/chiasmus-de.json"]\n',
        encoding="utf8",
    )
    commands = project_commands(project / "project.yml")
    assert commands["metrics/chiasmus-de.json"] == "spacy project run evaluate-chiasmus-de"
    (project / "benchmarks" / "results").mkdir()
    srsly.write_json(project / "benchmarks" / "results" / "speed.json", {"words": 3})
    files = collect([project / "benchmarks" / "results"], project / "project.yml")
    assert [item.command for item in files] == ["spacy project run benchmark-speed benchmarks"]


def test_outputs_named_by_project_vars_map_to_their_command(tmp_path):
    (tmp_path / "project.yml").write_text(
        'vars:\n  run: "s26a"\ncommands:\n  - name: "speed"\n    outputs: '
        '["metrics/speed-${vars.run}.json"]\n',
        encoding="utf8",
    )
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "project.yml").write_text(
        'vars:\n  run: "s37a"\ncommands:\n  - name: "speed-more"\n    outputs: '
        '["results/speed-${vars.run}.json"]\n',
        encoding="utf8",
    )
    commands = project_commands(tmp_path / "project.yml")
    assert commands["metrics/speed-s26a.json"] == "spacy project run speed"
    assert "metrics/speed-${vars.run}.json" not in commands
    assert (
        commands["benchmarks/results/speed-s37a.json"] == "spacy project run speed-more benchmarks"
    )
    # a variable the project does not define: the outputs stay as written
    (tmp_path / "project.yml").write_text(
        'commands:\n  - name: "other"\n    outputs: ["metrics/other-${vars.unknown}.json"]\n',
        encoding="utf8",
    )
    commands = project_commands(tmp_path / "project.yml")
    assert commands["metrics/other-${vars.unknown}.json"] == "spacy project run other"


def test_markdown_and_html_show_values_anchors_and_sources(project):
    files = collect([project / "metrics"], project / "project.yml")
    markdown = render_markdown(files)
    row = next(line for line in markdown.splitlines() if "| EPM F1 |" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:5] == ["parallelism asp (test)", "EPM F1", "0.146", "0.400", "0.450"]
    assert "Bothwell" in cells[5]
    assert cells[7] == "spacy project run evaluate-parallelism-asp benchmarks"
    assert "| a.x | 2 |" in markdown
    assert "0.600, 0.700" in markdown  # a short list of numbers
    assert "Published anchors" in markdown
    page = render_html(files)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "http" not in page  # self-contained
    assert "0.146" in page and "Schneider" in page and "recall@10" in page
    assert len(re.findall("<table>", page)) == 1 + len(files)


def test_malformed_json_names_the_file(project):
    bad = project / "metrics" / "broken.json"
    bad.write_text('{"parallelism_epm_f": 0.5,,}', encoding="utf8")
    with pytest.raises(ResultsError, match=r"broken\.json is not valid JSON \(line 1, column"):
        collect([project / "metrics"])
    with pytest.raises(ResultsError, match="not found"):
        collect([project / "nothing-here"])
    empty = project / "empty"
    empty.mkdir()
    with pytest.raises(ResultsError, match="no \\*.json"):
        collect([empty])


def test_report_cli_writes_markdown_and_html(project, monkeypatch):
    monkeypatch.chdir(project)
    result = CliRunner().invoke(
        app, ["report", "metrics", "-o", "reports/results.md", "--html", "reports/results.html"]
    )
    assert result.exit_code == 0, result.output
    markdown = (project / "reports" / "results.md").read_text(encoding="utf8")
    assert "spacy project run evaluate-chiasmus-de" in markdown
    assert (project / "reports" / "results.html").read_text(encoding="utf8").count("<h3>") == 4
    (project / "metrics" / "broken.json").write_text("{", encoding="utf8")
    result = CliRunner().invoke(app, ["report", "metrics", "-o", "reports/x.md"])
    assert result.exit_code == 1
    assert "broken.json" in result.output


def test_write_report_on_real_metrics_layout(tmp_path):
    """The metrics this repository writes: one file per family, read from disk."""
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    srsly.write_json(
        metrics / "chiasmus-en.json",
        {"all_negative": {"ap_test": 0.7993, "ranks_of_positives": [1, 2, 3]}},
    )
    srsly.write_json(
        metrics / "edv-study.json",
        {"summary": {"mean_delta_las": -0.031}, "treebanks": {"x": {"delta_las": -0.5}}},
    )
    tests = {
        name: {"gold_tokens": {"dep_las": las + 0.05}, "raw_text": {"dep_las": las}}
        for name, las in (("la_ittb", 0.66), ("pooled", 0.54))
    }
    srsly.write_json(metrics / "base-la.json", {"tests": tests})
    files = write_report([metrics], tmp_path / "out.md")
    text = (tmp_path / "out.md").read_text(encoding="utf8")
    # the pooled test set on raw text, not each treebank and tokenization
    assert "| base pipeline base-la | LAS (tests.pooled.raw_text.dep_las) | 0.540 |" in text
    assert text.count("| base pipeline base-la |") == 1
    assert "| chiasmus English | AP test, all else negative | 0.799 | 0.650 | 0.700 |" in text
    edv_row = "| EDV study | mean delta LAS (max- minus min-EDV split) | -0.031 | -0.043 |"
    assert edv_row in text
    assert text.count("| EDV study | mean delta LAS") == 1  # not each treebank's delta
    assert len(files) == 3
