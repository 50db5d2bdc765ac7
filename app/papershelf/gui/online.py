"""Online look-ups from the window: consent, the contact e-mail, Add by Identifier.

Nothing about the user's papers leaves the machine until they say yes: the
first online action asks once (`with_consent`), and the answer is kept in
QSettings (`online/allowed`: unset = not asked yet). Preferences can turn it
on or off and hold a contact e-mail (`online/email`) for Crossref's and
OpenAlex's polite pools.

Every batch is one `OnlineSession` (the core's one door online, built here with
the contact e-mail) run on a worker thread (`tasks.run_task`); Cancel (and
closing the window) calls `OnlineSession.cancel()`, which abandons the request
in flight: nothing on the GUI thread ever waits for the network, the worker
ends on its own and its result is dropped. What the services found reaches the
library on the GUI thread, as one undoable step. Finding published versions is
in `online_lookup.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QItemSelectionModel, QObject, QSettings, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from ..core.errors import PapershelfError
from ..core.library import FoundRecord
from ..core.paper import Paper
from .commands import ImportPapers
from .feedback import n_papers
from .tasks import Task, run_task

if TYPE_CHECKING:
    from ..core.biblio.identifiers import Identifier
    from ..core.library import Fetched, OnlineSession
    from .identifier_dialog import IdentifierDialog
    from .main_window import MainWindow
    from .online_lookup import LookupRun
    from .pdf_fetch import PdfFetchRun

ALLOWED_KEY = "online/allowed"
EMAIL_KEY = "online/email"
# light: something@somewhere.tld, no spaces; the services do not check more
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def tr(text: str) -> str:
    """`text` in the user's language."""
    return QCoreApplication.translate("Online", text)


# ---- settings ---------------------------------------------------------------------------------
def online_allowed() -> bool | None:
    """Whether the user turned online look-ups on (None: not asked yet)."""
    value = QSettings().value(ALLOWED_KEY)
    if value is None:
        return None
    if isinstance(value, str):  # the ini format gives text back
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


def set_online_allowed(allowed: bool) -> None:
    """Turn online look-ups on or off (the user's answer, kept)."""
    QSettings().setValue(ALLOWED_KEY, bool(allowed))


def contact_email() -> str:
    """The contact e-mail for the services' polite pools ("" if none, or not usable)."""
    email = str(QSettings().value(EMAIL_KEY, "", str) or "").strip()
    return email if not email_problem(email) else ""


def email_problem(email: str) -> str:
    """Why `email` is not usable as a contact address ("" if it is, or is empty)."""
    email = email.strip()
    if not email or _EMAIL.match(email):
        return ""
    return tr("“%s” does not look like an e-mail address (name@example.org).") % email


CONSENT_TEXT = (
    "To fill in a record, Papershelf asks online services about the paper. It sends the "
    "identifiers you give (DOIs, arXiv ids) and, to find the published version of a paper, "
    "distinctive phrases of its abstract, its title and its authors, to arXiv, Crossref, "
    "OpenAlex, Semantic Scholar and doi.org; to get a paper's PDF, it asks arXiv, or the site "
    "of the PDF link the record names. A contact e-mail goes with them only if you give "
    "one in Preferences. Your tags, notes, ratings and reading lists are never sent."
)


