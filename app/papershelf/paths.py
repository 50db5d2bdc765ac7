"""Where Papershelf keeps things: resolved here and nowhere else.

The library folder is, in order: an explicit `--data-dir`, the
`PAPERSHELF_DATA_DIR` environment variable, or the platform's user data
folder (platformdirs: ~/.local/share/Papershelf on Linux,
~/Library/Application Support/Papershelf on macOS, %LOCALAPPDATA%\\Papershelf
on Windows).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import platformdirs

APP_NAME = "Papershelf"
ENV_DATA_DIR = "PAPERSHELF_DATA_DIR"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The library folder: `override`, else $PAPERSHELF_DATA_DIR, else the platform's user data folder."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def sample_listings() -> list[Path]:
    """The sample listings shipped with Papershelf (the repository's seeds/)."""
    packaged = resources.files("papershelf") / "seeds"
    candidates = [Path(str(packaged)), Path(__file__).resolve().parents[2] / "seeds"]
    for folder in candidates:
        if folder.is_dir():
            found = sorted(folder.glob("*.txt"))
            if found:
                return found
    return []


ENV_CACHE_DIR = "PAPERSHELF_CACHE_DIR"


def cache_dir() -> Path:
    """Where rebuildable caches live (online look-ups' responses): $PAPERSHELF_CACHE_DIR, else the
    platform's user cache folder (platformdirs: ~/.cache/Papershelf on Linux)."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
