"""``python -m spacy_rhetoric report``: the project's metrics files as one results table."""

from pathlib import Path
from typing import List

from wasabi import msg

from ._util import Arg, Opt, app


@app.command("report")
def report_cli(
    inputs: List[Path] = Arg(..., help="Metrics directories (*.json) and/or files"),
    output: Path = Opt(Path("reports/results.md"), "--output", "-o", help="Markdown to write"),
    html_output: Path = Opt(None, "--html", help="Also write a self-contained HTML page"),
    project_file: Path = Opt(
        Path("project.yml"),
        "--project",
        help="project.yml naming each file's command (benchmarks/project.yml beside it too)",
    ),
):
    """Collect metrics JSON files into one results table, next to the published anchors.

    Each file is matched to the project command that writes it (from the outputs of
    project.yml and of benchmarks/project.yml beside it, cited as `spacy project run
    NAME benchmarks`); files of unknown layout are flattened to dotted keys."""
    from ..analysis.results import ResultsError, write_report

    try:
        files = write_report(inputs, output, html_output, project_file)
    except ResultsError as err:
        msg.fail(str(err), exits=1)
    written = f"{output}, {html_output}" if html_output else str(output)
    msg.good(f"Reported {len(files)} metrics files -> {written}")
