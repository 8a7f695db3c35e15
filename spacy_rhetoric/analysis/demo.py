"""The demo: ``analyze`` on the bundled samples (a Latin sermon section with its gold
parallelisms, Augustine quoting Virgil, the Rhetorica ad Herennium's examples of
antimetabole, a German, an English and a Chinese passage),
with whatever models are available.

Without any built model it still shows the gold parallelisms of the Latin sample and
lists, per language, what did not run and the command that enables it."""

from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Optional, Union

import spacy
import srsly
from spacy.tokens import Doc

from ..corpora.parallelisms import set_parallelisms
from .findings import Analysis, Document, Note, analysis_data
from .languages import LANGUAGE_MODELS
from .pipelines import build_analyzer
from .report import analysis_page

SAMPLES = Path(__file__).parent.parent / "data" / "samples"
# (language, bundled text file) analysed by the demo besides the Latin gold sample
TEXT_SAMPLES = (
    ("la", "la_augustine_civitas.txt"),
    ("la", "la_rhetorica_ad_herennium.txt"),
    ("de", "de_goethe_schiller.txt"),
    ("en", "en_shakespeare_johnson.txt"),
    ("zh", "zh_paibi.txt"),
)


def load_sample(name: str = "la_augustine_sermo") -> Doc:
    """A bundled sample as a Doc with its gold parallelisms."""
    data = srsly.read_json(SAMPLES / f"{name}.json")
    nlp = spacy.blank(data["lang"])
    doc = Doc(nlp.vocab, words=data["words"], spaces=data["spaces"])
    set_parallelisms(
        doc,
        [
            ([tuple(b) for b in p["branches"]], p["label"], p["stratum"])
            for p in data["parallelisms"]
        ],
    )
    doc.user_data["source"] = data["source"]
    return doc


def demo_analysis(models: Optional[Mapping[str, Path]] = None) -> Iterator[Any]:
    """Analyse the samples; yields progress lines (str) and finally the Analysis.

    models (Optional[Mapping[str, Path]]): explicit model paths (NAME -> PATH).
    """
    gold = load_sample()
    analysis = Analysis()
    analysis.documents.append(
        Document("la_augustine_sermo (gold)", "la", [gold], [0], caption=gold.user_data["source"])
    )
    yield f"Latin sample: {len(gold)} tokens, {len(gold._.parallelisms)} gold parallelisms"
    samples = [("la", "la_augustine_sermo (predicted)", gold.text)]
    samples += [
        (lang, name, (SAMPLES / name).read_text(encoding="utf8")) for lang, name in TEXT_SAMPLES
    ]
    analyzers: Dict[str, Any] = {}  # one per language: its models load once, notes once
    for lang, name, text in samples:
        noted = lang in analyzers
        if not noted:
            analyzers[lang] = build_analyzer(lang, models, shipped_index=True)
        analyzer = analyzers[lang]
        ran = [n.component for n in analyzer.notes if n.ran]
        if lang == "la" and not ran:  # nothing to add to the gold rendering
            if not noted:
                analysis.notes.extend(analyzer.notes)
            continue
        part = Analysis(notes=[] if noted else list(analyzer.notes))
        document = analyzer.analyze_text(text, name)
        if name.endswith("(predicted)"):
            document.caption = (
                "The sample's section is in the ASP training split: the predictions show "
                "the pipeline at work, not held-out accuracy."
            )
        part.documents.append(document)
        analysis.extend(part)
        yield f"{name}: ran {', '.join(ran) or 'tokenizer only'}"
    yield analysis


def run_demo(
    output: Path, models: Optional[Mapping[str, Path]] = None, json_output: Optional[Path] = None
) -> Iterator[Union[str, Note]]:
    """Write the demo report.

    output (Path): the HTML file to write.
    models (Optional[Mapping[str, Path]]): explicit model paths (NAME -> PATH).
    json_output (Optional[Path]): also write the findings as JSON here.
    YIELDS (Union[str, Note]): progress lines, and the note of each component that did
        not run (intertext only for a language with a shipped index).
    """
    analysis = None
    for item in demo_analysis(models):
        if isinstance(item, Analysis):
            analysis = item
        else:
            yield item
    assert analysis is not None
    for note in analysis.notes:
        shipped = "intertext" in LANGUAGE_MODELS.get(note.lang, {})
        if not note.ran and (note.component != "intertext" or shipped):
            yield note
    page = analysis_page(
        analysis,
        "spacy_rhetoric demo: parallelisms, chiasmi, figures and displacement",
        note="Bundled samples: Augustine, Sermo 147.1 (ASP, CC BY-SA 4.0) and De civitate "
        "Dei 1 praef., 1.3 (quoting Virgil); Rhetorica ad Herennium 4.39; Goethe and "
        "Schiller; Shakespeare, Johnson, the King James Bible and Pope (public domain); a "
        "paibi sample written for the package.",
    )
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(page, encoding="utf8")
    if json_output is not None:
        data: Dict[str, Any] = analysis_data(analysis)
        Path(json_output).parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(json_output, data)
