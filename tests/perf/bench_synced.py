"""Saved searches and hand tags read from every device's file: what a read costs.

Not a pytest test; run it by hand::

    python tests/perf/bench_synced.py                   # 3 devices, 100 searches and 100 tags each
    python tests/perf/bench_synced.py --devices 5 --each 300

Each device (its own configuration folder, so its own id) saves its searches and
applies its tags in one library; then `Library.saved_searches()` and `hand_tags()`
(what the window's sidebar and number keys read) are timed as device 1, best of 20.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "app"))

from papershelf.core.library import Library, synced


def best(f, n: int = 20) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times) * 1000


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=3)
    p.add_argument("--each", type=int, default=100)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "library"
        os.environ["PAPERSHELF_STATE_DIR"] = str(Path(tmp) / "state")
        for d in range(args.devices):
            os.environ["PAPERSHELF_CONFIG_DIR"] = str(Path(tmp) / f"config-{d}")
            with Library.open(folder) as lib:
                t = time.perf_counter()
                for i in range(args.each):
                    lib.save_search(f"search {d}-{i}", f"words {i}", {"tag": f"t{i}"})
                saves = (time.perf_counter() - t) * 1000 / args.each
                from papershelf.core.library import tagging

                tagging._write_hand_tags(lib, [*lib.hand_tags(), *(f"tag-{d}-{i}" for i in range(args.each))])
        os.environ["PAPERSHELF_CONFIG_DIR"] = str(Path(tmp) / "config-0")
        with Library.open(folder, readonly=True) as lib:
            n = len(lib.saved_searches())
            read = best(lib.saved_searches)
            tags = best(lib.hand_tags)
            cold = best(lambda: (synced._parsed.clear(), lib.saved_searches()))
            print(
                f"{args.devices} devices x {args.each}: {n} saved searches read in {read:.2f} ms, "
                f"{len(lib.hand_tags())} hand tags in {tags:.2f} ms (files parsed anew: searches {cold:.2f} ms); "
                f"one save (the last device's) {saves:.2f} ms"
            )


if __name__ == "__main__":
    main()
