"""A review of the shared store's merge: orders of arrival and states of the folder that the
random convergence test (test_shared_merge.py) does not reach. Each test is a case where two
devices disagreed, or a device lost an edit, before its fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, listed_papers, run_cli
from papershelf.core.errors import StoreVersionError
from papershelf.core.library import Library
from papershelf.core.store import Store, machine, open_store
from test_shared_merge import DEVICES, _clock_past, _open, _state, _two_devices

A, B, C = DEVICES


def test_a_delete_between_two_imports_of_one_paper_gives_one_answer_on_every_device(tmp_path):
    """A imports a listing, C deletes a paper of it, then B (which had seen neither) imports the
    same listing: B's import is stamped after the deletion, so the paper is back everywhere. A read
    B's import before C's deletion and dropped the paper (the deletion was weighed against A's own
    import only, not the later one)."""
    folder = tmp_path / "shared"
    a, b, c = _open(folder, A), _open(folder, B), _open(folder, C)
    try:
        a.import_files([SEEDS[0]])
        c.refresh()
        pid = sorted(c.ids())[0]
        _clock_past(a)
        c.delete_papers([pid])
        _clock_past(c)
        b.import_files([SEEDS[0]])
        for lib in (a, b, c, a, b, c):
            lib.refresh()
        assert [pid in lib for lib in (a, b, c)] == [True, True, True]
        assert _state(a)[:2] == _state(b)[:2] == _state(c)[:2]
    finally:
        for lib in (a, b, c):
            lib.close()


@pytest.mark.parametrize("a_compacted", [False, True], ids=["a-journal", "a-library-file"])
def test_an_edit_of_a_paper_whose_device_has_not_arrived_survives_a_compaction(tmp_path, a_compacted):
    """C reads B's note on a paper A imported before A's folder has reached C (the sync tool
    brought B's first). The note waits for the paper; C compacts meanwhile. Once A's folder
    arrives, C has the paper with B's note (it was kept in memory only, and a compaction lost it
    for good: C's library file said B's edit was applied)."""
    folder = tmp_path / "shared"
    with _two_devices(tmp_path) as (a, b):
        pid = sorted(b.ids())[0]
        b.set_notes(pid, "from B")
        if a_compacted:
            a.compact()  # C takes A's library file as it is (it holds nothing yet)
    aside = tmp_path / "not-arrived"
    shutil.move(folder / "devices" / A, aside)  # A's folder has not been copied to C's machine yet
    c = _open(folder, C)
    try:
        c.refresh()
        assert pid not in c
        c.compact()
    finally:
        c.close()
    shutil.move(aside, folder / "devices" / A)
    c = _open(folder, C)
    try:
        c.refresh()
        assert c.get(pid).notes == "from B"
    finally:
        c.close()


def test_a_second_machine_sees_a_library_another_machine_upgraded(tmp_path):
    """The laptop upgrades its old library at its first edit; the desktop, whose sync brought the
    folder, opens it: it lists every paper and the reading list (it listed none: the upgrade's
    library file said it held no action, so no other device ever read it)."""
    folder = tmp_path / "shared"
    shutil.copytree(FIXTURES / "library-v2", folder)
    laptop = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "laptop")}
    desktop = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "desktop"), "PAPERSHELF_STATE_DIR": str(tmp_path / "ds")}
    before = listed_papers(folder)
    res = run_cli("tag", before[0]["id"], "--add", "upgraded", data_dir=folder, env=laptop)
    assert res.returncode == 0, res.stderr
    assert list(folder.glob("pre-sync-backup-*"))
    res = run_cli("list", "--json", data_dir=folder, env=desktop)
    assert res.returncode == 0, res.stderr
    seen = json.loads(res.stdout)
    assert sorted(p["id"] for p in seen) == sorted(p["id"] for p in before)
    assert "upgraded" in next(p for p in seen if p["id"] == before[0]["id"])["tags"]
    lists = run_cli("lists", data_dir=folder, env=desktop)
    assert "Thesis refs" in lists.stdout, lists.stdout + lists.stderr


def test_a_reading_list_from_before_sharing_reaches_a_device_that_had_edits_of_its_own(tmp_path):
    """A upgrades an old library that has a reading list; B, whose sync had not brought A's folder
    yet, imports a listing meanwhile. When A's folder arrives B merges it with its own papers and
    shows the old reading list too (it showed the old papers but not the list: a list from before
    sharing, with no stamp, read as one B had never known)."""
    folder = tmp_path / "shared"
    shutil.copytree(FIXTURES / "library-v2", folder)
    a = Library(open_store(folder, device=A))
    try:
        old_lists = dict(a.lists().items())
        assert old_lists and all(old_lists.values())
    finally:
        a.close()
    aside = tmp_path / "not-arrived"
    shutil.move(folder / "devices" / A, aside)
    b = _open(folder, B)
    try:
        b.import_files([SEEDS[1]])
        b.compact()
    finally:
        b.close()
    shutil.move(aside, folder / "devices" / A)
    a, b = _open(folder, A), _open(folder, B)
    try:
        b.refresh()
        a.refresh()
        assert {k: v for k, v in b.lists().items() if k in old_lists} == old_lists
        assert _state(a)[:2] == _state(b)[:2]
    finally:
        a.close()
        b.close()


def _upgraded_then_crashed(tmp_path: Path, when: str, monkeypatch) -> tuple[Path, list[dict], dict]:
    """An old library whose upgrade was cut short (kill -9, a power cut) at `when`: "started"
    (the device's folder made, its library file not written yet) or "written" (the device's
    library file written, the old files not moved aside yet)."""
    folder = tmp_path / "library"
    shutil.copytree(FIXTURES / "library-v2", folder)
    before = listed_papers(folder)
    env = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "laptop")}
    monkeypatch.setenv("PAPERSHELF_CONFIG_DIR", env["PAPERSHELF_CONFIG_DIR"])
    device = machine.device_id()
    if when == "started":
        (folder / "devices" / device).mkdir(parents=True)
        (folder / "devices" / device / "library.jsonl.tmp").write_bytes(b'{"format":"papershelf-lib')
    else:
        old = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        Library(open_store(folder)).close()
        for aside in folder.glob("pre-sync-backup-*"):
            shutil.rmtree(aside)
        for name, data in old.items():
            (folder / name).write_bytes(data)
    return folder, before, env


@pytest.mark.parametrize("when", ["started", "written"])
def test_an_upgrade_cut_short_is_finished_at_the_next_open_and_loses_nothing(tmp_path, when, monkeypatch):
    """The library listed no paper after an upgrade cut short before its device's library file was
    written (the device folder alone made it read as a shared library), and an older Papershelf
    still opened the old files left in place after one cut short later (and wrote to them)."""
    folder, before, env = _upgraded_then_crashed(tmp_path, when, monkeypatch)
    res = run_cli("list", "--json", data_dir=folder, env=env)
    assert res.returncode == 0, res.stderr
    assert sorted(p["id"] for p in json.loads(res.stdout)) == sorted(p["id"] for p in before)
    res = run_cli("tag", before[1]["id"], "--add", "after", data_dir=folder, env=env)
    assert res.returncode == 0, res.stderr
    after = json.loads(run_cli("list", "--json", data_dir=folder, env=env).stdout)
    assert sorted(p["id"] for p in after) == sorted(p["id"] for p in before)
    assert list(folder.glob("pre-sync-backup-*")), "the old files are kept as a backup"
    with pytest.raises(StoreVersionError):
        Store(folder).open()  # an older Papershelf meets the marker, not the old files


@pytest.mark.parametrize(
    "op",
    [
        ["f", "PID"],
        ["a", "x"],
        ["t", "PID", ["x"], True],
        ["m", "queue", "PID", True, "first"],
        ["L", "queue"],
        ["x"],
        ["f", "PID", "title", {"x": 1}],
        ["f", "PID", "rating", "lots"],
        ["f", "PID", "status", "bogus"],
        ["t", "PID", 5, True],
        ["a", "PID", {"title": 5}],
        ["F", "PID", "abc", True, 1.0],
        ["F", "PID", "abc", "yes", 1.0, {"path": "files/x/a.pdf"}],
        ["F", "PID", "abc", True, 1.0, {"sha256": "abc"}],
        ["F", "PID", "abc", True, 1.0, ["files/x/a.pdf"]],
        ["f", "PID", "files", [{"sha256": "abc"}]],
        ["Z", "PID", "a file op of a Papershelf newer than this one"],
    ],
)
def test_another_devices_line_of_an_unknown_shape_waits_and_the_library_opens(tmp_path, op):
    """A line with a good checksum whose operation has a shape this Papershelf does not know (a
    newer or faulty Papershelf wrote it): every command ended in a traceback (IndexError,
    TypeError, ValueError when merging it, or later when showing the paper). It waits as a line
    that cannot be read; the device's lines before it are merged, everything else works."""
    from papershelf.core.store.journal import journal_line

    folder = tmp_path / "shared"
    with _two_devices(tmp_path) as (a, b):
        pid = sorted(a.ids())[0]
        b.set_notes(pid, "before the odd line")
        seq = b._store.seq
    bad = [x.replace("PID", pid) if isinstance(x, str) else x for x in op]
    line = journal_line({"seq": seq + 1, "gen": 0, "ops": [bad], "hlc": 10**13, "dev": B, "vv": {A: 1, B: seq}})
    with open(folder / "devices" / B / "journal.jsonl", "ab") as f:
        f.write(line)
    env = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "c")}
    listed = run_cli("list", "--json", data_dir=folder, env=env)
    shown = run_cli("show", pid, data_dir=folder, env=env)
    for res in (listed, shown):
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert next(p for p in json.loads(listed.stdout) if p["id"] == pid)["notes"] == "before the odd line"


