"""The commands that read and edit the library: one function per command.

Each takes the parsed arguments and returns the exit code; what goes wrong
is raised (UsageError, or the library's own errors) and `output.guarded`
turns it into a message. The search commands are in search_commands.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import paths
from ..core.citation import find_by_key
from ..core.errors import ListingError
from ..core.library import PASTE_LABEL, FileReport, Library
from ..core.paper import normalize_tag
from ..core.query import sort_ids
from .output import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    paper_json,
    plural,
    print_named,
    print_paper,
    print_table,
    write_json,
    write_json_array,
)
from .parser import parse_status


def open_library(args: argparse.Namespace, write: bool, lazy: bool = False) -> Library:
    """The library of `--data-dir` (or the default folder), its notices said on stderr. `lazy`
    (read-only commands that read a few papers): through this machine's read view of it."""
    lib = Library.open(paths.data_dir(args.data_dir), readonly=not write, lazy=lazy and not write)
    for notice in lib.notices:
        print(f"papershelf: note: {notice}", file=sys.stderr)
    return lib


def resolve_ids(lib: Library, refs: list[str]) -> list[str]:
    """Paper ids from ids or unique id prefixes (NotFoundError for one that names no paper)."""
    return [lib.resolve(r) for r in refs]


def cmd_import(args: argparse.Namespace) -> int:
    """`import FILE... | - | --samples`: each file's report, then the library's size; 1 if a file failed."""
    files = [Path(f) for f in args.files if f != "-"]
    if args.samples:
        files += paths.sample_listings()
    paste = "-" in args.files
    if not files and not paste:
        raise UsageError("name at least one FILE to import (or --samples, or - for standard input)")
    as_listing = args.as_format == "listing"
    from .files_commands import complete_online, import_pdf_paths, is_pdf_target  # PDFs and folders: one paper each

    pdfs = [f for f in files if is_pdf_target(f)]
    files = [f for f in files if f not in pdfs]
    pdf_report = None
    with open_library(args, write=True) as lib:
        reports = []
        if paste:
            reports.append(import_paste(lib, sys.stdin.buffer.read(), as_listing, args.keywords_as_tags))
        if pdfs:
            pdf_report = import_pdf_paths(lib, pdfs)
        reports += lib.import_files(files, as_listing=as_listing, keywords_as_tags=args.keywords_as_tags)
        for report in reports:
            print(report.summary())
            for problem in report.problems:
                print(f"  note: {problem}")
            for merge in report.merges:  # both keys: the entry's and the paper's (issue 13 item 4)
                print(f"  merged: {merge}")
            if report.unconfirmed:
                print(
                    f"  it would add {plural(len(report.unconfirmed))}, the first: " + "; ".join(report.unconfirmed[:3])
                )
        print(f"The library now holds {plural(len(lib))}.")
    failed = any(not r.ok for r in reports) or (pdf_report is not None and not pdf_report.ok)
    if pdf_report is not None and args.online and pdf_report.added:
        failed = complete_online(args, pdf_report.added) != EXIT_OK or failed
    return EXIT_FAILED if failed else EXIT_OK


def import_paste(lib: Library, data: bytes, as_listing: bool, keywords_as_tags: bool = False) -> FileReport:
    """Import a paste (standard input) in whatever encoding it came; one that cannot be imported is a report
    with its error, as a file's is (text that only partly looks like a listing too: its error says to use
    --as listing)."""
    try:
        return lib.import_text(data, as_listing=as_listing, keywords_as_tags=keywords_as_tags)
    except ListingError as exc:
        return FileReport(path=PASTE_LABEL, error=str(exc))


