"""One instance per library and device: a local socket only this user can create.

The socket's name is keyed by the library's real path and the device it is
opened as (`Library.device`, this configuration's id): a second start with the
same configuration hands over to the first; another configuration (another
device, as a test or a second account on one machine is) on the same shared
folder is another device and opens its own window. It is never in the library
folder.

The socket lives in a folder private to the user: `$XDG_RUNTIME_DIR/papershelf`
when that runtime folder is the user's own (mode 0700), else `papershelf-<uid>`
in the temporary folder, created 0700 and checked (a real directory, ours,
nobody else can write to it). A folder that fails the check is never used:
single-instance is off for that start. On Linux both ends also check the
peer's uid (SO_PEERCRED). Windows: a per-user pipe name that only the user can
open (QLocalServer.UserAccessOption).

A later start sends one line, `{"files": [absolute paths], "missing": [...]}`
("missing": files it was given that do not exist, for the window's import
report to name); the server answers "ok" or "error" and checks every message
(size, time, shape, existing files).
"""

from __future__ import annotations

import getpass
import hashlib
import json
import logging
import os
import socket
import stat
import struct
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

from .. import paths
from ..core.errors import SingleInstanceError

if TYPE_CHECKING:
    from .main_window import MainWindow

log = logging.getLogger("papershelf")

MAX_MESSAGE = 1_000_000  # bytes of one message, newline excluded
READ_TIMEOUT_MS = 5_000  # a later start sends its line at once
_SUN_PATH_MAX = 108 if sys.platform.startswith("linux") else 104  # sockaddr_un.sun_path


