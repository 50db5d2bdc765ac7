"""The block-at-a-time evaluator (core/search/evaluator.py) finds the same papers as
Whoosh's own matcher, whatever edits came before and whatever the query.

Random edit sequences go through `Library` (add papers, change titles and
notes, tag, set status, fill lists, delete), each followed by `flush()`, so
the writer commits between them: updated and deleted papers leave
deletions in older segments, and Whoosh's merge policy merges small
segments along the way. Then random queries (words, prefixes, fuzzy words,
phrases, fields, AND/OR/NOT, parentheses) are answered both ways, on one
searcher.

PAPERSHELF_PROPERTY_EXAMPLES sets how many edit sequences are tried (100 by
default, about 30 s on 2 cores; derandomized, so CI tries the same ones); a longer run:
    PAPERSHELF_PROPERTY_EXAMPLES=1000 pytest tests/test_fastsearch_property.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papershelf.core.importers.base import Candidate, ParsedFile
from papershelf.core.library import Library
from papershelf.core.search import SearchIndex
from test_fastsearch import live_docs

EXAMPLES = int(os.environ.get("PAPERSHELF_PROPERTY_EXAMPLES", "100"))

# few words, so that queries match and papers share terms across segments;
# stems that collide ("model", "models", "modeling"), stop words, an accent
WORDS = [
    "model",
    "models",
    "modeling",
    "language",
    "reward",
    "policy",
    "graph",
    "neural",
    "diffusion",
    "phase",
    "transition",
    "learning",
    "robot",
    "schrödinger",
    "solver",
    "the",
    "of",
]
AUTHORS = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Émile Borel", "Mohammad Raza"]
SURNAMES = ["lovelace", "turing", "hopper", "borel", "emile", "raza"]
AREAS = ["Robotics", "Language Models", "Theory"]
TAGS = ["llm", "rl", "to-check"]
STATUSES = ["to-read", "reading", "read"]
LISTS = ["mine", "later"]

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
candidate = st.builds(
    lambda title, abstract, authors, area, year, tags: Candidate(
        abstract=abstract, line=1, title=title, authors=authors, area=area, year=year, tags=tags
    ),
    title=words,
    abstract=st.one_of(
        st.lists(st.sampled_from(WORDS), min_size=3, max_size=30).map(" ".join),
        # long abstracts: positions past 255 and 65,535 are stored another way (internals.decode_positions)
        st.tuples(st.sampled_from([250, 300, 70_000]), words, words).map(
            lambda t: t[1] + " " + " ".join(["filler"] * t[0]) + " " + t[2]
        ),
    ),
    authors=st.lists(st.sampled_from(AUTHORS), max_size=2, unique=True),
    area=st.sampled_from(AREAS),
    year=st.sampled_from([2023, 2024]),
    tags=st.lists(st.sampled_from(TAGS), max_size=2, unique=True),
)
which = st.lists(st.integers(0, 10**6), min_size=1, max_size=4)  # papers, by position mod count

edit = st.one_of(
    st.tuples(st.just("add"), st.lists(candidate, min_size=1, max_size=4)),
    st.tuples(st.just("title"), st.integers(0, 10**6), words),
    st.tuples(st.just("notes"), st.integers(0, 10**6), words),
    st.tuples(st.just("tag"), which, st.sampled_from(TAGS)),
    st.tuples(st.just("status"), which, st.sampled_from(STATUSES)),
    st.tuples(st.just("list"), which, st.sampled_from(LISTS)),
    st.tuples(st.just("delete"), which),
)

word = st.sampled_from(WORDS)
leaf = st.one_of(
    word,
    word.map(lambda w: w[:3] + "*"),
    word.map(lambda w: w[:-1] + "x~"),
    st.tuples(st.sampled_from(["title", "abstract", "notes"]), word).map(":".join),
    st.sampled_from(SURNAMES).map(lambda s: "author:" + s),
    st.sampled_from(TAGS).map(lambda t: "tag:" + t),
    st.sampled_from(STATUSES).map(lambda s: "status:" + s),
    st.sampled_from(LISTS).map(lambda n: "list:" + n),
    st.sampled_from(["robotics", "language", "theory"]).map(lambda a: "area:" + a),
    st.sampled_from(["tags:*", "notes:*", "year:2024"]),
    st.lists(word, min_size=2, max_size=3).map(lambda ws: '"%s"' % " ".join(ws)),
    st.tuples(st.lists(word, min_size=2, max_size=3), st.integers(1, 4)).map(
        lambda t: '"%s"~%d' % (" ".join(t[0]), t[1])
    ),
    st.tuples(st.sampled_from(["title", "abstract"]), st.lists(word, min_size=2, max_size=2)).map(
        lambda t: '%s:"%s"' % (t[0], " ".join(t[1]))
    ),
)
query = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(" ".join),
        st.tuples(inner, inner).map(" AND ".join),
        st.tuples(inner, inner).map(" OR ".join),
        st.tuples(inner, inner).map(" AND NOT ".join),
        inner.map(lambda q: "NOT " + q),
        inner.map(lambda q: "-" + q),
        inner.map(lambda q: "(" + q + ")"),
    ),
    max_leaves=6,
)


def apply(lib: Library, step) -> None:
    ids = list(lib.ids())
    kind = step[0]
    if kind == "add":
        lib.import_parsed(ParsedFile(path="<generated>", format="listing", papers=list(step[1]), problems=[]))
        return
    if not ids:
        return
    if kind == "title":
        lib.set_title(ids[step[1] % len(ids)], step[2])
    elif kind == "notes":
        lib.set_notes(ids[step[1] % len(ids)], step[2])
    else:
        chosen = list(dict.fromkeys(ids[n % len(ids)] for n in step[1]))
        if kind == "tag":
            lib.add_tags(chosen, [step[2]])
        elif kind == "status":
            lib.set_status(chosen, step[2])
        elif kind == "list":
            if step[2] not in lib.lists():
                lib.create_list(step[2])
            lib.add_to_list(step[2], chosen)
        elif kind == "delete":
            # at least one paper stays: an index with no segment at all is
            # another matter (issue 11, item 2)
            lib.delete_papers(chosen[: len(ids) - 1])


def disagreements(ix: SearchIndex, queries) -> list:
    out = []
    for text in queries:
        q, _ = ix.parse(text)
        with ix._search_lock:
            s = ix._get_searcher()
            expected = {s.stored_fields(d)["id"] for d in live_docs(s, q)}
        found = ix.search(text, limit=None, facets=False)
        assert ix._searcher is s, "a commit landed during the comparison: flush() returned early"
        got = set(found.ids)
        assert found.total == len(got)
        if expected != got:
            out.append((text, str(q), sorted(expected - got)[:5], sorted(got - expected)[:5]))
    return out


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("PAPERSHELF_PROPERTY_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    first=st.lists(candidate, min_size=1, max_size=12),
    edits=st.lists(edit, min_size=1, max_size=10),
    queries=st.lists(query, min_size=1, max_size=12),
)
def test_fast_search_finds_what_whoosh_finds_after_any_edits(first, edits, queries):
    with tempfile.TemporaryDirectory() as tmp:
        with Library.open(Path(tmp) / "lib") as lib:
            lib.import_parsed(ParsedFile(path="<generated>", format="listing", papers=first, problems=[]))
            with SearchIndex(lib).open() as ix:
                ix.batch_seconds = 0  # commit each edit as it comes: more segments, faster
                for step in edits:
                    apply(lib, step)
                    assert ix.flush(timeout=30)
                    ix.search("model")  # a searcher (and evaluator) per state, as the window has
                assert disagreements(ix, queries) == []  # (query, parsed, only Whoosh found, only we found)
                everything = ix.search("", limit=None)
                assert set(everything.ids) == set(lib.ids()) and everything.total == len(lib)
                tagged = ix.search("", tag="llm", limit=None)
                assert set(tagged.ids) == {p.id for p in lib.papers() if "llm" in p.tags}
