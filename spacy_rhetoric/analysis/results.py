"""Collect the metrics JSON files of a project run into one results table (Markdown and
self-contained HTML): our headline numbers next to the published anchors, the project
command that produced each file (of project.yml or of the benchmarks project,
benchmarks/project.yml), and every numeric value of every file.

``python -m spacy_rhetoric report metrics benchmarks/results -o reports/results.md
--html reports/results.html``

Published anchors (``ANCHORS``) are numbers from the literature, quoted in the project's
issues; they are not results of this repository. Targets are the project's own goals.

- parallelism, ASP test EPM F1 0.40: Bothwell et al., "Introducing Rhetorical
  Parallelism Detection", Latin BERT + CRF (best non-BERT model 0.16); target 0.45.
- parallelism, PSE-I test EPM F1 0.43: Bothwell et al., BERT + CRF; target 0.45.
- chiasmus, German GerDraCor AP 0.74 +- 0.35: Schneider et al., DLE features, 5-fold,
  with 4,000 extra easy negatives; target 0.80.
- chiasmus, English Europarl test AP about 0.65: Dubremetz & Nivre; target 0.70.
- intertext, Loci Similes recall@10 0.61: Schelb et al., E5-large retrieval on a GPU;
  target 0.65. F1@5 0.66: Schelb et al., retrieve-and-rerank; target 0.66.
- EDV study, mean delta LAS -4.26 points (-0.0426 as a fraction, the scale spaCy reports)
  between max- and min-EDV splits: Anderson & Gomez-Rodriguez, 103 UD treebanks, UDPipe
  1.2 (median LAS 75.40 vs 70.77).

Files of no known family are still reported: their numeric leaves are flattened to
dotted keys up to ``MAX_DEPTH`` levels.
"""

import datetime
import json
import math
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import srsly

from .report import results_page

MAX_DEPTH = 4
MAX_ROWS = 60
MAX_LIST = 10


class ResultsError(ValueError):
    """A metrics file or directory that cannot be reported (named in the message)."""


@dataclass(frozen=True)
class Anchor:
    """A published number to compare with.

    value (float): the published value.
    source (str): who published it, on what setting.
    target (Optional[float]): the project's goal for our number, if it has one.
    """

    value: float
    source: str
    target: Optional[float] = None


ANCHORS: Dict[str, Anchor] = {
    "parallelism-asp-epm": Anchor(
        0.40, "Bothwell et al. (RPD): Latin BERT + CRF, ASP test; best non-BERT 0.16", 0.45
    ),
    "parallelism-pse-epm": Anchor(0.43, "Bothwell et al. (RPD): BERT + CRF, PSE-I test", 0.45),
    "chiasmus-de-ap": Anchor(
        0.74,
        "Schneider et al.: DLE features, 5-fold, +-0.35, with 4,000 extra easy negatives",
        0.80,
    ),
    "chiasmus-en-ap": Anchor(0.65, "Dubremetz & Nivre: about 0.65 on Europarl", 0.70),
    "intertext-recall@10": Anchor(
        0.61, "Schelb et al. (Loci Similes): E5-large retrieval, GPU", 0.65
    ),
    "intertext-f1@5": Anchor(0.66, "Schelb et al. (Loci Similes): retrieve-and-rerank, GPU", 0.66),
    "edv-delta-las": Anchor(
        -0.0426,
        "Anderson & Gomez-Rodriguez: mean over 103 UD treebanks, UDPipe 1.2 "
        "(median LAS 75.40 vs 70.77); a fraction, as spaCy reports LAS",
    ),
}


