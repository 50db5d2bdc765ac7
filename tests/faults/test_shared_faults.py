"""Faults of a shared library: what a sync tool, a crash or a user does to another
device's files, through the installed command (each device is its own
configuration folder, as each machine is).

* a device killed (kill -9) in the middle of its edits while another device
  reads the folder at the same moments;
* another device's journal copied half-way (a sync tool or rsync caught
  mid-copy), at every kind of cut;
* a device's folder deleted by the user;
* two machines that share one device id (a copied configuration folder).

Counts are printed; `PAPERSHELF_FAULTS=N` multiplies the loops.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS, run_cli

pytestmark = pytest.mark.slow

FAULTS = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))


def _device(tmp_path: Path, name: str) -> dict[str, str]:
    """The environment of one device (machine): its own configuration and state folders."""
    return {
        "PAPERSHELF_CONFIG_DIR": str(tmp_path / f"config-{name}"),
        "PAPERSHELF_STATE_DIR": str(tmp_path / f"state-{name}"),
    }


def _cli(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    res = run_cli(*args, data_dir=folder, env=env)
    assert "Traceback" not in res.stderr, res.stderr
    return res


def _papers(folder: Path, env: dict[str, str]) -> dict[str, dict]:
    res = _cli(folder, env, "list", "--json")
    assert res.returncode == 0, res.stderr
    return {p["id"]: p for p in json.loads(res.stdout)}


def _device_id(folder: Path, env: dict[str, str]) -> str:
    config = Path(env["PAPERSHELF_CONFIG_DIR"]) / "device.json"
    return json.loads(config.read_text())["id"]


EDITOR = r"""
import sys
from papershelf.core.library import Library
lib = Library.open(sys.argv[1])
ids = lib.ids()
i = 0
while True:
    pid = ids[i % len(ids)]
    lib.add_tags([pid], [f"k{i}"])
    print(pid, f"k{i}", flush=True)  # acknowledged: the edit is durable
    i += 1
