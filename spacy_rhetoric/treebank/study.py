"""The EDV study: does the edge displacement distance between training and test data
predict parsing accuracy? After Anderson & Gómez-Rodríguez (2022), who split 103 UD
treebanks into minimum- and maximum-EDV train/test splits, trained UDPipe 1.2 on each
and found lower LAS on the maximum-EDV splits (median LAS 75.40 vs 70.77, mean ΔLAS
-4.26).

Protocol here (all choices documented in the result JSON):

1. Every treebank: all its files in the data mirror are pooled (one doc per sentence,
   :func:`~.io.read_docs`); if it has more than ``max_sentences`` sentences, a seeded
   random subset of that many is kept (in corpus order), so that every run costs about
   the same.
2. Two 60/20/20 splits of those sentences with :func:`~.splits.split_sentences`:
   "edv-min" and "edv-max" (same seed, same local search budget).
3. For each split, a small tagger (morphologizer) + parser (``configs/treebank/
   study_parser.cfg``) is trained on train with model selection on dev, and scored
   on test with gold tokens and gold sentences (LAS, UAS, UPOS).
4. Per split: EDV(train, test) in both variants; per treebank: ΔLAS = LAS(max) -
   LAS(min) and ΔEDV = EDV(max) - EDV(min); over all (treebank, split) points: Spearman's
   rho between LAS and EDV; over treebanks: Spearman between ΔLAS and ΔEDV.
5. Plots (matplotlib, imported lazily): the displacement distributions of train vs
   test for both splits of every treebank (as the paper's Figure 2) and ΔLAS vs ΔEDV.
"""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy.tokens import Doc

from .displacement import (
    DEFAULT_MAX_DISPLACEMENT,
    EDV_VARIANTS,
    edv,
    from_docs,
    histogram,
)
from .io import read_docs, sentence_docs
from .splits import DEFAULT_PROPORTIONS, split_sentences, write_split

PathLike = Union[str, Path]
STUDY_METHODS = ("edv-min", "edv-max")

# Every treebank of the data mirror with its files (relative to the UD directory), in the
# order the study runs them: small and diverse ones first, then the rest.
STUDY_TREEBANKS: Dict[str, Tuple[str, ...]] = {
    "la_perseus": (
        "UD_Latin-Perseus/la_perseus-ud-train.conllu",
        "UD_Latin-Perseus/la_perseus-ud-test.conllu",
    ),
    "de_gsd": (
        "UD_German-GSD/de_gsd-ud-dev.conllu",
        "UD_German-GSD/de_gsd-ud-test.conllu",
    ),
    "zh_gsd": (
        "UD_Chinese-GSD/zh_gsd-ud-dev.conllu",
        "UD_Chinese-GSD/zh_gsd-ud-test.conllu",
    ),
    "grc_proiel": (
        "UD_Ancient_Greek-PROIEL/grc_proiel-ud-dev.conllu",
        "UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu",
    ),
    "la_udante": (
        "UD_Latin-UDante/la_udante-ud-train.conllu",
        "UD_Latin-UDante/la_udante-ud-dev.conllu",
        "UD_Latin-UDante/la_udante-ud-test.conllu",
    ),
    "la_proiel": (
        "UD_Latin-PROIEL/la_proiel-ud-dev.conllu",
        "UD_Latin-PROIEL/la_proiel-ud-test.conllu",
    ),
    "la_ittb": (
        "UD_Latin-ITTB/la_ittb-ud-dev.conllu",
        "UD_Latin-ITTB/la_ittb-ud-test.conllu",
    ),
    "de_lit": ("UD_German-LIT/de_lit-ud-test.conllu",),
    "en_ewt": (
        "UD_English-EWT/en_ewt-ud-train.conllu",
        "UD_English-EWT/en_ewt-ud-dev.conllu",
        "UD_English-EWT/en_ewt-ud-test.conllu",
    ),
}


def subsample(docs: Sequence[Doc], max_sentences: Optional[int], seed: int = 0) -> List[Doc]:
    """A seeded random subset of at most ``max_sentences`` docs, in corpus order.

    RETURNS (List[Doc]): all docs if there are few enough (or max_sentences is None).
    """
    if max_sentences is None or len(docs) <= max_sentences:
        return list(docs)
    if max_sentences < 1:
        raise ValueError(f"subsample: max_sentences must be >= 1, got {max_sentences}")
    keep = numpy.random.default_rng(seed).choice(len(docs), max_sentences, replace=False)
    return [docs[i] for i in numpy.sort(keep)]


