"""The evaluator's scores against Whoosh's own searcher, and the probe that
guards its use of Whoosh's internals (core/search/internals.py).

Our scores are Whoosh's BM25F with two choices of ours (see
core/search/evaluator.py): a field's boost multiplies the score once more,
and prefix, wildcard and fuzzy words score as the sum of the words they
stand for. Whoosh's searcher is given the same two choices (a weighting
that multiplies by the field boost, multi-term queries without a constant
score) and must then give every paper the same score, to float32 precision.
Whoosh also scores each NOT clause, and "everything", as 1.0 where we count
0: the same ranking, a constant apart, accounted for below. Fields that are
not searched as text (tags, status, year...) only filter, on both sides.

When the probe finds Whoosh's internals changed, searches go through
Whoosh's public matcher and scorer instead: the same papers, order and scores.
"""

from __future__ import annotations

import logging
import math
import random

import pytest
from whoosh import query as wquery
from whoosh import scoring
from whoosh.searching import Searcher
from whoosh.writing import SegmentWriter

from papershelf.core.library import Library
from papershelf.core.search import SearchIndex, internals
from papershelf.core.search import rebuild as rebuild_module
from papershelf.core.search.evaluator import Evaluator
from papershelf.core.search.schema import FIELD_BOOSTS, SEARCH_FIELDS
from test_fastsearch import query_mix, seed_words

# field boosts (title, author), phrases, prefix, fuzzy, NOT, AND/OR, fields, a query boost on a word
SCORE_QUERIES = [
    "model",
    "reward model",
    "title:reward",
    "author:thaman",
    "by:raza",
    "abstract:reward",
    "notes:model",
    "optim*",
    "title:optim*",
    "diffuson~",
    "verisimpl~",
    "polcy~2",
    '"language model"',
    'title:"reward model"',
    '"language models"~3',
    '"policy optimization" reasoning',
    "model NOT reward",
    "model AND NOT reward",
    "NOT model",
    "(model OR reward) NOT policy",
    "model OR reward",
    "verisimpl",
    "area:robotics",
    "title:model^2 reward",
    "reward -model",
    "tag:llm model",
    "year:2024 model",
    "lang*",
]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The seeds, indexed; then (second copy) edits that leave deletions in several segments."""
    from conftest import SEEDS

    folder = tmp_path_factory.mktemp("scores") / "lib"
    lib = Library.open(folder)
    lib.import_files(SEEDS)
    ix = SearchIndex(lib).open()
    yield lib, ix
    ix.close()
    lib.close()


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    from conftest import SEEDS

    lib = Library.open(tmp_path_factory.mktemp("scores-edited") / "lib")
    lib.import_files(SEEDS)
    ix = SearchIndex(lib).open()
    ids = list(lib.ids())
    rng = random.Random(5)
    for k in range(3):  # separate commits: separate segments
        lib.add_tags(rng.sample(ids, 30), ["llm"])
        lib.set_title(ids[k], f"Reward models of language {k}")
        assert ix.flush()
    lib.delete_papers(rng.sample(ids, 15))
    assert ix.flush()
    with ix._search_lock:
        leaves = ix._get_searcher().reader().leaf_readers()
        assert len(leaves) > 1 and any(r.has_deletions() for r, _ in leaves)
    yield lib, ix
    ix.close()
    lib.close()


class _FieldBoostedBM25F(scoring.BM25F):
    """Whoosh's BM25F, times the field's boost (as our evaluator counts it);
    fields that are not searched as text (tags, status, year...) filter and
    add nothing to a score, as in our evaluator."""

    def scorer(self, searcher, fieldname, text, qf=1):
        if fieldname not in SEARCH_FIELDS:
            return _Nothing()
        return _FieldBoostedScorer(searcher, fieldname, text, self.B, self.K1, qf=qf)


class _Nothing(scoring.BaseScorer):
    def score(self, matcher):
        return 0.0

    def max_quality(self):
        return 0.0


class _FieldBoostedScorer(scoring.BM25FScorer):
    def __init__(self, searcher, fieldname, text, *args, **kwargs):
        self.field_boost = FIELD_BOOSTS.get(fieldname, 1.0)
        super().__init__(searcher, fieldname, text, *args, **kwargs)

    def _score(self, weight, length):
        return super()._score(weight, length) * self.field_boost


def _summed(q):
    if isinstance(q, (wquery.Prefix, wquery.Wildcard, wquery.FuzzyTerm, wquery.Regex)):
        q = q.copy()
        q.constantscore = False
    return q


def _not_bonus(q) -> float:
    """What Whoosh adds for NOT clauses and for "everything" (1.0 each), where
    we add nothing (with nothing to rank by, relevance order is newest first)."""
    if isinstance(q, (wquery.Not, wquery.Every)):
        return 1.0
    if isinstance(q, wquery.And):
        return sum(1.0 for sub in q.subqueries if isinstance(sub, wquery.Not))
    return 0.0


def whoosh_scores(ix: SearchIndex, text: str) -> dict[str, float]:
    """Paper id → score, by Whoosh's own searcher (deleted papers left out)."""
    q, _ = ix.parse(text)
    bonus = _not_bonus(q)
    with ix._search_lock:
        reader = ix._get_searcher().reader()
        with Searcher(reader, weighting=_FieldBoostedBM25F(), closereader=False) as s:
            return {
                hit["id"]: hit.score - bonus
                for hit in s.search(q.accept(_summed), limit=None)
                if not reader.is_deleted(hit.docnum)
            }


