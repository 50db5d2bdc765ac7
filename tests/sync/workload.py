"""The two-device workload of issue 22 (helpers, no tests): devices, edits, and the bookkeeping.

A *device* is the installed command line in a subprocess, `python -m papershelf --data-dir
<its copy of the library> ...`, with a configuration, state and cache folder of its own (so a
device id of its own). Its processes log which library files they write (writelog/sitecustomize.py).

The workload: both devices import a different seed listing at the same moment, then rounds of
edits at the same moments (a barrier before each step): tag, untag, status, note, add to a
reading list, on a small pool of papers so that they meet. Every round also sets the notes of
one paper on both devices at once, and adds a different tag to one paper on both devices at once.

Bookkeeping, per edit the command acknowledged (exit 0):
- the *key* it sets: (paper, status), (paper, notes), (paper, tag T), (paper, list L);
- it is *overridden* when a later acknowledged edit sets the same key: the same device later in
  the round, or any device in a later round (rounds are separated by a full sync);
- otherwise its key ends with the last value each device gave it in that round: one value, or
  (set on both devices in one round) one of the two — a *conflict*, whose other value the core
  keeps under `papershelf conflicts`; an edit is *lost* when a device ends without its effect
  and without the other device's concurrent value either.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "seeds").glob("*.txt"))
WRITELOG = Path(__file__).resolve().parent / "writelog"
ROUNDS = max(1, int(os.environ.get("PAPERSHELF_SYNC_ROUNDS", "3")))
EDITS = max(2, int(os.environ.get("PAPERSHELF_SYNC_EDITS", "5")))  # per device and round
AGREE_TIMEOUT = float(os.environ.get("PAPERSHELF_SYNC_TIMEOUT", "60"))
TAGS = ("ml", "theory", "to-cite", "group")
LISTS = ("reading-group", "thesis")
STATUSES = ("to-read", "reading", "read", "skipped")
# the time a device last wrote a paper: not what the user edited
VOLATILE = ("updated",)
# the only file outside devices/ that belongs in a library folder: the marker that keeps an older
# Papershelf out, the same bytes from every device (written by each that finds none: two writers
# of identical bytes are no conflict for a sync tool, nor for git; checked below)
SHARED_FILES = ("library.jsonl",)
BACKUP_PREFIX = "pre-sync-backup-"
_TMP = re.compile(r"^(?P<dir>.*/)?\.(?P<name>[^/]+)\.papershelf-[^/.]+\.tmp$")


class Device:
    """One device: its library folder (`folder`) and its own configuration, state and cache."""

    def __init__(self, name: str, folder: Path, home: Path):
        self.name = name
        self.folder = folder
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.write_log = home / "writes.log"
        self.last_error = ""  # what the last failing `state` command said

    @property
    def device_id(self) -> str:
        """This device's id, as the core makes and keeps it in its configuration folder."""
        from papershelf.core.store.machine import device_id

        return device_id(self.home / "config")

    def env(self) -> dict[str, str]:
        """The environment of its commands (its own folders; the write log on)."""
        pythonpath = os.pathsep.join(p for p in (str(WRITELOG), os.environ.get("PYTHONPATH", "")) if p)
        return {
            **os.environ,
            "PAPERSHELF_CONFIG_DIR": str(self.home / "config"),
            "PAPERSHELF_STATE_DIR": str(self.home / "state"),
            "PAPERSHELF_CACHE_DIR": str(self.home / "cache"),
            "PAPERSHELF_DATA_DIR": str(self.folder),
            "PYTHONPATH": pythonpath,
            "PAPERSHELF_TEST_WRITE_LOG": str(self.write_log),
            "PAPERSHELF_TEST_LIBRARY": str(self.folder),
        }

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """`papershelf --data-dir FOLDER ARGS` on this device."""
        cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(self.folder), *args]
        return subprocess.run(cmd, capture_output=True, text=True, input=input, env=self.env(), timeout=120)

    def writes(self) -> set[str]:
        """The library files this device's processes wrote (a temporary file counts as the file it
        becomes), relative to the library folder."""
        try:
            lines = self.write_log.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        except FileNotFoundError:
            return set()
        out = set()
        for line in lines:
            m = _TMP.match(line)
            out.add(f"{m['dir'] or ''}{m['name']}" if m else line)
        return out

    def state(self, orders: bool = True) -> dict[str, Any] | None:
        """What the device's command line shows: every paper (`list --json`, but the volatile
        fields) and (`orders`) each reading list's order; None when a command fails."""
        res = self.run("list", "--json")
        if res.returncode != 0:
            self.last_error = f"list --json: {(res.stdout + res.stderr).strip()[-300:]}"
            return None
        try:
            papers = {p["id"]: {k: v for k, v in p.items() if k not in VOLATILE} for p in json.loads(res.stdout)}
        except (ValueError, KeyError, TypeError):
            return None
        names = sorted({name for p in papers.values() for name in p.get("lists", [])}) if orders else []
        lists = {}
        for name in names:
            res = self.run("list", "--list", name, "--json")
            if res.returncode != 0:
                self.last_error = f"list --list {name} --json: {(res.stdout + res.stderr).strip()[-300:]}"
                return None
            lists[name] = [p["id"] for p in json.loads(res.stdout)]
        return {"papers": papers, "lists": lists}


