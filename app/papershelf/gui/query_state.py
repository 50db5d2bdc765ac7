"""The query the paper list answers, its latest answer, and the timers that ask for it.

The list pane, the sidebar, the imports and the saved searches share it
(they are given it, not the window). A burst of keys becomes one request,
and edits are searched again once they have had a moment to reach the
index. `answered` says the list shows an answer to the current query;
`idle` says it does and no search is due: what tests and scripts wait on.

A search that finds nothing is answered at once, without the close word it
may offer ("Did you mean …?"): that word comes from a vocabulary of every
title and author, built again after each edit (2 s at 100,000 papers), which
made a keystroke such as the "lan" of "language" the slowest of all. The
word is worked out `SUGGEST_DELAY_MS` after such an answer, if it is still
the one shown, on a worker thread (`suggested`); the window is not idle
until then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from ..core.library import Answer, Query
from .search import SearchService
from .tasks import Task, run_task

SEARCH_DELAY_MS = 10  # a burst of keys (a paste) becomes one request; the search thread keeps only the latest
REFRESH_DELAY_MS = 300  # after edits land in the index, re-run the search once
SUGGEST_DELAY_MS = 300  # typing has paused on a search that finds nothing: look for a close word


class QueryState(QObject):
    """The current query and answer of the list; `run` asks `search` for it."""

    answered = Signal()  # the list now shows the answer to the current query
    idle = Signal()  # ...and no search is due
    suggested = Signal(object, str)  # (the Answer shown, a close query for it) when nothing was found

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
        self._suggest_timer = QTimer(self, singleShot=True, interval=SUGGEST_DELAY_MS)
        self._suggest_timer.timeout.connect(self._suggest)
        self._suggest_for: Answer | None = None
        self._suggesting: Task | None = None

    def run(self) -> None:
        """Ask for the answer to the current query (the list shows it when it arrives)."""
        self._search_timer.stop()
        self._refresh_timer.stop()
        self._suggest_timer.stop()  # a new answer comes: the one that found nothing is no longer shown
        self.asked_at = time.perf_counter()
        self.search.request(self.query)

    def soon(self) -> None:
        """Ask for the answer in a moment (a burst of keys becomes one request)."""
        self._search_timer.start()

    def refresh_soon(self) -> None:
        """Ask again once edits have had a moment to reach the search index."""
        self._refresh_timer.start()

    def due(self) -> bool:
        """A search is waiting to be asked for (typing, or a refresh after edits), or the close
        word for an answer that found nothing."""
        return (
            self._search_timer.isActive()
            or self._refresh_timer.isActive()
            or self._suggest_timer.isActive()
            or (self._suggesting is not None and not self._suggesting.finished)
        )

    def suggest_soon(self, answer: Answer) -> None:
        """`answer` found nothing: in a moment, if it is still shown, look for a close word."""
        self._suggest_for = answer
        self._suggest_timer.start()

    def _suggest(self) -> None:
        answer, search = self._suggest_for, self.search
        if answer is None or answer is not self.last_answer:
            if self.is_idle():
                self.idle.emit()
            return
        if self._suggesting is not None and not self._suggesting.finished:
            self._suggest_timer.start()  # one at a time: the newest when this one ends
            return

        def work(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> str:
            return search.suggestion(answer.query)

        def done(suggestion: Any) -> None:
            if answer is self.last_answer and suggestion:
                self.suggested.emit(answer, str(suggestion))
            if self.is_idle():
                self.idle.emit()

        self._suggesting = run_task(work, parent=self, name="papershelf-suggest", on_done=done, on_error=done)

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
        """Nothing more is asked for (the window closes: no timer may fire after the application;
        a close word being looked for is waited for, before the library closes)."""
        self._search_timer.stop()
        self._refresh_timer.stop()
        self._suggest_timer.stop()
        if self._suggesting is not None:
            self._suggesting.wait(30)
