"""A read-only library answered without reading every paper (issue 25).

A read-only command (`search`, `show`, `list`...) on a 100,000-paper shared library
used to read and checksum the whole 195 MB library file and replay every journal
before it could answer: 2-6 s and 400 MB for one paper. A *read view* is a small
SQLite file in this machine's folder for the library (`machine.local_dir`, beside the
index; never in the synced folder): every paper's id, in library order, with where its
line is in this device's library file (offset, length, line number), and, for the
papers the journals changed since (their merged state differs from their line), the
paper as merged. With it the library's lists, counts, notices and generation.

It is written by a read-only open that read everything anyway (`write_view`), and is
used only while every store file a load reads is as it was then: the stat key
(inode, size, mtime and ctime in ns) of the marker and of each file in each device's
folder (`input_keys`), so another process's edit, another device's synced file, a
compaction, a library file replaced or rewritten all send the next open back to the
full load (which checks everything and writes a new view). A view is written only
when every input is older than `SETTLE_NS` at the start of the load and unchanged at
its end, so an edit made while it was written (even in the same clock tick) cannot
leave a view that looks current but is not.

A paper read through the view is read from the library file through a descriptor
opened (and checked against the view) at open: the line's checksum is checked and
its id must be the one asked for; a line that fails is reported as the full load
reports it ("line N is damaged..."). What the view does not check: lines it never
reads. A library file damaged in place without any change to its stat key (a disk
that flips a bit; no program can write it without changing its ctime) is found by
the next full load (the window, any edit), not by a `show` of another paper.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ... import __version__
from ..errors import StoreCorruptError, StoreUnreadableError
from ..paper import Paper
from .format import BACKUPS, DEVICES, SCHEMA_VERSION, SNAPSHOT, damaged_line_error, unseal

log = logging.getLogger("papershelf.core.store")

VIEW = "readview.sqlite"
VIEW_VERSION = 2
# what a view was written by: a view of another Papershelf or store schema is passed over (its
# papers may be another version's merge of the same files)
MADE_BY = {"version": VIEW_VERSION, "papershelf": __version__, "schema": SCHEMA_VERSION}
TEMP = ".tmp"
# a temporary view untouched this long was left by a process that was killed while writing it
STALE_TEMP_S = 15 * 60
# the view reads lines at an offset (os.pread): where there is none (Windows), it is not used
USABLE = hasattr(os, "pread")
# inputs changed less than this before a load: no view is written from it. A file's ctime comes
# from the kernel's coarse clock (a tick, up to 10 ms, behind time.time_ns): a write after the
# load began always gets a ctime later than one this much older than the start
SETTLE_NS = 200_000_000
BATCH = 5000

Key = list[int]


def input_keys(root: Path) -> dict[str, Key] | None:
    """The stat key of every file a load of the shared library in `root` reads (relative
    path → [inode, size, mtime_ns, ctime_ns]); None when the folder cannot be listed."""
    keys: dict[str, Key] = {}
    try:
        keys[SNAPSHOT] = _key(os.stat(root / SNAPSHOT))
        with os.scandir(root / DEVICES) as devices:
            folders = sorted(e.name for e in devices if e.is_dir())  # as the full load: links followed
        for dev in folders:
            with os.scandir(root / DEVICES / dev) as entries:
                for entry in entries:
                    if entry.name != BACKUPS:
                        keys[f"{DEVICES}/{dev}/{entry.name}"] = _key(entry.stat())
    except OSError:
        return None
    return keys


def _key(st: os.stat_result) -> Key:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class ViewPapers(Mapping[str, Paper]):
    """id → Paper, read on demand from the view and the library file (see the module)."""

    def __init__(self, db: sqlite3.Connection, fd: int, path: Path, backups: Path, count: int, view: Path):
        self._db = db
        self._view = view
        self._fd = fd
        self._path = path
        self._backups = backups
        self._count = count
        self._read: dict[str, Paper] = {}  # the papers asked for, as asked (a show reads one twice)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for (pid,) in self._ask("SELECT id FROM papers ORDER BY n").fetchall():
            yield pid

    def __contains__(self, pid: object) -> bool:
        if not isinstance(pid, str):
            return False
        return pid in self._read or self._ask("SELECT 1 FROM papers WHERE id=?", (pid,)).fetchone() is not None

    def __getitem__(self, pid: str) -> Paper:
        paper = self._read.get(pid)
        if paper is not None:
            return paper
        if not isinstance(pid, str):
            raise KeyError(pid)
        row = self._ask("SELECT id, line, off, len, body FROM papers WHERE id=?", (pid,)).fetchone()
        if row is None:
            raise KeyError(pid)
        paper = self._paper(row)
        if len(self._read) < 10_000:
            self._read[pid] = paper
        return paper

    def values(self) -> Iterable[Paper]:  # type: ignore[override]
        """Every paper in library order, read one by one (memory does not grow with the library)."""
        return _Values(self)

    def rows(self, where: str = "") -> Iterator[Paper]:
        """The papers in library order (`where`: a condition on the view's columns)."""
        cur = self._ask(f"SELECT id, line, off, len, body FROM papers {where} ORDER BY n")
        while rows := self._fetch(cur):
            yield from self._papers(rows)

    def with_files(self) -> list[str]:
        """The ids of the papers that have files, in library order."""
        return [pid for (pid,) in self._ask("SELECT id FROM papers WHERE files ORDER BY n").fetchall()]

    def tag_counts(self) -> dict[str, int]:
        """Tag → how many papers have it (kept in the view)."""
        row = self._ask("SELECT value FROM meta WHERE key='tags'").fetchone()
        return dict(json.loads(row[0])) if row else {}

    def _ask(self, sql: str, args: tuple[str, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise self._unreadable(exc) from exc

    def _fetch(self, cur: sqlite3.Cursor) -> list[Any]:
        try:
            return cur.fetchmany(1000)
        except sqlite3.Error as exc:
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: sqlite3.Error) -> StoreUnreadableError:
        """This machine's view, damaged after it was opened: removed, so the next command reads
        the library whole (and writes it again); the library itself is not touched."""
        with contextlib.suppress(OSError):
            self._view.unlink()
        return StoreUnreadableError(
            f"This machine's read view of the library ({self._view}) could not be read: {exc}. It was removed; "
            "run the command again (the library itself was not read wrong or changed).",
            self._view,
        )

    def _paper(self, row: tuple[str, int, int, int, bytes | None], raw: bytes | None = None) -> Paper:
        pid, line, off, size, body = row
        if body is None:
            if raw is None:
                raw = os.pread(self._fd, size, off)
            body = unseal(raw) if len(raw) == size else None
            if body is None:
                raise damaged_line_error(self._path, self._backups, line)
        try:
            d = orjson.loads(body)
        except ValueError:
            raise damaged_line_error(self._path, self._backups, line) from None
        if not isinstance(d, dict) or d.get("id") != pid:
            raise damaged_line_error(self._path, self._backups, line)
        return Paper.wrap_trusted(d)

    def _papers(self, rows: list[tuple[str, int, int, int, bytes | None]]) -> Iterator[Paper]:
        """The papers of `rows` (in order) as `_paper` reads them, each run of lines that follow
        one another in the library file read in one pread (library order is the file's order)."""
        from zlib import crc32

        loads = orjson.loads
        i, count = 0, len(rows)
        while i < count:
            start = end = rows[i][2]
            j = i
            while j < count and rows[j][4] is None and rows[j][2] == end:
                end += rows[j][3]
                j += 1
            if j - i < 2:
                yield self._paper(rows[i])
                i += 1
                continue
            data = os.pread(self._fd, end - start, start)
            for row in rows[i:j]:
                off = row[2] - start
                raw = data[off : off + row[3]]
                # `_paper`'s checks, inline (it is called for what fails them: it raises their error)
                body = raw[:-10]
                d = None
                if len(raw) == row[3] > 10 and raw[-10:-9] == b"\t" and raw[-1:] == b"\n":
                    if b"%08x" % crc32(body) == raw[-9:-1]:
                        try:
                            d = loads(body)
                        except ValueError:
                            d = None
                if type(d) is dict and d.get("id") == row[0]:
                    yield Paper.wrap_trusted(d)
                else:
                    yield self._paper(row, raw)
            i = j

    def close(self) -> None:
        """Let go of the view's database and the library file."""
        self._db.close()
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)


class _Values:
    """papers.values() of a view: iterable again, with a length."""

    def __init__(self, papers: ViewPapers):
        self._papers = papers

    def __len__(self) -> int:
        return len(self._papers)

    def __iter__(self) -> Iterator[Paper]:
        return self._papers.rows()


class ViewStore:
    """A read-only store over a read view: what `Library` reads of a store, and no writing."""

    readonly = True
    sync = None
    dropped_torn_line = False

    def __init__(self, root: Path, device: str, local: Path, papers: ViewPapers, meta: dict[str, Any]):
        self.root = root
        self.device = device
        self.local = local
        self.folder = root / DEVICES / device
        self.papers = papers
        self.lists: dict[str, list[str]] = meta["lists"]
        self.generation: int = meta["generation"]
        self.seq: int = meta["seq"]
        self.fingerprint_version: int = meta["fingerprint_version"]
        self.notices: list[str] = list(meta["notices"])
        self.waiting: dict[str, str] = dict(meta["waiting"])
        self._inputs: dict[str, Key] = meta["inputs"]

    @property
    def library_folder(self) -> Path:
        """The library folder."""
        return self.root

    def unchanged_on_disk(self) -> bool:
        """No store file changed since the view was checked at open."""
        return input_keys(self.root) == self._inputs

    def close(self) -> None:
        """Let go of the view and the library file."""
        self.papers.close()


def open_view(root: Path, device: str, local: Path) -> ViewStore | None:
    """The read view of the library, if there is one and every input is as it was
    when it was written; else None (the caller loads the library whole)."""
    path = local / VIEW
    if not USABLE or not path.is_file():
        return None
    snapshot = root / DEVICES / device / SNAPSHOT
    try:
        # a URI, so that a folder named with '?', '#' or '%' is the folder, not a query
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except (sqlite3.Error, ValueError):
        return None
    fd = -1
    try:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta WHERE key != 'tags'")}
        if any(meta.get(k) != v for k, v in MADE_BY.items()) or meta.get("device") != device:
            raise LookupError("another version's, schema's or device's view")
        # the library file first, through the descriptor the papers are read from: a
        # compaction that renames a new one in later does not change what it reads
        held = meta["inputs"].get(f"{DEVICES}/{device}/{SNAPSHOT}")
        if held is not None:  # (a device that never compacted has none: every paper is in the view)
            fd = os.open(snapshot, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            if _key(os.fstat(fd)) != held:
                raise LookupError("the library file changed")
        if input_keys(root) != meta["inputs"]:
            raise LookupError("a store file changed")
        papers = ViewPapers(db, fd, snapshot, root / DEVICES / device / BACKUPS, meta["count"], path)
        return ViewStore(root, device, local, papers, meta)
    except (OSError, sqlite3.Error, ValueError, KeyError, TypeError, AttributeError, LookupError) as exc:
        # (a meta row missing or of another shape: the view is passed over as any unusable one)
        log.debug("read view of %s not used: %s", root, exc)
        db.close()
        if fd >= 0:
            os.close(fd)
        return None


def settled(keys: dict[str, Key], now_ns: int) -> bool:
    """Whether every input was last changed long enough ago for a view of it to be trusted."""
    return all(k[3] <= now_ns - SETTLE_NS for k in keys.values())


def write_view(store: Any, keys: dict[str, Key]) -> bool:
    """Write the read view of a store loaded whole from files whose keys were `keys`
    before the load; only if they are settled and still the same after. True if written."""
    started = time.time_ns()
    if not USABLE or not settled(keys, started):
        return False
    root, device, local = Path(store.root), store.device, Path(store.local)
    tmp = local / f"{VIEW}.{os.getpid()}{TEMP}"
    try:
        local.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(local)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        db = sqlite3.connect(tmp)
        try:
            _fill(db, store, root / DEVICES / device / SNAPSHOT, keys)
        finally:
            db.close()
        if input_keys(root) != keys:
            return False
        os.replace(tmp, local / VIEW)
    except (OSError, sqlite3.Error, StoreCorruptError) as exc:
        log.info("could not write the read view of %s: %s", root, exc)
        return False
    finally:  # whatever stopped it (an error, Ctrl-C): no half-written view is left behind
        with contextlib.suppress(OSError):
            tmp.unlink()
    log.info("wrote the read view of %s in %.2f s", root, (time.time_ns() - started) / 1e9)
    return True


def remove_stale_temps(local: Path, older_than_s: float = STALE_TEMP_S) -> None:
    """Remove the temporary views in `local` untouched for `older_than_s` (a process was killed
    while it wrote one: it cannot remove its own); another process's fresh one is left alone."""
    cutoff = time.time() - older_than_s
    with contextlib.suppress(OSError), os.scandir(local) as entries:
        for entry in entries:
            if entry.name.startswith(f"{VIEW}.") and entry.name.endswith(TEMP):
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                        log.info("removed %s, left by an interrupted write", entry.path)


def _fill(db: sqlite3.Connection, store: Any, snapshot: Path, keys: dict[str, Key]) -> None:
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE TABLE papers (n INTEGER PRIMARY KEY, id TEXT NOT NULL, line INTEGER NOT NULL,"
        " off INTEGER NOT NULL, len INTEGER NOT NULL, files INTEGER NOT NULL, body BLOB)"
    )
    places = _line_places(snapshot)
    papers: Mapping[str, Paper] = store.papers
    dumps = orjson.dumps
    tags: dict[str, int] = {}
    batch: list[tuple[int, str, int, int, int, int, bytes | None]] = []
    fd = os.open(snapshot, os.O_RDONLY) if places else -1
    try:
        for n, (pid, paper) in enumerate(papers.items()):
            raw = paper.raw()
            encoded = dumps(raw)
            line, off, size = places.get(pid, (0, 0, 0))
            # a paper as merged that is byte for byte its line of the library file (which the
            # load just checked whole, and which is unchanged: see write_view) is read from there
            same = size == len(encoded) + 10 and os.pread(fd, len(encoded), off) == encoded
            for tag in raw.get("tags", ()):
                tags[tag] = tags.get(tag, 0) + 1
            batch.append((n, pid, line, off, size, 1 if raw.get("files") else 0, None if same else encoded))
            if len(batch) >= BATCH:
                db.executemany("INSERT INTO papers VALUES (?,?,?,?,?,?,?)", batch)
                batch.clear()
    finally:
        if fd >= 0:
            os.close(fd)
    db.executemany("INSERT INTO papers VALUES (?,?,?,?,?,?,?)", batch)
    db.execute("CREATE UNIQUE INDEX paper_ids ON papers (id)")  # after the rows: one sort, not 100,000 inserts
    meta = {
        **MADE_BY,
        "device": store.device,
        "inputs": keys,
        "count": len(papers),
        "lists": store.lists,
        "generation": store.generation,
        "seq": store.seq,
        "fingerprint_version": store.fingerprint_version,
        "notices": list(store.notices),
        "waiting": dict(getattr(store, "waiting", {})),
        "tags": tags,
    }
    db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()])
    db.commit()


