"""The fault campaign's hostile server (issue 21): one service at a time answers `papershelf lookup`
as badly as a server can, the others answer from the seed replay set.

Per run, one (service, attack): a body dripped a byte at a time, a request never answered, JSON or
XML nested a hundred thousand deep, a body far over the size cap (declared, or chunked without a
length), an endless chunked body, a web page where JSON or XML is expected, a redirect loop, a
redirect to another host, absurd Retry-After values. Every run must end with the right words and
exit 0 or 1 (never a traceback), give a result for every paper, apply at least what the same batch
applies when that service merely fails (HTTP 500), and never give the contact to another host.
The deadlines are made short (`PAPERSHELF_REQUEST_SECONDS`, `PAPERSHELF_PAPER_SECONDS`); the times
measured are printed, not asserted.

A larger run by hand: ``PAPERSHELF_FAULTS=5 python -m pytest tests/faults/test_hostile_server.py -s``
(each attack against 5 services in turn, more Retry-After values).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import SEEDS, run_cli
from replay_server import ReplayServer
from seed_replay import serve_seeds

SCALE = max(1, int(os.environ.get("PAPERSHELF_FAULTS", "1")))
REQUEST_SECONDS = 1.0
PAPER_SECONDS = 4.0
MAILTO = "ann@example.org"
SEARCHES = ("arxiv", "openalex", "crossref", "s2")
ATTACKS = (
    "drip",
    "stall",
    "nested",
    "huge_declared",
    "huge_chunked",
    "endless_chunked",
    "wrong_type",
    "redirect_loop",
    "cross_host_redirect",
    "retry_after",
)
RETRY_AFTERS = ("999999999", "inf", "-1", "NaN", "Fri, 31 Dec 9999 23:59:59 GMT", "59", "soon", "1e400")
# what the command may say about the attacked service (each attack's own words)
WORDS = {
    "drip": ("took too long answering", "took more than"),
    "stall": ("took too long answering", "took more than"),
    "nested": ("cannot read",),
    "huge_declared": ("more than 20 MB",),
    "huge_chunked": ("more than 20 MB", "took too long answering", "took more than"),
    "endless_chunked": ("more than 20 MB", "took too long answering", "took more than"),
    "wrong_type": ("cannot read",),
    "redirect_loop": ("round in redirects",),
    "cross_host_redirect": (),  # the answer is there, at the other host
    "retry_after": ("slow down", "asked us to wait"),
}

pytestmark = pytest.mark.slow


class Hostile:
    """A loopback server answering every request with one attack (`attack`, changed per run);
    `redirect_to` is where the cross-host redirect leads (another port: another host)."""

    def __init__(self) -> None:
        self.attack = "stall"
        self.retry_after = "59"
        self.redirect_to = ""
        self.stop = threading.Event()
        self.requests: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def end_headers(self) -> None:
                # every answer closes its connection, and says so: else the client may send the next
                # request (a redirect's) on a connection closed here, and hear "broke off" instead
                self.send_header("Connection", "close")
                super().end_headers()

            def do_GET(self) -> None:
                server.requests.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
                try:
                    server.answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        class Quiet(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass  # a client hanging up on an attack is the point

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        attack = self.attack
        xml = h.path.split("/")[1] == "arxiv"
        if attack == "stall":
            self.stop.wait()
            return
        if attack in ("redirect_loop", "cross_host_redirect"):  # to itself, or to the other host
            h.send_response(302)
            h.send_header("Location", (self.redirect_to if attack == "cross_host_redirect" else "") + h.path)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if attack == "retry_after":
            h.send_response(429)
            h.send_header("Retry-After", self.retry_after)
            h.send_header("Content-Length", "2")
            h.end_headers()
            h.wfile.write(b"{}")
            return
        if attack == "huge_declared":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(3 * 1024**3))
            h.end_headers()
            h.wfile.write(b"[" * 65536)
            return
        if attack in ("huge_chunked", "endless_chunked"):
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            chunk = b" " * 65536
            total = 25 * 1024**2 if attack == "huge_chunked" else None
            sent = 0
            while (total is None or sent < total) and not self.stop.is_set():
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            h.wfile.write(b"0\r\n\r\n")
            return
        if attack == "nested":
            body = b"<feed>" + b"<a>" * 100_000 if xml else b"[" * 100_000
        elif attack == "wrong_type":
            body = b"<!doctype html><html><body><h1>Service Unavailable</h1></body></html>"
        else:  # drip: a real-looking answer that never finishes in time
            body = b'{"status":"ok","message":{"items":[]}}' + b" " * 200
        h.send_response(200)
        h.send_header("Content-Type", "text/html" if attack == "wrong_type" else "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if attack == "drip":
            for n in range(len(body)):
                if self.stop.wait(0.1):
                    return
                h.wfile.write(body[n : n + 1])
                h.wfile.flush()
            return
        h.wfile.write(body)

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _lookup(tmp: Path, ids: list[str], env: dict[str, str]) -> tuple[dict, float, str, int]:
    start = time.monotonic()
    res = run_cli("lookup", *ids, "--apply", "--json", "--mailto", MAILTO, data_dir=tmp / "lib", env=env)
    took = time.monotonic() - start
    assert "Traceback" not in res.stderr, res.stderr[-3000:]
    assert res.returncode in (0, 1), res.stderr[-3000:]
    results = {r["id"]: r for r in json.loads(res.stdout)}
    assert list(results) == ids  # every paper has its result
    return results, took, res.stderr, res.returncode


def test_a_hostile_server_never_breaks_a_look_up_batch(tmp_path, capsys):
    rng = random.Random(21)
    replay = ReplayServer()
    hostile = Hostile()
    counts: Counter[str] = Counter()
    times: dict[str, float] = {}
    try:
        serve_seeds(replay)
        seed_lib = tmp_path / "seed-lib"
        assert run_cli("import", str(SEEDS[0]), data_dir=seed_lib).returncode == 0
        listed = json.loads(run_cli("list", "--json", data_dir=seed_lib).stdout)
        ids = rng.sample([p["id"] for p in listed if p["title_derived"]], 4)
        base_env = {
            **replay.env(),
            "PAPERSHELF_REQUEST_SECONDS": str(REQUEST_SECONDS),
            "PAPERSHELF_PAPER_SECONDS": str(PAPER_SECONDS),
        }

        def run(service: str, tag: str, url: str) -> tuple[dict, float, str, int]:
            tmp = tmp_path / tag
            tmp.mkdir()
            shutil.copytree(seed_lib, tmp / "lib")
            env = {**base_env, f"PAPERSHELF_{service.upper()}_URL": url, "PAPERSHELF_CACHE_DIR": str(tmp / "cache")}
            return _lookup(tmp, ids, env)

        # what the batch applies when a service merely fails: the floor of every attack on it
        failing = ReplayServer()  # no routes: a 404 page for every request
        baseline = {}
        for service in SEARCHES:
            results, _took, _err, _rc = run(service, f"baseline-{service}", f"{failing.url}/x")
            baseline[service] = {pid for pid, r in results.items() if r["applied"]}
        failing.close()

        n = 0
        for round_ in range(SCALE):
            for attack in ATTACKS:
                service = SEARCHES[(ATTACKS.index(attack) + round_) % len(SEARCHES)]
                n += 1
                hostile.attack = attack
                hostile.retry_after = rng.choice(RETRY_AFTERS)
                hostile.redirect_to = replay.url  # another port: another host
                hostile.requests.clear()
                replay.clear()
                results, took, stderr, _rc = run(service, f"run{n}-{attack}-{service}", f"{hostile.url}/{service}")
                times[f"{attack}/{service}"] = took
                applied = {pid for pid, r in results.items() if r["applied"]}
                missing = baseline[service] - applied
                assert not missing, (attack, service, missing, results)
                said = " ".join(r["message"] for r in results.values()) + stderr
                if WORDS[attack] and hostile.requests:
                    assert any(w in said for w in WORDS[attack]), (attack, service, said[-2000:])
                if attack == "cross_host_redirect":
                    followed = [r for r in replay.requests if r.path.startswith(f"/{service}/")]
                    assert all(MAILTO not in v for r in followed for v in [r.raw_path, *r.headers.values()])
                counts[attack] += 1
                counts["papers applied"] += len(applied)
                counts["tracebacks"] += 0  # asserted above: a traceback fails the run
    finally:
        hostile.close()
        replay.close()
    with capsys.disabled():
        print(f"\n[faults x{SCALE}] hostile server: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        worst = max(times, key=times.__getitem__)
        print(
            f"[faults x{SCALE}] lookup of {len(ids)} papers, request {REQUEST_SECONDS:g} s, paper {PAPER_SECONDS:g} s:"
            f" longest {times[worst]:.1f} s ({worst}); " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(times.items()))
        )
