"""Memory of a process that opens and closes one library again and again (issue 21, defect 2).

Not a pytest test; run it by hand on a library folder::

    python tests/perf/bench_reopen.py LIBRARY_FOLDER [OPENS] [readonly|writable]

Prints the resident memory (VmRSS) after each open + close and after a final
`gc.collect()`. Measured 2026-12-03 on a 30,000-paper library (bench_store's
corpus), 41 read-only opens: before the fix 22 MB → 4,096 MB (about 99 MB
kept per open, 2.0 min); after, 121 MB after the first open and after the
41st (1.2 min), peak 123 MB (`/usr/bin/time -v`).
"""

from __future__ import annotations

import gc
import sys


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    from papershelf.core.library import Library

    folder = sys.argv[1]
    opens = int(sys.argv[2]) if len(sys.argv) > 2 else 41
    readonly = (sys.argv[3] if len(sys.argv) > 3 else "readonly") == "readonly"
    print(f"start {rss_mb():.0f} MB")
    after = []
    for _ in range(opens):
        lib = Library.open(folder, readonly=readonly)
        lib.close()
        del lib
        after.append(round(rss_mb()))
    print("after each open + close (MB):", after)
    gc.collect()
    print(f"after gc.collect(): {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
