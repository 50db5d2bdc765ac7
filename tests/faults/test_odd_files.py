"""The fault campaign's odd files (issue 21): every store file replaced in turn by
a named pipe, a link to /dev/zero or /dev/urandom, a folder, a 3 GB sparse file
or an empty file, and every single-bit flip of journal.last.

Every run of the real CLI ends in words (exit 0 or 1, never a traceback) within
a subprocess timeout and under `prlimit --as`; a refusal names the file and
changes nothing; once the file is put back, the library is exactly as saved.
Counts are printed at the end of each test.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import SEEDS, local_dir, same_device, snapshot_files, store_dir
from papershelf.core.library import Library
from papershelf.core.store import JOURNAL, MARK, SNAPSHOT
from test_store_odd_files import TIMEOUT, run  # the CLI under a timeout and a memory cap

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")]

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))
KINDS = ("fifo", "zero", "urandom", "folder", "sparse", "empty")
BACKUP = "backups/library-20261201-000000-g1.jsonl"
FILES = (SNAPSHOT, JOURNAL, MARK, "library.lock", "library.readlock", "backups", BACKUP)
LOCKS = ("library.lock", "library.readlock")  # this machine's, in local_dir(folder), not in the library


def report(capsys, title: str, counts: dict) -> None:
    with capsys.disabled():
        print(f"\n[faults] {title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def state(folder: Path) -> tuple[dict, dict, tuple[int, int]]:
    with Library.open(folder, readonly=True) as lib:
        return {p.id: p.raw() for p in lib.papers()}, lib.lists(), lib.generation


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """The samples as a library file of generation 2, a backup of generation 1, two journal edits."""
    folder = tmp_path_factory.mktemp("oddfaults") / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
        lib.compact()
        lib.set_rating(lib.ids()[:1], 5)
        lib.compact()
        lib.set_notes(lib.ids()[0], "a saved note")
        lib.add_to_list("kept", lib.ids()[:3])
    mine = store_dir(folder)  # this device's files, which the campaign replaces
    backups = sorted((mine / "backups").iterdir())
    assert backups
    backups[0].rename(mine / BACKUP)
    for extra in backups[1:]:
        extra.unlink()
    return folder


def put(path: Path, kind: str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind in ("zero", "urandom"):
        path.symlink_to(f"/dev/{kind}")
    elif kind == "folder":
        path.mkdir()
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(3 * 2**30)
    else:
        path.write_bytes(b"")


def test_every_store_file_replaced_by_an_odd_one_ends_in_words(saved, tmp_path, capsys):
    expected = state(saved)
    counts: Counter[str] = Counter()
    commands = (["list"], ["tag", next(iter(expected[0])), "--add", "odd"], ["recover"])
    for i, name in enumerate(FILES):
        for j, kind in enumerate(KINDS):
            # at the default size each odd file meets one command, in turn, so that every
            # command meets every kind and every file; PAPERSHELF_FAULTS=3 runs all three each time
            for command in commands if SCALE >= 3 else [commands[(i + j) % 3]]:
                folder = tmp_path / "lib"
                if folder.exists():
                    shutil.rmtree(folder)
                shutil.copytree(saved, folder, symlinks=True)
                same_device(folder)  # this test's configuration is the device that wrote it
                if name in LOCKS:
                    shutil.rmtree(local_dir(folder), ignore_errors=True)
                    local_dir(folder).mkdir(parents=True)
                odd = (local_dir(folder) if name in LOCKS else store_dir(folder)) / name
                put(odd, kind)
                before = {k: v for k, v in snapshot_files(folder).items() if not k.endswith("lock")}
                try:
                    res = run(*command, data_dir=folder)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"{command[0]} with {name} as {kind}: no answer in {TIMEOUT} s")
                where = f"{command[0]} with {name} as {kind}"
                assert res.returncode in (0, 1), (where, res.stderr[-2000:])
                assert "Traceback" not in res.stderr and "MemoryError" not in res.stderr, (where, res.stderr[-2000:])
                if res.returncode == 1:
                    assert res.stderr.strip(), where
                    after = {k: v for k, v in snapshot_files(folder).items() if not k.endswith("lock")}
                    assert after == before, (where, "a refusal changed files")
                    counts[f"{command[0]} refused"] += 1
                else:
                    counts[f"{command[0]} done"] += 1
                # put the real file back: exactly what was saved (plus the tag, if it was made)
                if odd.is_dir() and not odd.is_symlink():
                    shutil.rmtree(odd)
                elif odd.exists() or odd.is_symlink():
                    odd.unlink()
                if name in LOCKS:
                    odd.touch()
                elif (store_dir(saved) / name).is_dir():
                    shutil.copytree(store_dir(saved) / name, odd)
                else:
                    shutil.copy2(store_dir(saved) / name, odd)
                if res.returncode == 1 or command[0] == "list":
                    assert state(folder)[:2] == expected[:2], where
    report(capsys, "odd store files", {**counts, "runs": sum(counts.values())})


def test_every_bit_flip_of_journal_last_is_harmless(saved, tmp_path, capsys):
    folder = tmp_path / "lib"
    shutil.copytree(saved, folder, symlinks=True)
    same_device(folder)
    expected = state(folder)
    mark = store_dir(folder) / MARK
    good = mark.read_bytes()
    counts: Counter[str] = Counter()
    for offset in range(len(good)):
        for bit in range(8):
            flipped = bytearray(good)
            flipped[offset] ^= 1 << bit
            mark.write_bytes(bytes(flipped))
            assert state(folder) == expected, (offset, bit)
            said = Library.recover(folder)
            assert said.startswith("Nothing needed recovering"), (offset, bit, said)
            counts["flips"] += 1
    # and a writable open seals it again
    mark.write_bytes(b"\xff" * len(good))
    with Library.open(folder):
        pass
    assert mark.read_bytes() == good
    report(capsys, "journal.last bit flips", {**counts, "refused": 0, "losses reported": 0})
