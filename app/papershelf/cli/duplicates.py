"""`papershelf duplicates`: the possible duplicates, merged or kept apart by hand.

papershelf duplicates [--json]        the pairs, side by side
papershelf duplicates --merge A B     B goes into A (one paper, A's id)
papershelf duplicates --keep-apart A B  they are different papers: not offered again
"""

from __future__ import annotations

import argparse

from ..core.library import Library, Pair
from ..core.paper import Paper
from ..core.reports import pair_lines
from .commands import open_library
from .output import EXIT_OK, plural, write_json


def _brief(paper: Paper) -> dict[str, object]:
    return {
        "id": paper.id,
        "citekey": paper.citekey,
        "title": paper.title,
        "authors": paper.authors,
        "year": paper.year,
        "entrytype": paper.entrytype,
        "venue": paper.venue,
        "doi": paper.doi,
        "arxiv_id": paper.arxiv_id,
    }


def cmd_duplicates(args: argparse.Namespace) -> int:
    """List the possible duplicates, or merge a pair, or keep a pair apart."""
    if args.merge:
        with open_library(args, write=True) as lib:
            print(lib.duplicates.merge(*args.merge).summary())
            print(f"The library now holds {plural(len(lib))}.")
        return EXIT_OK
    if args.keep_apart:
        with open_library(args, write=True) as lib:
            a, b = (lib.resolve(r) for r in args.keep_apart)
            if lib.duplicates.keep_apart(a, b):
                print(f"{a} and {b} are kept apart: they are no longer offered as duplicates.")
            else:
                print(f"{a} and {b} were already kept apart.")
        return EXIT_OK
    with open_library(args, write=False) as lib:
        pairs = lib.duplicates.pairs()
        if args.json:
            write_json([{"reason": p.reason, "a": _brief(lib.get(p.a)), "b": _brief(lib.get(p.b))} for p in pairs])
            return EXIT_OK
        _print_pairs(lib, pairs)
    return EXIT_OK


def _print_pairs(lib: Library, pairs: list[Pair]) -> None:
    if not pairs:
        print("No possible duplicates.")
        return
    for pair in pairs:
        for line in pair_lines(lib.get(pair.a), lib.get(pair.b), pair.reason):
            print(line)
        print()
    print(
        f"{plural(len(pairs), 'pair')} of possible duplicates. 'papershelf duplicates --merge A B' makes one "
        "paper of them; '--keep-apart A B' says they are different papers."
    )
