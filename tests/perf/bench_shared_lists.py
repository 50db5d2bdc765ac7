"""Shared-library benchmark: big reading-list edits (put half the library on a list, then the other
half, take half off, undo it, delete a quarter of the papers, undo that).

Not a pytest test; run it by hand::

    python tests/perf/bench_shared_lists.py              # 100,000 papers
    python tests/perf/bench_shared_lists.py --size 8000

Each step was quadratic before the review of issue 22: a list was sorted again for each paper an
action put on it, and the undo's label and inverse rebuilt a set per paper (at 8,000 papers, the
second 4,000 put on a list took 28 s; at 100,000 it did not finish).
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    n = parser.parse_args().size
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PAPERSHELF_STATE_DIR"] = str(Path(tmp) / "state")
        os.environ["PAPERSHELF_CONFIG_DIR"] = str(Path(tmp) / "config")
        from papershelf.core.library import Library
        from papershelf.core.paper import Paper
        from papershelf.core.store import Op, SharedStore

        lib = Library(SharedStore(Path(tmp) / "library", device="aaaaaaaaaaa1").open())
        ids = [f"{i:010x}" for i in range(n)]
        lib._store.apply([Op("add", i, Paper.from_dict({"id": i, "title": f"paper {i}"})) for i in ids])

        def step(what: str, do: object) -> None:
            start = time.perf_counter()
            do()  # type: ignore[operator]
            print(f"{what:<40} {time.perf_counter() - start:7.2f} s")

        step(f"put {n // 2} papers on a list", lambda: lib.add_to_list("big", ids[: n // 2]))
        step(f"put {n - n // 2} more on it", lambda: lib.add_to_list("big", ids[n // 2 :]))
        step(f"take {n // 2} off it", lambda: lib.remove_from_list("big", ids[: n // 2]))
        step("undo that", lib.undo)
        step(f"delete {n // 4} papers", lambda: lib.delete_papers(ids[: n // 4]))
        step("undo that", lib.undo)
        lib.close()


if __name__ == "__main__":
    main()
