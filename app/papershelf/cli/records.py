"""Completing records: `set` (edit fields), `add` (by DOI or arXiv id) and `lookup` (find the
published version of papers). Running `add` or `lookup` is the user asking to go online: the
command line needs no other consent. The library is not held open while the network is asked:
papers are read first, and the answers applied afterwards in one short write.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ..core.library import Library
from ..core.online.records import SERVICE_NAMES, FoundRecord, OnlineError, Proposal
from .commands import open_library, resolve_ids
from .output import EXIT_FAILED, EXIT_OK, UsageError, plural, print_over, write_json

ENV_MAILTO = "PAPERSHELF_MAILTO"


def _assignments(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"give fields as FIELD=VALUE (such as year=2024 or author='Knuth, Donald'), not {pair!r}")
        name = name.strip().lower()
        if name in out:
            raise UsageError(f"the field {name!r} is given twice")
        out[name] = value
    return out


def cmd_set(args: argparse.Namespace) -> int:
    """`set ID FIELD=VALUE... [--type TYPE]`: edit the paper's record (one change)."""
    changes = _assignments(args.fields)
    if args.type:
        if "entrytype" in changes:
            raise UsageError("the type is given twice (entrytype= and --type): give it once")
        changes["entrytype"] = args.type
    if not changes:
        raise UsageError("nothing to set: give FIELD=VALUE pairs or --type TYPE")
    from ..core.record_edit import editor_view, names_text

    with open_library(args, write=True) as lib:
        pid = lib.resolve(args.id)
        _question(changes, lib.get(pid).entrytype, lib.get(pid).bibfields, args.force)
        before = editor_view(lib.get(pid))
        changed = lib.edit_record(pid, changes)
        after = editor_view(lib.get(pid))
        if not changed:
            print(f"{pid}: nothing changed (the record already says that)")
            return EXIT_OK
        lines = []
        if before.entrytype != after.entrytype:
            lines.append(f"  type: {before.entrytype} → {after.entrytype}")
        old_names, new_names = names_text(before.authors, before.others), names_text(after.authors, after.others)
        if old_names != new_names:
            lines.append(f"  author: {old_names or '(none)'} → {new_names or '(none)'}")
        if before.citekey != after.citekey:
            lines.append(f"  citekey: {before.citekey or '(none)'} → {after.citekey or '(none)'}")
        for name in dict.fromkeys([*before.fields, *after.fields]):
            old, new = before.fields.get(name, ""), after.fields.get(name, "")
            if old != new:
                lines.append(f"  {name}: {old or '(none)'} → {new or '(none)'}")
        print(f"{pid}: " + (f"{plural(len(lines), 'field')} changed" if lines else "changed"))
        print("\n".join(lines))
        others = [c for c in changed if c != pid]
        if others:
            print(f"  ({plural(len(others), 'entry')} citing the old key by crossref now cite the new one)")
    return EXIT_OK


def _question(changes: dict[str, str], entrytype: str, present: Iterable[str], force: bool) -> None:
    """UsageError, before anything is changed, for an entry type no style knows, and (unless
    `force`) for a new field no type knows: a misspelling kept as a field prints nowhere."""
    from ..core.vocabulary import type_problem, unknown_fields, unknown_fields_problem

    if "entrytype" in changes:
        problem = type_problem(changes["entrytype"], entrytype)
        if problem:
            raise UsageError(f"{problem}. Nothing was changed.")
    unknown = unknown_fields([name for name, value in changes.items() if value.strip()], present)
    if unknown and not force:
        them = "it" if len(unknown) == 1 else "them"
        raise UsageError(
            f"{unknown_fields_problem(unknown)}. Nothing was changed; correct the name, "
            f"or give --force to add {them} as written."
        )


def _waiting(text: str) -> None:
    """What the look-up waits for ("Waiting 12 s: Crossref asked us to slow down…", "Still waiting
    for OpenAlex…"), on stderr as it happens: a long wait is never silent. On a terminal the line
    replaces the progress line (which comes back with the next paper)."""
    try:
        if sys.stderr.isatty():
            print(f"\r\x1b[Kpapershelf: {text}", file=sys.stderr, flush=True)
        else:
            print(f"papershelf: {text}", file=sys.stderr, flush=True)
    except OSError:  # stderr closed under us: carry on
        pass


def _http(args: argparse.Namespace) -> Any:
    from ..core.online.http import Http

    return Http(contact=args.mailto or os.environ.get(ENV_MAILTO, ""), on_wait=_waiting)


