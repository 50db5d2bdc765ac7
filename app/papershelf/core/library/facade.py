"""The `Library` class: the facade's methods, each a short door to the work.

Opening, subscribers, reading and editing papers are here; importing,
searching, reading lists, export and undo are done by this package's other
modules (see the package's docstring).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..changes import Change, Record, Subscriber
from ..dedupe import FINGERPRINT_VERSION, fingerprint
from ..errors import InvalidValueError, NotFoundError
from ..fileio import remove_stale_temp_files
from ..importers.base import ParsedFile
from ..limits import MAX_FIELD_CHARS, MAX_TITLE_CHARS
from ..paper import RATING_MAX, RATING_MIN, Paper, Status, normalize_tag, status_change
from ..query import Answer, Query
from ..store import Op, Store, now_iso
from ..store.readview import input_keys
from ..text import clean_text
from . import (
    applying,
    attaching,
    discovering,
    editing,
    exporting,
    fulltext,
    history,
    importing,
    local,
    merging,
    pdf_import,
    restoring,
    syncing,
    tagging,
)
from . import lists as reading_lists
from . import saved as saving  # saved searches: a JSON file beside the store
from .checks import closest, common_prefix, id_list, new_tags, new_text, status_arg, tag_list, text_arg
from .importing import FileReport
from .searching import Cancelled, IndexKeeper, IndexStatus, Progress

if TYPE_CHECKING:
    from ..exporters.bibtex import ExportReport

log = logging.getLogger(__name__)


class Library:
    """A library folder opened for reading and (unless read-only) writing."""

    def __init__(self, store: Store):
        self._store = store
        self._subscribers: list[Subscriber] = []
        self._fp_index: dict[str, str] | None = None  # built on the first import
        self._search = IndexKeeper(self)
        self._history = history.History(self)
        # the store files' stat keys before the open, its start (ns) and the generation it loaded
        self._opened: tuple[dict[str, list[int]], int, tuple[int, int]] | None = None

    @property
    def _by_fp(self) -> dict[str, str]:
        """fingerprint → id, for de-duplication; built on first use (opening does not pay for it)."""
        if self._fp_index is None:
            self._fp_index = self._fingerprints()
        return self._fp_index

    @property
    def _papers(self) -> Mapping[str, Paper]:
        """The live id → paper mapping, for the facade's own modules that read many papers."""
        return self._store.papers

    # ---- opening -----------------------------------------------------------
    @classmethod
    def open(cls, folder: Path | str, readonly: bool = False, lazy: bool = False) -> Library:
        """Open the library in `folder` (created if need be; `readonly`: no edits, no lock held;
        `lazy`, read-only: papers read when asked for, through this machine's read view of the
        library when it is current: a command's one search or paper, not the window)."""
        started = time.time_ns()
        keys = input_keys(Path(folder))  # the store files as the open found them (a kept export's)
        lib = cls(local.open_store(folder, readonly, lazy and readonly))
        lib._opened = None if keys is None else (keys, started, lib.generation)
        return lib

    @staticmethod
    def kept_export(folder: Path | str, fmt: str) -> exporting.KeptExport | None:
        """The last export of the whole library in `fmt` ("bibtex", "biblatex", "ris"; without
        --files), kept in this machine's export cache, if the library's files are as that export
        found them: written again without opening the library (its `write`). None otherwise."""
        return exporting.kept_export(folder, fmt)

    recover = staticmethod(syncing.recover)

    @staticmethod
    def remove_stale_export_files(folder: Path | str) -> list[Path]:
        """Temporary files an export killed mid-write left in `folder` (ours only, 15 minutes old)."""
        return remove_stale_temp_files(folder)

    @property
    def notices(self) -> list[str]:
        """What opening the library found that the user should hear about (not errors)."""
        return list(self._store.notices) + self._history.notices

    def close(self) -> None:
        """Close the search index, then the library (its lock goes)."""
        self._search.close(shut=True)
        self._store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def folder(self) -> Path:
        """The library folder."""
        return self._store.library_folder

    device = property(syncing.device, doc="This device's id (None for a library read as a single device's).")

    refresh, conflicts, take_conflict = syncing.refresh, syncing.conflicts, syncing.take_conflict
    deleted_record = syncing.deleted_record

    index_folder = property(local.index_folder, doc="Where the search index lives: beside the locks, on this machine.")
    fulltext_folder = property(
        fulltext.fulltext_folder,
        doc="Where the texts of the PDFs are cached: beside the search index, on this machine.",
    )

    @property
    def readonly(self) -> bool:
        """Opened read-only: every edit raises ReadOnlyLibraryError."""
        return self._store.readonly

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the library does: (snapshot generation, journal seq)."""
        return self._store.generation, self._store.seq

    unchanged_on_disk = syncing.unchanged_on_disk

    def _fingerprints(self) -> dict[str, str]:
        out: dict[str, str] = {}
        outdated = self._store.fingerprint_version != FINGERPRINT_VERSION
        for paper in self._store.papers.values():
            if outdated or not paper.fingerprint:
                paper.fingerprint = fingerprint(paper.abstract, paper.title, paper.authors, paper.year)
            out[paper.fingerprint] = paper.id
        # only now do the fingerprints in memory (and so the next snapshot) match the version
        self._store.fingerprint_version = FINGERPRINT_VERSION
        return out

    # ---- subscribers -------------------------------------------------------
    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback(change)` after every change; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _emit(self, change: Change) -> None:
        for callback in list(self._subscribers):
            try:
                callback(change)
            except Exception:  # a broken view must not undo or block a saved change
                log.exception("subscriber %r failed on %s", callback, change.kind)

    def _commit(self, ops: list[Op], changes: list[Change]) -> None:
        if not ops:
            return
        undo = history.diff(self, ops) if self._history.recording() else None
        self._store.apply(ops)
        if undo is not None:
            history.finish(self, undo)
            self._history.record(undo)
        for change in changes:
            self._emit(change)

    # undo and redo: the library's own (history.py)
    undo, redo, can_undo, can_redo = history.undo, history.redo, history.can_undo, history.can_redo
    undo_label, redo_label, undo_history = history.undo_label, history.redo_label, history.undo_history
    undo_token, redo_token = history.undo_token, history.redo_token

    # ---- queries -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._store.papers)

    def papers(self) -> Iterable[Paper]:
        """Every paper, in library order (a live view: copy it to keep it across edits)."""
        return self._store.papers.values()

    def ids(self) -> list[str]:
        """Every paper's id, in library order."""
        return list(self._store.papers)

    def papers_with_files(self) -> list[Paper]:
        """The papers that have files, in library order (a read view knows them: the others are not read)."""
        papers = self._store.papers
        kept = getattr(papers, "with_files", None)
        if kept is not None:
            return [papers[pid] for pid in kept()]
        return [p for p in papers.values() if p.files]

    def __contains__(self, paper_id: object) -> bool:
        return paper_id in self._store.papers

    def present(self, ids: Iterable[str]) -> list[str]:
        """Those of `ids` still in the library, in the order given (safe from any thread)."""
        papers = self._store.papers
        return [pid for pid in ids if pid in papers]

    def find(self, paper_id: str) -> Paper | None:
        """The paper with this id, or None; safe to call from any thread (a
        single dict read), so background readers such as the search index's
        writer use this rather than `get`."""
        return self._store.papers.get(paper_id)

    def get(self, paper_id: str) -> Paper:
        """The paper with this id; NotFoundError if there is none."""
        try:
            return self._store.papers[paper_id]
        except (KeyError, TypeError):
            raise NotFoundError(f"No paper with id {paper_id!r} in this library.") from None

    def resolve(self, ref: str) -> str:
        """A full id from an id or a prefix of one that no other id shares, however
        short (as git does, without git's minimum: a small library's ids differ early)."""
        if not isinstance(ref, str):
            raise NotFoundError(f"A paper id is a string of letters and digits, not {ref!r}.")
        ref = ref.strip()
        if ref in self._store.papers:
            return ref
        if not ref:
            raise NotFoundError("A paper id is needed here (or its first few characters), not an empty one.")
        matches = sorted(pid for pid in self._store.papers if pid.startswith(ref))
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            # enough characters to tell every match from the next one in order
            need = 1 + max(common_prefix(a, b) for a, b in pairwise(matches))
            shown = ", ".join(m[:need] for m in matches[:5]) + (", …" if len(matches) > 5 else "")
            raise NotFoundError(
                f"The id prefix {ref!r} matches {len(matches)} papers ({shown}); "
                f"type at least {need} characters of the id to pick one."
            )
        raise NotFoundError(f"No paper with id {ref!r} in this library.")

    def tag_named(self, tag: str) -> str:
        """The tag as stored, if some paper has it; else NotFoundError naming the closest tags."""
        wanted = normalize_tag(text_arg(tag, "a tag"))
        counts = self.tag_counts()
        if wanted and wanted in counts:
            return wanted
        if not counts:
            raise NotFoundError(f"No tag {tag!r}; the library has no tags yet.")
        raise NotFoundError(f"No tag {tag!r}; " + closest(wanted, counts, "tags"))

    def query(
        self,
        status: Status | str | None = None,
        tag: str | None = None,
        list_name: str | None = None,
        area: str | None = None,
    ) -> list[Paper]:
        """Papers matching every filter given, in library order (list order for a list)."""
        return list(self.matching(status, tag, list_name, area))

    def matching(
        self,
        status: Status | str | None = None,
        tag: str | None = None,
        list_name: str | None = None,
        area: str | None = None,
    ) -> Iterator[Paper]:
        """`query`, one paper at a time (the filters are checked first: errors come at the call)."""
        papers = self._store.papers
        if list_name is not None:
            pool: Iterable[Paper] = [papers[i] for i in self.list_ids(list_name) if i in papers]
        else:
            pool = papers.values()
        wanted_status = status_arg(status) if status is not None else None
        wanted = normalize_tag(text_arg(tag, "a tag")) if tag is not None else None
        wanted_area = text_arg(area, "an area").casefold() if area is not None else None
        return (
            p
            for p in pool
            if (wanted_status is None or p.status is wanted_status)
            and (wanted is None or wanted in p.tags)
            and (wanted_area is None or p.area.casefold() == wanted_area)
        )

    def facet_counts(self, ids: Iterable[str]) -> dict[str, dict[str, int]]:
        """Status value / tag / case-folded area → how many of `ids` have it, as the index counts."""
        status: dict[str, int] = {}
        tags: dict[str, int] = {}
        areas: dict[str, int] = {}
        get = self._store.papers.get
        for pid in ids:
            p = get(pid)
            if p is None:
                continue
            status[p.status.value] = status.get(p.status.value, 0) + 1
            for t in p.tags:
                tags[t] = tags.get(t, 0) + 1
            if p.area:
                key = p.area.casefold()
                areas[key] = areas.get(key, 0) + 1
        return {"status": status, "tags": tags, "area": areas}

    def tag_counts(self) -> Counter[str]:
        """Tag → how many papers have it."""
        kept = getattr(self._store.papers, "tag_counts", None)  # a read view keeps them
        if kept is not None:
            return Counter(kept())
        return Counter(t for p in self._store.papers.values() for t in p.tags)

    def status_counts(self) -> Counter[Status]:
        """Status → how many papers have it."""
        return Counter(p.status for p in self._store.papers.values())

    def lists(self) -> dict[str, list[str]]:
        """Reading lists in their order, name → paper ids (copies)."""
        # list(...) first: a C-level copy, atomic under the GIL, as the index's writer
        # thread reads this while the GUI thread may add a list
        return {name: list(ids) for name, ids in list(self._store.lists.items())}

    def list_ids(self, name: str) -> list[str]:
        """The papers on a reading list, in its order; NotFoundError naming the closest lists."""
        return list(self._store.lists[reading_lists.list_key(self, name)])

    def memberships(self) -> dict[str, list[str]]:
        """paper id → names of the lists that hold it."""
        out: dict[str, list[str]] = {}
        for name, ids in self._store.lists.items():
            for pid in ids:
                out.setdefault(pid, []).append(name)
        return out

    # ---- importing ---------------------------------------------------------
    import_files = importing.import_files  # files as one change: all their papers, or (cancelled) none

    def import_text(self, text: str | bytes, as_listing: bool = False, keywords_as_tags: bool = False) -> FileReport:
        """Import pasted text (bytes: in whatever encoding it came), labelled `PASTE_LABEL`.

        Raises ListingError if it is no listing, BibTeX or RIS text, and
        UncertainListingError (holding what would be imported) if it only
        partly looks like a listing: `as_listing=True` imports it as one.
        """
        if not isinstance(text, (str, bytes)):
            raise InvalidValueError(f"pasted text must be text, not {type(text).__name__}")
        return importing.import_text(self, text, as_listing, keywords_as_tags)

    def import_parsed(self, parsed: ParsedFile, keywords_as_tags: bool = False) -> FileReport:
        """Import one already-parsed file (a paste, another importer's output, or the
        `parsed` of an UncertainListingError once the person confirmed it is a listing)."""
        if not isinstance(parsed, ParsedFile):
            raise InvalidValueError(f"import_parsed takes a parsed file, not {type(parsed).__name__}")
        return importing.import_parsed(self, parsed, keywords_as_tags)

    duplicates = property(merging.Duplicates, doc="Possible duplicates: list, merge, keep apart (merging.py).")

    # ---- editing papers ----------------------------------------------------
    def _set_many(self, ids: Iterable[str], compute: Callable[[Paper], dict[str, Any]]) -> int:
        """Apply per-paper field changes as one durable operation; returns how many changed."""
        now = now_iso()
        ops: list[Op] = []
        touched: set[str] = set()
        fields: set[str] = set()
        for pid in dict.fromkeys(id_list(ids)):
            paper = self.get(pid)
            changes = {k: v for k, v in compute(paper).items() if getattr(paper, k) != v}
            if changes:
                fields.update(changes)
                changes["updated"] = now
                ops.append(Op.set_fields(pid, changes))
                touched.add(pid)
        self._commit(ops, [Change("papers-changed", ids=frozenset(touched), fields=frozenset(fields))])
        return len(touched)

    def set_status(self, ids: Iterable[str], status: Status | str) -> int:
        """Set the reading status of these papers, and when they became Reading or Read
        (`paper.status_change`); returns how many changed."""
        wanted, now = status_arg(status), now_iso()
        return self._set_many(ids, lambda p: status_change(p, wanted, now))

    def remove_tags(self, ids: Iterable[str], tags: Iterable[str]) -> int:
        """Take tags off these papers; returns how many changed."""
        gone = {normalize_tag(t) for t in tag_list(tags)}
        return self._set_many(ids, lambda p: {"tags": [t for t in p.tags if t not in gone]})

    def set_tags(self, ids: Iterable[str], tags: Iterable[str]) -> int:
        """Make these papers' tags exactly `tags`; returns how many changed."""
        new = sorted({normalize_tag(t) for t in new_tags(tags)} - {""})
        return self._set_many(ids, lambda p: {"tags": new})

    def set_notes(self, paper_id: str, notes: str) -> int:
        """Replace a paper's notes ('' clears them); returns 1 if they changed."""
        text = new_text(clean_text(text_arg(notes, "notes")), "the notes", MAX_FIELD_CHARS)
        return self._set_many([paper_id], lambda p: {"notes": text})

    def set_rating(self, ids: Iterable[str], rating: int | None) -> int:
        """Rate these papers 1 to 5 stars (None clears it); returns how many changed."""
        if rating is not None and (
            not isinstance(rating, int) or isinstance(rating, bool) or not RATING_MIN <= rating <= RATING_MAX
        ):
            raise InvalidValueError(f"a rating is {RATING_MIN} to {RATING_MAX} stars, or none, not {rating!r}")
        return self._set_many(ids, lambda p: {"rating": rating})

    def set_title(self, paper_id: str, title: str) -> int:
        """A title the user typed; an empty one goes back to the record's title, or the derived one."""
        title = " ".join(new_text(clean_text(text_arg(title, "a title")), "the title", MAX_TITLE_CHARS).split())
        return self._set_many([paper_id], lambda p: exporting.title_change(p, title))

    # ---- a paper's files (attaching.py) ---------------------------------------
    def attach_files(
        self, paper_id: str, paths: Iterable[Path | str], link: bool = False, label: str = "", readable: bool = False
    ) -> attaching.Attached:
        """Attach files to a paper: copied into the library folder (files/<key>/), or with
        `link` left where they are; a file whose content the paper has already is not added
        twice. A file that cannot be read is named in the answer, never an exception.
        `readable`: a PDF the reader cannot open is refused (a download), not attached with a note."""
        return attaching.attach_files(self, paper_id, paths, link, label, readable)

    def prepare_attachments(
        self, paper_id: str, paths: Iterable[Path | str], link: bool = False, label: str = "", readable: bool = False
    ) -> attaching.Attached:
        """`attach_files` in two steps, for the window: this one (hashing, the page count, the copy
        into the library folder) on a worker thread, writing nothing to the record; then
        `record_attachments` on the GUI thread, which writes the record (one undoable action).
        `readable`: a PDF the reader cannot open is refused, not attached with a note (a download)."""
        return attaching.prepare_attachments(self, paper_id, paths, link, label, readable)

    def record_attachments(self, prepared: attaching.Attached) -> attaching.Attached:
        """Write what `prepare_attachments` made to the paper's record (see there)."""
        return attaching.record_attachments(self, prepared)

    def paper_files(self, paper_id: str) -> list[tuple[Any, Path, bool]]:
        """A paper's files (`Attachment`), each with where it is here and whether it is there."""
        return attaching.paper_files(self, paper_id)

    def extract_fulltext(
        self, progress: Progress | None = None, cancelled: Cancelled | None = None
    ) -> fulltext.Extracted:
        """Read the text of every attached PDF not read yet, for full-text search (slow: a
        worker thread, with `progress(done, total)` and `cancelled()`). Each text is kept in
        this machine's cache as it is read, so a killed process loses only the PDF it was
        reading; an open index takes the papers at once, a closed one when it next opens.
        A PDF without text (encrypted, image-only, damaged) is named in the answer, never raised."""
        return fulltext.extract_fulltext(self, progress, cancelled)

    def pdfs_to_read(self) -> int:
        """How many attached PDFs (distinct contents) are not searchable yet (`extract_fulltext` reads them)."""
        return fulltext.pdfs_to_read(self)

    def pdf_problem(self, sha256: str) -> str:
        """Why the attached PDF of this content has no text (encrypted, damaged…), once the
        full-text reader has read it; "" when it has text or was not read yet. Reads this
        machine's text cache: ask it only of a PDF whose pages could not be counted."""
        return fulltext.pdf_problem(self, sha256)

    def pdf_snippet(self, paper_id: str, text: str) -> str:
        """Where the paper's PDFs hold the words of `text`, with the page: "p. 7: …the
        <b class="match">diffusion</b> prior…" (HTML; "" when they hold none or the index is not ready)."""
        return self._search.pdf_snippet(paper_id, text)

    def mark_opened(self, paper_id: str) -> None:
        """One of the paper's files was opened now (feeds the read dates and the statistics)."""
        attaching.mark_opened(self, paper_id)

    def detach_file(self, paper_id: str, index: int) -> Any:
        """Take file number `index` (0-based, as `paper_files` lists them) off a paper; the
        `Attachment` taken. The file itself stays on disk (a copy in files/ too) so that Undo
        ("Remove 1 file from …") brings the attachment back whole."""
        return attaching.detach_file(self, paper_id, index)

    def import_pdfs(
        self,
        paths: Iterable[Path | str],
        progress: Callable[[int, int, str], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> pdf_import.PdfImportReport:
        """Import PDF files and folders (walked for *.pdf) as papers, one per PDF, its file copied
        and attached: one change (one Undo), a `FileReport` per PDF. A PDF attached already is not
        added twice; one whose DOI or arXiv id is a paper's is attached to that paper. See pdf_import.py."""
        return pdf_import.import_pdfs(self, paths, progress, cancelled)

    def own_identifiers(self, ids: Iterable[str]) -> dict[str, Any]:
        """Each paper's own identifier (`Identifier`: its DOI, else its arXiv id), for the papers
        that have one: what `OnlineSession.fetch` takes to complete them (import --online)."""
        return pdf_import.identifiers(self, ids)

    def complete_found(
        self, found: Mapping[str, Any], expect: Mapping[str, Record] | None = None
    ) -> tuple[applying.FoundApplied, dict[str, list[str]]]:
        """Apply the records fetched by the papers' own identifiers (a PDF's DOI or arXiv id) whole:
        every field they give, a title read from the PDF replaced too, by `apply_found`'s rules
        (`expect`: an edit made meanwhile wins). What was applied, and each paper's fields changed."""
        return pdf_import.complete_found(self, found, expect)

    def delete_papers(self, ids: Iterable[str]) -> int:
        """Remove papers (and their places on reading lists); returns how many."""
        ids = [self.get(pid).id for pid in dict.fromkeys(id_list(ids))]
        gone = set(ids)
        ops = [Op("del", pid) for pid in ids]
        touched_lists = []
        for name, members in self._store.lists.items():
            if gone.intersection(members):
                ops.append(Op("list", name, [i for i in members if i not in gone]))
                touched_lists.append(name)
        fps = [self._store.papers[pid].fingerprint for pid in ids]
        events = [Change("papers-removed", ids=frozenset(ids))]
        if touched_lists:
            events.append(Change("lists-changed", lists=frozenset(touched_lists)))
        self._commit(ops, events)
        for fp in fps:
            self._by_fp.pop(fp, None)
        return len(ids)

    # tags as a whole, and the tags the user chose (tagging.py)
    add_tags, rename_tag, delete_tag = tagging.add_tags, tagging.rename_tag, tagging.delete_tag
    saved_searches_using, make_keywords_tags = tagging.saved_searches_using, tagging.make_keywords_tags
    key_tags, restore_saved_searches = tagging.key_tags, tagging.restore_saved_searches
    drop_keyword_tags, hand_tags = tagging.drop_keyword_tags, tagging.hand_tags
    restore_hand_tags = tagging.restore_hand_tags

    # ---- export (see exporting.py) ------------------------------------------
    def export_bibtex(
        self,
        ids: Iterable[str],
        path: Path | str,
        dialect: str = "bibtex",
        files: bool = False,
        out: Callable[[str], object] | None = None,
    ) -> tuple[ExportReport, str]:
        """Write these papers to a .bib file (atomically; "-" returns the text
        without writing, or hands it to `out` piece by piece) and pin the citation keys they
        were given. `files` writes each paper's files as a `file` field (JabRef's form,
        absolute paths on this machine). Entries an earlier export rendered are copied
        (exporters/entrycache.py).

        Returns (ExportReport, text); the text only for "-" without `out`, a file is written
        piece by piece."""
        return exporting.export_bibtex(self, ids, path, dialect, files, out)

    def citation_keys(self, ids: Iterable[str], pin: bool = True) -> dict[str, str]:
        """paper id → the key an export gives it, in the order given. `pin`
        keeps new keys, as an export does: a key copied into a document must
        not change when a later import brings a paper with the same base key."""
        return exporting.citation_keys(self, ids, pin)

    def bibtex_entries(self, ids: Iterable[str], dialect: str = "bibtex", pin: bool = True) -> str:
        """The BibTeX entries of these papers in the order given (no file header),
        with the keys an export gives them (pinned, as by `citation_keys`)."""
        return exporting.bibtex_entries(self, ids, dialect, pin)

    def export_ris(
        self, ids: Iterable[str], path: Path | str, out: Callable[[str], object] | None = None
    ) -> tuple[exporting.RisExportReport, str]:
        """Write these papers to a RIS file (atomically; "-" returns the text without writing,
        or hands it to `out` piece by piece)."""
        return exporting.export_ris(self, ids, path, out)

    def set_citekey(self, paper_id: str, key: str) -> int:
        """A citation key the user chose ('' lets Papershelf pick one again); the entries that
        crossref the old key follow it."""
        changes = editing.citekey_changes(self, paper_id, key)
        return self._set_many(changes, lambda p: changes[p.id])

    # ---- the record: edit, add found records (see editing.py) ----------------
    edit_record = editing.edit_record
    edit_scope = editing.edit_scope
    add_found = editing.add_found
    apply_found = applying.apply_found

    # ---- undo support: put back exactly what was there (see restoring.py) --------
    UNDOABLE_FIELDS = restoring.UNDOABLE_FIELDS

    def snapshot_fields(self, ids: Iterable[str]) -> dict[str, Record]:
        """The user-editable fields of these papers, to hand back to `restore_fields`."""
        return restoring.snapshot_fields(self, ids)

    def restore_fields(self, snapshot: Mapping[str, Record]) -> int:
        """Set fields back to a snapshot (papers deleted since are skipped)."""
        return restoring.restore_fields(self, snapshot)

    def restore_lists(self, lists: Mapping[str, list[str] | None]) -> None:
        """Put reading lists back as they were (None: the list did not exist)."""
        restoring.restore_lists(self, lists)

    def restore_papers(self, papers: Iterable[Paper], lists: Mapping[str, list[str] | None]) -> int:
        """Bring deleted papers back exactly as they were, and the reading lists
        they were on. Papers already present are left alone."""
        return restoring.restore_papers(self, papers, lists)

    def records(self, ids: Iterable[str]) -> dict[str, Record]:
        """The stored records of these papers (copies), to hand back to `put_records`."""
        papers = self._store.papers
        return {pid: dict(papers[pid].raw()) for pid in id_list(ids) if pid in papers}

    def put_records(self, records: Mapping[str, Record], remove: Iterable[str] = ()) -> None:
        """Make papers exactly these stored records (adding the missing ones) and
        remove others, as one change: how an import is undone and redone. Every
        field comes back but `updated`, which says when the paper last changed."""
        restoring.put_records(self, records, remove)

    def swap_fields(
        self,
        frm: Mapping[str, Record],
        to: Mapping[str, Record],
        add: Mapping[str, Record] | None = None,
        remove: Iterable[str] = (),
    ) -> None:
        """Move papers from the stored records `frm` to `to`, field by field, as one
        change: how an import's merges are undone and redone. Only the fields that
        differ between the two move, and only where a paper still holds `frm`'s
        value; one changed since (a citation key pinned by Copy Key or an export,
        an edit) keeps its value. Papers in `add` are added as they are, those in
        `remove` removed."""
        restoring.swap_fields(self, frm, to, add, remove)

    # ---- reading lists (see lists.py) ---------------------------------------
    def create_list(self, name: str) -> str:
        """Make an empty reading list (nothing happens if it exists); its name as stored."""
        return reading_lists.create_list(self, name)

    def add_to_list(self, name: str, ids: Iterable[str]) -> int:
        """Append papers to a list (created if needed); ones already on it stay where they are."""
        return reading_lists.add_to_list(self, name, ids)

    def remove_from_list(self, name: str, ids: Iterable[str]) -> int:
        """Take papers off a list; returns how many were on it."""
        return reading_lists.remove_from_list(self, name, ids)

    def reorder_list(self, name: str, ids: list[str]) -> None:
        """Put a list's papers in this order (it must hold exactly the papers on it)."""
        reading_lists.reorder_list(self, name, ids)

    def rename_list(self, old: str, new: str) -> str:
        """Rename a reading list; returns the new name as stored."""
        return reading_lists.rename_list(self, old, new)

    def delete_list(self, name: str) -> None:
        """Delete a reading list; its papers stay in the library."""
        reading_lists.delete_list(self, name)

    saved_searches, saved_search, save_search = saving.saved_searches, saving.saved_search, saving.save_search
    delete_saved_search, rename_saved_search = saving.delete_saved_search, saving.rename_saved_search

    # ---- searching (see searching.py) ----------------------------------------
    def open_index(
        self, progress: Progress | None = None, cancelled: Cancelled | None = None, rebuild: bool = False
    ) -> bool:
        """Open the search index (in `index_folder`), catching it up with the
        library or rebuilding it (`rebuild`: always) as need be, and keep it
        following every change; an index already open is closed first.

        Slow (seconds for a rebuild): call it off the GUI thread, with
        `progress(done, total)` and `cancelled()`. Returns False if it was
        cancelled or the library closed meanwhile (searches then match titles).
        Raises SearchIndexError when the index cannot be built or read there
        (the library itself is fine). `index_status` says how it went.
        """
        return self._search.open(progress, cancelled, rebuild)

    def reindex(self, progress: Progress | None = None, cancelled: Cancelled | None = None) -> bool:
        """Rebuild the search index from the library, from scratch; False if
        cancelled (the old index stays). An open index is open again afterwards;
        otherwise the rebuilt one is left closed."""
        return self._search.reindex(progress, cancelled)

    def close_index(self) -> None:
        """Close the search index (waiting for its last edits); searches then match titles."""
        self._search.close()

    @property
    def index_status(self) -> IndexStatus:
        """The search index's state (closed, opening, ready, damaged) and why it was rebuilt."""
        return self._search.status

    def on_index_committed(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` each time edits become searchable (on the index's
        writer thread), whichever index is open then; returns an unsubscribe function."""
        return self._search.on_committed(callback)

    def search(self, query: Query, wait: bool = True) -> Answer:
        """Answer a query: ids in order, counts, facets, words to highlight.

        From the search index when it is ready (`wait`: first for the edits it
        has not committed yet, at most two seconds), else from the library's
        filters and titles (`Answer.indexed` False; `index_damaged` when a
        search found the index damaged: `open_index` then rebuilds it). Safe to
        call from any thread. Raises InvalidValueError for an unknown order or
        status, NotFoundError for an unknown reading list, SearchIndexError when
        the index cannot be read for another reason.
        """
        if not isinstance(query, Query):
            raise InvalidValueError(f"search takes a Query, not {type(query).__name__}")
        return self._search.search(query, wait)

    def snippets(self, ids: Iterable[str], text: str, top: int = 2) -> dict[str, str]:
        """id → HTML fragments of the abstract around the words `text` matches
        (escaped, matches in <b class="match">); only for `ids`, {} while the index is not ready."""
        return self._search.snippets(id_list(ids), text, top)

    def highlight_terms(self, text: str) -> set[str]:
        """The words a query matches, as the index holds them (compare through
        `index_normal`); empty while the index is not ready."""
        return self._search.highlight_terms(text)

    @property
    def index_normal(self) -> Callable[[str], str] | None:
        """A word as the search index holds it (folded, stemmed), to compare with
        `Answer.terms`; None while no index is open."""
        return self._search.normal

    def more_like(self, paper_id: str, limit: int = 10) -> list[str]:
        """Papers whose abstracts are like this one's, best first (SearchIndexError
        while the index is not ready)."""
        return self._search.more_like(paper_id, limit)

    suggest = discovering.suggest

    # ---- maintenance -------------------------------------------------------
    def compact(self) -> None:
        """Fold the journal into a new snapshot (keeping backups)."""
        self._store.compact()

    def backups(self) -> list[Path]:
        """The library's backup snapshots, newest first."""
        return self._store.backups()
