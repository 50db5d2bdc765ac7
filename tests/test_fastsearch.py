"""The block-at-a-time query evaluator (core/search/evaluator.py) against Whoosh's
own matcher, on the seeds: the same papers for every query form, before and
after edits spread the index over several segments with deletions."""

from __future__ import annotations

import random
import re

import pytest

from papershelf.core.library import Library
from papershelf.core.search import SearchIndex

WORD_RE = re.compile(r"[A-Za-z]{4,}")


def seed_words():
    """Words of the seed listings: (common, rare)."""
    from conftest import SEEDS
    text = " ".join(p.read_text(encoding="utf-8") for p in SEEDS)
    counts: dict[str, int] = {}
    for w in WORD_RE.findall(text):
        counts[w.lower()] = counts.get(w.lower(), 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], w))
    return ranked[20:60], ranked[-40:]          # common, rare


@pytest.fixture(scope="module")
def words():
    return seed_words()


def query_mix(words, seed=7):
    common, rare = words
    rng = random.Random(seed)
    qs = []
    for _ in range(6):
        a, b = rng.sample(common, 2)
        r = rng.choice(rare)
        qs += [a, r, f"{a} {b}", f"{a} OR {r}", f"{a} NOT {b}", f"{a} AND NOT {b}", f'"{a} {b}"',
               f"{a[:4]}*", f"{a[:-1]}x~", f"title:{a}", f"({a} OR {b}) {r}", f"author:{r}",
               f"{a} -{b}", f"abstract:{a}"]
    qs += ["", "*", "status:to-read", "tag:llm", "area:robotics", "year:2024", "list:mine",
           "author:thaman", "verisimpl", "NOT model", "model AND", '"unbalanced', "((diffus*",
           "nosuchfield:word", "tags:llm OR status:read", '"phase transition"', '"reward hacking"',
           '"large language models"', '"language model" reasoning', '"language models"~3', 'title:"reward model"',
           '"of the"', '"policy optimization" NOT "reward model"', "tags:*", "notes:*", "title:*"]
    return qs


def whoosh_ids(ix, q):
    """The ids Whoosh's own matcher finds for the parsed query (and the searcher read)."""
    with ix._search_lock:
        s = ix._get_searcher()
        return {s.stored_fields(d)["id"] for d in live_docs(s, q)}, s


def live_docs(s, q):
    """Whoosh's matches for `q`, less deleted documents. Whoosh's own NOT
    (InverseMatcher) yields a deleted document when it directly follows the
    last match of what is negated: a layout only some commit timings make,
    and the "paper Whoosh found" for `NOT model` in issue 11 (item 9)."""
    reader = s.reader()
    return [d for d in q.docs(s) if not reader.is_deleted(d)]


def fast_ids(ix, text):
    return set(ix.search(text, limit=None, facets=False).ids)


def check_same(ix, words):
    mismatched = []
    for text in query_mix(words):
        q, _ = ix.parse(text)
        (expected, searcher), got = whoosh_ids(ix, q), fast_ids(ix, text)
        # both sides read one state of the index: a commit landing in between
        # (a flush() that returned early) once showed up as a "mismatch"
        assert ix._searcher is searcher, "a commit landed during the comparison"
        if expected != got:
            segments = [(r.doc_count_all(), len(r.deleted_docs_set)) for r, _ in ix._get_searcher().reader().leaf_readers()]
            mismatched.append((text, sorted(expected - got)[:5], sorted(got - expected)[:5], segments))
    assert mismatched == []      # (query, only Whoosh found, only we found, (docs, deleted) per segment)


def test_same_papers_as_whoosh_on_a_fresh_index(tmp_path, seeds, words):
    with Library.open(tmp_path / "lib") as lib, SearchIndex(lib).open() as ix:
        lib.import_files(seeds)
        ix.flush()
        check_same(ix, words)


def test_same_papers_after_edits_leave_deletions_in_several_segments(tmp_path, seeds, words):
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files(seeds)
        with SearchIndex(lib).open() as ix:
            ids = list(lib.ids())
            rng = random.Random(3)
            for k in range(4):             # separate commits: separate segments
                lib.add_tags(rng.sample(ids, 30), ["llm"])
                lib.set_status(rng.sample(ids, 25), "to-read")
                lib.create_list(f"l{k}")
                lib.add_to_list(f"l{k}", rng.sample(ids, 10))
                assert ix.flush()
                ix.search("model")          # a searcher per state: caches are rebuilt or kept
            gone = rng.sample(ids, 20)
            lib.delete_papers(gone)
            assert ix.flush()
            segments = ix._get_searcher().reader().leaf_readers()
            assert len(segments) > 1 and any(r.has_deletions() for r, _ in segments)
            check_same(ix, words)
            everything = ix.search("", limit=None)
            assert everything.total == len(ids) - 20
            assert not set(gone) & set(everything.ids)
            tagged = ix.search("tag:llm", limit=None)
            assert set(tagged.ids) == {p.id for p in lib.papers() if "llm" in p.tags}
            facets = ix.search("").facets
            assert facets["tags"]["llm"] == tagged.total
            assert facets["status"]["to-read"] == sum(p.status.value == "to-read" for p in lib.papers())


