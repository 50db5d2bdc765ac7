"""The paper list's columns: default widths that fit a 1366×768 screen, and a
chooser on the header's context menu (shown/hidden columns are kept with the
header's state in QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from .paper_model import COLUMNS, HEADERS

# Width of each column in average characters; the title takes what is left.
DEFAULT_CHARS = {"authors": 20, "area": 14, "status": 8, "rating": 8, "tags": 12, "added": 11, "read": 11}
# the sidebar shows areas; rating and the day read are a click away (the header's menu)
HIDDEN_BY_DEFAULT = frozenset({"area", "rating", "read"})
MIN_TITLE_CHARS = 24
# the columns of a header state saved without their names (before "read" came): a column added
# since takes its defaults on restore, so one hidden by default does not appear by itself
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
        for name in DEFAULT_CHARS:
            self._default(name)
        header.setSectionHidden(COLUMNS.index("title"), False)

    def _default(self, name: str) -> None:
        col = COLUMNS.index(name)
        self.header.resizeSection(col, DEFAULT_CHARS[name] * self.view.fontMetrics().averageCharWidth() + 12)
        self.header.setSectionHidden(col, name in HIDDEN_BY_DEFAULT)

    def restore(self, state, known: list[str] | None = None) -> bool:
        """A saved header state, saved with the columns `known` (None: `UNNAMED_STATE_COLUMNS`);
        the title keeps stretching and stays shown, and columns added since take their defaults."""
        names = list(UNNAMED_STATE_COLUMNS if known is None else known)
        if names != list(COLUMNS):
            return self._restore_other(state, names)
        if not self.header.restoreState(state):
            return False
        self.header.setSectionResizeMode(COLUMNS.index("title"), QHeaderView.ResizeMode.Stretch)
        self.header.setSectionHidden(COLUMNS.index("title"), False)
        return True

    def _restore_other(self, state, names: list[str]) -> bool:
        """A state saved with other columns, read column by column: restoring it into this header
        would show every column it does not know, and leave a state Qt cannot restore once saved."""
        other = QTableView()
        other.setModel(QStandardItemModel(0, len(names), other))
        saved = other.horizontalHeader()
        if not saved.restoreState(state):
            return False
        self.apply_defaults()
        for col, name in enumerate(names):
            if name in DEFAULT_CHARS:  # a column we still have (the title always stretches)
                here = COLUMNS.index(name)
                self.header.setSectionHidden(here, saved.isSectionHidden(col))
                if not saved.isSectionHidden(col):
                    self.header.resizeSection(here, saved.sectionSize(col))
        section = saved.sortIndicatorSection()
        if 0 <= section < len(names) and names[section] in COLUMNS:
            with QSignalBlocker(self.header):  # the arrow only: the saved sort is the window's to run
                self.header.setSortIndicator(COLUMNS.index(names[section]), saved.sortIndicatorOrder())
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
