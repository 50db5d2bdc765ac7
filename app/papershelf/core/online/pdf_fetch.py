"""Fetching a paper's PDF (issue 24, item 3): where it is, and downloading it, verified.

Where (`pdf_sources`), in this order, and nothing else guessed (no landing page read, no DOI
resolved to a publisher's site):
- a paper with an arXiv id: arXiv's PDF, `https://arxiv.org/pdf/<id>` (`$PAPERSHELF_ARXIV_URL`
  moves it with the look-ups: `<that>/pdf/<id>`; service "arxiv-pdf", 3 s apart as arXiv asks);
- an open-access PDF its record names: a `pdf` field (any http(s) address), a `url` field or a
  link whose address ends in ".pdf" (service "web:<scheme>://<host>", one request a second a host).
A paper with several is tried in that order until one gives a PDF.

Downloading (`download_pdf`) is `Http.download` within the paper's own deadline (FETCH_SECONDS,
`$PAPERSHELF_FETCH_SECONDS`): the service's turn and spacing, retries honouring Retry-After, the
polite User-Agent, the cancel; redirects only to http(s) addresses (a `Location: file:///etc/passwd`
is refused in words); the body streamed to disk and cut at FETCH_MAX_BYTES
(`$PAPERSHELF_FETCH_MAX_BYTES`) or at the deadline, whichever comes first; its first bytes must be a
PDF's (`attachments.looks_like_pdf`): a web page served with status 200 is refused ("arXiv
(arxiv.org) answered with a web page, not a PDF"). A failure leaves no file; a download lands in
the caller's folder (`incoming_folder`, under the cache folder), from where the caller attaches it
(`Library.attach_files`, which copies it into the library) and removes the folder.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from papershelf import paths
from papershelf.core.attachments import looks_like_pdf, safe_name
from papershelf.core.citation import field_text
from papershelf.core.online._limits import base_url, fetch_max_bytes, fetch_seconds, web_service
from papershelf.core.online._stream import megabytes
from papershelf.core.online._words import who
from papershelf.core.online.records import BadResponse, NotFound, OutOfTime, Response

if TYPE_CHECKING:
    from papershelf.core.online.http import Http
    from papershelf.core.paper import Paper

__all__ = [
    "INCOMING_FOLDER",
    "NO_SOURCE",
    "NotAPdf",
    "PdfSource",
    "download_pdf",
    "incoming_folder",
    "pdf_sources",
    "remove_folder",
]

INCOMING_FOLDER = "downloads"
"""The folder, in the cache folder, that holds downloads until they are attached."""
STALE_SECONDS = 24 * 3600  # a download folder this old was left by a process that was killed
ARXIV_PDF = "arxiv-pdf"


class NotAPdf(BadResponse):
    """What was downloaded does not start as a PDF does (a web page, an error text)."""


@dataclass(frozen=True, slots=True)
class PdfSource:
    """Where a paper's PDF can be fetched: its address, the service asked (its rate limit and
    name in messages), the name the file gets, and what it is, in words ("arXiv")."""

    url: str
    service: str
    name: str
    what: str


def pdf_sources(paper: Paper) -> list[PdfSource]:
    """Where this paper's PDF is, best first (see the module's docstring); [] when nowhere."""
    out: list[PdfSource] = []
    if paper.arxiv_id:
        ident = paper.arxiv_id.strip()
        out.append(
            PdfSource(
                f"{base_url(ARXIV_PDF)}/pdf/{ident}",
                ARXIV_PDF,
                safe_name(ident.replace("/", "_") + ".pdf", "paper.pdf"),
                "arXiv",
            )
        )
    for url, any_path in _record_links(paper):
        service = web_service(url)
        if not service or not (any_path or _ends_in_pdf(url)):
            continue
        if all(s.url != url for s in out):
            out.append(PdfSource(url, service, _file_name(url, paper.id), "the record's link"))
    return out


def _record_links(paper: Paper) -> list[tuple[str, bool]]:
    """The addresses the record names, each with whether it names a PDF whatever its path (a
    `pdf` field does; a `url` field or a link only when it ends in .pdf)."""
    fields = paper.bibfields
    found = [(field_text("pdf", fields["pdf"]).strip(), True)] if fields.get("pdf") else []
    if fields.get("url"):
        found.append((field_text("url", fields["url"]).strip(), False))
    found += [(link.strip(), False) for link in paper.links]
    return [(url, any_path) for url, any_path in found if url]


def _ends_in_pdf(url: str) -> bool:
    try:
        return urlsplit(url).path.lower().endswith(".pdf")
    except ValueError:
        return False


def _file_name(url: str, paper_id: str) -> str:
    """The name a downloaded file gets: the address's own (decoded, made safe), ending in .pdf."""
    try:
        name = PurePosixPath(unquote(urlsplit(url).path)).name
    except ValueError:
        name = ""
    if not name.lower().endswith(".pdf"):
        name = f"{name or paper_id}.pdf"
    return safe_name(name, f"{paper_id}.pdf")


