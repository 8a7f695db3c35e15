"""The German chiasmus protocol (Schneider et al.; GerDraCor, ``chiasmus-de``).

The annotated candidates are ranked; stratified k-fold cross-validation (default 5
folds, seed 0; see ``crossval.cross_validate``) reports the mean and the sample standard
deviation of the average precision over the folds, for two settings:

* "full": positives {a, c, fa, fc}, every other candidate negative;
* "fp_removed": positives {a, c}; the candidates labelled fa and fc are removed.

The docs keep the dataset's POS and lemmas (gold input features, as in the paper); its
head-less dependency labels feed the dependency-label features. Optionally, random
inversions of German running text (UD GSD dev and test, the first half of LIT) join the
folds as negatives, as Schneider et al. did.
"""

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from .crossval import config_suggester, cross_validate, input_doc, settings_from_config
from .negatives import running_text, sample_inversions

GERMAN_FULL = ("a", "c", "fa", "fc")
GERMAN_FP_REMOVED = ("a", "c")
GERMAN_FP = ("fa", "fc")


def german_examples(data_dir: Path, nlp: Language) -> List[Example]:
    """The German candidates as Examples whose predicted docs keep the gold POS and lemmas."""
    from ..corpora import convert

    docs = convert("chiasmus-de", data_dir, vocab=nlp.vocab).splits["all"]
    return [Example(input_doc(nlp.vocab, doc), doc) for doc in docs]


# German running text of the UD mirror: random inversions are sampled from GSD and the
# first half of LIT; the second half of LIT stays unseen (the running-text check).
GERMAN_SAMPLED = ("UD_German-GSD/de_gsd-ud-dev.conllu", "UD_German-GSD/de_gsd-ud-test.conllu")
GERMAN_LIT = "UD_German-LIT/de_lit-ud-test.conllu"


def german_running_text(ud_dir: Path, vocab) -> Tuple[List[Doc], List[Doc]]:
    """German treebank text in docs of 10 consecutive sentences (gold POS and lemmas).

    ud_dir (Path): the UD folder of the data mirror.
    RETURNS (Tuple[List[Doc], List[Doc]]): the docs random inversions are sampled from
        (GSD dev and test, the first half of LIT) and the held-out docs (the rest of LIT).
    """
    missing = [name for name in (*GERMAN_SAMPLED, GERMAN_LIT) if not (ud_dir / name).is_file()]
    if missing:
        raise ValueError(f"German running text: {', '.join(missing)} not found in {ud_dir}")
    sampled = running_text([ud_dir / name for name in GERMAN_SAMPLED], vocab)
    lit = running_text([ud_dir / GERMAN_LIT], vocab)
    half = len(lit) // 2
    return sampled + lit[:half], lit[half:]


def german_negatives(
    ud_dir: Path, settings: Dict[str, Any], n: int = 4000, seed: int = 0
) -> List[Example]:
    """``n`` random inversions of German running text (see ``german_running_text``),
    proposed by the config's suggester on gold POS and lemmas, as negatives."""
    sampled, _ = german_running_text(Path(ud_dir), spacy.blank("de").vocab)
    return sample_inversions(sampled, config_suggester(settings).suggest, n, seed)


def evaluate_german(
    data_dir: Path,
    settings: Optional[Dict[str, Any]] = None,
    n_folds: int = 5,
    seed: int = 0,
    progress: Optional[Callable[[str], None]] = None,
    seeds: Optional[Sequence[int]] = None,
    negatives_dir: Optional[Path] = None,
    n_negatives: int = 4000,
) -> Dict[str, Any]:
    """The German protocol: "full" and "fp_removed" cross-validation.

    data_dir (Path): the German chiasmus data (a directory or the JSON file).
    seeds (Optional[Sequence[int]]): fold seeds of a repeated CV (default: [seed]).
    negatives_dir (Optional[Path]): the UD folder of the mirror: add ``n_negatives``
        random inversions of German running text as negatives (``german_negatives``).
    RETURNS (Dict[str, Any]): the results of both settings and the settings used.
    """
    settings = settings or settings_from_config()
    nlp = spacy.blank("de")
    examples = german_examples(Path(data_dir), nlp)
    negatives: List[Example] = []
    if negatives_dir is not None:
        negatives = german_negatives(Path(negatives_dir), settings, n_negatives, seed)
        if progress is not None:
            progress(f"{len(negatives)} random inversions from {negatives_dir} as negatives")
    results: Dict[str, Any] = {"dataset": "chiasmus-de", "data": str(data_dir)}
    for name, positive, removed in (
        ("full", GERMAN_FULL, ()),
        ("fp_removed", GERMAN_FP_REMOVED, GERMAN_FP),
    ):
        if progress is not None:
            progress(f"German, {name}: positives {', '.join(positive)}")
        results[name] = cross_validate(
            examples, "de", positive, removed, settings, n_folds, seed, None, progress, seeds,
            negatives,
        )  # fmt: skip
    results["settings"] = settings
    return results
