"""A process killed (SIGKILL) while writing leaves a library that loads, with
every edit it had reported as saved."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from papershelf.core.library import Library

# The writer tags papers one by one and prints each edit after it returned,
# i.e. after fsync. A tiny compaction threshold makes it rewrite the library
# file every few edits, so kills land in compactions too.
WRITER = textwrap.dedent("""
    import sys
    from papershelf.core import store
    from papershelf.core.library import Library
    store.JOURNAL_COMPACT_BYTES = int(sys.argv[2])
    store.BULK_BYTES = 1 << 30
    lib = Library.open(sys.argv[1])
    ids = lib.ids()
    n = int(sys.argv[3])
    while True:
        pid = ids[n % len(ids)]
        lib.add_tags([pid], [f"edit-{n}"])
        if n % 7 == 0:
            lib.compact()
        print(n, pid, flush=True)
        n += 1
    """)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_sigkill_during_writes_never_breaks_the_library(tmp_path, seeds):
    folder = tmp_path / "library"
    with Library.open(folder) as lib:
        lib.import_files(seeds[:2])
    rng = random.Random(1234)
    acknowledged: dict[int, str] = {}
    next_edit = 0
    for round_ in range(25):
        threshold = rng.choice([400, 4000, 40000])
        with subprocess.Popen([sys.executable, "-c", WRITER, str(folder), str(threshold), str(next_edit)],
                              stdout=subprocess.PIPE, text=True) as child:
            lines: list[str] = []
            reader = threading.Thread(target=lambda: lines.extend(child.stdout), daemon=True)
            reader.start()
            # let it run into a random point of its work, then kill it hard
            time.sleep(rng.uniform(0.3, 1.2))
            child.send_signal(signal.SIGKILL)
            child.wait()
            reader.join(10)
        for line in lines:
            if line.strip() and len(line.split()) == 2:
                n, pid = line.split()
                acknowledged[int(n)] = pid
        # every kill must leave a library that opens, with all acknowledged edits
        with Library.open(folder) as lib:
            assert len(lib) == 39
            for n, pid in acknowledged.items():
                assert f"edit-{n}" in lib.get(pid).tags, f"round {round_}: edit {n} lost"
            next_edit = max(acknowledged, default=-1) + 1
            # and edits written but not yet acknowledged may or may not be there
            present = sum(f"edit-{next_edit}" in p.tags for p in lib.papers())
            assert present in (0, 1)
            next_edit += present
    assert len(acknowledged) > 100, "the writer should have got real work done between kills"