def test_a_whole_files_list_from_a_build_before_file_registers_attaches_and_detaches_nothing(tmp_path):
    """A device of a build that merged `files` as one value writes the whole list (`"f"`), having
    not seen the file this device attached meanwhile: both files stay, no conflict, the same
    order on both devices, and `papershelf conflicts` has none to show."""
    from papershelf.core.store.journal import journal_line

    folder = tmp_path / "shared"
    made = tmp_path / "made"
    made.mkdir()
    (made / "supplement.txt").write_text("supplementary table\n")
    with _two_devices(tmp_path) as (a, b):
        pid = sorted(a.ids())[0]
        b.set_notes(pid, "before the old line")
        seq = b._store.seq
        a.attach_files(pid, [made / "supplement.txt"])
    slides = {"path": "files/x/slides.pdf", "sha256": "ab" * 32, "size": 3, "pages": 0, "added": "2026-12-03"}
    old = ["f", pid, "files", [slides]]
    line = journal_line({"seq": seq + 1, "gen": 0, "ops": [old], "hlc": 10**13, "dev": B, "vv": {A: 1, B: seq}})
    with open(folder / "devices" / B / "journal.jsonl", "ab") as f:
        f.write(line)
    for who in ("laptop", "desktop"):
        env = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / who)}
        listed = run_cli("list", "--json", data_dir=folder, env=env)
        assert listed.returncode == 0, listed.stderr
        paper = next(p for p in json.loads(listed.stdout) if p["id"] == pid)
        assert [Path(f["path"]).name for f in paper["files"]] == ["supplement.txt", "slides.pdf"]
        res = run_cli("conflicts", data_dir=folder, env=env)
        assert res.returncode == 0 and "No conflicts" in res.stdout, res.stdout + res.stderr


