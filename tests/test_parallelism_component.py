import pickle

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import ConfigValidationError, fix_random_seed

from spacy_rhetoric import get_parallelisms, render, set_parallelisms
from spacy_rhetoric.parallelism.component import SCORE_KEYS
from spacy_rhetoric.parallelism.evaluate import evaluate_parallelism, tune_outside_penalty
from spacy_rhetoric.parallelism.types import N_ALIGNMENT_FEATURES, predict_type

TEXTS = [
    "non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus .",
    "ex toto corde suo et ex tota anima sua et ex tota mente sua .",
    "discite ergo quod amare debetis , ut amare possitis .",
    "sermo habitus in regione tertia in basilica .",
]
GOLD = [
    [([(0, 4), (5, 9)], "synchystic", 1), ([(2, 4), (7, 9)], "synchystic", 2)],
    [([(0, 4), (5, 9), (10, 14)], "synchystic", 1)],
    [([(3, 5), (7, 9)], "chiastic", 1)],
    [],
]
SMALL_MODEL = {
    "hidden_width": 32,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 32,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 3,
        "subword_features": True,
    },
}


def make_examples(nlp):
    examples = []
    for text, gold in zip(TEXTS, GOLD):
        reference = nlp.make_doc(text)
        set_parallelisms(reference, gold)
        examples.append(Example(nlp.make_doc(text), reference))
    return examples


def make_nlp(**config):
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": SMALL_MODEL, **config})
    return nlp


def test_add_pipe_defaults():
    nlp = spacy.blank("la")
    tagger = nlp.add_pipe("parallelism_tagger")
    assert tagger.cfg["tagset"] == "biomje"
    assert tagger.cfg["link"] == "branch"
    assert tagger.cfg["spans_key"] == "parallelism"
    assert nlp.get_pipe_meta("parallelism_tagger").default_score_weights["parallelism_epm_f"] == 1.0


def test_bad_settings():
    nlp = spacy.blank("la")
    with pytest.raises(ValueError):
        nlp.add_pipe("parallelism_tagger", config={"tagset": "bioxyz"})
    with pytest.raises(ValueError):
        nlp.add_pipe("parallelism_tagger", name="t2", config={"n_strata": 0})


def test_no_labels_raises():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="no labels"):
        nlp.initialize()


def test_implicit_labels():
    nlp = make_nlp(n_strata=2)
    nlp.initialize(lambda: make_examples(nlp))
    labels = nlp.get_pipe("parallelism_tagger").labels
    assert labels[0] == "O"
    assert {"B", "B-1", "E", "M"} <= set(labels)


def test_explicit_labels():
    nlp = make_nlp()
    tagger = nlp.get_pipe("parallelism_tagger")
    tagger.initialize(lambda: make_examples(nlp), labels=["B", "B-1", "B-2", "I", "J", "E", "M"])
    assert tagger.labels == ("O", "B", "B-1", "B-2", "E", "I", "J", "M")
    assert tagger.label_data == list(tagger.labels)


