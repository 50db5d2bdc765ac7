"""Command-line benchmark (issue 25 item 4): whole processes of the installed `papershelf`.

Not a pytest test; run it by hand::

    python tests/perf/bench_cli.py --lib /work/corpus/lib100k --base /tmp/base/app
    python tests/perf/bench_cli.py --size 20000          # a corpus made here (bench_store's)

Each figure is one real process (`papershelf ...`, the console script of this checkout's
venv), its wall time, its CPU time (user + system) and its own peak RSS (/usr/bin/time's %U,
%S, %M), 3 runs, min and
median. `--base APP` runs the same commands with another checkout's `app/` first on
PYTHONPATH (the code before a change), interleaved with this one's in the same run. The
anchor is SQLite FTS5 (bm25 and snippet()) answering the same search from a script, also a
whole process.

The library is copied into a temporary folder, made this configuration's own device (as
`tests/conftest.py same_device`), and its index built once (`--state DIR` keeps and
reuses the state folder with the index between runs: a 100k build takes minutes).

Measured: `--version`; `show ID`; `search optimization` and its `--json`; `tag ID --add`
(and `--remove`); the first `search` after that edit (the read view written again); `list
--json` to /dev/null. Targets (100k papers): search, show, tag ≤ 0.3 s and ≤ 150 MB;
list --json ≤ 1 s with memory that does not grow with the library. Targets are printed
as PASS/MISS; a miss never changes the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
if str(ROOT / "app") not in sys.path:
    sys.path.insert(0, str(ROOT / "app"))

RUNS = 3
TARGET_S = 0.3
TARGET_MB = 150.0
TARGET_LIST_S = 1.0
PAPERSHELF = Path(sys.executable).with_name("papershelf")
FTS_QUERY = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute(
    "SELECT id, title, snippet(papers, 2, '«', '»', '…', 12), bm25(papers) FROM papers "
    "WHERE papers MATCH ? ORDER BY bm25(papers) LIMIT 20", (sys.argv[2],)).fetchall()
for r in rows:
    print(r[0], r[1], r[2])
"""


