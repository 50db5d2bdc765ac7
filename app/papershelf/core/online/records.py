"""What the online services answer, in one shape whatever the service, and what a look-up
proposes for a paper. Plain data: no network, no Qt (the GUI, the CLI and the library read it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SERVICES = ("arxiv", "crossref", "openalex", "s2", "doi")
"""The services Papershelf talks to, by the short name used in messages, settings, the
cache and the `PAPERSHELF_<NAME>_URL` overrides."""

SERVICE_NAMES = {
    "arxiv": "arXiv",
    "crossref": "Crossref",
    "openalex": "OpenAlex",
    "s2": "Semantic Scholar",
    "doi": "doi.org",
    "arxiv-pdf": "arXiv",  # its PDFs (arxiv.org): fetched, never looked up (pdf_fetch.py)
}


@dataclass
class FoundRecord:
    """One record a service gave: a work it knows, in the reader's text (LaTeX decoded,
    JATS/HTML markup stripped). Empty strings and None stand for what the service did not say."""

    service: str  # one of SERVICES
    ident: str = ""  # the service's own id of the work (arXiv id, DOI, OpenAlex W…, S2 paperId)
    title: str = ""
    authors: list[str] = field(default_factory=list)  # display names, "Given Family"
    year: int | None = None
    venue: str = ""  # journal, proceedings or conference name
    doi: str = ""  # bare, lower case ("10.1073/pnas.1414271111")
    arxiv_id: str = ""  # without version ("1605.08386", "astro-ph/0601001")
    entrytype: str = ""  # BibTeX/BibLaTeX type: article, inproceedings, misc, online, book…
    abstract: str = ""
    url: str = ""
    # extra BibTeX fields as text (volume, number, pages, publisher, …), lower-case names
    extra: dict[str, str] = field(default_factory=dict)


class OnlineError(Exception):
    """A look-up that failed, with words a user can act on (`str(error)`): which service,
    what happened, what to do. The library is never changed by a failed look-up."""

    def __init__(self, message: str, service: str = "", url: str = ""):
        super().__init__(message)
        self.service = service
        self.url = url


class Offline(OnlineError):
    """No connection to the service (refused, no route, DNS failure), or it broke off."""


class Unreachable(Offline):
    """The service could not be reached at all: its name was not looked up (DNS), the connection
    was refused or timed out, no route, no secure connection (TLS). Unlike a 5xx or a 429 (the
    service answered), asking it again for the next paper would fail the same way: a batch skips
    it. `reason` is why, in a few words ("the connection was refused")."""

    def __init__(self, message: str, service: str = "", url: str = "", reason: str = ""):
        super().__init__(message, service, url)
        self.reason = reason


class TimedOut(OnlineError):
    """The service did not answer in time."""


class OutOfTime(TimedOut):
    """One paper's look-up has taken its whole deadline (http.PAPER_SECONDS): nothing more is
    asked for that paper; the batch goes on with the next."""


class NotFound(OnlineError):
    """The service does not know this identifier (404, or an empty answer to an id query)."""


class RateLimited(OnlineError):
    """The service kept answering 429/503 after the retries."""


class ServerError(OnlineError):
    """Any other HTTP error status (4xx/5xx), with the status in `status`."""

    def __init__(self, message: str, service: str = "", url: str = "", status: int = 0):
        super().__init__(message, service, url)
        self.status = status


class BadResponse(OnlineError):
    """An answer that is not what the service sends (malformed XML/JSON, missing parts)."""


class Cancelled(OnlineError):
    """The user cancelled: the batch stops at once, nothing more is sent."""


@dataclass
class Response:
    """A service's answer: status, body as text, the final URL (after redirects), headers with
    lower-case names, and whether it came from the on-disk cache."""

    status: int
    text: str
    url: str
    headers: dict[str, str]
    cached: bool
    content: bytes = b""  # the body as sent: XML is read from it (its own encoding declaration)


@dataclass
class Proposal:
    """What a look-up found for one paper: the best candidate, how sure, and the changes it
    would make, field by field. `changes` maps a field of the editor's vocabulary (see
    core/record_edit.py: "title", "author", "year", "venue", "doi", "eprint", "entrytype",
    and plain BibTeX fields such as "volume", "pages") to (old text, new text)."""

    paper_id: str
    service: str = ""  # where the chosen candidate came from ("" when nothing was found)
    confidence: float = 0.0  # 0..1
    changes: dict[str, tuple[str, str]] = field(default_factory=dict)
    automatic: bool = False  # confident enough to apply without asking
    message: str = ""  # why nothing is proposed, or what went wrong (per paper)
    failed: bool = False  # a service failed (offline, an error, a bad answer): `message` says which
    candidate: FoundRecord | None = None
    applied: bool = False
