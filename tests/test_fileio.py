"""fileio's durable files and locks, on real files: the one owner of atomic
writes and file locks for the store, the search index and exports."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from papershelf.core import fileio
from papershelf.core.fileio import (
    fsync_dir,
    is_temp_name,
    lock_shared_fd,
    rename_over,
    synced_file,
    try_lock,
    try_lock_fd,
    unlock,
    write_bytes_atomically,
)

APP = str(Path(__file__).resolve().parents[1] / "app")


def leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n not in keep)


# ---- write_bytes_atomically ------------------------------------------------


def test_write_bytes_atomically_creates_and_replaces(tmp_path):
    path = tmp_path / "state.json"
    write_bytes_atomically(path, b'{"a": 1}')
    assert path.read_bytes() == b'{"a": 1}'
    inode = path.stat().st_ino
    write_bytes_atomically(path, b'{"a": 2}')
    assert path.read_bytes() == b'{"a": 2}'
    assert path.stat().st_ino != inode, "a new file renamed over the old one, not the old one rewritten"
    write_bytes_atomically(path, b"")
    assert path.read_bytes() == b""
    assert leftovers(tmp_path, {"state.json"}) == []


def test_write_bytes_atomically_failing_before_the_rename_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    path.write_bytes(b"old")

    seen: list[str] = []

    def failing_fsync(fd):
        seen.extend(leftovers(tmp_path, {"state.json"}))
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fileio.os, "fsync", failing_fsync)
    with pytest.raises(OSError) as caught:
        write_bytes_atomically(path, b"new" * 1000)
    assert caught.value.errno == errno.EIO
    monkeypatch.undo()
    assert path.read_bytes() == b"old"
    assert leftovers(tmp_path, {"state.json"}) == [], "the temporary file is removed"
    # named as exports name theirs: one a killed process left is found by the same housekeeping
    assert len(seen) == 1 and is_temp_name(seen[0]) and seen[0].startswith(".state.json.")


def test_write_bytes_atomically_over_a_folder_fails_and_removes_its_temporary_file(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(OSError):
        write_bytes_atomically(tmp_path / "taken", b"data")
    assert (tmp_path / "taken").is_dir()
    assert leftovers(tmp_path, {"taken"}) == []


def test_write_bytes_atomically_into_a_missing_folder_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_bytes_atomically(tmp_path / "nowhere" / "state.json", b"data")


def test_write_bytes_atomically_on_a_full_disk_keeps_the_old_file(tmpfs):
    with tmpfs("256k") as mount:
        path = mount.path / "state.json"
        path.write_bytes(b"old state")
        mount.fill()
        with pytest.raises(OSError) as caught:
            write_bytes_atomically(path, b"x" * 64 * 1024)
        assert caught.value.errno == errno.ENOSPC
        assert path.read_bytes() == b"old state"
        assert leftovers(mount.path, {"state.json", "filler"}) == []
        # room again: the next write goes through
        os.unlink(mount.path / "filler")
        write_bytes_atomically(path, b"x" * 64 * 1024)
        assert path.read_bytes() == b"x" * 64 * 1024


def test_write_bytes_atomically_from_many_threads_leaves_one_whole_file(tmp_path):
    path = tmp_path / "state.json"
    payloads = [bytes([65 + i]) * (10_000 + i) for i in range(8)]
    errors: list[BaseException] = []

    def write(data: bytes) -> None:
        try:
            for _ in range(20):
                write_bytes_atomically(path, data)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert path.read_bytes() in payloads
    assert leftovers(tmp_path, {"state.json"}) == []


# ---- the pieces the store uses ---------------------------------------------


def test_synced_file_rename_over_and_fsync_dir(tmp_path):
    tmp, target = tmp_path / "library.jsonl.tmp", tmp_path / "library.jsonl"
    target.write_bytes(b"old")
    with synced_file(tmp, buffering=1 << 20) as f:
        f.write(b"new")
    rename_over(tmp, target)
    fsync_dir(tmp_path)
    assert target.read_bytes() == b"new" and not tmp.exists()


def test_rename_over_a_failure_removes_the_temporary_file(tmp_path):
    tmp = tmp_path / "x.tmp"
    tmp.write_bytes(b"new")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inside").write_bytes(b"")
    with pytest.raises(OSError):
        rename_over(tmp, tmp_path / "folder")  # a non-empty folder cannot be replaced by a file
    assert not tmp.exists()
    assert (tmp_path / "folder" / "inside").exists()


def test_fsync_dir_of_a_missing_folder_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        fsync_dir(tmp_path / "nowhere")


# ---- locks, against a real second process ----------------------------------

HOLDER = textwrap.dedent("""
    import sys, time
    from papershelf.core.fileio import try_lock, try_lock_fd, lock_shared_fd
    import os
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "try":
        fd = try_lock(path)
        print("got" if fd is not None else "held", flush=True)
        sys.exit(0)
    if mode == "hold":
        fd = try_lock(path)
        print("got" if fd is not None else "held", flush=True)
    else:   # hold a shared lock
        fd = os.open(path, os.O_RDONLY)
        lock_shared_fd(fd)
        print("got", flush=True)
    sys.stdin.readline()         # hold it until told (or killed)
""")


def _child(mode: str, path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [APP, os.environ.get("PYTHONPATH")])))
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, mode, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _try_in_child(path: Path) -> str:
    child = _child("try", path)
    out, _ = child.communicate(timeout=60)
    return out.strip()


def test_try_lock_excludes_another_process_until_unlocked(tmp_path):
    path = tmp_path / "rebuild.lock"
    fd = try_lock(path)
    assert fd is not None and path.exists()
    try:
        assert _try_in_child(path) == "held"
    finally:
        unlock(fd)
    assert _try_in_child(path) == "got"


@pytest.mark.parametrize("ending", ["lets go", "is killed"])
def test_a_lock_another_process_holds_is_refused_until_it_lets_go_or_dies(tmp_path, ending):
    path = tmp_path / "rebuild.lock"
    child = _child("hold", path)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "got"
        assert try_lock(path) is None
    finally:
        if ending == "lets go":
            child.communicate("\n", timeout=60)
        else:
            child.kill()
            child.communicate(timeout=60)
    fd = try_lock(path)
    assert fd is not None, f"the lock is free once its holder {ending}"
    unlock(fd)


@pytest.mark.skipif(os.name == "nt", reason="no flock on Windows")
def test_a_shared_lock_in_another_process_keeps_an_exclusive_one_out(tmp_path):
    path = tmp_path / "library.readlock"
    path.write_bytes(b"")
    child = _child("shared", path)
    fd = os.open(path, os.O_RDWR)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "got"
        assert not try_lock_fd(fd)
        lock_shared_fd(fd)  # shared with shared: no wait
    finally:
        child.communicate("\n", timeout=60)
    assert try_lock_fd(fd), "the reader let go: the writer gets it"
    os.close(fd)


def test_try_lock_in_a_missing_folder_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        try_lock(tmp_path / "nowhere" / "x.lock")
