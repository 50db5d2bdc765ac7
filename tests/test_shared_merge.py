"""A shared library edited by several devices at once: every device reaches the same
library, whatever order it reads the others' files in, and loses no edit.

Three devices open one library folder (each with its own device id, as three
machines whose sync tool shares the folder would), make random edits at the
same moments, and read each other's files at random moments and after
compacting at random. At the end every device, and a fresh open of each from
disk, holds the same papers, lists and conflicts; every value a device set is
either the one shown or kept as a conflict, unless an edit that had seen it
replaced it.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SEEDS
from papershelf.core.errors import InvalidValueError, NotFoundError
from papershelf.core.library import Library
from papershelf.core.store import SharedStore
from pdfs import doi_paper, paper_pdf

DEVICES = ["aaaaaaaaaaa1", "bbbbbbbbbbb2", "ccccccccccc3"]
COMPACT = float(os.environ.get("PAPERSHELF_MERGE_COMPACT", "0.05"))


def _open(folder: Path, device: str, readonly: bool = False) -> Library:
    return Library(SharedStore(folder, readonly=readonly, device=device).open())


@contextlib.contextmanager
def _two_devices(tmp_path: Path) -> Iterator[tuple[Library, Library]]:
    """Devices a and b on one folder, a having imported the first sample listing and b read it."""
    folder = tmp_path / "shared"
    a, b = _open(folder, DEVICES[0]), _open(folder, DEVICES[1])
    try:
        a.import_files([SEEDS[0]])
        b.refresh()
        yield a, b
    finally:
        a.close()
        b.close()


def _state(lib: Library) -> tuple[dict, dict, list]:
    papers = {p.id: dict(p.raw()) for p in lib.papers()}
    lists = dict(lib.lists().items())
    conflicts = sorted((c.paper, c.field, repr(c.value)) for c in lib.conflicts())
    return papers, lists, conflicts


def _clock_past(lib: Library) -> None:
    """Wait until the wall clock is past the device's last stamp (a condition, in milliseconds),
    so that the next edit on any device is stamped later."""
    last = lib._store.sync.clock.last
    while int(time.time() * 1000) <= last:
        time.sleep(0.001)


def _random_edit(rng: random.Random, lib: Library, log: list, attachable: tuple[Path, ...] = ()) -> None:
    ids = lib.ids()
    if not ids:
        return
    pid = rng.choice(ids)
    what = rng.randrange(int(os.environ.get("PAPERSHELF_MERGE_KINDS", "17")))
    try:
        if what >= 15:
            _file_edit(rng, lib, pid, what, attachable)
        else:
            _edit(rng, lib, log, ids, pid, what)
    except (InvalidValueError, NotFoundError):
        pass  # a list renamed to one that exists, a list deleted meanwhile: refused, nothing changed


def _edit(rng: random.Random, lib: Library, log: list, ids: list, pid: str, what: int) -> None:
    if what == 0:
        lib.add_tags([pid], [rng.choice(["ml", "nlp", "vision", "theory"])])
    elif what == 1:
        tags = lib.get(pid).tags
        if tags:
            lib.remove_tags([pid], [rng.choice(tags)])
    elif what == 2:
        lib.set_status([pid], rng.choice(["to-read", "reading", "read", "unread"]))
    elif what == 3:
        text = f"{lib.device} note {rng.randrange(10**6)}"
        lib.set_notes(pid, text)
        log.append((lib.device, pid, "notes", text))
    elif what == 4:
        lib.set_rating([pid], rng.choice([None, 1, 2, 3, 4, 5]))
    elif what == 5:
        lib.add_to_list(rng.choice(["queue", "survey"]), rng.sample(ids, min(3, len(ids))))
    elif what == 6:
        lists = lib.lists()
        if lists:
            name = rng.choice(sorted(lists))
            if lists[name]:
                lib.remove_from_list(name, [rng.choice(lists[name])])
    elif what == 7 and rng.random() < 0.3:
        lib.delete_papers([pid])
    elif what == 8:
        lists = lib.lists()
        if lists:
            name = rng.choice(sorted(lists))
            order = list(lists[name])
            rng.shuffle(order)
            lib.reorder_list(name, order)
    elif what == 9:
        lists = lib.lists()
        if lists:
            lib.rename_list(rng.choice(sorted(lists)), rng.choice(["queue", "survey", "later"]))
    elif what == 10 and rng.random() < 0.5:
        lists = lib.lists()
        if lists:
            lib.delete_list(rng.choice(sorted(lists)))
    elif what == 11:
        lib.set_title(pid, f"{lib.device} title {rng.randrange(10**6)}")
    elif what == 12:
        if rng.random() < 0.6:
            lib.undo()
        else:
            lib.redo()
    elif what == 13 and rng.random() < 0.15:
        lib.import_files([rng.choice(SEEDS[:2])])  # a listing another device imported too
    elif what == 14:
        found = lib.conflicts()
        if found:
            lib.take_conflict(rng.randrange(len(found)) + 1, keep=rng.random() < 0.5)


def _file_edit(rng: random.Random, lib: Library, pid: str, what: int, attachable: tuple[Path, ...]) -> None:
    if what == 15 and attachable:
        lib.attach_files(pid, [rng.choice(attachable)])
    elif what == 16 and lib.get(pid).files:
        lib.detach_file(pid, rng.randrange(len(lib.get(pid).files)))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_three_devices_editing_at_once_agree_and_lose_nothing(tmp_path, seed):
    rng = random.Random(seed)
    folder = tmp_path / "shared"
    libs = {d: _open(folder, d) for d in DEVICES}
    made = tmp_path / "made"
    made.mkdir()
    attachable = []
    for i in range(4):  # supplements of different contents (any file can be attached)
        attachable.append(made / f"supplement-{i}.txt")
        attachable[-1].write_text(f"supplementary table {i}\n" * (i + 1))
    try:
        for i, d in enumerate(DEVICES):
            libs[d].import_files([SEEDS[i]])
        notes_set: list = []
        for _round in range(int(os.environ.get("PAPERSHELF_MERGE_ROUNDS", "40"))):
            d = rng.choice(DEVICES)
            _random_edit(rng, libs[d], notes_set, tuple(attachable))
            if rng.random() < 0.3:
                libs[rng.choice(DEVICES)].refresh()
            if rng.random() < COMPACT:
                libs[rng.choice(DEVICES)].compact()
        for _ in range(2):
            for d in DEVICES:
                libs[d].refresh()
        states = {d: _state(libs[d]) for d in DEVICES}
        first = states[DEVICES[0]]
        for d in DEVICES[1:]:
            assert states[d][0] == first[0], f"papers differ on {d}"
            assert states[d][1] == first[1], f"lists differ on {d}"
            assert states[d][2] == first[2], f"conflicts differ on {d}"
        # every note a device wrote is shown, kept as a conflict, or was replaced by an edit that saw it
        lib = libs[DEVICES[0]]
        sync = lib._store.sync
        for _dev, pid, _field, text in notes_set:
            if pid not in lib:
                continue
            shown = lib.get(pid).notes == text
            kept = any(c.paper == pid and c.value == text for c in lib.conflicts())
            replaced = bool(sync.meta(pid).heads.get("notes"))
            assert shown or kept or replaced, f"the note {text!r} on {pid} was lost"
    finally:
        for lib in libs.values():
            lib.close()
    # and from disk, each device opened again (its own files plus the others') holds the same
    again = {}
    for d in DEVICES:
        lib = _open(folder, d)
        again[d] = _state(lib)
        lib.close()
    for d in DEVICES:
        assert again[d][:2] == first[:2], f"{d} reopened from disk differs"
        assert again[d][2] == first[2]


def test_the_same_field_set_on_two_devices_at_once_is_kept_as_a_conflict_and_can_be_taken(tmp_path):
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.set_notes(pid, "read section 3 again")
        b.set_notes(pid, "compare with the 2019 baseline")
        a.refresh()
        b.refresh()
        assert a.get(pid).notes == b.get(pid).notes
        (conflict,) = a.conflicts()
        assert {conflict.value, conflict.current} == {"read section 3 again", "compare with the 2019 baseline"}
        kept = conflict.value
        assert [c.value for c in b.conflicts()] == [kept]
        b.take_conflict(1)
        a.refresh()
        assert a.get(pid).notes == kept == b.get(pid).notes
        assert a.conflicts() == [] and b.conflicts() == []


def test_a_tag_added_on_one_device_survives_another_devices_unrelated_tag_edit(tmp_path):
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.add_tags([pid], ["ml"])
        b.set_tags([pid], ["survey"])  # b had not seen 'ml': it adds 'survey', removes nothing it had not seen
        a.refresh()
        b.refresh()
        assert a.get(pid).tags == b.get(pid).tags == ["ml", "survey"]


def _names(lib: Library, pid: str) -> list[str]:
    return [att.name for att, _where, _there in lib.paper_files(pid)]


@pytest.fixture
def three_pdfs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Three real PDFs of different content, made outside the library folder."""
    made = tmp_path / "made"
    made.mkdir()
    return (
        doi_paper(made),
        paper_pdf(made, "other.pdf", title="Supplementary Material"),
        paper_pdf(made, "third.pdf", title="Slides of the Talk"),
    )


