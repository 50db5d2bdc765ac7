"""The fast segment writer (`core/search/fastwrite.py`) against Whoosh's stock writer.

A rebuild writes its segments with `fastwrite.write_segment`; these tests write
the same documents both ways and compare everything Whoosh reads (postings,
weights, positions, block descriptions, term statistics, field lengths,
stored fields and columns), then the answers and scores of whole indexes
built both ways, and the fallback: a writer that differs is caught by the
probe, and rebuilds take Whoosh's writer with the same answers.
"""

from __future__ import annotations

import logging
import math

import pytest
from whoosh import index as windex
from whoosh.codec.whoosh3 import W3Codec
from whoosh.writing import SegmentWriter

from papershelf.core.library import Library
from papershelf.core.search import SearchIndex, fastwrite, internals, paper_document
from papershelf.core.search import rebuild as rebuild_module
from papershelf.core.search.schema import make_schema
from test_fastsearch import check_same, query_mix, seed_words


@pytest.fixture(scope="module")
def words():
    return seed_words()


@pytest.fixture
def library(tmp_path, seeds):
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files(seeds)
        ids = lib.ids()
        lib.add_tags(ids[:40], ["llm", "to read"])
        lib.set_status(ids[10:30], "reading")
        yield lib


def written_by_fastwrite(ix) -> list[bool]:
    """Per segment: whether `fastwrite` wrote it. It stores a block of a posting or two as it is
    (compression 0); Whoosh's writer compresses every block."""
    out = []
    with ix._search_lock:
        for reader, _ in ix._get_searcher().reader().leaf_readers():
            fmt = reader.schema["title"].format
            blocks = [reader._terms.matcher("title", t, fmt)._compression for t in reader.lexicon("title")]
            out.append(0 in blocks)
    return out


def documents(lib):
    member = lib.memberships()
    docs = [paper_document(p, member.get(p.id, [])) for p in lib.papers()]
    # a PDF's text (no positions, frequencies), a long value, notes and accents
    docs[0]["fulltext"] = "gradient descent " * 50 + "Schrödinger équation"
    docs[1]["notes"] = "the model of models, re-read: " + "word " * 5000 + "lastword"
    return docs


def both_segments(tmp_path, docs, codec):
    ix = windex.create_in(str(tmp_path / "ix"), make_schema())
    stock = SegmentWriter(ix, _lk=False, codec=codec, compound=False)
    for doc in docs:
        stock.add_document(**doc)
    theirs = fastwrite.segment_contents(ix.storage, internals.finish_segment(stock), ix.schema)
    ours = fastwrite.segment_contents(ix.storage, fastwrite.write_segment(ix, docs, codec=codec), ix.schema)
    return ours, theirs


@pytest.mark.parametrize("blocklimit", [128, 3])
def test_a_segment_reads_as_the_one_whooshs_writer_makes(library, tmp_path, blocklimit):
    (tmp_path / "ix").mkdir()
    ours, theirs = both_segments(tmp_path, documents(library), W3Codec(blocklimit=blocklimit))
    assert fastwrite.differences(ours, theirs) == []
    assert ours == theirs
    assert ours["docs"] == 372 and ours["fieldlengths"]["fulltext"] == 102
    terms = [k for k in ours if k.startswith("t:")]
    assert len(terms) > 3000 and any(k.startswith("t:fulltext:") for k in terms)
    columns = {k for k in ours if k.startswith("c:")}
    assert columns >= {"c:.id.col", "c:.digest.col", "c:._stored.col", "c:._title_len.col"}
    # terms over several blocks, each block's postings decoded the same
    spanning = [k for k in terms if len(ours[k][2]) > 1]
    assert spanning, "no term spans several blocks"


def test_a_difference_is_seen(library, tmp_path):
    """The comparison is no formality: one weight changed is a difference."""
    (tmp_path / "ix").mkdir()
    docs = documents(library)
    ours, theirs = both_segments(tmp_path, docs, W3Codec())
    key = next(k for k in ours if k.startswith("t:title:"))
    stats, maxid, blocks = ours[key]
    ours[key] = ((stats[0] + 1, *stats[1:]), maxid, blocks)
    assert fastwrite.differences(ours, theirs) == [key]


