"""Paper ▸ Get PDF (issue 24): the selected papers' PDFs downloaded on a worker thread and attached.

Asks for the consent every online action asks (`online.with_consent`), then runs one
`OnlineSession.fetch_pdfs` as the window's online task (`OnlineActions.start`: one online task at a
time, cancelled when the window closes) with the status bar's one progress bar and its Cancel
(`TaskProgress`): Cancel abandons the download in flight, and nothing of it is kept. The session
never touches the library; as each PDF arrives, the worker hashes it, reads its pages and copies it
into the library folder (`Library.prepare_attachments`), and the GUI thread writes the record
(`record_attachments`): each attach one undo step (the library's own "Attach …" action, as a
`DoneStep`). The download folder is removed when the batch ends. A status-bar line says what was
done; the papers that got no PDF are listed with the reason in words (a reason several share, once
with their count).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from ..core.errors import PapershelfError
from ..core.paper import Paper
from .commands import DoneStep
from .feedback import n_papers
from .online import tr, with_consent
from .online_lookup import said_once

if TYPE_CHECKING:
    from ..core.library import Attached, PdfFetch, PdfFetches
    from .online import OnlineActions
    from .tasks import Task


def get_pdfs(online: OnlineActions) -> None:
    """Get the PDFs of the selected papers (asking for consent first, if never asked)."""
    ids = online.window.selected_ids()
    if not ids:
        online.say(tr("Select papers first."), 3000)
        return
    if online.window.library.readonly:  # before downloading anything that could not be kept
        online.say(tr("The library was opened read-only: no PDF can be attached."), 6000)
        return
    if online.busy():
        return

    def go() -> None:
        if not online.busy():
            if online.pdf_fetch is not None:
                online.pdf_fetch.deleteLater()
            run = online.pdf_fetch = PdfFetchRun(online, ids)
            run.start()

    with_consent(online.window, go, online.say)


class PdfFetchRun(QObject):
    """One Get PDF batch: the worker's downloads attached as they arrive, then the report."""

    arrived = Signal(object)  # a PdfFetch, emitted on the worker thread: handled on the GUI thread
    waiting = Signal(str)  # the session waits (a rate limit, a Retry-After): shown on the bar
    finished = Signal()  # the batch ended and was reported

    def __init__(self, online: OnlineActions, ids: Iterable[str]) -> None:
        super().__init__(online)
        self.online = online
        self.window = online.window
        lib = self.window.library
        # the worker reads copies: the library may change on the GUI thread meanwhile
        self.papers = [Paper.from_dict(lib.get(pid).to_dict()) for pid in lib.present(ids)]
        self.titles = {p.id: p.title or p.id for p in self.papers}
        self.folder: Path | None = None  # set on the worker, read once it ended
        self.attached = self.already = 0
        self.problems: list[tuple[str, str]] = []  # (title, why), in the batch's order
        self.report = ""
        self.task: Task | None = None  # the online task it runs as
        self.arrived.connect(self._arrived)
        self.waiting.connect(self._show_waiting)

    def start(self) -> None:
        """Show the bar and start the downloads on a worker thread."""
        bar = self.window.task_progress
        bar.busy(tr("Getting PDFs…"))

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> PdfFetches:
            from ..core.library import OnlineSession  # the HTTP client loads here, never on the GUI thread

            self.folder = OnlineSession.incoming_folder()
            with self.online.open_session("", cancelled, self.waiting.emit) as session:
                return session.fetch_pdfs(
                    self.papers, self.folder, progress, lambda one: self.arrived.emit(prepared(one))
                )

        lib = self.window.library

        def prepared(one: PdfFetch) -> tuple[PdfFetch, Attached | str | None]:
            """On the worker: the download hashed, read and copied into the library folder (the
            record is written on the GUI thread), then the download removed."""
            if one.path is None:
                return one, None
            try:
                return one, lib.prepare_attachments(one.paper_id, [one.path], readable=True)
            except PapershelfError as exc:  # deleted meanwhile, a read-only library
                return one, str(exc)
            finally:
                with contextlib.suppress(OSError):
                    one.path.unlink()

        self.task = self.online.start(
            work,
            on_done=self._done,  # type: ignore[arg-type]
            on_error=self._failed,
            on_progress=lambda done, total: bar.step(done, total, tr("Getting PDFs")),
            name="papershelf-get-pdf",
        )

    def _show_waiting(self, text: str) -> None:
        if self.online.running():
            self.window.task_progress.bar.setFormat(text)

    def _arrived(self, arrived: tuple[PdfFetch, Attached | str | None]) -> None:
        """One paper's fetch ended: its PDF (copied into the library folder on the worker)
        recorded as attached (one undo step), or why not kept."""
        one, prepared = arrived
        win = self.window
        if win.closing:
            return
        title = self.titles.get(one.paper_id, one.paper_id)
        if one.path is None or prepared is None:
            self.problems.append((title, one.problem))
            return
        if isinstance(prepared, str):
            self.problems.append((title, tr("The PDF was downloaded but not attached: %s") % prepared))
            return
        lib = win.library
        before = lib.undo_token()
        try:
            report = lib.record_attachments(prepared)
        except PapershelfError as exc:  # deleted meanwhile, a read-only library, a full disk
            self.problems.append((title, tr("The PDF was downloaded but not attached: %s") % exc))
            return
        token = lib.undo_token()
        if token is not None and token is not before:
            win.undo_stack.push(DoneStep(lib, lib.undo_label(), token))
        self.attached += len(report.added)
        self.already += bool(report.already)
        self.problems += [(title, tr("The PDF was downloaded but not attached: %s") % p) for p in report.problems]

    def _end(self) -> None:
        self.window.task_progress.idle()
        if self.folder is not None:
            from ..core.library import OnlineSession

            OnlineSession.remove_folder(self.folder)

    def _failed(self, exc: BaseException) -> None:
        self._end()
        if not self.window.closing:
            self.window.show_error(tr("Get PDF failed"), str(exc))
        self.finished.emit()

    def _done(self, result: PdfFetches) -> None:
        self._end()
        if self.window.closing:
            return
        said = []
        if result.cancelled:
            said.append(tr("Cancelled after %s.") % n_papers(len(result.done)))
        said.append(
            tr("Attached the PDFs of %s.") % n_papers(self.attached) if self.attached else tr("No PDF was attached.")
        )
        if self.already:
            said.append(tr("%s had the same PDF attached already.") % n_papers(self.already))
        if self.problems:
            said.append(tr("%s without a PDF: see why.") % n_papers(len(self.problems)))
        self.report = " ".join(said)
        self.window.statusBar().showMessage(self.report, 10000)
        if self.problems:
            short, _full = said_once(self.problems)
            more = "\n…" if len(short) > 8 else ""
            self.window.show_error(tr("Some PDFs could not be fetched"), "\n".join(short[:8]) + more)
        self.finished.emit()