def test_overfitting_IO(tmp_path):
    fix_random_seed(0)
    nlp = make_nlp(n_strata=2)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    first = None
    for _ in range(60):
        losses = {}
        nlp.update(examples, sgd=optimizer, losses=losses)
        first = losses["parallelism_tagger"] if first is None else first
    assert losses["parallelism_tagger"] < first / 10
    predicted = [nlp(text) for text in TEXTS]
    found = [[(p.offsets, p.stratum) for p in get_parallelisms(doc)] for doc in predicted]
    assert found[1] == [(((0, 4), (5, 9), (10, 14)), 1)]
    assert found[2] == [(((3, 5), (7, 9)), 1)]
    assert found[3] == []
    scores = nlp.evaluate(examples)
    for key in SCORE_KEYS:
        assert key in scores
    assert scores["parallelism_epm_r"] >= 0.75
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    again = [[(p.offsets, p.stratum) for p in get_parallelisms(doc)] for doc in loaded.pipe(TEXTS)]
    assert again == found
    # from_bytes on a fresh pipeline
    fresh = make_nlp(n_strata=2).from_bytes(nlp.to_bytes())
    assert [[p.offsets for p in get_parallelisms(d)] for d in fresh.pipe(TEXTS)] == [
        [p[0] for p in f] for f in found
    ]
    # pickling and two processes
    unpickled = pickle.loads(pickle.dumps(nlp))
    assert [[p.offsets for p in get_parallelisms(d)] for d in unpickled.pipe(TEXTS)] == [
        [p[0] for p in f] for f in found
    ]
    multi = list(loaded.pipe(TEXTS * 2, n_process=2, batch_size=2))
    assert [[p.offsets for p in get_parallelisms(d)] for d in multi[:4]] == [
        [p[0] for p in f] for f in found
    ]
    # outside_penalty trades precision for recall: more tokens end up in branches
    tagger = nlp.get_pipe("parallelism_tagger")
    covered = sum(len(s) for d in nlp.pipe(TEXTS) for s in d.spans["parallelism"])
    tagger.cfg["outside_penalty"] = 25.0
    boosted = sum(len(s) for d in nlp.pipe(TEXTS) for s in d.spans["parallelism"])
    assert boosted > covered
    tagger.cfg["outside_penalty"] = 0.0
    gold_path = tmp_path / "gold.spacy"
    DocBin(docs=[eg.reference for eg in examples]).to_disk(gold_path)
    tuned = tune_outside_penalty(nlp, gold_path, [0.0, 25.0])
    assert tuned["best"] == 0.0 and tagger.cfg["outside_penalty"] == 0.0
    assert (
        tuned["scores"]["0.0"]["parallelism_epm_f"] > tuned["scores"]["25.0"]["parallelism_epm_f"]
    )
    # typing of the gold parallelisms, apart from span detection
    typing = evaluate_parallelism(gold_path, nlp=nlp)["type_on_gold"]
    assert typing["n"] == 4 and typing["n_chiastic"] == 1 and typing["majority"] == 0.75
    weights = tagger.cfg["type_weights"]
    # the alignment typer, fitted on the typed training parallelisms (no encoder here)
    assert len(weights) == N_ALIGNMENT_FEATURES and tagger.cfg["typer"] == "alignment"
    assert tagger.cfg["type_layer"] is None
    typed = [
        (p.label, predict_type(weights, p.branches))
        for eg in examples
        for p in get_parallelisms(eg.reference)
    ]
    assert typing["accuracy"] == sum(g == t for g, t in typed) / 4
    # pipelines saved before the alignment typer (no "typer" in cfg, six weights)
    # keep typing with the inversion classifier
    old = {k: v for k, v in tagger.cfg.items() if k not in ("typer", "type_layer")}
    old["type_weights"] = [0.0, 0.0, 1.0, 0.0, 0.0, -0.5]
    tagger.cfg = old
    reference = examples[0].reference
    offsets = [p.offsets for p in get_parallelisms(reference)]
    assert tagger.type_parallelisms(reference, offsets) == [
        predict_type(old["type_weights"], [reference[s:e] for s, e in o], typer="inversion")
        for o in offsets
    ]
    html = render(predicted[1])
    assert "corde" in html and ("P1 synchystic" in html or "P1 chiastic" in html)


def test_empty_and_long_docs():
    fix_random_seed(0)
    nlp = make_nlp()
    nlp.initialize(lambda: make_examples(nlp))
    assert len(nlp("").spans["parallelism"]) == 0
    words = ("et in caelo et in terra ,".split()) * 120  # 840 tokens, > 512
    doc = nlp(Doc(nlp.vocab, words=words))
    assert all(0 <= s.start < s.end <= len(words) for s in doc.spans["parallelism"])
    docs = list(nlp.pipe(["", "amare debetis", ""]))
    assert [len(d.spans["parallelism"]) for d in docs][0] == 0


