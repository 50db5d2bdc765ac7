"""Writing files all or nothing, and locking them: the one owner of both.

Three callers share it: the store (the library file is written to a
temporary file, fsynced and renamed over the old one; its folder is fsynced
so the rename survives a power cut; one process holds the writer lock), the
search index (its state file, its rebuild lock) and exports.

Exports: `write_atomically` writes a temporary file beside the real target
(through symlinks: the link stays a link, `write_target`), gives it the old
file's mode and owner (a new file gets 0o666 & ~umask, as any editor would
make it), fsyncs and renames it over the target: the old file or the new one,
never half of one. What the user set up is kept: a file with other hard links
gets the complete new text copied into it in place (every name sees the
export); a pipe, a terminal, /dev/stdout or /dev/null is written directly.
Temporary files are named `.NAME.papershelf-XXXXXXXX.tmp`; one left by a
killed export is removed by the next write into that folder once it is old
enough to be abandoned.

Durable files (`synced_file`, `rename_over`, `fsync_dir`,
`write_bytes_atomically`) raise OSError as it came: each caller words its own
message. Locks (`try_lock`, `unlock`, `try_lock_fd`, `lock_shared_fd`) are
advisory, on whole files, and released by the OS when their process dies.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, BinaryIO

from .errors import ExportError
from .text import clean_text

TEMP_MARK = ".papershelf-"
# mkstemp's random part: 8 of [a-z0-9_]
_TEMP_RE = re.compile(r"\A\..+\.papershelf-[a-z0-9_]{8}\.tmp\Z")
# a temporary file untouched this long belongs to no running export
STALE_AFTER_SECONDS = 15 * 60

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the folder is on a read-only file system",
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "the folder does not exist",
    errno.EISDIR: "it is a folder",
    errno.ENAMETOOLONG: "the name is too long",
}

_umask_lock = threading.Lock()


def is_temp_name(name: str) -> bool:
    """Whether `name` is one of our temporary files."""
    return bool(_TEMP_RE.match(name))


def current_umask() -> int:
    """The process umask, without changing it where the system can tell."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # os.umask both sets and reads: set it back at once (other threads may create files meanwhile)
    with _umask_lock:
        old = os.umask(0o022)
        os.umask(old)
    return old


def remove_stale_temp_files(folder: Path | str, older_than_seconds: float = STALE_AFTER_SECONDS) -> list[Path]:
    """Remove our temporary files in `folder` untouched for `older_than_seconds`
    (an export was killed); anything else, or a fresh one, is left alone.
    Returns what was removed; errors are ignored (this is housekeeping)."""
    folder = Path(folder)
    try:
        names = [n for n in os.listdir(folder) if TEMP_MARK in n and is_temp_name(n)]
    except OSError:
        return []
    cutoff = time.time() - older_than_seconds
    removed = []
    for name in names:
        path = folder / name
        try:
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except OSError:
            pass
    return removed


def write_error(exc: OSError, path: Path | str, existed: bool = False) -> ExportError:
    """The typed error for a failed write: what failed, where, and what is left."""
    reason = _REASONS.get(exc.errno or 0, exc.strerror or str(exc))
    shown = clean_text(str(path))
    left = f"; {shown} is as it was" if existed else ""
    hint = (
        "free some space or choose another folder"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT)
        else "choose a folder you can write to"
    )
    return ExportError(f"Could not write {shown}: {reason}. Nothing was exported{left}; {hint}.", path)


def write_target(path: Path | str) -> Path:
    """The file a write to `path` replaces: through symlinks, so a link stays a link (its target
    is replaced, by a temporary file in the target's own folder)."""
    return Path(os.path.realpath(path))


