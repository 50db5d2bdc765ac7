"""Opening and closing a library again and again in one process does not grow
(issue 21, defect 2).

A library and its search index refer to each other, so only the cyclic
collector frees a closed one; `gc.freeze()` after the next load moved it out
of the collector's sight with everything else, and it was never freed: 99 MB
more per read-only open of a 30,000-paper library. Measured in a child
process by its resident memory (/proc/self/status), never by time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS
from papershelf.core.library import Library
from papershelf.core.paper import Paper
from papershelf.core.store.format import SNAPSHOT, write_snapshot

PAPERS = 30_000
OPENS = 8

CHILD = r"""
import gc, json, sys
from papershelf.core.library import Library
from papershelf.core.errors import PapershelfError

def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024

folder, opens, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = {"start": rss(), "after": [], "frozen": []}
for n in range(opens):
    try:
        lib = Library.open(folder, readonly=(mode == "readonly" or (mode == "both" and n % 2 == 0)))
        lib.close()
        del lib
    except PapershelfError:
        pass
    out["after"].append(rss())
    out["frozen"].append(gc.get_freeze_count())
print(json.dumps(out))
"""


def big_library(folder: Path, n: int = PAPERS) -> Path:
    """A library file of `n` papers, the sample listings' papers again and again under new ids."""
    folder.mkdir(parents=True, exist_ok=True)
    with Library.open(folder / "seeds") as lib:
        lib.import_files(SEEDS)
        records = [p.to_dict() for p in lib.papers()]
    papers = {}
    for i in range(n):
        d = dict(records[i % len(records)])
        d["id"] = f"{i:010x}"
        d["fingerprint"] = f"{i:032x}"
        papers[d["id"]] = Paper.from_dict(d)
    lib_dir = folder / "library"
    lib_dir.mkdir()
    write_snapshot(lib_dir / SNAPSHOT, papers, {}, 1, 0)
    return lib_dir


def opens_in_a_child(folder: Path, mode: str, opens: int = OPENS) -> dict:
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(opens), mode],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def library_30k(tmp_path_factory) -> Path:
    return big_library(tmp_path_factory.mktemp("opens"))


@pytest.mark.parametrize("mode", ["readonly", "both"])
def test_opening_and_closing_a_big_library_again_and_again_does_not_grow(library_30k, mode):
    got = opens_in_a_child(library_30k, mode)
    one_open = got["after"][0] - got["start"]
    assert one_open > 30, got  # a 30,000-paper library costs something to hold, or this measures nothing
    growth = got["after"][-1] - got["after"][2]
    # before the fix: each open kept the one before it (+99 MB an open at 30,000 papers)
    assert growth < one_open / 4, f"{growth:.0f} MB more after {OPENS - 3} more opens (one open: {one_open:.0f} MB)"
    assert got["frozen"][-1] == 0, "a closed library left objects frozen"


def test_a_library_file_that_fails_halfway_leaves_nothing_frozen(library_30k, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    data = (library_30k / SNAPSHOT).read_bytes()
    cut = data.rfind(b"\n", 0, len(data) * 3 // 4) + 1
    # a paper line near the end whose checksum fails: refused after most papers were read
    (broken / SNAPSHOT).write_bytes(data[:cut] + b'{"id":"x"}\t00000000\n' + data[cut:])
    got = opens_in_a_child(broken, "readonly", opens=3)
    assert got["frozen"] == [0, 0, 0], got


def _own_copy(text: str) -> str:
    """`text` as a string object of its own (as orjson makes one per line)."""
    return "".join(list(text))


def test_papers_that_share_a_value_hold_one_string_for_it(tmp_path):
    # issue 25: 100,000 papers held the same import time, listing path, area and status
    # 100,000 times over (about 37 MB); the load keeps one string per value
    papers = {}
    for i in range(300):
        d = {
            "id": f"{i:010x}",
            "title": f"Paper {i}",
            "added": _own_copy("2026-12-04T08:00:00+00:00"),
            "updated": _own_copy("2026-12-04T09:00:00+00:00"),
            "venue": _own_copy(f"Venue {i % 3}"),
            "area": _own_copy("cs"),
            "status": _own_copy("to-read"),
            "tags": [_own_copy("llm"), _own_copy(f"t{i % 2}")],
            "sources": [{"file": _own_copy("/listings/a.txt"), "format": _own_copy("paper-search"), "line": i}],
        }
        papers[d["id"]] = Paper.from_dict(d)
    expected = {pid: p.to_dict() for pid, p in papers.items()}
    lib_dir = tmp_path / "library"
    lib_dir.mkdir()
    write_snapshot(lib_dir / SNAPSHOT, papers, {}, 1, 0)
    with Library.open(lib_dir, readonly=True) as lib:
        loaded = list(lib.papers())
        assert {p.id: p.to_dict() for p in loaded} == expected  # nothing a paper says changed
        raw = [p.raw() for p in loaded]
        for name in ("added", "updated", "area", "status"):
            assert len({id(d[name]) for d in raw}) == 1, name
        assert len({id(d["venue"]) for d in raw}) == 3
        assert len({id(d["tags"][0]) for d in raw}) == 1
        assert len({id(d["tags"]) for d in raw}) == len(raw)  # the lists stay each paper's own
        assert len({id(d["sources"][0]["file"]) for d in raw}) == 1
        assert len({id(d["sources"][0]["format"]) for d in raw}) == 1
    # an edit of one paper's shared value changes that paper only, on disk too
    with Library.open(lib_dir) as lib:
        assert lib.set_status([f"{0:010x}"], "read") == 1
    expected[f"{0:010x}"]["status"] = "read"
    with Library.open(lib_dir, readonly=True) as lib:
        got = {p.id: p.to_dict() for p in lib.papers()}
    assert {pid: d["status"] for pid, d in got.items()} == {pid: d["status"] for pid, d in expected.items()}
    assert sum(d["status"] == "read" for d in got.values()) == 1


def test_values_of_an_odd_type_in_the_shared_fields_load_as_they_were(tmp_path):
    # a hand-edited library file: what is no string is kept as it was read (1 stays 1, True stays True)
    odd = {
        "id": "0000000001",
        "title": "Odd",
        "venue": ["a", "list"],
        "area": 7,
        "tags": ["x", 1, True, 1.0, ["y"], None],
        "sources": [{"file": 3, "format": None, "line": 1}, "a text"],
    }
    plain = {"id": "0000000002", "title": "Plain", "tags": ["x"], "venue": "a"}
    lib_dir = tmp_path / "library"
    lib_dir.mkdir()
    write_snapshot(lib_dir / SNAPSHOT, {d["id"]: Paper.from_dict(dict(d)) for d in (plain, odd)}, {}, 1, 0)
    with Library.open(lib_dir, readonly=True) as lib:
        got = lib.get("0000000001").raw()
    assert got == odd
    assert [type(t) for t in got["tags"]] == [str, int, bool, float, list, type(None)]
