"""What a new user runs into first (issue 11), in the real window (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLineEdit

from papershelf.core.library import Library
from papershelf.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def empty_window(qtbot, tmp_path, settings):
    lib = Library.open(tmp_path / "library")
    win = MainWindow(lib)
    win.messages = []           # every status bar message, however briefly shown
    win.statusBar().messageChanged.connect(win.messages.append)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: win.index is not None, timeout=60_000)
    yield win
    win.close()
    lib.close()


def _settled(win):
    return (win.last_answer is not None and win.last_answer.query == win.query
            and not win._search_timer.isActive() and not win._refresh_timer.isActive())


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
