from typer.testing import CliRunner

from spacy_rhetoric.cli import app
from spacy_rhetoric.demo import load_sample


def test_sample_has_gold_parallelisms():
    doc = load_sample()
    assert len(doc) == 138
    parallelisms = doc._.parallelisms
    assert len(parallelisms) == 5
    assert all(len(p) >= 2 for p in parallelisms)
    assert "CC BY-SA 4.0" in doc.user_data["source"]


def test_demo_writes_report(tmp_path):
    output = tmp_path / "demo.html"
    result = CliRunner().invoke(app, ["demo", "--output", str(output)])
    assert result.exit_code == 0, result.output
    page = output.read_text(encoding="utf8")
    assert page.startswith("<!DOCTYPE html>")
    assert "Gold annotation (ASP)" in page
    assert page.count("<tr><td>P") == 5
