"""The sidebar's side of the window: filters chosen, tags and reading lists renamed,
coloured, deleted or exported from it, saved searches applied (`SavedSearches`),
and the counts it shows.

The counts come with each answer of the search index; while the index is
not open, and right after an edit (which reaches the index a moment later),
they are worked out from the library (`core.overview.shown_counts`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QColorDialog, QInputDialog, QMessageBox

from ..core import overview
from ..core.paper import normalize_tag
from ..core.query import Answer, Query
from . import window_state
from .feedback import n_papers, quoted
from .filters import set_tag_color, tag_color
from .saved_searches import SavedSearches

if TYPE_CHECKING:
    from .main_window import MainWindow


def shows_everything(query: Query) -> bool:
    """Whether the query shows the whole library (no words, no filter)."""
    return query.only_ids is None and not (
        query.text.strip() or query.status or query.tag or query.area or query.list_name
    )


class SidebarController(QObject):
    """Answers `window.filter_panel`'s requests, and fills its counts and the tag panel's lists."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        panel = window.filter_panel
        panel.filterChosen.connect(self.filter_chosen)
        panel.renameTagRequested.connect(self.rename_tag)
        panel.deleteTagRequested.connect(self.delete_tag)
        panel.colorTagRequested.connect(self.color_tag)
        panel.renameListRequested.connect(self.rename_list)
        panel.deleteListRequested.connect(self.delete_list)
        panel.exportRequested.connect(self.export)
        self.saved = SavedSearches(window)

    def filter_chosen(self, kind: str, value: object) -> None:
        """Show the papers of a sidebar entry (value None: the entry's group unfiltered)."""
        win = self.window
        if kind == "saved":
            self.saved.apply(value if isinstance(value, str) else None)
            return
        if kind == "import":
            win.query = win.query.with_(only_ids=win.last_import.ids if value else None)
        else:
            field = {"status": "status", "tag": "tag", "area": "area", "list": "list_name"}[kind]
            win.query = win.query.with_(**{field: value})
        win.run_search()

    # ---- tags -------------------------------------------------------------------------
    def rename_tag(self, tag: str) -> None:
        """Ask for a tag's new name and rename it on every paper (onto an existing tag: merge)."""
        win = self.window
        new, ok = QInputDialog.getText(
            win,
            self.tr("Rename tag"),
            self.tr("New name for “%s” (an existing tag's name merges the two):") % tag,
            text=tag,
        )
        if not ok or not new.strip() or new.strip() == tag:
            return
        ids = overview.tag_rename_ids(win.library, tag)
        # the saved searches that use it follow the new name (and go back with Undo)
        rename = win.edits.edit(
            self.tr("Rename tag %s") % tag, ids, lambda: win.library.rename_tag(tag, new), touches_saved=True
        )
        if rename is not None:
            if win.filter_panel.active["tag"] == tag:
                win.filter_panel.active["tag"] = None
                win.query = win.query.with_(tag=None)
            color, renamed = tag_color(tag), normalize_tag(new)  # the colour goes with the name
            if color and not tag_color(renamed):
                set_tag_color(renamed, color)
            self.refresh_lists_and_tags()
            self.saved.reload()

    def delete_tag(self, tag: str) -> None:
        """Take a tag off every paper, after asking with how many papers and which saved
        searches use it (Undo puts it back)."""
        win = self.window
        ids = overview.tag_rename_ids(win.library, tag)
        using = win.library.saved_searches_using(tag)
        text = self.tr("Delete the tag “%s” from %s? The papers stay in the library.") % (tag, n_papers(len(ids)))
        if using:
            text += "\n\n" + self.tr("These saved searches use it and will find nothing by it: %s.") % quoted(using)
        answer = QMessageBox.question(
            win,
            self.tr("Delete tag"),
            text + "\n\n" + self.tr("Edit ▸ Undo brings it back."),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        n = win.edits.edit(self.tr("Delete tag %s") % tag, ids, lambda: win.library.delete_tag(tag))
        win.edits.say_edited("deletetag", n, quoted([tag]))
        if n is not None and win.filter_panel.active["tag"] == tag:
            win.filter_panel.active["tag"] = None
            win.query = win.query.with_(tag=None)
        self.refresh_lists_and_tags()
        win.run_search()

    def color_tag(self, tag: str) -> None:
        """Let the person pick the colour the tag's chips and entry show."""
        win = self.window
        color = QColorDialog.getColor(QColor(tag_color(tag) or "#ddf4ff"), win, self.tr("Colour of %s") % tag)
        if color.isValid():
            set_tag_color(tag, color.name())
            win.run_search()
            win.pane.selection_changed()

    # ---- reading lists ------------------------------------------------------------------
    def rename_list(self, name: str) -> None:
        """Ask for a reading list's new name and rename it."""
        win = self.window
        new, ok = QInputDialog.getText(win, self.tr("Rename reading list"), self.tr("New name:"), text=name)
        if not ok or not new.strip() or new.strip() == name:
            return
        members = win.library.list_ids(name)
        if (
            win.edits.edit(
                self.tr("Rename list %s") % name,
                members or [name],
                lambda: win.library.rename_list(name, new),
                touches_lists=True,
            )
            is not None
        ):
            self._list_gone(name)

    def delete_list(self, name: str) -> None:
        """Delete a reading list, after asking; its papers stay in the library."""
        win = self.window
        answer = QMessageBox.question(
            win,
            self.tr("Delete reading list"),
            self.tr("Delete the reading list “%s”? The papers stay in the library.") % name,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        members = win.library.list_ids(name)
        if (
            win.edits.edit(
                self.tr("Delete list %s") % name,
                members or [name],
                lambda: win.library.delete_list(name),
                touches_lists=True,
            )
            is not None
        ):
            self._list_gone(name)

    def _list_gone(self, name: str) -> None:
        win = self.window
        if win.query.list_name == name:
            win.filter_panel.active["list"] = None
            win.query = win.query.with_(list_name=None)
        self.refresh_lists_and_tags()
        win.run_search()

    def export(self, kind: str, value: str) -> None:
        """Export the papers of a sidebar entry (a reading list, a tag, a status or a saved search)."""
        win = self.window
        if kind == "saved":
            self.saved.export(value)
            return
        win.transfers.export_ids(overview.sidebar_export_ids(win.library, kind, value), value)

    def refresh_lists_and_tags(self) -> None:
        """The tag panel's completions, number-key tags and reading-list menu, as the library has them now."""
        win, lib = self.window, self.window.library
        win.tag_panel.set_known_tags(sorted(lib.tag_counts()))
        win.tag_panel.set_key_tags(overview.top_tags(lib))
        win.tag_panel.set_lists(sorted(lib.lists(), key=str.casefold))

    # ---- counts -------------------------------------------------------------------------
    def _show(self, counts: overview.Counts) -> None:
        self.window.filter_panel.set_counts(counts.status, counts.tags, counts.area, counts.lists, counts.total)
        window_state.fit_sidebar(self.window)

    def update_counts(self, answer: Answer) -> None:
        """The counts of the papers an answer shows: the index's, or the library's while it has none."""
        lib = self.window.library
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
        else:  # no index yet: counted from the library
            self._show(overview.shown_counts(lib, shown, answer.total))

    def recount_shown(self) -> None:
        """Counts of the papers shown, from the library, right after an edit."""
        win = self.window
        ids = win.model.ids()
        if win.last_answer is None or len(ids) > overview.RECOUNT_LIMIT:
            return  # the index's next answer brings them, a moment later
        self._show(overview.shown_counts(win.library, None if shows_everything(win.query) else ids))
