"""The index folder: its state file, damage checks, and leftovers.

The index is never the only copy of anything: it can be deleted at any time
and is rebuilt from the library. `papershelf-index.json` records the index
version, the library generation it reflects (only whether to compare: the
documents' digests say what is current, see writer.catch_up), and each
file's size and crc32 as written (Whoosh has none: a file cut short or
overwritten would otherwise only show, if at all, when a search reads it).
A read that fails marks the index damaged there, and the next open
rebuilds it.

Reading every file for its checksum at each open costs a command-line
search most of its time at 100,000 papers (250 MB). So a file whose
checksum was found right is not read again while its stat key (inode,
size, mtime and ctime in ns) is the one it had then: `index.checked.json`
beside the index keeps the keys (`Checked`). No program can write a file
without changing its ctime, so a changed file is read again; what this
leaves unseen is damage below the file system (a disk flipping a bit),
found when a read trips over it (`read_failed` checks every file).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

from whoosh import index as windex
from whoosh import query as wquery

from ..errors import SearchIndexDamagedError, SearchIndexError
from ..fileio import TEMP_MARK, remove_stale_temp_files, write_bytes_atomically
from . import internals
from .schema import INDEX_VERSION

log = logging.getLogger(__name__)

INDEX_DIR = "index"  # its name in the library's folder on this machine (Library.index_folder)
STATE_FILE = "papershelf-index.json"
# Files not checksummed at open: none. Postings and the term table are most
# of the index (~90%) and were left out once to keep open fast, but a zeroed
# range in a term table made queries miss papers without any error (found by
# tests/faults). zlib.crc32 runs at about 1 GB/s and lets go of the GIL, so
# it costs the window nothing (it opens the index on a worker thread).
UNCHECKED_SUFFIXES: tuple[str, ...] = ()


NO_INDEX_YET = "there is no index yet"  # why a first index is built (not a fault to report)
CHECKED_SUFFIX = ".checked.json"  # beside the index folder: the files whose checksums were found right
CHECKED_VERSION = 1
# A file changed less than this before a check is read again at the next one: a write in the
# same tick of the kernel's coarse clock as the check leaves the ctime the check saw (as the
# store's read view, core/store/readview.py)
SETTLE_NS = 200_000_000
COARSE_SETTLE_NS = 2_000_000_000  # a ctime in whole seconds: the file system's clock is coarse
# Windows: os.scandir's stat gives no inode and st_ctime is the creation time, so a stat key
# would not tell a file rewritten in place; every file is checked at each open there, as before
TRUSTS_STAT_KEYS = os.name != "nt"

Key = list[int]  # inode, size, mtime_ns, ctime_ns


class IndexFolder:
    """One index folder: the open Whoosh index (`ix`), its state, its damage."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.ix: Any = None
        self.damaged = ""  # why this object rebuilt the index as damaged ("" if it did not)
        self.damage_mark = ""  # a failed read, kept in the state file until a rebuild

    def close(self) -> None:
        """Close the Whoosh index (searchers are the caller's to close first)."""
        if self.ix is not None:
            self.ix.close()
            self.ix = None

    def damage(self, reason: str) -> str:
        """Record that the index is rebuilt as damaged, for `reason`; returns it."""
        self.damaged = reason
        return reason

    def unwritable(self, exc: OSError) -> SearchIndexError:
        """The error for an index folder that cannot be written."""
        return SearchIndexError(
            f"The search index in {self.folder} could not be built: {exc.strerror or exc}. "
            "Your library is unaffected; searching needs that folder to be writable.",
            self.folder,
        )

    def busy(self) -> SearchIndexError:
        """The error for an index another process is rebuilding."""
        return SearchIndexError(
            f"The search index in {self.folder} is being rebuilt by another Papershelf; "
            "try again when it has finished.",
            self.folder,
        )

    # ---- the state file ------------------------------------------------------
    def read_state(self) -> dict[str, Any]:
        """The state file's contents, {} if it is missing or unreadable."""
        try:
            with open(self.folder / STATE_FILE, encoding="utf-8") as f:
                state = json.load(f)
            return state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            return {}

    def write_state(self, generation: tuple[int, ...] | list[int]) -> None:
        """Record that the index reflects library `generation`."""
        # the files' sizes and checksums as written: Whoosh has none, and a
        # file cut short or overwritten would otherwise only show (if at all)
        # when a search reads it
        sizes = self._file_sizes()
        state: dict[str, Any] = {
            "version": INDEX_VERSION,
            "generation": list(generation),
            "files": sizes,
            "crc32": self._checksums(sizes, self.read_state()),
        }
        if self.damage_mark:
            state["damaged"] = self.damage_mark
        self._store_state(state)

    def forget_state(self) -> None:
        """Remove the state file: the next open rebuilds the index."""
        with contextlib.suppress(OSError):
            (self.folder / STATE_FILE).unlink()

    def mark_damaged(self, detail: str) -> None:
        """Record that reading the index failed: the next open rebuilds it."""
        self.damage_mark = detail
        state = self.read_state()
        state["damaged"] = detail
        self._store_state(state)

    def _store_state(self, state: dict[str, Any]) -> None:
        # durable (fsync, rename, folder fsync) and under a temporary name of its own:
        # the writer thread, a search that found damage and another process may all
        # write the state at once
        write_bytes_atomically(self.folder / STATE_FILE, json.dumps(state).encode("utf-8"))

    def _file_sizes(self) -> dict[str, int]:
        return {name: st.st_size for name, st in self._file_stats().items()}

    def _file_stats(self) -> dict[str, os.stat_result]:
        stats = {}
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name != STATE_FILE and not entry.name.endswith(("LOCK", ".tmp")):
                    try:
                        stats[entry.name] = entry.stat()
                    except OSError:
                        pass
        return stats

    def _checksums(self, sizes: dict[str, int], previous: dict[str, Any]) -> dict[str, int]:
        """crc32 of the files checked at open, taken over from the previous
        state for a file of the same name and size (segment files never
        change), so a commit only reads the files it added."""
        old_sizes, old = previous.get("files"), previous.get("crc32")
        if not isinstance(old_sizes, dict) or not isinstance(old, dict):
            old_sizes, old = {}, {}
        crcs = {}
        for name, size in sizes.items():
            if name.endswith(UNCHECKED_SUFFIXES):
                continue
            if name in old and old_sizes.get(name) == size:
                crcs[name] = old[name]
            else:
                try:
                    crcs[name] = crc32(self.folder / name)
                except OSError:  # deleted meanwhile by another process's merge
                    pass
        return crcs

    # ---- damage ----------------------------------------------------------------
    def damaged_files(self, recorded: Any, crcs: Any, trusted: bool = False) -> list[str]:
        """Files of the current segments whose size or checksum is not what was written.

        Segment files never change once written; a commit by another process
        only adds files and deletes those of segments it merged away, so a
        missing file counts only if the current table of contents still
        lists its segment. `trusted`: a file whose stat key is the one it had
        when its checksum was last found right is not read (`Checked`)."""
        if not isinstance(recorded, dict):
            return []
        crcs = crcs if isinstance(crcs, dict) else {}
        checked = Checked(self.folder) if trusted else None
        now = self._file_stats()
        live: set[str] | None = None

        def changed(name: str) -> bool:
            st = now[name]
            if st.st_size != recorded[name]:
                return True
            if name not in crcs or (checked is not None and checked.vouches(name, st, crcs[name])):
                return False
            try:
                return not _crc_is(self.folder / name, crcs[name], checked)
            except FileNotFoundError:  # merged away meanwhile by another process
                return False

        damaged = []
        for name in recorded:
            if name not in now:
                if live is None:
                    live = internals.live_segment_ids(self.ix)
                if any(sid in name for sid in live):
                    damaged.append(name)
            elif not name.endswith(".toc") and changed(name):
                damaged.append(name)
        # the table of contents in use must be the one written, if it was recorded
        toc = f"_{self.ix.indexname}_{self.ix.latest_generation()}.toc"
        if toc in recorded and (toc not in now or changed(toc)):
            damaged.append(toc)
        if checked is not None and not damaged:
            checked.save()
        return sorted(damaged)

    def why_rebuild(self) -> str:
        """Why the index must be rebuilt before use ("" if it need not); opens it if not."""
        if not self.folder.is_dir() or not any(self.folder.glob("*.toc")):
            return NO_INDEX_YET
        if not (self.folder / STATE_FILE).is_file():
            return "its state file is missing"
        state = self.read_state()
        if not state:
            return self.damage(f"the index could not be read ({STATE_FILE} is damaged)")
        if state.get("damaged"):
            return self.damage(f"the index could not be read (a search failed: {state['damaged']})")
        if state.get("version") != INDEX_VERSION:
            return "the index is from another version of Papershelf"
        reason = ""
        # Whoosh leaves files open when it trips over damage; they are closed
        # (with a ResourceWarning each) when the exception lets go of them
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                self.ix = windex.open_dir(str(self.folder))
                damaged = self.damaged_files(state.get("files"), state.get("crc32"), trusted=True)
                if damaged:
                    raise OSError(f"files changed or went missing since they were written: {', '.join(damaged[:3])}")
                with self.ix.searcher() as s:  # touch every segment: damage shows here
                    s.doc_count()
                    next(iter(s.lexicon("id")), None)
                    s.document_number(id="")
            except Exception as exc:
                # damage Whoosh trips over surfaces as any built-in error
                reason = self.damage(f"the index could not be read ({exc.__class__.__name__}: {exc})")
            if reason:
                self.close()
                gc.collect()
        return reason

    def read_failed(self, exc: Exception) -> SearchIndexError:
        """The error to raise for a read of the index that failed with `exc`.

        Whoosh has no checksums of its own: damage surfaces as any built-in
        exception (ValueError, struct.error, zlib.error, pickle errors...),
        so any failure but a permission or a closed index counts as damage
        and is recorded, and the next open rebuilds. Once this object has
        rebuilt the index as damaged, a failure is only reported: a rebuild
        would not help, and the caller must not loop.
        """
        detail = f"{exc.__class__.__name__}: {exc}"
        if self.ix is None:
            return SearchIndexError(f"The search index in {self.folder} is not open.", self.folder)
        if isinstance(exc, wquery.QueryError):
            return SearchIndexError(f"This search cannot be run ({exc}); try it without quotes.", self.folder)
        state = self.read_state()
        try:
            # every file read (none vouched for by its stat key): a read failed, so something may be
            # damaged below the file system, where no stat key shows it
            intact = bool(state.get("crc32")) and not self.damaged_files(state.get("files"), state.get("crc32"))
        except Exception:
            intact = False
        if intact:
            # every file is as it was written: a rebuild would change nothing
            log.warning("searching failed on an intact index (%s)", detail)
            return SearchIndexError(
                f"Searching failed ({detail}); the search index in {self.folder} is intact, so it was not rebuilt.",
                self.folder,
            )
        if isinstance(exc, PermissionError):
            return SearchIndexError(
                f"The search index in {self.folder} could not be read: {exc.strerror or exc}.", self.folder
            )
        if self.damaged:
            return SearchIndexError(
                f"Searching failed ({detail}), although the search index in {self.folder} was just rebuilt.",
                self.folder,
            )
        log.info("reading the search index failed (%s): marking it damaged", detail)
        try:
            self.mark_damaged(detail)
        except OSError as err:
            return SearchIndexError(
                f"The search index in {self.folder} is damaged ({detail}) and cannot "
                f"be rebuilt there: {err.strerror or err}. Your library is unaffected.",
                self.folder,
            )
        return SearchIndexDamagedError(
            f"The search index in {self.folder} is damaged ({detail}); it is rebuilt when next opened.", self.folder
        )

    # ---- swapping a rebuilt index in ---------------------------------------------
    def swap_in(self, new: Path, generation: tuple[int, ...]) -> None:
        """Put the index built in `new` in place of the current one, and record its state."""
        # whatever is at `index` or `index.old` (a folder, a file) is cache: it goes
        old = self.folder.with_name(self.folder.name + ".old")
        discard(old)
        if os.path.lexists(self.folder):
            os.replace(self.folder, old)
        os.replace(new, self.folder)
        Checked.forget(self.folder)  # of the files let go
        self.damage_mark = ""
        self.write_state(generation)
        discard(old)


