"""The sidebar's counts say how many of the papers shown each entry holds."""

from __future__ import annotations

from test_import_undo_core import BIB_MORE
from test_import_undo_gui import click_last_import, drop_bib, titles_shown
from test_paper_menu import select_rows


def status_all(win) -> str:
    return dict(win.filter_panel.entries("status"))[None]


def test_last_import_counts_only_the_papers_it_shows(window, qtbot, tmp_path):
    win = window
    select_rows(win, [0, 1, 2])
    win.edits.add_to_list("Thesis")
    drop_bib(qtbot, win, tmp_path / "more.bib", BIB_MORE)
    click_last_import(qtbot, win)
    assert len(titles_shown(win)) == 2
    assert status_all(win) == "All  (2)"
    assert dict(win.filter_panel.entries("list"))["Thesis"] == "Thesis  (0)"


def test_an_edit_under_last_import_keeps_counting_what_is_shown(window, qtbot, tmp_path):
    win = window
    drop_bib(qtbot, win, tmp_path / "more.bib", BIB_MORE)
    click_last_import(qtbot, win)
    select_rows(win, [0])
    win.edits.set_status("reading")
    statuses = dict(win.filter_panel.entries("status"))
    assert statuses[None] == "All  (2)"
    assert statuses["unread"] == "Unread  (1)"


def test_undoing_an_import_or_a_delete_updates_the_total_at_once(window, qtbot, tmp_path):
    win, lib = window, window.library
    n0 = len(lib)
    drop_bib(qtbot, win, tmp_path / "more.bib", BIB_MORE)
    qtbot.waitUntil(lambda: status_all(win) == f"All  ({n0 + 2})")
    win.undo_stack.undo()
    assert len(lib) == n0
    assert status_all(win) == f"All  ({n0})"
    win.undo_stack.redo()
    assert status_all(win) == f"All  ({n0 + 2})"
