"""Library change events as a Qt signal, delivered on the GUI thread.

`Library` calls its subscribers on whatever thread made the change (an
import runs on a worker); this object turns each call into a queued signal
so panels refresh on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from ..core.library import Change, Library


class LibraryEvents(QObject):
    """`Library` changes as the `changed` signal, on the GUI thread."""

    changed = Signal(object)  # a core.library.Change

    def __init__(self, library: Library, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe: Callable[[], None] | None = library.subscribe(self._relay)

    def _relay(self, change: Change) -> None:
        self.changed.emit(change)

    def close(self) -> None:
        """Stop listening to the library."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
