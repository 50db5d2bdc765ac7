"""The window as it was left: its size, splitters, columns and sort, kept in QSettings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt

from .paper_model import COLUMNS

if TYPE_CHECKING:
    from .main_window import MainWindow

FIRST_SIZE = (1400, 860)  # at most, on a first start: fits 1366x768 with its panels


def restore(win: MainWindow) -> None:
    """Give the window the size, splitters, columns and sort it had when it was last closed."""
    s = QSettings()
    geometry = s.value("window/geometry")
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        win.restoreGeometry(geometry)
    else:  # first start: most of the screen, at most 1400x860 (fits 1366x768 with its panels)
        screen = win.screen().availableGeometry() if win.screen() else None
        width, height = FIRST_SIZE
        if screen is not None:
            width, height = min(width, int(screen.width() * 0.92)), min(height, int(screen.height() * 0.9))
        win.resize(width, height)
    for key, splitter in (("window/mainSplitter", win.main_split), ("window/rightSplitter", win.right_split)):
        state = s.value(key)
        if isinstance(state, QByteArray) and not state.isEmpty():
            splitter.restoreState(state)
    # by name, not Qt's header state (which counts columns by place: a column added
    # later would take the settings of the one before it); "list/columns" and
    # "list/header" held such states
    layout = s.value("list/layout", "", str)
    if isinstance(layout, str) and layout:
        win.columns.restore(layout)
    sort = s.value("list/sort", "relevance", str)
    if sort in COLUMNS:
        descending = s.value("list/descending", False, bool)
        win.query = win.query.with_(sort=sort, descending=descending)
        header = win.paper_list.horizontalHeader()
        header.blockSignals(True)  # the arrow only: the first search sorts
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        header.setSortIndicator(COLUMNS.index(sort), order)
        header.blockSignals(False)


def save(win: MainWindow) -> None:
    """Keep the window's size, splitters, columns and sort for the next start."""
    s = QSettings()
    s.setValue("window/geometry", win.saveGeometry())
    s.setValue("window/mainSplitter", win.main_split.saveState())
    s.setValue("window/rightSplitter", win.right_split.saveState())
    s.setValue("list/layout", win.columns.layout())
    s.setValue("list/sort", win.query.sort)
    s.setValue("list/descending", win.query.descending)
    s.sync()
