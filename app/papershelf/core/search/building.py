"""Searching a rebuild while it runs: what it has made searchable so far.

A rebuild (`rebuild.py`) lists each batch of finished segments in a new table
of contents of `index.new`; `BuildView` searches the newest one, whichever
process builds it, and says how many of how many papers it holds. Only while
a rebuild holds its lock: an `index.new` left by a rebuild that was killed is
never read (the next rebuild discards it). An answer from here is partial by
construction; the caller says so and never keeps it as the answer.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import SearchIndexError
from ..fileio import try_lock, unlock
from .index import Results, SearchIndex
from .rebuild import BUILD_FILE, build_path, lock_path
from .source import PaperSource
from .state import IndexFolder

_TOC = re.compile(r"^_MAIN_([0-9]+)\.toc$")


def rebuilding(folder: Path) -> bool:
    """Whether a rebuild of the index in `folder` runs now (in this process or another)."""
    try:
        lock = try_lock(lock_path(folder))
    except OSError:
        return False
    if lock is None:
        return True
    unlock(lock)
    return False


def build_progress(new: Path) -> tuple[int, int] | None:
    """(papers searchable so far, papers in all) of the rebuild writing `new`; None if it says none."""
    try:
        total = int(json.loads((new / BUILD_FILE).read_text(encoding="utf-8"))["papers"])
        from whoosh.index import TOC

        from .schema import make_schema

        gen = _latest(new)
        if gen <= 0:  # generation 0 is the empty index the rebuild starts from
            return (0, total)
        from whoosh.filedb.filestore import FileStorage

        toc = TOC.read(FileStorage(str(new)), "MAIN", gen, schema=make_schema())
        return (sum(seg.doc_count() for seg in toc.segments), total)
    except Exception:  # not started, finished meanwhile, or not ours: nothing to say
        return None


def _latest(new: Path) -> int:
    try:
        names = [m.group(1) for name in new.iterdir() if (m := _TOC.match(name.name))]
    except OSError:
        return -1
    return max((int(g) for g in names), default=-1)


class _Building(IndexFolder):
    """`index.new` read as it is built: a failed read is no damage to record (nothing is trusted here)."""

    def read_failed(self, exc: Exception) -> SearchIndexError:
        return SearchIndexError(f"The index being built could not be read ({exc.__class__.__name__}).", self.folder)


class BuildView:
    """Searches over what a rebuild of `source`'s index has made searchable so far."""

    def __init__(self, source: PaperSource, folder: Path | None = None) -> None:
        self.source = source
        self.folder = Path(folder) if folder else source.index_folder
        self._lock = threading.Lock()
        self._index: SearchIndex | None = None
        self._generation = -1

    def search(self, **kwargs: Any) -> tuple[Results, int, int] | None:
        """`SearchIndex.search(**kwargs)` over the papers indexed so far, with how many those are and how
        many the rebuild indexes in all; None when no rebuild runs or it has nothing searchable yet."""
        with self._lock:
            new = build_path(self.folder)
            try:
                if not rebuilding(self.folder):
                    self._close()
                    return None
                gen = _latest(new)
                total = int(json.loads((new / BUILD_FILE).read_text(encoding="utf-8"))["papers"])
                if gen <= 0:
                    return None
                index = self._open(new, gen)
                done = index.doc_count()
                return index.search(**kwargs), done, total
            except Exception:  # swapped in or discarded meanwhile, or unreadable: no answer from here
                self._close()
                return None

    def _open(self, new: Path, gen: int) -> SearchIndex:
        from whoosh import index as windex

        from . import internals

        if self._index is not None and gen != self._generation:
            self._index._drop_searcher()  # the next search reads the newest table of contents
        if self._index is None:
            index = SearchIndex(self.source, new, folder_kind=_Building)
            index._index.ix = windex.open_dir(str(new), schema=index.schema)
            internals.start_probe()
            self._index = index
        self._generation = gen
        return self._index

    def close(self) -> None:
        """Let go of `index.new` (before it is swapped in, or when the rebuild ended)."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._index is not None:
            self._index._close_ix()
            self._index = None
            self._generation = -1
