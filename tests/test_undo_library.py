"""The library's own undo and redo (issue 22, item 3), through the installed command line:
`papershelf undo`, `redo` and `undo --list`, across processes, with another device's edits kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS, listed_papers, run_cli


def ok(*args: str, data_dir: Path, env: dict | None = None) -> str:
    res = run_cli(*args, data_dir=data_dir, env=env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


def paper(data_dir: Path, pid: str) -> dict:
    return next(p for p in listed_papers(data_dir) if p["id"] == pid)


def history_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "state").glob("libraries/*/history.jsonl*"))


@pytest.fixture
def imported(data_dir):
    ok("import", str(SEEDS[0]), data_dir=data_dir)
    return data_dir


# another device: its own configuration (so its own device id) and its own state folder
OTHER = {"PAPERSHELF_CONFIG_DIR": "{tmp}/config-b", "PAPERSHELF_STATE_DIR": "{tmp}/state-b"}


def other_device(tmp_path: Path) -> dict:
    return {k: v.format(tmp=tmp_path) for k, v in OTHER.items()}


def test_tag_then_undo_then_redo(imported):
    a, b = [p["id"] for p in listed_papers(imported)][:2]
    ok("tag", a, b, "--add", "ml", data_dir=imported)
    said = ok("undo", data_dir=imported)
    assert said.strip() == "Undone: Tag 2 papers 'ml'."
    assert paper(imported, a)["tags"] == [] and paper(imported, b)["tags"] == []
    said = ok("redo", data_dir=imported)
    assert said.strip() == "Redone: Tag 2 papers 'ml'."
    assert paper(imported, a)["tags"] == ["ml"] and paper(imported, b)["tags"] == ["ml"]


def test_import_then_undo_removes_its_papers_and_nothing_else(imported, data_dir):
    before = listed_papers(data_dir)
    first = before[0]["id"]
    ok("tag", first, "--add", "kept", data_dir=data_dir)
    ok("import", str(SEEDS[1]), data_dir=data_dir)
    assert len(listed_papers(data_dir)) > len(before)
    said = ok("undo", data_dir=data_dir)
    assert said.startswith("Undone: Import ")
    after = listed_papers(data_dir)
    assert [p["id"] for p in after] == [p["id"] for p in before]
    assert paper(data_dir, first)["tags"] == ["kept"]  # the earlier edit stays
    ok("redo", data_dir=data_dir)
    assert len(listed_papers(data_dir)) > len(before)


def test_delete_then_undo_brings_the_paper_back_with_its_list_places(imported):
    ids = [p["id"] for p in listed_papers(imported)]
    ok("list-add", "thesis", ids[2], ids[0], ids[1], data_dir=imported)
    ok("tag", ids[0], "--add", "core", data_dir=imported)
    before = paper(imported, ids[0])
    ok("delete", ids[0], "--yes", data_dir=imported)
    said = ok("undo", data_dir=imported)
    assert said.startswith("Undone: Delete '")
    assert paper(imported, ids[0]) == before
    assert ok("lists", data_dir=imported).strip() == "thesis  (3 papers)"
    shown = ok("list", "--list", "thesis", "--json", data_dir=imported)
    assert [p["id"] for p in json.loads(shown)] == [ids[2], ids[0], ids[1]]


def test_note_then_undo(imported):
    pid = listed_papers(imported)[0]["id"]
    ok("note", pid, "first thoughts", data_dir=imported)
    ok("note", pid, "second thoughts", data_dir=imported)
    assert ok("undo", data_dir=imported).startswith("Undone: Edit the notes of ")
    assert paper(imported, pid)["notes"] == "first thoughts"
    ok("undo", data_dir=imported)
    assert paper(imported, pid)["notes"] == ""


def test_undo_keeps_what_another_device_changed_since(imported, tmp_path):
    pid, other = [p["id"] for p in listed_papers(imported)][:2]
    ok("note", pid, "mine", data_dir=imported)
    ok("tag", other, "--add", "ml", data_dir=imported)
    b = other_device(tmp_path)
    ok("note", pid, "theirs", data_dir=imported, env=b)
    ok("tag", other, "--add", "theirs", data_dir=imported, env=b)
    # the tag: only the action's own tag goes; the other device's stays
    assert ok("undo", data_dir=imported).strip() == f"Undone: Tag '{paper(imported, other)['title'][:39]}…' with 'ml'."
    assert paper(imported, other)["tags"] == ["theirs"]
    # the notes: changed since by the other device, so kept, and the undo says so
    said = ok("undo", data_dir=imported)
    assert "(1 part was changed since, here or on another device, and kept as it is now)." in said
    assert paper(imported, pid)["notes"] == "theirs"
    # the other device's own history is its own: nothing of this device's to undo there
    assert ok("undo", "--list", data_dir=imported, env=b).splitlines()[1].strip().startswith("1. Tag ")


def test_undo_list_shows_newest_first_and_nothing_to_undo_exits_1(data_dir, tmp_path):
    res = run_cli("undo", data_dir=data_dir)
    assert res.returncode == 1 and res.stderr.strip() == "papershelf: nothing to undo."
    assert ok("undo", "--list", data_dir=data_dir).strip() == "Nothing to undo."
    assert history_files(tmp_path) == []  # reading it wrote nothing
    ok("import", str(SEEDS[0]), data_dir=data_dir)
    pid = listed_papers(data_dir)[0]["id"]
    ok("rate", pid, "4", data_dir=data_dir)
    ok("list", data_dir=data_dir)  # a read-only command records nothing
    lines = ok("undo", "--list", data_dir=data_dir).splitlines()
    assert lines[0] == "Can be undone, newest first:"
    assert lines[1].strip().startswith("1. Rate '") and lines[1].endswith("4 stars")
    assert lines[2].strip() == "2. Import 20 papers"
    ok("undo", data_dir=data_dir)
    lines = ok("undo", "--list", data_dir=data_dir).splitlines()
    assert lines[-2] == "Can be redone, newest first:" and lines[-1].strip().startswith("1. Rate '")
    ok("note", pid, "new", data_dir=data_dir)  # a new action ends what can be redone
    assert "redone" not in ok("undo", "--list", data_dir=data_dir)
    res = run_cli("redo", data_dir=data_dir)
    assert res.returncode == 1 and res.stderr.strip() == "papershelf: nothing to redo."


KILLED_AFTER_TAG = """
import os, signal, sys
from papershelf.core.library import Library
lib = Library.open(sys.argv[1])
lib.add_tags([sys.argv[2]], ["killed"])
os.kill(os.getpid(), signal.SIGKILL)  # no close, nothing flushed on the way out
"""


def test_history_survives_a_kill_9_and_a_torn_last_line(imported, tmp_path):
    pid = listed_papers(imported)[0]["id"]
    proc = subprocess.run([sys.executable, "-c", KILLED_AFTER_TAG, str(imported), pid], env=os.environ, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    (history,) = history_files(tmp_path)
    with history.open("ab") as fh:
        fh.write(b'{"do": {"label": "half a li')  # a process killed while writing the next event
    said = ok("undo", data_dir=imported)
    assert said.strip() == "Undone: Tag '" + paper(imported, pid)["title"][:39] + "…' with 'killed'."
    assert paper(imported, pid)["tags"] == []
    assert ok("undo", data_dir=imported).strip() == "Undone: Import 20 papers."


def test_a_damaged_history_is_reported_and_set_aside(imported, tmp_path):
    pid = listed_papers(imported)[0]["id"]
    ok("tag", pid, "--add", "a", data_dir=imported)
    ok("tag", pid, "--add", "b", data_dir=imported)
    (history,) = history_files(tmp_path)
    lines = history.read_bytes().splitlines(keepends=True)
    history.write_bytes(lines[0] + lines[1].replace(b"Tag", b"Tog") + lines[2])  # its checksum fails
    res = run_cli("undo", data_dir=imported)
    assert res.returncode == 1, res.stdout
    assert "Traceback" not in res.stderr
    assert f"The undo history {history} is damaged (line 2); it was set aside as " in res.stderr
    assert "The library itself is not affected." in res.stderr
    assert res.stderr.strip().endswith("papershelf: nothing to undo.")
    assert [p.name.startswith("history.jsonl.damaged-") for p in history_files(tmp_path)] == [True]
    assert paper(imported, pid)["tags"] == ["a", "b"]  # the library is as it was
    ok("tag", pid, "--add", "c", data_dir=imported)  # and undo starts again from the next action
    assert ok("undo", data_dir=imported).strip().endswith("with 'c'.")


# ---- the window: Edit ▸ Undo and Redo are the library's --------------------------------------


def edit_action(win, name: str):
    from PySide6.QtGui import QAction

    edit_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Edit")
    return next(a for a in edit_menu.actions() if a.objectName() == name and isinstance(a, QAction))


@pytest.mark.gui
def test_the_windows_undo_and_redo_are_the_librarys(window, qtbot, monkeypatch, data_dir):
    from PySide6.QtWidgets import QMessageBox

    from test_paper_menu import select_rows

    win, lib = window, window.library
    select_rows(win, [0, 1])
    ids = win.selected_ids()
    win.tag_panel.addTagsRequested.emit(["ml"])
    assert lib.undo_label() == "Tag 2 papers 'ml'"
    undo, redo = edit_action(win, "undoAction"), edit_action(win, "redoAction")
    assert undo.text() == "&Undo Tag ml" and undo.isEnabled()
    assert lib.find(ids[0]).tags == ["ml"]
    undo.trigger()
    assert lib.find(ids[0]).tags == [] and lib.find(ids[1]).tags == []
    # the library took it back: it can redo it, and the window's undo recorded no new action
    assert lib.redo_label() == "Tag 2 papers 'ml'" and lib.undo_label() == "Import 20 papers"
    redo.trigger()
    assert lib.find(ids[0]).tags == ["ml"] and lib.undo_label() == "Tag 2 papers 'ml'"
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    lib.add_to_list("thesis", [ids[1], ids[0]])
    select_rows(win, [0])
    assert win.selected_ids() == ids[:1]
    win.edits.delete_selected()
    assert ids[0] not in lib and lib.undo_label().startswith("Delete '")
    undo.trigger()
    assert ids[0] in lib and lib.list_ids("thesis") == [ids[1], ids[0]]
    assert lib.redo_label().startswith("Delete '")
    win.close()
    lib.close()
    # the same history, from the command line after the window closed
    listed = ok("undo", "--list", data_dir=data_dir).splitlines()
    assert listed[1].strip() == "1. Add 2 papers to list 'thesis'"
    assert listed[-1].strip().startswith("1. Delete '")


def test_the_history_keeps_the_last_100_actions_and_stays_short_on_disk(library, tmp_path):
    from papershelf.core.library import Library

    library.import_files(SEEDS[:1])
    pid = library.ids()[0]
    for n in range(450):
        library.set_notes(pid, f"note {n}")
    undo, redo = library.undo_history()
    assert len(undo) == 100 and not redo
    (history,) = history_files(tmp_path)
    assert len(history.read_bytes().splitlines()) < 4 * 100 + 1  # rewritten to what is kept
    library.undo()
    folder = library.folder
    library.close()
    with Library.open(folder) as again:
        undo, redo = again.undo_history()
        assert len(undo) == 99 and len(redo) == 1
        again.undo()
        assert again.get(pid).notes == "note 447"


def without_updated(records: dict) -> dict:
    return {k: {f: v for f, v in r.items() if f != "updated"} for k, r in records.items()}


def test_a_merge_and_reading_list_edits_are_undone_by_the_library(seeded):
    lib = seeded
    a, b, c = lib.ids()[:3]
    lib.add_to_list("mine", [b, a])
    lib.set_notes(b, "read §2")
    before = lib.records([a, b])
    lib.duplicates.merge(a, b)
    assert lib.undo_label().startswith("Merge 2 papers into '")
    assert "Undone: Merge 2 papers" in lib.undo().message
    assert lib.list_ids("mine") == [b, a] and without_updated(lib.records([a, b])) == without_updated(before)
    lib.redo()
    assert b not in lib and lib.list_ids("mine") == [a]
    lib.undo()
    lib.rename_list("mine", "thesis")
    lib.reorder_list("thesis", [a, b])
    lib.add_to_list("thesis", [c])
    lib.delete_list("thesis")
    assert lib.undo_history()[0][:4] == [
        "Delete list 'thesis'",
        f"Add '{lib.get(c).title[:39]}…' to list 'thesis'",
        "Reorder list 'thesis'",
        "Rename list 'mine' to 'thesis'",
    ]
    lib.undo()
    assert lib.list_ids("thesis") == [a, b, c]
    lib.undo()
    lib.undo()
    assert lib.list_ids("thesis") == [b, a]
    lib.undo()
    assert list(lib.lists()) == ["mine"] and lib.list_ids("mine") == [b, a]
