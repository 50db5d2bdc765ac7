"""The command line: the same Library facade the window uses.

Exit codes: 0 done; 1 something could not be done (a file could not be
read, the library is damaged or open elsewhere); 2 the command was wrong
(bad arguments, unknown paper id or list).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
import time
from pathlib import Path

import orjson

from . import __version__, paths
from .core.errors import InvalidValueError, ListingError, NotFoundError, NothingToExportError, PapershelfError
from .core.importers import PASTE_LABEL, parse_bytes
from .core.library import FileReport, Library
from .core.paper import Paper, Status

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class UsageError(Exception):
    """A wrong command: printed as one line, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="papershelf", description="A reading-list manager for research papers. "
                "With no command, opens the Papershelf window.")
    p.add_argument("--version", action="version", version=f"papershelf {__version__}")
    p.add_argument("--install-desktop", action="store_true",
                   help="add Papershelf to the desktop's application menu (and as a handler of .bib/.ris files)")
    p.add_argument("--uninstall-desktop", action="store_true", help="remove what --install-desktop added")
    p.add_argument("--data-dir", metavar="DIR",
                   help=f"library folder (default: ${paths.ENV_DATA_DIR} or {paths.data_dir(None)})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser("import", help="import paper listings (paper-search or Daily Papers text)")
    c.add_argument("files", nargs="*", metavar="FILE", help="'-' reads a pasted listing from standard input")
    c.add_argument("--samples", action="store_true", help="import the sample listings shipped with Papershelf")
    c.add_argument("--as", dest="as_format", choices=("listing",),
                   help="read the files as paper listings even where they only partly look like one")

    c = sub.add_parser("list", help="list papers")
    c.add_argument("--json", action="store_true", help="print a JSON array")
    c.add_argument("--status", type=_status)
    c.add_argument("--tag")
    c.add_argument("--list", dest="list_name", metavar="LIST")
    c.add_argument("--area")

    c = sub.add_parser("show", help="show one paper")
    c.add_argument("id")
    c.add_argument("--json", action="store_true")

    c = sub.add_parser("tag", help="add or remove tags")
    c.add_argument("ids", nargs="+", metavar="ID")
    c.add_argument("--add", action="append", default=[], metavar="TAG")
    c.add_argument("--remove", action="append", default=[], metavar="TAG")

    c = sub.add_parser("status", help="set the reading status: " + ", ".join(s.value for s in Status))
    c.add_argument("args", nargs="+", metavar="ID... STATUS")

    c = sub.add_parser("note", help="set a paper's notes ('-' reads them from standard input)")
    c.add_argument("id")
    c.add_argument("text")

    c = sub.add_parser("title", help="give a paper its real title ('' goes back to the derived one)")
    c.add_argument("id")
    c.add_argument("title")

    c = sub.add_parser("key", help="show or set a paper's citation key ('' lets Papershelf choose again)")
    c.add_argument("id")
    c.add_argument("key", nargs="?")

    c = sub.add_parser("rate", help="rate papers 1-5 (0 clears)")
    c.add_argument("args", nargs="+", metavar="ID... RATING")

    c = sub.add_parser("search", help="full-text search: words, \"phrases\", AND OR NOT, author: tag: "
                       "status: area: list: year:, prefix*, fuzzy~")
    c.add_argument("query", nargs="*", metavar="QUERY")
    c.add_argument("--json", action="store_true")
    c.add_argument("--limit", type=_positive_int, default=20)
    c.add_argument("--status", type=_status)
    c.add_argument("--tag")
    c.add_argument("--list", dest="list_name", metavar="LIST")
    c.add_argument("--area")
    c.add_argument("--sort", choices=("relevance", "added", "title"), default="relevance")

    sub.add_parser("reindex", help="rebuild the search index from the library")

    c = sub.add_parser("export", help="write papers to a BibTeX or BibLaTeX file (all of them, or a "
                       "tag, a list, a status, a search, or ids)")
    g = c.add_mutually_exclusive_group()
    g.add_argument("--tag")
    g.add_argument("--list", dest="list_name", metavar="LIST")
    g.add_argument("--status", type=_status)
    g.add_argument("--query", metavar="QUERY", help="the papers a search finds")
    g.add_argument("--ids", nargs="+", metavar="ID", help="ids or unique id prefixes")
    c.add_argument("--dialect", choices=("bibtex", "biblatex"), default="bibtex",
                   help="bibtex: ASCII for classic BibTeX; biblatex: UTF-8 for biber (default: %(default)s)")
    c.add_argument("-o", "--output", required=True, metavar="FILE", help="'-' writes to standard output")

    sub.add_parser("lists", help="show the reading lists")

    c = sub.add_parser("list-add", help="add papers to a reading list (created if new)")
    c.add_argument("name")
    c.add_argument("ids", nargs="+", metavar="ID")

    c = sub.add_parser("list-remove", help="take papers off a reading list")
    c.add_argument("name")
    c.add_argument("ids", nargs="+", metavar="ID")

    sub.add_parser("recover", help="repair a damaged library: keep every intact line and readable edit, take "
                   "what is missing from the latest good backup, and say exactly what was lost")
    return p


def _positive_int(text: str) -> int:
    if not text.isdecimal() or not text.isascii() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _status(text: str) -> Status:
    try:
        return _parse_status(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parse_status(text: str) -> Status:
    """A status by name, or a UsageError offering the closest names."""
    import difflib
    try:
        return Status.parse(text)
    except ValueError:
        names = [s.value for s in Status]
        near = difflib.get_close_matches(text.strip().lower(), names, n=2, cutoff=0.5)
        hint = ("did you mean " + " or ".join(repr(n) for n in near) + "? " if near else "")
        raise UsageError(f"unknown status {text!r}; {hint}use one of: {', '.join(names)}") from None


# ---- output ---------------------------------------------------------------

def paper_json(paper: Paper, lists: list[str]) -> dict:
    d = paper.to_dict()
    d.pop("fingerprint", None)
    d["lists"] = lists
    return d


def _write_json(data) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.buffer.flush()


def _n(n: int, word: str = "paper") -> str:
    """ "1 paper", "2 papers" """
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _print_table(papers: list[Paper]) -> None:
    width = shutil.get_terminal_size((120, 24)).columns
    title_width = max(30, width - 23)
    for p in papers:
        mark = "~" if p.title_derived else " "
        title = p.title if len(p.title) <= title_width else p.title[: title_width - 1] + "…"
        print(f"{p.id}  {p.status.value:<8} {mark}{title}")
    if any(p.title_derived for p in papers):
        print(f"\n{_n(len(papers))}; ~ marks a title derived from the abstract.")
    else:
        print(f"\n{_n(len(papers))}.")


def _print_paper(p: Paper, lists: list[str]) -> None:
    print(p.title + ("   (title derived from the abstract)" if p.title_derived else ""))
    print(f"id:       {p.id}")
    if p.authors:
        print(f"authors:  {', '.join(p.authors)}")
    if p.area:
        print(f"area:     {p.area}" + (f" · {p.subarea}" if p.subarea else ""))
    for label, value in (("year", p.year), ("venue", p.venue), ("doi", p.doi), ("arXiv", p.arxiv_id)):
        if value:
            print(f"{label + ':':<9} {value}")
    print(f"status:   {p.status.value}")
    if p.tags:
        print(f"tags:     {', '.join(p.tags)}")
    if p.rating:
        print(f"rating:   {'★' * p.rating}{'☆' * (5 - p.rating)}")
    if lists:
        print(f"lists:    {', '.join(lists)}")
    for s in p.sources:
        print(f"source:   {s.file}:{s.line} ({s.format})")
    for link in p.links:
        print(f"link:     {link}")
    print()
    print(p.abstract)
    if p.notes:
        print("\nnotes:\n" + p.notes)


# ---- commands -------------------------------------------------------------

def _open(args, write: bool) -> Library:
    lib = Library.open(paths.data_dir(args.data_dir), readonly=not write)
    for notice in lib.notices:
        print(f"papershelf: note: {notice}", file=sys.stderr)
    return lib


def _ids(lib: Library, refs: list[str]) -> list[str]:
    return [lib.resolve(r) for r in refs]


def cmd_import(args) -> int:
    files = [Path(f) for f in args.files if f != "-"]
    if args.samples:
        files += paths.sample_listings()
    paste = "-" in args.files
    if not files and not paste:
        raise UsageError("name at least one FILE to import (or --samples, or - for standard input)")
    as_listing = args.as_format == "listing"
    with _open(args, write=True) as lib:
        reports = []
        if paste:
            try:
                reports.append(lib.import_parsed(parse_bytes(sys.stdin.buffer.read(), as_listing=as_listing)))
            except ListingError as exc:
                reports.append(FileReport(path=PASTE_LABEL, error=str(exc)))
        reports += lib.import_files(files, as_listing=as_listing)
        for report in reports:
            print(report.summary())
            for problem in report.problems:
                print(f"  note: {problem}")
            if report.unconfirmed:
                print(f"  it would add {_n(len(report.unconfirmed))}, the first: "
                      + "; ".join(report.unconfirmed[:3]))
        print(f"The library now holds {_n(len(lib))}.")
    return EXIT_FAILED if any(not r.ok for r in reports) else EXIT_OK


def cmd_list(args) -> int:
    with _open(args, write=False) as lib:
        papers = lib.query(status=args.status, tag=args.tag, list_name=args.list_name, area=args.area)
        if args.json:
            member = lib.memberships()
            _write_json([paper_json(p, member.get(p.id, [])) for p in papers])
        elif not papers:
            print("No papers match." if len(lib) else
                  "The library is empty. Import listings with 'papershelf import FILE...' "
                  "or the samples with 'papershelf import --samples'.")
        else:
            _print_table(papers)
    return EXIT_OK


def cmd_show(args) -> int:
    with _open(args, write=False) as lib:
        paper = lib.get(lib.resolve(args.id))
        lists = lib.memberships().get(paper.id, [])
        if args.json:
            _write_json(paper_json(paper, lists))
        else:
            _print_paper(paper, lists)
    return EXIT_OK


def cmd_tag(args) -> int:
    if not args.add and not args.remove:
        raise UsageError("say what to do: --add TAG and/or --remove TAG")
    split = lambda values: [t for v in values for t in v.split(",") if t.strip()]
    with _open(args, write=True) as lib:
        ids = _ids(lib, args.ids)
        n = lib.add_tags(ids, split(args.add)) if args.add else 0
        n += lib.remove_tags(ids, split(args.remove)) if args.remove else 0
        print(f"Tags changed on {n} of {_n(len(ids))}." if n else "No tags changed.")
    return EXIT_OK


def cmd_status(args) -> int:
    if len(args.args) < 2:
        raise UsageError("give one or more paper ids, then the status")
    *refs, status = args.args
    status = _parse_status(status)
    with _open(args, write=True) as lib:
        ids = _ids(lib, refs)
        n = lib.set_status(ids, status)
        print(f"{n} of {_n(len(ids))} {'is' if n == 1 else 'are'} now {status.value}.")
    return EXIT_OK


def cmd_note(args) -> int:
    text = sys.stdin.read() if args.text == "-" else args.text
    with _open(args, write=True) as lib:
        pid = lib.resolve(args.id)
        lib.set_notes(pid, text)
        print(f"Notes saved for {pid}." if text else f"Notes cleared for {pid}.")
    return EXIT_OK


def cmd_title(args) -> int:
    with _open(args, write=True) as lib:
        pid = lib.resolve(args.id)
        lib.set_title(pid, args.title)
        paper = lib.get(pid)
        print(f"{pid}: {paper.title}" + ("   (derived from the abstract)" if paper.title_derived else ""))
    return EXIT_OK


def cmd_key(args) -> int:
    from .core.citekeys import assign_keys
    with _open(args, write=args.key is not None) as lib:
        pid = lib.resolve(args.id)
        if args.key is not None:
            try:
                lib.set_citekey(pid, args.key)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        paper = lib.get(pid)
        key = paper.citekey or assign_keys(lib.papers())[pid]
        print(f"{pid}: {key}" + ("" if paper.citekey else "   (not exported yet: fixed at the first export)"))
    return EXIT_OK


def cmd_rate(args) -> int:
    if len(args.args) < 2:
        raise UsageError("give one or more paper ids, then a rating 0-5")
    *refs, rating = args.args
    if not rating.isdecimal() or not rating.isascii() or int(rating) > 5:
        raise UsageError(f"a rating is a number from 1 to 5, or 0 to clear it, not {rating!r}")
    with _open(args, write=True) as lib:
        ids = _ids(lib, refs)
        lib.set_rating(ids, int(rating) or None)
        print(f"Rated {_n(len(ids))}." if int(rating) else f"Cleared the rating of {_n(len(ids))}.")
    return EXIT_OK


def _open_index(lib, quiet: bool = False):
    from .core.index import SearchIndex

    def progress(done: int, total: int) -> None:
        if not quiet and total:
            print(f"\rIndexing {_n(total)} for search… {100 * done // total}%", end="",
                  file=sys.stderr, flush=True)

    ix = SearchIndex(lib)
    ix.open(progress=progress)
    if ix.damaged:      # said even with --json: the index had to be repaired
        print(f"{'' if quiet else chr(13)}The search index in {ix.folder} was damaged; "
              f"rebuilt it ({_n(len(lib))}).", file=sys.stderr)
    elif ix.rebuilt_because and not quiet:
        print(f"\rIndexed {_n(len(lib))} for search ({ix.rebuilt_because}).", file=sys.stderr)
    return ix


_TAG_RE = re.compile(r"<b[^>]*>(.*?)</b>")


def _snippet_text(snippet_html: str, tty: bool) -> str:
    marked = _TAG_RE.sub(lambda m: f"\033[1m{m.group(1)}\033[0m" if tty else f"«{m.group(1)}»", snippet_html)
    return html.unescape(marked)


def cmd_search(args) -> int:
    from .core.errors import SearchIndexDamagedError
    text = " ".join(args.query)
    with _open(args, write=False) as lib:
        ix = _open_index(lib, quiet=args.json or not len(lib))
        try:
            def search():
                return ix.search(text, status=args.status.value if args.status else None, tag=args.tag,
                                 area=args.area, list_name=args.list_name, sort=args.sort, limit=args.limit,
                                 facets=False)
            try:
                res = search()
            except SearchIndexDamagedError:     # marked damaged: opening again rebuilds it, once
                ix.close()
                ix = _open_index(lib, quiet=args.json)
                res = search()
            snippets = ix.snippets(res.ids, text)
        finally:
            ix.close()
        if args.json:
            _write_json([{"id": pid, "title": lib.get(pid).title, "title_derived": lib.get(pid).title_derived,
                          "score": round(res.scores.get(pid, 0.0), 3),
                          "snippet": _snippet_text(snippets.get(pid, ""), False).replace("«", "").replace("»", ""),
                          "snippet_html": snippets.get(pid, "")} for pid in res.ids])
            return EXIT_OK
        if not len(lib):
            print("The library is empty, so nothing matches. Import listings with 'papershelf import FILE...' "
                  "or the samples with 'papershelf import --samples'.")
            return EXIT_OK
        tty = sys.stdout.isatty()
        for pid in res.ids:
            paper = lib.get(pid)
            score = f"{res.scores[pid]:6.2f}" if pid in res.scores else "      "
            print(f"{pid}  {score}  {'~' if paper.title_derived else ' '}{paper.title}")
            if snippets.get(pid):
                print(f"{'':20}{_snippet_text(snippets[pid], tty)}")
        shown = f"showing {len(res.ids)}" if res.total > len(res.ids) else ""
        matched = "1 paper matches" if res.total == 1 else f"{res.total} papers match"
        print(f"\n{matched}" + (f", {shown}" if shown else "") + f" ({res.elapsed_ms:.0f} ms)"
              + ("; the query was read as plain words" if res.fallback else "") + ".")
    return EXIT_OK


def cmd_reindex(args) -> int:
    from .core.index import SearchIndex
    shown = []

    def progress(done: int, total: int) -> None:
        shown.append(done)
        print(f"\rIndexing {_n(total)}… {100 * done // max(total, 1)}%", end="", file=sys.stderr, flush=True)

    with _open(args, write=False) as lib:
        ix = SearchIndex(lib)
        started = time.perf_counter()
        try:
            ix.rebuild(progress=progress)
        except BaseException:
            if shown:           # the error goes on a line of its own
                print(file=sys.stderr)
            raise
        finally:
            ix.close()
        print(f"\rIndexed {_n(len(lib))} in {time.perf_counter() - started:.1f} s.", file=sys.stderr)
    return EXIT_OK


def cmd_lists(args) -> int:
    with _open(args, write=False) as lib:
        lists = lib.lists()
        if not lists:
            print("No reading lists yet. Make one with 'papershelf list-add NAME ID...'.")
        for name, ids in lists.items():
            print(f"{name}  ({_n(len(ids))})")
    return EXIT_OK


def cmd_list_add(args) -> int:
    with _open(args, write=True) as lib:
        ids = _ids(lib, args.ids)
        n = lib.add_to_list(args.name, ids)
        key = lib.create_list(args.name)   # the list's name as stored
        print(f"Added {_n(n)} to {key!r}; it holds {len(lib.list_ids(key))}.")
    return EXIT_OK


def cmd_list_remove(args) -> int:
    with _open(args, write=True) as lib:
        n = lib.remove_from_list(args.name, _ids(lib, args.ids))
        print(f"Took {_n(n)} off {args.name!r}.")
    return EXIT_OK


def cmd_recover(args) -> int:
    print(Library.recover(paths.data_dir(args.data_dir)))
    return EXIT_OK


def _files_to_open(argv: list[str]) -> list[str] | None:
    """File paths given instead of a command, or None."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--data-dir":
            skip = True
            continue
        if a.startswith("--data-dir="):
            continue
        rest.append(a)
    if rest and rest[0] not in COMMANDS and not rest[0].startswith("-") and all(Path(a).exists() for a in rest):
        return rest
    return None


def cmd_desktop(args) -> int:
    from . import desktop
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


def cmd_default(args) -> int:
    """No command: the window. Without a display, a first look at the library instead."""
    files = getattr(args, "open_files", [])
    if _have_display():
        from .gui.app import main as gui
        return gui(args.data_dir, files=files)
    if files:
        with _open(args, write=True) as lib:
            reports = lib.import_files(files)
            for report in reports:
                print(report.summary())
        return EXIT_FAILED if any(not r.ok for r in reports) else EXIT_OK
    with _open(args, write=True) as lib:
        if not len(lib):
            samples = paths.sample_listings()
            print(f"Your library in {lib.folder} is empty; importing the sample library.")
            for report in lib.import_files(samples):
                print("  " + report.summary())
        papers = list(lib.papers())
    print()
    _print_table(papers[:20])
    print(f"\nShowing 20 of {len(papers)}. No display was found for the Papershelf window; "
          "'papershelf --help' lists what the command line can do.")
    return EXIT_OK


def _have_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def cmd_export(args) -> int:
    with _open(args, write=True) as lib:
        if args.ids:
            ids = [lib.resolve(ref) for ref in args.ids]
        elif args.query is not None:
            ix = _open_index(lib, quiet=args.output == "-")
            try:
                ids = ix.search(args.query, limit=None, facets=False).ids
            finally:
                ix.close()
        elif args.tag is not None or args.list_name is not None or args.status:
            tag = lib.tag_named(args.tag) if args.tag is not None else None   # a typo is an error, not 0 papers
            ids = [p.id for p in lib.query(status=args.status, tag=tag, list_name=args.list_name)]
        else:
            ids = lib.ids()
        if not ids:
            raise NothingToExportError(f"{_selection(args)} selects no papers, so nothing was exported"
                                       + ("." if args.output == "-" or not os.path.exists(args.output)
                                          else f"; {args.output} was left as it was."), args.output)
        report, text = lib.export_bibtex(ids, args.output, args.dialect)
    if args.output == "-":
        sys.stdout.write(text)
        print(report.summary(), file=sys.stderr)
    else:
        print(report.summary())
    return EXIT_OK


def _selection(args) -> str:
    if args.query is not None:
        return f"The search {args.query!r}"
    if args.tag is not None:
        return f"The tag {args.tag!r}"
    if args.list_name is not None:
        return f"The reading list {args.list_name!r}"
    if args.status:
        return f"The status {args.status.value!r}"
    return "The library (empty)"


COMMANDS = {
    "import": cmd_import, "list": cmd_list, "show": cmd_show, "tag": cmd_tag,
    "status": cmd_status, "note": cmd_note, "title": cmd_title, "key": cmd_key, "rate": cmd_rate, "lists": cmd_lists,
    "search": cmd_search, "reindex": cmd_reindex, "export": cmd_export, "list-add": cmd_list_add, "list-remove": cmd_list_remove, "recover": cmd_recover,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    files = _files_to_open(argv)
    if files is not None:
        # `papershelf refs.bib` (what a file manager runs): the window, importing them
        args = parser.parse_args([a for a in argv if a not in files])
        args.open_files = files
        handler = cmd_default
    else:
        args = parser.parse_args(argv)
        if args.install_desktop or args.uninstall_desktop:
            return cmd_desktop(args)
        handler = COMMANDS.get(args.command, cmd_default)
    try:
        return handler(args)
    except (UsageError, NotFoundError, InvalidValueError) as exc:
        print(f"papershelf: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PapershelfError as exc:
        print(f"papershelf: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `papershelf list | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def gui_main(argv: list[str] | None = None) -> int:
    """Entry point for launchers (the `papershelf-gui` script; the .desktop
    entry passes it files, %F): the options of `papershelf`, and every other
    argument is a file to open. A file that is missing is reported in the
    window (the import's report), not on a standard error no one sees."""
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
    args = build_parser().parse_args(options)
    if args.install_desktop or args.uninstall_desktop:
        return cmd_desktop(args)
    args.open_files = [f for f in files if f != "-"]
    try:
        return cmd_default(args)
    except PapershelfError as exc:
        print(f"papershelf: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
