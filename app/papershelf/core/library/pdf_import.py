"""Importing PDFs as papers: one paper per PDF, its identity read from the PDF itself
(`core.pdf.pdf_info`: DOI, arXiv id, title, authors), the file copied into the library's
files/ folder and attached. It goes through the import path (`ImportBatch`): the duplicates
rules, one commit, one undo step ("Undo import") and one `FileReport` per PDF, so the window's
"Last import" and import report treat it like any other import.

    a PDF whose content is attached to a paper already   not added twice (told: "already attached to …")
    a PDF whose DOI / arXiv id is a paper's already      attached to that paper (told)
    an encrypted PDF                                     imported, named by its file name, with a note
    not a PDF, or damaged                                skipped, named in the report
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..attachments import Attachment, attachments, file_sha256, looks_like_pdf, paper_folder
from ..errors import InvalidValueError, PapershelfError, ReadOnlyLibraryError
from ..fileio import remove_quietly
from ..importers.base import Candidate, ParsedFile, Problem
from ..paper import Paper
from ..pdf import PdfInfo, PdfProblem, pdf_info
from ..store import gc_paused
from ..text import clean_text
from .attaching import copy_in, linked_record, pdf_pages
from .importing import FileReport, ImportBatch

if TYPE_CHECKING:
    from ..biblio.identifiers import Identifier
    from ..changes import Record
    from ..online.records import FoundRecord
    from .applying import FoundApplied
    from .facade import Library

PDF_FORMAT = "pdf"
"""The format a PDF's `FileReport` and its paper's source name."""


@dataclass(slots=True)
class PdfImportReport:
    """What importing PDFs did. `reports` has one `FileReport` per PDF (added, attached to a
    paper already there, already attached, or its error), as `Library.import_files` returns them,
    for the window's undo step and import report."""

    reports: list[FileReport] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # the new papers' ids
    attached: list[str] = field(default_factory=list)  # "x.pdf: attached to the paper already here, "Title" (…)"
    already: list[str] = field(default_factory=list)  # "x.pdf is already attached to "Title""
    skipped: list[str] = field(default_factory=list)  # not a PDF, damaged, unreadable: why, in words
    notes: list[str] = field(default_factory=list)  # imported, with something to tell (encrypted)
    cancelled: bool = False
    found: int = 0  # the PDFs named or found in the folders

    @property
    def ok(self) -> bool:
        """Every PDF was imported, attached, or was there already (none skipped)."""
        return not self.skipped and not self.cancelled

    def lines(self) -> list[str]:
        """The report in words, a line each."""
        if self.cancelled:
            return ["Import cancelled; the library is unchanged."]
        out = [
            f"{self.found} PDF(s): {len(self.added)} added as papers, {len(self.attached)} attached to papers "
            f"already here, {len(self.already)} already attached, {len(self.skipped)} skipped"
        ]
        out += [f"  attached: {x}" for x in self.attached]
        out += [f"  already: {x}" for x in self.already]
        out += [f"  note: {x}" for x in self.notes]
        out += [f"  skipped: {x}" for x in self.skipped]
        return out


def pdf_files(paths: Iterable[Path | str]) -> tuple[list[Path], list[str]]:
    """The files to import: each file named, and each folder's *.pdf files (recursively, in
    order, hidden folders left out); and the names that are neither (in words)."""
    out: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        path = Path(os.path.expanduser(str(raw)))
        if path.is_dir():
            out += sorted(_walk(path))
        elif path.is_file():
            out.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    return list(dict.fromkeys(out)), problems


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.lower().endswith(".pdf") and not name.startswith("."):
                yield Path(root) / name


_AUTHOR_SEP = re.compile(r"\s*(?:;|\band\b|&)\s*")


def metadata_authors(text: str) -> list[str]:
    """A PDF's Author metadata as names: "A and B", "A; B", or "A, B" (when each part is a name)."""
    text = " ".join(text.split())
    if not text:
        return []
    parts = [p for p in _AUTHOR_SEP.split(text) if p]
    if len(parts) == 1 and "," in text:
        commas = [p.strip() for p in text.split(",") if p.strip()]
        if all(" " in p for p in commas):  # "Ada Lovelace, Charles Babbage", not "Lovelace, Ada"
            parts = commas
    return parts[:200]


class CopyFailed(PapershelfError):
    """A PDF could not be copied into the library folder (a full disk, a folder it may not write)."""


