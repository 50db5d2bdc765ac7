"""Which files Papershelf wrote: an export may replace a file only when Papershelf wrote it and
nobody changed it since.

Every export to a file records the file's SHA-256 under its real path in `exports.json` in the
cache folder (`paths.cache_dir`: one per user, so an export from any library counts). A file may
be replaced when it does not exist, is empty, is no regular file (/dev/null, a pipe), or holds
exactly what Papershelf last wrote there. Anything else (a hand-written .bib, an export edited
since) is replaced only when the person says so: `export --force`, or the window's save dialog,
which asks. A lost record (a cleared cache, another computer) only means asking once more; two
exports finishing at the same moment may each keep only their own line, with the same effect.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from .. import paths

RECORD_NAME = "exports.json"
HEADER = b"% Exported by Papershelf"  # the first line of every .bib export
KEEP = 500  # files remembered, the most recent


class Hashing:
    """The pieces of a text, passed through while their UTF-8 bytes are hashed (an export is
    written as it is rendered; `digest` is the written file's checksum once it is iterated)."""

    def __init__(self, pieces: Iterable[str]) -> None:
        self.pieces = pieces
        self.hash = hashlib.sha256()

    def __iter__(self) -> Iterator[str]:
        for piece in self.pieces:
            self.hash.update(piece.encode("utf-8"))
            yield piece

    @property
    def digest(self) -> str:
        """The hex SHA-256 of what has passed so far."""
        return self.hash.hexdigest()


def _record_path() -> Path:
    return paths.cache_dir() / RECORD_NAME


def _record() -> dict[str, str]:
    try:
        data = orjson.loads(_record_path().read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}  # none yet, or damaged: nothing is known to be ours
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def file_digest(path: Path | str) -> str:
    """The hex SHA-256 of a file's bytes (OSError if it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def remember(path: Path | str, digest: str) -> None:
    """Record that Papershelf just wrote `path` with these bytes. A record that cannot be
    written is let go: the export is done, and the next one over this file will ask."""
    from .fileio import write_bytes_atomically

    target = os.path.realpath(path)
    try:
        if not stat.S_ISREG(os.stat(target).st_mode):
            return  # /dev/null, a pipe: nothing stays there to protect
        record = _record()
        record.pop(target, None)
        record[target] = digest
        kept = dict(list(record.items())[-KEEP:])
        folder = _record_path().parent
        folder.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(_record_path(), orjson.dumps(kept, option=orjson.OPT_INDENT_2))
    except OSError:
        pass


def replace_problem(path: Path | str) -> str:
    """Why replacing `path` would lose something, in words that finish "…: {path} …"; "" when
    it may be replaced (missing, empty, no regular file, or as Papershelf wrote it). A file
    whose mode lets nobody write it (0444) is read-only whoever wrote it: the mode bits are
    looked at, not access(), which says yes to root."""
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except OSError:
        return ""  # not there (or unreachable: the write itself will say why)
    if not stat.S_ISREG(st.st_mode):
        return ""
    if not st.st_mode & 0o222:
        return f"it is read-only (mode {stat.S_IMODE(st.st_mode):04o}: nobody may write it)"
    if st.st_size == 0:
        return ""
    known = _record().get(target)
    try:
        if known is not None and file_digest(target) == known:
            return ""
        with open(target, "rb") as f:
            ours = f.read(len(HEADER)) == HEADER
    except OSError:
        return ""  # unreadable: the write will say what is wrong
    if known is not None:
        return "it was changed since Papershelf wrote it"
    if ours:
        return (
            "it is a Papershelf export, but not one this computer remembers writing there "
            "(an export from elsewhere, or the cache was cleared), so it may hold changes"
        )
    return "Papershelf did not write it"
