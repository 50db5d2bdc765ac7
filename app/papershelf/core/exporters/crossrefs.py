"""Entries that take fields from others (crossref, xdata): the keys they name, and the order
of a .bib file's entries BibTeX needs (a parent after the entries that name it)."""

from __future__ import annotations

from collections.abc import Iterable

from ..paper import Paper
from .bibmaps import value_text


def parent_keys(paper: Paper) -> list[str]:
    """The keys a paper's `crossref` and `xdata` name (the entries it takes fields from)."""
    d = paper.raw()  # the stored dict itself: `bibfields` would copy it, for every paper exported
    raw = d.get("bibfields")
    if not raw or not d.get("entrytype") or ("xdata" not in raw and "crossref" not in raw):
        return []
    keys = [k.strip() for k in value_text(raw.get("xdata", "")).split(",")]
    keys.append(value_text(raw.get("crossref", "")).strip())
    return [k for k in keys if k]


def export_order(papers: Iterable[Paper], keys: dict[str, str]) -> list[Paper]:
    """The papers sorted by key, except that an entry another one cross-references (crossref,
    xdata) comes after it: BibTeX reads a crossref's parent only after the entries that name it."""
    ordered = sorted(papers, key=lambda p: keys[p.id].casefold())
    children = [p for p in ordered if parent_keys(p)]
    if not children:  # the usual case: no key table to build
        return ordered
    by_key = {keys[p.id].casefold(): p for p in ordered}
    depth: dict[str, int] = {}

    def climb(paper: Paper, level: int, seen: set[str]) -> None:
        for key in parent_keys(paper):
            parent = by_key.get(key.casefold())
            if parent is not None and parent.id not in seen and level < 16:  # loops and long chains end
                depth[parent.id] = max(depth.get(parent.id, 0), level)
                climb(parent, level + 1, seen | {parent.id})

    for paper in children:
        climb(paper, 1, {paper.id})
    if not depth:
        return ordered
    return sorted(ordered, key=lambda p: depth.get(p.id, 0))  # stable: by key within a level
