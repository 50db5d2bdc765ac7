"""The main window: assembles the panels, menus and shortcuts, and routes requests.

Data is reached only through `Library` (edits, as undoable commands) and
`SearchService` (queries, off the GUI thread). Long work (imports, index
builds) runs as tasks with a progress bar and Cancel in the status bar.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QItemSelectionModel, QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QColor, QKeySequence, QUndoStack
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QColorDialog, QFileDialog, QHeaderView,
                               QInputDialog, QLabel, QLineEdit, QMainWindow, QMessageBox, QProgressBar,
                               QPushButton, QSplitter, QStackedWidget, QTableView, QVBoxLayout, QWidget)

from .. import paths
from ..core.errors import PapershelfError
from ..core.library import Change, FileReport, Library
from ..core.paper import Status
from .abstract_view import AbstractView
from .columns import ColumnChooser
from .commands import DeletePapers, LibraryEdit
from .counts import RECOUNT_LIMIT, facet_counts, list_counts
from .dialogs import search_as_you_type
from .events import LibraryEvents
from .feedback import edited, n_papers, no_results, quoted
from .filters import FilterPanel, set_tag_color, tag_color
from .keys import PREFERENCES, REDO, keys
from .last_import import LastImport
from .paper_menu import PaperMenu
from .paper_model import COLUMNS, STATUS_LABELS, PaperTableModel
from .search import Answer, Query, SearchService
from .tag_panel import TagPanel
from .tasks import Task, run_task

if TYPE_CHECKING:      # the index module (Whoosh, numpy) loads on the worker that opens it
    from ..core.library import IndexStatus

SEARCH_DELAY_MS = 10          # lets a burst of keys (a paste) become one request; the search thread keeps only the latest
REFRESH_DELAY_MS = 300        # after edits land in the index, re-run the search once
COUNTED_FIELDS = frozenset({"status", "tags", "area"})   # the sidebar counts these
IMPORTABLE = "Listings and bibliographies (*.txt *.md *.bib *.ris);;All files (*)"


class MainWindow(QMainWindow):
    searchAnswered = Signal()          # the list now shows the answer to the current query
    indexReady = Signal()
    importFinished = Signal(list)      # the FileReports of an import
    exportFinished = Signal(object)    # the ExportReport of an export (None: failed or cancelled)
    _index_committed_signal = Signal()  # from the index writer thread

    def __init__(self, library: Library, open_index: bool = True, parent=None):
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
        self._import_task: Task | None = None
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
        self._build_widgets()
        self._build_actions()
        self.paper_menu = PaperMenu(self)
        self.last_import = LastImport(self)
        self._restore_settings()
        self._refresh_lists_and_tags()
        self._update_empty_state()
        self._show_library_now()
        if open_index:
            QTimer.singleShot(0, self.open_index)

    # ---- building ----------------------------------------------------------
    def _build_widgets(self) -> None:
        self.filter_panel = FilterPanel()
        self.filter_panel.filterChosen.connect(self._filter_chosen)
        self.filter_panel.renameTagRequested.connect(self.rename_tag)
        self.filter_panel.colorTagRequested.connect(self.color_tag)
        self.filter_panel.renameListRequested.connect(self.rename_list)
        self.filter_panel.deleteListRequested.connect(self.delete_list)
        self.filter_panel.exportRequested.connect(self.export_filter)

        self.search_box = QLineEdit()
        self.search_box.setObjectName("searchBox")
        self.search_box.setAccessibleName(self.tr("Search"))
        self.search_box.setPlaceholderText(self.tr("Search titles, abstracts, authors…  (Ctrl+F)"))
        self.search_box.setClearButtonEnabled(True)
        self.search_box.textEdited.connect(self._query_typed)
        self.search_box.returnPressed.connect(self.run_search)
        self.search_box.installEventFilter(self)      # Esc clears it

        self.model = PaperTableModel(self.library, self)
        self.model.sortRequested.connect(self._sort_requested)
        self.paper_list = QTableView()
        self.paper_list.setObjectName("paperList")
        self.paper_list.setAccessibleName(self.tr("Papers"))
        self.paper_list.setModel(self.model)
        self.paper_list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.paper_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.paper_list.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.paper_list.horizontalHeader().setSortIndicatorClearable(True)
        self.model.blockSignals(True)       # enabling sorting sorts once; the search decides the order
        self.paper_list.setSortingEnabled(True)
        self.model.blockSignals(False)
        self.paper_list.setWordWrap(False)
        self.paper_list.setAlternatingRowColors(True)
        self.paper_list.setShowGrid(False)
        self.paper_list.verticalHeader().hide()
        self.paper_list.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.paper_list.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.columns = ColumnChooser(self.paper_list)
        self.paper_list.selectionModel().selectionChanged.connect(self._selection_changed)

        empty = QWidget()
        empty.setObjectName("emptyState")
        box = QVBoxLayout(empty)
        box.addStretch(1)
        message = QLabel(self.tr("<h3>Your library is empty</h3><p>Import conference listings, "
                                 "Daily Papers digests or BibTeX files (File ▸ Import, or drop them here), "
                                 "or start with the sample library.</p>"))
        message.setWordWrap(True)
        message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        box.addWidget(message)
        self.samples_button = QPushButton(self.tr("Open the sample library"))
        self.samples_button.setObjectName("loadSamplesButton")
        self.samples_button.setAccessibleName(self.tr("Open the sample library"))
        self.samples_button.clicked.connect(self.import_samples)
        box.addWidget(self.samples_button, 0, Qt.AlignmentFlag.AlignHCenter)
        import_button = QPushButton(self.tr("Import files…"))
        import_button.setObjectName("emptyImportButton")
        import_button.clicked.connect(self.choose_files)
        box.addWidget(import_button, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addStretch(2)
        self.list_stack = QStackedWidget()
        self.list_stack.addWidget(self.paper_list)
        self.list_stack.addWidget(empty)

        middle = QWidget()
        mid = QVBoxLayout(middle)
        mid.setContentsMargins(0, 0, 0, 0)
        mid.addWidget(self.search_box)
        mid.addWidget(self.list_stack, 1)

        self.abstract_view = AbstractView()
        self.tag_panel = TagPanel()
        self.tag_panel.addTagsRequested.connect(self.add_tags)
        self.tag_panel.removeTagRequested.connect(self.remove_tag)
        self.tag_panel.statusRequested.connect(self.set_status)
        self.tag_panel.ratingRequested.connect(self.set_rating)
        self.tag_panel.notesEdited.connect(self.save_notes)
        self.tag_panel.addToListRequested.connect(self.add_to_list)

        self.right_split = QSplitter(Qt.Orientation.Vertical)
        self.right_split.setObjectName("rightSplitter")
        self.right_split.addWidget(self.abstract_view)
        self.right_split.addWidget(self.tag_panel)
        self.right_split.setSizes([480, 260])
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.setObjectName("mainSplitter")
        self.main_split.addWidget(self.filter_panel)
        self.main_split.addWidget(middle)
        self.main_split.addWidget(self.right_split)
        self.main_split.setSizes([200, 700, 360])
        self.main_split.setStretchFactor(1, 1)
        self.setCentralWidget(self.main_split)

        bar = self.statusBar()
        self.result_label = QLabel()
        self.result_label.setObjectName("resultLabel")
        bar.addWidget(self.result_label, 1)
        self.progress = QProgressBar()
        self.progress.setObjectName("taskProgress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("cancelTaskButton")
        self.cancel_button.clicked.connect(self.cancel_task)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self.progress.hide()
        self.cancel_button.hide()

    def _build_actions(self) -> None:
        file_menu = self.menuBar().addMenu(self.tr("&File"))
        self.import_action = self._action(file_menu, self.tr("&Import…"), self.choose_files, QKeySequence.StandardKey.Open,
                                          "importAction")
        self._action(file_menu, self.tr("Import Pasted &Text"), self.import_clipboard,
                     QKeySequence("Ctrl+Shift+V"), "importPasteAction")
        self._action(file_menu, self.tr("Open the &Sample Library"), self.import_samples, None, "samplesAction")
        file_menu.addSeparator()
        self._action(file_menu, self.tr("&Export Selection to BibTeX…"), self.export_selection,
                     QKeySequence("Ctrl+E"), "exportSelectionAction")
        self._action(file_menu, self.tr("Export &Shown Papers to BibTeX…"), self.export_shown,
                     QKeySequence("Ctrl+Shift+E"), "exportShownAction")
        self._action(file_menu, self.tr("&Rebuild Search Index"), lambda: self.open_index(rebuild=True), None,
                     "reindexAction")
        file_menu.addSeparator()
        self._action(file_menu, self.tr("&Quit"), self.close, QKeySequence.StandardKey.Quit, "quitAction")

        edit = self.menuBar().addMenu(self.tr("&Edit"))
        # the window's own actions, not the stack's: they wait while an import runs
        undo = self.undo_action = QAction(self.tr("&Undo"), self)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        undo.setObjectName("undoAction")
        undo.triggered.connect(self.undo)
        redo = self.redo_action = QAction(self.tr("&Redo"), self)
        redo.setShortcuts(keys(*REDO))
        redo.setObjectName("redoAction")
        redo.triggered.connect(self.redo)
        stack = self.undo_stack
        for signal in (stack.canUndoChanged, stack.canRedoChanged):
            signal.connect(self._update_undo_actions)
        for signal in (stack.undoTextChanged, stack.redoTextChanged):
            signal.connect(self._update_undo_actions)
        self._update_undo_actions()
        edit.addAction(undo)
        edit.addAction(redo)
        self.addAction(undo)
        self.addAction(redo)
        edit.addSeparator()
        self._action(edit, self.tr("&Find"), self.focus_search, QKeySequence.StandardKey.Find, "findAction")
        self._action(edit, self.tr("Add to Reading &List…"), self.choose_list, QKeySequence("Ctrl+L"), "addToListAction")
        self.delete_action = self._action(edit, self.tr("&Delete From Library…"), self.delete_selected,
                                          QKeySequence.StandardKey.Delete, "deleteAction")
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.paper_list.addAction(self.delete_action)
        status_menu = edit.addMenu(self.tr("Mark &As"))
        for n, status in enumerate(Status, 1):
            self._action(status_menu, self.tr(STATUS_LABELS[status]),
                         lambda _=False, s=status.value: self.set_status(s), QKeySequence(f"Alt+{n}"),
                         f"status{n}Action")
        # 1-9 toggle the nine most used tags, only while the list has the focus (eventFilter)
        self.paper_list.installEventFilter(self)

        edit.addSeparator()
        self._action(edit, self.tr("&Preferences…"), self.preferences, QKeySequence.StandardKey.Preferences,
                     "preferencesAction").setShortcuts(keys(*PREFERENCES))

        help_menu = self.menuBar().addMenu(self.tr("&Help"))
        self._action(help_menu, self.tr("&Keyboard Shortcuts"), self.show_shortcuts, QKeySequence.StandardKey.HelpContents,
                     "shortcutsAction")
        self._action(help_menu, self.tr("&About Papershelf"), self.about, None, "aboutAction")

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.KeyPress:
            key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if watched is self.search_box and key == Qt.Key.Key_Escape and not mods:
                self.clear_search()
                return True
            if (watched is self.paper_list and Qt.Key.Key_1 <= key <= Qt.Key.Key_9
                    and mods == Qt.KeyboardModifier.NoModifier):
                self.toggle_top_tag(key - Qt.Key.Key_0)
                return True
        return super().eventFilter(watched, event)

    def importing(self) -> bool:
        """An import (or an export) is running: the library must not change under it."""
        return self._import_task is not None and not self._import_task.finished

    def _update_undo_actions(self, *_args) -> None:
        stack, busy = self.undo_stack, self.importing()
        for action, prefix, can, text in ((self.undo_action, self.tr("&Undo"), stack.canUndo(), stack.undoText()),
                                          (self.redo_action, self.tr("&Redo"), stack.canRedo(), stack.redoText())):
            action.setEnabled(can and not busy)
            action.setText(f"{prefix} {text}" if text else prefix)

    def undo(self) -> None:
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        self.undo_stack.undo()

    def redo(self) -> None:
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        self.undo_stack.redo()

    def _action(self, menu, text, slot, shortcut, name) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    # ---- settings ----------------------------------------------------------
    def _restore_settings(self) -> None:
        s = QSettings()
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:   # first start: most of the screen, at most 1400x860 (fits 1366x768 with its panels)
            screen = self.screen().availableGeometry() if self.screen() else None
            width, height = 1400, 860
            if screen is not None:
                width, height = min(width, int(screen.width() * 0.92)), min(height, int(screen.height() * 0.9))
            self.resize(width, height)
        for key, splitter in (("window/mainSplitter", self.main_split), ("window/rightSplitter", self.right_split)):
            state = s.value(key)
            if isinstance(state, QByteArray) and not state.isEmpty():
                splitter.restoreState(state)
        header = s.value("list/columns")       # not "list/header": its widths hid columns at 1366x768
        if isinstance(header, QByteArray) and not header.isEmpty():
            self.columns.restore(header)
        sort = s.value("list/sort", "relevance", str)
        if sort in COLUMNS:
            self.query = self.query.with_(sort=sort, descending=s.value("list/descending", False, bool))

    def save_settings(self) -> None:
        s = QSettings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/mainSplitter", self.main_split.saveState())
        s.setValue("window/rightSplitter", self.right_split.saveState())
        s.setValue("list/columns", self.paper_list.horizontalHeader().saveState())
        s.setValue("list/sort", self.query.sort)
        s.setValue("list/descending", self.query.descending)
        s.sync()

    def closeEvent(self, event) -> None:
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
    def _query_typed(self, text: str) -> None:
        self.query = self.query.with_(text=text)
        if search_as_you_type() or not text:
            self._search_timer.start()

    def focus_search(self) -> None:
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def clear_search(self) -> None:
        if self.search_box.text():
            self.search_box.clear()
            self.query = self.query.with_(text="")
            self.run_search()

    def _filter_chosen(self, kind: str, value) -> None:
        if kind == "import":
            self.query = self.query.with_(only_ids=self.last_import.ids if value else None)
            self.run_search()
            return
        field = {"status": "status", "tag": "tag", "area": "area", "list": "list_name"}[kind]
        self.query = self.query.with_(**{field: value})
        self.run_search()

    def _sort_requested(self, column: str, descending: bool) -> None:
        self.query = self.query.with_(sort=column, descending=descending)
        self.run_search()

    def _show_library_now(self) -> None:
        """The first rows without waiting for any thread: the whole library,
        newest first (the order the index gives an empty query). Counts follow
        a moment later, sorted views and filters go through the search."""
        if self.query != Query(sort=self.query.sort, descending=self.query.descending) or self.query.sort != "relevance":
            self.run_search()
            return
        ids = self.library.ids()
        ids.reverse()
        self.last_answer = Answer(self.query, ids, len(ids), indexed=False)
        self.model.set_ids(ids)
        self.result_label.setText(n_papers(len(ids)))
        self._update_empty_state()
        QTimer.singleShot(0, lambda: self._update_counts(self.last_answer) if self.last_answer.facets == {} else None)

    def run_search(self) -> None:
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

    def _reselect(self, ids: list[str], current: str | None) -> None:
        sel = self.paper_list.selectionModel()
        if not ids or len(ids) > 2000:
            self._selection_changed()
            return
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        sel.blockSignals(True)
        for pid in ids:
            row = self.model.row_of(pid)
            if row >= 0:
                sel.select(self.model.index(row, 0), flags)
        if current and self.model.row_of(current) >= 0:
            sel.setCurrentIndex(self.model.index(self.model.row_of(current), 0),
                                QItemSelectionModel.SelectionFlag.NoUpdate)
        sel.blockSignals(False)
        self._selection_changed()

    def _update_counts(self, answer: Answer) -> None:
        shown = None if self._shows_everything(answer.query) else set(answer.ids)
        lists = list_counts(self.library, shown)
        if answer.facets:
            facets = answer.facets
            self.filter_panel.set_counts(facets.get("status", {}), facets.get("tags", {}),
                                         facets.get("area", {}), lists, answer.total)
        else:   # no index yet: counted from the library
            facets = facet_counts(self.library, answer.ids if shown is not None else self.library.ids())
            self.filter_panel.set_counts(facets["status"], facets["tags"], facets["area"], lists, answer.total)

    @staticmethod
    def _shows_everything(query: Query) -> bool:
        return query.only_ids is None and not (query.text.strip() or query.status or query.tag
                                                   or query.area or query.list_name)

    def _recount_shown(self) -> None:
        """Counts of the papers shown, from the library, right after an edit."""
        ids = self.model.ids()
        if self.last_answer is None or len(ids) > RECOUNT_LIMIT:
            return          # the index's next answer brings them, a moment later
        everything = self._shows_everything(self.query)
        facets = facet_counts(self.library, ids if not everything else self.library.ids())
        lists = list_counts(self.library, None if everything else set(ids))
        total = len(self.library) if everything else len(ids)
        self.filter_panel.set_counts(facets["status"], facets["tags"], facets["area"], lists, total)

    def _update_empty_state(self) -> None:
        self.list_stack.setCurrentIndex(1 if len(self.library) == 0 else 0)

    # ---- selection ---------------------------------------------------------
    def selected_ids(self) -> list[str]:
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

    # ---- edits (each one undoable) -------------------------------------------
    def _edit(self, label: str, ids: list[str], action, touches_lists: bool = False) -> int | None:
        """Make an undoable edit. Returns how many papers it changed (0: nothing
        changed, so there is nothing to undo), or None if it was not made."""
        if not ids:
            self.statusBar().showMessage(self.tr("Select papers first."), 3000)
            return None
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return None
        results = []

        def run():
            results.append(action())
            return results[-1]
        start = self.undo_stack.index()
        try:
            self.undo_stack.push(LibraryEdit(self.library, label, ids, run, touches_lists))
        except (PapershelfError, ValueError) as exc:
            self.show_error(self.tr("The change was not made"), str(exc))
            return None
        if self.undo_stack.index() == start:     # nothing changed: the step went obsolete
            return 0
        changed = results[0] if results else None
        return changed if isinstance(changed, int) and not isinstance(changed, bool) else len(ids)

    def _say_edited(self, kind: str, n: int | None, what: str = "") -> None:
        """The status-bar line after an edit; only an edit that changed something
        points to Undo, and it counts the papers it changed."""
        if n is None:
            return
        undo = self.findChild(QAction, "undoAction")
        key = undo.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if undo is not None else ""
        self.statusBar().showMessage(edited(kind, n, what, key), 8000)

    def add_tags(self, tags: list[str]) -> None:
        ids = self.selected_ids()
        self._say_edited("tag", self._edit(self.tr("Tag %s") % ", ".join(tags), ids,
                                           lambda: self.library.add_tags(ids, tags)), quoted(tags))
        self._refresh_lists_and_tags()

    def remove_tag(self, tag: str) -> None:
        ids = self.selected_ids()
        self._say_edited("untag", self._edit(self.tr("Remove tag %s") % tag, ids,
                                             lambda: self.library.remove_tags(ids, [tag])), quoted([tag]))
        self._refresh_lists_and_tags()

    def top_tags(self) -> list[str]:
        """The tags keys 1-9 toggle: the nine most used (ties alphabetical)."""
        return [t for t, _ in sorted(self.library.tag_counts().items(), key=lambda kv: (-kv[1], kv[0]))][:9]

    def toggle_top_tag(self, n: int) -> None:
        top = self.top_tags()
        if n > len(top):
            self.statusBar().showMessage(self.tr("There is no tag number %d yet.") % n, 3000)
            return
        tag = top[n - 1]
        ids = self.selected_ids()
        if ids and all(tag in self.library.get(pid).tags for pid in ids):
            self.remove_tag(tag)
        else:
            self.add_tags([tag])

    def set_status(self, status: str) -> None:
        ids = self.selected_ids()
        label = self.tr("Mark as %s") % self.tr(STATUS_LABELS[Status(status)])
        self._say_edited("status", self._edit(label, ids, lambda: self.library.set_status(ids, status)),
                         self.tr(STATUS_LABELS[Status(status)]))

    def set_rating(self, rating) -> None:
        ids = self.selected_ids()
        self._say_edited("rating" if rating else "unrate",
                         self._edit(self.tr("Rate"), ids, lambda: self.library.set_rating(ids, rating)),
                         "★" * (rating or 0))

    def save_notes(self, paper_id: str, text: str) -> None:
        """Keep the notes typed for a paper (one undoable step; nothing if unchanged or gone)."""
        if paper_id not in self.library or self.library.get(paper_id).notes == text:
            return
        self._edit(self.tr("Edit notes"), [paper_id], lambda: self.library.set_notes(paper_id, text))

    def choose_list(self) -> None:
        if not self.selected_ids():
            self.statusBar().showMessage(self.tr("Select papers first."), 3000)
            return
        pos = self.paper_list.viewport().mapToGlobal(self.paper_list.visualRect(self.paper_list.currentIndex()).center())
        self.tag_panel.list_menu.popup(pos)

    def add_to_list(self, name: str) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        if not name:
            name, ok = QInputDialog.getText(self, self.tr("New reading list"), self.tr("Name of the new list:"))
            if not ok or not name.strip():
                return
        self._edit(self.tr("Add to %s") % name, ids, lambda: self.library.add_to_list(name, ids), touches_lists=True)
        self._refresh_lists_and_tags()

    def delete_selected(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        answer = QMessageBox.question(
            self, self.tr("Delete papers"),
            self.tr("Remove %s from the library? Their tags, notes and list places go too "
                    "(Edit ▸ Undo brings them back).") % n_papers(len(ids)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            self.undo_stack.push(DeletePapers(self.library, ids, self.tr("Delete %s") % n_papers(len(ids))))
        except PapershelfError as exc:
            self.show_error(self.tr("Nothing was deleted"), str(exc))
        self._update_empty_state()

    # ---- tags and lists from the sidebar -------------------------------------
    def rename_tag(self, tag: str) -> None:
        new, ok = QInputDialog.getText(self, self.tr("Rename tag"),
                                       self.tr("New name for “%s” (an existing tag's name merges the two):") % tag,
                                       text=tag)
        if not ok or not new.strip() or new.strip() == tag:
            return
        ids = [p.id for p in self.library.papers() if tag in p.tags]
        if self._edit(self.tr("Rename tag %s") % tag, ids, lambda: self.library.rename_tag(tag, new)) is not None:
            if self.filter_panel.active["tag"] == tag:
                self.filter_panel.active["tag"] = None
                self.query = self.query.with_(tag=None)
            color = tag_color(tag)
            if color and not tag_color(new.strip().casefold()):
                set_tag_color(" ".join(new.split()).casefold(), color)
            self._refresh_lists_and_tags()

    def color_tag(self, tag: str) -> None:
        color = QColorDialog.getColor(QColor(tag_color(tag) or "#ddf4ff"), self, self.tr("Colour of %s") % tag)
        if color.isValid():
            set_tag_color(tag, color.name())
            self.run_search()
            self._selection_changed()

    def rename_list(self, name: str) -> None:
        new, ok = QInputDialog.getText(self, self.tr("Rename reading list"), self.tr("New name:"), text=name)
        if not ok or not new.strip() or new.strip() == name:
            return
        members = self.library.list_ids(name)
        if self._edit(self.tr("Rename list %s") % name, members or [name],
                      lambda: self.library.rename_list(name, new), touches_lists=True) is not None:
            if self.query.list_name == name:
                self.filter_panel.active["list"] = None
                self.query = self.query.with_(list_name=None)
            self._refresh_lists_and_tags()
            self.run_search()

    def delete_list(self, name: str) -> None:
        answer = QMessageBox.question(self, self.tr("Delete reading list"),
                                      self.tr("Delete the reading list “%s”? The papers stay in the library.") % name)
        if answer != QMessageBox.StandardButton.Yes:
            return
        members = self.library.list_ids(name)
        if self._edit(self.tr("Delete list %s") % name, members or [name],
                      lambda: self.library.delete_list(name), touches_lists=True) is not None:
            if self.query.list_name == name:
                self.filter_panel.active["list"] = None
                self.query = self.query.with_(list_name=None)
            self._refresh_lists_and_tags()
            self.run_search()

    def _refresh_lists_and_tags(self) -> None:
        self.tag_panel.set_known_tags(sorted(self.library.tag_counts()))
        self.tag_panel.set_key_tags(self.top_tags())
        self.tag_panel.set_lists(sorted(self.library.lists(), key=str.casefold))

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
    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, self.tr("Import listings"), str(Path.home()), self.tr(IMPORTABLE))
        if files:
            self.import_files([Path(f) for f in files])

    def import_samples(self) -> None:
        samples = paths.sample_listings()
        if not samples:
            self.show_error(self.tr("No sample library"), self.tr("The sample listings are missing from this installation."))
            return
        self.import_files(samples)

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

    def import_files(self, files: list[Path], as_listing: bool = False,
                     completes: list[FileReport] | None = None) -> None:
        """`completes`: the reports of the import these files were held back from
        (for a preview); both then make one undoable step."""
        if self.importing():
            self.statusBar().showMessage(self.tr("An import is already running."), 4000)
            return
        lib = self.library

        def work(progress, cancelled):
            return lib.import_files(files, progress=lambda n, total, _path: progress(n, total), cancelled=cancelled,
                                    as_listing=as_listing)

        self._show_progress(self.tr("Importing…"))
        self.search.wait_for_edits = False
        self.import_action.setEnabled(False)
        self.tag_panel.setEnabled(False)
        self._import_task = run_task(work, parent=self, name="papershelf-import",
                                     on_done=lambda reports: self._import_done(reports, completes),
                                     on_error=self._import_failed,
                                     on_progress=lambda n, total: self._progress_step(n, total, self.tr("Importing")))
        self._update_undo_actions()

    def _import_finished_common(self) -> None:
        self._hide_progress()
        self.search.wait_for_edits = True
        self.import_action.setEnabled(True)
        self.tag_panel.setEnabled(True)
        self._update_undo_actions()

    def _imported_message(self, reports: list[FileReport]) -> str:
        added = sum(r.added for r in reports)
        merged = sum(r.merged for r in reports)
        return (self.tr("Imported %s, %s merged with ones already here.")
                % (n_papers(added).replace(" paper", " new paper"), f"{merged:,}"))

    def _ask_about(self, unsure: list[FileReport], sure: list[FileReport], accept) -> None:
        """Show the preview of files held back; say so in the status bar until it is answered."""
        from .import_preview import ask_to_import_as_listing, shown_name
        names = ", ".join(shown_name(r.path) for r in unsure)
        waiting = self.tr("%s waits for your answer.") % names
        self.statusBar().showMessage(f"{self._imported_message(sure)} {waiting}" if sure else waiting)
        box = self.import_preview = ask_to_import_as_listing(self, unsure, accept)

        def answered() -> None:
            if box.clickedButton() is not box.findChild(QPushButton, "importPreviewImport"):
                not_imported = (self.tr("%s was not imported.") if len(unsure) == 1
                                else self.tr("%s were not imported.")) % names
                self.statusBar().showMessage(f"{self._imported_message(sure)} {not_imported}" if sure
                                             else not_imported, 8000)

        box.finished.connect(answered)

    def _import_done(self, reports: list[FileReport], completes: list[FileReport] | None = None) -> None:
        self._import_finished_common()
        if not reports:
            self.statusBar().showMessage(self.tr("Import cancelled; the library is unchanged."), 5000)
            self.importFinished.emit([])
            return
        self.last_import.record(reports, completes)
        unsure = [r for r in reports if r.unconfirmed]      # shown with a preview, imported on Import
        sure = [r for r in reports if not r.unconfirmed]
        if unsure:
            self._ask_about(unsure, sure, lambda files: self.import_files(files, as_listing=True, completes=reports))
        else:
            self.statusBar().showMessage(self._imported_message([*(completes or []), *reports]), 8000)
        troubles = [r for r in reports if (r.error or r.problems) and not r.unconfirmed]
        if troubles:
            lines = []
            for r in sure:
                lines.append(r.summary())
                for p in r.problems[:50]:
                    lines.append(f"    {p}")
                if len(r.problems) > 50:
                    lines.append(f"    … and {len(r.problems) - 50} more")
            box = QMessageBox(QMessageBox.Icon.Warning, self.tr("Import finished with problems"),
                              self.tr("Some files, or parts of them, could not be imported. "
                                      "Everything else was imported."), QMessageBox.StandardButton.Ok, self)
            box.setObjectName("importReport")
            box.setDetailedText("\n".join(lines))
            box.open()
            self.import_report = box
        self._refresh_lists_and_tags()
        self._update_empty_state()
        self.run_search()
        self.importFinished.emit(reports)

    def _import_failed(self, exc: BaseException) -> None:
        self._import_finished_common()
        self.show_error(self.tr("Nothing was imported"), str(exc))
        self.importFinished.emit([])

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [Path(u.toLocalFile()) for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.import_files(files)

    # ---- exporting -------------------------------------------------------------
    EXPORT_FILTERS = {"bibtex": "BibTeX, ASCII, for bibtex (*.bib)",
                      "biblatex": "BibLaTeX, UTF-8, for biber (*.bib)"}

    def export_selection(self) -> None:
        self.export_ids(self.selected_ids(), self.tr("selection"))

    def export_shown(self) -> None:
        self.export_ids(self.model.ids(), self.query.list_name or self.query.tag or self.tr("papers"))

    def export_filter(self, kind: str, value: str) -> None:
        if kind == "list":
            ids = self.library.list_ids(value)
        elif kind == "tag":
            ids = [p.id for p in self.library.query(tag=value)]
        else:
            ids = [p.id for p in self.library.query(status=value)]
        self.export_ids(ids, value)

    def export_ids(self, ids: list[str], name: str) -> None:
        if not ids:
            self.statusBar().showMessage(self.tr("Nothing to export: no papers."), 4000)
            return
        if self.importing():
            self.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return
        s = QSettings()
        folder = s.value("export/folder", str(Path.home()), str)
        dialect = s.value("export/dialect", "bibtex", str)
        if dialect not in self.EXPORT_FILTERS:
            dialect = "bibtex"
        slug = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name).strip("-") or "papers"
        path, chosen = QFileDialog.getSaveFileName(
            self, self.tr("Export %s to BibTeX") % n_papers(len(ids)), str(Path(folder) / f"{slug}.bib"),
            ";;".join(self.EXPORT_FILTERS.values()), self.EXPORT_FILTERS[dialect])
        if not path:
            return
        dialect = next((k for k, v in self.EXPORT_FILTERS.items() if v == chosen), dialect)
        if not path.lower().endswith(".bib"):
            path += ".bib"
        s.setValue("export/folder", str(Path(path).parent))
        s.setValue("export/dialect", dialect)
        lib = self.library

        def work(progress, cancelled):
            return lib.export_bibtex(ids, path, dialect)[0]

        def done(report) -> None:
            self._import_finished_common()
            self.statusBar().showMessage(report.summary(), 10000)
            self.exportFinished.emit(report)

        def failed(exc) -> None:
            self._import_finished_common()
            self.show_error(self.tr("Nothing was exported"), str(exc))
            self.exportFinished.emit(None)

        self._show_progress(self.tr("Exporting…"))
        self.tag_panel.setEnabled(False)
        self._import_task = run_task(work, parent=self, name="papershelf-export", on_done=done, on_error=failed)
        self._update_undo_actions()

    # ---- progress and messages ----------------------------------------------
    def _show_progress(self, text: str) -> None:
        self.progress.setRange(0, 0)
        self.progress.setFormat(text)
        self.progress.show()
        self.cancel_button.show()

    def _progress_step(self, done: int, total: int, label: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat(f"{label} %p%")

    def _hide_progress(self) -> None:
        running = [t for t in (self._task, self._import_task) if t is not None and not t.finished]
        if not running:
            self.progress.hide()
            self.cancel_button.hide()

    def cancel_task(self) -> None:
        for task in (self._import_task, self._task):
            if task is not None and not task.finished:
                task.cancel()
                self.progress.setFormat(self.tr("Cancelling…"))
                return

    def show_error(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("errorDialog")
        box.open()
        self.error_box = box

    def preferences(self) -> None:
        from .dialogs import PreferencesDialog
        dialog = PreferencesDialog(str(self.library.folder), self)
        dialog.open()
        self.preferences_dialog = dialog

    def show_shortcuts(self) -> None:
        from .dialogs import ShortcutsDialog
        dialog = ShortcutsDialog(self)
        dialog.open()
        self.shortcuts_dialog = dialog

    def about(self) -> None:
        from .. import __version__
        QMessageBox.about(self, self.tr("About Papershelf"),
                          self.tr("<b>Papershelf %s</b><p>A reading-list manager for research papers.</p>"
                                  "<p>Library: %s</p>") % (__version__, self.library.folder))
