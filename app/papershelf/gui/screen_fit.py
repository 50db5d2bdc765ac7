"""Dialogs that fit the screen they open on: a size wanted, within its available geometry (the
screen less its panels), the window frame counted once it is known. A 1366×768 laptop has about
740 pixels of height for a dialog and its title bar."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QWidget

# room for a window frame (title bar, borders) before the window manager has drawn one
FRAME_ALLOWANCE = (24, 64)


def fit_size(widget: QWidget, width: int, height: int) -> None:
    """Resize `widget` (a top-level not yet shown) to `width`×`height`, or less: what its screen
    has room for, with a frame."""
    owner = widget.parentWidget() or widget
    screen = owner.screen()
    if screen is None:
        widget.resize(width, height)
        return
    room = screen.availableGeometry()
    widget.resize(min(width, room.width() - FRAME_ALLOWANCE[0]), min(height, room.height() - FRAME_ALLOWANCE[1]))


def keep_on_screen(widget: QWidget) -> None:
    """A shown top-level: shrink it (as far as its layout lets) and move it so its frame lies
    within its screen's available geometry."""
    screen = widget.screen()
    if screen is None:
        return
    room = screen.availableGeometry()
    frame = widget.frameGeometry()
    extra_w, extra_h = frame.width() - widget.width(), frame.height() - widget.height()
    width = min(widget.width(), room.width() - extra_w)
    height = min(widget.height(), room.height() - extra_h)
    if (width, height) != (widget.width(), widget.height()):
        widget.resize(max(width, widget.minimumWidth()), max(height, widget.minimumHeight()))
        frame = widget.frameGeometry()
    x = max(room.left(), min(frame.left(), room.right() + 1 - frame.width()))
    y = max(room.top(), min(frame.top(), room.bottom() + 1 - frame.height()))
    if (x, y) != (frame.left(), frame.top()):
        widget.move(QPoint(x, y))  # move() places the frame
