"""Store benchmark: import throughput, cold load, durable edits, memory.

Not a pytest test (nothing here is named ``test_*``); run it by hand::

    python tests/perf/bench_store.py                      # 1,000, 10,000, 100,000 papers
    python tests/perf/bench_store.py --sizes 1000,10000
    python tests/perf/bench_store.py --sizes 100000 --profile

For each size N it builds, in a fresh temporary directory, a deterministic
synthetic corpus of N distinct papers written as paper-search listings
(``论文检索``, at most 10,000 papers per file), then measures, each in a
fresh subprocess so that no state is shared:

* import: ``Library.open(dir)`` + ``lib.import_files(files)``, papers/s, and
  the peak RSS of that process;
* cold load: ``Library.open(dir, readonly=True)``, 3 runs, median time and
  max peak RSS (the OS page cache is warm: this is a restart, not a reboot);
* durable edits: 200 single-paper ``add_tags`` and 50 ``set_status`` calls,
  each timed on its own (each returns after fdatasync), p50/p95;
* the on-disk size of library.jsonl and journal.jsonl after import and edits.

Targets are printed next to the figures as PASS/MISS; a miss never changes
the exit status. Generation time is not measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
SEEDS_DIR = ROOT / "seeds"
if str(ROOT / "app") not in sys.path:  # run with any python, not only the venv's
    sys.path.insert(0, str(ROOT / "app"))

DEFAULT_SIZES = (1_000, 10_000, 100_000)
PER_FILE = 10_000
LOAD_RUNS = 3
TAG_EDITS = 200
STATUS_EDITS = 50

# Targets (they are stated for 100k papers; printed for every size).
TARGET_EDIT_MS = 5.0  # one edit durable, p95
TARGET_LOAD_S = 1.0
TARGET_IMPORT_PPS = 5_000.0
TARGET_PEAK_MB = 400.0
TARGET_EDIT_GROWTH = 2.0  # p50 at the largest size vs the smallest

AREAS = [
    ("Deep Learning", "Large Language Models"),
    ("Deep Learning", "Generative Models and Autoencoders"),
    ("Deep Learning", "Graph Neural Networks"),
    ("Deep Learning", "Robustness"),
    ("Deep Learning", "Foundation Models"),
    ("Deep Learning", "Theory"),
    ("Deep Learning", "Attention Mechanisms"),
    ("Theory", "Optimization"),
    ("Theory", "Game Theory"),
    ("Theory", "Learning Theory"),
    ("Optimization", "Bayesian & Black-box Optimization"),
    ("Optimization", "Convex"),
    ("Optimization", "Everything Else"),
    ("Probabilistic Methods", "Gaussian Processes"),
    ("Probabilistic Methods", "Bayesian Models and Methods"),
    ("Probabilistic Methods", "Variational Inference"),
    ("Reinforcement Learning", "Multi-agent"),
    ("Reinforcement Learning", "Deep RL"),
    ("Reinforcement Learning", "Everything Else"),
    ("General Machine Learning", "Representation Learning"),
    ("General Machine Learning", "Evaluation"),
    ("Applications", "Neuroscience, Cognitive Science"),
    ("Applications", "Time Series"),
    ("Applications", "Robotics"),
    ("Applications", "Health"),
    ("Social Aspects", "Accountability, Transparency, and Interpretability"),
    ("Social Aspects", "Fairness"),
    ("Computer Vision", "Video Understanding"),
    ("Natural Language Processing", "Machine Translation"),
    ("Infrastructure", "Software Libraries"),
]
MATH = [
    r"$\Delta$",
    r"$\mathcal{O}(n \log n)$",
    r"$k$",
    r"$x_t$",
    r"$\epsilon$-greedy",
    r"$\ell_2$",
    r"$\alpha=0.5$",
    r"$\sqrt{T}$",
    r"$\mathbb{R}^d$",
    r"$p_\theta(x)$",
    r"$2\times$",
    r"$\lambda$",
]
FALLBACK_WORDS = (
    "we propose a novel method for learning representations of large language models "
    "that improves robustness and efficiency across diverse benchmarks and tasks"
).split()
FALLBACK_NAMES = [["Ada", "Lovelace"], ["Alan", "Turing"], ["Grace", "Hopper"], ["Xinyou", "Wang"]]


# ---------------------------------------------------------------------------
# corpus generation (not timed)
# ---------------------------------------------------------------------------

_WORD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-–'’/+]*$")
_STRIP = ".,;:!?()[]{}\"“”'’‘*"


def seed_material():
    """(vocabulary with frequencies, author names as token lists) from the seed listings."""
    from papershelf.core.importers.listing import split_authors

    words: list[str] = []
    names: list[list[str]] = []
    for path in sorted(SEEDS_DIR.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line in ("论文检索", "Daily Papers") or "·" in line:
                continue
            tokens = line.split()
            if len(tokens) >= 15:
                for tok in tokens:
                    tok = tok.strip(_STRIP)
                    if _WORD_RE.match(tok) and len(tok) <= 30:
                        words.append(tok)
            else:
                found = split_authors(line)
                if found:
                    names.extend(n.split() for n in found if len(n.split()) >= 2)
    return (words or FALLBACK_WORDS), (names or FALLBACK_NAMES)


class Corpus:
    """Deterministic synthetic papers in the shape of the seed listings."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.words, names = seed_material()
        self.first = [n[0] for n in names]
        self.middle = [n[1] for n in names if len(n) > 2 and len(n[1]) <= 3]  # "M."
        self.last = [n[-1] for n in names]
        self.sentence_words = [w for w in self.words if len(w) > 1]
        self.seen: set[int] = set()

    def coined(self) -> str:
        r = self.rng
        parts = [w for w in r.sample(self.sentence_words, 3) if w[:1].isalpha()][:2] or ["Neo", "Net"]
        name = "".join(p[: r.randint(3, 5)].capitalize() for p in parts)
        if r.random() < 0.3:
            name += r.choice(["-2", "++", "-XL", "3", "-R1"])
        return name

    def abstract(self) -> str:
        r = self.rng
        n = r.randint(120, 300)
        words = r.choices(self.words, k=n)
        # sprinkle the markup pasted abstracts carry
        if r.random() < 0.15:
            words[r.randrange(n)] = r.choice(MATH)
        if r.random() < 0.05:
            words[r.randrange(n)] = r.choice(MATH)
        if r.random() < 0.08:
            words[r.randrange(n)] = f"{r.randint(1, 60)}.{r.randint(0, 9)}" + r.choice(["%", r"\%"])
        if r.random() < 0.05:
            words[r.randrange(n)] = r.choice(["R&D", "Q&A", "&", r"\&"])
        if r.random() < 0.06:
            words[r.randrange(n)] = r.choice(["max_len", r"\texttt{top_k}", "pass_at_k", "snake_case"])
        out: list[str] = []
        i = 0
        # about a third name their contribution in the 2nd or 3rd sentence (derived titles use it)
        named_at = r.choice((1, 2)) if r.random() < 0.35 else -1
        while i < n:
            length = min(r.randint(12, 30), n - i)
            chunk = words[i : i + length]
            i += length
            if len(out) == named_at:
                name = self.coined()
                if r.random() < 0.6:
                    lead = [f"We introduce \\textsc{{{name}}},", r.choice(["a", "an", "the"])]
                else:
                    lead = [f"We propose {name} ({' '.join(w.capitalize() for w in chunk[:3])}),"]
                chunk = lead + chunk[3:] if len(chunk) > 5 else lead + chunk
            for j in range(1, len(chunk) - 1):
                if r.random() < 0.05 and chunk[j][-1:].isalnum():
                    chunk[j] += ","
            chunk[0] = chunk[0][:1].upper() + chunk[0][1:]
            if not chunk[-1][-1:].isalnum():
                chunk.append("results")
            out.append(" ".join(chunk) + ".")
        if r.random() < 0.05:
            repo = self.coined().lower()
            out.append(f"Code is available at https://github.com/{r.choice(self.first).lower()}/{repo}.")
        return " ".join(out)

    def authors(self) -> str:
        r = self.rng
        count = 1 if r.random() < 0.12 else r.randint(2, 8)
        names = []
        for _ in range(count):
            parts = [r.choice(self.first)]
            if self.middle and r.random() < 0.1:
                parts.append(r.choice(self.middle))
            parts.append(r.choice(self.last))
            names.append(" ".join(parts))
        return ", ".join(names)

    def paper_block(self) -> str:
        r = self.rng
        while True:
            abstract = self.abstract()
            h = hash(abstract)
            if h not in self.seen:
                self.seen.add(h)
                break
        roll = r.random()
        with_area = roll < 0.50
        with_authors = roll < 0.45 or 0.50 <= roll < 0.55
        fields = []
        if with_area:
            area, sub = r.choice(AREAS)
            fields.append(f"{area} · {sub}")
        if with_authors:
            fields.append(self.authors())
        fields.append(abstract)
        return "\n\n".join(fields)


