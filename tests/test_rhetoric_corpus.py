"""The rhetoric corpus (benchmarks/data/rhetoric-corpus): the data (every passage's text,
source and annotation, the jsonl files built from the hand annotation, the token counts,
the split and agreement rules), its hand-format resolver (build.py) and its reader
(``corpus convert rhetoric-corpus``: sections, exact spans, the lossless round trip,
bad records)."""

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_rhetoric.corpora import CorpusFormatError, convert, write_conversion
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.corpora.rhetoric import (
    FIGURE_LABELS,
    FIGURES_KEY,
    MEMBERS_KEY,
    SUPPORT_KEY,
    passage_docs,
    read_records,
    records_from_docs,
    section_bounds,
)

CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "rhetoric-corpus"
LANGS = ("la", "en", "de")
# the minimum per language (whitespace tokens)
MIN_TOKENS = {"la": 25000, "en": 25000, "de": 12000}


def load_module(name: str):
    spec = importlib.util.spec_from_file_location(f"rhetoric_corpus_{name}", CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build():
    return load_module("build")


@pytest.fixture(scope="module")
def manifest():
    return json.loads((CORPUS / "passages.json").read_text(encoding="utf8"))


@pytest.fixture(scope="module")
def records():
    return {lang: [r for _, r in read_records(CORPUS / f"{lang}.jsonl")] for lang in LANGS}


# --- the data -------------------------------------------------------------------------


def test_every_passage_has_text_source_and_annotation(manifest):
    ids = [entry["id"] for entry in manifest]
    assert len(ids) == len(set(ids))
    for entry in manifest:
        folder = CORPUS / "texts" / entry["id"]
        text = (folder / "text.txt").read_text(encoding="utf8")
        assert text.endswith("\n") and text[:-1] == text[:-1].strip(), entry["id"]
        assert len(text[:-1].split()) == entry["tokens"], entry["id"]
        source = (folder / "SOURCE.md").read_text(encoding="utf8")
        assert "**Origin:**" in source and "**Licence:**" in source, entry["id"]
        assert (folder / "annotation.txt").is_file(), f"{entry['id']}: not annotated"


def test_token_counts_reach_the_minimum(manifest):
    for lang in LANGS:
        tokens = sum(e["tokens"] for e in manifest if e["lang"] == lang)
        assert tokens >= MIN_TOKENS[lang], (lang, tokens)


def test_jsonl_is_built_from_the_annotation_files(build, capsys):
    assert build.build(write=False) == 0, capsys.readouterr().out


def test_every_passage_is_annotated(records):
    for lang in LANGS:
        for record in records[lang]:
            assert record["annotated"], record["id"]
            assert record["parallelisms"] and record["figures"], record["id"]
            assert {f["label"] for f in record["figures"]} <= set(FIGURE_LABELS)


def test_splits_follow_the_rule(manifest):
    prepare = load_module("prepare")
    joined = [e for e in manifest if e.get("joined")]
    new = [
        {"id": e["id"], "lang": e["lang"], "work_id": e["work_id"], "text": "w " * e["tokens"]}
        for e in manifest
        if not e.get("joined")
    ]
    prepare.assign_splits(new, joined)
    fixed = {e["id"]: e["split"] for e in manifest}
    assert {row["id"]: row["split"] for row in new} == {
        k: v for k, v in fixed.items() if k in {row["id"] for row in new}
    }
    works = {}
    for entry in manifest:
        works.setdefault(entry["work_id"], set()).add(entry["split"])
    assert all(len(splits) == 1 for splits in works.values()), "a work in two splits"


def test_agreement_passages_follow_the_rule(manifest):
    readme = (CORPUS / "README.md").read_text(encoding="utf8")
    for lang in LANGS:
        rows = [e for e in manifest if e["lang"] == lang]
        total = sum(e["tokens"] for e in rows)
        chosen, tokens = [], 0
        for entry in sorted(rows, key=lambda e: hashlib.sha1(e["id"].encode()).hexdigest()):
            if tokens >= 0.16 * total:
                break
            chosen.append(entry["id"])
            tokens += entry["tokens"]
        assert tokens / total >= 0.15
        for passage in chosen:
            assert passage in readme
            for annotator in ("A", "B"):
                assert (CORPUS / "agreement" / f"{passage}.{annotator}.txt").is_file(), passage


def test_offsets_are_whole_words_and_branches_do_not_overlap(records):
    for lang in LANGS:
        for record in records[lang]:
            text = record["text"]
            spans = [s for p in record["parallelisms"] for s in p["branches"]]
            spans += [s for f in record["figures"] for s in f["members"] + f["support"]]
            for start, end in spans:
                assert text[start].isalnum(), (record["id"], text[start:end])
                assert text[end - 1].isalnum() or text[end - 1] in "'\u2019", (
                    record["id"],
                    text[start:end],
                )
                assert start == 0 or not (text[start - 1].isalnum()), (
                    record["id"],
                    text[start - 1 : end],
                )
                assert end == len(text) or not text[end].isalnum(), (
                    record["id"],
                    text[start : end + 1],
                )
            for par in record["parallelisms"]:
                branches = sorted(par["branches"])
                assert all(a[1] <= b[0] for a, b in zip(branches, branches[1:])), record["id"]


# --- the resolver ---------------------------------------------------------------------

TEXT = "Veni, vidi, vici. Nihil agis, nihil moliris, nihil cogitas. Quid agis? Nihil."


@pytest.mark.parametrize(
    "line,error",
    [
        ("metaphor: Veni", "unknown label"),
        ("anaphora: [Nihil] agis | [nihil] dormis", "does not occur after"),
        ("anaphora: Nihil agis | nihil moliris", "needs its support words"),
        ("parallelism: [Veni] | vidi", r"take no \[brackets\]"),
        ("ploce: [Nih]il agis, nihil", "cuts a word"),
        ("anaphora: [nihil] moliris, | [nihil] cogitas", "must begin and end with a word"),
        ("parallelism: Veni", "at least 2 members"),
        ("rhetorical_question(hypophora): Quid agis", "question | answer"),
        ("anaphora(chiastic): [Nihil] agis | [nihil] moliris", "takes no attribute"),
        ("anaphora: [Nihil] agis | [nihil moliris", "unclosed"),
    ],
)
def test_resolver_names_the_line_and_the_fault(build, line, error):
    with pytest.raises(build.AnnotationError, match=error):
        build.resolve_line(TEXT, line, "f.txt:3")


def test_resolver_offsets(build):
    item = build.resolve_line(
        TEXT, "anaphora: [Nihil] agis | [nihil] moliris | [nihil] cogitas", "f:1"
    )
    assert [TEXT[s:e] for s, e in item.members] == ["Nihil agis", "nihil moliris", "nihil cogitas"]
    assert [TEXT[s:e] for s, e in item.support] == ["Nihil", "nihil", "nihil"]
    item = build.resolve_line(TEXT, "antithesis: @2 Nihil  # the answer", "f:2")
    assert TEXT[item.members[0][0] :].startswith("Nihil.") and item.note == "the answer"
    item = build.resolve_line(TEXT, "rhetorical_question(hypophora): Quid agis | Nihil", "f:3")
    assert item.attribute == "hypophora" and item.record()["attribute"] == "hypophora"
    with pytest.raises(build.AnnotationError, match="2 whole-word occurrences"):
        build.resolve_line(TEXT, "epizeuxis: [Nihil]", "f:4")


# --- the reader -----------------------------------------------------------------------


def _record(**changes):
    text = "Veni, vidi, vici. Nihil agis, nihil moliris, nihil cogitas. Quid agis? Nihil."
    record = {
        "id": "la-test", "lang": "la", "split": "dev", "work": "a test", "passage": "1",
        "text": text,
        "parallelisms": [{"branches": [[0, 4], [6, 10], [12, 16]], "type": "synchystic"}],
        "figures": [
            {"label": "asyndeton", "members": [[0, 4], [6, 10], [12, 16]], "support": []},
            {"label": "anaphora", "members": [[18, 28], [30, 43], [45, 58]],
             "support": [[18, 23], [30, 35], [45, 50]], "note": "Cicero"},
            {"label": "rhetorical_question", "members": [[60, 69], [71, 76]], "support": [],
             "attribute": "hypophora"},
        ],
    }  # fmt: skip
    record.update(changes)
    return record


def test_section_docs_carry_every_annotation():
    nlp = spacy.blank("la")
    (doc,) = passage_docs(_record(), nlp, words=200)
    assert [p.offsets for p in get_parallelisms(doc)] == [((0, 1), (2, 3), (4, 5))]
    assert [s.label_ for s in doc.spans[FIGURES_KEY]] == [
        "asyndeton",
        "anaphora",
        "rhetorical_question",
    ]
    assert [s.text for s in doc.spans[SUPPORT_KEY]] == ["Nihil", "nihil", "nihil"]
    assert len(doc.spans[MEMBERS_KEY]) == 3 + 3 + 2
    assert doc.spans[FIGURES_KEY].attrs["attributes"] == {"3": "hypophora"}
    assert doc.user_data["lang"] == "la" and doc.user_data["doc_id"] == "la-test"


def test_sections_cut_only_where_no_annotation_spans():
    text = " ".join(f"Verbum {i} dico." for i in range(200))
    extents = [(text.index("Verbum 60"), text.index("Verbum 140"))]
    bounds = section_bounds(text, extents, words=100)
    assert len(bounds) >= 2
    for start, end in bounds:
        assert not any(start < s < end < e or s < start < e < end for s, e in extents)
        assert text[start:end] == text[start:end].strip()
    assert "".join(text[a:b] for a, b in bounds).replace(" ", "") == text.replace(" ", "")


def test_round_trip_is_lossless(tmp_path, records):
    conversion = convert("rhetoric-corpus", CORPUS)
    paths = write_conversion(conversion, tmp_path)
    assert set(paths) == {"train", "dev", "test"}
    docs = []
    for path in paths.values():
        docs += list(DocBin().from_disk(path).get_docs(spacy.blank("xx").vocab))
    rebuilt = {r["id"]: r for r in records_from_docs(docs)}
    original = {r["id"]: r for lang in LANGS for r in records[lang]}
    assert set(rebuilt) == set(original)
    for passage, record in original.items():
        back = rebuilt[passage]
        assert back["text"] == record["text"] and back["split"] == record["split"]
        assert sorted(map(json.dumps, back["parallelisms"])) == sorted(
            map(json.dumps, record["parallelisms"])
        ), passage
        assert sorted(map(json.dumps, back["figures"])) == sorted(
            map(json.dumps, record["figures"])
        ), passage
    assert max(len(d) for d in docs) < 1200


def test_small_record_round_trip(tmp_path):
    path = tmp_path / "la.jsonl"
    path.write_text(json.dumps(_record()) + "\n", encoding="utf8")
    conversion = convert("rhetoric-corpus", path)
    (record,) = records_from_docs(conversion.splits["dev"])
    expected = _record()
    for key in ("text", "parallelisms", "figures"):
        assert record[key] == expected[key]


@pytest.mark.parametrize(
    "content,message",
    [
        ("{not json", "not JSON"),
        (json.dumps({"id": "x"}), "missing"),
        (json.dumps(_record(lang="fr")), "unknown"),
        (
            json.dumps(
                _record(parallelisms=[{"branches": [[0, 4], [6, 999]], "type": "synchystic"}])
            ),
            "inside the text",
        ),
        (json.dumps(_record(figures=[{"label": "metaphor", "members": [[0, 4]]}])), "figure label"),
        (
            json.dumps(_record(parallelisms=[{"branches": [[0, 4]], "type": "synchystic"}])),
            "fewer than 2",
        ),
    ],
)
def test_bad_records_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "la.jsonl"
    path.write_text(json.dumps(_record()) + "\n" + content + "\n", encoding="utf8")
    with pytest.raises(CorpusFormatError, match=message) as info:
        convert("rhetoric-corpus", path)
    assert f"{path}:2" in str(info.value)


def test_unannotated_passages_are_skipped_and_counted(tmp_path):
    path = tmp_path / "la.jsonl"
    lines = [json.dumps(_record()), json.dumps(_record(id="la-two", annotated=False))]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    conversion = convert("rhetoric-corpus", path)
    assert len(conversion.skipped) == 1 and "not annotated" in conversion.skipped[0].reason
    assert {d.user_data["doc_id"] for d in conversion.splits["dev"]} == {"la-test"}


def test_convert_cli(tmp_path):
    from typer.testing import CliRunner

    from spacy_rhetoric.cli import app

    path = tmp_path / "en.jsonl"
    path.write_text(json.dumps(_record(lang="en", id="en-test")) + "\n", encoding="utf8")
    result = CliRunner().invoke(
        app, ["corpus", "convert", "rhetoric-corpus", str(path), str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "dev.spacy").is_file()


def test_nested_parallelisms_nest(records):
    """A branch shared by two parallelisms lies inside a branch of the other or contains
    it: branches may nest, never cross."""
    for lang in LANGS:
        for record in records[lang]:
            spans = {tuple(s) for p in record["parallelisms"] for s in p["branches"]}
            for s1, e1 in spans:
                for s2, e2 in spans:
                    assert not s1 < s2 < e1 < e2, (
                        record["id"],
                        record["text"][s1:e1],
                        record["text"][s2:e2],
                    )


def test_latin_passages_are_the_mirror_text(manifest):
    """Where the data mirror holds a Latin passage's Latin Library file: the passage is that
    file's words with the layout stripped (section numbers, chapter numerals, editorial
    [deletions])."""
    import re

    from spacy_rhetoric.assets import data_root

    root = data_root(required=False)
    if root is None or not (root / "latin-prose").is_dir():
        pytest.skip("latin-prose not in the data mirror")

    def words(s):
        s = re.sub(r"\[[^\]]*\]", " ", s)
        return [w for w in re.findall(r"[^\W\d_]+", s) if not re.fullmatch(r"[IVXLC]+", w)]

    checked = 0
    for entry in manifest:
        if entry["lang"] != "la":
            continue
        source = (CORPUS / "texts" / entry["id"] / "SOURCE.md").read_text(encoding="utf8")
        found = re.search(r"`((?:latin-prose/)?[\w./-]+\.txt)`", source)
        if not found:
            continue
        name = found.group(1)
        path = root / (name if name.startswith("latin-prose/") else f"latin-prose/{name}")
        if not path.is_file():
            continue
        text = (CORPUS / "texts" / entry["id"] / "text.txt").read_text(encoding="utf8")
        assert " ".join(words(text)) in " ".join(words(path.read_text(encoding="utf8"))), entry[
            "id"
        ]
        checked += 1
    assert checked >= 14  # the fourteen joined passages at least
