"""Search benchmark: index build, index open, query latency with snippets, and a naive Whoosh baseline.

Not a pytest test (nothing here is named ``test_*``); run it by hand::

    python tests/perf/bench_search.py                      # 10,000 and 100,000 papers
    python tests/perf/bench_search.py --sizes 10000        # the quick path (a few minutes)
    python tests/perf/bench_search.py --sizes 10000 --queries 3 --repeat 3 --no-naive

For each size N it builds, in a fresh temporary directory, the synthetic
corpus of ``bench_store.py`` (``write_corpus``), then, each step in a fresh
subprocess so that no state is shared:

* build: ``Library.open(dir)`` + ``import_files`` (timed), then ~5% of the
  papers get tags ("to-read", "llm", "theory") and ~10% a status (timed on
  their own, so that filters and facets have something to count), then
  ``SearchIndex(lib).rebuild()`` (timed); papers/s for import, for the index
  and for both; the index folder's size on disk;
* open: ``Library.open(dir, readonly=True)`` and ``SearchIndex(lib).open()``
  timed separately (3 fresh processes; the index must be found current, not
  rebuilt), plus the first search after opening;
* queries: a fixed, deterministic mix drawn from the corpus (single common
  word, single rare word, two common words, a two-word phrase from a real
  abstract, ``author:<surname>``, ``area:<word>``, a prefix ``optim*``, a
  fuzzy ``<word with one letter changed>~``), each kind also with a status or
  tag filter. Every query is timed as ``search(q, limit=50, facets=True)``
  and as that plus ``snippets(first 20 ids, q)``; the first run of each query
  (cold) is reported apart from the repeats (warm). The slowest kind is then
  run once under cProfile;
* naive: a plain Whoosh index with defaults over the same papers (id, title,
  abstract, authors; one writer, one commit), its build speed, and the same
  query texts without filters through ``MultifieldParser`` + ``FuzzyTermPlugin``
  with ``searcher.search(q, limit=50)`` and ``hit.highlights("abstract")`` for
  the top 20. ``area:`` queries have no counterpart there and are left out of
  both sides of the comparison.

Targets are printed next to the figures as PASS/MISS; a miss never changes
the exit status. Corpus generation is not measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
# bench_store, beside this script (sys.path[0] when it runs), puts app/ on the path

import itertools

from bench_store import (
    child_requested,
    describe_commit,
    mark,
    pct,
    peak_rss_mb,
    print_footer,
    run_script_child,
    write_corpus,
)

DEFAULT_SIZES = (10_000, 100_000)
DEFAULT_QUERIES = 5  # distinct queries per kind
DEFAULT_REPEAT = 5  # runs per query: the first is "cold", the rest "warm"
OPEN_RUNS = 3
LIMIT = 50
SNIPPET_ROWS = 20
TAGS = ("to-read", "llm", "theory")
STATUSES = ("to-read", "reading", "read", "skipped")
TAG_SHARE = 0.05
STATUS_SHARE = 0.10
VOCAB_SAMPLE = 3_000  # abstracts read to draw query words from

# Targets (stated for 100k papers; printed for every size).
TARGET_QUERY_P95_MS = 50.0  # search + snippets for 20 rows, warm, p95 over the whole mix
TARGET_BUILD_PPS = 2_000.0  # import + index
TARGET_OPEN_MS = 200.0  # SearchIndex(lib).open() on a current index
TARGET_KIND_P95_MS = 20.0  # each kind's search + snippets p95, warm (issue 25: phrases as the others)
TARGET_GROWTH = 3.5  # each kind's p95 from 100k to 300k papers, at most this many times (issue 25)

BASE_KINDS = ("common", "rare", "two-common", "phrase", "author", "area", "prefix", "fuzzy")
NOT_IN_NAIVE = ("area",)  # the naive schema has no area field


def say(*parts) -> None:
    """Progress from a child: stderr, which the parent lets through."""
    print("   ", *parts, file=sys.stderr, flush=True)


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


# ---------------------------------------------------------------------------
# child: import, tag, index
# ---------------------------------------------------------------------------


def child_build(lib_dir: str, seed: int, files: list[str]) -> dict:
    from papershelf.core.library import Library
    from papershelf.core.search import SearchIndex

    t0 = time.perf_counter()
    lib = Library.open(lib_dir)
    reports = lib.import_files(files)
    import_s = time.perf_counter() - t0
    n = len(lib)
    say(f"imported {n:,} papers in {import_s:.1f} s ({n / import_s:,.0f} papers/s)")

    rng = random.Random(seed)
    ids = lib.ids()
    t = time.perf_counter()
    by_tag: dict[str, list[str]] = {tag: [] for tag in TAGS}
    for pid in rng.sample(ids, max(1, round(n * TAG_SHARE))):
        for tag in rng.sample(TAGS, rng.randint(1, len(TAGS))):
            by_tag[tag].append(pid)
    by_status: dict[str, list[str]] = {s: [] for s in STATUSES}
    for i, pid in enumerate(rng.sample(ids, max(1, round(n * STATUS_SHARE)))):
        by_status[STATUSES[i % len(STATUSES)]].append(pid)
    for tag, members in by_tag.items():
        lib.add_tags(members, [tag])
    for status, members in by_status.items():
        lib.set_status(members, status)
    edit_s = time.perf_counter() - t
    tagged = sum(1 for p in lib.papers() if p.tags)
    statused = sum(1 for p in lib.papers() if p.status.value != "unread")
    say(f"tagged {tagged:,} and set the status of {statused:,} papers in {edit_s:.2f} s")

    started = time.perf_counter()
    step = max(1000, (n // 10) // 1000 * 1000)

    def progress(done: int, total: int) -> None:
        if done and (done % step == 0 or done == total):
            el = time.perf_counter() - started
            say(f"index: {done:,}/{total:,} ({100 * done / total:.0f}%) in {el:.0f} s, {done / el:,.0f} papers/s")

    ix = SearchIndex(lib)
    t = time.perf_counter()
    ix.rebuild(progress=progress)
    index_s = time.perf_counter() - t
    ix.close()
    lib.close()
    return {
        "papers": n,
        "import_s": import_s,
        "index_s": index_s,
        "edit_s": edit_s,
        "tagged": tagged,
        "statused": statused,
        "tag_counts": {k: len(v) for k, v in by_tag.items()},
        "status_counts": {k: len(v) for k, v in by_status.items()},
        "errors": [r.error for r in reports if r.error],
        "peak_rss_mb": peak_rss_mb(),
    }


# ---------------------------------------------------------------------------
# child: open the library and the index
# ---------------------------------------------------------------------------


def index_folder(lib_dir: str | Path) -> Path:
    """Where the library's index lives: this machine's folder for it, not the library folder."""
    from papershelf.core.search import INDEX_DIR
    from papershelf.core.store import machine

    return machine.local_dir(Path(lib_dir), machine.device_id()) / INDEX_DIR


def child_open(lib_dir: str) -> dict:
    from papershelf.core.library import Library
    from papershelf.core.search import STATE_FILE, SearchIndex

    index_dir = index_folder(lib_dir)
    before = {f.name: f.stat().st_mtime_ns for f in index_dir.iterdir()}
    t0 = time.perf_counter()
    lib = Library.open(lib_dir, readonly=True)
    t1 = time.perf_counter()
    ix = SearchIndex(lib).open()
    t2 = time.perf_counter()
    res = ix.search("model", limit=LIMIT, facets=True)
    t3 = time.perf_counter()
    after = {f.name: f.stat().st_mtime_ns for f in index_dir.iterdir()}
    out = {
        "lib_ms": (t1 - t0) * 1000,
        "index_ms": (t2 - t1) * 1000,
        "first_search_ms": (t3 - t2) * 1000,
        "rebuilt_because": ix.rebuilt_because,
        "stale": ix.stale,
        "docs": ix.doc_count(),
        "first_total": res.total,
        "index_files_touched": sorted(k for k in after if before.get(k) != after[k]),
        "state_written": before.get(STATE_FILE) != after.get(STATE_FILE),
        "papers": len(lib),
    }
    ix.close()
    lib.close()
    return out


# ---------------------------------------------------------------------------
# the query mix (deterministic: drawn from the library and its index)
# ---------------------------------------------------------------------------

_ALPHA_RE = re.compile(r"[A-Za-z]+")
AREA_WORDS = (
    "learning",
    "optimization",
    "theory",
    "models",
    "robotics",
    "fairness",
    "inference",
    "networks",
    "evaluation",
    "health",
)


def _typo(word: str) -> str:
    """One letter changed, near the middle, deterministically."""
    i = len(word) // 2
    c = word[i]
    vowels = "aeiou"
    new = vowels[(vowels.index(c) + 1) % 5] if c in vowels else ("b" if c != "b" else "d")
    return word[:i] + new + word[i + 1 :]


def build_mix(lib, index_dir: Path, per_kind: int) -> list[dict]:
    from whoosh import index as windex
    from whoosh.analysis import STOP_WORDS

    from papershelf.core.render import plain_text
    from papershelf.core.search import PaperAnalyzer

    analyzer = PaperAnalyzer()
    papers = sorted(lib.papers(), key=lambda p: p.id)
    stride = max(1, len(papers) // VOCAB_SAMPLE)
    sample = papers[::stride][:VOCAB_SAMPLE]
    surface: dict[str, Counter] = {}  # stem -> surface forms seen
    for p in sample:
        for w in _ALPHA_RE.findall(plain_text(p.abstract)):
            lw = w.lower()
            if len(lw) < 4 or lw in STOP_WORDS:
                continue
            toks = [t.text for t in analyzer(lw)]
            if len(toks) == 1:
                surface.setdefault(toks[0], Counter())[lw] += 1
    ix = windex.open_dir(str(index_dir))
    with ix.searcher() as s:
        df = {stem: s.doc_frequency("abstract", stem) for stem in surface}
    ix.close()
    ranked = sorted((stem for stem in df if df[stem] > 0), key=lambda st: (-df[st], st))
    best = {stem: c.most_common(1)[0][0] for stem, c in surface.items()}
    common = [best[st] for st in ranked[: 2 * per_kind]]
    rare_pool = [st for st in sorted(ranked, key=lambda st: (df[st], st)) if best[st].isalpha() and len(best[st]) >= 5]
    rarest = [st for st in rare_pool if df[st] == df[rare_pool[0]]] if rare_pool else []
    if len(rarest) < per_kind:
        rarest = rare_pool[: 20 * per_kind]
    rare = [best[st] for st in rarest[:: max(1, len(rarest) // per_kind)][:per_kind]]  # spread, not all "ab…"
    mid = ranked[len(ranked) // 10 : len(ranked) // 3]
    fuzzy_src = [best[st] for st in mid if len(best[st]) >= 7][:: max(1, len(mid) // (4 * per_kind))][:per_kind]

    phrases = []
    for p in sample[:: max(1, len(sample) // (3 * per_kind))]:
        words = plain_text(p.abstract).split()
        for a, b in itertools.pairwise(words):
            if (
                a.isalpha()
                and b.isalpha()
                and len(a) >= 4
                and len(b) >= 4
                and a.lower() not in STOP_WORDS
                and b.lower() not in STOP_WORDS
            ):
                phrases.append(f'"{a.lower()} {b.lower()}"')
                break
        if len(phrases) == per_kind:
            break
    surnames = []
    for p in sample:
        if p.authors:
            last = p.authors[-1].split()[-1]
            if last.isascii() and last.isalpha() and len(last) >= 3 and last.lower() not in surnames:
                surnames.append(last.lower())
        if len(surnames) == per_kind:
            break
    prefixes = ["optim"]
    for w in common + [best[st] for st in ranked[2 * per_kind :]]:
        if len(w) >= 7 and w[:5] not in prefixes:
            prefixes.append(w[:5])
        if len(prefixes) == per_kind:
            break

    texts = {
        "common": common[:per_kind],
        "rare": rare,
        "two-common": [f"{common[2 * i]} {common[2 * i + 1]}" for i in range(per_kind)],
        "phrase": phrases,
        "author": [f"author:{s}" for s in surnames],
        "area": [f"area:{w}" for w in AREA_WORDS[:per_kind]],
        "prefix": [f"{p}*" for p in prefixes],
        "fuzzy": [f"{_typo(w)}~" for w in fuzzy_src],
    }
    mix = []
    for kind in BASE_KINDS:
        for text in texts[kind]:
            mix.append({"kind": kind, "text": text, "status": None, "tag": None})
    for kind in BASE_KINDS:
        for i, text in enumerate(texts[kind]):
            flt = {"status": "to-read", "tag": None} if i % 2 == 0 else {"status": None, "tag": "llm"}
            mix.append({"kind": kind + "+filter", "text": text, **flt})
    return mix


def _time_mix(mix: list[dict], run_one, repeat: int, label: str) -> dict:
    """Run every query `repeat` times: pass 0 is cold, the rest warm. run_one(q) -> (search_ms, total_ms, hits)."""
    cold_s, cold_t, warm_s, warm_t, hits = {}, {}, {}, {}, {}
    for r in range(repeat):
        t = time.perf_counter()
        for i, q in enumerate(mix):
            s_ms, t_ms, n_hits = run_one(q)
            if r == 0:
                cold_s[i], cold_t[i], hits[i] = s_ms, t_ms, n_hits
            else:
                warm_s.setdefault(i, []).append(s_ms)
                warm_t.setdefault(i, []).append(t_ms)
        say(
            f"{label}: pass {r + 1}/{repeat} ({'cold' if r == 0 else 'warm'}) over {len(mix)} queries "
            f"in {time.perf_counter() - t:.1f} s"
        )
    return {
        "cold_search": [cold_s[i] for i in range(len(mix))],
        "cold_total": [cold_t[i] for i in range(len(mix))],
        "warm_search": [warm_s.get(i, []) for i in range(len(mix))],
        "warm_total": [warm_t.get(i, []) for i in range(len(mix))],
        "hits": [hits[i] for i in range(len(mix))],
    }


def child_query(
    lib_dir: str, per_kind: int, repeat: int, mix_out: str, profile_top: int, profile_kind: str = ""
) -> dict:
    from papershelf.core.library import Library
    from papershelf.core.search import SearchIndex

    lib = Library.open(lib_dir, readonly=True)
    t = time.perf_counter()
    mix = build_mix(lib, index_folder(lib_dir), per_kind)
    say(
        f"query mix: {len(mix)} queries in {len({q['kind'] for q in mix})} kinds, drawn in "
        f"{time.perf_counter() - t:.1f} s (not measured)"
    )
    Path(mix_out).write_text(json.dumps(mix), encoding="utf-8")
    ix = SearchIndex(lib).open()
    if ix.rebuilt_because:
        say(f"WARNING: the index was rebuilt on open: {ix.rebuilt_because}")
    perf = time.perf_counter
    totals: list[int] = []
    facet_sizes: list[int] = []

    def run_one(q):
        t0 = perf()
        res = ix.search(q["text"], status=q["status"], tag=q["tag"], limit=LIMIT, facets=True)
        t1 = perf()
        snips = ix.snippets(res.ids[:SNIPPET_ROWS], q["text"])
        t2 = perf()
        totals.append(res.total)
        facet_sizes.append(sum(len(v) for v in res.facets.values()))
        return (t1 - t0) * 1000, (t2 - t0) * 1000, (res.total, len(res.ids), sum(1 for v in snips.values() if v))

    # the very first search of the process pays for opening the searcher
    first = run_one({"text": "the", "status": None, "tag": None})
    out = _time_mix(mix, run_one, repeat, "ours")
    out["first_ms"] = first[1]
    out["facets_nonempty"] = sum(1 for f in facet_sizes if f)
    out["peak_rss_mb"] = peak_rss_mb()

    # profile the slowest kind (warm p95 of search + snippets) once
    if profile_top:
        import cProfile
        import io
        import pstats

        by_kind: dict[str, list[float]] = {}
        for q, runs in zip(mix, out["warm_total"], strict=False):
            by_kind.setdefault(q["kind"], []).extend(runs)
        slowest = profile_kind if profile_kind in by_kind else max(by_kind, key=lambda k: pct(by_kind[k], 95))
        queries = [q for q in mix if q["kind"] == slowest]
        prof = cProfile.Profile()
        prof.enable()
        for q in queries:
            run_one(q)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(profile_top + 12)  # past the wrappers
        own = io.StringIO()
        pstats.Stats(prof, stream=own).sort_stats("tottime").print_stats(profile_top)
        out["profile"] = {
            "kind": slowest,
            "queries": [q["text"] for q in queries],
            "cumulative": buf.getvalue(),
            "tottime": own.getvalue(),
        }
    ix.close()
    lib.close()
    return out


# ---------------------------------------------------------------------------
# child: the naive baseline
# ---------------------------------------------------------------------------


def naive_text(q: dict) -> str | None:
    """The query text for the naive baseline, or None: it has no filters and no area field."""
    if "+" in q["kind"] or q["kind"] in NOT_IN_NAIVE:
        return None
    return re.sub(r"\bauthor:", "authors:", q["text"])


def child_naive(lib_dir: str, work_dir: str, mix_file: str, repeat: int) -> dict:
    from whoosh import index as windex
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.qparser import FuzzyTermPlugin, MultifieldParser

    from papershelf.core.library import Library
    from papershelf.core.render import plain_text

    lib = Library.open(lib_dir, readonly=True)
    papers = list(lib.papers())
    n = len(papers)
    folder = Path(work_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    schema = Schema(id=ID(stored=True), title=TEXT(stored=True), abstract=TEXT(stored=True), authors=TEXT(stored=True))
    step = max(1000, (n // 10) // 1000 * 1000)
    t0 = time.perf_counter()
    ix = windex.create_in(str(folder), schema)
    writer = ix.writer()
    for i, p in enumerate(papers, 1):
        # the same text ours indexes (see index.paper_document)
        writer.add_document(
            id=p.id, title=plain_text(p.title), abstract=plain_text(p.abstract), authors=" ; ".join(p.authors)
        )
        if i % step == 0:
            el = time.perf_counter() - t0
            say(f"naive index: {i:,}/{n:,} ({100 * i / n:.0f}%) in {el:.0f} s, {i / el:,.0f} papers/s")
    t_commit = time.perf_counter()
    writer.commit()
    build_s = time.perf_counter() - t0
    say(
        f"naive index built in {build_s:.1f} s ({n / build_s:,.0f} papers/s; "
        f"commit {time.perf_counter() - t_commit:.1f} s)"
    )
    size = folder_bytes(folder)

    mix = [q for q in json.loads(Path(mix_file).read_text(encoding="utf-8")) if naive_text(q) is not None]
    parser = MultifieldParser(["title", "abstract", "authors"], ix.schema)
    parser.add_plugin(FuzzyTermPlugin())
    searcher = ix.searcher()
    perf = time.perf_counter

    def run_one(q):
        t0 = perf()
        results = searcher.search(parser.parse(naive_text(q)), limit=LIMIT)
        ids = [hit["id"] for hit in results]
        t1 = perf()
        snips = [hit.highlights("abstract") for hit in results[:SNIPPET_ROWS]]
        t2 = perf()
        # the true total, after the clock (ours counts it inside search(); estimated_length() is a bound)
        return (t1 - t0) * 1000, (t2 - t0) * 1000, (len(results), len(ids), sum(1 for s in snips if s))

    first = run_one({"kind": "common", "text": "the"})
    out = _time_mix(mix, run_one, repeat, "naive")
    out.update(first_ms=first[1], build_s=build_s, papers=n, index_bytes=size, mix=mix, peak_rss_mb=peak_rss_mb())
    searcher.close()
    ix.close()
    lib.close()
    shutil.rmtree(folder, ignore_errors=True)
    return out


# ---------------------------------------------------------------------------
# child: the anchors (SQLite FTS5, tantivy), same papers, same query texts
# ---------------------------------------------------------------------------

# what each anchor cannot ask: FTS5 has no fuzzy words; tantivy's query parser no
# prefix word (asked as a regex query on each field instead, see tantivy_query)
FTS5_MISSING = ("fuzzy",)
FTS5_WEIGHTS = "0, 0, 0, 3.0, 1.0, 2.0, 1.0"  # id status tags | title abstract authors area (ours: title 3, authors 2)


def _anchor_papers(lib_dir: str):
    from papershelf.core.library import Library
    from papershelf.core.render import plain_text

    lib = Library.open(lib_dir, readonly=True)
    rows = [
        {
            "id": p.id,
            "status": p.status.value,
            "tags": " ".join(p.tags),
            "title": plain_text(p.title),
            "abstract": plain_text(p.abstract),
            "authors": " ; ".join(p.authors),
            "area": f"{p.area} {p.subarea}".strip(),
        }
        for p in lib.papers()
    ]
    lib.close()
    return rows


def fts5_query(q: dict) -> tuple[str, str, list] | None:
    """(MATCH text, extra WHERE, its parameters) for FTS5, or None: no counterpart."""
    base = q["kind"].split("+")[0]
    if base in FTS5_MISSING:
        return None
    text = re.sub(r"\bauthor:", "authors:", q["text"])
    where, params = "", []
    if q["status"]:
        where, params = " AND status = ?", [q["status"]]
    elif q["tag"]:
        where, params = " AND (' ' || tags || ' ') LIKE ?", [f"% {q['tag']} %"]
    return text, where, params


def child_fts5(lib_dir: str, work_dir: str, mix_file: str, repeat: int) -> dict:
    import sqlite3

    rows = _anchor_papers(lib_dir)
    folder = Path(work_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "fts.db")
    t0 = time.perf_counter()
    db.execute(
        "CREATE VIRTUAL TABLE papers USING fts5(id UNINDEXED, status UNINDEXED, tags UNINDEXED, "
        "title, abstract, authors, area, tokenize='porter unicode61')"
    )
    cols = ("id", "status", "tags", "title", "abstract", "authors", "area")
    db.executemany(
        f"INSERT INTO papers({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        ([r[c] for c in cols] for r in rows),
    )
    db.commit()
    build_s = time.perf_counter() - t0
    say(f"FTS5 built in {build_s:.1f} s ({len(rows) / build_s:,.0f} papers/s)")
    mix = json.loads(Path(mix_file).read_text(encoding="utf-8"))
    perf = time.perf_counter
    rank = f"bm25(papers, {FTS5_WEIGHTS})"

    def run_one(q):
        match, where, params = fts5_query(q)
        t0 = perf()
        top = db.execute(
            f"SELECT rowid, id FROM papers WHERE papers MATCH ?{where} ORDER BY {rank} LIMIT {LIMIT}",
            [match, *params],
        ).fetchall()
        total = db.execute(f"SELECT count(*) FROM papers WHERE papers MATCH ?{where}", [match, *params]).fetchone()[0]
        t1 = perf()
        rowids = [r[0] for r in top[:SNIPPET_ROWS]]
        snips = db.execute(
            f"SELECT snippet(papers, 4, '<b>', '</b>', '…', 24) FROM papers WHERE papers MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(rowids))})",
            [match, *rowids],
        ).fetchall()
        t2 = perf()
        return (t1 - t0) * 1000, (t2 - t0) * 1000, (total, len(top), sum(1 for (s,) in snips if s))

    asked = [q for q in mix if fts5_query(q) is not None]
    out = _time_mix(asked, run_one, repeat, "FTS5")
    out.update(build_s=build_s, papers=len(rows), mix=asked, index_bytes=folder_bytes(folder))
    db.close()
    shutil.rmtree(folder, ignore_errors=True)
    return out


def tantivy_query(tv, index, schema, q: dict):
    """The query for tantivy (its parser, the same text; a prefix word as a regex query
    on each field), with the filter as a required term."""
    fields = ["title", "abstract", "authors", "area"]
    boosts = {"title": 3.0, "authors": 2.0}
    base = q["kind"].split("+")[0]
    text = re.sub(r"\bauthor:", "authors:", q["text"])
    if base == "prefix":
        stem = text.rstrip("*").lower()
        parts = [(tv.Occur.Should, tv.Query.regex_query(schema, f, re.escape(stem) + ".*")) for f in fields]
        query = tv.Query.boolean_query(parts)
    elif base == "fuzzy":
        word = text.rstrip("~").lower()
        parts = [(tv.Occur.Should, tv.Query.fuzzy_term_query(schema, f, word, distance=1)) for f in fields]
        query = tv.Query.boolean_query(parts)
    else:
        query = index.parse_query(text, fields, field_boosts=boosts, conjunction_by_default=True)
    if q["status"]:
        query = tv.Query.boolean_query(
            [(tv.Occur.Must, query), (tv.Occur.Must, tv.Query.term_query(schema, "status", q["status"]))]
        )
    elif q["tag"]:
        query = tv.Query.boolean_query(
            [(tv.Occur.Must, query), (tv.Occur.Must, tv.Query.term_query(schema, "tags", q["tag"]))]
        )
    return query


def child_tantivy(lib_dir: str, work_dir: str, mix_file: str, repeat: int) -> dict:
    try:
        import tantivy as tv
    except ImportError:
        return {"missing": "tantivy not installed (pip install tantivy: a benchmark-only dependency)"}
    rows = _anchor_papers(lib_dir)
    folder = Path(work_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    sb = tv.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("status", tokenizer_name="raw")
    sb.add_text_field("tags", tokenizer_name="raw")
    for f in ("title", "abstract", "authors", "area"):
        sb.add_text_field(f, stored=f == "abstract", tokenizer_name="en_stem", index_option="position")
    schema = sb.build()
    t0 = time.perf_counter()
    index = tv.Index(schema, path=str(folder))
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for r in rows:
        doc = tv.Document()
        for k, v in r.items():
            if k == "tags":
                for tag in v.split():
                    doc.add_text("tags", tag)
            elif v:
                doc.add_text(k, v)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    build_s = time.perf_counter() - t0
    say(f"tantivy built in {build_s:.1f} s ({len(rows) / build_s:,.0f} papers/s, one thread)")
    searcher = index.searcher()
    mix = json.loads(Path(mix_file).read_text(encoding="utf-8"))
    perf = time.perf_counter

    def run_one(q):
        t0 = perf()
        query = tantivy_query(tv, index, schema, q)
        res = searcher.search(query, LIMIT, count=True)
        ids = [searcher.doc(addr)["id"][0] for _, addr in res.hits]
        t1 = perf()
        gen = tv.SnippetGenerator.create(searcher, query, schema, "abstract")
        snips = [gen.snippet_from_doc(searcher.doc(addr)).to_html() for _, addr in res.hits[:SNIPPET_ROWS]]
        t2 = perf()
        return (t1 - t0) * 1000, (t2 - t0) * 1000, (res.count, len(ids), sum(1 for s in snips if s))

    out = _time_mix(mix, run_one, repeat, "tantivy")
    out.update(build_s=build_s, papers=len(rows), mix=mix, index_bytes=folder_bytes(folder))
    shutil.rmtree(folder, ignore_errors=True)
    return out


# ---------------------------------------------------------------------------
# plumbing
# ---------------------------------------------------------------------------


BASE_APP_ENV = "PAPERSHELF_BENCH_APP"


def run_child(*args: str, timeout: float = 4 * 3600, app: str | None = None) -> dict:
    """Run a child; its progress (stderr) goes straight through, its result is stdout's last line.
    `app`: the app/ folder of another checkout, whose code the child runs (before/after)."""
    if app:
        os.environ[BASE_APP_ENV] = app
    try:
        return run_script_child(HERE, *args, timeout=timeout, show_progress=True)
    finally:
        os.environ.pop(BASE_APP_ENV, None)


def child_main(argv: list[str]) -> None:
    app = os.environ.get(BASE_APP_ENV)
    if app:  # --base-app: this child measures another tree's code
        sys.path.insert(0, app)
    mode, rest = argv[0], argv[1:]
    if mode == "build":
        out = child_build(rest[0], int(rest[1]), rest[2:])
    elif mode == "open":
        out = child_open(rest[0])
    elif mode == "query":
        out = child_query(rest[0], int(rest[1]), int(rest[2]), rest[3], int(rest[4]), *rest[5:6])
    elif mode == "naive":
        out = child_naive(rest[0], rest[1], rest[2], int(rest[3]))
    elif mode == "fts5":
        out = child_fts5(rest[0], rest[1], rest[2], int(rest[3]))
    elif mode == "tantivy":
        out = child_tantivy(rest[0], rest[1], rest[2], int(rest[3]))
    else:
        raise SystemExit(f"unknown child mode {mode!r}")
    sys.stdout.write(json.dumps(out) + "\n")


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def stats(values: list[float]) -> tuple[float, float, float]:
    return (pct(values, 50), pct(values, 95), max(values)) if values else (float("nan"),) * 3


def flat(runs: list[list[float]]) -> list[float]:
    return [x for r in runs for x in r]


def kind_stats(mix: list[dict], res: dict) -> dict[str, dict]:
    kinds: dict[str, dict] = {}
    for i, q in enumerate(mix):
        k = kinds.setdefault(q["kind"], {"search": [], "total": [], "cold": [], "hits": [], "example": q["text"]})
        k["search"] += res["warm_search"][i]
        k["total"] += res["warm_total"][i]
        k["cold"].append(res["cold_total"][i])
        k["hits"].append(res["hits"][i][0])
    return kinds


def print_kinds(title: str, mix: list[dict], res: dict) -> None:
    kinds = kind_stats(mix, res)
    print(f"  {title}")
    head = (
        f"    {'kind':<18} {'example':<26} {'hits (median)':>13} | {'search p50/p95/max ms':>23} | "
        f"{'+snippets(20) p50/p95/max ms':>30} | {'cold p50/max':>13}"
    )
    print(head)
    for name, k in kinds.items():
        s, t, c = stats(k["search"]), stats(k["total"]), stats(k["cold"])
        print(
            f"    {name:<18} {k['example'][:26]:<26} {statistics.median(k['hits']):>13,.0f} | "
            f"{s[0]:>6.1f} / {s[1]:>6.1f} / {s[2]:>7.1f} | {t[0]:>8.1f} / {t[1]:>7.1f} / {t[2]:>8.1f} | "
            f"{c[0]:>5.1f} / {c[2]:>6.1f}"
        )
    s, t = stats(flat(res["warm_search"])), stats(flat(res["warm_total"]))
    c = stats(res["cold_total"])
    print(
        f"    {'ALL (warm)':<18} {'':<26} {'':>13} | {s[0]:>6.1f} / {s[1]:>6.1f} / {s[2]:>7.1f} | "
        f"{t[0]:>8.1f} / {t[1]:>7.1f} / {t[2]:>8.1f} | {c[0]:>5.1f} / {c[2]:>6.1f}"
    )
    print(
        f"    {'ALL (cold)':<18} {'first run of each query':<26} {'':>13} | "
        f"{pct(res['cold_search'], 50):>6.1f} / {pct(res['cold_search'], 95):>6.1f} / "
        f"{max(res['cold_search']):>7.1f} | "
        f"{c[0]:>8.1f} / {c[1]:>7.1f} / {c[2]:>8.1f} |"
    )


def print_side_by_side(runs: dict[str, tuple[list[dict], dict]]) -> dict:
    """Each kind's warm p95 (search + snippets) for every run, and ours as a ratio of each other."""
    p95: dict[str, dict[str, float]] = {}
    for name, (mix, res) in runs.items():
        for kind, k in kind_stats(mix, res).items():
            p95.setdefault(kind, {})[name] = pct(k["total"], 95)
    others = [n for n in runs if n != "ours"]
    print("\n  side by side: search + snippets(20), warm p95 ms (ours / other: below 1 means ours is faster)")
    head = f"    {'kind':<18} {'ours':>8} | " + " | ".join(f"{n:>8} {'ours/' + n:>12}" for n in others)
    print(head + f" | target <= {TARGET_KIND_P95_MS:.0f} ms (phrase: <= 3x FTS5)")
    for kind, by in p95.items():
        mine = by.get("ours", math.nan)
        cells = []
        for n in others:
            theirs = by.get(n)
            cells.append(
                f"{'-':>8} {'no counterpart':>12}" if theirs is None else f"{theirs:>8.1f} {mine / theirs:>12.2f}"
            )
        ok = mine <= TARGET_KIND_P95_MS and (
            "FTS5" not in by or not kind.startswith("phrase") or mine <= 3 * by["FTS5"]
        )
        print(f"    {kind:<18} {mine:>8.1f} | " + " | ".join(cells) + f" | {mark(ok)}")
    return p95


