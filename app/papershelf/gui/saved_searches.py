"""Saved searches in the window: save the current words and filters under a
name, show them in the sidebar with live counts, apply, rename, delete and
export them.

The library keeps them (`Library.saved_searches`, …: small files in the
library folder, one per device, merged). Their counts are searches like any other, so they run off
the GUI thread (one background task at a time; a recount asked for meanwhile
runs once it ends), after the library changed and the window's own search
has answered (by then the index has the edits), and when the index opens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from ..core.errors import PapershelfError
from ..core.library import FILTER_KEYS, Library, SavedSearch
from ..core.query import Query
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .filters import FilterPanel
    from .query_state import QueryState
    from .status_line import StatusLine

# the sidebar's group for each filter a saved search keeps
PANEL_KINDS = {"status": "status", "tag": "tag", "area": "area", "list_name": "list"}


def query_filters(query: Query) -> dict[str, str]:
    """The sidebar's filters of a query, as a saved search keeps them."""
    return {key: value for key in FILTER_KEYS if (value := getattr(query, key))}


def applies(search: SavedSearch, query: Query) -> bool:
    """Whether the window's query is this saved search's (whatever its order)."""
    return query.only_ids is None and query.text == search.text and query_filters(query) == dict(search.filters)


def counting_query(search: SavedSearch) -> Query:
    """The cheapest search that still counts every match."""
    return search.query(limit=1, facets=False, highlight=False, suggest=False, index_order=True)