def differences(ix: SearchIndex, queries) -> list:
    out = []
    for text in queries:
        ours = ix.search(text, limit=None, facets=False).scores
        theirs = whoosh_scores(ix, text)
        if set(ours) != set(theirs):
            out.append((text, "papers", sorted(set(ours) ^ set(theirs))[:3]))
            continue
        bad = [
            (pid, ours[pid], theirs[pid])
            for pid in ours
            if not math.isclose(ours[pid], theirs[pid], rel_tol=1e-6, abs_tol=1e-9)
        ]
        if bad:
            out.append((text, "scores", bad[:3]))
    return out


def all_queries() -> list[str]:
    return SCORE_QUERIES + query_mix(seed_words())


def test_scores_are_whooshs_on_a_fresh_index(indexed):
    _, ix = indexed
    assert ix._get_evaluator().fast
    assert differences(ix, all_queries()) == []  # (query, what differs, examples)


def test_scores_are_whooshs_after_edits_left_deletions_in_several_segments(edited):
    _, ix = edited
    assert differences(ix, all_queries()) == []


def test_scores_rank_title_and_author_matches_higher(indexed):
    """The field boosts reach the score: the same word in a title counts more than in an abstract."""
    _, ix = indexed
    with ix._search_lock:
        ev = ix._get_evaluator()
        title = ev.term("title", b"model")
        abstract = ev.term("abstract", b"model")
    both = set(title[0].tolist()) & set(abstract[0].tolist())
    assert both
    t = dict(zip(title[0].tolist(), title[1].tolist(), strict=True))
    a = dict(zip(abstract[0].tolist(), abstract[1].tolist(), strict=True))
    assert sum(t[d] for d in both) > sum(a[d] for d in both)


def test_a_boost_on_an_unfielded_word_counts(indexed):
    """`model^2` is an Or across the fields with a boost: Whoosh multiplies the group's score."""
    _, ix = indexed
    assert differences(ix, ["model^2 reward", "(model reward)^3 policy", "title:model^2 learning"]) == []
    boosted, plain = ix.search("model^2 reward"), ix.search("model reward")
    assert boosted.ids != plain.ids or boosted.scores != plain.scores


def test_the_probe_touches_no_shared_temporary_folder(tmp_path, monkeypatch):
    """Whoosh's in-memory storage kept a writer's temporary files in the system's
    temp folder under one fixed name; another Papershelf probing at the same time
    deleted them and the probe failed (CI saw it as a warning on stderr)."""
    import tempfile

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the temp folder would be")
    monkeypatch.setattr(tempfile, "tempdir", str(blocked))
    assert internals._probe() == ""


