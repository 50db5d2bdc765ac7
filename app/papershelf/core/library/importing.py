"""Importing into a library: files or pasted text become papers, merged with
the ones already there and with each other, committed as one change.

`Library.import_files`, `import_text` and `import_parsed` are the way in;
this module does the work for them (part of the facade: it uses the
library's private parts; callers take `FileReport` and `PASTE_LABEL` from
`papershelf.core.library`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .. import importers
from ..changes import Change, Record
from ..citation import record_keywords
from ..citekeys import generated_key, key_problem
from ..dedupe import fingerprint, merge_into
from ..duplicates import Matcher, matcher_for, record_key
from ..errors import InvalidValueError, ListingError, UncertainListingError
from ..importers import PASTE_LABEL
from ..importers.base import Candidate, ParsedFile, Problem
from ..importers.gate import admit
from ..paper import FIELDS, Paper, Source, normalize_tag
from ..render import find_links, plain_text
from ..store import Op, gc_paused, now_iso
from ..text import clean_text
from ..titles import derive_title
from .exporting import references_renamed

if TYPE_CHECKING:
    from .facade import Library

__all__ = ["PASTE_LABEL", "FileReport", "ImportBatch", "MergeNote", "import_files", "import_text"]

ID_LENGTH = 10


@dataclass(slots=True)
class MergeNote:
    """An entry of the file merged into a paper already there (or into an identical
    entry before it): both keys, and why the rule took them for one paper. Not a
    problem: listed with the file's report, and the window does not stop to show it."""

    path: str
    line: int
    message: str
    entry_key: str = ""  # the entry's key in the file ("" for a listing's entry)
    paper_id: str = ""
    paper_key: str = ""  # the citation key of the paper it went into ("" if it has none yet)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


# the entry itself: its record, or its key and title, or its key and record less the fields
# the user edited since (a title's typo fixed)
_SAME_ENTRY = ("the same entry", "the same citation key and title", "the same citation key and record")


def _no_paper(_pid: str) -> bool:
    return False


def _own_papers(found: list[tuple[str, str] | None]) -> dict[int, tuple[str, str]]:
    """The entries (by index) that are a paper's own entry, each paper taken once: the same
    record before the same key and title, then in file order."""
    ranked = sorted(
        (_SAME_ENTRY.index(hit[1]), n, hit) for n, hit in enumerate(found) if hit is not None and hit[1] in _SAME_ENTRY
    )
    own: dict[int, tuple[str, str]] = {}
    taken: set[str] = set()
    for _rank, n, (pid, why) in ranked:
        if pid not in taken:
            taken.add(pid)
            own[n] = (pid, why)
    return own


def _merge_note(parsed: ParsedFile, cand: Candidate, target: Paper, why: str) -> MergeNote:
    entry = f"entry {cand.citekey!r}" if cand.citekey else "the entry"
    into = f"paper {target.id}" + (f" (key {target.citekey!r})" if target.citekey else "")
    message = f'{entry} was merged into {into}, "{target.title[:60]}": {why}'
    return MergeNote(parsed.path, cand.line, message, cand.citekey, target.id, target.citekey)


def _identity(cand: Candidate, fp: str, keyed: bool) -> object:
    """What makes two entries of one file identical: the same record (type and fields), or
    for a listing's entry (no record) the same text. In a .bib file the key is part of the
    entry: two keys are two entries a document may cite (a repeated key is a repeat, as
    BibTeX says), so only the key and the record together make an entry identical."""
    key = record_key(cand)
    text = (
        key
        if key is not None
        else (cand.title, tuple(cand.authors), cand.year, cand.venue, cand.doi, cand.arxiv_id, fp)
    )
    return (keyed and cand.citekey.casefold(), text)


@dataclass(slots=True)
class FileReport:
    """What importing one file did."""

    path: str
    format: str = ""
    added: int = 0
    merged: int = 0
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    error: str = ""  # the file could not be imported at all
    added_ids: list[str] = field(default_factory=list)
    # a header-less file that only partly looks like a listing: nothing imported until
    # confirmed (import_files(..., as_listing=True)); the papers it would give, by title
    unconfirmed: list[str] = field(default_factory=list)
    unconfirmed_problems: int = 0
    # the papers this file merged into, as stored before the import touched
    # them (id → stored record), so that undoing the import restores them exactly
    merged_before: dict[str, Record] = field(default_factory=dict)
    # each entry merged into a paper, with both keys and why (issue 13 item 4)
    merges: list[MergeNote] = field(default_factory=list)

    @classmethod
    def uncertain(cls, path: str, exc: UncertainListingError) -> FileReport:
        """The report of text held back until it is confirmed as a listing."""
        return cls(
            path=path,
            format=exc.parsed.format,
            error=str(exc),
            unconfirmed=[derive_title(c.abstract) for c in exc.parsed.papers],
            unconfirmed_problems=len(exc.parsed.problems),
        )

    @property
    def ok(self) -> bool:
        """The file was imported (perhaps with problems in some of its lines)."""
        return not self.error

    def summary(self) -> str:
        """One line in words: what the import of this file did."""
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


