"""A damaged or blocked search index, through the real entry points: damage
that keeps every file's size, a query that fails on it, `reindex` on a
read-only folder, and leftovers (`index` as a file, `index.old`, `index.new`)."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from conftest import copy_library, index_dir, local_dir, run_cli, seeded_index, snapshot_files
from papershelf.core.errors import SearchIndexDamagedError, SearchIndexError
from papershelf.core.library import Library
from papershelf.core.search import STATE_FILE, SearchIndex

QUERY = "diffusion"  # many matches, ranked: ids, lengths and postings all count


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """A seeded library with its index, and the undamaged answer to QUERY."""
    folder = seeded_index(tmp_path_factory.mktemp("damage") / "library")
    answer = run_cli("search", "--json", QUERY, data_dir=folder)
    assert answer.returncode == 0 and answer.stderr == "" and '"id"' in answer.stdout
    return folder, answer.stdout, local_dir(folder)


@pytest.fixture
def lib_dir(indexed, tmp_path):
    return copy_library(indexed[0], tmp_path / "library", indexed[2])


def index_file(folder: Path, kind: str) -> Path:
    index = index_dir(folder)
    if kind == "state":
        return index / STATE_FILE
    if kind == "toc":
        return next(index.glob("_MAIN_*.toc"))
    [path] = [p for p in index.iterdir() if p.name.endswith("." + kind)]
    return path


def damage(path: Path, how: str) -> None:
    """Overwrite bytes in place: the size stays what the state file recorded."""
    data = bytearray(path.read_bytes())
    n = len(data)
    start, end = (0, n) if how in ("zeroed", "garbled") else (n // 4, n // 2)
    rng = random.Random(n)
    data[start:end] = bytes(end - start) if how.startswith("zeroed") else rng.randbytes(end - start)
    assert bytes(data) != path.read_bytes()
    with open(path, "r+b") as f:
        f.write(data)
    assert path.stat().st_size == n


def library_files(folder: Path) -> dict[str, bytes]:
    return snapshot_files(folder)  # the index is not in it


@pytest.mark.parametrize(
    "kind, how",
    [
        ("pst", "zeroed"),
        ("pst", "garbled"),  # found by the query that reads them
        ("trm", "zeroed"),
        ("trm", "garbled"),
        ("id.col", "zeroed range"),
        ("id.col", "garbled range"),
        ("id.col", "zeroed"),
        ("_abstract_len.col", "zeroed range"),
        ("title_sort.col", "garbled range"),
        ("toc", "zeroed range"),
        ("toc", "garbled"),
        ("state", "zeroed"),
        ("state", "garbled"),
    ],
)
def test_search_on_a_damaged_index_rebuilds_it_and_answers(indexed, lib_dir, kind, how):
    _, undamaged, _ = indexed
    damage(index_file(lib_dir, kind), how)
    before = library_files(lib_dir)
    res = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert res.returncode == 0, res.stderr
    assert res.stderr == f"The search index in {index_dir(lib_dir)} was damaged; rebuilt it (372 papers).\n"
    assert res.stdout == undamaged
    assert library_files(lib_dir) == before  # the library itself is never touched
    again = run_cli("search", "--json", QUERY, data_dir=lib_dir)
    assert (again.returncode, again.stderr, again.stdout) == (0, "", undamaged)


def test_the_text_output_says_it_once_and_answers(lib_dir):
    damage(index_file(lib_dir, "pst"), "zeroed")
    res = run_cli("search", "author:thaman", data_dir=lib_dir)
    assert res.returncode == 0, res.stderr
    assert "RHB: Reward Hacking Benchmark" in res.stdout and "1 paper matches" in res.stdout
    assert res.stderr.count("was damaged; rebuilt it (372 papers).") == 1
    assert "Traceback" not in res.stderr and "rror" not in res.stderr


def test_a_query_failing_again_after_the_rebuild_is_an_error_not_a_loop(lib_dir):
    damage(index_file(lib_dir, "id.col"), "zeroed range")
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.damaged  # found at open, rebuilt
        damage(index_file(lib_dir, "pst"), "zeroed")  # and the disk damages it again
        with pytest.raises(SearchIndexError, match="was just rebuilt") as caught:
            ix.search(QUERY)
        assert not isinstance(caught.value, SearchIndexDamagedError)


def test_a_failed_query_marks_the_index_for_the_next_open(lib_dir):
    with Library.open(lib_dir) as lib:
        with SearchIndex(lib).open() as ix:
            assert not ix.rebuilt_because
            damage(index_file(lib_dir, "pst"), "zeroed")  # the disk damages it while it is open
            with pytest.raises(SearchIndexDamagedError, match=r"is damaged.*rebuilt when next opened"):
                ix.search(QUERY)
        with SearchIndex(lib).open() as ix:
            assert "a search failed" in ix.rebuilt_because and ix.damaged
            assert ix.search(QUERY).total > 10


def _library_on(mount, seeds, indexed: bool, monkeypatch) -> Path:
    """A library on `mount`, and this machine's state folder too (where its index lives)."""
    monkeypatch.setenv("PAPERSHELF_STATE_DIR", str(mount.path / "state"))
    folder = mount.path / "library"
    with Library.open(folder) as lib:
        lib.import_files(seeds[:1])
        if indexed:
            SearchIndex(lib).open().close()
    return folder