NO_SOURCE = (
    "It has no arXiv id, and its record names no PDF (a pdf field, or a url field or link ending in .pdf): "
    "nothing to fetch. Attach the PDF yourself."
)
"""Why nothing can be fetched for a paper `pdf_sources` finds nothing for."""


def download_pdf(http: Http, source: PdfSource, folder: Path) -> Path:
    """Download the PDF at `source` into `folder` (as `source.name`), within the paper's own
    deadline; returns the file. Raises an OnlineError in words (NotAPdf for a web page; Cancelled
    at once for a cancel); then nothing is left in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / source.name
    seconds, cap = fetch_seconds(), fetch_max_bytes()

    def check(head: bytes, answer: Response) -> None:
        if looks_like_pdf(head):
            return
        raise NotAPdf(_not_a_pdf(source, head, answer), source.service, answer.url)

    try:
        with http.paper(seconds, "download of the PDF"):
            http.download(source.service, source.url, dest, max_bytes=cap, check=check)
    except NotFound:
        raise NotFound(
            f"{who(source.service)} has no PDF at {source.url} (HTTP 404). Nothing was attached.",
            source.service,
            source.url,
        ) from None
    except OutOfTime as exc:
        raise OutOfTime(
            f"Stopped downloading the PDF from {who(source.service)}: it took more than {seconds:g} s in all (a very "
            "slow connection, or an answer that does not end). Nothing was kept; try again later.",
            source.service,
            exc.url or source.url,
        ) from None
    if dest.stat().st_size > cap:  # cannot happen (the cap is counted as the bytes arrive): never keep one
        with contextlib.suppress(OSError):
            dest.unlink()
        raise BadResponse(f"{who(source.service)} sent more than {megabytes(cap)}.", source.service, source.url)
    return dest


def _not_a_pdf(source: PdfSource, head: bytes, answer: Response) -> str:
    kind = answer.headers.get("content-type", "").split(";")[0].strip().lower()
    start = head.lstrip()[:15].lower()
    where = f"{who(source.service)}"
    if "html" in kind or start.startswith((b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<")):
        what = "a web page"
    elif not head:
        what = "an empty file"
    else:
        what = f"a file that is not a PDF{f' ({kind})' if kind else ''}"
    return (
        f"{where} answered with {what}, not a PDF ({answer.url or source.url}). It may need a login or "
        "be a page about the paper; nothing was attached."
    )


# ---- the folder downloads wait in ------------------------------------------------------------


def incoming_folder() -> Path:
    """A new empty folder for a batch's downloads (in the cache folder's downloads/); the caller
    removes it (`remove_folder`) once the files are attached. Folders left by a killed process,
    a day old, are removed here."""
    base = paths.cache_dir() / INCOMING_FOLDER
    base.mkdir(parents=True, exist_ok=True)
    now = time.time()
    with contextlib.suppress(OSError):
        for old in base.iterdir():
            with contextlib.suppress(OSError):
                if old.is_dir() and now - old.stat().st_mtime > STALE_SECONDS:
                    shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix="fetch-", dir=base))


def remove_folder(folder: Path | str) -> None:
    """Remove a download folder and whatever is left in it (tidying only: errors are ignored)."""
    shutil.rmtree(folder, ignore_errors=True)
