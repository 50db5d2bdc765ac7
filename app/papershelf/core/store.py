"""The JSON reading-list store: the one source of truth on disk.

Layout of a library folder::

    library.jsonl      snapshot: a header line, one line per paper, one per
                       reading list, and an end line with the counts
    journal.jsonl      edits since the snapshot, one checksummed line each
    library.lock       held (flock) by the one process that may write
    backups/           earlier snapshots, rotated

Why a snapshot plus a journal: rewriting a 100,000-paper file for every tag
costs seconds; appending one fsynced line costs a fraction of a millisecond
at any size. The journal is folded into a new snapshot when it grows
(compaction), written to a temporary file, fsynced and renamed over the old
one, so a crash at any moment leaves the old state or the new, never a mix.

A journal line is ``<json>\\t<crc32 hex>\\n``. A torn last line (the process
died mid-write) fails its checksum and is dropped: that edit was never
reported as saved. A bad line with good lines after it is damage, not a torn
write, and stops the load with an error naming the file.

Nothing here ever overwrites a file it could not read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import gc
import os
import shutil
import socket
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import logging

import orjson

from .dedupe import FINGERPRINT_VERSION
from .errors import (ReadOnlyLibraryError, StoreCorruptError, StoreLockedError,
                     StoreUnreadableError, StoreVersionError, StoreWriteError)
from .paper import EDITABLE_FIELDS, STATUS_VALUES, Paper, encode_field

SCHEMA_VERSION = 1
SNAPSHOT = "library.jsonl"
JOURNAL = "journal.jsonl"
LOCK = "library.lock"
BACKUPS = "backups"
FORMAT_NAME = "papershelf-library"

# Fold the journal into the snapshot past this size (or a fifth of the snapshot).
JOURNAL_COMPACT_BYTES = 16 * 2**20
# An edit bigger than this (a large import) is written as a new snapshot directly.
BULK_BYTES = 4 * 2**20
BULK_PAPERS = 2000
KEEP_RECENT_BACKUPS = 3
KEEP_DAILY_BACKUPS = 7

log = logging.getLogger(__name__)

# Migrations from an older schema, one per step: {from_version: function(record) -> record},
# applied to every line of an older library file as it is read (it is written back in the
# current schema at the next compaction).
MIGRATIONS: dict = {}


# Windows opens files in text mode unless told otherwise: LF would become CRLF.
_O_BINARY = getattr(os, "O_BINARY", 0)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(slots=True)
class Op:
    """One change to the state. kind: add | set | del | list | rename."""

    kind: str
    key: str                 # paper id or list name
    value: object = None     # Paper (add), {field: JSON value} (set), [ids] or None (list), new name (rename)

    @classmethod
    def set_fields(cls, paper_id: str, changes: dict) -> "Op":
        """Set fields given as Python values (Status, Source...)."""
        return cls("set", paper_id, {k: encode_field(k, v) for k, v in changes.items()})

    def encode(self) -> list:
        if self.kind == "add":
            return ["add", self.key, self.value.raw()]
        return [self.kind, self.key, self.value]


def _decode_op(raw: list) -> Op:
    kind, key, value = raw
    if not isinstance(key, str):
        raise ValueError("an edit names a paper or list by a string")
    if kind == "add":
        if not isinstance(value, dict):
            raise ValueError("an added paper must be an object")
        return Op("add", key, Paper.from_dict(value))
    if kind == "set":
        if not isinstance(value, dict):
            raise ValueError("changed fields must be an object")
        bad = set(value) - EDITABLE_FIELDS
        if bad:
            raise ValueError(f"unknown fields {sorted(bad)}")
        if "status" in value and value["status"] not in STATUS_VALUES:
            raise ValueError(f"unknown status {value['status']!r}")
        return Op("set", key, value)
    if kind == "del" and value is None:
        return Op(kind, key, value)
    if kind == "list" and (value is None or isinstance(value, list) and all(isinstance(i, str) for i in value)):
        return Op(kind, key, value)
    if kind == "rename" and isinstance(value, str):
        return Op(kind, key, value)
    raise ValueError(f"unknown operation {kind!r}")


class _Lock:
    """An exclusive advisory lock on a file, released by the OS if we die."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _O_BINARY, 0o644)
        except OSError as exc:
            raise _write_error(exc, self.path.parent) from exc
        try:
            if os.name == "nt":  # pragma: no cover - exercised on Windows only
                import msvcrt
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                import fcntl
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_small(fd)
            os.close(fd)
            who = f" (process {holder})" if holder else ""
            raise StoreLockedError(
                f"The library in {self.path.parent} is open in another Papershelf{who}. "
                "Close that one first; two programs writing one library could lose edits.",
                self.path) from None
        # say who holds it, for the message the next process will show
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} on {socket.gethostname()}".encode())
        except OSError as exc:
            os.close(fd)
            raise _write_error(exc, self.path.parent) from exc
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _read_small(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 200).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _write_error(exc: OSError, where: Path) -> StoreWriteError:
    reason = {
        errno.EROFS: "the folder is on a read-only file system",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exceeded",
    }.get(exc.errno, exc.strerror or str(exc))
    return StoreWriteError(
        f"Papershelf could not write to {where}: {reason}. The change was not saved; "
        "your library on disk is as it was before.", where)


