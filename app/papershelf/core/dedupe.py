"""Fingerprints that recognise the same paper, and merging of two copies."""

from __future__ import annotations

import hashlib
from typing import Any

from .biblio.names import family_key
from .importers.base import Candidate
from .paper import RAW_SOURCES, Paper, Source
from .text import fingerprint_text

# Bump when fingerprint_text changes meaning: stored fingerprints are then recomputed.
FINGERPRINT_VERSION = 5  # 5: the first author's family name by names.family_key (was the last word)


def fingerprint(
    abstract: str, title: str = "", authors: list[str] | None = None, year: int | None = None, plain: str | None = None
) -> str:
    """The same for two copies of one paper, whatever their markup.

    The abstract decides when there is one (listings have nothing else);
    otherwise the title with the first author's surname and the year.
    """
    basis = fingerprint_text(abstract, plain)
    if not basis:
        first = family_key(authors[0]) if authors else ""
        basis = f"t:{fingerprint_text(title)}:{first}:{year or ''}"
    return hashlib.blake2b(basis.encode("utf-8"), digest_size=16).hexdigest()


def merge_into(paper: Paper, cand: Candidate, source: Source, derived_title: str) -> dict[str, Any]:
    """The fields of `paper` that `cand` makes richer, as {field: new value}.

    Nothing the user owns (status, tags, notes, rating, a title they typed)
    is ever replaced by an import. Returns an empty dict when the copy adds
    nothing, which is how a re-import is recognised.
    """
    changes: dict[str, Any] = {}
    if cand.title and (paper.title_derived or not paper.title):
        changes["title"] = cand.title
        changes["title_derived"] = False
    if cand.authors and len(cand.authors) > len(paper.authors):
        changes["authors"] = list(cand.authors)
    if cand.area and not paper.area:
        changes["area"] = cand.area
        changes["subarea"] = cand.subarea
    elif cand.subarea and not paper.subarea and cand.area == paper.area:
        changes["subarea"] = cand.subarea
    for name in ("year", "venue", "doi", "arxiv_id"):
        value = getattr(cand, name)
        if value and not getattr(paper, name):
            changes[name] = value
    if cand.entrytype and not paper.entrytype and not paper.bibfields:
        changes.update(_record_from(paper, cand, changes))
    if cand.abstract and not paper.abstract:
        changes["abstract"] = cand.abstract
        if paper.title_derived and "title" not in changes:
            changes["title"] = derived_title
    if source not in paper.sources:
        changes["sources"] = [*paper.sources, source]
    return changes


def _record_from(paper: Paper, cand: Candidate, changes: dict[str, Any]) -> dict[str, Any]:
    """The bibliographic record a copy brings to a paper that has none (a listing paper, or
    one imported before records were kept). A display field the paper keeps a value of its
    own for (a title the user typed, more authors) takes its raw fields out of the record,
    so the export writes the paper's value and not the copy's."""
    fields = dict(cand.bibfields)
    for name, raw_names in RAW_SOURCES.items():
        ours = changes.get(name, getattr(paper, name))
        if ours and ours != getattr(cand, name):
            for raw in raw_names:
                fields.pop(raw, None)
    out: dict[str, Any] = {"entrytype": cand.entrytype, "bibfields": fields}
    if cand.preamble:
        out["preamble"] = cand.preamble
    return out


# the bibliographic part of a paper, taken whole from the richer of two papers a person merges
_RECORD = (
    "title",
    "title_derived",
    "authors",
    "year",
    "venue",
    "doi",
    "arxiv_id",
    "entrytype",
    "bibfields",
    "preamble",
)


def _combined_fields(out: dict[str, Any], base: Paper, extra: Paper) -> dict[str, str]:
    """The merged paper's record fields: `base`'s, less the raw fields of a display field
    the merge gave another value (a typed title: the export writes it), plus `extra`'s
    fields `base` lacks, a display field's raw fields only where its value is `extra`'s."""
    fields = dict(base.bibfields)
    raw_names: set[str] = set()
    for name, raws in RAW_SOURCES.items():
        raw_names.update(raws)
        value = out[name]
        if value != getattr(base, name):
            for raw in raws:
                fields.pop(raw, None)
            if value and value == getattr(extra, name) and not any(raw in fields for raw in raws):
                fields.update((raw, extra.bibfields[raw]) for raw in raws if raw in extra.bibfields)
    for raw, text in extra.bibfields.items():
        if raw not in raw_names:
            fields.setdefault(raw, text)
    return fields


_STATUS_RANK = {"unread": 0, "skipped": 1, "to-read": 2, "reading": 3, "read": 4}


