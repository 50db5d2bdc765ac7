"""The window and the command line show a paper's bibliographic record (issue 13, item 6).

Papers come in through the real import from TeX Live's `xampl.bib` and
`biblatex-examples.bib` (files nobody here wrote) and one small .bib of the kind a
reference manager writes; `show` and `list --json` run as subprocesses, the viewer is the
real window's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SEEDS, run_cli
from papershelf.core.library import Library
from papershelf.core.paper import Paper


def _texlive(name: str) -> Path:
    if shutil.which("kpsewhich") is None:
        pytest.skip("needs TeX Live's kpsewhich")
    found = subprocess.run(["kpsewhich", name], capture_output=True, text=True).stdout.strip()
    if not found:
        pytest.skip(f"TeX Live has no {name}")
    return Path(found)


SMALL_BIB = r"""@article{lee2020gnus,
  author = {Lee, Jane and M{\"u}ller, Hans and others},
  title = {Deep Learning for Gnus},
  journal = {Journal of Gnu Studies},
  volume = {12},
  number = {3},
  pages = {45--67},
  year = {2020},
  month = mar,
  publisher = {Gnu Press},
  doi = {10.1234/jgs.2020.045},
  url = {https://example.org/gnus},
  eprint = {2003.01234},
  archiveprefix = {arXiv},
  issn = {1234-5678},
  mrnumber = {MR1234567},
  language = {english},
  note = {Winner of the {Gnu} prize},
  abstract = {We study how gnus learn, with a deep network and a great many gnus.},
}
"""


@pytest.fixture(scope="module")
def bibs(tmp_path_factory) -> list[Path]:
    small = tmp_path_factory.mktemp("bib") / "gnus.bib"
    small.write_text(SMALL_BIB, encoding="utf-8")
    return [_texlive("xampl.bib"), _texlive("biblatex-examples.bib"), small]


@pytest.fixture(scope="module")
def cli_library(tmp_path_factory, bibs) -> Path:
    """A library that the command line imported the three .bib files and one listing into."""
    folder = tmp_path_factory.mktemp("cli") / "library"
    res = run_cli("import", *map(str, bibs), str(SEEDS[0]), data_dir=folder)
    assert res.returncode in (0, 1), res.stderr  # 1: an entry or two a file could not give
    return folder


def _listed(folder: Path) -> list[dict]:
    res = run_cli("list", "--json", data_dir=folder)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _by_key(papers: list[dict], key: str) -> dict:
    (paper,) = [p for p in papers if p["citekey"] == key]
    return paper


def test_show_prints_the_record_after_the_paper_s_own_lines(cli_library):
    papers = _listed(cli_library)
    res = run_cli("show", _by_key(papers, "sigfridsson")["id"], data_dir=cli_library)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    for line in (
        "type:     Journal article",
        "journal:  Journal of Computational Chemistry",
        "volume:   19",
        "number:   4",
        "pages:    377–395",
        "language: english",
        "langidopts: variant=american",  # a field the styles print not, by its name
    ):
        assert line in lines, (line, res.stdout)
    assert lines.index("status:   unread") < lines.index("type:     Journal article")
    # LaTeX in a field is text
    assert any(line.startswith("annotation: An article entry with volume, number, and doi fields.") for line in lines)

    manual = run_cli("show", _by_key(papers, "manual-full")["id"], data_dir=cli_library).stdout.splitlines()
    assert "organization: Chips-R-Us" in manual and "address:  Silicon Valley" in manual
    assert "edition:  Silver" in manual and "month:    April-May" in manual  # apr # "-" # may
    # a crossref names its parent entry by its title
    child = run_cli("show", _by_key(papers, "westfahl:space")["id"], data_dir=cli_library).stdout.splitlines()
    assert "part of:  Space and Beyond [westfahl:frontier]" in child
    assert "type:     Chapter in a collection" in child and "pages:    55–65" in child

    gnus = run_cli("show", _by_key(papers, "lee2020gnus")["id"], data_dir=cli_library).stdout.splitlines()
    assert "authors:  Jane Lee, Hans Müller et al." in gnus
    assert "pages:    45–67" in gnus and "publisher: Gnu Press" in gnus and "month:    March" in gnus
    assert "issn:     1234-5678" in gnus and "url:      https://example.org/gnus" in gnus
    assert "mrnumber: MR1234567" in gnus
    assert gnus.count("doi:      10.1234/jgs.2020.045") == 1 and gnus.count("arXiv:    2003.01234") == 1


def test_show_of_a_listing_paper_has_no_record_lines(cli_library):
    listing = next(p for p in _listed(cli_library) if not p["entrytype"])
    lines = run_cli("show", listing["id"], data_dir=cli_library).stdout.splitlines()
    assert not any(line.startswith(("type:", "journal:", "pages:")) for line in lines)


def test_list_and_show_json_carry_the_entry_type_and_the_fields_as_text(cli_library):
    papers = _listed(cli_library)
    gnus = _by_key(papers, "lee2020gnus")
    assert gnus["entrytype"] == "article"
    fields = gnus["fields"]
    assert fields["journal"] == "Journal of Gnu Studies" and fields["pages"] == "45–67"
    assert fields["month"] == "March" and fields["volume"] == "12" and fields["mrnumber"] == "MR1234567"
    assert fields["doi"] == "10.1234/jgs.2020.045" and fields["url"] == "https://example.org/gnus"
    assert fields["note"] == "Winner of the Gnu prize" and fields["author"] == "Lee, Jane and Müller, Hans and others"
    # the keys that were there stay as they were: the raw record beside the text
    assert gnus["bibfields"]["pages"] == "{45--67}" and gnus["venue"] == "Journal of Gnu Studies"
    assert {"id", "title", "authors", "abstract", "status", "tags", "lists"} <= set(gnus)
    phd = _by_key(papers, "geer")
    assert phd["entrytype"] == "thesis" and phd["fields"]["institution"] == "Uppsala Universitet"
    assert phd["fields"]["title"] == "Earl, Saint, Bishop, Skald – and Music"
    assert _by_key(papers, "manual-full")["fields"]["month"] == "April-May"  # apr # "-" # may
    listing = next(p for p in papers if not p["entrytype"])
    assert listing["fields"] == {} and listing["bibfields"] == {}
    shown = json.loads(run_cli("show", gnus["id"], "--json", data_dir=cli_library).stdout)
    assert shown["fields"] == fields and shown["entrytype"] == "article"


# ---- the real window ----


@pytest.fixture
def record_window(qtbot, tmp_path, settings, bibs):
    """The real window on a library of the three .bib files and one listing."""
    from papershelf.gui.main_window import MainWindow

    lib = Library.open(tmp_path / "library")
    lib.import_files([*bibs, SEEDS[0]])
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    lib.close()


def _click_paper(win, qtbot, paper_id: str) -> None:
    """Click the paper's row in the list, as a person does."""
    from PySide6.QtCore import Qt

    view = win.paper_list
    row = view.model().row_of(paper_id)
    assert row >= 0
    index = view.model().index(row, 0)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    qtbot.waitUntil(lambda: win.selected_ids() == [paper_id])


def _click_link(view, qtbot, text: str) -> None:
    """Click the link whose text is `text` in the viewer."""
    from PySide6.QtCore import Qt

    cursor = view.document().find(text)
    assert not cursor.isNull(), text
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    rect = view.cursorRect(cursor)
    cursor.clearSelection()
    view.setTextCursor(cursor)
    point = rect.center()
    point.setX(rect.left() - 3)  # inside the link's last characters
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def _paper(win, key: str):
    return next(p for p in win.library.papers() if p.citekey == key)


def test_the_viewer_shows_type_venue_pages_and_a_doi_link(record_window, qtbot, monkeypatch):
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    win = record_window
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    view = win.abstract_view
    paper = _paper(win, "sigfridsson")
    _click_paper(win, qtbot, paper.id)
    text = view.toPlainText()
    assert "Comparison of methods for deriving atomic charges" in text
    assert "Journal article · Journal of Computational Chemistry · vol. 19(4), pp. 377–395 · 1998" in text
    html = view.toHtml()
    doi = "https://doi.org/10.1002/(SICI)1096-987X(199803)19:4%3C377::AID-JCC1%3E3.0.CO;2-P"
    assert f'href="{doi}"' in html
    _click_link(view, qtbot, "AID-JCC1>3.0.CO;2-P")
    qtbot.waitUntil(lambda: len(opened) == 1)
    assert QUrl(opened[0]) == QUrl(doi)

    gnus = _paper(win, "lee2020gnus")
    _click_paper(win, qtbot, gnus.id)
    text = view.toPlainText()
    assert "Jane Lee, Hans Müller et al." in text
    assert "Journal article · Journal of Gnu Studies · vol. 12(3), pp. 45–67 · Gnu Press · 2020" in text
    assert "DOI 10.1234/jgs.2020.045 · arXiv 2003.01234 · URL https://example.org/gnus" in text
    html = view.toHtml()
    for link in (
        "https://doi.org/10.1234/jgs.2020.045",
        "https://arxiv.org/abs/2003.01234",
        "https://example.org/gnus",
    ):
        assert f'href="{link}"' in html
    # the fields the top lines do not give come after the abstract, by label
    assert text.index("a great many gnus") < text.index("ISSN")
    assert "\nMonth\nMarch\n" in text and "\nISSN\n1234-5678\n" in text and "\nmrnumber\nMR1234567\n" in text

    thesis = _paper(win, "geer")
    _click_paper(win, qtbot, thesis.id)
    assert "PhD thesis · Uppsala Universitet · 1985" in view.toPlainText()  # type = {phdthesis}
    assert "\nLocation\nUppsala\n" in view.toPlainText()


def test_a_listing_paper_s_viewer_is_as_it_was(record_window, qtbot):
    from papershelf.core.render import plain_text

    win = record_window
    view = win.abstract_view
    listing = next(p for p in win.library.papers() if not p.entrytype and p.area and p.authors)
    _click_paper(win, qtbot, listing.id)
    lines = [line for line in view.toPlainText().splitlines() if line.strip()]
    area = " · ".join(y for y in (listing.area, listing.subarea) if y)
    head = [plain_text(listing.title)]
    head += ["Title derived from the abstract"] if listing.title_derived else []
    head += [", ".join(listing.authors), " — ".join(x for x in (area, str(listing.year or ""), listing.venue) if x)]
    assert lines[: len(head)] == head
    assert lines[len(head)] == " ".join(plain_text(listing.abstract).split())
    assert lines[len(head) + 1 :] == [f"From: {Path(listing.sources[0].file).name}"]
    assert "<table" not in view.toHtml()


def test_the_viewer_opens_a_record_url_with_a_query_string_as_it_is(qtbot):
    from papershelf.gui.abstract_view import AbstractView

    view = AbstractView()
    qtbot.addWidget(view)
    url = "https://ieeexplore.ieee.org/document/1?arnumber=6034266&tag=1"
    view.show_paper(Paper("x1", title="T", entrytype="article", year=2020, bibfields={"url": "{" + url + "}"}))
    hrefs = []
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                hrefs.append(fmt.anchorHref())
            it += 1
        block = block.next()
    # Qt decodes no entity in a single-quoted attribute: a click handed '…&amp;tag=1' to the browser
    assert url in hrefs, hrefs
