"""Reading one PDF in this process with PDFium (pypdfium2): its pages' text within the caps, its
metadata and the paper's identity. The worker (`worker.py`) runs these on untrusted files in a
child process with a memory cap and a timeout; nothing else should call them on a user's file.

Caps (what one file may cost): the first MAX_PAGES pages are read, at most MAX_PAGE_CHARS
characters are kept of a page and MAX_FILE_CHARS of the whole file; a cap that was hit is said in
the result's `note`.
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..biblio.identifiers import find_identifiers
from ..errors import PapershelfError
from ..limits import strip_controls

MAX_PAGES = 2000
MAX_PAGE_CHARS = 100_000  # a dense page of a paper holds about 5,000
MAX_FILE_CHARS = 5_000_000
INFO_PAGES = 2  # the pages searched for a DOI or an arXiv id
MAX_TITLE_CHARS = 300


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


@dataclass(frozen=True, slots=True)
class Pages:
    """Pages' text as read within the caps, and which cap was hit (`note`, "" when none)."""

    texts: list[str]
    note: str = ""


def open_pdf(path: Path | str) -> Any:
    """The PDFium document of `path` (PdfProblem in words when it cannot be opened)."""
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        text = str(exc)
        if "password" in text.lower():
            raise PdfProblem(f"{path} is encrypted: it needs a password to open", path) from None
        if not _starts_like_pdf(path):
            raise PdfProblem(f"{path} is not a PDF (it does not start with %PDF-)", path) from None
        raise PdfProblem(f"{path} is not a readable PDF (damaged or cut short: {text})", path) from None


def _starts_like_pdf(path: Path | str) -> bool:
    try:
        with open(path, "rb") as f:
            return b"%PDF-" in f.read(1024)
    except OSError:
        return True  # the open's own message says more


def _page_text(doc: Any, i: int) -> str | None:
    """Page i's text, None when PDFium cannot load that page (a damaged page tree or content)."""
    import pypdfium2 as pdfium

    try:
        page = doc[i]
    except pdfium.PdfiumError:
        return None
    try:
        textpage = page.get_textpage()
        try:
            text: str = textpage.get_text_bounded()
        finally:
            textpage.close()
    finally:
        page.close()
    return strip_controls(text.replace("\r\n", "\n"))


def read_pages(path: Path | str, first: int = 0, last: int | None = None) -> Pages:
    """The text of pages first..last (all by default), control characters removed, within the caps."""
    doc = open_pdf(path)
    try:
        count = len(doc)
        end = count if last is None else min(last, count)
        notes = []
        if end - first > MAX_PAGES:
            end = first + MAX_PAGES
            notes.append(f"only the first {MAX_PAGES:,} of its {count:,} pages were read")
        texts: list[str] = []
        kept = 0
        damaged = []
        for i in range(max(first, 0), end):
            text = _page_text(doc, i)
            if text is None:
                damaged.append(i + 1)
                text = ""
            if len(text) > MAX_PAGE_CHARS:
                text = text[:MAX_PAGE_CHARS]
                if not any("per page" in n for n in notes):
                    notes.append(f"pages longer than {MAX_PAGE_CHARS:,} characters were cut (per page cap)")
            if kept + len(text) > MAX_FILE_CHARS:
                texts.append(text[: MAX_FILE_CHARS - kept])
                notes.append(f"only the first {MAX_FILE_CHARS:,} characters were kept (up to page {i + 1})")
                break
            kept += len(text)
            texts.append(text)
        if damaged and len(damaged) == len(texts):
            raise PdfProblem(f"{path} is damaged: none of its {count:,} pages can be read", path)
        if damaged:
            shown = ", ".join(map(str, damaged[:10])) + (" …" if len(damaged) > 10 else "")
            notes.append(f"{len(damaged):,} damaged page(s) could not be read: {shown}")
        return Pages(texts, "; ".join(notes))
    finally:
        doc.close()


# --- the paper's identity ---------------------------------------------------------------------

# a title a program wrote rather than a person: "Microsoft Word - draft3.docx", "untitled", a file name
_JUNK_TITLE = re.compile(
    r"^(?:microsoft (?:word|powerpoint)\s*-|untitled\b|title\b\s*$|no title|slide \d|document\d*$|paper\d*$)"
    r"|\.(?:docx?|pdf|tex|dvi|ps|rtf|odt|indd|qxd|pages|txt|html?)\s*$",
    re.I,
)


