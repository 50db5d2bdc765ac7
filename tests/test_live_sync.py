"""The window follows other devices live (issue 22, items 6 and 2).

A window on device A of a shared library folder; device B, another device on
the same folder (the installed command in a subprocess with a configuration
folder of its own, or a second Library in this process), edits and imports.
The window shows B's edits within seconds, without a restart, and keeps the
user's selection; a field both devices set at once is shown as a conflict over
the abstract and in Edit ▸ Conflicts…, and settled from there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QFileSystemWatcher, QItemSelectionModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QToolButton

from conftest import SEEDS, run_cli
from papershelf.core.library import Library
from papershelf.core.store import SharedStore

pytestmark = pytest.mark.gui

A, B = "aaaaaaaaaaa1", "bbbbbbbbbbb2"


def _device(folder: Path, device: str) -> Library:
    return Library(SharedStore(folder, device=device).open())


@pytest.fixture
def shared(tmp_path, qtbot, settings):
    """A window on device A of a library holding the first listing; yields (window, folder)."""
    from papershelf.gui.main_window import MainWindow

    folder = tmp_path / "shared"
    lib = _device(folder, A)
    lib.import_files([SEEDS[0]])
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win, folder
    win.close()
    lib.close()


def _select_row(qtbot, win, row: int) -> str:
    view = win.paper_list
    rect = view.visualRect(win.model.index(row, 1))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    (pid,) = win.selected_ids()
    return pid


def _device_b_env(tmp_path: Path) -> dict:
    """Device B on this machine: a configuration (its device id) and a state folder of its own."""
    return {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "config-b"), "PAPERSHELF_STATE_DIR": str(tmp_path / "state-b")}


def test_another_devices_tag_and_import_show_in_the_window_and_the_selection_stays(shared, qtbot, tmp_path):
    win, folder = shared
    before = len(win.library)
    pid = _select_row(qtbot, win, 2)
    env = _device_b_env(tmp_path)
    res = run_cli("tag", pid, "--add", "from-laptop", data_dir=folder, env=env)
    assert res.returncode == 0, res.stderr
    res = run_cli("import", str(SEEDS[1]), data_dir=folder, env=env)
    assert res.returncode == 0, res.stderr
    assert len(list((folder / "devices").iterdir())) == 2  # B wrote in a folder of its own

    # the viewer's tag chips, the list and the sidebar follow, with no restart
    qtbot.waitUntil(lambda: "from-laptop" in win.tag_panel.chip_labels(), timeout=10_000)
    qtbot.waitUntil(lambda: win.model.rowCount() > before, timeout=10_000)
    assert len(win.library) > before
    assert win.selected_ids() == [pid]  # the user's selection is kept
    assert win.model.id_at(win.paper_list.currentIndex().row()) == pid
    qtbot.waitUntil(lambda: "from-laptop" in [v for v, _ in win.filter_panel.entries("tag")], timeout=10_000)
    # the abstract view still shows the selected paper
    assert win.library.get(pid).title.split()[0] in win.abstract_view.toPlainText()


def test_the_poll_merges_when_the_file_watcher_misses_the_change(shared, qtbot):
    """A network or FUSE file system, or a sync tool's rename, can leave the watcher silent:
    the poll compares the files' stat keys and merges anyway."""
    win, folder = shared
    watcher = win.findChild(QFileSystemWatcher)
    assert watcher is not None
    watcher.blockSignals(True)  # as if the file system never told
    pid = _select_row(qtbot, win, 0)
    b = _device(folder, B)
    try:
        b.set_status([pid], "read")
        b.set_notes(pid, "seen on the desktop")
    finally:
        b.close()
    qtbot.waitUntil(lambda: win.tag_panel.notes.toPlainText() == "seen on the desktop", timeout=10_000)
    assert win.tag_panel.findChild(QToolButton, "status-read").isChecked()
    assert win.selected_ids() == [pid]


def test_a_paper_deleted_on_another_device_leaves_the_list(shared, qtbot):
    win, folder = shared
    keep = _select_row(qtbot, win, 0)
    gone = win.model.id_at(1)
    b = _device(folder, B)
    try:
        b.delete_papers([gone])
    finally:
        b.close()
    qtbot.waitUntil(lambda: win.model.row_of(gone) < 0, timeout=10_000)
    assert gone not in win.library
    assert win.selected_ids() == [keep]


