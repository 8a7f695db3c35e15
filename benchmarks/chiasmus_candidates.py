"""Speed and memory of the chiasmus candidate search against the naive definition.

Texts with gold POS: UD German-GSD test, UD English-EWT test (CoNLL-U, converted with
spacy_rhetoric.corpora.convert) and the contexts of the 450 German chiasmus candidates,
each concatenated into one token sequence. For each text the vectorised search runs on
the whole text (tokens/s, candidates/s) and both the vectorised search and the naive
nested loops (the definition, with the loops cut at the window) run on its first
``--naive-tokens`` tokens, where their outputs must be identical (speed-up). Finally
the streaming search counts the candidates of a novel-sized text (the three texts
repeated to ``--novel-tokens`` tokens) and reports its peak traced memory. The
``chiasmus_finder``'s default search (pairs by POS, lemma, form, and stem) is timed on
each text with its stem pairs and without (``finder_search``).

    python benchmarks/chiasmus_candidates.py [--data ../shared/data] [--window 30]

Writes benchmarks/results/chiasmus_candidates.json.
"""

import argparse
import json
import os
import platform
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from spacy_rhetoric.assets import data_root
from spacy_rhetoric.chiasmus.candidates import count_candidates, find_candidates
from spacy_rhetoric.chiasmus.suggester import DEFAULT_ALLOWED_POS, DEFAULT_FORM_POS
from spacy_rhetoric.corpora import convert

REPO = Path(__file__).resolve().parent.parent


def naive_candidates(
    pos: Sequence[str], lemmas: Sequence[str], window: int, allowed: Optional[set]
) -> Tuple[List[Tuple[int, int, int, int]], List[bool]]:
    """The naive reference: four nested loops (cut at the window) over a < b < b' < a',
    every condition of the definition tested on each quadruple."""
    n = len(pos)
    found, flags = [], []
    for a in range(n):
        end = min(n, a + window)
        for b in range(a + 1, end):
            for b2 in range(b + 1, end):
                for a2 in range(b2 + 1, end):
                    if (
                        pos[a] == pos[a2]
                        and pos[b] == pos[b2]
                        and (allowed is None or all(pos[i] in allowed for i in (a, b, b2, a2)))
                    ):
                        found.append((a, b, b2, a2))
                        flags.append(lemmas[a] == lemmas[a2] and lemmas[b] == lemmas[b2])
    return found, flags


def pruned_candidates(
    pos: Sequence[str], lemmas: Sequence[str], window: int, allowed: Optional[set]
) -> Tuple[List[Tuple[int, int, int, int]], List[bool]]:
    """The same loops in pure Python, but each condition tested as early as possible."""
    n = len(pos)
    ok = [allowed is None or p in allowed for p in pos]
    found, flags = [], []
    for a in range(n):
        if not ok[a]:
            continue
        end = min(n, a + window)
        for b in range(a + 1, end):
            if not ok[b]:
                continue
            for b2 in range(b + 1, end):
                if not ok[b2] or pos[b2] != pos[b]:
                    continue
                for a2 in range(b2 + 1, end):
                    if ok[a2] and pos[a2] == pos[a]:
                        found.append((a, b, b2, a2))
                        flags.append(lemmas[a] == lemmas[a2] and lemmas[b] == lemmas[b2])
    return found, flags


def timed(fn: Callable[[], object], repeats: int = 1) -> Tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def texts(data: Path) -> Dict[str, Tuple[List[str], List[str], List[str]]]:
    result = {}
    for name, path in (
        ("UD_German-GSD test", data / "ud" / "UD_German-GSD" / "de_gsd-ud-test.conllu"),
        ("UD_English-EWT test", data / "ud" / "UD_English-EWT" / "en_ewt-ud-test.conllu"),
    ):
        result[name] = _columns(convert("conllu", path).splits["test"])
    docs = convert("chiasmus-de", data / "german-chiasmus").splits["all"]
    result["German chiasmus contexts"] = _columns(docs)
    return result


def _columns(docs) -> Tuple[List[str], List[str], List[str]]:
    """POS, lemmas and lower-cased forms (from the text: the converted docs' vocab has no
    LOWER) of docs read as one token sequence."""
    tokens = [t for d in docs for t in d]
    return [t.pos_ for t in tokens], [t.lemma_ for t in tokens], [t.text.lower() for t in tokens]