def seed_ids(scratch: Path, seed: Path) -> list[str]:
    """The ids one seed listing gives its papers (imported into a scratch library here)."""
    from papershelf.core.library import Library

    with Library.open(scratch) as lib:
        lib.import_files([seed])
        return sorted(lib.ids())


@dataclass
class Edit:
    """One command of the workload and what became of it."""

    round: int
    device: str
    seq: int
    kind: str
    pid: str
    value: Any
    args: tuple[str, ...]
    key: tuple[str, ...]
    ok: bool = False
    output: str = ""


def make_edit(
    rng: random.Random, rnd: int, device: str, seq: int, pid: str, kind: str, tagged: dict[str, list[str]] | None = None
) -> Edit:
    """One edit of `kind` on paper `pid` (its other choices from `rng`); an untag takes off a tag
    the paper was given in an earlier round (`tagged`), or is a tag when there is none."""
    had = sorted(set((tagged or {}).get(pid, [])))
    if kind == "untag" and not had:
        kind = "tag"
    if kind in ("tag", "untag"):
        tag = rng.choice(had) if kind == "untag" else rng.choice(TAGS)
        flag = "--add" if kind == "tag" else "--remove"
        return Edit(rnd, device, seq, kind, pid, kind == "tag", ("tag", pid, flag, tag), ("tag", pid, tag))
    if kind == "status":
        status = rng.choice(STATUSES)
        return Edit(rnd, device, seq, kind, pid, status, ("status", pid, status), ("status", pid))
    if kind == "note":
        text = f"note r{rnd} {device}{seq} {rng.randrange(16**6):06x}"
        return Edit(rnd, device, seq, kind, pid, text, ("note", pid, text), ("notes", pid))
    name = rng.choice(LISTS)
    return Edit(rnd, device, seq, "list-add", pid, True, ("list-add", name, pid), ("list", pid, name))


def plan_round(
    rng: random.Random, rnd: int, devices: list[str], pool: list[str], tagged: dict[str, list[str]]
) -> dict[str, list[Edit]]:
    """Each device's edits of one round: step 0 sets one paper's notes on every device, step 1
    adds a different tag to one paper on every device, then random edits (`tagged`: the tags
    given in earlier rounds, for an untag to take off)."""
    plans: dict[str, list[Edit]] = {d: [] for d in devices}
    same_note, same_tags = rng.choice(pool), rng.choice(pool)
    for i, d in enumerate(devices):
        plans[d].append(make_edit(rng, rnd, d, 0, same_note, "note"))
        tag = TAGS[(rnd + i) % len(TAGS)]
        plans[d].append(
            Edit(rnd, d, 1, "tag", same_tags, True, ("tag", same_tags, "--add", tag), ("tag", same_tags, tag))
        )
        for seq in range(2, EDITS):
            kind = rng.choice(("tag", "untag", "status", "note", "list-add"))
            plans[d].append(make_edit(rng, rnd, d, seq, rng.choice(pool), kind, tagged))
    return plans


