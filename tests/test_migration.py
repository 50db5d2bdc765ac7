"""A library written by the version before the full bibliographic record (schema 2) opens in
this one with nothing lost, is brought forward to the current schema once, and goes on working.

The library under tests/fixtures/library-v2 was written by that version's own commands (see
its README.md): a compacted library file plus a journal of later edits; `expected-list.json`
is what that version's `papershelf list --json` printed for it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from conftest import FIXTURES, run_cli, store_dir
from papershelf.core.store import SCHEMA_VERSION, SNAPSHOT, unseal

OLD = FIXTURES / "library-v2"


@pytest.fixture
def old_library(tmp_path: Path) -> Path:
    """A copy of the schema-2 library, as it was on disk."""
    folder = tmp_path / "library"
    folder.mkdir()
    for name in ("library.jsonl", "journal.jsonl", "journal.last"):
        shutil.copy2(OLD / name, folder / name)
    return folder


def _header(folder: Path) -> dict:
    first = (folder / SNAPSHOT).read_bytes().split(b"\n", 1)[0] + b"\n"
    body = unseal(first)
    assert body is not None, "the library file's header lost its seal"
    return orjson.loads(body)


def _listed(folder: Path) -> dict[str, dict]:
    res = run_cli("list", "--json", data_dir=folder)
    assert res.returncode == 0, res.stderr
    return {p["id"]: p for p in json.loads(res.stdout)}


def test_every_paper_and_every_edit_of_a_schema_2_library_is_there(old_library):
    expected = {p["id"]: p for p in json.loads((OLD / "expected-list.json").read_text("utf-8"))}
    assert _header(old_library)["schema_version"] == 2
    before = _listed(old_library)  # read-only: nothing is rewritten yet
    assert _header(old_library)["schema_version"] == 2
    assert set(before) == set(expected)
    for pid, old in expected.items():
        new = before[pid]
        # every field the old version printed is there with the same value; new fields may be added
        assert {k: new.get(k) for k in old} == old, pid
    # the edits made after the compaction live only in the journal: they were replayed
    assert "diffusion" in before["5fcd898b86"]["tags"] and "to cite" in before["5fcd898b86"]["tags"]
    assert before["5d85d00a84"]["notes"] == "after the compaction"
    assert before["1d3addd393"]["status"] == "to-read"


def test_the_first_edit_brings_the_library_forward_and_keeps_the_old_file_as_a_backup(old_library):
    expected = {p["id"]: p for p in json.loads((OLD / "expected-list.json").read_text("utf-8"))}
    res = run_cli("rate", "71818defe5", "5", data_dir=old_library)
    assert res.returncode == 0, res.stderr
    # brought forward to a shared library: this device's library file is of the current schema,
    # and the old library file is kept, byte for byte, in the upgrade's backup folder
    assert _header(store_dir(old_library))["schema_version"] == SCHEMA_VERSION == 5
    [aside] = old_library.glob("pre-sync-backup-*")
    kept = [p for p in aside.rglob("*.jsonl") if p.read_bytes() == (OLD / "library.jsonl").read_bytes()]
    assert kept and b'"schema_version":2' in kept[0].read_bytes()[:300], sorted(aside.rglob("*"))
    after = _listed(old_library)
    assert set(after) == set(expected)
    for pid, old in expected.items():
        changed = {"rating", "updated"} if pid == "71818defe5" else set()
        assert {k: after[pid].get(k) for k in old if k not in changed} == {
            k: v for k, v in old.items() if k not in changed
        }, pid
    assert after["71818defe5"]["rating"] == 5
    # the reading list, the typed title and the pinned key came through
    res = run_cli("lists", data_dir=old_library)
    assert "Thesis refs  (3 papers)" in res.stdout
    assert after["47252e0ad6"]["title"] == "A Title I Typed"
    assert after["3332f4f20c"]["citekey"] == "MyKey2024"


def test_the_old_reading_list_exports_with_the_keys_it_had(old_library, tmp_path):
    out = tmp_path / "refs.bib"
    res = run_cli("export", "--list", "Thesis refs", "-o", str(out), data_dir=old_library)
    assert res.returncode == 0, res.stderr
    old_text = (OLD / "thesis-refs-v2.bib").read_text("utf-8")

    def keys(text: str) -> list[str]:
        return [line.split("{", 1)[1].rstrip(",") for line in text.splitlines() if line.startswith("@")]

    # the keys a paper was cited by stay the same (they were pinned by the old export)
    assert keys(out.read_text("utf-8")) == keys(old_text) and "MyKey2024" in keys(old_text)
