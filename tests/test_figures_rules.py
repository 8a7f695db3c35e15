"""The candidate rules of figure_finder: each figure on handcrafted positives in Latin,
English, German and Chinese, near-misses it must not report, the series search against
brute force, and bounded time on degenerate input."""

import time

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

import spacy_rhetoric  # noqa: F401  (registers figure_finder)
from spacy_rhetoric.figures.candidates import MAX_MEMBERS, series
from spacy_rhetoric.figures.edges import MAX_STEP, edge_candidates
from spacy_rhetoric.figures.in_place import epizeuxis_candidates
from spacy_rhetoric.figures.segment import segment
from spacy_rhetoric.figures.sound import initial_sound
from spacy_rhetoric.figures.words import colon_words, doc_words

_NLP = {}


def blank(lang):
    if lang not in _NLP:
        nlp = spacy.blank(lang)
        nlp.add_pipe("figure_finder")
        _NLP[lang] = nlp
    return _NLP[lang]


def found(lang, text):
    """RETURNS: {(label, (support words...))} of the figures reported."""
    doc = blank(lang)(text)
    return {(s.label_, tuple(w.text for w in s._.figure_support)) for s in doc.spans["figures"]}


def labels(lang, text):
    return {label for label, _ in found(lang, text)}


POSITIVES = [
    # (lang, text, figure, support)
    (
        "la",
        "Nihil agis, nihil moliris, nihil cogitas, quod non ego non modo audiam sed etiam "
        "videam planeque sentiam.",
        "anaphora",
        ("Nihil", "nihil", "nihil"),
    ),
    (
        "en",
        "Blessed are the poor in spirit: for theirs is the kingdom of heaven. Blessed are they "
        "that mourn: for they shall be comforted. Blessed are the meek: for they shall inherit "
        "the earth.",
        "anaphora",
        ("Blessed are", "Blessed are", "Blessed are"),
    ),
    (
        "de",
        "Das Wasser rauscht', das Wasser schwoll, ein Fischer saß daran.",
        "anaphora",
        ("Das Wasser", "das Wasser"),
    ),
    ("zh", "我爱北京，我爱长城，我爱黄河。", "anaphora", ("我爱", "我爱", "我爱")),
    (
        "en",
        "that government of the people, by the people, for the people, shall not perish from "
        "the earth.",
        "epiphora",
        ("the people", "the people", "the people"),
    ),
    (
        "la",
        "Doletis tres exercitus populi Romani interfectos; interfecit Antonius. Desideratis "
        "clarissimos civis; eos quoque vobis eripuit Antonius. Auctoritas huius ordinis "
        "adflicta est; adflixit Antonius.",
        "epiphora",
        ("Antonius", "Antonius", "Antonius"),
    ),
    (
        "de",
        "Ihr wollt Frieden, sie wollen Frieden, wir alle wollen Frieden.",
        "epiphora",
        ("Frieden", "Frieden", "Frieden"),
    ),
    ("zh", "他不是为了钱，我也不是为了钱。", "epiphora", ("是为了钱", "是为了钱")),
    (
        "en",
        "Peace brings us together, peace keeps us together.",
        "symploce",
        ("Peace", "us together", "peace", "us together"),
    ),
    (
        "la",
        "Senatus haec intellegit, consul videt; hic tamen vivit. Vivit? immo vero etiam in "
        "senatum venit.",
        "anadiplosis",
        ("vivit", "Vivit"),
    ),
    (
        "de",
        "Wir suchen die Wahrheit, Wahrheit ist schwer.",
        "anadiplosis",
        ("Wahrheit", "Wahrheit"),
    ),
    (
        "en",
        "Suffering produces endurance, endurance produces character, and character produces hope.",
        "gradatio",
        ("endurance", "endurance", "character", "character"),
    ),
    (
        "zh",
        "名不正，则言不顺；言不顺，则事不成；事不成，则礼乐不兴。",
        "gradatio",
        ("言不顺", "言不顺", "事不成", "事不成"),
    ),  # multi-token spans on characters
    ("en", "Words, words, words.", "epizeuxis", ("Words", "words", "words")),
    ("zh", "盼望着，盼望着，东风来了。", "epizeuxis", ("盼望着", "盼望着")),
    ("de", "Krieg ist Krieg.", "ploce", ("Krieg", "Krieg")),
    (
        "la",
        "Vivis, et vivis non ad deponendam, sed ad confirmandam audaciam.",
        "ploce",
        ("Vivis", "vivis"),
    ),
    ("la", "Mortem morte vicit.", "polyptoton", ("Mortem", "morte")),
    ("de", "Der Mensch ist des Menschen Freund.", "polyptoton", ("Mensch", "Menschen")),
    ("en", "We have ships and men and money and stores.", "polysyndeton", ("and", "and", "and")),
    ("la", "Arma et viri et equi et naves perierunt.", "polysyndeton", ("et", "et", "et")),
    ("de", "Es regnet und stürmt und hagelt und schneit.", "polysyndeton", ("und", "und", "und")),
    ("la", "Veni, vidi, vici.", "asyndeton", ("Veni", "vidi", "vici")),
    ("en", "I came, I saw, I conquered.", "asyndeton", ("I", "I", "I")),
    ("la", "Veni, vidi, vici.", "alliteration", ("Veni", "vidi", "vici")),
    (
        "en",
        "Peter Piper picked a peck of pickled peppers.",
        "alliteration",
        # "Piper", capitalised inside the sentence, is a name: names do not alliterate
        ("Peter", "picked", "peck", "pickled", "peppers"),
    ),
    (
        "de",
        "Milch macht müde Männer munter.",
        "alliteration",
        ("Milch", "müde", "Männer", "munter"),
    ),
]