def _line_places(snapshot: Path) -> dict[str, tuple[int, int, int]]:
    """id → (line number, offset, length) of each paper line of the library file (a paper line
    starts with its id, as the store writes it; a line that does not, or whose id is written
    with escapes, is simply not used: its paper is kept in the view whole)."""
    places: dict[str, tuple[int, int, int]] = {}
    prefix = b'{"id":"'
    start = len(prefix)
    off = 0
    if not snapshot.exists():
        return places
    with open(snapshot, "rb", buffering=1 << 20) as f:
        for lineno, line in enumerate(f, 1):
            size = len(line)
            if line.startswith(prefix):
                end = line.find(b'"', start)
                if end > 0:
                    places[line[start:end].decode("utf-8", "replace")] = (lineno, off, size)
            off += size
    return places


def refresh_view(store: Any, base: dict[str, Key], base_ns: int, loaded: list[str], edited: set[str]) -> bool:
    """After a writer's own edits, under its lock: the view as a whole load of the files now
    would write it, made from the view of the files it loaded (`base`, their keys once it held
    the lock, at `base_ns`) and the papers it `edited`, without reading the library again.

    Only when that view is there and was of exactly those files; no other device's file (nor
    the marker) changed since, and they were settled before the writer read them (the rules of
    write_view); this device's library file is the same (no compaction: the offsets hold) and
    the writer's papers are in the view's order: those it `loaded` (in the view's order, a
    whole load's of the same files) less the ones deleted, then the new ones. Else nothing is
    done: the next read-only command loads the library whole, as before. True if refreshed."""
    if not USABLE or store.notices or getattr(store, "waiting", None) or store.dropped_torn_line:
        return False
    root, device, local = Path(store.root), store.device, Path(store.local)
    own = f"{DEVICES}/{device}/"
    keys = input_keys(root)
    if keys is None or not (local / VIEW).is_file():
        return False
    others = {k: v for k, v in keys.items() if not k.startswith(own)}
    if others != {k: v for k, v in base.items() if not k.startswith(own)} or not settled(others, base_ns):
        return False
    if keys.get(own + SNAPSHOT) != base.get(own + SNAPSHOT):
        return False
    tmp = local / f"{VIEW}.{os.getpid()}{TEMP}"
    try:
        shutil.copyfile(local / VIEW, tmp)  # the view in use stays whole for the readers that have it open
        db = sqlite3.connect(tmp)
        try:
            done = _refill(db, store, (base, keys), loaded, edited)
        finally:
            db.close()
        if not done or input_keys(root) != keys:
            return False
        os.replace(tmp, local / VIEW)
    except (OSError, sqlite3.Error, ValueError, KeyError, TypeError) as exc:
        log.info("could not refresh the read view of %s: %s", root, exc)
        return False
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    log.info("refreshed the read view of %s after %d edited papers", root, len(edited))
    return True