def test_mismatched_tokenization_aligns():
    fix_random_seed(0)
    nlp = make_nlp()
    reference = Doc(
        nlp.vocab,
        words=["amare", "debetis", ",", "ut", "amare", "possitis"],
        spaces=[True, False, True, True, True, False],
    )
    set_parallelisms(reference, [([(0, 2), (4, 6)], "synchystic", 1)])
    predicted = Doc(nlp.vocab, words=["ama", "re", "debetis", ",", "ut", "amare", "possitis"])
    example = Example(predicted, reference)
    tagger = nlp.get_pipe("parallelism_tagger")
    tagger.initialize(lambda: [example])
    rows = tagger._gold_tags(example)
    assert rows == [["B", "I", "E", "M", "M", "B-1", "E"]]


def test_overfitting_pairwise_links():
    fix_random_seed(0)
    model = {**SMALL_MODEL, "linker_width": 32, "attention_heads": 2}
    nlp = spacy.blank("la")
    nlp.add_pipe("parallelism_tagger", config={"model": model})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    tagger = nlp.get_pipe("parallelism_tagger")
    # structure tags only: links are chosen by the linker
    assert "B-*" in tagger.labels and not any(
        label.startswith("B-") and label != "B-*" for label in tagger.labels
    )
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    found = [[p.offsets for p in get_parallelisms(nlp(text))] for text in TEXTS]
    assert found[1] == [((0, 4), (5, 9), (10, 14))]
    assert found[2] == [((3, 5), (7, 9))]


def test_pairwise_links_follow_the_model():
    nlp = spacy.blank("la")
    plain = nlp.add_pipe("parallelism_tagger", config={"model": SMALL_MODEL})
    linked = nlp.add_pipe(
        "parallelism_tagger", name="linked", config={"model": {**SMALL_MODEL, "linker_width": 8}}
    )
    assert not plain.pairwise and linked.pairwise
    with pytest.raises(ConfigValidationError):  # the old second knob is gone
        spacy.blank("la").add_pipe("parallelism_tagger", config={"links": "pairwise"})


def test_spelling_reads_classical_text_as_the_model_was_trained(tmp_path):
    """With spelling "latin", nlp(text) on classical spelling (capitals, v, j) predicts
    what the respelled text gets; the doc keeps its own words; the setting survives
    to_disk/from_disk."""
    from spacy_rhetoric.parallelism.reading import respelled

    fix_random_seed(0)
    nlp = make_nlp(n_strata=2, spelling="latin")
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    classical = "Non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus ."
    folded = "non in fabricis parietibus , non in nitore marmorum , sed in hominibus fidelibus ."
    text = "Ex toto corde svo et ex tota anima sua et ex tota mente sua ."
    for raw, plain in ((classical, folded), (text, text.lower().replace("v", "u"))):
        doc = nlp(raw)
        assert doc.text == raw
        expected = [p.offsets for p in get_parallelisms(nlp(plain))]
        assert [p.offsets for p in get_parallelisms(doc)] == expected
    plain_doc = nlp.make_doc(folded)
    assert respelled(plain_doc, "latin") is plain_doc  # nothing to change: no copy
    assert respelled(plain_doc, "") is plain_doc
    nlp.to_disk(tmp_path)
    assert spacy.load(tmp_path).get_pipe("parallelism_tagger").cfg["spelling"] == "latin"
    with pytest.raises(ValueError, match="spelling"):
        make_nlp(spelling="greek")


def test_branches_never_begin_or_end_with_a_line_break():
    from spacy_rhetoric.parallelism.reading import tidy_branches

    text = "Fair is foul, and foul is fair:\nHover through the fog\n\nand filthy air."
    doc = spacy.blank("en")(text)
    assert [t.i for t in doc if t.is_space] == [9, 14]
    decoded = [
        (((0, 3), (4, 8), (9, 15)), 1),  # the third branch: "\nHover through the fog\n\n"
        (((9, 10), (14, 15)), 2),  # only line breaks: both branches go, so does it
        (((0, 3), (9, 10)), 2),  # one branch left: not a parallelism
    ]
    assert tidy_branches(doc, decoded) == [(((0, 3), (4, 8), (10, 14)), 1)]
    assert tidy_branches(doc, []) == []