def write_atomically(path: Path | str, text: str | Iterable[str]) -> None:
    """Write `text` (or its pieces, as UTF-8) in place of `path`, all or nothing.

    A symlink stays a symlink and its target gets the text; a replaced file
    keeps its mode and (where permitted) owner; a file with other hard links
    gets the new text in place once all of it is on disk. A device or pipe
    (/dev/stdout) is written to directly. Raises ExportError saying why on
    failure; other exceptions (from producing `text`) pass through. Either
    way no temporary file stays.
    """
    shown = Path(path)
    target = write_target(path)
    st = _stat_as_given(path, shown)
    if st is not None and _written_directly(st, target, shown, text):
        return
    remove_stale_temp_files(target.parent)
    temp = _temp_beside(target, shown)
    try:
        _give_owner_and_mode(temp.fd, st)
        with os.fdopen(temp.fd, "w", encoding="utf-8", newline="\n") as f:
            temp.fd = -1
            _write(f, text)
            f.flush()
            os.fsync(f.fileno())
        _put_in_place(temp, target, st, shown)
        _fsync_dir(target.parent)
    except BaseException as exc:
        temp.discard()
        if isinstance(exc, OSError):
            raise write_error(exc, shown, existed=st is not None) from exc
        raise


def _stat_as_given(path: Path | str, shown: Path) -> os.stat_result | None:
    """What `path` is now (None: nothing yet)."""
    try:
        # the name as given: /dev/stdout resolves to "pipe:[…]", which only the kernel can open
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise write_error(exc, shown) from exc


def _written_directly(st: os.stat_result, target: Path, shown: Path, text: str | Iterable[str]) -> bool:
    """Write `text` into what is not a regular file reached by its own name (True), where
    a temporary file renamed over it would be wrong; a folder is refused."""
    if stat.S_ISDIR(st.st_mode):
        raise write_error(IsADirectoryError(errno.EISDIR, "Is a directory"), shown)
    if not stat.S_ISREG(st.st_mode):
        _write_directly(shown, text, shown)  # /dev/null, a pipe: renaming over it would be wrong
        return True
    if not _same_file(st, target):
        # a file reached through /proc (/dev/stdout redirected to a file, /dev/fd/N): the name
        # that resolves is not that file, so write the file the name opens
        _write_directly(shown, text, shown, truncate=True)
        return True
    return False


class _Temp:
    """The temporary file a write goes to: its descriptor (-1 once handed on) and its
    path ("" once it is in place, or kept)."""

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    def discard(self) -> None:
        """After a failure: no temporary file stays."""
        if self.fd >= 0:
            os.close(self.fd)
        if self.path:
            try:
                os.unlink(self.path)
            except OSError:
                pass


def _temp_beside(target: Path, shown: Path) -> _Temp:
    """A new temporary file in `target`'s folder, or ExportError saying why there is none."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}{TEMP_MARK}", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        if target.parent != shown.absolute().parent:
            # a link: the folder that needs to be writable is the one it points into
            raise ExportError(
                f"Could not write {shown}: it links to {target}, and Papershelf cannot write in "
                f"{target.parent} ({exc.strerror or exc}). Nothing was exported; {shown} is as it was. "
                "Export to another file, or make that folder writable.",
                shown,
            ) from exc
        raise write_error(exc, shown) from exc
    return _Temp(fd, tmp)


def _give_owner_and_mode(fd: int, st: os.stat_result | None) -> None:
    """The replaced file's owner (where permitted) and mode, or a new file's mode."""
    if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)  # before chmod: chown clears set-id bits
        except PermissionError:
            pass  # not ours to give away: we own the new file
    try:
        os.fchmod(fd, 0o666 & ~current_umask() if st is None else stat.S_IMODE(st.st_mode))
    except PermissionError:
        pass  # FAT and the like refuse modes they cannot store; theirs applies


def _put_in_place(temp: _Temp, target: Path, st: os.stat_result | None, shown: Path) -> None:
    """The whole new text, on disk in the temporary file, becomes `target`'s."""
    if st is not None and st.st_nlink > 1:
        # hard links: a rename would leave the other names on the old text; all of the new
        # text is on disk now, so copy it into the file itself
        try:
            _copy_into(temp.path, target)
        except _PartlyWritten as exc:
            kept, temp.path = temp.path, ""  # the only whole copy of the export now: keep it
            cause = exc.__cause__
            reason = str(cause)
            if isinstance(cause, OSError):
                reason = _REASONS.get(cause.errno or 0, cause.strerror or reason)
            raise ExportError(
                f"Could not write {shown} in place: {reason}. It (and every name linked to it) may now hold "
                f"part of the export; the whole export is in {kept}: copy it over {shown} (it is removed "
                "after 15 minutes), or export again.",
                shown,
            ) from cause
        os.unlink(temp.path)
    else:
        os.replace(temp.path, target)
    temp.path = ""