def test_files_attached_on_two_devices_at_once_are_both_kept_in_one_order(tmp_path, three_pdfs):
    paper, other, third = three_pdfs
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.attach_files(pid, [paper])
        b.refresh()
        assert _names(b, pid) == ["doi-paper.pdf"]
        a.attach_files(pid, [other])  # neither device has seen the other's attach
        b.attach_files(pid, [third])
        a.refresh()
        b.refresh()
        # the file both had first; then the two appended at once, the earlier stamp first
        assert _names(a, pid) == _names(b, pid)
        assert _names(a, pid) == ["doi-paper.pdf", "other.pdf", "third.pdf"]
        assert all(there for _att, _where, there in a.paper_files(pid))
        assert a.conflicts() == [] and b.conflicts() == []
        shown = _names(a, pid)
        a.compact()  # the registers go into the library files; a newcomer joins from them
        b.compact()
        for lib in (_open(tmp_path / "shared", DEVICES[0], readonly=True), _open(tmp_path / "shared", DEVICES[2])):
            try:  # as each device's files on disk say, and as a third device joining reads them
                assert _names(lib, pid) == shown
            finally:
                lib.close()


def test_a_file_detached_on_one_device_while_another_attaches_one(tmp_path, three_pdfs):
    paper, other, third = three_pdfs
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.attach_files(pid, [paper, other])
        b.refresh()
        a.detach_file(pid, 1)  # other.pdf off on a
        b.attach_files(pid, [third])  # b had not seen that
        a.refresh()
        b.refresh()
        assert _names(a, pid) == _names(b, pid) == ["doi-paper.pdf", "third.pdf"]
        assert a.conflicts() == [] and b.conflicts() == []


