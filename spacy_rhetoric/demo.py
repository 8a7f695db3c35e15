"""The demo: the bundled sample texts through whatever the package can do."""

from pathlib import Path
from typing import Iterator, Optional

import spacy
import srsly
from spacy.tokens import Doc

from .parallelism.spans import set_parallelisms
from .report import html_page, parallelism_sections

SAMPLES = Path(__file__).parent / "data" / "samples"


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


def run_demo(output: Path, model: Optional[Path] = None) -> Iterator[str]:
    """Write the demo report.

    output (Path): the HTML file to write.
    model (Optional[Path]): a trained pipeline with a parallelism_tagger to run on the sample.
    YIELDS (str): progress lines.
    """
    gold = load_sample()
    docs, captions = [gold], ["Gold annotation (ASP)"]
    yield f"Sample: {len(gold)} tokens, {len(gold._.parallelisms)} annotated parallelisms"
    if model is not None:
        import spacy_rhetoric  # noqa: F401

        nlp = spacy.load(model)
        predicted = nlp(
            Doc(nlp.vocab, words=[t.text for t in gold], spaces=[bool(t.whitespace_) for t in gold])
        )
        docs.append(predicted)
        captions.append(f"Predicted by {model}")
        yield f"Model {model}: {len(predicted._.parallelisms)} predicted parallelisms"
    page = html_page(
        "spacy_rhetoric demo: parallelisms in Augustine",
        parallelism_sections(docs, captions),
        note=gold.user_data["source"],
    )
    Path(output).write_text(page, encoding="utf8")
