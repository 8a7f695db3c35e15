"""``python -m spacy_rhetoric demo``: the main job on the bundled samples."""

from pathlib import Path
from typing import List, Optional

from wasabi import msg

from ._util import MODELS_OPTION, Opt, app, explicit_models


@app.command("demo")
def demo_cli(
    output: Path = Opt(Path("demo.html"), "--output", "-o", help="The HTML report to write"),
    json_output: Optional[Path] = Opt(None, "--json-output", "-j", help="Also write the JSON"),
    model: Optional[List[str]] = MODELS_OPTION,
):
    """Analyse the bundled samples (a Latin sermon with its gold parallelisms, Augustine
    quoting Virgil, the Rhetorica ad Herennium, German, English and Chinese passages) with
    every available model, the chiasmus and figure rules for every language, and write
    the HTML report (the same as analyze's)."""
    from ..analysis.demo import run_demo
    from ..analysis.languages import AnalyzeError

    explicit = explicit_models(model)
    try:
        for line in run_demo(output, explicit, json_output):
            if isinstance(line, str):
                msg.info(line)
            else:
                msg.warn(str(line))
    except (OSError, AnalyzeError) as error:
        msg.fail(str(error), exits=1)
    msg.good(f"Wrote {output}")
