"""Saved searches and hand-applied tags in a library used on several machines (issue 22):
each device writes only its own `devices/<id>/` files, and every device reads them all.

Two devices are two configuration folders (each its own device id) on one machine. They
share one library folder, or each has a copy and `sync` copies files between the copies
as a sync tool does: per file, the newest copy replaces the other (a tool keeps one copy
of a file). Everything goes through the installed command in real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS, run_cli
from papershelf.core.library import Library


def device(tmp_path: Path, name: str) -> dict[str, str]:
    """The environment of a device: its own configuration (device id) and state folders."""
    return {"PAPERSHELF_CONFIG_DIR": str(tmp_path / f"config-{name}"), "PAPERSHELF_STATE_DIR": str(tmp_path / name)}


def cli(dev: dict[str, str], folder: Path, *args: str, clock: str | None = None) -> str:
    """`papershelf ARGS` as device `dev` on `folder`, its clock shifted by `clock` (faketime's
    "+1h", "-1h"); its output, after checking that it succeeded without a traceback."""
    if clock is None:
        res = run_cli(*args, data_dir=folder, env=dev)
    else:
        cmd = ["faketime", "-f", clock, sys.executable, "-m", "papershelf", "--data-dir", str(folder), *args]
        env = {**os.environ, **dev}
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stdout + res.stderr
    return res.stdout


def searches(dev: dict[str, str], folder: Path) -> dict[str, str]:
    """The saved searches device `dev` sees: name → how `papershelf searches` describes it."""
    out = cli(dev, folder, "searches")
    if out.startswith("No saved searches"):
        return {}
    return dict(line.rsplit("  (", 1) for line in out.splitlines())


def hand_tags(dev: dict[str, str], folder: Path, monkeypatch) -> list[str]:
    """The tags device `dev` sees as applied by hand (what the window's number keys reach)."""
    with monkeypatch.context() as m:
        for k, v in dev.items():
            m.setenv(k, v)
        with Library.open(folder, readonly=True) as lib:
            return lib.hand_tags()


def device_id(dev: dict[str, str]) -> str:
    return json.loads((Path(dev["PAPERSHELF_CONFIG_DIR"]) / "device.json").read_text(encoding="utf-8"))["id"]


def sync(a: Path, b: Path) -> None:
    """What a sync tool does between two copies of a folder: each file's newest copy replaces
    the other (a file only one side has is copied over)."""
    files = {p.relative_to(root) for root in (a, b) for p in root.rglob("*") if p.is_file()}
    for rel in sorted(files):
        here, there = a / rel, b / rel
        if not here.exists() or (there.exists() and there.stat().st_mtime_ns > here.stat().st_mtime_ns):
            here, there = there, here
        if there.exists() and there.read_bytes() == here.read_bytes():
            continue
        there.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(here, there)


@pytest.fixture
def two(tmp_path):
    """Devices A and B, each with its own copy of one library of a sample listing."""
    a, b = device(tmp_path, "a"), device(tmp_path, "b")
    folder_a, folder_b = tmp_path / "lib-a", tmp_path / "lib-b"
    cli(a, folder_a, "import", str(SEEDS[0]))
    shutil.copytree(folder_a, folder_b)
    ids = [p["id"] for p in json.loads(cli(a, folder_a, "list", "--json"))]
    return a, b, folder_a, folder_b, ids


# ---- one folder, two devices ----------------------------------------------------------


def test_two_devices_on_one_folder_each_write_their_own_files_and_see_both(tmp_path, monkeypatch):
    a, b = device(tmp_path, "a"), device(tmp_path, "b")
    folder = tmp_path / "library"
    cli(a, folder, "import", str(SEEDS[0]))
    ids = [p["id"] for p in json.loads(cli(a, folder, "list", "--json"))]
    cli(a, folder, "searches", "--save", "Diffusion", "diffusion", "--status", "to-read")
    cli(a, folder, "tag", ids[0], "--add", "alpha")
    cli(b, folder, "searches", "--save", "Agents", "agent", "--tag", "alpha")
    cli(b, folder, "tag", ids[1], "--add", "beta")
    for dev in (a, b):
        assert searches(dev, folder) == {
            "Diffusion": "'diffusion' · status: to-read)",
            "Agents": "'agent' · tag: alpha)",
        }
        assert hand_tags(dev, folder, monkeypatch) == ["alpha", "beta"]
    # each device wrote only its own files; the library's shared old files were never written
    for dev in (a, b):
        own = folder / "devices" / device_id(dev)
        assert {p.name for p in own.iterdir()} >= {"saved-searches.json", "hand-tags.json"}
        for name in ("saved-searches.json", "hand-tags.json"):
            data = json.loads((own / name).read_text(encoding="utf-8"))
            assert data["device"] == device_id(dev)
    assert not (folder / "saved-searches.json").exists() and not (folder / "hand-tags.json").exists()


# ---- two copies, synced as a sync tool does -----------------------------------------------


def test_saves_made_on_two_devices_at_once_both_survive_a_sync(two, monkeypatch):
    a, b, folder_a, folder_b, ids = two
    cli(a, folder_a, "searches", "--save", "Diffusion", "diffusion")
    cli(a, folder_a, "tag", ids[0], "--add", "alpha")
    cli(b, folder_b, "searches", "--save", "Agents", "agent")
    cli(b, folder_b, "tag", ids[1], "--add", "beta")
    sync(folder_a, folder_b)  # B's shared file, were there one, would replace A's
    for dev, folder in ((a, folder_a), (b, folder_b)):
        assert set(searches(dev, folder)) == {"Diffusion", "Agents"}
        assert sorted(hand_tags(dev, folder, monkeypatch)) == ["alpha", "beta"]


def test_a_delete_on_one_device_and_an_edit_on_the_other_both_hold(two):
    a, b, folder_a, folder_b, _ = two
    cli(a, folder_a, "searches", "--save", "Old", "transformer")
    cli(a, folder_a, "searches", "--save", "Kept", "agent")
    cli(a, folder_a, "searches", "--save", "Renamed", "vision")
    sync(folder_a, folder_b)
    cli(a, folder_a, "searches", "--delete", "old")
    cli(a, folder_a, "searches", "--rename", "renamed", "Seeing")
    cli(b, folder_b, "searches", "--save", "Kept", "agent planning")
    sync(folder_a, folder_b)
    for dev, folder in ((a, folder_a), (b, folder_b)):
        assert searches(dev, folder) == {"Kept": "'agent planning')", "Seeing": "'vision')"}
    # the delete is a tombstone: a device that comes back with the old file does not bring it back
    cli(b, folder_b, "searches", "--save", "New", "graph")
    sync(folder_a, folder_b)
    assert list(searches(a, folder_a)) == ["Kept", "Seeing", "New"]


def test_one_name_saved_on_both_devices_the_later_wins_on_both(two):
    a, b, folder_a, folder_b, _ = two
    cli(a, folder_a, "searches", "--save", "Reading", "diffusion")
    cli(b, folder_b, "searches", "--save", "reading", "agent")  # later: wins, with its name's case
    sync(folder_a, folder_b)
    expected = {"reading": "'agent')"}
    assert searches(a, folder_a) == searches(b, folder_b) == expected
    # the order of arrival does not matter: B's file read before or after A's, the same answer
    sync(folder_b, folder_a)
    assert searches(a, folder_a) == searches(b, folder_b) == expected
    # A, whose clock is an hour behind, saves it again after seeing B's: a save made after
    # another device's, as this device saw it, is later, whatever the wall clocks say
    cli(a, folder_a, "searches", "--save", "Reading", "vision", clock="-1h")
    sync(folder_a, folder_b)
    assert searches(a, folder_a) == searches(b, folder_b) == {"Reading": "'vision')"}
    # two saves neither device saw: the higher stamp (then device id) decides, on both alike
    cli(a, folder_a, "searches", "--save", "Clash", "from a", clock="+2h")
    cli(b, folder_b, "searches", "--save", "Clash", "from b")  # later in real time, earlier by B's stamp
    sync(folder_a, folder_b)
    assert searches(a, folder_a)["Clash"] == searches(b, folder_b)["Clash"] == "'from a')"


def test_another_devices_damaged_file_is_skipped_and_own_saves_still_work(two, monkeypatch):
    a, b, folder_a, _, ids = two
    c = device(folder_a.parent, "c")
    cli(a, folder_a, "searches", "--save", "Mine", "diffusion")
    cli(a, folder_a, "tag", ids[0], "--add", "mine")
    cli(b, folder_a, "searches", "--save", "From B", "agent")
    cli(b, folder_a, "tag", ids[1], "--add", "from-b")
    cli(c, folder_a, "searches", "--save", "From C", "graph")
    cli(c, folder_a, "tag", ids[2], "--add", "from-c")
    # B's files arrive half-copied; C's are of a newer Papershelf's format
    whole = {}
    for name in ("saved-searches.json", "hand-tags.json"):
        path = folder_a / "devices" / device_id(b) / name
        whole[path] = path.read_bytes()
        path.write_bytes(whole[path][: len(whole[path]) // 2])
        path = folder_a / "devices" / device_id(c) / name
        data = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**data, "version": 99}), encoding="utf-8")
    others = {p: p.read_bytes() for p in (folder_a / "devices").rglob("*.json") if device_id(a) not in str(p)}
    res = run_cli("searches", data_dir=folder_a, env=a)
    assert res.returncode == 0 and res.stderr == "", res.stderr  # a normal state of a sync: nothing to say
    assert res.stdout.splitlines() == ["Mine  ('diffusion')"]
    assert hand_tags(a, folder_a, monkeypatch) == ["mine"]
    cli(a, folder_a, "searches", "--save", "Mine too", "agent")
    cli(a, folder_a, "tag", ids[3], "--add", "mine-too")
    assert list(searches(a, folder_a)) == ["Mine", "Mine too"]
    assert hand_tags(a, folder_a, monkeypatch) == ["mine", "mine-too"]
    # never written by A; read again once whole: B's saves are there again
    assert {p: p.read_bytes() for p in others} == others
    for path, raw in whole.items():
        path.write_bytes(raw)
    assert list(searches(a, folder_a)) == ["Mine", "From B", "Mine too"]
    assert hand_tags(a, folder_a, monkeypatch) == ["mine", "from-b", "mine-too"]


