"""`Library` is the only door: bad input gives a typed error and changes nothing;
the library owns its search index and answers a `Query` with an `Answer`;
the GUI reaches nothing behind the facade."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, SEEDS, copy_seeded, read_only_seeded, seeded_index, snapshot_files
from papershelf.core.biblio.sorting import SORT_KEYS
from papershelf.core.errors import (
    InvalidValueError,
    ListingError,
    NotFoundError,
    NothingToExportError,
    PapershelfError,
    SearchIndexDamagedError,
    SearchIndexError,
    UncertainListingError,
)
from papershelf.core.library import PASTE_LABEL, FileReport, IndexState, Library
from papershelf.core.paper import Status
from papershelf.core.query import Answer, Query

APP = ROOT / "app" / "papershelf"


# ---- bad input: a typed error a person can act on, and nothing changed ----------------


@pytest.fixture
def small(tmp_path):
    """A library of the first listing, with a tag and a reading list."""
    lib = Library.open(tmp_path / "library")
    lib.import_files(SEEDS[:1])
    ids = lib.ids()
    lib.add_tags(ids[:3], ["llm"])
    lib.add_to_list("to cite", ids[:2])
    yield lib
    lib.close()


def _record(lib, pid):
    return lib.records([pid])[pid]


BAD_CALLS = {
    # name: (call(lib, ids), error type, words the message holds)
    "set_status unknown": (
        lambda lib, ids: lib.set_status(ids[:1], "bogus"),
        InvalidValueError,
        "unknown status 'bogus'; use one of: unread, to-read",
    ),
    "set_status not text": (lambda lib, ids: lib.set_status(ids[:1], 3), InvalidValueError, "a status is one of"),
    "set_status unknown id": (
        lambda lib, ids: lib.set_status([ids[0], "nope"], "read"),
        NotFoundError,
        "No paper with id 'nope'",
    ),
    "set_status one id as text": (
        lambda lib, ids: lib.set_status(ids[0], "read"),
        InvalidValueError,
        "put it in a list",
    ),
    "add_tags one string": (
        lambda lib, ids: lib.add_tags(ids, "llm, cite"),
        InvalidValueError,
        "tags are given as a list",
    ),
    "add_tags not text": (lambda lib, ids: lib.add_tags(ids, [3]), InvalidValueError, "a tag must be text"),
    "remove_tags one string": (
        lambda lib, ids: lib.remove_tags(ids, "llm"),
        InvalidValueError,
        "tags are given as a list",
    ),
    "set_tags none": (lambda lib, ids: lib.set_tags(ids, None), InvalidValueError, "tags are given as a list"),
    "set_notes not text": (lambda lib, ids: lib.set_notes(ids[0], None), InvalidValueError, "notes must be text"),
    "set_notes unknown id": (lambda lib, ids: lib.set_notes("nope", "x"), NotFoundError, "No paper with id"),
    "set_rating 7": (lambda lib, ids: lib.set_rating(ids, 7), InvalidValueError, "a rating is 1 to 5 stars"),
    "set_rating text": (lambda lib, ids: lib.set_rating(ids, "3"), InvalidValueError, "a rating is 1 to 5 stars"),
    "set_title not text": (lambda lib, ids: lib.set_title(ids[0], 5), InvalidValueError, "a title must be text"),
    "delete_papers unknown id": (
        lambda lib, ids: lib.delete_papers([ids[0], "nope"]),
        NotFoundError,
        "No paper with id 'nope'",
    ),
    "rename_tag empty": (lambda lib, ids: lib.rename_tag("llm", "  "), InvalidValueError, "a tag needs a name"),
    "rename_tag not text": (lambda lib, ids: lib.rename_tag("llm", None), InvalidValueError, "a tag must be text"),
    "delete_tag not text": (lambda lib, ids: lib.delete_tag(None), InvalidValueError, "a tag must be text"),
    "delete_tag unknown": (lambda lib, ids: lib.delete_tag("difusion"), NotFoundError, "No tag 'difusion'"),
    "make_keywords_tags one string": (
        lambda lib, ids: lib.make_keywords_tags(ids[0]),
        InvalidValueError,
        "paper ids are given as a list",
    ),
    "make_keywords_tags unknown id": (
        lambda lib, ids: lib.make_keywords_tags(["nope"]),
        NotFoundError,
        "No paper with id",
    ),
    "set_citekey malformed": (
        lambda lib, ids: lib.set_citekey(ids[0], "1bad key"),
        InvalidValueError,
        "is not a usable citation key",
    ),
    "set_citekey not text": (
        lambda lib, ids: lib.set_citekey(ids[0], 12),
        InvalidValueError,
        "a citation key must be text",
    ),
    "export_bibtex dialect": (
        lambda lib, ids: lib.export_bibtex(ids, lib.folder.parent / "out.bib", "latex"),
        InvalidValueError,
        "unknown dialect 'latex'; use bibtex or biblatex",
    ),
    "export_bibtex nothing": (
        lambda lib, ids: lib.export_bibtex([], lib.folder.parent / "out.bib"),
        NothingToExportError,
        "No papers to export",
    ),
    "citation_keys unknown id": (
        lambda lib, ids: lib.citation_keys([ids[0], "nope"]),
        NotFoundError,
        "No paper with id 'nope'",
    ),
    "bibtex_entries dialect": (lambda lib, ids: lib.bibtex_entries(ids, "latex"), InvalidValueError, "unknown dialect"),
    "create_list empty": (lambda lib, ids: lib.create_list("   "), InvalidValueError, "a reading list needs a name"),
    "create_list not text": (
        lambda lib, ids: lib.create_list(None),
        InvalidValueError,
        "a reading list's name must be text",
    ),
    "add_to_list unknown id": (
        lambda lib, ids: lib.add_to_list("new list", ["nope"]),
        NotFoundError,
        "No paper with id 'nope'",
    ),
    "remove_from_list no list": (
        lambda lib, ids: lib.remove_from_list("to sit", ids),
        NotFoundError,
        "did you mean 'to cite'?",
    ),
    "reorder_list other papers": (
        lambda lib, ids: lib.reorder_list("to cite", ids[2:4]),
        InvalidValueError,
        "a new order must hold exactly the papers already on the list",
    ),
    "rename_list empty": (
        lambda lib, ids: lib.rename_list("to cite", ""),
        InvalidValueError,
        "a reading list needs a name",
    ),
    "rename_list taken": (
        lambda lib, ids: (lib.create_list("later"), lib.rename_list("to cite", "LATER")),
        InvalidValueError,
        "there is already a reading list named 'LATER'",
    ),
    "delete_list no list": (lambda lib, ids: lib.delete_list("nope"), NotFoundError, "No reading list named 'nope'"),
    "restore_fields unknown status": (
        lambda lib, ids: lib.restore_fields({ids[0]: {"status": "bogus"}}),
        InvalidValueError,
        "unknown status 'bogus'",
    ),
    "restore_fields other field": (
        lambda lib, ids: lib.restore_fields({ids[0]: {"abstract": ""}}),
        InvalidValueError,
        "abstract cannot be put back by undo",
    ),
    "restore_lists not ids": (
        lambda lib, ids: lib.restore_lists({"to cite": "abc"}),
        InvalidValueError,
        "must hold a list of paper ids",
    ),
    "restore_papers not papers": (
        lambda lib, ids: lib.restore_papers(["abc"], {}),
        InvalidValueError,
        "only papers the library handed out can be restored",
    ),
    "put_records unknown field": (
        lambda lib, ids: lib.put_records({ids[0]: {**_record(lib, ids[0]), "colour": 1}}),
        InvalidValueError,
        "has fields a paper does not have: colour",
    ),
    "put_records other paper": (
        lambda lib, ids: lib.put_records({ids[0]: _record(lib, ids[1])}),
        InvalidValueError,
        "is of another paper",
    ),
    "put_records tags not a list": (
        lambda lib, ids: lib.put_records({ids[0]: {**_record(lib, ids[0]), "tags": "abc"}}),
        InvalidValueError,
        "the tags of",
    ),
    "put_records rating not a number": (
        lambda lib, ids: lib.put_records({ids[0]: {**_record(lib, ids[0]), "rating": "5"}}),
        InvalidValueError,
        "the rating of",
    ),
    "put_records new paper title not text": (
        lambda lib, ids: lib.put_records({"0123456789": {"title": 5}}),
        InvalidValueError,
        "the title of 0123456789 cannot be 5",
    ),
    "swap_fields added not text": (
        lambda lib, ids: lib.swap_fields(
            {ids[0]: _record(lib, ids[0])}, {ids[0]: {**_record(lib, ids[0]), "added": 5}}
        ),
        InvalidValueError,
        "the added of",
    ),
    "swap_fields unknown status": (
        lambda lib, ids: lib.swap_fields({ids[0]: {"status": "x"}}, {ids[0]: {}}),
        InvalidValueError,
        "unknown status 'x'",
    ),
    "import_files one path": (lambda lib, ids: lib.import_files(str(SEEDS[1])), InvalidValueError, "put it in a list"),
    "import_text not text": (lambda lib, ids: lib.import_text(None), InvalidValueError, "pasted text must be text"),
    "import_text no listing": (
        lambda lib, ids: lib.import_text("hello"),
        ListingError,
        "does not look like a list of papers",
    ),
    "import_parsed not parsed": (
        lambda lib, ids: lib.import_parsed("text"),
        InvalidValueError,
        "import_parsed takes a parsed file",
    ),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_a_typed_error_and_changes_nothing(small, name):
    call, error, words = BAD_CALLS[name]
    folder, ids = small.folder, small.ids()
    before, generation = snapshot_files(folder), small.generation
    state = ({p.id: p.to_dict() for p in small.papers()}, small.lists())
    with pytest.raises(error) as caught:
        call(small, ids)
    assert isinstance(caught.value, PapershelfError)
    assert words in str(caught.value)
    if not isinstance(caught.value, InvalidValueError):  # those are ValueErrors too, as before
        assert not isinstance(caught.value, (ValueError, KeyError))
    if name != "rename_list taken":  # that one made the list it is refused by
        assert small.generation == generation and snapshot_files(folder) == before
    assert ({p.id: p.to_dict() for p in small.papers()}, small.lists()) == state or name == "rename_list taken"
    assert not (folder.parent / "out.bib").exists()


def test_bad_filters_are_typed_errors_too(small):
    with pytest.raises(InvalidValueError, match="unknown status 'soon'"):
        small.query(status="soon")
    with pytest.raises(InvalidValueError, match="unknown status"):
        small.search(Query(status="soon"))
    with pytest.raises(InvalidValueError, match="unknown order 'colour'"):
        small.search(Query(sort="colour"))
    with pytest.raises(InvalidValueError, match="unknown order 'authors'; use one of: relevance, added, title"):
        small.search(Query(sort="authors", index_order=True))
    with pytest.raises(InvalidValueError, match="a limit is a number of papers, 1 or more, not 0"):
        small.search(Query(limit=0))
    with pytest.raises(InvalidValueError, match="search takes a Query"):
        small.search("llm")
    with pytest.raises(NotFoundError, match="No paper with id"):
        small.get(["a list"])
    with pytest.raises(NotFoundError, match="did you mean 'to cite'"):
        small.list_ids("to cit")


def test_every_public_mutator_is_covered_above():
    mutators = {
        "set_status",
        "add_tags",
        "remove_tags",
        "set_tags",
        "set_notes",
        "set_rating",
        "set_title",
        "delete_papers",
        "rename_tag",
        "delete_tag",
        "make_keywords_tags",
        "set_citekey",
        "export_bibtex",
        "citation_keys",
        "bibtex_entries",
        "create_list",
        "add_to_list",
        "remove_from_list",
        "reorder_list",
        "rename_list",
        "delete_list",
        "restore_fields",
        "restore_lists",
        "restore_papers",
        "put_records",
        "swap_fields",
        "import_files",
        "import_text",
        "import_parsed",
    }
    covered = {name.split()[0] for name in BAD_CALLS}
    assert mutators <= covered, mutators - covered


# ---- importing pasted text ------------------------------------------------------------------


def test_pasted_text_and_bytes_import_through_the_facade(library):
    text = (SEEDS[0]).read_text(encoding="utf-8")
    report = library.import_text(text)
    assert isinstance(report, FileReport) and report.path == PASTE_LABEL and report.added == 20
    again = library.import_text(text.encode("utf-16"))
    assert again.added == 0 and again.unchanged == 20


def test_text_that_partly_looks_like_a_listing_waits_for_as_listing(library):
    abstract = (
        "We propose a method for learning representations of graphs that scales to very large inputs "
        "and beats every baseline we tried on the usual benchmarks by a wide margin."
    )
    text = f"Some notes of mine\n\nTODO: read these\n\n{abstract}\n"
    with pytest.raises(UncertainListingError) as caught:
        library.import_text(text)
    assert len(library) == 0
    assert FileReport.uncertain(PASTE_LABEL, caught.value).unconfirmed
    assert library.import_text(text, as_listing=True).added >= 1


# ---- the search index, owned by the library ---------------------------------------------------


@pytest.fixture(scope="module")
def indexed_dir(tmp_path_factory):
    return seeded_index(tmp_path_factory.mktemp("facade") / "library")


@pytest.fixture
def lib(indexed_dir, tmp_path):
    folder = tmp_path / "library"
    copy_seeded(indexed_dir, folder)
    lib = Library.open(folder)
    yield lib
    lib.close()


def test_before_the_index_is_open_titles_answer(lib):
    assert lib.index_status.state is IndexState.CLOSED and lib.index_normal is None
    answer = lib.search(Query("reward hacking"))
    assert isinstance(answer, Answer) and not answer.indexed and answer.facets == {}
    assert answer.ids and all("reward hacking" in lib.get(pid).title.casefold() for pid in answer.ids)
    assert lib.snippets(answer.ids, "reward") == {} and lib.highlight_terms("reward") == set()
    with pytest.raises(SearchIndexError, match="not open yet"):
        lib.more_like(answer.ids[0])
    with pytest.raises(NotFoundError):
        lib.more_like("nope")


def test_the_open_index_answers_with_counts_terms_and_snippets(lib):
    assert lib.open_index() is True
    status = lib.index_status
    assert status.state is IndexState.READY and status.ready and status.rebuilt_because == ""
    answer = lib.search(Query("author:thaman"))
    assert answer.indexed and answer.total == 1
    assert lib.get(answer.ids[0]).title.startswith("RHB: Reward Hacking Benchmark")
    everything = lib.search(Query())
    assert everything.total == 372 and sum(everything.facets["status"].values()) == 372
    words = lib.search(Query("reward hacking"))
    assert words.terms and lib.index_normal is not None and lib.index_normal("hacking") in words.terms
    snippets = lib.snippets(words.ids[:3], "reward hacking")
    assert set(snippets) <= set(words.ids[:3]) and '<b class="match' in "".join(snippets.values())
    assert lib.more_like(words.ids[0], limit=3)


def test_orders_lists_and_only_ids(lib):
    lib.open_index()
    by_title = lib.search(Query(sort="title")).ids
    assert by_title == sorted(by_title, key=lambda pid: SORT_KEYS["title"](lib.get(pid)))
    keys = [SORT_KEYS["title"](lib.get(pid)) for pid in lib.search(Query(sort="title", descending=True)).ids]
    assert keys == sorted(keys, reverse=True) and len(keys) == 372
    chosen = [by_title[5], by_title[1], by_title[9]]
    lib.add_to_list("mine", chosen)
    assert lib.search(Query(list_name="mine")).ids == chosen  # a reading list keeps its own order
    only = lib.search(Query(only_ids=frozenset(chosen[:2])))
    assert sorted(only.ids) == sorted(chosen[:2]) and sum(only.facets["status"].values()) == 2


def test_the_index_order_and_a_limit(lib):
    lib.open_index()
    full = lib.search(Query("learning", index_order=True))
    top = lib.search(Query("learning", index_order=True, limit=5))
    assert top.ids == full.ids[:5] and top.total == full.total > 5 and top.terms
    assert lib.search(Query("learning", index_order=True, limit=5, highlight=False)).terms == set()
    assert set(top.ids) <= set(top.scores)
    newest = lib.search(Query(index_order=True, sort="added", limit=3, facets=False))
    assert len(newest.ids) == 3 and newest.facets == {} and newest.total == 372


def test_a_search_that_finds_nothing_suggests_a_close_word(lib):
    lib.open_index()
    answer = lib.search(Query("rewrad"))
    assert answer.ids == [] and answer.suggestion == "reward"
    # the command line shows no suggestion and does not pay for one
    assert lib.search(Query("rewrad", suggest=False)).suggestion == ""


def test_an_edit_is_searchable_when_the_committed_hook_calls(lib):
    lib.open_index()
    landed = threading.Event()
    unsubscribe = lib.on_index_committed(landed.set)
    pid = lib.ids()[0]
    lib.add_tags([pid], ["facade-tag"])
    assert landed.wait(30)
    assert lib.search(Query("tags:facade-tag"), wait=False).ids == [pid]
    unsubscribe()


def test_an_index_found_damaged_answers_from_titles_until_opened_again(lib, monkeypatch):
    lib.open_index()
    index = lib._search._index
    calls = []

    def damaged(*args, **kwargs):
        calls.append(1)
        raise SearchIndexDamagedError("damaged", lib.folder)

    monkeypatch.setattr(index, "search", damaged)
    answer = lib.search(Query("reward"))
    assert answer.index_damaged and not answer.indexed and answer.ids
    assert lib.index_status.state is IndexState.DAMAGED
    again = lib.search(Query("reward"))
    assert again.index_damaged and len(calls) == 1  # the damaged index is left alone
    monkeypatch.undo()
    assert lib.open_index() and lib.search(Query("reward")).indexed


def test_closing_reindexing_and_cancelling(lib):
    assert lib.reindex() is True and lib.index_status.state is IndexState.CLOSED  # rebuilt, left closed
    assert lib.open_index(rebuild=True, cancelled=lambda: True) is False
    assert lib.index_status.state is IndexState.CLOSED
    assert lib.open_index()
    seen = []
    assert lib.reindex(progress=lambda done, total: seen.append(total)) and seen  # open again after
    assert lib.index_status.ready
    lib.close_index()
    assert lib.index_status.state is IndexState.CLOSED and not lib.search(Query("reward")).indexed


def test_a_closed_library_opens_no_index(indexed_dir, tmp_path):
    folder = tmp_path / "library"
    copy_seeded(indexed_dir, folder)
    lib = Library.open(folder)
    lib.open_index()
    lib.close()
    assert lib.index_status.state is IndexState.CLOSED
    assert lib.open_index() is False


def test_an_index_that_cannot_be_written_says_so(tmpfs, monkeypatch):
    # this machine's state folder (where the index lives) on the disk that turns read-only
    with read_only_seeded(tmpfs, monkeypatch) as lib:
        with pytest.raises(SearchIndexError, match=r"could not be built.*library is unaffected") as caught:
            lib.open_index()
        status = lib.index_status
        assert status.state is IndexState.CLOSED and status.error == str(caught.value)
        assert len(lib) == 20 and not lib.search(Query("learning")).indexed


# ---- one door: what the GUI may import and read ------------------------------------------------

BEHIND_THE_FACADE = (
    "papershelf.core.index",
    "papershelf.core.importers",
    "papershelf.core.store",
    "papershelf.core.fastsearch",
    "papershelf.core.search",
    "papershelf.core.indexbuild",
)


def _imports(path: Path, package: str) -> list[tuple[str, bool]]:
    """(module imported, under TYPE_CHECKING) for every import in a module of `package`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(id(n) for n in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names = [f"{module}.{a.name}" for a in node.names]
            out += [(n, id(node) in guarded) for n in [module, *names]]
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in guarded) for a in node.names]
    return out


def test_the_gui_reaches_the_data_only_through_the_facade():
    for path in sorted((APP / "gui").glob("*.py")):
        for module, _ in _imports(path, "papershelf.gui"):
            assert not module.startswith(BEHIND_THE_FACADE), f"{path.name} imports {module}"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        private = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("_store", "_index")]
        assert not private, f"{path.name} reads {private} behind the facade"


def test_nothing_in_the_core_imports_the_facade_back():
    facade = APP / "core" / "library"
    for path in sorted((APP / "core").rglob("*.py")):
        if path.is_relative_to(facade):  # the facade's own modules may
            continue
        package = ".".join(["papershelf", *path.relative_to(APP).parent.parts])
        for module, guarded in _imports(path, package):
            if module == "papershelf.core.library" or module.startswith("papershelf.core.library."):
                assert guarded, f"{path.relative_to(APP)} imports the facade"


def test_opening_a_library_loads_no_search_engine():
    code = (
        "import sys; from papershelf.core.library import Library; from papershelf.core.query import Query; "
        "print(sorted(m for m in ('whoosh', 'numpy', 'papershelf.core.search') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "app"), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"


def test_status_values_are_what_queries_take():
    assert [s.value for s in Status] == ["unread", "to-read", "reading", "read", "skipped"]
