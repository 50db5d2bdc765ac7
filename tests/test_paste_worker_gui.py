"""File ▸ Import Pasted Text reads the paste on a worker (with the status bar's bar), never on
the GUI thread, and a paste previewed as "partly a listing" is read once, not again on Import."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QProgressBar, QPushButton

from test_import_undo_core import BIB_ONE

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


def paste(qtbot, win, text: str) -> None:
    """Put `text` on the clipboard and press Ctrl+Shift+V in the list, as a person does."""
    QGuiApplication.clipboard().setText(text)
    win.paper_list.setFocus()
    qtbot.keyClick(
        win.paper_list, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )


@pytest.fixture
def held_paste(monkeypatch):
    """Reading pasted text waits until `release` is set (off the GUI thread only: on it, waiting
    would freeze the test); `threads` records the thread each read ran on."""
    from papershelf.core import importers

    started, release, threads = threading.Event(), threading.Event(), []
    real = importers.parse_text

    def parse(text, path, as_listing=False):
        threads.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            started.set()
            release.wait(30)
        return real(text, path, as_listing=as_listing)

    monkeypatch.setattr(importers, "parse_text", parse)
    yield started, release, threads
    release.set()


def test_pasted_text_is_read_on_a_worker_while_the_bar_shows(window, qtbot, held_paste):
    started, release, threads = held_paste
    win, lib = window, window.library
    start = len(lib)
    paste(qtbot, win, BIB_ONE)
    assert threads and threads[0] is not threading.main_thread(), "the paste was read on the GUI thread"
    qtbot.waitUntil(started.is_set)
    bar = win.findChild(QProgressBar, "taskProgress")
    assert bar.isVisible() and bar.format() == "Importing pasted text…"
    assert not win.findChild(QPushButton, "cancelTaskButton").isVisible()  # one text, one commit
    # the window goes on answering while the paste is read; Undo and another paste wait, as for a file
    assert not win.findChild(QAction, "undoAction").isEnabled()
    paste(qtbot, win, BIB_ONE)
    assert win.statusBar().currentMessage() == "Wait for the import to finish."
    with qtbot.waitSignal(win.importFinished, timeout=30_000) as done:
        release.set()
    (report,) = done.args[0]
    assert report.added == 1 and len(lib) == start + 1
    assert not bar.isVisible()
    assert win.undo_stack.undoText() == "Import of pasted text (1 paper)"
    assert win.statusBar().currentMessage() == "Imported 1 new paper, 0 merged with ones already here."


def test_a_paste_that_is_no_listing_says_why_and_imports_nothing(window, qtbot):
    win, lib = window, window.library
    start = len(lib)
    paste(qtbot, win, "- ask Anna\n\nTODO\n\nsee the other file\n")
    qtbot.waitUntil(lambda: getattr(win, "error_box", None) is not None and win.error_box.isVisible())
    assert win.error_box.windowTitle() == "The pasted text was not imported"
    assert "does not look like a list of papers" in win.error_box.text()
    assert len(lib) == start and not win.transfers.running()


def test_a_paste_held_for_its_preview_is_read_once(window, qtbot, tmp_path, seeds, monkeypatch):
    from papershelf.core import importers
    from test_first_minutes import partly_a_listing

    reads = []
    real = importers.parse_listing

    def parse_listing(text, path):
        reads.append(path)
        return real(text, path)

    monkeypatch.setattr(importers, "parse_listing", parse_listing)
    win, lib = window, window.library
    start = len(lib)
    paste(qtbot, win, partly_a_listing(tmp_path, seeds).read_text(encoding="utf-8"))
    qtbot.waitUntil(lambda: win.transfers.preview is not None and win.transfers.preview.isVisible())
    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        win.transfers.preview.findChild(QPushButton, "importPreviewImport").click()
    assert len(lib) == start + 3
    assert reads == ["<pasted text>"], "the paste was read again after the preview"
