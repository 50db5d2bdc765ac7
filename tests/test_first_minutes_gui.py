"""What a new user runs into first (issue 11), in the real window (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLineEdit, QMessageBox, QPushButton

from papershelf.core.library import Library
from papershelf.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def empty_window(qtbot, tmp_path, settings):
    lib = Library.open(tmp_path / "library")
    win = MainWindow(lib)
    win.messages = []  # every status bar message, however briefly shown
    win.statusBar().messageChanged.connect(win.messages.append)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: win.index is not None, timeout=60_000)
    yield win
    win.close()
    lib.close()


def _settled(win):
    return win.is_idle()


def test_searching_an_empty_library_shows_no_error(empty_window, qtbot):
    win = empty_window
    qtbot.waitUntil(lambda: _settled(win), timeout=10_000)
    assert not [m for m in win.messages if "fail" in m or "damaged" in m]
    box = win.findChild(QLineEdit, "searchBox")
    box.setFocus()
    qtbot.keyClicks(box, "diffusion")
    qtbot.keyClick(box, "\r")
    qtbot.waitUntil(lambda: _settled(win) and win.last_answer.query.text == "diffusion", timeout=10_000)
    assert not [m for m in win.messages if "fail" in m or "damaged" in m]
    assert win.last_answer.error == "" and win.last_answer.total == 0


def _import_and_wait(win, qtbot, files):
    with qtbot.waitSignal(win.importFinished, timeout=30_000) as blocker:
        win.transfers.import_files(files)
    return blocker.args[0]


def test_a_file_that_partly_looks_like_a_listing_is_previewed_before_import(empty_window, qtbot, tmp_path, seeds):
    from test_first_minutes import partly_a_listing

    win = empty_window
    path = partly_a_listing(tmp_path, seeds)
    _import_and_wait(win, qtbot, [path])
    box = win.findChild(QMessageBox, "importPreview")
    qtbot.waitUntil(box.isVisible, timeout=5_000)
    assert len(win.library) == 0  # nothing before the answer
    assert "gives 3 papers" in box.text() and box.text().count("  • ") == 3
    assert win.findChild(QMessageBox, "importReport") is None  # not reported as a failure
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert len(win.library) == 0
    _import_and_wait(win, qtbot, [path])
    box = win.transfers.preview
    qtbot.waitUntil(box.isVisible, timeout=5_000)
    with qtbot.waitSignal(win.importFinished, timeout=30_000) as blocker:
        box.findChild(QPushButton, "importPreviewImport").click()
    assert [r.added for r in blocker.args[0]] == [3] and len(win.library) == 3


def test_a_readme_dropped_on_the_window_is_refused(empty_window, qtbot):
    from test_first_minutes import ROOT

    win = empty_window
    reports = _import_and_wait(win, qtbot, [ROOT / "README.md"])
    assert "does not look like a list of papers" in reports[0].error
    report = win.findChild(QMessageBox, "importReport")
    qtbot.waitUntil(report.isVisible, timeout=5_000)
    assert "Papershelf reads paper-search listings" in report.detailedText()
    assert win.findChild(QMessageBox, "importPreview") is None and len(win.library) == 0


def test_a_citation_key_that_had_to_change_is_told_as_a_note_not_a_failure(empty_window, qtbot, tmp_path):
    """Two .bib files that both use the key 'smith2020' for different papers: both
    papers are imported; the window says which key changed, in a note, not in a
    "could not be imported" warning."""
    win = empty_window
    first, second = tmp_path / "first.bib", tmp_path / "second.bib"
    first.write_text("@article{smith2020,\n  title = {One paper},\n  author = {Smith, Ann},\n  year = 2020\n}\n")
    second.write_text("@article{smith2020,\n  title = {Another paper},\n  author = {Jones, Bo},\n  year = 2021\n}\n")
    _import_and_wait(win, qtbot, [first])
    _import_and_wait(win, qtbot, [second])
    assert len(win.library) == 2
    report = win.findChild(QMessageBox, "importReport")
    qtbot.waitUntil(report.isVisible, timeout=5_000)
    assert report.windowTitle() == "Import finished with notes"
    assert report.icon() == QMessageBox.Icon.Information
    assert "Everything was imported" in report.text()
    assert "'smith2020'" in report.detailedText() and "already used" in report.detailedText()
    keys = {p.title: p.citekey for p in win.library.papers()}
    assert keys["One paper"] == "smith2020"  # the first file's paper keeps it
    assert keys["Another paper"] not in ("", "smith2020") and f"'{keys['Another paper']}'" in report.detailedText()