def write_corpus(n: int, folder: Path, seed: int) -> list[Path]:
    """N distinct papers as paper-search listings of at most PER_FILE papers each."""
    corpus = Corpus(seed * 1_000_003 + n)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k, start in enumerate(range(0, n, PER_FILE)):
        count = min(PER_FILE, n - start)
        path = folder / f"listing_{k:03d}.txt"
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("论文检索\n\n")
            f.write("\n\n".join(corpus.paper_block() for _ in range(count)))
            f.write("\n")
        files.append(path)
    return files


# ---------------------------------------------------------------------------
# child processes: each measurement runs in a fresh interpreter
# ---------------------------------------------------------------------------


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return float("nan")


def child_import(lib_dir: str, files: list[str]) -> dict:
    from papershelf.core.library import Library

    base = current_rss_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    lib = Library.open(lib_dir)
    t1 = time.perf_counter()
    reports = lib.import_files(files)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    out = {
        "open_s": t1 - t0,
        "import_s": t2 - t1,
        "total_s": t2 - t0,
        "cpu_s": cpu,
        "papers": len(lib),
        "added": sum(r.added for r in reports),
        "merged": sum(r.merged for r in reports),
        "errors": [r.error for r in reports if r.error],
        "problems": [str(p) for r in reports for p in r.problems][:5],
        "problem_count": sum(len(r.problems) for r in reports),
        "base_rss_mb": base,
    }
    lib.close()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def child_load(lib_dir: str) -> dict:
    from papershelf.core.library import Library

    base = current_rss_mb()
    c0 = time.process_time()
    t0 = time.perf_counter()
    lib = Library.open(lib_dir, readonly=True)
    t1 = time.perf_counter()
    cpu = time.process_time() - c0
    out = {
        "load_s": t1 - t0,
        "cpu_s": cpu,
        "papers": len(lib),
        "base_rss_mb": base,
        "peak_rss_mb": peak_rss_mb(),
        "tagged": sum(1 for p in lib.papers() if any(t.startswith("t") for t in p.tags)),
        "not_unread": sum(1 for p in lib.papers() if p.status.value != "unread"),
    }
    lib.close()
    return out


