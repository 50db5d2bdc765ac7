"""The window's full-text search of attached PDFs: their text read in the background, with
the window's one progress bar and Cancel ("Reading PDFs: 12 of 300"), once the search index is
open and whenever files are attached; and, for the paper shown, where its PDFs hold the words
searched ("p. 3: …"), worked out off the GUI thread and added under its abstract.

The library does the work (`Library.extract_fulltext`, `Library.pdf_snippet`); this object
decides when, and says how it went.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from ..core.library import Change, Extracted, Library
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .abstract_view import AbstractView
    from .progress import TaskProgress
    from .query_state import QueryState
    from .status_line import StatusLine


class FulltextController(QObject):
    """Reads the library's unread PDFs (`start`), again after files are attached
    (`library_changed`); shows a shown paper's PDF hit in `abstract_view` (`paper_shown`)."""

    finished = Signal(object)  # an Extracted: a reading of the PDFs ended (done or cancelled)
    hitShown = Signal(str)  # a paper's PDF hit was added under its abstract (its id)

    def __init__(
        self,
        library: Library,
        progress: TaskProgress,
        status: StatusLine,
        state: QueryState,
        abstract_view: AbstractView,
        closing: Callable[[], bool],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.library, self.progress, self.status_line, self.state = library, progress, status, state
        self.abstract_view, self.closing = abstract_view, closing
        self.task_parent = parent
        self.task: Task | None = None  # the reading running (or run last)
        self.ready = False  # the index is open: texts read now are indexed at once
        self._again = False  # files were attached while a reading ran: read once more after it
        self._showing = False  # the progress bar shows this task

    # ---- reading the PDFs ----------------------------------------------------------------
    def index_ready(self) -> None:
        """The search index is open: read the PDFs not read yet."""
        self.ready = True
        self.start()

    def library_changed(self, change: Change) -> None:
        """Files attached (a paper's `files` changed, or papers added with files): read them."""
        if not self.ready:
            return  # the index's opening reads them after it
        if change.kind == "papers-changed" and "files" in change.fields:
            self.start()
        elif change.kind == "papers-added" and any(
            (p := self.library.find(pid)) is not None and p.files for pid in change.ids
        ):
            self.start()

    def running(self) -> bool:
        """A reading of the PDFs is under way."""
        return self.task is not None and not self.task.finished

    def start(self) -> None:
        """Read the PDFs not read yet, in the background (once more after a reading under way)."""
        if self.closing() or self.library.readonly:
            return
        if self.running():
            self._again = True
            return
        lib = self.library
        self._again = False
        self._showing = False

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Extracted:
            return lib.extract_fulltext(progress, cancelled)

        self.task = run_task(
            work,
            parent=self.task_parent,
            name="papershelf-read-pdfs",
            on_done=self._done,
            on_error=self._failed,
            on_progress=self._step,
        )

    def cancel(self) -> None:
        """Stop reading (the texts read so far are kept)."""
        if self.task is not None:
            self.task.cancel()

    def _step(self, done: int, total: int) -> None:
        if not total or (self.task is not None and self.task.cancelled()):
            return
        if not self._showing:  # shown only when there is something to read
            self._showing = True
            self.progress.busy(self.tr("Reading PDFs…"))
        self.progress.step(done, total, self.tr("Reading PDFs"))
        self.progress.bar.setFormat(
            self.tr("Reading PDFs: %1 of %2").replace("%1", str(done)).replace("%2", str(total))
        )

    def _done(self, found: Extracted) -> None:
        self.progress.idle()
        if found.found or found.missing:
            self.status_line.say(found.summary(), 10000)
        if found.papers:
            self.state.refresh_soon()  # the texts are being indexed: the list follows the commit
        self.finished.emit(found)
        if self._again and not found.cancelled:
            self.start()

    def _failed(self, exc: BaseException) -> None:
        self.progress.idle()
        self.status_line.error(self.tr("The PDFs could not be read for search"), str(exc))
        self.finished.emit(None)

    # ---- the paper shown -----------------------------------------------------------------
    def paper_shown(self, paper_id: str) -> None:
        """A paper is shown: if the search's words are in its PDFs, add where (with the page)."""
        answer = self.state.last_answer
        if not paper_id or answer is None or not answer.indexed or not answer.query.text.strip():
            return
        paper = self.library.find(paper_id)
        if paper is None or not paper.files:
            return
        lib, text, view = self.library, answer.query.text, self.abstract_view

        def work(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> str:
            return lib.pdf_snippet(paper_id, text)

        def done(snippet: Any) -> None:
            if snippet and not self.closing() and view.show_pdf_hit(paper_id, str(snippet)):
                self.hitShown.emit(paper_id)

        run_task(work, parent=self.task_parent, name="papershelf-pdf-snippet", on_done=done)
