"""The read view (core/store/readview.py, issue 25): `search` and `show` read only the papers
they need, through a map kept in this machine's folder, and answer exactly as the whole load
does: after edits, after another process's edit, another device's, and a library file that
was damaged or replaced."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from conftest import SEEDS, cli_ok, local_dir, run_cli, store_dir
from papershelf.core.errors import StoreCorruptError, StoreUnreadableError
from papershelf.core.library import Library
from papershelf.core.store import machine, readview

WAIT_S = 60.0


def _view(folder: Path, env: dict | None = None) -> Path:
    """The read view's file, of this test's device or of the one whose configuration `env` names."""
    if env and "PAPERSHELF_CONFIG_DIR" in env:
        device = machine.device_id(Path(env["PAPERSHELF_CONFIG_DIR"]))
        return machine.local_dir(folder, device) / readview.VIEW
    return local_dir(folder) / readview.VIEW


def _full_then_lazy(folder: Path, *args: str, env: dict | None = None) -> tuple[str, str]:
    """The command's output from the whole load (no view), then through the view it wrote.

    A view is written once the store files are `SETTLE_NS` old: the whole load is run until
    one is (each of those runs is a whole load); the next run must then use it, not write it
    again (the view's file is the same one after it)."""
    view = _view(folder, env)
    view.unlink(missing_ok=True)
    deadline = time.monotonic() + WAIT_S
    full = cli(folder, *args, env=env)
    while not view.exists():
        assert time.monotonic() < deadline, "no read view was written"
        assert cli(folder, *args, env=env) == full
    inode = view.stat().st_ino
    lazy = cli(folder, *args, env=env)
    assert view.stat().st_ino == inode, "the second run loaded the library whole"
    return full, lazy


def cli(folder: Path, *args: str, env: dict | None = None) -> str:
    res = run_cli(*args, data_dir=folder, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    return re.sub(r"\(\d+ ms\)", "(… ms)", res.stdout + res.stderr)  # how long a search took


@pytest.fixture
def edited(data_dir: Path) -> tuple[Path, list[str]]:
    """The samples imported, folded into the device's library file, then edited through the
    journal: papers read from the library file and papers the journal changed, both."""
    cli_ok("import", *map(str, SEEDS), data_dir=data_dir)
    with Library.open(data_dir) as lib:
        lib.compact()
        ids = lib.ids()
    cli_ok("tag", ids[0], ids[1], "--add", "ml,theory", data_dir=data_dir)
    cli_ok("status", ids[2], "read", data_dir=data_dir)
    cli_ok("note", ids[1], "a note with «quotes» and\ttabs", data_dir=data_dir)
    cli_ok("delete", ids[3], "--yes", data_dir=data_dir)
    cli_ok("list-add", "queue", ids[1], ids[4], data_dir=data_dir)
    cli_ok("search", "x", data_dir=data_dir)  # the index built (its first build is said once)
    return data_dir, ids


QUERIES = [
    ("show", "--json", "{0}"),  # edited: as merged, kept in the view
    ("show", "--json", "{1}"),
    ("show", "--json", "{5}"),  # as in the library file
    ("show", "{1}"),
    ("search", "--json", "learning"),
    ("search", "--json", "--tag", "ml", "network"),
    ("search", "--json", "--list", "queue", "a"),
    ("search", "--json", "--status", "read", "the"),
    ("search", "--sort", "title", "model"),
]


@pytest.mark.parametrize("query", QUERIES, ids=[" ".join(q) for q in QUERIES])
def test_the_view_answers_as_the_whole_load(edited, query):
    folder, ids = edited
    args = [a.format(*ids) for a in query]
    full, lazy = _full_then_lazy(folder, *args)
    assert lazy == full
    assert full.strip()


LISTS = [(), ("--tag", "ml"), ("--status", "read"), ("--list", "queue"), ("--area", "nowhere")]


@pytest.mark.parametrize("filters", LISTS, ids=[" ".join(f) or "all" for f in LISTS])
def test_list_json_streams_what_it_printed_whole(edited, filters):
    """`list --json` writes one paper at a time, through the view: the bytes are those of the
    whole array written at once (orjson, indented), and the same as the whole load's."""
    folder, _ = edited
    full, lazy = _full_then_lazy(folder, "list", "--json", *filters)
    assert lazy == full
    papers = json.loads(full)
    assert full.encode() == orjson.dumps(papers, option=orjson.OPT_INDENT_2) + b"\n"
    assert bool(papers) == (filters != ("--area", "nowhere"))


def test_a_deleted_paper_and_an_unknown_one_are_refused_in_the_same_words(edited):
    folder, ids = edited
    for ref in (ids[3], "zzz-none"):
        _full_then_lazy(folder, "show", ids[0])
        res = run_cli("show", ref, data_dir=folder)
        assert res.returncode == 2 and "No paper" in res.stderr
        _view(folder).unlink()
        assert run_cli("show", ref, data_dir=folder).stderr == res.stderr


def test_another_process_edit_is_read_at_once(edited):
    folder, ids = edited
    _full_then_lazy(folder, "show", "--json", ids[5])
    cli_ok("tag", ids[5], "--add", "fresh", data_dir=folder)  # the journal changes: the view is not used
    assert "fresh" in json.loads(cli(folder, "show", "--json", ids[5]).split("\n\n")[0])["tags"]
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[5])
    assert lazy == full and "fresh" in full


def test_a_compaction_by_another_process_is_read_at_once(edited):
    folder, ids = edited
    _full_then_lazy(folder, "show", "--json", ids[0])
    with Library.open(folder) as lib:
        lib.set_status([ids[0]], "reading")
        lib.compact()  # a new library file: the view's offsets are another file's
    assert '"status": "reading"' in cli(folder, "show", "--json", ids[0])
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[0])
    assert lazy == full and '"status": "reading"' in full


