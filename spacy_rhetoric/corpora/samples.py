"""Short texts from each dataset of the mirror, one encoder window each: what the
multilingual encoder is checked on (``encoders.verify``) and benchmarked with."""

from pathlib import Path
from typing import Dict, List, Union


def sample_texts(data: Union[str, Path], n: int = 200) -> Dict[str, List[str]]:
    """The first ``n`` distinct passages per language from the data mirror: ASP
    sections cut into 40-token pieces (Latin), German chiasmus candidates in 60-token
    pieces, PSE-I paragraphs in 80-word pieces (Chinese), UD English-EWT train
    sentences. Each fits one encoder window.

    data (Union[str, Path]): the data mirror (folders asp, german-chiasmus, pse-i, ud).
    RETURNS (Dict[str, List[str]]): texts by language code.
    """
    import re

    from . import convert

    data = Path(data)

    def chunks(docs, size: int) -> List[str]:
        texts: Dict[str, None] = {}
        for doc in docs:
            for start in range(0, len(doc), size):
                text = doc[start : start + size].text.strip()
                if text:
                    texts[text] = None
                if len(texts) == n:
                    return list(texts)
        return list(texts)

    ewt = data / "ud" / "UD_English-EWT" / "en_ewt-ud-train.conllu"
    lines = re.findall(r"^# text = (.+)$", ewt.read_text(encoding="utf8"), flags=re.M)
    return {
        "la": chunks(convert("asp", data / "asp").docs(), 40),
        "de": chunks(convert("chiasmus-de", data / "german-chiasmus").docs(), 60),
        "zh": chunks(convert("pse", data / "pse-i").docs(), 80),
        "en": list(dict.fromkeys(lines))[:n],
    }
