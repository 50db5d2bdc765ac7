"""The "Possible duplicates" window: pairs of papers side by side, merged or kept apart.

The pairs come from `Library.duplicates` (the same DOI, arXiv id or title; see
core/duplicates.py). Merge and Keep Apart are each one step on the window's
undo stack, so Ctrl+Z in the main window takes them back like any edit. The
dialog is not modal: the window goes on while it is open, and it follows the
library's changes (an undo, an import) by listing the pairs again.

After an import, the entries it merged into papers are listed here too, each
with the entry's key in its file and the paper's key: the import itself only
says how many in the status bar, and never stops the user with a box.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QUndoCommand
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core import reports
from ..core.errors import PapershelfError
from ..core.library import Change, FileReport, Library
from ..core.paper import Paper
from .commands import OwnStep
from .tasks import Task, run_task

if TYPE_CHECKING:
    from ..core.library import Merged, Pair
    from .main_window import MainWindow

AnyIndex = QModelIndex | QPersistentModelIndex
REFRESH_MS = 150  # a burst of changes (an import, an undo) lists the pairs once


class PairModel(QAbstractTableModel):
    """The possible duplicates, one pair a row: why, then each paper's title."""

    COLUMNS = ("Why", "First paper", "Second paper")

    def __init__(self, library: Library, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.pairs: list[Pair] = []

    def set_pairs(self, pairs: list[Pair]) -> None:
        """Show these pairs."""
        self.beginResetModel()
        self.pairs = pairs
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """One row a pair."""
        return 0 if parent.isValid() else len(self.pairs)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """Why, and the two papers."""
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The column names."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.tr(self.COLUMNS[section])
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The reason, or a paper's title with its year."""
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        pair = self.pairs[index.row()]
        if index.column() == 0:
            return pair.reason
        paper = self.library.find(pair.a if index.column() == 1 else pair.b)
        if paper is None:
            return ""
        return f"{paper.title} ({paper.year})" if paper.year else paper.title


class CompareModel(QAbstractTableModel):
    """Two papers side by side, one field a row; the fields that differ in bold."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.papers: tuple[Paper, Paper] | None = None
        self.rows: list[str] = []

    def set_papers(self, a: Paper | None, b: Paper | None) -> None:
        """Compare these two (None: show nothing)."""
        self.beginResetModel()
        self.papers = (a, b) if a is not None and b is not None else None
        self.rows = (
            [n for n in reports.PAIR_FIELDS if reports.pair_field(a, n) or reports.pair_field(b, n)]
            if a is not None and b is not None
            else []
        )
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """One row a field either paper has."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """The two papers."""
        return 0 if parent.isValid() else 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """The field names down the side; First and Second along the top."""
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Vertical:
            return reports.pair_label(self.rows[section]) if section < len(self.rows) else None
        return (self.tr("First (kept)"), self.tr("Second"))[section]

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A field of one paper; bold where the two differ."""
        if not index.isValid() or self.papers is None:
            return None
        name = self.rows[index.row()]
        values = [reports.pair_field(p, name) for p in self.papers]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return values[index.column()]
        if role == Qt.ItemDataRole.FontRole and values[0] != values[1]:
            font = QFont()
            font.setBold(True)
            return font
        return None


class MergePapers(QUndoCommand):
    """A merge already made (pushed after it succeeded: Qt pushes a command whose first redo
    raised all the same, leaving an Undo that does nothing); undo puts both papers back as
    they were, with their lists, redo makes the merge again."""

    def __init__(self, library: Library, merged: Merged, label: str) -> None:
        super().__init__(label)
        self.library = library
        self.merged = merged
        self._made = True  # the push's own redo has nothing to do
        self.own = OwnStep(library)  # the merge is the library's newest action: its undo is the library's
        self.own.token = library.undo_token()

    def redo(self) -> None:
        """Make the merge again (not on the push: it is made)."""
        if self._made:
            self._made = False
            return
        if not self.own.redo():
            self.library.duplicates.redo(self.merged)

    def undo(self) -> None:
        """Take the merge back."""
        if not self.own.undo():
            self.library.duplicates.undo(self.merged)


class KeepApart(QUndoCommand):
    """Remember that two papers are different; undo offers the pair again."""

    def __init__(self, library: Library, a: str, b: str, label: str) -> None:
        super().__init__(label)
        self.library, self.a, self.b = library, a, b
        self.on_change = lambda: None  # the dialog lists the pairs again
        self._made = True  # pushed once made (as MergePapers): the push's redo has nothing to do

    def redo(self) -> None:
        """Keep them apart again (not on the push: it is done)."""
        if self._made:
            self._made = False
        else:
            self.library.duplicates.keep_apart(self.a, self.b)
        self.on_change()

    def undo(self) -> None:
        """Offer the pair again."""
        self.library.duplicates.forget_apart(self.a, self.b)
        self.on_change()


class DuplicatesDialog(QDialog):
    """The pairs, the selected pair side by side, Merge and Keep Apart; and what the last
    import merged."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("duplicatesDialog")
        self.setWindowTitle(self.tr("Possible Duplicates"))
        self.resize(900, 600)
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setObjectName("duplicatesSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical)
        self.pair_view = QTableView()
        self.pair_view.setObjectName("duplicatePairs")
        self.compare_view = QTableView()
        self.compare_view.setObjectName("duplicateCompare")
        for view in (self.pair_view, self.compare_view):
            view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
            view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
            split.addWidget(view)
        self.merges_label = QLabel(self.tr("Merged by the last import (the entry's key, and the paper's):"))
        self.merges = QPlainTextEdit()
        self.merges.setObjectName("lastImportMerges")
        self.merges.setReadOnly(True)
        box = QWidget()
        box_layout = QVBoxLayout(box)
        box_layout.setContentsMargins(0, 0, 0, 0)
        box_layout.addWidget(self.merges_label)
        box_layout.addWidget(self.merges)
        self.merges_box = box
        split.addWidget(box)
        layout.addWidget(split, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.merge_button = QPushButton(self.tr("&Merge"))
        self.merge_button.setObjectName("mergeButton")
        self.merge_button.setToolTip(self.tr("Make one paper of the two: the first keeps its id and citation key"))
        self.apart_button = QPushButton(self.tr("&Keep Apart"))
        self.apart_button.setObjectName("keepApartButton")
        self.apart_button.setToolTip(self.tr("They are different papers: do not offer them again"))
        for button in (self.merge_button, self.apart_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)


class DuplicatesView(QObject):
    """Opens the dialog from the menu, keeps it listing the library's pairs, makes merges and
    keep-aparts undoable steps, and tells the merges an import made."""

    listed = Signal()  # the dialog now lists the pairs as the library has them

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: DuplicatesDialog | None = None
        self.pairs = PairModel(window.library, self)
        self.compare = CompareModel(self)
        self.last_merges = ""
        self.task: Task | None = None
        self.again = False  # the library changed while the pairs were being listed
        self._timer = QTimer(self, singleShot=True, interval=REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        window.events.changed.connect(self._library_changed)
        window.importFinished.connect(self._import_finished)

    # ---- the dialog ----------------------------------------------------------------
    def open(self) -> None:
        """Show the dialog (not modal), listing the pairs as they are now."""
        if self.dialog is None:
            dialog = self.dialog = DuplicatesDialog(self.window)
            dialog.pair_view.setModel(self.pairs)
            # the reason is short: the titles take the room (set once the model gives the columns)
            dialog.pair_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
            dialog.compare_view.setModel(self.compare)
            selection = dialog.pair_view.selectionModel()
            selection.currentRowChanged.connect(lambda *_: self._show_current())
            dialog.merge_button.clicked.connect(self.merge_current)
            dialog.apart_button.clicked.connect(self.keep_current_apart)
            # Undo and Redo work here as in the window: a merge made here is taken back here
            dialog.addActions([self.window.menus.undo_action, self.window.menus.redo_action])
        self.dialog.summary.setText(self.tr("Looking for papers that may be one paper…"))
        self.refresh()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()

    def refresh(self) -> None:
        """List the pairs again, off the GUI thread (a pass over every paper), keeping the
        selection on the same row where there is one."""
        if self.dialog is None:
            return
        if self.task is not None:  # one at a time; the latest state is listed once it is done
            self.again = True
            return
        for button in (self.dialog.merge_button, self.dialog.apart_button):
            button.setEnabled(False)  # until the pairs are listed again: the selected one may be gone
        dupes = self.window.library.duplicates
        papers = list(self.window.library.papers())  # a copy: the GUI thread may edit meanwhile

        def work(_progress: object, _cancelled: object) -> list[Pair]:
            return dupes.pairs(papers)

        def failed(exc: BaseException) -> None:
            self.task = None
            self.window.show_error(self.tr("The possible duplicates could not be listed"), str(exc))

        self.task = run_task(work, parent=self, name="papershelf-duplicates", on_done=self._listed, on_error=failed)

    def _listed(self, pairs: list[Pair]) -> None:
        self.task = None
        dialog = self.dialog
        if self.again:
            self.again = False
            self.refresh()
            return
        if dialog is None:
            return
        row = max(dialog.pair_view.currentIndex().row(), 0)
        self.pairs.set_pairs(pairs)
        n = len(pairs)
        dialog.summary.setText(
            self.tr("No possible duplicates: no two papers share a DOI, an arXiv id or a title.")
            if not n
            else self.tr(
                "%s pairs of papers may be one paper each. Merge makes one of them (Ctrl+Z takes it "
                "back); Keep Apart says they are different papers."
            )
            % f"{n:,}"
        )
        dialog.merges_box.setVisible(bool(self.last_merges))
        dialog.merges.setPlainText(self.last_merges)
        if n:
            dialog.pair_view.setCurrentIndex(self.pairs.index(min(row, n - 1), 0))
        self._show_current()
        self.listed.emit()

    def current(self) -> Pair | None:
        """The selected pair, if any."""
        if self.dialog is None:
            return None
        index = self.dialog.pair_view.currentIndex()
        if not index.isValid() or index.row() >= len(self.pairs.pairs):
            return None
        return self.pairs.pairs[index.row()]

    def _show_current(self) -> None:
        pair = self.current()
        lib = self.window.library
        self.compare.set_papers(*((lib.find(pair.a), lib.find(pair.b)) if pair else (None, None)))
        if self.dialog is not None:
            for button in (self.dialog.merge_button, self.dialog.apart_button):
                button.setEnabled(pair is not None)

    # ---- the actions -----------------------------------------------------------------
    def _busy(self) -> bool:
        if self.window.transfers.running():
            self.window.statusBar().showMessage(self.tr("Wait for the import to finish."), 3000)
            return True
        return False

    def merge_current(self) -> None:
        """Merge the second paper of the selected pair into the first, as one undoable step."""
        pair = self.current()
        if pair is None or self._busy():
            return
        win = self.window
        try:
            merged = win.library.duplicates.merge(pair.a, pair.b)
        except PapershelfError as exc:
            win.show_error(self.tr("The papers were not merged"), str(exc))
            return
        win.undo_stack.push(MergePapers(win.library, merged, self.tr("Merge of 2 papers")))
        win.statusBar().showMessage(merged.summary() + " " + self.tr("Ctrl+Z takes it back."), 10000)
        self.refresh()

    def keep_current_apart(self) -> None:
        """Remember that the selected pair are different papers, as one undoable step."""
        pair = self.current()
        if pair is None or self._busy():
            return
        win = self.window
        try:
            win.library.duplicates.keep_apart(pair.a, pair.b)
        except PapershelfError as exc:
            win.show_error(self.tr("The papers were not kept apart"), str(exc))
            return
        command = KeepApart(win.library, pair.a, pair.b, self.tr("Keep 2 papers apart"))
        command.on_change = self.refresh
        win.undo_stack.push(command)
        win.statusBar().showMessage(self.tr("Kept apart: they are no longer offered as duplicates."), 6000)

    # ---- following the library --------------------------------------------------------
    def _library_changed(self, _change: Change) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self._timer.start()

    def _import_finished(self, file_reports: list[FileReport]) -> None:
        """Keep what the import merged for the dialog, and say how many in the status bar."""
        n = reports.merge_count(file_reports)
        self.last_merges = reports.merge_details(file_reports)
        if self.dialog is not None and self.dialog.isVisible():
            self._timer.start()
        if n:
            bar = self.window.statusBar()
            told = (
                self.tr("1 entry was merged into a paper already here")
                if n == 1
                else self.tr("%s entries were merged into papers already here") % f"{n:,}"
            )
            more = self.tr("%s: Edit ▸ Possible Duplicates shows which, with both keys.") % told
            bar.showMessage(f"{bar.currentMessage()} {more}".strip(), 15000)