def run(cmd: list[str], env: dict[str, str], stdout=subprocess.DEVNULL) -> tuple[float, float, int, float]:
    """(seconds, peak MB, exit code, CPU seconds) of one process. The peak is /usr/bin/time's (%M): a child
    forked from this process would count this process's memory as its own high-water mark."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        t0 = time.perf_counter()
        code = subprocess.run(
            ["/usr/bin/time", "-o", out.name, "-f", "%M %U %S", *cmd], env=env, stdout=stdout, stderr=subprocess.DEVNULL
        ).returncode
        took = time.perf_counter() - t0
        peak_kb, user, system = map(float, out.read().split()[-3:])
    return took, peak_kb / 1024, code, user + system


def measure(label: str, cmd: list[str], env: dict[str, str], runs: int = RUNS) -> dict:
    times, peaks, cpus, codes = [], [], [], set()
    for _ in range(runs):
        t, mb, code, cpu = run(cmd, env)
        times.append(t)
        peaks.append(mb)
        cpus.append(cpu)
        codes.add(code)
    return {
        "label": label,
        "min": min(times),
        "median": statistics.median(times),
        "mb": max(peaks),
        "cpu": (min(cpus), statistics.median(cpus)),
        "codes": codes,
    }


def mark(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def show(row: dict, target_s: float | None = TARGET_S, target_mb: float | None = TARGET_MB) -> None:
    verdict = ""
    if target_s is not None:
        verdict = f"  target ≤{target_s:.2f} s {mark(row['min'] <= target_s)}"
    if target_mb is not None:
        verdict += f", ≤{target_mb:.0f} MB {mark(row['mb'] <= target_mb)}"
    codes = "" if row["codes"] == {0} else f"  exit {sorted(row['codes'])}"
    figures = f"min {row['min']:6.3f} s  median {row['median']:6.3f} s  {row['mb']:7.1f} MB"
    figures += f"  CPU {row['cpu'][0]:5.2f} / {row['cpu'][1]:5.2f} s"
    print(f"  {row['label']:<44} {figures}{verdict}{codes}")


def prepare(args: argparse.Namespace, work: Path) -> tuple[Path, dict[str, str]]:
    """The library copy and the environment every process runs in."""
    lib = work / "lib"
    if args.lib:
        shutil.copytree(args.lib, lib, symlinks=True)
    else:
        from bench_store import write_corpus

        src = work / "src"
        src.mkdir()
        files = write_corpus(args.size, src, 1729)
        env = dict(os.environ, PAPERSHELF_CONFIG_DIR=str(work / "config"), PAPERSHELF_STATE_DIR=str(work / "state"))
        subprocess.run([str(PAPERSHELF), "--data-dir", str(lib), "import", *map(str, files)], env=env, check=True)
    state = Path(args.state) if args.state else work / "state"
    env = dict(os.environ, PAPERSHELF_CONFIG_DIR=str(work / "config"), PAPERSHELF_STATE_DIR=str(state))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its .pyc files
    # this configuration is the device that wrote the library (not a second device joining it)
    device = next(p for p in (lib / "devices").iterdir() if p.is_dir())
    (work / "config").mkdir(exist_ok=True)
    (work / "config" / "device.json").write_text(json.dumps({"id": device.name}) + "\n")
    fingerprint = subprocess.run(
        [sys.executable, "-c", "from papershelf.core.store import machine; print(machine.machine_fingerprint())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    claim = device / "device.json"
    record = json.loads(claim.read_text()) if claim.exists() else {"id": device.name}
    claim.write_text(json.dumps({**record, "machine": fingerprint}) + "\n")
    return lib, env


def fts5_anchor(papers: list[dict], work: Path) -> Path:
    """An FTS5 database of the same papers (id, title, abstract), built once."""
    db_path = work / "fts5.sqlite"
    db = sqlite3.connect(db_path)
    db.execute("CREATE VIRTUAL TABLE papers USING fts5(id UNINDEXED, title, abstract)")
    db.executemany(
        "INSERT INTO papers VALUES (?, ?, ?)", ((p["id"], p.get("title", ""), p.get("abstract", "")) for p in papers)
    )
    db.commit()
    db.close()
    return db_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", help="a library folder to copy (else one of --size papers is made)")
    ap.add_argument("--size", type=int, default=20_000)
    ap.add_argument("--base", help="another checkout's app/ folder: the same commands as they were")
    ap.add_argument("--state", help="a state folder to keep (the index is built there once)")
    ap.add_argument("--work", help="a work folder to keep (the library copy; default: a temporary one)")
    ap.add_argument("--query", default="optimization")
    ap.add_argument("--in-place", action="store_true", help="use --lib as it is, with --config and --state")
    ap.add_argument("--config", help="with --in-place: the configuration folder (its device owns the library)")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]  # figures as they come, into a file too
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-cli-"))
    work.mkdir(parents=True, exist_ok=True)
    fresh = not (work / "fts5.sqlite").exists()
    if args.in_place:  # a library (a copy of one's own) whose configuration and state are given
        lib = Path(args.lib)
        env = dict(os.environ, PAPERSHELF_CONFIG_DIR=args.config, PAPERSHELF_STATE_DIR=args.state)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    elif not (work / "lib").exists():
        lib, env = prepare(args, work)
    else:
        lib = work / "lib"
        state = Path(args.state) if args.state else work / "state"
        env = dict(os.environ, PAPERSHELF_CONFIG_DIR=str(work / "config"), PAPERSHELF_STATE_DIR=str(state))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "app")], check=False)
    if args.base:
        subprocess.run([sys.executable, "-m", "compileall", "-q", args.base], check=False)
    me = [str(PAPERSHELF), "--data-dir", str(lib)]
    t0 = time.perf_counter()
    subprocess.run([*me, "search", "x"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"index ready (built or opened) in {time.perf_counter() - t0:.1f} s")
    first = subprocess.run([*me, "list", "--json"], env=env, capture_output=True, check=True).stdout
    papers = json.loads(first)
    pid = papers[len(papers) // 2]["id"]
    print(f"{len(papers):,} papers; show/tag paper {pid}")
    fts = fts5_anchor(papers, work) if fresh else work / "fts5.sqlite"
    del papers, first

    versions = [("now", env)]
    if args.base:
        versions.append(("before", dict(env, PYTHONPATH=args.base)))
    q = args.query
    for name, e in versions:
        py = [str(PAPERSHELF)] if name == "now" else [sys.executable, "-m", "papershelf"]
        cmd = [*py, "--data-dir", str(lib)]
        print(f"\n{name}:")
        run([*cmd, "show", pid], e)  # the read view written once (its inputs as they are)
        show(measure("--version", [*py, "--version"], e), None, None)
        show(measure(f"show {pid}", [*cmd, "show", pid], e))
        show(measure(f"search {q}", [*cmd, "search", q], e))
        show(measure(f"search --json {q}", [*cmd, "search", "--json", q], e))
        tags = [measure("tag --add bench", [*cmd, "tag", pid, "--add", "bench"], e, 1)]
        after = measure(f"search {q}, first after the tag", [*cmd, "search", q], e, 1)
        tags.append(measure("tag --remove bench", [*cmd, "tag", pid, "--remove", "bench"], e, 1))
        run([*cmd, "show", pid], e)
        for row in tags:
            show(row)
        show(after, None, None)
        show(measure("list --json > /dev/null", [*cmd, "list", "--json"], e, 1), TARGET_LIST_S, None)
    print("\nanchor:")
    show(measure(f"FTS5 script: {q} (bm25, snippet)", [sys.executable, "-c", FTS_QUERY, str(fts), q], env), None, None)
    print(f"\nwork folder: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