def import_files(
    lib: Library,
    paths: Iterable[Path | str],
    progress: Callable[[int, int, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    as_listing: bool = False,
    keywords_as_tags: bool = False,
) -> list[FileReport]:
    """`Library.import_files`: import files as one change: all the papers they hold, or
    (cancelled) none.

    A file that cannot be read is reported and the others still import.
    One commit for the lot means one library write however many files,
    and an import is never left half done. Text that only partly looks
    like a listing is reported with `unconfirmed` titles and not imported,
    unless `as_listing` says to read every file as a listing. A record's keywords
    stay its keywords (`keyword:`); `keywords_as_tags` also makes them the new papers' tags.
    """
    if isinstance(paths, (str, Path)):
        raise InvalidValueError(f"import_files takes a list of files, not one path ({str(paths)!r}); put it in a list")
    files = [Path(p) for p in paths]
    batch = ImportBatch(lib, keywords_as_tags)
    reports: list[FileReport] = []
    with gc_paused():
        for n, path in enumerate(files):
            if cancelled and cancelled():
                batch.abandon()
                return []
            if progress:
                progress(n, len(files), str(path))
            try:
                parsed = importers.parse_file(path, as_listing=as_listing)
            except UncertainListingError as exc:
                reports.append(FileReport.uncertain(clean_text(str(path)), exc))
                continue
            except ListingError as exc:
                reports.append(FileReport(path=clean_text(str(path)), error=str(exc)))
                continue
            start = len(batch.placed)
            reports.append(batch.add(parsed))
            if parsed.format == "bibtex":  # its `file` fields: the files there are attached (linked)
                from .pdf_import import attach_named_files

                attach_named_files(batch, reports[-1], batch.placed[start:], path.parent)
        if cancelled and cancelled():
            batch.abandon()
            return []
        batch.commit()
        if progress:
            progress(len(files), len(files), "")
        return reports


def import_text(
    lib: Library, text: str | bytes, as_listing: bool = False, keywords_as_tags: bool = False
) -> FileReport:
    """What `Library.import_text` does (see there)."""
    if isinstance(text, bytes):
        parsed = importers.parse_bytes(text, PASTE_LABEL, as_listing=as_listing)
    else:
        parsed = importers.parse_text(text, PASTE_LABEL, as_listing=as_listing)
    return import_parsed(lib, parsed, keywords_as_tags)


def import_parsed(lib: Library, parsed: ParsedFile, keywords_as_tags: bool = False) -> FileReport:
    """What `Library.import_parsed` does (see there)."""
    batch = ImportBatch(lib, keywords_as_tags)
    report = batch.add(parsed)
    batch.commit()
    return report


def _free_id(lib: Library, fp: str, taken: dict[str, Paper], suffixes: dict[str, int]) -> str:
    """A new paper's id: its fingerprint's first digits, more of them on a clash, then for
    distinct papers of one fingerprint (entries of one file) a suffix: 'x' is no hex digit.
    `suffixes` remembers the last suffix given per fingerprint, so 10,000 entries of one
    fingerprint do not each try every suffix before theirs (which made the import quadratic)."""
    base = fp[:ID_LENGTH]
    n = suffixes.get(base)
    if n is None:
        for length in range(ID_LENGTH, len(fp) + 1, 2):
            pid = fp[:length]
            if pid not in lib and pid not in taken:
                return pid
        n = 1
    while True:
        n += 1
        pid = f"{base}x{n}"
        if pid not in lib and pid not in taken:
            suffixes[base] = n
            return pid


def _new_paper(
    lib: Library,
    cand: Candidate,
    fp: str,
    source: Source,
    now: str,
    taken: dict[str, Paper],
    plain: str,
    suffixes: dict[str, int],
) -> Paper:
    pid = _free_id(lib, fp, taken, suffixes)
    title, derived = cand.title, False
    if not title:
        title, derived = derive_title(cand.abstract, plain=plain), True
    record = {
        "id": pid,
        "title": title,
        "title_derived": derived,
        "authors": list(cand.authors),
        "area": cand.area,
        "subarea": cand.subarea,
        "abstract": cand.abstract,
        "links": find_links(cand.abstract),
        "year": cand.year,
        "venue": cand.venue,
        "doi": cand.doi,
        "arxiv_id": cand.arxiv_id,
        "entrytype": cand.entrytype,
        "bibfields": dict(cand.bibfields),
        "preamble": cand.preamble,
        "ris": cand.ris,
        "sources": [source.to_dict()],
        "fingerprint": fp,
        "added": now,
        "updated": now,
        "tags": sorted({normalize_tag(t) for t in cand.tags} - {""}),
    }
    # built as the stored dict directly (defaults left out): a quarter of
    # an import's time went into setting 20 fields one by one
    return Paper.from_dict({k: v for k, v in record.items() if v != FIELDS[k]})


class ImportBatch:
    """Papers from one or more parsed files, merged with the library and each
    other, waiting to be committed as one store operation."""

    def __init__(self, lib: Library, keywords_as_tags: bool = False):
        self.lib = lib
        # a record's keywords stay its keywords; the user may ask for them as tags too
        self.keywords_as_tags = keywords_as_tags
        self.now = now_iso()
        self.new: dict[str, Paper] = {}
        self.suffixes: dict[str, int] = {}  # a fingerprint's first digits → the last id suffix given
        self.views: dict[str, Paper] = {}  # existing papers with this import's changes applied
        self.pending: dict[str, Record] = {}  # existing id → accumulated field changes
        self.before: dict[str, Record] = {}  # existing id → its stored record before this batch
        self.before_reported: list[dict[str, Record]] = []  # each file's merged_before, in order
        # case-folded citation key → the id of the paper holding it (the library's, then
        # this batch's); filled on the first key met, so files without keys pay nothing
        self.keys_taken: dict[str, str] | None = None
        # new papers whose file's key could not be kept, given a generated key once every file
        # of the batch is read: a generated key must not take a key a later entry or file brings
        self.unkeyed: list[tuple[Paper, FileReport, Problem, str]] = []  # ..., the file's own key
        # each entry (as admitted) and the paper it went into (new or the library's), in order
        self.placed: list[tuple[Candidate, str]] = []

    def add(self, parsed: ParsedFile) -> FileReport:
        """Merge one parsed file into the batch; what it would add and merge."""
        # the door: a record over a limit is refused, control characters are removed (told)
        parsed = admit(parsed)
        report = FileReport(path=parsed.path, format=parsed.format, problems=list(parsed.problems))
        if not parsed.papers:
            report.error = f"{parsed.path}: no papers were found in it" + (
                f" ({len(parsed.problems)} lines could not be read; the first: {parsed.problems[0]})"
                if parsed.problems
                else ""
            )
            return report
        run = _FileMerge(self, parsed, report)
        if self.keywords_as_tags:
            for cand in parsed.papers:
                cand.tags = [*cand.tags, *record_keywords(cand.bibfields)]
        for n, cand in enumerate(parsed.papers):
            run.entry(n, cand)
        report.merged += len(run.merged)
        return report

    def _read(self, cand: Candidate, matcher: Matcher) -> tuple[str, str, tuple[str, str] | None]:
        """An entry's abstract as plain text, its fingerprint, and the paper it is a copy of
        (and why) before any entry of its file took one."""
        plain = plain_text(cand.abstract)
        fp = fingerprint(cand.abstract, cand.title, cand.authors, cand.year, plain=plain)
        return plain, fp, matcher.find(cand, fp, self._get, _no_paper, self._key_holder)

    def _matcher(self) -> Matcher:
        lib = self.lib
        lib._by_fp  # noqa: B018 - brings the stored fingerprints up to date, which the matcher reads
        return matcher_for(lib, lib.papers(), lib.find, lib.subscribe)

    def _get(self, pid: str) -> Paper | None:
        """A paper as this batch sees it: new, merged into, or as stored."""
        return self.new.get(pid) or self.views.get(pid) or self.lib.find(pid)

    def _key_holder(self, folded_key: str) -> str | None:
        return self._taken().get(folded_key) if folded_key else None

    def _taken(self) -> dict[str, str]:
        if self.keys_taken is None:
            self.keys_taken = {p.citekey.casefold(): p.id for p in self.lib.papers() if p.citekey}
        return self.keys_taken

    def _free_key(self, key: str) -> tuple[bool, str]:
        """Whether a file's key can be a new paper's, and if not, why (in words)."""
        if not key:
            return False, "the entry has no citation key"
        if why := key_problem(key):
            return False, f"key {key!r} cannot be used: {why}"
        holder = self._taken().get(key.casefold())
        if holder is not None:
            paper = self.new.get(holder) or self.lib.get(holder)
            where = "by an entry imported before it" if holder in self.new else "by another paper in the library"
            return False, f'key {key!r} is already used {where} ("{paper.title[:80]}")'
        return True, ""

    def _keep_key(self, paper: Paper, cand: Candidate, path: str, report: FileReport) -> None:
        """A new paper keeps its entry's key if it can; if not, it is given one once every
        file of the batch is read (`_generate_keys`), and its file's report says so."""
        ok, reason = self._free_key(cand.citekey)
        if ok:
            paper.citekey = cand.citekey  # exactly as written
            self._taken()[cand.citekey.casefold()] = paper.id
        else:
            problem = Problem(path, cand.line, reason, note=True)
            self.unkeyed.append((paper, report, problem, cand.citekey))

    def _generate_keys(self) -> None:
        """Give each new paper whose file's key could not be kept a generated `authorYEARword`
        key, free in the library and the whole batch, and tell it in its file's report."""
        if not self.unkeyed:
            return
        taken = self._taken()
        renamed: list[tuple[Paper, str]] = []
        for paper, report, problem, old in self.unkeyed:
            holder = taken.get(old.casefold()) if old else None
            # `taken` itself, not a copy per paper: 10,000 keys to generate stay linear
            paper.citekey = generated_key(paper, taken)
            taken[paper.citekey.casefold()] = paper.id
            told = f"{problem.message}: the paper was given {paper.citekey!r}"
            report.problems.append(replace(problem, message=told))
            # its file's entries that crossref it follow it, unless the key names an entry of the
            # same file (a key given twice: BibTeX takes the first)
            if old and not (holder in self.new and self.new[holder].sources[0].file == paper.sources[0].file):
                renamed.append((paper, old))
        for paper, old in renamed:
            same_file = [p for p in self.new.values() if p.sources[0].file == paper.sources[0].file]
            for pid, fields in references_renamed(same_file, old, paper.citekey).items():
                self.new[pid].bibfields = fields
        self.unkeyed = []

    def view(self, pid: str) -> Paper:
        """The library's paper `pid` with this batch's changes so far; its stored record is kept
        in `before` the first time (for the report and undo)."""
        target = self.views.get(pid)
        if target is None:
            stored = self.lib.get(pid)
            self.before[pid] = dict(stored.raw())  # values are replaced on change, never mutated
            target = self.views[pid] = copy.copy(stored)
        return target

    def commit(self) -> None:
        """Write the batch as one store operation and announce it."""
        lib = self.lib
        self._generate_keys()
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
        """Forget the papers this batch would have added (the matcher skips ids it cannot find)."""
        self.new.clear()
        self.views.clear()


def _file_key(path: str) -> str:
    """The file a parsed file came from, as its papers' sources name it."""
    if path.startswith("<"):  # a paste, not a file: no path to resolve
        return path
    try:
        return clean_text(str(Path(path).resolve()))
    except OSError:
        return clean_text(path)


class _FileMerge:
    """One parsed file merged into an `ImportBatch`, entry by entry (`ImportBatch.add`).

    Entries of one file are distinct unless identical: a paper one entry of the file
    made or merged into is no other entry's, and identical entries are one. Two passes:
    first every entry takes the paper that is the entry itself (its record, or its key
    and title), then the others look by DOI, title or abstract among the papers left;
    so an entry added above an unchanged one cannot take that one's paper by its title.
    """

    def __init__(self, batch: ImportBatch, parsed: ParsedFile, report: FileReport) -> None:
        self.batch = batch
        self.parsed = parsed
        self.report = report
        self.file_key = _file_key(parsed.path)
        self.merged: set[str] = set()  # papers of the library this file merged into
        batch.before_reported.append(report.merged_before)
        self.matcher = batch._matcher()
        self.reads = [batch._read(cand, self.matcher) for cand in parsed.papers]
        self.own = _own_papers([found for _plain, _fp, found in self.reads])
        self.claimed: set[str] = {pid for pid, _why in self.own.values()}
        # an entry's identity by its hash → (the entry, its fingerprint, the paper it is):
        # a hit is checked against that entry, and no identity is kept (it holds every field)
        self.identical: dict[int, tuple[Candidate, str, str]] = {}
        # a .bib file's entries each have a key (perhaps empty): every one is kept or the change is
        # told; a RIS record's ID line is its key (an export's), but RIS needs none: no ID, no note
        self.bibtex = parsed.format == "bibtex"

    def entry(self, n: int, cand: Candidate) -> None:
        """Entry `n` of the file: a new paper, or merged into the paper it is a copy of."""
        keyed = self.bibtex or bool(cand.citekey)
        source = Source(file=self.file_key, format=self.parsed.format, line=cand.line)
        plain, fp, found = self.reads[n]
        ident = _identity(cand, fp, keyed)
        ident_hash = hash(ident)
        twin = self.identical.get(ident_hash)
        if twin is not None and _identity(twin[0], twin[1], keyed) != ident:
            twin = None  # only the hashes agree
        pid, why = self._paper_of(n, cand, fp, found, twin)
        if pid is None:
            self._add_new(cand, fp, source, plain, keyed, ident_hash)
            return
        self.batch.placed.append((cand, pid))
        self.claimed.add(pid)
        self.identical.setdefault(ident_hash, (cand, fp, pid))
        self._merge(pid, why, cand, source, plain)

    def _paper_of(
        self,
        n: int,
        cand: Candidate,
        fp: str,
        found: tuple[str, str] | None,
        twin: tuple[Candidate, str, str] | None,
    ) -> tuple[str | None, str]:
        """The paper entry `n` is (None: a new one), and why."""
        if n not in self.own and found is not None and found[0] in self.claimed:
            # taken by another entry of the file: the best of the papers left (a paper
            # not taken is still this entry's best, as taking others only narrows the choice)
            batch = self.batch
            found = self.matcher.find(cand, fp, batch._get, self.claimed.__contains__, batch._key_holder)
        # the entry itself (its record, or its key and title) first: an export coming back
        # finds each twin of one title its own paper; then an identical entry before it
        if n in self.own:
            return self.own[n]
        if found is not None and found[1] in _SAME_ENTRY:
            return found
        if twin is not None:
            return twin[2], "it is identical to an entry before it in the file"
        if found is not None:
            return found
        return None, ""

    def _add_new(self, cand: Candidate, fp: str, source: Source, plain: str, keyed: bool, ident_hash: int) -> None:
        """The entry is a new paper."""
        batch, report = self.batch, self.report
        paper = _new_paper(batch.lib, cand, fp, source, batch.now, batch.new, plain, batch.suffixes)
        if keyed:
            batch._keep_key(paper, cand, self.parsed.path, report)
        batch.new[paper.id] = paper
        batch.placed.append((cand, paper.id))
        self.matcher.add(paper)  # later files of the batch find it
        self.identical[ident_hash] = (cand, fp, paper.id)
        self.claimed.add(paper.id)
        report.added += 1
        report.added_ids.append(paper.id)

    def _merge(self, pid: str, why: str, cand: Candidate, source: Source, plain: str) -> None:
        """The entry is paper `pid` (new in this batch, or the library's): merged into it."""
        batch, report = self.batch, self.report
        is_new = pid in batch.new
        target = batch.new[pid] if is_new else self._view(pid)
        same_file = next(
            (s for s in target.sources if s.file == self.file_key and s.format == self.parsed.format), None
        )
        changes = merge_into(
            target, cand, same_file or source, derive_title(cand.abstract, plain=plain) if cand.abstract else ""
        )
        # a duplicate's key: the paper keeps its own, and the merge note names both. A paper
        # without a key does not take the entry's either: undoing the import would take it
        # away again, after the user may have copied it (a merge's fields are undone one by
        # one). The note is a MergeNote, which the window lists without stopping the user
        # (the entry itself coming back, an export re-imported, is no judgement to tell)
        same_key = cand.citekey == target.citekey
        if (changes and not (same_key and why in _SAME_ENTRY)) or (cand.citekey and not same_key):
            report.merges.append(_merge_note(self.parsed, cand, target, why))
        if not changes:
            if not is_new:
                report.unchanged += 1
            return
        for name, value in changes.items():
            setattr(target, name, value)
        self.matcher.add(target)  # under the keys the merge gave it
        if is_new:
            report.merged += 1  # a second copy within this import
            return
        batch.pending.setdefault(pid, {}).update(changes)
        self.merged.add(pid)
        if not any(pid in r for r in batch.before_reported):
            report.merged_before[pid] = batch.before[pid]

    def _view(self, pid: str) -> Paper:
        """The library's paper `pid` with this batch's changes so far (its stored record kept)."""
        return self.batch.view(pid)
