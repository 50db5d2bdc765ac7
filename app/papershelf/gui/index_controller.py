"""The window's search index: opened (or built) in the background with
progress, reopened when a search finds it damaged, closed with the window.

The library owns the index (`Library.open_index`); this object decides when
the window opens it, says how that went, and re-runs the search when edits
made elsewhere (another window, an import) become searchable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from .tasks import Task, run_task

if TYPE_CHECKING:  # the index module (Whoosh, numpy) loads on the worker that opens it
    from ..core.library import IndexStatus
    from .main_window import MainWindow


class IndexController(QObject):
    """Opens `window`'s search index and keeps its answers following the index's commits."""

    _committed = Signal()  # from the index writer thread

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.task: Task | None = None  # the opening running (or run last)
        self.taken = False  # the library's index is open and this window uses it (see `status`)
        self._unwatch: Callable[[], None] | None = None  # stops the index's commits calling back
        self._committed.connect(self._after_commit)

    @property
    def status(self) -> IndexStatus | None:
        """The search index's state once this window has taken the opened index
        up (None before that, while it is opened again, and after closing)."""
        return self.window.library.index_status if self.taken else None

    def open(self, rebuild: bool = False) -> None:
        """Open (or build) the search index in the background."""
        if self.task is not None and not self.task.finished:
            return
        win, lib = self.window, self.window.library
        if self.taken:
            self.taken = False
            lib.close_index()  # searches match titles until it is open again

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> bool:
            return lib.open_index(progress, cancelled, rebuild=rebuild)

        win.task_progress.busy(self.tr("Opening the search index…"))
        self.task = run_task(
            work,
            parent=win,
            name="papershelf-index-open",
            on_done=self._opened,
            on_error=self._failed,
            on_progress=lambda n, total: win.task_progress.step(n, total, self.tr("Indexing")),
        )

    def reopen_if_damaged(self, damaged: bool) -> None:
        """A search found the index damaged: opening it again rebuilds it, with
        progress (once: see SearchIndex.damaged)."""
        if damaged and self.status is not None:
            self.open()

    def _opened(self, opened: bool) -> None:
        win = self.window
        win.task_progress.idle()
        if not opened:
            win.statusBar().showMessage(self.tr("Indexing cancelled; searching titles only."), 5000)
            return
        if win.closing:
            win.library.close_index()
            return
        self.taken = True
        if self._unwatch is None:
            self._unwatch = win.library.on_index_committed(self._committed_elsewhere)
        rebuilt_because = win.library.index_status.rebuilt_because
        if win.library.index_status.first_build:  # nothing was wrong: nothing to explain
            win.statusBar().showMessage(self.tr("Full-text search is ready."), 8000)
        elif rebuilt_because:
            win.statusBar().showMessage(self.tr("Search index rebuilt: %s.") % rebuilt_because, 8000)
        win.run_search()
        win.indexReady.emit()

    def _failed(self, exc: BaseException) -> None:
        self.window.task_progress.idle()
        self.window.show_error(self.tr("Search is limited to titles"), str(exc))

    def _committed_elsewhere(self) -> None:
        # called on the index writer thread: hop to the GUI thread
        self._committed.emit()

    @Slot()
    def _after_commit(self) -> None:
        self.window.refresh_soon()

    def stop(self) -> None:
        """The window closes: the index's writer thread stops calling back."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    def close(self) -> None:
        """Close the search index (after the search thread has stopped)."""
        self.taken = False
        self.window.library.close_index()
