"""Shared-library benchmark: a library written by three devices, opened and merged.

Not a pytest test; run it by hand::

    python tests/perf/bench_shared.py                 # 100,000 papers
    python tests/perf/bench_shared.py --size 10000

It builds a deterministic corpus of N papers (bench_store's generator), then:

* baseline: the same papers as a single-device library (the layout before
  shared libraries), opened read-only in a fresh process: the "today" figure;
* device A imports them all (one action), devices B and C each make 1,000
  edits (tags, statuses, notes, list places) at the same time as A makes its
  own, without reading each other;
* open: device A opens the library (its own library file and journal, and the
  journals of B and C merged), writable and read-only, each in a fresh
  process, 3 runs, median; and a new device D that joins (it reads A's
  library file and the others' journals);
* remote: device A, open, merges 1,000 actions B wrote since (`refresh`).

Targets: opening within 25% of the single-device open; 1,000 remote actions
merged well within the window's 2 s for a remote edit to show.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "app"))
sys.path.insert(0, str(HERE.parent))

from bench_store import write_corpus

DEVICES = {"A": "aaaaaaaaaaa1", "B": "bbbbbbbbbbb2", "C": "ccccccccccc3", "D": "ddddddddddd4"}
EDITS = 1000
RUNS = 3
TARGET_OPEN_RATIO = 1.25
TARGET_REMOTE_S = 2.0


def _child(argv: list[str]) -> None:
    what, folder, device = argv[0], argv[1], argv[2]
    t0 = time.perf_counter()
    if what == "single":
        from papershelf.core.store import Store

        store = Store(folder, readonly=True).open()
        n = len(store.papers)
        store.close()
    else:
        from papershelf.core.store import SharedStore

        store = SharedStore(folder, readonly=(what == "open-ro"), device=device).open()
        n = len(store.papers)
        store.close()
    # VmHWM: this process's own peak (ru_maxrss keeps the parent's from before the exec)
    status = Path("/proc/self/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")) / 1024
    print(json.dumps({"seconds": time.perf_counter() - t0, "papers": n, "peak_mb": peak}))


def _run(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(HERE), "--child", *args], capture_output=True, text=True, check=True, timeout=1800
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(*args: str) -> dict:
    runs = [_run(*args) for _ in range(RUNS)]
    return {
        "seconds": statistics.median(r["seconds"] for r in runs),
        "papers": runs[0]["papers"],
        "peak_mb": max(r["peak_mb"] for r in runs),
    }


def _edits(lib, rng: random.Random, n: int) -> None:
    ids = lib.ids()
    for i in range(n):
        pid = rng.choice(ids)
        kind = i % 4
        if kind == 0:
            lib.add_tags([pid], [rng.choice(["ml", "nlp", "vision", "theory", "survey"])])
        elif kind == 1:
            lib.set_status([pid], rng.choice(["to-read", "reading", "read"]))
        elif kind == 2:
            lib.set_notes(pid, f"note {rng.randrange(10**9)}")
        else:
            lib.add_to_list(rng.choice(["queue", "survey", "cite"]), [pid])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--child", nargs=3)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    from papershelf.core.library import Library
    from papershelf.core.store import SharedStore, Store

    with tempfile.TemporaryDirectory(prefix="papershelf-bench-shared-") as tmp:
        root = Path(tmp)
        os.environ["PAPERSHELF_STATE_DIR"] = str(root / "state")
        os.environ["PAPERSHELF_CONFIG_DIR"] = str(root / "config")
        files = write_corpus(args.size, root / "corpus", seed=7)
        print(f"papers: {args.size:,} (3 devices, {EDITS:,} edits by each of B and C)")

        single = root / "single"
        lib = Library(Store(single).open())
        lib.import_files(files)
        _edits(lib, random.Random(1), EDITS)
        lib.compact()
        lib.close()

        shared = root / "shared"
        a = Library(SharedStore(shared, device=DEVICES["A"]).open())
        t0 = time.perf_counter()
        a.import_files(files)
        print(f"import by A: {time.perf_counter() - t0:.1f} s")
        b = Library(SharedStore(shared, device=DEVICES["B"]).open())
        c = Library(SharedStore(shared, device=DEVICES["C"]).open())
        _edits(a, random.Random(2), EDITS)
        _edits(b, random.Random(3), EDITS)
        _edits(c, random.Random(4), EDITS)
        a.compact()
        for lib in (a, b, c):
            lib.close()

        base = _median("single", str(single), "-")
        own = _median("open", str(shared), DEVICES["A"])
        ro = _median("open-ro", str(shared), DEVICES["A"])
        join = _run("open-ro", str(shared), DEVICES["D"])
        assert own["papers"] == base["papers"] == join["papers"], (own, base, join)
        ratio = own["seconds"] / base["seconds"]
        print(f"single-device open (today):       {base['seconds']:.2f} s, peak {base['peak_mb']:.0f} MB")
        print(
            f"shared open by A (writable):       {own['seconds']:.2f} s, peak {own['peak_mb']:.0f} MB  "
            f"x{ratio:.2f} of today (target <= x{TARGET_OPEN_RATIO}) {'PASS' if ratio <= TARGET_OPEN_RATIO else 'MISS'}"
        )
        print(f"shared open by A (read-only):      {ro['seconds']:.2f} s, x{ro['seconds'] / base['seconds']:.2f}")
        print(f"a new device D joins (read-only):  {join['seconds']:.2f} s, peak {join['peak_mb']:.0f} MB")

        a = Library(SharedStore(shared, device=DEVICES["A"]).open())
        b = Library(SharedStore(shared, device=DEVICES["B"]).open())
        _edits(b, random.Random(5), EDITS)
        t0 = time.perf_counter()
        changes = a.refresh()
        remote = time.perf_counter() - t0
        print(
            f"A merges {EDITS:,} remote actions:  {remote:.2f} s ({len(changes)} change events) "
            f"(target < {TARGET_REMOTE_S} s) {'PASS' if remote < TARGET_REMOTE_S else 'MISS'}"
        )
        a.close()
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
