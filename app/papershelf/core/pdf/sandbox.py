"""The parent's side of the PDF worker (`worker.py`): one long-lived child process reads file
after file, so that 2,000 PDFs do not each pay a process start; it is killed when a file takes
longer than the timeout, and a new one is started for the next file after a kill or a crash.

    PdfWorker()         .request(op, path, …) -> the worker's answer, or a problem in words
    extract_many(paths, progress, cancelled) -> {path: PdfText}, stopping within a second of a cancel
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import orjson

import papershelf

from .fulltext import PdfText
from .worker import MEMORY_ENV, PARENT_ENV, READY, memory_cap

WORKER_MODULE = "papershelf.core.pdf.worker"
TIMEOUT_ENV = "PAPERSHELF_PDF_TIMEOUT"
DEFAULT_TIMEOUT = 60.0
POLL = 0.1  # how often a wait looks at `cancelled`
START_TIMEOUT = 30.0  # a worker's start (Python, pypdfium2) is not counted in a file's time


def timeout() -> float:
    """Seconds one file may take (TIMEOUT_ENV, else 60)."""
    try:
        return float(os.environ.get(TIMEOUT_ENV, "") or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


class Cancelled(Exception):
    """The caller's `cancelled()` said stop while a file was being read."""


def _pump(stream: IO[bytes], lines: queue.Queue[bytes | None]) -> None:
    """Hand the worker's answers over one line at a time (a thread: a wait can then time out)."""
    try:
        for line in stream:
            lines.put(line)
    except (OSError, ValueError):  # the pipe was closed under us: the worker was killed
        pass
    lines.put(None)  # the worker is gone


class PdfWorker:
    """One worker process at a time, started on the first request and after a kill or crash."""

    def __init__(self, seconds: float | None = None) -> None:
        self._seconds = seconds
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._lock = threading.Lock()
        self.starts = 0  # how many processes were started (the benchmark reports it)

    @property
    def pid(self) -> int | None:
        """The running worker's process id (None when none runs)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def seconds(self) -> float:
        """Seconds one file may take: as given, else TIMEOUT_ENV's (read at each file)."""
        return timeout() if self._seconds is None else self._seconds

    def _start(self, cancelled: Callable[[], bool] | None = None) -> subprocess.Popen[bytes]:
        """A new worker, once it says it is ready (OSError when it does not start)."""
        env = dict(os.environ)
        source_root = str(Path(papershelf.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
        env[MEMORY_ENV] = str(memory_cap())
        env[PARENT_ENV] = str(os.getpid())  # gone before the worker looks: the worker ends at once
        proc = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._lines = queue.Queue()
        assert proc.stdout is not None
        threading.Thread(target=_pump, args=(proc.stdout, self._lines), daemon=True).start()
        self.starts += 1
        deadline = time.monotonic() + START_TIMEOUT
        line: bytes | None = b""
        while line == b"" and time.monotonic() < deadline:
            if cancelled is not None and cancelled():
                self._kill(proc)
                raise Cancelled("while the PDF reader started")
            try:
                line = self._lines.get(timeout=POLL)
            except queue.Empty:
                pass
        if line is None or line.strip() != READY:
            self._kill(proc)
            raise OSError(f"the PDF reader did not start (exit status {proc.returncode})")
        self._proc = proc
        return proc

    def close(self) -> None:
        """Stop the worker (it ends at the end of its stdin; killed if it does not at once)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._kill(proc)

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        """Stop the process if it still runs, reap it and close its pipes."""
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> PdfWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        op: str,
        path: Path | str,
        first: int = 0,
        last: int | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """The worker's answer about `path`: {"ok": True, …} or {"ok": False, "problem": words}
        when the file could not be read, took too long or crashed the worker; "passing": True
        when the problem may be gone next time (a timeout, a crash, the memory cap, an OSError:
        not the file's own lasting fault). Cancelled when
        `cancelled()` turns true meanwhile (the worker is killed: it may be stuck in that file)."""
        message = orjson.dumps({"op": op, "path": str(path), "first": first, "last": last}) + b"\n"
        with self._lock:
            try:
                proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start(cancelled)
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(message)
                    proc.stdin.flush()
                except OSError:  # it died between two files: once more with a new one
                    self._kill(proc)
                    proc = self._start(cancelled)
                    assert proc.stdin is not None
                    proc.stdin.write(message)
                    proc.stdin.flush()
            except OSError as exc:
                return {"ok": False, "problem": f"{path} was not read: {exc}", "passing": True}
            return self._wait(proc, path, cancelled)

    def _wait(
        self, proc: subprocess.Popen[bytes], path: Path | str, cancelled: Callable[[], bool] | None
    ) -> dict[str, Any]:
        seconds = self.seconds
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill(proc)
                self._proc = None
                problem = f"{path} took longer than {seconds:g} s to read; skipped"
                return {"ok": False, "problem": problem, "passing": True}
            if cancelled is not None and cancelled():
                self._kill(proc)
                self._proc = None
                raise Cancelled(str(path))
            try:
                line = self._lines.get(timeout=min(POLL, left))
            except queue.Empty:
                continue
            if line is None:
                self._kill(proc)
                code = proc.returncode
                self._proc = None
                return {"ok": False, "problem": _crash_words(path, code), "passing": True}
            reply: dict[str, Any] = orjson.loads(line)
            if reply.get("fatal"):
                self._kill(proc)
                self._proc = None
            return reply


def _crash_words(path: Path | str, code: int) -> str:
    how = f"signal {-code}" if code < 0 else f"exit status {code}"
    mb = memory_cap() >> 20
    return (
        f"{path} made the PDF reader stop ({how}): the file is damaged or needs more than "
        f"{mb:,} MB of memory to read; skipped"
    )


def text_from_reply(path: Path | str, reply: dict[str, Any]) -> PdfText:
    """A worker's answer to "text" as a PdfText (a problem when there is no text at all; `passing`
    when it may be gone next time)."""
    if not reply.get("ok"):
        return PdfText([], str(reply.get("problem", f"{path} could not be read")), passing=bool(reply.get("passing")))
    pages = [str(p) for p in reply.get("pages", [])]
    note = str(reply.get("note", ""))
    if not any(p.strip() for p in pages):
        return PdfText(pages, f"{path} has no text to search (scanned pages without OCR?)", note)
    return PdfText(pages, "", note)


def extract_many(
    paths: Iterable[Path | str],
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    worker: PdfWorker | None = None,
) -> dict[Path | str, PdfText]:
    """Each PDF's text (or its problem in words), read one after another by one worker process.
    `progress(done, total)` after each file; when `cancelled()` turns true, stops within a second
    and returns the files finished so far (the one being read is not among them)."""
    todo = list(paths)
    out: dict[Path | str, PdfText] = {}
    own = worker is None
    pdfw = worker or PdfWorker()
    try:
        for n, path in enumerate(todo, 1):
            if cancelled is not None and cancelled():
                break
            try:
                out[path] = text_from_reply(path, pdfw.request("text", path, cancelled=cancelled))
            except Cancelled:
                break
            if progress is not None:
                progress(n, len(todo))
    finally:
        if own:
            pdfw.close()
    return out
