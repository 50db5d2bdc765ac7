"""Issue 22, "Prove it": two devices edit one library at the same moments through real sync
engines (Syncthing on loopback, rsync and unison copies at random moments, git clones), and
nothing acknowledged is lost.

Each test prints its counts: acknowledged edits, lost edits, conflicts kept, time to agree per
round, files with two writers. The bookkeeping is explained in workload.py. The number of
rounds is $PAPERSHELF_SYNC_ROUNDS (default 3), edits per device and round
$PAPERSHELF_SYNC_EDITS (default 5).
"""

from __future__ import annotations

import random
import threading

import pytest

from sync.engines import GitPair, SyncthingPair, copy_rsync, sync_unison
from sync.workload import (
    AGREE_TIMEOUT,
    SEEDS,
    Concurrent,
    Device,
    SettleFailed,
    Tally,
    agree,
    check_writers,
    conflicts_listing,
    copy_while_writing,
    import_at_once,
    in_background,
    mentions,
    run_rounds,
    seed_ids,
    tally_edits,
    tally_imports,
)

# these need the multi-device store (issue 22's core): today they show the data loss
# no_cover: traced, these workloads ran ×30 slower and their waits ran out (the engines are
# subprocesses either way; the store code they drive is covered by the store and merge tests)
pytestmark = [pytest.mark.sync, pytest.mark.no_cover]


def _pool(tmp_path) -> tuple[dict[str, list[str]], list[str]]:
    """What each device's import holds, and the papers the edits pick from (four of each)."""
    ids = [seed_ids(tmp_path / f"scratch-{i}", seed) for i, seed in enumerate(SEEDS[:2])]
    return {"a": ids[0], "b": ids[1]}, ids[0][:4] + ids[1][:4]


def _workload(tmp_path, tally: Tally, devices: list[Device], settle, during=None) -> None:
    imports, pool = _pool(tmp_path)
    runner = Concurrent()
    acks = import_at_once(devices, SEEDS[:2], runner)
    assert all(acks), "both imports are acknowledged"
    agree(devices, settle, tally, "the imports", orders=False)
    edits, states = run_rounds(devices, settle, tally, pool, runner, during=during)
    tally_imports(imports, states, tally)
    tally_edits(edits, states, [conflicts_listing(d) for d in devices], tally)
    check_writers(devices, tally)


def test_two_devices_through_syncthing_lose_nothing(tmp_path):
    tally = Tally("syncthing")
    with SyncthingPair(tmp_path / "sync") as pair:
        devices = [
            Device("a", pair.a.folder / "library", tmp_path / "device-a"),
            Device("b", pair.b.folder / "library", tmp_path / "device-b"),
        ]
        tally.notes.append(f"syncthing pair started in {pair.startup_s:.1f} s")
        _workload(tmp_path, tally, devices, lambda: pair.wait_in_sync(AGREE_TIMEOUT))
    print(tally.report())
    tally.check()