def _write(f: IO[str], text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        f.write(text)
    else:
        f.writelines(text)


def _same_file(st: os.stat_result, target: Path) -> bool:
    try:
        other = os.stat(target)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino)


class _PartlyWritten(Exception):
    """Writing a file in place failed after its first byte changed (the OSError is the cause)."""


def _copy_into(source: str, target: Path) -> None:
    """The bytes of `source` into `target` in place (the same inode, its other names and mode
    kept), then fsynced. The room for them is reserved first: a full disk raises OSError with
    `target` as it was; a failure after its first byte changed raises _PartlyWritten."""
    size = os.path.getsize(source)
    with open(source, "rb") as src, open(target, "r+b") as dst:
        old = os.fstat(dst.fileno()).st_size
        if size > old and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(dst.fileno(), 0, size)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(dst.fileno(), old)  # what a partial reservation added
                if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                    raise
        try:
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.truncate()
            dst.flush()
            os.fsync(dst.fileno())
        except OSError as exc:
            raise _PartlyWritten() from exc


def _write_directly(target: Path, text: str | Iterable[str], shown: Path, truncate: bool = False) -> None:
    flags = os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if truncate:
        flags |= os.O_TRUNC
    try:
        # a pipe nobody reads would block for ever: open without waiting (ENXIO: no reader)
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise ExportError(
                f"Could not write {shown}: it is a pipe that no program is reading from. Nothing was exported.", shown
            ) from exc
        raise write_error(exc, shown) from exc
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a reader is there: write at its pace
        with open(fd, "w", encoding="utf-8", newline="\n") as f:
            _write(f, text)
    except BrokenPipeError:
        raise  # the reader stopped reading (`export -o /dev/stdout | head`): as `list | head` does
    except OSError as exc:
        raise write_error(exc, shown) from exc


def _fsync_dir(folder: Path) -> None:
    """`fsync_dir` for an export: errors ignored, the rename is done either way."""
    if os.name != "posix":  # pragma: no cover
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a folder; the rename is done either way
    finally:
        os.close(fd)


# ---- durable files -------------------------------------------------------

# Windows opens files in text mode unless told otherwise: LF would become CRLF.
O_BINARY: int = getattr(os, "O_BINARY", 0)


def fsync_dir(folder: Path) -> None:
    """Make the names in `folder` durable (a rename, a new file): fsync the folder.

    Raises OSError if that fails (the store reports it: a rename that may not
    survive a power cut is not saved). A no-op on Windows, which cannot.
    """
    if os.name == "nt":  # pragma: no cover
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def synced_file(path: Path, buffering: int = -1) -> Iterator[BinaryIO]:
    """`path` opened for writing bytes (created, or emptied); when the block
    ends normally its bytes are flushed and fsynced before it is closed.

    On an exception the file is closed and left as it is: the caller knows
    whether it is a temporary file to remove.
    """
    with open(path, "wb", buffering=buffering) as f:
        yield f
        f.flush()
        os.fsync(f.fileno())


def remove_quietly(path: Path | str) -> None:
    """Remove a file of ours if it is there; any error is ignored (tidying only)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def rename_over(tmp: Path | str, target: Path | str) -> None:
    """Rename `tmp` over `target` in one step (same file system: the old file
    or the new one, never neither). On failure `tmp` is removed and the
    OSError raised. The caller fsyncs the folder (`fsync_dir`) when the new
    name must survive a power cut: the store does things in between.
    """
    try:
        os.replace(tmp, target)
    except OSError:
        remove_quietly(tmp)
        raise


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Replace `path` by a file holding `data`, all or nothing, durably.

    A temporary file in the same folder (`.NAME.papershelf-XXXXXXXX.tmp`,
    mode 0o600 as mkstemp makes it) is written, fsynced and renamed over
    `path`, then the folder is fsynced. On failure before the rename the old
    file is intact and the temporary file removed; OSError is raised as it
    came (ENOSPC, EACCES...). If only the folder's fsync fails, the new file
    is in place but may not survive a power cut, and the OSError is raised.
    Safe to call from several threads or processes at once: each has its own
    temporary file, and the last rename wins.
    """
    _replace_atomically(Path(path), lambda f: f.write(data))


