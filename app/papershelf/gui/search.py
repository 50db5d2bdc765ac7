"""Searching off the GUI thread: the latest request wins.

The window asks for a query (text, filters, sort); one worker thread hands
it to `Library.search` (the index, or while the index is still being opened
or built, the library's own filters) and delivers the answer on the GUI
thread. A request made while another runs replaces any waiting one, so fast
typing never queues stale searches.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal, Slot

from ..core.library import Library
from ..core.query import Answer, Query

__all__ = ["Answer", "Query", "SearchService"]  # the window takes the query types from here


class SearchService(QObject):
    """One search thread for the window: `request(query)`, then `answered(Answer)`."""

    answered = Signal(object)  # an Answer, on the GUI thread

    def __init__(self, library: Library, parent: QObject | None = None):
        super().__init__(parent)
        self.library = library
        self._pending: Query | None = None
        self._wake = threading.Condition()
        self._closing = False
        self.wait_for_edits = True  # off while an import keeps the index writer busy
        self._thread = threading.Thread(target=self._loop, name="papershelf-search", daemon=True)
        self._thread.start()
        self._answered_internal.connect(self._deliver)

    _answered_internal = Signal(object)

    def request(self, query: Query) -> None:
        """Answer `query` soon, in place of any request still waiting."""
        with self._wake:
            self._pending = query
            self._wake.notify()

    def close(self) -> None:
        """Stop the search thread (a search under way finishes first)."""
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
            if query is None:  # woken with nothing waiting only to close
                continue
            try:
                answer = self.run(query)
            except Exception as exc:  # shown in the status bar; the list keeps what it had
                answer = Answer(query, [], 0, error=str(exc))
            self._answered_internal.emit(answer)

    def run(self, query: Query) -> Answer:
        """Answer one query (on the calling thread), without the close word a search that finds
        nothing may offer (`suggestion` works it out: the window asks once typing pauses)."""
        answer = self.library.search(query.with_(suggest=False), wait=self.wait_for_edits)
        answer.query = query  # the answer to what was asked
        return answer

    def suggestion(self, query: Query) -> str:
        """A close query when `query` finds nothing ("" if none, or if it finds something now):
        reads every title and author once per library generation (2 s at 100,000 papers), so
        ask on a worker thread (the search thread stays free for the next keystroke)."""
        return self.library.search(query.with_(suggest=True), wait=False).suggestion
