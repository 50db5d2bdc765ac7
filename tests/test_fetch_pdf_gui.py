"""Paper ▸ Get PDF (issue 24, item 3) in the real window, against the loopback server standing for
arXiv (tests/replay_server.py): the consent asked first, the PDF attached as one undo step with the
status bar's progress bar and a line after; a web page refused in words; Cancel ending a download
that does not end, nothing kept."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QProgressBar, QPushButton

from conftest import window_on
from pdfs import arxiv_paper
from replay_server import Reply, replay_fixture  # noqa: F401  (the `replay` fixture)

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

ARXIV_ID = "2401.01234"
BIB = """@article{withArxiv,
  title = {A Paper on arXiv},
  author = {Doe, Jane},
  year = {2024},
  eprint = {2401.01234},
  archiveprefix = {arXiv},
}
"""


@pytest.fixture
def fetching(qtbot, tmp_path, settings, replay, monkeypatch):
    """The real window on a library of one paper with an arXiv id, the server standing for arXiv."""
    monkeypatch.setenv("PAPERSHELF_FETCH_SECONDS", "60")
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, "utf-8")
    yield from window_on(qtbot, tmp_path / "library", [bib])


def select_all(win) -> str:
    model, sel = win.model, win.paper_list.selectionModel()
    assert model.rowCount() == 1
    sel.select(model.index(0, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    (pid,) = win.selected_ids()
    return pid


def get_pdf(win) -> None:
    action = win.findChild(QAction, "getPdfAction")
    assert action is not None and action.text().replace("&", "") == "Get PDF"
    action.trigger()


def wait_done(qtbot, win) -> None:
    online = win.menus.online
    qtbot.waitUntil(lambda: online.pdf_fetch is not None and not online.running() and online.pdf_fetch.report != "")


def no_files_kept(win, tmp_path) -> None:
    files = win.library.folder / "files"
    assert not files.exists() or not [p for p in files.rglob("*") if p.is_file()]
    downloads = tmp_path / "cache" / "downloads"
    assert not downloads.exists() or not [p for p in downloads.rglob("*") if p.is_file()]


def test_get_pdf_asks_first_then_attaches_the_pdf_as_one_step(fetching, qtbot, replay, tmp_path):
    win, lib = fetching, fetching.library
    pdf = arxiv_paper(tmp_path)
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(pdf, 200, {"Content-Type": "application/pdf"}))
    pid = select_all(win)
    # in the paper list's context menu too, and in the menu bar's Paper menu
    names = [a.objectName() for a in win.paper_menu.build([pid]).actions()]
    assert "getPdfAction" in names
    paper_bar = win.menuBar().findChild(QMenu, "paperBarMenu")
    assert paper_bar is not None and "getPdfAction" in [a.objectName() for a in paper_bar.actions()]
    get_pdf(win)
    box = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.objectName() == "onlineConsent"
    )
    assert "PDF" in box.informativeText()
    assert replay.requests == []  # nothing asked before the answer
    box.button(QMessageBox.StandardButton.Yes).click()
    bar = win.findChild(QProgressBar, "taskProgress")
    qtbot.waitUntil(lambda: bar.isVisible() or win.menus.online.pdf_fetch.report != "")
    wait_done(qtbot, win)
    assert not bar.isVisible()
    assert win.statusBar().currentMessage() == "Attached the PDFs of 1 paper."
    (item,) = lib.get(pid).files
    assert (lib.folder / item["path"]).read_bytes() == pdf.read_bytes()
    no_downloads = tmp_path / "cache" / "downloads"
    assert not [p for p in no_downloads.rglob("*") if p.is_file()]
    # one undo step takes it back, with the label the window's own attach has
    assert win.undo_stack.undoText() == "Attach 1 file to 'A Paper on arXiv'"
    win.findChild(QAction, "undoAction").trigger()
    qtbot.waitUntil(lambda: lib.get(pid).files == [])


def test_a_web_page_is_refused_in_words_and_nothing_is_kept(fetching, qtbot, replay, tmp_path):
    win, lib = fetching, fetching.library
    QSettings().setValue("online/allowed", True)
    page = b"<!DOCTYPE html><html><body>Please log in.</body></html>"
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", Reply(page, 200, {"Content-Type": "text/html"}))
    pid = select_all(win)
    get_pdf(win)
    wait_done(qtbot, win)
    assert "No PDF was attached." in win.statusBar().currentMessage()
    box = win.error_box
    assert box is not None and box.isVisible()
    said = box.text() + box.informativeText()
    assert "A Paper on arXiv: arXiv (127.0.0.1:" in said and "answered with a web page, not a PDF" in said
    assert lib.get(pid).files == []
    no_files_kept(win, tmp_path)
    box.close()


def test_cancel_ends_a_download_that_does_not_end(fetching, qtbot, replay, tmp_path):
    win, lib = fetching, fetching.library
    QSettings().setValue("online/allowed", True)
    endless = Reply(b"%PDF-1.5\n", 200, {"Content-Type": "application/pdf"}, trickle=0.05, endless=60)
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", endless)
    pid = select_all(win)
    get_pdf(win)
    cancel = win.findChild(QPushButton, "cancelTaskButton")
    qtbot.waitUntil(lambda: len(replay.requests) == 1 and cancel.isVisible())
    cancel.click()
    wait_done(qtbot, win)
    assert win.statusBar().currentMessage().startswith("Cancelled")
    assert lib.get(pid).files == []
    no_files_kept(win, tmp_path)


def test_get_pdf_and_attaching_or_importing_wait_for_each_other(fetching, qtbot, replay, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    win, lib = fetching, fetching.library
    QSettings().setValue("online/allowed", True)
    endless = Reply(b"%PDF-1.5\n", 200, {"Content-Type": "application/pdf"}, trickle=0.05, endless=60)
    replay.route(f"/arxiv/pdf/{ARXIV_ID}", endless)
    pid = select_all(win)
    pdf = arxiv_paper(tmp_path)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: asked.append(a) or ([str(pdf)], ""))
    get_pdf(win)
    qtbot.waitUntil(lambda: len(replay.requests) == 1)
    # while Get PDF runs: no attach (not even its dialog), no import
    win.findChild(QAction, "attachFilesAction").trigger()
    waiting = "Wait for Get PDF to finish: it is attaching the PDFs it downloads."
    assert asked == [] and win.statusBar().currentMessage() == waiting
    win.transfers.import_files([pdf])
    assert win.statusBar().currentMessage() == waiting and not win.transfers.running()
    win.findChild(QPushButton, "cancelTaskButton").click()
    wait_done(qtbot, win)

    # while an attach runs: no Get PDF
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        win.files.attach(pid, [pdf])
        get_pdf(win)
        assert win.statusBar().currentMessage() == "Wait for the files to be attached."
        assert len(replay.requests) == 1
    assert len(lib.get(pid).files) == 1
