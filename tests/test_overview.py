"""What the window shows of a library, worked out in the core: counts, top tags,
the papers a tag rename or a sidebar export takes, and import reports."""

from __future__ import annotations

from collections import Counter

import pytest

from papershelf.core import overview, reports
from papershelf.core.library import Library

BIB = """@article{a, title = {Alpha Paper on Shelving}, author = {Smith, Jane}, year = {2020},
  abstract = {We put papers on shelves and count how many readers find them again later.}}
@article{b, title = {Beta Paper on Sorting}, author = {Doe, John}, year = {2021},
  abstract = {Sorting shelves by colour beats sorting them by title, in two of three libraries.}}
@article{c, title = {Gamma Paper on Reading}, author = {Roe, Richard}, year = {2022},
  abstract = {People read the papers they tagged first; the rest wait on the shelf for years.}}
@article{d, title = {Delta Paper on Lists}, author = {Lee, Ann}, year = {2023},
  abstract = {Reading lists shorter than ten papers get finished; longer ones are abandoned.}}
"""


@pytest.fixture
def four(tmp_path):
    """A real library of four papers, ids in import order."""
    bib = tmp_path / "four.bib"
    bib.write_text(BIB, encoding="utf-8")
    with Library.open(tmp_path / "lib") as lib:
        (report,) = lib.import_files([bib])
        assert report.added == 4
        yield lib, lib.ids()


# ---- tags ---------------------------------------------------------------------------------


def test_top_tags_are_the_most_used_first_ties_alphabetical_at_most_n(four):
    lib, (a, b, c, d) = four
    lib.add_tags([a, b, c], ["zeta"])
    lib.add_tags([a, b], ["beta", "alpha"])
    lib.add_tags([d], ["gamma"])
    assert overview.top_tags(lib) == ["zeta", "alpha", "beta", "gamma"]
    assert overview.top_tags(lib, 2) == ["zeta", "alpha"]
    lib.add_tags([a], [f"t{n}" for n in range(10)])
    assert len(overview.top_tags(lib)) == overview.TOP_TAGS == 9


def test_top_tags_of_an_empty_library(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        assert overview.top_tags(lib) == []


def test_all_tagged_says_whether_a_toggle_removes_the_tag(four):
    lib, (a, b, c, _d) = four
    lib.add_tags([a, b], ["llm"])
    assert overview.all_tagged(lib, [a, b], "llm")
    assert not overview.all_tagged(lib, [a, b, c], "llm")


def test_a_tag_rename_touches_every_paper_with_the_tag_and_only_those(four):
    lib, (a, b, c, _d) = four
    lib.add_tags([a, c], ["Deep  Learning"])  # stored normalised: "deep learning"
    lib.add_tags([b], ["deep"])
    assert overview.tag_rename_ids(lib, "deep learning") == [a, c]
    assert overview.tag_rename_ids(lib, "  Deep Learning ") == [a, c]  # as Library.rename_tag reads it
    assert lib.rename_tag("deep learning", "DL") == len(overview.tag_rename_ids(lib, "dl")) == 2
    assert overview.tag_rename_ids(lib, "nothing") == []


# ---- exports ----------------------------------------------------------------------------------


def test_a_sidebar_export_takes_a_lists_papers_in_its_order_and_a_tags_or_statuss_in_library_order(four):
    lib, (a, b, c, d) = four
    lib.add_to_list("Thesis", [d, a])
    lib.add_tags([c, a], ["llm"])
    lib.set_status([b, d], "reading")
    assert overview.sidebar_export_ids(lib, "list", "Thesis") == [d, a]
    assert overview.sidebar_export_ids(lib, "list", "thesis") == [d, a]
    assert overview.sidebar_export_ids(lib, "tag", "llm") == [a, c]
    assert overview.sidebar_export_ids(lib, "status", "reading") == [b, d]
    assert overview.sidebar_export_ids(lib, "status", "read") == []


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("Thesis", "Thesis"),
        ("to read", "to-read"),
        ("week 1/2", "week-1-2"),
        ("a_b-c", "a_b-c"),
        ("  ", "papers"),
        ("///", "papers"),
        ("Größe", "Größe"),
    ],
)
def test_the_export_file_name_keeps_letters_digits_dash_and_underscore(name, stem):
    assert overview.export_file_stem(name) == stem


