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


def _norm(text):
    return " ".join(text.replace("**", "").split()).lower()


def test_thought_definitions_quote_the_guidelines(judge):
    """The sheet defines antithesis and the rhetorical question in the words of
    docs/annotation.md."""
    guidelines = _norm((PATH.parents[1] / "docs" / "annotation.md").read_text(encoding="utf8"))
    for figure in ("antithesis", "rhetorical_question"):
        assert _norm(judge.DEFINITIONS[figure]) in guidelines, figure


def test_figures_keeps_the_named_figures_only(tiny, tmp_path):
    common = ["sheet", "--lang", "en", "--data", str(tmp_path), "--per-lang", "9", "--seed", "0"]
    tiny.main([*common, "--out", str(tmp_path / "all")])
    everything = json.loads((tmp_path / "all" / "key.json").read_text(encoding="utf8"))
    assert everything["figures"] == [] and everything["target"] == {
        "right_or_partly": tiny.TARGET_SHARE,
        "reports": tiny.TARGET_REPORTS,
    }
    labels = {item["label"] for item in everything["items"].values()}
    assert {"epizeuxis", "anaphora"} <= labels
    tiny.main([*common, "--figures", "epizeuxis", "--out", str(tmp_path / "one")])
    key = json.loads((tmp_path / "one" / "key.json").read_text(encoding="utf8"))
    assert key["figures"] == ["epizeuxis"]
    assert key["items"] and {item["label"] for item in key["items"].values()} == {"epizeuxis"}
    n_epizeuxis = sum(item["label"] == "epizeuxis" for item in everything["items"].values())
    assert key["languages"]["en"]["reports"] == n_epizeuxis
    assert key["languages"]["en"]["reports"] < everything["languages"]["en"]["reports"]
    readme = (tmp_path / "one" / "README.md").read_text(encoding="utf8")
    assert "figure_finder's epizeuxis reports" in readme
    assert "figures_judged_epizeuxis.json" in readme


def test_sample_target_takes_the_strictest(judge):
    default = {"right_or_partly": judge.TARGET_SHARE, "reports": judge.TARGET_REPORTS}
    assert judge.sample_target([]) == default
    assert judge.sample_target(["anaphora"]) == default
    assert judge.sample_target(["antithesis"]) == {"right_or_partly": 0.7, "reports": 30}
    assert judge.sample_target(["anaphora", "antithesis"]) == {
        "right_or_partly": 0.7,
        "reports": 30,
    }
    assert judge.parse_figures(" antithesis,antithesis, ") == ["antithesis"]
    assert judge.parse_figures("") == []


@pytest.mark.parametrize("n_right,met", [(21, True), (20, False)])
def test_score_reads_the_keys_target(judge, n_right, met):
    """An antithesis sample is held to its own target (70 %, 30 judged); a key without a
    target to the default (60 %, 10)."""
    key = _key([("en", "antithesis")] * 30)
    labels = {str(i): "right" if i < n_right else "wrong" for i in range(30)}
    assert judge.score(key, labels)["languages"]["en"]["meets_target"]  # 0.67 >= 0.6
    key["target"] = judge.sample_target(["antithesis"])
    key["figures"] = ["antithesis"]
    result = judge.score(key, labels)
    assert result["target"] == {"right_or_partly": 0.7, "reports": 30}
    assert result["figures"] == ["antithesis"]
    assert result["languages"]["en"]["meets_target"] is met
    few = _key([("en", "antithesis")] * 20)
    few["target"] = key["target"]
    all_right = {str(i): "right" for i in range(20)}
    assert not judge.score(few, all_right)["languages"]["en"]["meets_target"]  # 20 < 30


@pytest.mark.parametrize(
    "args,message",
    [
        (["--figures", "antithesis,metaphor"], "--figures takes a comma-separated subset"),
        (["--mirror", "{tmp}"], "--mirror is read with --texts speeches or speeches-2 only"),
        (["--texts", "speeches"], "--texts speeches needs --mirror DIR"),
        (["--texts", "speeches-2"], "--texts speeches-2 needs --mirror DIR"),
        (
            ["--texts", "speeches-2", "--mirror", "{tmp}", "--lang", "de"],
            "--texts speeches-2 reads Latin and English only",
        ),
        (["--texts", "speeches", "--mirror", "{tmp}"], "no mirror of nltk/nltk_data at"),
        (
            ["--texts", "speeches", "--mirror", "{tmp}", "--lang", "zh"],
            "reads Latin, English and German only",
        ),
    ],
)
def test_bad_sheet_options_fail_in_one_line(judge, tmp_path, args, message):
    """In process (the script's main, as its command line calls it): a one-line exit
    message, before any pipeline loads or anything is written."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    lang = [] if "--lang" in args else ["--lang", "en"]
    argv = ["sheet", *lang, "--data", str(tmp_path), "--out", str(tmp_path / "out"), *args]
    with pytest.raises(SystemExit) as exited:
        judge.main(argv)
    text = str(exited.value.code)
    assert len(text.splitlines()) == 1 and text.startswith("figures_judge:") and message in text
    assert not (tmp_path / "out").exists()


def _git(cwd, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        check=True,
        text=True,
    ).stdout.strip()


def _repository(root, files):
    """A git repository at ``root`` holding ``files`` (path -> bytes) in one commit.
    RETURNS: the commit."""
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "texts")
    return _git(root, "rev-parse", "HEAD")


LIVY = """Livy: Book II

 TITI LIVI AB VRBE CONDITA LIBER II

 1 \t 2

  [ 1 ] Liberi iam hinc populi Romani res [putabant] gestas <et> annuos magistratus
