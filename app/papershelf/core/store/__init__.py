"""The JSON reading-list store: the one source of truth on disk.

Layout of a library folder::

    library.jsonl      snapshot: a header line, one line per paper, one per
                       reading list, and an end line with the counts
    journal.jsonl      edits since the snapshot, one checksummed line each
    journal.last       the generation and number of the last durable edit
    library.lock       held (flock) by the one process that may write
    library.readlock   held by readers against a compaction's swap
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

The package, by job:

    format.py     the folder's file names; sealed lines; reading, writing and
                  salvaging a library file
    journal.py    `Op` and its codec, journal lines, replay, `JournalSalvage`
    locks.py      the writer lock and the readers' swap lock (on `fileio`'s
                  locking calls); the error for a failed write
    backups.py    making, listing and rotating backups; the latest good one
    recovery.py   `recover`: a damaged library file and journal mended
    store.py      `Store`: open, close, apply, compact

Tunables read at run time live in the module that reads them and are not
repeated here, so that setting one on the package fails instead of doing
nothing: `JOURNAL_COMPACT_BYTES`, `BULK_BYTES` and `BULK_PAPERS` in
`papershelf.core.store.store`, `SWAP_WAIT_SECONDS` in `.locks`,
`KEEP_RECENT_BACKUPS` and `KEEP_DAILY_BACKUPS` in `.backups`.
"""

from __future__ import annotations

from ..errors import (
    ReadOnlyLibraryError,
    StoreCorruptError,
    StoreLockedError,
    StoreUnreadableError,
    StoreVersionError,
    StoreWriteError,
)
from .backups import latest_good_backup
from .format import (
    BACKUPS,
    FORMAT_NAME,
    JOURNAL,
    LOCK,
    MARK,
    MIGRATIONS,
    READ_LOCK,
    SCHEMA_VERSION,
    SNAPSHOT,
    TEMP_SUFFIXES,
    SnapshotSalvage,
    gc_paused,
    now_iso,
    read_snapshot,
    salvage_snapshot,
    seal,
    unseal,
    write_snapshot,
)
from .journal import JournalSalvage, Op, journal_line
from .merge import Conflict
from .shared import SharedStore, layout_of, open_store
from .store import Store

# the names the single module had for these (tests use them)
_seal = seal
_unseal = unseal
_journal_line = journal_line

__all__ = [
    "BACKUPS",
    "FORMAT_NAME",
    "JOURNAL",
    "LOCK",
    "MARK",
    "MIGRATIONS",
    "READ_LOCK",
    "SCHEMA_VERSION",
    "SNAPSHOT",
    "TEMP_SUFFIXES",
    "Conflict",
    "JournalSalvage",
    "Op",
    "ReadOnlyLibraryError",
    "SharedStore",
    "SnapshotSalvage",
    "Store",
    "StoreCorruptError",
    "StoreLockedError",
    "StoreUnreadableError",
    "StoreVersionError",
    "StoreWriteError",
    "gc_paused",
    "journal_line",
    "latest_good_backup",
    "layout_of",
    "now_iso",
    "open_store",
    "read_snapshot",
    "salvage_snapshot",
    "seal",
    "unseal",
    "write_snapshot",
]
