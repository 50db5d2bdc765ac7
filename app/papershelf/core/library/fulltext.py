"""Reading the text of attached PDFs for full-text search (`Library.extract_fulltext`).

Every attached PDF whose content (SHA-256) has no entry in the text cache is read with
`core.pdf.extract_text` (which never raises for a bad PDF: the reason there is no text is
kept instead) and its text stored in the cache, one atomic file per PDF
(`core.pdf.fulltext.TextCache`). The cache is this machine's, beside the search index
(`fulltext_folder`): like the index it is derived from files the library holds, so a sync
tool never copies it. A process killed part way loses at most the PDF it was reading: the
entries written stay, and the next run goes on with the rest. The papers whose texts were
read are written to an open index at once; a closed one finds them by their digests when it
next opens (core/search/pdftext.py). A PDF whose problem is passing (the read timed out, crashed
or ran out of memory, the file could not be opened) is not cached: the next run reads it again.
A run that was not cancelled ends by pruning the cache of texts no paper holds any more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..attachments import attachments
from ..pdf import Cancelled as ReadCancelled
from ..pdf import extract_text
from ..pdf.fulltext import FULLTEXT_DIR, TextCache

if TYPE_CHECKING:
    from .facade import Library

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]
SHOWN_PROBLEMS = 5  # a summary names at most this many PDFs without text


def fulltext_folder(lib: Library) -> Path:
    """Where the texts of the library's PDFs are cached: beside its search index, on this machine."""
    return Path(lib.index_folder).parent / FULLTEXT_DIR


@dataclass(slots=True)
class PdfToRead:
    """One PDF content to extract: where a copy of it is, and the papers that have it."""

    sha256: str
    path: Path
    papers: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Extracted:
    """What `Library.extract_fulltext` did, in words by `summary()`."""

    found: int = 0  # PDFs that had no text in the cache when it began
    read: int = 0  # of them, read now (with or without text)
    no_text: list[str] = field(default_factory=list)  # why a PDF read has no text (encrypted, image-only…)
    unreadable: list[str] = field(default_factory=list)  # passing problems (timeout, crash…): tried again next time
    missing: int = 0  # attached PDFs not on this machine (a linked file moved away)
    papers: set[str] = field(default_factory=set)  # papers whose PDFs' texts were read
    cancelled: bool = False

    def summary(self) -> str:
        """What happened, in a sentence or two."""
        if not self.found:
            said = "Every attached PDF was read for search already."
        else:
            texts = self.read - len(self.no_text) - len(self.unreadable)
            said = f"Read the text of {_pdfs(texts)} for search"
            if self.cancelled:
                said += f"; cancelled with {self.found - self.read} still to read (the next run goes on)"
            said += "."
        if self.no_text:
            n = len(self.no_text)
            names = "; ".join(self.no_text[:SHOWN_PROBLEMS]) + ("; …" if n > SHOWN_PROBLEMS else "")
            said += f" {_pdfs(n)} {'has' if n == 1 else 'have'} no text to search: {names}."
        if self.unreadable:
            n = len(self.unreadable)
            names = "; ".join(self.unreadable[:SHOWN_PROBLEMS]) + ("; …" if n > SHOWN_PROBLEMS else "")
            said += f" {_pdfs(n)} could not be read this time: {names}; tried again next time."
        if self.missing:
            said += f" {_pdfs(self.missing)} attached {'is' if self.missing == 1 else 'are'} not on this machine."
        return said


def _pdfs(n: int) -> str:
    return "1 PDF" if n == 1 else f"{n} PDFs"


def held_pdfs(lib: Library) -> dict[str, tuple[list[str], list[Path]]]:
    """Each attached PDF content (SHA-256) → the papers that have it and where its copies are,
    in the library's order. Safe on a worker thread: papers are read one by one."""
    from ..search.pdftext import is_pdf  # the index's own rule of which files are PDFs

    held: dict[str, tuple[list[str], list[Path]]] = {}
    with_files = getattr(lib._papers, "with_files", None)  # a read view knows which papers have files
    for pid in with_files() if with_files is not None else lib.ids():
        paper = lib.find(pid)
        if paper is None or not paper.files:
            continue
        for item in attachments(paper.files):
            if not is_pdf(item):
                continue
            papers, places = held.setdefault(item.sha256, ([], []))
            if pid not in papers:
                papers.append(pid)
            places.append(item.location(lib.folder))
    return held


def to_read(lib: Library) -> tuple[list[PdfToRead], int]:
    """The PDFs whose text is not in the cache yet (each content once, with every paper that has
    it, read from any copy on this machine), and how many of them have no copy here."""
    cache = TextCache(fulltext_folder(lib))
    todo: list[PdfToRead] = []
    missing = 0
    for sha, (papers, places) in held_pdfs(lib).items():
        if cache.has(sha):
            continue
        where = next((p for p in places if p.is_file()), None)
        if where is None:
            missing += 1
        else:
            todo.append(PdfToRead(sha, where, papers))
    return todo, missing


def pdf_problem(lib: Library, sha256: str) -> str:
    """Why the PDF of this content has no text, as the cache holds it once read ("" when it has
    text or was not read yet). Cheap for a PDF without text: its entry holds no pages."""
    text = TextCache(fulltext_folder(lib)).get(sha256)
    return text.problem if text is not None else ""


def pdfs_to_read(lib: Library) -> int:
    """How many attached PDFs (distinct contents) are not searchable yet."""
    return len(to_read(lib)[0])


def extract_fulltext(lib: Library, progress: Progress | None = None, cancelled: Cancelled | None = None) -> Extracted:
    """See `Library.extract_fulltext`."""
    todo, missing = to_read(lib)
    out = Extracted(found=len(todo), missing=missing)
    cache = TextCache(fulltext_folder(lib))
    for n, pdf in enumerate(todo):
        if cancelled is not None and cancelled():
            out.cancelled = True
            break
        if progress is not None:
            progress(n, len(todo))
        try:
            text = extract_text(pdf.path, cancelled=cancelled)
        except ReadCancelled:  # the reader was stopped mid-file: nothing kept of it
            out.cancelled = True
            break
        out.read += 1
        if text.passing:  # not cached: read again next time
            out.unreadable.append(text.problem)
            continue
        cache.put(pdf.sha256, text)
        if text.problem:
            out.no_text.append(text.problem)
        out.papers.update(pdf.papers)
        lib._search.texts_extracted(pdf.papers)  # an open index writes them now; a closed one at its next open
    if not out.cancelled:
        cache.prune(held_pdfs(lib))  # the library as it is now: a paper attached meanwhile keeps its text
        if progress is not None:
            progress(len(todo), len(todo))
    return out
