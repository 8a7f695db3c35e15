"""``python -m spacy_rhetoric analyze``: the main job, every component that applies to a
language over text files, into one HTML report and JSON."""

import sys
from pathlib import Path
from typing import List, Optional

import srsly
from wasabi import msg

from ._util import MODELS_OPTION, Arg, Opt, app, explicit_models, stderr


@app.command("analyze")
def analyze_cli(
    inputs: List[Path] = Arg(..., help="Text files or directories (searched for *.txt)"),
    lang: str = Opt(..., "--lang", "-l", help="Language: la, de, en or zh"),
    output: Optional[Path] = Opt(Path("report.html"), "--output", "-o", help="The HTML report"),
    as_json: bool = Opt(False, "--json", help="Print the findings as JSON to stdout"),
    json_output: Optional[Path] = Opt(None, "--json-output", "-j", help="Write the JSON here"),
    model: Optional[List[str]] = MODELS_OPTION,
    index: Optional[Path] = Opt(
        None,
        "--index",
        help="Intertext index (default for Latin: the shipped index of Virgil, "
        "la_rhetoric_intertext)",
    ),
    no_index: bool = Opt(False, "--no-index", help="Intertext: no index, not even the shipped one"),
    threshold: Optional[float] = Opt(
        None,
        "--threshold",
        help="Intertext: link threshold (the reranker's probability; without a reranker, "
        "the similarity; default: the reranker's own, else the index's default; -1: every "
        "top-k candidate)",
    ),
    top_k: int = Opt(10, "--top-k", help="Intertext: candidates per sentence that may be links"),
    packaged_reranker: bool = Opt(
        True,
        "--packaged-reranker/--no-packaged-reranker",
        help="Intertext: for an index without a reranker, the packaged one that fits it",
    ),
    encoding: str = Opt("utf-8", "--encoding", help="Encoding of the input files"),
    pattern: str = Opt("*.txt", "--pattern", help="Files to take from directories"),
    batch_size: int = Opt(16, "--batch-size", help="Docs (paragraph chunks) per nlp.pipe batch"),
    max_rendered: int = Opt(
        50, "--max-rendered", help="Show the text (findings marked) of the first N documents only"
    ),
    title: str = Opt("", "--title", help="Title of the report"),
    skip: Optional[List[str]] = Opt(
        None,
        "--skip",
        help="A component not to run: chiasmus, displacement, figures, intertext or "
        "parallelism (repeatable)",
    ),
):
    """Run every component that applies to LANG over the files and write one
    self-contained HTML report: first each document's text with every kind of finding
    marked (a legend with a filter per kind), then per-document statistics, the
    figures per document, a sortable findings table, the chiasmus and figure candidates
    for review and a displacement histogram,
    and last, collapsed, the provenance (components, model packages and versions,
    licences). The JSON also gives the directory of each model.

    Components whose model is not available are skipped and listed, with the command
    that builds them (`python -m spacy_rhetoric models build --lang LANG`).

    Files are streamed through nlp.pipe in batches and only each document's findings and
    statistics are kept, so memory does not grow with the number of files; files that
    cannot be read or decoded are skipped and listed in the report and the JSON."""
    from ..analysis.findings import analysis_data
    from ..analysis.languages import AnalyzeError, check_language
    from ..analysis.pipelines import build_analyzer
    from ..analysis.report import analysis_page
    from ..analysis.run import analyze_files
    from ..textio import InputError, collect_files

    if batch_size < 1 or max_rendered < 0:
        msg.fail("--batch-size must be at least 1 and --max-rendered at least 0.", exits=1)
    if index is not None and no_index:
        msg.fail("Give --index or --no-index, not both.", exits=1)
    try:
        check_language(lang)
        files = collect_files(inputs, pattern)
        explicit = explicit_models(model)
        analyzer = build_analyzer(
            lang, explicit, index, threshold=threshold, top_k=top_k,
            packaged_reranker=packaged_reranker, shipped_index=not no_index, skip=skip or (),
        )  # fmt: skip
    except (AnalyzeError, InputError) as error:
        msg.fail(str(error), exits=1)
    for note in analyzer.notes:
        if as_json:
            stderr(str(note))
        elif note.ran:
            msg.good(str(note))
        else:
            msg.warn(str(note))
    try:
        analysis = analyze_files(
            analyzer,
            files,
            encoding,
            batch_size,
            progress=sys.stderr.isatty(),
            max_rendered=max_rendered,
        )
    except InputError as error:
        msg.fail(str(error), exits=1)
    for item in analysis.skipped[:5]:
        (stderr if as_json else msg.warn)(f"Skipped {item['reason']}")
    if len(analysis.skipped) > 5:
        (stderr if as_json else msg.warn)(
            f"... {len(analysis.skipped) - 5} more skipped files (listed in the report and JSON)"
        )
    data = analysis_data(analysis)
    if output is not None:
        page = analysis_page(
            analysis,
            title
            or f"spacy_rhetoric analysis ({lang}, {len(files)} file{'s' * (len(files) != 1)})",
        )
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(page, encoding="utf8")
    if json_output is not None:
        json_output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(json_output, data)
    if as_json:
        print(srsly.json_dumps(data, indent=2))
        return
    counts = {}
    for item in data["findings"]:
        counts[item["kind"]] = counts.get(item["kind"], 0) + 1
    found = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "no findings"
    review: dict = {}
    for item in data["review"]:
        name = "chiasmus candidates" if item["kind"] == "review" else f"{item['kind']}s"
        review[name] = review.get(name, 0) + 1
    if review:
        found += f" ({', '.join(f'{n} {name}' for name, n in review.items())} for review)"
    skipped = f" ({len(analysis.skipped)} skipped)" if analysis.skipped else ""
    msg.good(
        f"{len(analysis.documents)} files{skipped}, {data['tokens']} tokens in "
        f"{data['seconds']:.1f}s ({data['words_per_second'] or 0:.0f} words/s): {found}"
    )
    if output is not None:
        msg.good(f"Wrote {output}")
    if json_output is not None:
        msg.good(f"Wrote {json_output}")