"""


def test_a_device_killed_mid_write_while_another_reads_loses_no_acknowledged_edit(tmp_path):
    folder = tmp_path / "shared"
    a, b = _device(tmp_path, "a"), _device(tmp_path, "b")
    assert _cli(folder, a, "import", str(SEEDS[0])).returncode == 0
    rng = random.Random(22)
    acknowledged: list[tuple[str, str]] = []
    reads = kills = 0
    for _ in range(3 * FAULTS):
        proc = subprocess.Popen(
            [sys.executable, "-c", EDITOR, str(folder)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **a},
        )
        assert proc.stdout is not None
        wanted = rng.randrange(5, 40)
        for _ in range(wanted):  # a condition: the editor acknowledged this many edits
            line = proc.stdout.readline()
            if not line:
                break
            pid, tag = line.split()
            acknowledged.append((pid, tag))
            if len(acknowledged) % 7 == 0:
                assert _cli(folder, b, "list", "--json").returncode == 0  # b reads while a writes
                reads += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        kills += 1
    seen_by_b = _papers(folder, b)
    seen_by_a = _papers(folder, a)
    lost = [(pid, tag) for pid, tag in acknowledged if tag not in seen_by_b[pid]["tags"]]
    print(
        f"\n[faults x{FAULTS}] shared kill -9: kills {kills}, acknowledged edits {len(acknowledged)}, "
        f"reads by the other device during the edits {reads}, lost {len(lost)}"
    )
    assert lost == []
    assert seen_by_a == seen_by_b


def test_another_devices_journal_copied_half_way_is_read_as_not_arrived_yet(tmp_path):
    origin, copy = tmp_path / "origin", tmp_path / "copy"
    a, b = _device(tmp_path, "a"), _device(tmp_path, "b")
    assert _cli(origin, a, "import", str(SEEDS[1])).returncode == 0
    ids = list(_papers(origin, a))
    for i, pid in enumerate(ids[:12]):
        assert _cli(origin, a, "tag", pid, "--add", f"t{i}").returncode == 0
    dev = _device_id(origin, a)
    journal = (origin / "devices" / dev / "journal.jsonl").read_bytes()
    rng = random.Random(7)
    cuts = sorted({0, len(journal), *(rng.randrange(len(journal)) for _ in range(8 * FAULTS))})
    agreed = 0
    for cut in cuts:
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(origin, copy)
        (copy / "devices" / dev / "journal.jsonl").write_bytes(journal[:cut])
        res = _cli(copy, b, "list", "--json")
        assert res.returncode == 0, f"cut at byte {cut}: {res.stderr}"
        shown = {p["id"]: p["tags"] for p in json.loads(res.stdout)}
        whole = journal[:cut].count(b"\n")
        # every whole line is merged; the part of a line after the cut waits
        tagged = sum(1 for i, pid in enumerate(ids[:12]) if pid in shown and f"t{i}" in shown[pid])
        assert tagged == max(0, whole - 1) or (whole == 0 and tagged == 0), (cut, whole, tagged)
        # the rest of the copy arrives: everything is there, nothing was written to a's files
        (copy / "devices" / dev / "journal.jsonl").write_bytes(journal)
        final = _papers(copy, b)
        assert all(f"t{i}" in final[pid]["tags"] for i, pid in enumerate(ids[:12]))
        assert (copy / "devices" / dev / "journal.jsonl").read_bytes() == journal
        agreed += 1
    print(f"\n[faults x{FAULTS}] half-copied journal: {len(cuts)} cuts, all merged once whole: {agreed}")


def test_a_device_folder_deleted_by_the_user_takes_back_what_the_others_had(tmp_path):
    folder = tmp_path / "shared"
    a, b = _device(tmp_path, "a"), _device(tmp_path, "b")
    assert _cli(folder, a, "import", str(SEEDS[2])).returncode == 0
    pid = next(iter(_papers(folder, a)))
    assert _cli(folder, a, "tag", pid, "--add", "before").returncode == 0
    assert _cli(folder, b, "tag", pid, "--add", "from-b").returncode == 0  # b has read a's edits
    # b folds what it knows into its own library file (its next compaction)
    env_b = {**b, "PAPERSHELF_COMPACT": "1"}
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from papershelf.core.library import Library; "
            "lib = Library.open(sys.argv[1]); lib.compact(); lib.close()",
            str(folder),
        ],
        env={**os.environ, **env_b},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    dev_a = _device_id(folder, a)
    shutil.rmtree(folder / "devices" / dev_a)  # the user deletes a's folder
    res = _cli(folder, a, "tag", pid, "--add", "after")
    assert res.returncode == 0, res.stderr
    seen_a, seen_b = _papers(folder, a), _papers(folder, b)
    assert len(seen_a) == len(seen_b) > 0
    assert {"before", "from-b", "after"} <= set(seen_b[pid]["tags"])
    assert seen_a == seen_b


def test_two_machines_with_one_device_id_are_told_apart(tmp_path):
    folder = tmp_path / "shared"
    a = _device(tmp_path, "a")
    assert _cli(folder, a, "import", str(SEEDS[0])).returncode == 0
    pid = next(iter(_papers(folder, a)))
    assert _cli(folder, a, "tag", pid, "--add", "on-a").returncode == 0
    # another machine starts from a copy of a's configuration folder: the same device id
    shutil.copytree(tmp_path / "config-a", tmp_path / "config-copy")
    copy = {"PAPERSHELF_CONFIG_DIR": str(tmp_path / "config-copy"), "PAPERSHELF_STATE_DIR": str(tmp_path / "state-c")}
    dev_a = _device_id(folder, a)
    before = {p.name: p.read_bytes() for p in (folder / "devices" / dev_a).iterdir() if p.is_file()}
    res = _cli(folder, copy, "tag", pid, "--add", "on-copy")
    assert res.returncode == 0, res.stderr
    assert "copied" in res.stderr + res.stdout
    after = {p.name: p.read_bytes() for p in (folder / "devices" / dev_a).iterdir() if p.is_file()}
    assert after == before, "the copy wrote into the first machine's files"
    assert _device_id(folder, copy) != dev_a
    assert {"on-a", "on-copy"} <= set(_papers(folder, a)[pid]["tags"])