def _record_line(rec: FoundRecord) -> str:
    who = ", ".join(rec.authors[:3]) + (" et al." if len(rec.authors) > 3 else "")
    bits = [b for b in (who, str(rec.year or ""), rec.venue) if b]
    return f"{rec.title or '(untitled)'}" + (f" — {'; '.join(bits)}" if bits else "")


def cmd_add(args: argparse.Namespace) -> int:
    """`add IDENTIFIER...`: fetch each record (arXiv, Crossref, doi.org) and add it."""
    from ..core.biblio.identifiers import find_identifiers, identifier_problem, parse_identifier
    from ..core.limits import found_too_large
    from ..core.online.records import SERVICE_NAMES
    from ..core.online.services import fetch

    idents = []
    for text in args.identifiers:
        ident = parse_identifier(text)
        if ident is None:
            unusable = identifier_problem(text)
            if unusable:  # refused before anything is asked of anyone
                raise UsageError(f"{unusable}. Nothing was asked or changed; check the DOI.")
            found = find_identifiers(text)
            if not found:
                raise UsageError(f"{text!r} is not a DOI or an arXiv id (such as 10.1000/xyz or arXiv:2401.01234)")
            idents.extend(found)
        else:
            idents.append(ident)
    records: list[FoundRecord] = []
    failed = 0
    with _http(args) as http:
        for ident in dict.fromkeys(idents):
            try:
                rec = fetch(http, ident)
            except OnlineError as exc:
                print(f"papershelf: {ident}: {exc}", file=sys.stderr)
                failed += 1
                continue
            # more than a real paper holds: refused before it is shown or stored
            if why := found_too_large(rec.title, rec.authors, rec.abstract, rec.venue, rec.extra):
                service = SERVICE_NAMES.get(rec.service, rec.service)
                print(f"papershelf: {ident}: {service}'s record was refused: {why}; it was not added", file=sys.stderr)
                failed += 1
                continue
            records.append(rec)
            print(f"{ident}: {_record_line(rec)}")
    if records:
        with open_library(args, write=True) as lib:
            report = lib.add_found(records)
            if report.error:
                print(f"papershelf: {report.error}", file=sys.stderr)
                return EXIT_FAILED
            parts = [f"added {plural(report.added)}"] + ([f"merged {report.merged}"] if report.merged else [])
            if report.unchanged:
                parts.append(f"{report.unchanged} already there")
            print(", ".join(parts) + (": " + " ".join(report.added_ids) if report.added_ids else ""))
            for note in report.merges:
                print(f"  {note}")
            for problem in report.problems:  # a record refused, or a value changed (control characters)
                print(f"  note: {problem}")
                failed += not problem.note
    return EXIT_FAILED if failed else EXIT_OK


class _Progress:
    """How far a look-up batch is, on stderr: a line rewritten in place on a terminal; into a pipe
    or a file (a script, `2>&1 | tee`), a line per paper as it is done, flushed, so a long batch
    is never silent."""

    def __init__(self, total: int, quiet: bool) -> None:
        self.total = total
        self.tty = sys.stderr.isatty()
        self.quiet = quiet and self.tty  # a pipe gets its lines even with --json (stdout is the JSON)
        self.done = 0
        if not self.tty:
            self._say(f"papershelf: looking up {plural(total)}…")

    def _say(self, text: str, end: str = "\n", over: bool = False) -> None:
        try:
            if over:  # over the progress line
                print_over(text, end=end)
            else:
                print(text, end=end, file=sys.stderr, flush=True)
        except OSError:  # stderr closed under us (the reader of the pipe went away): carry on
            pass

    def step(self, proposal: Proposal, stopped: str) -> None:
        self.done += 1
        if self.quiet or (stopped and proposal.message == stopped and not self.tty):  # said once, at the end
            return
        if self.tty:
            self._say(f"looking up {self.done}/{self.total}…", end="", over=True)
            return
        state = (
            ("confident" if proposal.automatic else "proposed")
            if proposal.changes
            else "failed"
            if proposal.failed
            else "nothing found"
        )
        self._say(f"papershelf: {self.done}/{self.total} {proposal.paper_id}: {state}")

    def end(self) -> None:
        if self.tty and not self.quiet and self.done:
            self._say("")


def _proposals(args: argparse.Namespace, lib_papers: list[Any], reach: Any) -> Iterator[Proposal]:
    from ..core.online.lookup import lookup_many

    with _http(args) as http:
        yield from lookup_many(http, lib_papers, reach=reach)