def test_a_damaged_library_file_is_refused_as_the_whole_load_refuses_it(edited):
    folder, ids = edited
    _full_then_lazy(folder, "show", "--json", ids[5])
    path = store_dir(folder) / "library.jsonl"
    data = bytearray(path.read_bytes())
    at = data.index(ids[5].encode()) + 20
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    res = run_cli("show", "--json", ids[5], data_dir=folder)
    assert res.returncode == 1
    assert "is damaged (its checksum does not match)" in res.stderr and "papershelf recover" in res.stderr
    _view(folder).unlink(missing_ok=True)
    assert run_cli("show", "--json", ids[5], data_dir=folder).stderr == res.stderr


def test_a_library_file_put_back_from_elsewhere_is_read_as_it_is(edited, tmp_path):
    folder, ids = edited
    path = store_dir(folder) / "library.jsonl"
    kept = tmp_path / "kept.jsonl"
    kept.write_bytes(path.read_bytes())
    _full_then_lazy(folder, "show", "--json", ids[6])
    with Library.open(folder) as lib:
        lib.set_notes(ids[6], "later")
        lib.compact()
    _full_then_lazy(folder, "show", "--json", ids[6])
    os.replace(kept, path)  # a user (or a sync tool) puts the older file back
    res = run_cli("show", "--json", ids[6], data_dir=folder)
    whole = (res.returncode, res.stdout, res.stderr)
    _view(folder).unlink(missing_ok=True)
    res = run_cli("show", "--json", ids[6], data_dir=folder)
    assert (res.returncode, res.stdout, res.stderr) == whole


def test_another_device_of_a_shared_library_is_read(edited, tmp_path):
    folder, ids = edited
    other = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "device-b")}
    _full_then_lazy(folder, "show", "--json", ids[7])
    cli_ok_env = run_cli("tag", ids[7], "--add", "from-b", data_dir=folder, env=other)
    assert cli_ok_env.returncode == 0, cli_ok_env.stderr
    assert "from-b" in cli(folder, "show", "--json", ids[7])  # device B's new files: the whole load
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[7])
    assert lazy == full and "from-b" in full
    word = max(json.loads(full)["title"].split(), key=len)
    full, lazy = _full_then_lazy(folder, "search", "--json", word)  # (a read-only open does not update the index)
    assert lazy == full and ids[7] in full
    # and device B's own read view, of A's files and its own
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[7], env=other)
    assert lazy == full and "from-b" in full


# ---- in this process (the view's reader and writer) -------------------------------------


def _written(folder: Path) -> Library:
    deadline = time.monotonic() + WAIT_S
    while True:
        lib = Library.open(folder, readonly=True, lazy=True)
        if isinstance(lib._store, readview.ViewStore):
            return lib
        lib.close()
        assert time.monotonic() < deadline, "no read view was written"