def cmd_list(args: argparse.Namespace) -> int:
    """`list`: the papers matching the filters, as a table or JSON."""
    streamed = args.json and not args.sort and not args.reverse  # in library order: one paper at a time
    with open_library(args, write=False, lazy=streamed) as lib:
        tag = lib.tag_named(args.tag) if args.tag is not None else None  # a typo is an error, not 0 papers
        if streamed:
            member = lib.memberships()
            found = lib.matching(status=args.status, tag=tag, list_name=args.list_name, area=args.area)
            write_json_array(paper_json(p, member.get(p.id, [])) for p in found)
            return EXIT_OK
        papers = lib.query(status=args.status, tag=tag, list_name=args.list_name, area=args.area)
        if args.sort:
            by_id = {p.id: p for p in papers}
            papers = [by_id[pid] for pid in sort_ids(by_id, by_id.get, args.sort, args.reverse)]
        elif args.reverse:
            papers.reverse()
        if args.json:
            member = lib.memberships()
            write_json([paper_json(p, member.get(p.id, [])) for p in papers])
        elif not papers:
            print(
                "No papers match."
                if len(lib)
                else "The library is empty. Import listings with 'papershelf import FILE...' "
                "or the samples with 'papershelf import --samples'."
            )
        else:
            print_table(papers, read_dates=args.sort == "read")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """`show ID`: everything about one paper (`--bibtex`: its entry, as an export writes it)."""
    # an entry as an export writes it needs the whole library (keys, crossrefs): the full load
    with open_library(args, write=False, lazy=not args.bibtex) as lib:
        paper = lib.get(lib.resolve(args.id))
        if args.bibtex:
            # the key an export would give it, not pinned: showing an entry is no export
            sys.stdout.write(lib.bibtex_entries([paper.id], args.dialect, pin=False))
            return EXIT_OK
        lists = lib.memberships().get(paper.id, [])
        if args.json:
            write_json(paper_json(paper, lists))
        else:
            print_paper(paper, lists, parent=lambda key: find_by_key(lib.papers(), key))
            from .files_commands import print_files

            print_files(lib, paper.id, heading=True)
    return EXIT_OK


def cmd_tag(args: argparse.Namespace) -> int:
    """`tag ID... --add TAG --remove TAG` (a value may hold several tags, comma-separated)."""
    if not args.add and not args.remove:
        raise UsageError("say what to do: --add TAG and/or --remove TAG")

    def split(values: list[str]) -> list[str]:
        return [t for v in values for t in v.split(",") if t.strip()]

    with open_library(args, write=True) as lib:
        ids = resolve_ids(lib, args.ids)
        gone = [lib.tag_named(t) for t in split(args.remove)]  # a typo is an error, not "No tags changed"
        n = lib.add_tags(ids, split(args.add)) if args.add else 0
        n += lib.remove_tags(ids, gone) if gone else 0
        print(f"Tags changed on {n} of {plural(len(ids))}." if n else "No tags changed.")
    return EXIT_OK


def cmd_tags(args: argparse.Namespace) -> int:
    """`tags`: the tags and their sizes; `--delete TAG...` takes tags off every paper; `--rename OLD NEW`;
    `--drop-keyword-tags` takes off the tags that are only a paper's record keywords."""
    write = bool(args.delete or args.rename or args.drop_keyword_tags)
    with open_library(args, write=write) as lib:
        if args.delete:
            names = list(dict.fromkeys(lib.tag_named(t) for t in args.delete))  # every name checked first
            for name in names:
                using = lib.saved_searches_using(name)
                n = lib.delete_tag(name)
                print(f"Deleted the tag {name!r} from {plural(n)}.")
                if using:
                    print(
                        f"  The saved search{'es' if len(using) > 1 else ''} {', '.join(map(repr, using))} "
                        "used it and now find nothing by it; change or delete them in the window."
                    )
        elif args.rename:
            old, new = lib.tag_named(args.rename[0]), args.rename[1]
            using = lib.saved_searches_using(old)
            n = lib.rename_tag(old, new)
            print(f"Renamed the tag {old!r} to {normalize_tag(new)!r} on {plural(n)}.")
            if using:
                print(f"  The saved searches that use it follow: {', '.join(map(repr, using))}.")
        elif args.drop_keyword_tags:
            before = lib.tag_counts()
            n = lib.drop_keyword_tags()
            gone = len(set(before) - set(lib.tag_counts()))
            print(f"Took keyword tags off {plural(n)}; {plural(gone, 'tag')} no paper has any more.")
        else:
            by_use = sorted(lib.tag_counts().items(), key=lambda kv: (-kv[1], kv[0]))
            print_named(
                ((name, plural(n)) for name, n in by_use),
                "No tags yet. Tag papers with 'papershelf tag ID... --add TAG'.",
            )
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """`status ID... STATUS`."""
    if len(args.args) < 2:
        raise UsageError("give one or more paper ids, then the status")
    *refs, name = args.args
    status = parse_status(name)
    with open_library(args, write=True) as lib:
        ids = resolve_ids(lib, refs)
        n = lib.set_status(ids, status)
        print(f"{n} of {plural(len(ids))} {'is' if n == 1 else 'are'} now {status.value}.")
    return EXIT_OK


