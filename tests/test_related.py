"""Related papers under the abstract, through the real window (pytest-qt, offscreen):
they are the papers the index finds like the selected one, found off the GUI
thread, wait for the index, follow the newest selection, and a click (or
Enter) selects the related paper in the list."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QLabel, QListView, QTableView

from papershelf.gui.related import IdRole

pytestmark = pytest.mark.gui


def select(win, row):
    table = win.findChild(QTableView, "paperList")
    table.setFocus()
    table.selectionModel().setCurrentIndex(
        table.model().index(row, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    return win.selected_ids()[0]


def related_titles(win):
    view = win.findChild(QListView, "relatedList")
    m = view.model()
    return [m.index(r, 0).data() for r in range(m.rowCount())] if view.isVisible() else []


def expected_titles(lib, pid):
    return [lib.get(i).title for i in lib.more_like(pid, 9) if i != pid][:8]


def test_the_related_list_shows_what_the_index_finds_like_the_selected_paper(opened, qtbot):
    win, lib = opened.win, opened.lib
    panel = win.findChild(QLabel, "relatedMessage")
    assert "Select a paper" in panel.text()
    pid = select(win, 0)
    want = expected_titles(lib, pid)
    assert 2 <= len(want) <= 8
    qtbot.waitUntil(lambda: related_titles(win) == want, timeout=10_000)
    assert lib.get(pid).title not in want
    assert win.findChild(QLabel, "relatedHeading").text() == "&Related"
    # several selected: nothing is related
    table = win.findChild(QTableView, "paperList")
    table.selectionModel().select(
        table.model().index(1, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    )
    qtbot.waitUntil(lambda: panel.isVisible() and "Select a paper" in panel.text(), timeout=5_000)


def test_clicking_a_related_paper_selects_it_and_its_own_related_papers_follow(opened, qtbot):
    win, lib = opened.win, opened.lib
    pid = select(win, 3)
    qtbot.waitUntil(lambda: related_titles(win) == expected_titles(lib, pid), timeout=10_000)
    view = win.findChild(QListView, "relatedList")
    second = view.model().index(1, 0)
    target = [i for i in lib.more_like(pid, 9) if i != pid][1]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(second).center())
    assert win.selected_ids() == [target]
    assert win.abstract_view.toPlainText().startswith(lib.get(target).title)
    qtbot.waitUntil(lambda: related_titles(win) == expected_titles(lib, target), timeout=10_000)
    # from the keyboard: Alt+R (the heading's mnemonic) reaches the list, Enter on an entry selects it
    win.paper_list.setFocus()
    qtbot.keyClick(win, Qt.Key.Key_R, Qt.KeyboardModifier.AltModifier)
    assert view.hasFocus()
    view.setCurrentIndex(view.model().index(0, 0))
    first = next(i for i in lib.more_like(target, 9) if i != target)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert win.selected_ids() == [first]


def test_a_paper_hidden_by_the_search_is_shown_and_selected(opened, qtbot):
    win, lib = opened.win, opened.lib
    qtbot.keyClicks(win.search_box, "verisimpl")
    opened.settle()
    assert win.model.rowCount() == 1
    pid = select(win, 0)
    qtbot.waitUntil(lambda: related_titles(win) == expected_titles(lib, pid), timeout=10_000)
    target = next(i for i in lib.more_like(pid, 9) if i != pid)
    view = win.findChild(QListView, "relatedList")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(0, 0)).center())
    qtbot.waitUntil(lambda: win.selected_ids() == [target], timeout=10_000)
    assert win.search_box.text() == "" and win.model.rowCount() == 372


def test_a_paper_hidden_by_a_sidebar_filter_is_shown_and_selected(opened, qtbot):
    win, lib = opened.win, opened.lib
    pid = select(win, 0)
    lib.add_tags([pid], ["mine"])
    opened.settle()
    panel = win.filter_panel
    qtbot.waitUntil(lambda: panel.index_of("tag", "mine").isValid(), timeout=10_000)
    qtbot.mouseClick(
        panel.viewport(), Qt.MouseButton.LeftButton, pos=panel.visualRect(panel.index_of("tag", "mine")).center()
    )
    qtbot.waitUntil(lambda: win.model.rowCount() == 1, timeout=10_000)
    assert win.selected_ids() == [pid]
    view = win.findChild(QListView, "relatedList")
    qtbot.waitUntil(lambda: len(related_titles(win)) > 1, timeout=10_000)
    target = view.model().index(0, 0).data(IdRole)
    assert "mine" not in lib.get(target).tags
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(view.model().index(0, 0)).center())
    qtbot.waitUntil(lambda: win.selected_ids() == [target], timeout=10_000)
    assert win.model.rowCount() == 372 and panel.active["tag"] is None


def test_a_newer_selection_wins_over_an_answer_still_on_its_way(opened, qtbot, monkeypatch):
    win, lib = opened.win, opened.lib
    # the first look-up is held inside the index until the second paper is selected
    release, entered = threading.Event(), threading.Event()
    real = lib.more_like
    calls = []

    def held(paper_id, limit=10):
        if threading.current_thread().name != "papershelf-related":
            return real(paper_id, limit)  # the test's own look-ups
        calls.append(paper_id)
        if len(calls) == 1:
            entered.set()
            release.wait(10)
        return real(paper_id, limit)

    monkeypatch.setattr(lib, "more_like", held)
    shown = []
    view = win.findChild(QListView, "relatedList")
    view.model().modelReset.connect(lambda: shown.append(related_titles(win) or None))
    first = select(win, 0)
    qtbot.waitUntil(entered.is_set, timeout=5_000)
    second = select(win, 5)
    third = select(win, 6)  # the second never needs asking: the third replaced it while the first ran
    release.set()
    want = expected_titles(lib, third)
    qtbot.waitUntil(lambda: related_titles(win) == want, timeout=10_000)
    assert calls == [first, third] and second not in calls
    assert expected_titles(lib, first) not in shown


def test_related_papers_wait_for_the_search_index(window, qtbot):
    win = window
    select(win, 0)
    message = win.findChild(QLabel, "relatedMessage")
    assert message.isVisible()
    assert message.text() == "Related papers appear once the search index is ready."
    pid = win.selected_ids()[0]
    win.indexer.open()
    qtbot.waitUntil(lambda: win.index is not None, timeout=60_000)
    want = expected_titles(win.library, pid)
    assert want
    qtbot.waitUntil(lambda: related_titles(win) == want, timeout=10_000)


def test_closing_the_window_during_a_look_up_leaves_nothing_behind(opened, qtbot, monkeypatch):
    win, lib = opened.win, opened.lib
    entered, release = threading.Event(), threading.Event()
    real = lib.more_like

    def held(paper_id, limit=10):
        entered.set()
        release.wait(10)
        return real(paper_id, limit)

    monkeypatch.setattr(lib, "more_like", held)
    select(win, 0)
    qtbot.waitUntil(entered.is_set, timeout=5_000)
    task = win.related.task
    opened.close()  # the window closes and the library with it, the look-up still inside
    release.set()
    qtbot.waitUntil(lambda: task.finished, timeout=10_000)  # its answer (an error) came back and was dropped
