"""Exports warn about papers nobody would cite (a derived title, no authors or no year) and
offer Find Published Version first; the export dialog's dialect is its own (issue 20)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QFileDialog, QMessageBox, QProgressDialog, QPushButton

from conftest import run_cli
from test_online_gui import shown

COMPLETE = (
    "@article{knuth84,\n  author = {Knuth, Donald E.},\n  title = {Literate Programming},\n"
    "  journal = {The Computer Journal},\n  year = 1984,\n}\n"
)


# ---- the command line ----------------------------------------------------------------------------
def test_export_says_how_many_papers_are_fragments_and_how_to_complete_them(data_dir, seeds, tmp_path):
    bib = tmp_path / "complete.bib"
    bib.write_text(COMPLETE)
    assert run_cli("import", str(seeds[0]), str(bib), data_dir=data_dir).returncode == 0
    papers = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
    listing = [p for p in papers if p["title_derived"]]
    complete = next(p for p in papers if p["title"] == "Literate Programming")
    assert len(listing) == len(papers) - 1  # a listing gives no year: every one is a fragment

    res = run_cli("export", "-o", str(tmp_path / "all.bib"), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert (
        f"warning: {len(listing)} of the {len(papers)} papers exported have no real title, authors or year"
        in res.stderr
    )
    assert "papershelf lookup --derived" in res.stderr  # too many to name: all have derived titles

    two = [p["id"] for p in listing[:2]]
    res = run_cli("export", "--ids", *two, complete["id"], "-o", str(tmp_path / "three.ris"), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "2 of the 3 papers exported have no real title" in res.stderr
    assert f"papershelf lookup {two[0]} {two[1]}" in res.stderr

    res = run_cli("export", "--ids", complete["id"], "-o", str(tmp_path / "one.bib"), data_dir=data_dir)
    assert res.returncode == 0 and res.stderr == ""  # nothing to warn about


# ---- the window ----------------------------------------------------------------------------------


def ctrl_e(qtbot, win) -> None:
    """Export Selection, by its keys, in the active window."""
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    qtbot.keyClick(win, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)


def select_first(qtbot, win, n: int) -> list[str]:
    qtbot.waitUntil(lambda: win.model.rowCount() >= n)
    qtbot.waitExposed(win)
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)  # the keys go to it
    view = win.paper_list
    view.setFocus()
    view.selectionModel().clearSelection()
    for row in range(n):
        view.selectionModel().select(
            win.model.index(row, 0),
            view.selectionModel().SelectionFlag.Select | view.selectionModel().SelectionFlag.Rows,
        )
    return list(win.selected_ids())


@pytest.fixture
def save_as(monkeypatch, tmp_path):
    """The save dialog, answered with `chosen.bib` and the filter at `pick` (0 BibTeX, 1 BibLaTeX);
    what it was offered each time is in `.offered`."""

    class SaveAs:
        def __init__(self) -> None:
            self.offered: list[tuple[str, str]] = []
            self.pick = 0

        def __call__(self, parent, caption, start, filters, chosen):
            self.offered.append((start, chosen))
            return str(tmp_path / "chosen.bib"), filters.split(";;")[self.pick]

    answer = SaveAs()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    return answer


def fragments_box(qtbot, win, n: int) -> QMessageBox:
    select_first(qtbot, win, n)
    ctrl_e(qtbot, win)
    return shown(qtbot, QMessageBox, "exportFragments")


@pytest.mark.gui
def test_the_window_warns_before_exporting_fragments_and_exports_anyway(window, qtbot, save_as, tmp_path):
    box = fragments_box(qtbot, window, 3)
    assert box.text() == "3 of the 3 papers have no real title, authors or year: they would export as fragments."
    assert save_as.offered == []  # asked before the file dialog
    with qtbot.waitSignal(window.exportFinished, timeout=30_000) as blocker:
        box.findChild(QPushButton, "exportAnyway").click()
    assert blocker.args[0].entries == 3
    assert (tmp_path / "chosen.bib").read_text(encoding="utf-8").count("\n@misc{") == 3


@pytest.mark.gui
def test_cancel_exports_nothing(window, qtbot, save_as, tmp_path):
    box = fragments_box(qtbot, window, 2)
    box.findChild(QPushButton, "exportCancel").click()
    qtbot.waitUntil(lambda: not box.isVisible())
    assert save_as.offered == [] and not (tmp_path / "chosen.bib").exists()
    assert window.statusBar().currentMessage() == "Nothing was exported."


@pytest.mark.gui
def test_find_published_versions_looks_those_papers_up(window, qtbot, save_as, tmp_path):
    QSettings().setValue("online/allowed", True)  # asked before, and allowed
    box = fragments_box(qtbot, window, 2)
    box.findChild(QPushButton, "exportFindPublished").click()
    progress = shown(qtbot, QProgressDialog, "lookupProgress")
    assert progress.labelText() == "Looking up 2 papers…"
    run = window.menus.online.lookup
    with qtbot.waitSignal(run.finished, timeout=60_000):
        progress.cancel()
    assert save_as.offered == [] and not (tmp_path / "chosen.bib").exists()
    for name in ("lookupReport", "reviewDialog"):
        for w in QApplication.topLevelWidgets():
            if w.objectName() == name and w.isVisible():
                w.close()


@pytest.mark.gui
def test_choosing_biblatex_in_the_export_dialog_leaves_the_preferences_default(tmp_path, qtbot, settings, save_as):
    from conftest import window_on

    complete = tmp_path / "complete.bib"
    complete.write_text(COMPLETE)
    gen = window_on(qtbot, tmp_path / "lib", [complete])
    win = next(gen)
    try:
        save_as.pick = 1  # BibLaTeX
        select_first(qtbot, win, 1)
        with qtbot.waitSignal(win.exportFinished, timeout=30_000):  # no fragment: no question
            ctrl_e(qtbot, win)
        assert "(BibLaTeX" in (tmp_path / "chosen.bib").read_text(encoding="utf-8").splitlines()[0]
        # Preferences still says BibTeX
        win.findChild(QAction, "preferencesAction").trigger()
        dialog = shown(qtbot, QDialog, "preferencesDialog")
        assert dialog.findChild(QComboBox, "dialectPicker").currentData() == "bibtex"
        dialog.reject()
        # the dialog offers its own last choice again
        with qtbot.waitSignal(win.exportFinished, timeout=30_000):
            ctrl_e(qtbot, win)
        assert save_as.offered[-1][1].startswith("BibLaTeX")
        # until Preferences' default changes: then that default is offered
        save_as.pick = 0
        with qtbot.waitSignal(win.exportFinished, timeout=30_000):  # BibTeX, once
            ctrl_e(qtbot, win)
        win.findChild(QAction, "preferencesAction").trigger()
        dialog = shown(qtbot, QDialog, "preferencesDialog")
        picker = dialog.findChild(QComboBox, "dialectPicker")
        picker.setCurrentIndex(picker.findData("biblatex"))
        dialog.accept()
        with qtbot.waitSignal(win.exportFinished, timeout=30_000):
            ctrl_e(qtbot, win)
        assert save_as.offered[-1][1].startswith("BibLaTeX")
    finally:
        next(gen, None)


def export_anyway(qtbot) -> None:
    """Answer the window's "would export as fragments" with Export Anyway (for the export tests
    whose papers, listing papers, all are fragments)."""
    shown(qtbot, QMessageBox, "exportFragments").findChild(QPushButton, "exportAnyway").click()
