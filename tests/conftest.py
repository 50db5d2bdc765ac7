"""Shared fixtures: a fresh library folder per test, the seeds, real mounts."""

from __future__ import annotations

import compileall
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Qt aborts without a display unless told to draw offscreen; set before any Qt import.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Bytecode, kept even under PYTHONDONTWRITEBYTECODE (coding tools set it): pytest keeps the test
# modules it rewrote (their asserts) in __pycache__ only if Python may write bytecode, else each
# run and each xdist worker spent 15 s of CPU rewriting the 120 files again; and every command a
# test runs in a subprocess (hundreds: `run_cli`) compiled the whole of app/ from source when no
# .pyc was there, 0.35 s of CPU each (`list` 0.53 -> 0.19 s). The caches are gitignored and
# checked against each source file's size and time.
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parents[1]
SEEDS = sorted((ROOT / "seeds").glob("*.txt"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"

from papershelf.core.library import Library  # noqa: E402


def pytest_sessionstart(session):
    """The subprocesses' bytecode of this checkout's code, written once (a no-op when current), by
    the main process only: xdist's workers start after it, and would race on the same files."""
    if hasattr(session.config, "workerinput"):
        return
    try:
        compileall.compile_dir(ROOT / "app", quiet=2)
    except OSError:  # a read-only checkout: the commands compile in memory, as before
        pass


# ---- the fast loop: `pytest -m fast -n auto` (README, "Tests") ----
#
# No test file says `fast`: this hook gives the marker to every test of the core and the CLI that
# is not one of these, so that a new test is in the loop unless it says otherwise. Not fast:
# - a test marked gui, slow or sync (pyproject's markers);
# - a test that uses Qt (the `qapp` fixture, which `qtbot` and the window fixtures stand on);
# - the folders of whole-system suites (kill -9 loops, hostile servers, two devices syncing);
# - the integration tests listed in tests/not_fast.txt, each with what it costs: end-to-end runs
#   of several commands in subprocesses, PDF extraction, index rebuilds, which the full suite
#   (`pytest --cov`, CI) runs. The file says how it was measured and how to measure it again
#   (PAPERSHELF_CPU_TIMES below).
NOT_FAST_FOLDERS = ("faults", "sync")
QT_FIXTURE = "qapp"


def _not_fast_list() -> tuple[str, ...]:
    """tests/not_fast.txt's node ids (a file, a test, or one case of a test); `#` starts a comment."""
    lines = (Path(__file__).resolve().parent / "not_fast.txt").read_text(encoding="utf-8").splitlines()
    return tuple(line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip())


NOT_FAST = _not_fast_list()


@pytest.hookimpl(tryfirst=True)  # before `-m` selects: the marker must be there when it looks
def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).resolve().parent
    for item in items:
        path = Path(str(item.path))
        folder = path.parent.relative_to(tests).parts[:1] if path.is_relative_to(tests) else ()
        if (
            any(item.get_closest_marker(name) for name in ("gui", "slow", "sync"))
            or QT_FIXTURE in getattr(item, "fixturenames", ())
            or any(part in NOT_FAST_FOLDERS for part in folder)
            or _not_fast(item.nodeid)
        ):
            continue
        item.add_marker(pytest.mark.fast)


def _not_fast(nodeid: str) -> bool:
    """Whether tests/not_fast.txt names this test: its file, or the test (any case) by its node id."""
    return any(nodeid == key or nodeid.startswith((key + "[", key + "::")) for key in NOT_FAST)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With PAPERSHELF_CPU_TIMES=FILE, each test's CPU seconds (this process and the commands it
    ran) and wall seconds, one JSON line each, in FILE-<xdist worker>.jsonl: how tests/not_fast.txt
    was measured. CPU time, because the machine is shared: its load stretches wall times."""
    out = os.environ.get("PAPERSHELF_CPU_TIMES")
    if not out:
        yield
        return
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    line = {"id": item.nodeid, "cpu": _cpu_seconds() - cpu, "wall": time.perf_counter() - wall}
    with open(f"{out}-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.fixture(scope="session", autouse=True)
def _machine_folders(tmp_path_factory):
    """This machine's folders for what runs before a test's own are set (module fixtures that open
    a library): never the real user's state or configuration folder."""
    base = tmp_path_factory.mktemp("machine")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PAPERSHELF_CONFIG_DIR", str(base / "config"))
        mp.setenv("PAPERSHELF_STATE_DIR", str(base / "state"))
        yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    # never touch the real user's library, whatever a test forgets to pass
    monkeypatch.setenv("PAPERSHELF_DATA_DIR", str(tmp_path / "default-library"))
    monkeypatch.setenv("PAPERSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PAPERSHELF_CONFIG_DIR", str(tmp_path / "config"))  # the default library chosen
    monkeypatch.setenv("PAPERSHELF_STATE_DIR", str(tmp_path / "state"))  # locks, index, undo: this machine's
    # no test touches the internet: a service a test did not point at its replay server is
    # a closed port on this machine (connection refused), never the real one
    for service in ("ARXIV", "CROSSREF", "OPENALEX", "S2", "DOI"):
        monkeypatch.setenv(f"PAPERSHELF_{service}_URL", "http://127.0.0.1:9")