def test_flush_waits_for_every_queued_change_and_only_for_those(tmp_path, seeds):
    """flush() is what makes an edit searchable before the next search. It
    waited on an "idle" flag that the writer set and each change cleared:
    a change that queued nothing (a new or reordered list) cleared it for
    good, so flush() waited out its timeout (and closing the index a
    minute); a change queued between the writer's "queue empty?" and its
    set() let flush() return before that change was committed, and the
    next search compared two states of the index."""
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files(seeds[:1])
        with SearchIndex(lib).open() as ix:
            ids = list(lib.ids())
            lib.create_list("later")                # nothing to index
            assert ix.flush(timeout=5)
            lib.add_to_list("later", ids[:3])
            lib.reorder_list("later", ids[:3][::-1])
            assert ix.flush(timeout=30)
            assert set(ix.search("list:later", limit=None).ids) == set(ids[:3])
            # an edit made as a commit lands (from the writer's own callback)
            # is waited for too
            gone = ids[3:8]
            edits = [lambda: lib.delete_papers(gone)]
            ix.committed.append(lambda: edits and edits.pop()())
            lib.add_tags(ids[:2], ["llm"])
            assert ix.flush(timeout=30)
            assert not edits
            assert not set(gone) & set(ix.search("", limit=None).ids)
            assert ix.search("", limit=None).total == len(ids) - 5


def test_not_skips_a_deleted_paper_after_the_last_match(tmp_path):
    """Found by the property test: two papers, one edited (a new copy in a new
    segment) and deleted. Whoosh's `NOT model` returns the deleted copy (the
    document right after the last one holding "model"); the fast evaluator
    must not, alone or inside OR."""
    from papershelf.core.importers.base import Candidate, ParsedFile
    with Library.open(tmp_path / "lib") as lib:
        lib.import_parsed(ParsedFile("<test>", "listing", [
            Candidate(abstract="model model model", line=1, title="model"),
            Candidate(abstract="model model model model", line=2, title="model")], []))
        with SearchIndex(lib).open() as ix:
            first, second = lib.ids()
            lib.set_title(first, "models")
            assert ix.flush()
            lib.delete_papers([first])
            assert ix.flush()
            assert ix.search("NOT model", limit=None).ids == []
            assert ix.search("model OR NOT model", limit=None).ids == [second]
            q, _ = ix.parse("NOT model")
            with ix._search_lock:
                s = ix._get_searcher()
                assert live_docs(s, q) == []


def test_ranking_counts_every_occurrence_and_weights_titles(tmp_path, seeds):
    with Library.open(tmp_path / "lib") as lib, SearchIndex(lib).open() as ix:
        lib.import_files(seeds)
        ix.flush()
        # a word in one paper's title ranks that paper above those with it only in the abstract
        paper = next(p for p in lib.papers() if p.title.startswith("VeriSimpl"))
        hits = ix.search("solver")
        assert hits.ids[0] == paper.id
        assert list(hits.scores.values()) == sorted(hits.scores.values(), reverse=True)
        # the limit cuts the same ranking short
        assert ix.search("solver", limit=3).ids == hits.ids[:3]


def test_a_large_rebuild_is_split_into_segments_built_by_worker_processes(tmp_path, seeds, words, monkeypatch):
    import papershelf.core.search.rebuild as rebuild_module
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files(seeds)
        lib.add_tags(list(lib.ids())[:40], ["llm"])
        with SearchIndex(lib).open() as ix:
            expected = {text: fast_ids(ix, text) for text in query_mix(words)}
        monkeypatch.setattr(rebuild_module, "SEGMENT_DOCS", 100)
        monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 50)
        seen = []
        with SearchIndex(lib) as ix:
            assert ix.rebuild(progress=lambda n, total: seen.append((n, total)))
            segments = ix._get_searcher().reader().leaf_readers()
            assert len(segments) == 4                      # 372 papers, at most 100 a segment
            assert ix.doc_count() == 372
            assert {text: fast_ids(ix, text) for text in query_mix(words)} == expected
            assert seen[-1] == (372, 372)
            check_same(ix, words)
        with SearchIndex(lib) as ix:                       # a cancelled rebuild keeps the old index
            assert not ix.rebuild(cancelled=lambda: True)
            assert not (tmp_path / "lib" / "index.new").exists()
        with SearchIndex(lib).open() as ix:
            assert ix.rebuilt_because == "" and ix.doc_count() == 372
