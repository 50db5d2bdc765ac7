"""The status bar's progress bar and Cancel button, shared by every long task.

One bar for all of them: opening or rebuilding the search index, an import,
an export. It hides only once none of them is still running, and Cancel
stops the import (or export) before the index: the one a person started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMainWindow, QProgressBar, QPushButton

from .tasks import Task


class TaskProgress(QObject):
    """Progress and Cancel in `window`'s status bar for the tasks `tasks()`
    gives (in the order Cancel tries them; None for one not started)."""

    def __init__(self, window: QMainWindow, tasks: Callable[[], Sequence[Task | None]]) -> None:
        super().__init__(window)
        self._tasks = tasks
        self.bar = QProgressBar()
        self.bar.setObjectName("taskProgress")
        self.bar.setMaximumWidth(220)
        self.bar.setTextVisible(True)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("cancelTaskButton")
        self.cancel_button.clicked.connect(self.cancel)
        status = window.statusBar()
        status.addPermanentWidget(self.bar)
        status.addPermanentWidget(self.cancel_button)
        self.bar.hide()
        self.cancel_button.hide()

    def _running(self) -> list[Task]:
        return [t for t in self._tasks() if t is not None and not t.finished]

    def busy(self, text: str, cancellable: bool = True) -> None:
        """Show a task starting: a moving bar with `text` until it says how far it is (and
        Cancel, unless the task cannot stop part way)."""
        self.bar.setRange(0, 0)
        self.bar.setFormat(text)
        self.bar.show()
        self.cancel_button.setVisible(cancellable)

    def step(self, done: int, total: int, label: str) -> None:
        """Show `done` of `total` (nothing while the total is unknown)."""
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(done)
            self.bar.setFormat(f"{label} %p%")

    def idle(self) -> None:
        """A task ended: hide the bar, unless another one still runs."""
        if not self._running():
            self.bar.hide()
            self.cancel_button.hide()

    def cancel(self) -> None:
        """Ask the first running task to stop; it stops where it can."""
        for task in self._running()[:1]:
            task.cancel()
            self.bar.setFormat(self.tr("Cancelling…"))
