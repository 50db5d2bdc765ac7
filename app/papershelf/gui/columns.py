"""The paper list's columns: default widths that fit a 1366×768 screen, a chooser
on the header's context menu, and the layout a person left (order, widths, shown),
kept by column name so that a column added later finds its place."""

from __future__ import annotations

import json

from PySide6.QtCore import QObject, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from .paper_model import COLUMN_LIST, COLUMNS, HEADERS

# the columns of the header state Papershelf kept before layouts were kept by name
# ("list/columns"): read column by column, so a user's choice survives the upgrade
UNNAMED_STATE_COLUMNS = ("title", "authors", "area", "status", "rating", "tags", "added")


class ColumnChooser(QObject):
    """Owns the list header's layout: defaults, the stretching title, show/hide."""

    def __init__(self, view: QTableView) -> None:
        super().__init__(view)
        self.view = view
        self.header = view.horizontalHeader()
        self.header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.header.customContextMenuRequested.connect(self._show_menu)
        self.apply_defaults()

    def apply_defaults(self) -> None:
        """The columns and widths a first start shows."""
        header, chars = self.header, self.view.fontMetrics().averageCharWidth()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(COLUMNS.index("title"), QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(chars * 4)
        for col, column in enumerate(COLUMN_LIST):
            header.moveSection(header.visualIndex(col), col)
            if column.chars:  # never narrower than its heading (and the sort arrow)
                header.resizeSection(col, max(column.chars * chars + 12, header.sectionSizeHint(col)))
            header.setSectionHidden(col, not column.shown)
        header.setSectionHidden(COLUMNS.index("title"), False)

    def layout(self) -> str:
        """The columns as a person left them, by name, in the order shown: JSON text."""
        header = self.header
        order = sorted(range(len(COLUMNS)), key=header.visualIndex)
        return json.dumps(
            [{"name": COLUMNS[c], "width": header.sectionSize(c), "hidden": header.isSectionHidden(c)} for c in order]
        )

    def restore(self, layout: str) -> bool:
        """A layout `layout()` gave, over the defaults: a column it does not name (one
        added since) keeps its default width and comes after the ones it names; the
        title stretches and stays shown. False (the defaults stay) if it cannot be read."""
        try:
            saved = [c for c in json.loads(layout) if isinstance(c, dict) and c.get("name") in COLUMNS]
            entries = [(str(c["name"]), int(c["width"]), bool(c["hidden"])) for c in saved]
        except (ValueError, TypeError, KeyError):
            return False
        header = self.header
        for place, (name, width, hidden) in enumerate(entries):
            col = COLUMNS.index(name)
            header.moveSection(header.visualIndex(col), place)
            if name != "title":
                header.resizeSection(col, max(width, header.minimumSectionSize()))
                header.setSectionHidden(col, hidden)
        return True

    def restore_unnamed(self, state) -> bool:
        """A header state of the old seven columns (`UNNAMED_STATE_COLUMNS`), over the
        defaults: each column it names keeps whether it was shown, its width and the sort
        arrow; the columns added since keep their defaults. Restoring it into this header
        directly would give each column the settings of the one at its place."""
        other = QTableView()
        other.setModel(QStandardItemModel(0, len(UNNAMED_STATE_COLUMNS), other))
        saved = other.horizontalHeader()
        if not saved.restoreState(state):
            return False
        for col, name in enumerate(UNNAMED_STATE_COLUMNS):
            if name == "title":
                continue
            here = COLUMNS.index(name)
            self.header.setSectionHidden(here, saved.isSectionHidden(col))
            if not saved.isSectionHidden(col):
                self.header.resizeSection(here, max(saved.sectionSize(col), self.header.minimumSectionSize()))
        section = saved.sortIndicatorSection()
        if 0 <= section < len(UNNAMED_STATE_COLUMNS):
            with QSignalBlocker(self.header):  # the arrow only: the saved sort is the window's to run
                self.header.setSortIndicator(COLUMNS.index(UNNAMED_STATE_COLUMNS[section]), saved.sortIndicatorOrder())
        return True

    def shown(self) -> list[str]:
        """The names of the columns shown, in model order."""
        return [name for col, name in enumerate(COLUMNS) if not self.header.isSectionHidden(col)]

    def set_shown(self, name: str, shown: bool) -> None:
        """Show or hide a column (never the title)."""
        if name == "title":
            return
        self.header.setSectionHidden(COLUMNS.index(name), not shown)

    def menu(self) -> QMenu:
        """The header's menu: a check box per column."""
        menu = QMenu(self.tr("Columns"), self.view)
        menu.setObjectName("columnMenu")
        for col, name in enumerate(COLUMNS):
            action = QAction(self.tr(HEADERS[name]), menu)
            action.setObjectName(f"column-{name}")
            action.setCheckable(True)
            action.setChecked(not self.header.isSectionHidden(col))
            action.setEnabled(name != "title")
            action.toggled.connect(lambda on, n=name: self.set_shown(n, on))
            menu.addAction(action)
        menu.addSeparator()
        reset = menu.addAction(self.tr("Default columns"), self.apply_defaults)
        reset.setObjectName("column-defaults")
        return menu

    def _show_menu(self, pos) -> None:
        menu = self.menu()
        self.last_menu = menu
        menu.popup(self.header.viewport().mapToGlobal(pos) if self.header.viewport() else self.header.mapToGlobal(pos))
