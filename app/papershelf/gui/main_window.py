"""The main window: assembles the panels, menus and controllers, and routes requests.

Data is reached only through `Library` (edits, as undoable commands) and
`SearchService` (queries, off the GUI thread). Each part is its own class:
the sidebar (`FilterPanel`, with `SidebarController`), the list, its
selection and the answers it shows (`ListPane`), the abstract and tagging
panels, the menus (`WindowActions`), edits of the selection (`Edits`),
imports and exports (`ImportExport`, with progress and Cancel from
`TaskProgress`), the search index (`IndexController`). The window builds
what they share (the library, the query and its latest answer with the
timers that run the search (`QueryState`), the undo stack, the status line
(`StatusLine`)) and hands each controller the parts it needs: a controller
is never given the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QUndoStack
from PySide6.QtWidgets import QLabel, QMainWindow, QMessageBox, QSplitter, QVBoxLayout, QWidget

from ..core.library import Answer, Change, Library, Query
from . import window_state
from .abstract_view import AbstractView
from .actions import WindowActions
from .conflicts import ConflictBar, ConflictsView
from .edits import Edits
from .events import LibraryEvents
from .files_panel import FilesPanel, PaperFiles
from .filters import FilterPanel
from .fulltext_controller import FulltextController
from .import_export import ImportExport
from .index_controller import IndexController
from .last_import import LastImport
from .library_folder import show_library
from .list_pane import ListPane
from .live import LiveChanges
from .paper_menu import PaperMenu
from .progress import TaskProgress
from .query_state import QueryState
from .related import RelatedPapers, viewer_split
from .saved_searches import SavedSearches
from .search import SearchService
from .sidebar_controller import SidebarController
from .status_line import StatusLine
from .tag_panel import TagPanel

if TYPE_CHECKING:  # the index module (Whoosh, numpy) loads on the worker that opens it
    from PySide6.QtCore import QModelIndex

    from ..core.library import IndexStatus
    from .record_editor import RecordEditor
    from .suggest_dialog import SuggestDialog

COUNTED_FIELDS = frozenset({"status", "tags", "area"})  # the sidebar counts these


def _edit_record(window: MainWindow, index: QModelIndex | None = None) -> RecordEditor | None:
    from .record_editor import edit_record  # its module loads when first used, not at every start

    return edit_record(window, index)


def _suggest_for(window: MainWindow, tag: str | None = None) -> SuggestDialog:
    from .suggest_dialog import suggest_for  # its module loads when first used, not at every start

    return suggest_for(window, tag=tag)


class MainWindow(QMainWindow):
    """The one window: sidebar, search box and paper list, abstract and tagging panels."""

    searchAnswered = Signal()  # the list now shows the answer to the current query
    idle = Signal()  # ...and no search is due: what tests and scripts wait on (`is_idle`)
    indexReady = Signal()
    importFinished = Signal(list)  # the FileReports of an import
    exportFinished = Signal(object)  # the ExportReport of an export (None: failed or cancelled)
    # built in _assemble; declared here so that the parts that reach them (the menus) type-check
    files: PaperFiles
    menus: WindowActions
    live: LiveChanges
    conflicts: ConflictsView

    def __init__(self, library: Library, open_index: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.setObjectName("mainWindow")
        self.setAcceptDrops(True)
        self.undo_stack = QUndoStack(self)
        self.closing = False  # closeEvent has begun: nothing starts any more
        self.sidebar_fits = True  # a first start: the sidebar widens to its names (window_state.fit_sidebar)

        self.events = LibraryEvents(library, self)
        self.events.changed.connect(self._library_changed)
        self.search = SearchService(library, self)
        self.state = QueryState(self.search, self)
        self.state.answered.connect(self.searchAnswered)
        self.state.idle.connect(self.idle)
        self.status = StatusLine(self)
        self._assemble()
        self.paper_menu = PaperMenu(
            library,
            self.pane,
            self.edits,
            self.status,
            importing=self.transfers.running,
            shared=lambda name: self.findChild(QAction, name),
            edit_record=lambda index: _edit_record(self, index),
            suggest=lambda tag: _suggest_for(self, tag=tag),
            parent=self,
        )
        window_state.restore(self)
        self.sidebar.refresh_lists_and_tags()
        self.pane.update_empty_state()
        self.pane.show_library_now()
        if open_index:
            QTimer.singleShot(0, self.indexer.open)
        self.live.start()  # other devices' edits, as their files arrive

    # ---- assembling ----------------------------------------------------------
    def _assemble(self) -> None:
        self.filter_panel = FilterPanel()
        self.abstract_view = AbstractView()
        self.tag_panel = TagPanel()
        self.result_label = QLabel()
        self.result_label.setObjectName("resultLabel")
        pane = self.pane = ListPane(
            self.library,
            self.state,
            self.status,
            tag_panel=self.tag_panel,
            abstract_view=self.abstract_view,
            result_label=self.result_label,
            index_open=lambda: self.index is not None,
            parent=self,
        )
        # the list's parts, which the menus, the paper menu and the tests reach for
        self.search_box, self.paper_list, self.model = pane.search_box, pane.view, pane.model
        self.list_stack, self.columns = pane.stack, pane.columns
        self.search.answered.connect(pane.show_answer)
        self.related = RelatedPapers(self, self.abstract_view)

        self.conflict_bar = ConflictBar()  # over the abstract: what another device set at the same time
        viewer = QWidget()
        column = QVBoxLayout(viewer)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.conflict_bar)
        # the paper's files over its abstract (issue 24): what a reader opens first
        self.files_panel = FilesPanel(self.library)
        self.abstract_view.paperShown.connect(self.files_panel.show_paper)
        self.events.changed.connect(self.files_panel.changed)
        column.addWidget(self.files_panel)
        column.addWidget(viewer_split(self.abstract_view, self.related), 1)
        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.setObjectName("rightSplitter")
        self.right_split.addWidget(viewer)
        self.right_split.addWidget(self.tag_panel)
        self.right_split.setSizes([480, 260])
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.setObjectName("mainSplitter")
        self.main_split.addWidget(self.filter_panel)
        self.main_split.addWidget(pane)
        self.main_split.addWidget(self.right_split)
        self.main_split.setSizes([200, 700, 360])
        self.main_split.setStretchFactor(1, 1)
        self.setCentralWidget(self.main_split)
        self.statusBar().addWidget(self.result_label, 1)
        self.library_label = show_library(self, self.library.folder)

        # Cancel stops the import (or export) before the index: the one a person started
        self.task_progress = TaskProgress(
            self,
            # Get PDF is online's task
            lambda: (self.transfers.task, self.menus.online.task, self.indexer.task, self.fulltext.task),
        )
        self.indexer = IndexController(self.library, self.task_progress, self.status, self.state, self.is_closing, self)
        self.indexer.ready.connect(self.indexReady)
        # the PDFs' text, read once the index is open and after files are attached (issue 24)
        self.fulltext = FulltextController(
            self.library, self.task_progress, self.status, self.state, self.abstract_view, self.is_closing, self
        )
        self.indexer.ready.connect(self.fulltext.index_ready)
        self.events.changed.connect(self.fulltext.library_changed)
        self.abstract_view.paperShown.connect(self.fulltext.paper_shown)
        pane.indexDamaged.connect(self.indexer.reopen_if_damaged)
        self._assemble_controllers()
        self.files = PaperFiles(  # Open PDF, Attach Files…, files dropped on a row
            self.library,
            self.files_panel,
            pane,
            self.transfers,
            self.status,
            self.undo_stack,
            undo_action=lambda: self.menus.undo_action,
            parent=self,
        )
        self.live = LiveChanges(self)
        self.conflicts = ConflictsView(self, self.conflict_bar)
        self.menus = WindowActions(self)
        self.transfers.fetching = self.menus.online.fetching_pdfs  # imports and attaches wait for Get PDF
        self.edits.undo_action = self.menus.undo_action
        self.transfers.identifiersPasted.connect(self.menus.online.add_by_identifier)
        self.transfers.findPublishedRequested.connect(self.menus.online.find_published)

    def _assemble_controllers(self) -> None:
        """The controllers of imports, edits and the sidebar, each given the parts it works with."""
        lib, pane, state, status = self.library, self.pane, self.state, self.status
        closing = self.is_closing
        self.last_import = LastImport(lib, self.undo_stack, self.events, self.filter_panel, state, closing, self)
        transfers = self.transfers = ImportExport(lib, pane, state, status, self.task_progress, self.last_import, self)
        transfers.started.connect(self._transfer_started)
        transfers.finished.connect(self._transfer_finished)
        transfers.importFinished.connect(self.importFinished)
        transfers.exportFinished.connect(self.exportFinished)
        saved = SavedSearches(
            lib,
            self.filter_panel,
            pane.search_box,
            state,
            status,
            export_ids=transfers.export_ids,
            closing=closing,
            parent=self,
        )
        self.indexer.ready.connect(saved.recount)
        self.edits = Edits(
            lib,
            self.undo_stack,
            pane,
            self.tag_panel,
            status,
            importing=transfers.running,
            closing=closing,
            reload_saved=saved.reload,
            parent=self,
            wait_words=transfers.wait_words,
        )
        self.sidebar = SidebarController(
            self.filter_panel,
            self.tag_panel,
            lib,
            state,
            edits=self.edits,
            saved=saved,
            last_import=self.last_import,
            transfers=transfers,
            pane=pane,
            parent=self,
        )
        self.sidebar.countsShown.connect(lambda: window_state.fit_sidebar(self))
        self.pane.countsDue.connect(self.sidebar.update_counts)
        transfers.imported.connect(self.sidebar.refresh_lists_and_tags)
        self.edits.tagsChanged.connect(self.sidebar.refresh_lists_and_tags)

    def _transfer_started(self, importing: bool) -> None:
        """An import (or export) began: edits wait (the tag panel too), and an import's index
        writer is not waited for by the searches."""
        if importing:
            self.search.wait_for_edits = False
            self.menus.import_action.setEnabled(False)
        self.tag_panel.setEnabled(False)
        self.menus.update_undo()

    def _transfer_finished(self) -> None:
        self.search.wait_for_edits = True
        self.menus.import_action.setEnabled(True)
        self.tag_panel.setEnabled(True)
        self.menus.update_undo()

    def is_closing(self) -> bool:
        """closeEvent has begun: nothing starts any more."""
        return self.closing

    # ---- what the controllers share, as the tests and the menus reach it --------------
    @property
    def query(self) -> Query:
        """The query the list answers (`QueryState.query`)."""
        return self.state.query

    @query.setter
    def query(self, query: Query) -> None:
        self.state.query = query

    @property
    def last_answer(self) -> Answer | None:
        """The answer the list shows (`QueryState.last_answer`)."""
        return self.state.last_answer

    @last_answer.setter
    def last_answer(self, answer: Answer | None) -> None:
        self.state.last_answer = answer

    @property
    def error_box(self) -> QMessageBox | None:
        """The warning shown last (`show_error`)."""
        return self.status.error_box

    @property
    def index(self) -> IndexStatus | None:
        """The search index's state once this window has taken the opened index
        up (None before that, while it is opened again, and after closing)."""
        return self.indexer.status

    def selected_ids(self) -> list[str]:
        """The selected papers, in the list's order."""
        return self.pane.selected_ids()

    def import_files(self, files: list[Path]) -> None:
        """Import files in the background, as File ▸ Import does (tests/perf/bench_gui.py drives this)."""
        self.transfers.import_files(files)

    def save_settings(self) -> None:
        """Keep the window's size, splitters, columns and sort for the next start."""
        window_state.save(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Keep notes and settings, then stop the timers, tasks, threads and the search index."""
        self.sidebar.saved.stop()  # its count's thread ends before the library closes
        self.sidebar.stop()  # and the sidebar's
        self.tag_panel.flush_notes()
        self.save_settings()
        self.closing = True
        # nothing may start a timer once the application is gone (Qt warns at exit):
        # stop ours, and the index's writer thread stops calling back
        self.state.stop()
        self.status.clear()
        self.live.close()
        self.indexer.stop()
        # the related papers' look-up too: a worker that ends after the application has gone
        # delivers to deleted objects (a crash at exit, seen with 100,000 papers: more_like is slow)
        for task in (self.indexer.task, self.transfers.task, self.fulltext.task, self.related.task):
            if task is not None and not task.finished:
                task.cancel()
                task.wait(30)
        self.search.close()
        self.events.close()
        self.indexer.close()
        super().closeEvent(event)

    # ---- searching ---------------------------------------------------------
    def run_search(self) -> None:
        """Ask for the answer to the current query (the list shows it when it arrives)."""
        self.state.run()

    def refresh_soon(self) -> None:
        """Ask again once edits have had a moment to reach the search index."""
        self.state.refresh_soon()

    def search_due(self) -> bool:
        """A search is waiting to be asked for (typing, or a refresh after edits)."""
        return self.state.due()

    def is_idle(self) -> bool:
        """The list shows the answer to the current query and no search is due (`idle` says when)."""
        return self.state.is_idle()

    # ---- change events ---------------------------------------------------------
    @Slot(object)
    def _library_changed(self, change: Change) -> None:
        if change.kind == "papers-changed":
            self.pane.keep_shown(change.ids)  # no row jumps away when the answer is refreshed
        if change.kind == "papers-removed" and self.model.rowCount():
            # the rows go (a model reset): what else was selected stays selected (another
            # device deleted a paper the user was not looking at)
            current = self.model.id_at(self.paper_list.currentIndex().row())
            kept = [pid for pid in self.selected_ids() if pid not in change.ids]
            self.model.refresh(change)
            self.pane.reselect(kept, current if current not in change.ids else None)
        else:
            self.model.refresh(change)
        selected = set(self.selected_ids())
        if (change.kind != "papers-removed" and selected & set(change.ids)) or change.kind == "lists-changed":
            self.pane.selection_changed()
        if change.kind != "papers-changed" or "tags" in change.fields:
            # the tags a count of every paper's tags gives: on a worker for a large library
            self.sidebar.refresh_lists_and_tags()
        if change.kind in ("lists-changed", "papers-added", "papers-removed") or (
            change.kind == "papers-changed" and change.fields & COUNTED_FIELDS
        ):
            self.sidebar.recount_shown()
        if self.index is None:
            self.refresh_soon()
        self.pane.update_empty_state()

    # ---- drops and messages ------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Take a drag of local files: a drop imports them."""
        self.transfers.drag_entered(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """Import the dropped files."""
        self.transfers.dropped(event)

    def show_error(self, title: str, text: str) -> None:
        """A warning a person must close (not modal: the window goes on)."""
        self.status.error(title, text)
