"""The online look-ups' words and places: a service as a user knows it ("arXiv (export.arxiv.org)"), a
pause in minutes or hours, httpx's failures as OnlineErrors a user can act on, and where the contact
e-mail may go (the hosts of Crossref and OpenAlex only). Used by http.py."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from papershelf.core.online._limits import WEB_PREFIX, base_url
from papershelf.core.online.records import SERVICE_NAMES, BadResponse, Offline, OnlineError, TimedOut, Unreachable

CONTACT_SERVICES = ("crossref", "openalex")  # who is given the contact (their polite pools)


def name(service: str) -> str:
    """ "arXiv"; a web host by its name ("www.jmlr.org")."""
    if service.startswith(WEB_PREFIX):
        return host(service)
    return SERVICE_NAMES.get(service, service)


def host(service: str) -> str:
    return urlsplit(base_url(service)).netloc or base_url(service)


def _same_place(url: httpx.URL, base: str) -> bool:
    """Whether `url` is at `base` (a service's base URL): the same scheme, host and port, and a path
    under the base's (a test's loopback server holds every service under its own prefix)."""
    there = httpx.URL(base)
    if (url.scheme, url.host, url.port) != (there.scheme, there.host, there.port):
        return False
    prefix = there.path.rstrip("/")
    return not prefix or url.path == prefix or url.path.startswith(prefix + "/")


def contact_allowed(url: httpx.URL) -> bool:
    """Whether a request to `url` may carry the contact: it goes to a service given it."""
    return any(_same_place(url, base_url(service)) for service in CONTACT_SERVICES)


def who(service: str) -> str:
    """ "arXiv (export.arxiv.org)": the service as a user knows it, and where it is (a web host: its
    name alone)."""
    if service.startswith(WEB_PREFIX):
        return host(service)
    return f"{SERVICE_NAMES.get(service, service)} ({host(service)})"


def minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} hours"
    return "more than a day"  # a date years ahead (or "inf") is no figure to show a user


def failure(exc: Exception, service: str, url: str, timeout: float) -> OnlineError:
    """httpx's failure as an OnlineError in a user's words."""
    nothing = "nothing was changed."
    there = who(service)
    if isinstance(exc, httpx.ConnectTimeout):  # no answer to the connection itself: as good as unreachable
        reason = f"connecting took more than {min(timeout, 10.0):g} s"
        return Unreachable(
            f"Cannot reach {there}: {reason}. Check your internet connection; {nothing}", service, url, reason
        )
    if isinstance(exc, httpx.TimeoutException):
        return TimedOut(
            f"{there} took too long answering (more than {timeout:g} s). The service may be busy or the connection "
            f"slow; try again later. {nothing.capitalize()}",
            service,
            url,
        )
    if isinstance(exc, (httpx.ConnectError, httpx.ProxyError)):
        reason = network_reason(exc)
        return Unreachable(
            f"Cannot reach {there}: {reason}. Check your internet connection; {nothing}", service, url, reason
        )
    if isinstance(exc, (httpx.ReadError, httpx.WriteError, httpx.CloseError, httpx.RemoteProtocolError)):
        return Offline(
            f"The connection to {there} broke off: {network_reason(exc)}. Check your internet connection and try "
            f"again; {nothing}",
            service,
            url,
        )
    if isinstance(exc, httpx.TooManyRedirects):
        return BadResponse(
            f"{there} sent us round in redirects without an answer. Try again later; {nothing}", service, url
        )
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)) and _usable(url):
        # what we asked was fine: the address that is not is one the service redirected us to
        return BadResponse(
            f"{there} redirected us to an address Papershelf cannot use ({exc}). Try again later; {nothing}",
            service,
            url,
        )
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return OnlineError(
            f"The address of {SERVICE_NAMES.get(service, service)} is not usable ({exc}); check "
            f"PAPERSHELF_{service.upper()}_URL. {nothing.capitalize()}",
            service,
            url,
        )
    return OnlineError(
        f"Talking to {there} failed: {exc or type(exc).__name__}. Try again later; {nothing}", service, url
    )


def _usable(url: str) -> bool:
    """Whether `url` (one we asked) is an http(s) address httpx can use."""
    try:
        return httpx.URL(url).scheme in ("http", "https") and bool(httpx.URL(url).host)
    except (httpx.InvalidURL, ValueError, TypeError):
        return False


def network_reason(exc: Exception) -> str:
    """httpx's (that is, the OS's) reason in plain words."""
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "refused" in low:
        return "the connection was refused"
    if any(s in low for s in ("name or service not known", "nodename", "getaddrinfo", "name resolution")):
        return "its name could not be looked up (DNS)"
    if any(s in low for s in ("ssl", "tls", "certificate", "handshake")):
        return "no secure connection could be made (TLS)"
    if "unreachable" in low:
        return "the network is unreachable"
    if "reset" in low:
        return "the connection was reset"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the server closed the connection without a proper answer"
    return text
