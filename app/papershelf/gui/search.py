"""Searching off the GUI thread: the latest request wins.

The window asks for a query (text, filters, sort); one worker thread runs
it against the index (or, while the index is still being opened or built,
against the library's own filters) and hands back the ids in order with
counts. A request made while another runs replaces any waiting one, so fast
typing never queues stale searches.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

if TYPE_CHECKING:
    from ..core.index import SearchIndex

from ..core.errors import SearchIndexDamagedError
from ..core.library import Library
from ..core.paper import Status
from .feedback import Vocabulary, query_words

FLUSH_WAIT_S = 2.0     # a writer batch (0.25 s) and its commit, on a loaded machine

# Columns the list can be sorted by (key of each paper), in display order.
SORT_KEYS = {
    "title": lambda p: p.title.casefold(),
    "authors": lambda p: (p.authors[0].casefold() if p.authors else "\uffff"),
    "area": lambda p: (p.area.casefold() or "\uffff", p.subarea.casefold()),
    "status": lambda p: list(Status).index(p.status),
    "rating": lambda p: p.rating or 0,
    "tags": lambda p: (", ".join(p.tags) or "\uffff"),
    "added": lambda p: p.added,
}


@dataclass(frozen=True)
class Query:
    text: str = ""
    status: str | None = None
    tag: str | None = None
    area: str | None = None
    list_name: str | None = None
    only_ids: frozenset[str] | None = None     # e.g. the papers the last import added
    sort: str = "relevance"          # "relevance" or a SORT_KEYS column
    descending: bool = False

    def with_(self, **changes) -> "Query":
        return replace(self, **changes)


@dataclass
class Answer:
    query: Query
    ids: list[str]
    total: int
    facets: dict[str, dict[str, int]] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    indexed: bool = True              # False: the index was not ready, text was matched on titles only
    fallback: bool = False
    error: str = ""
    terms: set[str] = field(default_factory=set)      # query words as the index holds them, to highlight
    index_damaged: bool = False       # the index failed to read: the window rebuilds it
    suggestion: str = ""              # nothing found: the query with a close word in place of an unknown one


class SearchService(QObject):
    answered = Signal(object)         # an Answer, on the GUI thread

    def __init__(self, library: Library, parent: QObject | None = None):
        super().__init__(parent)
        self.library = library
        self.index: SearchIndex | None = None
        self._pending: Query | None = None
        self._wake = threading.Condition()
        self._closing = False
        self._vocabulary = Vocabulary(library)
        self.wait_for_edits = True        # off while an import keeps the index writer busy
        self._thread = threading.Thread(target=self._loop, name="papershelf-search", daemon=True)
        self._thread.start()
        self._answered_internal.connect(self._deliver)

    _answered_internal = Signal(object)

    def set_index(self, index: SearchIndex | None) -> None:
        self.index = index

    def request(self, query: Query) -> None:
        with self._wake:
            self._pending = query
            self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join(5)

    @Slot(object)
    def _deliver(self, answer: Answer) -> None:
        self.answered.emit(answer)

    def _loop(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._closing:
                    self._wake.wait()
                if self._closing:
                    return
                query, self._pending = self._pending, None
            try:
                answer = self.run(query)
            except Exception as exc:     # shown in the status bar; the list keeps what it had
                answer = Answer(query, [], 0, error=str(exc))
            self._answered_internal.emit(answer)

    def run(self, query: Query) -> Answer:
        """Answer one query (on the calling thread)."""
        started = time.perf_counter()
        index = self.index
        damaged = False
        if index is not None:
            # an edit not yet in the index would be answered from before it (the
            # sidebar already counts it): wait the moment its commit takes
            if self.wait_for_edits:
                index.flush(FLUSH_WAIT_S)
            try:
                res = index.search(query.text, status=query.status, tag=query.tag, area=query.area,
                                   list_name=query.list_name, limit=None, facets=True,
                                   sort="relevance" if query.sort == "relevance" else "added")
            except SearchIndexDamagedError:     # answered from titles until it is rebuilt
                index, damaged = None, True
        if index is not None:
            ids, facets, fallback, indexed = res.ids, res.facets, res.fallback, True
            # papers removed since the index last committed (a delete, an undone import) are not shown
            papers = self.library._store.papers
            ids = [pid for pid in ids if pid in papers]
            terms = index.highlight_terms(query.text) if query.text.strip() else set()
        else:
            ids = [p.id for p in self.library.query(status=query.status, tag=query.tag, area=query.area,
                                                    list_name=query.list_name)]
            words = query.text.casefold().split()
            if words:
                get = self.library._store.papers.get      # a paper deleted meanwhile is just not there
                ids = [pid for pid in ids if (p := get(pid)) is not None and all(w in p.title.casefold() for w in words)]
            facets, fallback, indexed, terms = {}, False, False, set()
        if query.only_ids is not None:
            ids = [pid for pid in ids if pid in query.only_ids]
            facets = self.library.facet_counts(ids)       # the index counted every match
        if query.list_name and not query.text.strip() and query.sort == "relevance":
            wanted = set(ids)                       # a reading list keeps its own order
            ids = [pid for pid in self.library.list_ids(query.list_name) if pid in wanted]
        if query.sort in SORT_KEYS:
            key = SORT_KEYS[query.sort]
            get = self.library._store.papers.get
            papers = {pid: p for pid in ids if (p := get(pid)) is not None}   # read once: edits go on meanwhile
            ids = sorted(papers, key=lambda pid: key(papers[pid]), reverse=query.descending)
        elif query.sort == "relevance" and query.descending:
            ids.reverse()
        suggestion = self.suggest(query.text) if not ids and query.text.strip() else ""
        return Answer(query, ids, len(ids), facets, (time.perf_counter() - started) * 1000, indexed, fallback,
                      terms=terms, index_damaged=damaged, suggestion=suggestion)

    def suggest(self, text: str) -> str:
        """The query with each word the library does not hold replaced by a close one ("" if none)."""
        out, changed = text.strip(), False
        for word in query_words(text):
            close = self._vocabulary.close_word(word)
            if close:
                out = re.sub(rf"\b{re.escape(word)}\b", close, out, count=1)
                changed = True
        return out if changed else ""
