"""One instance per library: the socket is the user's own, its peer is the user,
and every message a later start sends is checked before anything happens."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalSocket

from conftest import SEEDS
from papershelf.core.errors import SingleInstanceError
from papershelf.gui.instance import MAX_MESSAGE, InstanceServer, hand_over, socket_path

pytestmark = pytest.mark.gui

OTHER_UID = 65534  # "nobody": the other user of these tests
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="a folder or socket of another user needs root (chown, setuid)",
)
needs_peercred = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="peer credentials (SO_PEERCRED) are Linux-only"
)

# a Qt warning fails the test; the offscreen platform's own ("does not support raise()") aside
qt_warnings_fail = pytest.mark.qt_log_level_fail("WARNING")
qt_offscreen_ok = pytest.mark.qt_log_ignore(r"This plugin does not support")

# Another user's server: binds the paths as root, gives them to uid argv[1], becomes that
# user, prints "ready", answers "ok" to everything and prints (JSON) what each connection sent.
SQUATTER = r"""
import json, os, select, socket, sys
uid = int(sys.argv[1])
listeners = []
for path in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chown(path, uid, uid)
    listeners.append(s)
os.setgroups([]); os.setgid(uid); os.setuid(uid)
for s in listeners:
    s.listen(8)
print("ready", flush=True)
while True:
    ready, _, _ = select.select(listeners + [sys.stdin], [], [])
    for s in listeners:
        if s not in ready:
            continue
        conn, _ = s.accept()
        conn.settimeout(20)
        data = b""
        try:
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            conn.sendall(b"ok\n")
        except OSError:
            pass
        conn.close()
        print(json.dumps(data.decode("utf-8", "replace")), flush=True)
    if sys.stdin in ready:          # the test is done (connections already queued were taken above)
        break
"""

# Another user's client: effective uid argv[1] (what SO_PEERCRED reports), file access
# still root's (setfsuid) so it gets through the private folder; prints what it got back.
INTRUDER = r"""
import ctypes, os, socket, sys
os.seteuid(int(sys.argv[1]))
ctypes.CDLL(None).setfsuid(0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[2])
s.settimeout(20)
data = b""
try:
    s.sendall(sys.argv[3].encode() + b"\n")
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
except (BrokenPipeError, ConnectionResetError):
    pass
print(repr(data))
"""


class Squatter:
    """A server of OTHER_UID on the given socket paths (a real process)."""

    def __init__(self, *paths: Path | str):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SQUATTER, str(OTHER_UID), *map(str, paths)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if line != "ready\n":
            self.proc.kill()
            raise AssertionError(f"the squatter did not start: {self.proc.communicate()[1]}")

    def received(self) -> list[str]:
        """Stops it; what each connection it accepted sent."""
        out, err = self.proc.communicate(input="", timeout=30)
        assert self.proc.returncode == 0, err
        return [json.loads(line) for line in out.splitlines()]

    def __enter__(self) -> Squatter:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=10)


@pytest.fixture(autouse=True)
def temp_dir(monkeypatch):
    """A temporary folder of the test's own (short: socket paths are limited), no runtime folder."""
    tmp = Path(tempfile.mkdtemp(prefix="ps-"))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


def digest(folder: Path) -> str:
    """The socket's name for this library and this test's device."""
    from papershelf import paths

    return hashlib.sha1(f"{folder.resolve()}\0{paths.device_id()}".encode()).hexdigest()[:16]


def shared_name(temp_dir: Path, folder: Path) -> Path:
    """Where every user's Papershelf used to put the socket: the shared temporary folder."""
    return temp_dir / f"papershelf-{digest(folder)}"


