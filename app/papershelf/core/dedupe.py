"""Fingerprints that recognise the same paper, and merging of two copies."""

from __future__ import annotations

import hashlib
from typing import Any

from .importers.base import Candidate
from .paper import RAW_SOURCES, Paper, Source
from .text import fingerprint_text, fold

# Bump when fingerprint_text changes meaning: stored fingerprints are then recomputed.
FINGERPRINT_VERSION = 4  # 4: Markdown link text holds no '[' (plain_text changed)


def fingerprint(
    abstract: str, title: str = "", authors: list[str] | None = None, year: int | None = None, plain: str | None = None
) -> str:
    """The same for two copies of one paper, whatever their markup.

    The abstract decides when there is one (listings have nothing else);
    otherwise the title with the first author's surname and the year.
    """
    basis = fingerprint_text(abstract, plain)
    if not basis:
        first = fold(authors[0].split()[-1]) if authors else ""
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
