"""Undoable edits: each records what it changed and can put it back exactly."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtGui import QUndoCommand

from ..core.library import FileReport, Library
from ..core.paper import Record


def _lists(library: Library) -> dict[str, list[str]]:
    return {name: list(members) for name, members in library.lists().items()}


def keep_later_keys(
    library: Library, target_records: Mapping[str, Record], after_records: Mapping[str, Record]
) -> dict[str, Record]:
    """`target_records` (what an undo or a redo puts back with `put_records`), but a citation
    key changed since the papers were left as `after_records` keeps its value: a key pinned
    by Copy Key or an export is in a document's \\cite, and putting back a record must not
    break it. A key that step itself changed (still as `after_records` left it) goes back,
    unless another paper has been given that key since (two papers would share it).

    Undo: `put_records(keep_later_keys(lib, before, after))`; redo:
    `put_records(keep_later_keys(lib, after, before))`."""
    out = {pid: dict(record) for pid, record in target_records.items()}
    now = library.records(out)
    going_back: dict[str, str] = {}  # paper id → the key it has now, which the step replaces
    for pid, record in out.items():
        current, left = now.get(pid), after_records.get(pid)
        if current is None or left is None:
            continue
        key = current.get("citekey", "")
        if key != left.get("citekey", ""):
            record["citekey"] = key
        elif record.get("citekey", "") != key:
            going_back[pid] = key
    if any(out[pid].get("citekey") for pid in going_back):
        held = {p.citekey.casefold() for p in library.papers() if p.citekey and p.id not in out}
        for pid, key in going_back.items():
            if str(out[pid].get("citekey", "")).casefold() in held:
                out[pid]["citekey"] = key
    return out


class OwnStep:
    """Which action of the library's own history (core/library/history.py) a window step made,
    so that the step's undo and redo are the library's: journalled like any edit, and leaving
    alone what changed since (on another device too). A step whose action is no longer next
    in the library's history (an edit that made several actions, a history set aside) falls
    back to putting back what it kept itself."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.token: object | None = None

    def made(self, before: object | None) -> None:
        """The step's action ran; `before` was `undo_token()` before it."""
        token = self.library.undo_token()
        self.token = token if token is not before else None

    def undo(self) -> bool:
        """Undo through the library if its next undo is this step's; False if not."""
        if self.token is None or self.library.undo_token() is not self.token:
            self.token = None
            return False
        self.library.undo()
        self.token = self.library.redo_token()
        return True

    def redo(self) -> bool:
        """Redo through the library if its next redo is this step's; False if not."""
        if self.token is None or self.library.redo_token() is not self.token:
            self.token = None
            return False
        self.library.redo()
        self.token = self.library.undo_token()
        return True


class DoneStep(QUndoCommand):
    """An action the library already made (a conflict settled on the live worker, gui/live.py; a
    paper brought back for the notes typed into it): its undo and redo are the library's. Should
    the library's history have moved on without it, there is nothing of the window's own to put
    back, and the step does nothing."""

    def __init__(self, library: Library, label: str, token: object) -> None:
        super().__init__(label)
        self.own = OwnStep(library)
        self.own.token = token
        self._pushed = False

    def redo(self) -> None:
        """Nothing the first time (it is done); after an undo, the library's redo."""
        if self._pushed:
            self.own.redo()
        self._pushed = True

    def undo(self) -> None:
        """The library's undo of the action."""
        self.own.undo()