def cmd_note(args: argparse.Namespace) -> int:
    """`note ID TEXT` ('-' reads the notes from standard input; '' clears them)."""
    text = sys.stdin.read() if args.text == "-" else args.text
    with open_library(args, write=True) as lib:
        pid = lib.resolve(args.id)
        lib.set_notes(pid, text)
        print(f"Notes saved for {pid}." if text else f"Notes cleared for {pid}.")
    return EXIT_OK


def cmd_title(args: argparse.Namespace) -> int:
    """`title ID TITLE` ('' goes back to the title derived from the abstract)."""
    with open_library(args, write=True) as lib:
        pid = lib.resolve(args.id)
        lib.set_title(pid, args.title)
        paper = lib.get(pid)
        print(f"{pid}: {paper.title}" + ("   (derived from the abstract)" if paper.title_derived else ""))
    return EXIT_OK


def cmd_key(args: argparse.Namespace) -> int:
    """`key ID [KEY]`: show a paper's citation key, or set it ('' lets Papershelf choose again)."""
    with open_library(args, write=args.key is not None) as lib:
        pid = lib.resolve(args.id)
        if args.key is not None:
            try:
                lib.set_citekey(pid, args.key)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        paper = lib.get(pid)
        # the key an export would give it, not pinned: showing a key is no export
        key = paper.citekey or lib.citation_keys([pid], pin=False)[pid]
        print(f"{pid}: {key}" + ("" if paper.citekey else "   (not exported yet: fixed at the first export)"))
    return EXIT_OK


def cmd_rate(args: argparse.Namespace) -> int:
    """`rate ID... RATING` (1-5; 0 clears)."""
    if len(args.args) < 2:
        raise UsageError("give one or more paper ids, then a rating 0-5")
    *refs, rating = args.args
    if not rating.isdecimal() or not rating.isascii() or int(rating) > 5:
        raise UsageError(f"a rating is a number from 1 to 5, or 0 to clear it, not {rating!r}")
    with open_library(args, write=True) as lib:
        ids = resolve_ids(lib, refs)
        lib.set_rating(ids, int(rating) or None)
        print(f"Rated {plural(len(ids))}." if int(rating) else f"Cleared the rating of {plural(len(ids))}.")
    return EXIT_OK


def cmd_lists(args: argparse.Namespace) -> int:
    """`lists`: the reading lists and their sizes."""
    with open_library(args, write=False) as lib:
        print_named(
            ((name, plural(len(ids))) for name, ids in lib.lists().items()),
            "No reading lists yet. Make one with 'papershelf list-add NAME ID...'.",
        )
    return EXIT_OK


def cmd_list_add(args: argparse.Namespace) -> int:
    """`list-add NAME ID...` (the list is created if new)."""
    with open_library(args, write=True) as lib:
        ids = resolve_ids(lib, args.ids)
        n = lib.add_to_list(args.name, ids)
        key = lib.create_list(args.name)  # the list's name as stored
        print(f"Added {plural(n)} to {key!r}; it holds {len(lib.list_ids(key))}.")
    return EXIT_OK


def cmd_list_remove(args: argparse.Namespace) -> int:
    """`list-remove NAME ID...`."""
    with open_library(args, write=True) as lib:
        n = lib.remove_from_list(args.name, resolve_ids(lib, args.ids))
        print(f"Took {plural(n)} off {args.name!r}.")
    return EXIT_OK


def cmd_recover(args: argparse.Namespace) -> int:
    """`recover`: repair a damaged library and say what was kept and lost."""
    print(Library.recover(paths.data_dir(args.data_dir)))
    return EXIT_OK


