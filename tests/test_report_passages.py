"""The report's passages: findings of any kind on the same words are one row of the
findings table (and one "passages" entry per document in the JSON, the per-finding
list unchanged), one mark in the text names every figure on the same words, and the
figures' names in English, Latin, German and Chinese."""

import re
import shutil
import subprocess

import pytest
import spacy
from spacy.tokens import Span, SpanGroup

import spacy_rhetoric  # noqa: F401  (the figures' span extensions)
from spacy_rhetoric.analysis.findings import (
    PASSAGE_OVERLAP,
    Analysis,
    Document,
    Note,
    analysis_data,
    document_findings,
    document_passages,
    group_passages,
)
from spacy_rhetoric.analysis.kinds import FIGURE_NAMES, figure_name, figure_names
from spacy_rhetoric.analysis.report import analysis_page, merge_marks, text_markup
from spacy_rhetoric.corpora.parallelisms import set_parallelisms
from spacy_rhetoric.figures.component import (
    BOUNDS_ATTR,
    MEMBERS_ATTR,
    SCORES_ATTR,
    SUPPORT_ATTR,
)

TEXT = (
    "pay any price, bear any burden, meet any hardship, support any friend, oppose any foe. "
    "Etiam sic, domine, etiam sic."
)
BRANCHES = [(0, 3), (4, 7), (8, 11), (12, 15), (16, 19)]  # pay any price | bear any burden ...
# (start, end, label, support, score) in the figures group's order: F1, F2, ...
FIGURES = [
    (0, 19, "asyndeton", [(3, 4), (7, 8), (11, 12), (15, 16)], 0.9),
    (1, 18, "anaphora", [(1, 2), (5, 6), (9, 10), (13, 14), (17, 18)], 0.8),
    (4, 7, "alliteration", [(4, 5), (6, 7)], 0.7),  # the words of the second branch
    (20, 27, "epiphora", [(20, 22), (25, 27)], 0.85),  # etiam sic, domine, etiam sic
    (20, 27, "ploce", [(20, 22), (25, 27)], 0.75),  # the same words
]
PARALLELISM_FIELDS = {
    "kind", "doc", "id", "label", "text", "score", "start_char", "end_char", "parts",
    "branch_scores", "stratum",
}  # fmt: skip
FIGURE_FIELDS = {
    "kind", "doc", "id", "label", "text", "score", "start_char", "end_char", "parts",
    "support", "members",
}  # fmt: skip


def speech() -> Document:
    """One chunk: a parallelism of five branches with an asyndeton, an anaphora of
    "any" and an alliteration on its second branch; an epiphora and a ploce on the
    same words after it."""
    doc = spacy.blank("en")(TEXT)
    assert doc[4:7].text == "bear any burden" and doc[20:27].text == "Etiam sic, domine, etiam sic"
    set_parallelisms(doc, [(BRANCHES, "parallelism", 1)])
    ids = [f"f{k}" for k in range(len(FIGURES))]
    spans = [Span(doc, f[0], f[1], label=f[2], span_id=i) for f, i in zip(FIGURES, ids)]
    attrs = {
        SCORES_ATTR: {i: f[4] for i, f in zip(ids, FIGURES)},
        BOUNDS_ATTR: {i: [f[0], f[1]] for i, f in zip(ids, FIGURES)},
        SUPPORT_ATTR: {i: [list(r) for r in f[3]] for i, f in zip(ids, FIGURES)},
        MEMBERS_ATTR: {i: [[f[0], f[1]]] for i, f in zip(ids, FIGURES)},
    }
    doc.spans["figures"] = SpanGroup(doc, name="figures", attrs=attrs, spans=spans)
    return Document("speech.txt", "en", [doc], [0])


NOTES = [
    Note("en", "parallelism", True, "gold"),
    Note("en", "figures", True, "figure_finder, rules"),
]


