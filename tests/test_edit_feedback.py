"""The status bar after an edit: it counts the papers that changed, and only
points to Undo when there is something to undo."""

from __future__ import annotations

from PySide6.QtCore import Qt

from test_import_undo_core import BIB_MORE
from test_import_undo_gui import drop
from test_paper_menu import select_rows


def test_marking_a_paper_as_it_already_is_says_so_and_offers_no_undo(window, qtbot, tmp_path):
    win, lib = window, window.library
    more = tmp_path / "more.bib"
    more.write_text(BIB_MORE, encoding="utf-8")
    drop(qtbot, win, more)
    steps, undo_text = win.undo_stack.index(), win.undo_stack.undoText()
    select_rows(win, [0])
    assert lib.get(win.selected_ids()[0]).status.value == "unread"
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)  # Alt+1: Unread
    assert win.statusBar().currentMessage() == "Already unread"
    assert (win.undo_stack.index(), win.undo_stack.undoText()) == (steps, undo_text)  # Ctrl+Z still undoes the import


def test_the_messages_count_the_papers_that_changed(window, qtbot):
    win, lib = window, window.library
    bar = win.statusBar()
    select_rows(win, [0])
    win.edits.add_tags(["llm"])
    assert bar.currentMessage() == "Tagged 1 paper ‘llm’ — Ctrl+Z undoes"
    select_rows(win, [0, 1])
    win.edits.add_tags(["llm"])
    assert bar.currentMessage() == "Tagged 1 paper ‘llm’ — Ctrl+Z undoes"
    win.edits.add_tags(["llm"])
    assert bar.currentMessage() == "Already tagged ‘llm’"
    select_rows(win, [1, 2])
    win.edits.remove_tag("llm")
    assert bar.currentMessage() == "Removed ‘llm’ from 1 paper — Ctrl+Z undoes"
    win.edits.remove_tag("llm")
    assert bar.currentMessage() == "No selected paper has ‘llm’"
    select_rows(win, [2])
    win.edits.set_status("reading")
    select_rows(win, [1, 2])
    win.edits.set_status("reading")
    assert bar.currentMessage() == "Marked 1 paper as Reading — Ctrl+Z undoes"
    win.edits.set_rating(3)
    win.edits.set_rating(3)
    assert bar.currentMessage() == "Already rated ★★★"
    win.edits.set_rating(None)
    assert bar.currentMessage() == "Cleared the rating of 2 papers — Ctrl+Z undoes"
    win.edits.set_rating(None)
    assert bar.currentMessage() == "Already not rated"
    win.undo_stack.undo()  # the last step that changed something
    assert [lib.get(pid).rating for pid in win.selected_ids()] == [3, 3]
