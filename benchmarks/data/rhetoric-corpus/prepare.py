"""Cut the rhetoric corpus's new passages out of their public sources and fix their splits.

Writes, for every passage of ``PASSAGES``, ``texts/<id>/text.txt`` (the passage as it is
annotated) and ``texts/<id>/SOURCE.md`` (origin, commit, file, blob, what was removed),
and ``passages.json`` (every passage of the corpus with its language, work, date, tokens
and split). The passages of ``benchmarks/data/parallelism-running`` join the corpus with
their own dev/test splits; ``passages.json`` keeps them (``joined``) as they are.

Sources (public repositories, read from local checkouts of the commits named below):

- Latin: the Latin Library as redistributed by CLTK, ``cltk/latin_text_latin_library`` @
  ``76229acaf02efd1964ac32009408a90b6f279758`` (Public Domain Mark 1.0)
- English: the US inaugural addresses of NLTK's ``inaugural`` corpus,
  ``nltk/nltk_data`` @ ``5db857e6f7df11eabb5e5665836db9ec8df07e28``,
  ``packages/corpora/inaugural.zip`` (works of the US federal government: public domain)
- German: GerDraCor, ``dracor-org/gerdracor`` @ ``1a985284303b4338acb7a6deb51d4c81cc621d2e``
  (CC0 1.0; the plays themselves are in the public domain)

The split rule (fixed before any passage was annotated): within each language, the
works are taken in the order of the SHA-1 of their work id; each work (all its passages)
goes to the split whose token count is furthest below its target share (train 0.6, dev
0.2, test 0.2) of the tokens assigned so far, the parallelism-running passages (already
dev or test) counted from the start; ties go to train, then dev. Tokens are
whitespace-separated words.

    python prepare.py --latin-library DIR --inaugural DIR --gerdracor DIR [--check]
"""

import argparse
import hashlib
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
LATIN_LIBRARY = ("cltk/latin_text_latin_library", "76229acaf02efd1964ac32009408a90b6f279758")
NLTK_DATA = ("nltk/nltk_data", "5db857e6f7df11eabb5e5665836db9ec8df07e28")
GERDRACOR = ("dracor-org/gerdracor", "1a985284303b4338acb7a6deb51d4c81cc621d2e")
TARGETS = {"train": 0.6, "dev": 0.2, "test": 0.2}
TEI = "{http://www.tei-c.org/ns/1.0}"

