"""The real sync engines work (issue 22): a plain file written on one side arrives on the other.

These tell a broken engine set-up apart from a store bug in the workloads
(test_sync_workloads.py). The Syncthing pair's start-up and one round-trip are timed and printed.
"""

from __future__ import annotations

import time

from sync.engines import GitPair, SyncthingPair, copy_rsync, sync_unison, tree, wait_for


def test_syncthing_pair_carries_a_file_both_ways(tmp_path):
    with SyncthingPair(tmp_path) as pair:
        t0 = time.monotonic()
        (pair.a.folder / "from-a.txt").write_text("hello from a\n")
        wait_for(lambda: (pair.b.folder / "from-a.txt").exists(), 60, "from-a.txt to arrive on b")
        (pair.b.folder / "sub").mkdir()
        (pair.b.folder / "sub" / "from-b.txt").write_text("hello from b\n")
        wait_for(lambda: (pair.a.folder / "sub" / "from-b.txt").exists(), 60, "sub/from-b.txt to arrive on a")
        round_trip = time.monotonic() - t0
        settle = pair.wait_in_sync(60)
        print(
            f"syncthing: start-up {pair.startup_s:.2f} s, round-trip a->b->a {round_trip:.2f} s, settle {settle:.2f} s"
        )
        assert (pair.b.folder / "from-a.txt").read_text() == "hello from a\n"
        assert (pair.a.folder / "sub" / "from-b.txt").read_text() == "hello from b\n"
        assert tree(pair.a.folder) == tree(pair.b.folder)


def test_rsync_copies_a_file_without_taking_back_a_newer_one(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    (a / "one.txt").write_text("one\n")
    copy_rsync(a, b)
    assert (b / "one.txt").read_text() == "one\n"
    (b / "two.txt").write_text("two\n")
    copy_rsync(b, a)
    copy_rsync(a, b)
    assert tree(a) == tree(b)
    assert (a / "two.txt").read_text() == "two\n"


def test_unison_syncs_both_ways(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from-a.txt").write_text("a\n")
    (b / "from-b.txt").write_text("b\n")
    sync_unison(a, b, tmp_path / "unison")
    assert (b / "from-a.txt").read_text() == "a\n"
    assert (a / "from-b.txt").read_text() == "b\n"
    (a / "from-a.txt").write_text("a, changed\n")
    sync_unison(a, b, tmp_path / "unison")
    assert (b / "from-a.txt").read_text() == "a, changed\n"


def test_git_clones_pull_each_others_files(tmp_path):
    pair = GitPair(tmp_path).start()
    (pair.a / "from-a.txt").write_text("a\n")
    (pair.b / "from-b.txt").write_text("b\n")
    assert pair.commit_pull_push(pair.a)
    assert pair.commit_pull_push(pair.b)
    assert pair.commit_pull_push(pair.a)
    assert (pair.b / "from-a.txt").read_text() == "a\n"
    assert (pair.a / "from-b.txt").read_text() == "b\n"


def test_git_pair_reports_a_merge_conflict(tmp_path):
    # the helper tells a conflict apart (the workloads assert there is none)
    pair = GitPair(tmp_path).start()
    (pair.a / "same.txt").write_text("a\n")
    (pair.b / "same.txt").write_text("b\n")
    assert pair.commit_pull_push(pair.a)
    assert not pair.commit_pull_push(pair.b)
    assert pair.conflicts == ["b: same.txt"]
    assert (pair.b / "same.txt").read_text() == "b\n"


def test_workload_counts_no_loss_where_nothing_is_lost(tmp_path):
    # the control for the workloads' bookkeeping: two devices on ONE folder, no sync engine (the
    # store's writer lock puts their commands one after the other): nothing may be counted lost
    from sync.workload import (
        SEEDS,
        Concurrent,
        Device,
        Tally,
        agree,
        import_at_once,
        run_rounds,
        seed_ids,
        tally_edits,
        tally_imports,
    )

    folder = tmp_path / "library"
    devices = [Device("a", folder, tmp_path / "device-a"), Device("b", folder, tmp_path / "device-b")]
    ids = [seed_ids(tmp_path / f"scratch-{i}", seed) for i, seed in enumerate(SEEDS[:2])]
    tally = Tally("one folder")
    runner = Concurrent()
    acks = import_at_once(devices, SEEDS[:2], runner)
    agree(devices, lambda: None, tally, "the imports", orders=False)
    edits, states = run_rounds(devices, lambda: None, tally, ids[0][:4] + ids[1][:4], runner, rounds=1)
    tally_imports({d.name: i for d, i, ok in zip(devices, ids, acks, strict=True) if ok}, states, tally)
    tally_edits(edits, states, [None, None], tally)
    print(tally.report())
    assert tally.acknowledged >= 6, tally.report()  # of 12: the lock may refuse some at the same moment
    assert tally.lost == 0, tally.report()
    assert not tally.disagreements, tally.report()
