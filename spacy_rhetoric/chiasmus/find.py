"""Chiasmi in a whole text: a pipeline with a ``chiasmus_finder`` over its paragraphs,
the candidates ranked with their context."""

from typing import Any, Dict, List, Optional

from ..textio import paragraphs


def find_in_text(
    nlp: Any,
    text: str,
    top: int = 20,
    context: int = 5,
    key: Optional[str] = None,
    progress: bool = False,
    batch_size: int = 32,
) -> List[Dict[str, Any]]:
    """Run a pipeline with a chiasmus_finder over a text and rank its candidates.

    nlp (Language): the pipeline (POS, lemmas, chiasmus_finder).
    text (str): the text.
    top (int): how many candidates to return (0: all).
    context (int): tokens of context on either side.
    key (Optional[str]): the span group to rank (default: the finder's candidates group,
        else its chiasmus group).
    progress (bool): show a progress bar.
    batch_size (int): chunks per nlp.pipe batch.
    RETURNS (List[Dict[str, Any]]): candidates, best first, with score, type, words,
        character offsets, context and "review" (True: below the finder's threshold, kept
        for review, not a finding).
    """
    finder = next(
        (pipe for name, pipe in nlp.pipeline if getattr(pipe, "cfg", {}).get("support_key")),
        None,
    )
    if finder is None:
        raise ValueError("The pipeline has no chiasmus_finder: add one and train it first.")
    if key is None:
        key = finder.cfg["candidates_key"] or finder.cfg["spans_key"]
    threshold = finder.cfg["threshold"]
    chunks = list(paragraphs(text))
    offsets = [0]
    for chunk in chunks:
        offsets.append(offsets[-1] + len(chunk))
    docs = nlp.pipe(chunks, batch_size=batch_size)
    if progress:
        from tqdm import tqdm

        docs = tqdm(docs, total=len(chunks), unit="chunk", desc="chiasmus")
    found: List[Dict[str, Any]] = []
    for base, doc in zip(offsets, docs):
        group = doc.spans[key] if key in doc.spans else []
        for span in group:
            score = span._.chiasmus_score
            support = span._.chiasmus_support
            marked = {word.start: word.label_ for word in support}
            left = doc[max(0, span.start - context) : span.start].text
            right = doc[span.end : span.end + context].text
            inner = " ".join(f"[{t.text}]{marked[t.i]}" if t.i in marked else t.text for t in span)
            found.append(
                {
                    "score": float(score) if score is not None else 0.0,
                    "review": score is None or score < threshold,
                    "type": span.label_,
                    "text": span.text,
                    "start_char": base + span.start_char,
                    "end_char": base + span.end_char,
                    "words": {word.label_: word.text for word in support},
                    "context": f"{left} {inner} {right}".replace("\n", " ").strip(),
                }
            )
        if top and len(found) > 4 * top:  # bounded memory on long texts
            found.sort(key=lambda item: -item["score"])
            del found[top:]
    found.sort(key=lambda item: (-item["score"], item["start_char"]))
    return found[:top] if top else found
