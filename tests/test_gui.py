"""The main window, driven as a person drives it (pytest-qt, offscreen)."""

from __future__ import annotations

import warnings

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox, QPlainTextEdit, QTableView, QTextBrowser, QTreeView

from conftest import Opened

pytestmark = pytest.mark.gui


def widgets(win):
    return (
        win.findChild(QLineEdit, "searchBox"),
        win.findChild(QTableView, "paperList"),
        win.findChild(QTreeView, "filterPanel"),
        win.findChild(QTextBrowser, "abstractView"),
    )


def titles_shown(win):
    table = win.findChild(QTableView, "paperList")
    m = table.model()
    return [m.index(r, 0).data() for r in range(m.rowCount())]


def select_rows(win, rows):
    table = win.findChild(QTableView, "paperList")
    table.setFocus()
    table.clearSelection()
    from PySide6.QtCore import QItemSelectionModel

    sel = table.selectionModel()
    for r in rows:
        sel.select(
            table.model().index(r, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        )
    table.setCurrentIndex(table.model().index(rows[0], 0)) if len(rows) == 1 else None


def selected_papers(o):
    return [o.lib.get(pid) for pid in o.win.selected_ids()]


def test_the_named_parts_are_there_with_accessible_names(opened):
    win = opened.win
    for name in (
        "searchBox",
        "paperList",
        "filterPanel",
        "abstractView",
        "tagPanel",
        "tagInput",
        "statusPicker",
        "notesEdit",
    ):
        widget = win.findChild(object, name)
        assert widget is not None, name
        assert widget.accessibleName(), name
    assert titles_shown(win).__len__() == 372
    assert win.findChild(object, "resultLabel").text().startswith("372 papers")


def test_typing_a_query_shrinks_the_list_and_escape_brings_everything_back(opened, qtbot):
    win = opened.win
    box, _table, _, view = widgets(win)
    qtbot.keyClicks(box, "verisimpl")
    opened.settle()
    assert len(titles_shown(win)) == 1 and titles_shown(win)[0].startswith("VeriSimpl")
    assert win.findChild(object, "resultLabel").text() == "1 paper"
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    assert box.text() == "" and len(titles_shown(win)) == 372
    qtbot.keyClicks(box, "author:thaman")
    opened.settle()
    assert titles_shown(win) == ["RHB: Reward Hacking Benchmark"] or titles_shown(win)[0].startswith("RHB")
    select_rows(win, [0])
    assert "Kunvar Thaman" in view.toPlainText()
    # the query words are marked in the abstract
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    qtbot.keyClicks(box, "reward hacking")
    opened.settle()
    select_rows(win, [0])
    assert 'class="match"' in win.abstract_view.toHtml() or "background-color:#fff3b0" in view.toHtml()


def test_tagging_a_selection_from_the_keyboard_with_undo_and_redo(opened, qtbot):
    win = opened.win
    _, table, panel, _ = widgets(win)
    select_rows(win, [0, 1, 2])
    tag_input = win.findChild(QLineEdit, "tagInput")
    tag_input.setFocus()
    qtbot.keyClicks(tag_input, "llm, to-skim")
    qtbot.keyClick(tag_input, Qt.Key.Key_Return)
    ids = win.selected_ids()
    assert len(ids) == 3
    assert all({"llm", "to-skim"} <= set(opened.lib.get(pid).tags) for pid in ids)
    opened.win.refresh_soon()
    qtbot.waitUntil(lambda: any(label.startswith("llm  (3)") for _, label in panel.entries("tag")), timeout=10_000)
    # "1" toggles the most used tag (llm ties with to-skim: alphabetical) while the list has focus
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_1)
    assert not any("llm" in opened.lib.get(pid).tags for pid in ids)
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert all("llm" in opened.lib.get(pid).tags for pid in ids)
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert not any("llm" in opened.lib.get(pid).tags for pid in ids)
    # digits typed into the search box are text, not tag toggles
    box = win.findChild(QLineEdit, "searchBox")
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_2)
    assert box.text() == "2"
    assert all("to-skim" in opened.lib.get(pid).tags for pid in ids)


