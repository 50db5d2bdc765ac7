"""A library of one device, from before shared libraries, becomes one several machines can
share at its first writable open, with a backup; an older Papershelf refuses the new
layout with words. Through the installed command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, run_cli
from papershelf.core.errors import StoreVersionError
from papershelf.core.store import Store

OLD = FIXTURES / "library-v2"


def _list(folder: Path) -> list[dict]:
    res = run_cli("list", "--json", data_dir=folder)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _without_times(papers: list[dict]) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "updated"} for p in papers]


def test_an_old_library_is_read_as_it_is_and_upgraded_at_its_first_edit_with_a_backup(tmp_path):
    folder = tmp_path / "library"
    shutil.copytree(OLD, folder)
    for name in ("README.md", "expected-list.json", "expected-lists.txt", "thesis-refs-v2.bib"):
        (folder / name).unlink()
    before_files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    # a read-only command reads the old layout as it is and changes nothing
    listed = _list(folder)
    assert len(listed) > 0
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before_files
    assert not (folder / "devices").exists()
    lists_before = run_cli("lists", data_dir=folder).stdout
    # the first edit upgrades it
    pid = listed[0]["id"]
    res = run_cli("tag", pid, "--add", "after-upgrade", data_dir=folder)
    assert res.returncode == 0, res.stderr
    (backup,) = folder.glob("pre-sync-backup-*")
    for name in ("library.jsonl", "journal.jsonl", "journal.last"):
        assert (backup / name).read_bytes() == before_files[name], f"{name} was not kept as it was"
    assert (folder / "devices").is_dir()
    after = _list(folder)
    assert _without_times([p for p in after if p["id"] != pid]) == _without_times([p for p in listed if p["id"] != pid])
    assert "after-upgrade" in next(p for p in after if p["id"] == pid)["tags"]
    assert run_cli("lists", data_dir=folder).stdout == lists_before
    # the old files in the backup still open as the library they were
    old = Store(backup, readonly=True).open()
    assert len(old.papers) == len(listed)
    old.close()


def test_an_older_papershelf_refuses_a_shared_library_with_words_and_changes_nothing(tmp_path):
    folder = tmp_path / "library"
    assert run_cli("import", str(SEEDS[0]), data_dir=folder).returncode == 0
    files = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    # the single-device store of the versions before reads the marker the new layout leaves
    with pytest.raises(StoreVersionError, match=r"newer Papershelf.*nothing was changed"):
        Store(folder, readonly=True).open()
    with pytest.raises(StoreVersionError, match="newer Papershelf"):
        Store(folder).open()
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    added = set(after) - set(files)
    assert added <= {Path("library.lock"), Path("library.readlock")}, added  # that version's lock files
    assert {k: after[k] for k in files} == files
    # and this version still opens it
    assert len(_list(folder)) > 0


@pytest.mark.parametrize("kept", [0, 40, "line"])
def test_a_marker_cut_short_is_still_a_shared_library_and_is_written_whole(tmp_path, kept):
    """The marker is written in place (a temporary file beside it would be copied by a sync tool
    and left on the other machines): a write cut short leaves its beginning, or nothing."""
    folder = tmp_path / "library"
    res = run_cli("import", str(SEEDS[0]), data_dir=folder)
    assert res.returncode == 0, res.stderr
    listed = _list(folder)
    marker = (folder / "library.jsonl").read_bytes()
    assert (folder / "devices").is_dir()
    cut = marker[: marker.index(b"\n") + 1] if kept == "line" else marker[:kept]
    (folder / "library.jsonl").write_bytes(cut)
    # read as the shared library it is: the same papers, nothing set aside
    assert _list(folder) == listed
    res = run_cli("tag", listed[0]["id"], "--add", "after-cut", data_dir=folder)
    assert res.returncode == 0, res.stderr
    assert (folder / "library.jsonl").read_bytes() == marker
    assert not list(folder.glob("pre-sync-backup-*"))
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []
