"""Random inversions from running text, as extra negatives for a chiasmus scorer.

An annotated chiasmus set such as the German 450 holds the top of an earlier ranking:
a scorer trained on it alone has hardly seen the random inversions that dominate
running text (``des ... das ... das ... des``). Schneider et al. (2021) therefore added
4,000 inversions sampled from the corpus as negatives; we sample them the same way
from treebank sentences (gold POS and lemmas, like the annotated set's own), with the
suggester that prediction uses, so that training sees what prediction will propose.

Each sampled candidate becomes one Example whose doc holds the sentences the candidate
spans, labelled ``RANDOM_LABEL`` (a negative label) in the layout of
``spacy_rhetoric.corpora.chiasmus``.
"""

import random
from pathlib import Path
from typing import Callable, List, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..corpora.chiasmus import set_candidate
from ..corpora.conllu import read_conllu_docs
from .candidates import Candidates

RANDOM_LABEL = "random"


def running_text(paths: Sequence[Path], vocab: Vocab, n_sents: int = 10) -> List[Doc]:
    """Treebank sentences as running text: ``n_sents`` consecutive sentences of a file
    per doc (never across a ``# newdoc``), with their gold POS, lemmas and sentence
    starts.

    paths (Sequence[Path]): CoNLL-U files.
    vocab (Vocab): the vocab of the docs.
    n_sents (int): sentences per doc.
    RETURNS (List[Doc]): the docs, in file order.
    """
    docs: List[Doc] = []
    for path in paths:
        group: List[Doc] = []
        group_id = None
        for sentence in read_conllu_docs(path, vocab):
            doc_id = sentence.user_data["doc_id"]
            sentence.user_data.clear()  # per-sentence metadata does not merge
            if group and (len(group) == n_sents or doc_id != group_id):
                docs.append(Doc.from_docs(group))
                group = []
            group.append(sentence)
            group_id = doc_id
        if group:
            docs.append(Doc.from_docs(group))
    return docs


def candidate_doc(doc: Doc, positions: Sequence[int]) -> Tuple[Doc, List[int]]:
    """The sentences of ``doc`` that a candidate spans, as a doc of their own.

    RETURNS (Tuple[Doc, List[int]]): the doc and the candidate's positions in it.
    """
    start = doc[positions[0]].sent.start
    end = doc[positions[-1]].sent.end
    return doc[start:end].as_doc(), [int(i) - start for i in positions]


def sample_inversions(
    docs: Sequence[Doc],
    suggest: Callable[[Doc], Candidates],
    n: int,
    seed: int = 0,
) -> List[Example]:
    """Sample ``n`` of the candidates the suggester proposes in running text, uniformly
    without replacement, as negative Examples (one candidate each).

    docs (Sequence[Doc]): running text with POS and lemmas (see ``running_text``).
    suggest (Callable[[Doc], Candidates]): the suggester (e.g. ``ChiasmusSuggester.suggest``).
    n (int): how many to sample (all, if there are fewer).
    seed (int): the sampling seed.
    RETURNS (List[Example]): predicted docs with the reference's POS, lemmas and (in
        ``user_data["dep"]``) dependency labels; the reference holds the candidate
        labelled ``RANDOM_LABEL``.
    """
    found = [(i, row) for i, doc in enumerate(docs) for row in suggest(doc).indices]
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(found)), min(n, len(found))))
    examples = []
    for k in chosen:
        i, row = found[k]
        sentences, positions = candidate_doc(docs[i], row)
        # the input features the annotated German candidates come with: tokens, POS,
        # lemmas and head-less dependency labels (no tags or morphology; else their mere
        # presence would tell the random ones apart)
        predicted, reference = (_input_copy(sentences) for _ in range(2))
        set_candidate(reference, positions, RANDOM_LABEL, span_id=f"r{k}")
        examples.append(Example(predicted, reference))
    return examples


def _input_copy(doc: Doc) -> Doc:
    copy = Doc(
        doc.vocab,
        words=[t.text for t in doc],
        spaces=[bool(t.whitespace_) for t in doc],
        pos=[t.pos_ for t in doc],
        lemmas=[t.lemma_ for t in doc],
    )
    copy.user_data["dep"] = [t.dep_ for t in doc]
    return copy


def support_pos(doc: Doc, positions: Sequence[int]) -> List[str]:
    """The coarse POS of a candidate's supporting words (``PUNCT`` for punctuation)."""
    return [doc[int(i)].pos_ or ("PUNCT" if doc[int(i)].is_punct else "") for i in positions]


def running_text_summary(
    docs: Sequence[Doc],
    threshold: float,
    top: int = 20,
    function_pos: Sequence[str] = ("DET", "PRON", "PUNCT"),
) -> dict:
    """How a finder's output looks on running text: candidates above the threshold per
    1,000 tokens, and among the ``top`` best, how many rest on a word of ``function_pos``.

    docs (Sequence[Doc]): docs processed by a pipeline ending in a chiasmus_finder.
    threshold (float): the finder's threshold.
    RETURNS (dict): tokens, candidates, above the threshold (count and per 1,000
        tokens), and the top candidates with their words, POS and score.
    """
    tokens = sum(len(doc) for doc in docs)
    ranked = []
    n_candidates = 0
    for doc in docs:
        group = doc.spans.get("chiasmus_candidates", [])
        n_candidates += len(group)
        for span in group:
            support = span._.chiasmus_support
            positions = [word.start for word in support]
            ranked.append(
                (
                    float(span._.chiasmus_score),
                    span.text,
                    [word.text for word in support],
                    support_pos(doc, positions),
                )
            )
    scores = numpy.asarray([r[0] for r in ranked])
    ranked.sort(key=lambda r: -r[0])
    best = ranked[:top]
    on_function = sum(any(p in function_pos for p in r[3]) for r in best)
    above = int((scores >= threshold).sum()) if len(scores) else 0
    return {
        "tokens": tokens,
        "candidates": n_candidates,
        "above_threshold": above,
        "above_threshold_per_1000_tokens": 1000.0 * above / max(tokens, 1),
        "top": len(best),
        "top_on_function_words": on_function,
        "function_pos": list(function_pos),
        "top_candidates": [
            {"score": s, "text": text, "words": words, "pos": pos} for s, text, words, pos in best
        ],
    }
