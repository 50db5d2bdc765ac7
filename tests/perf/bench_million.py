"""A million papers: import, index build, open, search p95 per kind, the window's start, memory.

Not a pytest test (nothing here is named ``test_*``); run it by hand::

    python tests/perf/bench_million.py                          # 1,000,000 papers (about an hour)
    python tests/perf/bench_million.py --size 30000             # the quick check (a few minutes)
    python tests/perf/bench_million.py --workdir /tmp/m1        # keep the library; a second run reuses it

It builds, in a fresh folder, the synthetic corpus of ``bench_store.py``
(``write_corpus``: listings of 10,000 papers each; generation is not
measured), then runs each step in a fresh process, through the public entry
points only (``Library``, ``SearchIndex``, the window's ``MainWindow``), so
that whatever the store, the index writer, the query evaluator and the
window do today is what gets measured:

* import: ``Library.open`` + ``import_files`` (bench_store's import child);
* edits (not counted in the build): ~5% of the papers tagged and ~10% given
  a status, as bench_search does, so that filters and facets count something;
* index build: ``SearchIndex(lib).rebuild()`` in a process of its own;
* open: ``Library.open(readonly=True)`` + ``SearchIndex(lib).open()``, 3
  fresh processes (bench_search's open child), median;
* search: bench_search's query mix (common, rare, two words, phrase, author,
  area, prefix, fuzzy, each also filtered), ``search`` + ``snippets`` of 20
  rows, warm p95 per kind; the slowest kind is profiled once;
* the window: bench_gui's start-up measurement (launch to rows, to indexed
  search), 3 runs, median;
* memory: every step's peak, as the sum of the resident memory of all its
  processes (the step's process and any worker it starts), sampled every
  0.2 s, and the step's own process peak (``ru_maxrss``).

Goals (issue 25, for 1,000,000 papers; printed for any size as PASS/MISS,
never changing the exit status): search p95 <= 300 ms per kind, open <= 5 s,
memory <= 3 GB, build (import + index) <= 15 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()
# bench_store, beside this script (sys.path[0] when it runs), puts app/ on the path

import bench_gui
import bench_search
from bench_store import (
    child_import,
    child_requested,
    describe_commit,
    mark,
    named_children,
    pct,
    print_footer,
    write_corpus,
)

DEFAULT_SIZE = 1_000_000
DEFAULT_QUERIES = 5  # distinct queries per kind
DEFAULT_REPEAT = 4  # runs per query: the first cold, the rest warm
OPEN_RUNS = 3
SAMPLE_S = 0.2

GOAL_SEARCH_P95_MS = 300.0  # search + snippets(20), warm, p95 of every kind
GOAL_OPEN_S = 5.0  # Library.open + SearchIndex.open in a fresh process
GOAL_MEMORY_MB = 3 * 1024.0  # every step, all its processes
GOAL_BUILD_S = 15 * 60.0  # import + index build


# ---- children ----------------------------------------------------------------


def child_edits(lib_dir: str, seed: int) -> dict:
    """Tags and statuses on a share of the papers, drawn as bench_search draws them."""
    import random

    from papershelf.core.library import Library

    with Library.open(lib_dir) as lib:
        rng = random.Random(seed)
        ids = lib.ids()
        n = len(ids)
        t = time.perf_counter()
        for tag in bench_search.TAGS:
            lib.add_tags(rng.sample(ids, max(1, round(n * bench_search.TAG_SHARE))), [tag])
        members = rng.sample(ids, max(1, round(n * bench_search.STATUS_SHARE)))
        for k, status in enumerate(bench_search.STATUSES):
            lib.set_status(members[k :: len(bench_search.STATUSES)], status)
        return {"edit_s": time.perf_counter() - t, "papers": n}


def child_index(lib_dir: str) -> dict:
    """SearchIndex(lib).rebuild(), timed, with its progress on stderr."""
    from papershelf.core.library import Library
    from papershelf.core.search import SearchIndex

    with Library.open(lib_dir) as lib:
        n = len(lib)
        step = max(1000, (n // 10) // 1000 * 1000)
        started = time.perf_counter()
        said = {0}

        def progress(done: int, total: int) -> None:
            if done not in said and (done % step == 0 or done == total):
                said.add(done)
                el = time.perf_counter() - started
                bench_search.say(f"index: {done:,}/{total:,} in {el:.0f} s, {done / max(el, 1e-9):,.0f} papers/s")

        ix = SearchIndex(lib)
        t = time.perf_counter()
        ix.rebuild(progress=progress)
        index_s = time.perf_counter() - t
        docs = ix.doc_count()
        ix.close()
    return {"index_s": index_s, "docs": docs, "papers": n, "peak_rss_mb": bench_search.peak_rss_mb()}


def child_build_import(lib_dir: str, *files: str) -> dict:
    return child_import(lib_dir, list(files))


CHILDREN = {
    "import": child_build_import,
    "edits": child_edits,
    "index": child_index,
    "open": bench_search.child_open,
    "query": bench_search.child_query,
}
child_main = named_children(CHILDREN)


# ---- memory of a step: all the processes under this one -----------------------


def _tree_rss_mb(root: int) -> float:
    """The resident memory of every process below `root` (not `root` itself), in MB."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
                parents[int(entry)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    below, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in below}
        below |= frontier
    pages = 0
    for pid in below:
        try:
            with open(f"/proc/{pid}/statm") as f:
                pages += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class TreeMemory:
    """Samples the memory of this process's descendants while a step runs; `.peak_mb` after."""

    def __init__(self) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, _tree_rss_mb(me))
            self._stop.wait(SAMPLE_S)

    def __enter__(self) -> TreeMemory:
        if os.path.isdir("/proc"):
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


