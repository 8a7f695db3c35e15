"""Judge figure_finder's reports on held-out running text by hand, blind to the scores.

The gold set says whether the figures the handbooks quote are found; a rate of reports
per 1,000 tokens of running text says how many there are, not whether they are right. A
reader can. The target (issue 59): right or partly for >= 70 % of the judged reports of
each language, with >= 10 reports judged per language. Two steps:

1. ``sheet``: run each language's base pipeline (``la_rhetoric_base``,
   ``de_rhetoric_base``, ``en_rhetoric_base``, ``zh_rhetoric_base``) and a
   ``figure_finder`` with its default settings (the packaged scorer and its thresholds)
   over the running text that the figures evaluation holds out (never used to fit,
   calibrate or choose: UD English-EWT test, UD German-GSD test, UD Chinese-GSD test, the
   held-out Tesserae texts; ``spacy_rhetoric.figures.calibrate.running_parts``), keep
   every report (``doc.spans["figures"]``), sample at most ``--per-lang`` per language
   with a seeded RNG and write into ``--out``: ``sheet.md`` (the items in random order:
   id, language, figure with its one-line definition, the sentence(s) with the instance
   in [[ ]] and its support words in **bold**; no score, no model), ``key.json`` (id ->
   language, label, text, score, source doc; not read while judging), ``labels.json``
   (id -> "", to fill) and ``README.md`` (the protocol):

       python benchmarks/figures_judge.py sheet --lang la,de,en,zh --data DATA \\
           --tokens 25000 --per-lang 30 --seed 0 --out benchmarks/data/figures-judged

   ``--texts fresh`` reads instead running text that neither the calibration, the
   held-out rate nor the first judged sample read (that sample's errors changed the
   rules, so a second one needs other text): UD English-EWT train, UD German-LIT test
   (Schlegel, Novalis), three other Cicero texts (``FRESH_LATIN``) and the PSE-I test
   essays (``corpus/pse/test.spacy``); the key and README.md name the source.

   ``--texts speeches`` (Latin, English, German) reads argued, spoken prose that no step
   of the package reads (not the rhetoric corpus, the figures calibration or held-out
   text, an earlier judged sample, a gold set, the chiasmus candidates or the intertext
   pools), from git mirrors of its public repositories (``--mirror DIR``, one
   ``DIR/<owner>+<name>/repo`` per repository) at the commits the rhetoric corpus was cut
   from: the US inaugural addresses 1869-1909 (``SPEECH_ENGLISH``), Livy books 2 and 3
   (``SPEECH_LATIN``), Lessing's *Minna von Barnhelm* and Goethe's *Egmont*
   (``SPEECH_GERMAN``); the key and README.md name each file with its commit, blob and
   licence. ``--figures`` keeps the reports of the named figures only (``figure_finder``
   still runs at its default settings); a figure with a target of its own
   (``FIGURE_TARGETS``) sets the sample's target:

       python benchmarks/figures_judge.py sheet --lang en,la,de --data DATA \
           --mirror MIRROR --texts speeches --figures antithesis --tokens 25000 \
           --per-lang 30 --seed 0 --out benchmarks/data/figures-judged-antithesis

   ``--texts speeches-2`` (Latin and English) reads other such speeches, for a second
   sample after the first one's errors changed the rules: the US inaugural addresses
   1913-1937 without Roosevelt's first (``SPEECH_2_ENGLISH``) and Livy books 4 and 5
   (``SPEECH_2_LATIN``), from the same mirrors and commits.

2. The reader fills ``labels.json`` with ``right``, ``partly`` or ``wrong`` per item,
   reading the sheet only (the criterion is in the folder's README.md). ``score`` joins
   the labels to the key:

       python benchmarks/figures_judge.py score --dir benchmarks/data/figures-judged \\
           --output benchmarks/results/figures_judged.json

Per language and pooled: reports judged, right / partly / wrong, the right-or-partly
share, whether the target is met (the sample's own, written into its key), and the same
counts per figure.
"""

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

LABELS = ("right", "partly", "wrong")
LANGS = ("la", "de", "en", "zh")
LANGUAGE_NAMES = {"la": "Latin", "de": "German", "en": "English", "zh": "Chinese"}
# issue 65 (the corpus-calibrated scorer of 0.8.0); the budget-calibrated scorer of
# 0.7.0 was held to 0.7
TARGET_SHARE = 0.6
TARGET_REPORTS = 10
DATE = "2026-11-29"
# one line per figure_finder label, shown on the sheet
DEFINITIONS = {
    "anaphora": "the same word(s) open successive clauses or phrases",
    "epiphora": "the same word(s) close successive clauses or phrases",
    "symploce": "successive clauses share both their opening and their closing word(s)",
    "anadiplosis": "the last word(s) of one clause or phrase open the next (顶真)",
    "gradatio": "a chain of anadiploses: the end of each clause opens the next, step by "
    "step (climax, 顶真)",
    "epizeuxis": "a word or short phrase repeated at once, nothing but punctuation between "
    "(反复, immediate)",
    "ploce": "a word repeated after a short gap in the same or the next clause (diacope, "
    "反复 with a gap)",
    "polyptoton": "one word repeated in different grammatical forms (same lemma, different form)",
    "polysyndeton": "three or more members joined by a conjunction repeated where one would do",
    "asyndeton": "three or more clauses or words in a series with no conjunction",
    "alliteration": "three or more nearby words beginning with the same sound",
    # the figures of thought: the first words of their entries in docs/annotation.md
    "antithesis": "opposed ideas set against each other in parallel or corrective cola",
    "rhetorical_question": "a direct question in the speaker's running discourse that does "
    "not ask for information: its answer is obvious or implied (erotema), or the speaker "
    "answers it himself at once (hypophora)",
}
# a figure judged on its own against a target of its own (the issue of the 0.9.0
# figures of thought: 30 antithesis reports per language, >= 70 % right or partly);
# a sample of several figures takes the strictest of theirs and the default
FIGURE_TARGETS = {"antithesis": {"right_or_partly": 0.7, "reports": 30}}
# what the judge reads besides the definition, from the figure's entry in
# docs/annotation.md (its shapes and counter-examples)
FIGURE_CRITERIA = {
    "antithesis": 'an antithesis is `right` when it is (1) a corrective "not X but Y" '
    'and its kin (*non ... sed*, *nicht ... sondern*, "rather than") where X and Y are '
    "opposed or incompatible, or (2) opposed words in matching positions of two parallel "
    "cola (antonyms or contextual opposites: rich/poor, war/peace, we/they when they are "
    'set against each other); `wrong`: "not only ... but also" (additive: no '
    'opposition), a negation with no counterpart ("I do not know"), a concession '
    'without opposed terms, a comparison ("more than", "rather" as degree), two '
    "differing items of a list, a contrast a reader must reconstruct from the whole "
    "argument rather than read off two matching cola",
    "rhetorical_question": "a rhetorical question is `right` when its answer is obvious "
    "or implied, or the speaker answers it himself at once (indignant and exclamatory "
    "questions count); `wrong`: a question to another character that asks for an answer "
    "and gets one from him (drama), an indirect question, a question quoted as someone "
    "else's real question, a question mark the edition puts after an exclamation that is "
    "no question",
}


