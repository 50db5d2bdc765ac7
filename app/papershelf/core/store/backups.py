"""Backups of the library file: one made at each compaction, rotated.

`backups/library-YYYYmmdd-HHMMSS-gN.jsonl` is the library file of
generation N as it was when a compaction replaced it. The newest few are
kept, and one a day for a week; recovery takes what a damaged library file
lost from the newest backup that still reads cleanly.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from pathlib import Path

from ..errors import StoreCorruptError, StoreUnreadableError, StoreVersionError, StoreWriteError
from ..fileio import fsync_dir, kind_of
from .format import BACKUPS, SNAPSHOT, read_snapshot

KEEP_RECENT_BACKUPS = 3
KEEP_DAILY_BACKUPS = 7


def backup_sort_key(path: Path) -> tuple[str, str, int]:
    """Sorts backups by the time and generation in their names (oldest first)."""
    parts = path.stem.split("-")  # library, YYYYmmdd, HHMMSS, gN
    try:
        return (parts[1], parts[2], int(parts[3][1:]))
    except (IndexError, ValueError):
        return ("", "", 0)


def list_backups(backup_dir: Path) -> list[Path]:
    """Backups, newest first."""
    if not backup_dir.is_dir():
        return []
    return sorted(backup_dir.glob("library-*.jsonl"), key=backup_sort_key, reverse=True)


def latest_good_backup(backup_dir: Path | None) -> Path | None:
    """The newest backup that reads cleanly as a library file, or None."""
    if not backup_dir or not backup_dir.is_dir():
        return None
    for path in sorted(backup_dir.glob("library-*.jsonl"), key=backup_sort_key, reverse=True):
        try:
            read_snapshot(path, None, "backup")
        except (StoreCorruptError, StoreVersionError, StoreUnreadableError):
            continue  # damaged, unreadable, or not a file (a named pipe...): skipped
        return path
    return None


def backup_library_file(folder: Path, generation: int) -> None:
    """Keep the current library file of `folder` (of `generation`) as a new backup.

    Raises OSError as it came (the compaction that asked reports it)."""
    backup_dir = folder / BACKUPS
    snapshot_path = folder / SNAPSHOT
    if backup_dir.exists() and not backup_dir.is_dir():
        kind = kind_of(backup_dir.stat().st_mode) or "a file"
        raise StoreWriteError(
            f"Papershelf keeps backups of the library in {backup_dir}, but that is {kind}, not a "
            "folder, so it could not save a new library file; the library file was not changed "
            "and every edit stays in the journal. Move it out of the library folder.",
            backup_dir,
        )
    created = not backup_dir.exists()
    backup_dir.mkdir(exist_ok=True)
    if created:
        fsync_dir(folder)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    target = backup_dir / f"library-{stamp}-g{generation}.jsonl"
    n = 1
    while target.exists():  # never replace a backup
        target = backup_dir / f"library-{stamp}-g{generation}.{n}.jsonl"
        n += 1
    try:
        os.link(snapshot_path, target)  # the compaction's rename then leaves this inode alone
    except OSError:
        shutil.copy2(snapshot_path, target)
    fsync_dir(backup_dir)


def prune_backups(backup_dir: Path) -> None:
    """Keep the KEEP_RECENT_BACKUPS newest backups and the newest of each of
    KEEP_DAILY_BACKUPS days; remove the rest (errors ignored: tidying only)."""
    keep: set[Path] = set()
    days: set[str] = set()
    for i, path in enumerate(list_backups(backup_dir)):
        day = path.name.split("-")[1]
        if i < KEEP_RECENT_BACKUPS:
            keep.add(path)
        elif day not in days and len(days) < KEEP_DAILY_BACKUPS:
            keep.add(path)
        days.add(day)
    for path in list_backups(backup_dir):
        if path not in keep:
            try:
                path.unlink()
            except OSError:
                pass
