"""Suggest Papers in the window (pytest-qt, offscreen): from the paper menu or the
Edit menu, the dialog lists what `Library.suggest` ranks with the terms that
explain each, tags the checked ones as one undoable step, and says in words
when too few papers carry the tag."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QLabel, QPushButton, QTableView

from papershelf.gui.suggest_dialog import SuggestDialog

pytestmark = pytest.mark.gui


def diffusion_ids(lib, n=5):
    return sorted(p.id for p in lib.papers() if "diffusion" in p.title.lower())[:n]


def select_id(win, pid):
    table = win.findChild(QTableView, "paperList")
    table.setFocus()
    table.selectionModel().setCurrentIndex(
        table.model().index(win.model.row_of(pid), 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )


def open_from_paper_menu(win, qtbot, tag):
    menu = win.paper_menu.build(win.selected_ids())
    submenu = menu.findChild(type(menu), "paperMenuSuggest")
    assert submenu is not None and submenu.isEnabled()
    action = next(a for a in submenu.actions() if a.text() == tag)
    action.trigger()
    dialog = win.findChild(SuggestDialog, "suggestDialog")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(
        lambda: dialog.findChild(QTableView, "suggestionList").isVisible() or bool(dialog.text()), timeout=20_000
    )
    return dialog


def rows(dialog):
    table = dialog.findChild(QTableView, "suggestionList")
    m = table.model()
    return [tuple(m.index(r, c).data() for c in range(3)) for r in range(m.rowCount())]


def test_suggestions_for_a_tag_show_their_terms_and_tagging_the_checked_is_one_undo_step(opened, qtbot):
    win, lib = opened.win, opened.lib
    tagged = diffusion_ids(lib)
    assert len(tagged) == 5
    lib.add_tags(tagged, ["diffusion"])
    opened.settle()
    select_id(win, tagged[0])
    dialog = open_from_paper_menu(win, qtbot, "diffusion")
    assert dialog.windowTitle() == "Suggestions for ‘diffusion’"
    assert "trained on the 5 papers" in dialog.intro.text()
    want = lib.suggest(tag="diffusion", limit=30)
    shown = rows(dialog)
    assert [title for title, _, _ in shown] == [lib.get(s.paper_id).title for s in want]
    assert [terms for _, _, terms in shown] == [", ".join(s.terms) for s in want]
    assert all(terms for _, _, terms in shown)
    # the explanations are about diffusion: the tag's own word drives the first suggestions
    assert all("diffusion" in terms for _, _, terms in shown[:3])
    assert not set(tagged) & {s.paper_id for s in want}

    # check the first two from the keyboard (Space on the title), then tag them
    table = dialog.findChild(QTableView, "suggestionList")
    apply = dialog.findChild(QPushButton, "suggestApplyButton")
    assert not apply.isEnabled()
    for row in (0, 1):
        table.setCurrentIndex(table.model().index(row, 0))
        qtbot.keyClick(table, Qt.Key.Key_Space)
    assert apply.isEnabled() and apply.text() == "&Tag 2 Checked"
    chosen = [want[0].paper_id, want[1].paper_id]
    steps = win.undo_stack.count()
    qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert all("diffusion" in lib.get(pid).tags for pid in chosen)
    assert win.undo_stack.count() == steps + 1
    assert "Tagged 2 papers ‘diffusion’" in win.statusBar().currentMessage()
    assert [title for title, _, _ in rows(dialog)] == [lib.get(s.paper_id).title for s in want[2:]]
    # one Undo takes both back
    win.findChild(QAction, "undoAction").trigger()
    assert not any("diffusion" in lib.get(pid).tags for pid in chosen)
    assert all("diffusion" in lib.get(pid).tags for pid in tagged)


def test_too_few_tagged_papers_say_so_in_words(opened, qtbot, monkeypatch):
    win, lib = opened.win, opened.lib
    lib.add_tags(diffusion_ids(lib, 1), ["solo"])
    asked = []

    def get_item(parent, title, label, items, current=0, editable=True):
        asked.append(items)
        return "Tag: solo", True

    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(get_item))
    win.findChild(QAction, "suggestAction").trigger()
    assert asked and asked[0][0] == "Tag: solo"
    dialog = win.findChild(SuggestDialog, "suggestDialog")
    qtbot.waitUntil(lambda: bool(dialog.text()), timeout=20_000)
    message = dialog.findChild(QLabel, "suggestMessage")
    assert message.isVisible()
    assert message.text() == "Suggestions for 'solo' need at least 2 papers tagged 'solo'; 1 is."
    assert not dialog.findChild(QPushButton, "suggestApplyButton").isEnabled()


def test_suggestions_for_a_reading_list_add_the_checked_to_it_in_one_step(opened, qtbot, monkeypatch):
    win, lib = opened.win, opened.lib
    lib.add_to_list("Diffusion reading", diffusion_ids(lib, 4))
    monkeypatch.setattr(
        QInputDialog, "getItem", staticmethod(lambda *a, **k: ("Reading list: Diffusion reading", True))
    )
    win.findChild(QAction, "suggestAction").trigger()
    dialog = win.findChild(SuggestDialog, "suggestDialog")
    qtbot.waitUntil(lambda: dialog.findChild(QTableView, "suggestionList").isVisible(), timeout=20_000)
    want = lib.suggest(list_name="Diffusion reading", limit=30)
    assert [title for title, _, _ in rows(dialog)] == [lib.get(s.paper_id).title for s in want]
    table = dialog.findChild(QTableView, "suggestionList")
    table.model().setData(table.model().index(0, 0), Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    apply = dialog.findChild(QPushButton, "suggestApplyButton")
    assert apply.text() == "&Add 1 Checked to List"
    steps = win.undo_stack.count()
    qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert want[0].paper_id in lib.list_ids("Diffusion reading")
    assert win.undo_stack.count() == steps + 1
    win.findChild(QAction, "undoAction").trigger()
    assert want[0].paper_id not in lib.list_ids("Diffusion reading")


def test_closing_the_dialog_while_it_ranks_cancels_and_drops_the_answer(opened, qtbot, monkeypatch):
    win, lib = opened.win, opened.lib
    lib.add_tags(diffusion_ids(lib), ["diffusion"])
    entered, release, saw_cancel = threading.Event(), threading.Event(), []
    real = lib.suggest

    def held(**kwargs):
        entered.set()
        release.wait(10)
        saw_cancel.append(kwargs["cancelled"]())
        return real(**kwargs)

    monkeypatch.setattr(lib, "suggest", held)
    select_id(win, diffusion_ids(lib)[0])
    menu = win.paper_menu.build(win.selected_ids())
    next(a for a in menu.findChild(type(menu), "paperMenuSuggest").actions() if a.text() == "diffusion").trigger()
    dialog = win.findChild(SuggestDialog, "suggestDialog")
    assert dialog.findChild(QLabel, "suggestMessage").text() == ""
    qtbot.waitUntil(entered.is_set, timeout=5_000)
    with qtbot.waitSignal(dialog.destroyed, timeout=5_000):
        qtbot.mouseClick(dialog.findChild(QPushButton, "suggestCloseButton"), Qt.MouseButton.LeftButton)
    release.set()
    qtbot.waitUntil(lambda: bool(saw_cancel), timeout=5_000)
    assert saw_cancel == [True]
    assert win.findChild(SuggestDialog, "suggestDialog") is None


def test_with_no_tags_or_lists_the_edit_menu_says_what_to_do_first(window, monkeypatch):
    asked = []
    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(lambda *a, **k: asked.append(a) or ("", False)))
    window.findChild(QAction, "suggestAction").trigger()
    assert not asked and window.findChild(SuggestDialog, "suggestDialog") is None
    assert window.statusBar().currentMessage() == "Tag a few papers first: suggestions are papers like them."
