"""The Library facade on the seeds: import, de-duplication, edits, lists, events."""

from __future__ import annotations

import pytest

from conftest import store_dir
from papershelf.core.errors import NotFoundError, ReadOnlyLibraryError
from papershelf.core.importers import ParsedFile
from papershelf.core.importers.base import Candidate
from papershelf.core.library import Library
from papershelf.core.paper import Status


def find(lib, author=None, text=None):
    out = [p for p in lib.papers() if (author is None or author in p.authors) and (text is None or text in p.abstract)]
    return out


def test_all_four_seeds_give_372_papers(seeded, seeds):
    assert len(seeded) == 372


def test_import_reports_per_file(library, seeds):
    reports = library.import_files(seeds)
    assert [(r.added, r.merged) for r in reports] == [(20, 0), (19, 1), (120, 0), (213, 14)]
    assert all(r.ok and r.problems == [] for r in reports)


def test_reimport_changes_nothing_and_says_so(seeded, seeds, data_dir):
    before = {p.id: p.to_dict() for p in seeded.papers()}
    generation = seeded.generation
    reports = seeded.import_files(seeds)
    assert all(r.added == 0 and r.merged == 0 for r in reports)
    assert all("nothing changed" in r.summary() for r in reports)
    assert {p.id: p.to_dict() for p in seeded.papers()} == before
    assert seeded.generation == generation  # not even a journal line


def test_duplicate_within_a_file_takes_the_richer_copy(seeded):
    # 001 lists this paper twice: first with authors only, then with area and authors
    [paper] = find(seeded, author="Tony Bonnaire")
    assert (paper.area, paper.subarea) == ("Deep Learning", "Generative Models and Autoencoders")
    assert paper.authors == ["Tony Bonnaire", "Raphaël Urfin", "Giulio Biroli", "Marc Mezard"]


def test_duplicates_across_files_keep_both_provenances(seeded, seeds):
    [paper] = find(seeded, text="Robust optimization provides a mathematical framework")
    assert [s.file.rsplit("/", 1)[-1] for s in paper.sources] == [seeds[2].name, seeds[3].name]
    assert [s.format for s in paper.sources] == ["daily-papers", "daily-papers"]
    multi = [p for p in seeded.papers() if len(p.sources) > 1]
    assert len(multi) == 14


def test_richer_fields_from_a_later_copy(library, tmp_path):
    abstract = (
        "We introduce FooNet, a network for everything that anyone could ever want, and we "
        "test it on many benchmarks with great care and patience."
    )
    bare = tmp_path / "daily.txt"
    bare.write_text(f"Daily Papers\n\n{abstract}\n", encoding="utf-8")
    rich = tmp_path / "search.txt"
    rich.write_text(
        f"论文检索\n\nTheory · Deep Learning\n\nAda Lovelace, Alan Turing\n\n"
        f"{abstract.replace('FooNet', '**FooNet**')}\n",
        encoding="utf-8",
    )
    library.import_files([bare])
    [paper] = library.papers()
    library.set_status([paper.id], "reading")
    library.add_tags([paper.id], ["keep me"])
    [report] = library.import_files([rich])
    assert (report.added, report.merged) == (0, 1)
    [merged] = library.papers()
    assert merged.area == "Theory" and merged.authors == ["Ada Lovelace", "Alan Turing"]
    assert len(merged.sources) == 2
    assert merged.status is Status.READING and merged.tags == ["keep me"]  # user state untouched


def test_real_title_replaces_derived_but_not_a_typed_one(library):
    abstract = (
        "We propose BarNet, a method that is long enough to be an abstract of a paper in "
        "a listing that people paste into the program every day."
    )
    library.import_parsed(ParsedFile("a.txt", "daily-papers", [Candidate(abstract, 1)], []))
    [paper] = library.papers()
    assert paper.title_derived and paper.title.startswith("BarNet: a method")
    library.import_parsed(ParsedFile("b.bib", "bibtex", [Candidate(abstract, 1, title="BarNet Is Real")], []))
    assert library.get(paper.id).title == "BarNet Is Real" and not library.get(paper.id).title_derived
    library.set_title(paper.id, "My own title")
    library.import_parsed(ParsedFile("c.bib", "bibtex", [Candidate(abstract, 1, title="Another")], []))
    assert library.get(paper.id).title == "My own title"
    library.set_title(paper.id, "")
    assert library.get(paper.id).title_derived


