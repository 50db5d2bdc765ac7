"""An import through the window is one undoable step, and the sidebar can show what it added."""

from __future__ import annotations

import warnings

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from test_import_undo_core import BIB_MORE, BIB_ONE, same

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


def drop_bib(qtbot, win, path, text: str):
    """Write `text` as a .bib file at `path` and drop it on the window; the import's reports."""
    path.write_text(text, encoding="utf-8")
    return drop(qtbot, win, path)


def drop(qtbot, win, path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    with warnings.catch_warnings():  # PySide flags the only constructor Qt 6 has
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    QApplication.sendEvent(win, enter)  # Qt delivers a drop only where a drag entered
    assert enter.isAccepted()
    with qtbot.waitSignal(win.importFinished, timeout=30_000) as blocker:
        QApplication.sendEvent(
            win,
            QDropEvent(
                QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
            ),
        )
    return blocker.args[0]


def titles_shown(win):
    return sorted(win.model.index(r, 0).data() for r in range(win.model.rowCount()))


def last_import_entry(win):
    """The sidebar's Last import entry as a person reads it (None: not shown)."""
    panel = win.filter_panel
    index = panel.index_of("import", "last")
    if not index.isValid() or panel.isRowHidden(index.parent().row(), index.parent().parent()):
        return None
    return index.data()


def click_last_import(qtbot, win):
    panel = win.filter_panel
    rect = panel.visualRect(panel.index_of("import", "last"))
    assert rect.isValid()
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):
        qtbot.mouseClick(panel.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_undo_removes_what_an_import_added_and_restores_what_it_merged(window, qtbot, tmp_path):
    win, lib = window, window.library
    start = len(lib)
    one, more = tmp_path / "one.bib", tmp_path / "more.bib"
    one.write_text(BIB_ONE, encoding="utf-8")
    more.write_text(BIB_MORE, encoding="utf-8")

    (first,) = drop(qtbot, win, one)
    old_id = first.added_ids[0]
    assert last_import_entry(win) == "Last import  (1)"
    lib.add_tags([old_id], ["mine"])
    before = lib.get(old_id).to_dict()

    (report,) = drop(qtbot, win, more)
    assert report.added == 1 and report.merged == 1 and len(lib) == start + 2
    # the merge is told in the status bar, and no box stands between the user and Ctrl+Z
    assert "1 entry was merged into a paper already here" in win.statusBar().currentMessage()
    assert not [box for box in win.findChildren(QMessageBox) if box.isVisible()]
    assert lib.get(old_id).doi == "10.1234/shelf.2020"
    assert last_import_entry(win) == "Last import  (1)"
    assert "more.bib" in win.filter_panel.index_of("import", "last").data(Qt.ItemDataRole.ToolTipRole)
    click_last_import(qtbot, win)
    assert titles_shown(win) == ["Wide Shelves Hold More Papers"]  # exactly what it added
    assert win.undo_stack.undoText() == "Import of more.bib (1 paper)"

    win.paper_list.setFocus()
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):
        qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(lib) == start + 1 and report.added_ids[0] not in lib.ids()
    assert same(lib.get(old_id).to_dict(), before)  # as it was (`updated` aside)
    # the entry now stands for the import before it, and the list follows it
    assert last_import_entry(win) == "Last import  (1)"
    assert titles_shown(win) == ["Deep Nets for Shelving Papers"]

    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):
        win.findChild(QAction, "redoAction").trigger()  # Edit ▸ Redo
    assert len(lib) == start + 2 and lib.get(report.added_ids[0]).title == "Wide Shelves Hold More Papers"
    assert lib.get(old_id).doi == "10.1234/shelf.2020" and lib.get(old_id).tags == ["mine"]
    assert titles_shown(win) == ["Wide Shelves Hold More Papers"]

    click_last_import(qtbot, win)  # a second click drops the filter
    assert len(titles_shown(win)) == start + 2


def test_undoing_the_only_import_hides_the_entry_and_the_filter(window, qtbot, tmp_path):
    win, lib = window, window.library
    start = len(lib)
    drop_bib(qtbot, win, tmp_path / "more.bib", BIB_MORE)
    assert last_import_entry(win) == "Last import  (2)"
    click_last_import(qtbot, win)
    assert titles_shown(win) == ["Deep Nets for Shelving Papers", "Wide Shelves Hold More Papers"]
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):
        win.undo_stack.undo()
    assert len(lib) == start and last_import_entry(win) is None
    assert len(titles_shown(win)) == start  # the filter went with it