def test_a_rebuild_with_it_answers_and_scores_as_one_with_whooshs_writer(library, tmp_path, words, monkeypatch):
    assert internals.fast_writing()
    calls = []
    real = fastwrite.write_segment
    monkeypatch.setattr(fastwrite, "write_segment", lambda *a, **k: calls.append(1) or real(*a, **k))
    with SearchIndex(library) as ix:
        assert ix.rebuild()
        assert calls == [1] and written_by_fastwrite(ix) == [True]
        fast = {q: ix.search(q, limit=None, facets=True) for q in query_mix(words)}
        check_same(ix, words)  # and against Whoosh's own matcher
    monkeypatch.setattr(internals, "_fastwrite_verdict", "forced for the test")
    with SearchIndex(library) as ix:
        assert ix.rebuild()
        assert calls == [1] and written_by_fastwrite(ix) == [False]  # Whoosh's writer this time
        for q, answer in fast.items():
            stock = ix.search(q, limit=None, facets=True)
            assert (stock.ids, stock.total, stock.facets) == (answer.ids, answer.total, answer.facets), q
            for pid, score in stock.scores.items():
                assert math.isclose(score, answer.scores[pid], rel_tol=1e-6), q


def test_worker_processes_write_with_it_and_cancel_keeps_the_old_index(library, words, monkeypatch):
    monkeypatch.setattr(rebuild_module, "SEGMENT_DOCS", 100)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 50)
    seen = []
    with SearchIndex(library) as ix:
        assert ix.rebuild(progress=lambda n, total: seen.append((n, total)))
        assert written_by_fastwrite(ix) == [True] * 4
        check_same(ix, words)
        before = ix.search("model", limit=None).ids
        assert seen[-1] == (372, 372)
    with SearchIndex(library) as ix:
        assert not ix.rebuild(cancelled=lambda: True)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 5000)
    with SearchIndex(library) as ix:  # in this process: cancelled before and while it writes
        assert not ix.rebuild(cancelled=lambda: True)
        asked = []
        assert not ix.rebuild(cancelled=lambda: asked.append(1) or len(asked) > 1)
        assert len(asked) == 2
    with SearchIndex(library).open() as ix:
        assert ix.rebuilt_because == "" and ix.search("model", limit=None).ids == before


def test_a_writer_that_differs_is_caught_and_rebuilds_take_whooshs(library, words, monkeypatch, caplog):
    monkeypatch.setattr(fastwrite, "_mini_weights", lambda weights: tuple(weights))  # a format change
    monkeypatch.setattr(internals, "_fastwrite_verdict", None)
    caplog.set_level(logging.WARNING)
    assert not internals.fast_writing()
    assert not internals.fast_writing()  # said once
    said = [r.getMessage() for r in caplog.records if "fast writer expects" in r.getMessage()]
    assert len(said) == 1 and "differs" in said[0]
    monkeypatch.setattr(fastwrite, "write_segment", lambda *a, **k: pytest.fail("the fast writer was used"))
    monkeypatch.setattr(rebuild_module, "SEGMENT_DOCS", 100)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 50)
    with SearchIndex(library) as ix:
        assert ix.rebuild()  # the workers are told to take Whoosh's writer too
        assert written_by_fastwrite(ix) == [False] * 4
        check_same(ix, words)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 5000)
    with SearchIndex(library) as ix:
        assert ix.rebuild()
        check_same(ix, words)


def test_the_probe_passes_on_the_installed_whoosh(monkeypatch):
    assert internals._probe_fastwrite() == ""
    monkeypatch.setattr(internals, "_fastwrite_verdict", None)
    assert internals.fast_writing()


def test_an_unsupported_schema_or_codec_is_said():
    from whoosh.fields import TEXT, Schema

    assert fastwrite.supported(make_schema(), W3Codec()) == ""
    assert fastwrite.supported(make_schema(), W3Codec(inlinelimit=2)) == "another codec"
    assert "vectors" in fastwrite.supported(Schema(body=TEXT(vector=True)), W3Codec())
