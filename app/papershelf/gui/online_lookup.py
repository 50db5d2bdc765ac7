"""Find Published Version: the look-up on a worker thread, then applying what it found.

`LookupRun` runs an `OnlineSession`'s look-up of some papers on a worker
thread, with a progress dialog whose Cancel cancels the session (the request
in flight is abandoned): the batch stops at once, and what was found so far is
still offered.
Proposals sure enough (`automatic`) are applied at once, as one undoable
step; the others go to the review dialog, whose Apply is one more step. Both
apply through `Library.apply_found`, the command line's rule too: a paper
edited while the look-up ran (or the review was open) is never overwritten, and
what was found is offered again in the review against the paper as it is now.
Papers where nothing was found, or that failed, are listed with the reason; a
reason many papers share ("Cannot reach arXiv, …", when the batch stopped
because no service could be reached) is said once, with their count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QMessageBox, QProgressDialog

from ..core.errors import PapershelfError
from ..core.library import FoundApplied, Library, Proposal
from ..core.limits import CONTROLS_REMOVED
from ..core.paper import Paper
from .commands import keep_later_keys
from .feedback import n_papers
from .online import contact_email, tr
from .screen_fit import keep_on_screen

if TYPE_CHECKING:
    from ..core.library import FoundRecord, LookupResult
    from .online import OnlineActions
    from .review_dialog import ReviewDialog


class ApplyFound(QUndoCommand):
    """Changes found online, to several papers, as one step (made by `Library.apply_found`):
    undo puts every paper the edits touched (and the children whose crossref followed a new
    key) back as it was."""

    def __init__(
        self,
        library: Library,
        label: str,
        edits: Mapping[str, Mapping[str, str]],
        expect: Mapping[str, Any] | None = None,
        found: Mapping[str, FoundRecord | None] | None = None,
    ) -> None:
        super().__init__(label)
        self.library = library
        self.edits = {pid: dict(changes) for pid, changes in edits.items() if changes}
        self.expect, self.found = expect, found
        self.result = FoundApplied()
        self.before: dict[str, dict] = {}
        self.after: dict[str, dict] = {}
        self._done = False

    def redo(self) -> None:
        """Make the edits (the first time) or put their result back."""
        lib = self.library
        if self._done:
            lib.put_records(keep_later_keys(lib, self.after, self.before))
            return
        scope = list(dict.fromkeys(i for pid in self.edits if pid in lib for i in lib.edit_scope(pid)))
        self.before = lib.records(scope)
        try:
            self.result = lib.apply_found(self.edits, expect=self.expect, found=self.found)
        except PapershelfError as exc:  # the library could not save: said, nothing more tried
            self.result.problems.update({pid: [str(exc)] for pid in self.edits})
        self.after = lib.records(scope)
        self._done = True
        if self.before == self.after:
            self.setObsolete(True)  # nothing changed: nothing to undo

    def undo(self) -> None:
        """Put the papers back as they were."""
        self.library.put_records(keep_later_keys(self.library, self.before, self.after))

    def changed(self) -> int:
        """How many of the papers edited changed."""
        return sum(1 for pid in self.edits if self.before.get(pid) != self.after.get(pid))


def said_once(lines: Iterable[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(paper title, message) pairs as a short list and a full one: a message several papers
    share is said once, with how many ("Cannot reach arXiv … (372 papers)"), the others with
    their paper's title. The full list names the papers under each shared message."""
    pairs = list(lines)
    counts = Counter(message for _title, message in pairs)
    short: list[str] = []
    full: list[str] = []
    for message in dict.fromkeys(message for _title, message in pairs):
        titles = [title for title, said in pairs if said == message]
        if counts[message] > 1:
            short.append(tr("%s (%s)") % (message, n_papers(counts[message])))
            full.append(tr("%s (%s):") % (message, n_papers(counts[message])))
            full.extend(f"    {title}" for title in titles)
        else:
            short.append(f"{titles[0]}: {message}")
            full.append(short[-1])
    return short, full


def _clip(line: str, limit: int = 300) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