def test_status_shortcut_and_sidebar_filter_and_persistence_across_restarts(opened, qtbot):
    win = opened.win
    select_rows(win, [3, 5, 7])
    ids = win.selected_ids()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert [opened.lib.get(pid).status.value for pid in ids] == ["to-read"] * 3
    picker = win.findChild(object, "statusPicker")
    assert picker.findChild(object, "status-to-read").isChecked()
    panel = win.findChild(QTreeView, "filterPanel")
    qtbot.waitUntil(lambda: panel.index_of("status", "to-read").data() == "To read  (3)", timeout=10_000)
    rect = panel.visualRect(panel.index_of("status", "to-read"))
    qtbot.mouseClick(panel.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    opened.settle()
    assert sorted(win.model.ids()) == sorted(ids)
    win.resize(780, 560)  # fits the offscreen screen, so it comes back as it was
    win.main_split.setSizes([150, 400, 230])
    sizes, size = win.main_split.sizes(), win.size()
    win = opened.reopen().win
    assert [p.status.value for p in (opened.lib.get(pid) for pid in ids)] == ["to-read"] * 3
    assert win.size() == size and win.main_split.sizes() == sizes


def test_notes_are_saved_as_you_type_and_survive_a_restart(opened, qtbot):
    win = opened.win
    select_rows(win, [0])
    pid = win.selected_ids()[0]
    notes = win.findChild(QPlainTextEdit, "notesEdit")
    notes.setFocus()
    qtbot.keyClicks(notes, "Read section 3 first")
    qtbot.waitUntil(lambda: opened.lib.get(pid).notes == "Read section 3 first", timeout=5_000)
    opened.reopen()
    assert opened.lib.get(pid).notes == "Read section 3 first"


def test_delete_asks_and_undo_brings_papers_back_with_their_tags(opened, qtbot, monkeypatch):
    win = opened.win
    select_rows(win, [0, 1])
    ids = win.selected_ids()
    win.edits.add_tags(["keep-me"])
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Yes)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Delete)
    assert asked and len(opened.lib) == 370
    opened.settle()
    qtbot.waitUntil(lambda: len(titles_shown(win)) == 370, timeout=10_000)
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(opened.lib) == 372
    assert all("keep-me" in opened.lib.get(pid).tags for pid in ids)
    qtbot.waitUntil(lambda: len(titles_shown(win)) == 372, timeout=10_000)