STEP_CPU: dict[str, float] = {}  # CPU seconds of each step's processes (the machine may be shared)


def children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run_step(name: str, *args, timeout: float = 6 * 3600) -> tuple[dict, float, float]:
    """A child of this script in a fresh process: (its result, wall seconds, peak MB of its process tree);
    its CPU seconds (with its workers') are added to STEP_CPU[name].

    Its progress (stderr) goes straight through; its result is stdout's last line (JSON)."""
    cmd = [sys.executable, str(HERE), "--_child", name, *map(str, args)]
    t, cpu = time.perf_counter(), children_cpu()
    with TreeMemory() as mem:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=timeout)
    wall = time.perf_counter() - t
    STEP_CPU[name] = STEP_CPU.get(name, 0.0) + children_cpu() - cpu
    if proc.returncode != 0:
        raise RuntimeError(f"step {name} failed ({proc.returncode}); see its error output above")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall, mem.peak_mb


# ---- the run -----------------------------------------------------------------


def load_line() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def build(n: int, work: Path, seed: int, memory: dict) -> dict:
    """Corpus, import, edits, index: the library at work/library, built from nothing."""
    lib_dir = work / "library"
    t = time.perf_counter()
    files = write_corpus(n, work / "listings", seed)
    size = sum(f.stat().st_size for f in files)
    print(
        f"corpus: {len(files)} listing(s), {size / 2**20:,.0f} MB, generated in {time.perf_counter() - t:.0f} s "
        "(not measured)",
        flush=True,
    )
    imp, wall, memory["import"] = run_step("import", lib_dir, *files)
    if imp["errors"] or imp["papers"] != n:
        print(f"WARNING: {imp['papers']:,} papers imported (expected {n:,}); errors: {imp['errors'][:3]}")
    print(
        f"import: {imp['import_s']:.1f} s = {imp['papers'] / imp['import_s']:,.0f} papers/s (process {wall:.1f} s, "
        f"{STEP_CPU['import']:.1f} s of CPU); peak {memory['import']:,.0f} MB (process {imp['peak_rss_mb']:,.0f} MB)",
        flush=True,
    )
    ed, _, memory["edits"] = run_step("edits", lib_dir, seed)
    print(f"edits: tags and statuses in {ed['edit_s']:.1f} s (not counted in the build)", flush=True)
    idx, wall, memory["index"] = run_step("index", lib_dir)
    print(
        f"index build: {idx['index_s']:.1f} s = {idx['papers'] / idx['index_s']:,.0f} papers/s, {idx['docs']:,} "
        f"documents (process {wall:.1f} s, "
        f"{STEP_CPU['index']:.1f} s of CPU with its workers); peak {memory['index']:,.0f} MB with its workers "
        f"(process {idx['peak_rss_mb']:,.0f} MB); index folder "
        f"{bench_search.folder_bytes(bench_search.index_folder(lib_dir)) / 2**20:,.0f} MB",
        flush=True,
    )
    for f in files:  # the listings are not needed any more: the disk is shared
        f.unlink()
    build = {"import_s": imp["import_s"], "index_s": idx["index_s"], "papers": imp["papers"]}
    (work / "build.json").write_text(json.dumps(build), encoding="utf-8")
    return build


