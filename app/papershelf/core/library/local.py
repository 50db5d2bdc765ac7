"""What the library keeps on this machine, outside its (maybe synced) folder.

A library folder may be shared through Syncthing, Nextcloud, Dropbox or git.
A sync tool keeps one copy of each file, so a file with two writers loses
edits, and a cache in the folder is copied to every machine for nothing. So
everything that belongs to one machine lives in the machine's state folder,
in `machine.local_dir(folder, device)`: the writer lock and the readers' swap
lock, the search index (`INDEX_DIR` there). The device is decided here only
(`device_of`), for the facade, its search index and the window's
single-instance socket alike.

An earlier Papershelf kept the locks and the index in the library folder:
the first writable open removes them (`remove_legacy`), quietly, and only
what is plainly ours: a lock that is a regular file no process holds, an
index folder that holds nothing but index files. A symbolic link is never
followed out of the folder.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import stat
import threading
from pathlib import Path

from ..errors import StoreLockedError
from ..fileio import try_lock_fd, unlock
from ..store import LOCK, READ_LOCK, Store, machine
from ..store import open_store as shared_open_store
from ..store.readview import input_keys, open_view, write_view
from ..store.shared import layout_of

log = logging.getLogger(__name__)

INDEX_DIR = "index"  # the index's folder in the library's local folder (search.state has the same name)
# what an earlier version left of its index beside the library (search.rebuild's working names)
LEGACY_INDEX_NAMES = (INDEX_DIR, f"{INDEX_DIR}.new", f"{INDEX_DIR}.old")
LEGACY_INDEX_LOCK = f"{INDEX_DIR}.rebuild.lock"
# the files of a Whoosh index and its state (search.state._ours says the same of an index folder)
_INDEX_FILE_ENDINGS = (".toc", ".seg", ".pst", ".trm", ".fln", ".col", ".lck", ".tmp", ".json")


def device_of(store: object) -> str:
    """The device a store is opened as: the store's own once it knows one, else this
    configuration's (machine.device_id). The one place the facade decides it."""
    return getattr(store, "device", None) or machine.device_id()


def index_folder(lib: object) -> Path:
    """Where a library's search index lives: beside its locks, in this machine's folder for it."""
    return Path(lib._store.local) / INDEX_DIR  # type: ignore[attr-defined]


def local_folder(folder: Path | str, device: str) -> Path:
    """This machine's folder for the library in `folder` opened as `device` (not created here)."""
    return machine.local_dir(Path(folder), device)


def open_store(folder: Path | str, readonly: bool = False, lazy: bool = False) -> Store:
    """The library's store, opened (a shared library: this device's store, its locks in this
    machine's folder; see core/store/shared.py); a writable open then removes what an earlier
    version kept in the folder (remove_legacy), under the store's own lock. `lazy` (read-only):
    through the read view when it is current (core/store/readview.py)."""
    if readonly and lazy:
        return open_lazily(Path(folder))
    store = shared_open_store(folder, readonly)
    if not readonly:
        try:
            remove_legacy(store.library_folder)
        except BaseException:
            store.close()
            raise
    return store


def open_lazily(folder: Path) -> Store:
    """A read-only store of a shared library through its read view, when every store file is
    as the view says; else the whole load, which then writes the view for the next open."""
    if layout_of(folder) != "shared":
        return shared_open_store(folder, True)
    device = machine.device_id()
    view = open_view(folder, device, machine.local_dir(folder, device))
    if view is not None:
        return view  # type: ignore[return-value]  # what a read-only Library reads of a store
    keys = input_keys(folder)
    store = shared_open_store(folder, True, device=device)
    if keys is not None and not store.notices:
        write_view(store, keys)
    return store


def remove_legacy(folder: Path) -> threading.Thread | None:
    """Remove the locks and the search index an earlier Papershelf kept in the library `folder`
    (see the module's docstring). The locks go now; StoreLockedError if an earlier Papershelf
    still holds its lock there (it is writing the library now). An old index goes on a thread
    of its own (a 100,000-paper one is some 300 MB: 0.16 s, more on a slow disk, which a window
    opening must not wait for), returned; the process waits for it before it exits."""
    removed = [name for name in (LOCK, READ_LOCK, LEGACY_INDEX_LOCK) if _remove_lock_file(folder / name)]
    if removed:
        log.info("removed what an earlier Papershelf kept in %s (now on this machine): %s", folder, ", ".join(removed))
    old = [folder / name for name in LEGACY_INDEX_NAMES if os.path.lexists(folder / name)]
    if not old:
        return None
    worker = threading.Thread(target=_remove_index_folders, args=(old,), name="remove-old-index")
    worker.start()
    return worker


def _remove_index_folders(paths: list[Path]) -> None:
    for path in paths:
        if _remove_index_folder(path):
            log.info("removed the search index an earlier Papershelf kept at %s (now on this machine)", path)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _remove_lock_file(path: Path) -> bool:
    """Remove a lock file an earlier version left, if it is a regular file nobody holds."""
    if not _is_regular(path):
        return False  # missing, or a link, folder or pipe: not ours to remove
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        log.info("left %s in place: %s", path, exc.strerror or exc)
        return False
    try:
        if not try_lock_fd(fd):
            if path.name == LOCK:
                raise StoreLockedError(
                    f"The library in {path.parent} is open in an earlier version of Papershelf. "
                    "Close that one first; two programs writing one library could lose edits.",
                    path,
                )
            return False  # a reader or a rebuild of the earlier version: left for next time
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            log.warning("could not remove %s: %s", path, exc)
        return False
    finally:
        unlock(fd)


def _remove_index_folder(path: Path) -> bool:
    """Remove an index folder an earlier version left, if it holds index files only."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        if os.path.lexists(path):
            log.info("left %s in place: not a folder of Papershelf's", path)
        return False
    try:
        names = os.listdir(path)
    except OSError as exc:
        log.info("left %s in place: %s", path, exc.strerror or exc)
        return False
    if not all(n == "WRITELOCK" or n.startswith(("MAIN_", "_MAIN_")) or n.endswith(_INDEX_FILE_ENDINGS) for n in names):
        log.info("left %s in place: it holds files that are not a search index's", path)
        return False
    if not all(_is_regular(path / n) for n in names):
        log.info("left %s in place: it holds links or folders", path)
        return False
    try:
        shutil.rmtree(path)  # lstat above: `path` is no link; its entries are regular files
    except OSError as exc:
        log.warning("could not remove the old search index %s: %s", path, exc)
        return False
    return True
