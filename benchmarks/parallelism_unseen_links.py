"""How many test parallelisms need a link value that never occurs in training?

A closed tag vocabulary (B-1, B-2, ...) cannot produce such links; the pairwise
linker can. Writes benchmarks/results/parallelism_unseen_links.json.

    python benchmarks/parallelism_unseen_links.py [DATA_DIR]
"""

import sys
from pathlib import Path

import srsly

from spacy_rhetoric.assets import data_root
from spacy_rhetoric.corpora import convert
from spacy_rhetoric.corpora.parallelisms import get_parallelisms
from spacy_rhetoric.parallelism.tag_codec import encode_strata
from spacy_rhetoric.parallelism.tags import TagScheme, link_values

DATA = data_root(sys.argv[1] if len(sys.argv) > 1 else None)


def links_per_parallelism(doc, scheme):
    """Per parallelism, the set of link values its later branches carry."""
    parallelisms = get_parallelisms(doc)
    n_strata = max((p.stratum for p in parallelisms), default=1)
    rows = encode_strata([(p.offsets, p.stratum) for p in parallelisms], len(doc), scheme, n_strata)
    result = []
    for p in parallelisms:
        row = rows[p.stratum - 1]
        result.append({int(row[start][2:]) for start, _ in p.offsets[1:]})
    return result


def main() -> None:
    results = {}
    for name, folder in (("asp", "asp"), ("pse", "pse-i")):
        conversion = convert(name, DATA / folder)
        for link in ("token", "branch"):
            scheme = TagScheme("bio", link)
            seen = set()
            for doc in conversion.splits["train"]:
                for row in encode_strata(
                    [(p.offsets, p.stratum) for p in get_parallelisms(doc)],
                    len(doc),
                    scheme,
                    max((p.stratum for p in get_parallelisms(doc)), default=1),
                ):
                    seen.update(link_values(row))
            total = unseen = 0
            for doc in conversion.splits["test"]:
                for links in links_per_parallelism(doc, scheme):
                    total += 1
                    unseen += bool(links - seen)
            results[f"{name}-{link}"] = {
                "train_link_values": sorted(seen),
                "test_parallelisms": total,
                "test_parallelisms_with_unseen_link": unseen,
                "share": unseen / total if total else 0.0,
            }
            print(name, link, f"{unseen}/{total} test parallelisms need an unseen link value")
    out = Path(__file__).parent / "results" / "parallelism_unseen_links.json"
    srsly.write_json(out, results)


if __name__ == "__main__":
    main()