def test_the_same_file_attached_and_detached_at_once_the_later_stamp_wins(tmp_path, three_pdfs):
    paper, other, _third = three_pdfs
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.attach_files(pid, [paper, other])
        b.refresh()
        # other.pdf: a takes it off and puts it back (undo); b, not having seen that, takes it off after
        a.detach_file(pid, 1)
        a.undo()
        _clock_past(a)
        b.detach_file(pid, 1)
        a.refresh()
        b.refresh()
        assert _names(a, pid) == _names(b, pid) == ["doi-paper.pdf"]
        # and the other way round: b takes it off first, a puts it back later
        a.attach_files(pid, [other])
        b.refresh()
        b.detach_file(pid, 1)
        _clock_past(b)
        a.detach_file(pid, 1)
        a.undo()
        a.refresh()
        b.refresh()
        assert _names(a, pid) == _names(b, pid) == ["doi-paper.pdf", "other.pdf"]
        assert a.conflicts() == [] and b.conflicts() == []


def test_the_same_content_attached_on_two_devices_is_one_file(tmp_path, three_pdfs):
    paper, _other, _third = three_pdfs
    copy = tmp_path / "elsewhere" / "the-same.pdf"
    copy.parent.mkdir()
    shutil.copyfile(paper, copy)
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.attach_files(pid, [paper])
        b.attach_files(pid, [copy])
        a.refresh()
        b.refresh()
        assert len(a.get(pid).files) == len(b.get(pid).files) == 1
        assert a.get(pid).files == b.get(pid).files
        assert all(there for _att, _where, there in b.paper_files(pid))
        assert a.conflicts() == [] and b.conflicts() == []


def test_undo_of_an_attach_takes_off_only_that_file_after_another_device_attached(tmp_path, three_pdfs):
    paper, other, third = three_pdfs
    with _two_devices(tmp_path) as (a, b):
        pid = a.ids()[0]
        a.attach_files(pid, [paper])
        b.refresh()
        a.attach_files(pid, [other])
        b.attach_files(pid, [third])
        a.refresh()
        b.refresh()
        assert sorted(_names(a, pid)) == ["doi-paper.pdf", "other.pdf", "third.pdf"]
        done = a.undo()
        assert done is not None
        b.refresh()
        assert _names(a, pid) == _names(b, pid) == ["doi-paper.pdf", "third.pdf"]
        assert a.conflicts() == [] and b.conflicts() == []