def finder_search(
    pos: List[str], lemmas: List[str], forms: List[str], window: int, repeats: int
) -> Dict[str, object]:
    """The finder's default search with and without its stem pairs."""
    entry: Dict[str, object] = {}
    lowered = [lemma.lower() for lemma in lemmas]
    for label, stems in (("with_stem_pairs", forms), ("without_stem_pairs", None)):
        seconds, found = timed(
            lambda stems=stems: find_candidates(
                pos,
                lemmas=lowered,
                window=window,
                allowed_pos=DEFAULT_ALLOWED_POS,
                lemma_pairs=True,
                forms=forms,
                form_pos=DEFAULT_FORM_POS,
                distinct=True,
                stems=stems,
            ),
            repeats,
        )
        entry[label] = {
            "candidates": int(len(found.indices)),
            "antimetaboles": int(found.antimetabole.sum()),
            "seconds": seconds,
            "tokens_per_second": len(pos) / seconds,
        }
    entry["time_ratio"] = (
        entry["with_stem_pairs"]["seconds"] / entry["without_stem_pairs"]["seconds"]
    )
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=data_root(required=False),
    )
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--naive-tokens", type=int, default=4000)
    parser.add_argument("--novel-tokens", type=int, default=500_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--output", type=Path, default=REPO / "benchmarks" / "results" / "chiasmus_candidates.json"
    )
    args = parser.parse_args()
    allowed = set(DEFAULT_ALLOWED_POS)
    settings = {"window": args.window, "allowed_pos": sorted(allowed)}
    results: Dict[str, object] = {
        "settings": {
            **settings,
            "naive_tokens": args.naive_tokens,
            "novel_tokens": args.novel_tokens,
        },
        "machine": {
            "python": platform.python_version(),
            "numpy": numpy.__version__,
            "cpus": os.cpu_count(),
        },
        "texts": {},
    }
    all_pos: List[str] = []
    all_lemmas: List[str] = []
    for name, (pos, lemmas, forms) in texts(args.data).items():
        all_pos += pos
        all_lemmas += lemmas
        seconds, found = timed(
            lambda pos=pos, lemmas=lemmas: find_candidates(
                pos, lemmas=lemmas, window=args.window, allowed_pos=allowed
            ),
            args.repeats,
        )
        head_pos, head_lemmas = pos[: args.naive_tokens], lemmas[: args.naive_tokens]
        fast_seconds, fast = timed(
            lambda head_pos=head_pos, head_lemmas=head_lemmas: find_candidates(
                head_pos, lemmas=head_lemmas, window=args.window, allowed_pos=allowed
            ),
            args.repeats,
        )
        naive_seconds, (naive, naive_flags) = timed(
            lambda head_pos=head_pos, head_lemmas=head_lemmas: naive_candidates(
                head_pos, head_lemmas, args.window, allowed
            )
        )
        pruned_seconds, (pruned, _) = timed(
            lambda head_pos=head_pos, head_lemmas=head_lemmas: pruned_candidates(
                head_pos, head_lemmas, args.window, allowed
            )
        )
        identical = (
            fast.indices.tolist() == [list(c) for c in naive]
            and fast.antimetabole.tolist() == naive_flags
            and pruned == naive
        )
        entry = {
            "tokens": len(pos),
            "candidates": int(len(found.indices)),
            "antimetaboles": int(found.antimetabole.sum()),
            "seconds": seconds,
            "tokens_per_second": len(pos) / seconds,
            "candidates_per_second": len(found.indices) / seconds,
            "naive_subset": {
                "tokens": len(head_pos),
                "candidates": len(naive),
                "naive_seconds": naive_seconds,
                "vectorised_seconds": fast_seconds,
                "speedup": naive_seconds / fast_seconds,
                "pruned_loops_seconds": pruned_seconds,
                "speedup_over_pruned_loops": pruned_seconds / fast_seconds,
                "identical": identical,
            },
        }
        entry["finder_search"] = finder_search(pos, lemmas, forms, args.window, args.repeats)
        results["texts"][name] = entry
        print(
            f"{name}: {len(pos)} tokens, {entry['candidates']} candidates in {seconds:.2f}s "
            f"({entry['tokens_per_second']:.0f} tokens/s); naive on {len(head_pos)} tokens "
            f"{naive_seconds:.1f}s (pruned {pruned_seconds:.2f}s) vs {fast_seconds:.3f}s: "
            f"x{naive_seconds / fast_seconds:.0f} (x{pruned_seconds / fast_seconds:.0f}), "
            f"identical={identical}; finder search with/without stem pairs: "
            f"x{entry['finder_search']['time_ratio']:.2f} time, "
            f"{entry['finder_search']['with_stem_pairs']['candidates']} / "
            f"{entry['finder_search']['without_stem_pairs']['candidates']} candidates",
            flush=True,
        )
    # a novel-sized text, streamed: bounded memory
    repeats = -(-args.novel_tokens // len(all_pos))
    novel_pos = (all_pos * repeats)[: args.novel_tokens]
    tracemalloc.start()
    start = time.perf_counter()
    n = count_candidates(novel_pos, window=args.window, allowed_pos=allowed)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    results["novel_streaming"] = {
        "tokens": len(novel_pos),
        "candidates": n,
        "seconds_traced": seconds,
        "peak_traced_mib": peak / 2**20,
        "note": "tracemalloc slows the run; the peak includes the input list",
    }
    print(
        f"novel: {len(novel_pos)} tokens, {n} candidates, peak {peak / 2**20:.0f} MiB traced",
        flush=True,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf8")
    print(f"-> {args.output}")


if __name__ == "__main__":
    main()
