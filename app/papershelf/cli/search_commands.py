"""The commands that use the search index: search, reindex, and export (whose --query searches)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..core.errors import NothingToExportError, SearchIndexDamagedError
from ..core.library import Library
from .backend import IndexSession, rebuild_index
from .commands import open_library
from .output import EXIT_OK, plural, snippet_text, write_json


def open_index(lib: Library, quiet: bool = False) -> IndexSession:
    """The library's search index, brought up to date; its progress and any rebuild said on stderr
    (damage even when `quiet`: the index had to be repaired)."""

    def progress(done: int, total: int) -> None:
        if not quiet and total:
            print(f"\rIndexing {plural(total)} for search… {100 * done // total}%", end="", file=sys.stderr, flush=True)

    ix = IndexSession(lib, progress)
    if ix.damaged:  # said even with --json: the index had to be repaired
        print(
            f"{'' if quiet else chr(13)}The search index in {ix.folder} was damaged; rebuilt it ({plural(len(lib))}).",
            file=sys.stderr,
        )
    elif ix.rebuilt_because and not quiet:
        print(f"\rIndexed {plural(len(lib))} for search ({ix.rebuilt_because}).", file=sys.stderr)
    return ix


def cmd_search(args: argparse.Namespace) -> int:
    """`search QUERY...`: the best matches with a snippet each, or JSON."""
    text = " ".join(args.query)
    with open_library(args, write=False) as lib:
        ix = open_index(lib, quiet=args.json or not len(lib))
        filters: dict[str, Any] = {
            "status": args.status.value if args.status else None,
            "tag": args.tag,
            "area": args.area,
            "list_name": args.list_name,
            "sort": args.sort,
            "limit": args.limit,
        }
        try:
            try:
                res = ix.search(text, **filters)
            except SearchIndexDamagedError:  # marked damaged: opening again rebuilds it, once
                ix.close()
                ix = open_index(lib, quiet=args.json)
                res = ix.search(text, **filters)
            snippets = ix.snippets(res.ids, text)
        finally:
            ix.close()
        if args.json:
            write_json(
                [
                    {
                        "id": pid,
                        "title": lib.get(pid).title,
                        "title_derived": lib.get(pid).title_derived,
                        "score": round(res.scores.get(pid, 0.0), 3),
                        "snippet": snippet_text(snippets.get(pid, ""), False).replace("«", "").replace("»", ""),
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
            print(f"{pid}  {score}  {'~' if paper.title_derived else ' '}{paper.title}")
            if snippets.get(pid):
                print(f"{'':20}{snippet_text(snippets[pid], tty)}")
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


def cmd_reindex(args: argparse.Namespace) -> int:
    """`reindex`: rebuild the search index from the library, its progress on stderr."""
    shown = []

    def progress(done: int, total: int) -> None:
        shown.append(done)
        print(f"\rIndexing {plural(total)}… {100 * done // max(total, 1)}%", end="", file=sys.stderr, flush=True)

    with open_library(args, write=False) as lib:
        try:
            seconds = rebuild_index(lib, progress)
        except BaseException:
            if shown:  # the error goes on a line of its own
                print(file=sys.stderr)
            raise
        print(f"\rIndexed {plural(len(lib))} in {seconds:.1f} s.", file=sys.stderr)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """`export -o FILE`: all papers, or a tag, a list, a status, a search or ids, as BibTeX or BibLaTeX."""
    with open_library(args, write=True) as lib:
        if args.ids:
            ids = [lib.resolve(ref) for ref in args.ids]
        elif args.query is not None:
            ix = open_index(lib, quiet=args.output == "-")
            try:
                ids = ix.search(args.query, limit=None).ids
            finally:
                ix.close()
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
        report, text = lib.export_bibtex(ids, args.output, args.dialect)
    if args.output == "-":
        sys.stdout.write(text)
        print(report.summary(), file=sys.stderr)
    else:
        print(report.summary())
    return EXIT_OK


def _selection(args: argparse.Namespace) -> str:
    if args.query is not None:
        return f"The search {args.query!r}"
    if args.tag is not None:
        return f"The tag {args.tag!r}"
    if args.list_name is not None:
        return f"The reading list {args.list_name!r}"
    if args.status:
        return f"The status {args.status.value!r}"
    return "The library (empty)"