@pytest.mark.parametrize("lang,text,figure,support", POSITIVES,
                         ids=[f"{p[0]}-{p[2]}-{i}" for i, p in enumerate(POSITIVES)])  # fmt: skip
def test_handcrafted_positives(lang, text, figure, support):
    assert (figure, support) in found(lang, text)


NEAR_MISSES = [
    # ordinary prose with incidental repetition: nothing reported
    ("en", "I think so. I went home after work and I made dinner."),
    ("en", "The report was good. The meeting was long."),
    ("en", "He said that that was fine."),
    ("en", "The second stage of the study showed results."),
    ("en", "Bread and butter is nice."),
    ("en", "She bought apples, pears and plums at the market."),
    ("en", "The minutes were approved. The budget was discussed, and the meeting closed at noon."),
    ("de", "Das Protokoll wurde verlesen. Das Budget wurde besprochen."),
    ("de", "Ich ging nach Hause und aß. Dann ging ich schlafen."),
    (
        "la",
        "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, "
        "tertiam qui ipsorum lingua Celtae appellantur.",
    ),
    ("zh", "我们明天开会，然后我们去吃饭。"),
    ("zh", "他看看书，又看看报纸。"),
]


@pytest.mark.parametrize(
    "lang,text", NEAR_MISSES, ids=[f"{p[0]}-{i}" for i, p in enumerate(NEAR_MISSES)]
)
def test_near_misses_are_not_reported(lang, text):
    assert found(lang, text) == set()


def test_figures_explain_each_other():
    # "Words, words, words" is epizeuxis, not also an asyndeton or alliteration
    assert labels("en", "Words, words, words.") == {"epizeuxis"}
    # an anadiplosis is no epizeuxis; a gradatio replaces its anadiploses
    assert labels("en", "Suffering produces endurance, endurance produces character, and "
                        "character produces hope.") == {"gradatio"}  # fmt: skip
    # the whole repeated colon is epizeuxis, not symploce (zh)
    assert labels("zh", "盼望着，盼望着，东风来了。") == {"epizeuxis"}
    # the repeated anaphora word is no ploce
    assert "ploce" not in labels("la", "Nihil agis, nihil moliris, nihil cogitas.")


def test_chinese_reduplication_is_not_epizeuxis():
    doc = spacy.blank("zh")("他看看书")
    words = doc_words(doc)
    seg = segment(doc)
    assert (
        epizeuxis_candidates(doc, words, colon_words(words.is_word, seg.colon_of, len(seg))) == []
    )


def test_no_alliteration_or_polyptoton_for_chinese():
    nlp = blank("zh")
    doc = nlp("山山水水，声声慢慢，深深浅浅")
    assert not {"alliteration", "polyptoton"} & {s.label_ for s in doc.spans["figure_candidates"]}


@pytest.mark.parametrize(
    "lang,a,b,same",
    [
        ("la", "caesar", "quintus", True),  # c = qu = k
        ("la", "philosophus", "fama", True),  # ph = f
        ("la", "homo", "odium", True),  # initial h is silent
        ("la", "veni", "uici", True),  # u/v folded, consonantal before a vowel
        ("la", "urbs", "veni", False),
        ("en", "phone", "fish", True),
        ("en", "cat", "king", True),
        ("en", "cell", "sun", True),
        ("en", "knight", "night", True),
        ("en", "write", "rite", True),
        ("de", "stein", "sonne", False),  # st is a unit
        ("de", "schön", "sonne", False),
        ("de", "vater", "feuer", True),  # v = f
        ("de", "spiel", "sport", True),
    ],
)
def test_initial_sound(lang, a, b, same):
    assert (initial_sound(a, lang) == initial_sound(b, lang)) is same


# --- the series search against brute force -------------------------------------------


def brute_series(keys, max_step):
    """Connected groups of positions linked by equal keys at most max_step apart."""
    parent = list(range(len(keys)))

    def root(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i in range(len(keys)):
        for j in range(i + 1, min(len(keys), i + max_step + 1)):
            if keys[i] is not None and keys[i] == keys[j]:
                parent[root(j)] = root(i)
    groups = {}
    for i, key in enumerate(keys):
        if key is not None:
            groups.setdefault(root(i), []).append(i)
    return sorted((keys[g[0]], tuple(g)) for g in groups.values() if len(g) >= 2)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from("abc")), max_size=MAX_MEMBERS),
    st.integers(1, 4),
)
def test_series_equals_brute_force(keys, max_step):
    got = sorted((s.key, s.positions) for s in series(keys, max_step))
    assert got == brute_series(keys, max_step)
    for s in series(keys, max_step):
        assert s.count == len(s.positions) and s.last == s.positions[-1]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "a b", "b a", "c a"]), min_size=1, max_size=12))