def test_branches_that_are_not_words_are_dropped():
    """A separator line is not a branch: a branch needs min_word_share of its tokens to
    hold a letter or digit (in any script); at 0 every branch stays."""
    from spacy_rhetoric.parallelism.reading import tidy_branches

    doc = spacy.blank("en")("contact the sender . = = = = = * * * Lisa_resume.doc 2 3 .")
    # 0-3 "contact the sender" | 4-9 "= = = = =" | 9-13 "* * * Lisa_resume.doc"
    # 13-16 "2 3 ." (two digits of three tokens)
    decoded = [(((0, 3), (4, 9)), 1), (((0, 3), (9, 13)), 1), (((0, 3), (13, 16)), 1)]
    assert tidy_branches(doc, decoded, 0.5) == [(((0, 3), (13, 16)), 1)]
    assert tidy_branches(doc, decoded, 0.0) == decoded
    assert tidy_branches(doc, decoded, 1.0) == []
    # Chinese, one character a token: 我们爱祖国，—— holds 5 words in 8 tokens, ，——， none
    chinese = spacy.blank("zh")("我们爱祖国，——，我们爱人民")
    assert tidy_branches(chinese, [(((0, 8), (9, 14)), 1)], 0.5) == [(((0, 8), (9, 14)), 1)]
    assert tidy_branches(chinese, [(((0, 5), (5, 9)), 1)], 0.5) == []


def test_set_annotations_drops_separator_branches():
    """What the tagger writes to doc.spans: a decoded parallelism whose second branch is a
    separator line is not reported; with min_word_share = 0 it is."""
    from spacy_rhetoric.parallelism.tag_codec import encode_strata

    words = "the sender and the material = = = = = = the end".split()
    for share, expected in [(0.5, []), (0.0, [((0, 2), (5, 11))])]:
        nlp = spacy.blank("en")
        tagger = nlp.add_pipe("parallelism_tagger", config={"min_word_share": share})
        doc = Doc(nlp.vocab, words=words)
        rows = encode_strata([(((0, 2), (5, 11)), 1)], len(doc), tagger.scheme, 1)
        tagger.set_annotations([doc], [rows])
        assert [p.offsets for p in get_parallelisms(doc)] == expected


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_min_word_share_out_of_range_fails_in_one_line(share):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="min_word_share must be in"):
        nlp.add_pipe("parallelism_tagger", config={"min_word_share": share})


def test_min_word_share_is_read_from_the_config():
    nlp = spacy.blank("en")
    assert nlp.add_pipe("parallelism_tagger").min_word_share == 0.5
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("parallelism_tagger", config={"min_word_share": 0.0})
    assert tagger.min_word_share == 0.0


def test_parameter_averages_reach_the_torch_head():
    """With use_averages, spaCy evaluates and saves under nlp.use_params(averages): the
    torch head must take its averaged weights there (thinc's own key lookup misses them)
    and get its trained weights back afterwards."""
    import numpy
    from thinc.api import Adam

    fix_random_seed(0)
    nlp = make_nlp(model={**SMALL_MODEL, "attention_heads": 2})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01, use_averages=True)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    head = nlp.get_pipe("parallelism_tagger").model.get_ref("head").shims[0]
    trained = {k: v.detach().clone() for k, v in head._model.state_dict().items()}
    names = [name for name, _ in head._model.named_parameters()]
    averaged = {name: optimizer.averages[(head.id, name)] for name in names}
    assert averaged and not all(numpy.allclose(averaged[n], trained[n].numpy()) for n in averaged)
    with nlp.use_params(optimizer.averages):
        inside = head._model.state_dict()
        for name, value in averaged.items():
            assert numpy.allclose(inside[name].numpy(), value)
        buffers = set(trained) - set(averaged)
        assert all(inside[n].equal(trained[n]) for n in buffers)
    after = head._model.state_dict()
    assert all(after[n].equal(trained[n]) for n in trained)


