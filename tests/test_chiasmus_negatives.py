"""Random inversions of running text as negatives for the German chiasmus scorer."""

import pytest
import spacy

from spacy_rhetoric.chiasmus.crossval import cross_validate, settings_from_config
from spacy_rhetoric.chiasmus.eval_german import (
    GERMAN_FULL,
    german_examples,
    german_negatives,
    german_running_text,
)
from spacy_rhetoric.chiasmus.negatives import (
    RANDOM_LABEL,
    running_text,
    running_text_summary,
    sample_inversions,
)
from spacy_rhetoric.chiasmus.spans import gold_candidates
from spacy_rhetoric.chiasmus.suggester import build_chiasmus_suggester_v2

CONLLU = """# newdoc id = a
# sent_id = 1
1	Der	der	DET	_	_	2	det	_	_
2	Mann	Mann	NOUN	_	_	3	nsubj	_	_
3	liebt	lieben	VERB	_	_	0	root	_	_
4	die	der	DET	_	_	5	det	_	_
5	Frau	Frau	NOUN	_	_	3	obj	_	SpaceAfter=No
6	.	.	PUNCT	_	_	3	punct	_	_

# sent_id = 2
1	Die	der	DET	_	_	2	det	_	_
2	Frau	Frau	NOUN	_	_	3	nsubj	_	_
3	liebt	lieben	VERB	_	_	0	root	_	_
4	den	der	DET	_	_	5	det	_	_
5	Mann	Mann	NOUN	_	_	3	obj	_	SpaceAfter=No
6	.	.	PUNCT	_	_	3	punct	_	_

# newdoc id = b
# sent_id = 3
1	Ein	ein	DET	_	_	2	det	_	_
2	Hund	Hund	NOUN	_	_	3	nsubj	_	_
3	bellt	bellen	VERB	_	_	0	root	_	SpaceAfter=No
4	.	.	PUNCT	_	_	3	punct	_	_

"""


def test_running_text_and_sampling(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU, encoding="utf8")
    docs = running_text([path], spacy.blank("de").vocab, n_sents=10)
    # two documents (never across a newdoc), sentence starts and gold tags kept
    assert [len(list(doc.sents)) for doc in docs] == [2, 1]
    assert docs[0][6].pos_ == "DET" and docs[0][7].lemma_ == "Frau"
    suggester = build_chiasmus_suggester_v2(allowed_pos=["NOUN", "VERB"])
    every = [tuple(map(int, row)) for row in suggester.suggest(docs[0]).indices]
    assert (1, 4, 7, 10) in every  # Mann Frau / Frau Mann across the two sentences
    examples = sample_inversions(docs, suggester.suggest, n=1000, seed=0)
    assert len(examples) == len(every)  # all of them, when fewer than n
    for eg in examples:
        ((positions, label),) = gold_candidates(eg.reference)
        assert label == RANDOM_LABEL
        # the doc holds the sentences the candidate spans, tagged as the reference
        assert [t.pos_ for t in eg.predicted] == [t.pos_ for t in eg.reference]
        # head-less dependency labels, like the annotated candidates; no tags or morphology
        assert eg.predicted.user_data["dep"] == eg.reference.user_data["dep"]
        assert "nsubj" in eg.predicted.user_data["dep"]
        assert not eg.predicted.has_annotation("TAG") and not eg.predicted.has_annotation("MORPH")
        assert eg.reference[positions[0]].is_sent_start or positions[0] > 0
    one = sample_inversions(docs, suggester.suggest, n=1, seed=3)
    assert len(one) == 1
    assert gold_candidates(one[0].reference) == gold_candidates(
        sample_inversions(docs, suggester.suggest, n=1, seed=3)[0].reference
    )


def test_running_text_summary():
    nlp = spacy.blank("en")
    nlp.add_pipe("chiasmus_finder", config={"review_per_1000": None})
    docs = [nlp("Fair is foul, and foul is fair. The cat saw the dog and the dog saw the cat.")]
    summary = running_text_summary(docs, threshold=0.5, top=3)
    assert summary["tokens"] == len(docs[0]) and summary["top"] == 3
    assert summary["above_threshold"] >= 1
    best = [c["words"] for c in summary["top_candidates"][:2]]
    assert ["Fair", "foul", "foul", "fair"] in best and ["cat", "dog", "dog", "cat"] in best
    scores = [c["score"] for c in summary["top_candidates"]]
    assert scores == sorted(scores, reverse=True)
    assert 0 <= summary["top_on_function_words"] <= 3


@pytest.mark.data
def test_german_random_negatives_one_fold(data_dir):
    settings = settings_from_config()
    sampled, held_out = german_running_text(data_dir("ud"), spacy.blank("de").vocab)
    assert len(sampled) > 100 and len(held_out) > 50
    negatives = german_negatives(data_dir("ud"), settings, n=200, seed=0)
    assert len(negatives) == 200
    examples = german_examples(data_dir("german-chiasmus"), spacy.blank("de"))
    changed = {**settings, "model": {**settings["model"], "feature_groups": ["D", "L"]}}
    result = cross_validate(
        examples, "de", GERMAN_FULL, settings=changed, folds=[0], negatives=negatives
    )
    assert result["n_candidates"] == 450 and result["n_random_negatives"] == 200
    assert set(result["with_random"]) == {"ours", "baseline", "rules"}
    assert 0.2 < result["with_random"]["ours"]["ap_mean"] <= 1.0