# --- the passages -----------------------------------------------------------------------
# Latin: (id, work id, work, passage, date, file, first words, last words, extra cleaning)
LATIN = [
    (
        "la-cic-rosc",
        "cicero-rosc",
        "Cicero, Pro Sex. Roscio Amerino",
        "§§1–14",
        "80 BC",
        "cicero/sex.rosc.txt",
        "Credo ego vos, iudices",
        "et rei publicae calamitatem.",
        (),
    ),
    (
        "la-cic-verr",
        "cicero-verr",
        "Cicero, In Verrem II 5",
        "§§158–168",
        "70 BC",
        "cicero/verres.2.5.txt",
        "Nam quid ego de P. Gavio",
        "in crucem tolleretur.",
        (),
    ),
    (
        "la-cic-imp",
        "cicero-imp",
        "Cicero, De imperio Cn. Pompei",
        "§§27–39",
        "66 BC",
        "cicero/imp.txt",
        "Satis mihi multa verba",
        "amicorum tectis esse voluerunt.",
        (),
    ),
    (
        "la-cic-fam",
        "cicero-fam14",
        "Cicero, Epistulae ad familiares 14",
        "14.1–14.3",
        "58 BC",
        "cicero/fam14.txt",
        "TULLIUS TERENTIAE SUAE, TULLIOLAE SUAE",
        "debilitor lacrimis. Vale. Pr. Kal. Dec.",
        ("letters",),
    ),
    (
        "la-cic-rep",
        "cicero-rep6",
        "Cicero, De re publica 6 (Somnium Scipionis)",
        "§§9–17",
        "54–51 BC",
        "cicero/repub6.txt",
        'Scipio: "Cum in Africam',
        "omnia nutu suo pondera.'",
        ("paren-sections",),
    ),
    (
        "la-cic-deio",
        "cicero-deio",
        "Cicero, Pro rege Deiotaro",
        "§§1–15",
        "45 BC",
        "cicero/deio.txt",
        "Cum in omnibus causis",
        "non modo perfecto, sed etiam cogitato?",
        (),
    ),
    (
        "la-cic-phil4",
        "cicero-phil4",
        "Cicero, Philippica IV",
        "§§1–16 (the whole speech)",
        "44 BC",
        "cicero/phil4.txt",
        "Frequentia vestrum incredibilis",
        "ad spem libertatis exarsimus.",
        (),
    ),
    (
        "la-sall-jug",
        "sallust-jug",
        "Sallust, Bellum Iugurthinum",
        "85 (the speech of Marius)",
        "c. 41 BC",
        "sall.2.txt",
        '"Scio ego, Quirites',
        'nam strenuis abunde dictum puto."',
        (),
    ),
    (
        "la-sall-lep",
        "sallust-hist",
        "Sallust, Historiae 1.55 (the speech of Lepidus)",
        "the whole speech",
        "c. 38 BC",
        "sall.lep.txt",
        "Clementia et probitas vostra",
        "ad recipiundam libertatem!",
        ("inline-numbers",),
    ),
    (
        "la-sall-macer",
        "sallust-hist",
        "Sallust, Historiae 3.48 (the speech of Macer)",
        "the whole speech",
        "c. 38 BC",
        "sall.macer.txt",
        "Si, Quirites, parum existumaretis",
        "quam uos repetiueritis libertatem.",
        ("inline-numbers",),
    ),
    (
        "la-cic-clu",
        "cicero-clu",
        "Cicero, Pro Cluentio",
        "§§1–8",
        "66 BC",
        "cicero/cluentio.txt",
        "Animadverti, iudices",
        "benigne attenteque audiatis.",
        ("roman-sections", "inline-numbers"),
    ),
    (
        "la-liv-22",
        "livy-22",
        "Livy, Ab urbe condita 22",
        "38–40 (the speech of Fabius to Paulus)",
        "c. 25 BC",
        "livy/liv.22.txt",
        "Dilectu perfecto consules",
        "si maturitas temporum exspectata foret.",
        ("brackets-keep",),
    ),
    (
        "la-tac-dial",
        "tacitus-dial",
        "Tacitus, Dialogus de oratoribus",
        "5–10 (the speech of Aper)",
        "c. AD 102",
        "tacitus/tac.dialogus.txt",
        '"Ego vero" inquit Secundus',
        'probata sit fides et libertas excusata."',
        (),
    ),
    (
        "la-liv-21",
        "livy-21",
        "Livy, Ab urbe condita 21",
        "40–44 (the speeches of Scipio and Hannibal)",
        "c. 25 BC",
        "livy/liv.21.txt",
        '"Si eum exercitum, milites',
        'ab dis immortalibus acrius datum est."',
        ("brackets-keep",),
    ),
    (
        "la-sen-brev",
        "seneca-brev",
        "Seneca, De brevitate vitae",
        "1–3",
        "c. AD 49",
        "sen/sen.brevita.txt",
        "Maior pars mortalium",
        "quo pauci perduxerunt?",
        ("inline-numbers", "roman-sections"),
    ),
    (
        "la-sen-ep47",
        "seneca-ep47",
        "Seneca, Epistulae morales 47",
        "the whole letter",
        "c. AD 64",
        "sen/seneca.ep5.txt",
        "Libenter ex iis qui a te veniunt",
        "non in melius sed in aliud. Vale.",
        (),
    ),
    (
        "la-quint-12",
        "quintilian-12",
        "Quintilian, Institutio oratoria 12",
        "the prooemium and 12.1.1–13",
        "c. AD 95",
        "quintilian/quintilian.institutio12.txt",
        "Ventum est ad partem operis",
        "talis advocatus malae causae argumentum.",
        ("roman-sections", "inline-numbers"),
    ),
    (
        "la-tac-agr",
        "tacitus-agr",
        "Tacitus, Agricola",
        "29–34 (the speeches of Calgacus and Agricola)",
        "AD 98",
        "tacitus/tac.agri.txt",
        "Initio aestatis Agricola",
        "aut causas rebellandi.'",
        (),
    ),
    (
        "la-plin-pan",
        "pliny-pan",
        "Pliny the Younger, Panegyricus",
        "1–5",
        "AD 100",
        "pliny.panegyricus.txt",
        "Bene ac sapienter, Patres",
        "sub diversa specie latent.",
        ("roman-headings",),
    ),
]

