"""The commands of a library used on several machines: `searches` (the saved searches,
which every device merges) and `devices` (which devices wrote into the library)."""

from __future__ import annotations

import argparse
import time

from .. import paths
from ..core.library import library_devices
from ..core.paper import Status
from .commands import open_library
from .output import EXIT_OK, UsageError, plural, print_named


def cmd_searches(args: argparse.Namespace) -> int:
    """`searches`: the saved searches; `--save NAME QUERY...` (with filters), `--rename OLD NEW`, `--delete NAME`."""
    status: Status | None = args.status
    filters = {"status": status.value if status else None, "tag": args.tag, "list": args.list_name, "area": args.area}
    if args.save is None and (args.query or any(v is not None for v in filters.values())):
        raise UsageError("words and filters are what --save NAME saves; give --save NAME with them")
    with open_library(args, write=bool(args.save is not None or args.rename or args.delete)) as lib:
        if args.save is not None:
            name = lib.save_search(args.save, " ".join(args.query), filters)
            print(f"Saved the search {name!r}: {lib.saved_search(name).describe()}.")
        elif args.rename:
            old = lib.saved_search(args.rename[0]).name
            print(f"Renamed the saved search {old!r} to {lib.rename_saved_search(old, args.rename[1])!r}.")
        elif args.delete is not None:
            name = lib.saved_search(args.delete).name
            lib.delete_saved_search(name)
            print(f"Deleted the saved search {name!r}.")
        else:
            print_named(
                ((name, search.describe()) for name, search in lib.saved_searches().items()),
                "No saved searches yet. Save one with 'papershelf searches --save NAME WORDS...'.",
            )
    return EXIT_OK


def cmd_devices(args: argparse.Namespace) -> int:
    """`devices`: each device whose folder is in the library's devices/, this one marked."""
    folder = paths.data_dir(args.data_dir)
    if not folder.is_dir():
        raise UsageError(f"There is no library in {folder}; give the library folder with --data-dir.")
    found = library_devices(folder)
    if not found:
        print(f"No device has written into the library in {folder} yet (it has no devices/ folder).")
        return EXIT_OK
    print(f"{plural(len(found), 'device')} in {folder / 'devices'}:")
    for d in found:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(d.changed)) if d.changed is not None else "never"
        parts = [
            d.id + ("  (this device)" if d.this else ""),
            f"on {d.host}" if d.host else "machine unknown",
            plural(d.edits, "edit") + " in its journal" if d.edits is not None else "no journal",
            f"last change {when}",
            "files complete" if d.complete else "incomplete: " + "; ".join(d.problems),
        ]
        print("  " + " · ".join(parts))
    return EXIT_OK