class Concurrent:
    """Runs each device's commands in its own thread, step by step at the same moments (a
    barrier before each step). `busy` counts the commands running right now (a copier reads it
    to know a copy was made while a device was writing)."""

    def __init__(self) -> None:
        self.busy = 0
        self._lock = threading.Lock()

    def run(self, steps: dict[Device, list[Callable[[], subprocess.CompletedProcess[str]]]]) -> list[Any]:
        """Run every device's steps; each step's result in order per device (as a flat list)."""
        counts = {len(v) for v in steps.values()}
        assert len(counts) == 1, "every device takes the same number of steps"
        barrier = threading.Barrier(len(steps))
        results: dict[Device, list[Any]] = {d: [] for d in steps}
        errors: list[BaseException] = []

        def work(device: Device, todo: list[Callable[[], Any]]) -> None:
            try:
                for step in todo:
                    barrier.wait(timeout=300)
                    with self._lock:
                        self.busy += 1
                    try:
                        results[device].append(step())
                    finally:
                        with self._lock:
                            self.busy -= 1
            except BaseException as exc:  # reported in the test's thread
                errors.append(exc)
                barrier.abort()

        threads = [threading.Thread(target=work, args=(d, s)) for d, s in steps.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return [r for d in steps for r in results[d]]


def copy_while_writing(devices: list[Device], runner: Concurrent, copy: Callable[[], None]) -> Callable[[], None]:
    """A task for `in_background`: wait until a device's command starts writing (its write log
    grows), then `copy` at once, so the copy is made while the device writes; no copy while no
    command runs."""
    from sync.engines import wait_for

    def logged() -> int:
        return sum(d.write_log.stat().st_size if d.write_log.exists() else 0 for d in devices)

    def task() -> None:
        start = logged()
        if (
            wait_for(
                lambda: "write" if logged() > start else "idle" if runner.busy == 0 else "",
                300,
                "a write",
                interval=0.01,
            )
            == "write"
        ):
            copy()

    return task


class SettleFailed(Exception):
    """The sync engine cannot bring the devices together (e.g. a git merge conflict)."""


def in_background(task: Callable[[], None], until: threading.Event, errors: list[BaseException]) -> threading.Thread:
    """Call `task` again and again in a thread until `until` is set (a copier at random moments);
    what it raises goes to `errors`."""

    def loop() -> None:
        try:
            while not until.is_set():
                task()
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=loop)
    t.start()
    return t


@dataclass
class Tally:
    """The workload's counts (printed by `report`)."""

    engine: str
    acknowledged: int = 0
    refused: int = 0
    lost: int = 0
    conflicts: int = 0
    conflicts_listed: int = 0
    conflicts_command: bool = False
    agree_s: list[float] = field(default_factory=list)  # engine settled and both command lines agree
    settle_s: list[float] = field(default_factory=list)  # the engine alone (first settle)
    disagreements: list[str] = field(default_factory=list)
    lost_details: list[str] = field(default_factory=list)
    two_writers: list[str] = field(default_factory=list)
    foreign_writes: list[str] = field(default_factory=list)
    stray_files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def report(self) -> str:
        """The counts as printed at the end of a workload."""
        agree = ", ".join(f"{s:.1f}" for s in self.agree_s) or "-"
        settled = ", ".join(f"{s:.1f}" for s in self.settle_s) or "-"
        listed = self.conflicts_listed if self.conflicts_command else "no such command"
        lines = [
            f"[{self.engine}] acknowledged edits {self.acknowledged} (refused {self.refused}), "
            f"lost {self.lost}, conflicts {self.conflicts} "
            f"(listed by `papershelf conflicts`: {listed}), "
            f"time to agree per round (s): {agree} (the engine alone: {settled}), "
            f"rounds not agreeing {len(self.disagreements)}, "
            f"files with two writers {len(self.two_writers)}, writes outside the device's own folder "
            f"{len(self.foreign_writes)}, stray files {len(self.stray_files)}",
        ]
        lines += [f"  lost: {x}" for x in self.lost_details[:40]]
        lines += [f"  not agreeing: {x}" for x in self.disagreements]
        lines += [f"  two writers: {x}" for x in self.two_writers[:20]]
        lines += [f"  foreign write: {x}" for x in self.foreign_writes[:20]]
        lines += [f"  stray file: {x}" for x in self.stray_files[:20]]
        lines += [f"  note: {x}" for x in self.notes]
        return "\n".join(lines)

    def check(self) -> None:
        """The issue's promise: nothing lost, both agree, every file one writer."""
        assert self.lost == 0, self.report()
        assert not self.disagreements, self.report()
        assert not self.two_writers and not self.foreign_writes and not self.stray_files, self.report()


