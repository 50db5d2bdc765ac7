"""Index build benchmark: Papershelf's rebuild against Whoosh's stock writer, SQLite FTS5 and tantivy.

Not a pytest test; run it by hand::

    python tests/perf/bench_build.py --papers 100000               # builds a corpus (bench_store's) first
    python tests/perf/bench_build.py --lib /tmp/me/lib --runs 3    # a library made before (a copy: it is indexed)
    python tests/perf/bench_build.py --papers 20000 --no-plain     # the quick path

Every measurement runs in a fresh process, all in one run, the kinds interleaved
run by run (the machine is shared: its load changes under a long run):

* ours: ``SearchIndex(lib).rebuild()`` (worker processes, one per core, up to 4;
  segments written by ``core/search/fastwrite.py``);
* stock: the same rebuild with Whoosh's stock segment writer (what the rebuild
  did before issue 25: ``internals.fast_writing`` forced off);
* plain Whoosh: one stock ``ix.writer()`` over the same documents, one commit, in
  one process (``--no-plain`` leaves it out: at 100,000 papers it takes minutes);
* FTS5: SQLite's ``fts5`` table (porter, unicode61, diacritics removed) over the
  same text fields, one transaction;
* tantivy: the same fields (``en_stem``), one writer with a 256 MB heap, every core
  (benchmark only; "tantivy not installed" if it is not).

Each build starts from the opened library (its papers turned into documents is
part of every build). Printed: papers/s (wall clock) and papers per CPU second
(this process and its children), min/median over the runs, ratios to ours, and
PASS/MISS against the target (2,000 papers/s). A miss never changes the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_store import child_requested, named_children, run_script_child, write_corpus

HERE = Path(__file__).resolve()
TARGET = 2000.0  # papers/s, issue 25
TEXT_FIELDS = ("title", "authors", "abstract", "notes", "area", "venue", "keywords")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _result(n: int, wall: float, cpu: float, **extra: object) -> dict:
    return {"papers": n, "wall": wall, "cpu": cpu, **extra}


def _documents(lib) -> list[dict]:
    from papershelf.core.search.schema import paper_document

    member = lib.memberships()
    return [paper_document(p, member.get(p.id, [])) for p in lib.papers()]


def child_ours(lib_dir: str, xdg: str, stock: str = "") -> dict:
    """A rebuild of the library's index (into `xdg`'s folders), with our writer or Whoosh's stock one."""
    from papershelf.core.library import Library
    from papershelf.core.search import SearchIndex, internals

    lib = Library.open(lib_dir)
    if stock:
        internals._fastwrite_verdict = "forced off by the benchmark"
    t0, c0 = time.perf_counter(), _cpu()
    ix = SearchIndex(lib)
    ix.rebuild()
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    total = ix.search("model", limit=1, facets=False).total
    ix.close()
    lib.close()
    return _result(len(lib), wall, cpu, hits=total, fast=internals.fast_writing())


def child_plain(lib_dir: str, work: str) -> dict:
    """Plain Whoosh: our schema and documents, one stock writer, one commit."""
    from whoosh import index as windex

    from papershelf.core.library import Library
    from papershelf.core.search.schema import make_schema

    lib = Library.open(lib_dir, readonly=True)
    t0, c0 = time.perf_counter(), _cpu()
    docs = _documents(lib)
    ix = windex.create_in(work, make_schema())
    writer = ix.writer(limitmb=256)
    for doc in docs:
        writer.add_document(**doc)
    writer.commit()
    return _result(len(docs), time.perf_counter() - t0, _cpu() - c0)


def child_fts5(lib_dir: str, work: str) -> dict:
    from papershelf.core.library import Library

    lib = Library.open(lib_dir, readonly=True)
    t0, c0 = time.perf_counter(), _cpu()
    docs = _documents(lib)
    db = sqlite3.connect(str(Path(work) / "fts.db"))
    cols = ", ".join(TEXT_FIELDS)
    db.execute(
        f"CREATE VIRTUAL TABLE papers USING fts5(id UNINDEXED, {cols}, tokenize='porter unicode61 remove_diacritics 2')"
    )
    with db:
        db.executemany(
            f"INSERT INTO papers(id, {cols}) VALUES (?{', ?' * len(TEXT_FIELDS)})",
            ([d["id"], *(d.get(f, "") for f in TEXT_FIELDS)] for d in docs),
        )
    hits = db.execute("SELECT count(*) FROM papers WHERE papers MATCH 'model'").fetchone()[0]
    db.close()
    return _result(len(docs), time.perf_counter() - t0, _cpu() - c0, hits=hits)