def test_recover_of_a_device_whose_journal_is_damaged_keeps_its_papers(tmp_path):
    """A device that had not compacted yet (its edits all in its journal) has a line of its journal
    damaged; `papershelf recover` keeps every readable edit. It said "Replayed 5 edit(s)" and then
    "The library now holds 0 papers", and saved that: every paper was gone, on every device."""
    folder = tmp_path / "shared"
    env = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "laptop")}
    assert run_cli("import", str(SEEDS[0]), data_dir=folder, env=env).returncode == 0
    before = json.loads(run_cli("list", "--json", data_dir=folder, env=env).stdout)
    for i in range(4):
        assert run_cli("tag", before[i]["id"], "--add", f"t{i}", data_dir=folder, env=env).returncode == 0
    (device,) = (folder / "devices").iterdir()
    journal = device / "journal.jsonl"
    lines = journal.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"t1", b"T1")  # edit 3 (the tag t1) damaged: its checksum fails
    journal.write_bytes(b"\n".join(lines))
    assert run_cli("list", data_dir=folder, env=env).returncode != 0  # refused with words until recovered
    res = run_cli("recover", data_dir=folder, env=env)
    assert res.returncode == 0, res.stderr
    assert "edit 3" in res.stdout
    for who in (env, {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "desktop")}):
        after = {p["id"]: p["tags"] for p in json.loads(run_cli("list", "--json", data_dir=folder, env=who).stdout)}
        assert sorted(after) == sorted(p["id"] for p in before)
        assert [after[before[i]["id"]] for i in range(4)] == [["t0"], [], ["t2"], ["t3"]]