def _library_digest(folder: Path, device: str) -> str:
    key = str(Path(folder).expanduser().resolve()) + "\0" + device
    return hashlib.sha1(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _private_dir(path: Path, create: bool = True) -> Path:
    """`path` as a directory only this user can write to, or SingleInstanceError.

    create=False checks a folder we did not make (XDG_RUNTIME_DIR): exactly private, left as it is.
    """
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise SingleInstanceError(f"Cannot create the folder {path}: {exc.strerror}", path) from exc
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise SingleInstanceError(f"Cannot check the folder {path}: {exc.strerror}", path) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise SingleInstanceError(f"{path} is not a folder (a symbolic link or a file)", path)
    if st.st_uid != os.geteuid():
        raise SingleInstanceError(f"{path} belongs to uid {st.st_uid}, not to you", path)
    mode = stat.S_IMODE(st.st_mode)
    if mode & (0o022 if create else 0o077):
        raise SingleInstanceError(f"{path} is open to other users (mode {mode:04o})", path)
    if mode != 0o700 and create:
        try:
            os.chmod(path, 0o700)  # ours, and nobody else could write to it
        except OSError as exc:
            raise SingleInstanceError(f"Cannot make the folder {path} private: {exc.strerror}", path) from exc
    return path


def socket_dir() -> Path:
    """The user's private folder for the socket (POSIX)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        try:
            _private_dir(Path(runtime), create=False)
        except SingleInstanceError as exc:
            log.info("XDG_RUNTIME_DIR not used: %s", exc)
        else:
            return _private_dir(Path(runtime) / "papershelf")
    return _private_dir(Path(tempfile.gettempdir()) / f"papershelf-{os.geteuid()}")


def socket_path(folder: Path, device: str | None = None) -> str:
    """What QLocalServer listens on for this library opened as `device` (None: this configuration's):
    a full path on POSIX, a pipe name on Windows."""
    digest = _library_digest(folder, device or paths.device_id())
    if os.name != "posix":
        user = hashlib.sha1(getpass.getuser().encode("utf-8")).hexdigest()[:12]
        return f"papershelf-{user}-{digest}"
    path = str(socket_dir() / f"{digest}.sock")
    if len(os.fsencode(path)) >= _SUN_PATH_MAX:
        raise SingleInstanceError(f"The socket path {path} is too long for a local socket", path)
    return path


def peer_uid(descriptor: int) -> int | None:
    """The uid at the other end of a connected local socket; None where the platform cannot tell."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        with socket.fromfd(descriptor, socket.AF_UNIX, socket.SOCK_STREAM) as s:  # a dup: ours to close
            creds = s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return -1  # unknown peer: matches nobody
    return struct.unpack("3i", creds)[1]


def _foreign(uid: int | None) -> bool:
    return uid is not None and uid != os.geteuid()


def parse_message(line: bytes) -> list[Path]:
    """The files of a hand-over message, those found missing by the later start last (the window's
    import report names them), or SingleInstanceError saying what is wrong with the message."""
    if len(line) > MAX_MESSAGE:
        raise SingleInstanceError(f"message of more than {MAX_MESSAGE} bytes")
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SingleInstanceError("message is not JSON") from None
    if not isinstance(message, dict) or "files" not in message or not set(message) <= {"files", "missing"}:
        raise SingleInstanceError("message is not an object with only 'files' (and 'missing')")
    files, missing = message["files"], message.get("missing", [])
    if not isinstance(files, list) or not isinstance(missing, list):
        raise SingleInstanceError("'files' or 'missing' is not a list")
    for f in files:
        if not isinstance(f, str) or not os.path.isabs(f) or not os.path.isfile(f):
            raise SingleInstanceError(f"not an absolute path to an existing file: {f!r:.200}")
    for f in missing:  # only named in the report: never opened unless it is a file by now
        if not isinstance(f, str) or not os.path.isabs(f) or "\0" in f or not _encodable(f):
            raise SingleInstanceError(f"not an absolute path: {f!r:.200}")
    return [Path(f) for f in files + missing]


def _encodable(path: str) -> bool:
    """A path the file system can be asked about (a lone surrogate cannot)."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return False
    return True


def hand_over(folder: Path, files: list[str], timeout_ms: int = 1000, device: str | None = None) -> bool:
    """Give the files (and the focus) to this user's Papershelf on this library and device
    (None: this configuration's).

    True if it took them, False if none runs (or it did not answer). Raises
    SingleInstanceError, having sent nothing, if the socket's folder or the
    server is not the user's own; also if the running one refused the message.
    """
    name = socket_path(folder, device)
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    try:
        uid = peer_uid(sock.socketDescriptor())
        if _foreign(uid):
            raise SingleInstanceError(f"The server at {name} belongs to uid {uid}, not to you; nothing was sent", name)
        sent, missing = [], []
        for f in files:
            if os.path.isfile(f):
                sent.append(str(Path(f).resolve()))
            else:  # the running window's import report says it, as a fresh start's does
                missing.append(str(Path(f).absolute()))
        message = {"files": sent, "missing": missing} if missing else {"files": sent}
        sock.write(json.dumps(message).encode("utf-8") + b"\n")
        sock.flush()
        while sock.bytesToWrite() and sock.waitForBytesWritten(timeout_ms):
            pass
        # the running one answers once it has taken them
        if not sock.waitForReadyRead(timeout_ms * 5):
            return False
        reply = bytes(sock.readLine().data()).strip()
        if reply == b"error":
            raise SingleInstanceError("The running Papershelf refused the files (its log says why)", name)
        return reply == b"ok"
    finally:
        sock.abort()


class _Peer:
    """One connection from a later start: what it sent so far, its deadline."""

    def __init__(self, sock: QLocalSocket, timeout_ms: int) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.done = False
        self.timer = QTimer(sock)
        self.timer.setSingleShot(True)
        self.timer.start(timeout_ms)


class InstanceServer:
    """Listens for later starts on the same library and device (SingleInstanceError if it cannot)."""

    read_timeout_ms = READ_TIMEOUT_MS

    def __init__(self, folder: Path, window: MainWindow) -> None:
        self.window = window
        self.name = socket_path(folder, window.library.device)
        self._peers: set[_Peer] = set()
        self.server = QLocalServer()
        if os.name != "posix":
            self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not self.server.listen(self.name):
            if self.server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
                QLocalServer.removeServer(self.name)  # left behind by a crash (the folder is ours alone)
                self.server.listen(self.name)
            if not self.server.isListening():
                raise SingleInstanceError(f"Cannot listen on {self.name}: {self.server.errorString()}", self.name)
        self.server.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            uid = peer_uid(sock.socketDescriptor())
            if _foreign(uid):
                log.warning("Refused a connection from uid %s to %s", uid, self.name)
                sock.abort()
                sock.deleteLater()
                continue
            peer = _Peer(sock, self.read_timeout_ms)
            self._peers.add(peer)
            peer.timer.timeout.connect(lambda p=peer: self._refuse(p, "no complete message in time"))
            sock.readyRead.connect(lambda p=peer: self._read(p))
            sock.disconnected.connect(lambda p=peer: self._forget(p))
            if sock.bytesAvailable():
                self._read(peer)

    def _forget(self, peer: _Peer) -> None:
        peer.timer.stop()
        self._peers.discard(peer)
        peer.sock.deleteLater()

    def _refuse(self, peer: _Peer, reason: str) -> None:
        log.warning("Refused a message from a later start: %s", reason)
        self._answer(peer, b"error\n")

    def _answer(self, peer: _Peer, reply: bytes) -> None:
        peer.done = True
        peer.timer.stop()
        peer.buffer.clear()
        if peer.sock.state() == QLocalSocket.LocalSocketState.ConnectedState:
            peer.sock.write(reply)
            peer.sock.flush()
            peer.sock.disconnectFromServer()

    def _read(self, peer: _Peer) -> None:
        data = bytes(peer.sock.readAll().data())
        if peer.done:
            return  # one message per connection
        peer.buffer += data
        end = peer.buffer.find(b"\n")
        if end < 0:
            if len(peer.buffer) > MAX_MESSAGE:
                self._refuse(peer, f"message of more than {MAX_MESSAGE} bytes")
            return
        try:
            files = parse_message(bytes(peer.buffer[:end]))
        except SingleInstanceError as exc:
            self._refuse(peer, str(exc))
            return
        self._answer(peer, b"ok\n")
        log.info("A later start handed over %d file(s)", len(files))
        w = self.window
        w.showNormal()
        w.raise_()
        w.activateWindow()
        if files:
            w.transfers.import_files(files)

    def close(self) -> None:
        """Stop listening: a later start then opens its own window."""
        self.server.close()