def diff_states(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    """Where two devices' states differ, in a few words."""
    if a is None or b is None:
        return "a device's command failed"
    pa, pb = a["papers"], b["papers"]
    only_a, only_b = sorted(set(pa) - set(pb)), sorted(set(pb) - set(pa))
    fields = sorted(
        f"{pid}.{k}"
        for pid in set(pa) & set(pb)
        for k in set(pa[pid]) | set(pb[pid])
        if pa[pid].get(k) != pb[pid].get(k)
    )
    lists = sorted(n for n in set(a["lists"]) | set(b["lists"]) if a["lists"].get(n) != b["lists"].get(n))
    return f"papers only on a {only_a[:5]}, only on b {only_b[:5]}, fields differing {fields[:10]}, lists {lists}"


def states_of(devices: list[Device], orders: bool = True) -> list[dict[str, Any] | None]:
    """Every device's state, read at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(devices)) as pool:
        return list(pool.map(lambda d: d.state(orders), devices))


def agree(
    devices: list[Device],
    settle: Callable[[], None],
    tally: Tally,
    what: str,
    timeout: float = AGREE_TIMEOUT,
    orders: bool = True,
) -> list[dict[str, Any] | None]:
    """Let the engine settle, then poll both devices' command lines until they show the same
    library (deadline `timeout`; with `orders`, the reading lists' order too); the time it took
    goes to the tally, a failure to agree too."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    states: list[dict[str, Any] | None] = [None] * len(devices)
    first = True
    while True:
        try:
            settle()
            if first:
                tally.settle_s.append(time.monotonic() - t0)
                first = False
        except (TimeoutError, SettleFailed) as exc:
            tally.disagreements.append(f"{what}: the engine did not settle: {str(exc)[:300]}")
            return states_of(devices, orders)
        states = states_of(devices, orders)
        if states[0] is not None and all(s == states[0] for s in states):
            tally.agree_s.append(time.monotonic() - t0)
            return states
        if time.monotonic() > deadline:
            failed = "; ".join(f"{d.name}: {d.last_error}" for d, s in zip(devices, states, strict=True) if s is None)
            tally.disagreements.append(f"{what}: {diff_states(states[0], states[1])} {failed}".strip())
            return states


def observed(state: dict[str, Any] | None, key: tuple[str, ...]) -> Any:
    """The value a key has in a device's state (None when the paper is missing)."""
    if state is None:
        return None
    paper = state["papers"].get(key[1])
    if paper is None:
        return None
    if key[0] == "tag":
        return key[2] in paper.get("tags", [])
    if key[0] == "list":
        return key[2] in paper.get("lists", [])
    return paper.get(key[0])


def mentions(text: str, pid: str, value: str) -> bool:
    """Whether a listing names a paper (its id) and a value as a whole word ("read" is not
    found in "reading")."""
    return pid in text and re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text) is not None


def tally_edits(
    edits: Iterable[Edit], states: list[dict[str, Any] | None], conflicts_text: list[str | None], tally: Tally
) -> None:
    """Count acknowledged, lost and conflicting edits against the devices' final states."""
    done = [e for e in edits if e.ok]
    tally.acknowledged += len(done)
    by_key: dict[tuple[str, ...], list[Edit]] = {}
    for e in done:
        by_key.setdefault(e.key, []).append(e)
    listed = [t for t in conflicts_text if t is not None]
    tally.conflicts_command = bool(listed)
    for key, group in by_key.items():
        last_round = max(e.round for e in group)
        final: dict[str, Edit] = {}
        for e in group:
            if e.round == last_round and (e.device not in final or e.seq > final[e.device].seq):
                final[e.device] = e
        allowed = {repr(e.value) for e in final.values()}
        bad = [i for i, s in enumerate(states) if repr(observed(s, key)) not in allowed]
        if len(allowed) > 1:
            tally.conflicts += 1
            if key[0] in ("status", "notes") and listed:
                winner = observed(states[0], key)
                losers = [e for e in final.values() if e.value != winner]
                if all(all(mentions(t, e.pid, str(e.value)) for t in listed) for e in losers):
                    tally.conflicts_listed += 1
        if bad:
            for e in final.values():
                tally.lost += 1
                seen = ", ".join(f"device {i}: {observed(states[i], key)!r}" for i in bad)
                tally.lost_details.append(f"round {e.round} {e.device}: {' '.join(e.args)} -> {seen}")


def tally_imports(imports: dict[str, list[str]], states: list[dict[str, Any] | None], tally: Tally) -> None:
    """Each device's import is one acknowledged edit, lost when one of its papers is missing."""
    for device, ids in imports.items():
        tally.acknowledged += 1
        for i, s in enumerate(states):
            missing = [pid for pid in ids if s is None or pid not in s["papers"]]
            if missing:
                tally.lost += 1
                tally.lost_details.append(
                    f"import on {device}: {len(missing)} of {len(ids)} papers missing on device {i}"
                )
                break


from papershelf.core.store.shared import MARKER  # noqa: E402


def check_writers(devices: list[Device], tally: Tally) -> None:
    """Every file under devices/<id>/ written by device <id> only; nothing else outside devices/
    but the layout's own file and a backup folder; no sync engine's conflict copies."""
    writes = {d.name: d.writes() for d in devices}
    ids = {d.name: d.device_id for d in devices}
    for i, a in enumerate(devices):
        for b in devices[i + 1 :]:
            both = sorted(writes[a.name] & writes[b.name] - set(SHARED_FILES))
            tally.two_writers += [f"{p} (by {a.name} and {b.name})" for p in both]
        own = f"devices/{ids[a.name]}/"
        for p in sorted(writes[a.name]):
            if not p.startswith(own) and p not in SHARED_FILES and not p.startswith(BACKUP_PREFIX):
                tally.foreign_writes.append(f"{a.name} ({ids[a.name]}) wrote {p}")
    from sync.engines import is_engine_file

    known = set(ids.values())
    for d in devices:
        for p in sorted(d.folder.rglob("*")):
            rel = p.relative_to(d.folder).as_posix()
            if not p.is_file() or is_engine_file(rel):
                continue
            parts = rel.split("/")
            if ".sync-conflict-" in p.name or p.name.endswith((".orig", ".rej")):
                tally.stray_files.append(f"{d.name}: {rel} (a sync engine's conflict copy)")
            elif parts[0] == "devices":
                if len(parts) < 3 or parts[1] not in known:
                    tally.stray_files.append(f"{d.name}: {rel} (no device of this workload has that id)")
            elif rel in SHARED_FILES:
                if p.read_bytes() != MARKER:
                    tally.stray_files.append(f"{d.name}: {rel} (not the layout's marker: another writer changed it)")
            elif not parts[0].startswith(BACKUP_PREFIX):
                tally.stray_files.append(f"{d.name}: {rel} (outside devices/)")


def conflicts_listing(device: Device) -> str | None:
    """What `papershelf conflicts` prints on a device (None when there is no such command)."""
    res = device.run("conflicts")
    return res.stdout if res.returncode == 0 else None


def import_at_once(devices: list[Device], seeds: list[Path], runner: Concurrent) -> list[bool]:
    """Each device imports its own seed listing, at the same moment; whether each was acknowledged."""
    results = runner.run({d: [lambda d=d, s=s: d.run("import", str(s))] for d, s in zip(devices, seeds, strict=True)})
    return [r.returncode == 0 for r in results]


def run_rounds(
    devices: list[Device],
    settle: Callable[[], None],
    tally: Tally,
    pool: list[str],
    runner: Concurrent,
    seed: int = 22,
    rounds: int = ROUNDS,
    during: Callable[[], None] | None = None,
    after_round: Callable[[], None] | None = None,
) -> tuple[list[Edit], list[dict[str, Any] | None]]:
    """ROUNDS rounds of edits at the same moments on every device, each followed by the engine
    settling and both devices agreeing; `during` runs again and again while a round's commands do.
    The edits, and the devices' states once the last round agreed (or did not)."""
    rng = random.Random(seed)
    edits: list[Edit] = []
    states: list[dict[str, Any] | None] = []
    for rnd in range(1, rounds + 1):
        tagged: dict[str, list[str]] = {}
        for e in edits:
            if e.ok and e.kind == "tag":
                tagged.setdefault(e.pid, []).append(e.key[2])
        plans = plan_round(rng, rnd, [d.name for d in devices], pool, tagged)
        steps = {d: [lambda d=d, e=e: d.run(*e.args) for e in plans[d.name]] for d in devices}
        stop = threading.Event()
        errors: list[BaseException] = []
        copier = in_background(during, stop, errors) if during is not None else None
        try:
            results = runner.run(steps)
        finally:
            stop.set()
            if copier is not None:
                copier.join()
        if errors:
            raise errors[0]
        flat = [e for d in devices for e in plans[d.name]]
        for e, res in zip(flat, results, strict=True):
            e.ok = res.returncode == 0
            e.output = (res.stdout + res.stderr).strip()
            if not e.ok:
                tally.refused += 1
                tally.notes.append(f"refused: {' '.join(e.args)} on {e.device}: {e.output[-200:]}")
        edits += flat
        if after_round is not None:
            after_round()
        # the lists' order compared after the last round (each order is one more command per list)
        states = agree(devices, settle, tally, f"round {rnd}", orders=rnd == rounds)
    return edits, states
