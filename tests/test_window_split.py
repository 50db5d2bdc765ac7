"""The window after its split into controllers (issue 12) behaves as the one
window did before it: the same menus and keys, the index rebuilt from the
menu with progress and Cancel, edits still followed once the index was
opened again, and a close while the index is still being built that leaves
nothing running (pytest-qt, offscreen)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QProgressBar, QPushButton

from conftest import Opened, copy_seeded

pytestmark = pytest.mark.gui

# The menus as the window had them before the split (commit 147ffdd), read offscreen; since
# then the exports also write RIS (their names no longer say BibTeX) and Edit has Possible
# Duplicates (issue 13), Reading Statistics and Suggest Papers (issue 15); Paper (issue 24).
MENUS = [
    (
        "&File",
        [
            "&Import…",
            "Import Pasted &Text",
            "Add by &Identifier…",
            "Open the &Sample Library",
            "&Keywords as Tags on Import",
            "",
            "&Export Selection…",
            "Export &Shown Papers…",
            "&Rebuild Search Index",
            "",
            "&Quit",
        ],
    ),
    (
        "&Edit",
        [
            "&Undo",
            "&Redo",
            "",
            "&Find",
            "Sa&ve Search…",
            "Edit R&ecord…",
            "Add to Reading &List…",
            "&Delete From Library…",
            "Possible &Duplicates…",
            "Reading &Statistics…",
            "&Conflicts…",
            "Find &Published Version…",
            "Find Published Versions of Derived Titles…",
            "Su&ggest Papers…",
            "Mark &As",
            "",
            "&Preferences…",
        ],
    ),
    ("&Paper", ["&Open PDF", "&Attach Files…", "Get &PDF"]),
    ("&Help", ["&Keyboard Shortcuts", "&About Papershelf"]),
]
KEYS = {
    "importAction": "Ctrl+O",
    "importPasteAction": "Ctrl+Shift+V",
    "addByIdentifierAction": "Ctrl+N",
    "exportSelectionAction": "Ctrl+E",
    "exportShownAction": "Ctrl+Shift+E",
    "undoAction": "Ctrl+Z",
    "findAction": "Ctrl+F",
    "editRecordAction": "F2",
    "addToListAction": "Ctrl+L",
    "deleteAction": "Del",
    "preferencesAction": "Ctrl+,",
    "shortcutsAction": "F1",
    "openPdfAction": "Ctrl+Shift+O",
    **{f"status{n}Action": f"Alt+{n}" for n in range(1, 6)},
}


def test_the_menus_and_their_keys_are_those_of_the_window_before_the_split(opened):
    win = opened.win
    menus = [(m.text(), [a.text() for a in m.menu().actions()]) for m in win.menuBar().actions()]
    assert menus == MENUS
    for name, key in KEYS.items():
        action = win.findChild(QAction, name)
        assert action is not None and action.parent() is win, name
        assert action.shortcut().toString() == key, name
        assert action in win.actions(), name  # its key works wherever the focus is
    assert win.findChild(QAction, "deleteAction") in win.paper_list.actions()
    assert not win.findChild(QAction, "undoAction").isEnabled()
    assert not win.findChild(QAction, "redoAction").isEnabled()


def test_rebuilding_the_index_from_the_menu_shows_progress_and_edits_are_followed_after_it(opened, qtbot):
    win = opened.win
    bar, cancel = win.findChild(QProgressBar, "taskProgress"), win.findChild(QPushButton, "cancelTaskButton")
    win.findChild(QAction, "reindexAction").trigger()
    assert bar.isVisible() and cancel.isVisible()
    assert win.index is None  # searches match titles meanwhile
    qtbot.waitUntil(lambda: win.index is not None and not cancel.isVisible(), timeout=60_000)
    opened.settle()
    assert not bar.isVisible()
    # the reopened index still tells the window when an edit becomes searchable
    view = win.paper_list
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(0, 0)).center())
    qtbot.waitUntil(lambda: len(win.selected_ids()) == 1)
    win.edits.add_tags(["after-rebuild"])
    # the commit lands a moment later (the writer gathers edits for a quarter second),
    # then the window asks again: wait for that answer, not the first one after the edit
    qtbot.waitUntil(
        lambda: (
            win.last_answer is not None
            and win.last_answer.indexed
            and win.last_answer.facets.get("tags", {}).get("after-rebuild") == 1
        ),
        timeout=10_000,
    )


def test_closing_while_the_index_is_being_built_leaves_nothing_running(qtbot, tmp_path, settings, indexed_seeds):
    folder = tmp_path / "library"
    copy_seeded(indexed_seeds, folder)
    o = Opened(qtbot, folder).open(wait_index=False)
    win, lib = o.win, o.lib
    win.findChild(QAction, "reindexAction").trigger()  # a rebuild takes long enough to close during it
    win.close()
    qtbot.waitUntil(lambda: not any(t.name.startswith("papershelf-") for t in threading.enumerate()), timeout=60_000)
    assert win.index is None and not lib.index_status.ready
    lib.close()
