"""Corpus readers and converters: one module per dataset format, each turning the
dataset's own files into Docs per split (see ``CONVERTERS``): ASP (``asp``, from its
brat annotation, ``asp_brat``, and tokenized XML, ``asp_xml``, aligned by
``asp_align``), PSE-I (``pse``), the chiasmus datasets (``chiasmus``), Loci Similes
(``loci_similes``), Tesserae texts (``tesserae``), CoNLL-U treebanks (``conllu``) and
the rhetoric corpus (``rhetoric``). Shared below the capabilities: the parallelism data
model on a Doc (``parallelisms``), Latin orthography (``latin``), the registered
readers (``reader``), corpus statistics (``stats``), short samples of each dataset
(``samples``) and the converters' plumbing (``util``)."""

from importlib import import_module
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

from spacy.vocab import Vocab

from .util import Conversion, CorpusFormatError, Skip, write_conversion

# format name -> (module, function); imported lazily so that one format's
# dependencies never slow down or break another's.
CONVERTERS: Dict[str, Tuple[str, str]] = {
    "asp": ("asp", "convert_asp"),
    "pse": ("pse", "convert_pse"),
    "chiasmus-de": ("chiasmus", "convert_chiasmus_de"),
    "chiasmus-en": ("chiasmus", "convert_chiasmus_en"),
    "loci-similes": ("loci_similes", "convert_loci_similes"),
    "conllu": ("conllu", "convert_conllu"),
    "rhetoric-corpus": ("rhetoric", "convert_rhetoric"),
}


def get_converter(name: str) -> Callable[..., Conversion]:
    """name (str): a key of CONVERTERS.
    RETURNS (Callable[[Path, Optional[Vocab]], Conversion]): the converter.
    """
    if name not in CONVERTERS:
        raise ValueError(f"Unknown corpus format '{name}'. Choose one of: {', '.join(CONVERTERS)}.")
    module, function = CONVERTERS[name]
    return getattr(import_module(f"{__name__}.{module}"), function)


def convert(name: str, path: Path, vocab: Optional[Vocab] = None) -> Conversion:
    """Convert a dataset in format ``name`` found at ``path``."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{name} converter: no such file or directory: {path}")
    return get_converter(name)(path, vocab=vocab)


__all__ = [
    "CONVERTERS",
    "Conversion",
    "CorpusFormatError",
    "Skip",
    "convert",
    "get_converter",
    "write_conversion",
]
