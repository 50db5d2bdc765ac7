"""The polite HTTP client through real loopback HTTP: faults become errors a user can act on (never a
traceback), retries honour what the service asks, rate limits space requests as the server sees them,
a cancel ends a wait at once, answers are kept on disk, and the client says who it is."""

from __future__ import annotations

import email.utils
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from papershelf.core.online import http as http_module
from papershelf.core.online.http import SPACING, Http, Response, base_url
from papershelf.core.online.records import (
    BadResponse,
    Cancelled,
    NotFound,
    Offline,
    OnlineError,
    RateLimited,
    ServerError,
    TimedOut,
    Unreachable,
)
from replay_server import RECORDED, ReplayServer, Reply, replay_fixture  # noqa: F401

S2_429 = RECORDED / "s2_paper_search_429_too_many_requests.json"
S2_EMPTY = RECORDED / "s2_paper_search_empty.json"
SEARCH = "/graph/v1/paper/search"  # what the client asks for
ROUTE = "/s2" + SEARCH  # where the replay server has it


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "online-cache"


@pytest.fixture
def http(cache) -> Iterator[Http]:
    with Http(cache_dir=cache, timeout=5) as client:
        yield client


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


# -- where the services are ---------------------------------------------------------------------------


def test_base_url(monkeypatch) -> None:
    for name in ("ARXIV", "CROSSREF", "OPENALEX", "S2", "DOI"):
        monkeypatch.delenv(f"PAPERSHELF_{name}_URL")
    assert base_url("arxiv") == "https://export.arxiv.org"
    assert base_url("crossref") == "https://api.crossref.org"
    assert base_url("openalex") == "https://api.openalex.org"
    assert base_url("s2") == "https://api.semanticscholar.org"
    assert base_url("doi") == "https://doi.org"
    monkeypatch.setenv("PAPERSHELF_CROSSREF_URL", "http://127.0.0.1:1234/crossref/")
    assert base_url("crossref") == "http://127.0.0.1:1234/crossref"


# -- failures in a user's words -----------------------------------------------------------------------


def test_connection_refused_is_offline(http: Http) -> None:
    # conftest points every service at the closed port 9 of this machine
    with pytest.raises(Offline) as caught:
        http.get("arxiv", "/api/query", {"id_list": "1605.08386"})
    assert str(caught.value) == (
        "Cannot reach arXiv (127.0.0.1:9): the connection was refused. Check your internet connection; "
        "nothing was changed."
    )
    assert caught.value.service == "arxiv"


def test_a_name_that_does_not_resolve_is_offline(monkeypatch, http: Http) -> None:
    monkeypatch.setenv("PAPERSHELF_OPENALEX_URL", "http://no-such-host.invalid")  # .invalid never resolves
    with pytest.raises(Offline) as caught:
        http.get("openalex", "/works/W1")
    assert str(caught.value) == (
        "Cannot reach OpenAlex (no-such-host.invalid): its name could not be looked up (DNS). "
        "Check your internet connection; nothing was changed."
    )


def test_a_server_that_never_answers_times_out(replay: ReplayServer, cache: Path) -> None:
    replay.route("/crossref/works/10.1/x", hang=True)
    with Http(cache_dir=cache, timeout=0.3) as http, pytest.raises(TimedOut) as caught:
        http.get("crossref", "/works/10.1/x")
    assert "Crossref (127.0.0.1:" in str(caught.value)
    assert "took too long answering (more than 0.3 s" in str(caught.value)  # the whole request's deadline
    assert "try again later" in str(caught.value)


@pytest.mark.parametrize(
    ("status", "error", "words"),
    [
        (404, NotFound, "has nothing at this address (HTTP 404)"),
        (400, ServerError, "answered with an error (HTTP 400 Bad Request). The request was refused"),
        (403, ServerError, "answered with an error (HTTP 403 Forbidden)"),
        (500, ServerError, "answered with an error (HTTP 500 Internal Server Error). The service is having trouble"),
        (502, ServerError, "answered with an error (HTTP 502 Bad Gateway)"),
    ],
)
def test_error_statuses(replay: ReplayServer, http: Http, status: int, error: type, words: str) -> None:
    replay.route("/openalex/works/W1", b'{"error": "made here"}', status=status)
    with pytest.raises(error) as caught:
        http.get("openalex", "/works/W1")
    assert str(caught.value).startswith("OpenAlex (127.0.0.1:")
    assert words in str(caught.value)
    if isinstance(caught.value, ServerError):
        assert caught.value.status == status
    assert len(replay.requests) == 1  # an error is not retried: only 429/503 ask for that


