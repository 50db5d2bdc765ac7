"""What the window says: a line in its status bar, or a warning a person must close.

The controllers are given this, not the window: an edit, an import or the
sidebar says what it did here.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMainWindow, QMessageBox


class StatusLine(QObject):
    """The status bar's passing message of `window`, and its warnings (`error_box`: the last shown)."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.error_box: QMessageBox | None = None

    def say(self, text: str, ms: int = 0) -> None:
        """Show `text` in the status bar (for `ms` milliseconds; 0: until the next message)."""
        self._window.statusBar().showMessage(text, ms)

    def clear(self) -> None:
        """Take the message away."""
        self._window.statusBar().clearMessage()

    def error(self, title: str, text: str) -> None:
        """A warning a person must close (not modal: the window goes on)."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self._window)
        box.setObjectName("errorDialog")
        box.open()
        self.error_box = box
