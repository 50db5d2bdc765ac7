"""The commands that use the search index: search, reindex, and export (whose --query and --saved search).

They ask the library (`open_index`, `search`, `snippets`, `reindex`), which
owns the index; the index's code (Whoosh) is loaded only when one of them runs.
`reindex` first reads the text of the attached PDFs not read yet (`extract_fulltext`);
`search` only reads: it says how many PDFs are not searchable yet.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from collections.abc import Mapping
from typing import Any

from .. import paths
from ..core.errors import ExportError, NothingToExportError, StoreLockedError, StoreWriteError
from ..core.library import Answer, Library, Query, SavedSearch
from .commands import open_library
from .output import EXIT_OK, UsageError, plural, print_over, print_snippet, snippet_text, write_json, write_raw


def open_index(lib: Library, quiet: bool = False) -> None:
    """Open the library's search index, brought up to date; its progress and any rebuild said on stderr
    (damage even when `quiet`: the index had to be repaired)."""

    def progress(done: int, total: int) -> None:
        if not quiet and total:
            print_over(f"Indexing {plural(total)} for search… {100 * done // total}%", end="")

    lib.open_index(progress)
    status = lib.index_status
    if status.damaged:  # said even with --json: the index had to be repaired
        said = f"The search index in {status.folder} was damaged; rebuilt it ({plural(len(lib))})."
        if quiet:
            print(said, file=sys.stderr)
        else:
            print_over(said)  # over the progress line, if there was one
    elif status.rebuilt_because and not quiet:
        print_over(f"Indexed {plural(len(lib))} for search ({status.rebuilt_because}).")


def search(lib: Library, query: Query, quiet: bool = False, quiet_again: bool | None = None) -> Answer:
    """Open the index and answer `query` from it. An index the search finds damaged is opened again, which
    rebuilds it (said on stderr, progress too unless `quiet_again`, by default `quiet`), and asked once more.
    The index stays open for snippets: `lib.close_index()` when done."""
    open_index(lib, quiet)
    # nothing was edited since the index opened: no writes to wait for
    answer = lib.search(query, wait=False)
    if answer.index_damaged:  # answered from titles meanwhile: opening again rebuilds it, once
        open_index(lib, quiet if quiet_again is None else quiet_again)
        answer = lib.search(query, wait=False)
    return answer


def saved_search(lib: Library, name: str) -> SavedSearch:
    """The saved search called `name` (NotFoundError naming the closest); a damaged
    saved-searches file said on stderr, as the library's other notices are."""
    before = len(lib.notices)
    try:
        return lib.saved_search(name)
    finally:
        for notice in lib.notices[before:]:
            print(f"papershelf: note: {notice}", file=sys.stderr)


def cmd_search(args: argparse.Namespace) -> int:
    """`search QUERY...` (or `--saved NAME`): the best matches with a snippet each, or JSON."""
    text = " ".join(args.query)
    given = {
        "status": args.status.value if args.status else None,
        "tag": args.tag,
        "area": args.area,
        "list_name": args.list_name,
    }
    with open_library(args, write=False, lazy=True) as lib:
        if args.tag is not None:  # a typo is an error, not "0 papers match"
            given["tag"] = lib.tag_named(args.tag)
        if args.saved is not None:  # its words and filters; words and options given add to them
            saved = saved_search(lib, args.saved)
            text = f"({saved.text}) {text}" if saved.text.strip() and text.strip() else saved.text or text
            given = {**saved.filters, **{k: v for k, v in given.items() if v is not None}}
        return _search(args, lib, text, given)


