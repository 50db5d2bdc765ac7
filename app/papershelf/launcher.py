"""Window or terminal: where every start of Papershelf goes first.

The installed `papershelf` and `papershelf-gui` scripts and `python -m
papershelf` come here. A command runs in the terminal (papershelf.cli,
which never imports the GUI); no command, or files given instead of one
(what a file manager runs), opens the window where there is a display, and
without one the terminal imports those files or shows a first look at the
library. Only this module and the GUI itself import papershelf.gui, and
only when the window opens: a command does not pay for Qt at start.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import cli
from .core.errors import PapershelfError


def have_display() -> bool:
    """Whether a window can open: a Qt platform chosen, or on Linux and the BSDs an X11 or Wayland display."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def open_window(args: argparse.Namespace) -> int:
    """The window on the library of `--data-dir`, importing the files given (a second start on the same
    library hands them to the window already running)."""
    from .gui.app import main as gui

    return gui(args.data_dir, files=args.open_files or [])


def start(args: argparse.Namespace) -> int:
    """No command: the window, or without a display the terminal's first look (or import of the files)."""
    return open_window(args) if have_display() else cli.first_look(args)


def main(argv: list[str] | None = None) -> int:
    """`papershelf ARGV`: a command in the terminal; with no command (or files instead), the window."""
    cli.escape_terminal()  # before argparse, whose errors quote the arguments
    args = cli.parse_args(sys.argv[1:] if argv is None else list(argv))
    if cli.wants_window(args) and have_display():
        return cli.guarded(open_window, args)
    return cli.run(args)


def gui_main(argv: list[str] | None = None) -> int:
    """Entry point for launchers (the `papershelf-gui` script; the .desktop
    entry passes it files, %F): the options of `papershelf`, and every other
    argument is a file to open. A file that is missing is reported in the
    window (the import's report), not on a standard error no one sees."""
    cli.escape_terminal()
    argv = sys.argv[1:] if argv is None else list(argv)
    options, files, skip, only_files = [], [], False, False
    for a in argv:
        if skip:
            options.append(a)
            skip = False
        elif only_files or not a.startswith("-") or a == "-":
            files.append(a)
        elif a == "--":
            only_files = True
        else:
            options.append(a)
            skip = a == "--data-dir"
    if not files:
        return main(options)
    args = cli.build_parser().parse_args(options)
    if args.install_desktop or args.uninstall_desktop:
        return cli.cmd_desktop(args)
    args.open_files = [f for f in files if f != "-"]
    try:
        return start(args)
    except PapershelfError as exc:
        print(f"papershelf: {exc}", file=sys.stderr)
        return cli.EXIT_FAILED
    except KeyboardInterrupt:
        return cli.EXIT_INTERRUPTED
