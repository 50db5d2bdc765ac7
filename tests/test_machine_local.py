"""Nothing machine-local in the library folder (issue 22, item 5): a sync tool copies that
folder to other machines, so the search index, the locks, the window's log and the
single-instance socket live in this machine's own folders, keyed by library and device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS, index_dir, local_dir, run_cli

# what a library folder may hold: the store's files (today's single-device layout and the
# shared one), saved searches and hand tags; nothing else
STORE_NAMES = {
    "library.jsonl",
    "journal.jsonl",
    "journal.last",
    "backups",
    "papershelf-library.json",
    "devices",
    "device.json",
    "saved-searches.json",
    "hand-tags.json",
}
MACHINE_LOCAL = ("index", "logs", ".lock", ".readlock", ".sock", "WRITELOCK")


def machine_local_files(folder: Path) -> list[str]:
    """Whatever in `folder` (at any depth) is not a store file: should be nothing."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        top = rel.parts[0]
        if top == "devices" and len(rel.parts) > 2:  # devices/<id>/<a store file or backups>
            top = rel.parts[2]
        if rel.parts[0] == "backups" or (len(rel.parts) > 3 and rel.parts[2] == "backups"):
            continue  # backups of the library file
        if top in STORE_NAMES or top.startswith("pre-sync-backup-") or (top == "devices" and len(rel.parts) <= 2):
            if not any(m in path.name for m in MACHINE_LOCAL):
                continue
        found.append(str(rel))
    return found


def test_the_library_folder_holds_only_store_files_after_import_search_and_tag(data_dir):
    """Import, search (which builds the index), tag, reindex and list, each through the installed
    command: the library folder holds no index, no lock, no log, no socket."""
    for args in (
        ("import", *map(str, SEEDS)),
        ("search", "--json", "diffusion"),
        ("tag", "--help"),
    ):
        res = run_cli(*args, data_dir=data_dir)
        assert res.returncode == 0, res.stderr
    paper = json.loads(run_cli("search", "--json", "diffusion", data_dir=data_dir).stdout)[0]["id"]
    for args in (("tag", paper, "--add", "synced"), ("search", "tag:synced"), ("reindex",), ("list",)):
        res = run_cli(*args, data_dir=data_dir)
        assert res.returncode == 0, res.stderr
    assert "synced" in run_cli("show", paper, data_dir=data_dir).stdout
    assert machine_local_files(data_dir) == []
    # they are on this machine instead
    assert (index_dir(data_dir) / "papershelf-index.json").is_file()
    assert (local_dir(data_dir) / "library.lock").is_file()


