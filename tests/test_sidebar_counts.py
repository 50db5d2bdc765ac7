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


def test_a_large_library_is_counted_on_a_worker_and_shows_the_same(qtbot, tmp_path, settings, monkeypatch):
    """Past COUNT_HERE papers the first rows' counts and the tag panel's tags are worked out on a
    worker thread (0.5 s at 100,000 papers): the window is built without them, and they arrive the
    same as the GUI thread counts them."""
    import papershelf.gui.sidebar_controller as sidebar
    from conftest import SEEDS, window_on

    lib_dir = tmp_path / "library"
    here = window_on(qtbot, lib_dir, SEEDS[:1])
    win = next(here)  # counted on the GUI thread: the library is small
    try:
        select_rows(win, [0, 1])
        win.edits.add_tags(["alpha"])
        want_counts = {kind: win.filter_panel.entries(kind) for kind in ("status", "tag", "area")}
        want_keys = win.tag_panel.key_tags.text()
        assert "alpha" in want_keys
    finally:
        win.close()
        win.library.close()
    monkeypatch.setattr(sidebar, "COUNT_HERE", 0)  # every library is large
    from papershelf.core.library import Library
    from papershelf.gui.main_window import MainWindow
    from papershelf.gui.tasks import run_task

    lib = Library.open(lib_dir)
    asked = []
    monkeypatch.setattr(sidebar, "run_task", lambda *a, **k: asked.append(k["name"]) or run_task(*a, **k))
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    try:
        assert "alpha" not in win.tag_panel.key_tags.text()  # not yet: on the worker
        win.show()
        qtbot.waitUntil(lambda: win.tag_panel.key_tags.text() == want_keys)
        qtbot.waitUntil(lambda: {k: win.filter_panel.entries(k) for k in want_counts} == want_counts)
        assert {"papershelf-tags", "papershelf-counts"} <= set(asked)
    finally:
        win.close()
        lib.close()
