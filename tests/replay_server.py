"""A loopback HTTP server that replays recorded answers, for the online tests.

Real HTTP on 127.0.0.1 (a port the system picks), in a daemon thread: the code under test talks to it
exactly as to the real services. Each service gets its own prefix on the one server, so the same path
of two services cannot clash (Crossref's and OpenAlex's `/works/...`)::

    PAPERSHELF_ARXIV_URL    = http://127.0.0.1:PORT/arxiv
    PAPERSHELF_CROSSREF_URL = http://127.0.0.1:PORT/crossref
    PAPERSHELF_OPENALEX_URL = http://127.0.0.1:PORT/openalex
    PAPERSHELF_S2_URL       = http://127.0.0.1:PORT/s2
    PAPERSHELF_DOI_URL      = http://127.0.0.1:PORT/doi

so a route for arXiv's `/api/query` is `replay.route("/arxiv/api/query", ...)`.

Usage, in a test module::

    from replay_server import RECORDED, Reply, replay_fixture  # noqa: F401

    def test_x(replay):
        replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml",
                     query={"id_list": "1605.08386"})
        replay.route("/s2/graph/v1/paper/search", [Reply(RECORDED / "s2_..._429.json", 429,
                     {"Retry-After": "1"})] * 3 + [RECORDED / "s2_paper_search_empty.json"])
        ...
        assert [r.path for r in replay.requests] == [...]

Routes: the first whose method, path (percent-decoded, without the query) and query condition match
answers; nothing matched → 404 with a JSON body. A route given a sequence serves its answers in turn
and repeats the last one. `hang=True` accepts the request and never answers until the server stops
(for timeouts). Every request is recorded (`requests`: monotonic time of arrival, method, path, query,
headers with lower-case names, body).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

RECORDED = Path(__file__).resolve().parent / "fixtures" / "metadata" / "recorded"
"""The recorded real answers (see SOURCES.md there)."""

SERVICES = ("arxiv", "crossref", "openalex", "s2", "doi")

_CONTENT_TYPES = {
    ".json": "application/json",
    ".xml": "application/atom+xml; charset=UTF-8",
    ".bib": "application/x-bibtex; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}


@dataclass
class Reply:
    """One answer of a route: a body (bytes, text, or a file whose bytes are served as they are),
    its status and extra headers. Content-Type is guessed from a file's extension unless given."""

    body: bytes | str | Path = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    trickle: float = 0.0  # when > 0: the body is sent a byte at a time, this many seconds apart
    # when > 0: a body that does not end: after `body`, with no Content-Length, 64 KB blocks (1 KB
    # every `trickle` seconds when that is given) for this many seconds, then the connection closes
    endless: float = 0.0

    def payload(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, Path):
            data = self.body.read_bytes()
            content_type = _CONTENT_TYPES.get(self.body.suffix, "application/octet-stream")
        elif isinstance(self.body, str):
            data = self.body.encode("utf-8")
            content_type = "text/plain; charset=utf-8"
        else:
            data = bytes(self.body)
            content_type = "application/octet-stream"
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = content_type
        return data, headers


@dataclass
class Request:
    """A request the server received."""

    time: float  # time.monotonic() on arrival
    method: str
    path: str  # percent-decoded, without the query
    raw_path: str  # as sent, with the query
    query: dict[str, str]  # the first value of each parameter
    headers: dict[str, str]  # lower-case names
    body: bytes