# English: (id, file, date); the whole address where it has at most LONG words, else its
# opening paragraphs up to the first paragraph end at or after OPENING words
LONG, OPENING = 1800, 1200
ENGLISH = [
    ("en-1789-washington", "1789-Washington.txt"),
    ("en-1793-washington", "1793-Washington.txt"),
    ("en-1797-adams", "1797-Adams.txt"),
    ("en-1801-jefferson", "1801-Jefferson.txt"),
    ("en-1805-jefferson", "1805-Jefferson.txt"),
    ("en-1809-madison", "1809-Madison.txt"),
    ("en-1813-madison", "1813-Madison.txt"),
    ("en-1817-monroe", "1817-Monroe.txt"),
    ("en-1821-monroe", "1821-Monroe.txt"),
    ("en-1825-adams", "1825-Adams.txt"),
    ("en-1829-jackson", "1829-Jackson.txt"),
    ("en-1833-jackson", "1833-Jackson.txt"),
    ("en-1837-vanburen", "1837-VanBuren.txt"),
    ("en-1841-harrison", "1841-Harrison.txt"),
    ("en-1845-polk", "1845-Polk.txt"),
    ("en-1849-taylor", "1849-Taylor.txt"),
    ("en-1853-pierce", "1853-Pierce.txt"),
    ("en-1857-buchanan", "1857-Buchanan.txt"),
]
PRESIDENTS = {
    "washington": "George Washington", "adams": "John Adams", "jefferson": "Thomas Jefferson",
    "madison": "James Madison", "monroe": "James Monroe", "jackson": "Andrew Jackson",
    "vanburen": "Martin Van Buren", "harrison": "William Henry Harrison",
    "polk": "James K. Polk", "taylor": "Zachary Taylor", "pierce": "Franklin Pierce",
    "buchanan": "James Buchanan",
}  # fmt: skip

# German: (id, work id, work, passage, date, TEI file, first speech, last speech (indices
# of <sp> in the play, 0-based))
GERMAN = [
    (
        "de-lessing-philotas",
        "lessing-philotas",
        "Lessing, Philotas",
        "scenes 3–4",
        "1759",
        "lessing-philotas",
        10,
        20,
    ),
    (
        "de-lessing-emilia",
        "lessing-emilia",
        "Lessing, Emilia Galotti",
        "IV,3 (Orsina and Marinelli)",
        "1772",
        "lessing-emilia-galotti",
        560,
        580,
    ),
    (
        "de-kleist-hermann",
        "kleist-hermann",
        "Kleist, Die Hermannsschlacht",
        "I,3 (Hermann and the princes)",
        "1808",
        "kleist-die-hermannsschlacht",
        60,
        73,
    ),
    (
        "de-kleist-homburg",
        "kleist-homburg",
        "Kleist, Prinz Friedrich von Homburg",
        "V,5 (Kottwitz and Hohenzollern before the Elector)",
        "1811",
        "kleist-prinz-friedrich-von-homburg",
        725,
        749,
    ),
    (
        "de-koerner-zriny-1",
        "koerner-zriny",
        "Körner, Zriny",
        "Zriny's speech to his men",
        "1812",
        "koerner-zriny",
        232,
        240,
    ),
    (
        "de-koerner-zriny-2",
        "koerner-zriny",
        "Körner, Zriny",
        "the farewell and Zriny's last speech",
        "1812",
        "koerner-zriny",
        508,
        517,
    ),
    (
        "de-grillparzer-ottokar",
        "grillparzer-ottokar",
        "Grillparzer, König Ottokars Glück und Ende",
        "III (Rudolf and Ottokar)",
        "1825",
        "grillparzer-koenig-ottokars-glueck-und-ende",
        640,
        655,
    ),
    (
        "de-buechner-danton-1",
        "buechner-danton",
        "Büchner, Dantons Tod",
        "I,3 (the Jacobin club, Robespierre's speech)",
        "1835",
        "buechner-dantons-tod",
        92,
        100,
    ),
    (
        "de-buechner-danton-2",
        "buechner-danton",
        "Büchner, Dantons Tod",
        "II,7 (the National Convention, Robespierre and St. Just)",
        "1835",
        "buechner-dantons-tod",
        360,
        370,
    ),
    (
        "de-buechner-leonce",
        "buechner-leonce",
        "Büchner, Leonce und Lena",
        "I,1",
        "1836",
        "buechner-leonce-und-lena",
        0,
        21,
    ),
    (
        "de-hebbel-magdalene",
        "hebbel-magdalene",
        "Hebbel, Maria Magdalene",
        "I,5 (Meister Anton and Leonhard)",
        "1844",
        "hebbel-maria-magdalene",
        130,
        142,
    ),
    (
        "de-gutzkow-uriel",
        "gutzkow-uriel",
        "Gutzkow, Uriel Acosta",
        "II (Uriel's defence)",
        "1846",
        "gutzkow-uriel-acosta",
        155,
        165,
    ),
]


