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

from ..core.library import Library
from .tasks import Task, run_task

if TYPE_CHECKING:  # the index module (Whoosh, numpy) loads on the worker that opens it
    from ..core.library import IndexStatus
    from .progress import TaskProgress
    from .query_state import QueryState
    from .status_line import StatusLine


class IndexController(QObject):
    """Opens `library`'s search index (with `progress`) and keeps the list's answers (`state`)
    following the index's commits; `closing()`: the window closes (an index opened then is closed)."""

    ready = Signal()  # the index is open and this window uses it
    _committed = Signal()  # from the index writer thread

    def __init__(
        self,
        library: Library,
        progress: TaskProgress,
        status: StatusLine,
        state: QueryState,
        closing: Callable[[], bool],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.library, self.progress, self.status_line, self.state, self.closing = (
            library,
            progress,
            status,
            state,
            closing,
        )
        self.task_parent = parent
        self.task: Task | None = None  # the opening running (or run last)
        self.taken = False  # the library's index is open and this window uses it (see `status`)
        self._unwatch: Callable[[], None] | None = None  # stops the index's commits calling back
        self._committed.connect(self._after_commit)

    @property
    def status(self) -> IndexStatus | None:
        """The search index's state once this window has taken the opened index
        up (None before that, while it is opened again, and after closing)."""
        return self.library.index_status if self.taken else None

    def open(self, rebuild: bool = False) -> None:
        """Open (or build) the search index in the background."""
        if self.task is not None and not self.task.finished:
            return
        lib, progress = self.library, self.progress
        if self.taken:
            self.taken = False
            lib.close_index()  # searches match titles until it is open again

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> bool:
            return lib.open_index(progress, cancelled, rebuild=rebuild)

        if self._unwatch is None:  # a rebuild's batches become searchable as it goes: the list asks again
            self._unwatch = lib.on_index_committed(self._committed_elsewhere)
        progress.busy(self.tr("Opening the search index…"))
        self.task = run_task(
            work,
            parent=self.task_parent,
            name="papershelf-index-open",
            on_done=self._opened,
            on_error=self._failed,
            on_progress=lambda n, total: progress.step(n, total, self.tr("Indexing")),
        )

    def reopen_if_damaged(self, damaged: bool) -> None:
        """A search found the index damaged: opening it again rebuilds it, with
        progress (once: see SearchIndex.damaged)."""
        if damaged and self.status is not None:
            self.open()

    def _opened(self, opened: bool) -> None:
        lib = self.library
        self.progress.idle()
        if not opened:
            self.status_line.say(self.tr("Indexing cancelled; searching titles only."), 5000)
            return
        if self.closing():
            lib.close_index()
            return
        self.taken = True
        rebuilt_because = lib.index_status.rebuilt_because
        if lib.index_status.first_build:  # nothing was wrong: nothing to explain
            self.status_line.say(self.tr("Full-text search is ready."), 8000)
        elif rebuilt_because:
            self.status_line.say(self.tr("Search index rebuilt: %s.") % rebuilt_because, 8000)
        self.state.run()
        self.ready.emit()

    def _failed(self, exc: BaseException) -> None:
        self.progress.idle()
        self.status_line.error(self.tr("Search is limited to titles"), str(exc))

    def _committed_elsewhere(self) -> None:
        # called on the index writer thread: hop to the GUI thread
        self._committed.emit()

    @Slot()
    def _after_commit(self) -> None:
        self.state.refresh_soon()

    def stop(self) -> None:
        """The window closes: the index's writer thread stops calling back."""
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    def close(self) -> None:
        """Close the search index (after the search thread has stopped)."""
        self.taken = False
        self.library.close_index()
