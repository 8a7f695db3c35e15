"""``python -m spacy_rhetoric figures find|train|evaluate``: the figures of repetition,
conjunction and sound in a text file; the scorer's fit and calibration; its evaluation
on the gold set and on held-out running text."""

import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from wasabi import msg

from ._util import DATA_ENV, Arg, Opt, emit_json, noun_app, print_ranked

figures_app = noun_app(
    "figures", "Figures of repetition, conjunction and sound: find, train, evaluate."
)
LANGS = ("la", "de", "en", "zh")


def _base(lang: str) -> Any:
    """The base pipeline of a language (the one ``analyze`` runs), or a blank one."""
    import spacy

    from ..analysis.languages import LANGUAGE_MODELS
    from ..models import resolve
    from ._util import load_pipeline

    if lang not in LANGS:
        msg.fail(f"Unknown language {lang!r}: use one of {', '.join(LANGS)}", exits=1)
    found = resolve(LANGUAGE_MODELS[lang]["base"], None)
    return load_pipeline(found.path) if found is not None else spacy.blank(lang)


def _bases() -> Dict[str, Any]:
    from ..analysis.pipelines import _quiet_jieba

    _quiet_jieba()
    return {lang: _base(lang) for lang in LANGS}


def _context(doc: Any, span: Any, context: int) -> str:
    support = {t for s in span._.figure_support for t in range(s.start, s.end)}
    start, end = max(0, span.start - context), min(len(doc), span.end + context)
    words = []
    for token in doc[start:end]:
        text = f"[{token.text}]" if token.i in support else token.text
        words.append(text + token.whitespace_)
    out = "".join(words).replace("\n", " ").strip()
    return ("… " if start > 0 else "") + out + (" …" if end < len(doc) else "")


@figures_app.command("find")
def figures_find_cli(
    file: Path = Arg(..., help="A UTF-8 text file"),
    lang: str = Opt(..., "--lang", "-l", help="la, de, en or zh: its base pipeline"),
    top: int = Opt(50, "--top", "-n", help="How many figures and review items to show (0: all)"),
    context: int = Opt(3, "--context", help="Tokens of context on either side"),
    scorer: Optional[Path] = Opt(
        None, "--scorer", help="A scorer.json (default: the package's calibrated scorer)"
    ),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Also write the JSON here"),
):
    """Find the figures of repetition, conjunction and sound in a text: the language's
    base pipeline with a figure_finder (its calibrated per-language thresholds), each
    paragraph a doc. Prints the figures above the threshold and the review list below it,
    with their scores and the repeated or linking words in brackets."""
    from ..textio import InputError, read_text, text_chunks

    try:
        text = read_text(file)
    except InputError as err:
        msg.fail(str(err), exits=1)
    if not text.strip():
        msg.fail(f"{file} is empty: nothing to look for figures in", exits=1)
    nlp = _base(lang)
    try:
        nlp.add_pipe("figure_finder", config={"scorer_path": str(scorer) if scorer else None})
    except ValueError as err:
        msg.fail(str(err).splitlines()[0], exits=1)
    start = time.perf_counter()
    found: List[Dict[str, Any]] = []
    offset = 0
    for doc in nlp.pipe(text_chunks(text)):
        for key, review in (("figures", False), ("figure_candidates", True)):
            for span in doc.spans[key]:
                found.append(
                    {
                        "figure": span.label_,
                        "score": round(float(span._.figure_score), 4),
                        "review": review,
                        "start_char": offset + span.start_char,
                        "end_char": offset + span.end_char,
                        "support": [s.text for s in span._.figure_support],
                        "context": _context(doc, span, context),
                    }
                )
        offset += len(doc.text)
    seconds = time.perf_counter() - start
    found.sort(key=lambda item: (item["review"], -item["score"]))
    if emit_json(found, output, as_json):
        return
    if not found:
        msg.warn(f"No figures in {file}")
        return
    sections = []
    for title, review in (
        ("Figures (above the threshold)", False),
        ("For review (below the threshold)", True),
    ):
        items = [i for i in found if i["review"] == review]
        shown = items[:top] if top else items
        rows = [(f"{i['score']:.3f}", i["figure"], i["context"]) for i in shown]
        sections.append((f"{title}: {len(items)}", rows))
    print_ranked(sections, ("score", "figure", "in context"))
    msg.info(f"{len(text)} characters in {seconds:.1f}s")