def test_anaphora_on_random_cola_equals_brute_force(cola):
    """Random cola of one-letter words: the anaphora and symploce series are the
    connected groups of cola (of >= 2 words) with the same first (and last) word at most
    ``MAX_STEP`` cola apart; a series of identical cola is also anaphora (and epiphora)."""
    from spacy.tokens import Doc

    tokens = " , ".join(cola).split() + ["."]
    doc = Doc(spacy.blank("en").vocab, words=tokens)
    words = doc_words(doc)
    seg = segment(doc)
    cw = colon_words(words.is_word, seg.colon_of, len(seg))
    found = {
        (c.figure, tuple(s for s, _ in c.members))
        for c in edge_candidates(words, seg, cw, parts=False)
    }
    texts = [c.split() for c in cola]
    starts = seg.starts.tolist()
    first = [t[0] if len(t) >= 2 else None for t in texts]
    both = [(t[0], t[-1]) if len(t) >= 2 else None for t in texts]
    groups = brute_series(both, MAX_STEP)
    # a series of identical cola (a refrain) is anaphora and epiphora, not symploce
    refrain = {tuple(starts[i] for i in g) for _, g in groups if len({cola[i] for i in g}) == 1}
    symploce = {tuple(starts[i] for i in g) for _, g in groups}
    anaphora = {tuple(starts[i] for i in g) for _, g in brute_series(first, MAX_STEP)}
    anaphora = (anaphora - symploce) | refrain
    assert {m for f, m in found if f == "symploce"} == symploce
    assert {m for f, m in found if f == "anaphora"} == anaphora


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", ",", "z"]), max_size=30))
def test_epizeuxis_single_words_equal_brute_force(tokens):
    """Maximal runs of one word repeated immediately (commas between allowed)."""
    from spacy.tokens import Doc

    doc = Doc(spacy.blank("en").vocab, words=tokens or ["x"])
    words = doc_words(doc)
    seg = segment(doc)
    cw = colon_words(words.is_word, seg.colon_of, len(seg))
    got = {
        tuple(s for s, _ in c.members)
        for c in epizeuxis_candidates(doc, words, cw)
        if all(e - s == 1 for s, e in c.members)
    }
    positions = [i for i, t in enumerate(doc) if t.text != ","]
    expected, run = set(), []
    for p in positions + [None]:
        if p is not None and run and doc[run[-1]].text == doc[p].text:
            run.append(p)
            continue
        if len(run) >= 2:
            expected.add(tuple(run))
        run = [p] if p is not None else []
    assert expected <= got | {r for r in expected if len(r) < 2}
    assert {g for g in got if len(g) >= 2} >= expected


# --- degenerate input ----------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "la", "de", "zh"])
def test_one_word_repeated_100000_times(lang):
    word = "好" if lang == "zh" else "word "
    nlp = blank(lang)
    for text in (word * 100_000, (word.strip() + ", ") * 50_000):
        start = time.perf_counter()
        doc = nlp(text)
        assert time.perf_counter() - start < 10
        group = doc.spans["figures"]
        assert len(group) + len(doc.spans["figure_candidates"]) <= 10
        assert group.attrs["figure_found"] <= 10
        for span in group:
            assert len(span._.figure_support) <= 64 and len(span._.figure_members) <= MAX_MEMBERS


def test_max_candidates_caps_and_counts():
    nlp = spacy.blank("en")
    nlp.add_pipe("figure_finder", config={"max_candidates": 2})
    doc = nlp("Words, words, words. " * 1 + "Krieg ist Krieg. Tom und Tom. Veni, vidi, vici. " * 1)
    doc = nlp(" ".join(["alpha, alpha.", "beta, beta.", "gamma, gamma.", "delta, delta."]))
    group = doc.spans["figures"]
    assert len(group) == 2
    assert group.attrs["figure_dropped"] == 2


# --- candidate recall: rules added after the dev misses of 2026-11-28 ----------------


def proposed(lang, text, pos=None):
    """RETURNS: {(label, (support words...))} of every candidate (scored or not)."""
    nlp = blank(lang)
    doc = nlp.make_doc(text)
    if pos is not None:
        from spacy.tokens import Doc

        doc = Doc(nlp.vocab, words=[t.text for t in doc], pos=pos)
    candidates, _, _ = nlp.get_pipe("figure_finder").find(doc)
    return {(c.figure, tuple(doc[s:e].text for s, e in c.support)) for c in candidates}