def train_parser(
    config_path: PathLike, output_dir: PathLike, train: PathLike, dev: PathLike, **overrides: Any
) -> Path:
    """Train a pipeline with ``spacy train`` in this process.

    RETURNS (Path): the model-best directory.
    """
    from spacy.cli.train import train as spacy_train

    settings = {"paths.train": str(train), "paths.dev": str(dev), **overrides}
    spacy_train(Path(config_path), Path(output_dir), use_gpu=-1, overrides=settings)
    return Path(output_dir) / "model-best"


def score_parser(nlp, docs: Sequence[Doc]) -> Dict[str, Optional[float]]:
    """LAS, UAS and UPOS accuracy on gold tokens and gold sentences.

    RETURNS (Dict[str, Optional[float]]): dep_las, dep_uas, pos_acc (0-1 scale).
    """
    from .pipelines import _examples

    scores = nlp.evaluate(_examples(nlp, docs, gold_tokens=True), batch_size=256)
    return {key: scores.get(key) for key in ("dep_las", "dep_uas", "pos_acc")}


@dataclass
class StudySettings:
    """The knobs of the study (all recorded in the result JSON)."""

    config: str
    max_sentences: Optional[int] = 1500
    seed: int = 0
    n_refine: int = 5000
    proportions: Tuple[float, float, float] = DEFAULT_PROPORTIONS
    max_displacement: int = DEFAULT_MAX_DISPLACEMENT
    overrides: Optional[Dict[str, Any]] = None


Trainer = Callable[[Path, Path, Path], Path]


def run_treebank(
    name: str,
    files: Sequence[PathLike],
    work_dir: PathLike,
    settings: StudySettings,
    trainer: Optional[Trainer] = None,
    log: Callable[[str], None] = print,
) -> Dict[str, Any]:
    """Split one treebank both ways, train on each split and score it.

    name (str): the treebank's name (a directory under ``work_dir``).
    files (Sequence[PathLike]): its .conllu/.spacy files (pooled).
    work_dir (PathLike): splits go to ``work_dir/name/<method>/``, models to
        ``work_dir/name/<method>/model``.
    settings (StudySettings): config, subsampling, split settings.
    trainer (Optional[Trainer]): (train, dev, output_dir) -> model-best path; default:
        :func:`train_parser` with ``settings.config``.
    log (Callable[[str], None]): progress messages.
    RETURNS (Dict[str, Any]): sizes, and per split: sizes, EDV, scores, seconds.
    """
    import spacy

    if trainer is None:

        def trainer(train: Path, dev: Path, output: Path) -> Path:
            return train_parser(settings.config, output, train, dev, **(settings.overrides or {}))

    work_dir = Path(work_dir) / name
    pooled = sentence_docs(read_docs(list(files)))
    docs = subsample(pooled, settings.max_sentences, settings.seed)
    record: Dict[str, Any] = {
        "files": [str(f) for f in files],
        "sentences_pooled": len(pooled),
        "sentences_used": len(docs),
        "tokens_used": sum(len(d) for d in docs),
        "splits": {},
    }
    for method in STUDY_METHODS:
        split_dir = work_dir / method
        start = time.perf_counter()
        split = split_sentences(
            docs,
            method,
            settings.proportions,
            seed=settings.seed,
            n_refine=settings.n_refine,
            max_displacement=settings.max_displacement,
        )
        paths = write_split(split, split_dir)
        split_seconds = time.perf_counter() - start
        log(f"{name} {method}: split in {split_seconds:.1f}s")
        start = time.perf_counter()
        model_path = trainer(paths["train"], paths["dev"], split_dir / "model")
        train_seconds = time.perf_counter() - start
        nlp = spacy.load(model_path)
        scores = score_parser(nlp, split.parts["test"])
        train_data, test_data = from_docs(split.parts["train"]), from_docs(split.parts["test"])
        record["splits"][method] = {
            "sizes": split.manifest["splits"],
            "edv_train_test": {
                v: edv(train_data, test_data, settings.max_displacement, variant=v)
                for v in EDV_VARIANTS
            },
            "refinement": split.manifest.get("refinement"),
            **scores,
            "split_seconds": split_seconds,
            "train_seconds": train_seconds,
            "model": str(model_path),
        }
        log(f"{name} {method}: LAS {scores['dep_las']}, trained in {train_seconds:.0f}s")
    mn, mx = record["splits"]["edv-min"], record["splits"]["edv-max"]
    record["delta_las"] = _delta(mx["dep_las"], mn["dep_las"])
    record["delta_uas"] = _delta(mx["dep_uas"], mn["dep_uas"])
    record["delta_edv"] = {
        v: mx["edv_train_test"][v] - mn["edv_train_test"][v] for v in EDV_VARIANTS
    }
    return record