def comparable(mix: list[dict], res: dict, key: str) -> list[float]:
    """Warm runs of the queries the naive baseline also runs, unfiltered."""
    return [x for q, runs in zip(mix, res[key], strict=False) if naive_text(q) is not None for x in runs]


def build_library(n: int, tmp: Path, lib_dir: Path, args, row: dict) -> None:
    """Generate the corpus, import, tag and index it (timed, printed, into row)."""
    # the index and locks are this machine's: kept with the rest, not in the user's state folder
    os.environ["PAPERSHELF_STATE_DIR"] = str(tmp / "state")
    os.environ["PAPERSHELF_CONFIG_DIR"] = str(tmp / "config")
    t = time.perf_counter()
    files = write_corpus(n, tmp / "listings", args.seed)
    size = sum(f.stat().st_size for f in files)
    print(
        f"corpus: {len(files)} file(s), {size / 2**20:,.1f} MB, generated in "
        f"{time.perf_counter() - t:.1f} s (not measured)",
        flush=True,
    )

    # 1. import, tag, index
    b = run_child("build", str(lib_dir), str(args.seed), *map(str, files))
    if b["errors"] or b["papers"] != n:
        print(f"WARNING: {b['papers']:,} papers imported (expected {n:,}); errors: {b['errors'][:3]}")
    imp_pps, idx_pps = b["papers"] / b["import_s"], b["papers"] / b["index_s"]
    both_pps = b["papers"] / (b["import_s"] + b["index_s"])
    index_mb = folder_bytes(index_folder(lib_dir)) / 2**20
    print(f"import:  {b['import_s']:.1f} s = {imp_pps:,.0f} papers/s")
    print(f"index:   {b['index_s']:.1f} s = {idx_pps:,.0f} papers/s  (SearchIndex.rebuild)")
    print(
        f"both:    {b['import_s'] + b['index_s']:.1f} s = {both_pps:,.0f} papers/s   "
        f"[target >= {TARGET_BUILD_PPS:,.0f}: {mark(both_pps >= TARGET_BUILD_PPS)}]"
    )
    print(
        f"         tags {b['tag_counts']}, statuses {b['status_counts']} ({b['edit_s']:.2f} s, not counted); "
        f"peak RSS {b['peak_rss_mb']:,.0f} MB"
    )
    print(
        f"index folder: {index_mb:,.1f} MB ({index_mb * 2**20 / b['papers']:,.0f} bytes/paper); "
        f"the library's own files {(folder_bytes(lib_dir) - folder_bytes(lib_dir / 'index')) / 2**20:,.1f} MB",
        flush=True,
    )
    row.update(imp_pps=imp_pps, idx_pps=idx_pps, both_pps=both_pps, index_mb=index_mb)


