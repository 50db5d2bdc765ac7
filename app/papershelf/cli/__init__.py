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
import sys
from collections.abc import Callable

from .commands import (
    cmd_delete,
    cmd_desktop,
    cmd_import,
    cmd_key,
    cmd_list,
    cmd_list_add,
    cmd_list_remove,
    cmd_lists,
    cmd_note,
    cmd_rate,
    cmd_recover,
    cmd_redo,
    cmd_show,
    cmd_status,
    cmd_tag,
    cmd_tags,
    cmd_title,
    cmd_undo,
    first_look,
)
from .conflicts import cmd_conflicts
from .discover import cmd_suggest
from .duplicates import cmd_duplicates
from .fetch_commands import cmd_fetch_pdf
from .files_commands import cmd_attach, cmd_detach, cmd_files, cmd_open
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
from .records import cmd_add, cmd_lookup, cmd_set
from .search_commands import cmd_export, cmd_reindex, cmd_search
from .sync_commands import cmd_devices, cmd_searches

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

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "import": cmd_import,
    "list": cmd_list,
    "show": cmd_show,
    "tag": cmd_tag,
    "tags": cmd_tags,
    "status": cmd_status,
    "note": cmd_note,
    "title": cmd_title,
    "key": cmd_key,
    "rate": cmd_rate,
    "lists": cmd_lists,
    "search": cmd_search,
    "suggest": cmd_suggest,
    "reindex": cmd_reindex,
    "export": cmd_export,
    "list-add": cmd_list_add,
    "list-remove": cmd_list_remove,
    "recover": cmd_recover,
    "duplicates": cmd_duplicates,
    "conflicts": cmd_conflicts,
    "set": cmd_set,
    "add": cmd_add,
    "lookup": cmd_lookup,
    "fetch-pdf": cmd_fetch_pdf,
    "delete": cmd_delete,
    "undo": cmd_undo,
    "redo": cmd_redo,
    "searches": cmd_searches,
    "devices": cmd_devices,
    # a paper's files
    "attach": cmd_attach,
    "detach": cmd_detach,
    "files": cmd_files,
    "open": cmd_open,
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
