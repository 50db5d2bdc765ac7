"""The fault campaign, in CI-sized loops: kill -9 at random moments, random
damage to every file of a library and its index, and `recover` after each
kind of damage, with counts printed at the end of each test.

A larger run by hand: ``PAPERSHELF_FAULTS=10 python -m pytest tests/faults -s``
(the loop sizes are multiplied by that number; 10 gives 250 kills, 80 export
and rebuild kills, 960 damaged library files and 240 damaged indexes).

Outcomes are classified, never assumed: after damage, opening the library
must either refuse with a message that names the damaged file, or give
exactly the state that was saved; anything else is a *silent change* and
fails the test. After `recover`, every edit whose bytes survived somewhere
(an intact line of the library file, the backup, an intact journal line)
must be back: *lost recoverable edits* fail the test too.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from pathlib import Path

import pytest

from conftest import SEEDS, store_dir
from papershelf.core.errors import PapershelfError, StoreCorruptError, StoreUnreadableError
from papershelf.core.library import Library
from papershelf.core.store import JOURNAL, MARK, SNAPSHOT

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX")]


def report(capsys, title: str, counts: dict) -> None:
    with capsys.disabled():
        print(f"\n[faults x{SCALE}] {title}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


# ---- kill -9 ---------------------------------------------------------------

# Edits of every kind, each printed after its method returned (i.e. after
# fsync): "n kind paper value". A tiny compaction threshold makes the writer
# rewrite the library file every few edits, so kills land in compactions,
# bulk imports (written as a new library file) and journal appends alike.
WRITER = textwrap.dedent("""
    import random, sys
    from pathlib import Path
    from papershelf.core.store import store
    from papershelf.core.library import Library
    folder, threshold, n, bulk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    store.JOURNAL_COMPACT_BYTES = threshold
    store.BULK_PAPERS = int(sys.argv[5])
    lib = Library.open(folder)
    ids = lib.ids()
    rng = random.Random(n)
    print("ready", flush=True)
    while True:
        pid = ids[rng.randrange(len(ids))]
        kind = rng.choice(["tag", "tag", "note", "note", "status", "list", "compact", "import"])
        value = {"tag": f"e{n}", "note": f"n{n}", "list": f"L{n % 4}", "compact": "-", "import": "-",
                 "status": rng.choice(["read", "reading", "to-read", "skipped"])}[kind]
        print("?", n, kind, pid, value, flush=True)        # what it is about to do
        if kind == "tag":
            lib.add_tags([pid], [value])
        elif kind == "note":
            lib.set_notes(pid, value)
        elif kind == "status":
            lib.set_status([pid], value)
        elif kind == "list":
            lib.add_to_list(value, [pid])
        elif kind == "compact":
            lib.compact()
        else:
            path = Path(bulk) / f"import-{n}.txt"
            words = " ".join(f"w{n}x{i}" for i in range(20))
            path.write_text(f"An abstract for edit {n} about {words} and nothing else at all, long enough.\\n")
            report = lib.import_files([path])[0]
            pid = (report.added_ids or ["-"])[0]
        print(n, kind, pid, value, flush=True)
        n += 1
    """)


def check_acknowledged(
    lib: Library, acked: list[tuple[int, str, str, str]], pending: tuple[str, str, str] | None
) -> None:
    """Every acknowledged edit is there; only the edit in flight (`pending`) may or may not be."""
    latest: dict[tuple[str, str], tuple[int, str]] = {}
    for n, kind, pid, value in acked:
        if kind == "tag":
            assert value in lib.get(pid).tags, f"edit {n} (tag {value} on {pid}) lost"
        elif kind == "list":
            assert pid in lib.list_ids(value), f"edit {n} ({pid} into list {value}) lost"
        elif kind in ("note", "status"):
            latest[(kind, pid)] = (n, value)
        elif kind == "import" and pid != "-":
            lib.get(pid)
    for (kind, pid), (n, value) in latest.items():
        got = lib.get(pid).notes if kind == "note" else lib.get(pid).status.value
        assert got == value or pending == (kind, pid, got), f"edit {n} ({kind} of {pid}) lost"


def landed(lib: Library, edit: tuple[str, str, str]) -> bool:
    kind, pid, value = edit
    if kind == "tag":
        return value in lib.get(pid).tags
    if kind == "list":
        return value in lib.lists() and pid in lib.list_ids(value)  # the list may not exist yet
    if kind == "note":
        return lib.get(pid).notes == value
    if kind == "status":
        return lib.get(pid).status.value == value
    return False


def test_kill_9_never_loses_an_acknowledged_edit(tmp_path, capsys):
    folder = tmp_path / "library"
    bulk = tmp_path / "incoming"
    bulk.mkdir()
    with Library.open(folder) as lib:
        lib.import_files(SEEDS[:2])
    rng = random.Random(20261201)
    acked: list[tuple[int, str, str, str]] = []
    counts = Counter()
    next_edit = 0
    for _round in range(25 * SCALE):
        threshold = rng.choice([600, 6000, 60000, 1 << 30])
        bulk_papers = rng.choice([0, 2000])  # 0: every import is written as a new library file
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), str(threshold), str(next_edit), str(bulk), str(bulk_papers)],
            stdout=subprocess.PIPE,
            text=True,
        ) as child:
            assert child.stdout.readline().strip() == "ready"
            lines: list[str] = []
            reader = threading.Thread(target=lines.extend, args=(child.stdout,), daemon=True)
            reader.start()
            # a random moment of its work: wait for a random number of acknowledgements, or none
            target = rng.choice([0, 1, 3, 10, 30])
            while len(lines) < target and child.poll() is None:
                reader.join(0.005)
            child.send_signal(signal.SIGKILL)
            child.wait()
            reader.join(10)
        counts["kills"] += 1
        pending = None
        for line in lines:
            parts = line.split()
            if not line.endswith("\n"):
                # the kill cut this line short: an intent whose edit never started, or an
                # acknowledgement never finished (that edit is then checked as pending)
                if parts[:1] == ["?"] and len(parts) > 1 and parts[1].isdigit():
                    next_edit = int(parts[1]) + 1
                break
            if len(parts) == 5 and parts[0] == "?":
                pending = (parts[2], parts[3], parts[4])
                next_edit = int(parts[1]) + 1  # never reuse the number of an edit in flight
            elif len(parts) == 4:
                acked.append((int(parts[0]), parts[1], parts[2], parts[3]))
                pending = None
        with Library.open(folder) as lib:  # every kill leaves a library that opens...
            assert not lib.notices or "cut short" in lib.notices[0]
            counts["unfinished saves reported"] += bool(lib.notices)
            check_acknowledged(lib, acked, pending)  # ...with every acknowledged edit
            if pending is not None and landed(lib, pending):
                acked.append((next_edit - 1, *pending))  # saved but not yet said: it stays
    counts["acknowledged edits"] = len(acked)
    counts["lost"] = 0
    report(capsys, "kill -9 during edits, imports and compactions", dict(counts))
    assert len(acked) > 20 * SCALE, "the writers should have got real work done between kills"


EXPORTER = textwrap.dedent("""
    import sys
    from papershelf.core.library import Library
    with Library.open(sys.argv[1], readonly=True) as lib:
        ids = lib.ids()
        print("ready", flush=True)
        while True:
            lib.export_bibtex(ids, sys.argv[2])
            print("done", flush=True)
    """)

REBUILDER = textwrap.dedent("""
    import sys
    from papershelf.core.library import Library
    from papershelf.core.search import SearchIndex
    with Library.open(sys.argv[1], readonly=True) as lib:
        print("ready", flush=True)
        while True:
            ix = SearchIndex(lib).open()
            ix.rebuild()
            ix.close()
            print("done", flush=True)
    """)


def run_and_kill(script: str, args: list[str], rng: random.Random) -> None:
    with subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout.readline().strip() == "ready"
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(child.stdout), daemon=True)
        reader.start()
        target = rng.choice([0, 0, 1, 2])
        # somewhere inside the (target+1)-th run: after `target` complete ones and a random share of the next
        while len(lines) < target and child.poll() is None:
            reader.join(0.005)
        reader.join(rng.uniform(0.0, 0.4))
        child.send_signal(signal.SIGKILL)
        child.wait()
        reader.join(10)


def test_kill_9_during_exports_and_index_rebuilds(tmp_path, capsys):
    from papershelf.core.search import SearchIndex

    folder = tmp_path / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
    target = tmp_path / "refs.bib"
    target.write_text("% the user's own file\n")
    rng = random.Random(5)
    counts = Counter()
    with Library.open(folder, readonly=True) as lib:
        with SearchIndex(lib).open() as ix:
            expected = ix.search("diffusion", limit=None, facets=False).ids
    reference = tmp_path / "reference.bib"
    with Library.open(folder, readonly=True) as lib:
        lib.export_bibtex(lib.ids(), reference)
    whole = reference.read_text()
    old = target.read_text()
    for _ in range(4 * SCALE):
        run_and_kill(EXPORTER, [str(folder), str(target)], rng)
        text = target.read_text()
        assert text in (old, whole), "a half-written export"  # the old file or the whole new one
        counts["exports killed"] += 1
        counts["export intact"] += 1
        old = text
        run_and_kill(REBUILDER, [str(folder)], rng)
        with Library.open(folder, readonly=True) as lib, SearchIndex(lib).open() as ix:
            assert ix.search("diffusion", limit=None, facets=False).ids == expected
        counts["rebuilds killed"] += 1
        counts["index answers right after"] += 1
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    counts["export temp files left (removed after 15 min)"] = len(leftovers)
    report(capsys, "kill -9 during exports and index rebuilds", dict(counts))


# ---- damage ----------------------------------------------------------------


def build_base(folder: Path) -> dict:
    """A library with a backup, a library file and a journal, each holding edits we can recognise.

    backup (generation 1):   papers of the first two listings
    library file (gen. 2):   every listing's papers, and notes "s<i>" on 40 papers
    journal:                 notes "j<i>" on 40 other papers, a reading list, a status
    """
    with Library.open(folder) as lib:
        lib.import_files(SEEDS[:2])
        lib.compact()
        lib.import_files(SEEDS[2:])
        ids = lib.ids()
        for i, pid in enumerate(ids[::4][:40]):
            lib.set_notes(pid, f"s{i}")
        lib.add_to_list("thesis", ids[:6])
        lib.compact()
        for i, pid in enumerate(ids[2::4][:40]):
            lib.set_notes(pid, f"j{i}")
        lib.add_to_list("later", ids[6:9])
        lib.set_status(ids[1:3], "reading")
        return {p.id: p.raw() for p in lib.papers()}, dict(lib.lists())


def damage_bytes(data: bytes, how: str, rng: random.Random) -> bytes:
    buf = bytearray(data)
    n = len(buf)
    if n == 0:
        return b"x"
    if how == "bit flips":
        for _ in range(rng.randint(1, 3)):
            buf[rng.randrange(n)] ^= 1 << rng.randrange(8)
    elif how == "truncated":
        del buf[rng.randrange(n) :]
    elif how == "zeroed range":
        start = rng.randrange(n)
        end = min(n, start + rng.randint(1, 4096))
        buf[start:end] = bytes(end - start)
    elif how == "garbage block":
        start = rng.randrange(n)
        end = min(n, start + rng.randint(1, 512))
        buf[start:end] = rng.randbytes(end - start)
    return bytes(buf)


def state_of(lib: Library) -> tuple[dict, dict]:
    return {p.id: p.raw() for p in lib.papers()}, dict(lib.lists())


def line_spans(data: bytes) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in data.split(b"\n")[:-1]:
        spans.append((pos, pos + len(line) + 1))
        pos += len(line) + 1
    return spans


def intact_lines(before: bytes, after: bytes) -> list[bytes]:
    """Lines of `before` that `after` still holds unchanged at the same place."""
    return [before[a:b] for a, b in line_spans(before) if after[a:b] == before[a:b]]


DAMAGES = ["bit flips", "truncated", "zeroed range", "garbage block"]
FILES = [SNAPSHOT, JOURNAL, MARK, "backup"]


def test_damage_to_every_store_file_is_refused_or_harmless_and_recover_keeps_what_survived(tmp_path, capsys):
    import orjson

    base = tmp_path / "base"
    expected, expected_lists = build_base(base)
    base_store = store_dir(base)  # this device's files, which the damage goes to
    backup_file = next((base_store / "backups").iterdir())
    from papershelf.core.store import read_snapshot

    backup_papers = read_snapshot(backup_file)[0]
    rng = random.Random(int(os.environ.get("PAPERSHELF_FAULT_SEED", "99")))
    outcomes = Counter()
    lost_cases: list[str] = []
    kept = Counter()
    recoverable = Counter()
    for round_ in range(6 * SCALE):
        for name in FILES:
            for how in DAMAGES:
                folder = tmp_path / f"r{round_}-{name}-{how.replace(' ', '')}"
                shutil.copytree(base, folder)
                mine = store_dir(folder)
                path = mine / name if name != "backup" else next((mine / "backups").iterdir())
                original = path.read_bytes()
                damaged = damage_bytes(original, how, rng)
                if damaged == original:
                    continue
                path.write_bytes(damaged)
                try:
                    with Library.open(folder, readonly=True) as lib:
                        got = state_of(lib)
                except (StoreCorruptError, StoreUnreadableError) as exc:
                    assert str(folder) in str(exc), f"the message does not say where: {exc}"
                    outcomes["refused with a message"] += 1
                else:
                    assert got == (expected, expected_lists), (
                        f"SILENT CHANGE: {how} in {name} (round {round_}) loaded different data"
                    )
                    outcomes["harmless (loaded exactly what was saved)"] += 1
                    continue
                # recover, and count what came back against what survived somewhere
                message = Library.recover(folder)
                assert "Traceback" not in message
                with Library.open(folder, readonly=True) as lib:
                    papers, _lists = state_of(lib)
                snap_lines = intact_lines(
                    (base_store / SNAPSHOT).read_bytes(),
                    damaged if name == SNAPSHOT else (base_store / SNAPSHOT).read_bytes(),
                )
                snap_ids = {orjson.loads(line.rpartition(b"\t")[0]).get("id") for line in snap_lines}
                journal_before = (base_store / JOURNAL).read_bytes()
                journal_lines = intact_lines(journal_before, damaged if name == JOURNAL else journal_before)
                journal_notes = {}
                for line in journal_lines:
                    for op in orjson.loads(line.rpartition(b"\t")[0])["ops"]:
                        if op[0] == "f" and op[2] == "notes":  # a device's action: one field set
                            journal_notes[op[1]] = op[3]
                for pid, raw in expected.items():
                    # a paper survived if its line is intact, or the backup holds it
                    if pid in snap_ids or pid in backup_papers:
                        recoverable["papers"] += 1
                        kept["papers"] += pid in papers
                        if pid not in papers:
                            lost_cases.append(
                                f"{how} in {name}, round {round_}: paper {pid} "
                                f"(in the backup: {pid in backup_papers}); recover said:\n{message}"
                            )
                    note = raw.get("notes", "")
                    if note.startswith("s") and pid in snap_ids:
                        recoverable["library-file edits"] += 1
                        kept["library-file edits"] += papers.get(pid, {}).get("notes") == note
                    if note.startswith("j") and journal_notes.get(pid) == note and pid in papers:
                        recoverable["journal edits"] += 1
                        kept["journal edits"] += papers[pid].get("notes") == note
                    if pid in papers:  # nothing read from a damaged line: text is as saved
                        assert papers[pid].get("abstract") == raw.get("abstract"), f"{pid} changed"
                assert set(papers) <= set(expected), "papers appeared from nowhere"
                outcomes["recovered"] += 1
    lost = {k: recoverable[k] - kept[k] for k in recoverable}
    report(
        capsys,
        "damage to library file, journal, journal.last and a backup",
        {
            **outcomes,
            **{f"{k} kept/recoverable": f"{kept[k]}/{recoverable[k]}" for k in recoverable},
            "silent changes": 0,
            "lost recoverable": sum(lost.values()),
        },
    )
    assert not any(lost.values()), f"recover lost edits that survived: {lost}\n" + "\n".join(lost_cases[:3])


def test_damage_to_the_index_is_rebuilt_or_refused_never_a_wrong_answer(tmp_path, capsys):
    from conftest import copy_library, index_dir, local_dir
    from papershelf.core.search import SearchIndex

    base = tmp_path / "base"
    with Library.open(base) as lib:
        lib.import_files(SEEDS)
    queries = ["diffusion", "author:wang", '"language model"', "optim*", "graph NOT neural", "reinforcment~"]
    with Library.open(base, readonly=True) as lib, SearchIndex(lib).open() as ix:
        expected = {q: ix.search(q, limit=None, facets=False).ids for q in queries}
    files = sorted(p.name for p in index_dir(base).iterdir() if p.is_file())
    rng = random.Random(3)
    outcomes = Counter()
    for round_ in range(2 * SCALE):
        for name in files:
            how = rng.choice(DAMAGES)
            folder = tmp_path / f"i{round_}-{name}"
            copy_library(base, folder, local_dir(base))
            path = index_dir(folder) / name
            path.write_bytes(damage_bytes(path.read_bytes(), how, rng))
            try:
                with Library.open(folder, readonly=True) as lib, SearchIndex(lib).open() as ix:
                    if ix.rebuilt_because:
                        outcomes["found at open and rebuilt"] += 1
                    got = {}
                    for q in queries:
                        try:
                            got[q] = ix.search(q, limit=None, facets=False).ids
                        except PapershelfError:
                            # a query that finds damage marks the index; the next open rebuilds
                            outcomes["query refused, index marked"] += 1
                            ix.close()
                            with SearchIndex(lib).open() as again:
                                got[q] = again.search(q, limit=None, facets=False).ids
                assert got == expected, f"WRONG ANSWER after {how} in {name}"
                outcomes["right answers"] += 1
                outcomes[f"right answers after {how}"] += 1
            except PapershelfError as exc:
                assert str(folder) in str(exc)
                outcomes["refused with a message"] += 1
    report(capsys, "damage to every index file", {**outcomes, "wrong answers": 0})