def test_the_old_shared_files_are_read_on_upgrade_and_never_written_again(tmp_path, monkeypatch):
    a, b = device(tmp_path, "a"), device(tmp_path, "b")
    folder = tmp_path / "library"
    cli(a, folder, "import", str(SEEDS[0]))
    ids = [p["id"] for p in json.loads(cli(a, folder, "list", "--json"))]
    cli(a, folder, "tag", ids[0], "--add", "old-one", "--add", "old-two")
    # the files as a Papershelf before devices wrote them, at the library's root
    for name in ("saved-searches.json", "hand-tags.json"):
        (folder / "devices" / device_id(a) / name).unlink(missing_ok=True)
    (folder / "saved-searches.json").write_text(
        json.dumps(
            {
                "format": "papershelf-saved-searches",
                "version": 1,
                "searches": [
                    {"name": "Old diffusion", "text": "diffusion", "filters": {"status": "to-read"}},
                    {"name": "Old agents", "text": "agent", "filters": {}},
                ],
            }
        ),
        encoding="utf-8",
    )
    (folder / "hand-tags.json").write_text(
        json.dumps({"format": "papershelf-hand-tags", "version": 1, "tags": ["old-two", "old-one"]}), encoding="utf-8"
    )
    old = {name: (folder / name).read_bytes() for name in ("saved-searches.json", "hand-tags.json")}
    assert list(searches(a, folder)) == ["Old diffusion", "Old agents"]
    assert hand_tags(a, folder, monkeypatch) == ["old-two", "old-one"]
    # A's first save copies the old searches into its own file, after them
    cli(a, folder, "searches", "--save", "New", "graph")
    cli(a, folder, "tag", ids[1], "--add", "new-tag")
    own = json.loads((folder / "devices" / device_id(a) / "saved-searches.json").read_text(encoding="utf-8"))
    assert [e["name"] for e in own["searches"]] == ["Old diffusion", "Old agents", "New"]
    # B deletes an old one: gone for A too; the old file stays as it was
    cli(b, folder, "searches", "--delete", "Old agents")
    for dev in (a, b):
        assert list(searches(dev, folder)) == ["Old diffusion", "New"]
        assert hand_tags(dev, folder, monkeypatch) == ["old-two", "old-one", "new-tag"]
    assert {name: (folder / name).read_bytes() for name in old} == old