def parse_langs(spec: str) -> List[str]:
    """RAISES ValueError: an empty list or a language without held-out running text."""
    langs = [lang.strip() for lang in spec.split(",") if lang.strip()]
    bad = [lang for lang in langs if lang not in LANGS]
    if not langs or bad:
        raise ValueError(
            f"--lang takes a comma-separated subset of {','.join(LANGS)}, got {spec!r}"
        )
    return list(dict.fromkeys(langs))


def parse_figures(spec: str) -> List[str]:
    """The figures of ``--figures`` (empty: every figure).

    RAISES ValueError: a figure the sheet cannot define.
    """
    figures = [f.strip() for f in spec.split(",") if f.strip()]
    bad = [f for f in figures if f not in DEFINITIONS]
    if bad:
        raise ValueError(
            f"--figures takes a comma-separated subset of {','.join(DEFINITIONS)}, got "
            f"{', '.join(map(repr, bad))}"
        )
    return list(dict.fromkeys(figures))


def sample_target(figures: Sequence[str] = ()) -> Dict[str, Any]:
    """The target of a sample of ``figures`` (empty: every figure): the strictest of the
    default and the targets of its figures (``FIGURE_TARGETS``)."""
    targets = [{"right_or_partly": TARGET_SHARE, "reports": TARGET_REPORTS}]
    targets += [FIGURE_TARGETS[f] for f in figures if f in FIGURE_TARGETS]
    return {
        "right_or_partly": max(t["right_or_partly"] for t in targets),
        "reports": max(t["reports"] for t in targets),
    }


def held_out_texts(lang: str, data_dir: Path) -> List[Tuple[str, str]]:
    """The held-out running text of a language, as the figures evaluation reads it.

    RETURNS (List[Tuple[str, str]]): (source doc, text) in order; a treebank doc is ten
    consecutive sentences, a Latin doc a chunk of about 200 words.
    """
    from spacy_rhetoric.figures import calibrate

    if lang == "la":
        out = []
        for name in calibrate.LATIN_HELD_OUT:
            chunks, _ = calibrate.latin_texts(data_dir, [name], calibrate.LATIN_TOKENS)
            out += [(f"Tesserae {name} chunk {i}", text) for i, text in enumerate(chunks)]
        return out
    files = {"en": calibrate.ENGLISH, "de": calibrate.GERMAN, "zh": calibrate.CHINESE}[lang]
    held = Path(data_dir) / files[1]
    texts, _ = calibrate.treebank_texts(held, "" if lang == "zh" else " ")
    return [(f"{held.name} doc {i}", text) for i, text in enumerate(texts)]


# --texts fresh: running text that neither the calibration, the held-out rate nor the
# first judged sample read (a second sample, after the first one's errors changed rules)
TEXT_SOURCES = ("held-out", "fresh", "third", "conllu", "speeches", "speeches-2")
FRESH_ENGLISH = "ud/UD_English-EWT/en_ewt-ud-train.conllu"
FRESH_GERMAN = "ud/UD_German-LIT/de_lit-ud-test.conllu"
FRESH_CHINESE = "corpus/pse/test.spacy"  # in the repository, not the data mirror
# Cicero prose in neither calibrate.LATIN_CALIBRATION, calibrate.LATIN_HELD_OUT nor the
# figures gold set's sources (the mirror holds no Livy or Seneca)
FRESH_LATIN = ("cicero.pro_sulla", "cicero.pro_plancio", "cicero.de_senectute")
# --texts third (Latin and English): the fresh samples' errors (Latin alliteration on
# names; English tag questions, article lists, doubled headings) changed the rules
# again, so a third sample reads text no step has read: other Cicero, and the EWT train
# docs after the ones the fresh samples read
THIRD_LATIN = ("cicero.pro_murena", "cicero.pro_m_caelio", "cicero.in_l_pisonem")
THIRD_ENGLISH_FROM_DOC = 124  # the fresh samples read en_ewt-ud-train docs 0-123
FRESH_DESCRIPTION = {
    "en": "UD English-EWT train (en_ewt-ud-train.conllu; docs of ten sentences)",
    "de": "UD German-LIT test (de_lit-ud-test.conllu: Schlegel and Novalis, literary "
    "prose of 1797/98; docs of ten sentences)",
    "la": "Tesserae " + ", ".join(FRESH_LATIN) + " (chunks of about 200 words; chunks "
    "holding a gold passage left out)",
    "zh": "PSE-I test essays (corpus/pse/test.spacy, each doc's text: student paibi "
    "essays, a genre rich in figures)",
}
THIRD_DESCRIPTION = {
    "la": "Tesserae " + ", ".join(THIRD_LATIN) + " (chunks of about 200 words; chunks "
    "holding a gold passage left out)",
    "en": f"UD English-EWT train from doc {THIRD_ENGLISH_FROM_DOC} on (en_ewt-ud-train.conllu; "
    "docs of ten sentences; the fresh samples read docs 0-"
    f"{THIRD_ENGLISH_FROM_DOC - 1})",
}


HELD_OUT_DESCRIPTION = {
    "en": "UD English-EWT test (held out)",
    "de": "UD German-GSD test (held out)",
    "la": "Tesserae cicero.in_catilinam, cicero.pro_milone, ovid.amores (held out)",
    "zh": "UD Chinese-GSD test (held out)",
}