class SavedSearches(QObject):
    """The saved searches: the sidebar's (`panel`'s) entries, their counts and their requests.
    Applying one sets the search box and the list's query (`state`); `export_ids(ids, name)`
    exports the papers one finds; `closing()`: the window closes (a count ending then is dropped).
    The window calls `stop` before it closes its library."""

    def __init__(
        self,
        library: Library,
        panel: FilterPanel,
        search_box: QLineEdit,
        state: QueryState,
        status: StatusLine,
        *,
        export_ids: Callable[[list[str], str], None],
        closing: Callable[[], bool],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.library, self.panel, self.search_box, self.state, self.status = library, panel, search_box, state, status
        self.export_ids, self.closing = export_ids, closing
        self.dialog_parent = parent  # the questions it asks sit over it
        self.counts: dict[str, int | None] = {}  # name → papers found (None: not counted yet or failed)
        self.errors: dict[str, str] = {}  # name → why it could not be counted
        self.searches: dict[str, SavedSearch] = {}
        self._task: Task | None = None
        self._export: Task | None = None
        self._again = False  # a recount was asked for while one ran
        self._counted_at: tuple[int, int] | None = None  # the library's generation the counts are of
        panel.renameSavedRequested.connect(self.rename)
        panel.deleteSavedRequested.connect(self.delete)
        panel.saveSearchRequested.connect(self.save_current)
        state.answered.connect(self._answered)
        search_box.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        search_box.customContextMenuRequested.connect(self._search_box_menu)
        self.reload()

    # ---- what the sidebar shows -----------------------------------------------------------
    def reload(self) -> None:
        """Read the saved searches again, show them and count them."""
        self.searches = self.library.saved_searches()
        self.counts = {name: self.counts.get(name) for name in self.searches}
        self.show()
        self.recount()

    def show(self) -> None:
        """Fill the sidebar's saved searches, with the counts known so far."""
        panel = self.panel
        if panel.active.get("saved") not in self.searches:
            panel.active["saved"] = None
        rows = []
        for name in sorted(self.searches, key=str.casefold):
            tip = self.searches[name].describe()
            if name in self.errors:
                tip += "\n" + self.errors[name]
            rows.append((name, self.counts.get(name), tip))
        panel.set_saved(rows)

    def recount(self) -> None:
        """Count each saved search's papers in the background (once the running count ends)."""
        if self.closing() or not self.searches:
            return
        if self._task is not None:
            self._again = True
            return
        lib, queries = self.library, {name: counting_query(s) for name, s in self.searches.items()}
        generation = lib.generation

        def count(_progress, cancelled) -> tuple[dict[str, int | None], dict[str, str]]:
            counts: dict[str, int | None] = {}
            errors: dict[str, str] = {}
            for name, query in queries.items():
                if cancelled():
                    break
                try:
                    answer = lib.search(query)
                    # from a rebuild under way: not a count yet (counted again when the index is ready)
                    counts[name] = answer.total if answer.building is None else None
                except PapershelfError as exc:  # a list since deleted: said in the tooltip
                    counts[name], errors[name] = None, str(exc)
            return counts, errors

        def done(result: tuple[dict[str, int | None], dict[str, str]]) -> None:
            self._task = None
            if self.closing():
                return
            self._counted_at = generation
            counts, self.errors = result
            self.counts.update({name: n for name, n in counts.items() if name in self.searches})
            self.show()
            if self._again:
                self._again = False
                self.recount()

        def failed(exc: BaseException) -> None:
            self._task = None
            self._again = False

        self._task = run_task(count, parent=self, name="papershelf-saved-counts", on_done=done, on_error=failed)

    def _answered(self) -> None:
        # the window's search answered: the index has the edits made before it
        panel = self.panel
        active = panel.active.get("saved")
        if active and (active not in self.searches or not applies(self.searches[active], self.state.query)):
            panel.active["saved"] = None  # words or filters changed since it was applied
            self.show()
        if self._counted_at != self.library.generation:
            self.recount()

    def stop(self) -> None:
        """Before the window closes (and its library with it), the count under way stops."""
        for task in (self._task, self._export):
            if task is not None and not task.finished:
                task.cancel()
                task.wait(30)

    # ---- the requests -----------------------------------------------------------------------
    def apply(self, name: str | None) -> None:
        """Show what a saved search finds: its words in the search box, its filters in
        the sidebar (None: a second click on it shows every paper again)."""
        panel, state = self.panel, self.state
        search = self.searches.get(name) if name else None
        if name and search is None:
            return
        text = search.text if search else ""
        filters = dict(search.filters) if search else {}
        for key, kind in PANEL_KINDS.items():
            panel.active[kind] = filters.get(key)
        panel.active["import"] = None
        panel.active["saved"] = name
        self.search_box.setText(text)
        state.query = state.query.with_(text=text, only_ids=None, **{key: filters.get(key) for key in FILTER_KEYS})
        self.show()
        state.run()

    def save_current(self) -> None:
        """Ask for a name and save the search box's words and the sidebar's filters under it."""
        query = self.state.query.with_(text=self.search_box.text())
        filters = query_filters(query)
        if not query.text.strip() and not filters:
            self.status.say(self.tr("Type some words or choose a filter first: that is what is saved."), 5000)
            return
        suggested = query.text.strip() or " ".join(filters.values())
        name, ok = QInputDialog.getText(
            self.dialog_parent,
            self.tr("Save Search"),
            self.tr("Name for this search (its words and filters):"),
            text=suggested,
        )
        if not ok or not name.strip():
            return
        taken = next((n for n in self.searches if n.casefold() == " ".join(name.split()).casefold()), None)
        if taken is not None:
            answer = QMessageBox.question(
                self.dialog_parent, self.tr("Save Search"), self.tr("Replace the saved search “%s”?") % taken
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        try:
            saved = self.library.save_search(name, query.text, filters)
        except PapershelfError as exc:
            self.status.error(self.tr("Could not save the search"), str(exc))
            return
        self.counts.pop(saved, None)
        self.panel.active["saved"] = saved
        self.reload()
        self.status.say(self.tr("Saved the search “%s”.") % saved, 4000)

    def rename(self, name: str) -> None:
        """Ask for a saved search's new name and rename it."""
        new, ok = QInputDialog.getText(
            self.dialog_parent, self.tr("Rename saved search"), self.tr("New name:"), text=name
        )
        if not ok or not new.strip() or new.strip() == name:
            return
        try:
            new = self.library.rename_saved_search(name, new)
        except PapershelfError as exc:
            self.status.error(self.tr("Could not rename the saved search"), str(exc))
            return
        if name in self.counts:
            self.counts[new] = self.counts.pop(name)
        if self.panel.active.get("saved") == name:
            self.panel.active["saved"] = new
        self.reload()

    def delete(self, name: str) -> None:
        """Forget a saved search, after asking (the papers it finds stay)."""
        answer = QMessageBox.question(
            self.dialog_parent,
            self.tr("Delete saved search"),
            self.tr("Delete the saved search “%s”? The papers it finds stay in the library.") % name,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.library.delete_saved_search(name)
        except PapershelfError as exc:
            self.status.error(self.tr("Could not delete the saved search"), str(exc))
            return
        self.reload()

    def export(self, name: str) -> None:
        """Export the papers a saved search finds now, in its order, as a reading list is exported."""
        search = self.searches.get(name)
        if search is None:
            return
        lib, query = self.library, search.query(facets=False, highlight=False, suggest=False)

        def find(_progress, _cancelled) -> list[str]:
            answer = lib.search(query)
            # a partial answer is never exported as if it were the whole: said, and nothing written
            if answer.building is not None:
                done, total = answer.building
                raise PapershelfError(
                    self.tr("The search index is being built (%s of %s papers so far): export again when it is done.")
                    % (f"{done:,}", f"{total:,}")
                )
            if not answer.indexed:
                raise PapershelfError(
                    self.tr("The search index is not ready (only titles could be matched): export it again once it is.")
                )
            return answer.ids

        def found(ids: list[str]) -> None:
            self._export = None
            if not self.closing():
                self.export_ids(ids, name)

        def failed(exc: BaseException) -> None:
            self._export = None
            if not self.closing():
                self.status.error(self.tr("Could not export the saved search"), str(exc))

        if self._export is None:
            self._export = run_task(find, parent=self, name="papershelf-saved-export", on_done=found, on_error=failed)

    def _search_box_menu(self, pos: QPoint) -> None:
        box = self.search_box
        menu = box.createStandardContextMenu()
        menu.addSeparator()
        action = menu.addAction(self.tr("Save Search…"), self.save_current)
        action.setObjectName("saveSearchAction")
        menu.exec(box.mapToGlobal(pos))
        menu.deleteLater()
