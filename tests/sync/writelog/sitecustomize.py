"""Which files a device's process writes (issue 22's "files with two writers").

Put on PYTHONPATH by tests/sync/workload.py for the `papershelf` subprocesses of the
workloads: with $PAPERSHELF_TEST_WRITE_LOG and $PAPERSHELF_TEST_LIBRARY set, every file under
that library folder which the process opens for writing, renames onto, truncates, links or
removes is appended (its path relative to the folder) to the log. Python's audit hooks
(PEP 578) see these events in the process itself, so what a sync engine writes in the same
folder at the same moment is never counted as the device's.
"""

from __future__ import annotations

import os
import sys

_LOG = os.environ.get("PAPERSHELF_TEST_WRITE_LOG")
_ROOT = os.environ.get("PAPERSHELF_TEST_LIBRARY")
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _note(path: object) -> None:
    if path is None or isinstance(path, int) or _ROOT is None or _LOG is None:
        return
    try:
        real = os.path.realpath(os.fsdecode(path))  # a str, bytes or path-like here
    except (TypeError, ValueError, OSError):
        return
    root = os.path.realpath(_ROOT)
    if real.startswith(root + os.sep):
        fd = os.open(_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (real[len(root) + 1 :] + "\n").encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)


def _hook(event: str, args: tuple) -> None:
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITES
        )
        if writing:
            _note(path)
    elif event in ("os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.move"):
        _note(args[1])
    elif event in ("os.remove", "os.truncate", "shutil.rmtree", "os.rmdir"):
        _note(args[0])


if _LOG and _ROOT:
    sys.addaudithook(_hook)
