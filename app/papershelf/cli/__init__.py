"""The command line: the same Library facade the window uses.

Exit codes: 0 done; 1 something could not be done (a file could not be
read, the library is damaged or open elsewhere); 2 the command was wrong
(bad arguments, unknown paper id or list).

The package never imports the GUI: `papershelf.launcher` (the installed
`papershelf` and `papershelf-gui`, and `python -m papershelf`) decides
whether a start opens the window or runs a command here. Run on its own,
`main` with no command gives the terminal's first look at the library.

    parser.py           the grammar (argparse); file paths given instead of a command
    commands.py         the commands that read and edit the library
    search_commands.py  search, reindex and export (whose --query searches)
    discover.py         suggest: papers for a tag or a list (core/discovery.py's model)
    duplicates.py       possible duplicates: list, merge, keep apart
    files_commands.py   a paper's files: attach, detach, files, open; PDFs and folders for import
    records.py          completing records: set (edit fields), add (by identifier), lookup (online)
    fetch_commands.py   fetch-pdf: papers' PDFs downloaded (arXiv, open-access links) and attached
    sync_commands.py    searches (the saved searches), devices (who writes into a synced library)
    output.py           exit codes, errors as one line, tables, JSON; control characters escaped
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from .output import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    escape_terminal,
    guarded,
    paper_json,
)
from .parser import COMMAND_NAMES, build_parser, parse_args

__all__ = [
    "COMMANDS",
    "COMMAND_NAMES",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "cmd_desktop",
    "escape_terminal",
    "first_look",
    "guarded",
    "main",
    "paper_json",
    "parse_args",
    "run",
    "wants_window",
]


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command's function, its module imported when it runs: `papershelf show` does not pay
    for the modules of thirty other commands (and what they import) at every start."""

    def command(args: argparse.Namespace) -> int:
        function: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return function(args)

    command.__name__ = command.__qualname__ = name
    command.__doc__ = f"{module}.{name}, imported when it runs."
    return command


cmd_desktop = _lazy("commands", "cmd_desktop")
first_look = _lazy("commands", "first_look")

_WHERE = {
    "commands": (
        "import list show tag tags status note title key rate lists list-add list-remove recover delete undo redo"
    ),
    "search_commands": "search reindex export",
    "discover": "suggest",
    "duplicates": "duplicates",
    "conflicts": "conflicts",
    "records": "set add lookup",
    "fetch_commands": "fetch-pdf",
    "sync_commands": "searches devices",
    "files_commands": "attach detach files open",  # a paper's files
}
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    name: _lazy(module, "cmd_" + name.replace("-", "_")) for module, names in _WHERE.items() for name in names.split()
}


def wants_window(args: argparse.Namespace) -> bool:
    """True when these arguments name no command: files given instead of one, or nothing to do but start
    (what opens the window where there is a display)."""
    if args.open_files is not None:
        return True
    return not (args.install_desktop or args.uninstall_desktop) and args.command is None


def run(args: argparse.Namespace) -> int:
    """Run what parsed arguments ask for in the terminal: a command, the desktop entry's (un)installation,
    or with no command the first look at the library."""
    if args.open_files is None:
        if args.install_desktop or args.uninstall_desktop:
            return cmd_desktop(args)
        handler = COMMANDS.get(args.command, first_look)
    else:
        handler = first_look
    return guarded(handler, args)


def main(argv: list[str] | None = None) -> int:
    """`papershelf ARGV` in the terminal; with no command, the first look at the library (the launcher
    opens the window instead where there is a display)."""
    escape_terminal()  # before argparse, whose errors quote the arguments
    return run(parse_args(sys.argv[1:] if argv is None else list(argv)))
