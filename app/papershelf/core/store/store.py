"""The Store: loads, journals and compacts one library folder.

Opening reads the library file and replays the journal on top (journal.py);
`apply` makes an edit durable as one journal line before it is visible;
`compact` folds the journal into a new library file (format.py), written to
a temporary file, fsynced and renamed over the old one (fileio), so a crash
at any moment leaves the old state or the new, never a mix. The old file is
kept as a backup (backups.py); `recover` (recovery.py) mends a damaged one.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import threading
from pathlib import Path
from typing import cast

from ..dedupe import FINGERPRINT_VERSION
from ..errors import ReadOnlyLibraryError, StoreCorruptError, StoreUnreadableError, StoreWriteError
from ..fileio import fsync_dir, remove_quietly, rename_over, write_target
from ..paper import Paper
from . import recovery
from .backups import backup_library_file, latest_good_backup, list_backups, prune_backups
from .format import (
    BACKUPS,
    JOURNAL,
    LOCK,
    MARK,
    SCHEMA_VERSION,
    SNAPSHOT,
    SYNC_LINES,
    TEMP_SUFFIXES,
    read_snapshot,
    write_snapshot,
)
from .journal import Op, journal_line, missing_library_evidence, open_journal_for_append, replay_journal
from .locks import WriterLock, store_write_error, swap_lock
from .mark import open_mark_for_writing, read_mark, write_mark
from .replica import Replica

# Fold the journal into the snapshot past this size (or a fifth of the snapshot).
JOURNAL_COMPACT_BYTES = 16 * 2**20
# An edit bigger than this (a large import) is written as a new snapshot directly.
BULK_BYTES = 4 * 2**20
BULK_PAPERS = 2000

log = logging.getLogger("papershelf.core.store")  # one logger for the package


class Store:
    """Loads, journals and compacts one library folder.

    The in-memory state (`papers`, `lists`) is the store's; callers change it
    only through `apply`, which makes the change durable before it is visible.
    journal.py and recovery.py work on the journal bookkeeping below for it.
    """

    def __init__(self, folder: Path | str, readonly: bool = False, local: Path | str | None = None):
        self.folder = Path(folder)
        # where this machine's locks for the folder live (machine.local_dir for a device's
        # folder in a shared library; the folder itself for a plain one)
        self.local = Path(local) if local is not None else self.folder
        self.readonly = readonly
        self.papers: dict[str, Paper] = {}
        self.lists: dict[str, list[str]] = {}
        self.generation = 0
        self.seq = 0  # last journal sequence number applied
        self.fingerprint_version = FINGERPRINT_VERSION
        self.dropped_torn_line = False
        self._journal_fd: int | None = None
        self._journal_bytes = 0
        self._snapshot_bytes = 0
        self._valid_journal_len = 0
        self._journal_fix_newline = False
        self._journal_dirty = False
        self._journal_current_lines = 0  # lines of the current generation in the journal
        self._snapshot_version = SCHEMA_VERSION
        self._mark_fd: int | None = None
        self._mark_stale = False  # journal.last is there but damaged or in the old form
        self._read_keys: tuple[object, object] | None = None  # the files as a read-only load found them
        self.notices: list[str] = []  # things the user should hear about that are not errors
        self._lock = WriterLock(self.local / LOCK, self.folder)
        self._write_lock = threading.RLock()  # one writer thread at a time within this process
        # a device's folder of a shared library: the merge state (shared.py sets it)
        self.sync: Replica | None = None

    @property
    def library_folder(self) -> Path:
        """The library folder the user chose (a device's store lives inside it)."""
        return self.folder

    # ---- paths -------------------------------------------------------------
    @property
    def snapshot_path(self) -> Path:
        """The library file."""
        return self.folder / SNAPSHOT

    @property
    def journal_path(self) -> Path:
        """The journal of edits since the library file."""
        return self.folder / JOURNAL

    @property
    def backup_dir(self) -> Path:
        """The folder of backups of earlier library files."""
        return self.folder / BACKUPS

    # ---- opening -----------------------------------------------------------
    def open(self) -> Store:
        """Read the library (taking the writer lock unless read-only); returns self.

        Raises StoreLockedError, StoreCorruptError, StoreUnreadableError,
        StoreVersionError or StoreWriteError, with nothing changed on disk."""
        if not self.readonly:
            self.take_folder()
        try:
            if not self.readonly:
                self._remove_stale_temp_files()
            self._load()
            if not self.readonly:
                open_journal_for_append(self)
                if self._mark_stale:
                    # damaged (taken as absent) or written by an older Papershelf: seal it again now
                    self._write_mark()
                if self._snapshot_version < SCHEMA_VERSION and self.snapshot_path.exists():
                    # written by an older Papershelf: bring it forward now (the old file stays a
                    # backup); if that cannot be written, the next compaction tries again
                    try:
                        self.compact()
                    except StoreWriteError as exc:
                        log.warning(
                            "could not bring %s forward to schema %d yet: %s", self.snapshot_path, SCHEMA_VERSION, exc
                        )
        except BaseException:
            self.close()
            raise
        return self

    def take_folder(self) -> None:
        """Create the library folder if need be and take the writer lock (StoreWriteError,
        StoreLockedError); what opening for writing and recovery both start with."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.local.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise store_write_error(exc, self.folder) from exc
        self._lock.acquire()

    def close(self) -> None:
        """Close the journal and let go of the writer lock; the state stays readable."""
        if self._journal_fd is not None:
            os.close(self._journal_fd)
            self._journal_fd = None
        if self._mark_fd is not None:
            os.close(self._mark_fd)
            self._mark_fd = None
        self._lock.release()
        # loads and imports froze what they built (see gc_paused); hand it back
        # to the collector so a closed library can be freed whole (always: a
        # load that failed halfway may have frozen what it had read)
        gc.unfreeze()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _remove_stale_temp_files(self) -> None:
        """A process killed while writing a new library file leaves its temporary file.

        Only called with the write lock held, so no other process is writing one."""
        for name in (SNAPSHOT + suffix for suffix in TEMP_SUFFIXES):
            path = self.folder / name
            try:
                # a named pipe or socket by that name, or a link (to one, or to a device) would make
                # the next compaction wait forever or fail; removing a link never touches its target
                if path.is_symlink() or path.is_file() or path.is_fifo() or path.is_socket():
                    path.unlink()
                    log.info("removed %s, left by an interrupted write", path)
            except OSError as exc:
                log.warning("could not remove %s: %s", path, exc)

    def _load(self) -> None:
        # A reader without the write lock may race a compaction: the swap lock
        # keeps it out of the swap, and the journal lines carry their
        # generation, so a mismatch that gets through anyway is seen and the
        # read retried.
        consistent = False
        for _attempt in range(20 if self.readonly else 1):
            with swap_lock(self.local, exclusive=False) if self.readonly else contextlib.nullcontext():
                before = _stat_key(self.snapshot_path)
                if before is None:
                    try:
                        self._refuse_if_library_file_vanished()
                    except StoreCorruptError:
                        if not self.readonly or _stat_key(self.snapshot_path) is None:
                            raise
                        # not vanished: a compaction saved the first library file (and its
                        # journal.last) while this reader looked; read again
                        consistent = True
                        continue
                    self.start_empty()
                else:
                    self._read_snapshot(self.snapshot_path)
                mark = self._read_mark()  # before the journal: it is written after the journal
                journal_key = _stat_key(self.journal_path)  # before reading it: see `unchanged_on_disk`
                consistent = replay_journal(self)
            if consistent and _stat_key(self.snapshot_path) == before:
                self._read_keys = (before, journal_key)
                self._check_mark(mark)
                return
        if not consistent:
            raise StoreCorruptError(
                f"The journal {self.journal_path} does not belong to the library file "
                f"{self.snapshot_path} (it holds edits of a newer library file, as if an older one "
                "had been put back by hand). Nothing was changed. Run 'papershelf recover' to keep "
                "the library file and set the journal aside.",
                self.journal_path,
            )
        # a read-only reader that kept losing the race to compactions (twenty in a row)
        raise StoreUnreadableError(
            f"The library in {self.folder} kept changing while Papershelf read it (another Papershelf "
            "is saving it). Nothing is wrong with it; try again.",
            self.folder,
        )

    def start_empty(self) -> None:
        """The state of a library with no library file yet (its journal goes on top)."""
        self.papers, self.lists, self.generation, self.seq = {}, {}, 0, 0
        self._snapshot_bytes = 0
        self._snapshot_version = SCHEMA_VERSION
        if self.sync is not None:
            self.sync.bind(self.papers, self.lists)  # the merge state follows the new dicts
            self.sync.load({}, [])

    def unchanged_on_disk(self) -> bool:
        """Whether the library's files are still as this store read them: always
        for the writer (it holds the lock, its state is the library's); for a
        read-only store, False once another process has saved an edit since
        (the journal or the library file changed), so its copy is older."""
        if not self.readonly:
            return True
        try:
            return self._read_keys == (_stat_key(self.snapshot_path), _stat_key(self.journal_path))
        except StoreUnreadableError:
            return False

    def _read_mark(self) -> tuple[int, int] | None:
        """What journal.last says (see mark.py); None if there is none or it is damaged:
        it only ever adds a check."""
        path = self.folder / MARK
        mark, current = read_mark(path)
        self._mark_stale = not current and path.exists()
        if mark is None and self._mark_stale:
            log.info("%s is damaged; taken as absent", path)
        return mark

    def _check_mark(self, mark: tuple[int, int] | None) -> None:
        if mark is None or mark[0] != self.generation or mark[1] <= self.seq:
            return
        lost = mark[1] - self.seq
        raise StoreCorruptError(
            f"The journal {self.journal_path} ends at edit {self.seq}, but edit {mark[1]} was saved: "
            f"{lost} saved edit(s) at its end are missing (the file was cut short, emptied or "
            "deleted). Nothing was changed. Run 'papershelf recover' to keep the edits that remain "
            "and be told which were lost.",
            self.journal_path,
        )

    def _write_mark(self) -> None:
        """Record the last durable edit. Not synced: after a crash it may be older, never newer."""
        try:
            first = self._mark_fd is None
            if self._mark_fd is None:
                self._mark_fd = open_mark_for_writing(self.folder / MARK)
            write_mark(self._mark_fd, self.generation, self.seq, first)
            self._mark_stale = False
        except (OSError, StoreUnreadableError) as exc:
            log.warning("could not update %s: %s", self.folder / MARK, exc)

    def _refuse_if_library_file_vanished(self) -> None:
        """No library file: a new library, unless backups, the journal or journal.last
        say there was one (StoreCorruptError)."""
        backups = self.backups()
        if backups:
            good = latest_good_backup(self.backup_dir)
            raise StoreCorruptError(
                f"The library file {self.snapshot_path} is missing, but {self.backup_dir} holds "
                f"backups of a library. Nothing was changed. "
                + (
                    f"Run 'papershelf recover' to restore the latest good backup, {good}, and replay "
                    "the journal on top."
                    if good
                    else "None of the backups can be read either."
                ),
                self.snapshot_path,
                good,
            )
        # Generation 0 is a library that was never compacted (it lives in its journal); a
        # later one had a library file, which only a compaction writes.
        found = missing_library_evidence(self.journal_path, self._read_mark())
        if found:
            raise StoreCorruptError(
                f"The library file {self.snapshot_path} is missing, and there is no backup of it "
                f"in {self.backup_dir}, but {found}: there was a library here. Nothing was changed. "
                f"If the library file was moved or renamed, put it back as {self.snapshot_path}. "
                "Otherwise run 'papershelf recover': it keeps what the journal alone holds (the papers "
                "added since the library file was last saved, with their edits) and a copy of the "
                "journal; the papers only the library file held cannot be brought back.",
                self.snapshot_path,
            )

    def _read_snapshot(self, path: Path) -> None:
        papers, lists, header = read_snapshot(path, self.backup_dir)
        self.papers, self.lists = papers, lists
        self.generation = header["generation"]
        self.seq = header.get("journal_seq", 0)
        self.fingerprint_version = header.get("fingerprint_version", 0)
        self._snapshot_version = header["schema_version"]
        self._snapshot_bytes = path.stat().st_size
        if self.sync is not None:
            self.sync.bind(papers, lists)
            try:
                self.sync.load(header, header.get(SYNC_LINES, []))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise StoreCorruptError(
                    f"The library file {path} cannot be read: its merge state is damaged ({exc}). "
                    "Papershelf has not changed it. Run 'papershelf recover'.",
                    path,
                ) from exc

    def recover(self) -> str:
        """Get back every edit that can be read, and say exactly what was lost
        (see recovery.py). Returns what was done, in words; closes the store."""
        return recovery.recover(self)

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
                f"The library in {self.folder} was opened read-only; the change was not made.", self.folder
            )
        if self.sync is not None:
            # a device of a shared library: one action of fine operations (replica.py)
            self.sync.applied[self.sync.device] = self.seq
            action = self.sync.new_action()
            fine = self.sync.translate(ops)
            if not fine:
                return
            ops = [Op("sync", action.dev, (action, fine))]
            payload = {
                "seq": action.seq,
                "gen": self.generation,
                "ops": fine,
                "hlc": action.hlc,
                "dev": action.dev,
                "vv": action.vv,
            }
            if sum(op[0] == "a" for op in fine) > BULK_PAPERS:
                self._apply_as_snapshot(ops)
                return
        else:
            if sum(op.kind == "add" for op in ops) > BULK_PAPERS:
                self._apply_as_snapshot(ops)  # no need to encode it twice
                return
            payload = {"seq": self.seq + 1, "gen": self.generation, "ops": [op.encode() for op in ops]}
        line = journal_line(payload)
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
        fd = cast(int, self._journal_fd)
        start = self._journal_bytes
        try:
            if self._journal_dirty:
                # a failed write left bytes past the last good line and taking them
                # back failed too: the next line must not follow them
                os.ftruncate(fd, start)
                self._journal_dirty = False
            written = 0
            while written < len(line):  # at an explicit offset: no file position to lose
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
            raise store_write_error(exc, self.journal_path) from exc
        self._journal_bytes = start + len(line)

    def _apply_as_snapshot(self, ops: list[Op]) -> None:
        for op in ops:
            self._apply_in_memory(op)
            if op.kind == "sync":
                self.seq = op.value[0].seq  # the action is numbered, though no journal line holds it
        try:
            self.compact()
        except BaseException:
            # the disk still has the old state: go back to it
            self._load()
            raise

    def _apply_in_memory(self, op: Op) -> None:
        kind = op.kind
        if kind == "sync":
            if self.sync is None:
                raise StoreCorruptError(
                    f"The journal {self.journal_path} holds edits of a shared library (devices/); "
                    "open the library folder itself, not a device's folder.",
                    self.journal_path,
                )
            self.sync.apply(*op.value)
        elif kind == "set":
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
        # a library file that is a symlink stays one: its target is replaced, from its own folder
        target = write_target(self.snapshot_path)
        tmp = target.with_name(target.name + ".tmp")
        if self.sync is not None:
            # the header's vv says how many of its own actions the file holds, whatever path set seq
            # (an upgrade, a recovery): another device takes that from it when it joins the file
            self.sync.applied[self.sync.device] = max(self.seq, 0)
        try:
            if self.sync is not None:
                write_snapshot(
                    tmp,
                    self.papers,
                    self.lists,
                    new_gen,
                    self.seq,
                    self.fingerprint_version,
                    self.sync.header(),
                    self.sync.lines(),
                )
            else:
                write_snapshot(tmp, self.papers, self.lists, new_gen, self.seq, self.fingerprint_version)
            if backup_current and self.snapshot_path.exists():
                backup_library_file(self.folder, self.generation)
        except BaseException as exc:
            remove_quietly(tmp)
            if isinstance(exc, OSError):
                raise store_write_error(exc, self.folder) from exc
            raise
        with swap_lock(self.local, exclusive=True):
            try:
                rename_over(tmp, target)
            except OSError as exc:
                raise store_write_error(exc, self.folder) from exc
            # From the rename on, the new snapshot is the library: journal lines
            # must carry its generation even if what follows fails.
            self.generation = new_gen
            self._snapshot_version = SCHEMA_VERSION
            try:
                fsync_dir(target.parent)
            except OSError as exc:
                raise store_write_error(exc, self.folder) from exc
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
        prune_backups(self.backup_dir)

    def backups(self) -> list[Path]:
        """Backups, newest first."""
        return list_backups(self.backup_dir)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    """What changes when the library file is replaced or rewritten (None: there is none)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreUnreadableError(
            f"Papershelf cannot open the library at {path.parent}: {exc.strerror}. "
            "Check that --data-dir names a folder.",
            path,
        ) from exc
    return (st.st_ino, st.st_size, st.st_mtime_ns)