@dataclass(frozen=True)
class Headline:
    """A headline number of a family: the keys matching ``pattern``.

    label (str): how the table names it.
    pattern (str): regular expression, matched (case-insensitively, in full) against
        the flattened dotted key.
    anchor (Optional[str]): key into ``ANCHORS``.
    prefer (Tuple[str, ...]): where several keys match, keep those matching the first
        of these expressions that any key matches (e.g. the pooled test set); the table
        then names the key.
    """

    label: str
    pattern: str
    anchor: Optional[str] = None
    prefer: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """A kind of metrics file.

    name (str): shown in the headline table.
    pattern (str): regular expression searched in the file's posix path; named groups
        fill ``command`` and ``name``.
    command (str): the command that writes such a file (when neither project file says).
    headlines (Tuple[Headline, ...]): the numbers for the headline table.
    """

    name: str
    pattern: str
    command: str
    headlines: Tuple[Headline, ...] = ()


_ANY = r"(?:.*\.)?"  # any prefix of dotted keys
BASE_PREFER = (r"pooled\.raw_text\.", r"raw_text\.", r"pooled\.")
PARALLELISM_HEADLINES = (
    Headline("EPM F1", "parallelism_epm_f"),
    Headline("MPBM F1", "parallelism_mpbm_f"),
    Headline("MBAWO F1", "parallelism_mbawo_f"),
    Headline("MWO F1", "parallelism_mwo_f"),
    Headline("tokens/s", "tokens_per_second"),
)


def _with_anchor(headlines: Tuple[Headline, ...], anchor: str) -> Tuple[Headline, ...]:
    first = Headline(headlines[0].label, headlines[0].pattern, anchor)
    return (first,) + headlines[1:]


FAMILIES: Tuple[Family, ...] = (
    Family(
        "parallelism {ds} (test)",
        r"(?:^|/)parallelism-(?P<ds>asp)(?:-[\w-]+?)?-test\.json$",
        "spacy project run evaluate-parallelism-{ds} benchmarks",
        _with_anchor(PARALLELISM_HEADLINES, "parallelism-asp-epm"),
    ),
    Family(
        "parallelism {ds} (test)",
        r"(?:^|/)parallelism-(?P<ds>pse)(?:-[\w-]+?)?-test\.json$",
        "spacy project run evaluate-parallelism-{ds} benchmarks",
        _with_anchor(PARALLELISM_HEADLINES, "parallelism-pse-epm"),
    ),
    Family(
        "parallelism {ds} (optimization split)",
        r"(?:^|/)parallelism-(?P<ds>asp|pse)(?:-[\w-]+?)?-opt\.json$",
        "spacy project run evaluate-parallelism-{ds} benchmarks",
        PARALLELISM_HEADLINES[:1],
    ),
    Family(
        "parallelism {ds} (decoder tuning)",
        r"(?:^|/)parallelism-(?P<ds>asp|pse)(?:-[\w-]+?)?-tune\.json$",
        "spacy project run tune-parallelism-{ds} benchmarks",
        (Headline("chosen outside_penalty", "best"),),
    ),
    Family(
        "chiasmus German",
        r"(?:^|/)chiasmus-de\.json$",
        "spacy project run evaluate-chiasmus-de",
        (
            Headline("AP, positives a/c/fa/fc", r"full\.ap_mean", "chiasmus-de-ap"),
            Headline("AP sd", r"full\.ap_sd"),
            Headline("AP, fa/fc removed", r"fp_removed\.ap_mean"),
        ),
    ),
    Family(
        "chiasmus English",
        r"(?:^|/)chiasmus-en\.json$",
        "spacy project run evaluate-chiasmus-en",
        (
            Headline("AP test, all else negative", r"all_negative\.ap_test", "chiasmus-en-ap"),
            Headline("AP test, duplicates removed", r"duplicates_removed\.ap_test"),
        ),
    ),
    Family(
        "intertext {name}",
        r"(?:^|/)(?P<name>intertext[\w.-]*)\.json$",
        "",
        (
            Headline(
                "recall@10",
                _ANY + r"(recall@10|recall_at_10|recall_10|r@10)",
                "intertext-recall@10",
                prefer=(r"^shipped\.retrieval\.fused\.", r"^shipped\.", r"fused"),
            ),
            Headline(
                "F1@5",
                _ANY + r"(rerank@5\.f1|f1@5|f1_at_5|f1_5|f@5)",
                "intertext-f1@5",
                prefer=(r"^shipped\.rerank@5\.", r"^shipped\.", r"rerank"),
            ),
        ),
    ),
    Family(
        "EDV study",
        r"(?:^|/)(?P<name>edv-study[\w.-]*)\.json$",
        "",
        (
            Headline(
                "mean delta LAS (max- minus min-EDV split)",
                r"(.*\.)?mean_delta_las",
                "edv-delta-las",
            ),
            Headline("Spearman", _ANY + r"spearman\w*"),
        ),
    ),
    Family(
        "base pipeline {name}",
        r"(?:^|/)(?P<name>base-[\w.-]+)\.json$",
        "",
        (
            Headline("LAS", _ANY + r"(dep_)?las", prefer=BASE_PREFER),
            Headline("UAS", _ANY + r"(dep_)?uas", prefer=BASE_PREFER),
            Headline("UPOS", _ANY + r"(pos_acc|upos)", prefer=BASE_PREFER),
        ),
    ),
    Family(
        "benchmark {name}",
        r"(?:^|/)benchmarks/results/(?P<name>[\w.-]+)\.json$",
        "python benchmarks/{name}.py",
    ),
    Family("{name}", r"(?:^|/)(?P<name>[^/]+)\.json$", ""),
)