def measure(lib_dir: Path, work: Path, args, memory: dict) -> dict:
    """Open, search, window: figures on a built library."""
    out: dict = {}
    opens = []
    for _ in range(OPEN_RUNS):
        o, _, peak = run_step("open", lib_dir)
        opens.append(o)
        memory["open"] = max(memory.get("open", 0.0), peak)
    open_s = statistics.median((o["lib_ms"] + o["index_ms"]) / 1000 for o in opens)
    rebuilt = [o["rebuilt_because"] for o in opens if o["rebuilt_because"]]
    print(
        f"open (fresh process x{OPEN_RUNS}): Library.open + SearchIndex.open median {open_s:.2f} s "
        f"[{', '.join(format((o['lib_ms'] + o['index_ms']) / 1000, '.2f') for o in opens)}] "
        f"(library {statistics.median(o['lib_ms'] for o in opens) / 1000:.2f} s, index "
        f"{statistics.median(o['index_ms'] for o in opens) / 1000:.2f} s); first search "
        f"{statistics.median(o['first_search_ms'] for o in opens):.0f} ms; index rebuilt on open: "
        f"{rebuilt[0] if rebuilt else 'no'}; peak {memory['open']:,.0f} MB",
        flush=True,
    )
    out.update(open_s=open_s, rebuilt=bool(rebuilt))

    mix_file = work / "mix.json"
    q, _, memory["search"] = run_step(
        "query", lib_dir, args.queries, args.repeat, mix_file, args.profile_top, timeout=6 * 3600
    )
    mix = json.loads(mix_file.read_text(encoding="utf-8"))
    print(
        f"search: {len(mix)} queries ({args.queries} per kind), 1 cold + {args.repeat - 1} warm run(s) each, "
        f"limit {bench_search.LIMIT}, facets, snippets of {bench_search.SNIPPET_ROWS}; first search of the process "
        f"{q['first_ms']:.0f} ms; peak {memory['search']:,.0f} MB",
        flush=True,
    )
    bench_search.print_kinds("SearchIndex.search + snippets", mix, q)
    kinds = bench_search.kind_stats(mix, q)
    out["kinds"] = {k: pct(v["total"], 95) for k, v in kinds.items() if v["total"]}
    out["all95"] = pct(bench_search.flat(q["warm_total"]), 95)
    if "profile" in q:
        p = q["profile"]
        print(f"\n--- cProfile: the slowest kind, {p['kind']!r}, one warm run of each query (cumulative) ---")
        print(p["cumulative"])
        print("--- same, by own time ---")
        print(p["tottime"], flush=True)

    if args.window:
        starts, readies, peaks = [], [], []
        for k in range(bench_gui.START_RUNS):
            cpu = children_cpu()
            try:
                with TreeMemory() as mem:
                    rows_s, ready_s, info = bench_gui.timed_start(str(lib_dir))
            except (RuntimeError, subprocess.TimeoutExpired, KeyError) as exc:
                print(f"  window start-up run {k + 1} did not finish: {exc.__class__.__name__}: {str(exc)[-400:]}")
                continue
            STEP_CPU["window"] = STEP_CPU.get("window", 0.0) + children_cpu() - cpu
            starts.append(rows_s)
            readies.append(ready_s)
            peaks.append(max(mem.peak_mb, info["peak_mb"]))
            print(
                f"  window start-up run {k + 1}: rows after {rows_s:.2f} s ({info['rows']:,}), indexed search after "
                f"{ready_s:.2f} s, index {'current' if not info['rebuilt'] else 'rebuilt: ' + info['rebuilt']}, "
                f"peak {peaks[-1]:,.0f} MB",
                flush=True,
            )
        if starts:
            out.update(window_rows_s=statistics.median(starts), window_ready_s=statistics.median(readies))
            memory["window"] = max(peaks)
    return out


