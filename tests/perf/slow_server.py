"""Issue 21, defect 8: how long a look-up waits on a server that drips one byte a second.

Run with the worktree's python (it puts tests/ on the path for the replay server)::

    python tests/perf/slow_server.py request        # one Crossref request
    python tests/perf/slow_server.py lookup N       # `papershelf lookup` of N papers, every service dripping

Prints the seconds it took and how the request or the command ended. Measured figures are in the
report of issue 21 and in docs/DESIGN.md ("## Limits")."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay_server import ReplayServer, Reply

BIB = """@article{{p{n},
  author = {{Doe, Jane}},
  abstract = {{We study the drip{n} phenomenon of slow servers under hostile conditions and measure the waiting.}},
  year = {{2024}},
}}
"""


def _drip(server: ReplayServer) -> None:
    body = b'{"status":"ok","message-type":"work","message":{}}' + b" " * 400
    for path in ("/arxiv/api/query", "/crossref/works", "/openalex/works", "/s2/graph/v1/paper/search"):
        server.route(path, Reply(body, 200, {"Content-Type": "application/json"}, trickle=1.0))
    server.route("/crossref/works/10.1234/slow", Reply(body, 200, {"Content-Type": "application/json"}, trickle=1.0))


def request() -> None:
    from papershelf.core.online.http import Http
    from papershelf.core.online.records import OnlineError

    server = ReplayServer()
    _drip(server)
    os.environ["PAPERSHELF_CROSSREF_URL"] = server.base("crossref")
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as cache, Http(cache_dir=Path(cache)) as http:
        try:
            http.get("crossref", "/works/10.1234/slow")
            outcome = "answered"
        except OnlineError as exc:
            outcome = str(exc)
    print(f"one request: {time.monotonic() - start:.1f} s: {outcome}")
    server.close()


def lookup(n: int) -> None:
    server = ReplayServer()
    _drip(server)
    with tempfile.TemporaryDirectory() as tmp:
        bib = Path(tmp) / "slow.bib"
        bib.write_text("".join(BIB.format(n=i) for i in range(n)))
        env = {**os.environ, **server.env(), "PAPERSHELF_DATA_DIR": str(Path(tmp) / "lib")}
        env["PAPERSHELF_CACHE_DIR"] = str(Path(tmp) / "cache")
        exe = str(Path(sys.executable).with_name("papershelf"))
        subprocess.run([exe, "import", str(bib)], env=env, check=True, capture_output=True)
        start = time.monotonic()
        res = subprocess.run([exe, "lookup", "--derived"], env=env, capture_output=True, text=True)
        took = time.monotonic() - start
    print(f"lookup of {n} papers: {took:.1f} s, exit {res.returncode}")
    print("stderr:", res.stderr)
    print("stdout:", res.stdout)
    server.close()


if __name__ == "__main__":
    if sys.argv[1] == "request":
        request()
    else:
        lookup(int(sys.argv[2]) if len(sys.argv) > 2 else 2)
