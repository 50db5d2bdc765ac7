"""Following other devices live: their edits, brought in by a sync tool or `git pull`,
merged while the window is open, and the conflicts the merge kept.

A `QFileSystemWatcher` watches the library's `devices/` folder, each other
device's folder and its journal and library file (`watching.watched_paths`);
a poll every `POLL_MS` compares the same paths' stat keys, because watchers
miss changes on some network and FUSE file systems and lose a file a sync tool
renamed over. A burst of notices (a sync tool writes a temporary file, renames
it, touches the folder) settles for `SETTLE_MS` and becomes one check.

The checks run on one worker thread of their own, one at a time: joining
another device's whole library file takes seconds at 100,000 papers.
`Library.refresh` holds the store's write lock while it merges, so a local
edit made meanwhile waits for it and is never interleaved. Its Change events
reach the views as a local edit's do (`LibraryEvents`, queued to the GUI
thread), and the search index follows them itself. While an import runs, no
check starts (the import is one undoable step over the library as it found
it); the next poll catches up.

The worker also works out the kept conflicts (a scan of every paper's merge
state) after a merge brought changes, after a local edit of a paper with a
conflict, and to settle one (`settle`), so the GUI thread never scans.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

from ..core.errors import PapershelfError
from ..core.library import Change, stat_key, synced_paths, watched_paths
from ..core.overview import top_tags
from .commands import DoneStep

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger("papershelf.gui")

POLL_MS = 1000  # the fallback when no watcher notice comes: a change shows within about 1 s
SETTLE_MS = 100  # a burst of notices becomes one check


def conflict_key(conflict: Any) -> tuple[str, str, str, int]:
    """What tells one kept conflict from another across scans (their numbers shift)."""
    return (conflict.paper, conflict.field, conflict.device, conflict.hlc)


@dataclass
class Check:
    """What one check on the worker found."""

    changes: list[Change] = field(default_factory=list)
    conflicts: list[Any] | None = None  # None: not worked out this time
    folders: list[Path] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    tags: tuple[list[str], list[str]] | None = None  # (every tag, the number keys' tags) after a merge
    synced: bool = False  # another device's saved searches or hand tags changed
    said: str = ""  # what settling a conflict did, in words
    steps: list[tuple[str, object]] = field(default_factory=list)  # (label, undo token) of each settle
    error: str = ""
    seconds: float = 0.0


class LiveChanges(QObject):
    """Merges other devices' edits into `window`'s library as their files arrive."""

    merged = Signal(list)  # the Changes a merge made, once the window has them
    conflictsChanged = Signal()
    _checked = Signal(object)  # a Check, from the worker

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.library = window.library
        self.active = self.library.device is not None  # a library of several devices
        self.conflicts: list[Any] = []  # as the last scan found them, oldest first
        self.by_paper: dict[str, list[Any]] = {}
        self.last_merge_seconds = 0.0  # how long the last merge that changed something took
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._noticed)
        self._watcher.fileChanged.connect(self._noticed)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(lambda: self.check(force=True))
        self._poll = QTimer(self, interval=POLL_MS)
        self._poll.timeout.connect(self.check)
        self._deferred = False  # a check was due while an import ran
        # the worker's state: what is asked for (under _wake), what it last saw (its own)
        self._wake = threading.Condition()
        self._force = self._recount = self._asked = self._closing = False
        self._settles: list[tuple[Any, bool]] = []
        self._seen: tuple[tuple[str, Any], ...] = ()
        self._synced_seen: tuple[tuple[str, Any], ...] = ()  # other devices' saved searches, hand tags
        self._thread: threading.Thread | None = None
        self._checked.connect(self._deliver)
        window.events.changed.connect(self._local_change)

    def start(self) -> None:
        """Begin following (the watcher, the poll, and a first check with the conflicts)."""
        if not self.active:
            return
        self._thread = threading.Thread(target=self._loop, name="papershelf-live", daemon=True)
        self._thread.start()
        self._poll.start()
        self._ask(force=True, recount=True)

    def close(self) -> None:
        """Stop following: no check starts; one under way finishes first."""
        self._poll.stop()
        self._settle.stop()
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(30)

    # ---- asking -----------------------------------------------------------------------
    @Slot(str)
    def _noticed(self, _path: str) -> None:
        self._settle.start()

    def check(self, force: bool = False) -> None:
        """Merge what other devices' files brought, if they changed (`force`: read them anyway)."""
        self._ask(force=force or self._deferred)

    def settle(self, conflict: Any, keep: bool) -> None:
        """Take a kept conflict's value (`keep`) or let it go, on the worker; the status bar
        says what was done."""
        with self._wake:
            self._settles.append((conflict, keep))
        self._ask(recount=True)

    def _ask(self, force: bool = False, recount: bool = False) -> None:
        if not self.active or self.window.closing:
            return
        if self.window.transfers.running():
            self._deferred = True  # the next poll after the import catches up
            return
        self._deferred = False
        with self._wake:
            self._force = self._force or force
            self._recount = self._recount or recount
            self._asked = True
            self._wake.notify()

    @Slot(object)
    def _local_change(self, change: Change) -> None:
        # an edit of a paper with a kept conflict may settle it (it saw both values)
        if change.kind != "lists-changed" and self.by_paper and not change.ids.isdisjoint(self.by_paper):
            self._ask(recount=True)

    # ---- the worker ---------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._asked and not self._closing:
                    self._wake.wait()
                if self._closing:
                    return
                force, recount, settles = self._force, self._recount, self._settles
                self._force = self._recount = self._asked = False
                self._settles = []
            try:
                result = self._run(force, recount, settles)
            except Exception as exc:  # shown in the status bar; the next check tries again
                log.exception("merging other devices' edits failed")
                result = Check(error=str(exc))
            self._checked.emit(result)

    def _run(self, force: bool, recount: bool, settles: list[tuple[Any, bool]]) -> Check:
        lib = self.library
        started = time.perf_counter()
        folders, files = watched_paths(lib)
        # the keys before the merge: a file that grows while it is read is read again next time
        seen = tuple((str(p), stat_key(p)) for p in [*folders, *files])
        result = Check(folders=folders, files=files)
        if force or seen != self._seen:
            self._seen = seen
            result.changes = lib.refresh()
        synced = tuple((str(p), stat_key(p)) for p in synced_paths(lib))
        result.synced = synced != self._synced_seen
        self._synced_seen = synced
        said = []
        for conflict, keep in settles:
            found = lib.conflicts()
            number = next((n for n, c in enumerate(found, 1) if conflict_key(c) == conflict_key(conflict)), 0)
            if not number:
                said.append("That conflict was settled meanwhile.")
                continue
            before = lib.undo_token()
            try:
                said.append(lib.take_conflict(number, keep))
            except PapershelfError as exc:  # a read-only library, a full disk: said, nothing lost
                said.append(f"The conflict was not settled: {exc}")
                continue
            token = lib.undo_token()
            if token is not None and token is not before:  # an action of the library's history
                result.steps.append((lib.undo_label(), token))
        result.said = " ".join(said)
        if result.changes or result.synced:
            result.tags = self._tags()
        if recount or result.changes or settles:
            result.conflicts = self._scan()
        result.seconds = time.perf_counter() - started
        return result

    def _tags(self) -> tuple[list[str], list[str]] | None:
        """The tag panel's completions and number-key tags, counted here: a count of every
        paper's tags takes a third of a second at 100,000 papers, too long for the GUI thread."""
        for _ in range(5):
            try:
                return sorted(self.library.tag_counts()), top_tags(self.library)
            except RuntimeError:  # a local edit changed the papers mid-count
                continue
        return None

    def _scan(self) -> list[Any] | None:
        """The kept conflicts; None if local edits kept changing the merge state mid-scan
        (the scan reads it without the write lock, so as not to hold up the GUI's edits)."""
        for _ in range(5):
            try:
                return self.library.conflicts()
            except RuntimeError:  # "dictionary changed size during iteration"
                continue
        return None

    # ---- on the GUI thread --------------------------------------------------------------
    @Slot(object)
    def _deliver(self, result: Check) -> None:
        win = self.window
        if win.closing:
            return
        self._watch(result.folders, result.files)
        if result.error:
            win.statusBar().showMessage(
                self.tr("Could not merge another device's edits: %s. Papershelf tries again in a moment.")
                % result.error,
                8000,
            )
        if result.changes:
            self.last_merge_seconds = result.seconds
            # new tags and lists come as changes, not additions: what the tag panel offers follows
            if result.tags is not None:
                win.tag_panel.set_known_tags(result.tags[0])
                win.tag_panel.set_key_tags(result.tags[1])
            if any(c.kind == "lists-changed" for c in result.changes):
                win.tag_panel.set_lists(sorted(self.library.lists(), key=str.casefold))
            win.pane.update_empty_state()
            win.refresh_soon()  # papers another device added show in the answer
            if not result.said:
                win.statusBar().showMessage(self.tr("Merged edits from another device."), 4000)
            self.merged.emit(result.changes)
        if result.synced:  # a search saved (or hand tags set) on another device
            win.sidebar.saved.reload()
            if result.tags is not None and not result.changes:
                win.tag_panel.set_key_tags(result.tags[1])
        for label, token in result.steps:
            # the window's Undo is the library's: settling a conflict is the user's last step
            win.undo_stack.push(DoneStep(self.library, label, token))
        if result.said:
            win.statusBar().showMessage(result.said, 8000)
        if result.conflicts is not None:
            self._set_conflicts(result.conflicts)

    def _watch(self, folders: list[Path], files: list[Path]) -> None:
        """Watch what is there now: a new device's folder, a file a sync tool renamed over
        (the watcher lets go of a file that is replaced)."""
        have = set(self._watcher.directories()) | set(self._watcher.files())
        new = [str(p) for p in [*folders, *files] if str(p) not in have]
        if new:
            self._watcher.addPaths(new)  # a path it cannot watch (gone again, no inotify left): the poll sees it

    def _set_conflicts(self, conflicts: list[Any]) -> None:
        before = [(conflict_key(c), c.value, c.current) for c in self.conflicts]
        self.conflicts = list(conflicts)
        self.by_paper = {}
        for c in self.conflicts:
            self.by_paper.setdefault(c.paper, []).append(c)
        if [(conflict_key(c), c.value, c.current) for c in self.conflicts] != before:
            self.conflictsChanged.emit()

    def conflicts_of(self, paper_id: str) -> list[Any]:
        """The kept conflicts of one paper (as the last scan found them)."""
        return self.by_paper.get(paper_id, [])