def report(n: int, built: dict | None, figures: dict, memory: dict) -> None:
    print(f"\n=== {n:,} papers: goals (issue 25, stated for 1,000,000) ===")
    if built:
        b = built["import_s"] + built["index_s"]
        print(
            f"build (import {built['import_s']:.0f} s + index {built['index_s']:.0f} s): {b / 60:.1f} min "
            f"= {built['papers'] / b:,.0f} papers/s   [goal <= {GOAL_BUILD_S / 60:.0f} min: {mark(b <= GOAL_BUILD_S)}]"
        )
    else:
        print("build: not measured in this run (an existing library was reused)")
    ok_open = figures["open_s"] <= GOAL_OPEN_S and not figures["rebuilt"]
    print(f"open: {figures['open_s']:.2f} s   [goal <= {GOAL_OPEN_S:.0f} s: {mark(ok_open)}]")
    for kind, p95 in figures["kinds"].items():
        print(
            f"search p95 {kind:<18} {p95:8.1f} ms   [goal <= {GOAL_SEARCH_P95_MS:.0f} ms: "
            f"{mark(p95 <= GOAL_SEARCH_P95_MS)}]"
        )
    print(f"search p95 {'whole mix':<18} {figures['all95']:8.1f} ms")
    if "window_rows_s" in figures:
        print(
            f"window: rows after {figures['window_rows_s']:.2f} s, indexed search after "
            f"{figures['window_ready_s']:.2f} s (median of {bench_gui.START_RUNS})   [goal: open <= "
            f"{GOAL_OPEN_S:.0f} s: {mark(figures['window_ready_s'] <= GOAL_OPEN_S)}]"
        )
    print(
        "CPU seconds per step (wall times above grow with the machine's load; these do not): "
        + ", ".join(f"{step} {cpu:.0f}" for step, cpu in STEP_CPU.items())
        + f"; load average now {load_line()}"
    )
    for step, mb in memory.items():
        print(f"memory {step:<8} {mb:8,.0f} MB   [goal <= {GOAL_MEMORY_MB:,.0f} MB: {mark(mb <= GOAL_MEMORY_MB)}]")
    misses = [k for k, p in figures["kinds"].items() if p > GOAL_SEARCH_P95_MS]
    misses += ["open"] if not ok_open else []
    misses += ["window start"] if figures.get("window_ready_s", 0.0) > GOAL_OPEN_S else []
    misses += [f"memory ({k})" for k, mb in memory.items() if mb > GOAL_MEMORY_MB]
    if built and built["import_s"] + built["index_s"] > GOAL_BUILD_S:
        misses.append("build")
    print("all goals PASS" if not misses else f"MISS: {', '.join(misses)}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if child_requested(argv, child_main):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE, help="papers (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1729, help="corpus seed (default: %(default)s)")
    ap.add_argument(
        "--workdir",
        default=None,
        help="keep the library (and its index, under WORKDIR/state) here; a library already built there is "
        "measured as it is, without building it again (default: a temporary folder, removed after)",
    )
    ap.add_argument("--tmpdir", default=None, help="where the temporary folder goes (default: the system's)")
    ap.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="queries per kind (default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help="runs per query, the first cold (default: 4)")
    ap.add_argument("--profile-top", type=int, default=8, help="profile the slowest kind (0: don't; default 8)")
    ap.add_argument("--no-window", dest="window", action="store_false", help="skip the window's start-up")
    args = ap.parse_args(argv)
    args.repeat = max(2, args.repeat)
    commit = describe_commit()
    t0 = time.perf_counter()
    print(
        f"papershelf million benchmark: commit {commit}, python {sys.version.split()[0]}, {os.cpu_count()} CPU(s), "
        f"{args.size:,} papers, seed {args.seed}; load average {load_line()}",
        flush=True,
    )
    work = (
        Path(args.workdir)
        if args.workdir
        else Path(tempfile.mkdtemp(prefix="papershelf-bench-million-", dir=args.tmpdir))
    )
    work.mkdir(parents=True, exist_ok=True)
    # the index and locks are this machine's: kept with the rest, never in the user's folders
    os.environ["PAPERSHELF_STATE_DIR"] = str(work / "state")
    os.environ["PAPERSHELF_CONFIG_DIR"] = str(work / "config")
    os.environ["XDG_CONFIG_HOME"] = str(work / "xdg-config")  # the window's settings
    memory: dict[str, float] = {}
    try:
        built = None
        done = work / "build.json"
        if done.exists() and json.loads(done.read_text(encoding="utf-8"))["papers"] == args.size:
            print(f"reusing the library built in {work} (its build is not measured again)", flush=True)
        else:
            shutil.rmtree(work / "library", ignore_errors=True)
            shutil.rmtree(work / "state", ignore_errors=True)
            built = build(args.size, work, args.seed, memory)
        figures = measure(work / "library", work, args, memory)
        report(args.size, built, figures, memory)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print_footer(commit, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