def test_devices_lists_each_device_with_its_machine_edits_and_completeness(tmp_path):
    a, b = device(tmp_path, "a"), device(tmp_path, "b")
    folder = tmp_path / "library"
    cli(a, folder, "import", str(SEEDS[0]))
    assert "No device has written into the library" in cli(a, folder, "devices") or device_id(a) in cli(
        a, folder, "devices"
    )
    cli(a, folder, "searches", "--save", "Mine", "diffusion")
    cli(b, folder, "searches", "--save", "Theirs", "agent")
    # B's machine says who it is; its journal arrives with a torn last line
    own_b = folder / "devices" / device_id(b)
    (own_b / "device.json").write_text(json.dumps({"id": device_id(b), "host": "lab-desktop", "made": 1}))
    (own_b / "journal.jsonl").write_bytes(b'{"seq": 1}\n{"seq": 2}\n{"seq": 3}\n{"seq": 4, "op')
    lines = {line.split()[0]: line for line in cli(a, folder, "devices").splitlines()[1:]}
    mine, theirs = lines[device_id(a)], lines[device_id(b)]
    assert "(this device)" in mine and "files complete" in mine
    assert "(this device)" not in theirs and "on lab-desktop" in theirs and "3 edits in its journal" in theirs
    assert "incomplete: journal.jsonl ends mid-line" in theirs
    # the line arrives whole: complete
    with open(own_b / "journal.jsonl", "ab") as f:
        f.write(b'": []}\n')
    theirs = next(line for line in cli(b, folder, "devices").splitlines() if device_id(b) in line)
    assert "(this device)" in theirs and "4 edits in its journal" in theirs and "files complete" in theirs


def test_the_old_files_moved_into_the_upgrades_backup_are_read_there(tmp_path, monkeypatch):
    a = device(tmp_path, "a")
    folder = tmp_path / "library"
    cli(a, folder, "import", str(SEEDS[0]))
    backup = folder / "pre-sync-backup-20261203-094500"  # where the upgrade moves the old files
    backup.mkdir()
    searches_v1 = {"format": "papershelf-saved-searches", "version": 1, "searches": [{"name": "Old", "text": "x"}]}
    (backup / "saved-searches.json").write_text(json.dumps(searches_v1), encoding="utf-8")
    hand_v1 = {"format": "papershelf-hand-tags", "version": 1, "tags": ["old-tag"]}
    (backup / "hand-tags.json").write_text(json.dumps(hand_v1), encoding="utf-8")
    assert searches(a, folder) == {"Old": "'x')"}
    assert hand_tags(a, folder, monkeypatch) == ["old-tag"]
    cli(a, folder, "searches", "--save", "New", "y")
    assert list(searches(a, folder)) == ["Old", "New"]