def test_anaphora_inside_one_colon():
    """No punctuation splits the members: the repeated opening word does."""
    text = "caritas omnia suffert omnia credit omnia sperat omnia sustinet"
    assert ("anaphora", ("omnia",) * 4) in proposed("la", text)
    # unequal gaps (not parallel) or a conjunction (polysyndeton) are no inner anaphora
    assert not any(
        f == "anaphora" for f, _ in proposed("en", "the cat saw the big old dog near the")
    )
    assert not any(f == "anaphora" for f, _ in proposed("en", "cats and dogs and birds and fish"))


def test_anaphora_after_a_leading_conjunction_and_three_cola_apart():
    text = "A time to be born, and a time to die; a time to plant, and a time to reap."
    assert any(
        f == "anaphora" and len(s) == 4 and s[0] == "A time to" for f, s in proposed("en", text)
    )
    text = "Selig sind, die da arm sind; denn das Reich ist ihr. Selig sind, die da Leid tragen."
    assert ("anaphora", ("Selig", "Selig")) in proposed("de", text)


def test_epiphora_over_one_word_cola():
    text = "Quis eos postulavit? Appius. Quis produxit? Appius."
    assert ("epiphora", ("Appius", "Appius")) in proposed("la", text)


def test_refrain_is_anaphora_epiphora_and_symploce():
    text = "Ich denke dein, wenn der Mond scheint; Ich denke dein, wenn die Sonne sinkt."
    found = {f for f, _ in proposed("de", text)}
    assert {"anaphora", "epiphora", "symploce"} <= found


def test_chinese_single_character_anaphora():
    text = "积土成山，风雨兴焉；积水成渊，蛟龙生焉；积善成德，而神明自得。"
    assert any(f == "anaphora" and len(s) == 3 for f, s in proposed("zh", text))


def test_polysyndeton_opening_with_its_conjunction():
    assert any(
        f == "polysyndeton" and len(s) == 4
        for f, s in proposed("la", "neque mors neque vita neque angeli neque principatus")
    )
    assert any(
        f == "polysyndeton" and s[0] == "Und"
        for f, s in proposed("de", "Und es wallet und siedet und brauset und zischt.")
    )
    assert ("polysyndeton", ("tectumque", "laremque", "armaque")) in proposed(
        "la", "tectumque laremque armaque"
    )
    # two conjunctions opening two members are not three members
    assert not any(f == "polysyndeton" for f, _ in proposed("en", "and the dog, and the cat."))


def test_asyndeton_of_adjacent_verbs():
    assert ("asyndeton", ("abiit", "excessit", "erupit", "evasit")) in proposed(
        "la", "abiit excessit erupit evasit"
    )
    words = "he came saw conquered today".split()
    pos = ["PRON", "VERB", "VERB", "VERB", "NOUN"]
    assert ("asyndeton", ("came", "saw", "conquered")) in proposed("en", " ".join(words), pos)
    assert not any(f == "asyndeton" for f, _ in proposed("la", "urbem magnam vidit"))


def test_gradatio_over_leading_function_words():
    text = (
        "add to your faith virtue; and to virtue knowledge; And to knowledge temperance; "
        "and to temperance patience."
    )
    assert any(f == "gradatio" for f, _ in proposed("en", text))
    text = (
        "knowing that tribulation worketh patience; And patience, experience; and experience, hope."
    )
    assert any(f == "gradatio" for f, _ in proposed("en", text))


def test_free_order_link_but_not_parallel_edges():
    text = "sed non obii legationem, nec obii quidem legationem, sed non persuasi."
    assert any(f == "anadiplosis" and "obii" in s for f, s in proposed("la", text))
    # the same word at the same place of both cola is anaphora, not a link
    text = "Das Wasser rauscht', das Wasser schwoll."
    assert not any(f == "anadiplosis" for f, _ in proposed("de", text))


def test_immediate_repetition_after_a_comma_is_no_anadiplosis():
    found = proposed("en", "O Romeo, Romeo! wherefore art thou")
    assert not any(f == "anadiplosis" for f, _ in found)
    assert any(f == "epizeuxis" for f, _ in found)
    assert not any(
        f == "anadiplosis" for f, _ in proposed("la", "Vivis, et vivis non ad deponendam.")
    )


def test_weak_edge_words_across_sentences_are_no_anaphora():
    """An article or pronoun opening unrelated sentences is no anaphora; inside one
    sentence a weak word needs >= 3 members."""
    text = "Die FDP hat die Wahl verloren. Die FDP werde sich neu aufstellen."
    pos = ["DET", "PROPN", "AUX", "DET", "NOUN", "VERB", "PUNCT"]
    pos += ["DET", "PROPN", "AUX", "PRON", "ADV", "VERB", "PUNCT"]
    assert not any(f == "anaphora" for f, _ in proposed("de", text, pos))
    text = "I wrote to you yesterday. I hope you got it."
    assert not any(f == "anaphora" for f, _ in proposed("en", text))
    text = "Nihil agis, nihil moliris, nihil cogitas, quod non ego audiam."
    assert ("anaphora", ("Nihil", "nihil", "nihil")) in proposed("la", text)
    text = (
        "Blessed are the poor in spirit: for theirs is the kingdom of heaven. Blessed are they "
        "that mourn: for they shall be comforted. Blessed are the meek: for they shall inherit "
        "the earth."
    )
    assert ("anaphora", ("Blessed are",) * 3) in proposed("en", text)


