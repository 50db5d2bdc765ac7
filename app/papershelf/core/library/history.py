"""The library's undo and redo: this device's history of actions, kept across processes.

Every action through the facade (`Library._commit`) is kept as its diff
(undoing.py); an undo is applied like any edit (journalled, and synced), and
its own diff is what redo takes back in turn.

The history is this device's, on this machine: `history.jsonl` in the
library's machine-local folder (machine.local_dir), one sealed line per event
(an action, an undo, a redo). It keeps the last `KEEP` actions, and is
rewritten short past four times that many lines, or 64 MiB. A torn last line
(a process killed while writing it) is dropped; a damaged file is set aside
beside it and reported, and the history starts again empty. A read-only
library never writes it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import ReadOnlyLibraryError
from ..fileio import fsync_dir
from ..store import machine
from ..store.format import seal, unseal
from .undoing import Diff, Undone, diff, finish, inverse, label

if TYPE_CHECKING:
    from .facade import Library

__all__ = ["KEEP", "History", "Undone", "diff", "finish"]

log = logging.getLogger(__name__)

KEEP = 100  # actions kept for undo (and as many undone ones for redo)
HISTORY_FILE = "history.jsonl"
REWRITE_BYTES = 64 * 2**20  # past this (undone imports keep their records), rewritten to what is kept


# ---- the history: this device's, kept across processes -------------------------------------


class History:
    """The undo and redo stacks of one library on this machine, kept in `history.jsonl`."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        self._undo: list[Diff] | None = None  # read when first needed
        self._redo: list[Diff] = []
        self._lines = 0
        self._bytes = 0
        self.notices: list[str] = []
        self._label: str | None = None
        self._paused = 0
        self._torn_at: int | None = None  # where a torn last line starts

    @property
    def path(self) -> Path:
        """The history file: this device's, in the library's machine-local folder."""
        device = getattr(self.lib, "device", None) or machine.device_id()
        return machine.local_dir(self.lib.folder, device) / HISTORY_FILE

    # labels and pauses, for the facade's modules
    @contextlib.contextmanager
    def labelled(self, text: str) -> Iterator[None]:
        """The actions committed inside are labelled `text` (a merge of duplicates)."""
        self._label, before = text, self._label
        try:
            yield
        finally:
            self._label = before

    @contextlib.contextmanager
    def unrecorded(self) -> Iterator[None]:
        """Commits inside are not actions of the user's (an export pinning its keys)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def recording(self) -> bool:
        """Whether commits are recorded now (not paused, not read-only)."""
        return not self._paused and not self.lib.readonly

    # ---- the stacks ---------------------------------------------------------------------
    def undo_stack(self) -> list[Diff]:
        """The actions that can be undone, oldest first (read from the file when first needed)."""
        if self._undo is None:
            self._undo, self._redo = [], []
            self._read()
        return self._undo

    def redo_stack(self) -> list[Diff]:
        """The undone actions that can be redone, oldest first."""
        self.undo_stack()
        return self._redo

    def record(self, d: Diff) -> None:
        """A new action: it goes on the undo stack and the redo stack is cleared."""
        if d.empty():
            return
        if not d.label:
            d.label = self._label or label(self.lib, d)
        undo = self.undo_stack()
        undo.append(d)
        del undo[:-KEEP]
        self._redo.clear()
        self._write({"do": d.to_json()})

    def moved(self, redo: bool, back: Diff) -> None:
        """An undo (or redo) was applied: the top entry moves, as `back`, to the other stack."""
        src, dst = (self._redo, self.undo_stack()) if redo else (self.undo_stack(), self._redo)
        src.pop()
        dst.append(back)
        del dst[:-KEEP]
        self._write({"redo" if redo else "undo": back.to_json()})

    # ---- the file -----------------------------------------------------------------------
    def _read(self) -> None:
        path = self.path
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.notices.append(f"The undo history {path} could not be read ({exc.strerror}); it starts again empty.")
            return
        lines = data.splitlines(keepends=True)
        undo: list[Diff] = []
        redo: list[Diff] = []
        for n, line in enumerate(lines):
            body = unseal(line)
            try:
                if body is None:
                    raise ValueError("checksum")
                event = orjson.loads(body)
                if not isinstance(event, dict) or len(event) != 1:
                    raise ValueError("shape")
                ((kind, entry),) = event.items()
                d = Diff.from_json(entry)
            except ValueError:
                if n == len(lines) - 1 and not line.endswith(b"\n"):
                    # torn by a process killed while writing it: that event never happened, and
                    # the next write cuts it off (a read-only library leaves it)
                    self._torn_at = len(data) - len(line)
                    lines.pop()
                    break
                self._set_aside(path, n + 1)
                return
            if kind == "do":
                undo.append(d)
                redo.clear()
            elif kind == "undo" and undo:
                undo.pop()
                redo.append(d)
            elif kind == "redo" and redo:
                redo.pop()
                undo.append(d)
            elif kind == "kept-redo":
                redo.append(d)
            del undo[:-KEEP], redo[:-KEEP]
        self._undo, self._redo, self._lines, self._bytes = undo, redo, len(lines), len(data)

    def _set_aside(self, path: Path, line: int) -> None:
        aside = path.with_name(f"{HISTORY_FILE}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            if not self.lib.readonly:
                os.replace(path, aside)
                where = f"it was set aside as {aside}"
            else:
                where = "it is left as it is (the library is open read-only)"
        except OSError as exc:
            where = f"it could not be set aside ({exc.strerror})"
        self.notices.append(
            f"The undo history {path} is damaged (line {line}); {where}, and undo starts again "
            "from the next action. The library itself is not affected."
        )

    def _write(self, event: dict[str, Any]) -> None:
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self._torn_at is not None:
                os.truncate(path, self._torn_at)
                self._torn_at = None
            if self._lines >= 4 * KEEP or self._bytes > REWRITE_BYTES:
                self._rewrite(path)
            line = seal(orjson.dumps(event))
            with open(path, "ab") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self._lines += 1
            self._bytes += len(line)
        except OSError as exc:
            # the edit itself is saved; only taking it back after a restart is lost
            log.warning("could not write the undo history %s: %s", path, exc)
            self.notices.append(f"The undo history {path} could not be written ({exc.strerror}).")

    def _rewrite(self, path: Path) -> None:
        """The stacks as they are, one line per entry."""
        undo, redo = self.undo_stack(), self._redo
        lines = [seal(orjson.dumps({"do": d.to_json()})) for d in undo]
        lines += [seal(orjson.dumps({"kept-redo": d.to_json()})) for d in redo]
        tmp = path.with_name(HISTORY_FILE + ".tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
        self._lines, self._bytes = len(lines), sum(map(len, lines))


# ---- the facade's methods (Library.undo, ...) -------------------------------------------------


def _step(lib: Library, redo: bool) -> Undone | None:
    h = lib._history
    stack = h.redo_stack() if redo else h.undo_stack()
    if not stack:
        return None
    if lib.readonly:
        raise ReadOnlyLibraryError(
            f"The library in {lib.folder} was opened read-only; nothing was undone or redone.", lib.folder
        )
    entry = stack[-1]
    ops, events, kept = inverse(lib, entry)
    back = diff(lib, ops)
    if ops:
        lib._store.apply(ops)
    finish(lib, back)
    back.label = entry.label
    h.moved(redo, back)
    if lib._fp_index is not None and (entry.added or entry.deleted):
        lib._fp_index = None  # rebuilt when next needed
    for change in events:
        lib._emit(change)
    return Undone(entry.label, events, kept, redo)


def undo(lib: Library) -> Undone | None:
    """Take back this device's last action (None: there is none), as a new edit that is
    journalled like any; what changed since (here or on another device) is left as it is."""
    return _step(lib, redo=False)


def redo(lib: Library) -> Undone | None:
    """Make the action undone last again (None: nothing was undone since the last action)."""
    return _step(lib, redo=True)


def can_undo(lib: Library) -> bool:
    """Whether there is an action to undo."""
    return bool(lib._history.undo_stack())


def can_redo(lib: Library) -> bool:
    """Whether there is an undone action to redo."""
    return bool(lib._history.redo_stack())


def undo_label(lib: Library) -> str:
    """What Undo would take back, in words ('' if nothing)."""
    stack = lib._history.undo_stack()
    return stack[-1].label if stack else ""


def redo_label(lib: Library) -> str:
    """What Redo would make again, in words ('' if nothing)."""
    stack = lib._history.redo_stack()
    return stack[-1].label if stack else ""


def undo_history(lib: Library) -> tuple[list[str], list[str]]:
    """The labels of the actions that can be undone and of those that can be redone, newest first."""
    h = lib._history
    return [d.label for d in reversed(h.undo_stack())], [d.label for d in reversed(h.redo_stack())]


def undo_token(lib: Library) -> object | None:
    """The action Undo would take back, as an object to compare by identity (None: nothing):
    how the window tells whether the library's next undo is that of its own step."""
    stack = lib._history.undo_stack()
    return stack[-1] if stack else None


def redo_token(lib: Library) -> object | None:
    """As `undo_token`, for Redo."""
    stack = lib._history.redo_stack()
    return stack[-1] if stack else None