def child_edit(lib_dir: str, seed: int) -> dict:
    from papershelf.core.library import Library

    t0 = time.perf_counter()
    lib = Library.open(lib_dir)
    open_s = time.perf_counter() - t0
    rng = random.Random(seed)
    ids = lib.ids()
    picked = rng.sample(ids, min(len(ids), TAG_EDITS + STATUS_EDITS))
    tag_ids, status_ids = picked[:TAG_EDITS], picked[TAG_EDITS:]
    perf = time.perf_counter_ns
    # The floor: a bare append + fdatasync of a journal-sized line on the same disk, taken
    # right after each edit, so that a slow moment of the (shared, virtual) disk shows in both.
    line = b"x" * 180 + b"\n"
    scratch = Path(lib_dir) / "fsync-floor.tmp"
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sync = os.fdatasync if hasattr(os, "fdatasync") else os.fsync
    floor_ms: list[float] = []

    def floor() -> None:
        t = perf()
        os.write(fd, line)
        sync(fd)
        floor_ms.append((perf() - t) / 1e6)

    tag_ms, status_ms, unchanged = [], [], 0
    try:
        for i, pid in enumerate(tag_ids):
            t = perf()
            changed = lib.add_tags([pid], [f"t{i}"])
            tag_ms.append((perf() - t) / 1e6)
            unchanged += changed != 1
            floor()
        statuses = ["reading", "read", "to-read", "skipped"]  # never "unread": that would change nothing
        for i, pid in enumerate(status_ids):
            t = perf()
            changed = lib.set_status([pid], statuses[i % len(statuses)])
            status_ms.append((perf() - t) / 1e6)
            unchanged += changed != 1
            floor()
    finally:
        os.close(fd)
        scratch.unlink()
    t = time.perf_counter()
    lib.close()
    close_s = time.perf_counter() - t
    return {
        "open_s": open_s,
        "tag_ms": tag_ms,
        "status_ms": status_ms,
        "unchanged": unchanged,
        "close_s": close_s,
        "floor_ms": floor_ms,
        "peak_rss_mb": peak_rss_mb(),
    }