# --texts speeches: argued, spoken prose (where antithesis and the rhetorical question
# live) that no step of the package reads, from git mirrors of public repositories at the
# commits the rhetoric corpus was cut from (benchmarks/data/rhetoric-corpus/prepare.py)
SPEECH_REPOSITORIES = {
    "en": ("nltk/nltk_data", "5db857e6f7df11eabb5e5665836db9ec8df07e28"),
    "la": ("cltk/latin_text_latin_library", "76229acaf02efd1964ac32009408a90b6f279758"),
    "de": ("dracor-org/gerdracor", "1a985284303b4338acb7a6deb51d4c81cc621d2e"),
}
INAUGURAL_ZIP = "packages/corpora/inaugural.zip"
# the addresses after the rhetoric corpus's (1789-1857), without Lincoln's: 1865 is in the
# corpus and the figures gold set, 1861 in the Bible quotations gold set
SPEECH_ENGLISH = (
    "1869-Grant",
    "1873-Grant",
    "1877-Hayes",
    "1881-Garfield",
    "1885-Cleveland",
    "1889-Harrison",
    "1893-Cleveland",
    "1897-McKinley",
    "1901-McKinley",
    "1905-Roosevelt",
    "1909-Taft",
)
# Livy books that nothing reads: the corpus holds books 1, 21 and 22, the figures gold set
# book 1; no Tesserae text (every Cicero text is in the intertext source pool), no UD
# Latin treebank and no Latin Library file of the data mirror is Livy's
SPEECH_LATIN = ("livy/liv.2.txt", "livy/liv.3.txt")
# GerDraCor prose plays in neither the corpus, the 170 plays of the German chiasmus
# candidates nor the figures gold set
SPEECH_GERMAN = ("lessing-minna-von-barnhelm", "goethe-egmont")
SPEECH_DOC_WORDS = 200  # a doc: whole paragraphs, chapters or speeches, at least this many words
SPEECH_LICENCE = {
    "en": "public domain (works of the US federal government; nltk_data's index.xml: "
    "public domain)",
    "la": "Public Domain Mark 1.0 (The Latin Library; the repository's LICENSE.md)",
    "de": "GerDraCor CC0 1.0; its digital source, the TextGrid Repository, CC BY 3.0 DE; "
    "the play is in the public domain",
}
SPEECH_DESCRIPTION = {
    "en": "the US inaugural addresses 1869-1909 (Grant to Taft; NLTK's inaugural corpus; "
    "the rhetoric corpus holds 1789-1857 and Lincoln's second, the Bible quotations gold "
    "set Lincoln's first; docs of whole paragraphs)",
    "la": "Livy, Ab urbe condita 2 and 3 (the Latin Library; the rhetoric corpus holds "
    "books 1, 21 and 22, the figures gold set book 1; docs of whole chapters)",
    "de": "Lessing, Minna von Barnhelm (1767) and Goethe, Egmont (1788), prose plays of "
    "GerDraCor in neither the rhetoric corpus, the German chiasmus candidates nor the "
    "figures gold set (docs of whole speeches, each opening with its speaker)",
}
# --texts speeches-2 (Latin and English): the first speeches sample's errors changed the
# rules, so a second one reads other speeches of the same repositories that no step reads
# (that sample included): the addresses 1913-1937 without Roosevelt's first (1933, in the
# Bible quotations gold set), and Livy books 4 and 5
SPEECH_2_ENGLISH = (
    "1913-Wilson",
    "1917-Wilson",
    "1921-Harding",
    "1925-Coolidge",
    "1929-Hoover",
    "1937-Roosevelt",
)
SPEECH_2_LATIN = ("livy/liv.4.txt", "livy/liv.5.txt")
SPEECH_2_DESCRIPTION = {
    "en": "the US inaugural addresses 1913-1937 (Wilson to F. D. Roosevelt's second; NLTK's "
    "inaugural corpus; without Roosevelt's first of 1933, which the Bible quotations gold "
    "set holds; the first speeches sample read 1869-1909; docs of whole paragraphs)",
    "la": "Livy, Ab urbe condita 4 and 5 (the Latin Library; the rhetoric corpus holds books "
    "1, 21 and 22, the figures gold set book 1, the first speeches sample books 2 and 3; "
    "docs of whole chapters)",
}
SPEECH_MODES = ("speeches", "speeches-2")  # the --texts read from --mirror


