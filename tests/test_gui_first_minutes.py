"""Issue 11 in the window: shortcuts, counts that follow each edit, a quiet exit,
columns that fit, and status-bar feedback (pytest-qt, offscreen, and Xvfb where
the platform's key bindings matter)."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QTreeView

from test_gui import select_rows

pytestmark = pytest.mark.gui


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
    assert tag_count(panel, "llm") == "llm  (5)"  # at once, not after the index catches up
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert tag_count(panel, "llm") == "llm  (3)"


def test_reading_list_counts_follow_the_search_like_the_other_counts(opened, qtbot, monkeypatch):
    win = opened.win
    panel = win.findChild(QTreeView, "filterPanel")
    box = win.findChild(QLineEdit, "searchBox")
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    select_rows(win, [0])
    win.edits.add_to_list("Week 1")
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    select_rows(win, [0 if not win.model.index(0, 0).data().startswith("VeriSimpl") else 1])
    win.edits.add_to_list("Week 1")
    qtbot.waitUntil(lambda: ("Week 1", "Week 1  (2)") in panel.entries("list"), timeout=5_000)
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    assert win.model.rowCount() == 1
    assert ("Week 1", "Week 1  (1)") in panel.entries("list")
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    assert ("Week 1", "Week 1  (2)") in panel.entries("list")


# ---- item 6: every shortcut does one thing ---------------------------------

SHORTCUT_PROBE = r"""
import json, sys
from PySide6.QtCore import Qt, QItemSelectionModel
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from papershelf.core.library import Library
from papershelf.gui.app import configure_application
from papershelf.gui.main_window import MainWindow

app = QApplication([])
configure_application(app)
lib = Library.open(sys.argv[1])
lib.import_files(sys.argv[2:3])
win = MainWindow(lib, open_index=False)
win.show()
QTest.qWaitForWindowExposed(win)
win.activateWindow()
if not QTest.qWaitForWindowActive(win):
    sys.exit("the window never became active")
sel = win.paper_list.selectionModel()
flags = QItemSelectionModel.SelectionFlag
sel.select(win.model.index(0, 0), flags.ClearAndSelect | flags.Rows)
pid = win.selected_ids()[0]
win.edits.add_tags(["probe"])
out = {"platform": app.platformName(), "redo": {}}
for key, mods in (("Ctrl+Shift+Z", Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier),
                  ("Ctrl+Y", Qt.KeyboardModifier.ControlModifier)):
    QTest.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    undone = "probe" not in lib.get(pid).tags
    QTest.keyClick(win.paper_list, Qt.Key.Key_Z if key.endswith("Z") else Qt.Key.Key_Y, mods)
    out["redo"][key] = undone and "probe" in lib.get(pid).tags
out["actions"] = [[a.objectName() or a.text(), [k.toString() for k in a.shortcuts()]]
                  for a in win.findChildren(QAction)]
print(json.dumps(out))
win.close()
lib.close()
"""


def clashes(named_shortcuts):
    """Keys bound twice, by two actions or twice by one."""
    owner: dict[str, str] = {}
    found = []
    for name, keys in named_shortcuts:
        for key in keys:
            if not key:
                continue
            if key in owner:
                found.append((key, owner[key], name))
            owner[key] = name
    return found


def all_actions(win):
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMenu, QWidget

    found = set(win.findChildren(QAction))
    for widget in [win, *win.findChildren(QWidget)]:
        found.update(widget.actions())
    for menu in win.findChildren(QMenu):
        found.update(menu.actions())
    return [a for a in found if not a.isSeparator() and a.menu() is None]


def test_no_two_actions_of_the_window_share_a_key(opened, qtbot):
    win = opened.win
    select_rows(win, [0])
    win.edits.add_tags(["x"])
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo and redo both enabled
    actions = [a for a in all_actions(win) if a.isEnabled()]
    assert len(actions) > 10
    assert clashes([(a.objectName() or a.text(), [k.toString() for k in a.shortcuts()]) for a in actions]) == []


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs Xvfb (xvfb-run)")
def test_redo_works_with_ctrl_shift_z_and_ctrl_y_on_x11(tmp_path):
    """On X11 (a real Xvfb, the xcb platform) the standard Redo key is Ctrl+Shift+Z itself."""
    import json

    from conftest import SEEDS, run_window_probe

    res = run_window_probe(SHORTCUT_PROBE, tmp_path, str(tmp_path / "library"), str(SEEDS[0]), x11=True)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["platform"] == "xcb"
    assert "Ambiguous shortcut" not in res.stderr
    assert out["redo"] == {"Ctrl+Shift+Z": True, "Ctrl+Y": True}
    assert clashes(out["actions"]) == []


# ---- item 11: a quiet exit ----------------------------------------------------

EXIT_PROBE = r"""
import sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from papershelf.core.library import Library
from papershelf.gui.app import configure_application
from papershelf.gui.main_window import MainWindow