@pytest.fixture
def data_dir(tmp_path) -> Path:
    return tmp_path / "library"


@pytest.fixture
def seeds() -> list[Path]:
    assert len(SEEDS) == 4, "the four sample listings must be in seeds/"
    return list(SEEDS)


@pytest.fixture
def library(data_dir):
    lib = Library.open(data_dir)
    yield lib
    lib.close()


@pytest.fixture
def seeded(library, seeds):
    library.import_files(seeds)
    return library


def seeded_index(folder: Path) -> Path:
    """A library of the four sample listings with its search index built, at `folder`."""
    from papershelf.core.search import SearchIndex

    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
        SearchIndex(lib).open().close()
    _SEEDED_LOCAL[Path(folder)] = local_dir(folder)
    return folder


_SEEDED_LOCAL: dict[Path, Path] = {}  # a seeded library → this machine's folder for it (its index)


def copy_seeded(src: Path, dst: Path) -> Path:
    """A copy at `dst` of a library `seeded_index` made, with its search index, opened as the device
    that wrote it (so the copy does not rebuild its index, nor join as a second device)."""
    return copy_library(src, dst, _SEEDED_LOCAL[Path(src)])


def store_dir(data_dir: Path) -> Path:
    """The folder of the (only) device's store in a shared library: `data_dir/devices/<id>/`,
    where its library.jsonl, journal.jsonl, journal.last and backups/ live."""
    devices = [p for p in (Path(data_dir) / "devices").iterdir() if p.is_dir()]
    assert len(devices) == 1, f"expected one device in {data_dir}, found {[p.name for p in devices]}"
    return devices[0]


def same_device(folder: Path) -> Path:
    """Make this test's configuration the device that wrote the library in `folder` (a library
    copied from a module-wide fixture was written under another test's configuration folder),
    so opening it works on that device's files rather than joining as a second device."""
    from papershelf.core.store import machine

    config = machine.config_folder()
    config.mkdir(parents=True, exist_ok=True)
    device = store_dir(folder)
    (config / machine.DEVICE_FILE).write_text(json.dumps({"id": device.name}) + "\n", encoding="utf-8")
    claim = device / "device.json"  # which machine and configuration the device is: this one
    record = json.loads(claim.read_text(encoding="utf-8"))
    claim.write_text(json.dumps({**record, "machine": machine.machine_fingerprint()}) + "\n", encoding="utf-8")
    return folder


def local_dir(folder: Path) -> Path:
    """This machine's folder for the library in `folder` (its locks and index), as the installed
    command finds it with this test's configuration and state folders."""
    from papershelf.core.store import machine

    devices = Path(folder) / "devices"
    mine = [p.name for p in devices.iterdir() if p.is_dir()] if devices.is_dir() else []
    return machine.local_dir(Path(folder), mine[0] if len(mine) == 1 else machine.device_id())


def index_dir(folder: Path) -> Path:
    """Where the search index of the library in `folder` lives (never in `folder`)."""
    return local_dir(folder) / "index"


def copy_library(src: Path, dst: Path, src_local: Path) -> Path:
    """A copy at `dst` of the library in `src` and of this machine's folder for it (`src_local`:
    its index, as `local_dir(src)` named it when the library was made), for this test's device."""
    shutil.copytree(src, dst)
    if (dst / "devices").is_dir():
        same_device(dst)  # this test's configuration is the device that wrote it
    shutil.copytree(src_local, local_dir(dst))
    return dst