def richness(paper: Paper) -> tuple[int, int, int]:
    """How much a paper's record holds, to pick the richer of two: its fields, then its
    display fields, then a title of its own."""
    shown = sum(bool(getattr(paper, name)) for name in ("authors", "year", "venue", "doi", "arxiv_id", "abstract"))
    return (len(paper.bibfields), shown, int(not paper.title_derived))


def typed_title(paper: Paper) -> bool:
    """Whether a paper's title is the user's own: not derived from the abstract, and not its
    record's (an edit of the title drops the record's `title`, see `paper.without_raw`)."""
    return bool(paper.title) and not paper.title_derived and "title" not in paper.bibfields


def combine(keep: Paper, other: Paper) -> dict[str, Any]:
    """The fields `keep` takes when a person merges `other` into it, as {field: new value}.

    The record (type, fields, display fields) is the richer paper's, its gaps filled from
    the other (display fields and record fields alike); a title typed on `keep` stays; tags,
    sources and links are the union; the user's state is kept (the further-on status, both
    notes, `keep`'s rating or else the other's, `keep`'s citation key or else the other's).
    Only fields that change are returned."""
    out = _combined_record(keep, other)
    out.update(_combined_collections(keep, other))
    out.update(_combined_state(keep, other))
    out["fingerprint"] = fingerprint(out["abstract"], out["title"], out["authors"], out["year"])
    return {name: value for name, value in out.items() if getattr(keep, name) != value}


def _combined_record(keep: Paper, other: Paper) -> dict[str, Any]:
    """The merged paper's bibliographic part: the richer paper's record, its display fields'
    gaps filled from the other, the better title, and the abstract and area."""
    rich, poor = (other, keep) if richness(other) > richness(keep) else (keep, other)
    out: dict[str, Any] = {name: getattr(rich, name) for name in _RECORD}
    for name in ("authors", "year", "venue", "doi", "arxiv_id"):
        if not out[name] and getattr(poor, name):
            out[name] = getattr(poor, name)
    if rich.title_derived and not poor.title_derived and poor.title:
        out["title"], out["title_derived"] = poor.title, False
    if typed_title(keep):  # the user's own words, not to be overwritten by a file's
        out["title"], out["title_derived"] = keep.title, False
    base, extra = rich, poor
    if not out["entrytype"] and poor.entrytype:
        out["entrytype"], out["preamble"] = poor.entrytype, poor.preamble
        base, extra = poor, rich
    out["bibfields"] = _combined_fields(out, base, extra)
    for name in ("abstract", "area", "subarea"):
        out[name] = getattr(keep, name) or getattr(other, name)
    if not keep.area and other.area:
        out["subarea"] = other.subarea
    return out


def _combined_collections(keep: Paper, other: Paper) -> dict[str, Any]:
    """The merged paper's links, tags, sources and files: the union, `keep`'s first (a file
    both hold, by path, once)."""
    paths = {f.get("path") for f in keep.files}
    return {
        "files": [*keep.files, *(f for f in other.files if f.get("path") not in paths)],
        "links": list(dict.fromkeys([*keep.links, *other.links])),
        "tags": sorted(set(keep.tags) | set(other.tags)),
        "sources": [*keep.sources, *(s for s in other.sources if s not in keep.sources)],
    }


def _combined_state(keep: Paper, other: Paper) -> dict[str, Any]:
    """The user's state of the merged paper: the further-on status with its dates, both notes,
    a rating and a key (`keep`'s, else the other's), the papers both were kept apart from,
    the earlier date added."""
    out: dict[str, Any] = {}
    # the dates of reading go with the status kept (paper.status_change): the further-on paper's
    ahead = _STATUS_RANK.get(other.status.value, 0) > _STATUS_RANK.get(keep.status.value, 0)
    dated = other if ahead or (other.status is keep.status and not keep.read_at + keep.reading_at) else keep
    out["status"], out["reading_at"], out["read_at"] = dated.status, dated.reading_at, dated.read_at
    notes = [n for n in (keep.notes, other.notes) if n.strip()]
    out["notes"] = "\n\n".join(dict.fromkeys(notes))
    out["rating"] = keep.rating if keep.rating is not None else other.rating
    out["citekey"] = keep.citekey or other.citekey
    # the papers either was kept apart from stay apart from the merged one
    out["distinct"] = [i for i in dict.fromkeys([*keep.distinct, *other.distinct]) if i not in (keep.id, other.id)]
    out["opened_at"] = max(keep.opened_at, other.opened_at)
    if other.added and (not keep.added or other.added < keep.added):
        out["added"] = other.added
    return out
