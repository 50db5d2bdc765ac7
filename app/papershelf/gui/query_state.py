"""The query the paper list answers, its latest answer, and the timers that ask for it.

The list pane, the sidebar, the imports and the saved searches share it
(they are given it, not the window). A burst of keys becomes one request,
and edits are searched again once they have had a moment to reach the
index. `answered` says the list shows an answer to the current query;
`idle` says it does and no search is due: what tests and scripts wait on.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from ..core.library import Answer, Query
from .search import SearchService

SEARCH_DELAY_MS = 10  # a burst of keys (a paste) becomes one request; the search thread keeps only the latest
REFRESH_DELAY_MS = 300  # after edits land in the index, re-run the search once


class QueryState(QObject):
    """The current query and answer of the list; `run` asks `search` for it."""

    answered = Signal()  # the list now shows the answer to the current query
    idle = Signal()  # ...and no search is due

    def __init__(self, search: SearchService, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.search = search
        self.query = Query()
        self.last_answer: Answer | None = None
        self.asked_at = 0.0  # when the answer on its way was asked for (perf_counter)
        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.run)
        self._refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(self.run)

    def run(self) -> None:
        """Ask for the answer to the current query (the list shows it when it arrives)."""
        self._search_timer.stop()
        self._refresh_timer.stop()
        self.asked_at = time.perf_counter()
        self.search.request(self.query)

    def soon(self) -> None:
        """Ask for the answer in a moment (a burst of keys becomes one request)."""
        self._search_timer.start()

    def refresh_soon(self) -> None:
        """Ask again once edits have had a moment to reach the search index."""
        self._refresh_timer.start()

    def due(self) -> bool:
        """A search is waiting to be asked for (typing, or a refresh after edits)."""
        return self._search_timer.isActive() or self._refresh_timer.isActive()

    def is_idle(self) -> bool:
        """The list shows the answer to the current query and no search is due."""
        answer = self.last_answer
        return answer is not None and answer.query == self.query and not self.due()

    def shown(self) -> None:
        """The list shows `last_answer` (to the current query): say so (unless the search
        failed), and that all is idle if it is."""
        if self.last_answer is not None and not self.last_answer.error:
            self.answered.emit()
        if self.is_idle():
            self.idle.emit()

    def stop(self) -> None:
        """Nothing more is asked for (the window closes: no timer may fire after the application)."""
        self._search_timer.stop()
        self._refresh_timer.stop()
