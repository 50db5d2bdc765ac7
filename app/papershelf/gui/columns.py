"""The paper list's columns: default widths that fit a 1366×768 screen, and a
chooser on the header's context menu (shown/hidden columns are kept with the
header's state in QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHeaderView, QMenu, QTableView

from .paper_model import COLUMNS, HEADERS

# Width of each column in average characters; the title takes what is left.
DEFAULT_CHARS = {"authors": 20, "area": 14, "status": 8, "rating": 8, "tags": 12, "added": 11, "read": 11}
HIDDEN_BY_DEFAULT = frozenset({"area", "rating", "read"})  # the sidebar shows areas; rating is a click away
MIN_TITLE_CHARS = 24


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
        for name, n in DEFAULT_CHARS.items():
            col = COLUMNS.index(name)
            header.resizeSection(col, n * chars + 12)
            header.setSectionHidden(col, name in HIDDEN_BY_DEFAULT)
        header.setSectionHidden(COLUMNS.index("title"), False)

    def restore(self, state) -> bool:
        """A saved header state; the title keeps stretching and stays shown."""
        if not self.header.restoreState(state):
            return False
        self.header.setSectionResizeMode(COLUMNS.index("title"), QHeaderView.ResizeMode.Stretch)
        self.header.setSectionHidden(COLUMNS.index("title"), False)
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
