"""PDFs: what a file holds (pages, metadata, the identity of the paper) and its text, page by
page. PDFium (pypdfium2) reads them, always in a child process with a memory cap and a timeout
(a user's PDF is untrusted input); see docs/DESIGN.md, "Reading a PDF (core/pdf/)". No Qt, no
library access.

    pdf_info(path)     PdfInfo: pages, title, authors, DOI, arXiv id (PdfProblem when unreadable)
    page_texts(path)   the text of each page (PdfProblem when the file cannot be read)
    extract_text(path, cancelled) PdfText: every page's text, or why there is none (never raises
                       for a bad PDF; Cancelled when `cancelled()` turns true meanwhile)
    extract_many(paths, progress, cancelled)  many files by one worker process, cancellable
    reading.py         the reading itself (run inside the worker), the caps, the title rules
    worker.py          the child process; sandbox.py its parent's side (PdfWorker, extract_many)
    fulltext.py        PdfText, TextCache: each PDF's text, once per content, on this machine
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from pathlib import Path

from .fulltext import PdfText, TextCache
from .reading import MAX_FILE_CHARS, MAX_PAGE_CHARS, MAX_PAGES, PdfInfo, PdfProblem
from .sandbox import Cancelled, PdfWorker, extract_many, text_from_reply

__all__ = [
    "MAX_FILE_CHARS",
    "MAX_PAGES",
    "MAX_PAGE_CHARS",
    "Cancelled",
    "PdfInfo",
    "PdfProblem",
    "PdfText",
    "PdfWorker",
    "TextCache",
    "extract_many",
    "extract_text",
    "page_texts",
    "pdf_info",
]

_shared: PdfWorker | None = None
_shared_lock = threading.Lock()


def _worker() -> PdfWorker:
    """The worker this process's single calls share (started once, stopped at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PdfWorker()
            atexit.register(_shared.close)
        return _shared


def page_texts(path: Path | str, first: int = 0, last: int | None = None) -> list[str]:
    """The text of pages first..last (all by default, within the caps), control characters removed
    (PdfProblem in words when the file cannot be read, took too long or crashed the reader)."""
    reply = _worker().request("pages", path, first, last)
    if not reply.get("ok"):
        raise PdfProblem(str(reply.get("problem")), path)
    return [str(p) for p in reply["pages"]]


def pdf_info(path: Path | str) -> PdfInfo:
    """The pages and the paper's identity: a DOI or arXiv id in the metadata or the first pages'
    text (one on page 1 before one in the references), the title from the metadata when it looks
    like a title, else the largest text on page 1; the authors from the metadata (PdfProblem when
    the file cannot be read)."""
    reply = _worker().request("info", path)
    if not reply.get("ok"):
        raise PdfProblem(str(reply.get("problem")), path)
    info = reply["info"]
    return PdfInfo(
        pages=int(info["pages"]),
        title=str(info["title"]),
        authors=str(info["authors"]),
        doi=str(info["doi"]),
        arxiv_id=str(info["arxiv_id"]),
    )


def extract_text(path: Path | str, cancelled: Callable[[], bool] | None = None) -> PdfText:
    """Every page's text, or why there is none (encrypted, damaged, image-only, too slow or too
    big to read): never raises for a bad PDF; `note` names a cap that cut the text short, `passing`
    says the problem may be gone next time. Cancelled (the reader is stopped at once) when
    `cancelled()` turns true while the file is being read."""
    return text_from_reply(path, _worker().request("text", path, cancelled=cancelled))
