"""The window as it was left: its size, splitters, columns and sort, kept in QSettings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt

from .paper_model import COLUMNS

if TYPE_CHECKING:
    from .main_window import MainWindow

FIRST_SIZE = (1400, 860)  # at most, on a first start: fits 1366x768 with its panels
SIDEBAR_SHARE = 0.22  # on a first start the sidebar widens to its names, up to this share of the window


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
        if screen is not None:  # in the middle of the screen
            win.move(screen.center() - win.rect().center())
    for key, splitter in (("window/mainSplitter", win.main_split), ("window/rightSplitter", win.right_split)):
        state = s.value(key)
        if isinstance(state, QByteArray) and not state.isEmpty():
            splitter.restoreState(state)
            win.sidebar_fits = win.sidebar_fits and splitter is not win.main_split
    win.main_split.splitterMoved.connect(lambda *_: setattr(win, "sidebar_fits", False))  # a person's width
    # by name, not Qt's header state (which counts columns by place: a column added
    # later would take the settings of the one before it); "list/columns" and
    # "list/header" held such states
    layout = s.value("list/layout", "", str)
    if isinstance(layout, str) and layout:
        win.columns.restore(layout)
    elif isinstance(old := s.value("list/columns"), QByteArray) and not old.isEmpty():
        win.columns.restore_unnamed(old)  # kept by an older Papershelf
    sort = s.value("list/sort", "relevance", str)
    if sort in COLUMNS:
        descending = s.value("list/descending", False, bool)
        win.query = win.query.with_(sort=sort, descending=descending)
        header = win.paper_list.horizontalHeader()
        header.blockSignals(True)  # the arrow only: the first search sorts
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        header.setSortIndicator(COLUMNS.index(sort), order)
        header.blockSignals(False)


def fit_sidebar(win: MainWindow) -> None:
    """First start, until a person moves the splitter: the sidebar as wide as its names
    need (at most SIDEBAR_SHARE of the window), the room taken from the abstract's side
    down to what it needs, then from the list. Names still cut show whole in their tooltip."""
    if not win.sidebar_fits or not win.isVisible():
        return
    side, middle, right = win.main_split.sizes()
    grow = min(win.filter_panel.wanted_width(), int(win.width() * SIDEBAR_SHARE)) - side
    if grow <= 0:
        return
    from_right = min(grow, max(0, right - win.right_split.minimumSizeHint().width()))
    win.main_split.setSizes([side + grow, middle - (grow - from_right), right - from_right])


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