def test_group_passages():
    """Overlapping findings (of any kind) are one passage, disjoint ones two; the share
    is of the smaller finding's tokens, at least PASSAGE_OVERLAP; chunks never meet."""
    assert PASSAGE_OVERLAP == 0.5
    assert group_passages([]) == []
    assert group_passages([(0, 0, 10), (0, 2, 5)]) == [1, 1]  # one inside the other
    assert group_passages([(0, 0, 4), (0, 6, 9)]) == [1, 2]  # disjoint
    assert group_passages([(0, 6, 9), (0, 0, 4)]) == [2, 1]  # numbered in text order
    assert group_passages([(0, 0, 4), (0, 2, 6)]) == [1, 1]  # 2 of 4 tokens: a half
    assert group_passages([(0, 0, 4), (0, 3, 7)]) == [1, 2]  # 1 of 4: a quarter
    assert group_passages([(0, 0, 10), (0, 8, 14)]) == [1, 2]  # 2 of the smaller's 6
    assert group_passages([(0, 3, 7), (1, 3, 7)]) == [1, 2]  # same tokens, other chunk
    assert group_passages([(0, 0, 4), (0, 2, 6)], overlap=0.75) == [1, 2]
    # anchors, not chains: a finding straddling two passages joins the one it shares
    # more with (a tie: the first), and the two stay two
    assert group_passages([(0, 0, 10), (0, 10, 20), (0, 8, 12)]) == [1, 2, 1]
    assert group_passages([(0, 0, 10), (0, 10, 20), (0, 8, 13)]) == [1, 2, 2]
    assert group_passages([(0, 0, 10), (0, 10, 20), (0, 6, 12)]) == [1, 2, 1]


def test_passages_in_the_json_and_the_findings_unchanged():
    document = speech()
    passages = document_passages(document)
    findings = document_findings(document)
    assert [(p["passage"], p["ids"], p["kinds"], p["labels"]) for p in passages] == [
        (1, ["P1", "F1", "F2", "F3"], ["parallelism"] + ["figures"] * 3,
         ["parallelism", "asyndeton", "anaphora", "alliteration"]),
        (2, ["F4", "F5"], ["figures", "figures"], ["epiphora", "ploce"]),
    ]  # fmt: skip
    first, second = passages
    assert TEXT[first["start_char"] : first["end_char"]] == first["text"]
    assert first["text"].startswith("pay any price,") and first["text"].endswith("any foe")
    assert second["text"] == "Etiam sic, domine, etiam sic"
    assert set(first) == {"passage", "start_char", "end_char", "text", "ids", "kinds", "labels"}
    # the per-finding list keeps its shape: no passage number added to a finding
    assert [f["id"] for f in findings] == ["P1", "F1", "F2", "F3", "F4", "F5"]
    assert set(findings[0]) == PARALLELISM_FIELDS
    assert all(set(f) == FIGURE_FIELDS for f in findings[1:])
    data = analysis_data(Analysis([document.summarize()], NOTES))
    assert set(data) == {
        "components", "documents", "findings", "review", "displacement_histogram", "skipped",
        "tokens", "seconds", "words_per_second",
    }  # fmt: skip
    assert data["findings"] == findings  # the same after summarising
    assert data["documents"][0]["figures"] == findings[1:]
    assert data["documents"][0]["passages"] == passages


def test_findings_table_has_a_row_per_passage():
    """One row per passage naming every finding on it, each id an anchor; the row's
    score is its best; the epiphora and the ploce on the same words are one row."""
    page = analysis_page(Analysis([speech().summarize()], NOTES), "passages")
    assert "<h2 id='findings-section'>Findings (6 on 2 passages)</h2>" in page
    table = page[page.index("<table class='sortable passages' id='findings'>") :]
    table = table[: table.index("</table>")]
    rows = re.findall(r"<tr class='passage' id='([^']+)' data-kinds='([^']+)'>", table)
    assert rows == [("passage-1-1", "parallelism figures"), ("passage-1-2", "figures")]
    first, second = table.split("<tr class='passage'")[1:]
    named = re.findall(r"<div id='finding-1-(\w+)'[^>]*><span class='swatch k-(\w+)'>\w+</span>"
                       r"([^<]+)", first)  # fmt: skip
    assert named == [
        ("P1", "parallelism", "parallelism"), ("F1", "figures", "asyndeton "),
        ("F2", "figures", "anaphora of &#34;any&#34; "), ("F3", "figures", "alliteration "),
    ]  # fmt: skip
    assert "<td class='num' data-value='0.9'>0.900</td>" in first  # the best score
    assert "title='repetitio'><span class='swatch k-figures'>F2</span>anaphora of" in first
    assert "F4</span>epiphora of &#34;Etiam sic&#34; <span class='part-score'>0.85</span>" in second
    assert "F5</span>ploce of &#34;Etiam sic&#34; <span class='part-score'>0.75</span>" in second
    assert "<td class='passage-text'>Etiam sic, domine, etiam sic</td>" in second
    assert "F4: Etiam sic · etiam sic</div><div>F5: Etiam sic · etiam sic" in second


