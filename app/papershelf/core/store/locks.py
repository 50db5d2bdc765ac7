"""The store's two locks, and the one message for a write it could not make.

* The writer lock (`library.lock`): held exclusively by the one process that
  may write the library, for as long as it has it open. It lives in the
  machine's own folder for the library (the store's `local`), not in the
  library folder a sync tool may copy. The file names the
  holder, for the message the next process shows.
* The swap lock (`library.readlock`): readers hold it shared while they read
  the library file and the journal; a compaction holds it exclusively while
  it swaps the two.

The locking calls themselves are `fileio`'s.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import StoreLockedError, StoreWriteError
from ..fileio import lock_shared_fd, try_lock, try_lock_fd, unlock
from .files import check_open_file, odd_kind_error, open_store_file
from .format import READ_LOCK

# How long a compaction waits for readers before swapping anyway (they notice and retry).
SWAP_WAIT_SECONDS = 2.0

log = logging.getLogger("papershelf.core.store")  # one logger for the package


def store_write_error(exc: OSError, where: Path) -> StoreWriteError:
    """The error for any write of the store that failed: where, why, and that nothing changed."""
    reason = {
        errno.EROFS: "the folder is on a read-only file system",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exceeded",
    }.get(exc.errno or 0, exc.strerror or str(exc))
    return StoreWriteError(
        f"Papershelf could not write to {where}: {reason}. The change was not saved; "
        "your library on disk is as it was before.",
        where,
    )


class WriterLock:
    """An exclusive advisory lock on a file, released by the OS if we die."""

    def __init__(self, path: Path, library: Path | None = None):
        self.path = path
        self.library = library if library is not None else path.parent  # the folder messages name
        self.fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise StoreLockedError naming the process that holds it
        (StoreWriteError if the lock file cannot be made)."""
        try:
            fd = try_lock(self.path)
        except OSError as exc:
            if exc.errno == errno.EISDIR:
                raise odd_kind_error(self.path, "lock file", "a folder") from exc
            raise store_write_error(exc, self.path.parent) from exc
        if fd is None:
            holder = _read_holder(self.path)
            who = f" (process {holder})" if holder else ""
            raise StoreLockedError(
                f"The library in {self.library} is open in another Papershelf{who}. "
                "Close that one first; two programs writing one library could lose edits.",
                self.path,
            ) from None
        try:  # opened read-write: a named pipe did not make it wait; refuse it and its kin now
            check_open_file(fd, self.path, "lock file")
        except BaseException:
            unlock(fd)
            raise
        # say who holds it, for the message the next process will show
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, f"{os.getpid()} on {socket.gethostname()}".encode())
        except OSError as exc:
            unlock(fd)
            raise store_write_error(exc, self.path.parent) from exc
        self.fd = fd

    def release(self) -> None:
        """Let go of the lock if held (closing the file releases it)."""
        if self.fd is not None:
            unlock(self.fd)
            self.fd = None


def _read_holder(path: Path) -> str:
    """What the holder of the writer lock wrote in it ("<pid> on <host>"), or ""."""
    try:
        with open(path, "rb") as f:
            return f.read(200).decode("utf-8", "replace").strip()
    except OSError:
        return ""


@contextlib.contextmanager
def swap_lock(folder: Path, exclusive: bool) -> Iterator[None]:
    """Readers (shared) against a compaction's swap of library file and journal (exclusive).

    A reader holds it while it reads both files, so it never sees the
    library file of one generation with the journal of another. The
    writer waits at most SWAP_WAIT_SECONDS for readers, then swaps anyway:
    readers also check generations and retry, so this only saves them work.
    """
    if os.name == "nt":  # pragma: no cover - no flock; readers fall back to retrying
        yield
        return
    path = folder / READ_LOCK
    try:
        # a named pipe, device or folder in its place is refused (StoreOddFileError), not waited on
        fd = open_store_file(path, "lock file", (os.O_RDWR | os.O_CREAT) if exclusive else os.O_RDONLY)
    except OSError:
        yield  # a read-only folder without the file: nobody can be compacting
        return
    try:
        if exclusive:
            deadline = time.monotonic() + SWAP_WAIT_SECONDS
            while not try_lock_fd(fd):
                if time.monotonic() > deadline:
                    log.info("readers still hold %s; swapping anyway", path)
                    break
                time.sleep(0.01)
        else:
            lock_shared_fd(fd)  # a swap takes milliseconds
        yield
    finally:
        os.close(fd)
