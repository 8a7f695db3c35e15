"""Read the tokenized XML of the Augustinian Sermon Parallelism (ASP) dataset.

Each ``xml/tokenized/NNN_annotated.xml`` holds one sermon > section > word; each word
has its token text in ``cont`` and, per stratum k of the parallelisms it belongs to,
``parallelism_id_k`` and ``branch_id_k``. ``read_asp_xml`` reads the sections, their
words and each word's branch memberships; ``xml_parallelisms`` checks the branches
(contiguous, inside one section, at one stratum per parallelism, at least two per
parallelism) and groups them into parallelisms. The converter (``asp``) combines
them with the brat annotation. Malformed input raises ``CorpusFormatError`` naming
the file and the line.
"""

import re
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Dict, List, Tuple
from xml.parsers import expat

from .util import CorpusFormatError

_TAG_ATTR_RE = re.compile(r"(parallelism|branch)_id_(\d+)")


@dataclass
class Section:
    """One ``<section>``: its id, the line of its tag, its words and their lines."""

    id: str
    line: int
    words: List[str] = field(default_factory=list)
    lines: List[int] = field(default_factory=list)


@dataclass
class Sermon:
    """One XML file: its sermon id, sections and branch memberships."""

    path: Path
    id: str
    sections: List[Section]
    # (stratum, parallelism id, branch id) -> [(section index, word index)]
    branches: Dict[Tuple[int, int, int], List[Tuple[int, int]]]


def _positive_int(value: str) -> int | None:
    return int(value) if value.isdigit() and int(value) > 0 else None


def read_asp_xml(path: str | Path) -> Sermon:
    """Read one tokenized ASP XML file (sermon > section > word).

    path (str | Path): the ``NNN_annotated.xml`` file.
    RETURNS (Sermon): its sections, words and branch memberships.
    """
    path = Path(path)
    parser = expat.ParserCreate()
    sections: List[Section] = []
    branches: Dict[Tuple[int, int, int], List[Tuple[int, int]]] = {}
    stack: List[str] = []
    sermon_id: List[str] = []

    def start(name: str, attrs: Dict[str, str]) -> None:
        line = parser.CurrentLineNumber
        parent = stack[-1] if stack else None
        stack.append(name)
        if name == "sermon" and parent is None:
            if not attrs.get("id"):
                raise CorpusFormatError(path, line, "<sermon> without an id attribute")
            sermon_id.append(attrs["id"])
        elif name == "section" and parent == "sermon":
            if not attrs.get("id"):
                raise CorpusFormatError(path, line, "<section> without an id attribute")
            if any(s.id == attrs["id"] for s in sections):
                raise CorpusFormatError(path, line, f"duplicate section id '{attrs['id']}'")
            sections.append(Section(attrs["id"], line))
        elif name == "word" and parent == "section":
            _read_word(path, line, attrs, sections, branches)
        else:
            where = f"inside <{parent}>" if parent else "as the root element"
            raise CorpusFormatError(path, line, f"unexpected element <{name}> {where}")

    def end(name: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    with path.open("rb") as file_:
        try:
            parser.ParseFile(file_)
        except expat.ExpatError as err:
            raise CorpusFormatError(path, err.lineno, f"malformed XML: {err}") from None
    if not sermon_id:
        raise CorpusFormatError(path, None, "no <sermon> element")
    return Sermon(path, sermon_id[0], sections, branches)


def _read_word(
    path: Path,
    line: int,
    attrs: Dict[str, str],
    sections: List[Section],
    branches: Dict[Tuple[int, int, int], List[Tuple[int, int]]],
) -> None:
    section = sections[-1]
    position = len(section.words)
    if "cont" not in attrs:
        raise CorpusFormatError(path, line, "<word> without a cont attribute (the token text)")
    if not attrs["cont"] or attrs["cont"] != attrs["cont"].strip():
        raise CorpusFormatError(path, line, f"<word> with empty or padded cont {attrs['cont']!r}")
    if attrs.get("id") != str(position + 1):
        raise CorpusFormatError(
            path,
            line,
            f"<word> id {attrs.get('id')!r}, expected '{position + 1}' (ids count 1, 2, ...)",
        )
    tags: Dict[int, Dict[str, int]] = {}
    for key, value in attrs.items():
        if key in ("id", "cont"):
            continue
        match = _TAG_ATTR_RE.fullmatch(key)
        stratum = _positive_int(match.group(2)) if match else None
        if stratum is None:
            raise CorpusFormatError(path, line, f"<word> with unknown attribute {key}={value!r}")
        number = _positive_int(value)
        if number is None:
            raise CorpusFormatError(
                path, line, f"<word> attribute {key}={value!r} is not a positive integer"
            )
        tags.setdefault(stratum, {})[match.group(1)] = number
    for stratum, tag in sorted(tags.items()):
        if len(tag) != 2:
            raise CorpusFormatError(
                path,
                line,
                f"<word> needs both parallelism_id_{stratum} and branch_id_{stratum}, "
                f"found only {next(iter(tag))}_id_{stratum}",
            )
        key = (stratum, tag["parallelism"], tag["branch"])
        branches.setdefault(key, []).append((len(sections) - 1, position))
    section.words.append(attrs["cont"])
    section.lines.append(line)


@dataclass
class XmlParallelism:
    """One parallelism of the XML: its id, its stratum and its branches."""

    pid: int
    stratum: int
    # branch id -> (section index, start, end)
    branches: Dict[int, Tuple[int, int, int]]


def xml_parallelisms(sermon: Sermon) -> Dict[int, XmlParallelism]:
    """Validate the branches of a sermon and group them into parallelisms."""
    path = sermon.path
    result: Dict[int, XmlParallelism] = {}
    for (stratum, pid, bid), members in sorted(sermon.branches.items()):
        sec, first = members[0]
        line = sermon.sections[sec].lines[first]
        for (sec1, idx1), (sec2, idx2) in pairwise(members):
            if sec2 != sec1:
                raise CorpusFormatError(
                    path,
                    sermon.sections[sec2].lines[idx2],
                    f"branch {bid} of parallelism {pid} (stratum {stratum}) runs from section "
                    f"{sermon.sections[sec1].id} into section {sermon.sections[sec2].id}",
                )
            if idx2 != idx1 + 1:
                raise CorpusFormatError(
                    path,
                    sermon.sections[sec2].lines[idx2],
                    f"branch {bid} of parallelism {pid} (stratum {stratum}) is not contiguous: "
                    f"it resumes at word {idx2 + 1} after word {idx1 + 1}",
                )
        par = result.get(pid)
        if par is None:
            par = result[pid] = XmlParallelism(pid, stratum, {})
        elif par.stratum != stratum:
            raise CorpusFormatError(
                path, line, f"parallelism {pid} appears at strata {par.stratum} and {stratum}"
            )
        par.branches[bid] = (sec, first, members[-1][1] + 1)
    for pid, par in result.items():
        if len(par.branches) < 2:
            ((bid, (sec, start, _)),) = par.branches.items()
            raise CorpusFormatError(
                path,
                sermon.sections[sec].lines[start],
                f"branch {bid} of parallelism {pid} (stratum {par.stratum}) has no partner: "
                f"a parallelism needs at least two branches",
            )
    return result
