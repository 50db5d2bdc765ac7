"""Full-text search in the window (issue 24, item 5): a PDF attached is read in the background
with the window's progress bar and Cancel, and its words are then found, the page shown under
the abstract. Real window, real PDFs (tests/pdfs.py), waiting on signals and conditions."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from papershelf.core.library import Library
from pdfs import doi_paper, long_pdf

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

BIB = """
@article{diffusion, title={Priors for Diffusion in Sparse Graphs}, author={Ada Lovelace},
  abstract={We study priors for diffusion on sparse graphs.}, year={2024}}
@article{other, title={Counting Sheep at Night}, author={Bob Smith},
  abstract={Sheep are counted, one by one, until sleep comes.}, year={2023}}
"""


@pytest.fixture
def opened(qtbot, tmp_path, settings):
    from papershelf.gui.main_window import MainWindow

    src = tmp_path / "papers.bib"
    src.write_text(BIB, "utf-8")
    lib = Library.open(tmp_path / "library")
    lib.import_files([src])
    win = MainWindow(lib)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.index is not None, timeout=60_000)
    qtbot.waitUntil(win.is_idle, timeout=10_000)
    yield win, lib, {p.citekey: p.id for p in lib.papers()}
    win.close()
    lib.close()


def search(win, qtbot, text: str) -> list[str]:
    box = win.findChild(QLineEdit, "searchBox")
    with qtbot.waitSignal(win.idle, timeout=10_000):
        box.setText(text)
        box.textEdited.emit(text)
        qtbot.keyClick(box, Qt.Key.Key_Return)
    return list(win.last_answer.ids)


def test_an_attached_pdf_is_read_in_the_background_and_its_words_found(opened, qtbot, tmp_path):
    win, lib, ids = opened
    assert search(win, qtbot, "zyzzogeton") == []
    pdf = doi_paper(tmp_path)

    with qtbot.waitSignal(win.fulltext.finished, timeout=60_000, check_params_cb=_read_some) as read:
        lib.attach_files(ids["diffusion"], [pdf])  # as the window's Attach does: a papers-changed "files"
    found = read.args[0]
    assert found.read == 1 and found.papers == {ids["diffusion"]}
    bar = win.task_progress.bar
    assert bar.format() == "Reading PDFs: 1 of 1" and bar.maximum() == 1  # what the bar said last
    assert not bar.isVisible()  # and it is gone
    assert "Read the text of 1 PDF for search." in win.statusBar().currentMessage()

    # the index writes the paper again: the window's search waits for that commit
    assert search(win, qtbot, "zyzzogeton") == [ids["diffusion"]]
    assert win.last_answer.fulltext_only == {ids["diffusion"]}

    with qtbot.waitSignal(win.fulltext.hitShown, timeout=10_000):
        win.paper_list.selectRow(0)
    shown = win.abstract_view.toPlainText()
    assert "In the PDF: p. 3: …Here the zyzzogeton appears, on page three only" in shown
    assert "Priors for Diffusion in Sparse Graphs" in shown  # under the paper's own abstract


def _read_some(found) -> bool:
    """A reading that had PDFs to read: the one the window started at its opening, with none yet,
    may end after the test began to wait."""
    return found is not None and found.found > 0


def test_reading_pdfs_can_be_cancelled_and_goes_on_later(opened, qtbot, tmp_path):
    win, lib, ids = opened
    base = long_pdf(tmp_path, pages=300, name="report.pdf")
    copies = []
    for n in range(30):  # enough that Cancel lands while some are left, on a loaded machine too
        copy = tmp_path / f"report-{n:02d}.pdf"
        copy.write_bytes(base.read_bytes() + f"\n% copy {n}\n".encode())
        copies.append(copy)
    bar = win.task_progress.bar
    with qtbot.waitSignal(win.fulltext.finished, timeout=120_000, check_params_cb=_read_some) as read:
        lib.attach_files(ids["other"], copies)
        qtbot.waitUntil(lambda: bar.isVisible() and bar.format().startswith("Reading PDFs: "), timeout=60_000)
        qtbot.mouseClick(win.task_progress.cancel_button, Qt.MouseButton.LeftButton)
    found = read.args[0]
    assert found.cancelled and found.read < len(copies)
    assert "cancelled with" in win.statusBar().currentMessage()
    assert not bar.isVisible()

    with qtbot.waitSignal(win.fulltext.finished, timeout=120_000, check_params_cb=_read_some) as again:
        win.fulltext.start()
    assert not again.args[0].cancelled and again.args[0].read == len(copies) - found.read
    assert lib.pdfs_to_read() == 0


def test_the_window_reads_pdfs_left_unread_when_it_opens(qtbot, tmp_path, settings):
    """PDFs attached while no window ran (the command line, a sync) are read after the index opens."""
    from papershelf.gui.main_window import MainWindow

    src = tmp_path / "papers.bib"
    src.write_text(BIB, "utf-8")
    with Library.open(tmp_path / "library") as lib:
        lib.import_files([src])
        target = next(p.id for p in lib.papers() if p.citekey == "diffusion")
        lib.attach_files(target, [doi_paper(tmp_path)])
    lib = Library.open(tmp_path / "library")
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    try:
        with qtbot.waitSignal(win.fulltext.finished, timeout=60_000, check_params_cb=_read_some) as read:
            win.indexer.open()
        assert read.args[0].read == 1
        assert search(win, qtbot, "fulltext:zyzzogeton") == [target]
    finally:
        win.close()
        lib.close()
    assert Path(lib.fulltext_folder).is_dir()
