"""The window's side of issue 20's tag defects (2, 5): deleting a tag from the sidebar, a
rename that keeps saved searches (and Undo of both), Make Keywords Tags, the number keys
going to the tags the user chose, and a record's keywords shown with it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMessageBox

from conftest import FIXTURES, SEEDS, window_on
from test_paper_menu import select_rows
from test_saved_searches import menu_action

pytestmark = pytest.mark.gui

MENDELEY = FIXTURES / "public" / "bib" / "bibtexparser-random-mendeley.bib"


def right_click_tag(win, monkeypatch, qtbot, tag, text):
    panel = win.filter_panel
    qtbot.waitUntil(lambda: panel.index_of("tag", tag).isValid(), timeout=10_000)
    rect = panel.visualRect(panel.index_of("tag", tag))
    menu_action(monkeypatch, lambda: panel.customContextMenuRequested.emit(rect.center()), text)


def undo(win, qtbot):
    """Ctrl+Z, as a person presses it on the paper list."""
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=5_000)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def test_delete_a_tag_from_the_sidebar_asks_with_its_papers_and_saved_searches_and_undoes(window, qtbot, monkeypatch):
    win, lib = window, window.library
    ids = lib.ids()
    lib.add_tags(ids[:2], ["racism"])
    lib.add_tags(ids[2:3], ["diffusion"])
    lib.save_search("Keyword junk", "", {"tag": "racism"})
    win.sidebar.refresh_lists_and_tags()
    asked = []

    def question(_parent, title, text, *args):
        asked.append((title, text))
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", question)
    right_click_tag(win, monkeypatch, qtbot, "racism", "Delete tag…")
    [(title, text)] = asked
    assert title == "Delete tag" and "2 papers" in text and "‘Keyword junk’" in text
    assert set(lib.tag_counts()) == {"diffusion"}
    assert "Deleted the tag ‘racism’ from 2 papers" in win.statusBar().currentMessage()
    qtbot.waitUntil(lambda: not win.filter_panel.index_of("tag", "racism").isValid(), timeout=10_000)
    undo(win, qtbot)
    assert lib.tag_counts() == {"racism": 2, "diffusion": 1}


def test_renaming_a_tag_in_the_window_keeps_its_saved_searches_and_undo_puts_them_back(window, qtbot, monkeypatch):
    win, lib = window, window.library
    ids = lib.ids()
    lib.add_tags(ids[:2], ["diffusion"])
    lib.save_search("Diffusion", "tag:diffusion", {})
    lib.save_search("Diffusion filter", "", {"tag": "diffusion"})
    win.sidebar.refresh_lists_and_tags()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Diffusion Models", True))
    right_click_tag(win, monkeypatch, qtbot, "diffusion", "Rename or merge tag…")
    saved = lib.saved_searches()
    assert saved["Diffusion"].text == 'tag:"diffusion models"'
    assert saved["Diffusion filter"].filters == {"tag": "diffusion models"}
    assert [p.id for p in lib.query(**saved["Diffusion filter"].filters)] == ids[:2]  # finds them, not 0
    undo(win, qtbot)
    saved = lib.saved_searches()
    assert lib.tag_counts() == {"diffusion": 2}
    assert saved["Diffusion"].text == "tag:diffusion" and saved["Diffusion filter"].filters == {"tag": "diffusion"}


def test_undoing_a_tag_rename_keeps_searches_saved_since_and_the_sidebar_and_keys_follow(window, qtbot, monkeypatch):
    win, lib = window, window.library
    ids = lib.ids()
    lib.add_tags(ids[:2], ["diffusion"])  # by hand: key 1
    lib.save_search("Diffusion", "tag:diffusion", {})
    win.sidebar.refresh_lists_and_tags()
    win.sidebar.saved.reload()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Diffusion Models", True))
    right_click_tag(win, monkeypatch, qtbot, "diffusion", "Rename or merge tag…")
    assert lib.key_tags() == ["diffusion models"]
    lib.save_search("Later", "attention", {})  # saved after the rename
    undo(win, qtbot)
    saved = lib.saved_searches()
    assert set(saved) == {"Diffusion", "Later"}  # the undo takes back the rename, nothing saved since
    assert saved["Diffusion"].text == "tag:diffusion"
    assert win.sidebar.saved.searches["Diffusion"].text == "tag:diffusion"  # what a click on it runs
    assert lib.key_tags() == ["diffusion"]  # key 1 is the tag again
    win.undo_stack.redo()
    assert lib.saved_searches()["Diffusion"].text == 'tag:"diffusion models"'
    assert win.sidebar.saved.searches["Diffusion"].text == 'tag:"diffusion models"'
    assert set(lib.saved_searches()) == {"Diffusion", "Later"} and lib.key_tags() == ["diffusion models"]


def test_number_key_1_goes_to_the_tag_the_user_chose_not_to_keyword_tags(window, qtbot):
    win, lib = window, window.library
    ids = lib.ids()
    lib.set_tags(ids[:5], ["racism"])  # what an import made of keywords before (an old library keeps them)
    lib.add_tags(ids[5:6], ["diffusion"])  # the user's own, applied by hand
    win.sidebar.refresh_lists_and_tags()
    select_rows(win, [7])
    (pid,) = win.selected_ids()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_1)
    assert lib.get(pid).tags == ["diffusion"]
    qtbot.keyClick(win.paper_list, Qt.Key.Key_2)  # no second tag chosen by hand
    assert lib.get(pid).tags == ["diffusion"]
    assert win.statusBar().currentMessage() == "There is no tag number 2 yet."


@pytest.fixture
def mendeley_window(qtbot, tmp_path, settings):
    yield from window_on(qtbot, tmp_path / "library", [SEEDS[0], MENDELEY])


def test_keywords_are_shown_and_made_tags_only_when_asked_and_undoably(mendeley_window, qtbot, monkeypatch):
    win, lib = mendeley_window, mendeley_window.library
    assert not lib.tag_counts()
    row = next(r for r, pid in enumerate(win.model.ids()) if "keywords" in lib.get(pid).bibfields)
    select_rows(win, [row])
    (pid,) = win.selected_ids()
    keywords = lib.get(pid).bibfields["keywords"]
    # shown with the record in the viewer, as they came
    qtbot.waitUntil(lambda: "Keywords" in win.abstract_view.toPlainText(), timeout=10_000)
    menu = win.paper_menu.build([pid])
    action = menu.findChild(QAction, "paperMenuKeywordsTags")
    assert action.isEnabled()
    action.trigger()
    tags = lib.get(pid).tags
    assert tags and all(t in keywords.casefold() for t in tags)
    assert "with their keywords" in win.statusBar().currentMessage()
    undo(win, qtbot)
    assert lib.get(pid).tags == []


def test_keywords_as_tags_on_import_is_a_file_menu_choice_off_by_default(window, qtbot):
    from test_import_undo_gui import drop

    win, lib = window, window.library
    choice = win.findChild(QAction, "keywordsAsTagsAction")
    assert choice.isCheckable() and not choice.isChecked()
    drop(qtbot, win, FIXTURES / "bib" / "sample.ris")
    assert not lib.tag_counts()  # keywords stay keywords
    choice.trigger()  # File ▸ Keywords as Tags on Import, on
    assert choice.isChecked()
    drop(qtbot, win, FIXTURES / "bib" / "jabref.bib")
    assert {"optimization", "gaussian processes"} <= set(lib.tag_counts())