peragam. Quae libertas ut laetior esset. [ 2 ] Rerum deinde diuinarum habita cura.
 \n \n\t \n\t\t Livy \n\t\t The Latin Library \n\t\t The Classics Page"""
PLAY = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div type="scene">
<sp who="#just"><speaker>Just.</speaker><p>Schurke von einem Wirte! <stage>(Er wacht
auf.)</stage> Du, uns?</p></sp>
<sp who="#wirt"><speaker>Der Wirt.</speaker><p>Ist das christlich?</p></sp>
</div></body></text></TEI>"""


@pytest.fixture
def mirror(judge, tmp_path, monkeypatch):
    """Three tiny mirrors as --texts speeches reads them: a bare clone of an inaugural.zip
    repository, a repository holding .git with a Latin Library file, a bare clone with a
    GerDraCor play; one word a doc."""
    import io
    import shutil
    import zipfile

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("inaugural/1869-Grant.txt", "Citizens:\n\nYour [suffrages] elected me.\n")
        zipped.writestr("inaugural/1873-Grant.txt", "Fellow-Citizens:\n")
        zipped.writestr("inaugural/1913-Wilson.txt", "There has been a change of government.\n")
    sources = tmp_path / "sources"
    commits = {
        "en": _repository(sources / "nltk", {"packages/corpora/inaugural.zip": archive.getvalue()}),
        "la": _repository(
            sources / "cltk",
            {"livy/liv.2.txt": LIVY.encode(), "livy/liv.4.txt": LIVY.replace("II", "IV").encode()},
        ),
        "de": _repository(sources / "dracor", {"tei/tiny-play.xml": PLAY.encode()}),
    }
    folder = tmp_path / "mirror"
    folder.mkdir()
    _git(folder, "clone", "-q", "--bare", str(sources / "nltk"), "nltk+nltk_data/repo")
    (folder / "cltk+latin_text_latin_library").mkdir()
    shutil.copytree(sources / "cltk", folder / "cltk+latin_text_latin_library" / "repo")
    _git(folder, "clone", "-q", "--bare", str(sources / "dracor"), "dracor-org+gerdracor/repo")
    monkeypatch.setattr(
        judge,
        "SPEECH_REPOSITORIES",
        {lang: (judge.SPEECH_REPOSITORIES[lang][0], c) for lang, c in commits.items()},
    )
    monkeypatch.setattr(judge, "SPEECH_ENGLISH", ("1869-Grant", "1873-Grant"))
    monkeypatch.setattr(judge, "SPEECH_LATIN", ("livy/liv.2.txt",))
    monkeypatch.setattr(judge, "SPEECH_GERMAN", ("tiny-play",))
    monkeypatch.setattr(judge, "SPEECH_2_ENGLISH", ("1913-Wilson",))
    monkeypatch.setattr(judge, "SPEECH_2_LATIN", ("livy/liv.4.txt",))
    monkeypatch.setattr(judge, "SPEECH_DOC_WORDS", 1)
    return folder


