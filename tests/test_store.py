"""The store on disk: journal, compaction, backups, damage, locks, full and read-only disks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import snapshot_files, store_dir
from papershelf.core import store as store_mod
from papershelf.core.errors import StoreCorruptError, StoreLockedError, StoreVersionError, StoreWriteError
from papershelf.core.library import Library
from papershelf.core.paper import Status
from papershelf.core.store import JOURNAL, SNAPSHOT, Store
from papershelf.core.store import store as store_core


def compacted(library) -> None:
    """Fold the journal so the library file holds everything."""
    library.compact()


def test_edits_append_to_the_journal_not_the_snapshot(seeded, data_dir):
    compacted(seeded)
    snap = (store_dir(data_dir) / SNAPSHOT).read_bytes()
    seeded.set_status(seeded.ids()[:1], "read")
    assert (store_dir(data_dir) / SNAPSHOT).read_bytes() == snap
    assert (store_dir(data_dir) / JOURNAL).read_bytes().count(b"\n") == 1


def test_compaction_keeps_everything_and_makes_a_backup(seeded, data_dir):
    pid = seeded.ids()[0]
    seeded.add_tags([pid], ["x"])
    compacted(seeded)
    seeded.add_tags([pid], ["y"])
    compacted(seeded)
    assert (store_dir(data_dir) / JOURNAL).stat().st_size == 0
    assert len(seeded.backups()) >= 1
    seeded.close()
    with Library.open(data_dir) as again:
        assert again.get(pid).tags == ["x", "y"] and len(again) == 372


def test_journal_grows_into_a_compaction(seeded, data_dir, monkeypatch):
    monkeypatch.setattr(store_core, "JOURNAL_COMPACT_BYTES", 2000)
    compacted(seeded)
    gen = seeded.generation[0]
    snapshot_size = (store_dir(data_dir) / SNAPSHOT).stat().st_size
    for i, pid in enumerate(seeded.ids()[:60]):
        seeded.add_tags([pid], [f"t{i}"])
        seeded.set_notes(pid, f"note {i} " * (snapshot_size // 5 // 60 // 6))
    # the journal passed a fifth of the library file's size: folded in
    assert seeded.generation[0] > gen
    assert (store_dir(data_dir) / JOURNAL).stat().st_size < snapshot_size // 5
    seeded.close()
    with Library.open(data_dir) as again:
        assert again.tag_counts()["t59"] == 1 and len(again.tag_counts()) == 60


def test_torn_last_journal_line_is_dropped_and_the_rest_kept(seeded, data_dir):
    a, b = seeded.ids()[:2]
    seeded.set_status([a], "read")
    seeded.set_status([b], "read")
    seeded.close()
    journal = store_dir(data_dir) / JOURNAL
    data = journal.read_bytes()
    last = data[:-1].rsplit(b"\n", 1)[1] + b"\n"
    with open(journal, "ab") as f:  # the process died in the middle of its next write
        f.write(last.replace(b"read", b"skipped")[:-7])
    with Library.open(data_dir) as again:
        assert again.get(a).status is Status.READ
        assert again.get(b).status is Status.READ
        assert "was cut short" in again._store.notices[0]
        again.set_status([b], "skipped")  # the next line starts clean
    with Library.open(data_dir) as third:
        assert third.get(b).status is Status.SKIPPED


def test_damaged_journal_line_in_the_middle_stops_the_load(seeded, data_dir):
    ids = seeded.ids()[:3]
    for pid in ids:
        seeded.set_status([pid], "read")
    seeded.close()
    journal = store_dir(data_dir) / JOURNAL
    lines = journal.read_bytes().split(b"\n")
    lines[-3] = lines[-3].replace(b"read", b"REAd", 1)  # bit rot in the second-last edit
    journal.write_bytes(b"\n".join(lines))
    before = snapshot_files(data_dir)
    with pytest.raises(StoreCorruptError) as err:
        Library.open(data_dir)
    assert str(journal) in str(err.value) and "papershelf recover" in str(err.value)
    assert snapshot_files(data_dir) == before  # nothing was written
    message = Library.recover(data_dir)
    # the damaged edit is named; the good edit after it is kept
    assert "Lost 1 edit(s)" in message and f"set status, read_at of paper {ids[1]}" in message
    with Library.open(data_dir) as again:
        assert [again.get(i).status for i in ids] == [Status.READ, Status.UNREAD, Status.READ]
    assert any(p.name.startswith("journal.jsonl.damaged-") for p in store_dir(data_dir).iterdir())


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "bad line"])
def test_damaged_library_file_is_never_overwritten(seeded, data_dir, damage):
    pid = seeded.ids()[0]
    seeded.add_tags([pid], ["precious"])
    compacted(seeded)  # backup of the first snapshot
    seeded.add_tags([pid], ["more"])
    compacted(seeded)  # backup with "precious"
    seeded.close()
    snap = store_dir(data_dir) / SNAPSHOT
    data = snap.read_bytes()
    snap.write_bytes(
        {
            "truncate": data[: len(data) // 2],
            "garbage": os.urandom(5000),
            "empty": b"",
            "bad line": data.replace(b'"title_derived":true', b'"title_derived":tru', 1),
        }[damage]
    )
    before = snapshot_files(data_dir)
    with pytest.raises(StoreCorruptError) as err:
        Library.open(data_dir)
    message = str(err.value)
    assert str(snap) in message and "has not changed it" in message
    assert err.value.backup is not None and str(err.value.backup) in message
    assert snapshot_files(data_dir) == before
    # the read-only path says the same and writes nothing either
    with pytest.raises(StoreCorruptError):
        Library.open(data_dir, readonly=True)
    assert snapshot_files(data_dir) == before
    # recover: the damaged file is kept aside; what it lost comes from the latest good backup
    message = Library.recover(data_dir)
    assert "from the backup" in message
    with Library.open(data_dir) as again:
        assert len(again) == 372 and "precious" in again.get(pid).tags
        if damage == "truncate":  # its line is intact: the newest state is kept
            assert "more" in again.get(pid).tags
        if damage == "bad line":  # its line is the damaged one: the backup's copy, and said so
            assert f"lost: paper {pid} (" in message
    assert any(p.name.startswith("library.jsonl.damaged-") for p in store_dir(data_dir).iterdir())


def test_library_from_a_newer_version_is_refused(seeded, data_dir):
    compacted(seeded)
    seeded.close()
    snap = store_dir(data_dir) / SNAPSHOT
    header, rest = snap.read_bytes().split(b"\n", 1)
    body = header.rpartition(b"\t")[0].replace(
        b'"schema_version":%d' % store_mod.SCHEMA_VERSION, b'"schema_version":99', 1
    )
    snap.write_bytes(store_mod.seal(body) + rest)  # a well-formed header from the future
    with pytest.raises(StoreVersionError, match="newer Papershelf"):
        Library.open(data_dir)


def test_second_writer_is_refused(seeded, data_dir):
    with pytest.raises(StoreLockedError, match="open in another Papershelf"):
        Library.open(data_dir)


def test_second_process_is_refused_while_the_first_holds_the_library(seeded, data_dir):
    code = textwrap.dedent(f"""
        import sys
        from papershelf.core.library import Library
        from papershelf.core.errors import StoreLockedError
        try:
            Library.open({str(data_dir)!r})
        except StoreLockedError as exc:
            print("LOCKED", exc)
            sys.exit(3)
        """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 3 and f"process {os.getpid()}" in res.stdout
    seeded.close()
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_lock_of_a_killed_process_is_released(data_dir):
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from papershelf.core.library import Library
            lib = Library.open({str(data_dir)!r})
            print("open", flush=True)
            time.sleep(60)
            """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout.readline().strip() == "open"
        with pytest.raises(StoreLockedError):
            Library.open(data_dir)
        child.kill()
        child.wait()
    with Library.open(data_dir) as lib:  # the OS dropped the dead process's lock
        assert len(lib) == 0


