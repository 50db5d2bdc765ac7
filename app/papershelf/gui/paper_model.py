"""The paper list's model: paper ids, with rows built only when shown."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from ..core.library import Change, Library
from ..core.paper import Paper, Status
from ..core.render import plain_text

PaperIdRole = Qt.ItemDataRole.UserRole + 1

STATUS_LABELS = {
    Status.UNREAD: "Unread",
    Status.TO_READ: "To read",
    Status.READING: "Reading",
    Status.READ: "Read",
    Status.SKIPPED: "Skipped",
}
_STATUS_COLORS = {
    Status.TO_READ: "#1f6feb",
    Status.READING: "#bf8700",
    Status.READ: "#1a7f37",
    Status.SKIPPED: "#8c959f",
}


@dataclass(frozen=True)
class Column:
    """One column of the list: its name (a sort key of core.biblio.sorting.SORT_KEYS, and how
    the window's settings know it), its title, a paper's cell as text, and its width
    on a first start in average characters (the title takes what the others leave)."""

    name: str
    header: str
    cell: Callable[[Paper], str]
    chars: int = 0
    shown: bool = True  # on a first start; the header's menu shows or hides it


def _year(paper: Paper) -> str:
    return str(paper.year) if paper.year else ""


# In display order. A new column is one line here (and its sort key in core.query).
COLUMN_LIST = (
    Column("title", "Title", lambda p: plain_text(p.title)),
    Column("authors", "Authors", lambda p: authors_short(p.authors), 18),
    Column("year", "Year", _year, 5),
    Column("venue", "Venue", lambda p: p.venue, 14),
    Column("area", "Area", lambda p: " · ".join(x for x in (p.area, p.subarea) if x), 14, shown=False),
    Column("status", "Status", lambda p: STATUS_LABELS[p.status], 8),
    Column("rating", "Rating", lambda p: "★" * (p.rating or 0), 8, shown=False),
    Column("tags", "Tags", lambda p: ", ".join(p.tags), 12),
    Column("added", "Added", lambda p: added_short(p.added), 11, shown=False),
    Column("read", "Read on", lambda p: added_short(p.read_at) if p.read_at else "", 11, shown=False),
    Column("opened", "Opened", lambda p: added_short(p.opened_at) if p.opened_at else "", 11, shown=False),
)
COLUMNS = tuple(c.name for c in COLUMN_LIST)
HEADERS = {c.name: c.header for c in COLUMN_LIST}
_STATUS_COLUMN = COLUMNS.index("status")
ROW_CACHE = 2000
_ROLES = frozenset(
    {Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole, PaperIdRole}
)
_READ_COL = COLUMNS.index("read")
_NO_PARENT = QModelIndex()  # the table's rows have no parent


def authors_short(authors: list[str]) -> str:
    """The first two authors, "et al." for more."""
    if not authors:
        return ""
    if len(authors) <= 2:
        return ", ".join(authors)
    return f"{authors[0]}, {authors[1]} et al."


def added_short(stamp: str) -> str:
    """The local date of a stored time stamp (YYYY-MM-DD)."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%Y-%m-%d")
    except ValueError:
        return stamp[:10]


class PaperTableModel(QAbstractTableModel):
    """Rows are paper ids in the order the search gave; cells are built on
    demand and kept in a small cache, so a 100,000-paper list costs nothing
    until it scrolls into view."""

    sortRequested = Signal(str, bool)  # column name, descending

    def __init__(self, library: Library, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self._ids: list[str] = []
        self._row_of: dict[str, int] | None = None
        self._cache: OrderedDict[str, tuple] = OrderedDict()

    # ---- contents ----------------------------------------------------------
    def set_ids(self, ids: list[str]) -> None:
        """Show these papers, in this order."""
        self.beginResetModel()
        self._ids = list(ids)
        self._row_of = None
        self._cache.clear()
        self.endResetModel()

    def ids(self) -> list[str]:
        """The papers shown, in order."""
        return self._ids

    def id_at(self, row: int) -> str | None:
        """The paper in a row (None outside the list)."""
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def row_of(self, paper_id: str) -> int:
        """The row of a paper (-1 if it is not shown)."""
        if self._row_of is None:
            self._row_of = {pid: n for n, pid in enumerate(self._ids)}
        return self._row_of.get(paper_id, -1)

    def refresh(self, change: Change) -> None:
        """Repaint the rows a change touched (removed rows disappear)."""
        if change.kind == "papers-removed":
            gone = change.ids
            if any(self.row_of(pid) >= 0 for pid in gone):
                self.set_ids([pid for pid in self._ids if pid not in gone])
            return
        for pid in change.ids:
            self._cache.pop(pid, None)
            row = self.row_of(pid)
            if row >= 0:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    # ---- Qt model API ------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """How many papers are shown."""
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _NO_PARENT) -> int:
        """How many columns (see COLUMNS)."""
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The column titles."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.tr(HEADERS[COLUMNS[section]])
        return None

    def _row(self, pid: str) -> tuple | None:
        row = self._cache.get(pid)
        if row is None:
            paper = self.library.find(pid)
            if paper is None:
                return None
            row = (*(column.cell(paper) for column in COLUMN_LIST), paper)
            self._cache[pid] = row
            if len(self._cache) > ROW_CACHE:
                self._cache.popitem(last=False)
        return row

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A cell's text, tooltip or colour, or the row's paper id (PaperIdRole)."""
        # painting asks for a dozen roles per cell: the ones never answered go first
        if role not in _ROLES or not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        pid = self._ids[index.row()]
        if role == PaperIdRole:
            return pid
        row = self._row(pid)
        if row is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return row[col]
        paper: Paper = row[-1]
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == 0:
                title = row[0]
                return title + ("\n(title derived from the abstract)" if paper.title_derived else "")
            if col == _READ_COL and not row[col] and paper.status is Status.READ:
                return self.tr("Marked Read before Papershelf kept the date")
            return row[col] or None
        if role == Qt.ItemDataRole.ForegroundRole and col == _STATUS_COLUMN and paper.status in _STATUS_COLORS:
            return QBrush(QColor(_STATUS_COLORS[paper.status]))
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Ask for the list sorted by a column (`sortRequested`): the search sorts it."""
        # the search service sorts (off the GUI thread); the view only asks
        if 0 <= column < len(COLUMNS):
            self.sortRequested.emit(COLUMNS[column], order == Qt.SortOrder.DescendingOrder)