@pytest.fixture
def indexed_window(qtbot, tmp_path, settings):
    from conftest import SEEDS
    from papershelf.core.library import Library
    from papershelf.gui.main_window import MainWindow

    lib = Library.open(tmp_path / "indexed")
    lib.import_files(SEEDS[:1])
    win = MainWindow(lib)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.indexReady, timeout=60_000):
        win.show()
    yield win
    win.close()
    lib.close()


def test_with_the_index_the_search_and_the_counts_follow_an_undone_import(indexed_window, qtbot, tmp_path):
    win, lib = indexed_window, indexed_window.library
    drop_bib(qtbot, win, tmp_path / "more.bib", BIB_MORE)
    click_last_import(qtbot, win)
    qtbot.waitUntil(lambda: titles_shown(win) == ["Deep Nets for Shelving Papers", "Wide Shelves Hold More Papers"])
    status = dict(win.filter_panel.entries("status"))
    assert status[None] == "All  (2)" and status["unread"] == "Unread  (2)"  # counts of what is shown
    qtbot.keyClicks(win.search_box, "wider")
    qtbot.waitUntil(lambda: titles_shown(win) == ["Wide Shelves Hold More Papers"], timeout=10_000)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: titles_shown(win) == [] and last_import_entry(win) is None, timeout=10_000)
    qtbot.keyClick(win.search_box, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: len(titles_shown(win)) == len(lib), timeout=10_000)


def test_undoing_an_import_keeps_the_citation_key_copied_after_it(window, qtbot, tmp_path):
    from PySide6.QtGui import QGuiApplication

    from test_import_undo_core import ABS
    from test_paper_menu import action, right_click, select_rows

    win, lib = window, window.library
    listing, one = tmp_path / "l.txt", tmp_path / "one.bib"
    listing.write_text("Daily Papers\n\n" + ABS + "\n", encoding="utf-8")
    one.write_text(BIB_ONE, encoding="utf-8")
    (first,) = drop(qtbot, win, listing)
    pid = first.added_ids[0]
    (merge,) = drop(qtbot, win, one)
    assert merge.merged == 1
    row = win.model.row_of(pid)
    select_rows(win, [row])
    action(right_click(qtbot, win, row), "paperMenuCopyCite").trigger()
    cite = QGuiApplication.clipboard().text()
    win.paper_menu.menu.close()
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo the .bib import
    assert lib.get(pid).title != "Deep Nets for Shelving Papers"  # the merge is undone
    assert cite == "\\cite{%s}" % lib.citation_keys([pid], pin=False)[pid]  # the key copied stays
    win.undo_stack.redo()
    assert lib.get(pid).title == "Deep Nets for Shelving Papers"
    assert cite == "\\cite{%s}" % lib.citation_keys([pid], pin=False)[pid]


