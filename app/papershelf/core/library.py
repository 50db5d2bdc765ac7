"""The facade: the one way the GUI and the CLI reach the data.

Every change goes through here: it becomes store operations, is made durable,
and is then announced to subscribers as a `Change` (plain callbacks, no Qt),
so each view can decide whether it needs to refresh.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import importers
from .dedupe import FINGERPRINT_VERSION, fingerprint, merge_into
from .errors import InvalidValueError, ListingError, NotFoundError, NothingToExportError, UncertainListingError
from .importers.base import Candidate, ParsedFile, Problem
from .paper import FIELDS, RATING_MAX, RATING_MIN, Paper, Source, Status, normalize_tag
from .store import Op, Store, gc_paused, now_iso
from .text import clean_text, find_links, plain_text
from .titles import derive_title

log = logging.getLogger(__name__)

ID_LENGTH = 10


@dataclass(frozen=True, slots=True)
class Change:
    """What an operation touched, for subscribers to decide what to refresh."""

    kind: str                                  # papers-added | papers-changed | papers-removed | lists-changed
    ids: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()       # for papers-changed: which fields
    lists: frozenset[str] = frozenset()        # for lists-changed: which list names


@dataclass(slots=True)
class FileReport:
    """What importing one file did."""

    path: str
    format: str = ""
    added: int = 0
    merged: int = 0
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    error: str = ""          # the file could not be imported at all
    added_ids: list[str] = field(default_factory=list)
    # a header-less file that only partly looks like a listing: nothing imported until
    # confirmed (import_files(..., as_listing=True)); the papers it would give, by title
    unconfirmed: list[str] = field(default_factory=list)
    unconfirmed_problems: int = 0
    # the papers this file merged into, as stored before the import touched
    # them (id → stored record), so that undoing the import restores them exactly
    merged_before: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def uncertain(cls, path: str, exc: UncertainListingError) -> "FileReport":
        """The report of text held back until it is confirmed as a listing."""
        return cls(path=path, format=exc.parsed.format, error=str(exc),
                   unconfirmed=[derive_title(c.abstract) for c in exc.parsed.papers],
                   unconfirmed_problems=len(exc.parsed.problems))

    @property
    def ok(self) -> bool:
        return not self.error

    def summary(self) -> str:
        if self.error:
            if self.error.startswith(self.path):
                return f"not imported: {self.error}"
            return f"{self.path}: not imported: {self.error}"
        if not self.added and not self.merged:
            return f"{self.path}: nothing changed; every paper in it is already in the library"
        parts = [f"{self.added} added", f"{self.merged} merged as duplicates"]
        if self.unchanged:
            parts.append(f"{self.unchanged} already in the library")
        return f"{self.path} ({self.format}): " + ", ".join(parts)


Subscriber = Callable[[Change], None]


class Library:
    """A library folder opened for reading and (unless read-only) writing."""

    def __init__(self, store: Store):
        self._store = store
        self._subscribers: list[Subscriber] = []
        self._fp_index: dict[str, str] | None = None   # built on the first import

    @property
    def _by_fp(self) -> dict[str, str]:
        """fingerprint → id, for de-duplication; built when first needed so that
        opening a library (and every read-only command) does not pay for it."""
        if self._fp_index is None:
            self._fp_index = {}
            self._reindex_fingerprints()
        return self._fp_index

    # ---- opening -----------------------------------------------------------
    @classmethod
    def open(cls, folder: Path | str, readonly: bool = False) -> "Library":
        return cls(Store(folder, readonly=readonly).open())

    @staticmethod
    def recover(folder: Path | str) -> str:
        """Repair a damaged library folder (see Store.recover); returns the report in words."""
        return Store(folder).recover()

    @staticmethod
    def remove_stale_export_files(folder: Path | str) -> list[Path]:
        """Temporary files an export killed mid-write left in `folder` (ours only, 15 minutes old)."""
        from .fileio import remove_stale_temp_files
        return remove_stale_temp_files(folder)

    @property
    def notices(self) -> list[str]:
        """What opening the library found that the user should hear about (not errors)."""
        return list(self._store.notices)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def folder(self) -> Path:
        return self._store.folder

    @property
    def readonly(self) -> bool:
        return self._store.readonly

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the library does: (snapshot generation, journal seq)."""
        return self._store.generation, self._store.seq

    def _reindex_fingerprints(self) -> None:
        self._fp_index.clear()
        outdated = self._store.fingerprint_version != FINGERPRINT_VERSION
        for paper in self._store.papers.values():
            if outdated or not paper.fingerprint:
                paper.fingerprint = fingerprint(paper.abstract, paper.title, paper.authors, paper.year)
            self._fp_index[paper.fingerprint] = paper.id
        # only now do the fingerprints in memory (and so the next snapshot) match the version
        self._store.fingerprint_version = FINGERPRINT_VERSION

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
        self._store.apply(ops)
        for change in changes:
            self._emit(change)

    # ---- queries -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self._store.papers)

    def papers(self) -> Iterable[Paper]:
        return self._store.papers.values()

    def ids(self) -> list[str]:
        return list(self._store.papers)

    def __contains__(self, paper_id: object) -> bool:
        return paper_id in self._store.papers

    def find(self, paper_id: str) -> Paper | None:
        """The paper with this id, or None; safe to call from any thread (a
        single dict read), so background readers such as the search index's
        writer use this rather than `get`."""
        return self._store.papers.get(paper_id)

    def get(self, paper_id: str) -> Paper:
        try:
            return self._store.papers[paper_id]
        except KeyError:
            raise NotFoundError(f"No paper with id {paper_id!r} in this library.") from None

    def resolve(self, ref: str) -> str:
        """A full id from an id or a prefix of one that no other id shares, however
        short (as git does, without git's minimum: a small library's ids differ early)."""
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
            need = 1 + max(_common_prefix(a, b) for a, b in zip(matches, matches[1:]))
            shown = ", ".join(m[:need] for m in matches[:5]) + (", …" if len(matches) > 5 else "")
            raise NotFoundError(f"The id prefix {ref!r} matches {len(matches)} papers ({shown}); "
                                f"type at least {need} characters of the id to pick one.")
        raise NotFoundError(f"No paper with id {ref!r} in this library.")

    def tag_named(self, tag: str) -> str:
        """The tag as stored, if some paper has it; else NotFoundError naming the closest tags."""
        wanted = normalize_tag(tag)
        counts = self.tag_counts()
        if wanted and wanted in counts:
            return wanted
        if not counts:
            raise NotFoundError(f"No paper is tagged {tag!r}; the library has no tags yet.")
        raise NotFoundError(f"No paper is tagged {tag!r}; " + _closest(wanted, counts, "tags"))

    def query(self, status: Status | str | None = None, tag: str | None = None,
              list_name: str | None = None, area: str | None = None) -> list[Paper]:
        """Papers matching every filter given, in library order (list order for a list)."""
        if list_name is not None:
            pool = [self._store.papers[i] for i in self.list_ids(list_name) if i in self._store.papers]
        else:
            pool = list(self._store.papers.values())
        if status is not None:
            try:
                status = Status.parse(status) if isinstance(status, str) else status
            except ValueError as exc:
                raise InvalidValueError(str(exc)) from None
            pool = [p for p in pool if p.status is status]
        if tag is not None:
            wanted = normalize_tag(tag)
            pool = [p for p in pool if wanted in p.tags]
        if area is not None:
            wanted_area = area.casefold()
            pool = [p for p in pool if p.area.casefold() == wanted_area]
        return pool

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

    def tag_counts(self) -> Counter:
        return Counter(t for p in self._store.papers.values() for t in p.tags)

    def status_counts(self) -> Counter:
        return Counter(p.status for p in self._store.papers.values())

    def lists(self) -> dict[str, list[str]]:
        """Reading lists in their order, name → paper ids (copies)."""
        return {name: list(ids) for name, ids in self._store.lists.items()}

    def list_ids(self, name: str) -> list[str]:
        key = self._list_key(name)
        return list(self._store.lists[key])

    def memberships(self) -> dict[str, list[str]]:
        """paper id → names of the lists that hold it."""
        out: dict[str, list[str]] = {}
        for name, ids in self._store.lists.items():
            for pid in ids:
                out.setdefault(pid, []).append(name)
        return out

    def _list_key(self, name: str) -> str:
        if name in self._store.lists:
            return name
        folded = _list_name(name).casefold()
        for key in self._store.lists:
            if key.casefold() == folded:
                return key
        if not self._store.lists:
            raise NotFoundError(f"No reading list named {name!r}; there are no reading lists yet.")
        raise NotFoundError(f"No reading list named {name!r}; " + _closest(folded, self._store.lists, "lists"))

    # ---- importing ---------------------------------------------------------
    def import_files(self, paths: Iterable[Path | str],
                     progress: Callable[[int, int, str], None] | None = None,
                     cancelled: Callable[[], bool] | None = None, as_listing: bool = False) -> list[FileReport]:
        """Import files as one change: all the papers they hold, or (cancelled) none.

        A file that cannot be read is reported and the others still import.
        One commit for the lot means one library write however many files,
        and an import is never left half done. Text that only partly looks
        like a listing is reported with `unconfirmed` titles and not imported,
        unless `as_listing` says to read every file as a listing.
        """
        paths = [Path(p) for p in paths]
        batch = _ImportBatch(self)
        reports: list[FileReport] = []
        with gc_paused():
            return self._import_files(paths, batch, reports, progress, cancelled, as_listing)

    def _import_files(self, paths, batch, reports, progress, cancelled, as_listing=False) -> list[FileReport]:
        for n, path in enumerate(paths):
            if cancelled and cancelled():
                batch.abandon()
                return []
            if progress:
                progress(n, len(paths), str(path))
            try:
                parsed = importers.parse_file(path, as_listing=as_listing)
            except UncertainListingError as exc:
                reports.append(FileReport.uncertain(clean_text(str(path)), exc))
                continue
            except ListingError as exc:
                reports.append(FileReport(path=clean_text(str(path)), error=str(exc)))
                continue
            reports.append(batch.add(parsed))
        if cancelled and cancelled():
            batch.abandon()
            return []
        batch.commit()
        if progress:
            progress(len(paths), len(paths), "")
        return reports

    def import_parsed(self, parsed: ParsedFile) -> FileReport:
        """Import one already-parsed file (a paste, or another importer's output)."""
        batch = _ImportBatch(self)
        report = batch.add(parsed)
        batch.commit()
        return report

    def _new_paper(self, cand: Candidate, fp: str, source: Source, now: str,
                   taken: dict[str, Paper], plain: str) -> Paper:
        length = ID_LENGTH
        pid = fp[:length]
        while pid in self._store.papers or pid in taken:
            length += 2
            pid = fp[:length]
        title, derived = cand.title, False
        if not title:
            title, derived = derive_title(cand.abstract, plain=plain), True
        record = {
            "id": pid, "title": title, "title_derived": derived, "authors": list(cand.authors),
            "area": cand.area, "subarea": cand.subarea, "abstract": cand.abstract,
            "links": find_links(cand.abstract), "year": cand.year, "venue": cand.venue,
            "doi": cand.doi, "arxiv_id": cand.arxiv_id, "sources": [source.to_dict()],
            "fingerprint": fp, "added": now, "updated": now,
            "tags": sorted({normalize_tag(t) for t in cand.tags} - {""}),
        }
        # built as the stored dict directly (defaults left out): a quarter of
        # an import's time went into setting 20 fields one by one
        return Paper.from_dict({k: v for k, v in record.items() if v != FIELDS[k]})

    # ---- editing papers ----------------------------------------------------
    def _set_many(self, ids: Iterable[str], compute: Callable[[Paper], dict]) -> int:
        """Apply per-paper field changes as one durable operation; returns how many changed."""
        now = now_iso()
        ops: list[Op] = []
        touched: set[str] = set()
        fields: set[str] = set()
        for pid in dict.fromkeys(ids):
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
        status = Status.parse(status) if isinstance(status, str) else status
        return self._set_many(ids, lambda p: {"status": status})

    def add_tags(self, ids: Iterable[str], tags: Iterable[str]) -> int:
        new = {normalize_tag(t) for t in tags} - {""}
        return self._set_many(ids, lambda p: {"tags": sorted(set(p.tags) | new)})

    def remove_tags(self, ids: Iterable[str], tags: Iterable[str]) -> int:
        gone = {normalize_tag(t) for t in tags}
        return self._set_many(ids, lambda p: {"tags": [t for t in p.tags if t not in gone]})

    def set_tags(self, ids: Iterable[str], tags: Iterable[str]) -> int:
        new = sorted({normalize_tag(t) for t in tags} - {""})
        return self._set_many(ids, lambda p: {"tags": new})

    def set_notes(self, paper_id: str, notes: str) -> int:
        notes = clean_text(notes)
        return self._set_many([paper_id], lambda p: {"notes": notes})

    def set_rating(self, ids: Iterable[str], rating: int | None) -> int:
        if rating is not None and not RATING_MIN <= rating <= RATING_MAX:
            raise InvalidValueError(f"a rating is {RATING_MIN} to {RATING_MAX} stars, or none")
        return self._set_many(ids, lambda p: {"rating": rating})

    def set_title(self, paper_id: str, title: str) -> int:
        """A title the user typed; an empty one goes back to the derived title."""
        title = " ".join(clean_text(title).split())
        if title:
            return self._set_many([paper_id], lambda p: {"title": title, "title_derived": False})
        return self._set_many([paper_id], lambda p: {"title": derive_title(p.abstract), "title_derived": True})

    def delete_papers(self, ids: Iterable[str]) -> int:
        ids = [self.get(pid).id for pid in dict.fromkeys(ids)]
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

    def rename_tag(self, old: str, new: str) -> int:
        """Rename a tag on every paper that has it; renaming onto an existing
        tag merges the two. Returns how many papers changed."""
        old, new = normalize_tag(old), normalize_tag(new)
        if not new:
            raise InvalidValueError("a tag needs a name")
        having = [p.id for p in self.papers() if old in p.tags]
        return self._set_many(having, lambda p: {"tags": sorted((set(p.tags) - {old}) | {new})})

    # ---- export ------------------------------------------------------------
    def export_bibtex(self, ids: Iterable[str], path: Path | str, dialect: str = "bibtex"):
        """Write these papers to a .bib file (atomically; "-" returns the text
        without writing) and pin the citation keys they were given.

        Returns (ExportReport, text); the text only for "-", a file is written piece by piece."""
        from .citekeys import assign_keys
        from .exporters.bibtex import ExportReport, Rendering
        from .fileio import write_atomically
        ids = [self.get(pid).id for pid in dict.fromkeys(ids)]
        if not ids:     # an empty file over a good one is never what was meant
            raise NothingToExportError(
                "No papers to export; nothing was written" + ("" if str(path) == "-" else
                                                              f" and {path} is as it was") + ".", path)
        if dialect not in ("bibtex", "biblatex"):
            raise InvalidValueError(f"unknown dialect {dialect!r}; use bibtex or biblatex")
        keys = assign_keys(self._store.papers.values())
        rendering = Rendering([self._store.papers[pid] for pid in ids], keys, dialect)
        text = ""
        report = ExportReport(path=str(path), entries=len(ids))
        if str(path) == "-":
            text = "".join(rendering)
        else:
            write_atomically(Path(path), rendering)    # streamed; ExportError says why it failed
        report.replaced_chars = rendering.replaced
        report.new_keys = {pid: keys[pid] for pid in ids if not self._store.papers[pid].citekey}
        if report.new_keys and not self.readonly:
            self._set_many(report.new_keys, lambda p: {"citekey": report.new_keys[p.id]})
        return report, text

    def citation_keys(self, ids: Iterable[str], pin: bool = True) -> dict[str, str]:
        """paper id → the key an export gives it, in the order given. `pin`
        keeps new keys, as an export does: a key copied into a document must
        not change when a later import brings a paper with the same base key."""
        from .citekeys import assign_keys
        ids = [self.get(pid).id for pid in dict.fromkeys(ids)]
        keys = assign_keys(self._store.papers.values())
        new = {pid: keys[pid] for pid in ids if not self._store.papers[pid].citekey}
        if pin and new and not self.readonly:
            self._set_many(new, lambda p: {"citekey": new[p.id]})
        return {pid: keys[pid] for pid in ids}

    def bibtex_entries(self, ids: Iterable[str], dialect: str = "bibtex", pin: bool = True) -> str:
        """The BibTeX entries of these papers in the order given (no file header),
        with the keys an export gives them (pinned, as by `citation_keys`)."""
        from .exporters.bibtex import entries_text
        keys = self.citation_keys(ids, pin=pin)
        return entries_text([self._store.papers[pid] for pid in keys], keys, dialect)

    def set_citekey(self, paper_id: str, key: str) -> int:
        """A citation key the user chose ('' lets Papershelf pick one again)."""
        from .citekeys import valid_key
        key = key.strip()
        if key and not valid_key(key):
            raise InvalidValueError(f"{key!r} is not a usable citation key: start with a letter, then letters, "
                             "digits or : _ - . (at most 80)")
        if key and any(p.citekey.casefold() == key.casefold() and p.id != paper_id for p in self.papers()):
            raise InvalidValueError(f"the citation key {key!r} is already used by another paper")
        return self._set_many([paper_id], lambda p: {"citekey": key})

    # ---- undo support: put back exactly what was there ----------------------
    UNDOABLE_FIELDS = ("status", "tags", "notes", "rating", "title", "title_derived")

    def snapshot_fields(self, ids: Iterable[str]) -> dict[str, dict]:
        """The user-editable fields of these papers, to hand back to `restore_fields`."""
        out = {}
        for pid in ids:
            paper = self._store.papers.get(pid)
            if paper is not None:
                out[pid] = {f: _copy(getattr(paper, f)) for f in self.UNDOABLE_FIELDS}
        return out

    def restore_fields(self, snapshot: dict[str, dict]) -> int:
        """Set fields back to a snapshot (papers deleted since are skipped)."""
        present = [pid for pid in snapshot if pid in self._store.papers]
        return self._set_many(present, lambda p: snapshot[p.id])

    def restore_lists(self, lists: dict[str, list[str] | None]) -> None:
        """Put reading lists back as they were (None: the list did not exist)."""
        ops, touched, names = [], set(), set()
        for name, members in lists.items():
            current = self._store.lists.get(name)
            if current == members:
                continue
            if members is not None:
                members = [pid for pid in members if pid in self._store.papers]
            ops.append(Op("list", name, members))
            touched |= set(current or ()) ^ set(members or ())
            names.add(name)
        if ops:
            self._commit(ops + self._touch(touched),
                         [Change("lists-changed", ids=frozenset(touched), lists=frozenset(names))])

    def restore_papers(self, papers: list[Paper], lists: dict[str, list[str] | None]) -> int:
        """Bring deleted papers back exactly as they were, and the reading lists
        they were on. Papers already present are left alone."""
        back = [p for p in papers if p.id not in self._store.papers]
        if not back:
            return 0
        ops = [Op("add", p.id, Paper.from_dict(dict(p.raw()))) for p in back]
        for name, members in lists.items():
            if members is not None and self._store.lists.get(name) != members:
                ops.append(Op("list", name, list(members)))
        self._commit(ops, [Change("papers-added", ids=frozenset(p.id for p in back)),
                           Change("lists-changed", lists=frozenset(lists))])
        for p in back:
            if self._fp_index is not None and p.fingerprint:
                self._fp_index[p.fingerprint] = p.id
        return len(back)

    def records(self, ids: Iterable[str]) -> dict[str, dict]:
        """The stored records of these papers (copies), to hand back to `put_records`."""
        papers = self._store.papers
        return {pid: dict(papers[pid].raw()) for pid in ids if pid in papers}

    def put_records(self, records: dict[str, dict], remove: Iterable[str] = ()) -> None:
        """Make papers exactly these stored records (adding the missing ones) and
        remove others, as one change: how an import is undone and redone. Every
        field comes back but `updated`, which says when the paper last changed."""
        papers = self._store.papers
        gone = [pid for pid in dict.fromkeys(remove) if pid in papers and pid not in records]
        ops: list[Op] = [Op("del", pid) for pid in gone]
        touched_lists = []
        if gone:
            gone_set = set(gone)
            for name, members in self._store.lists.items():
                if gone_set.intersection(members):
                    ops.append(Op("list", name, [i for i in members if i not in gone_set]))
                    touched_lists.append(name)
        added, changed, fields = [], [], set()
        now = now_iso()
        for pid, record in records.items():
            current = papers.get(pid)
            if current is None:
                ops.append(Op("add", pid, Paper.from_dict(dict(record))))
                added.append(pid)
                continue
            raw = current.raw()
            diff = {k: record.get(k, FIELDS[k]) for k in set(raw) | set(record)
                    if k not in ("id", "updated") and raw.get(k, FIELDS[k]) != record.get(k, FIELDS[k])}
            if diff:
                # `updated` moves on, as after any undo: the index catches up by it after a restart
                diff["updated"] = now
                ops.append(Op("set", pid, diff))
                changed.append(pid)
                fields.update(diff)
        old_fps = [papers[pid].fingerprint for pid in gone + changed]
        events = []
        if gone:
            events.append(Change("papers-removed", ids=frozenset(gone)))
        if touched_lists:
            events.append(Change("lists-changed", lists=frozenset(touched_lists)))
        if added:
            events.append(Change("papers-added", ids=frozenset(added)))
        if changed:
            events.append(Change("papers-changed", ids=frozenset(changed), fields=frozenset(fields)))
        self._commit(ops, events)
        if self._fp_index is not None:
            for fp in old_fps:
                self._fp_index.pop(fp, None)
            for pid in added + changed:
                fp = papers[pid].fingerprint
                if fp:
                    self._fp_index[fp] = pid

    def swap_fields(self, frm: dict[str, dict], to: dict[str, dict], add: dict[str, dict] | None = None,
                    remove: Iterable[str] = ()) -> None:
        """Move papers from the stored records `frm` to `to`, field by field, as one
        change: how an import's merges are undone and redone. Only the fields that
        differ between the two move, and only where a paper still holds `frm`'s
        value; one changed since (a citation key pinned by Copy Key or an export,
        an edit) keeps its value. Papers in `add` are added as they are, those in
        `remove` removed."""
        papers = self._store.papers
        records: dict[str, dict] = {}
        for pid, target in to.items():
            current, source = papers.get(pid), frm.get(pid)
            if current is None or source is None:
                continue
            raw = current.raw()
            record = dict(raw)
            for k in set(source) | set(target):
                if k in ("id", "updated"):
                    continue
                old, new = source.get(k, FIELDS[k]), target.get(k, FIELDS[k])
                if old != new and raw.get(k, FIELDS[k]) == old:
                    record[k] = new
            records[pid] = record
        records.update(add or {})
        self.put_records(records, remove=remove)

    # ---- reading lists -----------------------------------------------------
    def create_list(self, name: str) -> str:
        name = _list_name(name)
        if not name:
            raise InvalidValueError("a reading list needs a name")
        try:
            return self._list_key(name)  # already there: nothing to do
        except NotFoundError:
            pass
        self._commit([Op("list", name, [])], [Change("lists-changed", lists=frozenset([name]))])
        return name

    def add_to_list(self, name: str, ids: Iterable[str]) -> int:
        """Append papers to a list (created if needed); ones already on it stay where they are."""
        key = self.create_list(name)
        members = self._store.lists[key]
        present = set(members)
        added = [self.get(pid).id for pid in dict.fromkeys(ids) if pid not in present]
        if added:
            self._commit([Op("list", key, members + added), *self._touch(added)],
                         [Change("lists-changed", ids=frozenset(added), lists=frozenset([key]))])
        return len(added)

    def remove_from_list(self, name: str, ids: Iterable[str]) -> int:
        key = self._list_key(name)
        gone = set(ids)
        members = self._store.lists[key]
        kept = [i for i in members if i not in gone]
        if len(kept) != len(members):
            taken = gone & set(members)
            self._commit([Op("list", key, kept), *self._touch(taken)],
                         [Change("lists-changed", ids=frozenset(taken), lists=frozenset([key]))])
        return len(members) - len(kept)

    def reorder_list(self, name: str, ids: list[str]) -> None:
        key = self._list_key(name)
        if sorted(ids) != sorted(self._store.lists[key]):
            raise InvalidValueError("a new order must hold exactly the papers already on the list")
        self._commit([Op("list", key, list(ids))], [Change("lists-changed", lists=frozenset([key]))])

    def rename_list(self, old: str, new: str) -> str:
        key = self._list_key(old)
        new = _list_name(new)
        if not new:
            raise InvalidValueError("a reading list needs a name")
        if new != key and any(k.casefold() == new.casefold() and k != key for k in self._store.lists):
            raise InvalidValueError(f"there is already a reading list named {new!r}")
        members = self._store.lists[key]
        self._commit([Op("rename", key, new), *self._touch(members)],
                     [Change("lists-changed", ids=frozenset(members), lists=frozenset([key, new]))])
        return new

    def delete_list(self, name: str) -> None:
        key = self._list_key(name)
        members = self._store.lists[key]
        self._commit([Op("list", key, None), *self._touch(members)],
                     [Change("lists-changed", ids=frozenset(members), lists=frozenset([key]))])

    def _touch(self, ids: Iterable[str]) -> list[Op]:
        """Mark papers as updated: a list they are on changed, which the
        search index (and anything else that follows `updated`) must see."""
        now = now_iso()
        return [Op.set_fields(pid, {"updated": now}) for pid in ids if pid in self._store.papers]

    # ---- maintenance -------------------------------------------------------
    def compact(self) -> None:
        self._store.compact()

    def backups(self) -> list[Path]:
        return self._store.backups()


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _closest(wanted: str, names: Iterable[str], what: str) -> str:
    """'did you mean …?' with the nearest names, else a few of them, for an error message."""
    import difflib
    names = list(names)
    folded = {n.casefold(): n for n in names}
    near = [folded[m] for m in difflib.get_close_matches(wanted.casefold(), list(folded), n=3, cutoff=0.6)]
    if near:
        return "did you mean " + " or ".join(repr(n) for n in near) + "?"
    few = ", ".join(repr(n) for n in names[:8]) + (", …" if len(names) > 8 else "")
    return f"the {what} are: {few}."