@figures_app.command("train")
def figures_train_cli(
    data_dir: Path = Arg(
        ...,
        help="The data mirror (ud/, latin-corpora/)",
        exists=True,
        file_okay=False,
        envvar=DATA_ENV,
    ),
    corpus_dir: Path = Opt(Path("corpus"), "--corpus", help="Converted corpora (asp/, pse/)"),
    output: Optional[Path] = Opt(
        None, "--output", "-o", help="The scorer.json to write (default: the package's)"
    ),
    metrics: Optional[Path] = Opt(None, "--metrics", help="Write the training metrics here"),
    cache: Optional[Path] = Opt(
        Path("training/figures/cache"), "--cache", help="Where processed text is cached"
    ),
    rhetoric: Optional[Path] = Opt(
        None, "--rhetoric", help="The rhetoric corpus (default: benchmarks/data/rhetoric-corpus)"
    ),
):
    """Fit the figure scorer (the rhetoric corpus's train halves, silver from ASP and
    PSE-I train, the figures gold dev half, running text as weak negatives; grouped
    cross-validation chooses the model and C per figure) and choose each figure's
    threshold per language: on the rhetoric corpus's dev halves for precision 0.80
    (Latin, English, German; off where the dev half holds fewer than 5 instances), by the
    running-text budget for Chinese; writes scorer.json, which figure_finder reads by
    default."""
    import srsly

    from ..figures.model import SCORER_PATH
    from ..figures.recipe import train_scorer

    nlps = _bases()
    start = time.perf_counter()
    try:
        spec, report = train_scorer(
            data_dir,
            nlps,
            corpus_dir=corpus_dir,
            cache_dir=cache,
            progress=msg.info,
            rhetoric_dir=rhetoric,
        )
    except (FileNotFoundError, ValueError) as err:
        msg.fail(str(err), exits=1)
    target = output or SCORER_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    srsly.write_json(target, spec)
    report["seconds"] = round(time.perf_counter() - start, 1)
    report["bases"] = {
        lang: f"{nlp.meta.get('name', '')} {nlp.meta.get('version', '')}".strip()
        for lang, nlp in nlps.items()
    }
    if metrics is not None:
        metrics.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(metrics, report)
    msg.good(f"Wrote {target}" + (f" and {metrics}" if metrics else ""))


@figures_app.command("evaluate")
def figures_evaluate_cli(
    data_dir: Path = Arg(
        ...,
        help="The data mirror (ud/, latin-corpora/)",
        exists=True,
        file_okay=False,
        envvar=DATA_ENV,
    ),
    split: str = Opt("test", "--split", help="The gold half: test or dev"),
    scorer: Optional[Path] = Opt(None, "--scorer", help="A scorer.json (default: the package's)"),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the gold results here"),
    running_output: Optional[Path] = Opt(
        None, "--running-output", help="Write the running-text rates here"
    ),
    chiasmus: bool = Opt(
        True, "--chiasmus/--no-chiasmus", help="Score the antimetabole lines with chiasmus_finder"
    ),
    cache: Optional[Path] = Opt(
        Path("training/figures/cache"), "--cache", help="Where processed text is cached"
    ),
    corpus_output: Optional[Path] = Opt(
        None,
        "--corpus-output",
        help="Score the same split of the rhetoric corpus (P, R, F1 per figure and "
        "language) and write it here",
    ),
    rhetoric: Optional[Path] = Opt(
        None, "--rhetoric", help="The rhetoric corpus (default: benchmarks/data/rhetoric-corpus)"
    ),
):
    """Evaluate figure_finder's defaults: gold lines found per figure and family at the
    default thresholds and with the review list, hard negatives reported (one split of
    benchmarks/data/figures), reports per 1,000 tokens of held-out running text per
    language, and with --corpus-output the figures of the rhetoric corpus's split (P, R,
    F1 per figure and language)."""
    import srsly

    from ..figures.evaluate import evaluate_all
    from ..figures.model import load_scorer

    if split not in ("test", "dev"):
        msg.fail(f"--split must be test or dev, got {split!r}", exits=1)
    try:
        model = load_scorer(scorer)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    nlps = _bases()
    finders = None
    if chiasmus:  # created on the base's vocab, not added: the base's output stays cached
        finders = {lang: nlp.create_pipe("chiasmus_finder") for lang, nlp in nlps.items()}
    start = time.perf_counter()
    try:
        result = evaluate_all(data_dir, nlps, model, cache, split=split, chiasmus=finders)
    except (FileNotFoundError, ValueError) as err:
        msg.fail(str(err), exits=1)
    if corpus_output is not None:
        from ..figures.corpus import evaluate_corpus

        try:
            corpus = evaluate_corpus(nlps, model, split, rhetoric, cache)
        except ValueError as err:
            msg.fail(str(err), exits=1)
        corpus_output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(corpus_output, dict(corpus, split=split, scorer=result["scorer"]))
        for lang, entry in corpus.items():
            msg.info(
                f"rhetoric corpus {split} {lang}: P {entry['all']['p']:.3f} R "
                f"{entry['all']['r']:.3f} F1 {entry['all']['f']:.3f} "
                f"({entry['all']['predicted']} reported, {entry['all']['reference']} gold)"
            )
    result["seconds"] = round(time.perf_counter() - start, 1)
    for target, data in ((output, result["gold"]), (running_output, result["running"])):
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            srsly.write_json(target, dict(data, split=split, scorer=result["scorer"]))
    rows = []
    for lang, entry in result["gold"].items():
        families = ", ".join(
            f"{name} {v['found']}/{v['of']}" for name, v in entry["families"].items()
        )
        held = result["running"][lang]["held_out"]
        rows.append(
            (
                lang,
                families,
                f"{entry['negatives_reported']}/{entry['negatives']}",
                f"{held['per_1000']:.2f}",
            )
        )
    msg.table(
        rows,
        header=("lang", f"{split} found per family", "negatives reported", "held-out per 1,000"),
        divider=True,
    )