def child_tantivy(lib_dir: str, work: str) -> dict:
    try:
        import tantivy
    except ImportError:
        return {"missing": True}
    from papershelf.core.library import Library

    lib = Library.open(lib_dir, readonly=True)
    t0, c0 = time.perf_counter(), _cpu()
    docs = _documents(lib)
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    for f in TEXT_FIELDS:
        builder.add_text_field(f, tokenizer_name="en_stem")
    index = tantivy.Index(builder.build(), path=work)
    writer = index.writer(heap_size=256_000_000)
    for d in docs:
        writer.add_document(tantivy.Document(**{f: d[f] for f in ("id", *TEXT_FIELDS) if d.get(f)}))
    writer.commit()
    writer.wait_merging_threads()
    return _result(len(docs), time.perf_counter() - t0, _cpu() - c0)


CHILDREN = {
    "ours": child_ours,
    "plain": child_plain,
    "fts5": child_fts5,
    "tantivy": child_tantivy,
}


def run(kind: str, lib_dir: Path, scratch: Path) -> dict:
    work = scratch / f"{kind}-{time.monotonic_ns()}"
    work.mkdir(parents=True)
    env_dirs = {name: str(work / name) for name in ("data", "cache", "state", "config")}
    old = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    for name, path in env_dirs.items():
        os.environ[f"XDG_{name.upper()}_HOME"] = path  # each rebuild into folders of its own
    try:
        if kind in ("ours", "stock"):
            args = ["ours", str(lib_dir), str(work), *(["stock"] if kind == "stock" else [])]
        else:
            args = [kind, str(lib_dir), str(work)]
        return run_script_child(HERE, *args, timeout=4 * 3600)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(work, ignore_errors=True)


def make_library(n: int, scratch: Path, seed: int) -> Path:
    from papershelf.core.library import Library

    lib_dir = scratch / "lib"
    files = write_corpus(n, scratch / "src", seed)
    lib = Library.open(lib_dir)
    lib.import_files(files)
    lib.close()
    return lib_dir


def report(results: dict[str, list[dict]]) -> None:
    def rates(kind: str, key: str) -> list[float]:
        return [r["papers"] / r[key] for r in results.get(kind, []) if "papers" in r]

    ours = rates("ours", "wall")
    ours_med = statistics.median(ours) if ours else float("nan")
    print(f"\n{'build':<14} {'papers/s min':>13} {'median':>9} {'per CPU-s':>10} {'ours/this':>10}")
    for kind in ("ours", "stock", "plain", "fts5", "tantivy"):
        if kind not in results:
            continue
        if any(r.get("missing") for r in results[kind]):
            print(f"{kind:<14} tantivy not installed")
            continue
        wall, cpu = rates(kind, "wall"), rates(kind, "cpu")
        med = statistics.median(wall)
        print(f"{kind:<14} {min(wall):>13,.0f} {med:>9,.0f} {statistics.median(cpu):>10,.0f} {ours_med / med:>9.2f}x")
    if ours:
        mark = "PASS" if ours_med >= TARGET else "MISS"
        print(f"\nours: median {ours_med:,.0f} papers/s (min {min(ours):,.0f}) -> target {TARGET:,.0f}/s: {mark}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if child_requested(argv, named_children(CHILDREN)):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--lib", type=Path, help="an existing library (a copy: it is indexed), instead of a new corpus")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1729)
    ap.add_argument("--no-plain", action="store_true", help="leave plain Whoosh out")
    ap.add_argument("--kinds", default="ours,stock,plain,fts5,tantivy")
    args = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        lib_dir = args.lib or make_library(args.papers, scratch, args.seed)
        kinds = [k for k in args.kinds.split(",") if not (k == "plain" and args.no_plain)]
        print(f"library {lib_dir}; kinds {', '.join(kinds)}; {args.runs} runs; cores {os.cpu_count()}", flush=True)
        results: dict[str, list[dict]] = {}
        for n in range(args.runs):
            for kind in kinds:
                r = run(kind, lib_dir, scratch)
                results.setdefault(kind, []).append(r)
                if r.get("missing"):
                    print(f"run {n + 1} {kind}: tantivy not installed", flush=True)
                else:
                    rate = r["papers"] / r["wall"]
                    print(
                        f"run {n + 1} {kind}: {r['wall']:.1f} s, {rate:,.0f} papers/s, cpu {r['cpu']:.1f} s", flush=True
                    )
        report(results)
        print(json.dumps(results))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