def second_start(folder: Path) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen(
        [sys.executable, "-m", "papershelf", "--data-dir", str(folder), str(SEEDS[1])],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def nothing_imported(window, before: int) -> bool:
    return window.transfers.task is None and len(window.library) == before


# ---- where the socket is ---------------------------------------------------


def test_the_socket_is_in_the_users_runtime_folder_when_it_is_private(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = Path(socket_path(tmp_path / "library"))
    assert path == runtime / "papershelf" / f"{digest(tmp_path / 'library')}.sock"
    assert (path.parent.stat().st_mode & 0o777) == 0o700


@pytest.mark.parametrize("how", ["open to others", "someone else's"])
def test_a_runtime_folder_that_is_not_private_is_passed_over(how, tmp_path, temp_dir, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    if how == "open to others":
        runtime.chmod(0o755)
    else:
        if os.geteuid() != 0:
            pytest.skip("a folder of another user needs root (chown)")
        os.chown(runtime, OTHER_UID, OTHER_UID)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = Path(socket_path(tmp_path / "library"))
    assert path.parent == temp_dir / f"papershelf-{os.geteuid()}"
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    assert not (runtime / "papershelf").exists()


def test_the_users_own_folder_readable_by_others_is_made_private(tmp_path, temp_dir):
    folder = temp_dir / f"papershelf-{os.geteuid()}"
    folder.mkdir()
    folder.chmod(0o755)
    assert Path(socket_path(tmp_path / "library")).parent == folder
    assert (folder.stat().st_mode & 0o777) == 0o700


# ---- another user's socket or folder ---------------------------------------


@needs_root
def test_a_server_of_another_user_on_the_shared_name_gets_nothing_and_the_window_still_serves(window, qtbot, temp_dir):
    folder = window.library.folder
    before = len(window.library)
    with Squatter(shared_name(temp_dir, folder)) as squatter:
        assert hand_over(folder, [str(SEEDS[1])]) is False  # no Papershelf of ours runs
        server = InstanceServer(folder, window)
        proc = None
        try:
            with qtbot.waitSignal(window.importFinished, timeout=60_000) as blocker:
                proc = second_start(folder)
            qtbot.waitUntil(lambda: proc.poll() is not None, timeout=60_000)
            out, err = proc.communicate(timeout=10)
            assert proc.returncode == 0 and "already running" in out, err
            assert [r.added for r in blocker.args[0]] == [19]
            assert len(window.library) == before + 19
        finally:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)
            server.close()
        assert squatter.received() == []


@needs_root
@pytest.mark.parametrize("how", ["someone else's", "writable by all", "a symbolic link"])
def test_a_socket_folder_that_is_not_the_users_own_is_not_used(how, window, temp_dir):
    folder = window.library.folder
    private = temp_dir / f"papershelf-{os.geteuid()}"
    if how == "someone else's":
        private.mkdir(mode=0o700)
        os.chown(private, OTHER_UID, OTHER_UID)
    elif how == "writable by all":
        private.mkdir()
        private.chmod(0o777)
    else:
        target = temp_dir / "elsewhere"
        target.mkdir(mode=0o700)
        os.chown(target, OTHER_UID, OTHER_UID)
        private.symlink_to(target)
    with Squatter(private / f"{digest(folder)}.sock", shared_name(temp_dir, folder)) as squatter:
        with pytest.raises(SingleInstanceError, match=str(private)):
            hand_over(folder, [str(SEEDS[1])])
        with pytest.raises(SingleInstanceError, match=str(private)):
            InstanceServer(folder, window)
        assert squatter.received() == []


@needs_root
@needs_peercred
def test_a_server_of_another_user_in_the_users_folder_is_never_trusted(window, temp_dir):
    folder = window.library.folder
    path = socket_path(folder)  # the user's private folder, made here
    # only root could put it there; the client still checks who answers
    with Squatter(path, shared_name(temp_dir, folder)) as squatter:
        with pytest.raises(SingleInstanceError, match=f"uid {OTHER_UID}"):
            hand_over(folder, [str(SEEDS[1])])
        assert squatter.received() == [""]  # it saw a connection and nothing on it


@pytest.fixture
def server(window):
    """The window's single-instance server, closed after the test whatever happens."""
    srv = InstanceServer(window.library.folder, window)
    yield srv
    srv.close()


@needs_root
@needs_peercred
def test_the_window_drops_a_connection_from_another_user(window, server, qtbot):
    before = len(window.library)
    message = json.dumps({"files": [str(SEEDS[1].resolve())]})
    child = subprocess.Popen(
        [sys.executable, "-c", INTRUDER, str(OTHER_UID), server.server.fullServerName(), message],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    qtbot.waitUntil(lambda: child.poll() is not None, timeout=30_000)  # the window serves meanwhile
    out, err = child.communicate(timeout=10)
    assert child.returncode == 0, err
    assert out.strip() == "b''"  # closed without an answer
    assert nothing_imported(window, before)


# ---- what a message must be ------------------------------------------------


def talk(qtbot, server: InstanceServer, message: bytes) -> bytes:
    """Sends `message` to the window's server and returns all it answered before closing."""
    got = bytearray()
    client = QLocalSocket()
    client.readyRead.connect(lambda: got.extend(bytes(client.readAll())))
    client.connectToServer(server.server.fullServerName())
    qtbot.waitUntil(lambda: client.state() == QLocalSocket.LocalSocketState.ConnectedState, timeout=5_000)
    client.write(message)
    qtbot.waitUntil(lambda: client.state() == QLocalSocket.LocalSocketState.UnconnectedState, timeout=10_000)
    got.extend(bytes(client.readAll()))
    return bytes(got)


MALFORMED = {
    "not JSON": lambda tmp: b"hello\n",
    "not UTF-8": lambda tmp: b"\xff\xfe\n",
    "a JSON list": lambda tmp: json.dumps([str(SEEDS[1])]).encode() + b"\n",
    "null": lambda tmp: b"null\n",
    "files not a list": lambda tmp: json.dumps({"files": str(SEEDS[1])}).encode() + b"\n",
    "a file that is not a string": lambda tmp: b'{"files": [1]}\n',
    "a relative path": lambda tmp: json.dumps({"files": [os.path.relpath(SEEDS[1])]}).encode() + b"\n",
    "a path that does not exist": lambda tmp: json.dumps({"files": [str(tmp / "missing.bib")]}).encode() + b"\n",
    "a folder": lambda tmp: json.dumps({"files": [str(tmp)]}).encode() + b"\n",
    "another key": lambda tmp: json.dumps({"files": [], "run": "x"}).encode() + b"\n",
    # a lone surrogate: no file system can be asked about it (the whole batch failed on it)
    "a missing path no file system can name": lambda tmp: (
        json.dumps({"files": [str(SEEDS[1].resolve())], "missing": ["/\ud800"]}).encode() + b"\n"
    ),
    "nested too deep": lambda tmp: b"[" * 100_000 + b"\n",
    "more than 1 MB in one line": lambda tmp: json.dumps({"files": ["/" + "a" * MAX_MESSAGE]}).encode() + b"\n",
    "more than 1 MB and no end": lambda tmp: b"a" * (MAX_MESSAGE + 2),
}


@qt_warnings_fail
@qt_offscreen_ok
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_message_is_answered_error_and_imports_nothing(kind, window, server, qtbot, tmp_path):
    before = len(window.library)
    assert talk(qtbot, server, MALFORMED[kind](tmp_path)) == b"error\n"
    assert nothing_imported(window, before)
    # and the window still serves the next start
    with qtbot.waitSignal(window.importFinished, timeout=60_000) as blocker:
        assert talk(qtbot, server, json.dumps({"files": [str(SEEDS[1].resolve())]}).encode() + b"\n") == b"ok\n"
    assert [r.added for r in blocker.args[0]] == [19]


@qt_warnings_fail
@qt_offscreen_ok
def test_a_start_that_never_finishes_its_message_is_cut_off(window, server, qtbot):
    before = len(window.library)
    server.read_timeout_ms = 200
    assert talk(qtbot, server, b'{"files": [') == b"error\n"
    assert nothing_imported(window, before)
