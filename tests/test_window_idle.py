"""The window says when it is idle (the list shows the answer to the current query and no search is
due): tests and scripts wait on `idle` / `is_idle()` rather than on the window's private timers."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLineEdit

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


def test_typing_makes_the_window_busy_until_the_list_shows_the_answer(window, qtbot):
    qtbot.waitUntil(window.is_idle, timeout=10_000)
    box = window.findChild(QLineEdit, "searchBox")
    everything = window.model.rowCount()
    with qtbot.waitSignal(window.idle, timeout=10_000):
        qtbot.keyClicks(box, "reward")
        assert not window.is_idle()  # the query changed; its answer is on its way
    assert window.is_idle() and not window.search_due()
    assert window.last_answer.query.text == "reward" and 0 < window.model.rowCount() < everything


def test_an_edit_makes_the_window_search_again_and_say_when_it_is_idle(window, qtbot):
    qtbot.waitUntil(window.is_idle, timeout=10_000)
    window.refresh_soon()  # as after an edit: the answer is asked for again in a moment
    assert window.search_due() and not window.is_idle()
    with qtbot.waitSignal(window.idle, timeout=10_000):
        pass
    assert window.is_idle()
