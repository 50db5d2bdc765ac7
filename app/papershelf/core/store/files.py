"""Opening the store's files: only regular files, and none larger than a real library makes them.

Anything can be put where a store file belongs: a named pipe (opening it
waits forever for a writer), a link to /dev/zero or /dev/urandom (reading
never ends), a folder, a socket, or a file of gigabytes of zeros. Each file
is opened without waiting (``O_NONBLOCK``), checked with ``fstat`` and
refused with words unless it is a regular file of a plausible size; nothing
is read from it, and nothing in the folder is changed.

The limits are set against DESIGN.md's figures (100,000 papers: a library
file of about 170 MB; the journal is folded into the library file past 16 MB
or a fifth of it), far above both.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import BinaryIO

from ..errors import StoreOddFileError
from ..fileio import O_BINARY, kind_of

# The library file and each backup: twelve times a 100,000-paper library.
LIBRARY_FILE_MAX_BYTES = 2 * 2**30
# The journal: compacted past 16 MB (or a fifth of the library file, 400 MB at the
# largest library file); read whole when the library is opened.
JOURNAL_MAX_BYTES = 1 * 2**30
# One line of the library file (one paper): a record is a few kilobytes; an edit
# over 4 MB is written as a library file, never as one journal line.
LINE_MAX_BYTES = 64 * 2**20
# journal.last: one line of a few dozen bytes; only its start is read.
MARK_READ_BYTES = 256

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def size_words(size: int) -> str:
    """3 * 2**30 → '3.0 GB' (as file managers count)."""
    if size >= 2**30:
        return f"{size / 2**30:.1f} GB"
    return f"{size / 2**20:.0f} MB"


def odd_kind_error(path: Path, what: str, kind: str) -> StoreOddFileError:
    """The refusal of a store file that is not a file."""
    return StoreOddFileError(
        f"The {what} {path} is {kind}, not a file. Papershelf did not read it and changed nothing "
        f"in {path.parent}. Papershelf never makes one: move it out of the folder (or put the real "
        f"{what} back in its place) and try again.",
        path,
    )


def too_large_error(path: Path, what: str, size: int, limit: int) -> StoreOddFileError:
    """The refusal of a store file larger than any Papershelf writes."""
    return StoreOddFileError(
        f"The {what} {path} is {size_words(size)}: no Papershelf {what} is that large (the limit is "
        f"{size_words(limit)}; a library of 100,000 papers is about 170 MB), so it is not one "
        f"Papershelf wrote. Papershelf did not read it and changed nothing in {path.parent}. Move it "
        "out of the folder and open the library again: Papershelf then says how to restore the "
        "library from its latest good backup, if there is one.",
        path,
    )


def check_open_file(fd: int, path: Path, what: str, max_bytes: int | None = None) -> None:
    """Refuse (StoreOddFileError) an open file that is not a regular file or is
    larger than `max_bytes`; the caller closes `fd`."""
    st = os.fstat(fd)
    kind = kind_of(st.st_mode)
    if kind is not None:
        raise odd_kind_error(path, what, kind)
    if max_bytes is not None and st.st_size > max_bytes:
        raise too_large_error(path, what, st.st_size, max_bytes)


def open_store_file(
    path: Path, what: str, flags: int = os.O_RDONLY, max_bytes: int | None = None, mode: int = 0o644
) -> int:
    """Open a store file as a file descriptor without waiting on a named pipe,
    and only if it is a regular file no larger than `max_bytes`.

    Raises StoreOddFileError for anything else (with words naming `what` and
    `path`), OSError as it came for the rest (missing, permissions...)."""
    try:
        fd = os.open(path, flags | _O_NONBLOCK | _O_CLOEXEC | O_BINARY, mode)
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise odd_kind_error(path, what, "a folder") from exc
        if exc.errno == errno.ENXIO:  # a socket, or a pipe opened for writing with no reader
            try:
                kind = kind_of(os.stat(path).st_mode) or "not a regular file"
            except OSError:
                kind = "not a regular file"
            raise odd_kind_error(path, what, kind) from exc
        raise
    try:
        check_open_file(fd, path, what, max_bytes)
        if _O_NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_store_reader(path: Path, what: str, max_bytes: int | None = None, buffering: int = -1) -> BinaryIO:
    """`open_store_file` for reading, as a binary file object."""
    return open(open_store_file(path, what, os.O_RDONLY, max_bytes), "rb", buffering=buffering)
