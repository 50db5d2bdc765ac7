"""HTTP for the online look-ups: one polite client for every service.

`Http.get` runs on the caller's thread (the GUI calls it from a worker thread) and either returns the
service's answer or raises one of the OnlineError family (records.py) with words a user can act on:
never an httpx exception, never a traceback. On the way it
- keeps each service's minimum spacing between requests, process-wide (arXiv asks for 3 s),
- retries answers that ask us to slow down (429, 503), waiting as long as the service asks
  (Retry-After, in seconds or as an HTTP date) or backing off exponentially,
- sends a User-Agent naming Papershelf and, when the user gave a contact, gives it to Crossref and
  OpenAlex only (in the User-Agent and the `mailto` of their "polite pool"): nobody else sees it,
  not even a host one of them redirects to (every request of a redirect chain is looked at),
- keeps answers the readers accepted (`validate`) and 404s on disk for 14 days (_cache.py): a
  look-up repeated, or resumed after a failure, does not ask again; a maintenance page is never kept,
- runs each request on a helper thread and waits for it looking at `cancelled` (and `cancel()`,
  callable from any thread), so a cancel ends even a request in flight at once; a request also ends
  at its deadline (REQUEST_SECONDS for connecting, the headers and the whole body: a server dripping
  a byte now and then never resets it) and at a size cap,
- within `paper()` (one paper's look-up or fetch), keeps the paper's own deadline (PAPER_SECONDS):
  no request and no wait goes past it, and a Retry-After that would is not waited for,
- says what it waits for (`on_wait`): a rate limit, a Retry-After, a request still unanswered,
- downloads a file (`download`, a paper's PDF, issue 24) with the same turns, retries and cancel:
  its body streamed to disk under a cap, redirects followed by hand to http(s) only (_stream.py).
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import math
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from types import TracebackType

import httpx

from papershelf import __version__, paths
from papershelf.core.online._cache import CACHE_SECONDS, AnswerCache
from papershelf.core.online._limits import (
    ENV_RATE_SCALE,
    LIMITER,
    PAPER_SECONDS,
    REAL_URLS,
    REQUEST_SECONDS,
    SPACING,
    base_url,
    paper_seconds,
    rate_scale,
    request_seconds,
)
from papershelf.core.online._stream import Check, Flight, stream_into
from papershelf.core.online._words import CONTACT_SERVICES, contact_allowed
from papershelf.core.online._words import failure as _failure
from papershelf.core.online._words import minutes as _minutes
from papershelf.core.online._words import name as _name
from papershelf.core.online._words import who as _who
from papershelf.core.online.records import (
    BadResponse,
    Cancelled,
    NotFound,
    OnlineError,
    OutOfTime,
    RateLimited,
    Response,
    ServerError,
    TimedOut,
)

__all__ = [  # base_url, rate_scale and the constants live in _limits.py: they are still this module's
    "CACHE_SECONDS",
    "ENV_RATE_SCALE",
    "MAX_BYTES",
    "MAX_WAIT",
    "PAPER_SECONDS",
    "REAL_URLS",
    "REQUEST_SECONDS",
    "SPACING",
    "Http",
    "Response",
    "base_url",
    "rate_scale",
]

MAX_WAIT = 60.0  # outside a paper's deadline: a service asking for a longer pause is not waited for
MAX_BYTES = 20 * 1024 * 1024  # no metadata answer is this big: a bigger one is not what we asked for
_POLL = 0.05  # how often a wait looks at `cancelled`
_PROJECT_URL = "https://github.com/papershelf/papershelf"
_RETRY_STATUSES = (429, 503)


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds from now: a number of seconds or an HTTP date (a past date is 0);
    None when absent or unreadable ("soon", "NaN")."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return None if math.isnan(seconds) else max(0.0, seconds)  # "inf" and 1e400 are very long
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT ("-0000" gives a date without a zone)
        when = when.replace(tzinfo=datetime.timezone.utc)
    try:
        return max(0.0, when.timestamp() - time.time())
    except (OverflowError, ValueError, OSError):
        return None


def _clean_contact(contact: str) -> str:
    """The contact as it can go into a header: the e-mail address in it ("Ann <ann@example.org>"),
    else its printable ASCII without spaces or the User-Agent's delimiters."""
    found = re.search(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", contact)
    if found is not None:
        return found.group(0)
    return "".join(ch for ch in contact.strip() if 33 <= ord(ch) < 127 and ch not in '();,<>\\"')


class Http:
    """One polite HTTP client (see the module's docstring). Used by one thread at a time, except
    `cancel()`, which any thread may call; every Http of the process shares the rate limits. A
    context manager: `close()` ends its connections."""

    def __init__(
        self,
        contact: str = "",
        cache_dir: Path | None = None,
        cancelled: Callable[[], bool] | None = None,
        timeout: float | None = None,
        retries: int = 3,
        on_wait: Callable[[str], None] | None = None,
        *,
        deadline: float | None = None,
        paper_deadline: float | None = None,
    ) -> None:
        self.contact = _clean_contact(contact)
        self.cache_dir = cache_dir if cache_dir is not None else paths.cache_dir() / "online"
        self.cancelled = cancelled or (lambda: False)
        self.timeout = timeout if timeout is not None else request_seconds()
        # the whole of one request (connecting, and every byte of the answer): a server sending a
        # byte now and then never trips httpx's per-read timeout
        self.deadline = deadline if deadline is not None else self.timeout
        self.paper_deadline = paper_deadline if paper_deadline is not None else paper_seconds()
        self.retries = max(0, retries)
        self.on_wait = on_wait
        self._cache = AnswerCache(self.cache_dir)
        self._paper_end: float | None = None  # monotonic; None outside paper()
        self._paper_seconds = self.paper_deadline  # the deadline of the paper() running, and what it is
        self._paper_what = "look-up"
        self._client: httpx.Client | None = None
        self._pause = threading.Event()  # never set: waits on it are sleeps that wake to poll
        self._cancel = threading.Event()

    @property
    def user_agent(self) -> str:
        """The User-Agent of requests to the services that are not given the contact."""
        return f"Papershelf/{__version__} (+{_PROJECT_URL})"

    def user_agent_for(self, service: str) -> str:
        """The User-Agent a request to `service` carries: the contact only for Crossref and OpenAlex
        (their polite pools ask for it; the Preferences say it goes to them alone)."""
        if self.contact and service in CONTACT_SERVICES:
            return f"Papershelf/{__version__} (+{_PROJECT_URL}; mailto:{self.contact})"
        return self.user_agent

    @contextlib.contextmanager
    def paper(self, seconds: float | None = None, what: str = "look-up") -> Iterator[None]:
        """One paper's look-up (or, `what`, its PDF's "download"): no request and no wait inside
        goes past `seconds` (else `paper_deadline`) from here (OutOfTime says so). A paper() inside
        another is the outer one."""
        if self._paper_end is not None:
            yield
            return
        self._paper_seconds = seconds if seconds is not None else self.paper_deadline
        self._paper_what = what
        self._paper_end = time.monotonic() + self._paper_seconds
        try:
            yield
        finally:
            self._paper_end = None

    def _out_of_time(self, service: str, url: str = "") -> OutOfTime:
        return OutOfTime(
            f"Stopped asking {_who(service)}: the {self._paper_what} of this paper took more than "
            f"{self._paper_seconds:g} s in all. The services may be busy or the connection slow; try again later. "
            "Nothing was changed.",
            service,
            url,
        )

    def _left_words(self) -> str:
        """ "look-up has only 12 s left of its 60 s": what a paper's look-up has left, for a message."""
        left = _minutes(max(0.0, self._paper_left()))
        return f"{self._paper_what} has only {left} left of its {self._paper_seconds:g} s"

    def _paper_left(self) -> float:
        return float("inf") if self._paper_end is None else self._paper_end - time.monotonic()

    def cancel(self) -> None:
        """Cancel from any thread (the GUI's, when the user presses Cancel or closes the window): the
        request in flight is abandoned and `get` raises Cancelled within a few hundredths of a
        second; every later `get` raises Cancelled too. Nothing is waited for here."""
        self._cancel.set()

    # -- the request ------------------------------------------------------------------------------

    def get(
        self,
        service: str,
        path: str,
        params: Mapping[str, str | int] | None = None,
        accept: str = "",
        use_cache: bool = True,
        *,
        allow: Collection[int] = (),
        validate: Callable[[Response], object] | None = None,
    ) -> Response:
        """GET `path` of `service` (its base URL + path) with query `params`.

        Returns the answer when its status is 2xx or in `allow` (a service whose errors carry a
        readable body, such as arXiv's 400). Otherwise raises: NotFound (404), RateLimited (429/503
        after the retries, or at once when the wait asked would pass the paper's deadline),
        ServerError (other statuses), Offline, TimedOut (OutOfTime: the paper's deadline),
        BadResponse, Cancelled.
        `validate` (a reader) is called with every answer returned and may raise (BadResponse…):
        the error goes to the caller. With `use_cache`, a kept answer (under 14 days old, that
        `validate` accepts) is returned without asking; a fresh 200 is kept only once `validate`
        accepted it (never a maintenance page), a 404 always."""
        self._check_cancel(service)
        url = str(httpx.URL(base_url(service) + path, params=dict(params) if params else None))
        key = self._cache.key(url, accept)
        if use_cache:
            hit = self._cache.read(service, key)
            if hit is not None:
                if hit.status == 404:
                    return self._result(service, hit, allow)
                try:
                    if validate is not None:
                        validate(hit)
                    return hit
                except OnlineError:
                    pass  # kept by a version that read it differently: ask again
        sent_params = dict(params or {})
        if self.contact and service in CONTACT_SERVICES:
            sent_params["mailto"] = self.contact
        headers = {"User-Agent": self.user_agent_for(service)}
        if accept:
            headers["Accept"] = accept
        where = base_url(service) + path
        response = self._asking(
            service,
            url,
            lambda: self._send(
                service,
                where,
                lambda client, flight: self._exchange(client, service, where, sent_params, headers, flight),
            ),
        )
        if use_cache and response.status == 404:
            self._cache.write(service, key, url, accept, response)
        result = self._result(service, response, allow)
        if validate is not None:
            validate(result)
        if use_cache and result.status == 200:
            self._cache.write(service, key, url, accept, result)
        return result

    def download(self, service: str, url: str, dest: Path, *, max_bytes: int, check: Check) -> Response:
        """GET the whole address `url` (a PDF), keeping `service`'s turn, spacing and retries as
        `get` does, and stream a 2xx body into `dest` (see _stream.py): redirects only to http(s)
        addresses, `check(first bytes, answer)` may refuse it before anything is written, at most
        `max_bytes` counted as they arrive. Once the answer came, the body has the rest of the
        paper's time (`paper()`), not just the request's deadline. Returns the final answer (its
        `url` where the file came from); raises as `get` does, and then nothing is left at `dest`.
        Nothing is cached."""
        self._check_cancel(service)
        headers = {"User-Agent": self.user_agent_for(service)}

        def exchange(client: httpx.Client, flight: Flight) -> Response:
            return stream_into(client, service, url, headers, dest, max_bytes, check, flight, self.timeout)

        try:
            response = self._asking(service, url, lambda: self._send(service, url, exchange, download=True))
            return self._result(service, response, ())
        except BaseException:
            with contextlib.suppress(OSError):
                dest.unlink()
            raise

    def _asking(self, service: str, url: str, send: Callable[[], Response]) -> Response:
        """`send()` in the service's turn, again while it answers 429/503 (waiting as long as it
        asks, within the paper's deadline): the last answer, whatever its status."""
        attempt = 0
        while True:
            turn = self._wait_for_turn(service)
            try:
                response = send()
            finally:
                LIMITER.done(service)
                turn.release()
            if response.status not in _RETRY_STATUSES:
                return response
            if attempt >= self.retries:
                raise RateLimited(
                    f"{_who(service)} asked us to slow down (HTTP {response.status}) and kept asking after "
                    f"{self.retries + 1} tries; try again in a few minutes. Nothing was changed.",
                    service,
                    url,
                )
            asked = _retry_after(response.headers.get("retry-after"))
            if asked is not None and asked > MAX_WAIT:
                raise RateLimited(
                    f"{_who(service)} asked us to slow down (HTTP {response.status}) for "
                    f"{_minutes(asked)}; try again later. Nothing was changed.",
                    service,
                    url,
                )
            # what the service asked, and never less than the back-off (a "Retry-After: 0" storm)
            backoff = (2.0**attempt) * rate_scale()
            wait = max(asked, backoff) if asked is not None else backoff
            LIMITER.defer(service, time.monotonic() + wait)
            if wait >= self._paper_left():  # the answer could only come after the paper's time is up
                raise RateLimited(
                    f"{_who(service)} asked us to wait {_minutes(wait)} (HTTP {response.status}), and this paper's "
                    f"{self._left_words()}: it was not asked again for this paper. Try again later; "
                    "nothing was changed.",
                    service,
                    url,
                )
            if self.on_wait is not None and wait >= 1:
                self.on_wait(f"Waiting {_minutes(wait)}: {_name(service)} asked us to slow down…")
            self._sleep(service, wait)
            attempt += 1

    def _result(self, service: str, response: Response, allow: Collection[int]) -> Response:
        status = response.status
        if 200 <= status < 300 or status in allow:
            return response
        if status == 404:
            raise NotFound(
                f"{_who(service)} has nothing at this address (HTTP 404): {response.url}", service, response.url
            )
        if status in _RETRY_STATUSES:
            raise RateLimited(
                f"{_who(service)} asked us to slow down (HTTP {status}); try again in a few minutes. "
                "Nothing was changed.",
                service,
                response.url,
            )
        reason = httpx.codes.get_reason_phrase(status)
        what = f"HTTP {status} {reason}".strip()
        hint = (
            "The service is having trouble; try again later."
            if status >= 500
            else "The request was refused; if it keeps happening, please report it."
        )
        raise ServerError(
            f"{_who(service)} answered with an error ({what}). {hint} Nothing was changed.",
            service,
            response.url,
            status,
        )

    def _send(
        self,
        service: str,
        url: str,
        exchange: Callable[[httpx.Client, Flight], Response],
        *,
        download: bool = False,
    ) -> Response:
        """One request (`exchange`), run on a helper thread and waited for here while looking at
        the cancel and the overall deadline: either ends the wait at once (the helper, left behind,
        closes its connections when its socket gives up, at the latest after `timeout`). A
        `download`'s body, once its answer came, has the rest of the paper's time (not `deadline`)."""
        client = self._http()
        outcome: list[Response | BaseException] = []
        flight = Flight()

        def run() -> None:
            try:
                outcome.append(exchange(client, flight))
            except BaseException as exc:  # handed to the waiting thread, which raises it
                outcome.append(exc)
            finally:
                with flight.lock:
                    flight.done.set()
                    left_behind = flight.abandoned.is_set()
                if left_behind:
                    client.close()

        left = self._paper_left()
        if left <= 0:
            raise self._out_of_time(service, url)
        threading.Thread(target=run, name=f"papershelf-{service}-request", daemon=True).start()
        start = time.monotonic()
        end = start + min(self.deadline, left)
        body_end = start + (left if left != float("inf") else self.paper_deadline)
        still = start + self.deadline / 4  # then say what is waited for, once
        while not flight.done.wait(_POLL):
            now = time.monotonic()
            answered = download and flight.answered.is_set()
            if still and not answered and now >= still and self.on_wait is not None:
                still = 0.0
                self.on_wait(f"Still waiting for {_name(service)}…")
            if self._is_cancelled() or now >= (body_end if answered else end):
                with flight.lock:
                    if not flight.done.is_set():
                        flight.abandoned.set()
                        self._client = None  # the helper closes it; the next request opens another
                if flight.abandoned.is_set():
                    self._check_cancel(service)
                    if self._paper_left() <= 0:
                        raise self._out_of_time(service, url)
                    limit = self._paper_seconds if answered else self.deadline
                    raise TimedOut(
                        f"{_who(service)} took too long answering (more than {limit:g} s in all). The "
                        "service may be busy or the connection slow; try again later. Nothing was changed.",
                        service,
                        url,
                    )
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _exchange(
        self,
        client: httpx.Client,
        service: str,
        url: str,
        params: Mapping[str, str | int],
        headers: dict[str, str],
        flight: Flight,
    ) -> Response:
        """The request and its whole answer (at most MAX_BYTES), httpx's failures turned into
        OnlineErrors."""
        who = _who(service)
        too_big = BadResponse(
            f"{who} sent an answer of more than {MAX_BYTES // (1024 * 1024)} MB, which is not the record "
            "asked for. Try again later; nothing was changed.",
            service,
            url,
        )
        try:
            with client.stream("GET", url, params=dict(params) if params else None, headers=headers) as raw:
                declared = raw.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_BYTES:
                    raise too_big
                chunks: list[bytes] = []
                size = 0
                for chunk in raw.iter_bytes():
                    if flight.abandoned.is_set():  # nobody waits for the rest
                        break
                    size += len(chunk)
                    if size > MAX_BYTES:
                        raise too_big
                    chunks.append(chunk)
                content = b"".join(chunks)
                return Response(
                    status=raw.status_code,
                    text=_decode(content, raw.charset_encoding),
                    url=str(raw.url.copy_remove_param("mailto")),  # the address said and kept: no contact
                    headers={k.lower(): v for k, v in raw.headers.items()},
                    cached=False,
                    content=content,
                )
        except (httpx.HTTPError, httpx.StreamError, OSError, ValueError, LookupError) as exc:
            raise _failure(exc, service, url, self.timeout) from None

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                follow_redirects=True,  # doi.org answers with a redirect to the registrar
                headers={"User-Agent": self.user_agent},
                event_hooks={"request": [self._keep_contact]},  # every request of a redirect chain
            )
        return self._client

    def _keep_contact(self, request: httpx.Request) -> None:
        """The contact goes only where it was meant to (Crossref's and OpenAlex's hosts): a request
        elsewhere, where a redirect leads, gets the plain User-Agent and no `mailto`."""
        if contact_allowed(request.url):
            return
        if "mailto:" in request.headers.get("user-agent", ""):
            request.headers["User-Agent"] = self.user_agent
        if "mailto" in request.url.params:
            request.url = request.url.copy_remove_param("mailto")

    # -- waiting ----------------------------------------------------------------------------------

    def _is_cancelled(self) -> bool:
        return self._cancel.is_set() or self.cancelled()

    def _check_cancel(self, service: str) -> None:
        if self._is_cancelled():
            raise Cancelled(f"Cancelled: nothing more was asked of {_name(service)}.", service)

    def _wait_for_turn(self, service: str) -> threading.Lock:
        """Wait until this request may go (no other request to the service out, its spacing
        kept); returns the service's lock, held: the caller releases it when the request ends."""
        turn = LIMITER.turn(service)
        while not turn.acquire(timeout=_POLL):
            self._check_cancel(service)
        try:
            wait = LIMITER.next_time(service) - time.monotonic()
            if wait > 0:
                if self._paper_left() <= 0:
                    raise self._out_of_time(service)
                if wait >= self._paper_left():  # the service's turn, not this paper's time, is the matter
                    raise RateLimited(
                        f"{_who(service)} was not asked for this paper: its next turn is in {_minutes(wait)} (it "
                        f"asked us to slow down, or its rate limit), and this paper's "
                        f"{self._left_words()}. Try again later; nothing was changed.",
                        service,
                    )
                if self.on_wait is not None and wait >= 1:
                    self.on_wait(f"Waiting {_minutes(wait)} for {_name(service)} (its rate limit)…")
                self._sleep(service, wait)
            self._check_cancel(service)
        except BaseException:
            turn.release()
            raise
        return turn

    def _sleep(self, service: str, seconds: float) -> None:
        """Wait `seconds`, looking at `cancelled` every few hundredths of a second."""
        end = time.monotonic() + seconds
        while True:
            self._check_cancel(service)
            left = end - time.monotonic()
            if left <= 0:
                return
            self._pause.wait(min(left, _POLL))

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connections (the Http can still be used: it opens new ones)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Http:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _decode(content: bytes, charset: str | None) -> str:
    """The body as text, by the HTTP charset (UTF-8 when none): what cannot be read is replaced,
    as browsers do (the readers say what they cannot use)."""
    try:
        return content.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset nobody knows
        return content.decode("utf-8", errors="replace")