def child_profile(what: str, lib_dir: str, files: list[str], top: int) -> dict:
    import cProfile
    import io
    import pstats

    from papershelf.core.library import Library

    prof = cProfile.Profile()
    if what == "import":
        prof.enable()
        lib = Library.open(lib_dir)
        lib.import_files(files)
        prof.disable()
    else:
        prof.enable()
        lib = Library.open(lib_dir, readonly=True)
        prof.disable()
    lib.close()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(top + 12)
    tottime = io.StringIO()
    pstats.Stats(prof, stream=tottime).sort_stats("tottime").print_stats(top + 3)
    return {"cumulative": buf.getvalue(), "tottime": tottime.getvalue()}


def run_child(*args: str, timeout: float = 1800) -> dict:
    return run_script_child(HERE, *args, timeout=timeout)


def child_requested(argv: list[str], child_main) -> bool:
    """In a benchmark's main(): `--_child ARGS` means this process is one
    measurement started by run_script_child; run it and say so."""
    if argv[:1] != ["--_child"]:
        return False
    child_main(argv[1:])
    return True


def named_children(children: dict):
    """A child_main for benchmarks whose children are plain functions: the
    first argument names one, whole-number arguments become ints, the result
    is printed as the JSON line run_script_child reads."""

    def child_main(argv: list[str]) -> None:
        name, *args = argv
        print(json.dumps(children[name](*[int(a) if a.isdigit() else a for a in args])), flush=True)

    return child_main