def test_duplicated_lines_are_no_figure():
    text = "Wie kann ich das Konto löschen? Wie kann ich das Konto löschen?"
    assert not any(f in ("anaphora", "epiphora", "symploce") for f, _ in proposed("de", text))
    # a short refrain inside one sentence still is
    text = "Ich denke dein, wenn der Mond scheint; Ich denke dein, wenn die Sonne sinkt."
    assert {"anaphora", "epiphora", "symploce"} <= {f for f, _ in proposed("de", text)}


def test_chinese_lists_and_quantities_are_no_figures():
    text = "在法國、美國、巴西、比利時、義大利、新加坡等國家演出。"
    assert not any(f == "asyndeton" for f, _ in proposed("zh", text))
    text = "總面積11.61平方公里，人口323人。總面積38.28平方公里，人口696人。"
    assert not any(s and s[0] in ("平方公里", "人") for _, s in proposed("zh", text))
    text = "1960年3月選舉舞弊，1960年5月辭去職務。"
    assert not any(f == "anaphora" for f, _ in proposed("zh", text))
    # topic chaining over long expository cola is no 顶真
    text = "其餘人家均為租住戶，租住戶大都在八廓附近有自己的生意。"
    assert not any(f in ("anadiplosis", "gradatio") for f, _ in proposed("zh", text))
    text = "名不正，则言不顺；言不顺，则事不成；事不成，则礼乐不兴。"
    assert any(f == "gradatio" for f, _ in proposed("zh", text))


# --- rules widened on the dev misses (0.7.0) --------------------------------------------


def test_symploce_over_question_and_answer():
    """Ad Herennium 4.14.20: the question opens and the answer closes each exchange."""
    text = (
        "Qui sunt qui foedera saepe ruperunt? Carthaginienses. Qui sunt qui Italiam "
        "deformarunt? Carthaginienses."
    )
    assert ("symploce", ("Qui", "Carthaginienses", "Qui", "Carthaginienses")) in proposed(
        "la", text
    )
    # different answers: no complexio
    text = "Quis eos postulavit? Appius. Quis produxit? Clodius."
    assert not any(f == "symploce" for f, _ in proposed("la", text))


def test_weak_words_opening_adjacent_cola_of_one_period():
    """Function words at the heads of successive cola of one period are repetitio, even
    where a parser would start a sentence after the comma; a clause split off at a
    conjunction, or unequal members, are not."""
    pos = ["SCONJ", "VERB", "VERB", "PUNCT", "SCONJ", "ADJ", "DET", "AUX"]
    assert ("anaphora", ("dum", "dum")) in proposed(
        "la", "dum innupta manet , dum cara suis est", pos
    )
    text = "Sie sprach zu ihm, sie sang zu ihm; da war es geschehn."
    assert any(f == "symploce" for f, _ in proposed("de", text))
    text = "I am a decision maker, I can make good decisions about the money in this old house."
    assert not any(f == "anaphora" for f, _ in proposed("en", text))
    text = "I wrote to you yesterday. I hope you got it."
    assert not any(f == "anaphora" for f, _ in proposed("en", text))


def test_chinese_names_only_where_tagged_so_every_time():
    text = "出门看火伴，火伴皆惊忙。"
    doc_words_ = ["出门", "看", "火伴", "，", "火伴", "皆惊", "忙", "。"]
    mixed = ["VERB", "VERB", "VERB", "PUNCT", "PROPN", "NOUN", "NOUN", "PUNCT"]
    names = ["VERB", "VERB", "PROPN", "PUNCT", "PROPN", "NOUN", "NOUN", "PUNCT"]
    assert any(f == "anadiplosis" for f, _ in _tagged("zh", doc_words_, mixed))
    assert not any(f == "anadiplosis" for f, _ in _tagged("zh", doc_words_, names))
    assert text == "".join(doc_words_)


def _tagged(lang, words, pos):
    from spacy.tokens import Doc

    nlp = blank(lang)
    doc = Doc(nlp.vocab, words=words, spaces=[False] * len(words), pos=pos)
    candidates, _, _ = nlp.get_pipe("figure_finder").find(doc)
    return {(c.figure, tuple(doc[s:e].text for s, e in c.support)) for c in candidates}


def test_chinese_numeral_gradatio_but_no_single_numeral_link():
    words = ["道生", "一", "，", "一生", "二", "，", "二生", "三", "，", "三生", "万物", "。"]
    assert any(f == "gradatio" for f, _ in _tagged("zh", words, ["X"] * len(words)))
    words = ["我们", "有", "三", "，", "三", "个", "人", "走", "了", "。"]
    found = _tagged("zh", words, ["X"] * len(words))
    assert not any(f in ("anadiplosis", "gradatio") for f, _ in found)


