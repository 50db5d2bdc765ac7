"""`papershelf conflicts`: values kept when two devices changed one thing at once.

papershelf conflicts [--json]        every kept conflict, numbered, oldest first
papershelf conflicts --take N        the library takes conflict N's kept value (or the
                                     deleted paper comes back)
papershelf conflicts --dismiss N     the library's value stays; the kept one is let go

Taking or dismissing is an edit of this device that has seen both values, so it
reaches the other devices like any edit and settles the conflict there too.
"""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import Any

from ..core.attachments import named_files
from ..core.library import Library
from .commands import open_library
from .output import EXIT_OK, plural, write_json


def _when(hlc: int) -> str:
    return _dt.datetime.fromtimestamp(hlc / 1000, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _shown(value: Any, width: int = 60) -> str:
    names = named_files(value)
    if names is not value:  # a paper's files: by their names
        value = ", ".join(names)
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def cmd_conflicts(args: argparse.Namespace) -> int:
    """List the kept conflicts, or settle one."""
    number = args.take or args.dismiss
    if number:
        with open_library(args, write=True) as lib:
            print(lib.take_conflict(number, keep=bool(args.take)))
            left = len(lib.conflicts())
            print(f"{plural(left, 'conflict')} left." if left else "No conflicts left.")
        return EXIT_OK
    with open_library(args, write=False) as lib:
        found = lib.conflicts()
        if args.json:
            write_json([{"number": i, **c.describe(), "title": _title(lib, c.paper)} for i, c in enumerate(found, 1)])
            return EXIT_OK
        if not found:
            print("No conflicts: every device's edits merged cleanly.")
            return EXIT_OK
        for i, c in enumerate(found, 1):
            title = _title(lib, c.paper)
            if c.field:
                print(f"{i}. {c.paper} {_shown(title, 50)}: {c.field}")
                print(f"   shown: {_shown(c.current)}")
                print(f"   kept:  {_shown(c.value)} (device {c.device}, {_when(c.hlc)})")
            else:
                print(f"{i}. {c.paper} {_shown(title, 50)}: deleted on one device while device {c.device} edited it")
        print(
            f"{plural(len(found), 'conflict')}. 'papershelf conflicts --take N' takes the kept value (or brings the "
            "deleted paper back); '--dismiss N' keeps what is shown."
        )
    return EXIT_OK


def _title(lib: Library, pid: str) -> str:
    paper = lib.find(pid)
    if paper is not None:
        return paper.title
    return str(lib.deleted_record(pid).get("title", ""))