def test_one_mark_names_the_figures_on_the_same_words():
    page = analysis_page(Analysis([speech().summarize()], NOTES), "passages")
    text = page[page.index("<div class='text' lang='en'>") : page.index("<h2 id='documents'>")]
    # epiphora and ploce: one mark, one label naming both, both tooltips
    labels = re.findall(r"<span class='mark-label[^>]*>(.*?)</span>", text)
    assert labels.count("F4 epiphora · F5 ploce") == 1
    assert not any(label in ("F4 epiphora", "F5 ploce") for label in labels)
    assert "title='F4 epiphora (conversio) 0.85 · F5 ploce 0.75'" in text
    etiam = text[text.index(">Etiam<") : text.index(">sic<")]
    assert etiam.count("class='mark ") == 1  # one bar under the words, not two
    # the second branch and the alliteration on the same words: one mark of two kinds,
    # a slice of the bar and a part of the label per kind (each kind's filter hides its own)
    bear = text[text.index(">bear<") : text.index(">any<", text.index(">bear<"))]
    assert re.search(
        r"<span class='mark mixed start on' style='top:[\d.]+em'><span class='slice "
        r"k-parallelism'></span><span class='slice k-figures'></span><span class='mark-label "
        r"mixed'><span class='k-parallelism' title='P1'>P1</span><span class='k-figures' "
        r"title='F3 alliteration \(alliteratio\) 0.70'>F3 alliteration</span></span></span>",
        bear,
    )
    assert bear.count("mark-label") == 1
    assert ".text .mark.mixed { display: flex; }" in page


def test_merge_marks():
    chunk = {
        "tokens": ["a", "b", "c", "d"],
        "spaces": [" ", " ", " ", ""],
        "spans": [
            {"start_token": 0, "end_token": 2, "label": "F1 epiphora", "title": "F1 t"},
            {"start_token": 1, "end_token": 4, "label": "C1 chiasmus"},
            {"start_token": 0, "end_token": 2, "label": "F2 ploce", "title": "F2 t"},
            {"start_token": 0, "end_token": 4, "label": "P1"},
            {"start_token": 2, "end_token": 4, "label": "P1"},
        ],
        "kinds": {
            "F1 epiphora": "figures",
            "F2 ploce": "figures",
            "C1 chiasmus": "chiasmus",
            "P1": "parallelism",
        },
    }
    marks = [(m["start_token"], m["end_token"], m["members"]) for m in merge_marks(chunk)]
    assert [(start, end, [x["label"] for x in members]) for start, end, members in marks] == [
        (0, 4, ["P1"]), (0, 2, ["F1 epiphora", "F2 ploce"]), (1, 4, ["C1 chiasmus"]),
        (2, 4, ["P1"]),
    ]  # fmt: skip
    html = str(text_markup(chunk))
    assert html.count("mark-label") == 4  # P1 twice (two branches), F1 and F2 once, C1
    assert "title='F1 t · F2 t'>F1 epiphora · F2 ploce</span>" in html
    assert "mixed" not in html  # no two kinds on exactly the same words