def drop_files(win, paths):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    QApplication.sendEvent(win, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(
        win,
        QDropEvent(
            QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        ),
    )


@pytest.fixture
def held_import(monkeypatch):
    """Importing a file named slow.bib waits on the worker until `release` is set."""
    import threading

    from papershelf.core import importers

    started, release = threading.Event(), threading.Event()
    real = importers.parse_file

    def parse(path, as_listing=False):
        if str(path).endswith("slow.bib"):
            started.set()
            release.wait(30)
        return real(path, as_listing=as_listing)

    monkeypatch.setattr(importers, "parse_file", parse)
    yield started, release
    release.set()


def test_undo_redo_paste_and_copy_wait_while_an_import_runs(window, qtbot, tmp_path, held_import):
    from PySide6.QtGui import QGuiApplication

    from test_paper_menu import action, right_click, select_rows

    started, release = held_import
    win, lib = window, window.library
    start = len(lib)
    one, more, slow = tmp_path / "one.bib", tmp_path / "more.bib", tmp_path / "slow.bib"
    one.write_text(BIB_ONE, encoding="utf-8")
    more.write_text(BIB_MORE, encoding="utf-8")
    slow.write_text(
        BIB_MORE.replace("Wide Shelves", "Tall Shelves").replace("Wider shelves", "Taller shelves"), encoding="utf-8"
    )
    (first,) = drop(qtbot, win, one)
    a = first.added_ids[0]
    undo, redo = win.findChild(QAction, "undoAction"), win.findChild(QAction, "redoAction")
    assert undo.isEnabled() and undo.text() == "&Undo Import of one.bib (1 paper)"
    QGuiApplication.clipboard().setText(BIB_ONE.replace("Deep Nets", "Shallow Nets").replace("deep", "shallow"))

    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        drop_files(win, [more, slow])
        qtbot.waitUntil(started.is_set)
        assert not undo.isEnabled() and not redo.isEnabled()
        win.paper_list.setFocus()
        qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # Ctrl+Z
        assert a in lib.ids() and win.undo_stack.index() == 1
        qtbot.keyClick(
            win.paper_list, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )  # Ctrl+Shift+V
        assert win.statusBar().currentMessage() == "Wait for the import to finish."
        assert len(lib) == start + 1
        select_rows(win, [win.model.row_of(a)])
        menu = right_click(qtbot, win, win.model.row_of(a))
        assert not action(menu, "paperMenuCopyCite").isEnabled()
        assert not action(menu, "paperMenuCopyKey").isEnabled()
        menu.close()
        release.set()
    assert undo.isEnabled() and win.undo_stack.count() == 2
    win.undo_stack.undo()  # the second import: A as the first left it
    assert len(lib) == start + 1 and a in lib.ids()
    win.undo_stack.undo()
    assert len(lib) == start


def test_a_file_held_for_its_preview_joins_the_same_undo_step(window, qtbot, tmp_path, seeds):
    from PySide6.QtWidgets import QPushButton

    from test_first_minutes import partly_a_listing

    win, lib = window, window.library
    start, steps = len(lib), win.undo_stack.count()
    one = tmp_path / "one.bib"
    one.write_text(BIB_ONE, encoding="utf-8")
    notes = partly_a_listing(tmp_path, seeds)
    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        drop_files(win, [one, notes])
    box = win.transfers.preview
    qtbot.waitUntil(box.isVisible)
    assert len(lib) == start + 1
    assert win.statusBar().currentMessage() == (
        "Imported 1 new paper, 0 merged with ones already here. notes.txt waits for your answer."
    )
    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        box.findChild(QPushButton, "importPreviewImport").click()
    assert len(lib) == start + 4
    assert win.undo_stack.count() == steps + 1  # one drop, one step
    assert win.undo_stack.undoText() == "Import of one.bib, notes.txt (4 papers)"
    assert last_import_entry(win) == "Last import  (4)"
    assert win.statusBar().currentMessage() == "Imported 4 new papers, 0 merged with ones already here."
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):
        win.undo_stack.undo()
    assert len(lib) == start and last_import_entry(win) is None
    win.undo_stack.redo()
    assert len(lib) == start + 4 and last_import_entry(win) == "Last import  (4)"


def test_only_a_file_held_for_its_preview_says_it_waits_not_that_nothing_was_imported(window, qtbot, tmp_path, seeds):
    from PySide6.QtWidgets import QMessageBox

    from test_first_minutes import partly_a_listing

    win, lib = window, window.library
    start, steps = len(lib), win.undo_stack.count()
    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        drop_files(win, [partly_a_listing(tmp_path, seeds)])
    box = win.transfers.preview
    qtbot.waitUntil(box.isVisible)
    assert win.statusBar().currentMessage() == "notes.txt waits for your answer."
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert win.statusBar().currentMessage() == "notes.txt was not imported."
    assert len(lib) == start and win.undo_stack.count() == steps


def test_pasted_text_that_partly_looks_like_a_listing_is_previewed(window, qtbot, tmp_path, seeds):
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QPushButton

    from test_first_minutes import partly_a_listing

    win, lib = window, window.library
    start = len(lib)
    QGuiApplication.clipboard().setText(partly_a_listing(tmp_path, seeds).read_text(encoding="utf-8"))
    win.paper_list.setFocus()
    qtbot.keyClick(
        win.paper_list, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )  # Ctrl+Shift+V
    qtbot.waitUntil(lambda: win.transfers.preview is not None and win.transfers.preview.isVisible())
    box = win.transfers.preview
    assert box.text().startswith("The pasted text has no listing header") and "gives 3 papers" in box.text()
    assert getattr(win, "error_box", None) is None and len(lib) == start
    with qtbot.waitSignal(win.importFinished, timeout=30_000):
        box.findChild(QPushButton, "importPreviewImport").click()
    assert len(lib) == start + 3 and last_import_entry(win) == "Last import  (3)"
    assert win.undo_stack.undoText() == "Import of pasted text (3 papers)"