def _delta(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None else a - b


def spearman(x: Sequence[float], y: Sequence[float]) -> Dict[str, Optional[float]]:
    """Spearman's rank correlation with its p-value (scipy), None if undefined.

    RETURNS (Dict[str, Optional[float]]): rho, p, n.
    """
    from scipy.stats import spearmanr

    pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
    result: Dict[str, Optional[float]] = {"rho": None, "p": None, "n": len(pairs)}
    if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return result
    rho, p = spearmanr([a for a, _ in pairs], [b for _, b in pairs])
    result["rho"], result["p"] = float(rho), float(p)
    return result


def summarize(treebanks: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """Aggregate the per-treebank records: median LAS per split method, mean and median
    ΔLAS, how often max-EDV parsed worse, and the Spearman correlations.

    RETURNS (Dict[str, Any]): the summary.
    """
    summary: Dict[str, Any] = {"treebanks": len(treebanks)}
    for method in STUDY_METHODS:
        las = [r["splits"][method]["dep_las"] for r in treebanks.values()]
        las = [v for v in las if v is not None]
        summary[f"median_las_{method}"] = float(numpy.median(las)) if las else None
        summary[f"mean_las_{method}"] = float(numpy.mean(las)) if las else None
    deltas = [r["delta_las"] for r in treebanks.values() if r["delta_las"] is not None]
    summary["mean_delta_las"] = float(numpy.mean(deltas)) if deltas else None
    summary["median_delta_las"] = float(numpy.median(deltas)) if deltas else None
    summary["max_edv_worse"] = sum(d < 0 for d in deltas)
    points = [
        (split["dep_las"], split["edv_train_test"])
        for r in treebanks.values()
        for split in r["splits"].values()
    ]
    summary["spearman_las_edv"] = {
        v: spearman([p[1][v] for p in points], [p[0] for p in points]) for v in EDV_VARIANTS
    }
    summary["spearman_delta_las_delta_edv"] = {
        v: spearman(
            [r["delta_edv"][v] for r in treebanks.values()],
            [r["delta_las"] for r in treebanks.values()],
        )
        for v in EDV_VARIANTS
    }
    return summary


def run_study(
    treebanks: Dict[str, Sequence[PathLike]],
    work_dir: PathLike,
    settings: StudySettings,
    output: Optional[PathLike] = None,
    trainer: Optional[Trainer] = None,
    log: Callable[[str], None] = print,
) -> Dict[str, Any]:
    """Run :func:`run_treebank` for every treebank and summarize. With ``output``, the
    JSON is rewritten after every treebank, so a long run can be inspected as it goes.

    treebanks (Dict[str, Sequence[PathLike]]): files per treebank name.
    RETURNS (Dict[str, Any]): {"settings", "treebanks", "summary"}.
    """
    result: Dict[str, Any] = {
        "settings": {
            "config": settings.config,
            "max_sentences": settings.max_sentences,
            "seed": settings.seed,
            "n_refine": settings.n_refine,
            "proportions": list(settings.proportions),
            "max_displacement": settings.max_displacement,
            "overrides": settings.overrides or {},
            "evaluation": "gold tokens, gold sentences; LAS/UAS/UPOS on each split's test",
            "scale": "LAS, UAS, UPOS and ΔLAS are fractions (0-1), as spaCy's scorers report",
        },
        "summary": {},
        "treebanks": {},
    }
    for name, files in treebanks.items():
        result["treebanks"][name] = run_treebank(name, files, work_dir, settings, trainer, log)
        result["summary"] = summarize(result["treebanks"])
        if output is not None:
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            srsly.write_json(output, result)
    return result


# --- plots -----------------------------------------------------------------------------------


def _pyplot():
    try:
        import matplotlib
    except ImportError as err:
        raise ImportError(
            "The study plots need matplotlib: pip install 'spacy_rhetoric[study]'"
        ) from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_displacements(
    splits: Dict[str, Dict[str, PathLike]],
    output: PathLike,
    max_displacement: int = 15,
    title: Optional[str] = None,
) -> Path:
    """The edge displacement distributions of train and test, one panel per split (the
    paper's Figure 2: a min-EDV split's curves overlap, a max-EDV split's do not).

    splits (Dict[str, Dict[str, PathLike]]): per split name, the "train" and "test" files.
    output (PathLike): the PNG to write.
    max_displacement (int): x range [-max, max] (longer edges clipped to the ends).
    RETURNS (Path): the PNG.
    """
    from .displacement import load_displacements

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(splits), figsize=(5 * len(splits), 3.5), squeeze=False)
    for ax, (name, parts) in zip(axes[0], splits.items()):
        data = {part: load_displacements(parts[part]) for part in ("train", "test")}
        value = edv(data["train"], data["test"])
        for part, style in (("train", "-"), ("test", "--")):
            hist = histogram(data[part], max_displacement)
            ax.plot(hist.support, hist.probabilities, style, marker=".", label=part)
        ax.set_title(f"{name} (EDV {value:.3f})")
        ax.set_xlabel("edge displacement")
        ax.set_ylabel("share of edges")
        ax.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output


def plot_deltas(result: Dict[str, Any], output: PathLike, variant: str = "support") -> Path:
    """Two panels: ΔLAS vs ΔEDV per treebank, and LAS vs EDV of every split.

    result (Dict[str, Any]): what :func:`run_study` returns.
    output (PathLike): the PNG to write.
    variant (str): the EDV variant to plot.
    RETURNS (Path): the PNG.
    """
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    summary = result.get("summary") or summarize(result["treebanks"])
    for name, record in result["treebanks"].items():
        if record["delta_las"] is None:
            continue
        x, y = record["delta_edv"][variant], 100 * record["delta_las"]
        left.scatter([x], [y], color="tab:blue")
        left.annotate(name, (x, y), fontsize=8, xytext=(3, 3), textcoords="offset points")
        for method, marker in zip(STUDY_METHODS, ("o", "^")):
            split = record["splits"][method]
            if split["dep_las"] is not None:
                right.scatter(
                    split["edv_train_test"][variant],
                    100 * split["dep_las"],
                    marker=marker,
                    color="tab:green" if method == "edv-min" else "tab:red",
                    label=method if name == next(iter(result["treebanks"])) else None,
                )
    left.axhline(0, color="grey", linewidth=0.5)
    rho = summary["spearman_delta_las_delta_edv"][variant]["rho"]
    left.set_title(f"ΔLAS vs ΔEDV (max - min), Spearman {_fmt_rho(rho)}")
    left.set_xlabel(f"ΔEDV ({variant})")
    left.set_ylabel("ΔLAS (points)")
    rho = summary["spearman_las_edv"][variant]["rho"]
    right.set_title(f"LAS vs EDV per split, Spearman {_fmt_rho(rho)}")
    right.set_xlabel(f"EDV(train, test) ({variant})")
    right.set_ylabel("LAS")
    right.legend()
    fig.tight_layout()
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=100)
    plt.close(fig)
    return output


def _fmt_rho(rho: Optional[float]) -> str:
    return "n/a" if rho is None else f"{rho:.2f}"


def plot_study(result: Dict[str, Any], work_dir: PathLike, plot_dir: PathLike) -> List[Path]:
    """All plots of a study: one displacement figure per treebank and the Δ figure.

    RETURNS (List[Path]): the PNGs written.
    """
    work_dir, plot_dir = Path(work_dir), Path(plot_dir)
    written = []
    for name in result["treebanks"]:
        splits = {
            method: {part: work_dir / name / method / f"{part}.spacy" for part in ("train", "test")}
            for method in STUDY_METHODS
        }
        written.append(plot_displacements(splits, plot_dir / f"edv-study-{name}.png", title=name))
    written.append(plot_deltas(result, plot_dir / "edv-study-deltas.png"))
    return written
