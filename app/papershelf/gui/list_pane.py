"""The middle column: the search box over the paper list (or, for an empty
library, a page that offers the samples), and the query they make.

Typing, a column's sort and a new answer change what the list shows; the
selection is kept across answers where its papers are still shown, and
what is selected shows in the abstract and tagging panels. A paper an edit
changed while it was shown keeps its row until the query changes (the next
search, sort or filter): marked Read under a "To read" filter, it does not
vanish from under the pointer when the answer is refreshed.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.library import Library
from ..core.query import Answer, Query
from .columns import ColumnChooser
from .dialogs import search_as_you_type
from .feedback import n_papers, no_results
from .paper_model import PaperTableModel

if TYPE_CHECKING:
    from .abstract_view import AbstractView
    from .query_state import QueryState
    from .status_line import StatusLine
    from .tag_panel import TagPanel

RESELECT_LIMIT = 2000  # a larger selection is not carried over to the next answer


class ListPane(QWidget):
    """The search box, the paper list (`view`, over `model`) and the empty-library page.
    It asks `state` for the answer to the query the box and headers make, shows the answer
    (its count in `result_label`), and the selection in `tag_panel` and `abstract_view`;
    `index_open()`: the search index is open (its words are marked in the abstract)."""

    indexDamaged = Signal(bool)  # an answer said whether the search index was found damaged
    countsDue = Signal(object)  # an answer shown: the sidebar's counts are those of this Answer

    def __init__(
        self,
        library: Library,
        state: QueryState,
        status: StatusLine,
        *,
        tag_panel: TagPanel,
        abstract_view: AbstractView,
        result_label: QLabel,
        index_open: Callable[[], bool],
        parent: QWidget,
    ) -> None:
        super().__init__()
        self.library, self.state, self.status, self.result_label = library, state, status, result_label
        self.tag_panel, self.abstract_view, self.index_open = tag_panel, abstract_view, index_open
        self.kept: set[str] = set()  # edited while shown: they keep their rows until the query changes
        self.search_box = QLineEdit()
        self.search_box.setObjectName("searchBox")
        self.search_box.setAccessibleName(self.tr("Search"))
        self.search_box.setPlaceholderText(self.tr("Search titles, abstracts, authors…  (Ctrl+F)"))
        self.search_box.setClearButtonEnabled(True)
        self.search_box.textEdited.connect(self.query_typed)
        self.search_box.returnPressed.connect(state.run)
        state.suggested.connect(self.show_suggestion)

        self.model = PaperTableModel(library, parent)
        self.model.sortRequested.connect(self.sort_requested)
        view = self.view = QTableView()
        view.setObjectName("paperList")
        view.setAccessibleName(self.tr("Papers"))
        view.setModel(self.model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setTabKeyNavigation(False)  # Tab leaves the list (for the viewer); arrows move between papers
        view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        view.horizontalHeader().setSortIndicatorClearable(True)
        self.model.blockSignals(True)  # enabling sorting sorts once; the search decides the order
        view.setSortingEnabled(True)
        self.model.blockSignals(False)
        view.setWordWrap(False)
        view.setAlternatingRowColors(True)
        view.setShowGrid(False)
        view.verticalHeader().hide()
        view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        view.verticalHeader().setDefaultSectionSize(parent.fontMetrics().height() + 8)
        self.columns = ColumnChooser(view)
        view.selectionModel().selectionChanged.connect(self.selection_changed)

        empty = QWidget()
        empty.setObjectName("emptyState")
        box = QVBoxLayout(empty)
        box.addStretch(1)
        message = QLabel(
            self.tr(
                "<h3>Your library is empty</h3><p>Import conference listings, "
                "Daily Papers digests or BibTeX files (File ▸ Import, or drop them here), "
                "or start with the sample library.</p>"
            )
        )
        message.setWordWrap(True)
        message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        box.addWidget(message)
        self.samples_button = QPushButton(self.tr("Open the sample library"))
        self.samples_button.setObjectName("loadSamplesButton")
        self.samples_button.setAccessibleName(self.tr("Open the sample library"))
        box.addWidget(self.samples_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.import_button = QPushButton(self.tr("Import files…"))
        self.import_button.setObjectName("emptyImportButton")
        box.addWidget(self.import_button, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addStretch(2)
        self.stack = QStackedWidget()
        self.stack.addWidget(view)
        self.stack.addWidget(empty)

        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.search_box)
        column.addWidget(self.stack, 1)

    def update_empty_state(self) -> None:
        """The list, or for an empty library the page that offers the samples."""
        self.stack.setCurrentIndex(1 if len(self.library) == 0 else 0)

    # ---- the query -----------------------------------------------------------------------
    def query_typed(self, text: str) -> None:
        """New words in the search box: search as they are typed (if so set), or on Enter."""
        state = self.state
        state.query = state.query.with_(text=text)
        if search_as_you_type() or not text:
            state.soon()

    def focus_search(self) -> None:
        """Put the cursor in the search box, its words selected (Ctrl+F)."""
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def clear_search(self) -> None:
        """Empty the search box and show what the filters alone show (Esc)."""
        state = self.state
        if self.search_box.text():
            self.search_box.clear()
            state.query = state.query.with_(text="")
            state.run()

    def sort_requested(self, column: str, descending: bool) -> None:
        """A click on a column header: sort the answer by it."""
        state = self.state
        state.query = state.query.with_(sort=column, descending=descending)
        state.run()

    def show_library_now(self) -> None:
        """The first rows without waiting for any thread: the whole library,
        newest first (the order the index gives an empty query). Counts follow
        a moment later, sorted views and filters go through the search."""
        state = self.state
        query = state.query
        if query != Query(sort=query.sort, descending=query.descending) or query.sort != "relevance":
            state.run()
            return
        ids = self.library.ids()
        ids.reverse()
        state.last_answer = Answer(query, ids, len(ids), indexed=False)
        self.model.set_ids(ids)
        self.result_label.setText(n_papers(len(ids)))
        self.update_empty_state()
        QTimer.singleShot(0, self._count_first_rows)

    def _count_first_rows(self) -> None:
        # the answer shown by now: the index may have answered already, with its counts
        answer = self.state.last_answer
        if answer is not None and answer.facets == {}:
            self.countsDue.emit(answer)

    @Slot(object)
    def show_answer(self, answer: Answer) -> None:
        """Show the search thread's answer, if it is still to the current query;
        keep the selection where its papers are still shown."""
        state = self.state
        self.indexDamaged.emit(answer.index_damaged)
        if answer.query != state.query:
            return  # a newer request is on its way
        refreshed = state.last_answer is not None and state.last_answer.query == answer.query
        if not refreshed:
            self.kept.clear()
        state.last_answer = answer
        if answer.error:
            self.status.say(self.tr("Search failed: %s") % answer.error, 8000)
            state.shown()
            return
        selected = self.selected_ids()
        current = self.model.id_at(self.view.currentIndex().row())
        scrolled = self.view.verticalScrollBar().value()
        self.model.set_ids(self.with_kept(answer.ids) if refreshed and self.kept else answer.ids)
        self.reselect(selected, current)
        if refreshed:  # the same query answered again after edits: nothing moves
            self.view.verticalScrollBar().setValue(scrolled)
        elapsed = (time.perf_counter() - state.asked_at) * 1000
        text = n_papers(answer.total)
        if answer.building is not None:  # partial: said, and no close word for what may be found yet
            done, total = answer.building
            text += "  " + self.tr("(searching %s of %s papers; the search index is being built)") % (
                f"{done:,}",
                f"{total:,}",
            )
        elif not answer.total and answer.query.text.strip():
            text = no_results(answer.query.text, answer.suggestion)
            if answer.query.suggest and not answer.suggestion:
                state.suggest_soon(answer)  # a close word once typing pauses
        elif not answer.indexed and answer.query.text.strip():
            text += "  " + self.tr("(search index not ready: matching titles only)")
        elif answer.fallback:
            text += "  " + self.tr("(query not understood; searched its words)")
        self.result_label.setText(text)
        self.result_label.setToolTip(self.tr("Answered in %d ms") % round(elapsed))
        self.countsDue.emit(answer)
        self.update_empty_state()
        state.shown()

    def show_suggestion(self, answer: Answer, suggestion: str) -> None:
        """The close query for an answer that found nothing (if it is still shown)."""
        if answer is self.state.last_answer:
            self.result_label.setText(no_results(answer.query.text, suggestion))

    def keep_shown(self, ids: Iterable[str]) -> None:
        """Papers an edit changed keep their rows, if shown, until the query changes."""
        self.kept.update(pid for pid in ids if self.model.row_of(pid) >= 0)

    def with_kept(self, ids: list[str]) -> list[str]:
        """The refreshed answer `ids` with each kept paper at the row it has now,
        whether or not it still matches (one deleted meanwhile is gone)."""
        library, model = self.library, self.model
        rows = sorted((model.row_of(pid), pid) for pid in self.kept if pid in library and model.row_of(pid) >= 0)
        kept = {pid for _, pid in rows}
        rest = iter([pid for pid in ids if pid not in kept])
        out: list[str] = []
        for row, pid in rows:  # one pass, however many are kept
            out.extend(itertools.islice(rest, max(0, row - len(out))))
            out.append(pid)
        out.extend(rest)
        return out

    # ---- the selection -------------------------------------------------------------------
    def selected_ids(self) -> list[str]:
        """The selected papers, in the list's order."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedRows()})
        return [pid for pid in (self.model.id_at(r) for r in rows) if pid]

    def selection_changed(self, *_args: object) -> None:
        """Show the selected papers in the tagging panel, and one of them in the abstract view."""
        lib = self.library
        papers = [lib.get(pid) for pid in self.selected_ids()[:5000] if pid in lib]
        self.tag_panel.show_selection(papers)
        if len(papers) == 1:
            terms, normal = self.highlight_terms()
            self.abstract_view.show_paper(papers[0], terms, normal)
        else:
            self.abstract_view.show_nothing(len(papers))

    def highlight_terms(self) -> tuple[set[str], Callable[[str], str]] | tuple[None, None]:
        """The words to mark in the abstract, and how the index holds a word (None, None: none to mark)."""
        # worked out on the search thread with the answer: the GUI thread never
        # waits for the index's lock
        answer, normal = self.state.last_answer, self.library.index_normal
        if not self.index_open() or normal is None or answer is None or not answer.terms:
            return None, None
        return answer.terms, normal

    def reselect(self, ids: list[str], current: str | None) -> None:
        """Select these papers again where the list still shows them (after a new answer)."""
        sel = self.view.selectionModel()
        if not ids or len(ids) > RESELECT_LIMIT:
            self.selection_changed()
            return
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        sel.blockSignals(True)
        for pid in ids:
            row = self.model.row_of(pid)
            if row >= 0:
                sel.select(self.model.index(row, 0), flags)
        if current and self.model.row_of(current) >= 0:
            sel.setCurrentIndex(
                self.model.index(self.model.row_of(current), 0), QItemSelectionModel.SelectionFlag.NoUpdate
            )
        sel.blockSignals(False)
        self.selection_changed()
