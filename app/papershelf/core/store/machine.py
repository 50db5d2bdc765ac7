"""What belongs to this machine and never goes into a synced library folder.

A library folder may be shared by several machines through a sync tool
(Syncthing, Nextcloud, Dropbox, rsync, unison) or git. Every file in it has
one writer, a *device*: a random id made once per configuration folder and
kept there (`device.json`), never in the library. Everything that only makes
sense on one machine lives outside the library, in the machine's state
folder, keyed by the device and the library's real path (`local_dir`): the
writer lock, the readers' swap lock, the search index, the single-instance
socket's name and the undo history.

The state folder is $PAPERSHELF_STATE_DIR, else the platform's user state
folder (platformdirs: ~/.local/state/Papershelf on Linux). The configuration
folder is $PAPERSHELF_CONFIG_DIR, else the platform's user configuration
folder, as `papershelf.paths.config_dir` says (core cannot import it).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
from pathlib import Path

import platformdirs

APP_NAME = "Papershelf"
ENV_CONFIG_DIR = "PAPERSHELF_CONFIG_DIR"
ENV_STATE_DIR = "PAPERSHELF_STATE_DIR"
DEVICE_FILE = "device.json"
DEVICE_ID_LENGTH = 12  # hex digits: 48 random bits


def config_folder() -> Path:
    """The configuration folder (where the device id is kept)."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def state_folder() -> Path:
    """The machine's state folder: locks, indexes and undo histories of every library."""
    env = os.environ.get(ENV_STATE_DIR)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))


def is_device_id(text: object) -> bool:
    """Whether `text` has the shape of a device id (lowercase hex of the set length)."""
    return isinstance(text, str) and len(text) == DEVICE_ID_LENGTH and all(c in "0123456789abcdef" for c in text)


def device_id(folder: Path | None = None) -> str:
    """This configuration's device id, made (and kept in `device.json`) on first use.

    A file that is damaged or unreadable is not trusted: a new id is made and
    written in its place when the folder is writable, and used for this run
    otherwise (its edits still never share a file with another device's)."""
    folder = config_folder() if folder is None else folder
    path = folder / DEVICE_FILE
    try:
        data = json.loads(path.read_bytes()[:4096].decode("utf-8"))
        if isinstance(data, dict) and is_device_id(data.get("id")):
            return str(data["id"])
    except (OSError, ValueError):
        pass
    return new_device_id(folder)


def new_device_id(folder: Path | None = None) -> str:
    """Make a new device id and keep it in the configuration folder (replacing any there)."""
    folder = config_folder() if folder is None else folder
    new = secrets.token_hex(DEVICE_ID_LENGTH // 2)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / (DEVICE_FILE + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"id": new, "made_on": socket.gethostname()}) + "\n", encoding="utf-8")
        os.replace(tmp, folder / DEVICE_FILE)
    except OSError:
        pass  # used for this run: the next one makes another, which is harmless
    return new


def library_key(folder: Path) -> str:
    """A short name for a library folder, from its real path."""
    try:
        real = folder.resolve()
    except OSError:
        real = folder.absolute()
    return hashlib.sha256(os.fsencode(real)).hexdigest()[:16]


def local_dir(folder: Path, device: str) -> Path:
    """This machine's own folder for one library opened as one device (not created here)."""
    return state_folder() / "libraries" / f"{library_key(folder)}-{device}"


def machine_fingerprint() -> str:
    """Something that tells this machine and configuration from another that copied its
    device id: the host name, /etc/machine-id where there is one, and the configuration
    folder's real path. Kept, hashed, beside the device's files in the library."""
    parts = [socket.gethostname()]
    try:
        parts.append(Path("/etc/machine-id").read_text(encoding="ascii").strip())
    except OSError:
        pass
    try:
        parts.append(str(config_folder().resolve()))
    except OSError:
        parts.append(str(config_folder()))
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]
