"""The paper list's context menu, opened on a selection by a right-click in the real window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QContextMenuEvent, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QInputDialog, QMenu, QMessageBox

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


def select_rows(win, rows):
    view = win.paper_list
    view.setFocus()
    sel = view.selectionModel()
    sel.clearSelection()
    for r in rows:
        sel.select(
            view.model().index(r, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        )


def right_click(qtbot, win, row) -> QMenu:
    """A right mouse click on a row, as the view receives it; returns the menu shown."""
    view = win.paper_list
    pos = view.visualRect(view.model().index(row, 0)).center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    menu = win.paper_menu.menu
    assert menu is not None and menu.objectName() == "paperMenu"
    qtbot.waitUntil(menu.isVisible)
    return menu


def action(menu: QMenu, name: str):
    found = [a for m in [menu, *menu.findChildren(QMenu)] for a in m.actions() if a.objectName() == name]
    assert found, name
    return found[0]


def test_the_menu_acts_on_the_selection_and_each_edit_undoes(window, qtbot, monkeypatch):
    win, lib = window, window.library
    select_rows(win, [0, 1, 2])
    ids = win.selected_ids()
    menu = right_click(qtbot, win, 1)  # inside the selection: the selection stays
    assert win.selected_ids() == ids
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts[:5] == ["&Tag", "&Status", "&Rating", "Add to Reading &List", "Edit T&itle…"]
    assert not action(menu, "paperMenuEditTitle").isEnabled()  # a title is one paper's
    assert action(menu, "exportSelectionAction") in menu.actions()  # the window's own actions
    assert action(menu, "deleteAction") in menu.actions()

    action(menu, "status3Action").trigger()  # the window's Mark As ▸ Reading
    assert {lib.get(pid).status.value for pid in ids} == {"reading"}
    action(right_click(qtbot, win, 0), "paperMenuRating4").trigger()
    assert {lib.get(pid).rating for pid in ids} == {4}
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("survey, llm", True))
    action(right_click(qtbot, win, 0), "paperMenuNewTag").trigger()
    assert all({"survey", "llm"} <= set(lib.get(pid).tags) for pid in ids)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Thesis", True))
    action(right_click(qtbot, win, 0), "paperMenuNewList").trigger()
    assert lib.list_ids("Thesis") == ids

    win.undo_stack.undo()  # the list
    win.undo_stack.undo()  # the tags
    assert "Thesis" not in lib.lists() and not any("llm" in lib.get(pid).tags for pid in ids)


def test_a_right_click_outside_the_selection_selects_that_paper_and_edits_its_title(window, qtbot, monkeypatch):
    win, lib = window, window.library
    select_rows(win, [0, 1])
    menu = right_click(qtbot, win, 4)
    (pid,) = win.selected_ids()
    assert pid == win.model.id_at(4)
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("A Title Typed by Hand", True))
    action(menu, "paperMenuEditTitle").trigger()
    assert lib.get(pid).title == "A Title Typed by Hand" and not lib.get(pid).title_derived
    assert win.model.index(win.model.row_of(pid), 0).data() == "A Title Typed by Hand"
    win.undo_stack.undo()
    assert lib.get(pid).title != "A Title Typed by Hand"


def test_copying_keys_cite_and_bibtex_uses_the_export_keys_and_pins_them(window, qtbot):
    win, lib = window, window.library
    select_rows(win, [0, 1])
    ids = win.selected_ids()
    assert not any(lib.get(pid).citekey for pid in ids)
    clipboard = QGuiApplication.clipboard()
    action(right_click(qtbot, win, 0), "paperMenuCopyKey").trigger()
    keys = clipboard.text().split(",")
    assert len(keys) == 2 and [lib.get(pid).citekey for pid in ids] == keys  # pinned: stable in a document
    assert win.statusBar().currentMessage() == "Copied " + ",".join(keys)
    action(right_click(qtbot, win, 0), "paperMenuCopyCite").trigger()
    assert clipboard.text() == "\\cite{%s}" % ",".join(keys)
    action(right_click(qtbot, win, 0), "paperMenuCopyBibtex").trigger()
    text = clipboard.text()
    _report, exported = lib.export_bibtex(ids, "-")
    assert text.count("\n}\n") == 2 and all("{%s,\n" % k in text for k in keys)
    assert all(entry.strip() in exported for entry in text.split("\n\n"))  # what an export writes


def test_open_link_opens_the_papers_web_page_only(window, qtbot, monkeypatch, tmp_path):
    win, lib = window, window.library
    bib = tmp_path / "links.bib"
    bib.write_text(
        "@article{a1, title = {Linked Paper One}, author = {Ames, Ann}, year = {2022},\n"
        "  abstract = {Code is at https://example.org/code and the method is explained there at length.}}\n"
        "@article{b1, title = {Paper With a DOI}, author = {Bell, Bo}, year = {2023}, doi = {10.1/xyz}}\n",
        encoding="utf-8",
    )
    lib.import_files([bib])
    win.run_search()
    qtbot.waitUntil(lambda: win.model.rowCount() == len(lib))
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()))
    row_of = {win.model.index(r, 0).data(): r for r in range(win.model.rowCount())}
    for title, url in (
        ("Linked Paper One", "https://example.org/code"),
        ("Paper With a DOI", "https://doi.org/10.1/xyz"),
    ):
        link = action(right_click(qtbot, win, row_of[title]), "paperMenuOpenLink")
        assert link.isEnabled() and link.toolTip() == url
        link.trigger()
        assert opened[-1] == url
    no_link = next(
        r
        for r in range(win.model.rowCount())
        if not lib.get(win.model.id_at(r)).links
        and not lib.get(win.model.id_at(r)).doi
        and not lib.get(win.model.id_at(r)).arxiv_id
    )
    assert not action(right_click(qtbot, win, no_link), "paperMenuOpenLink").isEnabled()
    assert len(opened) == 2


def test_delete_from_the_menu_asks_and_undo_brings_the_papers_back(window, qtbot, monkeypatch):
    win, lib = window, window.library
    before = len(lib)
    select_rows(win, [0, 1])
    ids = win.selected_ids()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    action(right_click(qtbot, win, 0), "deleteAction").trigger()
    assert len(lib) == before - 2 and win.model.row_of(ids[0]) < 0
    win.undo_stack.undo()
    assert len(lib) == before and all(pid in lib.ids() for pid in ids)


def test_the_menu_key_opens_the_menu_on_the_selection_as_it_is(window, qtbot):
    win = window
    select_rows(win, [5, 6])
    win.paper_list.selectionModel().setCurrentIndex(win.model.index(6, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
    ids = win.selected_ids()
    view = win.paper_list  # Qt sends the Menu key's event to the focus widget, at its centre
    centre = view.rect().center()
    QApplication.sendEvent(view, QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, centre, view.mapToGlobal(centre)))
    menu = win.paper_menu.menu
    qtbot.waitUntil(menu.isVisible)
    assert win.selected_ids() == ids
    row = view.viewport().mapToGlobal(view.visualRect(win.model.index(6, 0)).center())
    assert menu.geometry().top() == row.y()  # by the current row, not the middle of the list
    action(menu, "paperMenuCopyKey").trigger()
    assert QGuiApplication.clipboard().text().count(",") == 1
