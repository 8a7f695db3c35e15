"""Inter-annotator agreement on the rhetoric corpus: the two independent annotations of
the agreement passages (``agreement/<id>.A.txt``, ``agreement/<id>.B.txt``), scored with
the metrics the models are scored with: EPM, MPBM, MBAWO and MWO for parallelism
(annotator A as the reference; F1 is symmetric) and the figure metric of
``spacy_rhetoric.figures.metrics`` (P, R, F1 per figure, per family and over all).
Words are the tokens of spaCy's blank pipeline of the language. The ASP paper's
agreement (EPM F1 0.41 between two annotators, Bothwell et al. 2023) is the anchor.

    python rhetoric_agreement.py --corpus data/rhetoric-corpus \\
        --output results/rhetoric_agreement.json
"""

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

ASP_AGREEMENT_EPM_F = 0.41


def load_build(corpus: Path) -> Any:
    """The corpus's ``build.py`` (the hand-format resolver) as a module."""
    spec = importlib.util.spec_from_file_location("rhetoric_corpus_build", corpus / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def token_offsets(doc: Any, ranges: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    out = []
    for start, end in ranges:
        span = doc.char_span(start, end, alignment_mode="expand")
        out.append((span.start, span.end))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()

    import spacy

    from spacy_rhetoric.figures.metrics import count_findings, score_findings, support_units
    from spacy_rhetoric.parallelism.metrics import score_parallelism_sets

    build = load_build(args.corpus)
    manifest = json.loads((args.corpus / "passages.json").read_text(encoding="utf8"))
    result: Dict[str, Any] = {"anchor": {"asp_annotators_epm_f": ASP_AGREEMENT_EPM_F}}
    for lang in ("la", "en", "de"):
        nlp = spacy.blank(lang)
        pairs, documents, passages, tokens = [], [], [], 0
        for entry in manifest:
            a = args.corpus / "agreement" / f"{entry['id']}.A.txt"
            b = args.corpus / "agreement" / f"{entry['id']}.B.txt"
            if entry["lang"] != lang or not (a.is_file() and b.is_file()):
                continue
            text = (args.corpus / "texts" / entry["id"] / "text.txt").read_text(encoding="utf8")[
                :-1
            ]
            annotations = []
            for path in (a, b):
                items, errors = build.read_annotation(path, text)
                if errors:
                    raise SystemExit(f"{path}: {len(errors)} errors, first: {errors[0]}")
                annotations.append(items)
            doc = nlp(text)
            tokens += len(text.split())
            passages.append(entry["id"])
            parallelisms = [
                [token_offsets(doc, i.members) for i in items if i.label == "parallelism"]
                for items in annotations
            ]
            pairs.append((parallelisms[0], parallelisms[1]))
            findings = [
                [(i.label, support_units({"support": i.support, "members": i.members}))
                 for i in items if i.label != "parallelism"]
                for items in annotations
            ]  # fmt: skip
            documents.append((findings[0], findings[1]))
        if not passages:
            continue
        total = sum(e["tokens"] for e in manifest if e["lang"] == lang)
        figures = score_findings(count_findings(documents))
        result[lang] = {
            "passages": passages,
            "tokens": tokens,
            "share_of_tokens": round(tokens / total, 4),
            "parallelism": {k: round(v, 4) for k, v in score_parallelism_sets(pairs).items()},
            "parallelisms": {
                "A": sum(len(p[0]) for p in pairs),
                "B": sum(len(p[1]) for p in pairs),
            },
            "figures": figures,
        }
        par = result[lang]["parallelism"]
        print(
            f"{lang}: {len(passages)} passages, {tokens} tokens ({tokens / total:.1%}); "
            f"parallelism EPM F1 {par['epm_f']:.3f}, MBAWO F1 {par['mbawo_f']:.3f}; "
            f"figures F1 {figures['all']['f']:.3f} "
            f"({figures['all']['reference']} A, {figures['all']['predicted']} B)"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