app = QApplication([])
configure_application(app)
lib = Library.open(sys.argv[1])
lib.import_files([Path(p) for p in sys.argv[2:]])
win = MainWindow(lib)

def index_open():
    win.search_box.setFocus()
    win.pane.query_typed("model")           # a search on its way when the window closes
    win.close()
    app.quit()

win.indexReady.connect(lambda: QTimer.singleShot(0, index_open))
win.show()
code = app.exec()
lib.close()
print("exited", code)
"""


def test_closing_the_window_prints_no_qt_warning(tmp_path):
    from conftest import SEEDS, run_window_probe

    res = run_window_probe(EXIT_PROBE, tmp_path, str(tmp_path / "library"), *map(str, SEEDS), timeout=180)
    assert res.stdout.strip().endswith("exited 0")
    assert "QObject" not in res.stderr and "QThread" not in res.stderr and "QTimer" not in res.stderr, res.stderr


# ---- friction: columns that fit, and a chooser ---------------------------------


def visible_columns(win):
    """Names of the columns a person sees whole, without scrolling sideways."""
    from papershelf.gui.paper_model import COLUMNS

    header = win.paper_list.horizontalHeader()
    width = win.paper_list.viewport().width()
    return [
        name
        for col, name in enumerate(COLUMNS)
        if not header.isSectionHidden(col)
        and header.sectionViewportPosition(col) >= 0
        and header.sectionViewportPosition(col) + header.sectionSize(col) <= width
    ]


def shown_columns(win):
    from papershelf.gui.paper_model import COLUMNS

    header = win.paper_list.horizontalHeader()
    return [name for col, name in enumerate(COLUMNS) if not header.isSectionHidden(col)]


def test_every_default_column_fits_the_window_a_1366x768_screen_gets(opened, qtbot):
    win = opened.win
    win.resize(int(1366 * 0.92), int(768 * 0.9))  # what the first start gives on that screen
    qtbot.waitUntil(lambda: win.paper_list.viewport().width() > 300)
    assert shown_columns(win)[:2] == ["title", "authors"] and len(shown_columns(win)) >= 5
    assert visible_columns(win) == shown_columns(win)
    qtbot.waitUntil(lambda: win.paper_list.horizontalScrollBar().maximum() == 0)  # nothing to scroll to
    title = win.paper_list.horizontalHeader().sectionSize(0)
    assert title >= 2 * win.paper_list.horizontalHeader().sectionSize(1)  # the title stretches
    win.resize(int(1366 * 0.92) + 200, int(768 * 0.9))
    qtbot.waitUntil(lambda: win.paper_list.horizontalHeader().sectionSize(0) > title)


def test_columns_are_chosen_on_the_header_menu_and_remembered(opened, qtbot):
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    win = opened.win
    header = win.paper_list.horizontalHeader()
    assert "rating" not in shown_columns(win)
    pos = QPoint(10, header.height() // 2)
    QApplication.sendEvent(
        header.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, header.viewport().mapToGlobal(pos))
    )
    menu = win.findChild(QMenu, "columnMenu")
    qtbot.waitUntil(lambda: menu is not None and menu.isVisible())
    labels = {a.text(): a for a in menu.actions() if a.isCheckable()}
    assert list(labels) == [
        "Title",
        "Authors",
        "Year",
        "Venue",
        "Area",
        "Status",
        "Rating",
        "Tags",
        "Added",
        "Read on",
        "Opened",
    ]
    assert not labels["Title"].isEnabled()  # the title is always there
    labels["Rating"].trigger()
    labels["Tags"].trigger()
    menu.close()
    assert "rating" in shown_columns(win) and "tags" not in shown_columns(win)
    win = opened.reopen().win
    assert "rating" in shown_columns(win) and "tags" not in shown_columns(win)


# ---- friction: sidebar counts always show ----------------------------------------


def test_a_narrow_sidebar_elides_long_names_but_shows_every_count(opened, qtbot):
    win = opened.win
    panel = win.findChild(QTreeView, "filterPanel")
    win.main_split.setSizes([150, 600, 300])
    qtbot.waitUntil(lambda: panel.width() <= 160)
    long_ones = [value for value, label in panel.entries("area") if len(label) > 24]
    assert long_ones, panel.entries("area")
    for value, label in panel.entries("area"):
        name, count = panel.drawn("area", value)
        assert label.endswith(f"  {count}")  # the whole count
        rect = panel.visualRect(panel.index_of("area", value))
        assert rect.right() <= panel.viewport().width()  # inside the panel: no sideways scrolling
        full = panel.index_of("area", value).data(Qt.ItemDataRole.ToolTipRole)
        assert label.startswith(full)
        if value in long_ones:
            assert name.endswith("…") and name != full
    assert panel.horizontalScrollBar().maximum() == 0


# ---- feedback: the window says what it did ------------------------------------------


def test_edits_say_what_they_did_and_how_to_undo_it(opened, qtbot):
    win = opened.win
    bar = win.statusBar()
    keys = win.findChild(object, "keyTagsLabel")
    assert not keys.isVisible()  # no tags yet: nothing on the keys
    select_rows(win, [0, 1])
    tag_input = win.findChild(QLineEdit, "tagInput")
    tag_input.setFocus()
    qtbot.keyClicks(tag_input, "llm")
    qtbot.keyClick(tag_input, Qt.Key.Key_Return)
    assert bar.currentMessage() == "Tagged 2 papers ‘llm’ — Ctrl+Z undoes"
    assert keys.isVisible() and keys.text() == "Keys: 1 llm"
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1)  # every selected paper has it: 1 takes it off
    assert bar.currentMessage() == "Removed ‘llm’ from 2 papers — Ctrl+Z undoes"
    qtbot.keyClick(win.paper_list, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert bar.currentMessage() == "Marked 2 papers as To read — Ctrl+Z undoes"
    select_rows(win, [0])
    rating = win.findChild(object, "ratingPicker")
    rating.setFocus()
    qtbot.keyClick(rating, Qt.Key.Key_Down)
    assert bar.currentMessage() == "Rated 1 paper ★ — Ctrl+Z undoes"


def test_a_search_that_finds_nothing_says_so_and_offers_a_way_on(opened, qtbot):
    win = opened.win
    label = win.findChild(object, "resultLabel")
    assert label.text() == "372 papers"
    box = win.findChild(QLineEdit, "searchBox")
    qtbot.keyClicks(box, "verisimpel")
    opened.settle()
    assert win.model.rowCount() == 0
    assert label.text() == (
        "No papers match “verisimpel”. Did you mean “verisimpl”? For close spellings, search verisimpel~"
    )
    box.selectAll()
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    assert label.text() == "1 paper" and "ms" in label.toolTip()
