"""The library's small files that every device keeps a copy of its own: the saved searches
(saved.py) and the tags applied by hand (tagging.py).

A library folder may be shared by several machines through a sync tool or git, and a
sync tool keeps one copy of a file that two machines write. So each device writes only
`devices/<its id>/<file>`, and reading merges every device's copy. Each entry carries
the stamp of the edit that made it (milliseconds, `max(now, highest stamp seen + 1)`:
an edit made after another device's, as seen here, stamps later even when this
machine's clock is behind) and the device that made it; per key (a saved search's
name in any case, a tag), the entry of the highest (stamp, device) wins. A delete or a
rename leaves a tombstone (`"deleted": true`), which wins over older entries as any
entry does, so a delete is not undone by a device that had not seen it. A device's
file holds the merged state it knew at its last save, tombstones too, so what another
device saved survives that device's folder being deleted.

Another device's file that is missing, half-copied, damaged or of a newer format is a
normal state of a sync: it is skipped for now (logged) and read again next time, never
written. The file of the library before devices (`<library>/<file>`, or the copy in the
upgrade's backup folder `pre-sync-backup-<time>/` once moved there) is read as a base
(stamp 0) until this device has a file of its own, which its first save (or finding
the old file damaged) makes from the merged state: the old file is never written again.
See docs/DESIGN.md, "Saved searches".
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fileio import read_small_file, write_atomically, write_error
from ..store import machine

if TYPE_CHECKING:
    from .facade import Library

log = logging.getLogger(__name__)

DEVICES = "devices"  # <library>/devices/<device id>/: each device's own files
UPGRADE_BACKUP = "pre-sync-backup-"  # <library>/pre-sync-backup-<time>/: the upgrade's backup of the old files
VERSION = 2  # 1: the single file of the library before devices (no stamps, no tombstones)

# the files parsed, by (path, inode, size, mtime, ctime): the sidebar reads them often
_parsed: dict[tuple[str, int, int, int, int], FileRead] = {}
_PARSED_MAX = 64
# the other devices' files already logged as unreadable: (path, mtime, size)
_logged: set[tuple[str, int, int]] = set()


def device_of(lib: Library) -> str:
    """The device this library is opened as (the library's own, else this configuration's)."""
    return getattr(lib, "device", None) or machine.device_id()


def now_ms() -> int:
    """The wall clock in milliseconds."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Kind:
    """One of the synced files: its name, its format, and how one entry of it is read."""

    file_name: str
    format: str
    list_key: str  # the entries' list in the file: "searches", "tags"
    name_field: str  # the one field a tombstone keeps: "name", "tag"
    what: str  # in words: "saved-searches", "hand-tags"
    # a raw entry → (key, item); ValueError (or InvalidValueError, a ValueError) for a bad one.
    # `deleted`: only the name field needs to be there.
    read_item: Callable[[Any, bool], tuple[str, dict[str, Any]]]


def _text(item: Mapping[str, Any]) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Entry:
    """One saved value (or, deleted, a tombstone) under its key, with the edit that made it."""

    key: str
    item: Mapping[str, Any]
    stamp: int
    device: str
    first: int  # the stamp of its first save: where it stands in the order (kept by a rename)
    deleted: bool = False

    def beats(self, other: Entry) -> bool:
        """Whether this entry wins over `other` of the same key: the higher (stamp, device);
        the rest only makes two devices that share an id (a copied configuration) agree."""
        mine, theirs = (self.stamp, self.device, self.deleted), (other.stamp, other.device, other.deleted)
        if mine != theirs:
            return mine > theirs
        return self.item != other.item and _text(self.item) > _text(other.item)

    def as_json(self) -> dict[str, Any]:
        """The entry as its file holds it."""
        out = {**self.item, "stamp": self.stamp, "device": self.device, "first": self.first}
        if self.deleted:
            out["deleted"] = True
        return out


@dataclass
class FileRead:
    """One device's file as read: its entries, how many entries were left out, and why the
    file as a whole could not be read (None: it could)."""

    path: Path
    entries: list[Entry] = field(default_factory=list)
    bad: int = 0
    error: str | None = None
    stat: tuple[int, int] = (0, 0)  # (mtime ns, size): one report per version of a file


@dataclass
class Merged:
    """Every device's file merged: per key, the winning entry (tombstones too)."""

    entries: dict[str, Entry]
    top: int  # the highest stamp seen: the next edit stamps later
    own: FileRead | None  # this device's file (None: it has none yet)
    base: FileRead | None  # the library's file from before devices (None: not read)

    def live(self) -> list[Entry]:
        """The entries that are not deleted, in the order first saved."""
        return sorted((e for e in self.entries.values() if not e.deleted), key=lambda e: (e.first, e.key))


def own_path(lib: Library, kind: Kind) -> Path:
    """This device's file of `kind` in the library."""
    return lib.folder / DEVICES / device_of(lib) / kind.file_name


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("not a stamp")
    return value


