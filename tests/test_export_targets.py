"""Issue 21 defects 10 and 13: export only reads the library (one open elsewhere, one on a
read-only file system), and keeps what the user set up at the target (a read-only file, hard
links, /dev/stdout into a pipe, a symlinked library file at compaction). Through the installed
command in a subprocess."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import local_dir, run_cli, store_dir
from papershelf.core.library import Library


@pytest.fixture
def small_library(data_dir, seeds) -> Path:
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
    return data_dir


def citekeys(data_dir: Path) -> list[str]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return [p["citekey"] for p in json.loads(res.stdout)]


# ---- defect 10: a library that cannot be written ------------------------------------------


def test_export_from_a_library_open_in_another_papershelf(small_library, tmp_path):
    # the writer lock held by another process: as real for root as for anyone
    lock = local_dir(small_library) / "library.lock"  # this machine's, outside the library folder
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out = tmp_path / "refs.bib"
        res = run_cli("export", "-o", str(out), data_dir=small_library)
        assert res.returncode == 0, res.stderr
        assert out.read_text(encoding="utf-8").count("\n@") > 10
        assert "could not be kept for the next export (the library was open read-only)" in res.stdout
        # the tagged export works the same way
        tagged = run_cli("export", "--format", "ris", "-o", str(tmp_path / "refs.ris"), data_dir=small_library)
        assert tagged.returncode == 0, tagged.stderr
    finally:
        os.close(fd)
    assert not any(citekeys(small_library))  # nothing pinned: the library was only read
    # writable again: the export pins the keys it gives, the same ones
    again = run_cli("export", "--force", "-o", str(tmp_path / "again.bib"), data_dir=small_library)
    assert again.returncode == 0, again.stderr
    assert "could not be kept" not in again.stdout
    assert all(citekeys(small_library))
    assert (tmp_path / "again.bib").read_text() == (tmp_path / "refs.bib").read_text()


def _read_only_mount(folder: Path, *command: str) -> subprocess.CompletedProcess:
    """`command` run with `folder` bind-mounted read-only in a mount namespace of its own: a
    read-only file system, which root cannot write either (chmod -w stops only other users).
    Root needs no more; anyone else maps to root in a user namespace (unshare -r)."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return subprocess.run(
        [*unshare, "sh", "-c", script, "sh", str(folder), *command],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_export_from_a_library_on_a_read_only_file_system(small_library, tmp_path):
    assert shutil.which("unshare"), "util-linux's unshare is needed (.ci/run installs util-linux)"
    out = tmp_path / "refs.bib"
    cmd = (sys.executable, "-m", "papershelf", "--data-dir", str(small_library))
    probe = _read_only_mount(small_library, "touch", str(small_library / "probe"))
    assert probe.returncode != 0 and "Read-only file system" in probe.stderr, probe.stderr
    res = _read_only_mount(small_library, *cmd, "export", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert out.read_text(encoding="utf-8").count("\n@") > 10
    assert "could not be kept for the next export" in res.stdout


# ---- defect 13: the export's target -----------------------------------------------------


def test_a_read_only_file_is_kept_unless_forced(small_library, tmp_path):
    out = tmp_path / "refs.bib"
    assert run_cli("export", "-o", str(out), data_dir=small_library).returncode == 0
    out.chmod(0o444)  # Papershelf wrote it, but the user made it read-only since
    before = out.read_bytes()
    assert run_cli("tag", citekeys_ids(small_library)[0], "--add", "newtag", data_dir=small_library).returncode == 0
    res = run_cli("export", "-o", str(out), data_dir=small_library)
    assert res.returncode == 1
    assert "read-only (mode 0444" in res.stderr and "--force" in res.stderr and "Traceback" not in res.stderr
    assert out.read_bytes() == before
    forced = run_cli("export", "--force", "-o", str(out), data_dir=small_library)
    assert forced.returncode == 0, forced.stderr
    assert "newtag" in out.read_text() and stat.S_IMODE(out.stat().st_mode) == 0o444


def citekeys_ids(data_dir: Path) -> list[str]:
    res = run_cli("list", "--json", data_dir=data_dir)
    return [p["id"] for p in json.loads(res.stdout)]


def test_a_hard_linked_file_keeps_its_links(small_library, tmp_path):
    out = tmp_path / "refs.bib"
    assert run_cli("export", "-o", str(out), data_dir=small_library).returncode == 0
    other = tmp_path / "thesis-refs.bib"
    os.link(out, other)
    inode = out.stat().st_ino
    assert run_cli("tag", citekeys_ids(small_library)[0], "--add", "linkedtag", data_dir=small_library).returncode == 0
    res = run_cli("export", "-o", str(out), data_dir=small_library)
    assert res.returncode == 0, res.stderr
    assert out.stat().st_ino == inode and out.stat().st_nlink == 2
    assert "linkedtag" in other.read_text()
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []


@pytest.mark.parametrize("target", ["/dev/stdout", "-"])
def test_standard_output_into_a_pipe(small_library, target):
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(small_library), "export", "-o", target]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("% Exported by Papershelf") and res.stdout.count("\n@") > 10
    assert "Wrote" in res.stderr and "Wrote" not in res.stdout  # the report is not in the export