def test_allowed_status_is_returned(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_error_400_id_list_abc.xml", status=400)
    response = http.get("arxiv", "/api/query", {"id_list": "abc"}, allow=(400,))
    assert response.status == 400 and "incorrect id format for abc" in response.text


def test_a_connection_closed_without_an_answer(monkeypatch, http: Http) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def close_the_connection() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.close()

    thread = threading.Thread(target=close_the_connection, daemon=True)
    thread.start()
    monkeypatch.setenv("PAPERSHELF_DOI_URL", f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(Offline, match=r"^The connection to doi\.org \(127\.0\.0\.1:\d+\) broke off"):
            http.get("doi", "/10.1/x")
    finally:
        listener.close()
        thread.join(timeout=5)


def test_unreachable_is_told_apart_from_a_service_that_answered(replay: ReplayServer, monkeypatch, http: Http) -> None:
    # issue 20: a batch gives up on a service it cannot reach (DNS, refused, TLS), never on one
    # that answered, even with an error
    monkeypatch.setenv("PAPERSHELF_ARXIV_URL", "http://127.0.0.1:9")
    with pytest.raises(Unreachable) as refused:
        http.get("arxiv", "/api/query")
    assert refused.value.reason == "the connection was refused"
    monkeypatch.setenv("PAPERSHELF_OPENALEX_URL", "http://papershelf-test.invalid")
    with pytest.raises(Unreachable) as dns:
        http.get("openalex", "/works/W1")
    assert dns.value.reason == "its name could not be looked up (DNS)"
    # https:// to the plain-HTTP loopback server: no TLS handshake
    monkeypatch.setenv("PAPERSHELF_CROSSREF_URL", replay.base("crossref").replace("http://", "https://"))
    with pytest.raises(Unreachable) as tls:
        http.get("crossref", "/works/10.1/x")
    assert str(tls.value) == (
        f"Cannot reach Crossref (127.0.0.1:{replay.port}): no secure connection could be made (TLS). "
        "Check your internet connection; nothing was changed."
    )
    replay.route("/s2/graph/v1/paper/x", b"{}", status=500)
    with pytest.raises(ServerError) as answered:
        http.get("s2", "/graph/v1/paper/x")
    assert not isinstance(answered.value, Unreachable)


def test_a_connection_never_accepted_is_unreachable(monkeypatch, cache: Path) -> None:
    # a listener whose queue is full drops the next connection's SYN: connecting times out, as
    # behind a firewall that drops packets (no answer at all is no service to wait for)
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    fillers = [socket.socket() for _ in range(3)]
    for filler in fillers:
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
    monkeypatch.setenv("PAPERSHELF_ARXIV_URL", f"http://127.0.0.1:{port}")
    try:
        with Http(cache_dir=cache, timeout=0.5) as http, pytest.raises(Unreachable) as caught:
            http.get("arxiv", "/api/query")
        assert caught.value.reason == "connecting took more than 0.5 s"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_an_unusable_address(monkeypatch, http: Http) -> None:
    monkeypatch.setenv("PAPERSHELF_S2_URL", "ftp://127.0.0.1:9")
    with pytest.raises(OnlineError, match="check PAPERSHELF_S2_URL"):
        http.get("s2", "/graph/v1/paper/x")


def test_redirects_without_end(replay: ReplayServer, http: Http) -> None:
    replay.route("/doi/10.1/loop", b"", status=302, headers={"Location": replay.base("doi") + "/10.1/loop"})
    with pytest.raises(BadResponse, match="round in redirects"):
        http.get("doi", "/10.1/loop")


# -- retries ------------------------------------------------------------------------------------------


def test_retry_after_is_honoured(replay: ReplayServer, cache: Path) -> None:
    # Semantic Scholar's real 429, three times, then an answer
    replay.route(ROUTE, [Reply(S2_429, 429, {"Retry-After": "1"})] * 3 + [Reply(S2_EMPTY)])
    waits: list[str] = []
    with Http(cache_dir=cache, retries=3, on_wait=waits.append) as http:
        response = http.get("s2", SEARCH, {"query": "turing"})
    assert response.status == 200 and json.loads(response.text) == {"total": 0, "offset": 0}
    times = [r.time for r in replay.requests_to(ROUTE)]
    assert len(times) == 4
    assert all(gap >= 1.0 for gap in gaps(times)), gaps(times)
    assert waits == ["Waiting 1 s: Semantic Scholar asked us to slow down…"] * 3


def test_retry_after_as_an_http_date(replay: ReplayServer, cache: Path) -> None:
    until = int(time.time()) + 2  # whole seconds, as the header says it
    when = email.utils.formatdate(until, usegmt=True)
    replay.route(ROUTE, [Reply(S2_429, 429, {"Retry-After": when}), Reply(S2_EMPTY)])
    with Http(cache_dir=cache) as http:
        assert http.get("s2", SEARCH, {"query": "turing"}).status == 200
    first, second = replay.requests_to(ROUTE)
    # the retry came no sooner than the date said (the server's clocks are monotonic: the wall
    # clock's date as a moment on them); a loaded machine can make the first request late, so the
    # gap between the two alone may be short of a whole second
    said = until - time.time() + time.monotonic()
    assert second.time >= said - 0.1, second.time - said
    assert second.time > first.time


def test_a_429_storm_gives_up(replay: ReplayServer, cache: Path) -> None:
    replay.route(ROUTE, S2_429, status=429)  # every answer a 429, without Retry-After: backing off
    with Http(cache_dir=cache, retries=3) as http, pytest.raises(RateLimited) as caught:
        http.get("s2", SEARCH, {"query": "turing"})
    assert len(replay.requests) == 4  # the first try and three retries, no more
    message = str(caught.value)
    assert message.startswith("Semantic Scholar (127.0.0.1:")
    assert "asked us to slow down (HTTP 429)" in message and "try again in a few minutes" in message
    # the back-off doubles (scaled by PAPERSHELF_RATE_SCALE)
    spacing = gaps([r.time for r in replay.requests])
    assert spacing[1] >= 2 * 0.01 and spacing[2] >= 4 * 0.01


def test_retry_after_zero_still_backs_off(replay: ReplayServer, cache: Path) -> None:
    replay.route(ROUTE, S2_429, status=429, headers={"Retry-After": "0"})
    with Http(cache_dir=cache, retries=2) as http, pytest.raises(RateLimited):
        http.get("s2", SEARCH, {"query": "turing"})
    assert len(replay.requests) == 3
    assert gaps([r.time for r in replay.requests])[1] >= 2 * 0.01


def test_a_long_pause_asked_is_not_waited(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works", b"busy", status=503, headers={"Retry-After": "3600"})
    with pytest.raises(RateLimited, match=r"asked us to slow down \(HTTP 503\) for 60 minutes; try again"):
        http.get("crossref", "/works", {"query.bibliographic": "x"})
    assert len(replay.requests) == 1


# -- rate limits --------------------------------------------------------------------------------------


def test_arxiv_requests_are_spaced(replay: ReplayServer, monkeypatch, cache: Path) -> None:
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "0.1")
    interval = SPACING["arxiv"] * 0.1
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_empty_id_list_0000.0000.xml")
    # two clients (two worker threads' worth): the limit is the process's, not each client's
    with Http(cache_dir=cache) as one, Http(cache_dir=cache) as two:
        for n in range(4):
            (one if n % 2 else two).get("arxiv", "/api/query", {"id_list": f"000{n}.0000"})
    times = [r.time for r in replay.requests]
    assert len(times) == 4
    assert all(gap >= interval for gap in gaps(times)), gaps(times)


def test_rate_limit_across_threads(replay: ReplayServer, monkeypatch, cache: Path) -> None:
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "0.2")
    interval = SPACING["s2"] * 0.2
    replay.route(ROUTE, S2_EMPTY)

    def ask(n: int) -> None:
        with Http(cache_dir=cache) as http:
            http.get("s2", SEARCH, {"query": f"q{n}"})

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = sorted(r.time for r in replay.requests)
    assert len(times) == 3
    assert all(gap >= interval for gap in gaps(times)), gaps(times)


# -- cancel -------------------------------------------------------------------------------------------


def test_cancel_during_a_retry_after_wait(replay: ReplayServer, cache: Path) -> None:
    replay.route(ROUTE, S2_429, status=429, headers={"Retry-After": "30"})
    waiting, cancel = threading.Event(), threading.Event()

    def user_presses_cancel() -> None:
        waiting.wait(10)
        cancel.set()

    presser = threading.Thread(target=user_presses_cancel)
    presser.start()
    started = time.monotonic()
    with Http(cache_dir=cache, cancelled=cancel.is_set, on_wait=lambda _: waiting.set()) as http:
        with pytest.raises(Cancelled, match="Cancelled: nothing more was asked of Semantic Scholar"):
            http.get("s2", SEARCH, {"query": "turing"})
        # not the 30 s the service asked for: the wait ended at the cancel (a loose bound on purpose)
        assert time.monotonic() - started < 25
        with pytest.raises(Cancelled):
            http.get("s2", SEARCH, {"query": "other"})
    presser.join()
    assert len(replay.requests) == 1  # nothing more was sent


# -- the cache ----------------------------------------------------------------------------------------


def test_the_second_request_is_served_from_disk(replay: ReplayServer, cache: Path) -> None:
    replay.route(
        "/crossref/works/10.1073/pnas.1414271111", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json"
    )
    with Http(cache_dir=cache) as http:
        first = http.get("crossref", "/works/10.1073/pnas.1414271111")
        again = http.get("crossref", "/works/10.1073/pnas.1414271111")
    with Http(cache_dir=cache) as later:  # another session, same folder
        third = later.get("crossref", "/works/10.1073/pnas.1414271111")
    assert len(replay.requests) == 1
    assert (first.cached, again.cached, third.cached) == (False, True, True)
    assert first.text == again.text == third.text
    assert json.loads(third.text)["message"]["DOI"] == "10.1073/pnas.1414271111"
    assert third.headers["content-type"] == "application/json"
    assert not list(cache.rglob(".tmp-*"))  # written whole, nothing left behind


def test_a_404_is_kept_too(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works/10.1126/foo", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404)
    for _ in range(2):
        with pytest.raises(NotFound):
            http.get("crossref", "/works/10.1126/foo")
    assert len(replay.requests) == 1


def test_accept_is_part_of_the_key_and_use_cache_false_asks_again(replay: ReplayServer, http: Http) -> None:
    replay.route("/doi/10.1/x", b"@misc{x, title={X}}")
    http.get("doi", "/10.1/x", accept="application/x-bibtex")
    http.get("doi", "/10.1/x", accept="application/vnd.citationstyles.csl+json")
    http.get("doi", "/10.1/x", accept="application/x-bibtex", use_cache=False)
    assert http.get("doi", "/10.1/x", accept="application/x-bibtex").cached
    assert len(replay.requests) == 3


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"saved": "x"}', b"\xff\xfe\x00garbage", b"[]"])
def test_a_damaged_cache_file_is_ignored_and_rewritten(replay: ReplayServer, cache: Path, damage: bytes) -> None:
    replay.route(
        "/openalex/works/W1", b'{"id": "https://openalex.org/W1"}', headers={"Content-Type": "application/json"}
    )
    with Http(cache_dir=cache) as http:
        http.get("openalex", "/works/W1")
        (kept,) = list(cache.rglob("*.json"))
        kept.write_bytes(damage)
        response = http.get("openalex", "/works/W1")
        assert not response.cached and json.loads(response.text)["id"] == "https://openalex.org/W1"
        assert json.loads(kept.read_text())["status"] == 200  # rewritten whole
        assert http.get("openalex", "/works/W1").cached
    assert len(replay.requests) == 2


def test_an_old_answer_is_asked_again(replay: ReplayServer, cache: Path) -> None:
    replay.route("/openalex/works/W2", b"{}")
    with Http(cache_dir=cache) as http:
        http.get("openalex", "/works/W2")
        (kept,) = list(cache.rglob("*.json"))
        data = json.loads(kept.read_text())
        data["saved"] -= 15 * 24 * 3600
        kept.write_text(json.dumps(data))
        assert not http.get("openalex", "/works/W2").cached
    assert len(replay.requests) == 2


def test_an_unwritable_cache_is_no_error(replay: ReplayServer, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    replay.route("/openalex/works/W3", b"{}")
    with Http(cache_dir=blocker / "online") as http:
        assert http.get("openalex", "/works/W3").status == 200
        assert http.get("openalex", "/works/W3").status == 200
    assert len(replay.requests) == 2


# -- who is asking ------------------------------------------------------------------------------------


def test_user_agent_and_mailto(replay: ReplayServer, cache: Path) -> None:
    for path in ("/crossref/works", "/openalex/works", "/arxiv/api/query"):
        replay.route(path, b"{}")
    with Http(contact="reader@example.org", cache_dir=cache) as http:
        http.get("crossref", "/works", {"query.bibliographic": "x"})
        http.get("openalex", "/works", {"search": "x"})
        http.get("arxiv", "/api/query", {"search_query": "x"})
    crossref, openalex, arxiv = replay.requests
    for request in (crossref, openalex):
        assert request.headers["user-agent"].startswith("Papershelf/")
        assert request.headers["user-agent"].endswith(
            "(+https://github.com/papershelf/papershelf; mailto:reader@example.org)"
        )
    # the Preferences say the contact goes to Crossref and OpenAlex: arXiv does not see it
    assert arxiv.headers["user-agent"].endswith("(+https://github.com/papershelf/papershelf)")
    assert crossref.query == {"query.bibliographic": "x", "mailto": "reader@example.org"}
    assert openalex.query == {"search": "x", "mailto": "reader@example.org"}
    assert "mailto" not in arxiv.query  # arXiv asks for no such parameter


def test_the_contact_stays_at_crossref_and_openalex_wherever_they_redirect(replay: ReplayServer, cache: Path) -> None:
    # issue 21, defect 7: on one loopback server each service is a path prefix; a redirect out of
    # Crossref's (to what stands for another host) loses the contact, one within it keeps it
    replay.route("/crossref/works/a", b"", 302, {"Location": f"{replay.url}/elsewhere/a?mailto=x%40y.org&k=1"})
    replay.route("/elsewhere/a", b"{}")
    replay.route("/crossref/works/b", b"", 302, {"Location": "/crossref/works/c"})
    replay.route("/crossref/works/c", b"{}")
    with Http(contact="reader@example.org", cache_dir=cache) as http:
        http.get("crossref", "/works/a")
        http.get("crossref", "/works/b")
    first, away, _second, within = replay.requests
    assert "mailto:reader@example.org" in first.headers["user-agent"]
    assert away.path == "/elsewhere/a" and "mailto" not in away.headers["user-agent"]
    assert away.query == {"k": "1"}
    assert within.path == "/crossref/works/c" and "mailto:reader@example.org" in within.headers["user-agent"]


def test_no_contact_no_mailto(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works", b"{}")
    http.get("crossref", "/works", {"query.bibliographic": "x"})
    (request,) = replay.requests
    assert "mailto" not in request.query and "mailto" not in request.headers["user-agent"]
    assert request.headers["user-agent"].endswith("(+https://github.com/papershelf/papershelf)")


def test_a_contact_that_cannot_go_in_a_header(replay: ReplayServer, cache: Path) -> None:
    replay.route("/crossref/works", b"{}")
    with Http(contact=" Jürgen Müller (work) <jm@example.org>\n", cache_dir=cache) as http:
        http.get("crossref", "/works", {"query.bibliographic": "x"})
    assert replay.requests[0].headers["user-agent"].endswith("mailto:jm@example.org)")
    assert replay.requests[0].query["mailto"] == "jm@example.org"


# -- a request in flight, a trickle, a flood ----------------------------------------------------------


def _when_asked(replay: ReplayServer, then: Callable[[], None]) -> threading.Thread:
    """A thread that waits until the server has received a request, then does `then` (the user
    pressing Cancel while the request is out)."""

    def watch() -> None:
        arrived = threading.Event()
        while not replay.requests:
            arrived.wait(0.01)
        then()

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def test_cancel_ends_a_request_in_flight(replay: ReplayServer, cache: Path) -> None:
    replay.route("/crossref/works/10.1/x", hang=True)
    with Http(cache_dir=cache, timeout=10) as http:
        presser = _when_asked(replay, http.cancel)  # from another thread, as the window does
        with pytest.raises(Cancelled, match="Cancelled: nothing more was asked of Crossref"):
            http.get("crossref", "/works/10.1/x")  # not TimedOut after the 10 s: Cancelled, at once
        presser.join()
        with pytest.raises(Cancelled):  # and it stays cancelled: nothing more is sent
            http.get("crossref", "/works/10.1/y")
    assert len(replay.requests) == 1


def test_the_cancelled_flag_also_ends_a_request_in_flight(replay: ReplayServer, cache: Path) -> None:
    replay.route("/arxiv/api/query", hang=True)
    flag = threading.Event()
    with Http(cache_dir=cache, timeout=10, cancelled=flag.is_set) as http:
        presser = _when_asked(replay, flag.set)
        with pytest.raises(Cancelled):
            http.get("arxiv", "/api/query", {"id_list": "1605.08386"})
        presser.join()


def test_a_trickling_server_meets_the_overall_deadline(replay: ReplayServer, cache: Path) -> None:
    # a byte every 0.2 s never trips the per-read timeout; the whole answer would take 20 s
    replay.route("/openalex/works/W1", Reply(b"x" * 100, trickle=0.2))
    with Http(cache_dir=cache, timeout=5, deadline=0.5) as http, pytest.raises(TimedOut) as caught:
        http.get("openalex", "/works/W1")
    assert "took too long answering (more than 0.5 s in all)" in str(caught.value)


def test_an_answer_over_the_size_cap(replay: ReplayServer, http: Http, monkeypatch) -> None:
    monkeypatch.setattr(http_module, "MAX_BYTES", 2 * 1024 * 1024)
    replay.route("/doi/10.1/big", b"@" * (3 * 1024 * 1024))
    with pytest.raises(BadResponse, match=r"sent an answer of more than 2 MB, which is not the record asked for"):
        http.get("doi", "/10.1/big")
    assert not list(http.cache_dir.rglob("*.json"))


# -- Retry-After as services really send it, and as they should not ----------------------------------


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("inf", "for more than a day"),
        ("1e400", "for more than a day"),
        ("Fri, 31 Dec 9999 23:59:59 GMT", "for more than a day"),
        ("7200", "for 2 hours"),
    ],
)
def test_a_pause_too_long_to_wait(replay: ReplayServer, http: Http, value: str, words: str) -> None:
    replay.route("/crossref/works", b"busy", status=503, headers={"Retry-After": value})
    with pytest.raises(RateLimited) as caught:
        http.get("crossref", "/works", {"query.bibliographic": "x"})
    assert f"asked us to slow down (HTTP 503) {words}; try again later" in str(caught.value)
    assert len(replay.requests) == 1


@pytest.mark.parametrize("value", ["soon", "nan", "-5", "Mon, 01 Jan 2001 00:00:00 GMT", "Fri, 99 Foo"])
def test_an_unreadable_or_past_retry_after_backs_off(replay: ReplayServer, http: Http, value: str) -> None:
    replay.route(ROUTE, [Reply(S2_429, 429, {"Retry-After": value}), Reply(S2_EMPTY)])
    assert http.get("s2", SEARCH, {"query": "turing"}).status == 200
    assert len(replay.requests) == 2


# -- what is kept -------------------------------------------------------------------------------------


def test_an_answer_the_reader_refuses_is_not_kept(replay: ReplayServer, http: Http) -> None:
    maintenance = Reply(b"<html><body>Down for maintenance</body></html>", headers={"Content-Type": "text/html"})
    replay.route("/arxiv/api/query", [maintenance, RECORDED / "arxiv_query_id_list_1605.08386.xml"])

    def atom_only(response: Response) -> None:
        if b"<feed" not in response.content:
            raise BadResponse("not a feed", "arxiv")

    with pytest.raises(BadResponse):
        http.get("arxiv", "/api/query", {"id_list": "1605.08386"}, validate=atom_only)
    assert not list(http.cache_dir.rglob("*.json"))
    fresh = http.get("arxiv", "/api/query", {"id_list": "1605.08386"}, validate=atom_only)
    kept = http.get("arxiv", "/api/query", {"id_list": "1605.08386"}, validate=atom_only)
    assert (fresh.cached, kept.cached) == (False, True)
    assert kept.content == fresh.content and b"Heat-bath random walks" in kept.content
    assert len(replay.requests) == 2


@pytest.mark.parametrize("status", [429, 500, 302])
def test_a_kept_error_status_is_not_read_back(replay: ReplayServer, http: Http, status: int) -> None:
    replay.route("/openalex/works/W9", b'{"id": "W9"}')
    http.get("openalex", "/works/W9")
    (kept,) = list(http.cache_dir.rglob("*.json"))
    data = json.loads(kept.read_text())
    data["status"] = status  # as another version might have kept it
    kept.write_text(json.dumps(data))
    response = http.get("openalex", "/works/W9")
    assert (response.status, response.cached) == (200, False)
    assert len(replay.requests) == 2