@pytest.mark.parametrize("engine", ["rsync", "unison"])
def test_two_devices_copied_at_random_moments_lose_nothing(tmp_path, engine):
    tally = Tally(engine)
    a, b = tmp_path / "a" / "library", tmp_path / "b" / "library"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    devices = [Device("a", a, tmp_path / "device-a"), Device("b", b, tmp_path / "device-b")]
    rng = random.Random(2222)
    copies = {"all": 0, "while writing": 0}
    runner = Concurrent()

    def copy(direction: bool) -> None:
        writing = runner.busy > 0
        if engine == "rsync":
            # as the README says to use rsync with a shared library: a copy never brings a machine's
            # own folder back to it (with whole-folder copies both ways, an older copy of a machine's
            # own journal and journal.last was put back over them: its edits of that moment lost)
            receiver = devices[1] if direction else devices[0]
            copy_rsync(*((a, b) if direction else (b, a)), exclude=(f"/devices/{receiver.device_id}/",))
        else:
            sync_unison(a, b, tmp_path / "unison")
        copies["all"] += 1
        copies["while writing"] += writing

    def settle() -> None:
        copy(True)
        copy(False)

    imports, pool = _pool(tmp_path)
    # copies at random moments, each while a device writes: the imports too
    during = copy_while_writing(devices, runner, lambda: copy(rng.random() < 0.5))
    stop, errors = threading.Event(), []
    copier = in_background(during, stop, errors)
    try:
        assert all(import_at_once(devices, SEEDS[:2], runner))
    finally:
        stop.set()
        copier.join()
    assert not errors, errors
    agree(devices, settle, tally, "the imports", orders=False)
    edits, states = run_rounds(devices, settle, tally, pool, runner, during=during)
    tally_imports(imports, states, tally)
    tally_edits(edits, states, [conflicts_listing(d) for d in devices], tally)
    check_writers(devices, tally)
    tally.notes.append(f"{copies['all']} copies, {copies['while writing']} of them while a device was writing")
    print(tally.report())
    assert copies["while writing"] > 0, "the harness copied while a device wrote"
    tally.check()


def test_two_git_clones_pull_each_other_without_a_merge_conflict(tmp_path):
    tally = Tally("git")
    pair = GitPair(tmp_path / "git").start()
    devices = [Device("a", pair.a, tmp_path / "device-a"), Device("b", pair.b, tmp_path / "device-b")]

    def settle() -> None:
        for clone in (pair.a, pair.b, pair.a):
            if not pair.commit_pull_push(clone):
                raise SettleFailed(f"git merge conflict in {sorted(set(pair.conflicts))}")

    _workload(tmp_path, tally, devices, settle)
    tally.notes.append(f"merge conflicts: {sorted(set(pair.conflicts)) or 'none'}")
    print(tally.report())
    assert not pair.conflicts, tally.report()
    tally.check()


def test_a_field_set_on_two_devices_offline_is_kept_as_a_conflict(tmp_path):
    # two machines apart (Syncthing paused between them) set one paper's notes and status, and
    # give it a tag each; once they meet again, both show the same library: both tags, one note
    # and one status, the others kept under `papershelf conflicts` on both devices
    with SyncthingPair(tmp_path / "sync") as pair:
        a = Device("a", pair.a.folder / "library", tmp_path / "device-a")
        b = Device("b", pair.b.folder / "library", tmp_path / "device-b")
        assert a.run("import", str(SEEDS[0])).returncode == 0
        tally = Tally("syncthing, offline")
        agree([a, b], lambda: pair.wait_in_sync(AGREE_TIMEOUT), tally, "the import")
        assert not tally.disagreements, tally.report()
        pid = seed_ids(tmp_path / "scratch", SEEDS[0])[0]
        pair.disconnect()
        for device, note, status, tag in ((a, "noted on a", "reading", "from-a"), (b, "noted on b", "read", "from-b")):
            for args in (("note", pid, note), ("status", pid, status), ("tag", pid, "--add", tag)):
                res = device.run(*args)
                assert res.returncode == 0, res.stderr
        pair.reconnect()
        states = agree([a, b], lambda: pair.wait_in_sync(AGREE_TIMEOUT), tally, "after meeting again")
        assert not tally.disagreements, tally.report()
        paper = states[0]["papers"][pid]
        assert {"from-a", "from-b"} <= set(paper["tags"]), paper["tags"]
        assert paper["notes"] in ("noted on a", "noted on b")
        assert paper["status"] in ("reading", "read")
        other_note = "noted on b" if paper["notes"] == "noted on a" else "noted on a"
        other_status = "read" if paper["status"] == "reading" else "reading"
        for device in (a, b):
            res = device.run("conflicts")
            assert res.returncode == 0, res.stderr
            assert mentions(res.stdout, pid, other_note) and mentions(res.stdout, pid, other_status), res.stdout
        check_writers([a, b], tally)
        print(tally.report())
        assert not tally.two_writers and not tally.foreign_writes and not tally.stray_files, tally.report()
