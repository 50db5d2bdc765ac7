"""Related papers: under the abstract, the papers whose abstracts are most like
the one shown (the search index's more-like-this), found off the GUI thread.

The viewer says which paper it shows (`AbstractView.paperShown`); this panel
asks the index on one worker at a time and keeps only the answer for the
paper still shown, so holding an arrow key down never queues stale look-ups.
Until the window has its index open it says that related papers come then,
and asks again when the window's `indexReady` fires. Clicking an entry (or
Enter on it) selects that paper in the list, showing every paper first if
the search or a filter hides it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractListModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QLabel, QListView, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from ..core.errors import NotFoundError, SearchIndexError
from ..core.library import Library, Query
from ..core.render import plain_text
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .abstract_view import AbstractView
    from .main_window import MainWindow

RELATED_LIMIT = 8
IdRole = Qt.ItemDataRole.UserRole + 1

AnyIndex = QModelIndex | QPersistentModelIndex


class RelatedModel(QAbstractListModel):
    """The related papers' ids; rows show titles, tooltips authors, year and venue."""

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.ids: list[str] = []

    def set_ids(self, ids: list[str]) -> None:
        """Show these papers (those still in the library)."""
        self.beginResetModel()
        self.ids = [pid for pid in ids if pid in self.library]
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """How many related papers."""
        return 0 if parent.isValid() else len(self.ids)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A related paper's title (display), its details (tooltip) or id (IdRole)."""
        if not index.isValid() or not 0 <= index.row() < len(self.ids):
            return None
        pid = self.ids[index.row()]
        if role == IdRole:
            return pid
        paper = self.library.find(pid)
        if paper is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return plain_text(paper.title)
        if role == Qt.ItemDataRole.ToolTipRole:
            details = [", ".join(paper.authors[:3]) + (" et al." if len(paper.authors) > 3 else "")]
            details += [str(paper.year or ""), paper.venue]
            return " · ".join(d for d in details if d) or plain_text(paper.title)
        return None


