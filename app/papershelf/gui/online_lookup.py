"""Find Published Version: the look-up on a worker thread, then applying what it found.

`LookupRun` runs `lookup_many` for some papers on a worker thread, with a
progress dialog whose Cancel sets the task's flag and cancels the `Http`
(the request in flight is abandoned): the batch stops at once, and what was
found so far is still offered.
Proposals sure enough (`automatic`) are applied at once, as one undoable
step; the others go to the review dialog, whose Apply is one more step.
Papers where nothing was found, or that failed, are listed with the reason; a
reason many papers share ("Cannot reach arXiv, …", when the batch stopped
because no service could be reached) is said once, with their count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QMessageBox, QProgressDialog

from ..core.errors import PapershelfError
from ..core.library import Library
from ..core.limits import CONTROLS_REMOVED, strip_found
from ..core.online.records import Cancelled, Proposal
from ..core.paper import Paper
from .commands import keep_later_keys
from .feedback import n_papers
from .online import contact_email, tr
from .screen_fit import keep_on_screen

if TYPE_CHECKING:
    from ..core.online.http import Http
    from .online import OnlineActions
    from .review_dialog import ReviewDialog


def apply_changes(library: Library, paper_id: str, changes: Mapping[str, str]) -> list[str]:
    """Make the changes to one paper; a value the library refuses is left out (its words
    returned) and the others still made."""
    if paper_id not in library or not changes:
        return []
    try:
        library.edit_record(paper_id, dict(changes))
        return []
    except (PapershelfError, ValueError):
        pass  # one bad value refuses the whole edit: make the others one by one
    problems = []
    for name, value in changes.items():
        try:
            library.edit_record(paper_id, {name: value})
        except (PapershelfError, ValueError) as exc:
            problems.append(f"{name}: {exc}")
    return problems


class ApplyFound(QUndoCommand):
    """Changes found online, to several papers, as one step: undo puts every paper the edits
    touched (and the children whose crossref followed a new key) back as it was."""

    def __init__(self, library: Library, label: str, edits: Mapping[str, Mapping[str, str]]) -> None:
        super().__init__(label)
        self.library = library
        self.edits = {pid: dict(changes) for pid, changes in edits.items() if changes}
        self.problems: dict[str, list[str]] = {}
        self.cleaned: dict[str, list[str]] = {}  # a paper → the found fields control characters were removed from
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
        for pid, found in self.edits.items():
            changes, stripped = strip_found(found)  # a service's values are cleaned (and told), not refused
            if stripped:
                self.cleaned[pid] = stripped
            problems = apply_changes(lib, pid, changes)
            if problems:
                self.problems[pid] = problems
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


@dataclass
class LookupResult:
    """What a look-up batch gave: a proposal per paper done, and whether it was cancelled."""

    proposals: list[Proposal] = field(default_factory=list)
    cancelled: bool = False
    stopped: str = ""  # why the batch stopped early: no service could be reached
    skipped: dict[str, str] = field(default_factory=dict)  # service → why it was skipped (unreachable)


def look_up(
    papers: list[Paper],
    contact: str,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
    waiting: Callable[[str], None],
    opened: Callable[[Http], None] | None = None,
) -> LookupResult:
    """Look each paper up (on a worker thread); Cancel stops the batch, the proposals so far
    kept. `opened` gets the Http (its `cancel` may be called from the GUI thread)."""
    from ..core.online.http import Http
    from ..core.online.lookup import Reach, lookup_many

    out = LookupResult()
    reach = Reach()
    with Http(contact=contact, cancelled=cancelled, on_wait=waiting) as http:
        if opened is not None:
            opened(http)
        try:
            for proposal in lookup_many(http, papers, progress, reach=reach):
                out.proposals.append(proposal)
                if cancelled():
                    out.cancelled = len(out.proposals) < len(papers)
                    break
        except Cancelled:
            out.cancelled = True
    out.stopped = reach.stopped
    out.skipped = {service: reach.skipped_note(service) for service in reach.skipped}
    return out


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

    waiting = Signal(str)  # the Http waits (a rate limit, a Retry-After): shown in the progress dialog
    finished = Signal()  # the results were handled (applied, and the review or the report is open)

    def __init__(self, online: OnlineActions, ids: Iterable[str]) -> None:
        super().__init__(online)
        self.online = online
        self.window = online.window
        lib = self.window.library
        self.papers = {pid: lib.get(pid) for pid in lib.present(ids)}
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
        self.online.start(
            lambda progress, cancelled: look_up(
                copies, contact, progress, cancelled, self.waiting.emit, self.online.opened
            ),
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
        automatic = [p for p in result.proposals if p.automatic and p.changes and p.paper_id in win.library]
        auto_ids = {id(p) for p in automatic}
        rest = [p for p in result.proposals if id(p) not in auto_ids]
        said = []
        if automatic:
            self.applied = self.apply(
                {p.paper_id: {f: new for f, (_old, new) in p.changes.items()} for p in automatic},
                tr("Apply the published versions of %s") % n_papers(len(automatic)),
            )
            for p in automatic:
                p.applied = p.paper_id not in self.applied.problems
            said.append(tr("Applied the published versions of %s found sure enough.") % n_papers(len(automatic)))
        to_review = [p for p in rest if p.changes]
        if to_review:
            said.append(tr("%s to review.") % n_papers(len(to_review)))
        if result.cancelled:
            said.insert(0, tr("Cancelled after %s.") % n_papers(len(result.proposals)))
        if result.stopped:
            said.insert(0, tr("Stopped: none of the services could be reached."))
        elif not automatic and not to_review:
            said.append(tr("Nothing to change was found."))
        said += list(result.skipped.values()) if not result.stopped else []
        win.statusBar().showMessage(" ".join(said), 10000)
        if to_review:
            self.open_review(rest, applied=len(automatic))
        elif [p for p in rest if p.message]:
            self.show_report(rest, " ".join(said))
        self.finished.emit()

    def open_review(self, proposals: list[Proposal], applied: int = 0) -> None:
        """The review dialog of these proposals (window-modal, opened without blocking);
        `applied`: how many sure ones were applied already."""
        from .review_dialog import ReviewDialog

        lib = self.window.library
        papers = {p.paper_id: lib.get(p.paper_id) for p in proposals if p.paper_id in lib}
        dialog = self.review = ReviewDialog(proposals, papers, self.window, applied)
        dialog.applyRequested.connect(self.apply_reviewed)
        dialog.open()

    def apply_reviewed(self, edits: dict[str, dict[str, str]]) -> None:
        """Apply the changes checked in the review, as one step."""
        edits = {pid: changes for pid, changes in edits.items() if changes}
        if not edits:
            self.window.statusBar().showMessage(tr("Nothing was checked: nothing changed."), 6000)
            return
        cmd = self.apply(edits, tr("Apply the published versions of %s") % n_papers(len(edits)))
        self.window.statusBar().showMessage(tr("Changed %s.") % n_papers(cmd.changed()), 8000)

    def apply(self, edits: dict[str, dict[str, str]], label: str) -> ApplyFound:
        """Make the edits one undoable step; a value the library refused is shown in words."""
        win = self.window
        cmd = ApplyFound(win.library, label, edits)
        win.undo_stack.push(cmd)
        if cmd.problems or cmd.cleaned:
            lines = [f"{self._title(pid)}: {'; '.join(why)}" for pid, why in cmd.problems.items()]
            lines += [
                f"{self._title(pid)}: {CONTROLS_REMOVED} {', '.join(names)} of the found record"
                for pid, names in cmd.cleaned.items()
            ]
            title = tr("Some values were not taken") if cmd.problems else tr("Some values were cleaned")
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
