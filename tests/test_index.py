"""The search index on the seeds: every query form, filters, facets, snippets,
incremental updates, and recovery from a missing, stale, damaged or locked index."""

from __future__ import annotations

import shutil

import pytest

from conftest import copy_library, index_dir, local_dir, read_only_seeded
from papershelf.core.library import Library
from papershelf.core.search import STATE_FILE, SearchIndex


@pytest.fixture(scope="module")
def seeded_dir(tmp_path_factory):
    from conftest import SEEDS

    folder = tmp_path_factory.mktemp("indexed") / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
        with SearchIndex(lib).open():
            pass
    return folder, local_dir(folder)


@pytest.fixture
def lib_dir(seeded_dir, tmp_path):
    """A private copy of the seeded library and its index, per test."""
    return copy_library(seeded_dir[0], tmp_path / "library", seeded_dir[1])


@pytest.fixture
def searcher(lib_dir):
    lib = Library.open(lib_dir)
    ix = SearchIndex(lib).open()
    yield lib, ix
    ix.close()
    lib.close()


def titles(lib, ids):
    return [lib.get(i).title for i in ids]


def by_author(lib, name):
    return [p.id for p in lib.papers() if name in p.authors]


def test_opening_an_up_to_date_index_does_not_rebuild(searcher):
    _lib, ix = searcher
    assert ix.rebuilt_because == ""
    assert ix.doc_count() == 372


@pytest.mark.parametrize(
    "query, expected_title_start",
    [
        ("verisimpl", "VeriSimpl: a solver–LLM framework"),
        ("VeriSimpl", "VeriSimpl: a solver–LLM framework"),
        ("author:thaman", "RHB: Reward Hacking Benchmark"),
        ("bayesqp", "BayeSQP: a novel algorithm"),
    ],
)
def test_finds_the_paper(searcher, query, expected_title_start):
    lib, ix = searcher
    res = ix.search(query)
    assert res.ids and lib.get(res.ids[0]).title.startswith(expected_title_start)


def test_diacritics_fold_both_ways(searcher):
    lib, ix = searcher
    [malan] = by_author(lib, "Abele Mălan")
    assert ix.search("author:malan").ids == [malan]
    assert ix.search("author:Mălan").ids == [malan]
    [alvarez] = by_author(lib, "Mauricio Álvarez")
    assert ix.search("alvarez").ids == [alvarez]


def test_all_plain_words_must_match_and_title_ranks_first(searcher):
    lib, ix = searcher
    both = ix.search("reward hacking")
    assert both.total >= 1
    for pid in both.ids:
        text = (lib.get(pid).title + " " + lib.get(pid).abstract).lower()
        assert "reward" in text and "hack" in text
    assert lib.get(both.ids[0]).title.startswith("RHB: Reward Hacking Benchmark")


def test_phrase_boolean_prefix_fuzzy(searcher):
    lib, ix = searcher
    phrase = ix.search('"phase transition"')
    assert phrase.total >= 1
    assert all("phase transition" in lib.get(i).abstract.lower() for i in phrase.ids)
    words = ix.search("phase transition")
    assert words.total >= phrase.total
    union = ix.search("verisimpl OR bayesqp")
    assert union.total == 2
    minus = ix.search("optimization AND NOT bayesian")
    assert minus.total > 0
    assert all("bayesian" not in lib.get(i).abstract.lower() for i in minus.ids)
    prefix = ix.search("diffus*")
    assert prefix.total >= 10
    assert ix.search("diffuson~").total == ix.search("diffusion").total


def test_fields_status_area_year(searcher):
    lib, ix = searcher
    assert ix.search("status:unread").total == 372
    area = ix.search("area:neuroscience")
    assert area.total == 2 and all(lib.get(i).subarea == "Neuroscience, Cognitive Science" for i in area.ids)
    assert ix.search("year:2024").total == 0  # the listings carry no years