def _search(args: argparse.Namespace, lib: Library, text: str, filters: Mapping[str, str | None]) -> int:
    query = Query(
        text,
        status=filters.get("status"),
        tag=filters.get("tag"),
        area=filters.get("area"),
        list_name=filters.get("list_name"),
        sort=args.sort,
        limit=args.limit,
        facets=False,  # the command line shows none
        highlight=False,  # snippets mark the words matched
        suggest=False,  # the command line offers no "did you mean"
        index_order=True,
    )
    res = search(lib, query, quiet=args.json or not len(lib), quiet_again=args.json)
    snippets = lib.snippets(res.ids, text)
    lib.close_index()
    unread = lib.pdfs_to_read() if text.strip() else 0
    if unread:  # search only reads: reindex reads the PDFs
        print(
            f"papershelf: note: {plural(unread, 'PDF')} {'is' if unread == 1 else 'are'} not searchable yet; "
            "run 'papershelf reindex' to read them.",
            file=sys.stderr,
        )
    if args.json:
        write_json(
            [
                {
                    "id": pid,
                    "title": lib.get(pid).title,
                    "title_derived": lib.get(pid).title_derived,
                    "score": round(res.scores.get(pid, 0.0), 3),
                    "fulltext_only": pid in res.fulltext_only,  # matched only in its PDFs' text
                    "snippet": snippet_text(snippets.get(pid, "")).replace("«", "").replace("»", ""),
                    "snippet_html": snippets.get(pid, ""),
                }
                for pid in res.ids
            ]
        )
        return EXIT_OK
    if not len(lib):
        print(
            "The library is empty, so nothing matches. Import listings with 'papershelf import FILE...' "
            "or the samples with 'papershelf import --samples'."
        )
        return EXIT_OK
    tty = sys.stdout.isatty()
    for pid in res.ids:
        paper = lib.get(pid)
        score = f"{res.scores[pid]:6.2f}" if pid in res.scores else "      "
        in_pdf = "  [in the PDF]" if pid in res.fulltext_only else ""
        print(f"{pid}  {score}  {'~' if paper.title_derived else ' '}{paper.title}{in_pdf}")
        if snippets.get(pid):
            print_snippet(" " * 20, snippets[pid], tty)
    shown = f"showing {len(res.ids)}" if res.total > len(res.ids) else ""
    matched = "1 paper matches" if res.total == 1 else f"{res.total} papers match"
    print(
        f"\n{matched}"
        + (f", {shown}" if shown else "")
        + f" ({res.elapsed_ms:.0f} ms)"
        + ("; the query was read as plain words" if res.fallback else "")
        + "."
    )
    return EXIT_OK


def read_pdfs(lib: Library) -> None:
    """Read the text of the attached PDFs not read yet, its progress and what it found on stderr."""
    if not lib.pdfs_to_read():
        return

    def progress(done: int, total: int) -> None:
        print_over(f"Reading PDFs: {done} of {total}…", end="")

    try:
        found = lib.extract_fulltext(progress)
    except BaseException:
        print(file=sys.stderr)  # the error (or Ctrl+C's message) on a line of its own
        raise
    print_over(found.summary())


def cmd_reindex(args: argparse.Namespace) -> int:
    """`reindex`: read the attached PDFs' text not read yet, then rebuild the search index from
    the library, progress on stderr."""
    started: list[float] = []  # the clock starts at the first progress: loading the index's code is no indexing

    def progress(done: int, total: int) -> None:
        if not started:
            started.append(time.perf_counter())
        print_over(f"Indexing {plural(total)}… {100 * done // max(total, 1)}%", end="")

    with open_library(args, write=False) as lib:
        read_pdfs(lib)
        try:
            lib.reindex(progress)
        except BaseException:
            if started:  # the error goes on a line of its own
                print(file=sys.stderr)
            raise
        seconds = time.perf_counter() - started[0] if started else 0.0
        print_over(f"Indexed {plural(len(lib))} in {seconds:.1f} s.")
    return EXIT_OK


def export_format(args: argparse.Namespace) -> str:
    """What `export` writes: "bibtex", "biblatex" or "ris" (--format, or --dialect, or RIS for a
    .ris output); UsageError when the options disagree."""
    fmt, dialect = args.format, args.dialect
    if fmt and dialect and fmt != dialect:
        why = "--dialect is for BibTeX output" if fmt == "ris" else "they disagree"
        raise UsageError(f"--format {fmt} and --dialect {dialect} cannot go together ({why}); give one of them")
    if fmt or dialect:
        return str(fmt or dialect)
    return "ris" if str(args.output).lower().endswith(".ris") else "bibtex"


def cmd_export(args: argparse.Namespace) -> int:
    """`export -o FILE`: all papers, or a tag, a list, a status, a search or ids, as BibTeX, BibLaTeX or RIS."""
    fmt = export_format(args)  # a wrong option before the library is touched
    if fmt == "ris" and args.files:
        raise UsageError("--files is for BibTeX output (RIS has no file field Papershelf writes)")
    kept = _kept_export(args, fmt)
    if kept is not None:
        return kept
    with _library_to_export(args) as lib:
        if args.ids:
            ids = [lib.resolve(ref) for ref in args.ids]
        elif args.query is not None or args.saved is not None:
            if args.saved is not None:
                query = saved_search(lib, args.saved).query(facets=False, highlight=False, suggest=False)
            else:
                query = Query(args.query, facets=False, highlight=False, suggest=False, index_order=True)
            ids = search(lib, query, quiet=args.output == "-").ids
            lib.close_index()  # before the export: its pinned keys are caught up when the index next opens
        elif args.tag is not None or args.list_name is not None or args.status:
            tag = lib.tag_named(args.tag) if args.tag is not None else None  # a typo is an error, not 0 papers
            ids = [p.id for p in lib.query(status=args.status, tag=tag, list_name=args.list_name)]
        else:
            ids = lib.ids()
        if not ids:
            raise NothingToExportError(
                f"{_selection(args)} selects no papers, so nothing was exported"
                + (
                    "."
                    if args.output == "-" or not os.path.exists(args.output)
                    else f"; {args.output} was left as it was."
                ),
                args.output,
            )
        if args.output != "-" and not args.force:  # after the selection's own errors
            _check_replaceable(args.output)
        # standard output gets the text piece by piece, as it is rendered: the exporters write
        # no control character but a RIS line's own CRLF
        if fmt == "ris":
            done: Any = lib.export_ris(ids, args.output, out=write_raw)[0]
        else:
            done = lib.export_bibtex(ids, args.output, fmt, files=args.files, out=write_raw)[0]
    return _said(args, done.summary(), _fragments_warning(done, len(ids)))