@dataclass
class MetricsFile:
    """One metrics file: where it is, what family, its flattened numeric values."""

    path: Path
    family: str
    command: str
    values: List[Tuple[str, Any]]
    hidden: int
    headlines: List[Tuple[str, Any, Optional[Anchor]]]


def load_json(path: Path) -> Any:
    """Read a JSON file, naming the file and position on a syntax error."""
    try:
        text = path.read_text(encoding="utf8")
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"Cannot read metrics file {path}: {err}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ResultsError(
            f"Metrics file {path} is not valid JSON (line {err.lineno}, column "
            f"{err.colno}: {err.msg}): rerun the command that writes it, or remove it."
        ) from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def flatten(data: Any, max_depth: int = MAX_DEPTH) -> Tuple[List[Tuple[str, Any]], int]:
    """Numeric leaves of nested JSON as (dotted key, value) pairs, in file order.

    Short lists of numbers (at most ``MAX_LIST``) are one leaf; longer lists and
    deeper levels are counted, not shown.

    RETURNS (Tuple[List[Tuple[str, Any]], int]): the leaves and how many were hidden.
    """
    leaves: List[Tuple[str, Any]] = []
    hidden = 0

    def count(value: Any) -> int:
        if _is_number(value):
            return 1
        if isinstance(value, dict):
            return sum(count(item) for item in value.values())
        if isinstance(value, list):
            return sum(count(item) for item in value)
        return 0

    def walk(value: Any, prefix: str, depth: int) -> None:
        nonlocal hidden
        if _is_number(value):
            leaves.append((prefix or "value", value))
        elif isinstance(value, list) and value and all(_is_number(v) for v in value):
            if len(value) <= MAX_LIST:
                leaves.append((prefix or "value", list(value)))
            else:
                hidden += len(value)
        elif isinstance(value, (dict, list)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if depth >= max_depth:
                    hidden += count(item)
                    continue
                walk(item, f"{prefix}.{key}" if prefix else str(key), depth + 1)

    walk(data, "", 0)
    return leaves, hidden


BENCHMARKS = "benchmarks"  # the experiments' project, beside project.yml


def _command_outputs(project_file: Path, prefix: str, suffix: str) -> Dict[str, str]:
    """Map each output of each command of one project file, as a path relative to the
    root project's directory (``prefix``: the project's folder in it), to the command."""
    from thinc.api import ConfigValidationError
    from weasel.util import substitute_project_variables

    project = srsly.read_yaml(project_file) or {}
    try:  # ${vars.NAME} filled in as `spacy project run` does
        project = substitute_project_variables(dict(project))
    except ConfigValidationError:
        pass  # a variable the project does not define: the outputs as written
    commands: Dict[str, str] = {}
    for command in project.get("commands", []) or []:
        for output in command.get("outputs", []) or []:
            path = posixpath.normpath(posixpath.join(prefix, Path(output).as_posix()))
            commands[path] = f"spacy project run {command['name']}{suffix}"
    return commands


def project_commands(project_file: Optional[Path]) -> Dict[str, str]:
    """Map each output of each command (path relative to the project directory) to the
    command that writes it: the commands of project.yml, then those of the benchmarks
    project beside it (``benchmarks/project.yml``), whose outputs are relative to
    benchmarks/ (``../metrics/x.json`` is ``metrics/x.json``, ``results/x.json`` is
    ``benchmarks/results/x.json``) and which are cited as
    ``spacy project run NAME benchmarks``. Where both write a file, project.yml's wins."""
    if project_file is None or not project_file.is_file():
        return {}
    commands = _command_outputs(project_file, "", "")
    benchmarks = project_file.parent / BENCHMARKS / "project.yml"
    if benchmarks.is_file():
        for path, command in _command_outputs(benchmarks, BENCHMARKS, f" {BENCHMARKS}").items():
            commands.setdefault(path, command)
    return commands


def _relative(path: Path, root: Optional[Path]) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def describe(path: Path, data: Any, commands: Dict[str, str], root: Optional[Path]) -> MetricsFile:
    """Classify one parsed metrics file and pick its headline numbers."""
    rel = _relative(path, root)
    values, hidden = flatten(data)
    for family in FAMILIES:
        match = re.search(family.pattern, rel) or re.search(family.pattern, path.as_posix())
        if match:
            break
    groups = {key: value for key, value in match.groupdict().items() if value}
    command = family.command.format(**groups)
    if rel in commands:
        command = commands[rel]
    elif commands and not command.startswith("python "):
        guess = f"{command}? " if command else ""
        command = f"{guess}(not an output declared in project.yml or {BENCHMARKS}/project.yml)"
    headlines: List[Tuple[str, Any, Optional[Anchor]]] = []
    for headline in family.headlines:
        regex = re.compile(headline.pattern, re.IGNORECASE)
        found = [(key, value) for key, value in values if regex.fullmatch(key)]
        for prefer in headline.prefer:
            preferred = [(key, value) for key, value in found if re.search(prefer, key)]
            if preferred:
                found = preferred
                break
        anchor = ANCHORS[headline.anchor] if headline.anchor else None
        for key, value in found[:8]:
            named = len(found) > 1 or headline.prefer
            label = f"{headline.label} ({key})" if named else headline.label
            headlines.append((label, value, anchor))
    return MetricsFile(
        path=Path(rel),
        family=family.name.format(**groups),
        command=command,
        values=values,
        hidden=hidden,
        headlines=headlines,
    )


def collect(inputs: Sequence[Path], project_file: Optional[Path] = None) -> List[MetricsFile]:
    """Read every ``*.json`` in the input directories (and input files), sorted.

    inputs (Sequence[Path]): metrics directories and/or files.
    project_file (Optional[Path]): project.yml, to name the command behind each file
        (benchmarks/project.yml beside it is read too).
    RETURNS (List[MetricsFile]): one entry per file.
    RAISES ResultsError: an input is missing, holds no JSON file, or a file is malformed.
    """
    paths: List[Path] = []
    for item in inputs:
        item = Path(item)
        if item.is_dir():
            found = sorted(item.glob("*.json"))
            if not found:
                raise ResultsError(f"{item} contains no *.json metrics files.")
            paths.extend(found)
        elif item.is_file():
            paths.append(item)
        else:
            raise ResultsError(f"Metrics file or directory not found: {item}")
    root = project_file.parent if project_file is not None else None
    commands = project_commands(project_file)
    return [describe(path, load_json(path), commands, root) for path in paths]


def format_value(value: Any) -> str:
    """A number for a table: integers with separators, floats to 4 significant places."""
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value)
    if isinstance(value, bool) or not _is_number(value):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.1f}"
    if abs(value) >= 0.01 or value == 0:
        return f"{value:.3f}"
    return f"{value:.3g}"