class _Run:
    """One import of PDFs: the batch, the files copied so far (removed if it does not commit)."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        self.batch = ImportBatch(lib)
        self.out = PdfImportReport()
        self.copied: list[Path] = []
        # content hash → the paper holding it (the library's papers, then this import's)
        self.known: dict[str, str] = {}
        for paper in lib.papers():
            for item in attachments(paper.files):
                if item.sha256:
                    self.known.setdefault(item.sha256, paper.id)

    def title_of(self, pid: str) -> str:
        paper = self.batch.new.get(pid) or self.batch.views.get(pid) or self.lib.get(pid)
        return paper.title[:80]

    def one(self, path: Path) -> None:
        shown = clean_text(str(path))
        try:
            with open(path, "rb") as f:
                head = f.read(1024)
            if not looks_like_pdf(head):
                self._skip(shown, f"{shown} is not a PDF (it does not start as one); it was not imported")
                return
            sha = file_sha256(path)
        except OSError as exc:
            self._skip(shown, f"{shown}: cannot read it ({exc.strerror or exc}); it was not imported")
            return
        holder = self.known.get(sha)
        if holder is not None:
            said = f'{shown} is already attached to "{self.title_of(holder)}"'
            self.out.already.append(said)
            self.out.reports.append(
                FileReport(path=shown, format=PDF_FORMAT, unchanged=1, problems=[Problem(shown, 0, said, note=True)])
            )
            return
        info, note = self._info(path, shown)
        if info is None:
            return
        self._place(path, shown, sha, info, note)

    def _skip(self, shown: str, why: str) -> None:
        self.out.skipped.append(why)
        self.out.reports.append(FileReport(path=shown, format=PDF_FORMAT, error=why))

    def _info(self, path: Path, shown: str) -> tuple[PdfInfo | None, str]:
        try:
            return pdf_info(path), ""
        except PdfProblem as exc:
            if "encrypted" in str(exc) or "password" in str(exc):
                return PdfInfo(), f"{exc}; imported under its file name, without reading its title"
            self._skip(shown, f"{exc}; it was not imported")
            return None, ""

    def _place(self, path: Path, shown: str, sha: str, info: PdfInfo, note: str) -> None:
        batch = self.batch
        title = " ".join(info.title.split())
        cand = Candidate(
            abstract="",
            line=0,
            title=title or path.stem,
            authors=metadata_authors(info.authors),
            doi=info.doi,
            arxiv_id=info.arxiv_id,
        )
        report = batch.add(ParsedFile(shown, PDF_FORMAT, [cand], []))
        if note:
            report.problems.append(Problem(shown, 0, note, note=True))
            self.out.notes.append(note)
        pid = batch.placed[-1][1]
        if pid in batch.new and pid not in self.out.added:
            paper = batch.new[pid]
            if not title:
                paper.title_derived = True  # named by its file, as a title derived from an abstract is marked
            item = self._copy(paper_folder(paper.citekey, pid), path, sha, info.pages)
            paper.files = [*paper.files, item.to_dict()]
            self.out.added.append(pid)
        else:
            self._attach_to_existing(report, pid, path, shown, sha, info)
        self.known[sha] = pid
        self.out.reports.append(report)

    def _attach_to_existing(
        self, report: FileReport, pid: str, path: Path, shown: str, sha: str, info: PdfInfo
    ) -> None:
        """The PDF is a paper already in the library (its DOI or arXiv id, or the duplicates rules):
        its file is attached to that paper, as a change of this import (undone with it)."""
        view = batch_view(self.batch, pid)
        item: Attachment = self._copy(paper_folder(view.citekey, pid), path, sha, info.pages)
        give_file(self.batch, report, pid, item)
        if report.unchanged:
            report.unchanged -= 1
            report.merged += 1
        elif not report.merged:
            report.merged = 1
        why = "the same DOI" if info.doi and info.doi.casefold() == view.doi.casefold() else ""
        if not why and info.arxiv_id and view.arxiv_id and info.arxiv_id.split("v")[0] == view.arxiv_id.split("v")[0]:
            why = "the same arXiv id"
        where = "a paper of this import" if pid in self.batch.new else "the paper already here"
        said = f'{shown}: attached to {where}, "{view.title[:80]}"' + (f" ({why})" if why else "")
        self.out.attached.append(said)
        report.problems.append(Problem(shown, 0, said, note=True))

    def _copy(self, rel: str, path: Path, sha: str, pages: int) -> Attachment:
        """The PDF copied into the library folder; a copy that fails stops the whole import (the
        paper is in the batch already), which then changes nothing (CopyFailed)."""
        try:
            item, created = copy_in(self.lib, rel, path, sha, pages)
        except OSError as exc:
            raise CopyFailed(
                f"{path} could not be copied into the library's folder {self.lib.folder / 'files'} "
                f"({exc.strerror or exc}); nothing was imported.",
                path,
            ) from None
        if created:
            self.copied.append(item.location(self.lib.folder))
        return item

    def forget(self) -> None:
        """The import did not happen: the copies it made go."""
        self.batch.abandon()
        for path in self.copied:
            remove_quietly(path)
        self.copied = []


def batch_view(batch: ImportBatch, pid: str) -> Paper:
    """Paper `pid` as the batch will write it (new in it, or the library's with its changes so far)."""
    if pid in batch.new:
        return batch.new[pid]
    return batch.view(pid)


def give_file(batch: ImportBatch, report: FileReport, pid: str, item: Attachment) -> None:
    """Attach `item` to paper `pid` within the batch: written with it, undone with it (a paper
    of the library's is restored from `report.merged_before`)."""
    view = batch_view(batch, pid)
    view.files = [*view.files, item.to_dict()]
    if pid in batch.new:
        return
    batch.pending.setdefault(pid, {})["files"] = view.files
    if not any(pid in r for r in batch.before_reported):
        report.merged_before[pid] = batch.before[pid]


def attach_named_files(
    batch: ImportBatch, report: FileReport, placed: list[tuple[Candidate, str]], folder: Path
) -> None:
    """A .bib file's `file` fields (JabRef, Zotero/BBT, Mendeley: importers/filefield.py): each
    file there, relative to the .bib's `folder`, attached to its entry's paper, linked where it is
    (the user's JabRef or Zotero folder is their store); the files not found named in the report."""
    from ..importers.filefield import named_files

    missing: list[str] = []
    for cand, pid in placed:
        value = cand.bibfields.get("file", "")
        if not value:
            continue
        have = {a.sha256 for a in attachments(batch_view(batch, pid).files)}
        for raw, where in named_files(value, folder):
            try:
                if not where.is_file():
                    missing.append(raw)
                    continue
                sha = file_sha256(where)
                if sha in have:
                    continue
                pages, _problem = pdf_pages(where)
                item = linked_record(where, sha, pages)
            except OSError:
                missing.append(raw)
                continue
            have.add(sha)
            give_file(batch, report, pid, item)
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        said = f"{len(missing)} file(s) named in the .bib were not found: {shown}"
        report.problems.append(Problem(report.path, 0, said, note=True))


def import_pdfs(
    lib: Library,
    paths: Iterable[Path | str],
    progress: Callable[[int, int, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> PdfImportReport:
    """See `Library.import_pdfs`."""
    if isinstance(paths, (str, Path)):
        raise InvalidValueError(f"import_pdfs takes a list of files and folders, not one path ({str(paths)!r})")
    if lib.readonly:
        raise ReadOnlyLibraryError(
            f"The library in {lib.folder} was opened read-only; nothing was imported.", lib.folder
        )
    files, missing = pdf_files(paths)
    run = _Run(lib)
    out = run.out
    out.found = len(files)
    for why in missing:
        out.skipped.append(why)
        out.reports.append(FileReport(path=why.split(": ")[0], format=PDF_FORMAT, error=why))
    with gc_paused():
        try:
            for n, path in enumerate(files):
                if cancelled and cancelled():
                    run.forget()
                    return PdfImportReport(cancelled=True, found=len(files))
                if progress:
                    progress(n, len(files), str(path))
                try:
                    run.one(path)
                except OSError as exc:  # read while importing, or the library's files/ folder refused the copy
                    run._skip(str(path), f"{path}: {exc.strerror or exc}; it was not imported")
            if cancelled and cancelled():
                run.forget()
                return PdfImportReport(cancelled=True, found=len(files))
            run.batch.commit()
        except BaseException:
            run.forget()
            raise
    if progress:
        progress(len(files), len(files), "")
    return out


# ---- completing the new papers online (import --online) -----------------------------------------


def identifiers(lib: Library, ids: Iterable[str]) -> dict[str, Identifier]:
    """See `Library.own_identifiers`."""
    from ..biblio.identifiers import Identifier

    out: dict[str, Identifier] = {}
    for pid in ids:
        paper = lib.find(pid)
        if paper is None:
            continue
        if paper.doi:
            out[paper.id] = Identifier("doi", paper.doi)
        elif paper.arxiv_id:
            out[paper.id] = Identifier("arxiv", paper.arxiv_id)
    return out


def complete_found(
    lib: Library, found: Mapping[str, FoundRecord], expect: Mapping[str, Record] | None = None
) -> tuple[FoundApplied, dict[str, list[str]]]:
    """See `Library.complete_found`."""
    from ..online.lookup import changes_for
    from .applying import apply_found

    changes: dict[str, dict[str, str]] = {}
    for pid, rec in found.items():
        paper = lib.find(pid)
        if paper is not None:
            changes[pid] = {name: new for name, (_old, new) in changes_for(paper, rec).items()}
    done = apply_found(lib, changes, expect=expect, found=dict(found))
    return done, {pid: sorted(names) for pid, names in changes.items() if pid in done.applied}
