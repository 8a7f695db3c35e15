"""The reports in a real browser: headless Chromium renders the text with the findings
marked, the legend's filters hide a kind, the tables, the histogram, and the findings
table sorts."""

import re
import shutil
import subprocess

import pytest

from spacy_rhetoric.analysis.demo import demo_analysis, run_demo
from spacy_rhetoric.analysis.pipelines import build_analyzer
from spacy_rhetoric.analysis.report import analysis_page
from spacy_rhetoric.analysis.run import analyze_files

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)"
)
# clicks the "score" header of the findings table twice (ascending, then descending)
CLICK_SCORE = (
    "<script>var th = document.querySelectorAll('#findings th')[3]; th.click(); th.click();"
    "</script></body>"
)


@pytest.fixture
def no_models(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SPACY_RHETORIC_MODELS", raising=False)
    monkeypatch.setattr("spacy_rhetoric.models.PACKAGE_MODELS", tmp_path / "package")
    monkeypatch.setattr("spacy_rhetoric.models.installed_path", lambda spec: None)


@pytest.fixture
def fresh_install(monkeypatch):
    """Only the models a fresh install has: the spaCy packages requirements.txt installs
    (no --model, no $SPACY_RHETORIC_MODELS, nothing built into the cache)."""
    from spacy_rhetoric import models

    every = models.candidates

    def installed_only(name, explicit=None):
        return ((s, p) for s, p in every(name, explicit) if s == "installed")

    monkeypatch.setattr(models, "candidates", installed_only)


def dump_dom(page, profile) -> str:
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def screenshot(page, profile, path, height=2400):
    subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size=1200,{height}",
         f"--screenshot={path}", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 20_000


# unticks the parallelism filter; records whether the first parallelism and chiasmus
# marks of the text are displayed, and whether the provenance is open
UNTICK_PARALLELISM = """<script>
function shown(selector) {
  var element = document.querySelector(selector);
  return element ? getComputedStyle(element).display !== 'none' : null;
}
var before = shown('.text .k-parallelism');
document.getElementById('show-parallelism').click();
document.body.setAttribute('data-parallelism', before + ' ' + shown('.text .k-parallelism'));
document.body.setAttribute('data-chiasmus', String(shown('.text .k-chiasmus')));
document.body.setAttribute('data-provenance', String(document.getElementById('provenance').open));
</script></body>"""

# unticks the figures filter; records whether the first figure mark, figure detail line
# and chiasmus mark are displayed before and after
UNTICK_FIGURES = """<script>
function shown(selector) {
  var element = document.querySelector(selector);
  return element ? getComputedStyle(element).display !== 'none' : null;
}
var before = [shown('.text .k-figures'), shown('.details-figures')];
document.getElementById('show-figures').click();
var after = [shown('.text .k-figures'), shown('.details-figures')];
document.body.setAttribute('data-figures', before.join(' ') + ' ' + after.join(' '));
document.body.setAttribute('data-chiasmus', String(shown('.text .k-chiasmus')));
document.body.setAttribute('data-figure-table', String(shown('#figures-section')));
</script></body>"""


@needs_chromium
def test_demo_report_renders_in_chromium(tmp_path, no_models, record_property):
    page = tmp_path / "demo.html"
    list(run_demo(page))
    dom = dump_dom(page, tmp_path / "profile")
    # the gold parallelisms: five passages in the findings table, marked in the text
    assert len(re.findall(r'id="passage-1-\d+" data-kinds="parallelism"', dom)) == 5
    assert ">P1 synchystic</span>" in dom and '<div class="spans">' in dom
    # the text first, the tables, the provenance last (collapsed) saying what to do
    order = ['<h2 id="text">', '<h2 id="findings-section">', '<details id="provenance">',
             "model parallelism-la not built"]  # fmt: skip
    assert [dom.index(marker) for marker in order] == sorted(dom.index(m) for m in order)
    # the legend's checkbox hides a kind's marks, with CSS alone
    filtered = tmp_path / "filtered.html"
    filtered.write_text(page.read_text("utf8").replace("</body>", UNTICK_PARALLELISM), "utf8")
    dom = dump_dom(filtered, tmp_path / "profile")
    assert 'data-parallelism="true false"' in dom and 'data-chiasmus="true"' in dom
    assert 'data-provenance="false"' in dom
    # the figures: marked in the text, a line each under it; the filter hides both, not
    # the other kinds' marks nor the Figures section's table
    filtered.write_text(page.read_text("utf8").replace("</body>", UNTICK_FIGURES), "utf8")
    dom = dump_dom(filtered, tmp_path / "profile")
    assert 'data-figures="true true false false"' in dom and 'data-chiasmus="true"' in dom
    assert 'data-figure-table="true"' in dom
    assert re.search(r'title="F1 \w+ \(\w', dom)  # the classical name in the tooltip
    png = tmp_path / "demo.png"
    screenshot(page, tmp_path / "profile", png)
    record_property("screenshot", str(png))
    print(f"demo screenshot: {png}")


@needs_chromium
def test_analysis_report_renders_and_sorts_in_chromium(tmp_path, no_models, record_property):
    from test_analyze import TEXT, build_tiny_models

    models = build_tiny_models(tmp_path / "models")
    analysis = next(item for item in demo_analysis() if not isinstance(item, str))
    text = tmp_path / "love.txt"
    text.write_text(TEXT, encoding="utf8")
    en = {name: models / name for name in ("base-en", "chiasmus-en")}
    analysis.extend(analyze_files(build_analyzer("en", en), [text]))
    page = tmp_path / "report.html"
    page.write_text(analysis_page(analysis, "Browser test").replace("</body>", CLICK_SCORE))
    dom = dump_dom(page, tmp_path / "profile")
    # parallelism spans (gold Latin) and chiasmus spans with their supporting words
    assert '<div class="text" lang="la">' in dom and ">P5 synchystic</span>" in dom
    chiasmus = dom[dom.rindex('chiasmus-render"') :]  # love.txt, the last document
    first = chiasmus[: chiasmus.index("</p>")]
    assert re.search(r"C1 (chiasmus|antimetabole) 0\.\d\d", first)
    roles = re.findall(r'<mark class="role role-[ab]">(\w+)<sup>([AB]\'?)</sup></mark>', first)
    assert [role for _, role in roles] == ["A", "B", "B'", "A'"]  # the supporting words
    # the histogram of the chain parse: 18 edges of displacement +1
    assert re.search(r'<svg class="histogram"', dom)
    assert 'data-displacement="1" data-count="18"' in dom
    # the inline script sorted the findings by score, descending
    findings = dom[dom.index('id="findings"') :]
    findings = findings[: findings.index("</table>")]
    assert 'data-dir="desc"' in findings
    kinds = re.findall(r'<tr class="passage" id="[^"]+" data-kinds="([\w ]+)">', findings)
    scores = [
        float(v)
        for v in re.findall(r"<td class=\"num\" data-value=\"([-\d.e]+)\">", findings)[1::3]
    ]
    assert "chiasmus" in kinds[0] and kinds[-1] == "parallelism"
    assert scores == sorted(scores, reverse=True)
    png = tmp_path / "report.png"
    screenshot(page, tmp_path / "profile", png, height=3200)
    record_property("screenshot", str(png))
    print(f"report screenshot: {png}")


@needs_chromium
def test_fresh_install_demo_shows_predictions(tmp_path, fresh_install, record_property):
    """The README's quick start on a fresh machine: the shipped packages (base-de,
    base-en, parallelism-la, parallelism-zh, parallelism-xx, intertext-la) and the
    chiasmus rules give predicted findings."""
    page = tmp_path / "demo.html"
    list(run_demo(page))
    dom = dump_dom(page, tmp_path / "profile")
    rows = re.findall(r'<tr class="passage" id="[^"]+" data-kinds="([\w ]+)"><td>([^<]+)</td>', dom)
    predicted = {
        (kind, doc) for kinds, doc in rows if "(gold)" not in doc for kind in kinds.split()
    }
    # parallelisms predicted by the shipped Latin head (not the five gold ones)
    assert ("parallelism", "la_augustine_sermo (predicted)") in predicted
    assert ("parallelism", "zh_paibi.txt") in predicted  # the shipped PSE-I head
    # the shipped multilingual head, zero-shot on the English sample
    assert ("parallelism", "en_shakespeare_johnson.txt") in predicted
    assert "zero-shot: trained on Latin and Chinese only" in dom
    # Augustine quoting Virgil, linked through the shipped index with the reranker
    assert ("intertext", "la_augustine_civitas.txt") in predicted
    links = re.findall(r"verg\. aen\. (\d+\.\d+)", dom)
    assert {"6.853", "1.67"} <= set(links)
    assert "shipped index intertext-la" in dom
    # antimetaboles ranked by the rules on the shipped English tagger's lemmas
    assert ("chiasmus", "en_shakespeare_johnson.txt") in predicted
    chiasmus = dom[dom.index('chiasmus-render"') :]
    assert "Fair<sup>A</sup>" in chiasmus and re.search(r"C\d+ antimetabole \d\.\d\d", chiasmus)
    # the displacement histogram of the shipped German and English parsers
    assert '<svg class="histogram"' in dom
    counts = [int(c) for c in re.findall(r'data-count="(\d+)"', dom)]
    assert sum(counts) > 100
    # the provenance names the installed packages, their versions and licences, no path
    base = r'<td>en_rhetoric_base \d+\.\d+\.\d+<br><span class="source">installed package</span>'
    assert re.search(base + r"</td><td>CC BY-SA 4.0 \(UD English-EWT\)</td>", dom)
    assert re.search(r"<td>xx_rhetoric_parallelism \d+\.\d+\.\d+<br>", dom)
    assert "<td>CC BY-SA 4.0 (ASP, PSE-I); encoder MIT</td>" in dom
    assert "site-packages" not in dom
    png = tmp_path / "fresh.png"
    screenshot(page, tmp_path / "profile", png, height=3200)
    record_property("screenshot", str(png))


# counts the pairs of chiasmus labels and role marks whose boxes overlap
COUNT_OVERLAPS = """<script>
var boxes = Array.from(document.querySelectorAll('.chiasmus-label, mark.role sup'))
  .map(function (e) { return e.getBoundingClientRect(); });
var overlaps = 0;
for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
  var a = boxes[i], b = boxes[j];
  var apart = a.right - 0.5 <= b.left || b.right - 0.5 <= a.left
    || a.bottom - 0.5 <= b.top || b.bottom - 0.5 <= a.top;
  if (!apart) overlaps++;
}
document.body.setAttribute('data-boxes', boxes.length);
document.body.setAttribute('data-overlaps', overlaps);
</script></body>"""


@needs_chromium
def test_twenty_chiasmi_in_a_paragraph_stay_readable(tmp_path, no_models, record_property):
    """A paragraph with 20 antimetaboles (found by the rules on a blank pipeline): one
    line each, and no label overlaps another in the browser's layout."""
    words = (
        "red blue green gold dark light old new tall short hot cold wet dry rich poor slow "
        "fast sweet sour loud soft bright dull war peace love hate day night sun moon king "
        "queen gain loss truth lies art life"
    ).split()
    phrases = [f"{a} is {b}, and {b} is {a}" for a, b in zip(words[::2], words[1::2])]
    assert len(phrases) == 20
    text = tmp_path / "twenty.txt"
    text.write_text("; ".join(phrases) + ".\n", encoding="utf8")
    analysis = analyze_files(build_analyzer("en"), [text])
    page = tmp_path / "twenty.html"
    html = analysis_page(analysis, "Twenty chiasmi")
    page.write_text(html.replace("</body>", COUNT_OVERLAPS), encoding="utf8")
    dom = dump_dom(page, tmp_path / "profile")
    lines = dom.count('class="chiasmus-line"')
    assert lines >= 20
    boxes = int(re.search(r'data-boxes="(\d+)"', dom).group(1))
    assert boxes == 5 * lines  # a label and four role marks per chiasmus
    assert re.search(r'data-overlaps="(\d+)"', dom).group(1) == "0"
    png = tmp_path / "twenty.png"
    screenshot(page, tmp_path / "profile", png, height=2400)
    record_property("screenshot", str(png))