class Checked:
    """The index's files whose checksums were found right, by stat key (`index.checked.json`
    beside the index folder, in this machine's state folder; see the module's docstring).

    Only a cache: a file that is missing, damaged or from another version vouches for nothing,
    and a key vouches only for the checksum it was checked against (the state file's now)."""

    def __init__(self, index_folder: Path) -> None:
        self.path = index_folder.with_name(index_folder.name + CHECKED_SUFFIX)
        self.start_ns = time.time_ns()
        self._old = self._read()
        self._new: dict[str, list[int]] = {}

    def _read(self) -> dict[str, list[int]]:
        if not TRUSTS_STAT_KEYS:
            return {}
        try:
            with open(self.path, "rb") as f:
                data = json.loads(f.read(1 << 20))
        except Exception:  # any unreadable record (deep nesting: RecursionError) vouches for nothing
            return {}
        files = data.get("files") if isinstance(data, dict) and data.get("version") == CHECKED_VERSION else None
        return files if isinstance(files, dict) else {}

    def vouches(self, name: str, st: os.stat_result, crc: Any) -> bool:
        """Whether `name`, as `st` says it is now, was found to have checksum `crc` (kept for next time)."""
        entry = [*_key(st), crc]
        if self._old.get(name) != entry:
            return False
        self._new[name] = entry
        return True

    def found_right(self, name: str, before: os.stat_result, after: os.stat_result, crc: int) -> None:
        """`name` was read and had checksum `crc`: vouched for while its key stays, if it did not
        change while it was read and had settled before (see SETTLE_NS)."""
        key = _key(before)
        # a file system that keeps whole seconds (ext4's small inodes, HFS+, FAT, some network
        # mounts) could give a later write the same ctime: such a key must be older by 2 s
        settle = COARSE_SETTLE_NS if key[3] % 1_000_000_000 == 0 else SETTLE_NS
        if TRUSTS_STAT_KEYS and key == _key(after) and key[3] <= self.start_ns - settle:
            self._new[name] = [*key, crc]

    @staticmethod
    def forget(index_folder: Path) -> None:
        """Remove the record (an index swapped in has other files)."""
        with contextlib.suppress(OSError):
            index_folder.with_name(index_folder.name + CHECKED_SUFFIX).unlink()

    def save(self) -> None:
        """Keep what this check found (the files of the index as it is now), if it differs."""
        if self._new == self._old or not TRUSTS_STAT_KEYS:
            return
        data = json.dumps({"version": CHECKED_VERSION, "files": self._new}).encode("utf-8")
        tmp = ""
        try:  # not fsynced: after a crash an empty or missing file vouches for nothing
            # named as the store's temporary files, so that one left by a killed process is swept
            remove_stale_temp_files(self.path.parent)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}{TEMP_MARK}", suffix=".tmp", dir=self.path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:  # a read-only state folder: every file is read at each open, as before
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def _key(st: os.stat_result) -> Key:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _crc_is(path: Path, expected: Any, checked: Checked | None) -> bool:
    """Whether the file's checksum is `expected` (told to `checked` when it is)."""
    with open(path, "rb") as f:
        before = os.fstat(f.fileno())
        crc = 0
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
        after = os.fstat(f.fileno())
    if crc != expected:
        return False
    if checked is not None:
        checked.found_right(path.name, before, after, crc)
    return True


def crc32(path: Path) -> int:
    """The crc32 of a file's contents."""
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def discard(path: Path) -> None:
    """Remove what is at `path`, a folder or a file (index leftovers: cache);
    what cannot be removed is set aside under a unique name, never left to
    block the next rebuild."""
    if path.is_dir() and not path.is_symlink() and _ours(path):
        shutil.rmtree(path, ignore_errors=True)
    # anything else (a user's own file or folder that happens to have the name) is set aside, not deleted
    if os.path.lexists(path):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside, n = path.with_name(f"{path.name}.damaged-{stamp}"), 1
        while os.path.lexists(aside):
            n += 1
            aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
        os.replace(path, aside)


def _ours(folder: Path) -> bool:
    """Whether a folder is (what is left of) a search index: empty, or Whoosh's and our files only."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return all(
        n == STATE_FILE
        or n.startswith((STATE_FILE, "MAIN_", "_MAIN_"))
        or n.endswith((".toc", ".seg", ".pst", ".trm", ".fln", ".col", ".lck", ".tmp", ".json"))
        or n == "WRITELOCK"
        for n in names
    )
