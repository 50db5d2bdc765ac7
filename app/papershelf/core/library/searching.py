"""The library's search index, kept by the facade, and the answers to queries.

`Library` owns one `IndexKeeper`: it opens (or rebuilds) the index in
`Library.index_folder` (this machine's, never the library folder), says
what state it is in, and answers a `Query` from it, or from the library's
own filters and titles while it is not ready or found damaged. The window
and the command line ask `Library`; neither holds the index itself.

The search package loads Whoosh and numpy (most of a second), so it is
imported on first use, here and nowhere else in the core (`_new_index`): a
window shows its list before it, and a command that does not search never
pays for it.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..biblio.sorting import SORT_KEYS
from ..errors import InvalidValueError, SearchIndexDamagedError, SearchIndexError
from ..query import INDEX_SORTS, RELEVANCE, Answer, Query, Vocabulary, sort_ids, title_matches
from .checks import status_arg

if TYPE_CHECKING:  # the search package loads Whoosh and numpy: imported only when an index opens
    from ..paper import Paper
    from ..search import SearchIndex
    from ..search.building import BuildView
    from .facade import Library

FLUSH_WAIT_S = 2.0  # a writer batch (0.25 s) and its commit, on a loaded machine

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


def _new_index(library: Library) -> SearchIndex:
    """A search index object for the library's folder (not yet opened).

    The one place the core names the search package; imported here, on
    first use, to keep Whoosh and numpy out of start-up."""
    from ..search import SearchIndex

    return SearchIndex(library)


@dataclass(slots=True)
class _Hits:
    """What a search found before the query's own narrowing and order."""

    ids: list[str]
    facets: dict[str, dict[str, int]] = field(default_factory=dict)
    indexed: bool = False  # False: matched on titles, the index not being ready
    fallback: bool = False
    terms: set[str] = field(default_factory=set)
    scores: dict[str, float] = field(default_factory=dict)
    total: int | None = None  # every match, when the index was asked for the first `limit` only
    fulltext_only: frozenset[str] = frozenset()
    building: tuple[int, int] | None = None  # from a rebuild under way: (papers indexed so far, in all)


class IndexState(str, enum.Enum):
    """Where the library's search index stands."""

    CLOSED = "closed"  # not opened (or closed, or its opening was cancelled or failed)
    OPENING = "opening"  # being opened, caught up or rebuilt
    READY = "ready"  # searches use it
    DAMAGED = "damaged"  # a search found it damaged: opening it again rebuilds it


@dataclass(frozen=True)
class IndexStatus:
    """The index's state and what the window or the command line says about it."""

    state: IndexState
    rebuilt_because: str = ""  # why opening rebuilt it ("" if it did not)
    damaged: str = ""  # why opening found it damaged and rebuilt it ("" if it did not)
    stale: bool = False  # another Papershelf is writing it, or a read-only copy is older: searches read it as is
    error: str = ""  # why the last opening failed ("" if it did not)
    folder: Path | None = field(default=None, compare=False)

    @property
    def ready(self) -> bool:
        """Searches use the index."""
        return self.state is IndexState.READY

    @property
    def first_build(self) -> bool:
        """Opening built the library's first index: nothing was wrong with one."""
        from ..search.state import NO_INDEX_YET  # loaded already: an index was opened

        return self.rebuilt_because == NO_INDEX_YET


