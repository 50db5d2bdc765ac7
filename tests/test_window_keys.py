"""Keys the window's list and search box take (gui/actions.py, gui/paper_menu.py), driven as a person does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from test_paper_menu import select_rows

pytestmark = pytest.mark.gui


def test_the_menu_key_opens_the_paper_menu_for_the_selection(window, qtbot):
    win = window
    view = win.paper_list
    view.setCurrentIndex(view.model().index(2, 0))
    select_rows(win, [1, 2])
    center = view.viewport().rect().center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, center, view.viewport().mapToGlobal(center))
    QApplication.sendEvent(view, event)
    menu = win.paper_menu.menu
    assert menu is not None and menu.objectName() == "paperMenu"
    qtbot.waitUntil(menu.isVisible)
    assert len(win.selected_ids()) == 2  # the selection as it was
    menu.close()


def test_number_keys_toggle_the_most_used_tags_and_esc_clears_the_search(window, qtbot):
    win, lib = window, window.library
    ids = lib.ids()
    lib.add_tags(ids[:3], ["often"])
    lib.add_tags(ids[:1], ["rarely"])
    select_rows(win, [0])
    (pid,) = win.selected_ids()
    had = "often" in lib.get(pid).tags
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1)  # key 1: the most used tag
    assert ("often" in lib.get(pid).tags) is not had
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1)
    assert ("often" in lib.get(pid).tags) is had
    qtbot.keyClick(win.paper_list, Qt.Key.Key_9)  # no ninth tag yet: nothing changes
    assert win.statusBar().currentMessage() == "There is no tag number 9 yet."

    box = win.search_box
    box.setFocus()
    qtbot.keyClicks(box, "shelf")
    assert win.query.text == "shelf"
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    assert box.text() == "" and win.query.text == ""


def test_ctrl_z_right_after_tagging_in_the_tag_box_undoes_the_tag(window, qtbot):
    """The status line says "Ctrl+Z undoes" while the focus is still in the tag box:
    Ctrl+Z there must undo the tag, not bring the typed text back into the box."""
    win, lib = window, window.library
    select_rows(win, [0])
    (pid,) = win.selected_ids()
    box = win.tag_panel.tag_input
    win.activateWindow()
    box.setFocus()
    qtbot.keyClicks(box, "Fresh Tag")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert "fresh tag" in lib.get(pid).tags and box.text() == ""
    assert "Ctrl+Z undoes" in win.statusBar().currentMessage()
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert "fresh tag" not in lib.get(pid).tags
    assert box.text() == ""
    # while the box holds text of its own, Ctrl+Z edits that text, as in any text box
    qtbot.keyClicks(box, "half typed")
    qtbot.keyClick(box, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert box.text() != "half typed" and "fresh tag" not in lib.get(pid).tags
