"""Undo benchmark: what the library's undo history costs an import and an edit, and how long undo takes.

    .venv/bin/python tests/perf/bench_undo.py [--papers 10000]

Imports a synthetic corpus (bench_store.write_corpus) twice, with the history
recorded and without (`History.unrecorded`), and reports the import times, the
size of history.jsonl, the time to undo the import and to redo it, and the same
for a tag added to every paper.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import write_corpus

from papershelf.core.library import Library


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=10_000)
    n = ap.parse_args().papers
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["PAPERSHELF_STATE_DIR"] = str(root / "state")
        os.environ["PAPERSHELF_CONFIG_DIR"] = str(root / "config")
        files = write_corpus(n, root / "corpus", 1)
        for recorded in (False, True):
            folder = root / f"lib-{recorded}"
            with Library.open(folder) as lib:
                t = time.perf_counter()
                if recorded:
                    lib.import_files(files)
                else:
                    with lib._history.unrecorded():
                        lib.import_files(files)
                took = time.perf_counter() - t
                print(
                    f"import of {len(lib)} papers, history {'recorded' if recorded else 'not recorded'}: {took:.2f} s"
                )
                if not recorded:
                    continue
                hist = lib._history.path
                print(f"  history.jsonl after the import: {hist.stat().st_size / 1024:.0f} KiB")
                t = time.perf_counter()
                lib.add_tags(lib.ids(), ["bench"])
                print(
                    f"  tag every paper: {time.perf_counter() - t:.2f} s; history {hist.stat().st_size / 1024:.0f} KiB"
                )
                for what in ("undo", "undo", "redo", "redo"):
                    t = time.perf_counter()
                    done = getattr(lib, what)()
                    print(f"  {what} ({done.label}): {time.perf_counter() - t:.2f} s; {len(lib)} papers")
                print(f"  history.jsonl in the end: {hist.stat().st_size / 1024:.0f} KiB")
            with Library.open(folder) as lib:
                t = time.perf_counter()
                label = lib.undo_label()
                print(f"  reading the history back: {time.perf_counter() - t:.2f} s ({label!r} next)")


if __name__ == "__main__":
    main()