@pytest.mark.parametrize("indexed_before", [True, False])
def test_reindex_on_a_read_only_folder_says_so(tmpfs, seeds, indexed_before, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root)")
    with tmpfs("8m") as mount:
        folder = _library_on(mount, seeds, indexed_before, monkeypatch)
        mount.remount_readonly()
        before = snapshot_files(folder)
        res = run_cli("reindex", data_dir=folder)
        assert res.returncode == 1
        assert res.stderr == (
            f"papershelf: The search index in {index_dir(folder)} could not be built: "
            "Read-only file system. Your library is unaffected; searching needs that "
            "folder to be writable.\n"
        )
        assert snapshot_files(folder) == before


def test_search_on_a_damaged_index_in_a_read_only_folder_says_so(tmpfs, seeds, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root)")
    with tmpfs("8m") as mount:
        folder = _library_on(mount, seeds, True, monkeypatch)
        damage(index_file(folder, "pst"), "zeroed")
        mount.remount_readonly()
        res = run_cli("search", "learning", data_dir=folder)
        assert res.returncode == 1 and "Traceback" not in res.stderr
        # every file is checksummed at open now, so the damage is found there and the rebuild refused
        assert res.stderr.startswith(f"papershelf: The search index in {index_dir(folder)} ")
        assert "Read-only file system" in res.stderr and "Your library is unaffected" in res.stderr


@pytest.mark.parametrize(
    "leftover", ["index as a file", "index.old file", "index.old folder", "index.new file", "index.new folder"]
)
def test_leftovers_never_block_reindex(lib_dir, leftover):
    index, local = index_dir(lib_dir), local_dir(lib_dir)
    if leftover == "index as a file":
        shutil.rmtree(index)
        index.write_bytes(b"\x00" * 100)
    else:
        path = local / leftover.split()[0]
        if leftover.endswith("file"):
            path.write_text("left over")
        else:
            shutil.copytree(index, path)
    for _ in range(2):
        res = run_cli("reindex", data_dir=lib_dir)
        assert res.returncode == 0, res.stderr
        assert "Indexed 372 papers in" in res.stderr and "Traceback" not in res.stderr
    left = sorted(p.name for p in local.iterdir() if p.name.startswith("index"))
    if leftover.endswith("folder"):  # a copy of an index: ours, removed
        assert left == ["index", "index.rebuild.lock"]
    else:  # a file is nobody's index: set aside, never deleted
        [aside] = [name for name in left if ".damaged-" in name]
        assert left == sorted(["index", "index.rebuild.lock", aside])
        assert (local / aside).read_bytes() in (b"left over", b"\x00" * 100)
    res = run_cli("search", "author:thaman", data_dir=lib_dir)
    assert res.returncode == 0 and res.stderr == "" and "RHB: Reward Hacking Benchmark" in res.stdout


def test_an_index_that_is_a_file_is_rebuilt_by_search(lib_dir):
    shutil.rmtree(index_dir(lib_dir))
    index_dir(lib_dir).write_text("not a folder")
    res = run_cli("search", "author:thaman", data_dir=lib_dir)
    assert res.returncode == 0 and "RHB: Reward Hacking Benchmark" in res.stdout
    assert index_dir(lib_dir).is_dir() and not (local_dir(lib_dir) / "index.old").exists()


@pytest.mark.gui
def test_the_window_rebuilds_an_index_a_search_finds_damaged(qtbot, lib_dir, settings):
    from conftest import Opened
    from test_gui import titles_shown, widgets

    damage(index_file(lib_dir, "pst"), "zeroed")
    opened = Opened(qtbot, lib_dir).open()
    try:
        win = opened.win
        # the first search (facet counts read postings) fails: the window rebuilds the index
        qtbot.waitUntil(lambda: win.index is not None and bool(win.index.damaged), timeout=60_000)
        box = widgets(win)[0]
        qtbot.keyClicks(box, "author:thaman")
        opened.settle()
        assert len(titles_shown(win)) == 1 and titles_shown(win)[0].startswith("RHB: Reward Hacking Benchmark")
        assert "not ready" not in win.findChild(object, "resultLabel").text()
    finally:
        opened.close()


@pytest.mark.parametrize("query", ['source:"a b"', 'tags:"a,b"', 'lists:"to read, ml"'])
def test_a_query_whoosh_cannot_run_is_no_damage(lib_dir, query):
    """A phrase on a field without positions: searched as words, the index left alone."""
    for _ in range(2):
        res = run_cli("search", query, data_dir=lib_dir)
        assert res.returncode == 0 and "damaged" not in res.stderr and "rebuilt" not in res.stderr, res.stderr
        assert "read as plain words" in res.stdout


@pytest.mark.parametrize("where", ["library folder", "index's folder"])
def test_a_folder_of_the_users_named_like_a_leftover_is_never_deleted(lib_dir, where):
    """In the library folder (where an earlier version kept its index) it is left as it is;
    beside the index, on this machine, it is set aside."""
    base = lib_dir if where == "library folder" else local_dir(lib_dir)
    mine = base / "index.old"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    assert run_cli("reindex", data_dir=lib_dir).returncode == 0
    [aside] = [p for p in base.iterdir() if p.name.startswith("index.old")]
    assert (aside / "notes.txt").read_text() == "my notes"
    assert (aside == mine) == (where == "library folder")