class RelatedPapers(QWidget):
    """The "Related" panel of `window`, fed by what its abstract view shows."""

    def __init__(self, window: MainWindow, view: AbstractView) -> None:
        super().__init__()
        self.main = window
        self.setObjectName("relatedPanel")
        self.paper_id = ""  # the paper shown in the viewer ("": none)
        self.shown_for = ""  # the paper whose related papers the list shows
        self.task: Task | None = None  # the look-up running (at most one)
        self.elapsed_ms = 0.0  # how long the last look-up took in the index
        self.heading = QLabel(self.tr("&Related"))  # Alt+R: into the list
        self.heading.setObjectName("relatedHeading")
        self.model = RelatedModel(window.library, self)
        self.list = QListView()
        self.list.setObjectName("relatedList")
        self.list.setAccessibleName(self.tr("Related papers"))
        self.list.setModel(self.model)
        self.list.setUniformItemSizes(True)
        self.list.setSpacing(1)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        # titles are cut at the panel's edge (the tooltip has the details), never scrolled sideways
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.clicked.connect(self._chosen)
        self.list.activated.connect(self._chosen)  # Enter, or a double click where the style says so
        self.heading.setBuddy(self.list)
        self.message = QLabel()
        self.message.setObjectName("relatedMessage")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.message.setEnabled(False)  # drawn muted: it says why the list is empty
        self.stack = QStackedWidget()
        self.stack.addWidget(self.list)
        self.stack.addWidget(self.message)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 0)
        box.addWidget(self.heading)
        box.addWidget(self.stack, 1)
        view.paperShown.connect(self.show_for)
        window.indexReady.connect(self._index_ready)
        self._say(self.tr("Select a paper to see papers like it."))

    def text(self) -> str:
        """What the panel shows: its message, or the related titles one a line."""
        if self.stack.currentWidget() is self.message:
            return self.message.text()
        return "\n".join(str(self.model.index(r).data()) for r in range(self.model.rowCount()))

    def _say(self, text: str) -> None:
        self.model.set_ids([])
        self.shown_for = ""
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    # ---- finding them ----------------------------------------------------------------
    def show_for(self, paper_id: str) -> None:
        """The viewer shows this paper ("": none or several): find papers like it."""
        if paper_id and paper_id == self.paper_id and (self.shown_for == paper_id or self._running()):
            return  # the same paper again (an edit of it): the answer stands or is on its way
        self.paper_id = paper_id
        if not paper_id:
            self._say(self.tr("Select a paper to see papers like it."))
        elif self.main.index is None:
            self._say(self.tr("Related papers appear once the search index is ready."))
        elif not self._running():
            self._start(paper_id)
        # else: the running look-up's answer is dropped and this paper is asked for next (_done)

    def _running(self) -> bool:
        return self.task is not None and not self.task.finished

    def _index_ready(self) -> None:
        if self.paper_id and not self._running():
            self._start(self.paper_id)

    def _start(self, paper_id: str) -> None:
        lib = self.main.library

        def work(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> tuple[str, list[str], float]:
            started = time.perf_counter()
            ids = lib.more_like(paper_id, RELATED_LIMIT + 1)  # one spare: the paper itself never shows
            return paper_id, ids, (time.perf_counter() - started) * 1000

        # no parent: a look-up still running when the window goes delivers to a live Task (and is dropped)
        self.task = run_task(
            work,
            name="papershelf-related",
            on_done=self._done,
            on_error=lambda exc: self._failed(paper_id, exc),
        )

    def _next(self, answered: str) -> bool:
        """After a look-up for `answered`: start the one for the paper shown now
        if it is another; whether one was started."""
        if self.main.closing or not self.paper_id or self.paper_id == answered:
            return False
        if self.main.index is None:
            self._say(self.tr("Related papers appear once the search index is ready."))
            return False
        self._start(self.paper_id)
        return True

    def _done(self, result: tuple[str, list[str], float]) -> None:
        paper_id, ids, elapsed = result
        if self.main.closing:
            return
        if self._next(paper_id) or paper_id != self.paper_id:
            return  # a newer selection wins
        self.elapsed_ms = elapsed
        self.model.set_ids([pid for pid in ids if pid != paper_id][:RELATED_LIMIT])
        self.shown_for = paper_id
        self.list.setToolTip(self.tr("Found in %d ms by the search index") % max(1, round(elapsed)))
        if self.model.rowCount():
            self.stack.setCurrentWidget(self.list)
        else:
            self.message.setText(self.tr("No papers in the library are like this one."))
            self.stack.setCurrentWidget(self.message)

    def _failed(self, paper_id: str, exc: BaseException) -> None:
        if self.main.closing:
            return  # the library closed under the look-up
        if self._next(paper_id) or paper_id != self.paper_id:
            return
        if isinstance(exc, SearchIndexError) and self.main.index is None:
            self._say(self.tr("Related papers appear once the search index is ready."))
        elif isinstance(exc, NotFoundError):
            self._say(self.tr("This paper is no longer in the library."))
        else:
            self._say(self.tr("Related papers could not be found: %s") % exc)

    # ---- going to one ------------------------------------------------------------------
    def _chosen(self, index: QModelIndex) -> None:
        pid = index.data(IdRole)
        if isinstance(pid, str) and pid:
            self.go_to(pid)

    def go_to(self, paper_id: str) -> None:
        """Select this paper in the list (after showing every paper, if the search or a filter hides it)."""
        win = self.main
        if paper_id not in win.library:
            return
        if win.model.row_of(paper_id) >= 0:
            self._select(paper_id)
            return
        # hidden by the words or the filters: show the whole library, then select it
        win.statusBar().showMessage(self.tr("Showing all papers to select the related one."), 5000)
        for kind in list(win.filter_panel.active):
            win.filter_panel.clear_filter(kind)
        win.filter_panel.clearSelection()
        win.search_box.clear()
        win.query = Query(sort=win.query.sort, descending=win.query.descending)

        def answered() -> None:
            win.searchAnswered.disconnect(answered)
            self._select(paper_id)

        win.searchAnswered.connect(answered)
        win.run_search()

    def _select(self, paper_id: str) -> None:
        win = self.main
        row = win.model.row_of(paper_id)
        if row < 0:
            return
        index = win.model.index(row, 0)
        win.paper_list.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        win.paper_list.scrollTo(index)


def viewer_split(view: AbstractView, related: RelatedPapers) -> QSplitter:
    """The abstract over its related papers, as one pane of the window's right column."""
    split = QSplitter(Qt.Orientation.Vertical)
    split.setObjectName("viewerSplitter")
    split.addWidget(view)
    split.addWidget(related)
    split.setStretchFactor(0, 1)
    split.setSizes([360, 130])  # the abstract is what is read; the related list scrolls
    return split