def test_the_view_reads_every_paper_as_the_whole_load(edited):
    folder, ids = edited
    with Library.open(folder, readonly=True) as whole:
        expected = [p.to_dict() for p in whole.papers()]
        tags, lists, generation = whole.tag_counts(), whole.lists(), whole.generation
    lib = _written(folder)
    with lib:
        assert [p.to_dict() for p in lib.papers()] == expected
        assert len(lib.papers()) == len(lib) == len(expected)  # type: ignore[arg-type]
        assert lib.ids() == [d["id"] for d in expected]
        assert lib.tag_counts() == tags and lib.lists() == lists and lib.generation == generation
        assert ids[0] in lib and ids[3] not in lib and 3 not in lib
        assert lib.find(ids[3]) is None and lib.get(ids[0]).tags == ["ml", "theory"]
        assert lib.resolve(ids[5][:6]) == ids[5]
        assert lib.pdfs_to_read() == 0 and lib.notices == []
        assert lib.unchanged_on_disk()
        cli_ok("tag", ids[5], "--add", "moved", data_dir=folder)
        assert not lib.unchanged_on_disk()


def test_a_line_damaged_behind_the_views_back_is_named(edited):
    """A line changed in place without the view noticing (as a disk flipping a bit would):
    the paper read through it fails its checksum, and is said as the whole load says it."""
    folder, ids = edited
    lib = _written(folder)
    path = store_dir(folder) / "library.jsonl"
    with lib, open(path, "r+b") as f:
        data = f.read()
        line = data[: data.index(ids[5].encode())].count(b"\n") + 1
        f.seek(data.index(ids[5].encode()) + 30)
        f.write(b"#")  # the same file, read through the descriptor the view opened
        f.flush()
        with pytest.raises(StoreCorruptError, match=f"line {line} is damaged"):
            lib.get(ids[5])


def test_a_view_is_not_written_from_files_changed_a_moment_ago(edited):
    folder, _ = edited
    _view(folder).unlink(missing_ok=True)
    keys = readview.input_keys(folder)
    assert keys is not None
    with Library.open(folder, readonly=True) as lib:
        assert not readview.write_view(lib._store, keys | {"x": [0, 0, 0, time.time_ns()]})
        assert not readview.write_view(lib._store, keys | {"x": [0, 0, 0, 0]})  # not as the files are now
    assert not _view(folder).exists()
    assert readview.input_keys(folder / "missing") is None


def test_a_damaged_view_is_never_an_answer(edited):
    """The view is this machine's cache: one that does not open is passed over (the whole load
    answers and writes it again); one that fails while read is removed, and said in words."""
    folder, ids = edited
    lib = _written(folder)
    with lib:
        expected = lib.get(ids[5]).to_dict()
        lib._store.papers._db.close()  # as a view damaged under the reader would fail
        with pytest.raises(StoreUnreadableError, match=r"read view .* could not be read.*run the command again"):
            lib.get(ids[6])
    assert not _view(folder).exists()
    _written(folder).close()
    _view(folder).write_bytes(b"not a database at all" * 100)
    with Library.open(folder, readonly=True, lazy=True) as lib:
        assert not isinstance(lib._store, readview.ViewStore)
        assert lib.get(ids[5]).to_dict() == expected


# ---- a view that cannot be trusted or used (review findings) -----------------------------

# the command as it runs where the os module has no pread (Windows): the same installed package
NO_PREAD = (
    "import os, runpy, sys; del os.pread; sys.argv[0] = 'papershelf'; "
    "runpy.run_module('papershelf', run_name='__main__', alter_sys=True)"
)


def _meta(view: Path, sql: str, *args: object) -> None:
    db = sqlite3.connect(view)
    with db:
        db.execute(sql, args)
    db.close()


def _answer(res: subprocess.CompletedProcess) -> tuple[int, str]:
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, re.sub(r"\(\d+ ms\)", "(… ms)", res.stdout + res.stderr)


def _no_pread(folder: Path, *args: str) -> tuple[int, str]:
    """The command's exit code and output from a process that cannot use the view: the whole load's."""
    cmd = [sys.executable, "-c", NO_PREAD, "--data-dir", str(folder), *args]
    return _answer(subprocess.run(cmd, capture_output=True, text=True, timeout=120))


def test_without_pread_the_whole_load_answers(edited):
    """Windows has no os.pread: the view is neither read nor written there, and the command
    answers as the whole load does (never a traceback)."""
    folder, ids = edited
    _full_then_lazy(folder, "show", "--json", ids[5])  # a current view, which it must not use
    inode = _view(folder).stat().st_ino
    for args in (("show", "--json", ids[5]), ("show", "--json", ids[0]), ("list", "--json")):
        code, out = _no_pread(folder, *args)
        assert code == 0 and out.strip() and out == cli(folder, *args)
    assert _view(folder).stat().st_ino == inode
    _view(folder).unlink()
    assert ids[5] in _no_pread(folder, "show", ids[5])[1]
    assert not _view(folder).exists()  # (the files are settled: this version would have written it)


