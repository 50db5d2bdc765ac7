"""Conflicts in the window: what two devices changed at once, shown and settled.

A field set on two devices at the same moment keeps the losing value as a
conflict (core/store/merge.py); a paper deleted on one device while another
edited it is one too. `ConflictBar`, over the abstract, says so for the paper
shown ("Another device set notes to '…' at the same time") with *Use that*
and *Keep this*. Edit ▸ Conflicts… (and the status bar's count) opens
`ConflictsDialog`, every kept conflict in a table (`ConflictsModel`) with
Take and Dismiss. Settling one is an edit of this device that has seen both
values: it syncs and settles it on every device. The work is done on the live
worker (`LiveChanges.settle`), which also scans for conflicts.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.attachments import named_files
from ..core.library import Library
from .live import LiveChanges

if TYPE_CHECKING:
    from .main_window import MainWindow

_NO_PARENT = QModelIndex()
COLUMNS = ("Paper", "Field", "Shown", "Kept", "Device", "When")


def shown_value(value: Any, width: int = 60) -> str:
    """A value on one line, cut to `width` characters (files by their names)."""
    value = named_files(value)
    if value is None or value == "" or value == []:
        return "(empty)"
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def when(hlc: int) -> str:
    """A conflict's stamp as a local date and time."""
    return _dt.datetime.fromtimestamp(hlc / 1000).strftime("%Y-%m-%d %H:%M")


def paper_title(lib: Library, pid: str) -> str:
    """A paper's title, or a deleted one's as the deletion kept it."""
    paper = lib.find(pid)
    return paper.title if paper is not None else str(lib.deleted_record(pid).get("title", "") or pid)