def print_profile(label: str, res: dict) -> None:
    if "profile" in res:
        p = res["profile"]
        print(
            f"\n--- cProfile ({label}): the kind {p['kind']!r} ({', '.join(p['queries'])}), one warm run "
            f"each, search + snippets (top by cumulative time) ---"
        )
        print(p["cumulative"])
        print("--- same, top by own time ---")
        print(p["tottime"], flush=True)


def bench_size(n: int, args, library: tuple[str, str | None] | None = None) -> dict:
    print(f"\n=== {n:,} papers === (load average {', '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    row: dict = {"n": n}
    with tempfile.TemporaryDirectory(prefix=f"papershelf-bench-search-{n}-", dir=args.tmpdir) as tmp:
        tmp = Path(tmp)
        if library:  # a library (and its index) built before: nothing is built, only asked
            lib_dir = Path(library[0])
            os.environ["PAPERSHELF_STATE_DIR"] = str(Path(library[1] or tmp / "state").resolve())
            # this machine's id, which names the index folder, is kept in the config folder: the one it was built with
            os.environ.setdefault("PAPERSHELF_CONFIG_DIR", str(tmp / "config"))
            print(f"library {lib_dir} and the index in {os.environ['PAPERSHELF_STATE_DIR']}: kept, not built")
        else:
            lib_dir = tmp / "library"
            build_library(n, tmp, lib_dir, args, row)
        row.setdefault("imp_pps", math.nan)
        row.setdefault("idx_pps", math.nan)
        row.setdefault("both_pps", math.nan)
        row.setdefault("index_mb", folder_bytes(index_folder(lib_dir)) / 2**20)

        # 2. open
        opens = [run_child("open", str(lib_dir)) for _ in range(OPEN_RUNS)]
        lib_ms = statistics.median(o["lib_ms"] for o in opens)
        ix_ms = statistics.median(o["index_ms"] for o in opens)
        first_ms = statistics.median(o["first_search_ms"] for o in opens)
        rebuilt = [o["rebuilt_because"] for o in opens if o["rebuilt_because"]]
        print(
            f"open (fresh process x{OPEN_RUNS}, readonly): Library.open median {lib_ms:.0f} ms "
            f"[{', '.join(format(o['lib_ms'], '.0f') for o in opens)}]; SearchIndex.open median {ix_ms:.0f} ms "
            f"[{', '.join(format(o['index_ms'], '.0f') for o in opens)}]   [target <= {TARGET_OPEN_MS:.0f} ms: "
            f"{mark(ix_ms <= TARGET_OPEN_MS)}]"
        )
        print(
            f"         rebuilt: {'YES: ' + rebuilt[0] if rebuilt else 'no'}; stale: {opens[0]['stale']}; "
            f"index files written by a read-only open: {opens[0]['index_files_touched'] or 'none'}; "
            f"docs {opens[0]['docs']:,} of {opens[0]['papers']:,} papers"
        )
        print(
            f"         then the first search ('model', facets) took median {first_ms:.0f} ms "
            f"[{', '.join(format(o['first_search_ms'], '.0f') for o in opens)}]",
            flush=True,
        )
        row.update(lib_ms=lib_ms, ix_ms=ix_ms, first_ms=first_ms, rebuilt=bool(rebuilt))
        row["n"] = row["n"] or opens[0]["papers"]

        # 3. queries
        mix_file = tmp / "mix.json"
        ours = run_child(
            "query",
            str(lib_dir),
            str(args.queries),
            str(args.repeat),
            str(mix_file),
            str(args.profile_top),
            args.profile_kind,
        )
        mix = json.loads(mix_file.read_text(encoding="utf-8"))
        print(
            f"queries: {len(mix)} ({args.queries} per kind x {len(mix) // max(1, args.queries)} kinds), "
            f"1 cold + {args.repeat - 1} warm run(s) each; limit {LIMIT}, facets, snippets for the first "
            f"{SNIPPET_ROWS} ids"
        )
        print(
            f"         the first search of the process (opens the searcher): {ours['first_ms']:.0f} ms; "
            f"peak RSS {ours['peak_rss_mb']:,.0f} MB; results with facet counts: {ours['facets_nonempty']}"
        )
        print_kinds("ours: SearchIndex.search + snippets", mix, ours)
        empty = [
            q["text"] + (f" [{q['status'] or q['tag']}]" if q["status"] or q["tag"] else "")
            for q, h in zip(mix, ours["hits"], strict=False)
            if h[0] == 0
        ]
        if empty:
            print(f"    queries with no hits: {len(empty)}: {', '.join(empty[:8])}")
        s = stats(flat(ours["warm_search"]))
        t = stats(flat(ours["warm_total"]))
        row.update(
            s50=s[0],
            s95=s[1],
            t50=t[0],
            t95=t[1],
            cold95=pct(ours["cold_total"], 95),
            cmp95=pct(comparable(mix, ours, "warm_total"), 95),
        )
        print(
            f"  search + snippets(20), warm, whole mix: p95 {t[1]:.1f} ms   "
            f"[target <= {TARGET_QUERY_P95_MS:.0f} ms: {mark(t[1] <= TARGET_QUERY_P95_MS)}]",
            flush=True,
        )
        print_profile("ours", ours)

        # 3b. the same mix with the code of another checkout (before/after in one run)
        runs = {"ours": (mix, ours)}
        if args.base_app:
            base = run_child(
                "query",
                str(lib_dir),
                str(args.queries),
                str(args.repeat),
                str(tmp / "mix-base.json"),
                str(args.profile_top),
                args.profile_kind,
                app=args.base_app,
            )
            if json.loads((tmp / "mix-base.json").read_text(encoding="utf-8")) != mix:
                print("WARNING: the base code drew another query mix")
            print_kinds(f"base ({args.base_app}): SearchIndex.search + snippets", mix, base)
            print_profile("base", base)
            runs["base"] = (mix, base)
        # 3c. the anchors: SQLite FTS5 and tantivy, same papers, same query texts
        if args.anchors:
            fts = run_child("fts5", str(lib_dir), str(tmp / "fts5"), str(mix_file), str(args.repeat))
            print(
                f"SQLite FTS5 (porter unicode61, bm25 with our field weights, snippet()): built "
                f"{fts['papers'] / fts['build_s']:,.0f} papers/s, {fts['index_bytes'] / 2**20:,.1f} MB; "
                f"no counterpart: {', '.join(FTS5_MISSING)} words"
            )
            print_kinds("FTS5: MATCH + ORDER BY bm25 LIMIT 50 + count(*), then snippet() x20", fts["mix"], fts)
            runs["FTS5"] = (fts["mix"], fts)
            tan = run_child("tantivy", str(lib_dir), str(tmp / "tantivy"), str(mix_file), str(args.repeat))
            if "missing" in tan:
                print(f"tantivy: {tan['missing']}; left out")
            else:
                print(
                    f"tantivy (en_stem, BM25, title x3 authors x2; prefix as regex, fuzzy as fuzzy_term distance 1): "
                    f"built {tan['papers'] / tan['build_s']:,.0f} papers/s on one thread, "
                    f"{tan['index_bytes'] / 2**20:,.1f} MB"
                )
                print_kinds("tantivy: search(50, count) + SnippetGenerator x20", tan["mix"], tan)
                runs["tantivy"] = (tan["mix"], tan)
        if len(runs) > 1:
            row["kinds"] = print_side_by_side(runs)

        # 4. naive baseline
        nv = None
        if args.naive:
            try:
                nv = run_child("naive", str(lib_dir), str(tmp / "naive-index"), str(mix_file), str(args.repeat))
            except (RuntimeError, KeyboardInterrupt) as exc:  # Ctrl-C here skips only the baseline
                print(f"naive baseline did not finish ({exc.__class__.__name__}: {exc}); left out", flush=True)
        if nv is not None:
            nv_pps = nv["papers"] / nv["build_s"]
            print(
                f"naive Whoosh: build {nv['build_s']:.1f} s = {nv_pps:,.0f} papers/s "
                f"(ours: index alone {row['idx_pps']:,.0f} papers/s, x{row['idx_pps'] / nv_pps:.2f}); index folder "
                f"{nv['index_bytes'] / 2**20:,.1f} MB; first search {nv['first_ms']:.0f} ms"
            )
            print_kinds(
                "naive: searcher.search(limit=50) + hit.highlights('abstract') x20 (no filters, facets, area:)",
                nv["mix"],
                nv,
            )
            nv95 = pct(flat(nv["warm_total"]), 95)
            print(
                f"  comparable queries (unfiltered, no area:), warm search+snippets p95: naive {nv95:.1f} ms, "
                f"ours {row['cmp95']:.1f} ms -> naive/ours x{nv95 / row['cmp95']:.2f}; build naive/ours "
                f"x{nv_pps / row['idx_pps']:.2f}",
                flush=True,
            )
            row.update(nv_pps=nv_pps, nv95=nv95)
    return row


def print_growth(rows: list[dict]) -> None:
    """Each kind's warm p95 at every size, and how it grew from one size to the next."""
    rows = [r for r in rows if "kinds" in r]
    if len(rows) < 2:
        return
    names = [n for n in ("ours", "base", "FTS5", "tantivy") if any(n in by for by in rows[0]["kinds"].values())]
    print("\n=== growth: search + snippets(20), warm p95 ms per kind; x = this size's p95 / the previous size's ===")
    for name in names:
        print(f"  {name}")
        print(
            f"    {'kind':<18} "
            + " | ".join(f"{r['n']:>10,}" + (f" {'x':>6}" if i else "") for i, r in enumerate(rows))
        )
        for kind in rows[0]["kinds"]:
            cells, worst = [], 0.0
            for i, r in enumerate(rows):
                v = r["kinds"].get(kind, {}).get(name, math.nan)
                if i:
                    prev = rows[i - 1]["kinds"].get(kind, {}).get(name, math.nan)
                    worst = max(worst, v / prev)
                    cells.append(f"{v:>10.1f} {v / prev:>6.2f}")
                else:
                    cells.append(f"{v:>10.1f}")
            verdict = (
                f"  [x <= {TARGET_GROWTH} for x3 papers: {mark(worst <= TARGET_GROWTH)}]" if name == "ours" else ""
            )
            print(f"    {kind:<18} " + " | ".join(cells) + verdict)


def summary(rows: list[dict]) -> None:
    print_growth(rows)
    print("\n=== summary (ours) ===")
    head = (
        f"{'papers':>8} | {'import p/s':>10} | {'index p/s':>9} | {'both p/s':>8} | {'index MB':>8} | "
        f"{'open lib ms':>11} | {'open ix ms':>10} | {'search p50/p95':>14} | {'+snip p50/p95':>14} | "
        f"{'cold p95':>8} | targets"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        checks = [
            ("query p95", r["t95"] <= TARGET_QUERY_P95_MS),
            ("import+index", r["both_pps"] >= TARGET_BUILD_PPS),
            ("open", r["ix_ms"] <= TARGET_OPEN_MS and not r["rebuilt"]),
        ]
        misses = [name for name, ok in checks if not ok]
        print(
            f"{r['n']:>8,} | {r['imp_pps']:>10,.0f} | {r['idx_pps']:>9,.0f} | {r['both_pps']:>8,.0f} | "
            f"{r['index_mb']:>8,.1f} | {r['lib_ms']:>11,.0f} | {r['ix_ms']:>10,.0f} | "
            f"{r['s50']:>6.1f} /{r['s95']:>6.1f} | {r['t50']:>6.1f} /{r['t95']:>6.1f} | {r['cold95']:>8.1f} | "
            + ("all PASS" if not misses else "MISS: " + ", ".join(misses))
        )
    print(
        f"targets (stated for 100k): search + snippets(20) p95 <= {TARGET_QUERY_P95_MS:.0f} ms (warm, whole mix), "
        f"import + index >= {TARGET_BUILD_PPS:,.0f} papers/s, SearchIndex.open <= {TARGET_OPEN_MS:.0f} ms"
    )
    if any("nv_pps" in r for r in rows):
        print("\n=== summary (naive Whoosh baseline, same papers, same query texts; unfiltered, no area:) ===")
        head = (
            f"{'papers':>8} | {'build p/s naive':>15} | {'ours':>6} | {'naive/ours':>10} | "
            f"{'s+snip p95 naive ms':>19} | {'ours':>6} | {'naive/ours':>10}"
        )
        print(head)
        print("-" * len(head))
        for r in rows:
            if "nv_pps" in r:
                print(
                    f"{r['n']:>8,} | {r['nv_pps']:>15,.0f} | {r['idx_pps']:>6,.0f} | "
                    f"{r['nv_pps'] / r['idx_pps']:>10.2f} | "
                    f"{r['nv95']:>19.1f} | {r['cmp95']:>6.1f} | {r['nv95'] / r['cmp95']:>10.2f}"
                )
        print(
            "(build: the naive index against ours alone, without the import; >1 means naive is faster. "
            "search: >1 means naive is slower)"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if child_requested(argv, child_main):
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated paper counts (default: %(default)s; 10000 alone is the quick path)",
    )
    ap.add_argument(
        "--queries",
        type=int,
        default=DEFAULT_QUERIES,
        help="distinct queries per kind (default: %(default)s; 16 kinds)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=DEFAULT_REPEAT,
        help="runs per query, the first cold (default: %(default)s; at least 2)",
    )
    ap.add_argument("--seed", type=int, default=1729, help="corpus seed (default: %(default)s)")
    ap.add_argument("--tmpdir", default=None, help="where the temporary folders go (default: the system's)")
    ap.add_argument(
        "--library",
        default=None,
        metavar="DIR",
        help="ask libraries built before (comma-separated; their indexes in --state-dir, in the same order) "
        "instead of building them; --sizes are then only their labels",
    )
    ap.add_argument(
        "--state-dir", default=None, metavar="DIR", help="the PAPERSHELF_STATE_DIR of each --library (comma-separated)"
    )
    ap.add_argument(
        "--base-app",
        default=None,
        metavar="DIR",
        help="also run the query mix with the code in DIR (another checkout's app/ folder): before/after in one run",
    )
    ap.add_argument(
        "--no-anchors",
        dest="anchors",
        action="store_false",
        help="skip the anchors (SQLite FTS5, and tantivy if installed)",
    )
    ap.add_argument(
        "--no-naive",
        dest="naive",
        action="store_false",
        help="skip the naive Whoosh baseline (Ctrl-C while it runs skips it too)",
    )
    ap.add_argument(
        "--profile-top",
        type=int,
        default=8,
        metavar="TOP",
        help="profile the slowest query kind once; print TOP+12 functions by cumulative "
        "and TOP by own time (0: don't; default %(default)s)",
    )
    ap.add_argument(
        "--profile-kind",
        default="",
        metavar="KIND",
        help="profile this query kind (e.g. phrase) instead of the slowest",
    )
    args = ap.parse_args(argv)
    args.repeat = max(2, args.repeat)
    args.queries = max(1, args.queries)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    commit = describe_commit()
    print(
        f"papershelf search benchmark: commit {commit}, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPU(s), sizes {', '.join(f'{n:,}' for n in sizes)}, seed {args.seed}, "
        f"{args.queries} queries per kind x {args.repeat} runs, naive baseline {'on' if args.naive else 'off'}"
    )
    t0 = time.perf_counter()
    rows = []
    libraries: list[tuple[str, str | None]] = []
    if args.library:
        states = (args.state_dir or "").split(",")
        libraries = [
            (d, states[i] if i < len(states) and states[i] else None) for i, d in enumerate(args.library.split(","))
        ]
        sizes = sizes[: len(libraries)] + [0] * (len(libraries) - len(sizes))
    for i, n in enumerate(sizes):
        rows.append(bench_size(n, args, libraries[i] if libraries else None))
        if len(sizes) > 1:
            summary(rows)  # a partial summary after each size, in case a long run is stopped
    if len(sizes) == 1:
        summary(rows)
    print_footer(commit, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
