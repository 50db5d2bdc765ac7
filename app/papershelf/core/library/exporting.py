"""Export and citation keys, for the facade: `Library.export_bibtex`,
`citation_keys` and `bibtex_entries` do their work here (part of the
facade: it uses the library's private parts). A key an export gives a paper
is pinned, so the same paper keeps it in every later export.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
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


def _cache_path(folder: Path, device: str) -> Path:
    from ..exporters.entrycache import CACHE_NAME
    from .local import local_folder

    return local_folder(folder, device) / CACHE_NAME


def entry_cache(lib: Library, kind: str) -> EntryCache:
    """The entries of `kind` ("bibtex", "biblatex", "ris") earlier exports rendered, kept in this
    machine's folder for the library (`machine.local_dir`, beside its search index), never in the
    library folder: not even for a library read as a single device's, whose store keeps its
    locks in the folder itself."""
    from ..exporters.entrycache import EntryCache, bound
    from .local import device_of

    return EntryCache(_cache_path(lib.folder, device_of(lib._store)), kind, bound(len(lib)))


def _inputs_json(keys: Mapping[str, Any]) -> str:
    """What a kept export is of: the store files' stat keys, and this machine (a settings folder
    copied from another machine opens the library as a new device: not this export)."""
    import json

    from ..store.machine import machine_fingerprint

    return json.dumps({"files": keys, "machine": machine_fingerprint()}, sort_keys=True)


def _seal(lib: Library, cache: EntryCache, said: dict[str, Any]) -> None:
    """Keep an export of the whole library as the export of the library's files as they are, if
    it is: nothing was edited through `lib` since it was opened (no key pinned: the caller), the
    open said nothing, and every store file was settled before the open and is unchanged now
    (readview's rule, for the same reason: an edit racing the open changes a key)."""
    from ..exporters.entrycache import seal
    from ..store.readview import input_keys, settled

    opened = lib._opened
    if not cache.manifest or opened is None or lib.notices or lib.generation != opened[2]:
        return
    keys, started, _ = opened
    if settled(keys, started) and input_keys(lib.folder) == keys:
        seal(cache, _inputs_json(keys), said)


class KeptExport:
    """An export of the whole library repeated from the export cache without opening the library
    (`Library.kept_export`): `report` says what the export said; `write` writes it."""

    def __init__(self, kept: Any, kind: str) -> None:
        self._kept = kept
        self.kind = kind
        said = kept.said
        self.fragments: list[str] = list(said["fragments"])
        self.fragments_derived: bool = bool(said["derived"])

    def readable(self) -> bool:
        """Whether every kept entry reads (all of them read once): before the first byte goes to
        standard output, where a damaged page met halfway could not be taken back."""
        return bool(self._kept.readable())

    def write(self, path: Path | str, out: Callable[[str], object] | None = None) -> tuple[Any, str]:
        """Write the export to `path` ("-": its text, or each piece to `out`), as
        `Library.export_bibtex`/`export_ris` would: (its report, the text for "-" without `out`)."""
        from ..exporters.bibtex import ExportReport
        from ..exporters.ris import EOL, RisExportReport

        said = self._kept.said
        report: Any
        if self.kind == "ris":
            report = RisExportReport(path=str(path), entries=said["entries"], controls_removed=said["controls"])
            pieces = self._kept.pieces(EOL)
        else:
            report = ExportReport(path=str(path), entries=said["entries"], replaced_chars=said["replaced"])
            report.controls_removed, report.added_parents = said["controls"], said["parents"]
            pieces = _headed(said["head"], self._kept.pieces("\n"))
        report.fragments, report.fragments_derived = self.fragments, self.fragments_derived
        return report, _written(path, pieces, out)

    def close(self) -> None:
        """Let go of the cache."""
        self._kept.close()

    def __enter__(self) -> KeptExport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _headed(head: list[str], pieces: Iterable[str]) -> Iterator[str]:
    yield from head
    yield from pieces


def kept_export(folder: Path | str, kind: str) -> KeptExport | None:
    """See `Library.kept_export`."""
    from ..exporters.entrycache import KeptExport as Kept
    from ..store import machine
    from ..store.readview import input_keys
    from ..store.shared import layout_of

    folder = Path(folder)
    if layout_of(folder) != "shared":
        return None
    keys = input_keys(folder)
    if keys is None:
        return None
    kept = Kept(_cache_path(folder, machine.device_id()), kind, _inputs_json(keys))
    if kept.said is None:
        return None
    return KeptExport(kept, kind)


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
    # kept for the next plain export only when it is one: every paper in the library's order, no
    # parents pulled in (a chosen set that covers the library says other things: review finding)
    plain = not parents and ids == list(papers)
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
    _find_fragments(report, papers, ids[: len(ids) - len(parents)])
    text = _written(path, rendering, out)
    report.replaced_chars = rendering.replaced
    report.controls_removed = rendering.controls_removed
    new_keys = {pid: keys[pid] for pid in ids if not papers[pid].citekey}
    if plain and rendering.cache is not None and not new_keys and not files:
        said = {"entries": report.entries, "replaced": report.replaced_chars, "controls": report.controls_removed}
        said |= {"parents": report.added_parents, "head": rendering.head}
        _seal(lib, rendering.cache, said | {"fragments": report.fragments, "derived": report.fragments_derived})
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
    _find_fragments(report, papers, ids)
    text = _written(path, rendering, out)
    report.controls_removed = rendering.controls_removed
    if rendering.cache is not None and ids == list(papers):  # RIS keeps the order chosen: only the library's
        said = {"entries": report.entries, "controls": report.controls_removed, "fragments": report.fragments}
        _seal(lib, rendering.cache, said | {"derived": report.fragments_derived})
    return report, text


def _find_fragments(report: Any, papers: Mapping[str, Paper], ids: list[str]) -> None:
    """The exported papers (`ids`, not the parents added) nobody would cite (core.citation.fragments),
    and whether every one of them has a derived title, for the command's warning."""
    from ..citation import fragments

    report.fragments = fragments(papers[pid] for pid in ids)
    report.fragments_derived = all(papers[pid].title_derived for pid in report.fragments)