def test_a_symlinked_library_file_stays_a_link_through_compaction(small_library, tmp_path):
    # the library file kept in another folder (a synced one, say), linked from the library's
    with Library.open(small_library) as lib:
        lib.compact()  # a library file to link (a new library is all journal)
    elsewhere = tmp_path / "synced"
    elsewhere.mkdir()
    real = elsewhere / "library.jsonl"
    shutil.move(store_dir(small_library) / "library.jsonl", real)
    (store_dir(small_library) / "library.jsonl").symlink_to(real)
    ids = citekeys_ids(small_library)
    assert run_cli("tag", ids[0], "--add", "beforecompaction", data_dir=small_library).returncode == 0
    with Library.open(small_library) as lib:
        lib.compact()
    link = store_dir(small_library) / "library.jsonl"
    assert link.is_symlink() and link.resolve() == real
    assert [n for n in os.listdir(elsewhere) if n != "library.jsonl"] == []  # no temporary file left
    res = run_cli("list", "--tag", "beforecompaction", "--json", data_dir=small_library)
    assert res.returncode == 0, res.stderr
    assert [p["id"] for p in json.loads(res.stdout)] == [ids[0]]
    assert len(citekeys_ids(small_library)) == len(ids)


def test_a_hard_linked_file_on_a_full_disk_is_left_as_it_was(small_library, tmp_path):
    # The new text fits on the disk once (the temporary file) but not twice (copied in place):
    # the file the links share must stay whole, and the message must say what is true.
    assert shutil.which("unshare"), "util-linux's unshare is needed (.ci/run installs util-linux)"
    disk = tmp_path / "small-disk"
    disk.mkdir()
    size = len(run_cli("export", "-o", "-", data_dir=small_library).stdout.encode())
    kib = (size * 3 // 2) // 1024  # room for one copy and a half
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = (
        'mount -t tmpfs -o size="$2"k tmpfs "$1" && printf "old\\n" > "$1/refs.bib" && ln "$1/refs.bib" "$1/thesis.bib"'
        ' && shift 2 && "$@"; echo "rc=$?"; cat "$0"'
    )
    target = disk / "refs.bib"
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(small_library), "export", "--force", "-o", str(target)]
    res = subprocess.run(
        [*unshare, "sh", "-c", script, str(disk / "thesis.bib"), str(disk), str(kib), *cmd],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "rc=1" in res.stdout, res.stdout[-2000:] + res.stderr
    assert "the disk is full" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout.split("rc=1\n", 1)[1] == "old\n"  # the linked file whole, as the message says
    assert "is as it was" in res.stderr


# the disk full of data (the keys cannot be written to the journal), or of files (the writer's
# lock file, in this machine's state folder on the same disk, cannot be made: the library is
# opened read-only)
FILL_DATA = '{ dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; true; }'
FILL_FILES = '{ i=0; while touch "$1/f$i" 2>/dev/null; do i=$((i+1)); done; }'


@pytest.mark.parametrize("fill", [FILL_DATA, FILL_FILES], ids=["data", "files"])
def test_export_from_a_library_on_a_full_disk_writes_the_file_and_says_why_keys_are_not_kept(
    data_dir, seeds, tmp_path, fill
):
    # Export only reads: a library whose disk is full (the keys cannot be pinned) still exports,
    # and the report says why the keys were not kept, instead of "not saved" with the file written.
    # All the seeds: their keys are more than the slack in the journal's last page.
    with Library.open(data_dir) as lib:
        lib.import_files(seeds)
    assert shutil.which("unshare"), "util-linux's unshare is needed (.ci/run installs util-linux)"
    disk = tmp_path / "full-disk"
    disk.mkdir()
    out = tmp_path / "refs.bib"
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = (
        'mount -t tmpfs -o size=16m,nr_inodes=64 tmpfs "$1" && cp -r "$2" "$1/lib" && '
        + fill
        + ' && shift 2 && exec "$@"'
    )
    lib = disk / "lib"
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(lib), "export", "-o", str(out)]
    res = subprocess.run(
        [*unshare, "sh", "-c", script, "sh", str(disk), str(data_dir), *cmd],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PAPERSHELF_STATE_DIR": str(disk / "state")},
    )
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert out.read_text(encoding="utf-8").count("\n@") > 10
    said = res.stdout + res.stderr
    assert "could not be kept for the next export" in said and "the disk is full" in said


@pytest.mark.parametrize("target", ["/dev/stdout", "-"])
def test_standard_output_into_a_pipe_closed_early(data_dir, seeds, target):
    # `papershelf export -o /dev/stdout | head -1`: the reader stops early, as after `list | head`:
    # no error about "choose a folder", no traceback, the exit code of `list | head`
    with Library.open(data_dir) as lib:
        lib.import_files(seeds)  # more than a pipe holds (64 KiB): the write meets the closed end
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), "export", "-o", target]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"% Exported by Papershelf")
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Could not write" not in err
