"""Where Papershelf keeps things: resolved here and nowhere else.

Which library: the command line and the window both ask `data_dir`, which
takes, in order, an explicit `--data-dir` (this start only), the
`PAPERSHELF_DATA_DIR` environment variable, the default library the user
chose (Edit ▸ Preferences in the window, kept in `settings.json` in the
configuration folder, a plain file so that the command line reads it without
Qt), or the platform's user data folder (platformdirs: ~/.local/share/Papershelf
on Linux, ~/Library/Application Support/Papershelf on macOS,
%LOCALAPPDATA%\\Papershelf on Windows).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import platformdirs

from .core.errors import PapershelfError
from .core.fileio import read_small_file

APP_NAME = "Papershelf"
ENV_DATA_DIR = "PAPERSHELF_DATA_DIR"
ENV_CONFIG_DIR = "PAPERSHELF_CONFIG_DIR"
SETTINGS_FILE = "settings.json"
DEFAULT_LIBRARY_KEY = "default library"

# where the library folder came from, in the words `--help` and the window use
FROM_OPTION = "--data-dir, for this start only"
FROM_ENV = f"${ENV_DATA_DIR}"
FROM_CHOICE = "the default library chosen in Preferences"
FROM_PLATFORM = "the standard folder"


class SettingsError(PapershelfError):
    """The settings file cannot be read or written; nothing in it was changed."""


@dataclass(frozen=True)
class LibraryChoice:
    """A library folder and where it came from (one of the FROM_ words)."""

    folder: Path
    source: str

    def describe(self) -> str:
        """The folder and its source, as `--help` says it: "/home/me/papers (…)"."""
        return f"{self.folder} ({self.source})"


def _expanded(value: str | os.PathLike[str], what: str) -> Path:
    """`value` with a leading ~ or ~user expanded; SettingsError naming it if it cannot be."""
    try:
        return Path(value).expanduser()
    except RuntimeError:  # ~nobody: no such user, or no home folder
        raise SettingsError(
            f"{what} {str(value)!r:.200} starts with a ~ that names no home folder here; give the full path."
        ) from None


def library_choice(override: str | os.PathLike[str] | None = None) -> LibraryChoice:
    """The library folder and why: `override`, else $PAPERSHELF_DATA_DIR, else the default library
    chosen in Preferences, else the platform's user data folder. SettingsError if the settings file
    that would say the chosen one is damaged (never another library in its place)."""
    if override:
        return LibraryChoice(_expanded(override, "The library folder given with --data-dir,"), FROM_OPTION)
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        return LibraryChoice(_expanded(env, f"The library folder in ${ENV_DATA_DIR},"), FROM_ENV)
    chosen = chosen_library()
    if chosen is not None:
        return LibraryChoice(chosen, FROM_CHOICE)
    return LibraryChoice(platform_data_dir(), FROM_PLATFORM)


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The library folder: `override`, else $PAPERSHELF_DATA_DIR, else the default library chosen in
    Preferences, else the platform's user data folder."""
    return library_choice(override).folder


def platform_data_dir() -> Path:
    """The platform's user data folder: the library when nothing else is chosen."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """Where the settings the command line shares with the window live: $PAPERSHELF_CONFIG_DIR, else
    the platform's user configuration folder (platformdirs: ~/.config/Papershelf on Linux)."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def settings_file() -> Path:
    """The shared settings file (JSON: {"default library": "/path"})."""
    return config_dir() / SETTINGS_FILE


def _read_settings() -> dict[str, object]:
    path = settings_file()
    try:
        data = read_small_file(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(
            f"Cannot read the settings file {path} ({exc.strerror or exc}); "
            "make it readable, or give the library with --data-dir.",
            path,
        ) from None
    try:
        settings = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(
            f"The settings file {path} is damaged ({exc}); fix it or delete it "
            "(Papershelf then uses its standard library folder), or give the library with --data-dir.",
            path,
        ) from None
    if not isinstance(settings, dict):
        raise SettingsError(f"The settings file {path} does not hold a JSON object; fix it or delete it.", path)
    return settings


def chosen_library() -> Path | None:
    """The default library the user chose, None if they chose none."""
    value = _read_settings().get(DEFAULT_LIBRARY_KEY)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        path = settings_file()
        raise SettingsError(
            f"In the settings file {path}, {DEFAULT_LIBRARY_KEY!r} is not a folder's path: {value!r:.100}; "
            "fix it or delete it.",
            path,
        )
    return _expanded(value, f"The default library in {settings_file()},")


def set_chosen_library(folder: str | os.PathLike[str] | None) -> None:
    """Make `folder` the default library of the window and the command line (None: the standard
    folder again). Written atomically; SettingsError, nothing changed, if it cannot be."""
    from .core.fileio import write_bytes_atomically

    settings = _read_settings()
    if folder is None:
        settings.pop(DEFAULT_LIBRARY_KEY, None)
    else:
        settings[DEFAULT_LIBRARY_KEY] = str(_expanded(folder, "The default library").absolute())
    path = settings_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(path, json.dumps(settings, indent=2, ensure_ascii=False).encode("utf-8") + b"\n")
    except OSError as exc:
        raise SettingsError(
            f"Cannot save the default library in {path} ({exc.strerror or exc}); nothing was changed.", path
        ) from None


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
ENV_STATE_DIR = "PAPERSHELF_STATE_DIR"


def state_dir() -> Path:
    """This machine's own things, never in a (maybe synced) library folder: each library's locks
    and search index, the window's log. $PAPERSHELF_STATE_DIR, else the platform's user state
    folder (platformdirs: ~/.local/state/Papershelf on Linux). The core's `machine` module decides."""
    from .core.store import machine

    return machine.state_folder()


def device_id() -> str:
    """This configuration's device id (made on first use, kept in the configuration folder): what
    tells this machine's edits of a shared library from another's. The core's `machine` decides."""
    from .core.store import machine

    return machine.device_id()


def cache_dir() -> Path:
    """Where rebuildable caches live (online look-ups' responses): $PAPERSHELF_CACHE_DIR, else the
    platform's user cache folder (platformdirs: ~/.cache/Papershelf on Linux)."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
