"""PDFs: what a file holds (pages, metadata, the identity of the paper) and its text, page by
page. PDFium (pypdfium2) reads them; see docs/DESIGN.md, "PDFs". No Qt, no library access.

    pdf_info(path)     PdfInfo: pages, title, DOI, arXiv id, or the problem in words
    page_texts(path)   the text of each page (PdfProblem when the file cannot be read)
    extract_text(path) PdfText: every page's text, or why there is none (never raises for a bad PDF)
    fulltext.py        PdfText, TextCache: each PDF's text, once per content, on this machine
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..biblio.identifiers import find_identifiers
from ..errors import PapershelfError
from ..limits import strip_controls
from .fulltext import PdfText


class PdfProblem(PapershelfError):
    """A PDF that cannot be read (encrypted, damaged, not a PDF): the message says which and where."""


@dataclass(frozen=True, slots=True)
class PdfInfo:
    """What a PDF says about itself: its pages and the paper it is, as far as it tells."""

    pages: int = 0
    title: str = ""
    authors: str = ""
    doi: str = ""
    arxiv_id: str = ""


def _open(path: Path | str):  # type: ignore[no-untyped-def]
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        text = str(exc)
        if "password" in text.lower():
            raise PdfProblem(f"{path} is encrypted: it needs a password to open", path) from None
        raise PdfProblem(f"{path} is not a readable PDF (damaged or cut short: {text})", path) from None


def page_texts(path: Path | str, first: int = 0, last: int | None = None) -> list[str]:
    """The text of pages first..last (all by default), control characters removed."""
    doc = _open(path)
    try:
        end = len(doc) if last is None else min(last, len(doc))
        out = []
        for i in range(first, end):
            page = doc[i]
            textpage = page.get_textpage()
            out.append(strip_controls(textpage.get_text_bounded().replace("\r\n", "\n")))
            textpage.close()
            page.close()
        return out
    finally:
        doc.close()


def pdf_info(path: Path | str) -> PdfInfo:
    """The pages and the paper's identity: a DOI or arXiv id in the metadata or the first pages'
    text, the title from the metadata (PdfProblem when the file cannot be read)."""
    doc = _open(path)
    try:
        pages = len(doc)
        meta = doc.get_metadata_dict()
    finally:
        doc.close()
    text = "\n".join([meta.get("Subject", ""), meta.get("Keywords", ""), *page_texts(path, 0, 2)])
    doi = arxiv = ""
    for ident in find_identifiers(text):
        if ident.kind == "doi" and not doi:
            doi = ident.value
        elif ident.kind == "arxiv" and not arxiv:
            arxiv = ident.value
    return PdfInfo(
        pages=pages,
        title=strip_controls(meta.get("Title", "")).strip(),
        authors=strip_controls(meta.get("Author", "")).strip(),
        doi=doi,
        arxiv_id=arxiv,
    )


def extract_text(path: Path | str) -> PdfText:
    """Every page's text, or why there is none (encrypted, damaged, image-only): never raises
    for a bad PDF (OSError when the file cannot be read at all)."""
    try:
        pages = page_texts(path)
    except PdfProblem as exc:
        return PdfText([], str(exc))
    if not any(p.strip() for p in pages):
        return PdfText(pages, f"{path} has no text to search (scanned pages without OCR?)")
    return PdfText(pages)