# ---- counts ------------------------------------------------------------------------------------


def test_counts_of_the_whole_library_and_of_the_papers_shown(four):
    lib, (a, b, c, d) = four
    lib.add_tags([a, b], ["llm"])
    lib.set_status([c], "read")
    lib.add_to_list("Thesis", [a, c, d])
    everything = overview.shown_counts(lib, None)
    assert everything.total == 4
    assert everything.status == {"unread": 3, "read": 1}
    assert everything.tags == {"llm": 2}
    assert everything.lists == {"Thesis": 3}
    shown = overview.shown_counts(lib, [a, c])
    assert (shown.total, shown.status, shown.tags, shown.lists) == (
        2,
        {"unread": 1, "read": 1},
        {"llm": 1},
        {"Thesis": 2},
    )
    assert overview.shown_counts(lib, [a, c], total=7).total == 7  # what the list says it shows
    assert overview.list_counts(lib, {d}) == {"Thesis": 1}
    assert overview.list_counts(lib, None) == {"Thesis": 3}


def test_area_counts_are_case_folded_as_the_index_counts_them(seeded):
    counts = overview.shown_counts(seeded, None)
    expected = Counter(p.area.casefold() for p in seeded.papers() if p.area)
    assert counts.area == dict(expected) and counts.area
    assert sum(counts.status.values()) == counts.total == len(seeded)
    some = seeded.ids()[:7]
    assert overview.shown_counts(seeded, some).area == dict(
        Counter(seeded.get(pid).area.casefold() for pid in some if seeded.get(pid).area)
    )


# ---- import reports -------------------------------------------------------------------------------


def test_import_reports_held_back_totals_trouble_and_details(tmp_path, seeds):
    from test_first_minutes import partly_a_listing

    good = tmp_path / "good.bib"
    good.write_text(BIB, encoding="utf-8")
    broken = tmp_path / "broken.bib"
    broken.write_text(
        "@article{x, title = {Kept Paper}, author = {A, B}}\n@article{y, author = {Nobody}}\n@article{z, title = {Cut",
        encoding="utf-8",
    )
    notes = partly_a_listing(tmp_path, seeds)
    with Library.open(tmp_path / "lib") as lib:
        first = lib.import_files([good])
        assert reports.totals(first) == (4, 0) and not reports.had_trouble(first)
        assert reports.held_back(first) == ([], first)
        more = tmp_path / "more.bib"  # one paper already here (merged, it brings a DOI), one new
        more.write_text(
            BIB.split("@article{b")[0].replace("year = {2020}", "year = {2020}, doi = {10.1/a}")
            + "@article{e, title = {Epsilon Paper}, author = {Poe, Ed}, year = {2024}}\n",
            encoding="utf-8",
        )
        again = lib.import_files([more, broken, notes, tmp_path / "gone.bib"])
    more_r, broken_r, notes_r, gone_r = again
    # added: e, x and the title-less y (kept as BibTeX keeps it, with a note); merged: a
    assert reports.totals(again) == (3, 1)
    assert reports.held_back(again) == ([notes_r], [more_r, broken_r, gone_r])
    assert reports.had_trouble(again)
    assert not reports.had_trouble([more_r, notes_r])  # a file held back is previewed, not reported
    details = reports.problem_details([more_r, broken_r, gone_r]).splitlines()
    assert details[0] == more_r.summary()
    assert details[1] == broken_r.summary()
    assert details[2:4] == [f"    {p}" for p in broken_r.problems] and len(broken_r.problems) == 2
    assert details[4] == gone_r.summary() and "no such file" in details[4]
    assert len(details) == 5


def test_import_report_details_list_at_most_fifty_problems_per_file(tmp_path):
    many = tmp_path / "many.bib"
    many.write_text("".join(f"@article{{e{n}, author = {{Nobody}}}}\n" for n in range(53)), encoding="utf-8")
    with Library.open(tmp_path / "lib") as lib:
        (report,) = lib.import_files([many])
    assert len(report.problems) == 53
    details = reports.problem_details([report]).splitlines()
    assert len(details) == 1 + reports.SHOWN_PROBLEMS + 1
    assert details[-1] == "    … and 3 more"
    assert reports.problem_details([report], shown=2).splitlines()[1:] == [
        f"    {report.problems[0]}",
        f"    {report.problems[1]}",
        "    … and 51 more",
    ]