def _readonly_folder(tmpfs, data_dir):
    """A library folder on a truly read-only file system (root ignores chmod)."""
    if os.geteuid() != 0:
        data_dir.chmod(0o555)
        return None
    return tmpfs("8m")


def test_read_only_data_dir(seeds, tmpfs, tmp_path):
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        with Library.open(folder) as lib:
            lib.import_files(seeds[:1])
        folder.chmod(0o555)
        store_dir(folder).chmod(0o555)
        (store_dir(folder) / JOURNAL).chmod(0o444)
        check_readonly(folder, seeds)
        return
    with tmpfs("8m") as mount:
        folder = mount.path / "library"
        with Library.open(folder) as lib:
            lib.import_files(seeds[:1])
        mount.remount_readonly()
        check_readonly(folder, seeds)


def check_readonly(folder, seeds):
    before = snapshot_files(folder)
    with pytest.raises(StoreWriteError) as err:
        Library.open(folder)
    assert str(folder) in str(err.value)
    assert "read-only" in str(err.value) or "permission denied" in str(err.value)
    with Library.open(folder, readonly=True) as lib:  # reading still works
        assert len(lib) == 20
    assert snapshot_files(folder) == before


def test_full_disk_loses_nothing(seeds, tmpfs):
    with tmpfs("2m") as mount:
        folder = mount.path / "library"
        lib = Library.open(folder)
        lib.import_files(seeds[:2])
        pid = lib.ids()[0]
        lib.add_tags([pid], ["saved before the disk filled"])
        filler = mount.path / "filler"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"x" * 65536)
                    f.flush()
            except OSError:
                pass
        before = snapshot_files(folder)
        big = ["a fairly long tag to fill the journal line " + str(i) for i in range(2000)]
        with pytest.raises(StoreWriteError, match="disk is full"):
            lib.add_tags(lib.ids(), big)
        with pytest.raises(StoreWriteError):
            lib.compact()
        assert lib.get(pid).tags == ["saved before the disk filled"]  # memory not changed either
        assert snapshot_files(folder) == before
        filler.unlink()
        lib.add_tags([pid], ["after"])  # works again once there is room
        lib.close()
        with Library.open(folder) as again:
            assert again.get(pid).tags == ["after", "saved before the disk filled"]
            assert len(again) == 39


