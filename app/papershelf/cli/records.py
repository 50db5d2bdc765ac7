"""Completing records: `set` (edit fields), `add` (by DOI or arXiv id) and `lookup` (find the
published version of papers). Running `add` or `lookup` is the user asking to go online: the
command line needs no other consent. The library is not held open while the network is asked:
papers are read first, and the answers applied afterwards in one short write.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core.library import SERVICE_NAMES, FoundRecord, Library, Proposal
from .commands import open_library, resolve_ids
from .output import EXIT_FAILED, EXIT_OK, UsageError, plural, print_over, write_json

if TYPE_CHECKING:
    from ..core.biblio.identifiers import Identifier
    from ..core.library import LookupResult, OnlineSession

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


def _session(args: argparse.Namespace) -> OnlineSession:
    from ..core.library import OnlineSession

    return OnlineSession(contact=args.mailto or os.environ.get(ENV_MAILTO, ""), on_wait=_waiting)


def _record_line(rec: FoundRecord) -> str:
    who = ", ".join(rec.authors[:3]) + (" et al." if len(rec.authors) > 3 else "")
    bits = [b for b in (who, str(rec.year or ""), rec.venue) if b]
    return f"{rec.title or '(untitled)'}" + (f" — {'; '.join(bits)}" if bits else "")


def cmd_add(args: argparse.Namespace) -> int:
    """`add IDENTIFIER...`: fetch each record (arXiv, Crossref, doi.org) and add it."""
    from ..core.limits import found_too_large

    idents = _identifiers(args.identifiers)
    records: list[FoundRecord] = []
    failed = 0

    def each(ident: Identifier, got: FoundRecord | str) -> None:
        nonlocal failed
        if isinstance(got, str):
            print(f"papershelf: {ident}: {got}", file=sys.stderr)
            failed += 1
        # more than a real paper holds: refused before it is shown or stored
        elif why := found_too_large(got.title, got.authors, got.abstract, got.venue, got.extra):
            service = SERVICE_NAMES.get(got.service, got.service)
            print(f"papershelf: {ident}: {service}'s record was refused: {why}; it was not added", file=sys.stderr)
            failed += 1
        else:
            records.append(got)
            print(f"{ident}: {_record_line(got)}")

    with _session(args) as session:
        session.fetch(idents, each=each)
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


def _identifiers(texts: list[str]) -> list[Identifier]:
    """The identifiers the user gave (a text may hold several); UsageError, before anything is
    asked, for one that is not an identifier or cannot be used."""
    from ..core.biblio.identifiers import find_identifiers, identifier_problem, parse_identifier

    idents = []
    for text in texts:
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
    return idents


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


def cmd_lookup(args: argparse.Namespace) -> int:
    """`lookup [ID... | --derived] [--apply] [--json]`: find the published version of papers.
    A dry run unless --apply, which applies the confident ones (and with --accept, the
    proposed ones too)."""
    if bool(args.ids) == bool(args.derived):
        raise UsageError("name the papers to look up, or give --derived for every paper whose title is derived")
    if args.accept and not args.apply:
        raise UsageError("--accept goes with --apply")
    papers, read_at = _papers_to_look_up(args)
    if not papers:
        print("no paper has a derived title: nothing to look up")
        return EXIT_OK
    result = _look_up(args, papers)
    _say_stopped_or_skipped(result, len(papers))
    if args.apply:
        _apply(args, result.proposals, read_at)
    if args.json:
        write_json([_proposal_json(p) for p in result.proposals])
    else:
        shown = [p for p in result.proposals if not result.stopped or p.message != result.stopped]
        if shown or not result.stopped:
            _print_proposals(shown, args.apply)
    return EXIT_FAILED if any(p.failed for p in result.proposals) else EXIT_OK


def _papers_to_look_up(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any]]:
    """The papers named (or every one with a derived title), and each one's stored record as
    read: an edit made while the network is asked wins (Library.apply_found checks it)."""
    with Library.open(_data_dir(args), readonly=True) as lib:
        ids = resolve_ids(lib, args.ids) if args.ids else [p.id for p in lib.papers() if p.title_derived]
        papers = [lib.get(pid) for pid in dict.fromkeys(ids)]
        return papers, lib.records([p.id for p in papers])


def _look_up(args: argparse.Namespace, papers: list[Any]) -> LookupResult:
    """Look the papers up, saying how far it is; ^C stops the batch, what was found kept."""
    progress = _Progress(len(papers), quiet=args.json)
    with _session(args) as session:
        try:
            result = session.look_up(papers, each=progress.step)
        except KeyboardInterrupt:
            result = session.result
            print(f"\nstopped after {plural(len(result.proposals))}", file=sys.stderr)
    progress.end()
    return result


def _say_stopped_or_skipped(result: LookupResult, total: int) -> None:
    if result.stopped:  # none of the services can be reached: one message, not one per paper
        print(f"papershelf: {result.stopped} Stopped after {result.looked_up} of {plural(total)}.", file=sys.stderr)
        return
    for service, note in result.skipped.items():
        print(f"papershelf: {note[:-1]}: skipped for {plural(result.skipped_for[service])}.", file=sys.stderr)


def _apply(args: argparse.Namespace, proposals: list[Proposal], read_at: dict[str, Any]) -> None:
    """Apply the confident proposals (with --accept, the proposed ones too), by the library's
    one rule for what was found (Library.apply_found)."""
    wanted = [p for p in proposals if p.changes and (p.automatic or args.accept)]
    if not wanted:
        return
    with open_library(args, write=True) as lib:
        done = lib.apply_found(
            {p.paper_id: {name: new for name, (_old, new) in p.changes.items()} for p in wanted},
            expect=read_at,
            found={p.paper_id: p.candidate for p in wanted},
        )
    done.settle(wanted)


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
