"""Where the online services are and how often they may be asked: the base URLs (overridable for
tests), the minimum spacing between requests, and the process-wide limiter that keeps it. Used by
http.py (which re-exports `base_url`, `rate_scale` and `SPACING`).

Fetching a paper's PDF (pdf_fetch.py) asks two more kinds of place: arXiv's PDF host
("arxiv-pdf": https://arxiv.org, not the API's export.arxiv.org; `$PAPERSHELF_ARXIV_URL` moves both,
so one loopback server stands for all of arXiv in the tests), and the web address of an open-access
PDF a record names (`web_service(url)`: "web:https://host", one per host, spaced like a service
Papershelf knows nothing about)."""

from __future__ import annotations

import os
import threading
import time
from urllib.parse import urlsplit

REAL_URLS = {
    "arxiv": "https://export.arxiv.org",
    "crossref": "https://api.crossref.org",
    "openalex": "https://api.openalex.org",
    "s2": "https://api.semanticscholar.org",
    "doi": "https://doi.org",
}

# the minimum time between two requests to one service, in seconds: arXiv's API terms ask for 3 s
# (its PDFs too: one PDF every 3 s); Semantic Scholar's shared unauthenticated pool allows about one
# a second; Crossref and OpenAlex allow ~10/s in their polite pools; any other web host (an
# open-access PDF's) one request a second
SPACING = {"arxiv": 3.0, "arxiv-pdf": 3.0, "s2": 1.0, "crossref": 0.1, "openalex": 0.1, "doi": 0.1}
WEB_SPACING = 1.0

# where the PDFs are: each maps to (the service whose `$PAPERSHELF_<SERVICE>_URL` moves it too, the real address)
PDF_HOSTS = {"arxiv-pdf": ("arxiv", "https://arxiv.org")}
WEB_PREFIX = "web:"

ENV_RATE_SCALE = "PAPERSHELF_RATE_SCALE"

# how long one request may take in all (connecting, the headers, every byte of the answer), and one
# paper's look-up or fetch (every request and wait for it), in seconds; the environment variables
# (tests make them short) override them
REQUEST_SECONDS = 20.0
PAPER_SECONDS = 60.0
ENV_REQUEST_SECONDS = "PAPERSHELF_REQUEST_SECONDS"
ENV_PAPER_SECONDS = "PAPERSHELF_PAPER_SECONDS"


def base_url(service: str) -> str:
    """Where a service is: `$PAPERSHELF_<SERVICE>_URL` (tests point it at a loopback server), else
    the real address. `service` is one of records.SERVICES, a PDF host (PDF_HOSTS: arXiv's PDFs
    move with `$PAPERSHELF_ARXIV_URL`), or a web host (`web_service`)."""
    if service.startswith(WEB_PREFIX):
        return service[len(WEB_PREFIX) :].rstrip("/")
    if service in PDF_HOSTS:
        moved_with, real = PDF_HOSTS[service]
        override = os.environ.get(f"PAPERSHELF_{moved_with.upper()}_URL", "").strip()
        return override.rstrip("/") if override else real
    override = os.environ.get(f"PAPERSHELF_{service.upper()}_URL", "").strip()
    if override:
        return override.rstrip("/")
    try:
        return REAL_URLS[service]
    except KeyError:
        raise ValueError(f"unknown online service {service!r}") from None


def web_service(url: str) -> str:
    """The service name of a web address's host ("web:https://www.jmlr.org"): its rate limit is
    its own, whatever the path. "" for an address that is not http(s)."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return ""
    return f"{WEB_PREFIX}{parts.scheme.lower()}://{parts.netloc.lower()}"


def rate_scale() -> float:
    """The factor on every rate-limit spacing and back-off (`$PAPERSHELF_RATE_SCALE`, default 1):
    the tests run with a small one. A value that is not a number counts as 1."""
    try:
        scale = float(os.environ.get(ENV_RATE_SCALE, "1"))
    except ValueError:
        return 1.0
    return scale if scale >= 0 and scale == scale else 1.0  # NaN is not a scale


def _seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable `name`, else `default`."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value < 1e6 else default  # NaN, 0, negatives and "inf" are no deadline


def request_seconds() -> float:
    """The deadline of one request: `$PAPERSHELF_REQUEST_SECONDS`, else REQUEST_SECONDS."""
    return _seconds(ENV_REQUEST_SECONDS, REQUEST_SECONDS)


def paper_seconds() -> float:
    """The deadline of one paper's look-up: `$PAPERSHELF_PAPER_SECONDS`, else PAPER_SECONDS."""
    return _seconds(ENV_PAPER_SECONDS, PAPER_SECONDS)


# fetching a PDF: one paper's download (every request, wait and byte of it) may take FETCH_SECONDS
# (a 100 MB PDF at 1 MB/s fits; a body that never ends is cut there), and a PDF may be FETCH_MAX_BYTES
# at most, counted as the bytes arrive; the environment variables (tests make them small) override them
FETCH_SECONDS = 300.0
FETCH_MAX_BYTES = 100 * 1024 * 1024
ENV_FETCH_SECONDS = "PAPERSHELF_FETCH_SECONDS"
ENV_FETCH_MAX_BYTES = "PAPERSHELF_FETCH_MAX_BYTES"


def fetch_seconds() -> float:
    """The deadline of one paper's PDF download: `$PAPERSHELF_FETCH_SECONDS`, else FETCH_SECONDS."""
    return _seconds(ENV_FETCH_SECONDS, FETCH_SECONDS)


def fetch_max_bytes() -> int:
    """The largest PDF downloaded: `$PAPERSHELF_FETCH_MAX_BYTES` (a whole number of bytes), else
    FETCH_MAX_BYTES."""
    text = os.environ.get(ENV_FETCH_MAX_BYTES, "").strip()
    return int(text) if text.isdecimal() and 0 < int(text) < 1 << 40 else FETCH_MAX_BYTES


class _RateLimiter:
    """Who may ask each service next, and when, shared by every Http of the process.

    One request at a time per service (arXiv asks for that), and the next one `spacing` after the
    previous one ended: so the service sees requests at least `spacing` apart, whatever the threads
    and however slow a connection is to open. A service is known by its name and where it is (a
    test's server is not the real one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[tuple[str, str], float] = {}
        self._turns: dict[tuple[str, str], threading.Lock] = {}

    @staticmethod
    def _key(service: str) -> tuple[str, str]:
        return service, base_url(service)

    @staticmethod
    def _spacing(service: str) -> float:
        return SPACING.get(service, WEB_SPACING) * rate_scale()

    def turn(self, service: str) -> threading.Lock:
        """The lock held while a request to `service` is out."""
        key = self._key(service)
        with self._lock:
            return self._turns.setdefault(key, threading.Lock())

    def next_time(self, service: str) -> float:
        """The monotonic time from which `service` may be asked again."""
        with self._lock:
            return self._next.get(self._key(service), 0.0)

    def done(self, service: str) -> None:
        """A request to `service` has ended: the next one waits a full spacing from now."""
        self.defer(service, time.monotonic() + self._spacing(service))

    def defer(self, service: str, until: float) -> None:
        """Nobody asks `service` before `until` (monotonic): it asked us to slow down."""
        key = self._key(service)
        with self._lock:
            self._next[key] = max(self._next.get(key, 0.0), until)


LIMITER = _RateLimiter()
"""The one limiter of the process: every Http shares it."""