def test_tags_are_case_insensitive_and_whitespace_normalised(seeded):
    ids = seeded.ids()[:3]
    seeded.add_tags(ids, ["  Diffusion   Models ", "LLM"])
    seeded.add_tags(ids[:1], ["diffusion models", "llm"])
    assert seeded.get(ids[0]).tags == ["diffusion models", "llm"]
    assert [p.id for p in seeded.query(tag="DIFFUSION models")] == ids
    seeded.remove_tags(ids, ["Llm"])
    assert seeded.tag_counts() == {"diffusion models": 3}


def test_edits_on_many_papers_persist_across_reopen(seeded, data_dir):
    ids = seeded.ids()[10:30]
    seeded.set_status(ids, Status.TO_READ)
    seeded.add_tags(ids, ["to-read-soon"])
    seeded.set_notes(ids[0], "Read §3 first.\nThen the appendix.")
    seeded.set_rating(ids[:2], 4)
    seeded.add_to_list("Thesis", ids[5:8])
    seeded.close()
    with Library.open(data_dir) as again:
        assert len(again) == 372
        assert [p.id for p in again.query(status="to-read")] == ids
        assert again.get(ids[0]).notes == "Read §3 first.\nThen the appendix."
        assert [again.get(i).rating for i in ids[:3]] == [4, 4, None]
        assert again.lists() == {"Thesis": ids[5:8]}
        assert [p.id for p in again.query(tag="to-read-soon", list_name="thesis")] == ids[5:8]


def test_reading_lists(seeded):
    a, b, c = seeded.ids()[:3]
    assert seeded.add_to_list("Reading group", [a, b]) == 2
    assert seeded.add_to_list("reading group", [b, c]) == 1  # same list, b already on it
    assert seeded.list_ids("Reading Group") == [a, b, c]
    seeded.reorder_list("Reading group", [c, a, b])
    seeded.rename_list("Reading group", "Journal club")
    assert list(seeded.lists()) == ["Journal club"]
    assert seeded.remove_from_list("Journal club", [a]) == 1
    assert seeded.list_ids("Journal club") == [c, b]
    seeded.delete_list("Journal club")
    assert seeded.lists() == {}
    with pytest.raises(NotFoundError):
        seeded.list_ids("Journal club")


def test_delete_papers_also_leaves_lists(seeded):
    a, b = seeded.ids()[:2]
    seeded.add_to_list("L", [a, b])
    seeded.delete_papers([a])
    assert len(seeded) == 371 and seeded.list_ids("L") == [b]
    with pytest.raises(NotFoundError):
        seeded.get(a)


def test_subscribers_hear_what_changed(seeded):
    heard = []
    unsubscribe = seeded.subscribe(heard.append)
    a, b = seeded.ids()[:2]
    seeded.set_status([a, b], "read")
    seeded.set_status([a, b], "read")  # no change, no event
    seeded.add_to_list("X", [a])
    unsubscribe()
    seeded.add_tags([a], ["quiet"])
    assert [(c.kind, set(c.ids), set(c.fields)) for c in heard[:1]] == [
        ("papers-changed", {a, b}, {"status", "read_at"})
    ]  # and when they were read
    # a list made with its first papers is one action (one undo), so one event
    assert [c.kind for c in heard] == ["papers-changed", "lists-changed"]
    assert "X" in heard[-1].lists


