"""No traceback reaches a user: every command, given a missing file, a directory where a
file is expected, a file of the wrong type or a malformed one, ends with exit code 1 or 2
and one error message."""

import re

import pytest
import typer.main
from typer.testing import CliRunner

from spacy_rhetoric.cli import app

runner = CliRunner()

# Placeholders: M a missing path, D an empty directory, T a text file, S a text file named
# .spacy (no DocBin), J malformed JSON, C a CSV with the wrong columns, Y malformed YAML,
# O an output directory (not created).
BAD_INPUTS = {
    "analyze": [["M", "--lang", "en"], ["D", "--lang", "en"], ["T", "--lang", "fr"],
                ["T", "--lang", "en", "-m", "base-en=D"]],
    "chiasmus calibrate": [["xx", "D"], ["de", "M"], ["de", "D", "--base", "none"],
                           ["en", "D", "--per-1000", "-1"], ["la", "D", "--base", "D"]],
    "chiasmus evaluate": [["de", "M"], ["de", "T"], ["xx", "D"], ["en", "D"]],
    "chiasmus negatives": [["M", "O"], ["D", "O"], ["T", "O"], ["D", "O", "--config", "T"]],
    "chiasmus find": [["M", "--lang", "en"], ["T", "--model", "D"], ["T", "--lang", "xx"],
                      ["T"], ["D", "--lang", "en"], ["T", "--model", "T"]],
    "corpus assets": [["M"], ["Y"]],
    "corpus convert": [["asp", "M", "O"], ["xx", "D", "O"], ["asp", "D", "O"],
                       ["chiasmus-de", "T", "O"], ["conllu", "T", "O"], ["pse", "J", "O"]],
    "corpus raw-text": [["M", "O"], ["D", "O"]],
    "corpus run": [["D", "T", "-o", "O"], ["blank", "M", "-o", "O"], ["M", "T", "-o", "O"]],
    "corpus stats": [["M"], ["S"], ["D"]],
    "demo": [["-m", "base-en=D"], ["-m", "nonsense"]],
    "figures evaluate": [["M"], ["T"]],
    "figures find": [["M", "--lang", "en"], ["D", "--lang", "en"], ["T", "--lang", "xx"]],
    "figures train": [["M"], ["T"]],
    "intertext evaluate": [["M", "D"], ["C", "D"], ["T", "M"]],
    "intertext index": [["M", "-o", "O"], ["C", "-o", "O"], ["S", "-o", "O"]],
    "intertext pipeline": [["M", "-o", "O"], ["D", "-o", "O"], ["T", "-o", "O"]],
    "intertext match": [["T", "--index", "D", "-o", "O"], ["M", "--index", "D", "-o", "O"]],
    "intertext train": [["C", "--index", "D"], ["M", "--index", "D"]],
    "models build": [["--lang", "fr"], ["--lang", "de", "--data", "M"]],
    "models import-encoder": [["--source", "T", "--out", "O"], ["--source", "M"]],
    "models link": [["base-xx", "D"], ["base-en", "D"], ["base-en", "M"]],
    "models list": [["-m", "base-en=D"]],
    "models package": [["chiasmus-de"], ["base-xx"]],
    "models pretrain-encoder": [["M", "-o", "O"], ["D", "-o", "O"], ["S", "-o", "O"],
                                ["T", "-o", "O", "--steps", "0"]],
    "models vectors": [["M", "O"], ["D", "O"]],
    "parallelism calibrate": [["M", "S", "--output-model", "O"], ["D", "S", "--output-model", "O"]],
    "parallelism ensemble": [["O", "M", "M"], ["O", "D", "D"], ["O", "T", "T"]],
    "parallelism evaluate": [["M"], ["S"], ["D"]],
    "parallelism find": [["M", "--model", "D"], ["T", "--model", "D"], ["T"], ["D", "--lang", "la"],
                         ["T", "--model", "M"]],
    "parallelism tune": [["D", "S", "O"], ["M", "M", "O"]],
    "report": [["M"], ["J"]],
    "treebank base-corpus": [["xx", "D", "O"], ["de", "M", "O"]],
    "treebank edv": [["M", "M"], ["T", "T"]],
    "treebank evaluate": [["D", "M"], ["D", "T"]],
    "treebank plots": [["M", "D", "O"], ["J", "D", "O"]],
    "treebank queries": [["M", "M", "M"], ["T", "T", "T"]],
    "treebank split": [["xx", "T", "O"], ["random", "M", "O"], ["random", "T", "O"]],
    "treebank study": [["M", "O"], ["D", "O"]],
}  # fmt: skip


def registered_commands():
    def walk(command, prefix=()):
        if hasattr(command, "commands"):  # typer vendors click: duck-type the groups
            for name, sub in command.commands.items():
                yield from walk(sub, prefix + (name,))
        else:
            yield " ".join(prefix)

    return sorted(walk(typer.main.get_command(app)))


def test_every_command_is_covered():
    assert sorted(BAD_INPUTS) == registered_commands()


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    (root / "empty").mkdir()
    files = {
        "T": ("text.txt", "just some text\n"),
        "S": ("text.spacy", "just some text\n"),
        "J": ("bad.json", '{"not": "closed"'),
        "C": ("bad.csv", "a;b\n1;2\n"),
        "Y": ("project.yml", "commands: [unclosed\n"),
    }
    found = {"M": str(root / "missing.txt"), "D": str(root / "empty"), "O": str(root / "out")}
    for key, (name, text) in files.items():
        (root / name).write_text(text, encoding="utf8")
        found[key] = str(root / name)
    return found


CASES = [(name, args) for name, cases in BAD_INPUTS.items() for args in cases]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}:{' '.join(a)}" for n, a in CASES])
def test_bad_input_gives_one_message(name, args, places, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    where = {**places, "O": str(tmp_path / "out")}  # a fresh output path per case
    words = name.split() + [
        re.sub(r"\b([MDTSJCYO])\b", lambda m: where[m.group(1)], a) for a in args
    ]
    result = runner.invoke(app, words)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{words}: {type(result.exception).__name__}: {result.exception}"
    )
    assert result.exit_code in (1, 2), (words, result.exit_code, result.output)
    assert "Traceback" not in result.output
    plain = re.sub(r"\x1b\[[0-9;]*m", "", result.output)  # wasabi's colours in the runner
    messages = [line for line in plain.splitlines() if line.startswith(("✘", "Error", "Usage:"))]
    errors = [line for line in messages if not line.startswith("Usage:")]
    assert len(errors) == 1, (words, result.output)


def test_untrained_components_say_what_to_do():
    import spacy
    from spacy.tokens import Doc

    words = "the man saw the dog and the dog saw the man".split()
    cases = (
        ("parallelism_tagger", {}, "is not trained: train it"),
        ("intertext_matcher", {}, "has no index"),
        ("displacement_analyzer", {}, "needs a dependency parse"),
        (
            "chiasmus_finder",
            {"model": {"@architectures": "spacy-rhetoric.ChiasmusScorer.v1"}},
            "needs token.pos_",
        ),
    )
    for name, config, message in cases:
        nlp = spacy.blank("en")
        nlp.add_pipe(name, config=config)
        with pytest.raises(ValueError, match=message):
            nlp.get_pipe(name)(Doc(nlp.vocab, words=words))