class IndexKeeper:
    """Owns the search index of one library (see the module's docstring).

    Safe to use from several threads: the window opens the index on a worker
    and searches on another while the GUI thread edits.
    """

    def __init__(self, library: Library):
        self._library = library
        self._lock = threading.Lock()
        self._index: SearchIndex | None = None
        self._state = IndexState.CLOSED
        self._error = ""
        self._epoch = 0  # moves on at every close: an opening that began before it is dropped
        self._shut = False  # the library is closed: nothing opens any more
        self._listeners: list[Callable[[], None]] = []
        self._vocabulary = Vocabulary(library)
        self._view: BuildView | None = None  # searches a rebuild under way while the index opens

    # ---- opening and closing ------------------------------------------------
    def open(self, progress: Progress | None = None, cancelled: Cancelled | None = None, rebuild: bool = False) -> bool:
        """See `Library.open_index`."""
        self.close()
        with self._lock:
            if self._shut:
                return False
            epoch = self._epoch
            self._state, self._error = IndexState.OPENING, ""
        ix = _new_index(self._library)
        # a rebuild's batches, searchable as they land, are news to the window as edits are
        ix.committed.append(self._relay_committed)
        ix.swapping = self._close_view
        try:
            if rebuild and not ix.rebuild(progress, cancelled):
                self._opening_ended(epoch, IndexState.CLOSED)
                return False
            if ix.open(progress, cancelled).cancelled:
                ix.close()
                self._opening_ended(epoch, IndexState.CLOSED)
                return False
        except BaseException as exc:
            ix.close()
            self._opening_ended(epoch, IndexState.CLOSED, str(exc))
            raise
        finally:
            self._close_view()
        with self._lock:
            adopted = epoch == self._epoch and not self._shut
            if adopted:
                self._index, self._state = ix, IndexState.READY
        self._close_view()  # one a search opened meanwhile
        if not adopted:  # closed while it was opening
            ix.committed.remove(self._relay_committed)
            ix.close()
        return adopted

    def _opening_ended(self, epoch: int, state: IndexState, error: str = "") -> None:
        with self._lock:
            if epoch == self._epoch:
                self._state, self._error = state, error

    def reindex(self, progress: Progress | None = None, cancelled: Cancelled | None = None) -> bool:
        """See `Library.reindex`."""
        with self._lock:
            was_open = self._state in (IndexState.READY, IndexState.DAMAGED)
        if was_open:
            return self.open(progress, cancelled, rebuild=True)
        self.close()
        ix = _new_index(self._library)
        try:
            return ix.rebuild(progress, cancelled)
        finally:
            ix.close()

    def close(self, shut: bool = False) -> None:
        """Close the index (searches then match titles); `shut`: for good, with the library."""
        with self._lock:
            ix, self._index = self._index, None
            self._epoch += 1
            self._state = IndexState.CLOSED
            self._shut = self._shut or shut
        if ix is not None:
            if self._relay_committed in ix.committed:
                ix.committed.remove(self._relay_committed)
            ix.close()
        self._close_view()

    def _close_view(self) -> None:
        with self._lock:
            view, self._view = self._view, None
        if view is not None:
            view.close()

    @property
    def status(self) -> IndexStatus:
        """See `Library.index_status`."""
        with self._lock:
            ix, state, error = self._index, self._state, self._error
        if ix is None:
            return IndexStatus(state, error=error)
        return IndexStatus(state, ix.rebuilt_because, ix.damaged, ix.stale, error, ix.folder)

    def _ready(self) -> SearchIndex | None:
        with self._lock:
            return self._index if self._state is IndexState.READY else None

    # ---- being told when edits are searchable --------------------------------
    def on_committed(self, callback: Callable[[], None]) -> Callable[[], None]:
        """See `Library.on_index_committed`."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _relay_committed(self) -> None:
        for callback in list(self._listeners):
            callback()

    # ---- searching -------------------------------------------------------------
    def search(self, query: Query, wait: bool = True) -> Answer:
        """See `Library.search`."""
        started = time.perf_counter()
        _check_query(query)
        lib = self._library
        papers = lib._papers
        index = self._ready()
        with self._lock:
            damaged = self._state is IndexState.DAMAGED
            opening = self._state is IndexState.OPENING
        hits = self._from_index(index, query, wait, papers) if index is not None else None
        if hits is None and opening and query.text.strip():  # a query with no words: the library answers whole
            hits = self._from_build(query, papers)
        if hits is None:
            damaged = damaged or index is not None  # answered from titles until it is rebuilt
            hits = self._from_titles(query, papers)
        ids, facets = hits.ids, hits.facets
        if query.only_ids is not None:
            ids = [pid for pid in ids if pid in query.only_ids]
            facets = lib.facet_counts(ids) if query.facets else {}  # the index counted every match
        ids = self._ordered(ids, query, hits.indexed, papers)
        total = hits.total if hits.total is not None else len(ids)
        if query.limit is not None:
            ids = ids[: query.limit]
        offer = query.suggest and not ids and query.text.strip() and hits.building is None  # not found *yet*
        suggestion = self._vocabulary.suggest(query.text) if offer else ""
        return Answer(
            query,
            ids,
            total,
            facets,
            (time.perf_counter() - started) * 1000,
            hits.indexed,
            hits.fallback,
            terms=hits.terms,
            index_damaged=damaged,
            suggestion=suggestion,
            scores=hits.scores,
            fulltext_only=hits.fulltext_only & frozenset(ids),
            building=hits.building,
        )

    def _from_index(self, index: SearchIndex, query: Query, wait: bool, papers: Mapping[str, Paper]) -> _Hits | None:
        """What the index finds (None: it was found damaged)."""
        # an edit not yet in the index would be answered from before it (the
        # sidebar already counts it): wait the moment its commit takes
        if wait:
            index.flush(FLUSH_WAIT_S)
        limit = None
        if query.index_order:
            sort, limit = query.sort, (query.limit if query.only_ids is None else None)
        else:
            sort = RELEVANCE if query.sort == RELEVANCE else "added"
        try:
            res = index.search(
                query.text,
                status=query.status,
                tag=query.tag,
                area=query.area,
                list_name=query.list_name,
                limit=limit,
                facets=query.facets,
                sort=sort,
            )
        except SearchIndexDamagedError:
            self._found_damaged(index)
            return None
        # papers removed since the index last committed (a delete, an undone import) are not shown
        ids = [pid for pid in res.ids if pid in papers]
        terms = index.highlight_terms(query.text) if query.highlight and query.text.strip() else set()
        total = res.total if limit is not None else None
        return _Hits(ids, res.facets, True, res.fallback, terms, res.scores, total, frozenset(res.fulltext_only))

    def _from_build(self, query: Query, papers: Mapping[str, Paper]) -> _Hits | None:
        """What a rebuild under way has indexed so far finds (None: nothing searchable yet). Partial:
        no facets (the sidebar counts the papers shown, from the library)."""
        from ..search.building import BuildView

        with self._lock:
            if self._state is not IndexState.OPENING or self._shut:
                return None
            view = self._view = self._view or BuildView(self._library)
        found = view.search(
            text=query.text,
            status=query.status,
            tag=query.tag,
            area=query.area,
            list_name=query.list_name,
            limit=None,
            facets=False,
            sort=query.sort if query.index_order else (RELEVANCE if query.sort == RELEVANCE else "added"),
        )
        if found is None:
            return None
        res, done, total = found
        ids = [pid for pid in res.ids if pid in papers]
        return _Hits(ids, {}, True, res.fallback, set(), res.scores, None, frozenset(res.fulltext_only), (done, total))

    def _from_titles(self, query: Query, papers: Mapping[str, Paper]) -> _Hits:
        """The library's own filters, and the query's words in titles (no index)."""
        lib = self._library
        ids = [p.id for p in lib.query(status=query.status, tag=query.tag, area=query.area, list_name=query.list_name)]
        return _Hits(title_matches(ids, papers.get, query.text))

    def _ordered(self, ids: list[str], query: Query, indexed: bool, papers: Mapping[str, Paper]) -> list[str]:
        """The ids in the order the query asks (the index's own orders come sorted from it)."""
        lib = self._library
        if not query.index_order:
            if query.list_name and not query.text.strip() and query.sort == RELEVANCE:
                wanted = set(ids)  # a reading list keeps its own order
                ids = [pid for pid in lib.list_ids(query.list_name) if pid in wanted]
            if query.sort in SORT_KEYS:
                ids = sort_ids(ids, papers.get, query.sort, query.descending)
            elif query.sort == RELEVANCE and query.descending:
                ids.reverse()
        elif not indexed and query.sort != RELEVANCE:  # the index's orders, from the papers meanwhile
            ids = sort_ids(ids, papers.get, query.sort, descending=query.sort == "added")
        return ids

    def _found_damaged(self, index: SearchIndex) -> None:
        with self._lock:
            if self._index is index and self._state is IndexState.READY:
                self._state = IndexState.DAMAGED

    def snippets(self, ids: Iterable[str], text: str, top: int = 2) -> dict[str, str]:
        """See `Library.snippets`."""
        index = self._ready()
        return index.snippets(ids, text, top=top) if index is not None else {}

    def pdf_snippet(self, paper_id: str, text: str) -> str:
        """See `Library.pdf_snippet`."""
        index = self._ready()
        return index.pdf_snippet(paper_id, text) if index is not None and text.strip() else ""

    def texts_extracted(self, ids: Iterable[str]) -> bool:
        """These papers' PDFs' texts were extracted: an open index writes them again (True);
        a closed one finds them when it next opens (False)."""
        index = self._ready()
        if index is None:
            return False
        index.update(ids)
        return True

    def highlight_terms(self, text: str) -> set[str]:
        """See `Library.highlight_terms`."""
        index = self._ready()
        return index.highlight_terms(text) if index is not None and text.strip() else set()

    @property
    def normal(self) -> Callable[[str], str] | None:
        """See `Library.index_normal`."""
        with self._lock:
            index = self._index
        return index.normal if index is not None else None

    def more_like(self, paper_id: str, limit: int = 10) -> list[str]:
        """See `Library.more_like`."""
        self._library.get(paper_id)  # NotFoundError for an unknown id, index or not
        index = self._ready()
        if index is None:
            raise SearchIndexError(
                "Papers like this one are found by the search index, which is not open yet; try again when it is.",
                self._library.folder,
            )
        return index.more_like(paper_id, limit)


def _check_query(query: Query) -> None:
    """InvalidValueError for what no search can take (the index would raise a bare ValueError)."""
    if query.status is not None:
        status_arg(query.status)
    known = INDEX_SORTS if query.index_order else (RELEVANCE, *SORT_KEYS)
    if query.sort not in known:
        raise InvalidValueError(f"unknown order {query.sort!r}; use one of: {', '.join(known)}")
    if query.limit is not None and (type(query.limit) is not int or query.limit < 1):
        raise InvalidValueError(f"a limit is a number of papers, 1 or more, not {query.limit!r}")