class LibraryEdit(QUndoCommand):
    """Run `action` once; undo restores the papers' editable fields (and the
    reading lists, and the saved searches, if the edit touches them); redo puts the result back."""

    def __init__(
        self,
        library: Library,
        label: str,
        ids: Iterable[str],
        action: Callable[[], object],
        touches_lists: bool = False,
        touches_saved: bool = False,
        saved_changed: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(label)
        self.library = library
        self.ids = list(dict.fromkeys(ids))
        self.action = action
        self.touches_lists = touches_lists
        self.said = ""  # what the status bar said it did, for Undo and Redo to say again
        self.touches_saved = touches_saved  # a tag rename rewrites the saved searches that use it
        self.saved_changed = saved_changed  # told after undo or redo put saved searches back
        self._done = False
        self.own = OwnStep(library)

    def redo(self) -> None:
        """Make the edit (the first time) or put its result back."""
        lib = self.library
        if not self._done:
            self.before = lib.snapshot_fields(self.ids)
            self.lists_before = _lists(lib) if self.touches_lists else {}
            saved_before = dict(lib.saved_searches()) if self.touches_saved else {}
            self.hand_before = lib.hand_tags() if self.touches_saved else []
            token = lib.undo_token()
            self.action()
            self.own.made(token)
            self.after = lib.snapshot_fields(self.ids)
            self.lists_after = _lists(lib) if self.touches_lists else {}
            saved_after = dict(lib.saved_searches()) if self.touches_saved else {}
            self.hand_after = lib.hand_tags() if self.touches_saved else []
            # only the searches the edit changed: undo leaves the others (saved since) alone
            changed = [n for n in saved_after if saved_before.get(n) != saved_after[n]]
            self.saved_before = [saved_before[n] for n in changed if n in saved_before]
            self.saved_after = [saved_after[n] for n in changed]
            self._done = True
            if self.before == self.after and self.lists_before == self.lists_after:
                self.setObsolete(True)  # nothing changed: nothing to undo
            return
        if not self.own.redo():
            lib.restore_fields(self.after)
            self._restore_lists(self.lists_after, self.lists_before)
        self._restore_saved(self.saved_after, self.saved_before, self.hand_after, self.hand_before)

    def undo(self) -> None:
        """Put the fields (and lists, and saved searches) back as they were before the edit."""
        if not self.own.undo():
            self.library.restore_fields(self.before)
            self._restore_lists(self.lists_before, self.lists_after)
        self._restore_saved(self.saved_before, self.saved_after, self.hand_before, self.hand_after)

    def _restore_saved(self, searches: list, other: list, hand: list[str], hand_other: list[str]) -> None:
        if not self.touches_saved:
            return
        self.library.restore_hand_tags(hand, hand_other)
        if searches or other:
            self.library.restore_saved_searches(searches, other)
            if self.saved_changed is not None:
                self.saved_changed()

    def _restore_lists(self, target: dict, other: dict) -> None:
        if self.touches_lists:
            wanted = {name: target.get(name) for name in set(target) | set(other)}
            self.library.restore_lists(wanted)


class DeletePapers(QUndoCommand):
    """Delete papers; undo brings them back exactly, with their places on reading lists."""

    def __init__(self, library: Library, ids: Iterable[str], label: str) -> None:
        super().__init__(label)
        self.library = library
        self.ids = library.present(dict.fromkeys(ids))
        self.papers = [library.get(pid) for pid in self.ids]
        self.lists_before = _lists(library)
        self.own = OwnStep(library)

    def redo(self) -> None:
        """Delete the papers (those still there)."""
        if not self.own.redo():
            token = self.library.undo_token()
            self.library.delete_papers(self.library.present(self.ids))
            self.own.made(token)

    def undo(self) -> None:
        """Bring the papers back, and the reading lists as they were."""
        if not self.own.undo():
            self.library.restore_papers(self.papers, self.lists_before)


IMPORT_STEP = 11


class ImportPapers(QUndoCommand):
    """An import that has already run: undo removes the papers it added and
    puts back the fields it changed in the ones it merged into; redo re-applies
    it. A field changed since the import (a citation key pinned by Copy Key or
    an export, say) keeps its value either way."""

    def __init__(self, library: Library, reports: list[FileReport], label: str) -> None:
        super().__init__(label)
        self.library = library
        self.added_ids = [pid for r in reports for pid in r.added_ids]
        self.merged_before: dict[str, dict] = {}
        added = set(self.added_ids)  # one added and then merged into goes as a whole
        for r in reports:  # the first file to touch a paper saw it as it was
            for pid, record in r.merged_before.items():
                if pid not in added:
                    self.merged_before.setdefault(pid, record)
        # pushed as soon as the import is committed: the merged papers as it left them
        self.merged_after = library.records(self.merged_before)
        self.files = [r.path for r in reports if r.added or r.merged]
        self.added: dict[str, dict] | None = None
        self.applied = True
        # the step this one completes (a file the same drop held for a preview):
        # built from both imports' reports, it takes that step's place
        self.follows: ImportPapers | None = None
        # the library's own action for this import, if its newest is the one that added these papers
        self.own = OwnStep(library)
        token = library.undo_token()
        if self.added_ids and set(getattr(token, "added", ())) == set(self.added_ids):
            self.own.token = token

    def id(self) -> int:
        """Imports share an id, so a held-back file's import can merge into its drop's step."""
        return IMPORT_STEP

    def mergeWith(self, other) -> bool:
        """Take in the import that completes this one (see `follows`)."""
        if not isinstance(other, ImportPapers) or other.follows is not self:
            return False
        self.added_ids, self.merged_before = other.added_ids, other.merged_before
        self.merged_after, self.files = other.merged_after, other.files
        self.own.token = None  # two actions in the library's history: this step undoes both itself
        self.setText(other.text())
        return True

    def redo(self) -> None:
        """Apply the import again (the first redo is the import itself, already done)."""
        if self.added is not None and not self.own.redo():  # the first redo is the import itself
            self.library.swap_fields(self.merged_before, self.merged_after, add=self.added)
        self.applied = True

    def undo(self) -> None:
        """Remove the papers the import added and put back the ones it merged into."""
        lib = self.library
        self.added = lib.records(self.added_ids)  # for a redo that cannot be the library's
        if not self.own.undo():
            lib.swap_fields(self.merged_after, self.merged_before, remove=self.added_ids)
        self.applied = False
