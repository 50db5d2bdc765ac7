"""The main window: assembles the panels, menus and controllers, and routes requests.

Data is reached only through `Library` (edits, as undoable commands) and
`SearchService` (queries, off the GUI thread). Each part is its own class:
the sidebar (`FilterPanel`, with `SidebarController`), the list and its
query (`ListPane`), the abstract and tagging panels, the menus
(`WindowActions`), edits of the selection (`Edits`), imports and exports
(`ImportExport`, with progress and Cancel from `TaskProgress`). The window
holds what they share: the library, the query and its latest answer, the
undo stack, the search index.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QUndoStack
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QMessageBox, QSplitter, QWidget

from ..core.errors import PapershelfError
from ..core.library import Change, FileReport, Library
from ..core.overview import top_tags
from . import window_state
from .abstract_view import AbstractView
from .actions import WindowActions
from .edits import Edits
from .events import LibraryEvents
from .feedback import n_papers, no_results
from .filters import FilterPanel
from .import_export import ImportExport
from .last_import import LastImport
from .list_pane import ListPane
from .paper_menu import PaperMenu
from .progress import TaskProgress
from .search import Answer, Query, SearchService
from .sidebar_controller import SidebarController
from .tag_panel import TagPanel
from .tasks import Task, run_task

if TYPE_CHECKING:      # the index module (Whoosh, numpy) loads on the worker that opens it
    from ..core.library import IndexStatus

SEARCH_DELAY_MS = 10          # a burst of keys (a paste) becomes one request; the search thread keeps only the latest
REFRESH_DELAY_MS = 300        # after edits land in the index, re-run the search once
COUNTED_FIELDS = frozenset({"status", "tags", "area"})   # the sidebar counts these


class MainWindow(QMainWindow):
    """The one window: sidebar, search box and paper list, abstract and tagging panels."""

    searchAnswered = Signal()          # the list now shows the answer to the current query
    indexReady = Signal()
    importFinished = Signal(list)      # the FileReports of an import
    exportFinished = Signal(object)    # the ExportReport of an export (None: failed or cancelled)
    _index_committed_signal = Signal()  # from the index writer thread

    def __init__(self, library: Library, open_index: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.setObjectName("mainWindow")
        self.setWindowTitle(self.tr("Papershelf"))
        self.setAcceptDrops(True)
        self.undo_stack = QUndoStack(self)
        self._index_taken = False     # the library's index is open and this window uses it (see `index`)
        self._unwatch_index = None    # stops the index's commits calling back
        self.query = Query()
        self.last_answer: Answer | None = None
        self._task: Task | None = None
        self._closing = False
        self._request_started = 0.0

        self.events = LibraryEvents(library, self)
        self.events.changed.connect(self._library_changed)
        self.search = SearchService(library, self)
        self.search.answered.connect(self._show_answer)
        self._index_committed_signal.connect(self._after_index_commit)
        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.run_search)
        self._refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(self.run_search)
        self._assemble()
        self.paper_menu = PaperMenu(self)
        self.last_import = LastImport(self)
        window_state.restore(self)
        self._refresh_lists_and_tags()
        self._update_empty_state()
        self.pane.show_library_now()
        if open_index:
            QTimer.singleShot(0, self.open_index)

    # ---- assembling ----------------------------------------------------------
    def _assemble(self) -> None:
        self.filter_panel = FilterPanel()
        pane = self.pane = ListPane(self)
        self.search_box, self.paper_list, self.model = pane.search_box, pane.view, pane.model
        self.list_stack, self.columns = pane.stack, pane.columns
        self.paper_list.selectionModel().selectionChanged.connect(self._selection_changed)
        self.abstract_view = AbstractView()
        self.tag_panel = TagPanel()

        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.setObjectName("rightSplitter")
        self.right_split.addWidget(self.abstract_view)
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
        self.result_label = QLabel()
        self.result_label.setObjectName("resultLabel")
        self.statusBar().addWidget(self.result_label, 1)

        progress = self.task_progress = TaskProgress(self, lambda: (self._import_task, self._task))
        edits = self.edits = Edits(self)
        self.sidebar = SidebarController(self)
        self.transfers = ImportExport(self)
        self.tag_panel.notesEdited.connect(self.save_notes)

        # The parts' verbs under the window's own names: the panels, the tests and
        # the window's methods below (the search index, answers, pasting) call these.
        self.add_tags, self.remove_tag, self._edit = edits.add_tags, edits.remove_tag, edits.edit
        self.set_status, self.set_rating, self.add_to_list = edits.set_status, edits.set_rating, edits.add_to_list
        self.import_files, self.importing = self.transfers.import_files, self.transfers.running
        self._ask_about, self._import_done = self.transfers.ask_about, self.transfers.import_done
        self._show_progress, self._progress_step, self._hide_progress = progress.busy, progress.step, progress.idle
        self._query_typed, self._reselect = pane.query_typed, pane.reselect
        self._update_empty_state, self._update_counts = pane.update_empty_state, self.sidebar.update_counts
        self._refresh_lists_and_tags, self._recount_shown = (self.sidebar.refresh_lists_and_tags,
                                                             self.sidebar.recount_shown)
        self.menus = WindowActions(self)

    @property
    def _import_task(self) -> Task | None:
        """The import or export running (or run last)."""
        return self.transfers.task

    @property
    def import_preview(self) -> QMessageBox | None:
        """The preview shown last of a file held back from an import."""
        return self.transfers.preview

    def top_tags(self) -> list[str]:
        """The tags keys 1-9 toggle: the nine most used (ties alphabetical)."""
        return top_tags(self.library)

    def save_settings(self) -> None:
        """Keep the window's size, splitters, columns and sort for the next start."""
        window_state.save(self)

    def closeEvent(self, event) -> None:
        """Keep notes and settings, then stop the timers, tasks, threads and the search index."""
        self.tag_panel.flush_notes()
        self.save_settings()
        self._closing = True
        # nothing may start a timer once the application is gone (Qt warns at exit):
        # stop ours, and the index's writer thread stops calling back
        self._search_timer.stop()
        self._refresh_timer.stop()
        self.statusBar().clearMessage()
        if self._unwatch_index is not None:
            self._unwatch_index()
            self._unwatch_index = None
        for task in (self._task, self._import_task):
            if task is not None and not task.finished:
                task.cancel()
                task.wait(30)
        self.search.close()
        self.events.close()
        self._index_taken = False
        self.library.close_index()
        super().closeEvent(event)

    # ---- the search index --------------------------------------------------
    @property
    def index(self) -> IndexStatus | None:
        """The search index's state once this window has taken the opened index
        up (None before that, while it is opened again, and after closing)."""
        return self.library.index_status if self._index_taken else None

    def open_index(self, rebuild: bool = False) -> None:
        """Open (or build) the search index in the background."""
        if self._task is not None and not self._task.finished:
            return
        lib = self.library
        if self._index_taken:
            self._index_taken = False
            lib.close_index()          # searches match titles until it is open again

        def work(progress, cancelled) -> bool:
            return lib.open_index(progress, cancelled, rebuild=rebuild)

        self._show_progress(self.tr("Opening the search index…"))
        self._task = run_task(work, parent=self, name="papershelf-index-open",
                              on_done=self._index_opened, on_error=self._index_failed,
                              on_progress=lambda n, total: self._progress_step(n, total, self.tr("Indexing")))

    def _index_opened(self, opened: bool) -> None:
        self._hide_progress()
        if not opened:
            self.statusBar().showMessage(self.tr("Indexing cancelled; searching titles only."), 5000)
            return
        if self._closing:
            self.library.close_index()
            return
        self._index_taken = True
        if self._unwatch_index is None:
            self._unwatch_index = self.library.on_index_committed(self._index_committed_elsewhere)
        rebuilt_because = self.library.index_status.rebuilt_because
        if rebuilt_because:
            self.statusBar().showMessage(self.tr("Search index rebuilt: %s.") % rebuilt_because, 8000)
        self.run_search()
        self.indexReady.emit()

    def _index_failed(self, exc: BaseException) -> None:
        self._hide_progress()
        self.show_error(self.tr("Search is limited to titles"), str(exc))

    def _index_committed_elsewhere(self) -> None:
        # called on the index writer thread: hop to the GUI thread
        self._index_committed_signal.emit()

    # ---- searching ---------------------------------------------------------
    def run_search(self) -> None:
        """Ask for the answer to the current query (it arrives in `_show_answer`)."""
        self._search_timer.stop()
        self._refresh_timer.stop()
        self._request_started = time.perf_counter()
        self.search.request(self.query)

    @Slot(object)
    def _show_answer(self, answer: Answer) -> None:
        if answer.index_damaged and self.index is not None:
            # marked damaged: opening it again rebuilds it, with progress (once: see SearchIndex.damaged)
            self.open_index()
        if answer.query != self.query:
            return                      # a newer request is on its way
        self.last_answer = answer
        if answer.error:
            self.statusBar().showMessage(self.tr("Search failed: %s") % answer.error, 8000)
            return
        selected = self.selected_ids()
        current = self.model.id_at(self.paper_list.currentIndex().row())
        self.model.set_ids(answer.ids)
        self._reselect(selected, current)
        elapsed = (time.perf_counter() - self._request_started) * 1000
        text = n_papers(answer.total)
        if not answer.total and answer.query.text.strip():
            text = no_results(answer.query.text, answer.suggestion)
        elif not answer.indexed and answer.query.text.strip():
            text += "  " + self.tr("(search index not ready: matching titles only)")
        elif answer.fallback:
            text += "  " + self.tr("(query not understood; searched its words)")
        self.result_label.setText(text)
        self.result_label.setToolTip(self.tr("Answered in %d ms") % round(elapsed))
        self._update_counts(answer)
        self._update_empty_state()
        self.searchAnswered.emit()

    # ---- selection ---------------------------------------------------------
    def selected_ids(self) -> list[str]:
        """The selected papers, in the list's order."""
        rows = sorted({i.row() for i in self.paper_list.selectionModel().selectedRows()})
        return [pid for pid in (self.model.id_at(r) for r in rows) if pid]

    def _selection_changed(self, *_) -> None:
        ids = self.selected_ids()
        papers = [self.library.get(pid) for pid in ids[:5000] if pid in self.library]
        self.tag_panel.show_selection(papers)
        if len(papers) == 1:
            terms, normal = self._highlight_terms()
            self.abstract_view.show_paper(papers[0], terms, normal)
        else:
            self.abstract_view.show_nothing(len(papers))

    def _highlight_terms(self):
        # worked out on the search thread with the answer: the GUI thread never
        # waits for the index's lock
        answer = self.last_answer
        normal = self.library.index_normal
        if self.index is None or normal is None or answer is None or not answer.terms:
            return None, None
        return answer.terms, normal

    def save_notes(self, paper_id: str, text: str) -> None:
        """Keep the notes typed for a paper (one undoable step; nothing if unchanged or gone)."""
        if paper_id not in self.library or self.library.get(paper_id).notes == text:
            return
        self._edit(self.tr("Edit notes"), [paper_id], lambda: self.library.set_notes(paper_id, text))

    # ---- change events ---------------------------------------------------------
    @Slot(object)
    def _library_changed(self, change: Change) -> None:
        self.model.refresh(change)
        selected = set(self.selected_ids())
        if change.kind != "papers-removed" and selected & set(change.ids) or change.kind == "lists-changed":
            self._selection_changed()
        if change.kind in ("papers-added", "papers-removed", "lists-changed"):
            self._refresh_lists_and_tags()
        if (change.kind in ("lists-changed", "papers-added", "papers-removed")
                or change.kind == "papers-changed" and change.fields & COUNTED_FIELDS):
            self._recount_shown()
        if change.kind != "lists-changed" and (change.kind != "papers-changed" or "tags" in change.fields):
            self.tag_panel.set_key_tags(self.top_tags())
        if self.index is None:
            self._refresh_timer.start()
        self._update_empty_state()

    @Slot()
    def _after_index_commit(self) -> None:
        self._refresh_timer.start()

    # ---- importing -----------------------------------------------------------
    def import_clipboard(self) -> None:
        """Import the text on the clipboard (a preview first if it only partly looks like a listing)."""
        from ..core.errors import UncertainListingError
        from ..core.library import PASTE_LABEL
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        text = QApplication.clipboard().text()
        if not text.strip():
            self.statusBar().showMessage(self.tr("The clipboard holds no text to import."), 4000)
            return
        try:
            report = self.library.import_text(text)
        except UncertainListingError as exc:        # previewed, imported on Import
            self._ask_about([FileReport.uncertain(PASTE_LABEL, exc)], [],
                            lambda _paths: self._import_pasted_listing(text))
            return
        except PapershelfError as exc:
            self.show_error(self.tr("The pasted text was not imported"), str(exc))
            return
        self._import_done([report])

    def _import_pasted_listing(self, text: str) -> None:
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        try:
            report = self.library.import_text(text, as_listing=True)
        except PapershelfError as exc:
            self.show_error(self.tr("The pasted text was not imported"), str(exc))
            return
        self._import_done([report])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Take a drag of local files: a drop imports them."""
        self.transfers.drag_entered(event)

    def dropEvent(self, event: QDropEvent) -> None:
        """Import the dropped files."""
        self.transfers.dropped(event)

    # ---- messages --------------------------------------------------------------
    def show_error(self, title: str, text: str) -> None:
        """A warning a person must close (not modal: the window goes on)."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("errorDialog")
        box.open()
        self.error_box = box