def test_the_probe_passes_on_the_installed_whoosh():
    assert internals._probe() == ""
    assert internals.fast_path_problem() == ""
    assert internals.usable() and internals.parallel_build()


def answers(ix: SearchIndex, queries, limit=None) -> dict:
    out = {}
    for text in queries:
        res = ix.search(text, limit=limit, facets=limit is not None)
        out[text] = (res.ids, res.scores, res.total, res.facets)
    return out


def same_answers(fast: dict, slow: dict) -> list:
    """Queries whose papers, order, totals, facets or scores differ between two runs."""
    out = []
    for text, (ids, scores, total, facets) in fast.items():
        ids2, scores2, total2, facets2 = slow[text]
        if (ids, total, facets) != (ids2, total2, facets2):
            out.append((text, "papers"))
        elif any(not math.isclose(scores[p], scores2[p], rel_tol=1e-6, abs_tol=1e-9) for p in scores):
            out.append((text, "scores"))
    return out


def test_a_failed_probe_falls_back_to_whooshs_matcher_with_the_same_answers(edited, monkeypatch):
    lib, ix = edited
    queries = all_queries()
    fast, fast_top = answers(ix, queries), answers(ix, queries, limit=20)
    monkeypatch.setattr(internals, "_verdict", "forced for the test")
    with SearchIndex(lib) as slow_ix:
        slow_ix.open()
        with slow_ix._search_lock:
            assert not slow_ix._get_evaluator().fast
        assert same_answers(fast, answers(slow_ix, queries)) == []
        assert same_answers(fast_top, answers(slow_ix, queries, limit=20)) == []
        assert slow_ix.snippets(fast["model"][0][:5], "model") == ix.snippets(fast["model"][0][:5], "model")


def test_a_broken_internal_is_caught_by_the_probe_and_costs_no_results(edited, monkeypatch, caplog):
    """Whoosh's posting-block matcher renamed (as an update might): read as it
    is, every weight would come out as 1.0 and titles would lose their boost;
    the probe notices, says so once, and searching takes Whoosh's road."""
    lib, ix = edited
    queries = SCORE_QUERIES
    fast = answers(ix, queries)
    monkeypatch.setattr(internals, "W3LeafMatcher", type("Renamed", (), {}))
    with ix._search_lock:  # unchecked, the fast path would now answer wrongly
        broken = Evaluator(ix._get_searcher(), {}, FIELD_BOOSTS, SEARCH_FIELDS, fast=True)
        wrong = sorted(broken.evaluate(ix.parse("title:reward")[0])[1].tolist())
    right = sorted(fast["title:reward"][1].values())
    assert len(wrong) == len(right) and not all(math.isclose(a, b) for a, b in zip(wrong, right, strict=True))
    monkeypatch.setattr(internals, "_verdict", None)
    with caplog.at_level(logging.WARNING, logger=internals.__name__):
        assert "postings differ" in internals.fast_path_problem()
        assert not internals.usable()
        with SearchIndex(lib).open() as slow_ix:
            assert same_answers(fast, answers(slow_ix, queries)) == []
    said = [r for r in caplog.records if "Whoosh's internals are not as Papershelf expects" in r.getMessage()]
    assert len(said) == 1 and "postings differ" in said[0].getMessage()  # once, saying what differed


def test_without_the_fast_path_writers_are_whooshs_own_and_rebuilds_stay_in_process(tmp_path, seeds, monkeypatch):
    monkeypatch.setattr(internals, "_verdict", "forced for the test")
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 50)
    monkeypatch.setattr(rebuild_module, "SEGMENT_DOCS", 100)
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files(seeds)
        with SearchIndex(lib) as ix:
            assert ix.rebuild()
            assert type(internals.segment_writer(ix._index.ix)) is SegmentWriter
            with ix._search_lock:
                assert len(ix._get_searcher().reader().leaf_readers()) == 1  # no worker segments
            pid = lib.ids()[0]
            ix.open()
            lib.add_tags([pid], ["fallback"])
            assert ix.flush()
            assert ix.search("tag:fallback").ids == [pid]
            assert ix.doc_count() == 372