@dataclass
class _Route:
    method: str
    path: str
    replies: list[Reply]
    query: Mapping[str, str] | Callable[[dict[str, str]], bool] | None
    hang: bool
    served: int = 0

    def matches(self, method: str, path: str, query: dict[str, str]) -> bool:
        if method != self.method or path != self.path:
            return False
        if self.query is None:
            return True
        if callable(self.query):
            return bool(self.query(query))
        return all(query.get(k) == str(v) for k, v in self.query.items())

    def next_reply(self) -> Reply:
        reply = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return reply


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-request (a TLS handshake sent to plain HTTP, a cancelled
    request) is what some tests do on purpose: not a traceback on the test run's output."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ReplayServer:
    """The loopback server: `route()` what it answers, read `requests` for what it was asked."""

    def __init__(self) -> None:
        self._routes: list[_Route] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet: the tests read `requests`

            def _serve(self) -> None:
                server._handle(self)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _serve

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port: int = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            # a short poll: shutdown() waits for the loop to look, at every test's end
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="replay-server",
            daemon=True,
        )
        self._thread.start()

    # -- setting up -------------------------------------------------------------------------------

    def base(self, service: str) -> str:
        """The base URL this server stands at for one service ("arxiv", "crossref", …)."""
        return f"{self.url}/{service}"

    def env(self) -> dict[str, str]:
        """The environment pointing every service at this server (for CLI subprocesses); with a
        small rate scale so rate limits do not slow the tests."""
        values = {f"PAPERSHELF_{s.upper()}_URL": self.base(s) for s in SERVICES}
        values["PAPERSHELF_RATE_SCALE"] = "0.01"
        return values

    def route(
        self,
        path: str,
        file_or_bytes: bytes | str | Path | Reply | Sequence[bytes | str | Path | Reply] = b"",
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | Callable[[dict[str, str]], bool] | None = None,
        method: str = "GET",
        hang: bool = False,
    ) -> None:
        """Answer `method path` (and the query condition: a dict the request's query must contain,
        or a callable given the query dict) with a body (file, bytes or text), or with a sequence
        of them served in turn (each a body, taking `status`/`headers`, or a `Reply`)."""
        items: Sequence[bytes | str | Path | Reply]
        if isinstance(file_or_bytes, (bytes, str, Path, Reply)):
            items = [file_or_bytes]
        else:
            items = list(file_or_bytes)
        replies = [item if isinstance(item, Reply) else Reply(item, status, dict(headers or {})) for item in items] or [
            Reply(b"", status, dict(headers or {}))
        ]
        with self._lock:
            self._routes.append(_Route(method.upper(), path, replies, query, hang))

    def requests_to(self, path: str) -> list[Request]:
        """The requests received for one path (percent-decoded, without the query)."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def clear(self) -> None:
        """Forget the requests received so far (the routes stay)."""
        with self._lock:
            self.requests.clear()

    # -- serving ------------------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        path = unquote(split.path)
        query = {k: v[0] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        request = Request(
            time=time.monotonic(),
            method=handler.command,
            path=path,
            raw_path=handler.path,
            query=query,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
        )
        with self._lock:
            self.requests.append(request)
            route = next((r for r in self._routes if r.matches(handler.command, path, query)), None)
            reply = route.next_reply() if route is not None and not route.hang else None
        if route is not None and route.hang:
            # never answer: the client times out; the server's stop releases the thread
            self._stop.wait()
            handler.close_connection = True
            return
        if reply is None:
            reply = Reply(
                json.dumps({"status": "error", "message": f"no route for {handler.command} {path}"}).encode(),
                404,
                {"Content-Type": "application/json"},
            )
        data, headers = reply.payload()
        if reply.endless > 0:
            self._endless(handler, reply, data, headers)
            return
        try:
            handler.send_response(reply.status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            if handler.command != "HEAD" and reply.trickle > 0:
                handler.wfile.flush()
                for n in range(len(data)):
                    if self._stop.wait(reply.trickle):
                        break
                    handler.wfile.write(data[n : n + 1])
                    handler.wfile.flush()
            elif handler.command != "HEAD":
                handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    def _endless(self, handler: BaseHTTPRequestHandler, reply: Reply, data: bytes, headers: dict[str, str]) -> None:
        """A body that does not end (bounded here: it stops after `reply.endless` seconds, or when
        the client hangs up, or when the server stops)."""
        block = b"\0" * (1024 if reply.trickle > 0 else 65536)
        stop_at = time.monotonic() + reply.endless
        handler.close_connection = True
        try:
            handler.send_response(reply.status)
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(data)
            while time.monotonic() < stop_at and not self._stop.is_set():
                handler.wfile.write(block)
                handler.wfile.flush()
                if reply.trickle > 0:
                    self._stop.wait(reply.trickle)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def close(self) -> None:
        """Stop serving: hanging requests are released, the port is closed."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


@pytest.fixture(name="replay")
def replay_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    """The fixture `replay`: a replay server every service points at (PAPERSHELF_*_URL), with
    PAPERSHELF_RATE_SCALE=0.01. Import it as `from replay_server import replay_fixture  # noqa: F401`:
    a test's parameter `replay` then shadows no imported name (ruff's F811)."""
    server = ReplayServer()
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    try:
        yield server
    finally:
        server.close()


replay = replay_fixture  # the same fixture, under the name the brief first gave (import it with a noqa for F401)
