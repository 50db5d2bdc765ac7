"""The child process that reads untrusted PDFs, so that a hostile or broken file can cost the
app neither its memory nor its time: PDFium is C++, a file can make it allocate without bound,
loop or crash, and none of that should reach the window or the command line.

    python -m papershelf.core.pdf.worker

It caps its own address space first (RLIMIT_AS, MEMORY_ENV bytes, 1 GiB by default), then reads
one request a line on stdin, JSON {"op": "text"|"pages"|"info", "path": …, "first": …, "last": …},
and answers each with one JSON line on stdout: {"ok": true, …} or {"ok": false, "problem": "…"},
with "passing": true when the problem may be gone next time (out of memory, an OSError such as
EACCES or EIO) rather than the file's own (encrypted, damaged, not a PDF).
It stops at the end of stdin (its parent closed the pipe), and within a second of its parent's
death even when stuck in a file. The parent (`sandbox.py`)
kills it when a file takes longer than its timeout and starts another for the next file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from typing import Any

import orjson

MEMORY_ENV = "PAPERSHELF_PDF_MEMORY"
READY = b'{"ready": true}'
PARENT_ENV = "PAPERSHELF_PDF_PARENT"  # the parent's pid: the worker ends when it is gone
DEFAULT_MEMORY = 1 << 30


def memory_cap() -> int:
    """The address-space cap in bytes (MEMORY_ENV, else 1 GiB)."""
    try:
        return int(os.environ.get(MEMORY_ENV, "") or DEFAULT_MEMORY)
    except ValueError:
        return DEFAULT_MEMORY


def limit_memory(cap: int) -> None:
    """Cap this process's address space (where the system allows it)."""
    try:
        import resource
    except ImportError:  # not on Windows: the timeout still applies
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one request (a PdfProblem or running out of memory is an answer in words)."""
    from . import reading

    path = str(request.get("path", ""))
    try:
        with open(path, "rb"):  # a file that cannot be opened now (EACCES, EIO, gone) is no damaged PDF
            pass
        if request.get("op") == "info":
            info = reading.read_info(path)
            return {"ok": True, "info": asdict(info)}
        pages = reading.read_pages(path, int(request.get("first") or 0), request.get("last"))
        return {"ok": True, "pages": pages.texts, "note": pages.note}
    except reading.PdfProblem as exc:
        return {"ok": False, "problem": str(exc)}
    except MemoryError:
        mb = memory_cap() >> 20
        problem = f"{path} needs more than {mb:,} MB of memory to read; skipped"
        return {"ok": False, "problem": problem, "fatal": True, "passing": True}
    except OSError as exc:
        return {"ok": False, "problem": f"{path} cannot be read: {exc.strerror or exc}", "passing": True}
    except Exception as exc:
        return {"ok": False, "problem": f"{path} is not a readable PDF (damaged: {exc or type(exc).__name__})"}


def _orphan_watch(parent: int) -> None:
    """End this process when its parent is gone, even while PDFium is busy in a file."""
    import time

    while os.getppid() == parent:
        time.sleep(1)
    os._exit(4)


def main() -> int:
    """Answer requests until stdin ends (or the parent is gone)."""
    import threading

    limit_memory(memory_cap())
    try:
        parent = int(os.environ.get(PARENT_ENV, "") or os.getppid())
    except ValueError:
        parent = os.getppid()
    threading.Thread(target=_orphan_watch, args=(parent,), daemon=True).start()
    from . import reading  # noqa: F401 - loaded before the first file's clock starts

    out = sys.stdout.buffer
    out.write(READY + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            request = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        reply = answer(request)
        out.write(orjson.dumps(reply) + b"\n")
        out.flush()
        if reply.get("fatal"):  # memory may be left fragmented: the parent starts a fresh worker
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