class ConflictsModel(QAbstractTableModel):
    """The kept conflicts, one row each, oldest first."""

    def __init__(self, library: Library, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.rows: list[Any] = []

    def set_conflicts(self, conflicts: list[Any]) -> None:
        """Show these conflicts."""
        self.beginResetModel()
        self.rows = list(conflicts)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """How many conflicts are kept."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """Paper, field, the value shown, the value kept, the device and when."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The columns' names."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.tr(COLUMNS[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A conflict's cell, as text (the whole value in the tooltip)."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        c = self.rows[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and column in ("Shown", "Kept"):
            return shown_value(c.current if column == "Shown" else c.value, 2000)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if column == "Paper":
            return shown_value(paper_title(self.library, c.paper), 50)
        if column == "Field":
            return c.field or self.tr("(deleted on one device while another edited it)")
        if column == "Shown":
            return self.tr("(deleted)") if not c.field else shown_value(c.current)
        if column == "Kept":
            return self.tr("(the paper as it was edited)") if not c.field else shown_value(c.value)
        if column == "Device":
            return c.device
        return when(c.hlc)


class ConflictsDialog(QDialog):
    """Every kept conflict, with Take (the kept value, or the deleted paper back) and Dismiss."""

    def __init__(self, live: LiveChanges, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self.setObjectName("conflictsDialog")
        self.setWindowTitle(self.tr("Conflicts"))
        self.resize(760, 320)
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setObjectName("conflictsSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.model = ConflictsModel(live.library, self)
        view = self.view = QTableView()
        view.setObjectName("conflictsTable")
        view.setAccessibleName(self.tr("Conflicts"))
        view.setModel(self.model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.verticalHeader().hide()
        view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        view.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.take_button = QPushButton(self.tr("&Take"))
        self.take_button.setObjectName("conflictsTakeButton")
        self.take_button.setToolTip(self.tr("Use the kept value (or bring the deleted paper back)"))
        self.dismiss_button = QPushButton(self.tr("&Dismiss"))
        self.dismiss_button.setObjectName("conflictsDismissButton")
        self.dismiss_button.setToolTip(self.tr("Keep what the library shows and let the kept value go"))
        buttons.addButton(self.take_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.dismiss_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.take_button.clicked.connect(lambda: self._settle(True))
        self.dismiss_button.clicked.connect(lambda: self._settle(False))
        view.selectionModel().selectionChanged.connect(self._update_buttons)
        live.conflictsChanged.connect(self.reload)
        self.reload()

    def reload(self) -> None:
        """Show the conflicts as the last scan found them."""
        self.model.set_conflicts(self.live.conflicts)
        n = len(self.model.rows)
        self.summary.setText(
            self.tr("No conflicts: every device's edits merged cleanly.")
            if not n
            else (
                self.tr("1 value kept because two devices changed the same thing at once.")
                if n == 1
                else self.tr("%s values kept because two devices changed the same thing at once.") % f"{n:,}"
            )
            + " "
            + self.tr("Take uses the kept value; Dismiss keeps what is shown. Either way every device follows.")
        )
        if n:
            self.view.selectRow(0)
        self._update_buttons()

    def _update_buttons(self, *_args: object) -> None:
        chosen = bool(self.view.selectionModel().selectedRows())
        self.take_button.setEnabled(chosen)
        self.dismiss_button.setEnabled(chosen)

    def _settle(self, keep: bool) -> None:
        rows = self.view.selectionModel().selectedRows()
        if not rows or not 0 <= rows[0].row() < len(self.model.rows):
            return
        self.take_button.setEnabled(False)  # until the worker's answer reloads the list
        self.dismiss_button.setEnabled(False)
        self.live.settle(self.model.rows[rows[0].row()], keep)


class ConflictBar(QFrame):
    """Over the abstract: the shown paper's first kept conflict, with Use that / Keep this."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conflictBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName(self.tr("Conflict"))
        # the words over the whole width, the buttons under them: beside them, in the narrow
        # column over the abstract, the words wrapped to seven lines and pushed the abstract down
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 4, 6, 4)
        self.label = QLabel()
        self.label.setObjectName("conflictLabel")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        column.addWidget(self.label)
        row = QHBoxLayout()
        row.addStretch(1)
        column.addLayout(row)
        self.use_button = QPushButton(self.tr("Use that"))
        self.use_button.setObjectName("conflictUseButton")
        self.keep_button = QPushButton(self.tr("Keep this"))
        self.keep_button.setObjectName("conflictKeepButton")
        row.addWidget(self.use_button)
        row.addWidget(self.keep_button)
        self.conflict: Any = None
        self.hide()

    def show_conflicts(self, conflicts: list[Any]) -> None:
        """Say what another device set at the same time (nothing: hidden)."""
        self.conflict = conflicts[0] if conflicts else None
        if self.conflict is None:
            self.hide()
            return
        c = self.conflict
        self.use_button.setEnabled(True)
        self.keep_button.setEnabled(True)
        text = self.tr("Another device (%s) set %s to “%s” at the same time; this shows “%s”.") % (
            c.device,
            c.field,
            shown_value(c.value),
            shown_value(c.current),
        )
        if len(conflicts) > 1:
            text += " " + self.tr("(%d more: Edit ▸ Conflicts…)") % (len(conflicts) - 1)
        self.label.setText(text)
        self.label.setToolTip(shown_value(c.value, 2000))
        self.show()


class ConflictsView(QObject):
    """The window's side of conflicts: the bar over the abstract, the status bar's count
    and the dialog (`open`)."""

    def __init__(self, window: MainWindow, bar: ConflictBar) -> None:
        super().__init__(window)
        self.window = window
        self.live = window.live
        self.bar = bar
        self.dialog: ConflictsDialog | None = None
        self.shown = ""  # the paper the abstract shows
        self.count_button = QToolButton()
        self.count_button.setObjectName("conflictsCountButton")
        self.count_button.setAutoRaise(True)
        self.count_button.setToolTip(self.tr("Show the conflicts (Edit ▸ Conflicts…)"))
        self.count_button.clicked.connect(self.open)
        # its text from the start: a status bar whose tallest widget grows lays itself out again, and
        # that shows the result count (hidden by a message) under the message (the ⚠ is taller)
        self.count_button.setText(self.tr("⚠ 1 conflict"))
        self.count_button.hide()
        window.statusBar().addPermanentWidget(self.count_button)
        window.abstract_view.paperShown.connect(self._paper_shown)
        self.live.conflictsChanged.connect(self._update)
        bar.use_button.clicked.connect(lambda: self._settle_shown(True))
        bar.keep_button.clicked.connect(lambda: self._settle_shown(False))

    def open(self) -> None:
        """Edit ▸ Conflicts…: the list of every kept conflict."""
        if self.dialog is None:
            self.dialog = ConflictsDialog(self.live, self.window)
        self.dialog.reload()
        self.dialog.show()
        self.dialog.raise_()

    def _paper_shown(self, pid: str) -> None:
        self.shown = pid
        self.bar.show_conflicts([c for c in self.live.conflicts_of(pid) if c.field] if pid else [])

    def _update(self) -> None:
        self._paper_shown(self.shown)
        n = len(self.live.conflicts)
        self.count_button.setVisible(bool(n))
        self.count_button.setText(self.tr("⚠ 1 conflict") if n == 1 else self.tr("⚠ %s conflicts") % f"{n:,}")

    def _settle_shown(self, keep: bool) -> None:
        if self.bar.conflict is not None:
            self.bar.use_button.setEnabled(False)
            self.bar.keep_button.setEnabled(False)
            self.live.settle(self.bar.conflict, keep)