def test_a_reading_list_made_on_another_device_shows_in_the_sidebar_and_the_list_menu(shared, qtbot):
    win, folder = shared
    pid = _select_row(qtbot, win, 0)
    b = _device(folder, B)
    try:
        b.add_to_list("desk reading", [pid])
    finally:
        b.close()
    qtbot.waitUntil(lambda: "desk reading" in [a.text() for a in win.tag_panel.list_menu.actions()], timeout=10_000)
    qtbot.waitUntil(lambda: "desk reading" in [v for v, _ in win.filter_panel.entries("list")], timeout=10_000)
    assert win.library.list_ids("desk reading") == [pid]
    assert win.selected_ids() == [pid]


@contextlib.contextmanager
def _conflict_on_row_1(qtbot, win, folder: Path) -> Iterator[tuple[str, Library]]:
    """The window's second paper selected and a conflict made on it; yields (its id, device B),
    and closes B after."""
    pid = _select_row(qtbot, win, 1)
    b = _make_conflict(win, folder, pid)
    try:
        yield pid, b
    finally:
        b.close()


def _make_conflict(win, folder: Path, pid: str) -> Library:
    """Both devices set the paper's notes without having seen each other's: B's value and A's
    are one field set twice at once. Returns device B (open)."""
    b = _device(folder, B)
    b.set_notes(pid, "compare with the 2019 baseline")
    win.library.set_notes(pid, "read section 3 again")
    return b


def test_a_conflict_is_shown_over_the_abstract_and_use_that_takes_it(shared, qtbot):
    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (pid, b):
        bar = win.conflict_bar
        qtbot.waitUntil(lambda: bar.isVisible(), timeout=10_000)
        text = bar.label.text()
        assert "Another device" in text and "notes" in text
        (conflict,) = win.library.conflicts()
        assert conflict.value in text and conflict.current in text
        counter = win.conflicts.count_button
        assert counter.isVisible() and "1 conflict" in counter.text()

        qtbot.mouseClick(bar.use_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not bar.isVisible(), timeout=10_000)
        assert win.library.get(pid).notes == conflict.value
        assert win.tag_panel.notes.toPlainText() == conflict.value
        assert win.library.conflicts() == []
        assert not counter.isVisible()
        assert win.selected_ids() == [pid]
        # settling is an edit of A that saw both values: B follows, and has no conflict either
        b.refresh()
        assert b.get(pid).notes == conflict.value and b.conflicts() == []


def test_edit_conflicts_lists_them_and_dismiss_keeps_what_is_shown(shared, qtbot):
    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (pid, _b):
        qtbot.waitUntil(lambda: len(win.live.conflicts) == 1, timeout=10_000)
        shown = win.library.get(pid).notes
        win.findChild(QAction, "conflictsAction").trigger()
        dialog = win.conflicts.dialog
        assert dialog is not None and dialog.isVisible()
        table = dialog.view
        assert table.model().rowCount() == 1
        cells = [table.model().index(0, c).data() for c in range(table.model().columnCount())]
        assert "notes" in cells and shown in " ".join(cells)
        qtbot.mouseClick(dialog.dismiss_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: table.model().rowCount() == 0, timeout=10_000)
        assert "No conflicts" in dialog.summary.text()
        assert win.library.get(pid).notes == shown
        assert win.library.conflicts() == []


def test_take_in_the_dialog_uses_the_kept_value(shared, qtbot):
    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (pid, _b):
        qtbot.waitUntil(lambda: len(win.live.conflicts) == 1, timeout=10_000)
        kept = win.live.conflicts[0].value
        win.conflicts.count_button.click()  # the status bar's "1 conflict"
        dialog = win.conflicts.dialog
        assert dialog is not None and dialog.isVisible()
        dialog.view.selectionModel().select(
            dialog.model.index(0, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
        )
        qtbot.mouseClick(dialog.take_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.model.rowCount() == 0, timeout=10_000)
        assert win.library.get(pid).notes == kept
        qtbot.waitUntil(lambda: win.tag_panel.notes.toPlainText() == kept, timeout=10_000)


def test_a_window_on_a_library_of_one_device_reading_it_only_does_not_follow(tmp_path, qtbot, settings):
    """A library opened read-only in its old single-device layout has no other devices: no
    watcher, no worker."""
    from papershelf.core.store import Store
    from papershelf.gui.main_window import MainWindow

    folder = tmp_path / "old"
    store = Store(folder).open()
    store.close()
    lib = Library.open(folder, readonly=True)
    try:
        win = MainWindow(lib, open_index=False)
        qtbot.addWidget(win)
        assert not win.live.active
        win.close()
    finally:
        lib.close()
