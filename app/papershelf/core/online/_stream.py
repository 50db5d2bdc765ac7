"""A download streamed into a file (a paper's PDF): the helper-thread side of `Http.download`.

The body goes to disk as it arrives, counted against a cap (an endless body is cut there, or at the
paper's deadline, which http.py keeps); the first bytes are shown to a `check` before anything is
written (a web page served with status 200 is refused there). Redirects are followed here, by hand,
each looked at: only to an http or https address (never file://, ftp:// or data:), at most
MAX_REDIRECTS. Whatever ends a download early (a refusal, the cap, a cancel, the deadline) leaves
no file behind.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from papershelf.core.online._words import failure, who
from papershelf.core.online.records import BadResponse, Response

MAX_REDIRECTS = 10
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
WEB_SCHEMES = ("http", "https")
HEAD_BYTES = 1024  # what `check` is shown: a PDF's header is within its first 1024 bytes
ERROR_BYTES = 64 * 1024  # of an error answer's body, kept for its message

Check = Callable[[bytes, Response], None]


@dataclass
class Flight:
    """One request in flight, between the thread that waits for it and the helper thread that
    makes it: `done` when the helper ended, `abandoned` once the waiter gave up on it (a cancel, a
    deadline), `answered` once a download's final answer came (its body then has the paper's whole
    time); `lock` orders giving up against the helper ending or opening its file."""

    done: threading.Event = field(default_factory=threading.Event)
    abandoned: threading.Event = field(default_factory=threading.Event)
    answered: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def megabytes(size: int) -> str:
    """ "100 MB", "1.5 MB", "300 KB": a size as a user reads it."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.3g} MB"
    return f"{max(1, round(size / 1024))} KB"


def shown_address(text: str, limit: int = 120) -> str:
    """An address a server sent, safe to show: control characters out, clipped."""
    clean = "".join(ch if ch.isprintable() else "?" for ch in text.strip())
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def stream_into(
    client: httpx.Client,
    service: str,
    url: str,
    headers: dict[str, str],
    dest: Path,
    max_bytes: int,
    check: Check,
    flight: Flight,
    timeout: float,
) -> Response:
    """GET `url` (redirects followed by hand, to web addresses only) and, for a 2xx answer that
    `check` accepts, its body into `dest` (at most `max_bytes`). Returns the final answer (an
    error status's body in `text`, a 2xx's `text` empty); raises an OnlineError in words."""
    target = httpx.URL(url)
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            with client.stream("GET", target, headers=headers, follow_redirects=False) as raw:
                onward = _redirect(raw, service)
                if onward is None:
                    return _take(raw, service, dest, max_bytes, check, flight)
                target = onward
    except (httpx.HTTPError, httpx.StreamError, httpx.InvalidURL, OSError, ValueError, LookupError) as exc:
        with contextlib.suppress(OSError):
            dest.unlink()
        if isinstance(exc, OSError) and exc.filename is not None:  # our own file, not the network
            raise BadResponse(
                f"The download from {who(service)} could not be written ({exc.strerror or exc}: {exc.filename}). "
                "Nothing was attached.",
                service,
                url,
            ) from None
        raise failure(exc, service, url, timeout) from None
    raise BadResponse(
        f"{who(service)} sent the download round more than {MAX_REDIRECTS} redirects without a file. Try again "
        "later; nothing was downloaded.",
        service,
        url,
    )


def _redirect(raw: httpx.Response, service: str) -> httpx.URL | None:
    """Where a redirect leads (None: the answer is not a redirect); BadResponse for an address
    that is not a web one (file:///etc/passwd) or cannot be read."""
    location = raw.headers.get("location", "")
    if raw.status_code not in REDIRECT_STATUSES or not location.strip():
        return None
    try:
        onward = raw.url.join(location.strip())
        scheme = onward.scheme.lower()
    except (httpx.InvalidURL, ValueError, TypeError):
        onward, scheme = None, ""
    if onward is None or scheme not in WEB_SCHEMES or not onward.host:
        raise BadResponse(
            f"{who(service)} redirected the download to {shown_address(location)}, which is not a web address: "
            "Papershelf follows redirects to http and https addresses only. Nothing was downloaded.",
            service,
            str(raw.url),
        )
    return onward


def _take(raw: httpx.Response, service: str, dest: Path, max_bytes: int, check: Check, flight: Flight) -> Response:
    """The final answer: an error's first bytes kept for its message; a 2xx's body, once `check`
    accepted its first bytes, written to `dest` as it arrives, cut at `max_bytes`."""
    headers = {k.lower(): v for k, v in raw.headers.items()}
    final = str(raw.url)
    if not 200 <= raw.status_code < 300:
        body = b""
        for chunk in raw.iter_bytes():
            body += chunk
            if len(body) >= ERROR_BYTES or flight.abandoned.is_set():
                break
        return Response(raw.status_code, body.decode("utf-8", "replace"), final, headers, False, body)
    flight.answered.set()
    answer = Response(raw.status_code, "", final, headers, False)
    too_big = BadResponse(
        f"{who(service)} sent a file of more than {megabytes(max_bytes)}, the most Papershelf downloads: the "
        "download was stopped and nothing was kept.",
        service,
        final,
    )
    declared = headers.get("content-length", "").strip()
    if declared.isdecimal() and int(declared) > max_bytes:
        raise too_big
    chunks = raw.iter_bytes()
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= HEAD_BYTES or flight.abandoned.is_set():
            break
    if flight.abandoned.is_set():
        return answer
    check(head[:HEAD_BYTES], answer)
    with flight.lock:  # a waiter that gave up before this never finds a file the helper opens after
        if flight.abandoned.is_set():
            return answer
        out = open(dest, "wb")
    kept = False
    try:
        with out:
            size = 0
            for chunk in itertools.chain([head], chunks):
                if flight.abandoned.is_set():
                    return answer
                size += len(chunk)
                if size > max_bytes:
                    raise too_big
                out.write(chunk)
        kept = True
        return answer
    finally:
        if not kept:
            with contextlib.suppress(OSError):
                dest.unlink()