# --- Latin ------------------------------------------------------------------------------


def blob_id(data: bytes) -> str:
    """RETURNS (str): the git blob id of the bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def clean_latin(raw: str, extra: Tuple[str, ...]) -> Tuple[str, List[Dict[str, object]]]:
    """The passage without the Latin Library's layout; the section starts as offsets.

    Removed: bracketed section numbers ``[ n ]`` (kept as ``sections``), bracketed
    editorial deletions (``[quod]``), the angle brackets of editorial additions (their
    words kept), and per text: letter headers (date lines), parenthesised section numbers,
    inline section numbers, Roman chapter and section numerals.
    """
    text = raw
    if "letters" in extra:
        # the editors' date lines ("II. Scr. Thessalonicae ... a.u.c. 696.") go; the
        # salutation after them stays, each letter a paragraph
        text = re.sub(r"\s*\b[IVX]+\.\s+Scr\..*?a\.u\.c\.\s*\d+\.\s*", "\n\n", text)
    if "paren-sections" in extra:
        text = re.sub(r"\((\d+)\)", r"[\1]", text)
    if "roman-headings" in extra:
        text = re.sub(r"(?m)^\s*[IVXL]+\.\s*$", " ", text)
    if "roman-sections" in extra:
        text = re.sub(r"(?<![\w.])(?:[IVX]+|X?L[IVX]*)\.(?=\s)", " ", text)
    if "inline-numbers" in extra:
        text = re.sub(r"(?<![\w\[])\d+\.?(?![\w\]])", " ", text)
    if "brackets-keep" in extra:  # square brackets mark restorations: the words stay
        text = re.sub(r"\[(?!\s*\d)([^\]]*)\]", r"\1", text)
    text = re.sub(r"\[(?!\s*\d)[^\]]*\]", " ", text)  # deletions
    text = text.replace("<", "").replace(">", "")
    sections: List[Dict[str, object]] = []
    out: List[str] = []
    paragraphs = (
        [p for p in re.split(r"\n\s*\n", text) if p.strip()] if "letters" in extra else [text]
    )
    for number, paragraph in enumerate(paragraphs):
        pieces = re.split(r"\[\s*(\d+)\s*\]", paragraph)
        for i, piece in enumerate(pieces):
            if i % 2 == 1:
                start = len("".join(out))
                if out and not out[-1].endswith((" ", "\n")):
                    start += 1
                sections.append({"section": int(piece), "start": start})
                continue
            words = " ".join(piece.split())
            if not words:
                continue
            if out and not out[-1].endswith("\n"):
                out.append(" ")
            out.append(words)
        if number < len(paragraphs) - 1:
            out.append("\n\n")
    return "".join(out).strip(), sections


def latin_passages(root: Path) -> List[Dict[str, object]]:
    rows = []
    for pid, work_id, work, passage, date, path, first, last, extra in LATIN:
        data = (root / path).read_bytes()
        raw = data.decode("utf8")
        start = raw.find(first)
        end = raw.find(last, start)
        if start < 0 or end < 0 or raw.count(first) != 1:
            raise ValueError(f"{pid}: {first!r} ... {last!r} not found once in {path}")
        text, sections = clean_latin(raw[start : end + len(last)], extra)
        rows.append({
            "id": pid, "lang": "la", "work_id": work_id, "work": work, "passage": passage,
            "date": date, "text": text, "sections": sections,
            "source": {"repository": LATIN_LIBRARY[0], "commit": LATIN_LIBRARY[1],
                       "file": path, "blob": blob_id(data)},
            "licence": "Public Domain Mark 1.0 (The Latin Library)",
            "removed": "the Latin Library's layout: bracketed section numbers (kept as "
                       "offsets in `sections`), bracketed editorial deletions, the angle "
                       "brackets of editorial additions (their words kept)"
                       + (", " + ", ".join(extra) if extra else ""),
        })  # fmt: skip
    return rows


# --- English ----------------------------------------------------------------------------


def english_passages(root: Path) -> List[Dict[str, object]]:
    rows = []
    for pid, name in ENGLISH:
        data = (root / name).read_bytes()
        paragraphs = [" ".join(p.split()) for p in data.decode("utf8").splitlines() if p.strip()]
        total = sum(len(p.split()) for p in paragraphs)
        kept, words = [], 0
        for paragraph in paragraphs:
            kept.append(paragraph)
            words += len(paragraph.split())
            if total > LONG and words >= OPENING:
                break
        # square brackets mark editorial insertions: the words stay
        text = "\n\n".join(kept).replace("[", "").replace("]", "")
        year, who = name[:4], name[5:-4].lower()
        president = "John Quincy Adams" if year == "1825" else PRESIDENTS[who]
        passage = (
            "the whole address"
            if len(kept) == len(paragraphs)
            else (f"the opening {len(kept)} of {len(paragraphs)} paragraphs")
        )
        rows.append({
            "id": pid, "lang": "en", "work_id": pid, "work": f"{president}, inaugural "
            f"address ({year})", "passage": passage, "date": year, "text": text,
            "source": {"repository": NLTK_DATA[0], "commit": NLTK_DATA[1],
                       "file": f"packages/corpora/inaugural.zip: inaugural/{name}",
                       "blob": blob_id(data)},
            "licence": "public domain (a work of the US federal government)",
            "removed": "square brackets of editorial insertions (their words kept); "
                       "paragraphs separated by a blank line",
        })  # fmt: skip
    return rows


# --- German -----------------------------------------------------------------------------


def speech_text(sp: ET.Element) -> str:
    """A speech's words without speaker and stage directions; verse lines end in a line
    break, prose paragraphs are joined by spaces."""
    lines: List[str] = []
    current: List[str] = []

    def walk(node: ET.Element) -> None:
        tag = node.tag.replace(TEI, "")
        if tag in ("stage", "speaker", "note"):
            if node.tail:
                current.append(node.tail)
            return
        if node.text:
            current.append(node.text)
        for child in node:
            walk(child)
        if tag == "l":
            lines.append(" ".join("".join(current).split()))
            current.clear()
        if node.tail:
            current.append(node.tail)

    for child in sp:
        if child.tag.replace(TEI, "") in ("speaker", "stage"):
            continue
        walk(child)
        if child.tag.replace(TEI, "") == "p":
            lines.append(" ".join("".join(current).split()))
            current.clear()
    if "".join(current).strip():
        lines.append(" ".join("".join(current).split()))
    verse = sp.find(f"{TEI}l") is not None or sp.find(f".//{TEI}lg") is not None
    lines = [line for line in lines if line]
    return ("\n" if verse else " ").join(lines)


def german_passages(root: Path) -> List[Dict[str, object]]:
    rows = []
    for pid, work_id, work, passage, date, play, first, last in GERMAN:
        data = (root / "tei" / f"{play}.xml").read_bytes()
        speeches = ET.fromstring(data).findall(f".//{TEI}sp")[first : last + 1]
        names = []
        parts = []
        for sp in speeches:
            speaker = sp.find(f"{TEI}speaker")
            name = " ".join("".join(speaker.itertext()).split()) if speaker is not None else ""
            name = name.rstrip(".:")
            names.append(name.upper())
            parts.append((name.upper(), speech_text(sp)))
        several = len(set(names)) > 1
        text = "\n".join(f"{name}. {words}" if several else words for name, words in parts)
        rows.append({
            "id": pid, "lang": "de", "work_id": work_id, "work": f"{work} ({date})",
            "passage": f"{passage}; speeches {first}–{last} of the TEI file (0-based)",
            "date": date, "text": text,
            "source": {"repository": GERDRACOR[0], "commit": GERDRACOR[1],
                       "file": f"tei/{play}.xml", "blob": blob_id(data)},
            "licence": "GerDraCor CC0 1.0; the play is in the public domain",
            "removed": "stage directions; speaker names kept (upper case, then a full stop) "
                       "where more than one speaker speaks; verse lines end in a line break",
        })  # fmt: skip
    return rows


# --- splits -----------------------------------------------------------------------------


def joined_passages() -> List[Dict[str, object]]:
    """The passages that joined the corpus with their splits (the parallelism-running set),
    as ``passages.json`` lists them."""
    manifest = json.loads((HERE / "passages.json").read_text(encoding="utf8"))
    return [entry for entry in manifest if entry.get("joined")]


def assign_splits(new: List[Dict[str, object]], running: List[Dict[str, object]]) -> None:
    """The split rule of the module docstring (sets ``split`` on the new rows)."""
    for lang in ("la", "en", "de"):
        counts = {split: 0 for split in TARGETS}
        for row in running:
            if row["lang"] == lang:
                counts[row["split"]] += row["tokens"]
        works: Dict[str, List[Dict[str, object]]] = {}
        for row in new:
            if row["lang"] == lang:
                works.setdefault(row["work_id"], []).append(row)
        for work_id in sorted(works, key=lambda w: hashlib.sha1(w.encode()).hexdigest()):
            total = sum(counts.values())
            deficit = {s: TARGETS[s] * total - counts[s] for s in TARGETS}
            split = max(TARGETS, key=lambda s: (deficit[s], -list(TARGETS).index(s)))
            for row in works[work_id]:
                row["split"] = split
                counts[split] += len(row["text"].split())


def source_md(row: Dict[str, object]) -> str:
    source = row["source"]
    lines = [
        f"# {row['id']}: {row['work']}, {row['passage']}",
        "",
        f"- **Work:** {row['work']}; passage: {row['passage']}; date: {row['date']}",
        f"- **Origin:** github.com/{source['repository']} @ `{source['commit']}`, "
        f"`{source['file']}` (git blob `{source['blob']}`)",
        f"- **Licence:** {row['licence']}",
        f"- **Prepared by:** `benchmarks/data/rhetoric-corpus/prepare.py` (removed: "
        f"{row['removed']})",
        f"- **Tokens:** {len(row['text'].split())} (whitespace-separated); split: {row['split']}",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latin-library", type=Path, required=True)
    parser.add_argument("--inaugural", type=Path, required=True)
    parser.add_argument("--gerdracor", type=Path, required=True)
    parser.add_argument(
        "--check", action="store_true", help="compare with the files, write nothing"
    )
    args = parser.parse_args()
    new = latin_passages(args.latin_library) + english_passages(args.inaugural)
    new += german_passages(args.gerdracor)
    for row in new:
        if "[" in row["text"] or "]" in row["text"]:
            raise ValueError(f"{row['id']}: square brackets left in the text")
    running = joined_passages()
    assign_splits(new, running)
    manifest = []
    differ = 0
    for row in new:
        folder = HERE / "texts" / row["id"]
        files = {folder / "text.txt": row["text"] + "\n", folder / "SOURCE.md": source_md(row)}
        for path, content in files.items():
            if args.check:
                if not path.is_file() or path.read_text(encoding="utf8") != content:
                    print(f"differs: {path.relative_to(HERE)}")
                    differ += 1
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf8")
        entry = {k: row[k] for k in ("id", "lang", "work_id", "work", "passage", "date", "split")}
        entry["tokens"] = len(row["text"].split())
        if row.get("sections"):
            entry["sections"] = row["sections"]
        manifest.append(entry)
    manifest += running
    out = json.dumps(manifest, ensure_ascii=False, indent=1) + "\n"
    if args.check:
        if (HERE / "passages.json").read_text(encoding="utf8") != out:
            print("differs: passages.json")
            differ += 1
        print("consistent" if not differ else f"{differ} files differ")
        return 1 if differ else 0
    (HERE / "passages.json").write_text(out, encoding="utf8")
    for lang in ("la", "en", "de"):
        per = {s: sum(e["tokens"] for e in manifest if e["lang"] == lang and e["split"] == s)
               for s in TARGETS}  # fmt: skip
        total = sum(per.values())
        print(lang, total, {s: f"{n} ({n / total:.0%})" for s, n in per.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
