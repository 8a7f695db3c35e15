"""The demo report in a real browser: headless Chromium renders the spans and tables."""

import shutil
import subprocess

import pytest

from spacy_rhetoric.demo import run_demo

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


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_demo_report_renders_in_chromium(tmp_path):
    page = tmp_path / "demo.html"
    list(run_demo(page))
    profile = tmp_path / "profile"
    url = page.as_uri()
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    # displaCy's span markup and our table, as the browser parsed them
    assert dom.count("<tr><td>P") == 5
    assert "synchystic" in dom and 'class="spans"' in dom
    screenshot = tmp_path / "demo.png"
    subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--window-size=1200,1600",
         f"--screenshot={screenshot}", url],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000
