"""The sidebar's side of the window: filters chosen, tags and reading lists renamed,
coloured, deleted or exported from it, saved searches applied (`SavedSearches`),
and the counts it shows.

The counts come with each answer of the search index; while the index is
not open, and right after an edit (which reaches the index a moment later),
they are worked out from the library (`core.overview.shown_counts`). A count
of more than `COUNT_HERE` papers (the first rows of a large library, before
its index answers: 0.5 s at 100,000 papers), and the tag panel's tags of a
library that large (two passes over every paper's tags), are worked out on a
worker thread, so the window shows its rows and takes keys meanwhile; the
newest request wins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QColorDialog, QInputDialog, QMessageBox, QWidget

from ..core import overview
from ..core.library import Library
from ..core.paper import normalize_tag
from ..core.query import Answer, Query
from .feedback import n_papers, quoted
from .filters import FilterPanel, set_tag_color, tag_color
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .edits import Edits
    from .import_export import ImportExport
    from .last_import import LastImport
    from .list_pane import ListPane
    from .query_state import QueryState
    from .saved_searches import SavedSearches
    from .tag_panel import TagPanel


COUNT_HERE = overview.RECOUNT_LIMIT  # more papers than this are counted on a worker thread


def shows_everything(query: Query) -> bool:
    """Whether the query shows the whole library (no words, no filter)."""
    return query.only_ids is None and not (
        query.text.strip() or query.status or query.tag or query.area or query.list_name
    )


class SidebarController(QObject):
    """Answers the sidebar's (`panel`'s) requests, and fills its counts and the tag panel's lists.
    A filter chosen changes the list's query (`state`); a tag or list renamed or deleted is an
    undoable step of `edits`; an export goes to `transfers`."""

    countsShown = Signal()  # the sidebar's counts changed: its width may follow its names

    def __init__(
        self,
        panel: FilterPanel,
        tag_panel: TagPanel,
        library: Library,
        state: QueryState,
        *,
        edits: Edits,
        saved: SavedSearches,
        last_import: LastImport,
        transfers: ImportExport,
        pane: ListPane,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.panel, self.tag_panel, self.library, self.state = panel, tag_panel, library, state
        self.edits, self.saved, self.last_import, self.transfers, self.pane = edits, saved, last_import, transfers, pane
        self.dialog_parent = parent  # the questions it asks sit over it
        self._asked: dict[str, int] = {}  # kind of background count → the newest asked for
        self._tasks: list[Task] = []
        self.stopped = False
        panel.filterChosen.connect(self.filter_chosen)
        panel.renameTagRequested.connect(self.rename_tag)
        panel.deleteTagRequested.connect(self.delete_tag)
        panel.colorTagRequested.connect(self.color_tag)
        panel.renameListRequested.connect(self.rename_list)
        panel.deleteListRequested.connect(self.delete_list)
        panel.exportRequested.connect(self.export)

    def filter_chosen(self, kind: str, value: object) -> None:
        """Show the papers of a sidebar entry (value None: the entry's group unfiltered)."""
        state = self.state
        if kind == "saved":
            self.saved.apply(value if isinstance(value, str) else None)
            return
        if kind == "import":
            state.query = state.query.with_(only_ids=self.last_import.ids if value else None)
        else:
            field = {"status": "status", "tag": "tag", "area": "area", "list": "list_name"}[kind]
            state.query = state.query.with_(**{field: value})
        state.run()

    # ---- tags -------------------------------------------------------------------------
    def rename_tag(self, tag: str) -> None:
        """Ask for a tag's new name and rename it on every paper (onto an existing tag: merge)."""
        lib, state = self.library, self.state
        new, ok = QInputDialog.getText(
            self.dialog_parent,
            self.tr("Rename tag"),
            self.tr("New name for “%s” (an existing tag's name merges the two):") % tag,
            text=tag,
        )
        if not ok or not new.strip() or new.strip() == tag:
            return
        ids = overview.tag_rename_ids(lib, tag)
        # the saved searches that use it follow the new name (and go back with Undo)
        rename = self.edits.edit(
            self.tr("Rename tag %s") % tag, ids, lambda: lib.rename_tag(tag, new), touches_saved=True
        )
        if rename is not None:
            if self.panel.active["tag"] == tag:
                self.panel.active["tag"] = None
                state.query = state.query.with_(tag=None)
            color, renamed = tag_color(tag), normalize_tag(new)  # the colour goes with the name
            if color and not tag_color(renamed):
                set_tag_color(renamed, color)
            self.refresh_lists_and_tags()
            self.saved.reload()

    def delete_tag(self, tag: str) -> None:
        """Take a tag off every paper, after asking with how many papers and which saved
        searches use it (Undo puts it back)."""
        lib, state = self.library, self.state
        ids = overview.tag_rename_ids(lib, tag)
        using = lib.saved_searches_using(tag)
        text = self.tr("Delete the tag “%s” from %s? The papers stay in the library.") % (tag, n_papers(len(ids)))
        if using:
            text += "\n\n" + self.tr("These saved searches use it and will find nothing by it: %s.") % quoted(using)
        answer = QMessageBox.question(
            self.dialog_parent,
            self.tr("Delete tag"),
            text + "\n\n" + self.tr("Edit ▸ Undo brings it back."),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        n = self.edits.edit(self.tr("Delete tag %s") % tag, ids, lambda: lib.delete_tag(tag))
        self.edits.say_edited("deletetag", n, quoted([tag]))
        if n is not None and self.panel.active["tag"] == tag:
            self.panel.active["tag"] = None
            state.query = state.query.with_(tag=None)
        self.refresh_lists_and_tags()
        state.run()

    def color_tag(self, tag: str) -> None:
        """Let the person pick the colour the tag's chips and entry show."""
        color = QColorDialog.getColor(
            QColor(tag_color(tag) or "#ddf4ff"), self.dialog_parent, self.tr("Colour of %s") % tag
        )
        if color.isValid():
            set_tag_color(tag, color.name())
            self.state.run()
            self.pane.selection_changed()

    # ---- reading lists ------------------------------------------------------------------
    def rename_list(self, name: str) -> None:
        """Ask for a reading list's new name and rename it."""
        lib = self.library
        new, ok = QInputDialog.getText(
            self.dialog_parent, self.tr("Rename reading list"), self.tr("New name:"), text=name
        )
        if not ok or not new.strip() or new.strip() == name:
            return
        members = lib.list_ids(name)
        if (
            self.edits.edit(
                self.tr("Rename list %s") % name,
                members or [name],
                lambda: lib.rename_list(name, new),
                touches_lists=True,
            )
            is not None
        ):
            self._list_gone(name)

    def delete_list(self, name: str) -> None:
        """Delete a reading list, after asking; its papers stay in the library."""
        lib = self.library
        answer = QMessageBox.question(
            self.dialog_parent,
            self.tr("Delete reading list"),
            self.tr("Delete the reading list “%s”? The papers stay in the library.") % name,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        members = lib.list_ids(name)
        if (
            self.edits.edit(
                self.tr("Delete list %s") % name,
                members or [name],
                lambda: lib.delete_list(name),
                touches_lists=True,
            )
            is not None
        ):
            self._list_gone(name)

    def _list_gone(self, name: str) -> None:
        state = self.state
        if state.query.list_name == name:
            self.panel.active["list"] = None
            state.query = state.query.with_(list_name=None)
        self.refresh_lists_and_tags()
        state.run()

    def export(self, kind: str, value: str) -> None:
        """Export the papers of a sidebar entry (a reading list, a tag, a status or a saved search)."""
        if kind == "saved":
            self.saved.export(value)
            return
        self.transfers.export_ids(overview.sidebar_export_ids(self.library, kind, value), value)

    def refresh_lists_and_tags(self) -> None:
        """The tag panel's completions, number-key tags and reading-list menu, as the library has them now
        (the tags of a library of more than `COUNT_HERE` papers a moment later, from a worker thread)."""
        panel, lib = self.tag_panel, self.library
        panel.set_lists(sorted(lib.lists(), key=str.casefold))
        if len(lib) <= COUNT_HERE:
            self._show_tags(self._tags())
            return
        self._in_background("tags", lambda: self._tags(tries=5), self._show_tags)

    def _tags(self, tries: int = 1) -> tuple[list[str], list[str]] | None:
        """Every tag and the number keys' tags (None: edits kept changing the papers mid-count)."""
        for _ in range(tries):
            try:
                return sorted(self.library.tag_counts()), overview.top_tags(self.library)
            except RuntimeError:  # a worker's count: an edit changed the papers mid-count
                continue
        return None

    def _show_tags(self, tags: tuple[list[str], list[str]] | None) -> None:
        if tags is not None:
            self.tag_panel.set_known_tags(tags[0])
            self.tag_panel.set_key_tags(tags[1])

    def _in_background(self, kind: str, work: Callable[[], Any], show: Callable[[Any], None]) -> None:
        """Run `work` on a worker thread and `show` its result, unless a newer one of `kind` was asked for."""
        self._asked[kind] = asked = self._asked.get(kind, 0) + 1

        def done(result: Any) -> None:
            if self._asked.get(kind) == asked and not self.stopped:
                show(result)

        task = run_task(lambda _progress, _cancelled: work(), parent=self, name=f"papershelf-{kind}", on_done=done)
        self._tasks = [t for t in self._tasks if not t.finished] + [task]

    def stop(self) -> None:
        """The window closes: the counts under way end before the library does, and show nothing."""
        self.stopped = True
        for task in self._tasks:
            task.wait(30)

    # ---- counts -------------------------------------------------------------------------
    def _show(self, counts: overview.Counts) -> None:
        self.panel.set_counts(counts.status, counts.tags, counts.area, counts.lists, counts.total)
        self.countsShown.emit()

    def update_counts(self, answer: Answer) -> None:
        """The counts of the papers an answer shows: the index's, or the library's while it has none."""
        lib = self.library
        shown = None if shows_everything(answer.query) else answer.ids
        if answer.facets:
            facets = answer.facets
            self._show(
                overview.Counts(
                    facets.get("status", {}),
                    facets.get("tags", {}),
                    facets.get("area", {}),
                    overview.list_counts(lib, None if shown is None else set(shown)),
                    answer.total,
                )
            )
        elif (len(lib) if shown is None else len(shown)) <= COUNT_HERE:  # no index yet: counted from the library
            self._show(overview.shown_counts(lib, shown, answer.total))
        else:  # on a worker, shown if the list still shows this answer
            self._in_background(
                "counts",
                lambda: overview.shown_counts(lib, shown, answer.total),
                lambda counts: self._show(counts) if self.state.last_answer is answer else None,
            )

    def recount_shown(self) -> None:
        """Counts of the papers shown, from the library, right after an edit."""
        ids, state = self.pane.model.ids(), self.state
        if state.last_answer is None or len(ids) > overview.RECOUNT_LIMIT:
            return  # the index's next answer brings them, a moment later
        self._show(overview.shown_counts(self.library, None if shows_everything(state.query) else ids))