def run_script_child(script: Path, *args: str, timeout: float, show_progress: bool = False) -> dict:
    """Run `script --_child ARGS` in a fresh process; its result is stdout's last line (JSON).

    With show_progress the child's stderr goes straight through (long runs print progress);
    otherwise it is kept and shown only if the child fails. Shared with bench_search.py.
    """
    cmd = [sys.executable, str(script), "--_child", *args]
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=None if show_progress else subprocess.PIPE, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        detail = "see its error output above" if show_progress else "\n" + proc.stderr[-4000:]
        raise RuntimeError(f"child {args[0]} failed ({proc.returncode}): {detail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def child_main(argv: list[str]) -> None:
    mode, rest = argv[0], argv[1:]
    if mode == "import":
        out = child_import(rest[0], rest[1:])
    elif mode == "load":
        out = child_load(rest[0])
    elif mode == "edit":
        out = child_edit(rest[0], int(rest[1]))
    elif mode == "profile":
        out = child_profile(rest[0], rest[1], rest[3:], int(rest[2]))
    else:
        raise SystemExit(f"unknown child mode {mode!r}")
    sys.stdout.write(json.dumps(out) + "\n")


# ---------------------------------------------------------------------------
# orchestration and reporting
# ---------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def mark(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def fsize(path: Path) -> str:
    try:
        b = path.stat().st_size
    except FileNotFoundError:
        return "absent"
    return f"{b / 2**20:,.2f} MB" if b >= 2**20 else f"{b / 1024:,.1f} KB"


def disk_report(lib_dir: Path) -> str:
    backups = sorted((lib_dir / "backups").glob("*.jsonl")) if (lib_dir / "backups").is_dir() else []
    total = sum(b.stat().st_size for b in backups)
    return (
        f"library.jsonl {fsize(lib_dir / 'library.jsonl')}, journal.jsonl {fsize(lib_dir / 'journal.jsonl')}, "
        f"backups/ {len(backups)} file(s), {total / 2**20:,.1f} MB"
    )


def bench_size(n: int, seed: int, tmp_root: str | None, profile_top: int, profile: bool) -> dict:
    print(f"\n=== {n:,} papers === (load average {', '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    with tempfile.TemporaryDirectory(prefix=f"papershelf-bench-{n}-", dir=tmp_root) as tmp:
        tmp = Path(tmp)
        lib_dir = tmp / "library"
        t = time.perf_counter()
        files = write_corpus(n, tmp / "listings", seed)
        size = sum(f.stat().st_size for f in files)
        print(
            f"corpus: {len(files)} file(s), {size / 2**20:,.1f} MB, generated in "
            f"{time.perf_counter() - t:.1f} s (not measured)",
            flush=True,
        )

        # 2 + 5. import, in its own process for a clean peak RSS
        imp = run_child("import", str(lib_dir), *map(str, files))
        pps = n / imp["total_s"]
        print(
            f"import: {imp['total_s']:.2f} s (open {imp['open_s'] * 1000:.0f} ms + import_files "
            f"{imp['import_s']:.2f} s) = {pps:,.0f} papers/s   [target >= {TARGET_IMPORT_PPS:,.0f}: "
            f"{mark(pps >= TARGET_IMPORT_PPS)}]"
        )
        print(
            f"        CPU time {imp['cpu_s']:.2f} s = {n / imp['cpu_s']:,.0f} papers per CPU-second "
            f"(wall > CPU means waiting: disk, or other processes on the machine)"
        )
        count_ok = imp["papers"] == n
        print(
            f"        len(lib) = {imp['papers']:,} (expected {n:,}: {'ok' if count_ok else 'WRONG'}); "
            f"added {imp['added']:,}, merged {imp['merged']:,}"
        )
        if imp["errors"] or imp["problem_count"]:
            print(
                f"        WARNING: {len(imp['errors'])} file error(s), {imp['problem_count']} problem(s); "
                f"first: {(imp['errors'] + imp['problems'])[:3]}"
            )
        print(
            f"        peak RSS {imp['peak_rss_mb']:,.0f} MB (interpreter + imports before open: "
            f"{imp['base_rss_mb']:.0f} MB)   [target <= {TARGET_PEAK_MB:.0f}: "
            f"{mark(imp['peak_rss_mb'] <= TARGET_PEAK_MB)}]"
        )
        print(f"        on disk after import: {disk_report(lib_dir)}", flush=True)

        # 3. cold load, each in a fresh process
        loads = [run_child("load", str(lib_dir)) for _ in range(LOAD_RUNS)]
        load_s = statistics.median(x["load_s"] for x in loads)
        load_peak = max(x["peak_rss_mb"] for x in loads)
        print(
            f"load (readonly, fresh process x{LOAD_RUNS}): median {load_s:.3f} s "
            f"[{', '.join(format(x['load_s'], '.3f') for x in loads)}]   [target <= {TARGET_LOAD_S:.1f} s: "
            f"{mark(load_s <= TARGET_LOAD_S)}]"
        )
        print(
            f"        CPU time median {statistics.median(x['cpu_s'] for x in loads):.3f} s; peak RSS max "
            f"{load_peak:,.0f} MB; papers seen {loads[0]['papers']:,}",
            flush=True,
        )

        # 4. durable single edits
        ed = run_child("edit", str(lib_dir), str(seed))
        tag50, tag95 = pct(ed["tag_ms"], 50), pct(ed["tag_ms"], 95)
        st50, st95 = pct(ed["status_ms"], 50), pct(ed["status_ms"], 95)
        print(f"edits (open for writing took {ed['open_s']:.3f} s):")
        print(
            f"        add_tags x{len(ed['tag_ms'])}: p50 {tag50:.2f} ms, p95 {tag95:.2f} ms, "
            f"max {max(ed['tag_ms']):.2f} ms   [p95 target <= {TARGET_EDIT_MS:.0f} ms: "
            f"{mark(tag95 <= TARGET_EDIT_MS)}]"
        )
        print(
            f"        set_status x{len(ed['status_ms'])}: p50 {st50:.2f} ms, p95 {st95:.2f} ms, "
            f"max {max(ed['status_ms']):.2f} ms   [p95 target <= {TARGET_EDIT_MS:.0f} ms: "
            f"{mark(st95 <= TARGET_EDIT_MS)}]"
        )
        fl50, fl95 = pct(ed["floor_ms"], 50), pct(ed["floor_ms"], 95)
        print(
            f"        disk floor (bare write + fdatasync after each edit, x{len(ed['floor_ms'])}): "
            f"p50 {fl50:.2f} ms, p95 {fl95:.2f} ms; Papershelf's own share of a median tag edit is "
            f"about {max(0.0, tag50 - fl50):.2f} ms"
        )
        if ed["unchanged"]:
            print(f"        WARNING: {ed['unchanged']} edit(s) changed nothing (not journalled)")
        print(f"        on disk after edits: {disk_report(lib_dir)}")
        after = run_child("load", str(lib_dir))
        durable_ok = after["tagged"] == len(ed["tag_ms"]) and after["not_unread"] == len(ed["status_ms"])
        print(
            f"        reload after edits: {after['load_s']:.3f} s, sees {after['tagged']} tagged and "
            f"{after['not_unread']} re-statused papers ({'ok' if durable_ok else 'EDITS LOST'})",
            flush=True,
        )

        prof = {}
        if profile_top and profile:
            for what in ("load", "import"):
                target = str(lib_dir) if what == "load" else str(tmp / "library-profile")
                prof[what] = run_child("profile", what, target, str(profile_top), *map(str, files))
                print(f"\n--- cProfile: {what} at {n:,} (top by cumulative time) ---")
                print(prof[what]["cumulative"])
                print(f"--- cProfile: {what} at {n:,} (top by own time) ---")
                print(prof[what]["tottime"], flush=True)

    return {
        "n": n,
        "pps": pps,
        "load_s": load_s,
        "tag50": tag50,
        "tag95": tag95,
        "st50": st50,
        "st95": st95,
        "imp_mb": imp["peak_rss_mb"],
        "load_mb": load_peak,
        "fl50": fl50,
        "fl95": fl95,
        "count_ok": count_ok,
        "durable_ok": durable_ok,
    }


def summary(rows: list[dict]) -> None:
    print("\n=== summary ===")
    head = (
        f"{'papers':>8} | {'import p/s':>10} | {'load s':>7} | {'tag p50/p95 ms':>15} | "
        f"{'status p50/p95 ms':>17} | {'fsync p50 ms':>12} | {'import MB':>9} | {'load MB':>7} | targets"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        misses = [
            name
            for name, ok in (
                ("import", r["pps"] >= TARGET_IMPORT_PPS),
                ("load", r["load_s"] <= TARGET_LOAD_S),
                ("edit", max(r["tag95"], r["st95"]) <= TARGET_EDIT_MS),
                ("memory", r["imp_mb"] <= TARGET_PEAK_MB),
                ("count", r["count_ok"]),
                ("durable", r["durable_ok"]),
            )
            if not ok
        ]
        print(
            f"{r['n']:>8,} | {r['pps']:>10,.0f} | {r['load_s']:>7.3f} | "
            f"{r['tag50']:>6.2f} / {r['tag95']:>6.2f} | {r['st50']:>7.2f} / {r['st95']:>7.2f} | {r['fl50']:>12.2f} | "
            f"{r['imp_mb']:>9,.0f} | {r['load_mb']:>7,.0f} | "
            + ("all PASS" if not misses else "MISS: " + ", ".join(misses))
        )
    print(
        f"targets: import >= {TARGET_IMPORT_PPS:,.0f} papers/s, load <= {TARGET_LOAD_S:.0f} s, "
        f"edit p95 <= {TARGET_EDIT_MS:.0f} ms, import peak <= {TARGET_PEAK_MB:.0f} MB (stated for 100k)"
    )
    if len(rows) > 1:
        small, big = rows[0], rows[-1]
        growth = big["tag50"] / small["tag50"] if small["tag50"] else float("inf")
        floor_growth = big["fl50"] / small["fl50"] if small["fl50"] else float("inf")
        print(
            f"edit p50 growth {small['n']:,} -> {big['n']:,}: x{growth:.2f}   "
            f"[target < x{TARGET_EDIT_GROWTH:.0f}: {mark(growth < TARGET_EDIT_GROWTH)}] "
            f"(bare fdatasync p50 moved x{floor_growth:.2f} over the same runs)"
        )


def describe_commit() -> str:
    try:
        return (
            subprocess.run(
                ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or "?"
        )
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if child_requested(argv, child_main):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated paper counts (default: %(default)s)"
    )
    ap.add_argument("--seed", type=int, default=1729, help="corpus seed (default: %(default)s)")
    ap.add_argument("--tmpdir", default=None, help="where the temporary folders go (default: the system's)")
    ap.add_argument(
        "--profile",
        nargs="?",
        type=int,
        const=5,
        default=0,
        metavar="TOP",
        help="also run import and load of the largest size under cProfile and print the top functions (default TOP: 5)",
    )
    args = ap.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    commit = describe_commit()
    print(
        f"papershelf store benchmark: commit {commit}, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPU(s), sizes {', '.join(f'{n:,}' for n in sizes)}, seed {args.seed}"
    )
    t0 = time.perf_counter()
    rows = [bench_size(n, args.seed, args.tmpdir, args.profile, n == max(sizes)) for n in sizes]
    summary(rows)
    print_footer(commit, t0)
    return 0


def print_footer(commit: str, t0: float) -> None:
    """The closing lines of a benchmark run (shared with bench_search.py)."""
    if describe_commit() != commit:
        print(
            f"WARNING: the checkout changed during the run ({commit} -> {describe_commit()}); "
            "the sizes may have measured different code"
        )
    print(
        f"total wall time {time.perf_counter() - t0:.0f} s; load average now "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPU(s)"
    )


if __name__ == "__main__":
    sys.exit(main())