def headline_rows(files: Iterable[MetricsFile]) -> List[List[str]]:
    """Rows: result, metric, ours, published anchor, target, anchor source, file, command."""
    rows = []
    for item in files:
        for label, value, anchor in item.headlines:
            rows.append(
                [
                    item.family,
                    label,
                    format_value(value),
                    format_value(anchor.value) if anchor else "",
                    format_value(anchor.target) if anchor and anchor.target is not None else "",
                    anchor.source if anchor else "",
                    item.path.as_posix(),
                    item.command,
                ]
            )
    return rows


HEADLINE_HEADER = [
    "result",
    "metric",
    "ours",
    "published anchor",
    "target",
    "anchor source",
    "file",
    "produced by",
]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def _intro(files: Sequence[MetricsFile], command: str) -> str:
    today = datetime.date.today().isoformat()
    return (
        f"Collected from {len(files)} metrics files on {today} by `{command}`. "
        "*Published anchors* are numbers from the literature (source column), not results "
        "of this repository; *target* is the project's goal. Every other number was "
        "measured by the command in the *produced by* column."
    )


def render_markdown(
    files: Sequence[MetricsFile], command: str = "python -m spacy_rhetoric report"
) -> str:
    """The results as Markdown: headline table, then every file's values."""
    lines = ["# Results", "", _intro(files, command), "", "## Headline numbers", ""]
    rows = headline_rows(files)
    lines += _md_table(HEADLINE_HEADER, rows) if rows else ["No headline numbers found."]
    lines += ["", "## All values by file", ""]
    for item in files:
        lines += [f"### {item.path.as_posix()}", ""]
        if item.command:
            lines += [f"Produced by `{item.command}`.", ""]
        shown = item.values[:MAX_ROWS]
        if shown:
            lines += _md_table(["key", "value"], [[key, format_value(v)] for key, v in shown])
        else:
            lines.append("No numeric values.")
        more = len(item.values) - len(shown) + item.hidden
        if more:
            lines += [
                "",
                f"({more} more values not shown: nested deeper than {MAX_DEPTH} "
                f"levels, in lists longer than {MAX_LIST}, or past row {MAX_ROWS}.)",
            ]
        lines.append("")
    return "\n".join(lines)


def render_html(
    files: Sequence[MetricsFile], command: str = "python -m spacy_rhetoric report"
) -> str:
    """The results as one self-contained HTML page (no scripts, no external files)."""
    sections = []
    for item in files:
        shown = item.values[:MAX_ROWS]
        sections.append(
            {
                "path": item.path.as_posix(),
                "command": item.command,
                "rows": [[key, format_value(value)] for key, value in shown],
                "more": len(item.values) - len(shown) + item.hidden,
            }
        )
    return results_page(HEADLINE_HEADER, headline_rows(files), sections, command)


def write_report(
    inputs: Sequence[Path],
    output: Path,
    html_output: Optional[Path] = None,
    project_file: Optional[Path] = None,
    command: str = "python -m spacy_rhetoric report",
) -> List[MetricsFile]:
    """Collect ``inputs`` and write the Markdown (and HTML) report.

    RETURNS (List[MetricsFile]): what was reported.
    """
    files = collect(inputs, project_file)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render_markdown(files, command) + "\n", encoding="utf8")
    if html_output is not None:
        html_output.parent.mkdir(parents=True, exist_ok=True)
        html_output.write_text(render_html(files, command), encoding="utf8")
    return files
