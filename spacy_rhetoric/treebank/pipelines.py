"""Base pipelines (tagger, morphologizer, lemmatizer, parser) for Latin, German and
English from the UD treebanks of the data mirror: which files each language trains,
develops and is tested on, building those corpora as DocBins, and evaluating a trained
pipeline on every test set (UPOS, XPOS, morphology, lemma, UAS/LAS) next to the EDV
between its training data and that test set.

Most UD train files are missing from the mirror (see ../shared/data/ud/SOURCE.md), so:

- **la**: Perseus train + UDante train + UDante dev + PROIEL dev + ITTB dev are pooled;
  every ``dev_every``-th sentence of each file is held out as the dev set; reported on
  each Latin test set and on all of them pooled. No XPOS tagger: the four treebanks use
  four different XPOS tag sets.
- **la-udante**: UDante train / dev, reported on every Latin test set (the base that
  ships: CC BY-SA 4.0).
- **zh**: Chinese-GSD dev (its train file is missing), every 10th sentence held out;
  reported on GSD test. Tokens are words (jieba's segmentation at run time).
- **de**: GSD dev is the only annotated German training data; every 10th sentence is
  held out as dev. Reported on GSD test and LIT test. XPOS: STTS.
- **en**: EWT train / dev / test. XPOS: Penn Treebank.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import srsly
from spacy.tokens import Doc

from ..corpora.conllu import read_conllu_docs
from ..corpora.util import gold_tokens_doc
from .io import write_docbin

PathLike = Union[str, Path]


@dataclass(frozen=True)
class BaseCorpusSpec:
    """Which UD files a base pipeline uses (paths relative to the UD directory).

    train (Tuple[str, ...]): pooled training files.
    test (Tuple[Tuple[str, str], ...]): (name, file) of each test set.
    dev (Tuple[str, ...]): dev files; empty: hold out every ``dev_every``-th sentence of
        each training file instead.
    dev_every (int): the held-out stride when ``dev`` is empty.
    """

    train: Tuple[str, ...]
    test: Tuple[Tuple[str, str], ...]
    dev: Tuple[str, ...] = ()
    dev_every: int = 20


BASE_CORPORA: Dict[str, BaseCorpusSpec] = {
    "la": BaseCorpusSpec(
        train=(
            "UD_Latin-Perseus/la_perseus-ud-train.conllu",
            "UD_Latin-UDante/la_udante-ud-train.conllu",
            "UD_Latin-UDante/la_udante-ud-dev.conllu",
            "UD_Latin-PROIEL/la_proiel-ud-dev.conllu",
            "UD_Latin-ITTB/la_ittb-ud-dev.conllu",
        ),
        test=(
            ("la_perseus", "UD_Latin-Perseus/la_perseus-ud-test.conllu"),
            ("la_udante", "UD_Latin-UDante/la_udante-ud-test.conllu"),
            ("la_proiel", "UD_Latin-PROIEL/la_proiel-ud-test.conllu"),
            ("la_ittb", "UD_Latin-ITTB/la_ittb-ud-test.conllu"),
        ),
        dev_every=20,
    ),
    # The shippable Latin base (la_rhetoric_base): UDante alone, CC BY-SA 4.0 by its
    # LICENSE.txt (its README says CC BY-NC-SA 3.0; see SOURCE.md of the mirror).
    "la-udante": BaseCorpusSpec(
        train=("UD_Latin-UDante/la_udante-ud-train.conllu",),
        dev=("UD_Latin-UDante/la_udante-ud-dev.conllu",),
        test=(
            ("la_udante", "UD_Latin-UDante/la_udante-ud-test.conllu"),
            ("la_perseus", "UD_Latin-Perseus/la_perseus-ud-test.conllu"),
            ("la_proiel", "UD_Latin-PROIEL/la_proiel-ud-test.conllu"),
            ("la_ittb", "UD_Latin-ITTB/la_ittb-ud-test.conllu"),
        ),
    ),
    "de": BaseCorpusSpec(
        train=("UD_German-GSD/de_gsd-ud-dev.conllu",),
        test=(
            ("de_gsd", "UD_German-GSD/de_gsd-ud-test.conllu"),
            ("de_lit", "UD_German-LIT/de_lit-ud-test.conllu"),
        ),
        dev_every=10,
    ),
    "zh": BaseCorpusSpec(
        train=("UD_Chinese-GSD/zh_gsd-ud-dev.conllu",),
        test=(("zh_gsd", "UD_Chinese-GSD/zh_gsd-ud-test.conllu"),),
        dev_every=10,
    ),
    "en": BaseCorpusSpec(
        train=("UD_English-EWT/en_ewt-ud-train.conllu",),
        dev=("UD_English-EWT/en_ewt-ud-dev.conllu",),
        test=(("en_ewt", "UD_English-EWT/en_ewt-ud-test.conllu"),),
    ),
}


def group_sentences(docs: Sequence[Doc], n_sents: int) -> List[Doc]:
    """Join consecutive sentence docs into docs of ``n_sents`` sentences (as
    ``spacy convert --n-sents``), so that the parser also learns sentence boundaries.

    RETURNS (List[Doc]): the joined docs (annotation kept, user_data dropped).
    """
    if n_sents < 1:
        raise ValueError(f"group_sentences: n_sents must be >= 1, got {n_sents}")
    grouped = []
    for i in range(0, len(docs), n_sents):
        chunk = list(docs[i : i + n_sents])
        for doc in chunk:
            doc.user_data.clear()
        grouped.append(chunk[0] if len(chunk) == 1 else Doc.from_docs(chunk))
    return grouped


def _file_record(path: Path, docs: Sequence[Doc]) -> Dict[str, Any]:
    return {"file": path.name, "sentences": len(docs), "tokens": sum(len(d) for d in docs)}


def build_base_corpus(
    lang: str,
    ud_dir: PathLike,
    output_dir: PathLike,
    n_sents: int = 10,
    spec: Optional[BaseCorpusSpec] = None,
) -> Dict[str, Any]:
    """Write ``train.spacy`` (docs of ``n_sents`` sentences), ``dev.spacy`` and
    ``test/<name>.spacy`` (one sentence per doc) plus ``manifest.json``.

    lang (str): "la", "de" or "en" (a key of BASE_CORPORA), unless ``spec`` is given.
    ud_dir (PathLike): the directory holding the UD_* treebank folders.
    output_dir (PathLike): where to write.
    n_sents (int): sentences per training doc.
    spec (Optional[BaseCorpusSpec]): the files to use instead of BASE_CORPORA[lang].
    RETURNS (Dict[str, Any]): the manifest (files, sentences and tokens per part).
    """
    if spec is None:
        if lang not in BASE_CORPORA:
            raise ValueError(
                f"base-corpus: no corpus for {lang!r}; use one of {list(BASE_CORPORA)}"
            )
        spec = BASE_CORPORA[lang]
    from ..corpora.conllu import default_vocab

    ud_dir, output_dir = Path(ud_dir), Path(output_dir)
    vocab = default_vocab()
    manifest: Dict[str, Any] = {"lang": lang, "n_sents": n_sents, "dev_every": None}
    train: List[Doc] = []
    dev: List[Doc] = []
    manifest["train"], manifest["dev"], manifest["test"] = [], [], {}
    for name in spec.train:
        path = ud_dir / name
        docs = read_conllu_docs(path, vocab)
        if spec.dev:
            kept, held = docs, []
        else:
            manifest["dev_every"] = spec.dev_every
            held = docs[spec.dev_every - 1 :: spec.dev_every]
            kept = [d for i, d in enumerate(docs) if (i + 1) % spec.dev_every]
            manifest["dev"].append(_file_record(path, held))
        manifest["train"].append(_file_record(path, kept))
        train.extend(kept)
        dev.extend(held)
    for name in spec.dev:
        path = ud_dir / name
        docs = read_conllu_docs(path, vocab)
        manifest["dev"].append(_file_record(path, docs))
        dev.extend(docs)
    for doc in dev:
        doc.user_data.clear()
    write_docbin(group_sentences(train, n_sents), output_dir / "train.spacy")
    write_docbin(dev, output_dir / "dev.spacy")
    for test_name, file in spec.test:
        path = ud_dir / file
        docs = read_conllu_docs(path, vocab)
        for doc in docs:
            doc.user_data.clear()
        write_docbin(docs, output_dir / "test" / f"{test_name}.spacy")
        manifest["test"][test_name] = _file_record(path, docs)
    srsly.write_json(output_dir / "manifest.json", manifest)
    return manifest


# --- evaluation ----------------------------------------------------------------------------

SCORE_KEYS = (
    "pos_acc",
    "tag_acc",
    "morph_acc",
    "lemma_acc",
    "dep_uas",
    "dep_las",
    "sents_f",
)


def _examples(nlp, docs: Iterable[Doc], gold_tokens: bool) -> List[Any]:
    from spacy.training import Example

    examples = []
    for ref in docs:
        if gold_tokens:
            pred = gold_tokens_doc(nlp.vocab, ref)
        else:
            pred = nlp.make_doc(ref.text)
        examples.append(Example(pred, ref))
    return examples


def evaluate_pipeline(
    nlp,
    tests: Sequence[Tuple[str, PathLike]],
    train_path: Optional[PathLike] = None,
    pooled_name: Optional[str] = "pooled",
    batch_size: int = 256,
    raw_n_sents: int = 10,
) -> Dict[str, Any]:
    """Score a pipeline on test DocBins in two modes, with the EDV between the training
    data and each test set:

    - ``gold_tokens``: one gold sentence per doc, gold tokens (tagging and parsing only);
    - ``raw_text``: the text of ``raw_n_sents`` consecutive sentences per doc, tokenized
      and sentence-split by the pipeline itself (scored through spaCy's alignment; this
      is how the other capabilities run it on raw text; ``sents_f`` is meaningful here).

    nlp (Language): the trained pipeline.
    tests (Sequence[Tuple[str, PathLike]]): (name, .spacy or .conllu path) per test set.
    train_path (Optional[PathLike]): the training corpus, for EDV(train, test).
    pooled_name (Optional[str]): also score all test sets together under this name
        (if there are several); None: don't.
    batch_size (int): batch size for nlp.evaluate.
    raw_n_sents (int): sentences per doc in the raw_text mode.
    RETURNS (Dict[str, Any]): per test set: sizes, scores per tokenization mode, EDV.
    """
    import time

    from .displacement import EDV_VARIANTS, edv, from_docs
    from .io import read_docs

    train_data = None
    if train_path is not None:
        train_data = from_docs(read_docs(train_path, nlp.vocab))
    loaded = [(name, read_docs(path, nlp.vocab)) for name, path in tests]
    if pooled_name and len(loaded) > 1:
        loaded.append((pooled_name, [doc for _, docs in loaded for doc in docs]))
    results: Dict[str, Any] = {}
    for name, docs in loaded:
        entry: Dict[str, Any] = {"sentences": len(docs), "tokens": sum(len(d) for d in docs)}
        raw_docs = group_sentences([d.copy() for d in docs], raw_n_sents)
        for mode, gold_tokens, refs in (
            ("gold_tokens", True, docs),
            ("raw_text", False, raw_docs),
        ):
            start = time.perf_counter()
            scores = nlp.evaluate(_examples(nlp, refs, gold_tokens), batch_size=batch_size)
            entry[mode] = {key: scores.get(key) for key in SCORE_KEYS}
            entry[mode]["words_per_second"] = entry["tokens"] / (time.perf_counter() - start)
        if train_data is not None and train_data.n_edges:
            test_data = from_docs(docs)
            entry["edv_train_test"] = {
                v: edv(train_data, test_data, variant=v) for v in EDV_VARIANTS
            }
        results[name] = entry
    return results
