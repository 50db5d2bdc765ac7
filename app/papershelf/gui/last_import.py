"""Imports as undoable steps, and the sidebar's "Last import" entry.

The entry shows the papers that the latest import still applied (the newest
`ImportPapers` at or below the undo stack's position) added and that are still
in the library, so a mistaken import can be reviewed, and removed in one go
with Undo or by deleting them. Papers it merged into were there before and
are not listed: deleting them would lose more than the import brought.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer
from PySide6.QtGui import QUndoStack

from ..core.library import Change, FileReport, Library
from .commands import ImportPapers

if TYPE_CHECKING:
    from .events import LibraryEvents
    from .filters import FilterPanel
    from .query_state import QueryState


def tr(text: str) -> str:
    """`text` in the user's language."""
    return QCoreApplication.translate("LastImport", text)


def _file_label(path: str) -> str:
    if path.startswith("<"):
        return tr("pasted text")
    return Path(path).name or path


LABEL_CHARS = 60  # an undo step's label, as the Edit menu shows it ("Undo Import of …")


def files_named(names: list[str], fits: Callable[[str], bool]) -> str:
    """The files' names, as many as `fits` allows, then "and 48 more": "a.pdf, b.pdf and 48 more";
    one name too long on its own is cut with "…"."""
    for k in range(len(names), 0, -1):
        more = len(names) - k
        text = ", ".join(names[:k]) + (tr(" and %s more") % f"{more:,}" if more else "")
        if fits(text):
            return text
    first = names[0] if names else ""
    more = len(names) - 1
    tail = tr(" and %s more") % f"{more:,}" if more else ""
    while len(first) > 1 and not fits(first + "…" + tail):
        first = first[:-1]
    return first + "…" + tail


def import_label(names: list[str], added: int, merged: int) -> str:
    """ "Import of a.pdf, b.pdf and 48 more (50 papers)": at most LABEL_CHARS characters."""
    if added == 1:
        words, n = tr("Import of %(files)s (1 paper)"), 1
    elif added:
        words, n = tr("Import of %(files)s (%(n)s papers)"), added
    else:
        words, n = tr("Import of %(files)s (%(n)s merged)"), merged

    def label(files: str) -> str:
        return words % {"files": files, "n": f"{n:,}"}

    return label(files_named(names, lambda text: len(label(text)) <= LABEL_CHARS))


class LastImport(QObject):
    """The undoable import steps (on `undo_stack`) and the entry of the latest one in the sidebar
    (`panel`), which filters the list's query (`state`) while chosen (see the module)."""

    def __init__(
        self,
        library: Library,
        undo_stack: QUndoStack,
        events: LibraryEvents,
        panel: FilterPanel,
        state: QueryState,
        closing: Callable[[], bool],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.library, self.undo_stack, self.closing = library, undo_stack, closing
        self.panel, self.state = panel, state
        self.ids: frozenset[str] = frozenset()
        # the newest step and its reports (those of the import it completes, once merged)
        self._latest: tuple[ImportPapers, list[FileReport] | None] | None = None
        # a change arrives while an undo runs, before the stack has moved: look once it has
        self._later = QTimer(self, singleShot=True, interval=0)
        self._later.timeout.connect(self.refresh)
        undo_stack.indexChanged.connect(self._stack_moved)
        events.changed.connect(self._library_changed)

    def record(self, reports: list[FileReport], completes: list[FileReport] | None = None) -> None:
        """Make a finished import one undoable step (nothing to undo: no step).
        `completes`: the reports of the import this one finishes (the rest of the
        same drop, imported while a file waited for its preview); if that import
        is still the newest step, the two become one."""
        stack = self.undo_stack
        follows = None
        if (
            completes is not None
            and self._latest is not None
            and self._latest[1] is completes
            and stack.index() == stack.count()
            and stack.command(stack.count() - 1) is self._latest[0]
        ):
            follows = self._latest[0]
            reports = [*completes, *reports]
        if not any(r.added or r.merged for r in reports):
            return
        added = sum(r.added for r in reports)
        names = [_file_label(r.path) for r in reports if r.added or r.merged]
        label = import_label(names, added, sum(r.merged for r in reports))
        cmd = ImportPapers(self.library, reports, label)
        cmd.follows = follows
        self._latest = (follows or cmd, reports if follows is None else completes)
        stack.push(cmd)
        if follows is not None:  # merged into the step below: the stack did not move
            self.refresh()

    def command(self) -> ImportPapers | None:
        """The newest import step the undo stack still applies, if any."""
        stack = self.undo_stack
        for n in range(stack.index() - 1, -1, -1):
            cmd = stack.command(n)
            if isinstance(cmd, ImportPapers):
                return cmd
        return None

    def refresh(self) -> None:
        """Show the papers the latest applied import added and that are still here (or hide the entry)."""
        cmd = self.command()
        ids = self.library.present(cmd.added_ids) if cmd is not None else []
        self.ids = frozenset(ids)
        panel, state = self.panel, self.state
        if ids and cmd is not None:
            files = files_named([_file_label(f) for f in cmd.files], lambda text: len(text) <= 200)
            panel.set_last_import(tr("Last import"), len(ids), tr("Papers added by importing %s") % files)
        else:
            panel.set_last_import("", 0, "")
        active = panel.active.get("import")
        if active and state.query.only_ids != (self.ids or None):
            if not ids:
                panel.clear_filter("import")
            state.query = state.query.with_(only_ids=self.ids or None)
            state.run()

    def _stack_moved(self, _index: int) -> None:
        # the stack clears itself (and says so) while the window is being destroyed
        if not self.closing() and shiboken6.isValid(self.undo_stack):
            self.refresh()

    def _library_changed(self, change: Change) -> None:
        if change.kind in ("papers-added", "papers-removed") and not self.closing():
            self._later.start()