def test_readers_retry_when_a_compaction_races_them(seeded, data_dir):
    pid = seeded.ids()[0]
    seeded.set_status([pid], "reading")
    with Library.open(data_dir, readonly=True) as reader:
        assert reader.get(pid).status is Status.READING
    compacted(seeded)
    seeded.set_status([pid], "read")
    with Library.open(data_dir, readonly=True) as reader:
        assert reader.get(pid).status is Status.READ


def test_backups_rotate(seeded, data_dir):
    pid = seeded.ids()[0]
    for i in range(8):
        seeded.add_tags([pid], [f"round {i}"])
        seeded.compact()
    backups = seeded.backups()
    # the three newest compactions are kept (all made today, so no older days to keep)
    assert len(backups) == 3
    generations = [int(p.stem.rsplit("-g", 1)[1]) for p in backups]
    assert generations == sorted(generations, reverse=True)
    assert generations[0] == seeded.generation[0] - 1


def test_failed_automatic_compaction_keeps_the_saved_edit(seeds, tmpfs, monkeypatch):
    """The edit is durable in the journal before compaction runs: a compaction
    that fails (full disk) must not report the edit as lost."""
    with tmpfs("2m") as mount:
        folder = mount.path / "library"
        lib = Library.open(folder)
        lib.import_files(seeds[:2])
        lib.compact()
        pid = lib.ids()[0]
        filler = mount.path / "filler"
        with open(filler, "wb", buffering=0) as f:  # fill the disk...
            try:
                while True:
                    f.write(b"x" * 4096)
            except OSError:
                pass
        filler_size = filler.stat().st_size
        with open(filler, "r+b") as f:  # ...but leave room for journal lines, not a snapshot
            f.truncate(filler_size - 64 * 1024)
        monkeypatch.setattr(store_core, "JOURNAL_COMPACT_BYTES", 100)
        lib._store._snapshot_bytes = 0  # so the next edit asks for a compaction, which cannot fit
        generation = lib.generation[0]
        lib.add_tags([pid], ["kept"])  # returns normally: the journal line is saved
        assert lib.generation[0] == generation, "the compaction should have failed for want of room"
        assert lib.get(pid).tags == ["kept"]
        lib.close()
        with Library.open(folder) as again:
            assert again.get(pid).tags == ["kept"]