def test_a_paper_deleted_on_one_device_while_another_edits_it(tmp_path):
    """An edit stamped after the deletion brings the paper back; one the deletion had not
    seen, stamped before it, stays with the deleted paper and is listed as a conflict."""
    with _two_devices(tmp_path) as (a, b):
        first, second = a.ids()[:2]
        b.set_notes(first, "edited before the delete")  # earlier stamp, not seen by the delete
        _clock_past(b)
        a.delete_papers([first])
        a.delete_papers([second])
        _clock_past(a)
        b.set_notes(second, "edited after the delete")  # later stamp: brings it back
        a.refresh()
        b.refresh()
        for lib in (a, b):
            assert first not in lib
            assert second in lib and lib.get(second).notes == "edited after the delete"
            (conflict,) = lib.conflicts()
            assert conflict.paper == first and conflict.field == ""
        b.take_conflict(1)
        a.refresh()
        assert a.get(first).notes == "edited before the delete"
        assert a.conflicts() == [] and b.conflicts() == []


def test_one_paper_imported_on_two_devices_is_one_paper(tmp_path):
    folder = tmp_path / "shared"
    a, b = _open(folder, DEVICES[0]), _open(folder, DEVICES[1])
    try:
        a.import_files([SEEDS[0]])
        b.import_files([SEEDS[0]])
        a.refresh()
        b.refresh()
        assert sorted(a.ids()) == sorted(b.ids())
        assert len(a) == len(set(a.ids()))
    finally:
        a.close()
        b.close()


def test_a_device_joining_late_reads_the_others_even_after_they_compacted(tmp_path):
    folder = tmp_path / "shared"
    a = _open(folder, DEVICES[0])
    a.import_files([SEEDS[0]])
    pid = a.ids()[0]
    a.add_tags([pid], ["early"])
    a.compact()  # its journal is folded away: a newcomer must read its library file
    a.set_notes(pid, "after the compaction")
    a.close()
    c = _open(folder, DEVICES[2])
    try:
        assert len(c) > 0 and c.get(pid).tags == ["early"] and c.get(pid).notes == "after the compaction"
    finally:
        c.close()


def test_a_device_back_after_the_others_compacted_catches_up_and_its_edits_reach_them(tmp_path):
    """c works on its own copy of the folder (offline) while a and b edit and fold their journals
    away several times; then the copies are synced both ways, as a sync tool would."""
    folder, offline = tmp_path / "shared", tmp_path / "c-offline"
    a, b = _open(folder, DEVICES[0]), _open(folder, DEVICES[1])
    a.import_files([SEEDS[0]])
    b.refresh()
    ids = a.ids()
    c = _open(folder, DEVICES[2])
    c.close()
    shutil.copytree(folder, offline)
    c = _open(offline, DEVICES[2])
    c.set_notes(ids[0], "written offline")
    c.add_tags([ids[1]], ["offline"])
    c.add_to_list("queue", [ids[9]])
    c.close()
    for round_ in range(3):
        a.add_tags(ids[2:6], [f"a{round_}"])
        b.add_to_list("queue", ids[round_ : round_ + 3])
        b.refresh()
        a.refresh()
        a.compact()
        b.compact()
    a.close()
    b.close()
    # the sync: each side gets the other's device folders
    for dev in DEVICES[:2]:
        shutil.rmtree(offline / "devices" / dev)
        shutil.copytree(folder / "devices" / dev, offline / "devices" / dev)
    shutil.copytree(offline / "devices" / DEVICES[2], folder / "devices" / DEVICES[2], dirs_exist_ok=True)
    states = []
    for where, d in ((offline, DEVICES[2]), (folder, DEVICES[0]), (folder, DEVICES[1])):
        lib = _open(where, d)
        try:
            assert {"a0", "a1", "a2"} <= set(lib.get(ids[2]).tags)
            assert lib.get(ids[0]).notes == "written offline"
            assert "offline" in lib.get(ids[1]).tags
            assert set(lib.list_ids("queue")) == {*ids[:5], ids[9]}
            states.append(_state(lib))
        finally:
            lib.close()
    assert states[0] == states[1] == states[2]