def test_chinese_sentence_end_taken_up_by_the_next():
    text = "少年不识愁滋味，爱上层楼。爱上层楼，为赋新词强说愁。"
    found = proposed("zh", text)
    assert any(f == "anadiplosis" for f, _ in found)
    assert not any(f == "epizeuxis" for f, _ in found)
    # a repetition after a comma is epizeuxis (盼望着，盼望着)
    found = proposed("zh", "盼望着，盼望着，东风来了。")
    assert not any(f == "anadiplosis" for f, _ in found)


def test_longer_unit_repeated_after_a_link():
    """觚不觚，觚哉！觚哉！: the link 觚 does not hide the repeated 觚哉."""
    assert ("epizeuxis", ("觚哉", "觚哉")) in {
        (f, tuple("".join(s.split()) for s in sup))
        for f, sup in _joined("zh", "觚不觚，觚哉！觚哉！")
    }


def _joined(lang, text):
    nlp = blank(lang)
    doc = nlp.make_doc(text)
    candidates, _, _ = nlp.get_pipe("figure_finder").find(doc)
    return {(c.figure, tuple(doc[s:e].text for s, e in c.support)) for c in candidates}


def test_epanalepsis_is_ploce():
    """A unit opening a colon returns at its end, or at the end of a later colon of the
    sentence (Peacham's echo sound)."""
    found = proposed("en", "Nothing will come of nothing: speak again.")
    assert ("ploce", ("Nothing", "nothing")) in found
    found = proposed("en", "To be, or not to be: that is the question.")
    assert ("ploce", ("To be", "to be")) in found
    pos = ["DET", "NOUN", "VERB", "DET", "NOUN", "PUNCT"]
    assert not any(f == "ploce" for f, _ in proposed("en", "the dog bit the cat .", pos))
    # across sentences: no return
    assert not any(f == "ploce" for f, _ in proposed("en", "Nothing happened. He saw nothing."))


def test_polyptoton_three_cola_apart():
    from spacy.tokens import Doc

    def run(words):
        nlp = blank("la")
        lemmas = ["occido" if w.startswith("occid") else w for w in words]
        pos = ["PUNCT" if w in ",:" else "VERB" for w in words]
        doc = Doc(nlp.vocab, words=words, pos=pos, lemmas=lemmas)
        candidates, _, _ = nlp.get_pipe("figure_finder").find(doc)
        return {(c.figure, tuple(doc[s:e].text for s, e in c.support)) for c in candidates}

    words = "soles occidere , et redire possunt : nobis , cum semel occidit lux".split()
    assert ("polyptoton", ("occidere", "occidit")) in run(words)
    words = "soles occidere , et redire , possunt : nobis , cum semel occidit lux".split()
    assert ("polyptoton", ("occidere", "occidit")) not in run(words)


def test_names_do_not_alliterate():
    from spacy.tokens import Doc

    from spacy_rhetoric.figures.sound import alliteration_candidates

    words = ["P.", "Sulla", "et", "P.", "Autronius", "sederunt", "superbi", "saepe", "."]
    pos = ["PROPN", "PROPN", "CCONJ", "PROPN", "PROPN", "VERB", "ADJ", "ADV", "PUNCT"]

    def run(pos, words=words, lang="la"):
        nlp = blank(lang)
        doc = Doc(nlp.vocab, words=words, pos=pos)
        w = doc_words(doc)
        seg = segment(doc)
        cw = colon_words(w.is_word, seg.colon_of, len(seg))
        return [
            tuple(doc[s:e].text for s, e in c.support)
            for c in alliteration_candidates(w, seg, cw, doc)
        ]

    assert ("sederunt", "superbi", "saepe") in run(pos)
    assert not any("Sulla" in s for s in run(pos))
    words = ["Sulla", "Sestius", "sederunt", "saepe", "."]
    pos = ["PROPN", "PROPN", "VERB", "ADV", "PUNCT"]
    assert run(pos, words) == []  # two alliterating words are left once names are out
    as_nouns = ["NOUN" if p == "PROPN" else p for p in pos]
    # Latin: a capital inside the sentence marks a name even where the tagger says NOUN
    assert ("Sulla", "sederunt", "saepe") in run(as_nouns, words)
    assert not any("Sestius" in s for s in run(as_nouns, words))
    # English: the tags decide (a capitalised NOUN inside the sentence still counts)
    words = ["Seven", "Swans", "sat", "silently", "."]
    assert ("Seven", "Swans", "sat", "silently") in run(
        ["NUM", "NOUN", "VERB", "ADV", "PUNCT"], words, "en"
    )
    # untagged: a capital inside the sentence is a name, the sentence's first word is not
    words = ["Peter", "met", "Paul", "and", "Pam", "in", "Paris", "."]
    assert run(None, words, "en") == []
    words = ["Peter", "picked", "pickled", "peppers", "."]
    assert ("Peter", "picked", "pickled", "peppers") in run(None, words, "en")


