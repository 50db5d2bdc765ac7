"""`papershelf suggest`: papers to add to a tag or a reading list.

papershelf suggest --tag X [--limit N] [--json]     ranked by a model trained on the papers tagged X
papershelf suggest --list L [--limit N] [--json]    the same for the papers on the list L

JSON: a list of {id, title, score, terms}; `terms` are the words that weighed
most in the paper (the model's own weights), `score` its decision value.
"""

from __future__ import annotations

import argparse

from ..core.library import Library, Suggestion
from .commands import open_library
from .output import EXIT_OK, UsageError, write_json


def cmd_suggest(args: argparse.Namespace) -> int:
    """Print the suggestions for `--tag` or `--list`, best first, with the terms that explain each."""
    if args.tag is None and args.list_name is None:
        raise UsageError("say what the suggestions are for: --tag TAG or --list LIST")
    with open_library(args, write=False) as lib:
        found = lib.suggest(tag=args.tag, list_name=args.list_name, limit=args.limit)
        if args.json:
            write_json(
                [
                    {"id": s.paper_id, "title": lib.get(s.paper_id).title, "score": s.score, "terms": s.terms}
                    for s in found
                ]
            )
            return EXIT_OK
        _print(lib, found, args)
    return EXIT_OK


def _print(lib: Library, found: list[Suggestion], args: argparse.Namespace) -> None:
    what = f"tag {args.tag!r}" if args.tag is not None else f"list {args.list_name!r}"
    if not found:
        print(f"Nothing to suggest for the {what}: every paper with text already has it.")
        return
    for s in found:
        paper = lib.get(s.paper_id)
        print(f"{s.paper_id}  {s.score:7.3f}  {'~' if paper.title_derived else ' '}{paper.title}")
        print(f"{'':20}because of: {', '.join(s.terms)}")
    hint = f"tag ID... --add {args.tag}" if args.tag is not None else f"list-add {args.list_name} ID..."
    print(f"{len(found)} suggested for the {what}, best first; 'papershelf {hint}' adds the ones you want.")
