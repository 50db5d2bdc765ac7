"""The index's checksums kept by stat key (`index.checked.json`, core/search/state.py `Checked`) and
the ids of a few hits read one by one (evaluator.py): a search answers as before, a damaged index is
still found and rebuilt through the installed command, and a damaged, stale or forged record costs a
full check, never a wrong answer."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import copy_library, index_dir, local_dir, run_cli, seeded_index
from papershelf.core.library import Library
from papershelf.core.search import STATE_FILE, SearchIndex
from papershelf.core.search.state import CHECKED_SUFFIX, SETTLE_NS
from test_index_damage import QUERY, damage, index_file


def checked_record(folder: Path) -> Path:
    return local_dir(folder) / ("index" + CHECKED_SUFFIX)


def state(folder: Path) -> dict:
    return json.loads((index_dir(folder) / STATE_FILE).read_text())


def wait_settled(folder: Path) -> None:
    """Until every index file changed more than SETTLE_NS ago (only then is its checksum kept)."""
    index = index_dir(folder)
    newest = max(p.stat().st_ctime_ns for p in index.iterdir())
    deadline = time.monotonic() + 30
    while time.time_ns() - newest <= SETTLE_NS:
        assert time.monotonic() < deadline, "the clock did not move on"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    folder = seeded_index(tmp_path_factory.mktemp("checked") / "library")
    answer = run_cli("search", "--json", QUERY, data_dir=folder)
    assert answer.returncode == 0 and answer.stderr == ""
    return folder, answer.stdout, local_dir(folder)


@pytest.fixture
def lib_dir(indexed, tmp_path):
    """A copy whose record vouches for every file of its index (a search made it)."""
    folder = copy_library(indexed[0], tmp_path / "library", indexed[2])
    wait_settled(folder)
    res = run_cli("search", "--json", QUERY, data_dir=folder)
    assert (res.returncode, res.stderr, res.stdout) == (0, "", indexed[1])
    return folder


def test_a_search_keeps_every_checksum_it_found_right_and_the_next_one_answers_the_same(indexed, lib_dir):
    record = json.loads(checked_record(lib_dir).read_text())
    crcs = state(lib_dir)["crc32"]
    assert set(record["files"]) == set(crcs)
    for name, (ino, size, mtime, ctime, crc) in record["files"].items():
        st = (index_dir(lib_dir) / name).stat()
        assert [ino, size, mtime, ctime, crc] == [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, crcs[name]]
    kept = checked_record(lib_dir).stat()
    again = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert (again.returncode, again.stderr, again.stdout) == (0, "", indexed[1])
    assert checked_record(lib_dir).stat().st_mtime_ns == kept.st_mtime_ns  # nothing new to keep: not written


@pytest.mark.parametrize(
    "kind, how",
    [
        ("pst", "zeroed"),
        ("trm", "garbled"),
        ("id.col", "zeroed range"),
        ("_abstract_len.col", "zeroed range"),
        ("title_sort.col", "garbled range"),
        ("toc", "garbled range"),
    ],
)
def test_a_file_damaged_after_its_checksum_was_kept_is_found_and_rebuilt(indexed, lib_dir, kind, how):
    path = index_file(lib_dir, kind)
    was = path.stat()
    damage(path, how)  # in place, the same size,
    os.utime(path, ns=(was.st_atime_ns, was.st_mtime_ns))  # its time put back (as `cp -p` does): only its ctime tells
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (was.st_size, was.st_mtime_ns)
    res = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"The search index in {index_dir(lib_dir)} was damaged; rebuilt it (372 papers).\n"
    assert res.stdout == indexed[1]
    assert not checked_record(lib_dir).exists()  # the rebuilt index's files are other files
    again = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert (again.returncode, again.stderr, again.stdout) == (0, "", indexed[1])


@pytest.mark.parametrize(
    "record",
    [
        b"",  # a crash between its creation and its write
        b"{not json",
        b'{"version": 999, "files": {}}',
        b'{"version": 1, "files": []}',
        b"[" * 200_000,  # nested too deep for the JSON reader (RecursionError): no damage of the index
        "wrong checksums",
        "wrong stat keys",
    ],
)
def test_a_damaged_or_stale_record_costs_a_full_check_not_a_wrong_answer(indexed, lib_dir, record):
    path = checked_record(lib_dir)
    if record == "wrong checksums":
        data = json.loads(path.read_text())
        data["files"] = {name: [*entry[:4], entry[4] ^ 1] for name, entry in data["files"].items()}
        record = json.dumps(data).encode()
    elif record == "wrong stat keys":
        data = json.loads(path.read_text())
        data["files"] = {name: [entry[0] + 1, *entry[1:]] for name, entry in data["files"].items()}
        record = json.dumps(data).encode()
    path.write_bytes(record)
    res = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert (res.returncode, res.stderr, res.stdout) == (0, "", indexed[1])  # checked in full: intact, no rebuild
    assert set(json.loads(path.read_text())["files"]) == set(state(lib_dir)["crc32"])  # kept again, right


def test_damage_the_record_vouches_for_is_still_found_when_a_read_fails(indexed, lib_dir):
    """Damage below the file system changes no stat key (here: the record forged to vouch for the
    damaged file as it is now): the open trusts it, the query's read fails on it, and that failure
    checks every file, finds it, and the command rebuilds and answers."""
    pst = index_file(lib_dir, "pst")
    damage(pst, "zeroed")
    path = checked_record(lib_dir)
    data = json.loads(path.read_text())
    st = pst.stat()
    data["files"][pst.name] = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, state(lib_dir)["crc32"][pst.name]]
    path.write_text(json.dumps(data))
    res = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"The search index in {index_dir(lib_dir)} was damaged; rebuilt it (372 papers).\n"
    assert res.stdout == indexed[1]


def test_a_record_that_cannot_be_written_leaves_every_file_checked_at_each_search(indexed, lib_dir):
    path = checked_record(lib_dir)
    path.unlink()
    path.mkdir()  # in its place, a folder: the record cannot be written (as in a read-only state folder)
    for _ in range(2):
        res = run_cli("search", "--json", QUERY, data_dir=lib_dir)
        assert (res.returncode, res.stderr, res.stdout) == (0, "", indexed[1])
    assert path.is_dir() and not any(path.iterdir())
    assert not [p.name for p in local_dir(lib_dir).iterdir() if p.name.endswith(".tmp")]  # nothing left behind


def test_the_ids_of_a_few_hits_are_those_of_the_whole_id_column(indexed, tmp_path):
    """Through the command: the first rows of a short answer (ids read one by one) are those of a long
    one (the whole column read); in-process, over segments with deletions, every document's id both ways."""
    folder = copy_library(indexed[0], tmp_path / "library", indexed[2])
    short = json.loads(run_cli("search", "--json", "--limit", "3", "learning", data_dir=folder).stdout)
    long = json.loads(run_cli("search", "--json", "--limit", "400", "learning", data_dir=folder).stdout)
    assert len(long) * 16 > 372  # more than one document in 16: the whole column
    assert [p["id"] for p in short] == [p["id"] for p in long[:3]]
    with Library.open(folder) as lib, SearchIndex(lib).open() as ix:
        ids = list(lib.ids())
        rng = random.Random(5)
        for _ in range(3):  # separate commits: new segments, deletions in the old
            lib.add_tags(rng.sample(ids, 20), ["checked"])
            assert ix.flush()
        ix._get_evaluator()
        ix._segments.clear()  # nothing read yet: a new evaluator, new segment data
        ix._evaluator = None
        ev = ix._get_evaluator()
        assert len(ev.leaves) > 1 and not ev.live.all()
        docs = np.flatnonzero(ev.live).astype(np.int64)
        few = np.array(sorted(rng.sample(docs.tolist(), 10), reverse=True), dtype=np.int64)  # any order
        few_ids = ev.paper_ids(few)
        one_by_one = [ev.paper_ids(np.array([d]))[0] for d in docs.tolist()]
        assert ev._paper_ids is None and all(data._ids is None for data, _ in ev.leaves)  # each read alone
        whole = ev.paper_ids(docs)
        assert ev._paper_ids is not None  # the whole column
        assert one_by_one == whole
        assert sorted(whole) == sorted(ids)
        assert few_ids == [whole[int(np.searchsorted(docs, d))] for d in few.tolist()]


def test_a_second_open_reads_no_file_the_record_vouches_for(indexed, lib_dir, monkeypatch):
    """What the record is for: an open after a search reads none of the index's files for their
    checksums (the whole check read every one of them at every open)."""
    from papershelf.core.search import state as index_state

    read: list[str] = []
    real = index_state._crc_is

    def counted(path, expected, checked):
        read.append(Path(path).name)
        return real(path, expected, checked)

    monkeypatch.setattr(index_state, "_crc_is", counted)
    with Library.open(lib_dir, readonly=True) as lib, SearchIndex(lib).open() as ix:
        assert ix.search(QUERY) is not None
    assert read == []
    checked_record(lib_dir).unlink()
    with Library.open(lib_dir, readonly=True) as lib, SearchIndex(lib).open() as ix:
        assert ix.search(QUERY) is not None
    assert sorted(read) == sorted(state(lib_dir)["crc32"])  # without it: every file, as before