def with_consent(parent: QWidget, go: Callable[[], None], refused: Callable[[str], None]) -> None:
    """Run `go` if online look-ups are on; ask first if the user was never asked (Yes turns
    them on; No keeps them off and sends nothing). Off: `refused` gets words saying so."""
    allowed = online_allowed()
    if allowed:
        go()
        return
    if allowed is False:
        refused(tr("Online look-ups are off: nothing was sent. Turn them on in Edit ▸ Preferences."))
        return
    box = QMessageBox(
        QMessageBox.Icon.Question,
        tr("Look papers up online?"),
        tr("Turn on online look-ups?"),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("onlineConsent")
    box.setInformativeText(
        tr(CONSENT_TEXT) + "\n\n" + tr("Your answer is kept: you can change it at any time in Edit ▸ Preferences.")
    )
    # the answer is kept either way: the buttons say so (no "Not Now" that means "never")
    box.button(QMessageBox.StandardButton.Yes).setText(tr("Turn On"))
    box.button(QMessageBox.StandardButton.No).setText(tr("Keep Off"))
    box.setDefaultButton(QMessageBox.StandardButton.Yes)

    def answered(_result: int) -> None:
        yes = box.clickedButton() is box.button(QMessageBox.StandardButton.Yes)
        set_online_allowed(yes)
        if yes:
            go()
        else:
            refused(tr("Online look-ups stay off: nothing was sent. Turn them on in Edit ▸ Preferences."))

    box.finished.connect(answered)
    box.open()


# ---- the window's online actions --------------------------------------------------------------
def only_identifiers(text: str) -> bool:
    """Whether `text` is nothing but DOIs, arXiv ids and their links (separated by spaces,
    commas, semicolons or lines): a paste that Add by Identifier should take, not the importer.
    A SICI DOI's own semicolon (…<693::AID-ASI4>3.0.CO;2-0) is part of it (identifiers.py)."""
    from ..core.biblio import identifiers

    return identifiers.only_identifiers(text)


def already_there(papers: Iterable[Paper], records: list[FoundRecord]) -> list[str]:
    """The papers holding the DOI or arXiv id of one of these records."""
    dois = {r.doi.lower() for r in records if r.doi}
    arxiv = {r.arxiv_id for r in records if r.arxiv_id}
    return [p.id for p in papers if (p.doi and p.doi.lower() in dois) or (p.arxiv_id and p.arxiv_id in arxiv)]


class OnlineActions(QObject):
    """The window's online actions: Add by Identifier here, Find Published Version in
    `online_lookup.LookupRun`. One online task runs at a time."""

    waiting = Signal(str)  # Add by Identifier's session waits (emitted on its worker thread)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.task: Task | None = None
        self.identifier_dialog: IdentifierDialog | None = None
        self.lookup: LookupRun | None = None
        self.pdf_fetch: PdfFetchRun | None = None  # the last Get PDF (gui/pdf_fetch.py)
        self.message_box: QMessageBox | None = None
        self.session: OnlineSession | None = None  # the running task's door online (set from its worker thread)
        window.installEventFilter(self)  # a closing window stops what runs here first
        self.waiting.connect(self._show_waiting)  # queued: lands on the GUI thread

    def running(self) -> bool:
        """An online task is running."""
        return self.task is not None and not self.task.finished

    def fetching_pdfs(self) -> bool:
        """Get PDF is running (its downloads are attached on the GUI thread as they arrive)."""
        return self.running() and self.pdf_fetch is not None and self.pdf_fetch.task is self.task

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The window is closing: cancel the online task, never waiting for it (the request in
        flight is abandoned, the worker ends on its own and its result is dropped)."""
        if watched is self.window and event.type() == QEvent.Type.Close:
            self.cancel_task()
        return super().eventFilter(watched, event)

    def cancel_task(self) -> None:
        """Stop the running online task at once, from the GUI thread: its flag for the next
        request, `OnlineSession.cancel()` for the one in flight. Nothing is waited for."""
        if not self.running():
            return
        assert self.task is not None
        self.task.cancel()
        if self.session is not None:
            self.session.cancel()

    def _show_waiting(self, text: str) -> None:
        if self.identifier_dialog is not None and self.running():
            self.identifier_dialog.waiting(text)

    def open_session(
        self, contact: str, cancelled: Callable[[], bool], waiting: Callable[[str], None]
    ) -> OnlineSession:
        """The running task's door online, made on its worker thread (the HTTP client is imported
        there, never on the GUI thread) with the contact e-mail read before. A cancel before this
        is not lost: the session checks the task's flag (`cancelled`) too; `waiting` is told what
        a long wait is for."""
        from ..core.library import OnlineSession

        self.session = OnlineSession(contact=contact, cancelled=cancelled, on_wait=waiting)
        return self.session

    def say(self, text: str, ms: int = 8000) -> None:
        """A line in the window's status bar."""
        self.window.statusBar().showMessage(text, ms)

    def busy(self) -> bool:
        """Say so and return True if an online task or an import is running."""
        if self.running():
            self.say(tr("An online look-up is already running."), 4000)
            return True
        if self.window.transfers.running():
            self.say(self.window.transfers.wait_words(), 3000)
            return True
        return False

    def start(
        self,
        work: Callable[[Callable[[int, int], None], Callable[[], bool]], object],
        on_done: Callable[[object], None],
        on_error: Callable[[BaseException], None],
        on_progress: Callable[[int, int], None],
        name: str,
    ) -> Task:
        """Run `work` on a worker thread as this window's online task."""
        self.session = None
        self.task = run_task(
            work, parent=self.window, name=name, on_done=on_done, on_error=on_error, on_progress=on_progress
        )
        return self.task

    # ---- Add by Identifier ---------------------------------------------------------------------
    def add_by_identifier(self, text: str = "") -> None:
        """Open the Add by Identifier dialog (with `text` in it, a paste say)."""
        from .identifier_dialog import IdentifierDialog

        if self.identifier_dialog is not None and self.identifier_dialog.isVisible():
            self.identifier_dialog.raise_()
            self.identifier_dialog.activateWindow()
            return
        dialog = self.identifier_dialog = IdentifierDialog(self.window, text)
        dialog.addRequested.connect(lambda idents: self._ask_then_fetch(dialog, idents))
        dialog.cancelRequested.connect(self._cancel)
        dialog.open()

    def _cancel(self) -> None:
        self.cancel_task()

    def _ask_then_fetch(self, dialog: IdentifierDialog, idents: list[Identifier]) -> None:
        if not idents or self.busy():
            return
        with_consent(dialog, lambda: self._fetch(dialog, idents), dialog.show_refusal)

    def _fetch(self, dialog: IdentifierDialog, idents: list[Identifier]) -> None:
        if self.busy():
            return
        contact = contact_email()
        dialog.fetching(len(idents))

        def fetch(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> Fetched:
            with self.open_session(contact, cancelled, self.waiting.emit) as session:
                return session.fetch(idents, progress)

        self.start(
            fetch,
            on_done=lambda result: self._fetched(dialog, result),  # type: ignore[arg-type]
            on_error=lambda exc: self._fetch_failed(dialog, exc),
            on_progress=dialog.step,
            name="papershelf-add-by-identifier",
        )

    def _fetch_failed(self, dialog: IdentifierDialog, exc: BaseException) -> None:
        if self.window.closing:
            return
        dialog.finished_fetching([], cancelled=False)
        self.window.show_error(tr("Nothing was added"), str(exc))

    def _fetched(self, dialog: IdentifierDialog, result: Fetched) -> None:
        win = self.window
        if win.closing:  # cancelled by the window's closing: nothing more to do
            return
        if result.cancelled:
            dialog.finished_fetching([], cancelled=True)
            self.say(tr("Cancelled: nothing was added."))
            return
        ids: list[str] = []
        if result.found:
            try:
                ids = self.add_records([rec for _, rec in result.found], [str(i) for i, _ in result.found])
            except (PapershelfError, ValueError) as exc:
                dialog.finished_fetching([], cancelled=False)
                win.show_error(tr("Nothing was added"), str(exc))
                return
        dialog.finished_fetching(result.failed, cancelled=False)
        if result.failed and not result.found:
            self.say(tr("Nothing was added: %s") % result.failed[0][1])
        if ids:
            self.select_when_shown(ids)

    def add_records(self, records: list[FoundRecord], names: list[str]) -> list[str]:
        """Add (or merge) the records found as one undoable step; say what it did;
        return the ids of the papers they went to."""
        win, lib = self.window, self.window.library
        report = lib.add_found(records)
        what = names[0] if len(names) == 1 else n_papers(len(names))
        if report.added or report.merged:
            win.undo_stack.push(ImportPapers(lib, [report], tr("Add %s") % what))
        ids = list(
            dict.fromkeys(
                [*report.added_ids, *report.merged_before, *(m.paper_id for m in report.merges if m.paper_id)]
            )
        )
        if report.unchanged:  # already here as found: the report names no paper, its identifiers do
            ids += [pid for pid in already_there(lib.papers(), records) if pid not in ids]
        if report.added or report.merged:
            self.say(
                tr("Added %s, %s merged with ones already here.")
                % (n_papers(report.added).replace(" paper", " new paper"), f"{report.merged:,}")
            )
        else:
            self.say(tr("Already in the library, unchanged: %s") % what)
        win.sidebar.refresh_lists_and_tags()
        win.pane.update_empty_state()
        return [pid for pid in ids if pid in lib]

    def select_when_shown(self, ids: list[str]) -> None:
        """Search again, then select these papers where the list shows them."""
        win = self.window

        def select() -> None:
            win.searchAnswered.disconnect(select)
            view, model = win.paper_list, win.model
            rows = [r for r in (model.row_of(pid) for pid in ids) if r >= 0]
            if not rows:
                self.say(tr("The papers added are not among those the list shows now."), 6000)
                return
            sel = view.selectionModel()
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            sel.setCurrentIndex(model.index(rows[0], 0), flags)
            for row in rows[1:]:
                sel.select(
                    model.index(row, 0),
                    QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
                )
            view.scrollTo(model.index(rows[0], 0))

        win.searchAnswered.connect(select)
        win.run_search()

    # ---- Find Published Version (online_lookup.py) ---------------------------------------------
    def find_published_selected(self) -> None:
        """Look the selected papers up."""
        ids = self.window.selected_ids()
        if not ids:
            self.say(tr("Select papers first."), 3000)
            return
        self.find_published(ids)

    def find_published_derived(self) -> None:
        """Look up every paper whose title Papershelf derived from its abstract."""
        ids = [p.id for p in self.window.library.papers() if p.title_derived]
        if not ids:
            self.say(tr("No paper has a derived title."), 4000)
            return
        self.find_published(ids)

    def find_published(self, ids: list[str]) -> None:
        """Find the published versions of these papers (asking for consent first)."""
        if self.busy():
            return

        def go() -> None:
            from .online_lookup import LookupRun

            if not self.busy():
                if self.lookup is not None:  # kept: its review may still be open
                    self.lookup.dispose()
                self.lookup = LookupRun(self, ids)
                self.lookup.start()

        with_consent(self.window, go, self.say)