def test_reading_lists_from_the_panel(opened, qtbot, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    win = opened.win
    select_rows(win, [4, 6])
    ids = win.selected_ids()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Thesis", True))
    win.edits.add_to_list("")
    assert opened.lib.list_ids("Thesis") == ids
    qtbot.keyClick(win, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert opened.lib.lists().get("Thesis", []) == []


def test_the_viewer_shows_hostile_abstracts_as_text_and_opens_only_web_links(opened, qtbot, monkeypatch):
    from papershelf.core.importers import parse_text

    win = opened.win
    hostile = (
        "We study <script>alert('x')</script> and <img src=x onerror=alert(1)> in pasted abstracts "
        "about injection defences, see https://example.org/paper and [this](javascript:alert(1))."
    )
    opened.lib.import_parsed(parse_text(f"Daily Papers\n\n{hostile}\n", "<pasted text>"))
    box = win.findChild(QLineEdit, "searchBox")
    qtbot.keyClicks(box, "injection defences")
    opened.settle()
    qtbot.waitUntil(lambda: len(titles_shown(win)) == 1, timeout=10_000)
    select_rows(win, [0])
    view = win.findChild(QTextBrowser, "abstractView")
    assert "<script>alert('x')</script>" in view.toPlainText()
    assert "<img src=x onerror=alert(1)>" in view.toPlainText()
    html = view.toHtml()
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    opened_urls = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened_urls.append(url.toString()) or True)
    view.anchorClicked.emit(QUrl("javascript:alert(1)"))
    view.anchorClicked.emit(QUrl("file:///etc/passwd"))
    view.anchorClicked.emit(QUrl("https://example.org/paper"))
    assert opened_urls == ["https://example.org/paper"]


def test_dropping_a_file_imports_it_and_a_bad_one_is_reported(opened, qtbot, tmp_path):
    win = opened.win
    listing = tmp_path / "new.txt"
    listing.write_text(
        "Daily Papers\n\nWe propose a thoroughly novel method for dropping files on windows and "
        "measure how often they land where people expect across many desktop environments.\n",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01\x02binary")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(listing)), QUrl.fromLocalFile(str(bad))])
    with warnings.catch_warnings():  # PySide flags the only constructor Qt 6 has
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    QApplication.sendEvent(win, enter)
    assert enter.isAccepted()  # the window says it takes files
    with qtbot.waitSignal(win.importFinished, timeout=30_000) as blocker:
        drop = QDropEvent(
            QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
        QApplication.sendEvent(win, drop)
    reports = blocker.args[0]
    assert sum(r.added for r in reports) == 1 and len(opened.lib) == 373
    report = win.findChild(QMessageBox, "importReport")
    assert report is not None and "bad.txt" in report.detailedText()
    opened.settle()
    qtbot.waitUntil(lambda: len(titles_shown(win)) == 373, timeout=10_000)


def test_first_run_offers_the_sample_library_in_one_click(qtbot, tmp_path, settings):
    o = Opened(qtbot, tmp_path / "empty").open()
    try:
        win = o.win
        assert win.list_stack.currentWidget().objectName() == "emptyState"
        with qtbot.waitSignal(win.importFinished, timeout=60_000):
            qtbot.mouseClick(win.findChild(object, "loadSamplesButton"), Qt.MouseButton.LeftButton)
        assert len(o.lib) == 372
        assert win.list_stack.currentWidget() is win.paper_list
        qtbot.waitUntil(lambda: len(titles_shown(win)) == 372, timeout=20_000)
    finally:
        o.close()


def test_sorting_by_a_column_and_remembering_it(opened, qtbot):
    win = opened.win
    header = win.paper_list.horizontalHeader()
    header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
    opened.settle()
    shown = titles_shown(win)
    assert shown == sorted(shown, key=str.casefold)
    opened.reopen()
    assert opened.win.query.sort == "title"
    assert titles_shown(opened.win) == shown


def test_qt_bindings_keep_their_references_to_none(opened):
    """PySide6 6.12.0 dropped a reference to None on every call returning it; on
    Python 3.11 the window then aborted after a few minutes of use."""
    import sys

    from PySide6.QtCore import Qt as _Qt

    model = opened.win.model
    for _ in range(100):  # caches filled first
        model.index(0, 1).data(_Qt.ItemDataRole.DecorationRole)
    before = sys.getrefcount(None)
    for _ in range(2000):
        model.index(0, 1).data(_Qt.ItemDataRole.DecorationRole)  # None from Python, through Qt
        opened.win.result_label.setText("x")  # a call that returns None
    assert sys.getrefcount(None) >= before - 50  # the bug took one per call: 4,000 here


def test_exporting_the_selection_and_a_reading_list(opened, qtbot, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    from test_export_fragments import export_anyway

    win = opened.win
    select_rows(win, [0, 1, 2, 3])
    ids = win.selected_ids()
    asked = []

    def save_as(parent, caption, start, filters, chosen):
        asked.append((caption, start, chosen))
        return str(tmp_path / "chosen"), filters.split(";;")[1]  # the BibLaTeX filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    with qtbot.waitSignal(win.exportFinished, timeout=30_000) as blocker:
        qtbot.keyClick(win, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
        export_anyway(qtbot)  # listing papers: all fragments, which the window warns about first
    assert blocker.args[0].entries == 4
    written = (tmp_path / "chosen.bib").read_text(encoding="utf-8")
    assert written.count("\n@misc{") == 4 and "BibLaTeX" in written
    assert all(opened.lib.get(pid).citekey for pid in ids)  # keys pinned by the export
    # a reading list from the sidebar, into the folder and dialect used last time
    opened.lib.add_to_list("Thesis", ids[:2])
    with qtbot.waitSignal(win.exportFinished, timeout=30_000):
        win.filter_panel.exportRequested.emit("list", "Thesis")
        export_anyway(qtbot)
    assert asked[-1][1] == str(tmp_path / "Thesis.bib") and asked[-1][2].startswith("BibLaTeX")