def cmd_lookup(args: argparse.Namespace) -> int:
    """`lookup [ID... | --derived] [--apply] [--json]`: find the published version of papers.
    A dry run unless --apply, which applies the confident ones (and with --accept, the
    proposed ones too)."""
    if bool(args.ids) == bool(args.derived):
        raise UsageError("name the papers to look up, or give --derived for every paper whose title is derived")
    if args.accept and not args.apply:
        raise UsageError("--accept goes with --apply")
    with Library.open(_data_dir(args), readonly=True) as lib:
        ids = resolve_ids(lib, args.ids) if args.ids else [p.id for p in lib.papers() if p.title_derived]
        papers = [lib.get(pid) for pid in dict.fromkeys(ids)]
        # what each paper was when read: an edit made while the network is asked wins
        # (the whole record: `updated` counts seconds, and an edit can come within the same one)
        read_at = lib.records([p.id for p in papers])
    if not papers:
        print("no paper has a derived title: nothing to look up")
        return EXIT_OK
    from ..core.limits import CONTROLS_REMOVED, strip_found
    from ..core.online.lookup import Reach

    results: list[Proposal] = []
    progress = _Progress(len(papers), quiet=args.json)
    reach = Reach()
    try:
        for proposal in _proposals(args, papers, reach):
            results.append(proposal)
            progress.step(proposal, reach.stopped)
    except KeyboardInterrupt:
        print(f"\nstopped after {plural(len(results))}", file=sys.stderr)
    progress.end()
    stopped = reach.stopped
    if stopped:  # none of the services can be reached: one message, not one per paper
        print(f"papershelf: {stopped} Stopped after {reach.looked_up} of {plural(len(papers))}.", file=sys.stderr)
    else:
        for service, without in reach.skipped.items():
            print(
                f"papershelf: {reach.skipped_note(service)[:-1]}: skipped for {plural(len(without))}.", file=sys.stderr
            )
    if args.apply:
        wanted = [p for p in results if p.changes and (p.automatic or args.accept)]
        if wanted:
            with open_library(args, write=True) as lib:
                for proposal in wanted:
                    if proposal.paper_id not in lib:
                        proposal.message = "not applied: the paper was deleted meanwhile"
                        continue
                    if lib.records([proposal.paper_id])[proposal.paper_id] != read_at[proposal.paper_id]:
                        proposal.message = "not applied: the paper was edited while the look-up ran; run it again"
                        continue
                    changes, stripped = strip_found({name: new for name, (_old, new) in proposal.changes.items()})
                    try:
                        lib.edit_record(proposal.paper_id, changes)
                        proposal.applied = True
                        if stripped:  # the service's values are cleaned, and the user told
                            said = f"{CONTROLS_REMOVED} {', '.join(stripped)} of the found record"
                            proposal.message = f"{proposal.message} {said[:1].upper()}{said[1:]}.".strip()
                    except ValueError as exc:
                        proposal.message = f"not applied: {exc}"
    if args.json:
        write_json([_proposal_json(p) for p in results])
    else:
        shown = [p for p in results if not stopped or p.message != stopped]
        if shown or not stopped:
            _print_proposals(shown, args.apply)
    return EXIT_FAILED if any(p.failed for p in results) else EXIT_OK


def _data_dir(args: argparse.Namespace) -> Any:
    from .. import paths

    return paths.data_dir(args.data_dir)


def _proposal_json(p: Proposal) -> dict[str, Any]:
    return {
        "id": p.paper_id,
        "service": p.service,
        "confidence": round(p.confidence, 3),
        "automatic": p.automatic,
        "changes": {name: [old, new] for name, (old, new) in p.changes.items()},
        "applied": p.applied,
        "message": p.message,
    }


def _print_proposals(results: list[Proposal], applying: bool) -> None:
    applied = proposed = nothing = 0
    for p in results:
        where = SERVICE_NAMES.get(p.service, p.service)
        if not p.changes:
            nothing += 1
            print(f"{p.paper_id}: {p.message or 'nothing found'}")
            continue
        state = "applied" if p.applied else "confident" if p.automatic else "proposed"
        applied += p.applied
        proposed += not p.applied
        note = f": {p.message}" if p.message else ""
        print(f"{p.paper_id}: {state} ({where}, confidence {p.confidence:.2f}){note}")
        for name, (old, new) in p.changes.items():
            print(f"  {name}: {old or '(none)'} → {new}")
    summary = [f"{plural(len(results))} looked up"]
    if applying:
        summary.append(f"{applied} applied")
    summary += [f"{proposed} " + ("not applied" if applying else "proposed"), f"{nothing} without a change"]
    print(", ".join(summary))
    if proposed and not applying:
        print("Apply the confident ones with --apply, the proposed ones too with --apply --accept.")