def snapshot_files(folder: Path) -> dict[str, bytes]:
    """Every file of a library folder and its bytes, to prove nothing changed."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "library.lock"
    }


def run_cli(
    *args: str, data_dir: Path | None = None, input: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """The installed console script in a real subprocess."""
    cmd = [sys.executable, "-m", "papershelf"]
    if data_dir is not None:
        cmd += ["--data-dir", str(data_dir)]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(cmd + list(args), capture_output=True, text=True, input=input, env=full_env, timeout=120)


def listed_papers(data_dir: Path) -> list[dict]:
    """The library's papers as `papershelf list --json` prints them (the installed command)."""
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def cli_ok(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    """`run_cli`, which must succeed (and without a traceback)."""
    res = run_cli(*args, data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    return res


def import_in_turn(data_dir: Path, files: dict[Path, str]) -> subprocess.CompletedProcess:
    """Write each of `files` (a path and its text) and import it, one after the other, with the
    installed command; the last import's output."""
    res = None
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        res = cli_ok("import", str(path), data_dir=data_dir)
    assert res is not None, "no file to import"
    return res


def run_window_probe(
    probe: str, tmp_path: Path, *args: str, platform: str = "offscreen", x11: bool = False, timeout: int = 120
) -> subprocess.CompletedProcess:
    """A probe script (`python -c probe ARGS`) that opens the real window in its own process: on
    `platform` (an offscreen screen, or xcb inside `xvfb-run` at 1366x768 when `x11`), with this
    checkout's code and settings of its own; fails the test if the probe fails."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "xcb" if x11 else platform,
        "PYTHONPATH": str(ROOT / "app"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    cmd = [sys.executable, "-c", probe, *args]
    if x11:
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 1366x768x24", *cmd]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    assert res.returncode == 0, res.stderr
    return res


class Mount:
    """A real tmpfs mounted for one test (root only): a read-only or full disk."""

    def __init__(self, path: Path, size: str):
        self.path = path
        self.size = size

    def __enter__(self) -> Mount:
        self.path.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)], capture_output=True, text=True
        )
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here (needs root): {res.stderr.strip()}")
        return self

    def fill(self) -> None:
        """Write a filler file until the disk is full (ENOSPC), so the next write fails."""
        filler = os.open(self.path / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            with pytest.raises(OSError, match="No space"):
                while True:
                    os.write(filler, b"\0" * 4096)
        finally:
            os.close(filler)

    def remount_readonly(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True)

    def __exit__(self, *exc) -> None:
        subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


@pytest.fixture
def tmpfs(tmp_path):
    """Factory: `with tmpfs("1m") as m:` gives a real small file system at m.path."""
    if os.name != "posix" or shutil.which("mount") is None:
        pytest.skip("needs mount(8)")
    return lambda size="4m": Mount(tmp_path / f"mnt-{size}", size)


@contextmanager
def read_only_seeded(tmpfs, monkeypatch) -> Iterator[Library]:
    """The first sample listing (20 papers) imported on a small disk that also holds this
    machine's state folder (where the index lives); then the disk turns read-only and the
    library is opened read-only."""
    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root)")
    with tmpfs("8m") as mount:
        monkeypatch.setenv("PAPERSHELF_STATE_DIR", str(mount.path / "state"))
        folder = mount.path / "library"
        with Library.open(folder) as lib:
            lib.import_files(SEEDS[:1])
        mount.remount_readonly()
        with Library.open(folder, readonly=True) as lib:
            yield lib


@pytest.fixture
def settings(tmp_path, qapp):
    """QSettings in the test's own folder, empty, with the application's names."""
    from PySide6.QtCore import QSettings

    from papershelf.gui.app import configure_application

    configure_application(qapp)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QSettings().clear()
    yield
    QSettings().clear()


@pytest.fixture
def window(qtbot, tmp_path, settings):
    """The real window on a small library (the first listing), without its index."""
    yield from window_on(qtbot, tmp_path / "library", SEEDS[:1])


def window_on(qtbot, folder: Path, files: list[Path]):
    """The real window, without its index, on a new library of these files: for a fixture to
    `yield from`; closed with its library afterwards."""
    from papershelf.gui.main_window import MainWindow

    lib = Library.open(folder)
    lib.import_files(files)
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    lib.close()


# ---- a window on the indexed sample library (test_gui and the window tests share these) ----


@pytest.fixture(scope="module")
def indexed_seeds(tmp_path_factory):
    return seeded_index(tmp_path_factory.mktemp("gui") / "library")


class Opened:
    """A window on a library folder; `reopen()` closes it and starts a fresh one."""

    def __init__(self, qtbot, folder):
        self.qtbot, self.folder = qtbot, folder
        self.lib = None
        self.win = None

    def open(self, wait_index=True):
        from papershelf.gui.main_window import MainWindow  # Qt only for the tests that open a window

        self.lib = Library.open(self.folder)
        self.win = MainWindow(self.lib)
        self.qtbot.addWidget(self.win)
        self.win.show()
        self.qtbot.waitExposed(self.win)
        self.win.activateWindow()
        if wait_index:
            self.qtbot.waitUntil(lambda: self.win.index is not None, timeout=60_000)
            self.settle()
        return self

    def settle(self):
        """Wait until the list shows the answer to the current query."""
        w = self.win
        self.qtbot.waitUntil(w.is_idle, timeout=10_000)

    def close(self):
        if self.win is not None:
            self.win.close()
            self.lib.close()
            self.win = None

    def reopen(self):
        self.close()
        return self.open()


@pytest.fixture
def opened(qtbot, indexed_seeds, tmp_path, settings):
    folder = tmp_path / "library"
    copy_seeded(indexed_seeds, folder)
    o = Opened(qtbot, folder).open()
    yield o
    o.close()
