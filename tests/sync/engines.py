"""Real sync engines for the multi-device tests (issue 22): no tests here, helpers only.

- `SyncthingPair`: two `syncthing serve` processes on loopback, each with its own home,
  sharing one folder ("papers"); no discovery, relays, NAT, upgrades or usage reports.
- `copy_rsync` / `sync_unison`: a copy of one folder onto another at a moment the caller chooses.
- `GitPair`: a bare repository and two clones; commit, pull (the default merge) and push.

Every wait is on a condition with a deadline, never a fixed sleep. Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

FOLDER_ID = "papers"
# files an engine keeps for itself in a synced folder, never a device's
ENGINE_NAMES = (".stfolder", ".stignore", ".stversions", ".git")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll `condition` until it returns a true value (returned), or fail after `timeout` seconds
    naming `what` is awaited. The pause between polls bounds the load, it waits for nothing."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    last: Any = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        pause.wait(interval)


def is_engine_file(rel: str) -> bool:
    """Whether a path (relative to a synced folder) belongs to the sync engine, not to a device."""
    first = rel.split("/", 1)[0]
    name = rel.rsplit("/", 1)[-1]
    return (
        first in ENGINE_NAMES
        or (name.startswith(".syncthing.") and name.endswith(".tmp"))
        or name.startswith(".unison.")
    )


def tree(folder: Path) -> dict[str, str]:
    """Every file of `folder` (but the engine's own) and a digest of its bytes."""
    out: dict[str, str] = {}
    if not folder.exists():
        return out
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not p.is_symlink() and not is_engine_file(rel):
            try:
                out[rel] = hashlib.blake2b(p.read_bytes(), digest_size=16).hexdigest()
            except OSError:  # removed or replaced while walking: the caller polls again
                out[rel] = "?"
    return out


# ---------------------------------------------------------------------------------------------
# Syncthing


_CONFIG = """<configuration version="36">
    <folder id="{folder_id}" label="{folder_id}" path="{path}" type="sendreceive" rescanIntervalS="1"
            fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
        <filesystemType>basic</filesystemType>
        <device id="{me}" introducedBy=""></device>
        <device id="{other}" introducedBy=""></device>
        <minDiskFree unit="%">0</minDiskFree>
        <markerName>.stfolder</markerName>
    </folder>
    <device id="{me}" name="{name}" compression="metadata" introducer="false">
        <address>dynamic</address>
    </device>
    <device id="{other}" name="{other_name}" compression="metadata" introducer="false">
        <address>tcp://127.0.0.1:{other_port}</address>
    </device>
    <gui enabled="true" tls="false" debugging="false">
        <address>127.0.0.1:{gui_port}</address>
        <apikey>{apikey}</apikey>
    </gui>
    <options>
        <listenAddress>tcp://127.0.0.1:{listen_port}</listenAddress>
        <globalAnnounceEnabled>false</globalAnnounceEnabled>
        <localAnnounceEnabled>false</localAnnounceEnabled>
        <relaysEnabled>false</relaysEnabled>
        <natEnabled>false</natEnabled>
        <urAccepted>-1</urAccepted>
        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
        <startBrowser>false</startBrowser>
        <crashReportingEnabled>false</crashReportingEnabled>
        <reconnectionIntervalS>1</reconnectionIntervalS>
        <minHomeDiskFree unit="%">0</minHomeDiskFree>
        <setLowPriority>false</setLowPriority>
    </options>
</configuration>
"""


@dataclass
class SyncthingInstance:
    """One `syncthing serve` with its own home, GUI/REST and sync ports on 127.0.0.1."""

    name: str
    home: Path
    folder: Path
    gui_port: int = field(default_factory=free_port)
    listen_port: int = field(default_factory=free_port)
    apikey: str = field(default_factory=lambda: secrets.token_hex(16))
    device_id: str = ""
    proc: subprocess.Popen[bytes] | None = None

    def generate(self) -> None:
        """Make the certificate first: the device id is read from it."""
        self.home.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            ["syncthing", "generate", f"--home={self.home}", "--no-default-folder", "--skip-port-probing"],
            capture_output=True,
            text=True,
            timeout=60,
            env=self.env(),
        )
        if res.returncode != 0:
            raise RuntimeError(f"syncthing generate failed: {res.stdout}{res.stderr}")
        # "Device ID: XXXXXXX-…" (every version says it); `serve --device-id` otherwise
        found = re.search(r"Device ID: ([A-Z0-9]{7}(?:-[A-Z0-9]{7}){7})", res.stdout + res.stderr)
        if found:
            self.device_id = found[1]
            return
        res = subprocess.run(
            ["syncthing", "serve", f"--home={self.home}", "--device-id"],
            capture_output=True,
            text=True,
            timeout=60,
            env=self.env(),
        )
        self.device_id = res.stdout.strip()
        if res.returncode != 0 or len(self.device_id) != 63:
            raise RuntimeError(f"syncthing --device-id failed: {res.stdout}{res.stderr}")

    def configure(self, other: SyncthingInstance) -> None:
        """config.xml naming the other instance at its loopback address, and the one shared folder."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / ".stfolder").mkdir(exist_ok=True)
        (self.home / "config.xml").write_text(
            _CONFIG.format(
                folder_id=FOLDER_ID,
                path=self.folder,
                me=self.device_id,
                other=other.device_id,
                name=self.name,
                other_name=other.name,
                other_port=other.listen_port,
                gui_port=self.gui_port,
                listen_port=self.listen_port,
                apikey=self.apikey,
            )
        )

    def env(self) -> dict[str, str]:
        """Syncthing's environment: no restart monitor, no upgrades, its home as HOME."""
        return {**os.environ, "STNORESTART": "1", "STNOUPGRADE": "1", "HOME": str(self.home)}

    def start(self) -> None:
        """Start the process (its log in its home)."""
        log = (self.home / "syncthing.log").open("ab")
        self.proc = subprocess.Popen(
            ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart", "--no-upgrade"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env(),
        )
        log.close()

    def log_tail(self, n: int = 30) -> str:
        """The last lines of its log, for a failure message."""
        try:
            return "\n".join((self.home / "syncthing.log").read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def api(self, method: str, path: str, **params: str) -> Any:
        """A REST call; the decoded JSON answer (None when empty)."""
        r = httpx.request(
            method,
            f"http://127.0.0.1:{self.gui_port}{path}",
            params=params,
            headers={"X-API-Key": self.apikey},
            timeout=30,
        )
        r.raise_for_status()
        return r.json() if r.content else None

    def try_api(self, method: str, path: str, **params: str) -> Any:
        """The REST call, or None while the instance does not answer yet."""
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"syncthing {self.name} exited ({self.proc.returncode}):\n{self.log_tail()}")
        try:
            return self.api(method, path, **params)
        except (httpx.HTTPError, ValueError):
            return None

    def connected_to(self, other: SyncthingInstance) -> bool:
        """Whether this instance holds a connection to the other."""
        conns = self.try_api("GET", "/rest/system/connections")
        return bool(conns and conns.get("connections", {}).get(other.device_id, {}).get("connected"))

    def in_sync_with(self, other: SyncthingInstance) -> bool:
        """Idle, needing nothing, and the other device complete from this side."""
        status = self.try_api("GET", "/rest/db/status", folder=FOLDER_ID)
        completion = self.try_api("GET", "/rest/db/completion", folder=FOLDER_ID, device=other.device_id)
        if not status or not completion:
            return False
        return bool(
            status.get("state") == "idle"
            and status.get("needTotalItems", 1) == 0
            and status.get("needBytes", 1) == 0
            and status.get("pullErrors", 0) == 0
            and completion.get("completion") == 100
            and completion.get("needBytes", 1) == 0
            and completion.get("needItems", 1) == 0
        )

    def stop(self) -> None:
        """Shut down through REST, kill it if it does not end."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            self.api("POST", "/rest/system/shutdown")
            self.proc.wait(timeout=15)
        except (httpx.HTTPError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            self.proc.wait(timeout=15)


class SyncthingPair:
    """Two Syncthing instances on loopback sharing one folder: `a.folder` and `b.folder`.

    `startup_s` is the time from the first process start to both connected; `with` stops both."""

    def __init__(self, root: Path, folder_a: Path | None = None, folder_b: Path | None = None):
        self.a = SyncthingInstance("device-a", root / "st-a", folder_a or root / "a")
        self.b = SyncthingInstance("device-b", root / "st-b", folder_b or root / "b")
        self.startup_s = 0.0

    def start(self, timeout: float = 60) -> SyncthingPair:
        """Generate, configure, start, and wait until both are connected and idle."""
        if shutil.which("syncthing") is None:
            raise RuntimeError("syncthing is not installed (Debian package 'syncthing'; .ci/run installs it)")
        t0 = time.monotonic()
        for inst in (self.a, self.b):
            inst.generate()
        self.a.configure(self.b)
        self.b.configure(self.a)
        self.a.start()
        self.b.start()
        try:
            wait_for(
                lambda: self.a.connected_to(self.b) and self.b.connected_to(self.a),
                timeout,
                "the two Syncthing instances to connect",
            )
            self.wait_in_sync(timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def scan(self) -> None:
        """Ask both instances to scan the folder now (not waiting for the watcher)."""
        for inst in (self.a, self.b):
            inst.try_api("POST", "/rest/db/scan", folder=FOLDER_ID)

    def wait_in_sync(self, timeout: float = 60, same_files: bool = True) -> float:
        """Wait until both sides are idle, need nothing, see the other complete and (with
        `same_files`) hold the same files with the same bytes; the seconds it took."""
        t0 = time.monotonic()
        self.scan()

        def agreed() -> bool:
            if not (self.a.in_sync_with(self.b) and self.b.in_sync_with(self.a)):
                return False
            return not same_files or tree(self.a.folder) == tree(self.b.folder)

        try:
            wait_for(agreed, timeout, "Syncthing to bring both folders in sync", interval=0.2)
        except TimeoutError as exc:
            a, b = tree(self.a.folder), tree(self.b.folder)
            differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            raise TimeoutError(
                f"{exc}; files that differ: {differ[:20]}\n--- a:\n{self.a.log_tail()}\n--- b:\n{self.b.log_tail()}"
            ) from None
        return time.monotonic() - t0

    def disconnect(self, timeout: float = 60) -> None:
        """Pause the two devices on both sides (the machines go offline from each other) and
        wait until neither holds a connection."""
        self.a.api("POST", "/rest/system/pause", device=self.b.device_id)
        self.b.api("POST", "/rest/system/pause", device=self.a.device_id)
        wait_for(
            lambda: not self.a.connected_to(self.b) and not self.b.connected_to(self.a),
            timeout,
            "the two Syncthing instances to disconnect",
        )

    def reconnect(self, timeout: float = 60) -> None:
        """Resume the two devices and wait until they are connected again."""
        self.a.api("POST", "/rest/system/resume", device=self.b.device_id)
        self.b.api("POST", "/rest/system/resume", device=self.a.device_id)
        wait_for(
            lambda: self.a.connected_to(self.b) and self.b.connected_to(self.a),
            timeout,
            "the two Syncthing instances to connect again",
        )

    def stop(self) -> None:
        """Stop both (REST shutdown, then kill)."""
        for inst in (self.a, self.b):
            inst.stop()

    def __enter__(self) -> SyncthingPair:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------------------------
# rsync and unison: a copy at a moment the caller chooses


def copy_rsync(src: Path, dst: Path, exclude: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`rsync -a --update --modify-window=-1 src/ dst/`: what a user runs to copy one way without
    taking back a newer file (no --delete: a copy never removes). `--modify-window=-1` compares the
    nanoseconds too: by default rsync compares whole seconds, so a machine's own journal written
    again within the second of a copy taken from it looked no newer than that copy, and the copy
    going back put the older journal over it (README: "Use it on several machines"). Exit 24 (a
    file vanished while copied) is normal while a device writes."""
    dst.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        ["rsync", "-a", "--update", "--modify-window=-1", *(f"--exclude={x}" for x in exclude), f"{src}/", f"{dst}/"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if res.returncode not in (0, 23, 24):
        raise RuntimeError(f"rsync {src} -> {dst} failed ({res.returncode}): {res.stderr}")
    return res


def sync_unison(a: Path, b: Path, archive: Path) -> subprocess.CompletedProcess[str]:
    """`unison a b -batch -prefer newer`: a two-way sync, a file changed on both sides since the
    last sync taken from the newer (as Dropbox-like tools do). Its archive in `archive`, not $HOME.
    Exit 1 or 2 (some files skipped, e.g. changed during the sync) is normal while a device writes."""
    archive.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        [
            "unison",
            str(a),
            str(b),
            "-batch",
            "-auto",
            "-times",
            "-prefer",
            "newer",
            "-confirmbigdel=false",
            "-ignore",
            "Name .git",
            "-ui",
            "text",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "UNISON": str(archive)},
    )
    if res.returncode not in (0, 1, 2):
        raise RuntimeError(f"unison {a} <-> {b} failed ({res.returncode}): {res.stdout}{res.stderr}")
    return res


