"""Phrase positions read with numpy (core/search/internals.py: `decode_positions`,
`read_all_positions`) and matched on position keys (evaluator.py: `_phrase`), against
Whoosh's own decoder and span matcher on a real index; and the evaluator's caches,
bounded by bytes, with the words prefixes and fuzzy words stand for kept apart."""

from __future__ import annotations

import random

import numpy as np
import pytest
from whoosh import query as wquery
from whoosh.codec.whoosh3 import W3Codec
from whoosh.fields import Schema
from whoosh.filedb.filestore import FileStorage
from whoosh.formats import Positions

from papershelf.core.importers.base import Candidate, ParsedFile
from papershelf.core.library import Library
from papershelf.core.search import SearchIndex, internals
from papershelf.core.search.evaluator import ByteLRU, Evaluator
from papershelf.core.search.schema import FIELD_BOOSTS, SEARCH_FIELDS, make_schema

WORDS = ["alpha", "beta", "gamma", "delta", "model", "graph"]


def test_decode_positions_reads_every_form_whoosh_writes():
    fmt = Positions()
    rng = random.Random(5)
    cases = [[0], [3], [1, 2, 3], [255], [256], [0, 300], [70_000], [5, 70_000, 70_001], list(range(0, 2000, 7))]
    for _ in range(300):
        top = rng.choice([40, 255, 256, 1000, 100_000])
        cases.append(sorted(rng.sample(range(top), rng.randint(1, min(12, top)))))
    values = [fmt.encode(poses) for poses in cases]
    values += [v[:-1] for v in values[::3]]  # the final STOP left off, as some values are stored
    values.append(b"")  # no positions kept
    offsets, flat = internals.decode_positions(values)
    assert len(offsets) == len(values) + 1
    for k, value in enumerate(values):
        got = flat[offsets[k] : offsets[k + 1]].tolist()
        assert got == (fmt.decode_positions(value) if value else []), (k, value)
    assert internals.decode_positions([])[0].tolist() == [0]


def _texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 40))]
        if rng.random() < 0.3:  # positions past 255 (deltas stored as two bytes)
            words[rng.randrange(len(words)) :] = ["filler"] * 300 + words[-3:]
        out.append(" ".join(words))
    return out


@pytest.fixture(scope="module")
def small_blocks(tmp_path_factory):
    """A real index on disk with posting blocks of three documents, in two segments."""
    full = make_schema()
    schema = Schema(**{name: full[name] for name in ("id", "title", "abstract")})
    ix = FileStorage(str(tmp_path_factory.mktemp("ix"))).create_index(schema)
    rng = random.Random(11)
    texts = _texts(rng, 60)
    for part in (texts[:35], texts[35:]):
        writer = ix.writer(codec=W3Codec(blocklimit=3))
        for text in part:
            writer.add_document(id=f"p{rng.random()}", title=" ".join(rng.sample(WORDS, 2)), abstract=text)
        writer.commit(merge=False)
    yield ix
    ix.close()


def test_every_terms_positions_are_whooshs_across_blocks_and_segments(small_blocks):
    with small_blocks.searcher() as searcher:
        leaves = searcher.reader().leaf_readers()
        assert len(leaves) == 2
        compared = 0
        for segreader, _ in leaves:
            for field in ("title", "abstract"):
                for tbytes in segreader.lexicon(field):
                    ids, offsets, flat = internals.read_all_positions(segreader, field, tbytes)
                    m = segreader.postings(field, tbytes)
                    theirs = {}
                    while m.is_active():
                        theirs[m.id()] = m.value_as("positions")
                        m.next()
                    ours = {d: flat[offsets[k] : offsets[k + 1]].tolist() for k, d in enumerate(ids.tolist())}
                    assert ours == theirs, (field, tbytes)
                    compared += len(theirs)
        assert compared > 400
        assert internals.read_all_positions(leaves[0][0], "abstract", b"absent")[0].tolist() == []


@pytest.mark.parametrize("slop", [1, 2, 4])
def test_phrases_match_what_whooshs_span_matcher_finds(small_blocks, slop):
    with small_blocks.searcher() as searcher:
        evaluator = Evaluator(searcher, {}, FIELD_BOOSTS, SEARCH_FIELDS, fast=True)
        matched = 0
        for words in [(a, b) for a in WORDS for b in WORDS] + [("alpha", "beta", "gamma"), ("model", "filler")]:
            q = wquery.Phrase("abstract", list(words), slop=slop)
            theirs = sorted(q.docs(searcher))
            ours = evaluator.evaluate(q)[0].tolist()
            assert ours == theirs, (words, slop)
            matched += len(ours)
        assert matched > 50


def test_the_cache_lets_the_oldest_go_by_bytes_and_keeps_the_newest():
    lru = ByteLRU(budget=10_000)
    lru.put("a", (np.zeros(500, dtype=np.int64),))  # 4,000 bytes
    lru.put("b", (np.zeros(500, dtype=np.int64),))
    assert lru.get("a") is not None  # now the most recent
    lru.put("c", (np.zeros(500, dtype=np.int64),))  # over budget: "b" goes
    assert lru.get("b") is None and lru.get("a") is not None and lru.get("c") is not None
    lru.put("huge", (np.zeros(10_000, dtype=np.int64),))  # alone over budget: kept, the rest go
    assert len(lru) == 1 and lru.get("huge") is not None
    assert lru.nbytes > lru.budget


def test_prefix_and_fuzzy_words_do_not_push_other_words_out(tmp_path):
    rng = random.Random(3)
    vocabulary = [f"mod{a}{b}{c}" for a in "abcdefgh" for b in "abcdefgh" for c in "abcd"]  # 256 words "mod…"
    with Library.open(tmp_path / "lib") as lib:
        papers = [
            Candidate(line=1, title=f"graph study {i}", abstract=" ".join(rng.sample(vocabulary, 12)), authors=[])
            for i in range(300)
        ]
        lib.import_parsed(ParsedFile(path="<generated>", format="listing", papers=papers, problems=[]))
        with SearchIndex(lib).open() as ix:
            assert ix.search("graph").total == 300
            ix.search("mod*")  # hundreds of words, each read once
            ix.search("modaab~")
            for data in ix._segments.values():
                kept = set(data._terms._items)
                assert ("title", b"graph") in kept  # still there: the expansions went to their own cache
                assert not any(t.startswith(b"mod") for _, t in kept)
                assert any(t.startswith(b"mod") for _, t in data._expanded._items)
