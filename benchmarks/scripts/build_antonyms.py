"""Build the English antonym lexicon of the antithesis rule from Open English WordNet.

Reads the lexical entries (``src/yaml/entries-*.yaml``) of a git clone of
github.com/globalwordnet/english-wordnet (bare or with a work tree) at one commit, takes
every sense relation ``antonym`` and writes the pairs of lemmas it joins, lower case, to
``spacy_rhetoric/data/figures/antonyms/en.tsv``: a header line (``#``: source, commit,
licence), then one pair per line, ``a<TAB>b`` with ``a < b``, sorted, each pair once
(the relation is symmetric; the loader reads both directions). Lemmas of more than
``MAX_WORDS`` words are left out and counted; so are pairs of two senses of one lemma
("kern"/"kern"). Only the plain relation is read: no pairs inferred through
``similar_to`` (the satellites of an adjective cluster), which would join words like
"torrid" and "cold" that no dictionary gives as opposites.

    python benchmarks/scripts/build_antonyms.py /path/to/english-wordnet \\
        --commit HEAD --output spacy_rhetoric/data/figures/antonyms/en.tsv

Parsing the 26 entries files with PyYAML takes about a minute.
"""

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Set, Tuple

import yaml

REPO_URL = "github.com/globalwordnet/english-wordnet"
OUTPUT = Path(__file__).resolve().parents[2] / "spacy_rhetoric/data/figures/antonyms/en.tsv"
ENTRIES_DIR = "src/yaml"
# the longest lemma kept, in words ("at the least"/"at the most" stay, "complex
# instruction set computer" goes)
MAX_WORDS = 3
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def git(mirror: Path, *args: str) -> bytes:
    """The output of a git command run in the clone.

    mirror (Path): the clone (bare or with a work tree).
    RETURNS (bytes): its standard output.
    RAISES ValueError: git fails (not a clone, unknown commit).
    """
    result = subprocess.run(["git", "-C", str(mirror), *args], capture_output=True)
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = message[-1] if message else f"exit status {result.returncode}"
        raise ValueError(f"git {' '.join(args)} in {mirror}: {reason}")
    return result.stdout


def resolve_commit(mirror: Path, commit: str) -> str:
    """The full hash of a commit of the clone.

    mirror (Path): the clone.
    commit (str): a commit, branch or ``HEAD``.
    RETURNS (str): the 40-digit hash.
    """
    return git(mirror, "rev-parse", "--verify", f"{commit}^{{commit}}").decode().strip()


def read_entries(mirror: Path, commit: str) -> Iterator[Tuple[str, dict]]:
    """The entries files of one commit, parsed.

    mirror (Path): the clone.
    commit (str): the full hash of the commit.
    YIELDS (Tuple[str, dict]): the file's path and its mapping lemma -> part of speech ->
        entry.
    RAISES ValueError: the commit holds no entries files.
    """
    names = git(mirror, "ls-tree", "--name-only", f"{commit}:{ENTRIES_DIR}").decode().split("\n")
    names = sorted(n for n in names if n.startswith("entries-") and n.endswith(".yaml"))
    if not names:
        raise ValueError(f"{mirror} has no {ENTRIES_DIR}/entries-*.yaml at {commit}")
    for name in names:
        path = f"{ENTRIES_DIR}/{name}"
        data = yaml.load(git(mirror, "show", f"{commit}:{path}").decode("utf-8"), Loader=LOADER)
        if not isinstance(data, dict):
            raise ValueError(f"{path} at {commit}: not a mapping of lemmas")
        yield path, data


def antonym_pairs(files: Iterable[Tuple[str, dict]]) -> Tuple[Set[Tuple[str, str]], Dict]:
    """The pairs of lemmas that an antonym relation joins.

    files (Iterable[Tuple[str, dict]]): the parsed entries files (``read_entries``).
    RETURNS (Tuple[Set[Tuple[str, str]], Dict]): the pairs ``(a, b)``, lower case, with
        ``a < b``; and counts: ``relations`` (antonym links read, each direction one), and
        of those left out ``too_long`` and ``same_lemma``.
    RAISES ValueError: a relation names a sense that no entry has.
    """
    lemma_of: Dict[str, str] = {}
    links: List[Tuple[str, str, str]] = []
    for path, data in files:
        for lemma, by_pos in data.items():
            if not isinstance(lemma, str):
                raise ValueError(f"{path}: lemma {lemma!r} read as {type(lemma).__name__}")
            for entry in by_pos.values():
                for sense in entry.get("sense", []):
                    lemma_of[sense["id"]] = lemma
                    for target in sense.get("antonym", []):
                        links.append((path, sense["id"], target))
    pairs: Set[Tuple[str, str]] = set()
    counts = {"relations": len(links), "too_long": 0, "same_lemma": 0}
    for path, source, target in links:
        if target not in lemma_of:
            raise ValueError(f"{path}: sense {source} has antonym {target}, which no entry has")
        a, b = sorted((lemma_of[source].lower(), lemma_of[target].lower()))
        if a == b:
            counts["same_lemma"] += 1
        elif max(len(a.split()), len(b.split())) > MAX_WORDS:
            counts["too_long"] += 1
        else:
            pairs.add((a, b))
    return pairs, counts


def render(pairs: Iterable[Tuple[str, str]], commit: str) -> str:
    """The text of the lexicon file.

    pairs (Iterable[Tuple[str, str]]): the pairs, ``a < b``.
    commit (str): the source's commit.
    RETURNS (str): the header line and one line per pair, sorted.
    """
    header = (
        f"# Open English WordNet ({REPO_URL}), commit {commit}: the sense relation antonym "
        "between lemmas (src/yaml/entries-*.yaml); CC BY 4.0 and the WordNet licence, "
        "see SOURCES.md"
    )
    for a, b in pairs:
        if "\t" in a + b or "\n" in a + b:
            raise ValueError(f"lemma with a tab or line break: {a!r} / {b!r}")
    return "\n".join([header] + [f"{a}\t{b}" for a, b in sorted(pairs)]) + "\n"


def build(mirror: Path, commit: str = "HEAD") -> Tuple[str, Dict]:
    """The English lexicon built from a clone of Open English WordNet.

    mirror (Path): the clone (bare or with a work tree).
    commit (str): the commit to read.
    RETURNS (Tuple[str, Dict]): the file's text and counts (``commit``, ``pairs``,
        ``relations``, ``too_long``, ``same_lemma``).
    """
    full = resolve_commit(mirror, commit)
    pairs, counts = antonym_pairs(read_entries(mirror, full))
    return render(pairs, full), {"commit": full, "pairs": len(pairs), **counts}


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirror", type=Path, help="a git clone of english-wordnet")
    parser.add_argument("--commit", default="HEAD", help="the commit to read (HEAD)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the .tsv to write")
    args = parser.parse_args(argv)
    try:
        text, counts = build(args.mirror, args.commit)
    except (ValueError, yaml.YAMLError) as error:
        print(f"build_antonyms: {error}".splitlines()[0], file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(
        f"{args.output}: {counts['pairs']} pairs from {counts['relations']} antonym "
        f"relations at {counts['commit']} (left out: {counts['too_long']} relations with a lemma "
        f"longer than {MAX_WORDS} words, {counts['same_lemma']} between senses of one lemma)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
