"""Where undo, the conflicts and the live window meet the shared store (issue 22 review).

Device A is the window (or the command line) on a shared library; device B is a second
Library on the same folder in this process, with a device id of its own.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from test_live_sync import _conflict_on_row_1, _make_conflict, _select_row, shared  # noqa: F401  (the fixture)
from test_undo_library import edit_action

pytestmark = pytest.mark.gui


def test_undo_in_the_window_after_use_that_takes_the_conflict_back(shared, qtbot):  # noqa: F811
    win, folder = shared
    pid = _select_row(qtbot, win, 1)
    win.tag_panel.addTagsRequested.emit(["ml"])  # an earlier step of the window's own
    assert win.library.get(pid).tags == ["ml"]
    b = _make_conflict(win, folder, pid)
    try:
        bar = win.conflict_bar
        qtbot.waitUntil(lambda: bar.isVisible(), timeout=10_000)
        (conflict,) = win.library.conflicts()
        shown = conflict.current
        qtbot.mouseClick(bar.use_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: win.library.get(pid).notes == conflict.value, timeout=10_000)
        undo = edit_action(win, "undoAction")
        qtbot.waitUntil(lambda: "notes" in undo.text(), timeout=10_000)
        undo.trigger()
        # Undo takes back what the user did last (the take), not the earlier tag
        assert win.library.get(pid).notes == shown
        assert win.library.get(pid).tags == ["ml"]
        redo = edit_action(win, "redoAction")
        assert "Use the other device's notes" in redo.text()
        redo.trigger()
        assert win.library.get(pid).notes == conflict.value
        assert "Use the other device's notes" in win.library.undo_label()
    finally:
        b.close()


def test_two_conflicts_are_counted_in_words_not_with_a_plural_placeholder(shared, qtbot):  # noqa: F811
    from PySide6.QtGui import QAction

    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (pid, b):
        b.set_status([pid], "reading")
        win.library.set_status([pid], "read")
        qtbot.waitUntil(lambda: len(win.live.conflicts) == 2, timeout=10_000)
        counter = win.conflicts.count_button
        qtbot.waitUntil(lambda: counter.isVisible(), timeout=10_000)
        assert counter.text() == "⚠ 2 conflicts"
        win.findChild(QAction, "conflictsAction").trigger()
        summary = win.conflicts.dialog.summary.text()
        assert summary.startswith("2 values kept because") and "(s)" not in summary
        # one settled on the other device: the dialog and the count follow, in the singular
        b.refresh()
        b.take_conflict(1, keep=True)
        qtbot.waitUntil(lambda: win.conflicts.dialog.model.rowCount() == 1, timeout=10_000)
        assert counter.text() == "⚠ 1 conflict"
        assert win.conflicts.dialog.summary.text().startswith("1 value kept because")


def test_notes_being_typed_into_a_paper_another_device_deletes_are_not_dropped(shared, qtbot):  # noqa: F811
    """The typing is an edit later than the deletion: the paper comes back with the notes (as the
    merge brings back a paper edited after a deletion it had seen), and the window says so."""
    from test_live_sync import B, _device

    win, folder = shared
    gone = _select_row(qtbot, win, 1)
    title = win.library.get(gone).title
    # the user is still typing when the deletion arrives (the pause that saves typed notes does not
    # end first, however slow the machine): the window keeps the notes when it merges the deletion
    win.tag_panel._notes_timer.setInterval(3_600_000)
    qtbot.keyClicks(win.tag_panel.notes, "half a thought")
    b = _device(folder, B)
    try:
        b.delete_papers([gone])
    finally:
        b.close()
    qtbot.waitUntil(lambda: "deleted on another device" in win.statusBar().currentMessage(), timeout=10_000)
    assert win.library.get(gone).notes == "half a thought"
    assert win.library.get(gone).title == title
    assert win.model.row_of(gone) >= 0 and win.selected_ids() == [gone]
    # the other device follows: the paper is back there too, with the notes
    b = _device(folder, B)
    try:
        assert b.get(gone).notes == "half a thought"
    finally:
        b.close()
    # and it is one step of the window's Undo, which is the library's
    undo = edit_action(win, "undoAction")
    assert "Bring back" in undo.text()
    undo.trigger()
    assert gone not in win.library


def test_a_search_saved_on_another_device_shows_in_the_sidebar_without_a_restart(shared, qtbot):  # noqa: F811
    from test_live_sync import B, _device

    win, folder = shared
    b = _device(folder, B)
    try:
        b.save_search("desk reads", "transformer", {"status": "unread"})
    finally:
        b.close()
    qtbot.waitUntil(lambda: "desk reads" in [v for v, _ in win.filter_panel.entries("saved")], timeout=10_000)
    assert "desk reads" in win.library.saved_searches()


def test_the_result_count_does_not_show_through_a_status_message_when_a_conflict_is_counted(shared, qtbot):  # noqa: F811
    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (_pid, _b):
        counter = win.conflicts.count_button
        qtbot.waitUntil(lambda: counter.isVisible(), timeout=10_000)
        win.statusBar().showMessage("Merged edits from another device.", 60_000)
        counter.setText("⚠ 2 conflicts")  # a later count
        for _ in range(3):  # the layout request, then the show it queues: posted events, no time
            QApplication.sendPostedEvents()
            QApplication.processEvents()
        # a status message hides the "N papers" label under it; it must not be drawn over it
        assert not win.result_label.isVisible()


def test_the_conflict_bar_gives_its_words_the_width_of_the_abstract(shared, qtbot):  # noqa: F811
    win, folder = shared
    with _conflict_on_row_1(qtbot, win, folder) as (_pid, _b):
        bar = win.conflict_bar
        qtbot.waitUntil(lambda: bar.isVisible(), timeout=10_000)
        # the words over the whole bar, Use that / Keep this under them (not a narrow column beside them)
        assert bar.label.width() >= 0.9 * bar.contentsRect().width()
        assert bar.use_button.geometry().top() >= bar.label.geometry().bottom()


def test_papershelf_undo_after_conflicts_take_says_what_it_takes_back(tmp_path, data_dir):
    """The command line: a conflict made by two copies of one library (device B's folder copied
    in, as a sync tool does), taken, then undone: the undo names the take."""
    import json
    import shutil

    from conftest import SEEDS, run_cli

    b_env = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "config-b"), "PAPERSHELF_STATE_DIR": str(tmp_path / "state-b")}
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    pid = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"]
    other = tmp_path / "copy"
    shutil.copytree(data_dir, other)
    assert run_cli("note", pid, "A note", data_dir=data_dir).returncode == 0
    assert run_cli("note", pid, "B note", data_dir=other, env=b_env).returncode == 0
    mine = {p.name for p in (data_dir / "devices").iterdir()}
    (b_dir,) = [p for p in (other / "devices").iterdir() if p.name not in mine]
    shutil.copytree(b_dir, data_dir / "devices" / b_dir.name)
    shown = json.loads(run_cli("show", pid, "--json", data_dir=data_dir).stdout)["notes"]
    taken = run_cli("conflicts", "--take", "1", data_dir=data_dir)
    assert taken.returncode == 0, taken.stderr
    res = run_cli("undo", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Undone: Use the other device's notes of" in res.stdout
    assert json.loads(run_cli("show", pid, "--json", data_dir=data_dir).stdout)["notes"] == shown


def test_undoing_an_import_keeps_the_papers_another_device_imported_too(tmp_path):
    """Both devices import one listing at once (neither had seen the other's): one set of papers.
    Undo on A takes back A's import only; B's import of the same papers stays, on both devices."""
    from conftest import SEEDS
    from test_live_sync import A, B, _device

    folder = tmp_path / "shared"
    a, b = _device(folder, A), _device(folder, B)
    try:
        a.import_files([SEEDS[0]])
        b.import_files([SEEDS[0]])
        a.refresh()
        b.refresh()
        n = len(a)
        assert n and len(b) == n
        done = a.undo()
        assert done is not None and "kept as they are now" in done.message
        assert len(a) == n
        b.refresh()
        assert len(b) == n
    finally:
        a.close()
        b.close()