def test_latin_v_spelling_reads_u_and_v_editions_alike():
    """Spelling "latin-v" gives consonantal u its v back: ASP's u-only text and a
    classical edition with v, j and capitals become the same words, so the model reads
    both alike; vowel u (qu, su, cui, fructus) stays u."""
    from spacy_rhetoric.corpora.latin import classical_latin
    from spacy_rhetoric.parallelism.reading import respelled

    nlp = spacy.blank("la")
    asp = nlp.make_doc("uos uidetis uerbum dei , nouum et uetus , quae uobis dico .")
    edition = nlp.make_doc("Vos videtis verbum Dei , novum et vetus , quae vobis dico .")
    read_asp, read_edition = respelled(asp, "latin-v"), respelled(edition, "latin-v")
    assert [t.text for t in read_asp] == [t.text for t in read_edition]
    assert read_asp.text == "vos videtis verbum dei , novum et vetus , quae vobis dico ."
    assert asp.text.startswith("uos")  # the doc itself is never changed
    assert [classical_latin(w) for w in ("Iustitia", "fructus", "cui", "suadeo")] == [
        "iustitia",
        "fructus",
        "cui",
        "suadeo",
    ]
    assert make_nlp(spelling="latin-v").get_pipe("parallelism_tagger").cfg["spelling"] == "latin-v"


def test_language_input_tells_languages_apart(tmp_path):
    """A head with ``languages`` reads each doc's stated language: the same words
    stated as Latin hold a parallelism and stated as Chinese none, which a head
    without the language input cannot both fit; the language survives respelling,
    windowing and saving, and any other language reads as unknown (zeros)."""
    from spacy_rhetoric.parallelism.features import N_FEATURES
    from spacy_rhetoric.parallelism.reading import respelled
    from spacy_rhetoric.parallelism.windows import window_doc

    fix_random_seed(0)
    model = {**SMALL_MODEL, "languages": ["la", "zh"], "language_dropout": 0.0}
    nlp = make_nlp(model=model)
    text, gold = TEXTS[1], GOLD[1]
    examples = []
    for language, parallelisms in (("la", gold), ("zh", [])):
        reference = nlp.make_doc(text)
        set_parallelisms(reference, parallelisms)
        reference.user_data["lang"] = language
        predicted = nlp.make_doc(text)
        predicted.user_data["lang"] = language
        examples.append(Example(predicted, reference))
    optimizer = nlp.initialize(lambda: examples)
    head = nlp.get_pipe("parallelism_tagger").model.get_ref("head")
    assert head.shims[0]._model.encoder.input_size == 32 + N_FEATURES + 2

    def found(pipeline, language):
        doc = pipeline.make_doc(text)
        if language:
            doc.user_data["lang"] = language
        return [p.offsets for p in get_parallelisms(pipeline(doc))]

    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    assert found(nlp, "la") == [((0, 4), (5, 9), (10, 14))]
    assert found(nlp, "zh") == []
    assert found(nlp, None) == found(nlp, "la")  # spacy.blank("la"): doc.lang_ is "la"
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert found(loaded, "la") == found(nlp, "la") and found(loaded, "zh") == []
    # evaluation on gold docs reads the language they state, or the one it is told
    gold_path = tmp_path / "gold.spacy"
    DocBin(store_user_data=True, docs=[eg.reference for eg in examples]).to_disk(gold_path)
    assert evaluate_parallelism(gold_path, nlp=nlp)["parallelism_epm_f"] == 1.0
    assert evaluate_parallelism(gold_path, nlp=nlp, language="zh")["parallelism_epm_r"] == 0.0
    # the stated language survives what the head reads
    doc = nlp.make_doc("Ex toto corde svo")
    doc.user_data["lang"] = "zh"
    assert respelled(doc, "latin").user_data["lang"] == "zh"
    assert window_doc(doc, (1, 3, 1, 3)).user_data["lang"] == "zh"
    with pytest.raises(ValueError, match="languages must be distinct"):
        make_nlp(model={**SMALL_MODEL, "languages": ["la", "la"]}).initialize(lambda: examples)