def _fsync_dir(folder: Path) -> None:
    if os.name == "nt":  # pragma: no cover
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _journal_line(payload: dict) -> bytes:
    body = orjson.dumps(payload)
    return body + b"\t" + format(zlib.crc32(body), "08x").encode() + b"\n"


class Store:
    """Loads, journals and compacts one library folder.

    The in-memory state (`papers`, `lists`) is the store's; callers change it
    only through `apply`, which makes the change durable before it is visible.
    """

    def __init__(self, folder: Path | str, readonly: bool = False):
        self.folder = Path(folder)
        self.readonly = readonly
        self.papers: dict[str, Paper] = {}
        self.lists: dict[str, list[str]] = {}
        self.generation = 0
        self.seq = 0                 # last journal sequence number applied
        self.fingerprint_version = FINGERPRINT_VERSION
        self.dropped_torn_line = False
        self._journal_fd: int | None = None
        self._journal_bytes = 0
        self._snapshot_bytes = 0
        self._valid_journal_len = 0
        self._lock = _Lock(self.folder / LOCK)
        self._write_lock = threading.RLock()      # one writer thread at a time within this process

    # ---- paths -------------------------------------------------------------
    @property
    def snapshot_path(self) -> Path:
        return self.folder / SNAPSHOT

    @property
    def journal_path(self) -> Path:
        return self.folder / JOURNAL

    @property
    def backup_dir(self) -> Path:
        return self.folder / BACKUPS

    # ---- opening -----------------------------------------------------------
    def open(self) -> "Store":
        if not self.readonly:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise _write_error(exc, self.folder) from exc
            self._lock.acquire()
        try:
            self._load()
            if not self.readonly:
                self._open_journal_for_append()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        self._lock.release()
        if self.papers:
            # loads and imports froze what they built (see gc_paused); hand it
            # back to the collector so a closed library can be freed whole
            gc.unfreeze()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _load(self) -> None:
        # A reader without the lock may race a compaction: the snapshot it read
        # and the journal it reads next may come from different generations.
        # The journal lines carry their generation, so a mismatch is seen and
        # the read is simply retried.
        for _attempt in range(5):
            before = _stat_key(self.snapshot_path)
            if before is None:
                self._refuse_if_library_file_vanished()
                self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
                self._snapshot_bytes = 0
            else:
                self._read_snapshot(self.snapshot_path)
            consistent = self._replay_journal()
            if consistent and _stat_key(self.snapshot_path) == before:
                return
            if not self.readonly:
                break
        if not consistent:
            raise StoreCorruptError(
                f"The journal {self.journal_path} does not belong to the library file "
                f"{self.snapshot_path}. Nothing was changed. Run 'papershelf recover' to keep the "
                "library file and set the journal aside.", self.journal_path)

    def _refuse_if_library_file_vanished(self) -> None:
        """No library file: a new library, unless backups say there was one."""
        backups = self.backups()
        if backups:
            good = latest_good_backup(self.backup_dir)
            raise StoreCorruptError(
                f"The library file {self.snapshot_path} is missing, but {self.backup_dir} holds "
                f"backups of a library. Nothing was changed. "
                + (f"Run 'papershelf recover' to restore the latest good backup, {good}."
                   if good else "None of the backups can be read either."),
                self.snapshot_path, good)

    def _read_snapshot(self, path: Path) -> None:
        papers, lists, header = read_snapshot(path, self.backup_dir)
        self.papers, self.lists = papers, lists
        self.generation = header["generation"]
        self.seq = header.get("journal_seq", 0)
        self.fingerprint_version = header.get("fingerprint_version", 0)
        self._snapshot_bytes = path.stat().st_size

    def _replay_journal(self, salvage: bool = False) -> bool:
        """Apply the journal's edits; with `salvage`, stop quietly at damage."""
        path = self.journal_path
        self._valid_journal_len = 0
        self._journal_bytes = 0
        self.dropped_torn_line = False
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return True
        except OSError as exc:
            raise StoreUnreadableError(
                f"Papershelf cannot read the journal {path} ({exc.strerror}); it was not changed. "
                "Check its permissions.", path) from exc
        pos = 0
        lines = data.split(b"\n")
        tail_complete = data.endswith(b"\n")
        for i, line in enumerate(lines):
            last = i == len(lines) - 1
            if last and not line:
                break
            record = _parse_journal_line(line) if (not last or tail_complete) else None
            if record is None:
                rest = b"\n".join(lines[i + 1:]).strip()
                if rest and not salvage:
                    raise StoreCorruptError(
                        f"The journal {path} is damaged at line {i + 1} (its checksum does not match) "
                        "and has edits after it. Nothing was changed. Run 'papershelf recover' to keep "
                        "the edits before that line and set the damaged journal aside.", path)
                self.dropped_torn_line = True   # a write cut short by a crash: never acknowledged
                break
            try:
                _check_record(record)
                ops = [_decode_op(raw) for raw in record["ops"]]
            except (KeyError, TypeError, ValueError) as exc:
                if salvage:
                    break
                raise StoreCorruptError(
                    f"The journal {path} has an edit Papershelf cannot read at line {i + 1} ({exc}). "
                    "Nothing was changed. Run 'papershelf recover' to keep the edits before it.",
                    path) from exc
            gen = record.get("gen", 0)
            if gen < self.generation:
                pos += len(line) + 1  # already folded into the snapshot
                continue
            if gen > self.generation:
                if salvage:
                    break
                return False
            if record["seq"] != self.seq + 1:
                if record["seq"] <= self.seq:
                    pos += len(line) + 1
                    continue
                if salvage:
                    break
                raise StoreCorruptError(
                    f"The journal {path} skips from edit {self.seq} to {record['seq']} at line {i + 1}. "
                    "Nothing was changed. Run 'papershelf recover'.", path)
            for op in ops:
                self._apply_in_memory(op)
            self.seq = record["seq"]
            pos += len(line) + 1
        self._valid_journal_len = pos
        self._journal_bytes = pos
        return True

    def _open_journal_for_append(self) -> None:
        path = self.journal_path
        try:
            existed = path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | _O_BINARY, 0o644)
            size = os.fstat(fd).st_size
            if size > self._valid_journal_len:
                # drop a torn tail so the next line starts clean
                os.ftruncate(fd, self._valid_journal_len)
                os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_END)
            if not existed:
                _fsync_dir(self.folder)   # a new journal's name must survive a power cut too
        except OSError as exc:
            raise _write_error(exc, path) from exc
        self._journal_fd = fd

    def recover(self) -> str:
        """Set damaged files aside and get back to the best readable state.

        A damaged or missing library file is replaced by the latest good
        backup; a damaged journal, or one that belongs to another library
        file, is cut back to its last good edit. Whatever is set aside is kept
        beside the library with a `.damaged-<time>` suffix. Returns what was
        done, in words.
        """
        if self.readonly:
            raise ReadOnlyLibraryError(f"The library in {self.folder} was opened read-only.", self.folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _write_error(exc, self.folder) from exc
        self._lock.acquire()
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        done: list[str] = []

        def keep_aside(path: Path, move: bool) -> None:
            target = path.with_name(f"{path.name}.damaged-{stamp}")
            try:
                os.replace(path, target) if move else shutil.copy2(path, target)
            except OSError as exc:
                raise _write_error(exc, self.folder) from exc
            done.append(f"kept the damaged {path.name} as {target}")

        try:
            try:
                if self.snapshot_path.exists():
                    self._read_snapshot(self.snapshot_path)
                else:
                    self._refuse_if_library_file_vanished()
                    self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
            except StoreCorruptError as exc:
                if exc.backup is None:
                    raise StoreCorruptError(
                        f"{exc} There is nothing to restore from; the files were left as they are.",
                        self.snapshot_path) from None
                # restore the backup under a temporary name first, so that a
                # failure part-way leaves the damaged file where it was
                tmp = self.folder / (SNAPSHOT + ".restore")
                try:
                    shutil.copy2(exc.backup, tmp)
                    with open(tmp, "rb") as f:
                        os.fsync(f.fileno())
                except OSError as err:
                    raise _write_error(err, self.folder) from err
                if self.snapshot_path.exists():
                    keep_aside(self.snapshot_path, move=True)
                if self.journal_path.exists():
                    keep_aside(self.journal_path, move=True)
                os.replace(tmp, self.snapshot_path)
                _fsync_dir(self.folder)
                done.append(f"restored the backup {exc.backup}")
                self._read_snapshot(self.snapshot_path)
                return "; ".join(done) + "."
            try:
                journal_ok = self._replay_journal()
            except StoreCorruptError:
                journal_ok = False
            if not journal_ok:
                # start again from the snapshot and keep the journal's good prefix
                if self.snapshot_path.exists():
                    self._read_snapshot(self.snapshot_path)
                else:
                    self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
                self._replay_journal(salvage=True)
                kept = self.seq
                keep_aside(self.journal_path, move=False)   # a copy: the original goes only once saved
                self.compact()                              # new snapshot; empties the journal
                done.append(f"kept the edits up to number {kept} in a new library file")
            if not done:
                return "Nothing needed recovering: the library and its journal read cleanly."
            return "; ".join(done) + "."
        finally:
            self.close()

    # ---- changing ----------------------------------------------------------
    def apply(self, ops: list[Op]) -> None:
        """Make `ops` durable, then apply them to the in-memory state.

        Raises StoreWriteError (and changes nothing) if they could not be saved.
        Thread-safe: the window edits on its thread while an import commits
        on a worker; journal lines must not interleave or share a number.
        """
        with self._write_lock:
            self._apply(ops)

    def _apply(self, ops: list[Op]) -> None:
        if not ops:
            return
        if self.readonly:
            raise ReadOnlyLibraryError(
                f"The library in {self.folder} was opened read-only; the change was not made.", self.folder)
        if sum(op.kind == "add" for op in ops) > BULK_PAPERS:
            self._apply_as_snapshot(ops)   # no need to encode it twice
            return
        payload = {"seq": self.seq + 1, "gen": self.generation, "ops": [op.encode() for op in ops]}
        line = _journal_line(payload)
        if len(line) > BULK_BYTES:
            self._apply_as_snapshot(ops)
            return
        self._append(line)
        for op in ops:
            self._apply_in_memory(op)
        self.seq += 1
        if self._journal_bytes > max(JOURNAL_COMPACT_BYTES, self._snapshot_bytes // 5):
            try:
                self.compact()
            except StoreWriteError:
                # The edit is durable in the journal already; folding it in can
                # wait for the next edit or the next start.
                log.warning("compaction of %s failed; will retry later", self.folder, exc_info=True)

    def _append(self, line: bytes) -> None:
        fd = self._journal_fd
        start = self._journal_bytes
        try:
            written = 0
            while written < len(line):
                written += os.write(fd, line[written:])
            if hasattr(os, "fdatasync"):
                os.fdatasync(fd)
            else:  # pragma: no cover
                os.fsync(fd)
        except OSError as exc:
            try:  # take back a partial line so the journal stays clean
                os.ftruncate(fd, start)
                os.lseek(fd, start, os.SEEK_SET)
            except OSError:
                pass
            raise _write_error(exc, self.journal_path) from exc
        self._journal_bytes = start + len(line)

    def _apply_as_snapshot(self, ops: list[Op]) -> None:
        for op in ops:
            self._apply_in_memory(op)
        try:
            self.compact()
        except BaseException:
            # the disk still has the old state: go back to it
            self._load()
            raise

    def _apply_in_memory(self, op: Op) -> None:
        kind = op.kind
        if kind == "set":
            paper = self.papers.get(op.key)
            if paper is not None:
                paper.update_raw(op.value)
            else:
                log.warning("journal edit for unknown paper %s ignored", op.key)
        elif kind == "add":
            self.papers[op.key] = op.value
        elif kind == "del":
            self.papers.pop(op.key, None)
        elif kind == "list":
            if op.value is None:
                self.lists.pop(op.key, None)
            else:
                self.lists[op.key] = list(op.value)
        elif kind == "rename":
            if op.key in self.lists:
                self.lists = {(op.value if k == op.key else k): v for k, v in self.lists.items()}

    # ---- compaction and backups -------------------------------------------
    def compact(self) -> None:
        """Write the whole state as a new snapshot and start an empty journal."""
        with self._write_lock:
            self._compact()

    def _compact(self) -> None:
        if self.readonly:
            raise ReadOnlyLibraryError(f"The library in {self.folder} was opened read-only.", self.folder)
        new_gen = self.generation + 1
        tmp = self.folder / (SNAPSHOT + ".tmp")
        try:
            write_snapshot(tmp, self.papers, self.lists, new_gen, self.seq, self.fingerprint_version)
            if self.snapshot_path.exists():
                self._backup_current()
            os.replace(tmp, self.snapshot_path)
        except BaseException as exc:
            try:
                tmp.unlink()
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise _write_error(exc, self.folder) from exc
            raise
        # From the rename on, the new snapshot is the library: journal lines
        # must carry its generation even if what follows fails.
        self.generation = new_gen
        try:
            _fsync_dir(self.folder)
        except OSError as exc:
            raise _write_error(exc, self.folder) from exc
        self._snapshot_bytes = self.snapshot_path.stat().st_size
        # The journal's lines now carry an older generation and would be
        # skipped on load anyway; emptying it is only tidiness.
        try:
            if self._journal_fd is not None:
                os.ftruncate(self._journal_fd, 0)
                os.lseek(self._journal_fd, 0, os.SEEK_SET)
                os.fsync(self._journal_fd)
            elif self.journal_path.exists():
                with open(self.journal_path, "r+b") as f:
                    f.truncate(0)
                    os.fsync(f.fileno())
            self._journal_bytes = self._valid_journal_len = 0
        except OSError:
            pass
        self._prune_backups()

    def _backup_current(self) -> None:
        created = not self.backup_dir.exists()
        self.backup_dir.mkdir(exist_ok=True)
        if created:
            _fsync_dir(self.folder)
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        target = self.backup_dir / f"library-{stamp}-g{self.generation}.jsonl"
        n = 1
        while target.exists():   # never replace a backup
            target = self.backup_dir / f"library-{stamp}-g{self.generation}.{n}.jsonl"
            n += 1
        try:
            os.link(self.snapshot_path, target)  # the rename below leaves this inode alone
        except OSError:
            shutil.copy2(self.snapshot_path, target)
        _fsync_dir(self.backup_dir)

    def backups(self) -> list[Path]:
        """Backups, newest first."""
        if not self.backup_dir.is_dir():
            return []
        return sorted(self.backup_dir.glob("library-*.jsonl"), key=_backup_sort_key, reverse=True)

    def _prune_backups(self) -> None:
        keep: set[Path] = set()
        days: set[str] = set()
        for i, path in enumerate(self.backups()):
            day = path.name.split("-")[1]
            if i < KEEP_RECENT_BACKUPS:
                keep.add(path)
            elif day not in days and len(days) < KEEP_DAILY_BACKUPS:
                keep.add(path)
            days.add(day)
        for path in self.backups():
            if path not in keep:
                try:
                    path.unlink()
                except OSError:
                    pass


def _backup_sort_key(path: Path):
    parts = path.stem.split("-")   # library, YYYYmmdd, HHMMSS, gN
    try:
        return (parts[1], parts[2], int(parts[3][1:]))
    except (IndexError, ValueError):
        return ("", "", 0)


def _stat_key(path: Path):
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreUnreadableError(
            f"Papershelf cannot open the library at {path.parent}: {exc.strerror}. "
            "Check that --data-dir names a folder.", path) from exc
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _parse_journal_line(line: bytes) -> dict | None:
    body, sep, crc = line.rpartition(b"\t")
    if not sep or len(crc) != 8:
        return None
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        record = orjson.loads(body)
    except ValueError:
        return None
    if not isinstance(record, dict) or "seq" not in record or "ops" not in record:
        return None
    return record


def _check_record(record: dict) -> None:
    """A journal line whose checksum is right but whose shape is not (a bug, or
    a hand edit) is reported as damage like any other, never a traceback."""
    if (type(record.get("seq")) is not int or type(record.get("gen", 0)) is not int
            or not isinstance(record.get("ops"), list)):
        raise ValueError("its sequence number, generation or edits have the wrong type")


def write_snapshot(path: Path, papers: dict[str, Paper], lists: dict[str, list[str]],
                   generation: int, seq: int, fingerprint_version: int = FINGERPRINT_VERSION) -> None:
    header = {"format": FORMAT_NAME, "schema_version": SCHEMA_VERSION, "generation": generation,
              "journal_seq": seq, "fingerprint_version": fingerprint_version, "saved": now_iso(),
              "papers": len(papers), "lists": len(lists)}
    dumps = orjson.dumps
    with open(path, "wb", buffering=1 << 20) as f:
        f.write(dumps(header) + b"\n")
        chunk: list[bytes] = []
        for paper in papers.values():
            chunk.append(dumps(paper.raw()))
            if len(chunk) >= 2000:
                f.write(b"\n".join(chunk) + b"\n")
                chunk.clear()
        if chunk:
            f.write(b"\n".join(chunk) + b"\n")
        for name, ids in lists.items():
            f.write(dumps({"list": name, "ids": ids}) + b"\n")
        f.write(dumps({"end": True, "papers": len(papers), "lists": len(lists)}) + b"\n")
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many containers.

    Loading 100,000 papers allocates 100,000 dicts and their lists; each
    automatic collection would walk all of them again (measured: load 1.8 s
    with collections, the rest is linear). Nothing built here has cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was built lives as long as the library: moved out of the
        # collector's sight, it is not walked again by every later collection.
        # Store.close() gives it back (gc.unfreeze), so nothing outlives it.
        gc.freeze()
        if was_enabled:
            gc.enable()


def read_snapshot(path: Path, backup_dir: Path | None = None):
    """(papers, lists, header) from a snapshot file, or StoreCorruptError."""
    with gc_paused():
        return _read_snapshot(path, backup_dir)


def _read_snapshot(path: Path, backup_dir: Path | None):

    def corrupt(detail: str) -> StoreCorruptError:
        backup = latest_good_backup(backup_dir) if backup_dir else None
        advice = (f" The latest good backup is {backup}; run 'papershelf recover' to set the damaged "
                  "file aside and restore it." if backup else " No backup that can be read was found.")
        return StoreCorruptError(
            f"The library file {path} cannot be read: {detail}. Papershelf has not changed it.{advice}",
            path, backup)

    try:
        f = open(path, "rb")
    except OSError as exc:
        raise StoreUnreadableError(
            f"Papershelf cannot read the library file {path}: {exc.strerror or exc}. The file was not "
            "changed; check its permissions, or whether another program holds it.", path) from exc
    with f:
        first = f.readline()
        try:
            header = orjson.loads(first)
        except ValueError:
            raise corrupt("the first line is not a Papershelf header (the file is damaged or not a library)")
        if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
            raise corrupt("it is not a Papershelf library file")
        if not isinstance(header.get("generation"), int) or not isinstance(header.get("journal_seq", 0), int):
            raise corrupt("its header is damaged")
        version = header.get("schema_version")
        if not isinstance(version, int) or version < 1:
            raise corrupt(f"unknown schema version {version!r}")
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                f"The library file {path} was written by a newer Papershelf (schema {version}; this one "
                f"reads up to {SCHEMA_VERSION}). Update Papershelf to open it; nothing was changed.", path)
        papers: dict[str, Paper] = {}
        lists: dict[str, list[str]] = {}
        end = None
        migrations = [MIGRATIONS[v] for v in range(version, SCHEMA_VERSION)]
        wrap = Paper.wrap_trusted
        statuses = STATUS_VALUES
        loads = orjson.loads
        lineno = 1
        # the hot loop of every start: 100,000 iterations, kept lean on purpose
        for line in f:
            lineno += 1
            if end is not None:
                if line.strip():
                    raise corrupt(f"there is data after the end mark (line {lineno})")
                continue
            try:
                rec = loads(line)
                if migrations:
                    for migrate in migrations:
                        rec = migrate(rec)
                pid = rec.get("id")
                if pid is not None:
                    if pid.__class__ is not str or rec.get("status", "unread") not in statuses:
                        raise ValueError("a paper record needs a string id and a known status")
                    papers[pid] = wrap(rec)
                elif "list" in rec:
                    lists[rec["list"]] = list(rec["ids"])
                elif rec.get("end"):
                    end = rec
                else:
                    raise ValueError("unknown record")
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise corrupt(f"line {lineno} is damaged ({exc})") from exc
        if end is None:
            raise corrupt(f"it ends after {len(papers)} papers without its end mark (it was cut short)")
        if end.get("papers") != len(papers) or end.get("lists") != len(lists):
            raise corrupt(f"it holds {len(papers)} papers but says {end.get('papers')}")
    return papers, lists, header


def latest_good_backup(backup_dir: Path) -> Path | None:
    if not backup_dir or not backup_dir.is_dir():
        return None
    for path in sorted(backup_dir.glob("library-*.jsonl"), key=_backup_sort_key, reverse=True):
        try:
            read_snapshot(path, None)
        except (StoreCorruptError, StoreVersionError):
            continue
        return path
    return None
