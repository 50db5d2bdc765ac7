"""Issue 21 defect 6 in the window: a record an older version stored with NUL and terminal escapes
is shown whole and as text (Qt acts on no escape sequence; a NUL must not cut the text short)."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit, QTableView, QTextBrowser

from papershelf.core.library import Library
from papershelf.core.store.journal import Op
from papershelf.core.store.store import Store
from test_terminal_escapes import EVIL, hostile_papers


def test_the_window_shows_such_a_record_whole(qtbot, tmp_path, settings):
    from papershelf.gui.main_window import MainWindow

    folder = tmp_path / "library"
    store = Store(folder).open()
    try:
        store.apply([Op("add", p.id, p) for p in hostile_papers()])
    finally:
        store.close()
    lib = Library.open(folder)
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    try:
        table = win.findChild(QTableView, "paperList")
        model = table.model()
        qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=10_000)
        titles = [model.index(r, 0).data() for r in range(model.rowCount())]
        assert any("Evil 0" in t and "title about graph neural networks" in t for t in titles), titles
        row = next(r for r, t in enumerate(titles) if "Evil 0" in t)
        table.setFocus()
        table.setCurrentIndex(model.index(row, 0))
        view = win.findChild(QTextBrowser, "abstractView")
        qtbot.waitUntil(lambda: "message passing" in view.toPlainText(), timeout=10_000)
        assert "An abstract" in view.toPlainText()  # the text before the NUL and after it
        notes = win.findChild(QPlainTextEdit, "notesEdit")
        # kept whole (a carriage return shows as a line break): the user can see and edit it
        assert notes.toPlainText() == f"note {EVIL}".replace("\r", "\n")
    finally:
        win.close()
        lib.close()
