"""Issue 11 in the window: shortcuts, counts that follow each edit, a quiet exit,
columns that fit, and status-bar feedback (pytest-qt, offscreen, and Xvfb where
the platform's key bindings matter)."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QTreeView

from test_gui import Opened, indexed_seeds, select_rows  # noqa: F401  (the module fixture)

pytestmark = pytest.mark.gui


@pytest.fixture
def opened(qtbot, indexed_seeds, tmp_path, settings):  # noqa: F811
    folder = tmp_path / "library"
    shutil.copytree(indexed_seeds, folder)
    o = Opened(qtbot, folder).open()
    yield o
    o.close()


def tag_count(panel, tag):
    for value, label in panel.entries("tag"):
        if value == tag:
            return label
    return None


def test_pressing_1_updates_the_tag_count_in_the_sidebar(opened, qtbot):
    win = opened.win
    panel = win.findChild(QTreeView, "filterPanel")
    select_rows(win, [0, 1, 2])
    tag_input = win.findChild(QLineEdit, "tagInput")
    tag_input.setFocus()
    qtbot.keyClicks(tag_input, "llm")
    qtbot.keyClick(tag_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: tag_count(panel, "llm") == "llm  (3)", timeout=5_000)
    select_rows(win, [3, 4])
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1)
    assert all("llm" in opened.lib.get(pid).tags for pid in win.selected_ids())
    assert tag_count(panel, "llm") == "llm  (5)"          # at once, not after the index catches up
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert tag_count(panel, "llm") == "llm  (3)"
    assert win.index.flush(10)      # the index's own answer, once the edits land in it, agrees
    with qtbot.waitSignal(win.searchAnswered, timeout=5_000):
        pass
    opened.settle()
    assert tag_count(panel, "llm") == "llm  (3)"


def test_reading_list_counts_follow_the_search_like_the_other_counts(opened, qtbot, monkeypatch):
    win = opened.win
    panel = win.findChild(QTreeView, "filterPanel")
    box = win.findChild(QLineEdit, "searchBox")
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    select_rows(win, [0])
    win.add_to_list("Week 1")
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    select_rows(win, [0 if not win.model.index(0, 0).data().startswith("VeriSimpl") else 1])
    win.add_to_list("Week 1")
    qtbot.waitUntil(lambda: ("Week 1", "Week 1  (2)") in panel.entries("list"), timeout=5_000)
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    assert win.model.rowCount() == 1
    assert ("Week 1", "Week 1  (1)") in panel.entries("list")
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    assert ("Week 1", "Week 1  (2)") in panel.entries("list")