def test_missing_library_file_with_backups_is_not_a_new_library(seeded, data_dir):
    seeded.compact()
    seeded.compact()
    seeded.close()
    (store_dir(data_dir) / SNAPSHOT).unlink()
    with pytest.raises(StoreCorruptError, match="is missing, but"):
        Library.open(data_dir)
    assert "Restored 372 papers" in Library.recover(data_dir)
    with Library.open(data_dir) as again:
        assert len(again) == 372


def test_journal_of_another_library_file_is_recovered(seeded, data_dir):
    pid = seeded.ids()[0]
    seeded.compact()
    seeded.compact()  # backup of generation 1, current is 2
    seeded.add_tags([pid], ["after the backup"])
    seeded.close()
    [older, *_] = sorted(Store(store_dir(data_dir)).backups(), key=lambda p: p.name)
    (store_dir(data_dir) / SNAPSHOT).write_bytes(older.read_bytes())  # someone restored a backup by hand
    with pytest.raises(StoreCorruptError, match="does not belong"):
        Library.open(data_dir)
    message = Library.recover(data_dir)
    assert "written for a newer library file" in message and "Kept the damaged journal.jsonl" in message
    with Library.open(data_dir) as again:
        assert len(again) == 372


@pytest.mark.parametrize(
    "bad_record",
    [
        {"seq": 3, "gen": "x", "ops": []},
        {"seq": 3, "gen": 0, "ops": [["set", "someid", ["notes"]]]},
        {"seq": 3, "gen": 0, "ops": [["set", "someid", {"status": "bogus"}]]},
        {"seq": 3, "gen": 0, "ops": [["list", "L", "not a list"]]},
    ],
)
def test_well_checksummed_journal_line_of_the_wrong_shape(library, seeds, data_dir, bad_record):
    library.import_files(seeds[:1])
    pid = library.ids()[0]
    library.set_status([pid], "read")
    library.close()
    journal = store_dir(data_dir) / JOURNAL
    with open(journal, "ab") as f:
        f.write(store_mod.journal_line(bad_record))
        f.write(store_mod.journal_line({"seq": 4, "gen": 0, "ops": []}))
    with pytest.raises(StoreCorruptError, match="damaged at line 3, with 1 more after it: Papershelf cannot read"):
        Library.open(data_dir)
    # the import (edit 1) and the status (edit 2) are kept; edit 3 is named as lost
    assert "Lost 1 edit(s) that could not be read: edit 3" in Library.recover(data_dir)
    with Library.open(data_dir) as again:
        assert again.get(pid).status is Status.READ


def test_compaction_failing_after_the_rename_keeps_later_edits(seeded, data_dir, monkeypatch):
    """Fault injection: the directory fsync after the rename fails (EIO)."""
    pid = seeded.ids()[0]
    real = store_core.fsync_dir

    def failing(folder):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(store_core, "fsync_dir", failing)
    with pytest.raises(StoreWriteError):
        seeded.compact()
    monkeypatch.setattr(store_core, "fsync_dir", real)
    seeded.add_tags([pid], ["after the failed fsync"])
    seeded.close()
    with Library.open(data_dir) as again:
        assert again.get(pid).tags == ["after the failed fsync"]


def test_a_closed_library_is_freed(seeds, data_dir):
    import gc
    import weakref

    refs = []
    for _ in range(3):
        lib = Library.open(data_dir)
        lib.import_files(seeds[:1])
        lib.subscribe(lambda change, lib=lib: None)  # a view holding the library: a cycle
        refs.append(weakref.ref(lib._store))
        lib.close()
        del lib
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