def _repetitions(lang, words, pos=None):
    """{(figure, support words)} of every repetition candidate of a (tagged) doc."""
    from spacy.tokens import Doc

    from spacy_rhetoric.figures.repetition import repetition_candidates

    doc = Doc(blank(lang).vocab, words=words, pos=pos)
    w = doc_words(doc)
    seg = segment(doc)
    cw = colon_words(w.is_word, seg.colon_of, len(seg))
    return {
        (c.figure, tuple(doc[s:e].text for s, e in c.support))
        for c in repetition_candidates(doc, w, seg, cw)
    }


def test_articles_alone_make_no_edge_figure():
    # a list whose items open with an article is no anaphora
    words = (
        "a drop in rates , a rise in prices , an increase in costs , and a fall in sales .".split()
    )
    assert not any(f in ("anaphora", "epiphora", "symploce") for f, _ in _repetitions("en", words))
    words = "Der Witz ist wie einer , der nach der Regel handelt .".split()
    assert not any(f == "anaphora" for f, _ in _repetitions("de", words))
    # with a second shared word it is one ("a time to be born, a time to die")
    words = "a time to be born , a time to die , a time to plant .".split()
    assert any(f == "anaphora" and s[0].startswith("a time") for f, s in _repetitions("en", words))


def test_a_pronoun_after_an_auxiliary_is_no_ploce():
    tagged = (
        "They/PRON really/ADV are/AUX milking/VERB the/DET angle/NOUN ,/PUNCT "
        "aren't/AUX they/PRON ?/PUNCT"
    )
    words, pos = zip(*(t.rsplit("/", 1) for t in tagged.split()))
    assert not any(f == "ploce" for f, _ in _repetitions("en", list(words), list(pos)))
    # untagged, the auxiliary is known by its form
    words = "There have no business being there , says one .".split()
    assert not any(f == "ploce" for f, _ in _repetitions("en", words))
    words = "Nothing will come of nothing .".split()
    assert ("ploce", ("Nothing", "nothing")) in _repetitions("en", words)


def test_accidental_doublings_are_no_epizeuxis():
    words = "Deteriorating security Security problems are not new .".split()
    assert not any(f == "epizeuxis" for f, _ in _repetitions("en", words))
    tagged = "the/DET coalition/NOUN ,/PUNCT MMA/PROPN ./PUNCT MMA/PROPN also/ADV won/VERB ./PUNCT"
    words, pos = zip(*(t.rsplit("/", 1) for t in tagged.split()))
    assert not any(f == "epizeuxis" for f, _ in _repetitions("en", list(words), list(pos)))
    # a deliberate doubling over a sentence end, and one with punctuation, stay
    tagged = "He/PRON was/AUX drinking/VERB ./PUNCT He/PRON was/AUX drinking/VERB hard/ADV ./PUNCT"
    words, pos = zip(*(t.rsplit("/", 1) for t in tagged.split()))
    assert any(f == "epizeuxis" for f, _ in _repetitions("en", list(words), list(pos)))
    assert ("epizeuxis", ("Words", "words", "words")) in _repetitions(
        "en", "Words , words , words .".split()
    )
    # a sentence's first word doubled keeps its epizeuxis ("Me me, adsum qui feci")
    assert ("epizeuxis", ("Me", "me")) in _repetitions("la", "Me me , adsum qui feci .".split())


def test_text_artifacts_are_no_figures():
    # a name line doubled (e-mail signatures) is no epizeuxis; "O Romeo, Romeo" is
    assert not any(f == "epizeuxis" for f, _ in _repetitions("en", "Dale Dale ,".split()))
    words = "Sara Shackleton Sara Shackleton".split()
    assert not any(f == "epizeuxis" for f, _ in _repetitions("en", words))
    assert ("epizeuxis", ("Romeo", "Romeo")) in _repetitions("en", "O Romeo , Romeo !".split())
    # phone lists and schedules: a number in every member
    words = "Phone : ( 713 ) 345-9945 Fax : ( 713 ) 646-8420 Cell : ( 713 ) 555-0101".split()
    assert not any(f == "anaphora" for f, _ in _repetitions("en", words))
    # file names and addresses
    words = "Nancy - ENRON.XLS << File : ENRON.XLS >> - gss.xls << File : gss.xls >>".split()
    assert not _repetitions("en", words)


def test_anaphora_of_phrases_across_a_mark():
    """Phrases opening alike across a comma inside one sentence, the first not opening
    its colon ("tam uelociter, tam rapide"); a last word taken up is anadiplosis."""
    text = "Quod haec tam uelociter, tam rapide dati nobis temporis spatia decurrant."
    assert ("anaphora", ("tam", "tam")) in proposed("la", text)
    text = "Er war so voll, so warm, so ruhig."
    assert ("anaphora", ("so", "so", "so")) in proposed("de", text)
    text = "Suffering produces endurance, endurance produces character."
    assert not any(f == "anaphora" for f, _ in proposed("en", text))
    text = "We went to the market, and the shop was closed."
    assert not any(f == "anaphora" for f, _ in proposed("en", text))