def mirror_blob(mirror: Path, repository: str, commit: str, path: str) -> Tuple[bytes, str]:
    """A file of a repository at a commit, from its git mirror
    (``mirror/<owner>+<name>/repo``: a bare repository, or one holding ``.git``).

    RETURNS (Tuple[bytes, str]): the file's bytes and its git blob id.
    RAISES FileNotFoundError: the mirror, the commit, the file or its blob is missing.
    """
    import subprocess

    git_dir = Path(mirror) / repository.replace("/", "+") / "repo"
    if (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    if not git_dir.is_dir():
        raise FileNotFoundError(f"--texts speeches: no mirror of {repository} at {git_dir}")

    def git(*args: str) -> bytes:
        try:
            done = subprocess.run(
                ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False
            )
        except OSError:
            raise FileNotFoundError(
                "--texts speeches reads the mirrors with git: install it"
            ) from None
        return done.stdout if done.returncode == 0 else b""

    blob = git("rev-parse", "--verify", "--quiet", f"{commit}:{path}").decode().strip()
    if not blob:
        raise FileNotFoundError(f"--texts speeches: {git_dir} has no {path} at {commit[:12]}")
    data = git("cat-file", "blob", blob)
    if not data:
        raise FileNotFoundError(
            f"--texts speeches: {git_dir} lists {path} (blob {blob[:12]}) but lacks its blob"
        )
    return data, blob


def _corpus_recipe() -> Any:
    """The rhetoric corpus's recipe (``benchmarks/data/rhetoric-corpus/prepare.py``): its
    Latin Library cleaning and TEI speech reader, so that a text reads here as the
    corpus's passages read."""
    import importlib.util

    path = Path(__file__).resolve().parent / "data" / "rhetoric-corpus" / "prepare.py"
    spec = importlib.util.spec_from_file_location("rhetoric_corpus_prepare", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"{path} not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inaugural_units(data: bytes, name: str) -> List[str]:
    """The paragraphs of an address of NLTK's inaugural corpus (square brackets of
    editorial insertions dropped, their words kept, as the corpus does)."""
    import io
    import zipfile

    member = f"inaugural/{name}.txt"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if member not in archive.namelist():
            raise FileNotFoundError(f"--texts speeches: {INAUGURAL_ZIP} has no {member}")
        text = archive.read(member).decode("utf8")
    lines = (" ".join(line.replace("[", "").replace("]", "").split()) for line in text.splitlines())
    return [line for line in lines if line]


def _latin_library_units(data: bytes, path: str) -> List[str]:
    """The chapters of a Latin Library text: from its chapter 1 (``[ 1 ]``) on, without
    the navigation at its end, cleaned as the rhetoric corpus cleans Latin Library text."""
    import re

    raw = data.decode("utf8")
    first = re.search(r"\[\s*1\s*\]", raw)
    if first is None:
        raise ValueError(f"--texts speeches: {path} has no chapter [ 1 ]")
    paragraphs = re.split(r"\n\s*\n", raw[first.start() :])
    while paragraphs and "The Latin Library" in paragraphs[-1]:  # the navigation
        paragraphs.pop()
    body = "\n\n".join(paragraphs)
    text, sections = _corpus_recipe().clean_latin(body, ())
    cuts = [int(section["start"]) for section in sections] + [len(text)]
    return [text[a:b].strip() for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def _play_units(data: bytes) -> List[str]:
    """The speeches of a GerDraCor play, each ``SPEAKER. words`` (stage directions
    dropped, verse lines ending in a line break), as the rhetoric corpus reads them."""
    import xml.etree.ElementTree as ET

    recipe = _corpus_recipe()
    units = []
    for sp in ET.fromstring(data).iter(f"{recipe.TEI}sp"):
        speaker = sp.find(f"{recipe.TEI}speaker")
        name = " ".join("".join(speaker.itertext()).split()) if speaker is not None else ""
        words = recipe.speech_text(sp)
        if words:
            units.append(f"{name.rstrip('.:').upper()}. {words}" if name else words)
    return units


def _docs(units: Sequence[str], joiner: str, words: int) -> List[str]:
    """Consecutive units joined into docs of at least ``words`` words (the last one
    shorter)."""
    docs: List[str] = []
    current: List[str] = []
    for unit in units:
        current.append(unit)
        if sum(len(u.split()) for u in current) >= words:
            docs.append(joiner.join(current))
            current = []
    if current:
        docs.append(joiner.join(current))
    return docs


def speech_texts(
    lang: str, mirror: Optional[Path], texts_from: str = "speeches"
) -> Tuple[List[Tuple[str, str]], List[dict]]:
    """The texts of ``--texts speeches`` (or ``speeches-2``) in docs, the texts' docs taken
    in turn (the first of each text, then the second, ...), so that a token budget reads
    every text.

    lang (str): la, en or de (``speeches-2``: la or en).
    mirror (Optional[Path]): the folder of the git mirrors.
    texts_from (str): ``speeches`` or ``speeches-2`` (``SPEECH_MODES``).
    RETURNS (Tuple[List[Tuple[str, str]], List[dict]]): (source doc, text) in that order,
        and each file (repository, commit, path, blob, licence, and the source its docs
        are named after: ``<source> doc <i>``).
    RAISES ValueError: no mirror folder, or a language without speeches.
    RAISES FileNotFoundError: a mirror or a file is missing.
    """
    second = texts_from == "speeches-2"
    if second and lang not in SPEECH_2_DESCRIPTION:
        raise ValueError(f"--texts speeches-2 reads Latin and English only, not {lang!r}")
    if lang not in SPEECH_REPOSITORIES:
        raise ValueError(f"--texts speeches reads Latin, English and German only, not {lang!r}")
    if mirror is None:
        raise ValueError(f"--texts {texts_from} needs --mirror DIR (the git mirrors)")
    repository, commit = SPEECH_REPOSITORIES[lang]
    record = {"repository": repository, "commit": commit, "licence": SPEECH_LICENCE[lang]}
    per_text: List[List[Tuple[str, str]]] = []
    files: List[dict] = []
    if lang == "en":
        data, blob = mirror_blob(mirror, repository, commit, INAUGURAL_ZIP)
        for name in SPEECH_2_ENGLISH if second else SPEECH_ENGLISH:
            label = f"inaugural/{name}.txt"
            docs = _docs(_inaugural_units(data, name), "\n\n", SPEECH_DOC_WORDS)
            per_text.append([(f"{label} doc {i}", text) for i, text in enumerate(docs)])
            files.append(
                {**record, "path": f"{INAUGURAL_ZIP}: {label}", "blob": blob, "source": label}
            )
    else:
        latin = SPEECH_2_LATIN if second else SPEECH_LATIN
        paths = latin if lang == "la" else [f"tei/{play}.xml" for play in SPEECH_GERMAN]
        for path in paths:
            data, blob = mirror_blob(mirror, repository, commit, path)
            if lang == "la":
                docs = _docs(_latin_library_units(data, path), "\n\n", SPEECH_DOC_WORDS)
            else:
                docs = _docs(_play_units(data), "\n", SPEECH_DOC_WORDS)
            per_text.append([(f"{path} doc {i}", text) for i, text in enumerate(docs)])
            files.append({**record, "path": path, "blob": blob, "source": path})
    in_turn = [
        docs[i]
        for i in range(max(map(len, per_text), default=0))
        for docs in per_text
        if i < len(docs)
    ]
    return in_turn, files


def text_source(lang: str, texts_from: str) -> str:
    if texts_from == "conllu":
        return (
            "the CoNLL-U file named in the key's source docs (docs of ten sentences), "
            "read by no earlier step"
        )
    sources = {
        "fresh": FRESH_DESCRIPTION,
        "third": THIRD_DESCRIPTION,
        "speeches": SPEECH_DESCRIPTION,
        "speeches-2": SPEECH_2_DESCRIPTION,
    }
    return sources.get(texts_from, HELD_OUT_DESCRIPTION)[lang]


def _gold_texts(lang: str) -> List[str]:
    """The figures gold set's texts of a language ([] where the gold set is missing)."""
    try:
        from spacy_rhetoric.figures.training_data import read_gold

        return [row["text"] for row in read_gold() if row.get("lang") == lang]
    except (OSError, ValueError):
        return []


def fresh_texts(
    lang: str, data_dir: Path, tokens: Optional[int] = None, latin: Sequence[str] = FRESH_LATIN
) -> List[Tuple[str, str]]:
    """Running text no earlier step read, in the held-out reader's docs.

    tokens (Optional[int]): the tokens wanted (a Latin text gives a third of them in
        words, at least ``calibrate.LATIN_TOKENS``).
    latin (Sequence[str]): the Tesserae texts read for Latin.
    RETURNS (List[Tuple[str, str]]): (source doc, text) in order.
    RAISES FileNotFoundError: the text is not there.
    """
    from spacy_rhetoric.figures import calibrate

    if lang == "la":
        words = calibrate.LATIN_TOKENS
        if tokens is not None:
            words = max(words, -(-tokens // len(latin)))
        gold = _gold_texts("la")
        out = []
        for name in latin:
            chunks, _ = calibrate.latin_texts(data_dir, [name], words, gold)
            out += [(f"Tesserae {name} chunk {i}", text) for i, text in enumerate(chunks)]
        return out
    if lang == "zh":
        import spacy
        from spacy.tokens import DocBin

        path = Path(__file__).resolve().parents[1] / FRESH_CHINESE
        if not path.is_file():
            raise FileNotFoundError(f"figures_judge: {path} not found")
        docs = DocBin().from_disk(path).get_docs(spacy.blank("zh").vocab)
        out = []
        for i, doc in enumerate(docs):
            meta = doc.user_data or {}
            where = "/".join(str(meta[k]) for k in ("doc_id", "section_id") if k in meta)
            out.append((f"{path.name} doc {i}" + (f" ({where})" if where else ""), doc.text))
        return out
    path = Path(data_dir) / {"en": FRESH_ENGLISH, "de": FRESH_GERMAN}[lang]
    texts, _ = calibrate.treebank_texts(path, " ", _gold_texts(lang))
    return [(f"{path.name} doc {i}", text) for i, text in enumerate(texts)]


def base_pipeline(lang: str) -> Any:
    """The language's base pipeline with a figure_finder at its default settings.

    RAISES ValueError: the base pipeline is not installed or built.
    """
    import spacy

    import spacy_rhetoric  # noqa: F401  (registers figure_finder)
    from spacy_rhetoric.analysis.languages import LANGUAGE_MODELS
    from spacy_rhetoric.models import resolve

    name = LANGUAGE_MODELS[lang]["base"]
    found = resolve(name, None)
    if found is None:
        raise ValueError(f"the {lang} base pipeline ({name}) is not available")
    nlp = spacy.load(found.path)
    if "figure_finder" not in nlp.pipe_names:
        nlp.add_pipe("figure_finder")
    return nlp


def _sentences(doc: Any, start: int, end: int) -> Tuple[int, int]:
    """RETURNS: token range of the sentence(s) holding [start, end) (the doc without
    sentence boundaries)."""
    if not doc.has_annotation("SENT_START"):
        return 0, len(doc)
    return doc[start].sent.start, doc[end - 1].sent.end


def marked(span: Any) -> str:
    """The sentence(s) of a report, the instance in [[ ]], the support words in **bold**."""
    doc = span.doc
    first, last = _sentences(doc, span.start, span.end)
    support = sorted((s.start, s.end) for s in span._.figure_support)
    merged: List[List[int]] = []
    for s, e in support:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    opens = {s for s, _ in merged}
    closes = {e for _, e in merged}
    out: List[str] = []
    for token in doc[first:last]:
        i = token.i
        if i == span.start:
            out.append("[[")
        if i in opens:
            out.append("**")
        out.append(token.text)
        if i + 1 in closes:
            out.append("**")
        if i + 1 == span.end:
            out.append("]]")
        out.append(token.whitespace_)
    return " ".join("".join(out).split())


def conllu_texts(path: Path, doc_prefixes: Sequence[str] = ()) -> List[Tuple[str, str]]:
    """A CoNLL-U file's sentences as docs of ten sentences (the held-out reader's docs);
    with ``doc_prefixes``, only the documents whose ``# newdoc id`` starts with one of
    them (GUM's genres: "GUM_news", "GUM_voyage", ...).

    RETURNS (List[Tuple[str, str]]): (source doc, text) in order.
    """
    import tempfile

    from spacy_rhetoric.figures import calibrate

    path = Path(path)
    if not doc_prefixes:
        texts, _ = calibrate.treebank_texts(path, " ")
        return [(f"{path.name} doc {i}", text) for i, text in enumerate(texts)]
    out: List[Tuple[str, str]] = []
    kept: List[str] = []
    keep = False
    for line in path.read_text(encoding="utf8").splitlines():
        if line.startswith("# newdoc id = "):
            keep = line[len("# newdoc id = ") :].strip().startswith(tuple(doc_prefixes))
        if keep:
            kept.append(line)
    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / path.name
        part.write_text("\n".join(kept) + "\n", encoding="utf8")
        texts, _ = calibrate.treebank_texts(part, " ")
    label = f"{path.name} ({', '.join(doc_prefixes)})"
    out = [(f"{label} doc {i}", text) for i, text in enumerate(texts)]
    return out


def _texts(
    lang: str,
    data_dir: Path,
    tokens: Optional[int],
    texts_from: str,
    conllu: Optional[Sequence[Path]],
    doc_prefixes: Sequence[str],
    mirror: Optional[Path],
) -> Tuple[List[Tuple[str, str]], List[dict]]:
    """RETURNS: a language's (source doc, text) list of ``texts_from``, and the files
    read where the key names them (``--texts speeches``, ``speeches-2``)."""
    if texts_from == "conllu":
        if conllu is None:
            raise ValueError("--texts conllu needs --conllu FILE")
        return [t for one in conllu for t in conllu_texts(one, doc_prefixes)], []
    if texts_from in SPEECH_MODES:
        return speech_texts(lang, mirror, texts_from)
    if texts_from == "fresh":
        return fresh_texts(lang, data_dir, tokens), []
    if texts_from == "third":
        if lang not in THIRD_DESCRIPTION:
            raise ValueError(f"--texts third reads Latin and English only, not {lang!r}")
        if lang == "la":
            return fresh_texts(lang, data_dir, tokens, THIRD_LATIN), []
        return fresh_texts(lang, data_dir)[THIRD_ENGLISH_FROM_DOC:], []
    return held_out_texts(lang, data_dir), []


def collect(
    langs: Sequence[str],
    data_dir: Path,
    tokens: Optional[int],
    texts_from: str = "held-out",
    skip_docs: int = 0,
    conllu: Optional[Sequence[Path]] = None,
    doc_prefixes: Sequence[str] = (),
    figures: Sequence[str] = (),
    mirror: Optional[Path] = None,
) -> Tuple[Dict[str, List[dict]], Dict[str, dict]]:
    """Every report on each language's held-out text, or with ``texts_from="fresh"``
    its fresh text (``fresh_texts``), with ``"speeches"`` or ``"speeches-2"`` its speeches
    (``speech_texts``):
    the first whole docs up to ``tokens`` tokens that are not whitespace (None: all).
    Every language's text is read before any pipeline runs (a missing one fails first).

    figures (Sequence[str]): keep the reports of these figures only (empty: all).
    mirror (Optional[Path]): with ``SPEECH_MODES``, the folder of the git mirrors.
    RETURNS: language -> reports in text order, and language -> what was read.
    """
    from spacy_rhetoric.figures.calibrate import count_tokens

    texts_of = {
        lang: _texts(lang, data_dir, tokens, texts_from, conllu, doc_prefixes, mirror)
        for lang in langs
    }
    reports: Dict[str, List[dict]] = {}
    read: Dict[str, dict] = {}
    for lang in langs:
        texts, files = texts_of[lang]
        texts = texts[skip_docs:]  # docs an earlier sample of this source read
        nlp = base_pipeline(lang)
        mine: List[dict] = []
        n_tokens = n_docs = 0
        for (source, _), doc in zip(texts, nlp.pipe(text for _, text in texts)):
            n_docs += 1
            n_tokens += count_tokens([doc])
            for span in doc.spans["figures"]:
                if figures and span.label_ not in figures:
                    continue
                mine.append(
                    {
                        "lang": lang,
                        "label": span.label_,
                        "text": span.text,
                        "support": [s.text for s in span._.figure_support],
                        "score": round(float(span._.figure_score), 4),
                        "source": source,
                        "tokens": [span.start, span.end],
                        "sheet_text": marked(span),
                        "doc_text": doc.text,
                    }
                )
            if tokens is not None and n_tokens >= tokens:
                break
        reports[lang] = mine
        scorer = doc.spans["figures"].attrs.get("figure_scorer") if n_docs else None
        read[lang] = {
            "docs": n_docs,
            "tokens": n_tokens,
            "reports": len(mine),
            "texts": texts_from,
            "text_source": text_source(lang, texts_from),
            "first_source": texts[0][0] if texts else None,
            "last_source": texts[n_docs - 1][0] if n_docs else None,
            "pipeline": f"{nlp.meta.get('lang')}_{nlp.meta.get('name')} {nlp.meta.get('version')}",
            "scorer": scorer,
        }
        if files:  # the files of the docs read
            done = {source for source, _ in texts[:n_docs]}
            read[lang]["files"] = [
                f for f in files if any(d.startswith(f"{f['source']} doc ") for d in done)
            ]
    return reports, read


def sample(
    reports: Dict[str, List[dict]], per_lang: int, seed: int
) -> Tuple[List[dict], Dict[str, Any]]:
    """At most ``per_lang`` reports per language (all if fewer), shuffled together.

    RETURNS: the sheet items (id, lang, label, definition, text; no score) and the key's
    items (id -> lang, label, text, support, score, source doc, token offsets, the doc's
    text: the judged reports can be read again without the text they came from).
    """
    rng = random.Random(seed)
    chosen: List[dict] = []
    for lang in sorted(reports):
        pool = reports[lang]
        chosen += rng.sample(pool, min(per_lang, len(pool)))
    rng.shuffle(chosen)
    width = len(str(len(chosen)))
    sheet, key = [], {}
    for n, report in enumerate(chosen, 1):
        item_id = str(n).zfill(width)
        sheet.append(
            {
                "id": item_id,
                "lang": report["lang"],
                "label": report["label"],
                "definition": DEFINITIONS.get(report["label"], ""),
                "text": report["sheet_text"],
            }
        )
        key[item_id] = {
            k: report[k]
            for k in ("lang", "label", "text", "support", "score", "source", "tokens", "doc_text")
            if k in report
        }
    return sheet, key


def sheet_markdown(items: Sequence[dict]) -> str:
    lines = [
        "# Figures in running text: judging sheet",
        "",
        "Label each item in labels.json: right, partly or wrong (README.md says how).",
        "The instance is in [[ ]], its repeated, linking, alliterating or opposed words in "
        "**bold**.",
        "",
    ]
    for item in items:
        lines += [
            f"## {item['id']} ({LANGUAGE_NAMES.get(item['lang'], item['lang'])})",
            "",
            f"**{item['label']}**: {item['definition']}",
            "",
            f"> {item['text']}",
            "",
        ]
    return "\n".join(lines)


HELD_OUT_SOURCE = (
    "Running text that the figures scorer was not fitted, calibrated or chosen on: UD "
    "English-EWT test, UD German-GSD test, UD Chinese-GSD test (docs of ten "
    "sentences) and the held-out Tesserae texts (Cicero *In Catilinam*, *Pro "
    "Milone*, Ovid *Amores*; chunks of about 200 words), read by each language's "
    "base pipeline and a `figure_finder` at its default settings."
)


def _later_source(intro: str, descriptions: Dict[str, str], langs: Iterable[str]) -> str:
    """The README's source paragraph of a sample drawn after earlier ones."""
    return (
        intro
        + "; ".join(f"{LANGUAGE_NAMES[lang]}: {descriptions[lang]}" for lang in langs)
        + ". Read by each language's base pipeline and a `figure_finder` at its default "
        "settings."
    )


def fresh_source(langs: Iterable[str]) -> str:
    return _later_source(
        "Fresh running text (`--texts fresh`): a first judged sample was drawn from the "
        "held-out text and its errors then changed the rules, so this sample comes from "
        "text that neither the calibration, the held-out rate nor the first sample read: ",
        FRESH_DESCRIPTION,
        langs,
    )


def third_source(langs: Iterable[str]) -> str:
    return _later_source(
        "A third sample (`--texts third`): the fresh samples' errors (Latin alliteration "
        "on names; English tag questions, lists opening with articles, headings run into "
        "the text) changed the rules, so this one reads text that no step read: ",
        THIRD_DESCRIPTION,
        langs,
    )


def conllu_source(langs: Iterable[str]) -> str:
    return (
        "Running text read by no earlier step (`--texts conllu`): a CoNLL-U file named in "
        "the table below (docs of ten sentences), read by each language's base pipeline "
        "and a `figure_finder` at its default settings."
    )


def speeches_source(langs: Iterable[str]) -> str:
    return _later_source(
        "Speeches and argued prose that no step of the package reads (`--texts "
        "speeches`): not the rhetoric corpus, the figures calibration or held-out text, "
        "an earlier judged sample, a gold set, the chiasmus candidates or the intertext "
        "pools; read from git mirrors of their public repositories at the commits named "
        "under Sources: ",
        SPEECH_DESCRIPTION,
        langs,
    )


def speeches_2_source(langs: Iterable[str]) -> str:
    return _later_source(
        "A second sample of speeches that no step of the package reads (`--texts "
        "speeches-2`): the errors of the sample drawn from `--texts speeches` changed the "
        "rules, so this one reads other speeches, read by neither that sample, the rhetoric "
        "corpus, the figures calibration or held-out text, another judged sample, a gold "
        "set, the chiasmus candidates nor the intertext pools; read from git mirrors of "
        "their public repositories at the commits named under Sources: ",
        SPEECH_2_DESCRIPTION,
        langs,
    )


def _sources_table(read: Dict[str, dict]) -> List[str]:
    """README.md's table of the files a sample read (``--texts speeches``,
    ``speeches-2``), else []."""
    rows = [
        f"| {lang} | {f['repository']} | `{f['commit']}` | `{f['path']}` | `{f['blob']}` "
        f"| {f['licence']} |"
        for lang, r in read.items()
        for f in r.get("files", [])
    ]
    if not rows:
        return []
    return [
        "## Sources",
        "",
        "| language | repository | commit | path | blob | licence |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def readme(
    read: Dict[str, dict],
    per_lang: int,
    seed: int,
    tokens: Optional[int],
    n: int,
    texts_from: str = "held-out",
    figures: Sequence[str] = (),
) -> str:
    rows = [
        f"| {lang} | {r['first_source']} .. {r['last_source']} | {r['docs']} | {r['tokens']} "
        f"| {r['reports']} | {min(per_lang, r['reports'])} |"
        for lang, r in read.items()
    ]
    target = sample_target(figures)
    names = ", ".join(figures)
    sources = {
        "fresh": fresh_source,
        "third": third_source,
        "conllu": conllu_source,
        "speeches": speeches_source,
        "speeches-2": speeches_2_source,
    }
    criteria = [f"- {FIGURE_CRITERIA[f]}." for f in figures if f in FIGURE_CRITERIA]
    return "\n".join(
        [
            f"# A blind judged sample of figure_finder's "
            f"{names + ' reports' if figures else 'running-text reports'} ({DATE})",
            "",
            (
                f"Whether the {names} reports of `figure_finder` on running text are "
                if figures
                else "Whether the figures `figure_finder` reports on running text are "
            )
            + "figures a rhetorician would mark ("
            + (f"the target of {names}" if figures else "the guard of the corpus-calibrated scorer")
            + f": right or partly for >= {target['right_or_partly']:.0%} of the judged reports "
            f"of each language, with >= {target['reports']} reports judged per language). "
            + sources.get(texts_from, lambda _: HELD_OUT_SOURCE)(read),
            "",
            f'Every {names + " " if figures else ""}report (`doc.spans["figures"]`'
            + (", the other figures' reports left out" if figures else "")
            + f") of the first whole docs up to "
            f"{tokens if tokens is not None else 'all'} tokens per language was kept; at most "
            f"{per_lang} per language were drawn (all where fewer) and shuffled together "
            f"(seed {seed}): {n} items.",
            "",
            "| language | source docs | docs | tokens | reports | on the sheet |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            *_sources_table(read),
            "Files: `sheet.md` (the items: id, language, figure and its definition, the "
            "sentence(s) with the instance in [[ ]] and its support words in **bold**; no "
            "score, no model); `key.json` (id -> language, label, text, score, source doc, the "
            "doc's text; the target; not read while judging); `labels.json` (id -> label, "
            "filled by the judge).",
            "",
            "## How to judge",
            "",
            "Read `sheet.md` only. For each item write one label into `labels.json`:",
            "",
            "- `right`: a figure of that name a rhetorician would mark, about the marked extent;",
            "- `partly`: a figure is there, but the label or the extent is off (an anaphora "
            "reported as symploce, a series cut short or run on);",
            "- `wrong`: accidental repetition (function words, names, a term the subject "
            "forces), or no figure at all.",
            *(["", "As `docs/annotation.md` has it:", "", *criteria] if criteria else []),
            "",
            "Then `python benchmarks/figures_judge.py score --dir <this folder> --output "
            f"benchmarks/results/figures_judged{''.join('_' + f for f in figures)}"
            f"{'_2' if texts_from == 'speeches-2' else ''}.json` counts per language and "
            "figure.",
            "",
            "One judge, no second annotator: the labels are a reading, not a gold standard.",
            "",
        ]
    )


def write_sheet(
    out: Path,
    sheet: List[dict],
    key: Dict[str, Any],
    read: Dict[str, dict],
    per_lang: int,
    seed: int,
    tokens: Optional[int],
    texts_from: str = "held-out",
    doc_prefixes: Sequence[str] = (),
    figures: Sequence[str] = (),
) -> None:
    """Write sheet.md, key.json (with the sample's figures and target), labels.json and
    README.md into ``out``.

    RAISES ValueError: ``out`` already holds labels (write the sheet elsewhere).
    """
    labels_path = out / "labels.json"
    if labels_path.exists():
        try:
            old = json.loads(labels_path.read_text(encoding="utf8"))
        except ValueError:
            old = {"?": "unreadable"}
        if not isinstance(old, dict) or any(str(v).strip() for v in old.values()):
            raise ValueError(f"{out} holds labels already; write this sheet to another --out")
    out.mkdir(parents=True, exist_ok=True)
    (out / "sheet.md").write_text(sheet_markdown(sheet), encoding="utf8")
    whole = {
        "date": DATE,
        "seed": seed,
        "per_lang": per_lang,
        "tokens": tokens,
        "texts": texts_from,
        "doc_prefixes": list(doc_prefixes),
        "figures": list(figures),
        "target": sample_target(figures),
        "text_source": {lang: text_source(lang, texts_from) for lang in read},
        "languages": read,
        "items": key,
    }
    (out / "key.json").write_text(json.dumps(whole, indent=1, ensure_ascii=False), encoding="utf8")
    labels_path.write_text(json.dumps({i: "" for i in key}, indent=1), encoding="utf8")
    (out / "README.md").write_text(
        readme(read, per_lang, seed, tokens, len(sheet), texts_from, figures), encoding="utf8"
    )


def read_labels(path: Path, key: Dict[str, Any]) -> Dict[str, str]:
    """RAISES ValueError: the file is missing or malformed, or an item is unlabelled."""
    if not path.is_file():
        raise ValueError(f"{path} not found (fill the labels.json the sheet wrote)")
    try:
        labels = json.loads(path.read_text(encoding="utf8"))
    except ValueError as err:
        raise ValueError(f"{path} is not JSON: {err}") from None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError(f"{path} must map item ids to labels ({', '.join(LABELS)})")
    labels = {str(i): v.strip().lower() for i, v in labels.items()}
    unknown_ids = sorted(set(labels) - set(key["items"]))
    if unknown_ids:
        raise ValueError(f"{path}: {len(unknown_ids)} ids not in the key, e.g. {unknown_ids[:5]}")
    missing = sorted(i for i in key["items"] if not labels.get(i))
    if missing:
        raise ValueError(f"{path}: {len(missing)} items not labelled, e.g. {missing[:5]}")
    bad = sorted({v for v in labels.values() if v not in LABELS})
    if bad:
        raise ValueError(f"{path}: labels not in {', '.join(LABELS)}: {bad}")
    return labels


def _counts(items: Iterable[Tuple[dict, str]]) -> Dict[str, Any]:
    counts = {label: 0 for label in LABELS}
    for _, label in items:
        counts[label] += 1
    n = sum(counts.values())
    share = round((counts["right"] + counts["partly"]) / n, 4) if n else None
    return {"reports": n, **counts, "right_or_partly": share}


def score(key: Dict[str, Any], labels: Dict[str, str]) -> Dict[str, Any]:
    """RETURNS: per language and pooled: reports judged, right, partly, wrong, the
    right-or-partly share, whether the target is met (the key's target, else the
    default), and the counts per figure."""
    joined = [(item, labels[i]) for i, item in key["items"].items()]
    target = {
        "right_or_partly": TARGET_SHARE,
        "reports": TARGET_REPORTS,
        **(key.get("target") or {}),
    }

    def table(rows: List[Tuple[dict, str]]) -> Dict[str, Any]:
        row = _counts(rows)
        row["meets_target"] = bool(
            row["reports"] >= target["reports"]
            and row["right_or_partly"] >= target["right_or_partly"]
        )
        figures = sorted({item["label"] for item, _ in rows})
        row["figures"] = {f: _counts(r for r in rows if r[0]["label"] == f) for f in figures}
        return row

    langs = sorted(
        {item["lang"] for item, _ in joined}, key=lambda lang: (LANGS + (lang,)).index(lang)
    )
    return {
        "target": target,
        "figures": key.get("figures") or [],
        "languages": {
            lang: {
                "reported": key.get("languages", {}).get(lang, {}).get("reports"),
                **table([r for r in joined if r[0]["lang"] == lang]),
            }
            for lang in langs
        },
        "pooled": table(joined),
    }


def sample_texts(
    key: Dict[str, Any],
    lang: str,
    data_dir: Path,
    conllu: Optional[Sequence[Path]] = None,
    mirror: Optional[Path] = None,
) -> List[Tuple[str, str]]:
    """The (source doc, text) list a sheet's key was drawn from, rebuilt from its
    ``texts`` mode (held-out, fresh, third, conllu, speeches, speeches-2) as ``collect``
    read it."""
    mode = key.get("texts", "held-out")
    if mode in SPEECH_MODES:
        return speech_texts(lang, mirror, mode)[0]
    if mode == "conllu":
        if not conllu:
            raise ValueError("this sheet read a CoNLL-U file: name it with --conllu")
        prefixes = key.get("doc_prefixes") or ()
        return [t for one in conllu for t in conllu_texts(one, prefixes)]
    if mode == "fresh":
        return fresh_texts(lang, data_dir, key.get("tokens"))
    if mode == "third":
        if lang == "la":
            return fresh_texts(lang, data_dir, key.get("tokens"), THIRD_LATIN)
        return fresh_texts(lang, data_dir)
    return held_out_texts(lang, data_dir)


def add_doc_texts(
    folder: Path,
    data_dir: Path,
    conllu: Optional[Sequence[Path]] = None,
    mirror: Optional[Path] = None,
) -> Dict[str, int]:
    """Write each key item's doc text (``doc_text``) into an older sheet's key.json, so
    that the judged reports can be read again without the text they came from; each
    item's tokens are checked against its text through the base pipeline.

    RETURNS (Dict[str, int]): per language, the items given their doc.
    RAISES ValueError: an item's source is not found or its tokens do not match.
    """
    key_path = Path(folder) / "key.json"
    key = json.loads(key_path.read_text(encoding="utf8"))
    items = key["items"]
    done: Dict[str, int] = {}
    for lang in sorted({item["lang"] for item in items.values()}):
        texts = dict(sample_texts(key, lang, data_dir, conllu, mirror))
        mine = [item for item in items.values() if item["lang"] == lang]
        nlp = base_pipeline(lang)
        for item in mine:
            if item["source"] not in texts:
                raise ValueError(f"{folder}: source {item['source']!r} not found")
            text = texts[item["source"]]
            start, end = item["tokens"]
            span_text = nlp.make_doc(text)[start:end].text
            if span_text != item["text"]:
                raise ValueError(
                    f"{folder}: {item['source']} tokens {start}-{end} read {span_text!r}, "
                    f"the key says {item['text']!r}"
                )
            item["doc_text"] = text
        done[lang] = len(mine)
    key_path.write_text(json.dumps(key, indent=1, ensure_ascii=False), encoding="utf8")
    return done


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("sheet", help="sample the reports and write a blind sheet")
    make.add_argument("--lang", default=",".join(LANGS), help="comma-separated: la,de,en,zh")
    make.add_argument(
        "--data", type=Path, required=True, help="the data mirror (ud/, latin-corpora/)"
    )
    make.add_argument(
        "--tokens",
        type=int,
        default=None,
        help="per language, the first whole docs up to N tokens (default: all)",
    )
    make.add_argument(
        "--texts",
        choices=TEXT_SOURCES,
        default="held-out",
        help="held-out: the figures evaluation's held-out text; fresh: text no earlier "
        "step read (EWT train, German-LIT test, other Cicero, PSE-I test essays); third: "
        "Latin and English, text neither earlier sample read; speeches: Latin, English and "
        "German speeches and argued prose no step reads (inaugural addresses 1869-1909, "
        "Livy 2-3, Minna von Barnhelm and Egmont), from --mirror; speeches-2: Latin and "
        "English, other speeches for a second sample (inaugural addresses 1913-1937 but "
        "1933, Livy 4-5), from --mirror",
    )
    make.add_argument(
        "--mirror",
        type=Path,
        default=None,
        help="with --texts speeches or speeches-2: the folder of git mirrors, one "
        "<owner>+<name>/repo per repository (nltk+nltk_data, cltk+latin_text_latin_library, "
        "dracor-org+gerdracor)",
    )
    make.add_argument(
        "--figures",
        default="",
        help="comma-separated figures whose reports are sampled, e.g. antithesis "
        "(default: every figure)",
    )
    make.add_argument(
        "--conllu",
        type=Path,
        action="append",
        default=None,
        help="with --texts conllu: read this CoNLL-U file (docs of ten sentences), e.g. a "
        "treebank part no step has read; repeat for several",
    )
    make.add_argument(
        "--doc-prefix",
        default="",
        help="with --texts conllu: comma-separated prefixes of the # newdoc ids to keep "
        "(e.g. GUM_news,GUM_voyage)",
    )
    make.add_argument(
        "--skip-docs",
        type=int,
        default=0,
        help="leave out the first N docs of the text (those an earlier sample read)",
    )
    make.add_argument("--per-lang", type=int, default=30, help="at most K reports per language")
    make.add_argument("--seed", type=int, default=0)
    make.add_argument("--out", type=Path, required=True)
    docs = commands.add_parser(
        "docs", help="write each item's doc text into an older sheet's key.json"
    )
    docs.add_argument("--dir", type=Path, required=True)
    docs.add_argument("--data", type=Path, required=True, help="the data mirror")
    docs.add_argument(
        "--conllu", type=Path, action="append", default=None, help="a --texts conllu sheet's file"
    )
    docs.add_argument(
        "--mirror",
        type=Path,
        default=None,
        help="a --texts speeches or speeches-2 sheet's mirror folder",
    )
    judge = commands.add_parser("score", help="join the labels to the key")
    judge.add_argument("--dir", type=Path, required=True)
    judge.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "sheet":
        try:
            if args.tokens is not None and args.tokens < 1:
                raise ValueError(f"--tokens must be >= 1, got {args.tokens}")
            if args.per_lang < 1:
                raise ValueError(f"--per-lang must be >= 1, got {args.per_lang}")
            langs = parse_langs(args.lang)
            if args.skip_docs < 0:
                raise ValueError(f"--skip-docs must be >= 0, got {args.skip_docs}")
            if args.mirror is not None and args.texts not in SPEECH_MODES:
                raise ValueError("--mirror is read with --texts speeches or speeches-2 only")
            figures = parse_figures(args.figures)
            reports, read = collect(
                langs,
                args.data,
                args.tokens,
                args.texts,
                args.skip_docs,
                args.conllu,
                [p for p in args.doc_prefix.split(",") if p],
                figures,
                args.mirror,
            )
            sheet, key = sample(reports, args.per_lang, args.seed)
            write_sheet(
                args.out,
                sheet,
                key,
                read,
                args.per_lang,
                args.seed,
                args.tokens,
                args.texts,
                [p for p in args.doc_prefix.split(",") if p],
                figures,
            )
        except (ValueError, OSError) as err:
            sys.exit(f"figures_judge: {err}")
        need = sample_target(figures)["reports"]
        for lang, row in read.items():
            print(
                f"{lang}: {row['docs']} docs, {row['tokens']} tokens, {row['reports']} "
                f"{'/'.join(figures) + ' ' if figures else ''}reports, "
                f"{min(args.per_lang, row['reports'])} on the sheet"
                + (
                    f" (the target asks {need} judged: read more text with --tokens)"
                    if min(args.per_lang, row["reports"]) < need
                    else ""
                )
            )
        print(f"{len(sheet)} items -> {args.out / 'sheet.md'}; key -> {args.out / 'key.json'}")
        return
    if args.command == "docs":
        try:
            done = add_doc_texts(args.dir, args.data, args.conllu, args.mirror)
        except (ValueError, OSError, KeyError) as err:
            sys.exit(f"figures_judge: {err}")
        print(f"{args.dir}: doc texts added ({', '.join(f'{k} {v}' for k, v in done.items())})")
        return
    try:
        key_path = args.dir / "key.json"
        if not key_path.is_file():
            raise ValueError(f"{key_path} not found (run `sheet` first)")
        key = json.loads(key_path.read_text(encoding="utf8"))
        result = score(key, read_labels(args.dir / "labels.json", key))
    except (ValueError, OSError, KeyError) as err:
        sys.exit(f"figures_judge: {err}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2), encoding="utf8")
    for name, row in [*result["languages"].items(), ("pooled", result["pooled"])]:
        print(
            f"{name}: {row['reports']} judged, right {row['right']}, partly {row['partly']}, "
            f"wrong {row['wrong']}; right or partly {row['right_or_partly']}"
            + (
                ""
                if name == "pooled"
                else f" (target {'met' if row['meets_target'] else 'not met'})"
            )
        )
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