@pytest.mark.parametrize(("key", "value"), [("papershelf", "0.0.1"), ("schema", 999), ("version", 1)])
def test_a_view_written_by_another_version_is_passed_over(edited, key, value):
    """A view another Papershelf (or store schema) wrote is not trusted: here it even says a
    paper is what it is not, and the answer is the library's all the same; the view is then
    written again by this version."""
    folder, ids = edited
    full, _ = _full_then_lazy(folder, "show", "--json", ids[0])
    view = _view(folder)
    _meta(view, "UPDATE papers SET body=? WHERE id=?", orjson.dumps({"id": ids[0], "title": "A LIE"}), ids[0])
    _meta(view, "INSERT OR REPLACE INTO meta VALUES (?, ?)", key, json.dumps(value))
    assert cli(folder, "show", "--json", ids[0]) == full
    db = sqlite3.connect(view)
    made = dict(db.execute("SELECT key, value FROM meta").fetchall())
    db.close()
    assert json.loads(made[key]) == readview.MADE_BY[key]  # written again, by this version
    assert _full_then_lazy(folder, "show", "--json", ids[0]) == (full, full)


@pytest.mark.parametrize("key", ["count", "lists", "inputs", "generation", "seq", "notices", "waiting", "device"])
def test_a_view_missing_a_meta_row_is_passed_over(edited, key):
    folder, ids = edited
    full, _ = _full_then_lazy(folder, "show", "--json", ids[1])
    _meta(_view(folder), "DELETE FROM meta WHERE key=?", key)
    assert cli(folder, "show", "--json", ids[1]) == full
    _meta(_view(folder), "UPDATE meta SET value='[1, 2]' WHERE key='lists'")  # there, but of another shape
    _meta(_view(folder), "UPDATE meta SET value='\"x\"' WHERE key='inputs'")
    assert cli(folder, "show", "--json", ids[1]) == full


def test_a_state_folder_named_with_uri_characters_holds_a_view_that_is_used(edited, tmp_path, monkeypatch):
    """sqlite3 opens the view through a `file:` URI: a state folder whose name holds '?', '#'
    or '%' is that folder (the second run must read the view the first one wrote)."""
    folder, ids = edited
    monkeypatch.setenv("PAPERSHELF_STATE_DIR", str(tmp_path / "state ?a=b#c%41%"))
    assert "?a=b#c%41%" in str(_view(folder))
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[1])
    assert lazy == full and '"ml"' in full
    full, lazy = _full_then_lazy(folder, "list", "--json")
    assert lazy == full


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in _view(folder).parent.glob(f"{readview.VIEW}.*{readview.TEMP}"))


def test_a_view_left_half_written_by_a_killed_process_is_removed_on_the_next_write(edited):
    folder, ids = edited
    full, _ = _full_then_lazy(folder, "show", ids[2])
    _view(folder).unlink()
    local = _view(folder).parent
    stale, fresh = local / f"{readview.VIEW}.999999{readview.TEMP}", local / f"{readview.VIEW}.888888{readview.TEMP}"
    stale.write_bytes(b"x" * 4096)  # a process killed while it wrote its view, an hour ago
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))
    fresh.write_bytes(b"y" * 4096)  # another process writing its own right now
    assert _full_then_lazy(folder, "show", ids[2]) == (full, full)
    assert _temps(folder) == [fresh.name]


class _Interrupted(dict):
    """A store's papers whose reading is stopped by Ctrl-C halfway."""

    def items(self):  # type: ignore[override]
        for n, item in enumerate(super().items()):
            if n == 3:
                raise KeyboardInterrupt
            yield item


def test_a_view_write_stopped_by_ctrl_c_leaves_nothing_behind(edited):
    folder, ids = edited
    _full_then_lazy(folder, "show", ids[0])  # (once a view is written, the files are settled)
    _view(folder).unlink()
    keys = readview.input_keys(folder)
    assert keys is not None and readview.settled(keys, time.time_ns())
    with Library.open(folder, readonly=True) as lib:
        store = lib._store
        store.papers = _Interrupted(store.papers)
        with pytest.raises(KeyboardInterrupt):
            readview.write_view(store, keys)
        assert _temps(folder) == [] and not _view(folder).exists()
        store.papers = dict(store.papers)
        assert readview.write_view(store, keys) and _temps(folder) == []


# ---- after this process's own edit ---------------------------------------------------------


