"""The facade: the one way the GUI and the CLI reach the data.

Every change goes through `Library`: it becomes store operations, is made
durable, and is then announced to subscribers as a `Change` (plain
callbacks, no Qt), so each view can decide whether it needs to refresh. The
library also owns its undo and redo (`undo`, `redo`, history.py) and its
search index (`open_index`, `search`): callers hold a `Query` and get an
`Answer`, never the index. Bad input raises a typed
error from `core/errors.py` (`InvalidValueError`, `NotFoundError`) and
changes nothing.

The package is the facade and nothing else: its modules may use the
library's private parts, and nothing else in the core imports them.

    facade.py     Library: opening, subscribers, reading and editing papers
    importing.py  files and pasted text become papers (FileReport, ImportBatch)
    searching.py  the search index, owned by the library, and the answers to queries
    lists.py      reading lists
    exporting.py  BibTeX export and citation keys
    history.py    the library's undo and redo (Library.undo, redo): this device's history
    undoing.py    what each action changed, the ops that take it back, its label
    restoring.py  put back exactly what was there (the window's steps when they cannot undo
                  through the library)
    checks.py     what callers hand the facade, and the words of its errors
"""

from __future__ import annotations

from ..changes import Change
from ..query import Answer, Query
from .facade import Library
from .importing import PASTE_LABEL, FileReport
from .merging import Merged, Pair
from .saved import FILTER_KEYS, SavedSearch
from .searching import IndexState, IndexStatus
from .syncing import hold_lock_for_edits
from .watching import stat_key, synced_paths, watched_paths

hold_lock_for_edits(Library)  # edits read and apply under the store's lock (see syncing.EDITS)

__all__ = [
    "FILTER_KEYS",
    "PASTE_LABEL",
    "Answer",
    "Change",
    "FileReport",
    "IndexState",
    "IndexStatus",
    "Library",
    "Merged",
    "Pair",
    "Query",
    "SavedSearch",
    "stat_key",
    "synced_paths",
    "watched_paths",
]