def test_tags_and_lists_are_searchable_after_edits(searcher):
    lib, ix = searcher
    tagged = lib.ids()[5:12]
    lib.add_tags(tagged, ["to-read"])
    lib.add_to_list("Thesis", tagged[:3])
    assert ix.flush()
    assert sorted(ix.search("tag:to-read").ids) == sorted(tagged)
    assert sorted(ix.search("list:thesis").ids) == sorted(tagged[:3])
    lib.remove_tags(tagged[:2], ["to-read"])
    lib.set_status(tagged[:4], "reading")
    assert ix.flush()
    assert sorted(ix.search("tag:to-read").ids) == sorted(tagged[2:])
    assert sorted(ix.search("", status="reading").ids) == sorted(tagged[:4])


def test_filters_combine_with_any_query_and_facets_count(searcher):
    lib, ix = searcher
    ids = ix.search("optimization", limit=None).ids
    lib.add_tags(ids[:3], ["favourite"])
    lib.set_status(ids[:1], "read")
    assert ix.flush()
    res = ix.search("optimization", tag="favourite")
    assert sorted(res.ids) == sorted(ids[:3])
    assert res.facets["status"] == {"read": 1, "unread": 2}
    assert res.facets["tags"] == {"favourite": 3}
    everything = ix.search("", limit=5)
    assert everything.total == 372 and len(everything.ids) == 5
    assert sum(everything.facets["area"].values()) == sum(1 for p in lib.papers() if p.area)
    assert everything.facets["area"]["deep learning"] == sum(1 for p in lib.papers() if p.area == "Deep Learning")


def test_sorting(searcher):
    lib, ix = searcher
    by_title = ix.search("optimization", sort="title", limit=None).ids
    folded = [lib.get(i).title.casefold() for i in by_title]
    assert folded == sorted(folded)
    by_added = ix.search("", sort="added", limit=None).ids
    added = [lib.get(i).added for i in by_added]
    assert added == sorted(added, reverse=True)


def test_snippets_highlight_and_escape(searcher):
    _lib, ix = searcher
    res = ix.search("verisimpl")
    snippets = ix.snippets(res.ids, "verisimpl")
    assert '<b class="match term0">VeriSimpl</b>' in snippets[res.ids[0]]
    assert ix.snippets(res.ids, "") == {}


def test_snippets_escape_hostile_abstracts(searcher):
    lib, ix = searcher
    from papershelf.core.importers import parse_text

    hostile = (
        "We study <script>alert('x')</script> injection and <img src=x onerror=alert(1)> tags "
        "in abstracts that people paste into reading list managers every single day."
    )
    lib.import_parsed(parse_text(f"Daily Papers\n\n{hostile}\n", "<pasted text>"))
    assert ix.flush()
    res = ix.search("injection")
    html = ix.snippets(res.ids, "injection")[res.ids[0]]
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_more_like_this(searcher):
    _lib, ix = searcher
    [pid] = ix.search("verisimpl").ids
    similar = ix.more_like(pid, limit=5)
    assert pid not in similar and len(similar) == 5


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "(unbalanced (parens",
        "AND",
        "OR OR",
        "NOT",
        "*",
        "?",
        "~",
        "^",
        "x" * 10_000,
        "word " * 2_000,
        "control\x00chars\x07here\x1b[31m",
        "nosuchfield:value",
        "title:",
        "year:[2020 TO",
        "((((",
        "\\",
        "tag:",
        'author:"',
        "diffus* AND (",
        "🦜 emoji ☃",
    ],
)
def test_bad_queries_never_raise(searcher, query):
    _lib, ix = searcher
    res = ix.search(query)
    assert res.total >= 0 and len(res.ids) <= 50


def test_deleted_index_is_rebuilt(lib_dir):
    shutil.rmtree(index_dir(lib_dir))
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.rebuilt_because == "there is no index yet"
        assert ix.search("verisimpl").total == 1