def _current(folder: Path, env: dict | None = None) -> bool:
    """Whether the view's inputs are the store files as they are now (the next command reads it)."""
    db = sqlite3.connect(_view(folder, env))
    (inputs,) = db.execute("SELECT value FROM meta WHERE key='inputs'").fetchone()
    db.close()
    return json.loads(inputs) == readview.input_keys(folder)


def _answers_as_the_whole_load(folder: Path, ids: list[str], extra: tuple[tuple[str, ...], ...] = ()) -> None:
    """Every query answered through the view (which no run writes again) as by the whole load."""
    inode = _view(folder).stat().st_ino
    queries = [tuple(a.format(*ids) for a in q) for q in QUERIES] + [("list", "--json"), *extra]
    for args in queries:
        assert _answer(run_cli(*args, data_dir=folder)) == _no_pread(folder, *args), args
    assert _view(folder).stat().st_ino == inode, "a query loaded the library whole"


EDITS = [
    ("tag", "{5}", "{0}", "--add", "fresh,ml"),
    ("tag", "{0}", "--remove", "theory"),
    ("status", "{5}", "reading"),
    ("note", "{6}", "a «new» note"),
    ("delete", "{5}", "--yes"),
    ("list-add", "queue", "{5}", "{2}"),
    ("list-remove", "queue", "{1}"),
    ("set", "{5}", "title=A Title Set By Hand"),
    ("tags", "--rename", "ml", "machine-learning"),
]


@pytest.mark.parametrize("edit", EDITS, ids=[" ".join(e) for e in EDITS])
def test_an_edit_brings_the_view_up_to_it(edited, edit):
    """The editing process refreshes the view after its own edit: the next read-only command
    reads it (no whole load), and answers exactly as the whole load does, edited papers too."""
    folder, ids = edited
    _full_then_lazy(folder, "show", ids[0])
    cli_ok(*(a.format(*ids) for a in edit), data_dir=folder)
    assert _current(folder)
    _answers_as_the_whole_load(folder, ids, (("show", "--json", ids[5]), ("show", "--json", ids[6])))


def test_edits_one_after_another_an_import_a_delete_and_its_undo(edited, tmp_path):
    """New papers, a paper deleted and brought back (it moves to the end of the library's
    order), several edits in a row: each leaves the view as the whole load would write it."""
    folder, ids = edited
    _full_then_lazy(folder, "show", ids[0])
    bib = tmp_path / "new.bib"
    bib.write_text(
        "@article{fresh1, title={A Fresh Paper On Networks}, author={Doe, Jane}, year={2024}}\n"
        "@article{fresh2, title={Another Fresh Learning Paper}, author={Roe, Rick}, year={2023}}\n"
    )
    steps = [
        ("import", str(bib)),
        ("delete", ids[6], "--yes"),
        ("undo",),
        ("tag", ids[6], "--add", "back"),
        ("rate", ids[7], "4"),
    ]
    for step in steps:
        cli_ok(*step, data_dir=folder)
        assert _current(folder), step
        _answers_as_the_whole_load(folder, ids, (("show", "--json", ids[6]), ("search", "--json", "fresh")))
    assert '"back"' in cli(folder, "show", "--json", ids[6])


def test_another_device_editing_meanwhile_means_the_whole_load(edited, tmp_path):
    """Another device's synced files changing while this process edits: its view is not
    refreshed (what it merged is not what is on disk now); the next command loads the library
    whole and reads both edits."""
    folder, ids = edited
    other = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "device-b")}
    res = run_cli("tag", ids[1], "--add", "seen-by-b", data_dir=folder, env=other)  # device B exists
    assert res.returncode == 0, res.stderr
    _full_then_lazy(folder, "show", ids[0])
    with Library.open(folder) as lib:  # this device's writer, open
        res = run_cli("tag", ids[7], "--add", "from-b", data_dir=folder, env=other)  # B's file arrives
        assert res.returncode == 0, res.stderr
        lib.add_tags([ids[5]], ["from-a"])
    assert not _current(folder)
    inode = _view(folder).stat().st_ino
    shown = cli(folder, "show", "--json", ids[7])
    assert "from-b" in shown and (0, shown) == _no_pread(folder, "show", "--json", ids[7])
    assert "from-a" in cli(folder, "show", "--json", ids[5])
    assert not _view(folder).exists() or _view(folder).stat().st_ino != inode or not _current(folder)
    full, lazy = _full_then_lazy(folder, "show", "--json", ids[7])
    assert lazy == full == shown
