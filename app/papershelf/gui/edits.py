"""Edits of the selected papers, each one undoable step, and what the status bar says after it.

The tag panel, the paper menu, the Edit menu and the number keys all ask
here. An edit waits while an import runs (the import is one undoable step,
and the library must not change under it), and only an edit that changed
something points to Undo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoCommand, QUndoStack
from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from ..core import overview
from ..core.errors import PapershelfError
from ..core.library import Library
from ..core.paper import Paper, Status
from .commands import DeletePapers, DoneStep, LibraryEdit
from .feedback import edited, n_papers, quoted, redone, undone
from .paper_model import STATUS_LABELS

if TYPE_CHECKING:
    from .list_pane import ListPane
    from .status_line import StatusLine
    from .tag_panel import TagPanel


class Edits(QObject):
    """Makes the edits of the list's selection (`pane`) as steps on `undo_stack`; takes the tag
    panel's requests. `importing()`: an import runs (edits wait); `closing()`: the window closes;
    `reload_saved`: the sidebar shows the saved searches again (an edit touched them)."""

    tagsChanged = Signal()  # tags or reading lists may have changed: the sidebar's lists follow

    def __init__(
        self,
        library: Library,
        undo_stack: QUndoStack,
        pane: ListPane,
        tag_panel: TagPanel,
        status: StatusLine,
        importing: Callable[[], bool],
        closing: Callable[[], bool],
        reload_saved: Callable[[], None],
        parent: QWidget,
        wait_words: Callable[[], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.library, self.undo_stack, self.status = library, undo_stack, status
        # what to say while the import's slot is busy ("Wait for the files to be attached.")
        self.wait_words = wait_words or (lambda: self.tr("Wait for the import to finish."))
        self.pane, self.tag_panel = pane, tag_panel
        self.importing, self.closing, self.reload_saved = importing, closing, reload_saved
        self.dialog_parent = parent  # the questions it asks sit over it
        self.undo_action: QAction | None = None  # the window's Undo, whose shortcut the status line names
        self._pushed: LibraryEdit | None = None  # the last edit made
        panel = tag_panel
        panel.notesEdited.connect(self.save_notes)
        panel.addTagsRequested.connect(self.add_tags)
        panel.removeTagRequested.connect(self.remove_tag)
        panel.statusRequested.connect(self.set_status)
        panel.ratingRequested.connect(self.set_rating)
        panel.addToListRequested.connect(self.add_to_list)

    def _busy(self) -> bool:
        if self.importing():
            self.status.say(self.wait_words(), 3000)
            return True
        return False

    def edit(
        self,
        label: str,
        ids: list[str],
        action: Callable[[], object],
        touches_lists: bool = False,
        touches_saved: bool = False,
    ) -> int | None:
        """Make an undoable edit. Returns how many papers it changed (0: nothing
        changed, so there is nothing to undo), or None if it was not made."""
        if not ids:
            self.status.say(self.tr("Select papers first."), 3000)
            return None
        if self._busy():
            return None
        results = []
        refused: list[Exception] = []

        def run() -> object:
            # caught here, inside the step: an error leaving QUndoCommand.redo is printed by
            # PySide as a traceback even when push's caller catches it
            try:
                results.append(action())
            except (PapershelfError, ValueError) as exc:
                refused.append(exc)
                results.append(None)
            return results[-1]

        stack = self.undo_stack
        start = stack.index()
        reload = self.reload_saved if touches_saved else None  # the sidebar shows them
        self._pushed = LibraryEdit(self.library, label, ids, run, touches_lists, touches_saved, reload)
        try:
            stack.push(self._pushed)
        except (PapershelfError, ValueError) as exc:
            refused.append(exc)
        if refused:  # nothing was changed (the step went obsolete)
            self.status.error(self.tr("The change was not made"), str(refused[0]))
            return None
        if stack.index() == start:  # nothing changed: the step went obsolete
            return 0
        changed = results[0] if results else None
        return changed if isinstance(changed, int) and not isinstance(changed, bool) else len(ids)

    def say_edited(self, kind: str, n: int | None, what: str = "") -> None:
        """The status-bar line after an edit; only an edit that changed something
        points to Undo, and it counts the papers it changed."""
        if n is None:
            return
        undo = self.undo_action
        key = undo.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if undo is not None else ""
        self.status.say(edited(kind, n, what, key), 8000)
        if n and self._pushed is not None:  # what Undo and Redo will say they took back or made again
            self._pushed.said = edited(kind, n, what, "")

    def undo(self) -> None:
        """Undo the last step, unless an import is running, and say what it took back."""
        stack = self.undo_stack
        if not self._busy() and stack.canUndo():
            step = self._words(stack.command(stack.index() - 1))
            stack.undo()
            self.status.say(undone(step), 8000)

    def redo(self) -> None:
        """Redo the step undone last, unless an import is running, and say what it made again."""
        stack = self.undo_stack
        if not self._busy() and stack.canRedo():
            step = self._words(stack.command(stack.index()))
            stack.redo()
            self.status.say(redone(step), 8000)

    @staticmethod
    def _words(step: QUndoCommand | None) -> str:
        # the status line the edit gave ("Marked 2 papers as Read"); else the step's name
        # ("Import of more.bib (1 paper)", "Delete 3 papers")
        if step is None:
            return ""
        return str(getattr(step, "said", "") or step.text())

    # ---- tags, status, rating -------------------------------------------------------
    def add_tags(self, tags: list[str]) -> None:
        """Tag the selection."""
        lib, ids = self.library, self.pane.selected_ids()
        self.say_edited(
            "tag",
            self.edit(self.tr("Tag %s") % ", ".join(tags), ids, lambda: lib.add_tags(ids, tags)),
            quoted(tags),
        )
        self.tagsChanged.emit()

    def remove_tag(self, tag: str) -> None:
        """Take a tag off the selection."""
        lib, ids = self.library, self.pane.selected_ids()
        self.say_edited(
            "untag",
            self.edit(self.tr("Remove tag %s") % tag, ids, lambda: lib.remove_tags(ids, [tag])),
            quoted([tag]),
        )
        self.tagsChanged.emit()

    def make_keywords_tags(self) -> None:
        """Tag the selection with each paper's record keywords (one undoable step)."""
        lib, ids = self.library, self.pane.selected_ids()
        self.say_edited(
            "keywords",
            self.edit(self.tr("Make Keywords Tags"), ids, lambda: lib.make_keywords_tags(ids)),
        )
        self.tagsChanged.emit()

    def toggle_top_tag(self, n: int) -> None:
        """Key `n` (1-9): add the n-th of the tags the user chose (`Library.key_tags`: applied by
        hand, most used first) to the selection, or remove it if all have it."""
        top = overview.top_tags(self.library)
        if n > len(top):
            self.status.say(self.tr("There is no tag number %d yet.") % n, 3000)
            return
        tag = top[n - 1]
        ids = self.pane.selected_ids()
        if ids and overview.all_tagged(self.library, ids, tag):
            self.remove_tag(tag)
        else:
            self.add_tags([tag])

    def set_status(self, status: str) -> None:
        """Mark the selection with a status (a `Status` value)."""
        lib, ids = self.library, self.pane.selected_ids()
        label = self.tr("Mark as %s") % self.tr(STATUS_LABELS[Status(status)])
        self.say_edited(
            "status",
            self.edit(label, ids, lambda: lib.set_status(ids, status)),
            self.tr(STATUS_LABELS[Status(status)]),
        )

    def set_rating(self, rating: int | None) -> None:
        """Rate the selection 1-5 stars, or clear its rating (None)."""
        lib, ids = self.library, self.pane.selected_ids()
        self.say_edited(
            "rating" if rating else "unrate",
            self.edit(self.tr("Rate"), ids, lambda: lib.set_rating(ids, rating)),
            "★" * (rating or 0),
        )

    def save_notes(self, paper_id: str, text: str) -> None:
        """Keep the notes typed for a paper (one undoable step; nothing if unchanged or gone)."""
        lib = self.library
        if paper_id not in lib:
            self._notes_of_deleted(paper_id, text)
            return
        if lib.get(paper_id).notes == text:
            return
        self.edit(self.tr("Edit notes"), [paper_id], lambda: lib.set_notes(paper_id, text))

    def _notes_of_deleted(self, paper_id: str, text: str) -> None:
        """Notes typed into a paper another device deleted meanwhile: an edit later than the
        deletion, so the paper comes back with them (as the merge brings back a paper another
        device edited after a deletion it had seen), rather than the typing being dropped."""
        lib, pane = self.library, self.pane
        record = lib.deleted_record(paper_id)
        if not record or record.get("notes", "") == text:
            return
        token = lib.undo_token()
        try:
            lib.restore_papers([Paper.from_dict({**record, "id": paper_id, "notes": text})], {})
        except PapershelfError as exc:  # a read-only library, a full disk: the text stays shown
            self.status.say(self.tr("Your notes were not saved: %s") % exc, 10000)
            return
        title = lib.get(paper_id).title
        if lib.undo_token() is not token:
            self.undo_stack.push(
                DoneStep(lib, self.tr("Bring back %s with your notes") % quoted([title]), lib.undo_token())
            )
        said = self.tr("%s was deleted on another device while you wrote its notes: it is back, with them.")

        def back(tries: int = 20) -> None:  # once the merge's events and the list's refresh are through
            if self.closing() or paper_id not in lib:
                return
            if pane.model.row_of(paper_id) < 0 and tries:
                QTimer.singleShot(100, lambda: back(tries - 1))
                return
            if not pane.selected_ids():
                pane.reselect([paper_id], paper_id)
            self.status.say(said % quoted([title]), 10000)

        QTimer.singleShot(0, back)

    # ---- reading lists and deleting ------------------------------------------------
    def choose_list(self) -> None:
        """Open the reading-list menu at the current row (Ctrl+L)."""
        if not self.pane.selected_ids():
            self.status.say(self.tr("Select papers first."), 3000)
            return
        view = self.pane.view
        self.tag_panel.list_menu.popup(view.viewport().mapToGlobal(view.visualRect(view.currentIndex()).center()))

    def add_to_list(self, name: str) -> None:
        """Add the selection to a reading list ("": ask for the name of a new one)."""
        lib, ids = self.library, self.pane.selected_ids()
        if not ids:
            return
        if not name:
            name, ok = QInputDialog.getText(
                self.dialog_parent, self.tr("New reading list"), self.tr("Name of the new list:")
            )
            if not ok or not name.strip():
                return
        self.edit(self.tr("Add to %s") % name, ids, lambda: lib.add_to_list(name, ids), touches_lists=True)
        self.tagsChanged.emit()

    def delete_selected(self) -> None:
        """Remove the selection from the library, after asking (Undo brings it back)."""
        ids = self.pane.selected_ids()
        if not ids or self._busy():
            return
        answer = QMessageBox.question(
            self.dialog_parent,
            self.tr("Delete papers"),
            self.tr(
                "Remove %s from the library? Their tags, notes and list places go too (Edit ▸ Undo brings them back)."
            )
            % n_papers(len(ids)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.undo_stack.push(DeletePapers(self.library, ids, self.tr("Delete %s") % n_papers(len(ids))))
        except PapershelfError as exc:
            self.status.error(self.tr("Nothing was deleted"), str(exc))
        self.pane.update_empty_state()
