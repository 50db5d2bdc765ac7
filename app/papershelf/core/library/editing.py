"""Editing a record and adding records found online, for the facade: `Library.edit_record`,
`edit_scope`, `set_citekey` and `add_found` do their work here (part of the facade: it uses
the library's private parts). The rules of an edit are core/record_edit.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValueError
from ..paper import Paper
from .checks import text_arg

if TYPE_CHECKING:
    from ..online.records import FoundRecord
    from .facade import Library
    from .importing import FileReport


def citekey_changes(lib: Library, paper_id: str, key: str) -> dict[str, dict[str, Any]]:
    """The changes a citation key the user chose makes ('' lets Papershelf pick one again):
    {id: fields}, the paper's key and its crossref children's references to the old key.
    InvalidValueError for a key BibTeX cannot take or another paper holds."""
    from ..citekeys import key_problem
    from .exporting import references_renamed

    key = text_arg(key, "a citation key").strip()
    # the same rule as a key from a .bib file: kept exactly whenever BibTeX, biber and \cite take it
    if key and (why := key_problem(key)):
        raise InvalidValueError(f"{key!r} is not a usable citation key: {why}")
    # BibTeX tells keys apart case-insensitively
    folded = key.casefold()
    holder = next((p for p in lib.papers() if p.citekey.casefold() == folded and p.id != paper_id), None)
    if key and holder is not None:
        raise InvalidValueError(
            f'the citation key {key!r} is already used by another paper ({holder.id}, "{holder.title[:80]}")'
        )
    # the entries that crossref the old key follow it (one change)
    old = lib.get(paper_id).citekey
    if old == key:
        return {}
    if old and not key and references_renamed(lib.papers(), old, old + "\0"):
        # the key made up later is not known yet: the children would cite nothing
        raise InvalidValueError(
            f"other entries cite {old!r} by crossref: give the paper another key instead of clearing it"
        )
    children = references_renamed(lib.papers(), old, key) if old and key else {}
    return {paper_id: {"citekey": key}, **{pid: {"bibfields": raw} for pid, raw in children.items()}}


def edit_scope(lib: Library, paper_id: str) -> list[str]:
    """The paper and the papers whose crossref/xdata name its key (a new key renames those)."""
    from .exporting import references_renamed

    paper = lib.get(paper_id)
    if not paper.citekey:
        return [paper.id]
    return [paper.id, *references_renamed(lib.papers(), paper.citekey, paper.citekey + "\0")]


def edit_record(lib: Library, paper_id: str, changes: Mapping[str, str | None]) -> list[str]:
    """Edit a paper's record as one durable change (`Library.edit_record`). `changes` maps
    field names to the reader's text, "" or None removing a field (see core/record_edit.py for
    the vocabulary: "entrytype", "citekey", "title", "author" as a BibTeX name list, "year",
    "venue", "doi", "eprint", any BibTeX field). Only fields whose text differs are written.
    Returns the ids changed (the paper, and the children whose crossref follows a new key);
    InvalidValueError, changing nothing, for a value that cannot be stored."""
    from ..record_edit import field_changes

    if not isinstance(changes, Mapping):
        raise InvalidValueError(f"the changes are given as field → text, not {type(changes).__name__}")
    named: dict[str, str | None] = {}
    for name, value in changes.items():
        key = text_arg(name, "a field name").strip().lower()
        if value is not None:
            text_arg(value, f"the value of {name}")
        if key in named:
            raise InvalidValueError(f"the field {key!r} is given twice")
        if value is not None:
            check_value(key, value)
        named[key] = value
    changes = named
    paper = lib.get(paper_id)
    per_paper: dict[str, dict[str, Any]] = {}
    if "citekey" in changes:
        per_paper.update(citekey_changes(lib, paper.id, changes["citekey"] or ""))
    fields = field_changes(paper, changes)
    if fields:
        per_paper.setdefault(paper.id, {}).update(fields)
    if not per_paper:
        return []
    lib._set_many(per_paper, lambda p: per_paper[p.id])
    return list(per_paper)


def check_value(name: str, value: str) -> None:
    """InvalidValueError, in words, for an edited value more than a real paper holds or holding
    control characters (an edit is refused rather than changed behind the user's back)."""
    from ..limits import MAX_NAMES, NAME_FIELDS, field_limit, has_controls

    limit = field_limit(name)
    if len(value) > limit:
        raise InvalidValueError(
            f"the {name} is {len(value):,} characters long, more than the {limit:,} a field may hold. "
            "Nothing was changed."
        )
    if name in NAME_FIELDS and (count := len(re.findall(r"\band\b", value)) + 1) > MAX_NAMES:
        raise InvalidValueError(
            f"the {name} list has {count:,} names, more than the {MAX_NAMES:,} a list may hold. Nothing was changed."
        )
    if has_controls(value):
        raise InvalidValueError(
            f"the {name} holds control characters (such as terminal escapes, a carriage return or NUL), which "
            "are not stored; remove them and try again. Nothing was changed."
        )


_NOT_FROM_EXTRA = frozenset(
    {"abstract", "keywords", "eprint", "eprinttype", "archiveprefix", "eprintclass", "primaryclass", "arxivid"}
)


def _latex(text: str) -> str:
    from ..biblio.latex_writer import text_to_latex

    return "{" + text_to_latex(text) + "}"


def add_found(lib: Library, records: Iterable[FoundRecord]) -> FileReport:
    """Add records found online (`Library.add_found`) as one import: a record of a paper
    already in the library (its DOI, arXiv id or abstract) merges into it, as an import's
    duplicate would. Returns the import's FileReport (undo it as an import)."""
    from ..biblio.names import from_display
    from ..biblio.types import venue_field
    from ..importers.base import Candidate, ParsedFile, Problem
    from ..limits import found_too_large
    from ..online.records import SERVICE_NAMES, FoundRecord
    from ..record_edit import field_changes, names_text

    found = list(records)
    papers: list[Candidate] = []
    refused: list[Problem] = []
    services = sorted({SERVICE_NAMES.get(r.service, r.service) for r in found if isinstance(r, FoundRecord)})
    label = f"<{', '.join(services) or 'online'}>"
    for n, rec in enumerate(found, 1):
        if not isinstance(rec, FoundRecord):
            raise InvalidValueError(f"add_found takes found records, not {type(rec).__name__}")
        # more than a real paper holds: refused before anything is made of it
        if why := found_too_large(rec.title, rec.authors, rec.abstract, rec.venue, rec.extra):
            service = SERVICE_NAMES.get(rec.service, rec.service)
            refused.append(Problem(label, n, f"the record from {service} ({rec.ident}) was not added: {why}"))
            continue
        kind = rec.entrytype or "misc"
        # the record's fields as a record edit writes them (the same LaTeX from the same text)
        blank = Paper("", entrytype=kind)
        typed: dict[str, str | None] = {
            "author": names_text([from_display(a) for a in rec.authors]) if rec.authors else None,
            "year": str(rec.year) if rec.year else None,
            "venue": rec.venue or None,
            "doi": rec.doi or None,
            "eprint": rec.arxiv_id or None,
            "url": rec.url or None,
            # (the arXiv id is the eprint above: the service's own eprint fields would say it twice)
            **{k: v for k, v in rec.extra.items() if k not in _NOT_FROM_EXTRA},
        }
        made = field_changes(blank, {k: v for k, v in typed.items() if v})
        bibfields = dict(made.get("bibfields", {}))
        if rec.title:
            from ..biblio.latex_writer import text_to_latex

            bibfields = {"title": "{" + text_to_latex(rec.title, True) + "}", **bibfields}
        if rec.venue and venue_field(kind) not in bibfields:
            bibfields[venue_field(kind)] = _latex(rec.venue)
        papers.append(
            Candidate(
                abstract=rec.abstract,
                line=n,
                title=rec.title,
                authors=list(made.get("authors", rec.authors)),
                year=rec.year,
                venue=rec.venue,
                doi=rec.doi,
                arxiv_id=rec.arxiv_id,
                entrytype=kind,
                bibfields=bibfields,
            )
        )
    return lib.import_parsed(ParsedFile(label, "online", papers, refused))
