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
import re
import shutil
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import logging

import orjson

from .dedupe import FINGERPRINT_VERSION
from .errors import (ReadOnlyLibraryError, StoreCorruptError, StoreLockedError,
                     StoreUnreadableError, StoreVersionError, StoreWriteError)
from .paper import EDITABLE_FIELDS, STATUS_VALUES, Paper, encode_field

# 2: every line of the library file carries a CRC-32, as journal lines do (1: plain JSON lines)
SCHEMA_VERSION = 2
SNAPSHOT = "library.jsonl"
JOURNAL = "journal.jsonl"
LOCK = "library.lock"
# Readers hold it shared while they read the library file and the journal; a
# compaction holds it exclusively while it swaps the two (see Store._swap_lock).
READ_LOCK = "library.readlock"
# The generation and sequence number of the last edit made durable, written
# after each journal line is synced: a journal that later ends before that
# edit lost lines that were saved (cut short, emptied or deleted), which its
# own lines cannot show when the cut falls between two of them.
MARK = "journal.last"
# How long a compaction waits for readers before swapping anyway (they notice and retry).
SWAP_WAIT_SECONDS = 2.0
# Our own temporary files, left behind only by a process killed while writing.
TEMP_SUFFIXES = (".tmp", ".restore")
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


def _n(n: int, word: str) -> str:
    """ "1 paper", "2 papers" """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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
    return _seal(orjson.dumps(payload))


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
        self._journal_fix_newline = False
        self._journal_dirty = False
        self._journal_current_lines = 0     # lines of the current generation in the journal
        self._snapshot_version = SCHEMA_VERSION
        self._mark_fd: int | None = None
        self.notices: list[str] = []        # things the user should hear about that are not errors
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
            if not self.readonly:
                self._remove_stale_temp_files()
            self._load()
            if not self.readonly:
                self._open_journal_for_append()
                if self._snapshot_version < SCHEMA_VERSION and self.snapshot_path.exists():
                    # written by an older Papershelf: bring it forward now (the old file stays a
                    # backup); if that cannot be written, the next compaction tries again
                    try:
                        self.compact()
                    except StoreWriteError as exc:
                        log.warning("could not bring %s forward to schema %d yet: %s", self.snapshot_path,
                                    SCHEMA_VERSION, exc)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        if self._mark_fd is not None:
            os.close(self._mark_fd)
            self._mark_fd = None
        self._lock.release()
        if self.papers:
            # loads and imports froze what they built (see gc_paused); hand it
            # back to the collector so a closed library can be freed whole
            gc.unfreeze()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _remove_stale_temp_files(self) -> None:
        """A process killed while writing a new library file leaves its temporary file.

        Only called with the write lock held, so no other process is writing one."""
        for name in (SNAPSHOT + suffix for suffix in TEMP_SUFFIXES):
            path = self.folder / name
            try:
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    log.info("removed %s, left by an interrupted write", path)
            except OSError as exc:
                log.warning("could not remove %s: %s", path, exc)

    @contextlib.contextmanager
    def _swap_lock(self, exclusive: bool):
        """Readers (shared) against a compaction's swap of library file and journal (exclusive).

        A reader holds it while it reads both files, so it never sees the
        library file of one generation with the journal of another. The
        writer waits at most SWAP_WAIT_SECONDS for readers, then swaps anyway:
        readers also check generations and retry, so this only saves them work.
        """
        if os.name == "nt":  # pragma: no cover - no flock; readers fall back to retrying
            yield
            return
        import fcntl
        path = self.folder / READ_LOCK
        try:
            fd = os.open(path, (os.O_RDWR | os.O_CREAT) if exclusive else os.O_RDONLY, 0o644)
        except OSError:
            yield   # a read-only folder without the file: nobody can be compacting
            return
        try:
            if exclusive:
                deadline = time.monotonic() + SWAP_WAIT_SECONDS
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError:
                        if time.monotonic() > deadline:
                            log.info("readers still hold %s; swapping anyway", path)
                            break
                        time.sleep(0.01)
            else:
                fcntl.flock(fd, fcntl.LOCK_SH)    # a swap takes milliseconds
            yield
        finally:
            os.close(fd)

    def _load(self) -> None:
        # A reader without the write lock may race a compaction: the swap lock
        # keeps it out of the swap, and the journal lines carry their
        # generation, so a mismatch that gets through anyway is seen and the
        # read retried.
        consistent = False
        for _attempt in range(20 if self.readonly else 1):
            with self._swap_lock(exclusive=False) if self.readonly else contextlib.nullcontext():
                before = _stat_key(self.snapshot_path)
                if before is None:
                    self._refuse_if_library_file_vanished()
                    self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
                    self._snapshot_bytes = 0
                    self._snapshot_version = SCHEMA_VERSION
                else:
                    self._read_snapshot(self.snapshot_path)
                mark = self._read_mark()      # before the journal: it is written after the journal
                consistent = self._replay_journal()
            if consistent and _stat_key(self.snapshot_path) == before:
                self._check_mark(mark)
                return
        if not consistent:
            raise StoreCorruptError(
                f"The journal {self.journal_path} does not belong to the library file "
                f"{self.snapshot_path} (it holds edits of a newer library file, as if an older one "
                "had been put back by hand). Nothing was changed. Run 'papershelf recover' to keep "
                "the library file and set the journal aside.", self.journal_path)
        # a read-only reader that kept losing the race to compactions (twenty in a row)
        raise StoreUnreadableError(
            f"The library in {self.folder} kept changing while Papershelf read it (another Papershelf "
            "is saving it). Nothing is wrong with it; try again.", self.folder)

    def _read_mark(self) -> tuple[int, int] | None:
        try:
            with open(self.folder / MARK, "rb") as f:
                gen, seq = f.read(64).split()
            return int(gen), int(seq)
        except (OSError, ValueError):
            return None             # none yet, or unreadable: it only ever adds a check

    def _check_mark(self, mark: tuple[int, int] | None) -> None:
        if mark is None or mark[0] != self.generation or mark[1] <= self.seq:
            return
        lost = mark[1] - self.seq
        raise StoreCorruptError(
            f"The journal {self.journal_path} ends at edit {self.seq}, but edit {mark[1]} was saved: "
            f"{lost} saved edit(s) at its end are missing (the file was cut short, emptied or "
            "deleted). Nothing was changed. Run 'papershelf recover' to keep the edits that remain "
            "and be told which were lost.", self.journal_path)

    def _write_mark(self) -> None:
        """Record the last durable edit. Not synced: after a crash it may be older, never newer."""
        try:
            if self._mark_fd is None:
                self._mark_fd = os.open(self.folder / MARK, os.O_RDWR | os.O_CREAT | _O_BINARY, 0o644)
            os.pwrite(self._mark_fd, b"%20d %20d\n" % (self.generation, self.seq), 0)
        except OSError as exc:
            log.warning("could not update %s: %s", self.folder / MARK, exc)

    def _refuse_if_library_file_vanished(self) -> None:
        """No library file: a new library, unless backups say there was one."""
        backups = self.backups()
        if backups:
            good = latest_good_backup(self.backup_dir)
            raise StoreCorruptError(
                f"The library file {self.snapshot_path} is missing, but {self.backup_dir} holds "
                f"backups of a library. Nothing was changed. "
                + (f"Run 'papershelf recover' to restore the latest good backup, {good}, and replay "
                   "the journal on top." if good else "None of the backups can be read either."),
                self.snapshot_path, good)

    def _read_snapshot(self, path: Path) -> None:
        papers, lists, header = read_snapshot(path, self.backup_dir)
        self.papers, self.lists = papers, lists
        self.generation = header["generation"]
        self.seq = header.get("journal_seq", 0)
        self.fingerprint_version = header.get("fingerprint_version", 0)
        self._snapshot_version = header["schema_version"]
        self._snapshot_bytes = path.stat().st_size

    def _replay_journal(self, salvage: "JournalSalvage | None" = None) -> bool:
        """Apply the journal's edits.

        Without `salvage`, any damaged line stops the load with an error: a
        complete (newline-ended) line that fails its checksum is damage, not
        a torn write, wherever it is. Only an unfinished last line (no
        newline: the process died mid-write, so the edit was never reported
        as saved) is dropped. With `salvage`, every line whose checksum is
        good and whose base still applies is replayed, and the rest are
        written down in `salvage`.
        """
        path = self.journal_path
        self._valid_journal_len = 0
        self._journal_bytes = 0
        self._journal_fix_newline = False
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
        lines = data.split(b"\n")
        tail = lines.pop()               # after the last newline: b"" for a whole file
        if tail:
            whole = tail if _parse_journal_line(tail) is not None else tail[:-1]
            if _parse_journal_line(whole) is not None:
                # a whole edit whose newline alone is missing or damaged: keep it
                lines.append(whole)
                self._journal_fix_newline = True
                tail = b""
        pos = 0
        self._journal_current_lines = 0
        # A damaged line before the first line of the current generation may be
        # one already folded into the library file (a compaction stopped before
        # it emptied the journal): harmless if no edit of this generation is
        # missing, which the next intact line (or journal.last) tells.
        doubtful: list[tuple[int, bytes, str]] = []
        for i, line in enumerate(lines):
            lineno = i + 1
            record = _parse_journal_line(line)
            problem = None
            if record is None:
                problem = "its checksum does not match"
            else:
                try:
                    _check_record(record)
                    ops = [_decode_op(raw) for raw in record["ops"]]
                except (KeyError, TypeError, ValueError) as exc:
                    problem = f"Papershelf cannot read its edit ({exc})"
            if problem is not None:
                if not self._journal_current_lines:
                    doubtful.append((lineno, line, problem))
                    continue
                self._journal_damage(salvage, len(lines), lineno, line, problem)
                continue
            gen = record.get("gen", 0)
            seq = record["seq"]
            if doubtful:
                if gen < self.generation or (gen == self.generation and seq == self.seq + 1):
                    log.info("journal lines %s were damaged but already folded into the library file",
                             [d[0] for d in doubtful])
                else:
                    for args in doubtful:
                        self._journal_damage(salvage, len(lines), *args)
                doubtful = []
            if gen < self.generation or (gen == self.generation and seq <= self.seq):
                pos += len(line) + 1  # already folded into the library file
                continue
            if gen > self.generation:
                if salvage is not None:
                    salvage.other_generation(lineno, seq)
                    continue
                return False
            if seq != self.seq + 1:
                if salvage is None:
                    raise StoreCorruptError(
                        f"The journal {path} skips from edit {self.seq} to {seq} at line {lineno}. "
                        "Nothing was changed. Run 'papershelf recover' to keep every readable edit "
                        "and be told which were lost.", path)
                salvage.gap(self.seq, seq)
            if salvage is not None:
                salvage.replay(self, lineno, seq, ops)
            else:
                for op in ops:
                    self._apply_in_memory(op)
            self.seq = seq
            self._journal_current_lines += 1
            pos += len(line) + 1
        if doubtful:
            # damaged lines at the end and none of this generation: harmless only if
            # journal.last says no edit of this generation was saved
            mark = self._read_mark()
            if mark is None or (mark[0] == self.generation and mark[1] > self.seq) or mark[0] > self.generation:
                for args in doubtful:
                    self._journal_damage(salvage, len(lines), *args)
            else:
                log.info("journal lines %s were damaged but already folded into the library file",
                         [d[0] for d in doubtful])
        if tail:
            self.dropped_torn_line = True   # a write cut short by a crash: never acknowledged
            log.info("the unfinished last line of %s (%d bytes) was a save cut short; dropped",
                     path, len(tail))
        if self._journal_fix_newline:
            pos -= 1                        # the newline still has to be written
        self._valid_journal_len = pos
        self._journal_bytes = pos
        return True

    def _journal_damage(self, salvage, count: int, lineno: int, line: bytes, problem: str) -> None:
        """A damaged journal line: written down when salvaging, else the load stops."""
        if salvage is not None:
            salvage.damaged(lineno, line, problem)
            return
        where = ("its last line" if lineno == count else f"line {lineno}, with "
                 f"{count - lineno} more after it")
        raise StoreCorruptError(
            f"The journal {self.journal_path} is damaged at {where}: {problem}. The file is complete, "
            "so this is damage (a disk or copying fault), not an interrupted save; an edit saved "
            "there may be wrong or lost. Nothing was changed and nothing will be written until "
            "it is repaired: run 'papershelf recover' to keep every readable edit, set the "
            "damaged journal aside and be told exactly which edits were lost.", self.journal_path)

    def _open_journal_for_append(self) -> None:
        path = self.journal_path
        try:
            existed = path.exists()
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_BINARY, 0o644)
            size = os.fstat(fd).st_size
            if self.dropped_torn_line:
                self._keep_torn_tail(fd, size)
            if size and not self._journal_current_lines and not self._journal_fix_newline:
                # only lines folded into the library file already (a compaction stopped before
                # it emptied the journal): nothing in them is needed any more
                self._valid_journal_len = self._journal_bytes = 0
            if size != self._valid_journal_len or self._journal_fix_newline:
                # drop a torn tail so the next line starts clean; put back a damaged last newline
                os.ftruncate(fd, self._valid_journal_len)
                if self._journal_fix_newline:
                    os.lseek(fd, 0, os.SEEK_END)
                    os.write(fd, b"\n")
                    self._valid_journal_len += 1
                    self._journal_bytes += 1
                    self._journal_fix_newline = False
                os.fsync(fd)
            os.lseek(fd, 0, os.SEEK_END)
            if not existed:
                _fsync_dir(self.folder)   # a new journal's name must survive a power cut too
        except OSError as exc:
            raise _write_error(exc, path) from exc
        self._journal_fd = fd

    def _keep_torn_tail(self, fd: int, size: int) -> None:
        """An unfinished last line is dropped, but its bytes are kept and the user told."""
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        target = self.folder / f"{JOURNAL}.unfinished-{stamp}"
        n = 1
        while target.exists():
            target = self.folder / f"{JOURNAL}.unfinished-{stamp}.{n}"
            n += 1
        tail = os.pread(fd, size - self._valid_journal_len, self._valid_journal_len)
        if not tail.strip(b"\0 \n"):
            return                      # zeros a crash left past the end: nothing to keep
        with open(target, "wb") as f:
            f.write(tail)
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(self.folder)
        self.notices.append(
            f"The last save before Papershelf stopped was cut short (the program or the computer "
            f"stopped while writing it); it had not been reported as saved, and was left out. "
            f"Its {len(tail)} bytes are kept in {target}.")

    def recover(self) -> str:
        """Get back every edit that can be read, and say exactly what was lost.

        The library file: every intact line is kept; papers and lists whose
        lines are damaged or cut off are taken from the latest good backup.
        The journal: every line whose checksum is good and whose base still
        applies is replayed on top. Damaged files are kept beside the library
        with a `.damaged-<time>` suffix. Returns what was done, in words.
        """
        if self.readonly:
            raise ReadOnlyLibraryError(f"The library in {self.folder} was opened read-only.", self.folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _write_error(exc, self.folder) from exc
        self._lock.acquire()
        try:
            self._remove_stale_temp_files()
            try:
                self._load()
                return "Nothing needed recovering: the library and its journal read cleanly."
            except StoreCorruptError:
                pass
            return self._recover()
        finally:
            self.close()

    def _recover(self) -> str:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        report: list[str] = []
        aside: list[Path] = []

        def keep_aside(path: Path) -> None:
            target = path.with_name(f"{path.name}.damaged-{stamp}")
            n = 1
            while target.exists():
                target = path.with_name(f"{path.name}.damaged-{stamp}.{n}")
                n += 1
            try:
                shutil.copy2(path, target)   # a copy: the original goes only once the new file is saved
                _fsync_dir(self.folder)
            except OSError as exc:
                raise _write_error(exc, self.folder) from exc
            aside.append(target)

        # 1. the library file
        snapshot_damaged = False
        try:
            if self.snapshot_path.exists():
                self._read_snapshot(self.snapshot_path)
            else:
                self._refuse_if_library_file_vanished()
                self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
        except StoreCorruptError:
            snapshot_damaged = True
            journal_gens = _journal_generations(self.journal_path)
            report.extend(self._salvage_library_file(journal_gens))
            if self.snapshot_path.exists():
                keep_aside(self.snapshot_path)

        # 2. the journal, on top
        salvage = JournalSalvage()
        mark = self._read_mark()
        self._replay_journal(salvage=salvage)
        if mark is not None and mark[0] == self.generation and mark[1] > self.seq and self.seq >= 0:
            salvage.missing.update(range(self.seq + 1, mark[1] + 1))   # saved, then cut off the end
        if salvage.replayed:
            report.append(f"Replayed {salvage.replayed} edit(s) from the journal on top.")
        report.extend(_with_titles(line, self.papers) for line in salvage.describe())
        if self.dropped_torn_line:
            report.append("The journal ended in an unfinished save (never reported as saved); it was "
                          "left out, and the journal is kept as it was (below).")
        if (salvage.damaged_lines or salvage.newer or self.dropped_torn_line) and self.journal_path.exists():
            keep_aside(self.journal_path)

        # 3. save it all as a new library file (which empties the journal)
        # never let the generation of a journal set aside meet the new file's
        self.generation = max([self.generation, *_journal_generations(self.journal_path)])
        self._compact(backup_current=not snapshot_damaged)
        for path in aside:
            report.append(f"Kept the damaged {path.name.split('.damaged-')[0]} as {path}.")
        report.append(f"The library now holds {_n(len(self.papers), 'paper')} and "
                      f"{_n(len(self.lists), 'reading list')}, saved as {self.snapshot_path}.")
        return "\n".join(report)

    def _salvage_library_file(self, journal_gens: list[int]) -> list[str]:
        """Rebuild the state from a damaged library file's intact lines and the latest good backup."""
        report: list[str] = []
        path = self.snapshot_path
        scan = salvage_snapshot(path) if path.exists() else SnapshotSalvage(
            papers={}, lists={}, order=[], damaged_lines=[], damaged_lists=[], cut_short=True)
        backup = latest_good_backup(self.backup_dir)
        if backup is not None:
            bpapers, blists, bheader = read_snapshot(backup, None)
        else:
            bpapers, blists, bheader = {}, {}, None
        if not scan.papers and not scan.lists and backup is None:
            raise StoreCorruptError(
                f"The library file {path} is damaged beyond use (no intact line) and there is no "
                "readable backup to restore from; the files were left as they are.", path)
        papers = scan.papers
        lists = scan.lists
        meta = scan.header or scan.end
        if path.exists():
            if scan.damaged_lines:
                shown = ", ".join(map(str, scan.damaged_lines[:10])) + (
                    f" and {len(scan.damaged_lines) - 10} more" if len(scan.damaged_lines) > 10 else "")
                report.append(f"The library file {path} has {len(scan.damaged_lines)} damaged line(s) "
                              f"(line {shown}).")
            if scan.cut_short:
                report.append(f"The library file {path} was cut short after line "
                              f"{1 + len(scan.papers) + len(scan.lists) + len(scan.damaged_lines)}.")
            report.append(f"Kept every intact line: {_n(len(papers), 'paper')} and {_n(len(lists), 'reading list')}.")
        else:
            report.append(f"The library file {path} was missing.")

        # Which papers of the backup belong where the damage is. Papers are
        # written in the order they joined the library, in every library file,
        # so a backup paper missing between two intact lines with no damage
        # between them was deleted since the backup, not lost.
        from_backup: list[str] = []
        border = list(bpapers)
        bpos = {pid: i for i, pid in enumerate(border)}
        named = [ev[2] for ev in scan.order if ev[0] == "d" and ev[2]]
        for pid in named:
            if pid in bpapers and pid not in papers:
                papers[pid] = bpapers[pid]
                from_backup.append(pid)
        expected = meta.get("papers") if meta else None
        gaps: list[tuple[str | None, str | None]] = []
        prev = None
        in_gap = False
        for ev in scan.order:
            if ev[0] == "p":
                if in_gap:
                    gaps.append((prev, ev[1]))
                    in_gap = False
                prev = ev[1]
            else:
                in_gap = True        # even a line whose id was read may hide others (a lost newline)
        if in_gap or scan.cut_short or not path.exists():
            gaps.append((prev, None))
        if expected is not None and len(papers) >= expected:
            gaps = []        # every paper the file held is accounted for
        for lo_id, hi_id in gaps:
            if lo_id is not None and lo_id not in bpos:
                continue     # joined after the backup: so did everything after it
            lo = bpos[lo_id] + 1 if lo_id is not None else 0
            hi = bpos.get(hi_id, len(border)) if hi_id is not None else len(border)
            for pid in border[lo:hi]:
                if pid not in papers:
                    papers[pid] = bpapers[pid]
                    from_backup.append(pid)
        if from_backup:
            report.append(
                f"Restored {_n(len(from_backup), 'paper')} whose lines were damaged or missing from the backup "
                f"{backup}, as they were then; edits made to them after that backup are lost: "
                + "; ".join(_with_titles(f"paper {pid}", papers) for pid in from_backup[:20])
                + (" …" if len(from_backup) > 20 else "") + ".")
        if expected is not None and len(papers) < expected:
            report.append(
                f"Could not recover {_n(expected - len(papers), 'paper')}: their lines are damaged or "
                "missing and no backup holds them (they joined the library after the latest backup).")
        if expected is not None and len(papers) > expected:
            report.append(
                f"{len(papers) - expected} of the restored papers may have been deleted since the backup; "
                "look them up by id and delete them again if so.")
        # reading lists: written after the papers, so a cut file loses them first
        expected_lists = meta.get("lists") if meta else None
        restored_lists = []
        if expected_lists is None or len(lists) < expected_lists:
            if scan.damaged_lists or scan.cut_short or expected_lists is None:
                for name, ids in blists.items():
                    if name not in lists:
                        lists[name] = list(ids)
                        restored_lists.append(name)
        if restored_lists:
            report.append(f"Restored the reading list(s) {', '.join(map(repr, restored_lists))} from the "
                          f"backup {backup}; changes made to them after it are lost.")
        if expected_lists is not None and len(lists) < expected_lists:
            report.append(f"Could not recover {expected_lists - len(lists)} reading list(s).")
        elif expected_lists is not None and len(lists) > expected_lists:
            report.append(f"{len(lists) - expected_lists} of the restored reading lists may have been "
                          "deleted since the backup; delete them again if so.")

        # the generation the journal's edits were written against
        if meta is not None and isinstance(meta.get("generation"), int):
            self.generation = meta["generation"]
            self.seq = meta.get("journal_seq", 0) if isinstance(meta.get("journal_seq", 0), int) else 0
        elif journal_gens:
            self.generation, self.seq = max(journal_gens), -1   # -1: take the journal from its start
        elif bheader is not None:
            # the lost file came after the backup: its edits start where the backup's end
            self.generation, self.seq = bheader["generation"] + 1, bheader.get("journal_seq", 0)
        else:
            self.generation, self.seq = 1, 0
        self.papers, self.lists = papers, lists
        self.fingerprint_version = (scan.header or bheader or {}).get("fingerprint_version", 0)
        return report

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
        self._write_mark()
        if self._journal_bytes > max(JOURNAL_COMPACT_BYTES, self._snapshot_bytes // 5):
            try:
                self.compact()
            except StoreWriteError as exc:
                # The edit is durable in the journal already; folding it in can
                # wait for the next edit or the next start.
                log.warning("compaction of %s failed; will retry later: %s", self.folder, exc)

    def _append(self, line: bytes) -> None:
        fd = self._journal_fd
        start = self._journal_bytes
        try:
            if self._journal_dirty:
                # a failed write left bytes past the last good line and taking them
                # back failed too: the next line must not follow them
                os.ftruncate(fd, start)
                self._journal_dirty = False
            written = 0
            while written < len(line):      # at an explicit offset: no file position to lose
                written += os.pwrite(fd, line[written:], start + written)
            if hasattr(os, "fdatasync"):
                os.fdatasync(fd)
            else:  # pragma: no cover
                os.fsync(fd)
        except OSError as exc:
            try:  # take back a partial line so the journal stays clean
                os.ftruncate(fd, start)
            except OSError:
                self._journal_dirty = True
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

    def _compact(self, backup_current: bool = True) -> None:
        if self.readonly:
            raise ReadOnlyLibraryError(f"The library in {self.folder} was opened read-only.", self.folder)
        new_gen = self.generation + 1
        tmp = self.folder / (SNAPSHOT + ".tmp")
        try:
            write_snapshot(tmp, self.papers, self.lists, new_gen, self.seq, self.fingerprint_version)
            if backup_current and self.snapshot_path.exists():
                self._backup_current()
        except BaseException as exc:
            try:
                tmp.unlink()
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise _write_error(exc, self.folder) from exc
            raise
        with self._swap_lock(exclusive=True):
            try:
                os.replace(tmp, self.snapshot_path)
            except OSError as exc:
                try:
                    tmp.unlink()
                except OSError:
                    pass
                raise _write_error(exc, self.folder) from exc
            # From the rename on, the new snapshot is the library: journal lines
            # must carry its generation even if what follows fails.
            self.generation = new_gen
            self._snapshot_version = SCHEMA_VERSION
            try:
                _fsync_dir(self.folder)
            except OSError as exc:
                raise _write_error(exc, self.folder) from exc
            self._snapshot_bytes = self.snapshot_path.stat().st_size
            self._write_mark()
            # The journal's lines now carry an older generation and would be
            # skipped on load anyway; emptying it is only tidiness.
            try:
                if self._journal_fd is not None:
                    os.ftruncate(self._journal_fd, 0)
                    self._journal_bytes = self._valid_journal_len = 0
                    self._journal_dirty = False
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


class JournalSalvage:
    """What `recover` replayed from a journal and what it could not."""

    def __init__(self):
        self.replayed = 0
        self.damaged_lines: list[tuple[int, int | None, str]] = []   # (line, seq it seems to have, what)
        self.missing: set[int] = set()                               # sequence numbers never seen
        self.not_applied: list[tuple[int, int, str]] = []            # (line, seq, why)
        self.newer: list[int] = []                                   # lines of a newer library file

    @property
    def lost_anything(self) -> bool:
        return bool(self.damaged_lines or self.missing or self.not_applied or self.newer)

    def damaged(self, lineno: int, line: bytes, problem: str) -> None:
        seq, what = _describe_damaged_edit(line)
        self.damaged_lines.append((lineno, seq, what or problem))

    def other_generation(self, lineno: int, seq: int) -> None:
        self.newer.append(lineno)

    def gap(self, last_seq: int, seq: int) -> None:
        if last_seq >= 0:
            self.missing.update(range(last_seq + 1, seq))

    def replay(self, store: "Store", lineno: int, seq: int, ops: list[Op]) -> None:
        applied = False
        for op in ops:
            why = None
            if op.kind == "set" and op.key not in store.papers:
                why = f"it changes paper {op.key}, which is not in the library"
            elif op.kind == "rename" and op.key not in store.lists:
                why = f"it renames the reading list {op.key!r}, which is not in the library"
            if why:
                self.not_applied.append((lineno, seq, why))
                continue
            store._apply_in_memory(op)
            applied = True
        self.replayed += applied

    def describe(self) -> list[str]:
        out = []
        shown = set()
        lost = []
        for lineno, seq, what in self.damaged_lines:
            if seq is not None and seq in self.missing:
                shown.add(seq)
                lost.append(f"edit {seq} (journal line {lineno}: {what})")
            else:
                lost.append(f"journal line {lineno} ({what})")
        lost += [f"edit {seq} (its line is missing)" for seq in sorted(self.missing - shown)]
        if lost:
            out.append(f"Lost {len(lost)} edit(s) that could not be read: " + "; ".join(lost) + ".")
        for lineno, seq, why in self.not_applied:
            out.append(f"Did not apply edit {seq} (journal line {lineno}): {why}.")
        if self.newer:
            out.append(f"Did not apply {len(self.newer)} edit(s) (journal lines {self.newer[0]}-{self.newer[-1]}) "
                       "written for a newer library file than this one (as if an older library file had been "
                       "put back by hand).")
        return out


_PAPER_REF = re.compile(r"\bpaper ([0-9a-f]{6,64})\b")


def _with_titles(text: str, papers: dict) -> str:
    """'paper 5fcd…' → 'paper 5fcd… (“Its title”)', so a person knows which paper it was."""
    def title(m) -> str:
        paper = papers.get(m.group(1))
        if paper is None or not paper.title:
            return m.group(0)
        short = paper.title if len(paper.title) <= 60 else paper.title[:59] + "…"
        return f"{m.group(0)} (\u201c{short}\u201d)"
    return _PAPER_REF.sub(title, text)


def _describe_damaged_edit(line: bytes) -> tuple[int | None, str]:
    """Best guess at what a damaged journal line held, for the report."""
    body = line.rpartition(b"\t")[0] or line
    try:
        record = orjson.loads(body)
    except ValueError:
        m = re.search(rb'"seq":(\d{1,12})', body)
        return (int(m.group(1)) if m else None), "unreadable"
    if not isinstance(record, dict):
        return None, "unreadable"
    seq = record.get("seq") if type(record.get("seq")) is int else None
    parts = []
    for raw in record.get("ops", [])[:3] if isinstance(record.get("ops"), list) else []:
        if isinstance(raw, list) and len(raw) == 3 and isinstance(raw[1], str):
            kind, key, value = raw
            if kind == "set" and isinstance(value, dict):
                fields = [f for f in value if f != "updated"] or ["the time stamp"]
                parts.append(f"set {', '.join(map(str, fields))} of paper {key}")
            elif kind == "add":
                parts.append(f"add paper {key}")
            elif kind == "del":
                parts.append(f"delete paper {key}")
            elif kind in ("list", "rename"):
                parts.append(f"change the reading list {key!r}")
    what = ("it seems to " + "; ".join(parts)) if parts else "unreadable"
    return seq, what


def _journal_generations(path: Path) -> list[int]:
    """The generations named by a journal's intact lines (for a library file whose header is lost)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    gens = []
    for line in data.split(b"\n"):
        record = _parse_journal_line(line)
        if record is not None and type(record.get("gen", 0)) is int:
            gens.append(record.get("gen", 0))
    return gens


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
    if not sep or b"%08x" % zlib.crc32(body) != crc:
        return None
    try:
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


def _seal(body: bytes) -> bytes:
    """One line of the library file or the journal: ``<json>\\t<crc32 hex>\\n``."""
    return body + b"\t" + b"%08x" % zlib.crc32(body) + b"\n"


def _unseal(line: bytes) -> bytes | None:
    """The JSON of a whole sealed line (newline included), or None if it fails its checksum."""
    if len(line) < 11 or line[-1] != 10 or line[-10] != 9:
        return None
    body = line[:-10]
    if b"%08x" % zlib.crc32(body) != line[-9:-1]:
        return None
    return body


def write_snapshot(path: Path, papers: dict[str, Paper], lists: dict[str, list[str]],
                   generation: int, seq: int, fingerprint_version: int = FINGERPRINT_VERSION) -> None:
    header = {"format": FORMAT_NAME, "schema_version": SCHEMA_VERSION, "generation": generation,
              "journal_seq": seq, "fingerprint_version": fingerprint_version, "saved": now_iso(),
              "papers": len(papers), "lists": len(lists)}
    dumps = orjson.dumps
    seal = _seal
    with open(path, "wb", buffering=1 << 20) as f:
        f.write(seal(dumps(header)))
        chunk: list[bytes] = []
        for paper in papers.values():
            chunk.append(seal(dumps(paper.raw())))
            if len(chunk) >= 2000:
                f.write(b"".join(chunk))
                chunk.clear()
        if chunk:
            f.write(b"".join(chunk))
        for name, ids in lists.items():
            f.write(seal(dumps({"list": name, "ids": ids})))
        # the end line repeats what recovery needs if the header is the damaged line
        f.write(seal(dumps({"end": True, "papers": len(papers), "lists": len(lists),
                            "generation": generation, "journal_seq": seq})))
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
        advice = (f" Run 'papershelf recover': it keeps every intact line of the file, takes what is "
                  f"missing from the latest good backup ({backup}) and replays the journal on top."
                  if backup else " Run 'papershelf recover' to keep every intact line of it (no backup "
                  "that can be read was found).")
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
        header = _parse_header(first)
        if header is None:
            raise corrupt("line 1 is damaged: it is not a whole Papershelf header with a matching "
                          "checksum (the file is damaged or not a library)")
        version = header["schema_version"]
        if version > SCHEMA_VERSION:
            raise StoreVersionError(
                f"The library file {path} was written by a newer Papershelf (schema {version}; this one "
                f"reads up to {SCHEMA_VERSION}). Update Papershelf to open it; nothing was changed.", path)
        sealed = version >= 2
        papers: dict[str, Paper] = {}
        lists: dict[str, list[str]] = {}
        end = None
        migrations = [MIGRATIONS[v] for v in range(version, SCHEMA_VERSION) if v in MIGRATIONS]
        wrap = Paper.wrap_trusted
        statuses = STATUS_VALUES
        loads = orjson.loads
        crc32 = zlib.crc32
        lineno = 1
        # the hot loop of every start: 100,000 iterations, kept lean on purpose
        for line in f:
            lineno += 1
            if end is not None:
                if line.strip():
                    raise corrupt(f"there is data after the end mark (line {lineno})")
                continue
            if sealed:
                # inline _unseal: a checksum per line finds a flipped bit in any field
                body = memoryview(line)[:-10]          # no copy of the line
                if len(line) < 11 or line[-1] != 10 or line[-10] != 9 \
                        or b"%08x" % crc32(body) != line[-9:-1]:
                    raise corrupt(f"line {lineno} is damaged (its checksum does not match"
                                  + (")" if line.endswith(b"\n") else "; the file was cut short there)"))
                line = body
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
                    lists[_check_list_name(rec["list"])] = _check_ids(rec["ids"])
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


def _parse_header(line: bytes) -> dict | None:
    """The header of a library file (either schema), or None if it is damaged."""
    body = _unseal(line)
    sealed = body is not None
    try:
        header = orjson.loads(body if sealed else line)
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        return None
    version = header.get("schema_version")
    if (not isinstance(version, int) or version < 1
            or ((version >= 2) != sealed and version <= SCHEMA_VERSION)
            or not isinstance(header.get("generation"), int)
            or not isinstance(header.get("journal_seq", 0), int)):
        return None
    return header


def _check_list_name(name) -> str:
    if not isinstance(name, str):
        raise ValueError("a reading list needs a name")
    return name


def _check_ids(ids) -> list[str]:
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("a reading list's ids must be strings")
    return ids


@dataclass
class SnapshotSalvage:
    """What could be read of a damaged library file, line by line."""

    header: dict | None = None
    end: dict | None = None
    papers: dict = None
    lists: dict = None
    # file order of paper lines: ("p", id) for an intact one, ("d", line, id or None) for a damaged one
    order: list = None
    damaged_lines: list = None          # line numbers
    damaged_lists: list = None          # names read from damaged list lines
    cut_short: bool = False             # the last line has no newline, or the end line is missing


_ID_IN_LINE = re.compile(rb'"id":"([0-9a-f]{6,64})"')
_LIST_IN_LINE = re.compile(rb'\{"list":"((?:[^"\\]|\\.){1,400})"')


def salvage_snapshot(path: Path) -> SnapshotSalvage:
    """Every intact line of a damaged library file; damaged lines noted with their place."""
    out = SnapshotSalvage(papers={}, lists={}, order=[], damaged_lines=[], damaged_lists=[])
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        out.cut_short = True
    out.header = _parse_header(lines[0] + b"\n") if lines else None
    if lines and out.header is None:
        out.damaged_lines.append(1)
    if out.header is not None:
        sealed = out.header["schema_version"] >= 2
    else:   # guess the schema from the lines themselves
        sealed = any(_unseal(line + b"\n") is not None for line in lines[1:50])
    for lineno, line in enumerate(lines[1:], start=2):
        if _take_record(out, _unseal(line + b"\n") if sealed else line):
            continue
        if not line.strip():
            continue
        out.damaged_lines.append(lineno)
        # a damaged newline merges two or more whole lines into one: every part
        # that still carries its own matching checksum is kept as it was saved
        for part, intact in _sealed_parts(line) if sealed else [(line, False)]:
            if intact and _take_record(out, _unseal(part + b"\n")):
                continue
            found = _ID_IN_LINE.findall(part)
            if found:
                out.order.extend(("d", lineno, pid.decode()) for pid in found)
                continue
            m = _LIST_IN_LINE.search(part)
            if m:
                try:
                    out.damaged_lists.append(orjson.loads(b'"' + m.group(1) + b'"'))
                except ValueError:
                    out.damaged_lists.append("")
                continue
            out.order.append(("d", lineno, None))
    if out.end is None:
        out.cut_short = True
    return out


_SEAL_IN_LINE = re.compile(rb"\t[0-9a-f]{8}")


def _sealed_parts(line: bytes) -> list[tuple[bytes, bool]]:
    """A damaged line cut after each ``\\t<crc>`` seal inside it, skipping the
    one byte that took the place of the newline; (part, could be whole) pairs.
    A raw tab appears in a sealed line only before its checksum (JSON escapes
    tabs), so these are the only places one saved line can have ended."""
    parts, start = [], 0
    for m in _SEAL_IN_LINE.finditer(line):
        if m.start() < start:
            continue
        parts.append((line[start:m.end()], True))
        start = m.end() + 1
    if start < len(line):
        parts.append((line[start:], False))
    return parts


def _take_record(out: "SnapshotSalvage", body: bytes | None) -> bool:
    """Add one intact library-file line to `out`; False if it is not one."""
    if body is None:
        return False
    try:
        rec = orjson.loads(body)
    except ValueError:
        return False
    if not isinstance(rec, dict):
        return False
    try:
        if isinstance(rec.get("id"), str):
            out.papers[rec["id"]] = Paper.from_dict(rec)
            out.order.append(("p", rec["id"]))
            return True
        if "list" in rec:
            out.lists[_check_list_name(rec["list"])] = _check_ids(rec["ids"])
            return True
        if rec.get("end") is True and isinstance(rec.get("papers"), int):
            out.end = rec
            return True
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    return False


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
