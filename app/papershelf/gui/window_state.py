"""The window as it was left: its size, splitters, columns and sort, kept in QSettings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings

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
    header = s.value("list/columns")  # not "list/header": its widths hid columns at 1366x768
    if isinstance(header, QByteArray) and not header.isEmpty():
        names = s.value("list/columnNames")  # what the state was saved with: columns added since get defaults
        win.columns.restore(header, [names] if isinstance(names, str) else names if isinstance(names, list) else None)
    sort = s.value("list/sort", "relevance", str)
    if sort in COLUMNS:
        win.query = win.query.with_(sort=sort, descending=s.value("list/descending", False, bool))


def save(win: MainWindow) -> None:
    """Keep the window's size, splitters, columns and sort for the next start."""
    s = QSettings()
    s.setValue("window/geometry", win.saveGeometry())
    s.setValue("window/mainSplitter", win.main_split.saveState())
    s.setValue("window/rightSplitter", win.right_split.saveState())
    s.setValue("list/columns", win.paper_list.horizontalHeader().saveState())
    s.setValue("list/columnNames", list(COLUMNS))
    s.setValue("list/sort", win.query.sort)
    s.setValue("list/descending", win.query.descending)
    s.sync()
