"""A shared library: one folder that several devices edit, through a sync tool or git.

Layout::

    library.jsonl            a fixed marker (schema 100, layout "devices"): written
                             once, the same bytes from any device; an older
                             Papershelf refuses it ("written by a newer Papershelf")
    devices/<id>/            one device's store (store.py), written by that device only:
                             library.jsonl (the merged state it knew at its last
                             compaction, with its merge state), journal.jsonl (its
                             own actions since), journal.last, backups/, device.json
    pre-sync-backup-<time>/  the files of the single-device library it was, moved
                             aside by the upgrade

`SharedStore` is the `Store` of this device's folder, with its locks in the
machine's state folder (machine.py), that also reads every other device's
files and merges them (`refresh`, replica.py): their journal lines past what
it holds, in causal order, and their library file when the lines it needs
were folded into it. Another device's file that is missing, half-copied,
older or newer is a normal state of a sync: a line that does not read whole
is "not arrived yet" and read again at the next refresh.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreCorruptError, StoreUnreadableError, StoreWriteError
from ..fileio import fsync_dir, write_bytes_atomically
from . import machine
from .files import JOURNAL_MAX_BYTES, open_store_reader
from .format import (
    BACKUPS,
    DEVICES,
    FORMAT_NAME,
    JOURNAL,
    LOCK,
    MARK,
    READ_LOCK,
    SNAPSHOT,
    SYNC_LINES,
    read_snapshot,
    seal,
    unseal,
)
from .journal import Op, parse_journal_line
from .locks import WriterLock, store_write_error
from .merge import Action
from .readview import input_keys, refresh_view
from .replica import Replica, parse_action
from .store import Store

log = logging.getLogger("papershelf.core.store")

# Past the schema of any single-device library file, so that every older Papershelf refuses the
# marker ("written by a newer Papershelf"); the "layout" key is what this one goes by.
SHARED_SCHEMA = 100
LAYOUT = "devices"
DEVICE_FILE = "device.json"
_MARKER_HEADER = {
    "format": FORMAT_NAME,
    "schema_version": SHARED_SCHEMA,
    "generation": 0,
    "journal_seq": 0,
    "layout": LAYOUT,
    "note": "a shared library: each device's files are in devices/<id>/ (Papershelf 0.22 or later)",
}
MARKER = seal(json.dumps(_MARKER_HEADER, separators=(",", ":")).encode()) + seal(
    b'{"end":true,"papers":0,"lists":0,"generation":0,"journal_seq":0}'
)


def layout_of(folder: Path) -> str:
    """ "shared", "single" (a library of one device, from before), or "new" (no library yet)."""
    if _device_files(folder):
        return "shared"  # the marker only tells an older Papershelf to keep out
    kind = _root_kind(folder)
    if kind == "missing":
        if (folder / DEVICES).is_dir():
            return "shared"  # an upgrade cut short after it moved the old files aside
        if any((folder / name).exists() for name in (JOURNAL, MARK, BACKUPS)):
            return "single"  # the single-device store says what is missing
        return "new"
    # a devices/ folder without a device's files next to a single-device library file: an upgrade
    # cut short before it wrote anything; it starts again
    return "shared" if kind == "marker" else "single"


def _device_files(folder: Path) -> bool:
    """Whether a device of a shared library has written its library file or a journal line."""
    try:
        for dev in (folder / DEVICES).iterdir():
            if (dev / SNAPSHOT).exists() or (dev / JOURNAL).stat().st_size > 0:
                return True
    except OSError:
        pass  # (no devices/ folder, or a journal that is not there)
    return False


def _root_kind(folder: Path) -> str:
    """What the library file in the folder itself is: "marker" (a shared library's), "single" (a
    single-device library's, or one the single-device store gives the words for), "missing"."""
    try:
        with open_store_reader(folder / SNAPSHOT, "library file", 1 << 30) as f:
            first = f.readline(65536)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "single"
    if MARKER.startswith(first):
        return "marker"  # the marker, or its beginning: a write cut short (see _write_marker)
    body = unseal(first)
    try:
        header = json.loads(body) if body is not None else None
    except ValueError:
        header = None
    return "marker" if isinstance(header, dict) and header.get("layout") == LAYOUT else "single"


def _write_marker(path: Path) -> None:
    """Write the marker in place, without a temporary file beside it: the library folder is what
    a sync tool copies, and one that copies while a temporary file exists (rsync at any moment)
    leaves it on the other machines for good. Every device writes the same bytes, so writing in
    place is safe; a write cut short leaves the marker's beginning (or an empty file), which
    `_root_kind` takes for the marker and the next open writes whole (`_marker_cut_short`)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(MARKER)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def _marker_cut_short(path: Path) -> bool:
    """Whether the file is the beginning of the marker, not all of it."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(MARKER) + 1)
    except OSError:
        return False
    return len(head) < len(MARKER) and MARKER.startswith(head)


@dataclass
class _Seen:
    """Another device's files as last read: their stat keys."""

    journal: tuple[int, int, int] | None = None
    snapshot: tuple[int, int, int] | None = None


class SharedStore(Store):
    """This device's store in a shared library, merging every other device's files."""

    def __init__(self, root: Path | str, readonly: bool = False, device: str | None = None):
        root = Path(root)
        self.device = device or machine.device_id()
        super().__init__(root / DEVICES / self.device, readonly, local=machine.local_dir(root, self.device))
        self.root = root
        self._lock = WriterLock(self.local / LOCK, root)  # its message names the library folder
        self.sync = Replica(self.device, self.papers, self.lists)
        self._seen: dict[str, _Seen] = {}
        self._deferred: list[tuple[Action, list[list[Any]]]] | None = None
        self.others_saw_me = 0  # the highest action of this device that another device had seen
        self.waiting: dict[str, str] = {}  # device → why its files could not all be read yet
        # the store files when this writer took its lock (and when), and the papers it edited
        # since: what it needs to bring the read view up to its own edits when it closes
        self._view_base: tuple[dict[str, list[int]], int] | None = None
        self._loaded: list[str] = []  # the papers' order as loaded (the view's, if it is of the same files)
        self._edited: set[str] = set()

    @property
    def library_folder(self) -> Path:
        """The library folder (this device's store is in devices/<id>/ inside it)."""
        return self.root

    def unchanged_on_disk(self) -> bool:
        """As Store's, and no other device's files changed since they were read either."""
        if not super().unchanged_on_disk():
            return False
        if not self.readonly:
            return True
        for dev in self.other_devices():
            folder = self.root / DEVICES / dev
            seen = self._seen.get(dev)
            if seen is None or (seen.journal, seen.snapshot) != (_key(folder / JOURNAL), _key(folder / SNAPSHOT)):
                return False
        return True

    def take_folder(self) -> None:
        """As Store's; then the store files as they are now that no other writer can change
        this device's (see close)."""
        super().take_folder()
        now = time.time_ns()
        keys = input_keys(self.root)
        self._view_base = (keys, now) if keys is not None else None
        self._edited.clear()

    def _apply(self, ops: list[Op]) -> None:
        sync = self.sync
        assert sync is not None
        sync.touched.clear()  # (`refresh` clears them before it merges too)
        if self._view_base is not None and not self._edited:
            self._loaded = list(self.papers)  # (the order before the first edit: as loaded)
        try:
            super()._apply(ops)
        finally:
            self._edited |= sync.touched

    def close(self) -> None:
        """As Store's; a writer that edited first brings this machine's read view up to its
        edits, under its lock still (readview.refresh_view), so that the next read-only command
        does not load the whole library again."""
        base, self._view_base = self._view_base, None
        if base is not None and self._edited and not self.readonly and self._lock.fd is not None:
            try:
                refresh_view(self, base[0], base[1], self._loaded, self._edited)
            except Exception as exc:  # a cache: never what stops a close
                log.warning("could not refresh the read view of %s: %s", self.root, exc)
        self._edited.clear()
        self._loaded = []
        super().close()

    def _load(self) -> None:
        # this device's own lines wait, like the others', for what they had seen: an edit of a
        # paper another device added is replayed after that device's add
        own: list[tuple[Action, list[list[Any]]]] = []
        self._deferred = own
        try:
            super()._load()
        finally:
            self._deferred = None
        self._merge_others(own)

    def _apply_in_memory(self, op: Op) -> None:
        if op.kind == "sync" and self._deferred is not None:
            self._deferred.append(op.value)
            return
        super()._apply_in_memory(op)

    def open(self) -> SharedStore:
        """Open this device's store and merge every other device's files (see Store.open)."""
        if not self.readonly:
            self._make_layout()
            self._check_device()
        super().open()
        try:
            if not self.readonly:
                self._claim_device()
                if self.others_saw_me > self.seq:
                    # this device's files were removed (by hand, or a sync tool): its next actions
                    # must not reuse numbers the other devices hold; a library file says where on
                    self.notices.append(
                        f"This device's files in {self.folder} were missing; what the other devices "
                        "had of its edits was taken from them."
                    )
                    for dev in self.other_devices():
                        self._join_file(self.root / DEVICES / dev / SNAPSHOT, dev)
                    self.seq = self.others_saw_me
                    self.compact()
        except BaseException:
            self.close()
            raise
        return self

    # ---- the folder ------------------------------------------------------------------
    def _make_layout(self) -> None:
        try:
            marker = self.root / SNAPSHOT
            if _root_kind(self.root) == "single" and (self.root / DEVICES).is_dir():
                self._finish_upgrade()
            if not marker.exists() or _marker_cut_short(marker):
                self.root.mkdir(parents=True, exist_ok=True)
                _write_marker(marker)
            (self.root / DEVICES).mkdir(exist_ok=True)
        except OSError as exc:
            raise store_write_error(exc, self.root) from exc

    def _finish_upgrade(self) -> None:
        """An upgrade cut short after a device's library file was written, before the old files
        were moved aside (or an older Papershelf wrote a single-device library here since): they
        go into a backup folder, so that an older Papershelf meets the marker, never them."""
        lock = WriterLock(self.root / LOCK)  # as the upgrade: an older Papershelf may hold it
        lock.acquire()
        try:
            if _root_kind(self.root) != "single":
                return  # another process of this machine finished it
            aside = _move_aside(self.root)
        finally:
            lock.release()
        self.notices.append(
            f"The library in {self.root} still had the files of a single-device library beside its "
            f"devices' files (its upgrade was cut short); they were kept in {aside}."
        )

    def _check_device(self) -> None:
        """A device folder that another machine claimed (its device.json names another machine)
        means this configuration's device id was copied from it (a copied settings folder):
        this one takes a new id before it writes anything, and says so."""
        try:
            data = json.loads((self.folder / DEVICE_FILE).read_bytes()[:4096])
        except (OSError, ValueError):
            return
        mine = machine.machine_fingerprint()
        if not isinstance(data, dict) or data.get("machine") in (None, mine):
            return
        old = self.device
        self.device = machine.new_device_id()
        self.folder = self.root / DEVICES / self.device
        self.local = machine.local_dir(self.root, self.device)
        self._lock = WriterLock(self.local / LOCK, self.root)
        self.sync = Replica(self.device, self.papers, self.lists)
        self.notices.append(
            f"This machine's settings folder was copied from another machine ({data.get('host', 'unknown')}): "
            f"both used the device id {old}. This machine is now device {self.device}; nothing was lost."
        )
        log.warning("device id %s belongs to another machine; this one is now %s", old, self.device)

    def _claim_device(self) -> None:
        """Write device.json once: which machine this device is (to tell a copied id)."""
        path = self.folder / DEVICE_FILE
        if path.exists():
            return
        record = {"id": self.device, "host": socket.gethostname(), "machine": machine.machine_fingerprint()}
        record["made"] = _now()
        try:
            write_bytes_atomically(path, (json.dumps(record) + "\n").encode())
        except OSError as exc:
            log.warning("could not write %s: %s", path, exc)

    def other_devices(self) -> list[str]:
        """The ids of the other devices whose folders are in devices/."""
        try:
            names = sorted(p.name for p in (self.root / DEVICES).iterdir() if p.is_dir())
        except OSError:
            return []
        return [n for n in names if n != self.device and machine.is_device_id(n)]

    # ---- merging the others ------------------------------------------------------------
    def refresh(self) -> tuple[set[str], set[str]]:
        """Read what other devices wrote since and merge it. Returns the ids of papers and the
        names of lists that changed (for the library's change events)."""
        sync = self.sync
        assert sync is not None
        with self._write_lock:
            sync.touched.clear()
            sync.touched_lists.clear()
            self._merge_others([])
            return set(sync.touched), set(sync.touched_lists)

    def _merge_others(self, own: list[tuple[Action, list[list[Any]]]]) -> None:
        pending: dict[str, list[tuple[Action, list[list[Any]]]]] = {self.device: own} if own else {}
        for dev in self.other_devices():
            lines = self._read_other(dev)
            if lines is not None:
                pending[dev] = lines
        self._apply_pending(pending)

    def _read_other(self, dev: str) -> list[tuple[Action, list[list[Any]]]] | None:
        """The lines of `dev`'s journal this replica does not hold yet (joining its library
        file first when the lines it needs were folded into it); None if nothing changed."""
        sync = self.sync
        assert sync is not None
        folder = self.root / DEVICES / dev
        seen = self._seen.setdefault(dev, _Seen())
        jkey, skey = _key(folder / JOURNAL), _key(folder / SNAPSHOT)
        if (jkey, skey) == (seen.journal, seen.snapshot) and dev not in self.waiting:
            return None
        lines = self._journal_lines(folder / JOURNAL, dev)
        have = sync.applied.get(dev, 0)
        first = lines[0][0].seq if lines else None
        if skey is not None and skey != seen.snapshot and (first is None or first > have + 1):
            head = _header(folder / SNAPSHOT)
            vv = head.get("vv") if head else None
            if isinstance(vv, dict):
                self._saw_me(vv.get(self.device))
            if head is None or head.get("journal_seq", 0) > have:
                self._join_file(folder / SNAPSHOT, dev)
                have = sync.applied.get(dev, 0)
        for action, _ops in lines[-1:]:
            self._saw_me(action.vv.get(self.device))
        seen.journal, seen.snapshot = jkey, skey
        return [(a, ops) for a, ops in lines if a.seq > have]

    def _saw_me(self, seq: object) -> None:
        """Another device had seen this device's action `seq`: numbering goes on after it (this
        device's folder was removed and made again, and its old numbers are taken)."""
        if isinstance(seq, int) and seq > self.others_saw_me:
            self.others_saw_me = seq

    def _journal_lines(self, path: Path, dev: str) -> list[tuple[Action, list[list[Any]]]]:
        try:
            with open_store_reader(path, "journal", JOURNAL_MAX_BYTES) as f:
                data = f.read()
        except FileNotFoundError:
            return []
        except (OSError, StoreUnreadableError) as exc:
            self.waiting[dev] = f"its journal cannot be read ({exc})"
            return []
        out: list[tuple[Action, list[list[Any]]]] = []
        for line in data.split(b"\n")[:-1]:  # the part after the last newline has not arrived
            record = parse_journal_line(line)
            if record is None or record.get("dev") != dev:
                self.waiting[dev] = "its journal has a line that does not read whole yet"
                break
            try:
                out.append(parse_action(record))
            except (KeyError, TypeError, ValueError):
                self.waiting[dev] = "its journal has a line Papershelf cannot read"
                break
        else:
            self.waiting.pop(dev, None)
        return out

    def _join_file(self, path: Path, dev: str) -> None:
        sync = self.sync
        assert sync is not None
        try:
            papers, lists, header = read_snapshot(path, None, f"library file of device {dev}")
        except (StoreCorruptError, StoreUnreadableError) as exc:
            self.waiting[dev] = f"its library file does not read whole yet ({exc})"
            return
        if header.get("device") != dev:
            self.waiting[dev] = "its library file belongs to another device"
            return
        other = Replica(dev, papers, lists)
        try:
            other.load(header, header.get(SYNC_LINES, []))
        except (KeyError, TypeError, ValueError, IndexError):
            self.waiting[dev] = "its library file's merge state cannot be read"
            return
        if not self.papers and not sync.gone and not sync.list_metas and not self.lists:
            # a device that holds nothing yet takes the other's state as it is (a join would
            # build the same, paper by paper)
            self.papers.update(papers)
            self.lists.update(lists)
            sync.metas, sync.gone, sync.list_metas = other.metas, other.gone, other.list_metas
            sync.default_add = other.default_add
            mine, sync.orphans = sync.orphans, {}
            for early in [*mine.values(), *other.orphans.values()]:
                for action, op in early:
                    sync.apply_one(action, op)  # edits that waited for a paper this file brings
            for d, n in other.applied.items():
                if d != self.device:
                    sync.applied[d] = max(sync.applied.get(d, 0), n)
            sync.clock.see(other.clock.last)
            sync.touched.update(papers)
            sync.touched_lists.update(lists)
            return
        sync.join(papers, lists, other)

    def _apply_pending(self, pending: dict[str, list[tuple[Action, list[list[Any]]]]]) -> None:
        """Apply other devices' lines in causal order: a line once what its vv names is held."""
        sync = self.sync
        assert sync is not None
        present = set(self.other_devices()) | {self.device}
        progress = True
        while progress or pending.get(self.device):
            if not progress:
                # this device's own edits never wait for good: what they had seen is not here
                # (another device's folder was removed, or has not arrived yet)
                action, ops = pending[self.device].pop(0)
                sync.apply(action, ops)
            progress = False
            for dev, lines in pending.items():
                while lines:
                    action, ops = lines[0]
                    have = sync.applied.get(dev, 0)
                    if action.seq <= have:
                        lines.pop(0)
                        continue
                    if action.seq != have + 1:
                        self.waiting[dev] = f"its action {have + 1} has not arrived"
                        break
                    blocked = [
                        d for d, n in action.vv.items() if d != dev and d in present and sync.applied.get(d, 0) < n
                    ]
                    if blocked:
                        self.waiting[dev] = f"it waits for actions of device {blocked[0]}"
                        break
                    sync.apply(action, ops)
                    lines.pop(0)
                    progress = True
                if not lines and dev in self.waiting and not self.waiting[dev].startswith("its journal"):
                    del self.waiting[dev]  # what it waited for has come


def _header(path: Path) -> dict[str, Any] | None:
    """The header of a device's library file (its first line), or None if it does not read."""
    try:
        with open_store_reader(path, "library file", 1 << 34) as f:
            body = unseal(f.readline(1 << 20))
        header = json.loads(body) if body is not None else None
    except (OSError, StoreUnreadableError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def _key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _move_aside(folder: Path) -> Path:
    """Move a single-device library's files into a new pre-sync-backup folder (OSError)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    aside = folder / f"pre-sync-backup-{stamp}"
    n = 1
    while aside.exists():
        n += 1
        aside = folder / f"pre-sync-backup-{stamp}-{n}"
    aside.mkdir()
    for name in (SNAPSHOT, JOURNAL, MARK, BACKUPS):
        if (folder / name).exists():
            os.replace(folder / name, aside / name)
    fsync_dir(folder)
    return aside


def upgrade(folder: Path, device: str | None = None) -> Path:
    """Make a single-device library a shared one, keeping its files as a backup; returns the
    backup folder. The state becomes this device's library file; nothing is lost."""
    lock = WriterLock(folder / LOCK)  # an older Papershelf may be running: it holds this lock
    lock.acquire()
    try:
        old = Store(folder, readonly=True).open()  # read as it is: the backup is the files as they were
    except BaseException:
        lock.release()
        raise
    try:
        store = SharedStore(folder, device=device)
        store.take_folder()
        try:
            store.papers.update(old.papers)
            store.lists.update(old.lists)
            store.fingerprint_version = old.fingerprint_version
            # the library as it was is this device's action 1: a device reads another's library
            # file for the actions its journal no longer holds, and would not read one of none
            assert store.sync is not None
            store.seq = store.sync.applied[store.device] = 1
            store.compact()
        finally:
            store.close()
        aside = _move_aside(folder)
    except OSError as exc:
        raise StoreWriteError(
            f"Papershelf could not make the library in {folder} one that several machines can share: "
            f"{exc.strerror or exc}. Nothing was changed; it stays as it was.",
            folder,
        ) from exc
    finally:
        old.close()
        lock.release()
    for name in (LOCK, READ_LOCK):
        try:
            (folder / name).unlink()
        except OSError:
            pass
    _write_marker(folder / SNAPSHOT)
    log.info("upgraded %s to a shared library; the old files are in %s", folder, aside)
    return aside


def open_store(folder: Path | str, readonly: bool = False, device: str | None = None) -> Store:
    """The store of the library in `folder`: a shared library (brought forward from a
    single-device one, with a backup, at its first writable open)."""
    folder = Path(folder)
    kind = layout_of(folder)
    if kind == "single":
        if readonly:
            return Store(folder, readonly=True).open()
        aside = upgrade(folder, device)
        store = SharedStore(folder, device=device).open()
        store.notices.append(
            f"This library can now be shared by several machines (a synced folder or git). "
            f"Its files from before were kept in {aside}."
        )
        return store
    return SharedStore(folder, readonly=readonly, device=device).open()
