import json
import re

import pytest
from typer.testing import CliRunner

from spacy_rhetoric.analysis.demo import SAMPLES, TEXT_SAMPLES, load_sample
from spacy_rhetoric.cli import app


@pytest.fixture
def no_models(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SPACY_RHETORIC_MODELS", raising=False)
    monkeypatch.setattr("spacy_rhetoric.models.installed_path", lambda spec: None)
    monkeypatch.setattr("spacy_rhetoric.models.PACKAGE_MODELS", tmp_path / "package")


def test_sample_has_gold_parallelisms():
    doc = load_sample()
    assert len(doc) == 138
    parallelisms = doc._.parallelisms
    assert len(parallelisms) == 5
    assert all(len(p) >= 2 for p in parallelisms)
    assert "CC BY-SA 4.0" in doc.user_data["source"]


def test_text_samples_are_bundled():
    for lang, name in TEXT_SAMPLES:
        text = (SAMPLES / name).read_text(encoding="utf8")
        size = len(text) if lang == "zh" else len(text.split())  # characters, else words
        assert size > 60, name
    assert "Und kurz ist unser Leben" in (SAMPLES / "de_goethe_schiller.txt").read_text("utf8")
    assert "Fair is foul, and foul is fair" in (SAMPLES / "en_shakespeare_johnson.txt").read_text(
        "utf8"
    )


def test_demo_without_models(tmp_path, no_models):
    """A fresh install: gold parallelisms, and what did not run with the fix."""
    output, js = tmp_path / "demo.html", tmp_path / "demo.json"
    result = CliRunner().invoke(app, ["demo", "--output", str(output), "-j", str(js)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "[de] parallelism: not run — model parallelism-xx not built" in said
    assert "models build --lang la" in said
    page = output.read_text(encoding="utf8")
    assert page.startswith("<!DOCTYPE html>")
    # analyze's report: the texts first, the tables, the provenance last and collapsed
    order = [
        "<p class='not-run'>Not run: base (la, de, en, zh), displacement (la, de, en, zh), "
        "parallelism (la, de, en, zh), intertext (la, de, en, zh).",
        "<h2 id='text'>Text</h2>",
        "<input type='checkbox' id='show-parallelism' checked>",
        "<h3>la_augustine_sermo (gold) (la)</h3>",
        "<h3>zh_paibi.txt (zh)</h3>",
        "<h2 id='figures-section'>Figures (",
        "<h2 id='findings-section'>Findings (",
        "<details id='provenance'>",
        "model parallelism-la not built",
    ]
    positions = [page.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert str(tmp_path) not in page
    assert "[la] intertext: not run — model intertext-la not built" in said
    assert "[de] intertext" not in said  # no shipped index for German: nothing to fix
    data = json.loads(js.read_text(encoding="utf8"))
    assert [d["doc"] for d in data["documents"]] == [
        "la_augustine_sermo (gold)",
        "la_augustine_sermo (predicted)",
        "la_augustine_civitas.txt",
        "la_rhetorica_ad_herennium.txt",
        "de_goethe_schiller.txt",
        "en_shakespeare_johnson.txt",
        "zh_paibi.txt",
    ]
    gold = [f for f in data["findings"] if f["doc"] == "la_augustine_sermo (gold)"]
    assert len(gold) == 5 and {f["kind"] for f in gold} == {"parallelism"}
    assert gold[0]["text"] == "a se turbatum | a christo innouatum"
    # five passages, a row each in the findings table (the gold parallelisms overlap none)
    gold_rows = re.findall(r"<tr class='passage' id='passage-1-\d+' data-kinds='(\w+)'>", page)
    assert gold_rows == ["parallelism"] * 5
    assert [p["ids"] for p in data["documents"][0]["passages"]] == [[f"P{i}"] for i in range(1, 6)]
    # gold parallelisms carry no score, and no tagger ran: no review list, no score line
    assert all(f["score"] is None and not any(f["branch_scores"]) for f in gold)
    assert all(d["parallelism_candidates"] == [] for d in data["documents"])
    assert "class='source score-note'" not in page and "Parallelism candidates" not in page
    # the chiasmus and figure rules need no model: they run for every language
    ran = {(n["lang"], n["component"]) for n in data["components"] if n["ran"]}
    assert ran == {(lang, c) for lang in ("la", "de", "en", "zh") for c in ("chiasmus", "figures")}
    chiasmi = [f["text"] for f in data["findings"] if f["kind"] == "chiasmus"]
    assert "Fair is foul, and foul is fair" in chiasmi
    assert "Eat to live, and do not live to eat" in chiasmi
    # Latin on word forms alone (no base pipeline here): the handbook's own antimetabole
    found = data["findings"]
    latin = [f["text"] for f in found if f["doc"] == "la_rhetorica_ad_herennium.txt"]
    assert "Poema loquens pictura, pictura tacitum poema" in latin


def test_demo_reports_figures_per_language(tmp_path, no_models):
    """figure_finder on every sample (the rules, without any model): per document its
    figures and review list in the JSON, the figures named in the report."""
    output, js = tmp_path / "demo.html", tmp_path / "demo.json"
    result = CliRunner().invoke(app, ["demo", "--output", str(output), "-j", str(js)])
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text(encoding="utf8"))
    documents = {d["doc"]: d for d in data["documents"]}
    gold = documents.pop("la_augustine_sermo (gold)")
    assert gold["figures"] == [] and gold["figure_count"] == 0  # not analysed
    for name, document in documents.items():
        assert document["figure_count"] == len(document["figures"]), name
        assert document["figures"] or document["figure_candidates"], name
        for item in document["figures"] + document["figure_candidates"]:
            # a rhetorical question is its members: it has no support words
            has_support = item["support"] or item["label"] == "rhetorical_question"
            assert has_support and item["members"] and 0.0 <= item["score"] <= 1.0
    by_lang = {}
    for document in documents.values():
        by_lang.setdefault(document["lang"], set()).update(f["label"] for f in document["figures"])
    assert {lang for lang, labels in by_lang.items() if labels} == {"la", "de", "en", "zh"}
    # the handbook's own examples: Ad Herennium's antimetabole is also an anadiplosis
    herennium = documents["la_rhetorica_ad_herennium.txt"]["figures"]
    assert ["pictura", "pictura"] in [
        f["support"] for f in herennium if f["label"] == "anadiplosis"
    ]
    assert "Fair is foul, and foul is fair" in {
        f["text"] for f in documents["en_shakespeare_johnson.txt"]["figures"]
    }
    paibi = [f for f in documents["zh_paibi.txt"]["figures"] if f["label"] == "anaphora"]
    assert "读书使人明智，读书使人宽容，读书使人坚强" in {f["text"] for f in paibi}
    page = output.read_text(encoding="utf8")
    assert "<input type='checkbox' id='show-figures' checked>" in page
    assert "<h2 id='figures-section'>Figures (" in page
    for name in documents:
        assert f"<tr><td>{name}</td>" in page[page.index("id='figures-section'") :]
    assert "class='figure-line'" in page and "<mark class='support'>pictura</mark>" in page
    # for review: the chiasmus and the figure candidates, each under its own heading
    assert "<h3>Figure candidates below their threshold (" in page
    provenance = page[page.index("<details id='provenance'>") :]
    assert "figure_finder, rules + " in provenance and "MIT (the package&#39;s code)" in provenance
