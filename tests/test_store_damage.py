"""Damage a disk, a sync tool or a bad shutdown really causes: found, named,
refused, and undone by `papershelf recover` without losing what can be read.

Each test drives the installed CLI in a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

from conftest import run_cli, snapshot_files, store_dir
from papershelf.core import store as store_mod
from papershelf.core.library import Library
from papershelf.core.paper import Paper
from papershelf.core.store import JOURNAL, SNAPSHOT


@pytest.fixture
def imported(data_dir, seeds):
    res = run_cli("import", *map(str, seeds), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return data_dir


def first_id(folder) -> str:
    with Library.open(folder, readonly=True) as lib:
        return lib.ids()[0]


def notes_of(folder, pid) -> str:
    res = run_cli("show", "--json", pid, data_dir=folder)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout).get("notes", "")


def flip_bit(path, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_a_damaged_last_journal_line_is_refused_not_dropped(imported):
    """A complete, newline-ended line that fails its checksum is damage, not a torn write."""
    pid = first_id(imported)
    assert run_cli("note", pid, "first", data_dir=imported).returncode == 0
    assert run_cli("note", pid, "important", data_dir=imported).returncode == 0
    journal = store_dir(imported) / JOURNAL
    data = journal.read_bytes()
    flip_bit(journal, data.rindex(b"important"))  # inside the last line; its newline intact
    before = snapshot_files(imported)
    show = run_cli("show", pid, data_dir=imported)
    assert show.returncode == 1 and "first" not in show.stdout
    assert str(journal) in show.stderr and "its last line" in show.stderr
    assert "papershelf recover" in show.stderr and "Traceback" not in show.stderr
    rate = run_cli("rate", pid, "3", data_dir=imported)  # a write must not erase the damaged edit
    assert rate.returncode == 1 and "papershelf recover" in rate.stderr
    assert snapshot_files(imported) == before
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0
    assert "Lost 1 edit(s) that could not be read" in rec.stdout and f"set notes of paper {pid}" in rec.stdout
    kept = [p for p in store_dir(imported).iterdir() if p.name.startswith("journal.jsonl.damaged-")]
    assert len(kept) == 1 and kept[0].read_bytes() == before[str(journal.relative_to(imported))]  # the bytes are kept
    assert notes_of(imported, pid) == "first"


def test_a_damaged_newline_alone_loses_no_edit(imported):
    pid = first_id(imported)
    run_cli("note", pid, "first", data_dir=imported)
    run_cli("note", pid, "important", data_dir=imported)
    journal = store_dir(imported) / JOURNAL
    flip_bit(journal, len(journal.read_bytes()) - 1, 3)  # "\n" -> "\x02"
    assert notes_of(imported, pid) == "important"
    assert run_cli("rate", pid, "3", data_dir=imported).returncode == 0  # the newline is put back
    assert notes_of(imported, pid) == "important"
    assert json.loads(run_cli("show", "--json", pid, data_dir=imported).stdout)["rating"] == 3


def test_recover_replays_every_good_edit_after_a_damaged_line(imported):
    pid = first_id(imported)
    with Library.open(imported) as lib:
        ids = lib.ids()[:23]
        for i, p in enumerate(ids):
            lib.set_notes(p, f"note {i}")
    journal = store_dir(imported) / JOURNAL
    lines = journal.read_bytes().split(b"\n")
    bad = next(i for i, line in enumerate(lines, 1) if b'"note 2"' in line)
    lines[bad - 1] = lines[bad - 1].replace(b"note 2", b"nOte 2")
    journal.write_bytes(b"\n".join(lines))
    assert run_cli("show", pid, data_dir=imported).returncode == 1
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    assert "Lost 1 edit(s)" in rec.stdout and f"set notes of paper {ids[2]}" in rec.stdout
    assert f"journal line {bad}" in rec.stdout
    with Library.open(imported, readonly=True) as lib:
        kept = [lib.get(p).notes for p in ids]
    assert kept == [f"note {i}" if i != 2 else "" for i in range(23)]  # 22 of 22 good edits


def test_recover_after_a_cut_library_file_keeps_its_intact_lines_and_the_journal(imported):
    with Library.open(imported) as lib:
        lib.compact()  # the backup: no notes yet
        ids = lib.ids()
        recent = ids[:70]
        for i, p in enumerate(recent):
            lib.set_notes(p, f"recent {i}")
        lib.compact()  # the 70 edits are in the library file now
        lib.set_notes(ids[-1], "in the journal")  # and one more in the journal
    snap = store_dir(imported) / SNAPSHOT
    data = snap.read_bytes()
    papers_end = data.index(b'\n{"smeta"') + 1  # the papers' lines, then the merge state's
    snap.write_bytes(data[: papers_end - 600])  # cut off inside the last paper's line
    res = run_cli("list", data_dir=imported)
    assert res.returncode == 1 and "cut short" in res.stderr
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    assert "Restored 1 paper whose" in rec.stdout and ids[-1] in rec.stdout
    with Library.open(imported, readonly=True) as lib:
        assert len(lib) == len(ids)
        assert [lib.get(p).notes for p in recent] == [f"recent {i}" for i in range(70)]  # 70 of 70
        assert lib.get(ids[-1]).notes == "in the journal"  # the journal replayed on top


def test_recover_restores_lists_and_papers_of_damaged_lines_from_the_backup(imported):
    with Library.open(imported) as lib:
        ids = lib.ids()
        lib.add_to_list("thesis", ids[:5])
        lib.compact()
        lib.set_notes(ids[10], "after the backup")
        lib.compact()
    snap = store_dir(imported) / SNAPSHOT
    lines = snap.read_bytes().split(b"\n")
    lines[11] = lines[11].replace(b"after", b"aftre")  # ids[10]'s line
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"list":"thesis"'))
    lines[at] = lines[at].replace(b"thesis", b"thesIs")  # the list's line
    snap.write_bytes(b"\n".join(lines))
    res = run_cli("list", data_dir=imported)
    assert res.returncode == 1 and "line 12 is damaged" in res.stderr
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    assert "line 12" in rec.stdout and ids[10] in rec.stdout and "'thesis'" in rec.stdout
    with Library.open(imported, readonly=True) as lib:
        assert len(lib) == len(ids) and lib.list_ids("thesis") == ids[:5]
        assert lib.get(ids[10]).notes == ""  # the backup's copy, as reported


@pytest.mark.parametrize("bit", range(8))
def test_a_damaged_newline_between_two_papers_loses_neither(imported, bit):
    """A flipped newline merges two whole lines into one; both still carry their
    own checksum, so recover keeps both, even with no backup to fall back on."""
    with Library.open(imported) as lib:
        ids = lib.ids()
        lib.set_notes(ids[20], "edit one")
        lib.set_notes(ids[21], "edit two")
        lib.compact()
    for old in (store_dir(imported) / store_mod.BACKUPS).glob("*"):
        old.unlink()  # nothing else to recover them from
    snap = store_dir(imported) / SNAPSHOT
    data = snap.read_bytes()
    at = data.index(f'"id":"{ids[21]}"'.encode())
    newline = data.rindex(b"\n", 0, at)  # the end of the line before ids[21]'s
    flip_bit(snap, newline, bit)
    res = run_cli("list", data_dir=imported)
    assert res.returncode == 1 and "damaged" in res.stderr
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    assert "Could not recover" not in rec.stdout, rec.stdout
    with Library.open(imported, readonly=True) as lib:
        assert lib.ids() == ids
        assert lib.get(ids[20]).notes == "edit one" and lib.get(ids[21]).notes == "edit two"


@pytest.mark.parametrize("seed", range(6))
def test_garbage_over_the_end_of_a_line_keeps_the_whole_line_after_it(imported, seed):
    """Random bytes over the end of one paper's line and its newline: that paper
    is lost (no backup holds it, and recover says so), the next line is whole
    and is kept with its edit."""
    with Library.open(imported) as lib:
        ids = lib.ids()
        lib.set_notes(ids[21], "edit two")
        lib.compact()
    for old in (store_dir(imported) / store_mod.BACKUPS).glob("*"):
        old.unlink()
    snap = store_dir(imported) / SNAPSHOT
    data = bytearray(snap.read_bytes())
    newline = data.rindex(b"\n", 0, data.index(f'"id":"{ids[21]}"'.encode()))
    rng = random.Random(seed)
    size = rng.randint(1, 40)
    data[newline - size + 1 : newline + 1] = bytes(rng.choice(b'abc{}\t"0123456789:,\x00\xff') for _ in range(size))
    snap.write_bytes(bytes(data))
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    assert "Could not recover 1 paper" in rec.stdout, rec.stdout
    with Library.open(imported, readonly=True) as lib:
        assert lib.ids() == [p for p in ids if p != ids[20]]
        assert lib.get(ids[21]).notes == "edit two"


@pytest.mark.parametrize("damage", ["newline flipped", "end of line overwritten"])
def test_recover_keeps_the_whole_journal_line_after_a_damaged_newline(imported, damage):
    with Library.open(imported) as lib:
        ids = lib.ids()
        lib.compact()
        for i in range(3):
            lib.set_notes(ids[i], f"edit {i}")  # journal lines 1, 2, 3
    journal = store_dir(imported) / JOURNAL
    data = bytearray(journal.read_bytes())
    end = data.index(b"\n")  # the end of line 1
    if damage == "newline flipped":
        data[end] ^= 0x40
    else:
        data[end - 12 : end + 1] = b"\x00garbage\xff!!!!"[:13]
    journal.write_bytes(bytes(data))
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0, rec.stderr
    with Library.open(imported, readonly=True) as lib:
        kept = [lib.get(ids[i]).notes for i in range(3)]
    if damage == "newline flipped":
        assert kept == ["edit 0", "edit 1", "edit 2"], rec.stdout
    else:
        assert kept == ["", "edit 1", "edit 2"], rec.stdout
        assert "journal line 1" in rec.stdout


def test_every_bit_flip_in_the_library_file_is_found(imported):
    """Random 1-3 bit flips: refused with the line named, never loaded changed."""
    with Library.open(imported) as lib:
        lib.add_to_list("l", lib.ids()[:3])
        lib.compact()
        expected = {p.id: p.raw() for p in lib.papers()}
    snap = store_dir(imported) / SNAPSHOT
    pristine = snap.read_bytes()
    rng = random.Random(7)
    refused = 0
    for _ in range(30):
        data = bytearray(pristine)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        snap.write_bytes(bytes(data))
        try:
            with Library.open(imported, readonly=True) as lib:
                assert {p.id: p.raw() for p in lib.papers()} == expected, "a flip loaded silently"
        except store_mod.StoreCorruptError as exc:
            assert "line" in str(exc) and str(snap) in str(exc)
            refused += 1
    assert refused == 30


def test_an_older_library_file_is_brought_forward_and_kept_as_a_backup(imported):
    with Library.open(imported) as lib:
        lib.compact()
        expected = {p.id: p.raw() for p in lib.papers()}
    snap = store_dir(imported) / SNAPSHOT
    # the same library as schema 1 wrote it: plain JSON lines
    old = [store_mod.unseal(line + b"\n") for line in snap.read_bytes().split(b"\n")[:-1]]
    old[0] = old[0].replace(b'"schema_version":%d' % store_mod.SCHEMA_VERSION, b'"schema_version":1')
    snap.write_bytes(b"\n".join(old) + b"\n")
    with Library.open(imported) as lib:
        assert {p.id: p.raw() for p in lib.papers()} == expected
    assert store_mod.unseal(snap.read_bytes().split(b"\n", 1)[0] + b"\n") is not None
    assert any(b'"schema_version":1' in p.read_bytes()[:200] for p in (store_dir(imported) / "backups").iterdir())


def test_a_killed_compaction_leaves_no_temporary_file_behind(imported):
    (store_dir(imported) / (SNAPSHOT + ".tmp")).write_bytes(b"half a library")
    assert run_cli("tag", first_id(imported), "--add", "x", data_dir=imported).returncode == 0
    assert not (store_dir(imported) / (SNAPSHOT + ".tmp")).exists()


# Both on one core, the reader at the lowest priority: a reader on a busy
# machine, slower than the writer's compactions (what made readers fail).
PIN = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"

READER = PIN + textwrap.dedent("""
    import os, sys
    os.nice(19)
    from papershelf.core.library import Library
    from papershelf.core.errors import PapershelfError
    failures = 0
    for _ in range(int(sys.argv[2])):
        try:
            with Library.open(sys.argv[1], readonly=True) as lib:
                assert len(lib) == 30000, len(lib)
        except PapershelfError as exc:
            failures += 1
            print(exc, file=sys.stderr)
    print(failures)
    """)

COMPACTOR = PIN + textwrap.dedent("""
    import sys
    from papershelf.core.library import Library
    lib = Library.open(sys.argv[1])
    ids = lib.ids()
    print("ready", flush=True)
    n = 0
    while True:
        lib.set_notes(ids[n % len(ids)], f"n{n}")
        lib.compact()
        n += 1
    """)


def write_big_library(folder, n: int) -> None:
    """n papers written straight as a library file (much faster than importing them)."""
    folder.mkdir(parents=True, exist_ok=True)
    words = "diffusion transformer policy gradient graph neural retrieval language model".split()
    rng = random.Random(n)
    papers = {}
    for i in range(n):
        pid = f"{i:010x}"
        abstract = " ".join(rng.choice(words) for _ in range(150))
        papers[pid] = Paper.from_dict(
            {"id": pid, "title": f"Paper {i}", "abstract": abstract, "added": "2026-01-01T00:00:00+00:00"}
        )
    store_mod.write_snapshot(folder / SNAPSHOT, papers, {}, 1, 0)
    Library.open(folder).close()  # brought to the shared layout, as a library of today is


@pytest.mark.slow
def test_readers_never_see_damage_while_another_process_compacts(data_dir):
    # big enough that reading it takes longer than the writer needs between compactions
    write_big_library(data_dir, 30_000)
    with subprocess.Popen(
        [sys.executable, "-c", COMPACTOR, str(data_dir)], stdout=subprocess.PIPE, text=True
    ) as writer:
        try:
            assert writer.stdout.readline().strip() == "ready"
            reader = subprocess.run(
                [sys.executable, "-c", READER, str(data_dir), "40"], capture_output=True, text=True, timeout=600
            )
        finally:
            writer.kill()
    assert reader.stdout.strip() == "0", reader.stderr[-2000:]


@pytest.mark.parametrize("cut", ["last line", "two lines", "emptied", "deleted"])
def test_a_journal_that_lost_saved_lines_at_its_end_is_damage(imported, cut):
    """A cut between two lines leaves nothing torn to see; the last durable edit is recorded apart."""
    with Library.open(imported) as lib:
        lib.compact()
    pid = first_id(imported)
    for text in ("one", "two", "three"):
        assert run_cli("note", pid, text, data_dir=imported).returncode == 0
    journal = store_dir(imported) / JOURNAL
    lines = journal.read_bytes().split(b"\n")[:-1]
    if cut == "deleted":
        journal.unlink()
    else:
        keep = {"last line": len(lines) - 1, "two lines": len(lines) - 2, "emptied": 0}[cut]
        journal.write_bytes(b"".join(line + b"\n" for line in lines[:keep]))
    res = run_cli("show", pid, data_dir=imported)
    assert res.returncode == 1 and "saved edit(s) at its end are missing" in res.stderr
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0 and "its line is missing" in rec.stdout, rec.stdout
    assert run_cli("show", pid, data_dir=imported).returncode == 0


def test_the_window_offers_to_repair_a_damaged_library(imported, qtbot, settings):
    from PySide6.QtWidgets import QApplication, QMessageBox

    from papershelf.gui.app import open_library

    pid = first_id(imported)
    run_cli("note", pid, "first", data_dir=imported)
    run_cli("note", pid, "second", data_dir=imported)
    journal = store_dir(imported) / JOURNAL
    flip_bit(journal, journal.read_bytes().rindex(b"second"))
    seen: list[str] = []

    def answer():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text() + "\n" + box.informativeText())
            repair = [b for b in box.buttons() if b.text() == "Repair"]
            (repair[0] if repair else box.buttons()[0]).click()

    from PySide6.QtCore import QTimer

    timer = QTimer()
    timer.timeout.connect(answer)
    timer.start(50)
    lib = open_library(imported)
    timer.stop()
    try:
        assert lib is not None and lib.get(pid).notes == "first"
    finally:
        lib.close()
    assert "damaged" in seen[0] and "choose Repair" in seen[0] and "papershelf recover" not in seen[0]
    assert "The library was repaired" in seen[1] and f"set notes of paper {pid}" in seen[1]


# ---- found by review: each failed before its fix ----------------------------


def test_a_paper_whose_id_was_flipped_comes_back_from_the_backup(imported):
    with Library.open(imported) as lib:
        lib.compact()
        lib.compact()
        ids = lib.ids()
    snap = store_dir(imported) / SNAPSHOT
    lines = snap.read_bytes().split(b"\n")
    victim = ids[5]
    at = lines[6].index(victim.encode())
    flipped = victim[:3] + ("0" if victim[3] != "0" else "1") + victim[4:]  # still a valid-looking id
    lines[6] = lines[6][:at] + flipped.encode() + lines[6][at + len(victim) :]
    snap.write_bytes(b"\n".join(lines))
    report = Library.recover(imported)
    with Library.open(imported, readonly=True) as lib:
        assert victim in lib.ids() and len(lib) == len(ids), report


def test_a_schema_1_library_with_a_damaged_header_keeps_its_journal(imported):
    with Library.open(imported) as lib:
        lib.compact()
        lib.compact()
        pid = lib.ids()[0]
    snap = store_dir(imported) / SNAPSHOT
    old = [store_mod.unseal(line + b"\n") for line in snap.read_bytes().split(b"\n")[:-1]]
    header = json.loads(old[0])
    old[-1] = b'{"end":true,"papers":%d,"lists":0}' % (len(old) - 2)  # schema 1's end line
    old[0] = b"garbage where the header was"
    snap.write_bytes(b"\n".join(old) + b"\n")
    # a saved edit in the journal, written against that library file
    (store_dir(imported) / JOURNAL).write_bytes(
        store_mod.journal_line(
            {
                "seq": header["journal_seq"] + 1,
                "gen": header["generation"],
                "ops": [["set", pid, {"notes": "saved edit"}]],
            }
        )
    )
    report = Library.recover(imported)
    assert "line 1" in report
    with Library.open(imported, readonly=True) as lib:
        assert lib.get(pid).notes == "saved edit", report


def test_recover_of_a_missing_library_file_names_only_the_lost_edit(imported):
    with Library.open(imported) as lib:
        lib.compact()
        lib.compact()  # the backup holds everything so far
        pid = lib.ids()[0]
        lib.set_notes(pid, "in the library file only")
        lib.compact()  # the journal is empty again
    (store_dir(imported) / SNAPSHOT).unlink()
    report = Library.recover(imported)
    assert "Lost 1 edit(s)" in report and "its line is missing" in report, report
    assert "journal.jsonl.damaged" not in report  # an empty journal is not damaged


def test_recover_keeps_an_unfinished_last_save_it_leaves_out(imported):
    with Library.open(imported) as lib:
        lib.compact()
        lib.compact()
        lib.set_notes(lib.ids()[0], "saved")
    with open(store_dir(imported) / JOURNAL, "ab") as f:
        f.write(b'{"seq":99,"gen":3,"ops":[["set","x",')  # a save cut short
    snap = store_dir(imported) / SNAPSHOT
    snap.write_bytes(snap.read_bytes()[:-100])  # and the library file damaged
    report = Library.recover(imported)
    assert "unfinished save" in report
    kept = [p for p in store_dir(imported).iterdir() if p.name.startswith("journal.jsonl.damaged-")]
    assert kept and b'"seq":99' in kept[0].read_bytes()


def test_a_failed_write_whose_undo_fails_too_is_not_followed_by_a_saved_edit(library, seeds, data_dir, monkeypatch):
    import errno

    library.import_files(seeds[:1])
    a, b = library.ids()[:2]
    real_pwrite, real_truncate = os.pwrite, os.ftruncate

    def half_then_error(fd, data, offset):
        real_pwrite(fd, data[:20], offset)
        raise OSError(errno.EIO, "Input/output error")

    def failing_truncate(fd, n):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "pwrite", half_then_error)
    monkeypatch.setattr(os, "ftruncate", failing_truncate)
    with pytest.raises(store_mod.StoreWriteError):
        library.set_notes(a, "first try")
    monkeypatch.setattr(os, "pwrite", real_pwrite)
    monkeypatch.setattr(os, "ftruncate", real_truncate)
    library.set_notes(b, "reported as saved")
    library.close()
    with Library.open(data_dir, readonly=True) as again:
        assert again.get(b).notes == "reported as saved" and again.get(a).notes == ""


def test_a_schema_1_library_opens_even_when_it_cannot_be_brought_forward(seeds, tmpfs):
    with tmpfs("6m") as mount:
        folder = mount.path / "library"
        with Library.open(folder) as lib:
            lib.import_files(seeds)
            lib.compact()
            pid = lib.ids()[0]
        snap = store_dir(folder) / SNAPSHOT
        old = [store_mod.unseal(line + b"\n") for line in snap.read_bytes().split(b"\n")[:-1]]
        old[0] = old[0].replace(b'"schema_version":%d' % store_mod.SCHEMA_VERSION, b'"schema_version":1')
        snap.write_bytes(b"\n".join(old) + b"\n")
        ballast = mount.path / "ballast"
        with open(ballast, "wb") as f:  # fill the disk: no room for a second library file
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        # room for a journal line, not for a second library file
        os.truncate(ballast, ballast.stat().st_size - 16384)
        assert snap.stat().st_size > 4 * 16384
        with Library.open(folder) as lib:
            lib.set_notes(pid, "still saved")
        ballast.unlink()
        with Library.open(folder) as lib:
            assert lib.get(pid).notes == "still saved"


def test_a_damaged_line_already_folded_into_the_library_file_is_harmless(library, seeds, data_dir, monkeypatch):
    library.import_files(seeds[:1])
    a, b = library.ids()[:2]
    library.set_notes(a, "folded edit")
    real = os.ftruncate
    monkeypatch.setattr(os, "ftruncate", lambda fd, n: (_ for _ in ()).throw(OSError(5, "EIO")))
    library.compact()  # the journal could not be emptied
    monkeypatch.setattr(os, "ftruncate", real)
    library.set_notes(b, "new edit")
    library.close()
    journal = store_dir(data_dir) / JOURNAL
    data = journal.read_bytes()
    flip_bit(journal, data.index(b"folded edit"))
    with Library.open(data_dir, readonly=True) as again:
        assert again.get(a).notes == "folded edit" and again.get(b).notes == "new edit"
