"""The devices that wrote into a library folder, for `papershelf devices` (a diagnostic).

Each device of a synced library writes only `devices/<its id>/` (see synced.py and
docs/DESIGN.md). This reads those folders without opening the library (a locked or
damaged library can still be looked at): the device's machine, as its `device.json`
says; how many edits its journal holds; when its files last changed; and whether they
look complete, or as if a sync is still copying them in.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..fileio import kind_of, read_small_file
from ..store import JOURNAL, SNAPSHOT, machine
from .synced import device_folders

DEVICE_FILE = "device.json"  # {"id", "host", "made"}: written once by the device
# what sync tools name a file they are still copying in
_PARTIAL = (".syncthing.", ".unison.", ".~", "~$")
_CHUNK = 1 << 20


@dataclass
class Device:
    """One device's folder in the library, as it looks now."""

    id: str
    this: bool  # the device this configuration is
    host: str | None = None  # the machine's name, from its device.json
    edits: int | None = None  # whole lines in its journal (None: it has none)
    changed: float | None = None  # the latest change of its files (seconds since the epoch)
    problems: list[str] = field(default_factory=list)  # why its files look incomplete, in words

    @property
    def complete(self) -> bool:
        """Whether its files look whole."""
        return not self.problems


def _lines(path: Path) -> tuple[int, bool]:
    """The newline-terminated lines of a file, and whether it ends with one (or is empty).
    OSError when it cannot be read (or is not a regular file)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise OSError(0, f"it is {kind}, not a file")
        count, last = 0, b"\n"
        while chunk := os.read(fd, _CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
        return count, last == b"\n"
    finally:
        os.close(fd)


def _look(folder: Path, me: str) -> Device:
    device = Device(folder.name, folder.name == me)
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        device.problems.append(f"its folder cannot be read ({exc.strerror or exc})")
        return device
    _look_at_files(device, folder, names)
    _look_at_lines(device, folder, names)
    _look_at_json(device, folder, names)
    return device


def _look_at_files(device: Device, folder: Path, names: list[str]) -> None:
    """When the device's files last changed, and which are still being copied in."""
    times = []
    for name in names:
        path = folder / name
        try:
            st = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            times.append(st.st_mtime)
        if name.startswith(_PARTIAL) or (name.startswith(".") and name.endswith(".tmp")):
            device.problems.append(f"a file is still being copied in ({name})")
    device.changed = max(times, default=None)


def _look_at_lines(device: Device, folder: Path, names: list[str]) -> None:
    """The edits its journal holds, and whether its journal and library file end whole."""
    for name in (JOURNAL, SNAPSHOT):
        if name not in names:
            continue
        try:
            count, whole = _lines(folder / name)
        except OSError as exc:
            device.problems.append(f"{name} cannot be read ({exc.strerror or exc})")
            continue
        if name == JOURNAL:
            device.edits = count
        if not whole:
            device.problems.append(f"{name} ends mid-line (still being copied?)")


def _look_at_json(device: Device, folder: Path, names: list[str]) -> None:
    """Whether its JSON files read whole; its machine, from its device.json."""
    for name in names:
        if not name.endswith(".json") or ".damaged-" in name:  # a damaged file set aside is kept, not awaited
            continue
        try:
            data = json.loads(read_small_file(folder / name).decode("utf-8"))
        except OSError as exc:
            device.problems.append(f"{name} cannot be read ({exc.strerror or exc})")
            continue
        except (ValueError, RecursionError):
            device.problems.append(f"{name} is not whole JSON (still being copied?)")
            continue
        if name == DEVICE_FILE and isinstance(data, dict):
            host = data.get("host")
            device.host = host if isinstance(host, str) and host else None
            if data.get("id") not in (None, folder.name):
                device.problems.append(f"its {DEVICE_FILE} names another device ({data.get('id')!r})")


def devices(folder: Path) -> list[Device]:
    """The devices whose folders are in the library's devices/, by id."""
    me = machine.device_id()
    return [_look(f, me) for f in device_folders(folder)]
