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
    fulltext.py   the text of attached PDFs read for full-text search (Library.extract_fulltext)
    lists.py      reading lists
    exporting.py  BibTeX export and citation keys
    history.py    the library's undo and redo (Library.undo, redo): this device's history
    undoing.py    what each action changed, the ops that take it back, its label
    restoring.py  put back exactly what was there (the window's steps when they cannot undo
                  through the library)
    checks.py     what callers hand the facade, and the words of its errors
    applying.py   what was found online, applied under one rule (Library.apply_found)

The online door is exported here too (`OnlineSession`, what it gives, and the words the callers
show), so the window and the command line import nothing from core/online; it is imported when
first asked for: a command that never goes online never loads the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..changes import Change
from ..online.records import SERVICE_NAMES, Cancelled, FoundRecord, OnlineError, Proposal
from ..query import Answer, Query
from .applying import FoundApplied
from .attaching import Attached
from .devices import devices as library_devices
from .discovering import Suggestion
from .facade import Library
from .fulltext import Extracted
from .importing import PASTE_LABEL, FileReport
from .merging import Merged, Pair
from .pdf_import import PdfImportReport
from .saved import FILTER_KEYS, SavedSearch
from .searching import IndexState, IndexStatus
from .syncing import hold_lock_for_edits
from .watching import stat_key, synced_paths, watched_paths

hold_lock_for_edits(Library)  # edits read and apply under the store's lock (see syncing.EDITS)

if TYPE_CHECKING:
    from ..online.matching import AUTO_CONFIDENCE
    from ..online.session import Fetched, LookupResult, OnlineSession, PdfFetch, PdfFetches

# what the GUI and the CLI may import (tests/test_code_health.py holds them to this list)
__all__ = [
    "AUTO_CONFIDENCE",
    "FILTER_KEYS",
    "PASTE_LABEL",
    "SERVICE_NAMES",
    "Answer",
    "Attached",
    "Cancelled",
    "Change",
    "Extracted",
    "Fetched",
    "FileReport",
    "FoundApplied",
    "FoundRecord",
    "IndexState",
    "IndexStatus",
    "Library",
    "LookupResult",
    "Merged",
    "OnlineError",
    "OnlineSession",
    "Pair",
    "PdfFetch",
    "PdfFetches",
    "PdfImportReport",
    "Proposal",
    "Query",
    "SavedSearch",
    "Suggestion",
    "library_devices",
    "stat_key",
    "synced_paths",
    "watched_paths",
]

_ONLINE = {
    "OnlineSession": "session",
    "Fetched": "session",
    "LookupResult": "session",
    "PdfFetch": "session",
    "PdfFetches": "session",
    "AUTO_CONFIDENCE": "matching",
}


def __getattr__(name: str) -> Any:
    """The online door's names, imported when first asked for (see the docstring)."""
    if name not in _ONLINE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"..online.{_ONLINE[name]}", __name__), name)
