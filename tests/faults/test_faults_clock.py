"""Fault campaign: clocks that disagree (issue 21, defect 3).

Random sequences of edits, each by its own `papershelf` process under
`faketime` with a random offset (back or forward, minutes to days), mixed with
edits and compactions by a process on the real clock that keeps the index
open, and searches; after every step, search agrees with the store exactly
(for every tag, status and reading list, and the number of papers). Counts are
printed at the end. A larger run: ``PAPERSHELF_FAULTS=10 python -m pytest
tests/faults/test_clock.py -s``. Needs faketime (Debian package faketime).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import seeded_index
from papershelf.core.library import Library

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))
STEPS = 24 * SCALE
TAGS = ["clocka", "clockb", "clockc"]
STATUSES = ["to-read", "reading", "read", "skipped"]
LISTS = ["clocklist"]
FAKETIME = shutil.which("faketime")

pytestmark = [pytest.mark.slow]


def cli(folder: Path, *args: str, offset: str | None = None) -> subprocess.CompletedProcess:
    assert FAKETIME, "the clock campaign needs faketime (Debian package faketime)"
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(folder), *args]
    if offset is not None:
        cmd = [FAKETIME, offset, *cmd]
    res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert res.returncode == 0 and "Traceback" not in res.stderr, (args, offset, res.stderr)
    return res


def searched(folder: Path, *query: str) -> set[str]:
    out = cli(folder, "search", "--json", "--limit", "100000", *query).stdout
    return {row["id"] for row in json.loads(out)}


def random_offset(rng: random.Random) -> str:
    seconds = rng.choice([rng.randint(3, 59), rng.randint(60, 3600), rng.randint(3600, 86400 * 3)])
    return f"{rng.choice('+-')}{seconds} seconds"


def check(folder: Path, rng: random.Random) -> int:
    """Search agrees with the store for a random tag, status and list, and the count; returns searches run."""
    with Library.open(folder, readonly=True) as lib:
        papers = list(lib.papers())
        lists = lib.lists()
    tag = rng.choice(TAGS)
    status = rng.choice(STATUSES)
    assert searched(folder, f"tag:{tag}") == {p.id for p in papers if tag in p.tags}, tag
    assert searched(folder, "--status", status) == {p.id for p in papers if p.status.value == status}, status
    assert searched(folder, "list:clocklist") == set(lists.get("clocklist", [])), "list"
    assert searched(folder) == {p.id for p in papers}, "every paper"
    return 4


def test_search_agrees_with_the_store_whatever_the_clocks_of_the_processes_that_edited(tmp_path, capsys):
    rng = random.Random(int(os.environ.get("PAPERSHELF_FAULTS_SEED", "21")))
    folder = seeded_index(tmp_path / "library")
    counts: Counter[str] = Counter()
    for step in range(STEPS):
        with Library.open(folder, readonly=True) as lib:
            ids = lib.ids()
        pid = rng.choice(ids)
        kind = rng.choice(["tag", "untag", "status", "set", "list", "import", "delete", "real", "compact"])
        offset = random_offset(rng)
        if kind == "tag":
            cli(folder, "tag", pid, "--add", rng.choice(TAGS), offset=offset)
        elif kind == "untag":
            cli(folder, "tag", pid, "--remove", rng.choice(TAGS), offset=offset)
        elif kind == "status":
            cli(folder, "status", pid, rng.choice(STATUSES), offset=offset)
        elif kind == "set":
            cli(folder, "set", pid, f"keywords=clockword{step}", offset=offset)
        elif kind == "list":
            cli(folder, "list-add", "clocklist", pid, offset=offset)
        elif kind == "import":
            bib = tmp_path / f"new{step}.bib"
            bib.write_text(f"@article{{k{step}, title = {{Clock paper {step} zq{step}x}}, year = {{2020}}}}\n")
            cli(folder, "import", str(bib), offset=offset)
        elif kind == "delete":
            cli(folder, "delete", "--yes", pid, offset=offset)
        else:
            # the real clock, with the index open and following (its newest time stamp: now);
            # "compact" folds the journal into a new library file (a new generation)
            offset = "real"
            with Library.open(folder) as lib:
                lib.open_index()
                lib.add_tags([pid], [rng.choice(TAGS)])
                if kind == "compact":
                    lib._store.compact()
        counts[kind] += 1
        counts["back" if offset.startswith("-") else "forward" if offset.startswith("+") else "real clock"] += 1
        if rng.random() < 0.7:
            counts["searches"] += check(folder, rng)
    counts["searches"] += check(folder, rng)
    with capsys.disabled():
        print(f"\n[faults x{SCALE}] clocks: steps {STEPS}, " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