def test_figure_names_in_four_languages():
    """Every figure has an English, a Latin and a German name; the two figures of
    thought also a Chinese one; the tooltip adds the name in a German or Chinese
    text's own language."""
    assert figure_names("antithesis") == ("antithesis", "antithesis", "Antithese", "对比")
    assert figure_names("rhetorical_question") == (
        "rhetorical question", "interrogatio", "rhetorische Frage", "反问"
    )  # fmt: skip
    assert figure_names("epizeuxis").german == "Epizeuxis (Geminatio)"
    assert all(n.english and n.latin and n.german for n in FIGURE_NAMES.values())
    assert {label: n.german for label, n in FIGURE_NAMES.items()} == {
        "anaphora": "Anapher", "epiphora": "Epipher", "symploce": "Symploke",
        "anadiplosis": "Anadiplose", "gradatio": "Klimax", "epizeuxis": "Epizeuxis (Geminatio)",
        "ploce": "Ploke", "polyptoton": "Polyptoton", "polysyndeton": "Polysyndeton",
        "asyndeton": "Asyndeton", "alliteration": "Alliteration",
        "antimetabole": "Antimetabole", "chiasmus": "Chiasmus", "antithesis": "Antithese",
        "rhetorical_question": "rhetorische Frage",
    }  # fmt: skip
    assert figure_names("hyperbaton") == ("hyperbaton", "", "", "")  # not (yet) named
    assert figure_name("anaphora") == figure_name("anaphora", "en") == "repetitio"
    assert figure_name("anaphora", "de") == "repetitio; Anapher"
    assert figure_name("polyptoton", "de") == "traductio"  # the German name is the English
    assert figure_name("antithesis", "de") == "Antithese"
    assert figure_name("antithesis", "zh") == "对比"
    assert figure_name("rhetorical_question", "zh") == "interrogatio; 反问"


def test_legend_names_every_figure_in_four_languages():
    page = analysis_page(Analysis([speech().summarize()], NOTES), "passages")
    legend = page[page.index("<table class='figure-names'>") :]
    legend = legend[: legend.index("</table>")]
    assert "<th>figure</th><th>Latin</th><th>German</th><th>Chinese</th>" in legend
    antithesis = "<tr><td>antithesis</td><td>antithesis</td><td>Antithese</td><td>对比</td></tr>"
    assert antithesis in legend
    assert (
        "<tr><td>rhetorical question</td><td>interrogatio</td><td>rhetorische Frage</td>"
        "<td>反问</td></tr>"
    ) in legend
    assert "<tr><td>anaphora</td><td>repetitio</td><td>Anapher</td><td></td></tr>" in legend
    assert legend.count("<tr><td>") == len(FIGURE_NAMES)
    # a column's tooltip: the Latin, German and Chinese names
    assert "<th><abbr title='repetitio; Anapher'>anaphora</abbr></th>" in page
    assert "<th><abbr title='alliteratio; Alliteration'>alliteration</abbr></th>" in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update"]  # fmt: skip
# unticks the figures filter; records, before and after, whether the parallelism and the
# figures parts of the mark of two kinds are displayed, and the labels' boxes
UNTICK_FIGURES = """<script>
function shown(selector) {
  var element = document.querySelector(selector);
  return element ? getComputedStyle(element).display !== 'none' : null;
}
function state() {
  return ['.mark.mixed .slice.k-parallelism', '.mark.mixed .slice.k-figures',
          '.mark-label.mixed .k-parallelism', '.mark-label.mixed .k-figures']
    .map(function (selector) { return shown('.text ' + selector); });
}
var before = state();
var labels = Array.from(document.querySelectorAll('.text .mark-label'))
  .filter(function (e) { return e.textContent.indexOf('F4') >= 0; });
var texts = labels.map(function (e) { return e.textContent; });
document.body.setAttribute('data-labels', texts.join('|'));
document.getElementById('show-figures').click();
document.body.setAttribute('data-mixed', before.join(' ') + ' ' + state().join(' '));
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_marks_in_chromium(tmp_path):
    """In the browser: one label for the epiphora and the ploce; the figures filter
    hides the figure's part of the mark of two kinds and keeps the branch's."""
    page = tmp_path / "passages.html"
    html = analysis_page(Analysis([speech().summarize()], NOTES), "passages")
    page.write_text(html.replace("</body>", UNTICK_FIGURES), encoding="utf8")
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert 'data-labels="F4 epiphora · F5 ploce"' in dom
    assert 'data-mixed="true true true true true false true false"' in dom