def test_anaphora_up_to_the_ending_and_the_enclitic():
    """Latin and German openings compare words up to their ending: agreement forms and a
    Latin -que are one word ("nullus gemitus, nulla vox"; "quoniam ..., quoniamque
    ..."); English compares forms."""
    text = "Nullus gemitus, nulla vox, nullum verbum audiebatur."
    assert ("anaphora", ("Nullus", "nulla", "nullum")) in proposed("la", text)
    text = "Quoniam pecuniam invasit, quoniamque vita obstat, quoniam timet."
    assert ("anaphora", ("Quoniam", "quoniamque", "quoniam")) in proposed("la", text)
    text = "Keinen Vertrag, keinen Frieden, keine Gnade."
    assert ("anaphora", ("Keinen", "keinen", "keine")) in proposed("de", text)


def test_members_of_a_weak_series_that_share_more():
    """A series on a weak word across sentences is no anaphora, but its members that
    share a content word too, or that stand in one sentence, are."""
    text = (
        "I believe this the strongest Government on earth. I believe it the only one where "
        "every man would fly to the law. I trust not."
    )
    assert ("anaphora", ("I believe", "I believe")) in proposed("en", text)
    text = (
        "We have done everything that could be done. We have petitioned; we have "
        "remonstrated; we have supplicated."
    )
    assert ("anaphora", ("We have", "we have", "we have")) in proposed("en", text)


def test_related_forms_outside_latin_take_a_suffix_not_a_word():
    from spacy_rhetoric.figures.in_place import related_forms

    for a, b in [("nation", "national"), ("extend", "extension"), ("schuld", "schuldig")]:
        assert related_forms(a, b, "en") and related_forms(b, a, "de")
    for a, b in [
        ("rest", "restaurant"),
        ("location", "local"),
        ("wüste", "wüstengrenzen"),
        ("produkten", "produktivitätswerkzeuge"),
    ]:
        assert not related_forms(a, b, "en") and not related_forms(a, b, "de")
    # Latin keeps the looser rule (superlatives, derivatives with long endings)
    assert related_forms("indigna", "indignissimum", "la")
    assert not related_forms("indigna", "indignissimum", "en")


def _parsed(words, heads, deps, pos=None, morphs=None):
    from spacy.tokens import Doc

    nlp = blank("de")
    doc = Doc(nlp.vocab, words=words, heads=heads, deps=deps, pos=pos, morphs=morphs)
    candidates, _, _ = nlp.get_pipe("figure_finder").find(doc)
    return {(c.figure, tuple(doc[s:e].text for s, e in c.support)) for c in candidates}


def test_polysyndeton_needs_one_coordination_where_parsed():
    # "bemerkenswerte und liebevolle und wunderbare Frau": each conjunct of the first
    words = "eine bemerkenswerte und liebevolle und wunderbare Frau".split()
    heads = [6, 6, 3, 1, 5, 1, 6]
    deps = ["det", "amod", "cc", "conj", "cc", "conj", "ROOT"]
    assert any(f == "polysyndeton" for f, _ in _parsed(words, heads, deps))
    # "zwischen ihm und Linares und der Abbruch": two coordinations, no polysyndeton
    words = "der Streit zwischen ihm und Linares und der Abbruch endeten".split()
    heads = [1, 9, 3, 1, 5, 3, 8, 8, 1, 9]
    deps = ["det", "nsubj", "case", "nmod", "cc", "conj", "cc", "det", "conj", "ROOT"]
    assert not any(f == "polysyndeton" for f, _ in _parsed(words, heads, deps))


def test_asyndeton_stops_at_relative_clauses_and_closed_lists():
    # a syndetic list of short items is no asyndeton
    text = "Die Flüsse fließen aus, wie der Rhein, die Rhone, der Inn, der Tessin und der Po."
    assert not any(f == "asyndeton" for f, _ in proposed("de", text))
    # a relative pronoun opens no member ...
    words = "Die Briefe , die alt sind , enthalten Briefe , die Treue schwören .".split()
    morphs = [""] * len(words)
    morphs[3] = morphs[10] = "PronType=Dem,Rel"
    heads = [0] * len(words)  # one sentence
    deps = ["ROOT"] + ["dep"] * (len(words) - 1)
    assert not any(f == "asyndeton" for f, _ in _parsed(words, heads, deps, morphs=morphs))
    # ... unless a series of them opens the cola ("die ..., die ..., die ...")
    words = "Sie , die Kleider tragen , die Kutschen fahren , die Logen sitzen .".split()
    morphs = ["PronType=Dem,Rel" if w == "die" else "" for w in words]
    heads = [0] * len(words)
    deps = ["ROOT"] + ["dep"] * (len(words) - 1)
    assert any(f == "asyndeton" for f, _ in _parsed(words, heads, deps, morphs=morphs))
    # the series of clauses stays an asyndeton, a conjunction inside a longer member too
    assert any(
        f == "asyndeton"
        for f, _ in proposed("en", "We shall pay any price, bear any burden, meet any hardship.")
    )
