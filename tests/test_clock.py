"""A clock that steps back (or forward) never hides an edit from search (issue 21, defect 3).

Each edit is made by the real command in its own process under `faketime`
(the Debian package `faketime`; the tests fail, never skip, without it), then
`search` in another process must find it: the index's catch-up at open may
not trust the order of the papers' `updated` times. Before the fix, the
catch-up wrote again only papers whose `updated` was at or after the newest
it had seen, so an edit stamped 3 s or more in the past was never found until
`reindex`, and one stamped in the future hid every real-time edit after it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Opened, copy_seeded, seeded_index
from papershelf.core.library import Library

FAKETIME = shutil.which("faketime")
BIB = """@article{wombat2020,
  title = {The wombatclock effect},
  author = {Doe, Jane},
  year = {2020},
  journal = {J. Clocks}
}
"""


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    return seeded_index(tmp_path_factory.mktemp("clock") / "library")


def faked(offset: str, folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The real command under `faketime OFFSET` (its clock that far from the real one)."""
    assert FAKETIME, "these tests need faketime (Debian package faketime)"
    cmd = [FAKETIME, offset, sys.executable, "-m", "papershelf", "--data-dir", str(folder), *args]
    res = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res


def search(folder: Path, *query: str) -> list[str]:
    """The ids `papershelf search QUERY` answers, by the real command (real clock)."""
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(folder), "search", "--json", "--limit", "1000"]
    res = subprocess.run([*cmd, *query], capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert res.returncode == 0, res.stderr
    return [row["id"] for row in json.loads(res.stdout)]


def anchor(folder: Path, paper_id: str, word: str) -> None:
    """An edit at the real time that the index takes in at once (its newest time stamp)."""
    with Library.open(folder) as lib:
        lib.open_index()
        lib.set_notes(paper_id, word)


@pytest.mark.parametrize("offset", ["-3 seconds", "-60 seconds", "-1 day", "+1 day"])
def test_search_finds_every_kind_of_edit_made_under_a_clock_stepped_back_or_forward(indexed, tmp_path, offset):
    folder = tmp_path / "library"
    copy_seeded(indexed, folder)
    (tmp_path / "w.bib").write_text(BIB)
    with Library.open(folder, readonly=True) as lib:
        a, b, c, d, e = lib.ids()[:5]
    edits = [
        (("tag", a, "--add", "clockt"), ("tag:clockt",), [a]),
        (("status", b, "skipped"), ("--status", "skipped"), [b]),
        (("set", c, "keywords=quokkaclock"), ("keyword:quokkaclock",), [c]),
        (("list-add", "clockreads", d), ("list:clockreads",), [d]),
        (("import", str(tmp_path / "w.bib")), ("wombatclock",), None),  # a new paper
        (("delete", "--yes", a), ("tag:clockt",), []),
    ]
    for n, (edit, query, expected) in enumerate(edits):
        anchor(folder, e, f"anchorword{n}")  # the index has seen the real time just now
        faked(offset, folder, *edit)
        found = search(folder, *query)
        if expected is None:
            assert len(found) == 1, f"{edit[0]} under a clock {offset}: {found}"
        else:
            assert found == expected, f"{edit[0]} under a clock {offset}: {found}"
    # and an edit at the real time after them all (hidden once by an edit from the future)
    with Library.open(folder) as lib:
        lib.set_notes(e, "lastwordclock")
    assert search(folder, "note:lastwordclock") == [e]


def test_a_window_opened_after_another_process_edited_under_a_clock_set_back_shows_the_edit(
    tmp_path, indexed, qtbot, settings
):
    """The window holds the library's writer lock while it is open, so another
    process edits between two windows; the next window finds the edit."""
    from PySide6.QtWidgets import QLineEdit

    folder = tmp_path / "library"
    copy_seeded(indexed, folder)
    opened = Opened(qtbot, folder).open()
    pid = opened.lib.ids()[0]
    opened.lib.set_notes(pid, "windowanchor")  # the index's newest time stamp: now
    opened.close()  # lets the edit land in the index first
    faked("-60 seconds", folder, "tag", pid, "--add", "windowclock")
    opened.open()
    try:
        qtbot.keyClicks(opened.win.findChild(QLineEdit, "searchBox"), "tag:windowclock")
        opened.settle()
        assert opened.win.last_answer is not None and opened.win.last_answer.indexed
        assert opened.win.last_answer.ids == [pid]
    finally:
        opened.close()


def test_a_reader_that_loaded_the_library_before_an_edit_does_not_put_the_old_record_back(
    indexed, tmp_path, qtbot, settings
):
    """`papershelf search` (a read-only library) that read the library just
    before the window's edit, and opens the index just after the window wrote
    that edit into it, compared digests and wrote its older copy of the paper
    back: the window's searches then missed the edit for the rest of its session.
    (It passed before the digest catch-up, which trusted times; now the store's
    files say whose copy is older.)"""
    from PySide6.QtWidgets import QLineEdit

    folder = tmp_path / "library"
    copy_seeded(indexed, folder)
    reader = Library.open(folder, readonly=True)  # read before the edit
    opened = Opened(qtbot, folder).open()
    try:
        pid, other = opened.lib.ids()[:2]
        opened.lib.set_notes(pid, "freshwordclock")
        box = opened.win.findChild(QLineEdit, "searchBox")
        qtbot.keyClicks(box, "note:freshwordclock")
        opened.settle()
        assert opened.win.last_answer.ids == [pid]
        reader.open_index()  # its copy is one edit behind the index
        assert reader.index_status.stale  # it searched the index as it was, and wrote nothing
        reader.close_index()
        opened.lib.set_notes(other, "otherwordclock")  # the window's next commit reads the index again
        box.clear()
        qtbot.keyClicks(box, "note:otherwordclock")
        opened.settle()
        assert opened.win.last_answer.ids == [other]
        box.clear()
        qtbot.keyClicks(box, "note:freshwordclock")
        opened.settle()
        assert opened.win.last_answer.indexed and opened.win.last_answer.ids == [pid]
    finally:
        opened.close()
        reader.close()
