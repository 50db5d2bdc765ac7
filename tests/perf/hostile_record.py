"""The first search after `papershelf add` meets a hostile service (issue 21 defect 6).

Not a pytest test; run it by hand::

    python tests/perf/hostile_record.py

A library of the four seed listings with its search index built, then `papershelf add` of one
DOI whose Crossref answer (a loopback replay server) holds a 15 MB title, or 300,000 authors;
then `papershelf search`. Prints each command's exit status, wall time and peak memory
(`/usr/bin/time -v`). Before the limits the record was stored and the first search after it
reindexed it (the issue: 42 s); now the record is refused and the search costs what it did.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "app"), str(ROOT / "tests")]

from replay_server import RECORDED, ReplayServer, Reply

DOI = "10.1073/pnas.1414271111"


def timed(*args: str, env: dict[str, str]) -> str:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "papershelf", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", res.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    return (
        f"exit {res.returncode}, {wall.group(1) if wall else '?'} wall, "
        f"{int(rss.group(1)) // 1024 if rss else '?'} MB peak"
    )


def answer(**changes: object) -> bytes:
    data = json.loads((RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json").read_text())
    data["message"].update(changes)
    return json.dumps(data).encode()


def main() -> None:
    hostile = {
        "15 MB title": answer(title=["A" * 15_000_000]),
        "300,000 authors": answer(author=[{"given": f"G{n}", "family": f"F{n}"} for n in range(300_000)]),
    }
    for name, body in hostile.items():
        server = ReplayServer()
        server.route(f"/crossref/works/{DOI}", Reply(body, headers={"Content-Type": "application/json"}))
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, **server.env(), "PAPERSHELF_CACHE_DIR": f"{tmp}/cache"}
            env["PYTHONPATH"] = str(ROOT / "app")
            lib = ["--data-dir", f"{tmp}/lib"]
            seeds = sorted(str(p) for p in (ROOT / "seeds").glob("*.txt"))
            subprocess.run(
                [sys.executable, "-m", "papershelf", *lib, "import", *seeds], env=env, check=True, capture_output=True
            )
            print(f"{name}: first search (index built):  {timed(*lib, 'search', 'neural', env=env)}")
            print(f"{name}: add:                         {timed(*lib, 'add', f'doi:{DOI}', env=env)}")
            print(f"{name}: first search after the add:  {timed(*lib, 'search', 'neural', env=env)}")
            print(f"{name}: second search:               {timed(*lib, 'search', 'neural', env=env)}")
        server.close()


if __name__ == "__main__":
    main()
