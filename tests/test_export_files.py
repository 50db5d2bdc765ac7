"""What `papershelf export -o FILE` does to the file system: mode, owner,
symlinks, pipes, temporary files, a full disk, a killed export."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import select
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.importers.base import Candidate, ParsedFile
from papershelf.core.library import Library

OLD = "% the user's old bibliography\n"
OUR_TEMP = re.compile(r"\.refs\.bib\.papershelf-[a-z0-9_]{8}\.tmp")  # what DESIGN.md promises


def is_temp_name(name: str) -> bool:
    return bool(OUR_TEMP.fullmatch(name))


@pytest.fixture
def small_library(data_dir, seeds) -> Path:
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
    return data_dir


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)  # the exporting subprocess inherits it
    try:
        yield
    finally:
        os.umask(old)


def export(data_dir: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    # --force: these tests replace the user's own file on purpose (test_export_safety: without it)
    res = run_cli("export", *args, "--force", "-o", str(out), data_dir=data_dir)
    return res


def temp_files(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


@pytest.mark.parametrize(
    "mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)], ids=["umask022", "umask077", "umask002"]
)
def test_a_new_file_gets_the_mode_the_umask_gives(small_library, tmp_path, mask, mode):
    out = tmp_path / "refs.bib"
    with umask(mask):
        res = export(small_library, out)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.read_text(encoding="utf-8").startswith("% Exported by Papershelf")
    assert temp_files(tmp_path) == []


def test_a_replaced_file_keeps_its_mode_and_owner(small_library, tmp_path):
    out = tmp_path / "refs.bib"
    out.write_text(OLD, encoding="utf-8")
    out.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(out, 1234, 4321)  # someone else's file, shared with us (root may do this)
    before = out.stat()
    with umask(0o077):  # the old file's mode wins over the umask
        res = export(small_library, out)
    assert res.returncode == 0, res.stderr
    after = out.stat()
    assert after.st_ino != before.st_ino  # replaced, not rewritten in place
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert "@" in out.read_text(encoding="utf-8")


def test_a_symlink_stays_a_link_and_its_target_gets_the_text(small_library, tmp_path):
    real_dir = tmp_path / "thesis"
    real_dir.mkdir()
    real = real_dir / "references.bib"
    real.write_text(OLD, encoding="utf-8")
    real.chmod(0o664)
    link = tmp_path / "refs.bib"
    link.symlink_to(Path("thesis") / "references.bib")
    res = export(small_library, link)
    assert res.returncode == 0, res.stderr
    assert link.is_symlink() and os.readlink(link) == str(Path("thesis") / "references.bib")
    text = real.read_text(encoding="utf-8")
    assert text.startswith("% Exported by Papershelf") and text.count("\n@") > 10
    assert stat.S_IMODE(real.stat().st_mode) == 0o664
    assert temp_files(tmp_path) == [] and temp_files(real_dir) == []


def test_a_pipe_is_written_to_not_replaced(small_library, tmp_path):
    with Library.open(small_library, readonly=True) as lib:
        pid = lib.ids()[0]
    fifo = tmp_path / "refs.bib"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # one entry fits the pipe's buffer
    try:
        res = export(small_library, fifo, "--ids", pid)
        assert res.returncode == 0, res.stderr
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        assert os.read(reader, 1 << 16).decode("utf-8").count("\n@") == 1
    finally:
        os.close(reader)


def test_stale_temporary_files_of_ours_are_removed_and_nothing_else(small_library, tmp_path):
    out = tmp_path / "refs.bib"
    out.write_text(OLD, encoding="utf-8")
    hour_ago = time.time() - 3600
    names = {
        "stale": ".refs.bib.papershelf-k3x_9q0a.tmp",  # a killed export's
        "stale-other": ".old.bib.papershelf-00000000.tmp",  # another file's, same folder
        "fresh": ".refs.bib.papershelf-zz12ab34.tmp",  # another process may be writing it
        "foreign": ".refs.bib.foo.tmp",  # not ours
        "no-dot": "refs.bib.papershelf-k3x_9q0a.tmp",  # not ours either
    }
    for key, name in names.items():
        (tmp_path / name).write_text("partial", encoding="utf-8")
        if key != "fresh":
            os.utime(tmp_path / name, (hour_ago, hour_ago))
    res = export(small_library, out)
    assert res.returncode == 0, res.stderr
    assert temp_files(tmp_path) == sorted(names[k] for k in ("fresh", "foreign", "no-dot"))
    assert out.read_text(encoding="utf-8") != OLD


def test_a_full_disk_leaves_the_old_file_and_says_so(small_library, tmpfs):
    with tmpfs("256k") as mount:
        out = mount.path / "refs.bib"
        out.write_text(OLD, encoding="utf-8")
        mount.fill()
        res = export(small_library, out)
        assert res.returncode == 1
        assert "the disk is full" in res.stderr and str(out) in res.stderr and "Traceback" not in res.stderr
        assert out.read_text(encoding="utf-8") == OLD
        assert temp_files(mount.path) == []


# ---- a killed export -------------------------------------------------------

IN_MODIFY = 0x002


def _inotify(folder: Path) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "inotify_init1") or not hasattr(os, "pidfd_open"):
        pytest.skip("needs Linux inotify and pidfd")
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(folder), IN_MODIFY) < 0:
        pytest.skip(f"inotify unavailable: {os.strerror(ctypes.get_errno())}")
    return fd


def _modified_names(fd: int) -> list[str]:
    buf = os.read(fd, 1 << 16)
    names, off = [], 0
    while off < len(buf):
        _wd, _mask, _cookie, length = struct.unpack_from("iIII", buf, off)
        names.append(buf[off + 16 : off + 16 + length].rstrip(b"\0").decode())
        off += 16 + length
    return names


@pytest.fixture
def big_library(data_dir) -> Path:
    # enough papers that writing them takes far longer than the kill needs to arrive
    papers = [
        Candidate(
            abstract=f"Paper {i} studies how a long enough abstract about topic {i}, with several "
            f"more words in it, is written to a BibTeX file by an export.",
            line=i + 1,
            title=f"Study number {i}",
            authors=[f"Ann Writer{i}"],
            year=2020,
        )
        for i in range(40_000)
    ]
    with Library.open(data_dir) as lib:
        lib.import_parsed(ParsedFile("generated.txt", "paper-search", papers, []))
    return data_dir


def test_a_killed_export_leaves_the_old_file_and_its_temp_file_is_cleaned_later(big_library, tmp_path):
    out = tmp_path / "refs.bib"
    out.write_text(OLD, encoding="utf-8")
    watch = _inotify(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "papershelf", "--data-dir", str(big_library), "export", "--force", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    exited = os.pidfd_open(proc.pid)
    try:
        # wait for the first write into a temporary file of ours, then kill at once
        killed = False
        while not killed:
            ready, _, _ = select.select([watch, exited], [], [], 120)
            if exited in ready or not ready:
                break
            if any(is_temp_name(n) for n in _modified_names(watch)):
                proc.send_signal(signal.SIGKILL)
                killed = True
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(watch)
        os.close(exited)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"the export was not killed mid-write: {err.decode()}"
    assert out.read_text(encoding="utf-8") == OLD
    [left] = temp_files(tmp_path)
    assert is_temp_name(left)

    # the next export leaves a fresh one alone (it may be another export's)...
    with Library.open(big_library) as lib:
        some = lib.ids()[:3]
    res = export(big_library, out, "--ids", *some)
    assert res.returncode == 0, res.stderr
    assert temp_files(tmp_path) == [left]
    # ...and removes it once it is old enough to be abandoned
    hour_ago = time.time() - 3600
    os.utime(tmp_path / left, (hour_ago, hour_ago))
    res = export(big_library, out, "--ids", *some)
    assert res.returncode == 0, res.stderr
    assert temp_files(tmp_path) == []
    assert out.read_text(encoding="utf-8").count("\n@") == 3


def test_an_export_to_a_pipe_nobody_reads_says_so_instead_of_hanging(small_library, tmp_path):
    fifo = tmp_path / "refs.bib"
    os.mkfifo(fifo)
    res = subprocess.run(
        [sys.executable, "-m", "papershelf", "--data-dir", str(small_library), "export", "-o", str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1 and "no program is reading" in res.stderr and "Traceback" not in res.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