def _refill(
    db: sqlite3.Connection,
    store: Any,
    inputs: tuple[dict[str, Key], dict[str, Key]],
    loaded: list[str],
    edited: set[str],
) -> bool:
    """The copy of the view in `db` brought to the store's state (see refresh_view); False
    (nothing to keep) when it was not the view of the files the store loaded, `inputs[0]`."""
    base, keys = inputs
    meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta WHERE key != 'tags'")}
    if any(meta.get(k) != v for k, v in MADE_BY.items()) or meta.get("device") != store.device:
        return False
    if meta["inputs"] != base or meta["generation"] != store.generation or meta["waiting"]:
        return False
    ends = db.execute(
        "SELECT (SELECT id FROM papers ORDER BY n LIMIT 1), (SELECT id FROM papers ORDER BY n DESC LIMIT 1)"
    )
    if meta["count"] != len(loaded) or (loaded and ends.fetchone() != (loaded[0], loaded[-1])):
        return False
    papers: Mapping[str, Paper] = store.papers
    order = list(papers)
    new = _appended(loaded, order, edited)
    if new is None:
        return False
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    for pid in edited.difference(new):
        paper = papers.get(pid)
        if paper is None:
            db.execute("DELETE FROM papers WHERE id=?", (pid,))
        elif db.execute("UPDATE papers SET files=?, body=? WHERE id=?", (*_columns(paper), pid)).rowcount != 1:
            return False
    (last,) = db.execute("SELECT coalesce(max(n), -1) FROM papers").fetchone()
    for n, pid in enumerate(new, last + 1):
        db.execute("DELETE FROM papers WHERE id=?", (pid,))  # (one deleted and brought back: now at the end)
        row = (n, pid, *_columns(papers[pid]))
        db.execute("INSERT INTO papers (n, id, line, off, len, files, body) VALUES (?,?,0,0,0,?,?)", row)
    tags: dict[str, int] = {}
    for paper in papers.values():
        for tag in paper.raw().get("tags", ()):
            tags[tag] = tags.get(tag, 0) + 1
    meta.update(
        inputs=keys,
        count=len(papers),
        lists=store.lists,
        seq=store.seq,
        fingerprint_version=store.fingerprint_version,
        notices=list(store.notices),
        waiting=dict(store.waiting),
        tags=tags,
    )
    db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()])
    db.commit()
    return True


def _columns(paper: Paper) -> tuple[int, bytes]:
    """A paper's view columns as merged: whether it has files, and its body."""
    raw = paper.raw()
    return (1 if raw.get("files") else 0, orjson.dumps(raw))


def _appended(loaded: list[str], order: list[str], edited: set[str]) -> list[str] | None:
    """The papers at the end of `order` (the store's now) after those of `loaded` (its order
    when it was loaded, the view's) that kept their place; None if a paper that was not edited
    left its place. A dict's order changes only by deleting (a paper deleted, or deleted and
    added again at the end) and adding at the end."""
    i = 0
    for pid in loaded:
        if i < len(order) and order[i] == pid:
            i += 1
        elif pid not in edited:
            return None
    new = order[i:]
    return new if edited.issuperset(new) else None