def test_speech_texts_read_the_mirrors(judge, mirror):
    texts, files = judge.speech_texts("en", mirror)
    # the two addresses' docs in turn; editorial brackets dropped, their words kept
    assert texts == [
        ("inaugural/1869-Grant.txt doc 0", "Citizens:"),
        ("inaugural/1873-Grant.txt doc 0", "Fellow-Citizens:"),
        ("inaugural/1869-Grant.txt doc 1", "Your suffrages elected me."),
    ]
    zip_blob = _git(mirror / "nltk+nltk_data" / "repo", "rev-parse", "HEAD:" + judge.INAUGURAL_ZIP)
    assert [f["path"] for f in files] == [
        "packages/corpora/inaugural.zip: inaugural/1869-Grant.txt",
        "packages/corpora/inaugural.zip: inaugural/1873-Grant.txt",
    ]
    assert all(f["blob"] == zip_blob and f["repository"] == "nltk/nltk_data" for f in files)
    assert files[0]["commit"] == judge.SPEECH_REPOSITORIES["en"][1]
    assert "public domain" in files[0]["licence"]
    texts, files = judge.speech_texts("la", mirror)
    # chapters, without the title, the chapter list, the section numbers, the deletion
    # and the navigation; the addition's words kept
    assert texts == [
        (
            "livy/liv.2.txt doc 0",
            "Liberi iam hinc populi Romani res gestas et annuos magistratus peragam. Quae "
            "libertas ut laetior esset.",
        ),
        ("livy/liv.2.txt doc 1", "Rerum deinde diuinarum habita cura."),
    ]
    assert files[0]["path"] == "livy/liv.2.txt" and files[0]["source"] == "livy/liv.2.txt"
    texts, files = judge.speech_texts("de", mirror)
    # speeches opening with their speaker, stage directions dropped
    assert [t for _, t in texts] == [
        "JUST. Schurke von einem Wirte! Du, uns?",
        "DER WIRT. Ist das christlich?",
    ]
    assert files[0]["path"] == "tei/tiny-play.xml" and "CC0" in files[0]["licence"]


def test_second_speeches_read_other_files(judge, mirror):
    """--texts speeches-2 reads its own addresses and Livy book from the same mirrors, and
    no German."""
    texts, files = judge.speech_texts("en", mirror, "speeches-2")
    assert texts == [("inaugural/1913-Wilson.txt doc 0", "There has been a change of government.")]
    assert files[0]["path"] == "packages/corpora/inaugural.zip: inaugural/1913-Wilson.txt"
    assert files[0]["commit"] == judge.SPEECH_REPOSITORIES["en"][1]
    texts, files = judge.speech_texts("la", mirror, "speeches-2")
    assert [source for source, _ in texts] == ["livy/liv.4.txt doc 0", "livy/liv.4.txt doc 1"]
    assert texts[1][1] == "Rerum deinde diuinarum habita cura."
    cltk = mirror / "cltk+latin_text_latin_library" / "repo"
    blob = _git(cltk, "rev-parse", "HEAD:livy/liv.4.txt")
    assert [(f["path"], f["source"], f["blob"]) for f in files] == [
        ("livy/liv.4.txt", "livy/liv.4.txt", blob)
    ]
    assert "Public Domain" in files[0]["licence"]
    with pytest.raises(ValueError, match="speeches-2 reads Latin and English only, not 'de'"):
        judge.speech_texts("de", mirror, "speeches-2")


def test_speech_texts_name_what_is_missing(judge, mirror, monkeypatch):
    monkeypatch.setattr(judge, "SPEECH_LATIN", ("livy/liv.3.txt",))
    with pytest.raises(FileNotFoundError, match="has no livy/liv.3.txt at"):
        judge.speech_texts("la", mirror)
    monkeypatch.setattr(judge, "SPEECH_ENGLISH", ("1877-Hayes",))
    with pytest.raises(FileNotFoundError, match="inaugural.zip has no inaugural/1877-Hayes.txt"):
        judge.speech_texts("en", mirror)
    # a file the tree lists whose blob the mirror lacks
    bare = mirror / "dracor-org+gerdracor" / "repo"
    blob = _git(bare, "rev-parse", "HEAD:tei/tiny-play.xml")
    (bare / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(FileNotFoundError, match="lists tei/tiny-play.xml .* but lacks its blob"):
        judge.speech_texts("de", mirror)


@pytest.mark.parametrize("mode,years", [("speeches", "1869-1909"), ("speeches-2", "1913-1937")])
def test_speeches_sheet_names_its_sources(judge, monkeypatch, tmp_path, mode, years):
    """--texts speeches (speeches-2) reads speech_texts with --mirror and writes the files
    of the docs it read (repository, commit, path, blob, licence) into the key and
    README.md."""
    import spacy

    import spacy_rhetoric  # noqa: F401

    def pipeline(lang):
        nlp = spacy.blank(lang)
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("figure_finder")
        return nlp

    record = {"repository": "nltk/nltk_data", "commit": "c" * 40, "licence": "public domain"}
    files = [
        {**record, "path": "x.zip: a.txt", "blob": "a" * 40, "source": "a.txt"},
        {**record, "path": "x.zip: b.txt", "blob": "a" * 40, "source": "b.txt"},
    ]
    calls = []

    def speeches(lang, mirror, texts_from="speeches"):
        calls.append((lang, mirror, texts_from))
        return [("a.txt doc 0", TEXTS[0][1]), ("b.txt doc 0", TEXTS[1][1])], files

    monkeypatch.setattr(judge, "speech_texts", speeches)
    monkeypatch.setattr(judge, "base_pipeline", pipeline)
    out = tmp_path / "speeches"
    args = ["sheet", "--lang", "en", "--data", str(tmp_path), "--texts", mode]
    judge.main([*args, "--mirror", str(tmp_path), "--tokens", "5", "--out", str(out)])
    assert calls == [("en", tmp_path, mode)]
    key = json.loads((out / "key.json").read_text(encoding="utf8"))
    assert key["texts"] == mode and years in key["text_source"]["en"]
    read = key["languages"]["en"]
    assert read["docs"] == 1 and read["files"] == files[:1]  # the first doc reached 5 tokens
    readme = (out / "README.md").read_text(encoding="utf8")
    assert f"--texts {mode}`" in readme and "## Sources" in readme
    # a second sample's counts do not overwrite the first one's
    assert f"results/figures_judged{'_2' if mode == 'speeches-2' else ''}.json`" in readme
    assert f"| en | nltk/nltk_data | `{'c' * 40}` | `x.zip: a.txt` |" in readme
    assert "x.zip: b.txt" not in readme
    # the docs command rebuilds each item's doc from the same mirror
    key_path = out / "key.json"
    for item in key["items"].values():
        del item["doc_text"]
    key_path.write_text(json.dumps(key), encoding="utf8")
    calls.clear()
    judge.main(["docs", "--dir", str(out), "--data", str(tmp_path), "--mirror", str(tmp_path)])
    assert calls == [("en", tmp_path, mode)]
    again = json.loads(key_path.read_text(encoding="utf8"))
    assert again["items"] and all(i["doc_text"] == TEXTS[0][1] for i in again["items"].values())


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines() if line]