def cmd_desktop(args: argparse.Namespace) -> int:
    """`--install-desktop` / `--uninstall-desktop`: the application menu's entry and icon."""
    from .. import desktop

    if args.uninstall_desktop:
        removed = desktop.uninstall()
        print("Removed " + ", ".join(map(str, removed)) if removed else "Nothing to remove.")
        return EXIT_OK
    try:
        written = desktop.install()
    except OSError as exc:
        print(f"papershelf: could not install the desktop entry: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print("Installed the desktop entry and icon:\n  " + "\n  ".join(map(str, written)))
    print("Papershelf is now in the application menu; 'papershelf --uninstall-desktop' removes it.")
    return EXIT_OK


def first_look(args: argparse.Namespace) -> int:
    """No command and no window (no display): import the files given instead of a command, or else a first
    look at the library (never changed unasked: how to add the samples is said, not done)."""
    files = args.open_files or []
    if files:
        with open_library(args, write=True) as lib:
            reports = lib.import_files(files)
            for report in reports:
                print(report.summary())
        return EXIT_FAILED if any(not r.ok for r in reports) else EXIT_OK
    choice = paths.library_choice(args.data_dir)
    print(f"Library: {choice.describe()}")
    if not choice.folder.exists():  # a first look creates nothing
        papers = []
    else:
        with open_library(args, write=False) as lib:
            papers = list(lib.papers())
    if not papers:
        print(
            "The library is empty. Import listings with 'papershelf import FILE...', "
            "or the sample library with 'papershelf import --samples'."
        )
    else:
        print()
        print_table(papers[:20])
        print(f"\nShowing {min(20, len(papers))} of {len(papers)}.")
    print("No display was found for the Papershelf window; 'papershelf --help' lists what the command line can do.")
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """`delete ID... [--yes]`: remove papers (and their places on reading lists), after asking on a
    terminal; elsewhere --yes is required."""
    with open_library(args, write=True) as lib:
        ids = list(dict.fromkeys(resolve_ids(lib, args.ids)))  # an unknown id: exit 2, nothing deleted
        if not args.yes:
            if not (sys.stdin.isatty() and sys.stderr.isatty()):
                raise UsageError(f"deleting {plural(len(ids))} needs confirmation: add --yes (no terminal to ask on)")
            # the question goes to the terminal (stderr), never into a redirected standard output
            for pid in ids:
                print(f"  {pid}  {lib.get(pid).title}", file=sys.stderr)
            print(f"Delete {plural(len(ids))}? [y/N] ", end="", file=sys.stderr, flush=True)
            line = sys.stdin.readline()
            if not line.endswith("\n"):  # Ctrl+D: end the question's line
                print(file=sys.stderr)
            if line.strip().lower() not in ("y", "yes"):
                print("Nothing deleted.", file=sys.stderr)
                return EXIT_OK
        titles = {pid: lib.get(pid).title for pid in ids}
        n = lib.delete_papers(ids)
        for pid in ids:
            print(f"Deleted {pid}  {titles[pid]}")
        print(f"Deleted {plural(n)}; the library now holds {plural(len(lib))}.")
    return EXIT_OK


def cmd_undo(args: argparse.Namespace) -> int:
    """`undo`: take back this machine's last edit; `undo --list`: what can be undone and redone."""
    if args.list:
        with open_library(args, write=False) as lib:
            seen = len(lib.notices)
            undo, redo = lib.undo_history()
            _say_notices(lib.notices[seen:])  # what reading the history found
        if not undo and not redo:
            print("Nothing to undo.")
        for title, labels in (("Can be undone, newest first:", undo), ("Can be redone, newest first:", redo)):
            if labels:
                print(title)
                for n, label in enumerate(labels, 1):
                    print(f"  {n:3}. {label}")
        return EXIT_OK
    return _undo_or_redo(args, redo=False)


def _say_notices(notices: list[str]) -> None:
    for notice in notices:
        print(f"papershelf: note: {notice}", file=sys.stderr)


def cmd_redo(args: argparse.Namespace) -> int:
    """`redo`: make the edit undone last again."""
    return _undo_or_redo(args, redo=True)


def _undo_or_redo(args: argparse.Namespace, redo: bool) -> int:
    with open_library(args, write=True) as lib:
        seen = len(lib.notices)
        done = lib.redo() if redo else lib.undo()
        _say_notices(lib.notices[seen:])
    if done is None:
        print(f"papershelf: nothing to {'redo' if redo else 'undo'}.", file=sys.stderr)
        return EXIT_FAILED
    print(done.message + ".")
    return EXIT_OK