@pytest.mark.parametrize("damage", ["garbage toc", "truncated segment", "empty toc", "deleted segment"])
def test_damaged_index_is_rebuilt(lib_dir, damage):
    folder = index_dir(lib_dir)
    toc = next(folder.glob("_MAIN_*.toc"))
    segment = max((p for p in folder.iterdir() if p.suffix not in (".toc", ".json")), key=lambda p: p.stat().st_size)
    if damage == "garbage toc":
        toc.write_bytes(b"\x00garbage" * 100)
    elif damage == "empty toc":
        toc.write_bytes(b"")
    elif damage == "truncated segment":
        segment.write_bytes(segment.read_bytes()[: segment.stat().st_size // 2])
    else:
        segment.unlink()
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.rebuilt_because.startswith("the index could not be read")
        assert ix.search("author:thaman").total == 1 and ix.doc_count() == 372


def test_stale_write_lock_after_a_crash_is_no_obstacle(lib_dir):
    (index_dir(lib_dir) / "MAIN_WRITELOCK").write_text("")
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        lib.add_tags(lib.ids()[:1], ["after-crash"])
        assert ix.flush()
        assert ix.search("tag:after-crash").ids == lib.ids()[:1]


def test_index_catches_up_with_edits_made_elsewhere(lib_dir):
    with Library.open(lib_dir) as lib:  # another process's edits, index not watching
        pid = lib.ids()[0]
        lib.add_tags([pid], ["elsewhere"])
        gone = lib.ids()[1]
        lib.delete_papers([gone])
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.rebuilt_because == ""
        assert ix.search("tag:elsewhere").ids == [pid]
        assert ix.doc_count() == 371 and gone not in ix.search("", limit=None).ids


def test_index_from_another_version_is_rebuilt(lib_dir):
    state = index_dir(lib_dir) / STATE_FILE
    state.write_text('{"version": 0, "generation": [0, 0]}')
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert "another version" in ix.rebuilt_because
        assert ix.doc_count() == 372


def test_list_changes_made_elsewhere_reach_the_index(lib_dir):
    with Library.open(lib_dir) as lib:
        a, b = lib.ids()[:2]
        lib.add_to_list("Reading group", [a, b])
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert sorted(ix.search('list:"reading group"').ids) == sorted([a, b])
    with Library.open(lib_dir) as lib:
        lib.rename_list("Reading group", "Journal club")
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.search('list:"reading group"').ids == []
        assert sorted(ix.search("", list_name="journal club").ids) == sorted([a, b])
        lib.delete_list("Journal club")
        assert ix.flush()
        assert ix.search("", list_name="journal club").ids == []


def test_read_only_folder_gives_a_clear_error_and_leaves_the_library(tmpfs, monkeypatch):
    """The index's own folder (this machine's state folder) read-only: a clear error."""
    from papershelf.core.errors import SearchIndexError

    with read_only_seeded(tmpfs, monkeypatch) as lib:
        with pytest.raises(SearchIndexError, match=r"could not be built.*library is unaffected"):
            SearchIndex(lib).open()
        assert len(lib) == 20


def test_a_library_on_a_read_only_disk_is_searched_with_an_index_of_this_machines(seeds, tmpfs):
    """The index is not in the library folder: a library on a read-only disk (a mounted
    share, a CD) is searched all the same, and nothing is written to it."""
    import os

    from conftest import run_cli, snapshot_files

    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root)")
    with tmpfs("8m") as mount:
        folder = mount.path / "library"
        with Library.open(folder) as lib:
            lib.import_files(seeds[:1])
        mount.remount_readonly()
        before = snapshot_files(folder)
        res = run_cli("search", "--json", "learning", data_dir=folder)
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        assert '"id"' in res.stdout and index_dir(folder).is_dir()
        assert snapshot_files(folder) == before


def test_commas_in_tags_and_list_names(searcher):
    lib, ix = searcher
    ids = lib.ids()[:3]
    lib.add_to_list("Reading, 2024", ids)
    lib.add_tags(ids[:2], ["a,b"])
    assert ix.flush()
    assert sorted(ix.search("", list_name="reading, 2024").ids) == sorted(ids)
    res = ix.search("", tag="A,B")
    assert sorted(res.ids) == sorted(ids[:2])
    assert res.facets["tags"] == {"a,b": 2}  # one tag, shown as the user wrote it


def test_status_filter_takes_what_people_type(searcher):
    lib, ix = searcher
    pid = lib.ids()[0]
    lib.set_status([pid], "to-read")
    assert ix.flush()
    assert ix.search("", status="To read").ids == [pid]
    assert ix.search("", status="todo").ids == [pid]


def test_the_writer_records_what_it_indexed(searcher, lib_dir, caplog):
    lib, ix = searcher
    pid = lib.ids()[0]
    lib.add_tags([pid], ["recorded"])
    assert ix.flush()
    assert "index update failed" not in caplog.text
    import json

    state = json.loads((index_dir(lib_dir) / "papershelf-index.json").read_text())
    assert state["generation"] == list(lib.generation)
    assert "updated_mark" not in state  # no clock: the documents' digests say what is current


def test_snippet_fragments_find_every_form_of_a_word():
    from papershelf.core.search import PaperAnalyzer, make_snippet

    normal = PaperAnalyzer()._normal
    terms = {normal("study"): 0, normal("happy"): 1, normal("malan"): 2}
    html = make_snippet("Our studies study what happiness and happy studying mean.", terms, normal)
    assert html.count("<b") == 5 and '<b class="match term1">happy</b>' in html
    accented = make_snippet("Results by Mălan & co. <i>study</i> this.", terms, normal)
    assert '<b class="match term2">Mălan</b>' in accented and "&amp;" in accented and "&lt;i&gt;" in accented
    filler = " ".join(["filler"] * 80)
    far = make_snippet(f"Study begins. {filler} Then happy ends. {filler} Last study.", terms, normal, top=2)
    parts = far.split(" … ")
    assert len(parts) == 2 and all(len(p) < 260 for p in parts)
    assert "happy" in far  # the fragment with the most distinct words wins a place
    assert make_snippet("Nothing to see here.", terms, normal) == ""


def test_a_second_rebuild_at_the_same_time_waits_for_the_first_can_be_cancelled_and_harms_nothing(lib_dir):
    from papershelf.core.fileio import try_lock

    held = try_lock(local_dir(lib_dir) / "index.rebuild.lock")  # another Papershelf rebuilding
    asked = []

    def cancelled():  # the waiting rebuild asks whether to go on; the second time, the user cancels
        asked.append(1)
        return len(asked) > 1

    try:
        with Library.open(lib_dir) as lib:
            ix = SearchIndex(lib)
            assert ix.rebuild(cancelled=cancelled) is False  # it waited (asked twice), then stopped
            ix.close()
    finally:
        import os

        os.close(held)
    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        assert ix.rebuilt_because == "" and ix.doc_count() == 372


def test_an_edit_committed_by_another_process_is_not_mistaken_for_damage(lib_dir):
    import json

    with Library.open(lib_dir) as lib, SearchIndex(lib).open() as ix:
        lib.add_tags(list(lib.ids())[:10], ["first"])
        ix.flush()
        state_before = (index_dir(lib_dir) / STATE_FILE).read_text()
        for k in range(6):  # enough commits for Whoosh to merge small segments away
            lib.add_tags(list(lib.ids())[k * 10 : (k + 1) * 10], [f"t{k}"])
            ix.flush()
    recorded = set(json.loads(state_before)["files"])
    assert recorded - {p.name for p in (index_dir(lib_dir)).iterdir()}  # some recorded files are gone
    # a reader holding the older state: files it recorded were merged away, which is not damage
    with Library.open(lib_dir) as lib:
        ix = SearchIndex(lib)
        (index_dir(lib_dir) / STATE_FILE).write_text(state_before)
        ix.open()
        assert ix.rebuilt_because == ""
        ix.close()


def test_an_index_written_before_the_search_package_opens_without_a_rebuild(lib_dir, monkeypatch):
    """Indexes name their analyzer's class by module path in their pickled
    schema; those written before core/search/ name papershelf.core.index."""
    from papershelf.core.search import PaperAnalyzer
    from papershelf.core.search.state import discard

    index = index_dir(lib_dir)  # before undo() puts the test's folders back as they were before it
    with Library.open(lib_dir) as lib:
        discard(index)
        monkeypatch.setattr(PaperAnalyzer, "__module__", "papershelf.core.index")  # as pickled then
        SearchIndex(lib).open().close()
        monkeypatch.undo()
        assert any(b"papershelf.core.index" in p.read_bytes() for p in index.glob("*.toc"))
        with SearchIndex(lib).open() as ix:
            assert ix.rebuilt_because == "" and not ix.damaged and ix.doc_count() == 372
            lib.add_tags(lib.ids()[:1], ["later"])
            assert ix.flush() and len(ix.search("tag:later").ids) == 1