def _copy(value):
    return list(value) if isinstance(value, list) else value


def _list_name(name: str) -> str:
    """List names compare case-insensitively with whitespace collapsed."""
    return " ".join(clean_text(name).split())


class _ImportBatch:
    """Papers from one or more parsed files, merged with the library and each
    other, waiting to be committed as one store operation."""

    def __init__(self, lib: Library):
        self.lib = lib
        self.now = now_iso()
        self.new: dict[str, Paper] = {}
        self.views: dict[str, Paper] = {}     # existing papers with this import's changes applied
        self.pending: dict[str, dict] = {}    # existing id → accumulated field changes
        self.before: dict[str, dict] = {}     # existing id → its stored record before this batch
        self.before_reported: list[dict[str, dict]] = []   # each file's merged_before, in order
        self.new_fps: list[str] = []
        self.keys_taken: set[str] | None = None

    def add(self, parsed: ParsedFile) -> FileReport:
        lib = self.lib
        report = FileReport(path=parsed.path, format=parsed.format, problems=list(parsed.problems))
        if not parsed.papers:
            report.error = f"{parsed.path}: no papers were found in it" + (
                f" ({len(parsed.problems)} lines could not be read; the first: {parsed.problems[0]})"
                if parsed.problems else "")
            return report
        if parsed.path.startswith("<"):      # a paste, not a file: no path to resolve
            file_key = parsed.path
        else:
            try:
                file_key = clean_text(str(Path(parsed.path).resolve()))
            except OSError:
                file_key = clean_text(parsed.path)
        merged: set[str] = set()
        self.before_reported.append(report.merged_before)
        for cand in parsed.papers:
            source = Source(file=file_key, format=parsed.format, line=cand.line)
            plain = plain_text(cand.abstract)
            fp = fingerprint(cand.abstract, cand.title, cand.authors, cand.year, plain=plain)
            pid = lib._by_fp.get(fp)
            if pid is None:
                paper = lib._new_paper(cand, fp, source, self.now, taken=self.new, plain=plain)
                if cand.citekey:
                    self._keep_key(paper, cand.citekey)
                self.new[paper.id] = paper
                lib._by_fp[fp] = paper.id
                self.new_fps.append(fp)
                report.added += 1
                report.added_ids.append(paper.id)
                continue
            is_new = pid in self.new
            target = self.new[pid] if is_new else self.views.get(pid)
            if target is None:
                stored = lib._store.papers[pid]
                self.before[pid] = dict(stored.raw())     # values are replaced on change, never mutated
                target = self.views[pid] = copy.copy(stored)
            same_file = next((s for s in target.sources if s.file == file_key and s.format == parsed.format), None)
            changes = merge_into(target, cand, same_file or source,
                                 derive_title(cand.abstract, plain=plain) if cand.abstract else "")
            if not changes:
                if not is_new:
                    report.unchanged += 1
                continue
            for name, value in changes.items():
                setattr(target, name, value)
            if is_new:
                report.merged += 1          # a second copy within this import
            else:
                self.pending.setdefault(pid, {}).update(changes)
                merged.add(pid)
                if not any(pid in r for r in self.before_reported):
                    report.merged_before[pid] = self.before[pid]
        report.merged += len(merged)
        return report

    def _keep_key(self, paper: Paper, key: str) -> None:
        """A .bib file's citation key becomes the paper's, unless another paper has it."""
        from .citekeys import valid_key
        if self.keys_taken is None:
            self.keys_taken = {p.citekey.casefold() for p in self.lib.papers() if p.citekey}
        if valid_key(key) and key.casefold() not in self.keys_taken:
            paper.citekey = key
            self.keys_taken.add(key.casefold())

    def commit(self) -> None:
        lib = self.lib
        for changes in self.pending.values():
            changes["updated"] = self.now
        ops = [Op("add", pid, paper) for pid, paper in self.new.items()]
        ops += [Op.set_fields(pid, changes) for pid, changes in self.pending.items()]
        events = []
        if self.new:
            events.append(Change("papers-added", ids=frozenset(self.new)))
        if self.pending:
            fields = frozenset(k for ch in self.pending.values() for k in ch)
            events.append(Change("papers-changed", ids=frozenset(self.pending), fields=fields))
        try:
            lib._commit(ops, events)
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        """Forget the papers this batch would have added."""
        for fp in self.new_fps:
            self.lib._by_fp.pop(fp, None)
        self.new_fps.clear()