def _replace_atomically(path: Path, write: Callable[[BinaryIO], object], name: str = "", mode: int = 0) -> None:
    """Replace `path` by what `write` writes into a temporary file beside it (named after `name`,
    else the file's own name), fsynced, given `mode` (else mkstemp's 0o600) and renamed over
    `path`; then the folder is fsynced. On failure the temporary file is removed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name or path.name}{TEMP_MARK}", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            fd = -1
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if mode:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = ""
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if tmp:
            remove_quietly(tmp)
        raise
    fsync_dir(path.parent)


def write_stream_atomically(path: Path, chunks: Iterable[bytes]) -> tuple[int, str]:
    """Replace `path` by a file holding the bytes of `chunks`, all or nothing, durably (as
    `write_bytes_atomically`, for a file too large to hold: a PDF copied or downloaded). Returns
    its size and SHA-256. An exception from `chunks` (a cancel, a cap) leaves no file behind."""
    path = Path(path)
    digest, size = hashlib.sha256(), 0

    def write(f: BinaryIO) -> None:
        nonlocal size
        for chunk in chunks:
            f.write(chunk)
            digest.update(chunk)
            size += len(chunk)

    short = path.name.encode("utf-8")[:60].decode("utf-8", "ignore")  # a long name's temp stays within 255 bytes
    _replace_atomically(path, write, short, 0o666 & ~current_umask())
    return size, digest.hexdigest()


def file_chunks(path: Path | str, chunk: int = 1 << 20) -> Iterator[bytes]:
    """A file's bytes, a chunk at a time."""
    with open(path, "rb") as f:
        yield from iter(lambda: f.read(chunk), b"")


# ---- locks ---------------------------------------------------------------


def try_lock_fd(fd: int) -> bool:
    """Take an exclusive lock on the open file `fd` without waiting; False if
    another process (or another open file of this one) holds a lock on it."""
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def try_lock(path: Path | str) -> int | None:
    """An exclusive lock on `path` (created if missing, mode 0o644), or None
    if another holds it. Does not wait. Returns the open file that holds the
    lock: `unlock` it when done; the OS releases it if the process dies.
    OSError if the file cannot be opened (a read-only folder, say).
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | O_BINARY, 0o644)
    if not try_lock_fd(fd):
        os.close(fd)
        return None
    return fd


def unlock(fd: int) -> None:
    """Release a lock from `try_lock` (closing its file releases it)."""
    os.close(fd)


def lock_shared_fd(fd: int) -> None:
    """`flock` shared on an open file, waiting for an exclusive holder to let go.

    POSIX only: Windows has no `flock`, and callers skip shared locks there."""
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_SH)


# ---- reading the library's small files -------------------------------------------

# settings.json, hand-tags.json, saved-searches.json: a few kilobytes each, even for
# thousands of tags; anything near this is not one Papershelf wrote
SMALL_FILE_MAX_BYTES = 16 * 2**20


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is, in words (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a device (such as /dev/zero)"
    if stat.S_ISBLK(mode):
        return "a disk device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_small_file(path: Path, max_bytes: int = SMALL_FILE_MAX_BYTES) -> bytes:
    """The bytes of one of Papershelf's small files, read only if it is a regular file of at
    most `max_bytes`: opened without waiting (a named pipe would wait forever for a writer),
    checked with fstat. Raises OSError as it came (missing, permissions), or an OSError whose
    strerror says what the file is instead ("it is a named pipe, not a file")."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | O_BINARY)
    try:
        st = os.fstat(fd)
        kind = kind_of(st.st_mode)
        if kind is not None:
            raise OSError(errno.EINVAL, f"it is {kind}, not a file", str(path))
        too_large = OSError(errno.EFBIG, f"it is larger than {max_bytes // 2**20} MB, which no such file is", str(path))
        if st.st_size > max_bytes:
            raise too_large
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew while read (or a file that lies about its size)
            raise too_large
        return data
    finally:
        os.close(fd)
