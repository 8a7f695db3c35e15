"""The blind judged sample of figure_finder's running-text reports
(benchmarks/figures_judge.py): a sheet with no score, a separate key, a seeded sample,
labels joined to the key, and a one-line error for a bad labels file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "figures_judge.py"
TEXTS = [
    (
        "tiny doc 0",
        "We shall fight on the beaches, we shall fight on the landing grounds, "
        "we shall fight in the fields. It rained.",
    ),
    ("tiny doc 1", "Words, words, words. Veni, vidi, vici. The end."),
]


@pytest.fixture(scope="module")
def judge(load_benchmark):
    return load_benchmark("figures_judge")


@pytest.fixture
def tiny(judge, monkeypatch):
    """The held-out text replaced by two tiny English docs, read by a blank pipeline with
    a sentencizer and a figure_finder (the rule prior: no tagger)."""
    import spacy

    import spacy_rhetoric  # noqa: F401

    def pipeline(lang):
        nlp = spacy.blank(lang)
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("figure_finder")
        return nlp

    monkeypatch.setattr(judge, "held_out_texts", lambda lang, data_dir: list(TEXTS))
    monkeypatch.setattr(judge, "base_pipeline", pipeline)
    return judge


def test_every_figure_has_a_definition(judge):
    from spacy_rhetoric.figures.component import FIGURES

    assert set(FIGURES) <= set(judge.DEFINITIONS)
    assert all(judge.DEFINITIONS[f] and "\n" not in judge.DEFINITIONS[f] for f in FIGURES)


def test_sheet_is_blind_and_seeded(tiny, tmp_path):
    out = tmp_path / "judged"
    tiny.main(
        [
            "sheet",
            "--lang",
            "en",
            "--data",
            str(tmp_path),
            "--per-lang",
            "2",
            "--seed",
            "3",
            "--out",
            str(out),
        ]
    )
    key = json.loads((out / "key.json").read_text(encoding="utf8"))
    labels = json.loads((out / "labels.json").read_text(encoding="utf8"))
    sheet = (out / "sheet.md").read_text(encoding="utf8")
    assert key["languages"]["en"]["reports"] >= 3  # anaphora, epizeuxis, asyndeton, ...
    assert len(key["items"]) == 2 and set(labels) == set(key["items"])
    assert all(v == "" for v in labels.values())
    for i, item in key["items"].items():
        assert set(item) >= {"lang", "label", "text", "score", "source"}
        assert item["source"].startswith("tiny doc")
        assert f"## {i} (English)" in sheet
        assert f"**{item['label']}**: {tiny.DEFINITIONS[item['label']]}" in sheet
        # the sentence(s), not the whole doc: "It rained." / "The end." are left out
        assert "It rained" not in sheet or item["source"] != "tiny doc 0"
        assert f"{item['score']}" not in sheet
    assert "[[" in sheet and "]]" in sheet and "**" in sheet
    assert "figure_finder" not in sheet and "score" not in sheet.lower()
    assert tiny.DATE in (out / "README.md").read_text(encoding="utf8")
    again = tmp_path / "again"
    tiny.main(
        [
            "sheet",
            "--lang",
            "en",
            "--data",
            str(tmp_path),
            "--per-lang",
            "2",
            "--seed",
            "3",
            "--out",
            str(again),
        ]
    )
    assert (again / "sheet.md").read_text(encoding="utf8") == sheet
    # a folder with labels is not written over
    labels = {i: "right" for i in labels}
    (out / "labels.json").write_text(json.dumps(labels))
    with pytest.raises(SystemExit, match="holds labels already"):
        tiny.main(["sheet", "--lang", "en", "--data", str(tmp_path), "--out", str(out)])


def test_marked_brackets_the_instance_and_bolds_the_support(tiny):
    nlp = tiny.base_pipeline("en")
    doc = nlp("First. Words, words, words. Last.")
    span = next(s for s in doc.spans["figures"] if s.label_ == "epizeuxis")
    assert tiny.marked(span) == "[[**Words**, **words**, **words**]]."


def test_sample_takes_all_when_fewer(judge):
    reports = {
        "en": [
            {
                "lang": "en",
                "label": "ploce",
                "text": f"t{i}",
                "support": [],
                "score": 0.9,
                "source": "d",
                "tokens": [i, i + 1],
                "sheet_text": f"t{i}",
            }
            for i in range(5)
        ],
        "de": [
            {
                "lang": "de",
                "label": "anaphora",
                "text": "x",
                "support": [],
                "score": 0.8,
                "source": "d",
                "tokens": [0, 1],
                "sheet_text": "x",
            }
        ],
    }
    sheet, key = judge.sample(reports, per_lang=3, seed=0)
    langs = sorted(item["lang"] for item in key.values())
    assert langs == ["de", "en", "en", "en"]
    assert all("score" not in item for item in sheet)
    assert judge.sample(reports, per_lang=3, seed=0) == (sheet, key)


def _key(items):
    return {
        "languages": {"en": {"reports": 40}, "la": {"reports": 12}},
        "items": {
            str(i): {"lang": lang, "label": label, "text": "t", "score": 0.9, "source": "d"}
            for i, (lang, label) in enumerate(items)
        },
    }


def test_score_counts_per_language_and_figure(judge, tmp_path):
    items = [("en", "anaphora")] * 8 + [("en", "ploce")] * 4 + [("la", "asyndeton")] * 3
    key = _key(items)
    labels = {
        str(i): lab
        for i, lab in enumerate(
            ["right"] * 6
            + ["partly", "wrong"]
            + ["right", "wrong", "wrong", "partly"]
            + ["right", "Wrong ", "partly"]
        )
    }
    folder = tmp_path / "judged"
    folder.mkdir()
    (folder / "key.json").write_text(json.dumps(key))
    (folder / "labels.json").write_text(json.dumps(labels))
    out = tmp_path / "out.json"
    judge.main(["score", "--dir", str(folder), "--output", str(out)])
    result = json.loads(out.read_text())
    en, la, pooled = result["languages"]["en"], result["languages"]["la"], result["pooled"]
    assert (en["reports"], en["right"], en["partly"], en["wrong"]) == (12, 7, 2, 3)
    assert en["right_or_partly"] == 0.75 and en["meets_target"] and en["reported"] == 40
    assert en["figures"]["ploce"] == {
        "reports": 4,
        "right": 1,
        "partly": 1,
        "wrong": 2,
        "right_or_partly": 0.5,
    }
    assert la["reports"] == 3 and not la["meets_target"]  # fewer than 10 judged
    assert pooled["reports"] == 15 and pooled["wrong"] == 4
    assert list(result["languages"]) == ["la", "en"]


@pytest.mark.parametrize(
    "labels,message",
    [
        (None, "not found"),
        ("{not json", "is not JSON"),
        ('["right"]', "must map item ids"),
        ('{"0": "right", "1": ""}', "1 items not labelled"),
        ('{"0": "right"}', "1 items not labelled"),
        ('{"0": "right", "1": "maybe"}', "labels not in"),
        ('{"0": "right", "1": "right", "7": "wrong"}', "ids not in the key"),
    ],
)
def test_a_bad_labels_file_fails_in_one_line(tmp_path, labels, message):
    folder = tmp_path / "judged"
    folder.mkdir()
    (folder / "key.json").write_text(json.dumps(_key([("en", "anaphora"), ("en", "ploce")])))
    if labels is not None:
        (folder / "labels.json").write_text(labels)
    result = subprocess.run(
        [
            sys.executable,
            str(PATH),
            "score",
            "--dir",
            str(folder),
            "--output",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("figures_judge:") and message in lines[0]


def test_texts_fresh_selects_the_fresh_reader(judge, monkeypatch, tmp_path):
    """--texts fresh reads fresh_texts (never held_out_texts), names the source in the key
    and README.md; the default still reads the held-out text."""
    import spacy

    import spacy_rhetoric  # noqa: F401

    def pipeline(lang):
        nlp = spacy.blank(lang)
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("figure_finder")
        return nlp

    calls = []

    def fresh(lang, data_dir, tokens=None):
        calls.append(("fresh", lang, tokens))
        return [("fresh doc 0", TEXTS[0][1])]

    def held(lang, data_dir):
        calls.append(("held-out", lang, None))
        return [("held doc 0", TEXTS[1][1])]

    monkeypatch.setattr(judge, "fresh_texts", fresh)
    monkeypatch.setattr(judge, "held_out_texts", held)
    monkeypatch.setattr(judge, "base_pipeline", pipeline)
    common = ["--lang", "en", "--data", str(tmp_path), "--tokens", "500", "--seed", "1"]
    judge.main(["sheet", *common, "--texts", "fresh", "--out", str(tmp_path / "fresh")])
    assert calls == [("fresh", "en", 500)]
    key = json.loads((tmp_path / "fresh" / "key.json").read_text(encoding="utf8"))
    assert key["texts"] == "fresh"
    assert "English-EWT train" in key["text_source"]["en"]
    assert key["languages"]["en"]["first_source"] == "fresh doc 0"
    assert all(item["source"] == "fresh doc 0" for item in key["items"].values())
    readme = (tmp_path / "fresh" / "README.md").read_text(encoding="utf8")
    assert "--texts fresh" in readme and "English-EWT train" in readme
    calls.clear()
    judge.main(["sheet", *common, "--out", str(tmp_path / "held")])
    assert calls == [("held-out", "en", None)]
    key = json.loads((tmp_path / "held" / "key.json").read_text(encoding="utf8"))
    assert key["texts"] == "held-out" and "test" in key["text_source"]["en"]


def test_fresh_latin_is_new_text(judge):
    """The fresh Latin texts are in neither the calibration nor the held-out list."""
    from spacy_rhetoric.figures import calibrate

    fresh = set(judge.FRESH_LATIN)
    assert len(fresh) == 3
    assert not fresh & set(calibrate.LATIN_CALIBRATION)
    assert not fresh & set(calibrate.LATIN_HELD_OUT)


def test_key_keeps_each_items_doc_text(tiny, tmp_path):
    """The key holds the doc of each judged report: the guard reads it back."""
    out = tmp_path / "judged"
    tiny.main(
        ["sheet", "--lang", "en", "--data", str(tmp_path), "--per-lang", "5", "--out", str(out)]
    )
    key = json.loads((out / "key.json").read_text(encoding="utf8"))
    texts = dict(TEXTS)
    assert key["items"]
    for item in key["items"].values():
        assert item["doc_text"] == texts[item["source"]]


def test_conllu_texts_keep_the_named_documents(judge, tmp_path):
    lines = []
    for doc, words in [
        ("GUM_news_a", "Rain fell."),
        ("GUM_whow_b", "Do this."),
        ("GUM_news_c", "Sun."),
    ]:
        lines += [
            f"# newdoc id = {doc}",
            f"# text = {words}",
            "1\tx\tx\tX\tX\t_\t0\troot\t_\t_",
            "",
        ]
    path = tmp_path / "gum.conllu"
    path.write_text("\n".join(lines), encoding="utf8")
    assert [t for _, t in judge.conllu_texts(path)] == ["Rain fell.", "Do this.", "Sun."]
    kept = judge.conllu_texts(path, ["GUM_news"])
    assert [t for _, t in kept] == ["Rain fell.", "Sun."]
    assert all("GUM_news" in source for source, _ in kept)
