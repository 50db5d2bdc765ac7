"""The window's keystrokes do not wait for work a person does not see yet (issue 25)."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit


def test_a_search_that_finds_nothing_is_shown_before_its_close_word(opened, qtbot, monkeypatch):
    """The close word ("Did you mean …?") reads every title and author again after each edit (2 s
    at 100,000 papers): the keystroke's answer comes without it, and it follows on a worker."""
    win = opened.win
    lib = win.library
    real = lib.search
    asked: list[bool] = []
    monkeypatch.setattr(lib, "search", lambda query, wait=True: asked.append(query.suggest) or real(query, wait))
    label = win.findChild(object, "resultLabel")
    shown: list[str] = []
    win.searchAnswered.connect(lambda: shown.append(label.text()))
    qtbot.keyClicks(win.findChild(QLineEdit, "searchBox"), "verisimpel")
    opened.settle()
    assert shown and shown[-1] == "No papers match “verisimpel”. For close spellings, search verisimpel~"
    assert label.text() == (
        "No papers match “verisimpel”. Did you mean “verisimpl”? For close spellings, search verisimpel~"
    )
    assert asked.count(True) == 1 and asked[-1] is True  # the keystrokes' searches did not look for it
    assert win.last_answer.suggestion == ""


def test_typing_on_drops_a_close_word_that_was_due(opened, qtbot, monkeypatch):
    """A key typed before the pause ends: no close word is looked for the answer no longer shown."""
    win = opened.win
    lib = win.library
    real = lib.search
    asked: list[str] = []

    def search(query, wait=True):
        if query.suggest:
            asked.append(query.text)
        return real(query, wait)

    monkeypatch.setattr(lib, "search", search)
    box = win.findChild(QLineEdit, "searchBox")
    qtbot.keyClicks(box, "verisimpel")
    qtbot.waitUntil(lambda: win.last_answer.query.text == "verisimpel" and win.search_due())
    qtbot.keyClicks(box, "x")
    opened.settle()
    assert asked == ["verisimpelx"]
