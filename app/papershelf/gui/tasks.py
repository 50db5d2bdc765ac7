"""Background work with its results delivered on the GUI thread.

`run_task(fn, ...)` runs `fn(progress, cancelled)` on a worker thread.
`progress(done, total)` and the final result or exception reach the
callbacks through queued signals, so callbacks may touch widgets; workers
never do. `Task.cancel()` makes `cancelled()` return True; `fn` decides
where it can stop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot


class Task(QObject):
    """One piece of background work; its callbacks run on the GUI thread."""

    _progress = Signal(int, int)
    _done = Signal(object)
    _failed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_done: Callable[[Any], None] | None = None
        self.on_error: Callable[[BaseException], None] | None = None
        self.on_progress: Callable[[int, int], None] | None = None
        self.finished = False
        # receivers live on the GUI thread: emitting from the worker queues the call
        self._progress.connect(self._deliver_progress)
        self._done.connect(self._deliver_done)
        self._failed.connect(self._deliver_failed)

    def cancel(self) -> None:
        """Ask the work to stop; it stops where it checks `cancelled`."""
        self._cancel.set()

    def cancelled(self) -> bool:
        """Whether `cancel` was called."""
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the worker thread to end (at most `timeout` s); whether it has."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def start(self, fn: Callable[..., Any], name: str) -> Task:
        """Run `fn(progress, cancelled)` on a new daemon thread named `name`."""

        def work() -> None:
            try:
                result = fn(self._progress.emit, self._cancel.is_set)
            except BaseException as exc:  # delivered to on_error, never lost
                self._failed.emit(exc)
            else:
                self._done.emit(result)

        self._thread = threading.Thread(target=work, name=name, daemon=True)
        self._thread.start()
        return self

    @Slot(int, int)
    def _deliver_progress(self, done: int, total: int) -> None:
        if self.on_progress and not self.finished:
            self.on_progress(done, total)

    @Slot(object)
    def _deliver_done(self, result) -> None:
        self.finished = True
        if self.on_done:
            self.on_done(result)
        self.deleteLater()

    @Slot(object)
    def _deliver_failed(self, exc) -> None:
        self.finished = True
        if self.on_error:
            self.on_error(exc)
        self.deleteLater()


def run_task(
    fn: Callable[[Callable[[int, int], None], Callable[[], bool]], Any],
    *,
    parent: QObject | None = None,
    name: str = "papershelf-task",
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Task:
    """Start `fn(progress, cancelled)` on a worker thread; the callbacks get its
    progress, result or exception on the GUI thread."""
    task = Task(parent)
    task.on_done, task.on_error, task.on_progress = on_done, on_error, on_progress
    return task.start(fn, name)
