"""Shared plumbing of the corpus converters: errors, skip reports, DocBin output."""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Union

import srsly
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab


class CorpusFormatError(ValueError):
    """A record of a corpus file is malformed. The message names the file and the
    line (or record) so that the user can find and fix it."""

    def __init__(self, path: Union[str, Path], where: Optional[Union[int, str]], message: str):
        self.path = str(path)
        self.where = where
        location = self.path if where is None else f"{self.path}:{where}"
        super().__init__(f"{location}: {message}")


@dataclass
class Skip:
    """One record a converter skipped on purpose, with the reason."""

    path: str
    where: Optional[Union[int, str]]
    reason: str


@dataclass
class Conversion:
    """What a converter produced: docs per split plus every skipped record."""

    splits: Dict[str, List[Doc]] = field(default_factory=dict)
    skipped: List[Skip] = field(default_factory=list)

    def skip(self, path: Union[str, Path], where: Optional[Union[int, str]], reason: str) -> None:
        self.skipped.append(Skip(str(path), where, reason))

    def skip_summary(self) -> Dict[str, int]:
        """RETURNS (Dict[str, int]): number of skipped records per reason."""
        return dict(Counter(s.reason for s in self.skipped))

    def docs(self) -> Iterator[Doc]:
        for docs in self.splits.values():
            yield from docs


def write_conversion(conversion: Conversion, output_dir: Union[str, Path]) -> Dict[str, Path]:
    """Write one ``<split>.spacy`` DocBin per split and ``skipped.json`` if anything
    was skipped.

    conversion (Conversion): the converter's result.
    output_dir (Union[str, Path]): directory to write (created if missing).
    RETURNS (Dict[str, Path]): the written DocBin path per split.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, docs in conversion.splits.items():
        doc_bin = DocBin(store_user_data=True, docs=docs)
        path = output_dir / f"{split}.spacy"
        doc_bin.to_disk(path)
        paths[split] = path
    skipped_path = output_dir / "skipped.json"
    if conversion.skipped:
        srsly.write_json(
            skipped_path,
            {
                "summary": conversion.skip_summary(),
                "records": [s.__dict__ for s in conversion.skipped],
            },
        )
    elif skipped_path.exists():
        skipped_path.unlink()
    return paths


# A doc's language, where it differs from its vocab's (a Latin text in a multilingual
# "xx" pipeline): ``doc.user_data[LANGUAGE_KEY]``, an ISO code such as "la". The ASP and
# PSE-I converters write it; a model that reads the language takes it from here first.
LANGUAGE_KEY = "lang"


def doc_language(doc: Doc) -> str:
    """RETURNS (str): the doc's language: ``user_data["lang"]`` where set, else the
    language of its vocab (``doc.lang_``, "xx" in a multilingual pipeline)."""
    return str(doc.user_data.get(LANGUAGE_KEY) or doc.lang_)


def carry_language(source: Doc, target: Doc) -> Doc:
    """Give ``target`` (a copy or part of ``source``) the language ``source`` states in
    its user_data, if it states one. RETURNS (Doc): target."""
    language = source.user_data.get(LANGUAGE_KEY)
    if language:
        target.user_data[LANGUAGE_KEY] = language
    return target


def gold_tokens_doc(vocab: Vocab, reference: Doc) -> Doc:
    """A doc with the reference's tokens (words and spaces) and nothing else: the input
    of a model that is evaluated or trained on the gold tokenization. It keeps the
    language the reference states (``user_data["lang"]``), an input, not an annotation.

    vocab (Vocab): the vocab of the new doc (the pipeline's).
    reference (Doc): the gold doc.
    RETURNS (Doc): the bare doc.
    """
    words = [token.text for token in reference]
    spaces = [bool(token.whitespace_) for token in reference]
    return carry_language(reference, Doc(vocab, words=words, spaces=spaces))