def plausible_title(title: str, path: Path | str | None = None) -> bool:
    """Whether a metadata title looks like a paper's title (not empty, not a program's or a file's name)."""
    title = title.strip()
    if len(title) < 4 or not re.search(r"[^\W\d_]{2}", title) or _JUNK_TITLE.search(title):
        return False
    if " " not in title and re.search(r"[_.]|\d{3}", title):  # draft_v3, paper.final, 123456
        return False
    return not (path is not None and title.lower() == Path(path).stem.lower())


def _upright(angle: float) -> bool:
    return angle < 0 or min(angle, 2 * math.pi - angle) < 0.05  # -1: PDFium could not tell


def largest_text(doc: Any, page_index: int = 0) -> str:
    """The text set in the largest type on a page, its lines top first (upright text only: the
    arXiv stamp in the margin is rotated). "" when the page has no text."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    if len(doc) <= page_index:
        return ""
    try:
        page = doc[page_index]
    except pdfium.PdfiumError:
        return ""
    textpage = page.get_textpage()
    try:
        tp = textpage.raw
        count = min(raw.FPDFText_CountChars(tp), MAX_PAGE_CHARS)
        chars = []
        for i in range(count):
            ch = chr(raw.FPDFText_GetUnicode(tp, i))
            if ch in "\r\n" or not (ch.isspace() or _upright(raw.FPDFText_GetCharAngle(tp, i))):
                continue
            chars.append((i, " " if ch.isspace() else ch, round(raw.FPDFText_GetFontSize(tp, i), 1)))
        letters = [size for _, ch, size in chars if ch.isalnum()]
        if not letters:
            return ""
        biggest = max(letters)
        if biggest <= min(letters) + 0.5:  # all in one size: no title stands out
            return ""
        left, right, bottom, top = (ctypes.c_double() for _ in range(4))
        lines: dict[float, list[str]] = {}  # bottom of the line -> its characters in text order
        base = 0.0
        for i, ch, size in chars:
            if size < biggest - 0.5:
                continue
            if ch != " ":  # a space's box says nothing of its line
                raw.FPDFText_GetCharBox(tp, i, left, right, bottom, top)
                base = next((b for b in lines if abs(b - bottom.value) < biggest * 0.5), bottom.value)
            lines.setdefault(base, []).append(ch)
        out = ["".join(lines[b]).strip() for b in sorted(lines, reverse=True)]
        return re.sub(r"\s+", " ", " ".join(out)).strip()[:MAX_TITLE_CHARS]
    finally:
        textpage.close()
        page.close()


# where a paper's references start: the DOIs and arXiv ids after it are other papers'
_REFERENCES = re.compile(r"^\s*(?:\d+\.?\s*)?(?:references|bibliography|literature cited|works cited)\b", re.I | re.M)
_DOI_AT_LINE_END = re.compile(r"(10\.\d{4,9}/\S*[-./_])[ \t]*\n[ \t]*(?=[\w.-])", re.I)


def identifiers(*texts: str) -> tuple[str, str]:
    """The first DOI and the first arXiv id in `texts`, in order (the metadata, page 1, page 2…):
    a DOI on page 1 wins over one cited later, and none is taken from the references (from a
    "References" heading on). A DOI broken at a line end after a "-", ".", "/" or "_" is joined again."""
    doi = arxiv = ""
    for text in texts:
        refs = _REFERENCES.search(text)
        if refs:
            text = text[: refs.start()]
        for ident in find_identifiers(_DOI_AT_LINE_END.sub(r"\1", text)):
            if ident.kind == "doi" and not doi:
                doi = ident.value
            elif ident.kind == "arxiv" and not arxiv:
                arxiv = ident.value
        if (doi and arxiv) or refs:
            break
    return doi, arxiv


def read_info(path: Path | str) -> PdfInfo:
    """The pages and the paper's identity: a DOI or arXiv id in the metadata (Subject, Keywords)
    or the first pages' text; the title from the metadata when it looks like one, else the
    largest text on page 1; the authors from the metadata (PdfProblem when unreadable)."""
    doc = open_pdf(path)
    try:
        pages = len(doc)
        meta = doc.get_metadata_dict()
        texts = [(_page_text(doc, i) or "")[:MAX_PAGE_CHARS] for i in range(min(INFO_PAGES, pages))]
        title = re.sub(r"\s+", " ", strip_controls(meta.get("Title", ""))).strip()[:MAX_TITLE_CHARS]
        if not plausible_title(title, path):
            title = largest_text(doc, 0)
            if not plausible_title(title):
                title = ""
    finally:
        doc.close()
    doi, arxiv = identifiers(meta.get("Subject", ""), meta.get("Keywords", ""), *texts)
    authors = re.sub(r"\s+", " ", strip_controls(meta.get("Author", ""))).strip()[:1000]
    return PdfInfo(pages=pages, title=title, authors=authors, doi=doi, arxiv_id=arxiv)
