"""The record editor's list of names: people (family and given names) and organisations.

A small table model (a row per name, the order the record gives) under a
table view with buttons and keys to add, remove and move names. A corporate
name ("World Health Organization") is one literal name: the exporter braces
it so BibTeX does not take "Organization" for a family name.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.biblio.names import Name

_NO_PARENT = QModelIndex()
NAME, GIVEN, ORGANISATION = range(3)


@dataclass
class _Row:
    name: str  # the family name (with its von and Jr parts), or the organisation's whole name
    given: str
    organisation: bool
    origin: Name | None = None  # the record's own name, given back while the row is untouched

    def shown(self) -> tuple[str, str, bool]:
        return self.name, self.given, self.organisation

    def joined(self) -> str:
        return " ".join(x for x in (self.given.strip(), self.name.strip()) if x)

    def editor_name(self) -> Name:
        if self.origin is not None and _row(self.origin).shown() == self.shown():
            return self.origin  # exactly as the record had it: an unchanged list sends nothing
        if self.organisation:
            return Name(literal=self.name.strip())
        # "Family, Jr" in the family box: BibTeX's three-part form "Family, Jr, Given"
        family, _, jr = self.name.partition(",")
        return Name(family=family.strip(), given=self.given.strip(), jr=jr.strip())


def _row(name: Name) -> _Row:
    if name.literal:
        return _Row(name.literal, "", True, name)
    family = " ".join(p for p in (name.von, name.family) if p) + (", " + name.jr if name.jr else "")
    return _Row(family, name.given, False, name)


class NameListModel(QAbstractTableModel):
    """The names as rows: family name (or organisation), given names, and whether it is an organisation."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._headers = [self.tr("Family name or organisation"), self.tr("Given names"), self.tr("Organisation")]

    # ---- reading and writing the whole list ----------------------------------------
    def set_names(self, names: list[Name]) -> None:
        """Show these names (the record's, in its order)."""
        self.beginResetModel()
        self._rows = [_row(n) for n in names]
        self.endResetModel()

    def names(self) -> list[Name]:
        """The names as edited, in order; rows left blank are not names."""
        return [r.editor_name() for r in self._rows if r.name.strip() or r.given.strip()]

    # ---- the model ----------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """One row per name."""
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """Name, given names, organisation."""
        return 0 if parent.isValid() else 3

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The column titles; rows are numbered from 1."""
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._headers[section] if 0 <= section < 3 else None
        return str(section + 1)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        """Names are editable; an organisation has no given names; the last column is a checkbox."""
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        row = self._rows[index.row()]
        if index.column() == ORGANISATION:
            return base | Qt.ItemFlag.ItemIsUserCheckable
        if index.column() == GIVEN and row.organisation:
            return Qt.ItemFlag.ItemIsSelectable
        return base | Qt.ItemFlag.ItemIsEditable

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A cell's text, or the organisation checkbox."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, col = self._rows[index.row()], index.column()
        if col == ORGANISATION:
            if role == Qt.ItemDataRole.CheckStateRole:
                return Qt.CheckState.Checked if row.organisation else Qt.CheckState.Unchecked
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.tr("A corporate name, kept whole (BibTeX gets it in braces)")
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if col == NAME:
                return row.name
            return "" if row.organisation else row.given
        return None

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: object, role: int = Qt.ItemDataRole.EditRole
    ) -> bool:
        """Edit a name, or make a row a person or an organisation."""
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return False
        row, col = self._rows[index.row()], index.column()
        if col == ORGANISATION and role == Qt.ItemDataRole.CheckStateRole:
            checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value, 2, True)
            if checked == row.organisation:
                return False
            if checked:  # "Given Family" read as one name: "Acme Labs", not "Labs, Acme"
                row.name, row.given = row.joined(), ""
            elif row.origin is not None and not row.origin.literal and _row(row.origin).joined() == row.name:
                row.name, row.given = _row(row.origin).name, row.origin.given  # a slip undone: the name as it was
            row.organisation = checked
            self.dataChanged.emit(self.index(index.row(), 0), self.index(index.row(), 2))
            return True
        if role != Qt.ItemDataRole.EditRole or col == ORGANISATION or (col == GIVEN and row.organisation):
            return False
        text = str(value)
        if col == NAME:
            row.name = text
        else:
            row.given = text
        self.dataChanged.emit(index, index)
        return True

    # ---- structural edits ----------------------------------------------------------
    def insert(self, row: int, organisation: bool = False) -> int:
        """Put an empty name (a person, or an organisation) at `row` (clamped); the row it went to."""
        row = max(0, min(row, len(self._rows)))
        self.beginInsertRows(_NO_PARENT, row, row)
        self._rows.insert(row, _Row("", "", organisation))
        self.endInsertRows()
        return row

    def remove(self, row: int) -> bool:
        """Take the name at `row` out."""
        if not 0 <= row < len(self._rows):
            return False
        self.beginRemoveRows(_NO_PARENT, row, row)
        del self._rows[row]
        self.endRemoveRows()
        return True

    def move(self, row: int, delta: int) -> int:
        """Move the name at `row` by `delta` places (-1 up, +1 down); its new row (-1: it cannot move)."""
        to = row + delta
        if not (0 <= row < len(self._rows) and 0 <= to < len(self._rows)) or delta == 0:
            return -1
        # beginMoveRows wants the destination as the row it goes before, in the old numbering
        dest = to + 1 if delta > 0 else to
        if not self.beginMoveRows(_NO_PARENT, row, row, _NO_PARENT, dest):
            return -1
        self._rows.insert(to, self._rows.pop(row))
        self.endMoveRows()
        return to


class NameList(QWidget):
    """A table of names with Add person, Add organisation, Remove, Move up and Move down.

    Keys while the table has the focus: Insert adds a person, Delete removes
    the current name, Alt+Up / Alt+Down move it (Ctrl+Insert is Copy on X11:
    an organisation is the button's Alt+G).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = NameListModel(self)
        view = self.view = QTableView()
        view.setObjectName("nameTable")
        view.setAccessibleName(self.tr("Authors"))
        view.setModel(self.model)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        view.setTabKeyNavigation(False)  # Tab leaves the table, as in the rest of the form
        view.setShowGrid(False)
        view.setAlternatingRowColors(True)
        header = view.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(GIVEN, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(GIVEN, self.fontMetrics().horizontalAdvance("Given names") + 60)
        header.setSectionResizeMode(ORGANISATION, QHeaderView.ResizeMode.ResizeToContents)
        view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        view.setMinimumHeight(5 * (self.fontMetrics().height() + 10))

        self.add_person_button = self._button(self.tr("Add &Person"), "addPersonButton", self.add_person)
        self.add_org_button = self._button(self.tr("Add Or&ganisation"), "addOrganisationButton", self.add_organisation)
        self.remove_button = self._button(self.tr("Remo&ve"), "removeNameButton", self.remove_current)
        self.up_button = self._button(self.tr("Move &Up"), "moveNameUpButton", lambda: self.move_current(-1))
        self.down_button = self._button(self.tr("Move Do&wn"), "moveNameDownButton", lambda: self.move_current(1))
        buttons = QHBoxLayout()
        for b in (self.add_person_button, self.add_org_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        keys = QLabel(
            self.tr("Type over a name to change it. Ins adds a person, Del removes one, Alt+↑ and Alt+↓ move it.")
        )
        keys.setObjectName("nameListKeys")
        keys.setWordWrap(True)
        small = keys.font()
        small.setPointSizeF(small.pointSizeF() * 0.9)
        keys.setFont(small)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(view, 1)
        column.addLayout(buttons)
        column.addWidget(keys)

        for key, slot in (
            ("Ins", self.add_person),
            ("Del", self.remove_current),
            ("Alt+Up", lambda: self.move_current(-1)),
            ("Alt+Down", lambda: self.move_current(1)),
        ):
            shortcut = QShortcut(QKeySequence(key), view)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)  # not while a cell is being typed in
            shortcut.activated.connect(slot)
        for signal in (self.model.dataChanged, self.model.rowsInserted, self.model.rowsRemoved, self.model.rowsMoved):
            signal.connect(self._changed)
        self.model.modelReset.connect(self._changed)
        view.selectionModel().currentRowChanged.connect(self._update_buttons)
        self._update_buttons()

    def _button(self, text: str, name: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAutoDefault(False)  # Enter in the dialog means OK, not "add another author"
        button.clicked.connect(slot)
        return button

    def _changed(self, *_args: object) -> None:
        self._update_buttons()
        self.changed.emit()

    def _update_buttons(self, *_args: object) -> None:
        row, count = self.current_row(), self.model.rowCount()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < count - 1)

    # ---- the list -----------------------------------------------------------------
    def set_names(self, names: list[Name]) -> None:
        """Show these names."""
        self.model.set_names(names)
        if names:
            self._select(0, edit=False)

    def names(self) -> list[Name]:
        """The names as edited, in order (blank rows left out)."""
        return self.model.names()

    def current_row(self) -> int:
        """The row of the current name (-1: none)."""
        index = self.view.currentIndex()
        return index.row() if index.isValid() else -1

    def _select(self, row: int, edit: bool, column: int = NAME) -> None:
        index = self.model.index(row, column)
        if not index.isValid():
            return
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.view.selectionModel().setCurrentIndex(index, flags)
        self.view.scrollTo(index)
        if edit:
            self.view.setFocus()
            self.view.edit(index)
        self._update_buttons()

    # ---- the buttons and keys -----------------------------------------------------
    def add_person(self) -> None:
        """A new person after the current name (or at the end), its family name open for typing."""
        self._add(False)

    def add_organisation(self) -> None:
        """A new organisation after the current name (or at the end), open for typing."""
        self._add(True)

    def _add(self, organisation: bool) -> None:
        current = self.current_row()
        row = self.model.insert(current + 1 if current >= 0 else self.model.rowCount(), organisation)
        self._select(row, edit=True)

    def remove_current(self) -> None:
        """Take the current name out; the next one becomes current."""
        row = self.current_row()
        if self.model.remove(row) and self.model.rowCount():
            self._select(min(row, self.model.rowCount() - 1), edit=False)
        self._update_buttons()

    def move_current(self, delta: int) -> None:
        """Move the current name up (-1) or down (+1)."""
        column = max(self.view.currentIndex().column(), 0)
        to = self.model.move(self.current_row(), delta)
        if to >= 0:
            self._select(to, edit=False, column=column)