@pytest.mark.parametrize("mode", ["speeches", "speeches-2"])
def test_speeches_are_in_no_corpus_the_package_reads(judge, mode):
    """The speeches are in neither the rhetoric corpus (its works and sources), the
    figures gold set, the Bible quotations gold set, the calibration and held-out lists
    nor another judged sample (a sample of ``speeches-2`` not even in ``speeches``'s)."""
    import re

    from spacy_rhetoric.figures import calibrate

    data = PATH.parent / "data"
    rows = [
        r for lang in ("en", "la", "de") for r in _rows(data / "rhetoric-corpus" / f"{lang}.jsonl")
    ]
    passages = json.loads((data / "rhetoric-corpus" / "passages.json").read_text(encoding="utf8"))
    gold = [row.get("source") or "" for row in _rows(data / "figures" / "examples.jsonl")]
    bible = [row.get("source") or "" for row in _rows(data / "bible-quotations" / "english.jsonl")]
    works = [r["work"] for r in rows] + [p["work"] for p in passages] + gold + bible
    sources = " ".join(str(r.get("source")) for r in rows)
    folders = sorted(data.glob("figures-judged*"))
    keys = [json.loads((f / "key.json").read_text(encoding="utf8")) for f in folders]
    # the samples of other texts: what they read, and the items they hold
    judged = " ".join(
        json.dumps([k.get("text_source"), [i.get("source") for i in k["items"].values()]])
        for k in keys
        if k.get("texts") != mode
    )
    assert len(passages) == 80 and len(rows) == 80 and len(gold) > 300 and len(bible) > 100
    second = mode == "speeches-2"
    english = judge.SPEECH_2_ENGLISH if second else judge.SPEECH_ENGLISH
    latin = judge.SPEECH_2_LATIN if second else judge.SPEECH_LATIN
    assert english and latin
    for name in english:
        assert f"{name}.txt" not in sources and f"{name}.txt" not in judged
        assert not [w for w in works if "naugural" in w and f"{name[:4]})" in w]
        assert not [w for w in works if "naugural" in w and f"({name[:4]}" in w]
    for path in latin:
        book = path.split(".")[-2]  # livy/liv.2.txt -> 2
        assert path not in sources and path not in judged
        assert not [w for w in works if re.search(rf"Ab urbe condita {book}(?!\d)", w)]
    for play in () if second else judge.SPEECH_GERMAN:
        title = {"lessing-minna-von-barnhelm": "Minna", "goethe-egmont": "Egmont"}[play]
        assert play not in sources and title not in judged
        assert not [w for w in works if title in w]
    listed = calibrate.LATIN_CALIBRATION + calibrate.LATIN_HELD_OUT + judge.FRESH_LATIN
    assert not any(name.startswith("livy") for name in listed + judge.THIRD_LATIN)
    if second:  # other texts than the first speeches sample's
        assert not set(english) & set(judge.SPEECH_ENGLISH)
        assert not set(latin) & set(judge.SPEECH_LATIN)
    else:  # no sample but the speeches' own reads Livy or an inaugural address
        others = json.dumps(
            [k.get("text_source") for k in keys if k.get("texts") not in judge.SPEECH_MODES]
        )
        assert "Livy" not in others and "inaugural" not in others.lower()
