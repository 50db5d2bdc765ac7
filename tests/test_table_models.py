"""The window's table models on their own: a model and a real library, driven directly (no window),
checked by Qt's own model tester (QAbstractItemModelTester, through pytest-qt) and by what they show."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from papershelf.core.library import Change
from papershelf.gui.conflicts import ConflictsModel
from papershelf.gui.duplicates import CompareModel, PairModel
from papershelf.gui.paper_model import COLUMNS, ROW_CACHE, PaperIdRole, PaperTableModel

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING")]

DISPLAY, TOOLTIP, FOREGROUND = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole

BIB_TWICE = """@article{a1, title = {Deep Shelves for Reading Lists}, author = {Knuth, Donald and Lamport, Leslie},
  year = {2020}, journal = {Journal of Shelves}, doi = {10.1000/shelf.1}}
@inproceedings{a2, title = {Deep shelves for reading lists}, author = {Donald Knuth},
  year = {2020}, booktitle = {Proceedings of Shelving}}
"""


def cell(model, row: int, column: str, role=DISPLAY):
    return model.index(row, COLUMNS.index(column)).data(role)


@pytest.fixture
def papers(qapp, seeded):
    """A paper model over the four sample listings, showing every paper."""
    model = PaperTableModel(seeded)
    model.set_ids(seeded.ids())
    return model


def test_the_paper_model_passes_qts_model_tester(papers, qtmodeltester):
    qtmodeltester.check(papers, force_py=True)
    assert papers.rowCount() == len(papers.library) > 0 and papers.columnCount() == len(COLUMNS)


def test_the_paper_model_shows_a_papers_cells_and_id(papers):
    lib = papers.library
    pid = papers.id_at(0)
    paper = lib.get(pid)
    assert papers.index(0, 0).data(PaperIdRole) == pid
    assert cell(papers, 0, "status") == "Unread" and cell(papers, 0, "year") == (str(paper.year) if paper.year else "")
    assert papers.headerData(0, Qt.Orientation.Horizontal) == "Title"
    assert papers.row_of(pid) == 0 and papers.row_of("no-such-paper") == -1 and papers.id_at(-1) is None
    assert papers.index(0, 0).data(Qt.ItemDataRole.DecorationRole) is None  # a role it never answers


def test_the_paper_model_repaints_an_edited_row_and_drops_a_deleted_one(papers, qtbot):
    lib = papers.library
    first, second = papers.id_at(0), papers.id_at(1)
    assert cell(papers, 0, "status") == "Unread"  # the row is built, and cached
    lib.set_status([first], "read")
    lib.add_tags([first], ["shelf"])
    assert cell(papers, 0, "status") == "Unread"  # as cached before the edit, until told
    with qtbot.waitSignal(papers.dataChanged) as changed:
        papers.refresh(Change("papers-changed", frozenset({first}), frozenset({"status", "tags"})))
    assert [i.row() for i in changed.args[:2]] == [0, 0]
    assert cell(papers, 0, "status") == "Read" and cell(papers, 0, "tags") == "shelf"
    assert cell(papers, 0, "status", FOREGROUND) is not None  # Read has its colour, Unread none
    assert cell(papers, 1, "status", FOREGROUND) is None
    rows = papers.rowCount()
    lib.delete_papers([first])
    with qtbot.waitSignal(papers.modelReset):
        papers.refresh(Change("papers-removed", frozenset({first})))
    assert papers.rowCount() == rows - 1 and papers.id_at(0) == second and papers.row_of(first) == -1


def test_a_paper_gone_from_the_library_shows_an_empty_row_not_an_error(papers):
    lib = papers.library
    pid = papers.id_at(0)
    lib.delete_papers([pid])  # the list not yet told
    assert cell(papers, 0, "title") is None and papers.index(0, 0).data(PaperIdRole) == pid


def test_a_header_click_asks_the_search_to_sort(papers, qtbot):
    with qtbot.waitSignal(papers.sortRequested) as asked:
        papers.sort(COLUMNS.index("year"), Qt.SortOrder.DescendingOrder)
    assert asked.args == ["year", True]
    with qtbot.assertNotEmitted(papers.sortRequested):
        papers.sort(-1)  # the sort indicator cleared: nothing to ask


def test_the_paper_model_holds_ids_and_builds_rows_only_as_they_are_shown(qapp, library):
    model = PaperTableModel(library)  # an empty library: the ids are never looked up until shown
    model.set_ids([f"id{n}" for n in range(100_000)])
    assert model.rowCount() == 100_000 and model.row_of("id99999") == 99_999
    assert model.index(ROW_CACHE, 0).data(PaperIdRole) == f"id{ROW_CACHE}"
    assert model.index(5, 0).data() is None  # no such paper: nothing shown, nothing raised


def test_the_duplicate_pair_and_compare_models(qapp, library, tmp_path, qtmodeltester):
    bib = tmp_path / "twice.bib"
    bib.write_text(BIB_TWICE, encoding="utf-8")
    library.import_files([bib])
    pairs = PairModel(library)
    pairs.set_pairs(library.duplicates.pairs())
    qtmodeltester.check(pairs, force_py=True)
    assert pairs.rowCount() == 1
    pair = pairs.pairs[0]
    titles = {pairs.index(0, 1).data(), pairs.index(0, 2).data()}
    assert titles == {f"{library.get(pid).title} (2020)" for pid in (pair.a, pair.b)}
    assert pairs.index(0, 0).data() == pair.reason
    compare = CompareModel()
    compare.set_papers(library.get(pair.a), library.get(pair.b))
    qtmodeltester.check(compare, force_py=True)
    assert compare.rowCount() > 0 and compare.headerData(0, Qt.Orientation.Horizontal) == "First (kept)"
    compare.set_papers(None, None)
    assert compare.rowCount() == 0


def test_the_conflicts_model_without_conflicts(qapp, library, qtmodeltester):
    model = ConflictsModel(library)
    model.set_conflicts([])
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 0 and model.columnCount() > 0
