"""The filter sidebar: status, tags, areas, reading lists and saved searches, with counts."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSettings, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPixmap, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QWidget,
)

from ..core.paper import Status
from .paper_model import STATUS_LABELS

KindRole = Qt.ItemDataRole.UserRole + 10
ValueRole = Qt.ItemDataRole.UserRole + 11
LabelRole = Qt.ItemDataRole.UserRole + 12
CountRole = Qt.ItemDataRole.UserRole + 13
COUNT_GAP = 6

GROUPS = (
    ("status", "Status"),
    ("tag", "Tags"),
    ("area", "Areas"),
    ("list", "Reading lists"),
    ("saved", "Saved searches"),
    ("import", "Imports"),
)


def tag_color(tag: str) -> str:
    """The colour a person gave the tag ("" for none)."""
    return str(QSettings().value(f"tagColors/{tag}", "", str) or "")


def set_tag_color(tag: str, color: str) -> None:
    """Give the tag a colour ("" takes it away)."""
    settings = QSettings()
    if color:
        settings.setValue(f"tagColors/{tag}", color)
    else:
        settings.remove(f"tagColors/{tag}")


def color_icon(color: str) -> QIcon:
    """A small square of the colour (transparent for "")."""
    pix = QPixmap(12, 12)
    pix.fill(QColor(color) if color else Qt.GlobalColor.transparent)
    return QIcon(pix)


class CountDelegate(QStyledItemDelegate):
    """Paints an entry as its name, elided if need be, and its count, always whole,
    at the right edge (the item's text, "name  (count)", stays for screen readers)."""

    def shown(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> tuple[str, str, QRect, QRect]:
        """(name as drawn, count as drawn, their rectangles) in the cell `option` describes."""
        label, count = index.data(LabelRole), index.data(CountRole)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        style = opt.widget.style() if opt.widget else None
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget) if style else opt.rect
        fm = opt.fontMetrics
        count_text = f"({count:,})" if count is not None else ""  # a saved search not counted yet
        count_width = fm.horizontalAdvance(count_text)
        count_rect = QRect(text_rect.right() - count_width, text_rect.top(), count_width, text_rect.height())
        name_rect = QRect(
            text_rect.left(), text_rect.top(), max(0, text_rect.width() - count_width - COUNT_GAP), text_rect.height()
        )
        name = fm.elidedText(label, Qt.TextElideMode.ElideRight, name_rect.width())
        return name, count_text, name_rect, count_rect

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """The entry's name on the left, its count on the right."""
        if index.data(CountRole) is None:
            super().paint(painter, option, index)
            return
        name, count, name_rect, count_rect = self.shown(option, index)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        painter.save()
        painter.setFont(opt.font)
        selected = opt.state & QStyle.StateFlag.State_Selected
        if selected:
            painter.setPen(opt.palette.highlightedText().color())
        elif index.data(Qt.ItemDataRole.ForegroundRole) is not None:
            painter.setPen(index.data(Qt.ItemDataRole.ForegroundRole).color())
        else:
            painter.setPen(opt.palette.text().color())
        align = Qt.AlignmentFlag.AlignVCenter
        painter.drawText(name_rect, align | Qt.AlignmentFlag.AlignLeft, name)
        painter.drawText(count_rect, align | Qt.AlignmentFlag.AlignRight, count)
        painter.restore()


class FilterPanel(QTreeView):
    """Click an entry to filter by it; click it again (or "All") to drop that filter.

    Emits `filterChosen(kind, value)`; value None clears that kind.
    Context menus on tags (rename, merge, colour, delete), lists and saved searches
    (rename, delete) emit requests the window carries out. A saved search's
    entry (value: its name) applies its words and filters when clicked.
    """

    filterChosen = Signal(str, object)
    renameTagRequested = Signal(str)
    deleteTagRequested = Signal(str)
    colorTagRequested = Signal(str)
    renameListRequested = Signal(str)
    deleteListRequested = Signal(str)
    exportRequested = Signal(str, str)  # kind, value
    renameSavedRequested = Signal(str)
    deleteSavedRequested = Signal(str)
    saveSearchRequested = Signal()  # "Save current search…" on the saved searches' heading

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filterPanel")
        self.setAccessibleName(self.tr("Filters"))
        self.setHeaderHidden(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setUniformRowHeights(True)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self._model = QStandardItemModel(self)
        self.setModel(self._model)
        # counts always show: a long name is elided instead of scrolled
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.header().setStretchLastSection(True)
        self.header().setMinimumSectionSize(10)
        self._delegate = CountDelegate(self)
        self.setItemDelegate(self._delegate)
        self._groups: dict[str, QStandardItem] = {}
        for kind, label in GROUPS:
            item = QStandardItem(self.tr(label))
            item.setSelectable(False)
            font = item.font()
            font.setBold(True)
            item.setFont(font)
            self._model.appendRow(item)
            self._groups[kind] = item
        self.active: dict[str, str | None] = {kind: None for kind, _ in GROUPS}
        self.clicked.connect(self._on_clicked)
        self.set_last_import("", 0, "")
        self.set_saved([])
        self.expandAll()

    # ---- contents ----------------------------------------------------------
    def set_counts(
        self, status: dict[str, int], tags: dict[str, int], areas: dict[str, int], lists: dict[str, int], total: int
    ) -> None:
        """Show the counts for the current search (lists: their sizes)."""
        status_rows = [(None, self.tr("All"), total)] + [
            (s.value, self.tr(STATUS_LABELS[s]), status.get(s.value, 0)) for s in Status
        ]
        self._fill("status", status_rows)
        tag_rows = sorted(tags.items(), key=lambda kv: (-kv[1], kv[0]))
        if self.active["tag"] and self.active["tag"] not in tags:
            tag_rows.append((self.active["tag"], 0))
        self._fill("tag", [(t, t, n) for t, n in tag_rows])
        area_rows = sorted(areas.items(), key=lambda kv: (-kv[1], kv[0]))
        self._fill("area", [(a, a.title() if a.islower() else a, n) for a, n in area_rows])
        self._fill("list", [(name, name, n) for name, n in sorted(lists.items(), key=lambda kv: kv[0].casefold())])
        self.expandAll()

    def set_last_import(self, label: str, count: int, tooltip: str) -> None:
        """The "Last import" entry (value "last"); no label hides the heading."""
        self._fill("import", [("last", label, count)] if label else [])
        group = self._groups["import"]
        if label:
            group.child(0).setToolTip(tooltip)
        self.setRowHidden(group.row(), QModelIndex(), not label)
        self.expandAll()

    def set_saved(self, rows: list[tuple[str, int | None, str]]) -> None:
        """The saved searches: (name, count or None while it is worked out, tooltip);
        none hides the heading."""
        self._fill("saved", [(name, name, count) for name, count, _ in rows])
        group = self._groups["saved"]
        for r, (_, _, tip) in enumerate(rows):
            group.child(r).setToolTip(tip)
        self.setRowHidden(group.row(), QModelIndex(), not rows)
        self.expandAll()

    def _fill(self, kind: str, rows) -> None:
        group = self._groups[kind]
        group.removeRows(0, group.rowCount())
        for value, label, count in rows:
            item = QStandardItem(label if count is None else f"{label}  ({count:,})")
            item.setData(kind, KindRole)
            item.setData(value, ValueRole)
            item.setData(label, LabelRole)
            item.setData(count, CountRole)
            item.setToolTip(label)
            if kind == "tag":
                item.setIcon(color_icon(tag_color(value)))
            if self.active.get(kind) == value and (value is not None or kind == "status"):
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                item.setForeground(QBrush(QColor("#1f6feb")))
            group.appendRow(item)

    def entries(self, kind: str) -> list[tuple[object, str]]:
        """(value, label) of each entry under one heading, as shown."""
        group = self._groups[kind]
        return [(group.child(r).data(ValueRole), group.child(r).text()) for r in range(group.rowCount())]

    def drawn(self, kind: str, value) -> tuple[str, str]:
        """(name, count) of an entry as they are drawn at the panel's current width."""
        index = self.index_of(kind, value)
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.visualRect(index)
        name, count, _, _ = self._delegate.shown(option, index)
        return name, count

    def wanted_width(self) -> int:
        """The panel's width at which every entry shows its whole name beside its count."""
        fm, short = self.fontMetrics(), 0
        for group in self._groups.values():
            if group.rowCount() == 0 or not self.visualRect(group.child(0).index()).isValid():
                continue  # a hidden heading
            # one entry measured as drawn; the others differ from it only in their texts
            first = group.child(0).index()
            option = QStyleOptionViewItem()
            self.initViewItemOption(option)
            option.rect = self.visualRect(first)
            _, count, name_rect, _ = self._delegate.shown(option, first)
            room = name_rect.width() + fm.horizontalAdvance(count)
            for r in range(group.rowCount()):
                item = group.child(r)
                label, n = item.data(LabelRole), item.data(CountRole)
                needs = fm.horizontalAdvance(label) + (fm.horizontalAdvance(f"({n:,})") if n is not None else 0)
                short = max(short, needs - room)
        return self.width() + short + 2 if short > 0 else self.width()

    def index_of(self, kind: str, value: object) -> QModelIndex:
        """The entry of a value in a group (invalid if it has none)."""
        group = self._groups[kind]
        for r in range(group.rowCount()):
            if group.child(r).data(ValueRole) == value:
                return group.child(r).index()
        return QModelIndex()

    # ---- interaction -------------------------------------------------------
    def _on_clicked(self, index: QModelIndex) -> None:
        kind = index.data(KindRole)
        if kind is None:
            return
        value = index.data(ValueRole)
        if self.active.get(kind) == value:
            value = None  # a second click drops the filter
        self.active[kind] = value
        self.filterChosen.emit(kind, value)

    def clear_filter(self, kind: str) -> None:
        """Forget the chosen entry of a group (without asking for a search)."""
        self.active[kind] = None

    def _context_menu(self, pos) -> None:
        index = self.indexAt(pos)
        kind, value = index.data(KindRole), index.data(ValueRole)
        if index.isValid() and index == self._groups["saved"].index():
            menu = QMenu(self)
            menu.addAction(self.tr("Save current search…"), self.saveSearchRequested.emit)
            menu.exec(self.viewport().mapToGlobal(pos))
            return
        if not value or kind not in ("tag", "list", "status", "saved"):
            return
        menu = QMenu(self)
        menu.addAction(self.tr("Export…"), lambda: self.exportRequested.emit(kind, value))
        if kind == "status":
            menu.exec(self.viewport().mapToGlobal(pos))
            return
        if kind == "tag":
            menu.addAction(self.tr("Rename or merge tag…"), lambda: self.renameTagRequested.emit(value))
            menu.addAction(self.tr("Tag colour…"), lambda: self.colorTagRequested.emit(value))
            menu.addAction(self.tr("Delete tag…"), lambda: self.deleteTagRequested.emit(value))
        elif kind == "saved":
            menu.addAction(self.tr("Rename saved search…"), lambda: self.renameSavedRequested.emit(value))
            menu.addAction(self.tr("Delete saved search…"), lambda: self.deleteSavedRequested.emit(value))
        else:
            menu.addAction(self.tr("Rename list…"), lambda: self.renameListRequested.emit(value))
            menu.addAction(self.tr("Delete list…"), lambda: self.deleteListRequested.emit(value))
        menu.exec(self.viewport().mapToGlobal(pos))