def _kept_export(args: argparse.Namespace, fmt: str) -> int | None:
    """An export of the whole library (no selection, no --files) when the library is as the last
    such export found it: its entries again from this machine's export cache, without opening
    the library (Library.kept_export); None otherwise."""
    if args.ids or args.query is not None or args.saved is not None or args.files:
        return None
    if args.tag is not None or args.list_name is not None or args.status:
        return None
    kept = Library.kept_export(paths.data_dir(args.data_dir), fmt)
    if kept is None:
        return None
    with kept:
        if args.output != "-" and not args.force:
            _check_replaceable(args.output)
        if args.output == "-" and not kept.readable():
            return None  # a damaged cache: the export as usual
        try:
            report = kept.write(args.output, out=write_raw)[0]
        except sqlite3.Error:
            if args.output == "-":  # damaged after it was read through: what went out cannot be taken back
                raise ExportError(
                    "The export cache of this machine failed while the export was written; run the export again."
                ) from None
            return None  # the file was not replaced: the export as usual
    return _said(args, report.summary(), _fragments_warning(report, report.entries))


def _said(args: argparse.Namespace, summary: str, warning: str) -> int:
    """Say what an export wrote (on stderr when the export went to standard output)."""
    if args.output == "-":
        print(summary, file=sys.stderr)
    else:
        print(summary, file=sys.stderr if _is_stdout(args.output) else sys.stdout)
    if warning:
        print(warning, file=sys.stderr)
    return EXIT_OK


SHOWN_IDS = 10  # a longer command would not fit a line: --derived, or the first ten


def _fragments_warning(report: Any, exported: int) -> str:
    """The warning about the `exported` papers that are fragments nobody would cite (no real title,
    authors or year: core.citation.is_fragment, found by the export), with the command that
    completes them; "" for none."""
    found = report.fragments
    if not found:
        return ""
    n = len(found)
    if exported == 1:
        said = "the paper exported has no real title, authors or year: it exports as a fragment"
    else:
        said = (
            f"{n} of the {plural(exported)} exported {'has' if n == 1 else 'have'} no real title, authors or year: "
            + ("it exports as a fragment" if n == 1 else "they export as fragments")
        )
    if n <= SHOWN_IDS:
        command = "papershelf lookup " + " ".join(found)
    elif report.fragments_derived:
        command = "papershelf lookup --derived"
    else:
        command = "papershelf lookup " + " ".join(found[:SHOWN_IDS]) + f" … (the first {SHOWN_IDS} of them)"
    return f"papershelf: warning: {said} nobody would cite. Find the published versions first: {command}"


def _is_stdout(output: str) -> bool:
    """Whether `output` names this process's standard output (-o /dev/stdout): the report then
    goes to standard error, not into the export."""
    try:
        st, out = os.stat(output), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino)


def _library_to_export(args: argparse.Namespace) -> Library:
    """The library to export from: opened for writing, so the keys the export gives are pinned;
    read-only when another Papershelf has it open or its folder cannot be written (an export only
    reads: its report then says which keys could not be pinned)."""
    try:
        return open_library(args, write=True)
    except (StoreLockedError, StoreWriteError) as exc:
        # said, so a real write error (a full disk) is not hidden behind the read-only open
        why = str(exc).split(". ", 1)[0].rstrip(".")
        print(f"papershelf: note: {why}; exporting from it read-only.", file=sys.stderr)
        return open_library(args, write=False)


def _check_replaceable(output: str) -> None:
    """ExportError when writing `output` would replace a file Papershelf did not write, or one
    changed since it did (core.written); --force replaces it anyway."""
    from ..core.written import replace_problem

    why = replace_problem(output)
    if why:
        raise ExportError(
            f"{output} was not replaced: {why}. Nothing was exported and {output} is as it was; "
            "export to another file, or give --force to replace it.",
            output,
        )


def _selection(args: argparse.Namespace) -> str:
    if args.saved is not None:
        return f"The saved search {args.saved!r}"
    if args.query is not None:
        return f"The search {args.query!r}"
    if args.tag is not None:
        return f"The tag {args.tag!r}"
    if args.list_name is not None:
        return f"The reading list {args.list_name!r}"
    if args.status:
        return f"The status {args.status.value!r}"
    return "The library (empty)"