def parse(kind: Kind, raw: bytes) -> tuple[list[Entry], int]:
    """The entries in a file's bytes (the first of a key, in a file of version 1), and how
    many had to be left out. ValueError when the file as a whole is not one of `kind`."""
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict) or data.get("format") != kind.format or not isinstance(data.get(kind.list_key), list):
        raise ValueError(f"it is not a {kind.what} file")
    version = data.get("version", 1)  # hand-tags files had no version at first
    if isinstance(version, bool) or not isinstance(version, int) or version > VERSION:
        raise ValueError(f"it is of a newer version ({data.get('version')!r}) than this Papershelf reads")
    found: dict[str, Entry] = {}
    bad = 0
    for i, raw_entry in enumerate(data[kind.list_key]):
        try:
            if version < 2:  # the old file: a base, in its own order, before every later save
                key, item = kind.read_item(raw_entry, False)
                entry = Entry(key, item, 0, "", i)
                if key in found:
                    continue
            else:
                if not isinstance(raw_entry, dict):
                    raise ValueError("not an entry")
                deleted = raw_entry.get("deleted") is True
                key, item = kind.read_item(raw_entry, deleted)
                device = raw_entry.get("device")
                if not isinstance(device, str) or not (device == "" or machine.is_device_id(device)):
                    raise ValueError("not a device")
                stamp = _int(raw_entry.get("stamp"))
                entry = Entry(key, item, stamp, device, _int(raw_entry.get("first", stamp)), deleted)
                if key in found and not entry.beats(found[key]):
                    continue
        except (ValueError, TypeError, RecursionError):
            bad += 1
            continue
        found[key] = entry
    return list(found.values()), bad


def read_file(kind: Kind, path: Path) -> FileRead | None:
    """One file of `kind` (None: there is none). A file read before and not replaced since
    (the same inode, size and change time) is not parsed again."""
    out = FileRead(path)
    try:
        st = path.stat()
        out.stat = (st.st_mtime_ns, st.st_size)
        seen = (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if seen in _parsed:
            return _parsed[seen]
        raw = read_small_file(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        out.error = exc.strerror or str(exc)
        return out
    try:
        out.entries, out.bad = parse(kind, raw)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, not ours, newer
        out.error = "it is not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc).split("\n")[0]
    if len(_parsed) >= _PARSED_MAX:
        _parsed.clear()
    _parsed[seen] = out
    return out


def device_folders(folder: Path) -> list[Path]:
    """The folders of the devices that wrote into this library (`devices/<id>/`), by id."""
    try:
        found = [p for p in (folder / DEVICES).iterdir() if machine.is_device_id(p.name) and p.is_dir()]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name)


def old_path(folder: Path, kind: Kind) -> Path:
    """The library's file of `kind` from before devices: at its top, or (once the upgrade to
    devices has moved the old files into a backup folder) in the latest such backup."""
    path = folder / kind.file_name
    if path.exists():
        return path
    try:
        moved = sorted(folder.glob(f"{UPGRADE_BACKUP}*/{kind.file_name}"))
    except OSError:
        moved = []
    return moved[-1] if moved else path


def read(lib: Library, kind: Kind) -> Merged:
    """Every device's file of `kind` merged; this device's own file and the old base as read
    (for the caller to report on), the other devices' unreadable files logged and skipped."""
    me = device_of(lib)
    reads: list[FileRead] = []
    own = base = None
    for folder in device_folders(lib.folder):
        got = read_file(kind, folder / kind.file_name)
        if got is None:
            continue
        if folder.name == me:
            own = got
        elif got.error is not None or got.bad:
            key = (str(got.path), *got.stat)
            if key not in _logged:
                _logged.add(key)
                said = got.error or f"{got.bad} entries could not be read"
                log.info("skipped for now: %s (%s); it is read again next time", got.path, said)
        reads.append(got)
    if own is None:  # no file of its own yet: the library's old file is the base
        base = read_file(kind, old_path(lib.folder, kind))
        if base is not None:
            reads.insert(0, base)
    entries: dict[str, Entry] = {}
    top = 0
    for got in reads:
        for entry in got.entries:
            top = max(top, entry.stamp)
            if entry.key not in entries or entry.beats(entries[entry.key]):
                entries[entry.key] = entry
    return Merged(entries, top, own, base)


def write(
    lib: Library,
    kind: Kind,
    merged: Merged,
    changes: Mapping[str, Mapping[str, Any] | None] = {},
    places: Mapping[str, str] = {},
) -> None:
    """Write this device's file: the merged state with `changes` (key → its new item, None
    deletes), each stamped now. A new key of `places` takes the place (in the order) of
    the key it names (a rename). Raises ExportError from `write_atomically`."""
    stamp = max(now_ms(), merged.top + 1)
    me = device_of(lib)
    entries = dict(merged.entries)
    for key, item in changes.items():
        old = entries.get(key)
        if item is None:
            if old is not None and not old.deleted:
                entries[key] = Entry(key, {kind.name_field: old.item[kind.name_field]}, stamp, me, old.first, True)
            continue
        source = entries.get(places.get(key, ""))
        first = old.first if old is not None and not old.deleted else source.first if source is not None else stamp
        entries[key] = Entry(key, dict(item), stamp, me, first)
    path = own_path(lib, kind)
    data = {
        "format": kind.format,
        "version": VERSION,
        "device": me,
        kind.list_key: [e.as_json() for e in sorted(entries.values(), key=lambda e: (e.first, e.key))],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(exc, path) from exc
    write_atomically(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


def diff(merged: Merged, wanted: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Mapping[str, Any] | None]:
    """The changes that make the live entries `wanted` (key, item): the new and changed ones,
    and a delete for each live entry not wanted."""
    want = dict(wanted)
    live = {e.key: e for e in merged.live()}
    out: dict[str, Mapping[str, Any] | None] = {k: None for k in live if k not in want}
    out.update({k: item for k, item in want.items() if k not in live or dict(live[k].item) != dict(item)})
    return out
