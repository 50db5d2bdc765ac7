"""The one door to the online services (issue 23): fetching records by identifier and looking
papers up, for the window and the command line alike.

An `OnlineSession` is built once per batch with its `Http` (the contact e-mail, a cancel flag,
what to say while a rate limit makes it wait). It runs on whatever thread the caller gives it
(the window's worker, the command's main thread); `cancel()` may be called from any thread and
abandons the request in flight. A failure of one identifier or one paper is kept in words and
the batch goes on; Cancel stops it, what was found so far kept. The session changes nothing:
what it found reaches the library through `Library.add_found` and `Library.apply_found`, under
the same rules from both callers. Consent, settings and threading stay with the callers.

Fetching PDFs (`fetch_pdfs`, issue 24) is the same: the session downloads each paper's PDF into a
folder the caller holds (`incoming_folder`), and the caller attaches each file with
`Library.attach_files` and removes the folder (`remove_folder`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from .http import Http
from .lookup import Reach, lookup_many
from .pdf_fetch import NO_SOURCE, download_pdf, incoming_folder, pdf_sources, remove_folder
from .records import Cancelled, FoundRecord, OnlineError, Proposal, Unreachable
from .services import fetch

if TYPE_CHECKING:
    from ..biblio.identifiers import Identifier
    from ..paper import Paper

__all__ = ["Fetched", "LookupResult", "OnlineSession", "PdfFetch", "PdfFetches"]

Progress = Callable[[int, int], None]


@dataclass
class Fetched:
    """What fetching a batch of identifiers gave: the records found, and the failures in words."""

    found: list[tuple[Identifier, FoundRecord]] = field(default_factory=list)
    failed: list[tuple[Identifier, str]] = field(default_factory=list)
    cancelled: bool = False


@dataclass
class LookupResult:
    """What a look-up batch gave: a proposal per paper done, and whether it was cancelled."""

    proposals: list[Proposal] = field(default_factory=list)
    cancelled: bool = False
    stopped: str = ""  # why the batch stopped early: no service could be reached
    skipped: dict[str, str] = field(default_factory=dict)  # service → why it was skipped (unreachable)
    skipped_for: dict[str, int] = field(default_factory=dict)  # service → how many papers went without it
    looked_up: int = 0  # papers asked about (the others were stopped or cancelled before)


@dataclass
class PdfFetch:
    """One paper's PDF fetch: the file downloaded (in the caller's folder) and the address it came
    from, or why there is none, in words."""

    paper_id: str
    path: Path | None = None
    url: str = ""
    problem: str = ""
    no_source: bool = False  # nowhere to fetch it from (no arXiv id, no PDF link): nothing was asked


@dataclass
class PdfFetches:
    """What a batch of PDF fetches gave, paper by paper in order, and whether it was cancelled
    (the papers after the cancel are not in `done`)."""

    done: list[PdfFetch] = field(default_factory=list)
    cancelled: bool = False


class OnlineSession:
    """One batch online: one `Http`, the rate-limit waits said through `on_wait`, a cancel any
    thread may give. A context manager: leaving it closes the connections."""

    def __init__(
        self,
        contact: str = "",
        cancelled: Callable[[], bool] | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self._cancelled = cancelled or (lambda: False)
        self._stop = threading.Event()
        self.http = Http(contact=contact, cancelled=self.is_cancelled, on_wait=on_wait)
        self.result = LookupResult()  # the last look-up's, filled as it goes (kept if it is interrupted)
        self.pdfs = PdfFetches()  # the last PDF fetch's, the same way

    def is_cancelled(self) -> bool:
        """Whether the batch was cancelled (by `cancel()` or the caller's flag)."""
        return self._stop.is_set() or self._cancelled()

    def cancel(self) -> None:
        """Stop the batch from any thread: the request in flight is abandoned, nothing more is
        asked. Nothing is waited for here."""
        self._stop.set()
        self.http.cancel()

    def close(self) -> None:
        """Close the connections."""
        self.http.close()

    def __enter__(self) -> OnlineSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def fetch(
        self,
        idents: Iterable[Identifier],
        progress: Progress | None = None,
        each: Callable[[Identifier, FoundRecord | str], None] | None = None,
    ) -> Fetched:
        """Fetch each identifier's record (arXiv, Crossref, doi.org); a failure is kept in words
        and the rest still fetched; Cancel stops at once. `each` hears every identifier's record
        or failure as it comes, `progress(done, total)` how far the batch is."""
        todo = list(dict.fromkeys(idents))
        out = Fetched()
        for n, ident in enumerate(todo):
            if progress is not None:
                progress(n, len(todo))
            try:
                got: FoundRecord | str = fetch(self.http, ident)
            except Cancelled:
                out.cancelled = True
                return out
            except OnlineError as exc:
                got = str(exc)
            if isinstance(got, FoundRecord):
                out.found.append((ident, got))
            else:
                out.failed.append((ident, got))
            if each is not None:
                each(ident, got)
        if progress is not None:
            progress(len(todo), len(todo))
        return out

    def look_up(
        self,
        papers: Iterable[Paper],
        progress: Progress | None = None,
        each: Callable[[Proposal, str], None] | None = None,
    ) -> LookupResult:
        """Look each paper up (see lookup.py): a proposal per paper, in order. `each` hears each
        proposal as it is ready, with why the batch stopped ("" while it goes on); Cancel stops
        the batch, the proposals so far kept. Read copies: the library may change meanwhile (the
        proposals are applied with `Library.apply_found`, which checks)."""
        todo = list(papers)
        out = self.result = LookupResult()
        reach = Reach()
        try:
            for proposal in lookup_many(self.http, todo, progress, reach=reach):
                out.proposals.append(proposal)
                if each is not None:
                    each(proposal, reach.stopped)
                if self.is_cancelled():
                    out.cancelled = len(out.proposals) < len(todo)
                    break
        except Cancelled:
            out.cancelled = True
        finally:
            out.stopped = reach.stopped
            out.skipped = {service: reach.skipped_note(service) for service in reach.skipped}
            out.skipped_for = {service: len(ids) for service, ids in reach.skipped.items()}
            out.looked_up = reach.looked_up
        return out

    # ---- PDFs (issue 24) ----------------------------------------------------------------------

    incoming_folder = staticmethod(incoming_folder)
    remove_folder = staticmethod(remove_folder)

    def fetch_pdfs(
        self,
        papers: Iterable[Paper],
        folder: Path,
        progress: Progress | None = None,
        each: Callable[[PdfFetch], None] | None = None,
    ) -> PdfFetches:
        """Download each paper's PDF (pdf_fetch.py: arXiv's, or an open-access PDF its record names)
        into its own sub-folder of `folder`; a failure is kept in words and the batch goes on,
        Cancel stops it at once (the file in flight is not kept). `each` hears each paper's fetch
        as it ends, `progress(done, total)` how far the batch is. A service that cannot be reached
        is not asked again in this batch. Read copies of the papers: nothing is changed here."""
        todo = list(papers)
        out = self.pdfs = PdfFetches()
        unreachable: dict[str, str] = {}
        for n, paper in enumerate(todo):
            if progress is not None:
                progress(n, len(todo))
            try:
                one = self._fetch_pdf(paper, folder / paper.id, unreachable)
            except Cancelled:
                out.cancelled = True
                return out
            out.done.append(one)
            if each is not None:
                each(one)
        if progress is not None:
            progress(len(todo), len(todo))
        return out

    def _fetch_pdf(self, paper: Paper, folder: Path, unreachable: dict[str, str]) -> PdfFetch:
        """One paper's PDF from the first of its sources that gives one."""
        sources = pdf_sources(paper)
        if not sources:
            return PdfFetch(paper.id, problem=NO_SOURCE, no_source=True)
        problems: list[str] = []
        for source in sources:
            if source.service in unreachable:
                problems.append(unreachable[source.service])
                continue
            try:
                return PdfFetch(paper.id, download_pdf(self.http, source, folder), source.url)
            except Unreachable as exc:
                unreachable[source.service] = str(exc)
                problems.append(str(exc))
            except Cancelled:
                raise
            except OnlineError as exc:
                problems.append(str(exc))
        return PdfFetch(paper.id, problem=" ".join(dict.fromkeys(problems)))