def test_recover_of_a_damaged_device_library_file_keeps_its_merge_state_and_others_follow_it(tmp_path, monkeypatch):
    """A device's library file has a damaged paper line; `papershelf recover` mends it. The
    recovered file said it held none of the device's actions (vv {}) and read its merge-state
    lines as damage: every other device then waited for the device's "action 1" for good and never
    merged another edit of it, and the device's values lost their stamps."""
    folder = tmp_path / "shared"
    laptop = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "laptop")}
    desktop = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "desktop"), "PAPERSHELF_STATE_DIR": str(tmp_path / "ds")}
    monkeypatch.setenv("PAPERSHELF_CONFIG_DIR", laptop["PAPERSHELF_CONFIG_DIR"])
    lib = Library(open_store(folder))
    lib.import_files([SEEDS[0]])
    ids = sorted(lib.ids())
    lib.add_tags([ids[0]], ["a0"])
    lib.compact()
    device = lib.device
    lib.close()
    assert run_cli("tag", ids[1], "--add", "b1", data_dir=folder, env=desktop).returncode == 0
    library_file = folder / "devices" / device / "library.jsonl"
    lines = library_file.read_bytes().split(b"\n")
    damaged = next(i for i, line in enumerate(lines) if ids[5].encode() in line and b'"title"' in line)
    lines[damaged] = lines[damaged].replace(b'"title"', b'"tItle"', 1)
    library_file.write_bytes(b"\n".join(lines))
    res = run_cli("recover", data_dir=folder, env=laptop)
    assert res.returncode == 0, res.stderr
    assert "1 damaged line" in res.stdout, res.stdout  # the paper's, not the merge state's
    assert run_cli("tag", ids[2], "--add", "a2", data_dir=folder, env=laptop).returncode == 0
    for who in (laptop, desktop):
        tags = {p["id"]: p["tags"] for p in json.loads(run_cli("list", "--json", data_dir=folder, env=who).stdout)}
        assert (tags[ids[0]], tags[ids[1]], tags[ids[2]]) == (["a0"], ["b1"], ["a2"]), who


def test_a_list_of_files_in_a_conflict_reads_as_the_files_names():
    """A `files` conflict kept by a library of a build that merged files as one value showed the
    records as raw dicts that looked alike; the window and `papershelf conflicts` name the files."""
    from papershelf.core.attachments import named_files
    from papershelf.gui.conflicts import shown_value

    files = [
        {"path": "files/smith2020/doi-paper.pdf", "sha256": "ab" * 32, "size": 3},
        {"path": "/home/me/papers/third.pdf", "sha256": "cd" * 32, "size": 4, "linked": True},
    ]
    assert named_files(files) == ["doi-paper.pdf", "third.pdf"]
    assert shown_value(files) == "doi-paper.pdf, third.pdf"
    assert named_files(["ml", "nlp"]) == ["ml", "nlp"] and shown_value(["ml", "nlp"]) == "ml, nlp"


@pytest.mark.parametrize("keep", [True, False])
def test_a_files_conflict_kept_by_an_earlier_build_is_named_and_settled(tmp_path, keep):
    """A device's library file from a build that merged `files` as one value holds a conflict of
    it: listed by the files' names; taking or dismissing it ends it, on every device."""
    from papershelf.core.attachments import named_files
    from papershelf.core.store.merge import Head

    paper = {"path": "files/k/doi-paper.pdf", "sha256": "ab" * 32, "size": 3}
    other = {"path": "files/k/other.pdf", "sha256": "cd" * 32, "size": 4}
    third = {"path": "files/k/third.pdf", "sha256": "ef" * 32, "size": 5}
    folder = tmp_path / "shared"
    with _two_devices(tmp_path) as (a, b):
        pid = sorted(a.ids())[0]
        sync = a._store.sync
        # the state that build left: two heads, the later one shown
        sync.meta(pid).heads["files"] = [Head(10, A, 1, {}, [paper, other]), Head(11, B, 1, {}, [paper, third])]
        sync.papers[pid].raw()["files"] = [paper, third]
        a.compact()
    a, b = _open(folder, A), _open(folder, B)
    try:
        (c,) = a.conflicts()
        assert c.field == "files"
        assert named_files(c.value) == ["doi-paper.pdf", "other.pdf"]
        assert named_files(c.current) == ["doi-paper.pdf", "third.pdf"]
        a.take_conflict(1, keep=keep)
        b.refresh()
        want = ["doi-paper.pdf", "other.pdf"] if keep else ["doi-paper.pdf", "third.pdf"]
        for lib in (a, b):
            assert named_files(lib.get(pid).files) == want
            assert lib.conflicts() == []
    finally:
        a.close()
        b.close()