def test_a_failing_subscriber_does_not_lose_the_edit(seeded, data_dir, caplog):
    seeded.subscribe(lambda change: 1 / 0)
    a = seeded.ids()[0]
    seeded.set_status([a], "read")
    assert seeded.get(a).status is Status.READ
    assert "subscriber" in caplog.text
    seeded.close()
    with Library.open(data_dir, readonly=True) as again:
        assert again.get(a).status is Status.READ


def test_id_prefix_resolution(seeded):
    pid = seeded.ids()[0]
    assert seeded.resolve(pid[:6]) == pid
    with pytest.raises(NotFoundError):
        seeded.resolve("zzzzzz")


def test_ids_are_stable_across_libraries(seeds, tmp_path):
    with Library.open(tmp_path / "a") as one, Library.open(tmp_path / "b") as two:
        one.import_files(seeds)
        two.import_files(list(reversed(seeds)))
        assert set(one.ids()) == set(two.ids())


def test_readonly_library_refuses_edits(seeded, data_dir):
    pid = seeded.ids()[0]
    with Library.open(data_dir, readonly=True) as ro:  # readers take no lock
        with pytest.raises(ReadOnlyLibraryError):
            ro.set_status([pid], "read")
        assert ro.get(pid).status is Status.UNREAD


def test_cancelled_import_adds_nothing(library, seeds):
    seen = []
    reports = library.import_files(
        seeds, progress=lambda n, total, path: seen.append(n), cancelled=lambda: len(seen) >= 3
    )
    assert reports == [] and len(library) == 0
    assert seen == [0, 1, 2]
    # nothing of the cancelled attempt lingers: importing again works in full
    assert [r.added for r in library.import_files(seeds[:1])] == [20]


def test_progress_is_reported_per_file(library, seeds):
    seen = []
    library.import_files(seeds, progress=lambda n, total, path: seen.append((n, total)))
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]


def test_big_import_is_written_as_a_snapshot(library, seeds, data_dir, monkeypatch):
    from papershelf.core.store import store

    monkeypatch.setattr(store, "BULK_PAPERS", 10)
    library.import_files(seeds)
    assert (store_dir(data_dir) / "journal.jsonl").stat().st_size == 0
    library.close()
    with Library.open(data_dir, readonly=True) as again:
        assert len(again) == 372


def test_snapshots_restore_fields_lists_and_deleted_papers_exactly(seeded, data_dir):
    lib = seeded
    ids = list(lib.ids())[:5]
    lib.create_list("Mine")
    lib.add_to_list("Mine", ids[:3])
    before = lib.snapshot_fields(ids)
    lists_before = {"Mine": list(lib.list_ids("Mine"))}
    lib.add_tags(ids, ["llm"])
    lib.set_status(ids, "read")
    lib.set_notes(ids[0], "changed")
    lib.remove_from_list("Mine", ids[:1])
    lib.restore_fields(before)
    lib.restore_lists(lists_before)
    assert lib.snapshot_fields(ids) == before
    assert lib.list_ids("Mine") == ids[:3]
    # deletion, then putting back: the same records and list positions
    records = [lib.get(pid) for pid in ids[:2]]
    raw_before = [dict(p.raw()) for p in records]
    lib.delete_papers(ids[:2])
    assert lib.list_ids("Mine") == ids[2:3]
    assert lib.restore_papers(records, lists_before) == 2
    assert [dict(lib.get(pid).raw()) for pid in ids[:2]] == raw_before
    assert lib.list_ids("Mine") == ids[:3]
    lib.close()
    reopened = Library.open(data_dir)
    assert [dict(reopened.get(pid).raw()) for pid in ids[:2]] == raw_before
    reopened.close()


def test_renaming_a_tag_onto_another_merges_them(seeded):
    lib = seeded
    ids = list(lib.ids())
    lib.add_tags(ids[:4], ["ML"])
    lib.add_tags(ids[2:6], ["machine learning"])
    assert lib.rename_tag("ml", "Machine Learning") == 4
    counts = lib.tag_counts()
    assert counts["machine learning"] == 6 and "ml" not in counts