class LookupRun(QObject):
    """One Find Published Version: progress, then applying and reviewing what was found."""

    waiting = Signal(str)  # the session waits (a rate limit, a Retry-After): shown in the progress dialog
    finished = Signal()  # the results were handled (applied, and the review or the report is open)

    def __init__(self, online: OnlineActions, ids: Iterable[str]) -> None:
        super().__init__(online)
        self.online = online
        self.window = online.window
        lib = self.window.library
        self.papers = {pid: lib.get(pid) for pid in lib.present(ids)}
        # what each paper was when read: an edit made meanwhile wins (Library.apply_found)
        self.read_at = lib.records(self.papers)
        self.review_read: dict[str, Any] = {}  # the same, for the papers the review shows
        self.progress: QProgressDialog | None = None
        self.review: ReviewDialog | None = None
        self.report: QMessageBox | None = None
        self.result: LookupResult | None = None
        self.applied: ApplyFound | None = None

    def start(self) -> None:
        """Show the progress dialog and start the look-ups on a worker thread."""
        n = len(self.papers)
        # the worker reads copies: the library may change on the GUI thread meanwhile
        copies = [Paper.from_dict(p.to_dict()) for p in self.papers.values()]
        dialog = self.progress = QProgressDialog(tr("Looking up %s…") % n_papers(n), tr("Cancel"), 0, n, self.window)
        dialog.setObjectName("lookupProgress")
        dialog.setWindowTitle(tr("Find Published Version"))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setValue(0)
        dialog.canceled.connect(self.cancel)
        self.waiting.connect(dialog.setLabelText)
        dialog.show()
        contact = contact_email()

        def look_up(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> LookupResult:
            with self.online.open_session(contact, cancelled, self.waiting.emit) as session:
                return session.look_up(copies, progress)

        self.online.start(
            look_up,
            on_done=self._done,  # type: ignore[arg-type]
            on_error=self._failed,
            on_progress=self._step,
            name="papershelf-lookup",
        )

    def cancel(self) -> None:
        """Stop the batch at once, the request in flight abandoned (what was found so far is
        still offered)."""
        if self.online.running():
            self.online.cancel_task()
            if self.progress is not None:
                self.progress.setLabelText(tr("Cancelling…"))

    def _step(self, done: int, total: int) -> None:
        dialog = self.progress
        if dialog is not None:
            dialog.setLabelText(tr("Looked up %d of %s…") % (done, n_papers(total)))
            dialog.setMaximum(max(total, 1))
            # last: a window-modal progress dialog handles events here, the batch's end among them
            dialog.setValue(done)

    def _close_progress(self) -> None:
        # hidden, not deleted: this may run inside the dialog's own setValue (a window-modal
        # progress dialog handles events there); the next run, or the window, deletes it
        if self.progress is not None:
            self.progress.canceled.disconnect(self.cancel)
            self.progress.hide()
            self.progress = None

    def dispose(self) -> None:
        """Delete the widgets of a run that ended (its progress dialog)."""
        for dialog in self.window.findChildren(QProgressDialog, "lookupProgress"):
            if dialog.isHidden():
                dialog.deleteLater()

    def _failed(self, exc: BaseException) -> None:
        self._close_progress()
        if self.window.closing:
            return
        self.window.show_error(tr("The look-up failed"), str(exc))
        self.finished.emit()

    def _done(self, result: LookupResult) -> None:
        self._close_progress()
        if not self.window.closing:  # cancelled by the window's closing: nothing to offer
            self.show_results(result)

    def show_results(self, result: LookupResult) -> None:
        """Apply the sure proposals at once (one step), open the review of the others, or say
        why nothing was found."""
        self.result = result
        win = self.window
        automatic = [p for p in result.proposals if p.automatic and p.changes]
        rest = [p for p in result.proposals if not (p.automatic and p.changes)]
        said, applied = [], 0
        if automatic:
            applied, again = self._apply_sure(automatic)
            rest = again + rest
            if applied:
                said.append(tr("Applied the published versions of %s found sure enough.") % n_papers(applied))
        to_review = [p for p in rest if p.changes]
        if to_review:
            said.append(tr("%s to review.") % n_papers(len(to_review)))
        said = self._why_it_ended(result, said, bool(automatic or to_review))
        win.statusBar().showMessage(" ".join(said), 10000)
        if to_review:
            self.open_review(rest, applied=applied)
        elif [p for p in rest if p.message]:
            self.show_report(rest, " ".join(said))
        self.finished.emit()

    def _apply_sure(self, automatic: list[Proposal]) -> tuple[int, list[Proposal]]:
        """Apply the sure proposals as one step; how many were applied, and the ones not applied
        that still say something (a paper edited meanwhile, proposed again; one deleted)."""
        self.applied = self.apply(
            {p.paper_id: {f: new for f, (_old, new) in p.changes.items()} for p in automatic},
            tr("Apply the published versions of %s") % n_papers(len(automatic)),
            expect=self.read_at,
            found={p.paper_id: p.candidate for p in automatic},
            tell_stale=False,  # offered again in the review, which says why
        )
        done = self.applied.result
        done.settle(automatic)
        again = [p for p in automatic if p.paper_id in done.stale or p.paper_id in done.gone]
        return sum(1 for p in automatic if p.applied), again

    @staticmethod
    def _why_it_ended(result: LookupResult, said: list[str], found: bool) -> list[str]:
        """The status line's words on how the batch ended (cancelled, stopped, skipped)."""
        if result.cancelled:
            said.insert(0, tr("Cancelled after %s.") % n_papers(len(result.proposals)))
        if result.stopped:
            said.insert(0, tr("Stopped: none of the services could be reached."))
        elif not found:
            said.append(tr("Nothing to change was found."))
        return said + (list(result.skipped.values()) if not result.stopped else [])

    def open_review(self, proposals: list[Proposal], applied: int = 0) -> None:
        """The review dialog of these proposals (window-modal, opened without blocking);
        `applied`: how many sure ones were applied already."""
        from .review_dialog import ReviewDialog

        lib = self.window.library
        papers = {p.paper_id: lib.get(p.paper_id) for p in proposals if p.paper_id in lib}
        self.review_read = lib.records(papers)
        dialog = self.review = ReviewDialog(proposals, papers, self.window, applied)
        dialog.applyRequested.connect(self.apply_reviewed)
        dialog.open()

    def apply_reviewed(self, edits: dict[str, dict[str, str]]) -> None:
        """Apply the changes checked in the review, as one step."""
        edits = {pid: changes for pid, changes in edits.items() if changes}
        if not edits:
            self.window.statusBar().showMessage(tr("Nothing was checked: nothing changed."), 6000)
            return
        label = tr("Apply the published versions of %s") % n_papers(len(edits))
        # a paper edited while the review was open is refused, and not proposed again: the
        # review is over (its note says to run the look-up again)
        cmd = self.apply(edits, label, expect=self.review_read)
        self.window.statusBar().showMessage(tr("Changed %s.") % n_papers(cmd.changed()), 8000)

    def apply(
        self,
        edits: dict[str, dict[str, str]],
        label: str,
        expect: Mapping[str, Any] | None = None,
        found: Mapping[str, FoundRecord | None] | None = None,
        tell_stale: bool = True,
    ) -> ApplyFound:
        """Make the edits one undoable step; a value the library refused, one cleaned and (if
        `tell_stale`) a paper edited or deleted meanwhile are shown in words."""
        win = self.window
        cmd = ApplyFound(win.library, label, edits, expect, found)
        win.undo_stack.push(cmd)
        done = cmd.result
        stale = [*done.stale, *done.gone] if tell_stale else []
        if done.problems or done.cleaned or stale:
            lines = [f"{self._title(pid)}: {'; '.join(why)}" for pid, why in done.problems.items()]
            lines += [
                f"{self._title(pid)}: {CONTROLS_REMOVED} {', '.join(names)} of the found record"
                for pid, names in done.cleaned.items()
            ]
            lines += [f"{self._title(pid)}: {done.note(pid)}" for pid in stale]
            title = tr("Some values were not taken") if done.problems or stale else tr("Some values were cleaned")
            win.show_error(title, "\n".join(lines))
        return cmd

    def _title(self, pid: str) -> str:
        paper = self.papers.get(pid)
        title = paper.title if paper is not None else pid
        return title if len(title) <= 80 else title[:79] + "…"

    def show_report(self, proposals: list[Proposal], text: str) -> None:
        """Nothing to review: say, paper by paper, why nothing was found (a message many
        papers share, once with their count); the box fits the screen."""
        short, full = said_once((self._title(p.paper_id), p.message) for p in proposals if p.message)
        box = self.report = QMessageBox(
            QMessageBox.Icon.Information, tr("Find Published Version"), text, QMessageBox.StandardButton.Ok, self.window
        )
        box.setObjectName("lookupReport")
        box.setInformativeText("\n".join(_clip(line) for line in short[:8]) + ("\n…" if len(short) > 8 else ""))
        if len(short) > 8 or full != short:
            box.setDetailedText("\n".join(full))
        box.open()
        keep_on_screen(box)
