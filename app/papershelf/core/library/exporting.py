"""Export and citation keys, for the facade: `Library.export_bibtex`,
`citation_keys` and `bibtex_entries` do their work here (part of the
facade: it uses the library's private parts). A key an export gives a paper
is pinned, so the same paper keeps it in every later export.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..biblio.latex import decode
from ..biblio.latex_writer import DIALECTS
from ..errors import InvalidValueError, NothingToExportError, StoreWriteError
from ..paper import Paper
from .checks import id_list

if TYPE_CHECKING:
    from ..exporters.bibtex import ExportReport
    from ..exporters.entrycache import EntryCache
    from ..exporters.ris import RisExportReport as RisExportReport
    from .facade import Library


_REFERENCES = ("crossref", "xdata")


def references_renamed(papers: Iterable[Paper], old: str, new: str) -> dict[str, dict[str, str]]:
    """The records of `papers` whose crossref/xdata name the key `old` (BibTeX: in any case),
    with that name changed to `new`, as {id: new bibfields}: a parent's new key must not leave
    its children pointing at nothing (or at another paper that takes the old key later)."""
    folded = old.casefold()
    out: dict[str, dict[str, str]] = {}
    for paper in papers:
        raw = paper.bibfields
        if not any(name in raw for name in _REFERENCES):
            continue
        changed = dict(raw)
        for name in _REFERENCES:
            if name in raw:
                keys = [k.strip() for k in decode(raw[name]).split(",")]
                if any(k.casefold() == folded for k in keys):
                    changed[name] = "{" + ",".join(new if k.casefold() == folded else k for k in keys) + "}"
        if changed != raw:
            out[paper.id] = changed
    return out


def _exported_ids(lib: Library, ids: Iterable[str], path: Path | str) -> list[str]:
    """The papers an export writes (ids checked, repeats dropped); NothingToExportError for
    none: an empty file over a good one is never what was meant."""
    out = [lib.get(pid).id for pid in dict.fromkeys(id_list(ids))]
    if not out:
        raise NothingToExportError(
            "No papers to export; nothing was written"
            + ("" if str(path) == "-" else f" and {path} is as it was")
            + ".",
            path,
        )
    return out


def title_change(paper: Paper, title: str) -> dict[str, Any]:
    """The fields a title the user typed changes (record_edit.title_change, imported when used:
    opening a library does not load the editor's tables)."""
    from ..record_edit import title_change as change

    return change(paper, title)


def _write_remembered(path: Path, pieces: Iterable[str]) -> None:
    """Write an export (streamed, atomically; ExportError says why it failed) and remember its
    checksum: a later export may replace a file only as Papershelf wrote it (core.written)."""
    from ..fileio import write_atomically
    from ..written import Hashing, remember

    hashed = Hashing(pieces)
    write_atomically(path, hashed)
    remember(path, hashed.digest)


def entry_cache(lib: Library, kind: str) -> EntryCache:
    """The entries of `kind` ("bibtex", "biblatex", "ris") earlier exports rendered, kept in this
    machine's folder for the library (beside its search index: never in the synced folder)."""
    from ..exporters.entrycache import CACHE_NAME, EntryCache
    from .local import index_folder

    return EntryCache(index_folder(lib).parent / CACHE_NAME, kind)


def _written(path: Path | str, rendering: Iterable[str], out: Callable[[str], object] | None) -> str:
    """Write a rendering to `path`; for "-" its text, or "" once each piece went to `out`."""
    if str(path) != "-":
        _write_remembered(Path(path), rendering)
        return ""
    if out is None:
        return "".join(rendering)
    for piece in rendering:
        out(piece)
    return ""


def _check_dialect(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise InvalidValueError(f"unknown dialect {dialect!r}; use bibtex or biblatex")


def export_bibtex(
    lib: Library,
    ids: Iterable[str],
    path: Path | str,
    dialect: str = "bibtex",
    files: bool = False,
    out: Callable[[str], object] | None = None,
) -> tuple[ExportReport, str]:
    """See `Library.export_bibtex`."""
    from ..citekeys import assign_keys
    from ..exporters.bibtex import ExportReport, Rendering

    ids = _exported_ids(lib, ids, path)
    _check_dialect(dialect)
    papers = lib._papers
    keys = assign_keys(papers.values())
    parents = crossref_parents(papers, keys, ids)
    ids += parents
    rendering = Rendering(
        [papers[pid] for pid in ids],
        keys,
        dialect,
        file_fields(lib, ids) if files else None,
        cache=entry_cache(lib, dialect),
        whole=len(ids) == len(papers),
    )
    report = ExportReport(path=str(path), entries=len(ids), added_parents=[keys[pid] for pid in parents])
    text = _written(path, rendering, out)
    report.replaced_chars = rendering.replaced
    report.controls_removed = rendering.controls_removed
    new_keys = {pid: keys[pid] for pid in ids if not papers[pid].citekey}
    if lib.readonly:  # export only reads: the keys go out, but stay unpinned
        report.unpinned_keys = new_keys
    elif new_keys:
        try:
            with lib._history.unrecorded():  # pinning keys is no action of the user's to undo
                lib._set_many(new_keys, lambda p: {"citekey": new_keys[p.id]})
        except StoreWriteError as exc:  # a full disk, say: the export is written all the same
            report.unpinned_keys = new_keys
            report.unpinned_because = str(exc).split(". ", 1)[0]
        else:
            report.new_keys = new_keys
    return report, text


def file_fields(lib: Library, ids: Iterable[str]) -> dict[str, str]:
    """paper id → its `file` field (JabRef's form, absolute paths on this machine), for the papers
    with files (export --files)."""
    from ..attachments import attachments
    from ..importers.filefield import file_field

    out = {}
    for pid in ids:
        items = attachments(lib.get(pid).files)
        if items:
            out[pid] = file_field((a.label, Path(os.path.abspath(a.location(lib.folder)))) for a in items)
    return out


def crossref_parents(papers: Mapping[str, Paper], keys: Mapping[str, str], ids: Iterable[str]) -> list[str]:
    """Ids of the papers that the exported ones cross-reference (crossref, xdata; and theirs) but
    that are not exported: BibTeX and biber need those entries in the same file."""
    from ..exporters.crossrefs import parent_keys

    wanted = set(ids)
    if not any(parent_keys(papers[pid]) for pid in wanted):
        return []  # the usual case: no record names a parent, so no key table to build
    by_key = {key.casefold(): pid for pid, key in keys.items()}
    added: list[str] = []
    todo = list(ids)
    while todo:
        for key in parent_keys(papers[todo.pop()]):
            parent = by_key.get(key.casefold())
            if parent is not None and parent not in wanted:
                wanted.add(parent)
                added.append(parent)
                todo.append(parent)
    return added


def citation_keys(lib: Library, ids: Iterable[str], pin: bool = True) -> dict[str, str]:
    """See `Library.citation_keys`."""
    from ..citekeys import assign_keys

    ids = [lib.get(pid).id for pid in dict.fromkeys(id_list(ids))]
    papers = lib._papers
    keys = assign_keys(papers.values())
    new = {pid: keys[pid] for pid in ids if not papers[pid].citekey}
    if pin and new and not lib.readonly:
        with lib._history.unrecorded():  # pinning keys is no action of the user's to undo
            lib._set_many(new, lambda p: {"citekey": new[p.id]})
    return {pid: keys[pid] for pid in ids}


def bibtex_entries(lib: Library, ids: Iterable[str], dialect: str = "bibtex", pin: bool = True) -> str:
    """See `Library.bibtex_entries`."""
    from ..exporters.bibtex import entries_text

    _check_dialect(dialect)
    keys = citation_keys(lib, ids, pin=pin)
    papers = lib._papers
    text: str = entries_text([papers[pid] for pid in keys], keys, dialect)
    return text


def export_ris(
    lib: Library, ids: Iterable[str], path: Path | str, out: Callable[[str], object] | None = None
) -> tuple[RisExportReport, str]:
    """See `Library.export_ris`."""
    from ..exporters.ris import RisExportReport, RisRendering

    ids = _exported_ids(lib, ids, path)
    papers = lib._papers
    rendering = RisRendering([papers[pid] for pid in ids], entry_cache(lib, "ris"), whole=len(ids) == len(papers))
    report = RisExportReport(path=str(path), entries=len(ids))
    text = _written(path, rendering, out)
    report.controls_removed = rendering.controls_removed
    return report, text
