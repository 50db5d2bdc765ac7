"""What a window watches to follow other devices: the files their sync brings in.

A shared library's other devices write only under `devices/<id>/`; a sync tool
or `git pull` puts their new files there. The window watches these paths (and
polls their stat keys, as watchers miss changes on some network and FUSE file
systems and after a sync tool's rename) and calls `Library.refresh` when they
change. See gui/live.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..store import JOURNAL, SNAPSHOT, SharedStore
from ..store.format import DEVICES

if TYPE_CHECKING:
    from .facade import Library

StatKey = tuple[int, int, int] | None

SYNCED_FILES = ("saved-searches.json", "hand-tags.json")  # saved.FILE_NAME, tagging.HAND_TAGS_FILE


def watched_paths(lib: Library) -> tuple[list[Path], list[Path]]:
    """(folders, files) another device's sync changes: the devices folder and each other
    device's folder, and the journal and library file in each (those present). Empty for a
    library of one device."""
    store = lib._store
    if not isinstance(store, SharedStore):
        return [], []
    devices = store.root / DEVICES
    folders = [devices] + [devices / dev for dev in store.other_devices()]
    files = [f / name for f in folders[1:] for name in (JOURNAL, SNAPSHOT) if (f / name).exists()]
    return folders, files


def synced_paths(lib: Library) -> list[Path]:
    """Other devices' saved searches and hand tags (synced.py; present or not): a change of
    these is no merge of the store, but the window's saved searches and key tags follow it."""
    store = lib._store
    if not isinstance(store, SharedStore):
        return []
    devices = store.root / DEVICES
    return [devices / dev / name for dev in store.other_devices() for name in SYNCED_FILES]


def stat_key(path: Path) -> StatKey:
    """What changes when another device's file does: its inode (a sync tool renames a new
    copy over it), size and modification time; None when it is not there."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