# ---------------------------------------------------------------------------------------------
# git: two clones of one bare repository


class GitPair:
    """A bare repository and two clones (`a`, `b`); `commit_pull_push(clone)` is what a user runs:
    `git add -A && git commit && git pull --no-edit && git push`, the default merge, no driver."""

    def __init__(self, root: Path):
        self.bare = root / "origin.git"
        self.a = root / "a"
        self.b = root / "b"
        self.conflicts: list[str] = []

    def git(self, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """git in `cwd` with a fixed identity and no user or system configuration."""
        env = {
            **os.environ,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": cwd.name,
            "GIT_AUTHOR_EMAIL": f"{cwd.name}@example.invalid",
            "GIT_COMMITTER_NAME": cwd.name,
            "GIT_COMMITTER_EMAIL": f"{cwd.name}@example.invalid",
        }
        cmd = ["git", "-c", "init.defaultBranch=main", "-c", "pull.rebase=false", *args]
        res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
        if check and res.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} in {cwd} failed: {res.stdout}{res.stderr}")
        return res

    def start(self) -> GitPair:
        """The bare repository with one empty commit, cloned twice."""
        self.bare.parent.mkdir(parents=True, exist_ok=True)
        self.git(self.bare.parent, "init", "--bare", "-q", str(self.bare))
        for clone in (self.a, self.b):
            self.git(self.bare.parent, "clone", "-q", str(self.bare), str(clone))
        self.git(self.a, "commit", "-q", "--allow-empty", "-m", "start")
        self.git(self.a, "push", "-q", "origin", "HEAD:main")
        self.git(self.b, "pull", "-q", "--no-edit", "origin", "main")
        self.git(self.b, "branch", "-q", "--set-upstream-to=origin/main")
        self.git(self.a, "branch", "-q", "--set-upstream-to=origin/main")
        return self

    def commit_pull_push(self, clone: Path) -> bool:
        """Commit everything, pull (merge) and push; False when the pull met a merge conflict
        (recorded in `conflicts`, the merge aborted so the clone keeps its own state)."""
        self.git(clone, "add", "-A")
        self.git(clone, "commit", "-q", "-m", f"edits of {clone.name}", check=False)  # nothing to commit: fine
        pull = self.git(clone, "pull", "-q", "--no-edit", check=False)
        if pull.returncode != 0:
            unmerged = self.git(clone, "diff", "--name-only", "--diff-filter=U", check=False).stdout.split()
            if not unmerged:
                raise RuntimeError(f"git pull in {clone} failed: {pull.stdout}{pull.stderr}")
            self.conflicts += [f"{clone.name}: {name}" for name in unmerged]
            self.git(clone, "merge", "--abort", check=False)
            return False
        self.git(clone, "push", "-q", "origin", "HEAD:main")
        return True