def test_what_an_earlier_version_kept_in_the_library_folder_goes_at_the_first_writable_open(data_dir, tmp_path):
    """An earlier Papershelf kept its index and locks in the library folder: the first writable
    open removes them (a cache, and locks nobody holds); a read-only one leaves them; a link
    named like them is never followed, nor a user's folder of other files removed."""
    res = run_cli("import", str(SEEDS[0]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    old_index = data_dir / "index"  # as an earlier version built it: an index of this library
    env = {"PAPERSHELF_STATE_DIR": str(tmp_path / "earlier")}  # stands in for the library folder
    assert run_cli("search", "learning", data_dir=data_dir, env=env).returncode == 0
    earlier = next((tmp_path / "earlier" / "libraries").iterdir())
    os.rename(earlier / "index", old_index)
    os.rename(earlier / "index.rebuild.lock", data_dir / "index.rebuild.lock")
    (data_dir / "library.lock").write_text("4242 on an-old-machine")
    (data_dir / "library.readlock").write_bytes(b"")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.toc").write_text("not the library's")
    (data_dir / "index.old").symlink_to(outside)  # a link out of the folder: never followed
    mine = data_dir / "index.new"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")

    # a read-only command changes nothing in the folder
    before = sorted(p.name for p in data_dir.iterdir())
    assert run_cli("list", data_dir=data_dir).returncode == 0
    assert sorted(p.name for p in data_dir.iterdir()) == before

    res = run_cli(
        "tag", json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"], "--add", "x", data_dir=data_dir
    )
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    left = sorted(p.name for p in data_dir.iterdir())
    assert "index" not in left and "library.lock" not in left and "library.readlock" not in left
    assert "index.rebuild.lock" not in left
    assert (data_dir / "index.old").is_symlink() and (outside / "keep.toc").read_text() == "not the library's"
    assert (mine / "notes.txt").read_text() == "my notes"
    res = run_cli("search", "--json", "learning", data_dir=data_dir)
    assert res.returncode == 0 and '"id"' in res.stdout, res.stderr


def test_a_library_an_earlier_version_still_has_open_is_refused_with_words(data_dir):
    """The earlier version's writer lock in the folder is held: the new one does not write
    beside it (two writers lose edits); it says so, and removes nothing."""
    from papershelf.core.fileio import try_lock, unlock

    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    fd = try_lock(data_dir / "library.lock")  # an earlier Papershelf, running
    assert fd is not None
    try:
        res = run_cli("tag", "--help", data_dir=data_dir)
        assert res.returncode == 0
        ids = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
        res = run_cli("tag", ids[0]["id"], "--add", "x", data_dir=data_dir)
        assert res.returncode != 0 and "Traceback" not in res.stderr
        assert f"The library in {data_dir} is open in an earlier version of Papershelf" in res.stderr
        assert "Close that one first" in res.stderr
        assert (data_dir / "library.lock").is_file()
    finally:
        unlock(fd)


def test_the_lock_message_names_the_library_folder(data_dir):
    """The writer lock is this machine's, but the message names the library, as before."""
    from papershelf.core.library import Library

    with Library.open(data_dir):
        res = run_cli("tag", "--help", data_dir=data_dir)
        res = run_cli("import", str(SEEDS[0]), data_dir=data_dir)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert f"The library in {data_dir} is open in another Papershelf" in res.stderr


# ---- the window: one instance per library and device --------------------------------

# starts the window as `papershelf` does; prints "own window" once it shows its own
# (and quits), so a start that hands over prints "already running" instead
WINDOW = r"""
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from papershelf.gui.app import main
from papershelf.gui.main_window import MainWindow

app = QApplication(sys.argv[:1])

def shown():
    if any(isinstance(w, MainWindow) and w.isVisible() for w in app.topLevelWidgets()):
        print("own window", flush=True)
        app.quit()

timer = QTimer()
timer.timeout.connect(shown)
timer.start(20)
sys.exit(main(sys.argv[1], files=[]))
"""


def start_window(qtbot, folder: Path, config: Path, state: Path) -> tuple[int, str, str]:
    """A start of the window in its own process, as a device with these folders; the running
    window's event loop keeps going meanwhile (it answers a hand-over). Exit status, out, err."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PAPERSHELF_CONFIG_DIR": str(config),
        "PAPERSHELF_STATE_DIR": str(state),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", WINDOW, str(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=90_000)
    finally:
        if proc.poll() is None:
            proc.kill()
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


@pytest.mark.gui
def test_two_devices_on_one_library_are_two_windows_one_device_twice_hands_over(window, qtbot, tmp_path):
    """Two configuration folders (two devices) on one shared library folder: the second opens
    a window of its own. The first device starting again hands over to its running window."""
    from papershelf.gui.instance import InstanceServer

    folder = window.library.folder
    server = InstanceServer(folder, window)
    try:
        here = Path(os.environ["PAPERSHELF_CONFIG_DIR"]), Path(os.environ["PAPERSHELF_STATE_DIR"])
        code, out, err = start_window(qtbot, folder, *here)
        assert code == 0 and "already running" in out and "own window" not in out, err

        code, out, err = start_window(qtbot, folder, tmp_path / "other-config", tmp_path / "other-state")
        assert code == 0 and "own window" in out and "already running" not in out, err
        assert json.loads((tmp_path / "other-config" / "device.json").read_text())["id"] != window.library.device
    finally:
        server.close()
    # the other device's log is in its state folder; the library folder holds neither log nor socket
    assert list((tmp_path / "other-state" / "logs").glob("papershelf-*.log"))
    assert machine_local_files(folder) == []
