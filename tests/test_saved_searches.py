"""Saved searches: kept beside the library, shown in the sidebar with live
counts, applied, renamed, deleted, exported, and found again after a restart;
the command line's `search --saved` and `export --saved`; a damaged file."""

from __future__ import annotations

import json
import re

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox

from conftest import copy_seeded, run_cli
from papershelf.core.errors import InvalidValueError, NotFoundError, ReadOnlyLibraryError
from papershelf.core.library import Library, Query
from papershelf.core.store.machine import device_id
from test_export_fragments import export_anyway


def own_file(folder):
    """This device's saved searches in a library folder."""
    return folder / "devices" / device_id() / "saved-searches.json"


# ---- the library's side --------------------------------------------------------------


def test_saving_renaming_and_deleting_keeps_a_small_json_file_beside_the_library(library):
    assert library.saved_searches() == {}
    assert library.save_search("  Diffusion   to read ", "diffusion", {"status": "To Read", "list": None}) == (
        "Diffusion to read"
    )
    library.save_search("Agents", "agent", {"tag": "llm", "area": "Machine Learning"})
    saved = library.saved_searches()
    assert list(saved) == ["Diffusion to read", "Agents"]
    assert saved["Diffusion to read"].filters == {"status": "to-read"}
    assert saved["Diffusion to read"].query() == Query("diffusion", status="to-read")
    # the same name in other case replaces it, in its place
    library.save_search("diffusion TO READ", "diffusion model", {})
    assert [(s.name, s.text) for s in library.saved_searches().values()] == [
        ("diffusion TO READ", "diffusion model"),
        ("Agents", "agent"),
    ]
    assert library.rename_saved_search("agents", "LLM agents") == "LLM agents"
    with pytest.raises(InvalidValueError, match="already a saved search named"):
        library.rename_saved_search("LLM agents", "Diffusion to read")
    library.delete_saved_search("diffusion to read")
    # this device's own file (each device of a synced library writes only its own), a delete and a
    # rename kept as tombstones, each entry stamped with the device that made it
    path = own_file(library.folder)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "papershelf-saved-searches" and data["device"] == device_id()
    live = [e for e in data["searches"] if not e.get("deleted")]
    assert [{k: v for k, v in e.items() if k in ("name", "text", "filters")} for e in live] == [
        {"name": "LLM agents", "text": "agent", "filters": {"tag": "llm", "area": "Machine Learning"}}
    ]
    assert sorted(e["name"] for e in data["searches"] if e.get("deleted")) == ["Agents", "diffusion TO READ"]
    assert {e["device"] for e in data["searches"]} == {device_id()}
    assert not (library.folder / "saved-searches.json").exists()  # never the library's shared file
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # written atomically


def test_bad_names_and_filters_are_refused_in_words(library):
    with pytest.raises(InvalidValueError, match="needs a name"):
        library.save_search("   ", "x", {})
    with pytest.raises(InvalidValueError, match="not by 'year'"):
        library.save_search("y", "x", {"year": "2024"})
    with pytest.raises(InvalidValueError, match="status"):
        library.save_search("s", "x", {"status": "half-read"})
    library.save_search("Diffusion", "diffusion", {})
    with pytest.raises(NotFoundError, match="did you mean 'Diffusion'"):
        library.delete_saved_search("Difusion")
    assert list(library.saved_searches()) == ["Diffusion"]


def test_a_read_only_library_reads_them_and_changes_none(data_dir):
    with Library.open(data_dir) as lib:
        lib.save_search("Diffusion", "diffusion", {})
    with Library.open(data_dir, readonly=True) as lib:
        assert list(lib.saved_searches()) == ["Diffusion"]
        with pytest.raises(ReadOnlyLibraryError, match="read-only"):
            lib.save_search("Other", "x", {})


def test_a_damaged_file_is_reported_and_set_aside_never_raised(data_dir):
    with Library.open(data_dir) as lib:
        lib.save_search("Diffusion", "diffusion", {})
    path = own_file(data_dir)
    path.write_text('{"format": "papershelf-saved-searches", "searches": [{"name": "Diff', encoding="utf-8")
    with Library.open(data_dir) as lib:
        assert lib.saved_searches() == {}
        assert any("saved searches" in n and "damaged (it is not JSON)" in n for n in lib.notices), lib.notices
        aside = [p.name for p in path.parent.iterdir() if p.name.startswith("saved-searches.damaged-")]
        assert len(aside) == 1 and aside[0] in lib.notices[-1]
        lib.save_search("Fresh", "x", {})  # a new file starts
        assert list(lib.saved_searches()) == ["Fresh"]
    # one bad entry: the others are kept, the file as it was is set aside
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["searches"].append({"name": 12, "text": None})
    path.write_text(json.dumps(raw), encoding="utf-8")
    with Library.open(data_dir) as lib:
        assert list(lib.saved_searches()) == ["Fresh"]
        assert "1 entry could not be read" in lib.notices[-1] and "1 saved search could be read" in lib.notices[-1]
    with Library.open(data_dir) as lib:  # the good one was written back: nothing to say any more
        assert list(lib.saved_searches()) == ["Fresh"] and lib.notices == []


# ---- the window ------------------------------------------------------------------------


def saved_entry(win, name):
    """The sidebar entry's text ("name  (count)"), "" when there is none."""
    index = win.filter_panel.index_of("saved", name)
    return index.data() if index.isValid() else ""


def count_in(text):
    m = re.search(r"\(([\d,]+)\)$", text)
    return int(m.group(1).replace(",", "")) if m else None


def menu_action(monkeypatch, show, text, tries=200):
    """Open a context menu with `show()` and pick its entry `text`, as a person would
    (the menu runs its own loop: the pick comes from a timer inside it)."""
    picked = []

    def pick():
        menu = QApplication.activePopupWidget()
        if menu is None and len(picked) < tries:
            picked.append(None)
            QTimer.singleShot(10, pick)
            return
        actions = {a.text(): a for a in menu.actions()} if menu is not None else {}
        if menu is not None:
            menu.close()
        picked.append(sorted(actions))
        if text in actions:
            actions[text].trigger()

    QTimer.singleShot(0, pick)
    show()
    assert picked and text in (picked[-1] or []), picked[-1:]


def right_click_panel(win, monkeypatch, name, text):
    panel = win.filter_panel
    rect = panel.visualRect(panel.index_of("saved", name))
    menu_action(monkeypatch, lambda: panel.customContextMenuRequested.emit(rect.center()), text)


@pytest.mark.gui
def test_save_apply_count_rename_export_delete_and_persist_across_restarts(opened, qtbot, monkeypatch, tmp_path):
    win, lib = opened.win, opened.lib
    box = win.search_box
    assert win.filter_panel.isRowHidden(win.filter_panel._groups["saved"].row(), win.filter_panel.rootIndex())
    # 1. words typed, then "Save Search…" from the search box's context menu
    qtbot.keyClicks(box, "diffusion")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    opened.settle()
    diffusion_ids = sorted(win.model.ids())
    assert len(diffusion_ids) > 5
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Diffusion", True))
    menu_action(
        monkeypatch,
        lambda: QApplication.sendEvent(
            box, QContextMenuEvent(QContextMenuEvent.Reason.Mouse, QPoint(5, 5), box.mapToGlobal(QPoint(5, 5)))
        ),
        "Save Search…",
    )
    qtbot.waitUntil(lambda: saved_entry(win, "Diffusion") == f"Diffusion  ({len(diffusion_ids)})", timeout=10_000)
    # 2. a second one: a tag filter from the sidebar, no words
    favourites = diffusion_ids[:3]
    lib.add_tags(favourites, ["favourite"])
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    opened.settle()
    panel = win.filter_panel
    qtbot.waitUntil(lambda: panel.index_of("tag", "favourite").isValid(), timeout=10_000)
    qtbot.mouseClick(
        panel.viewport(), Qt.MouseButton.LeftButton, pos=panel.visualRect(panel.index_of("tag", "favourite")).center()
    )
    opened.settle()
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Favourites", True))
    win.filter_panel.saveSearchRequested.emit()  # "Save current search…" on the heading
    assert lib.saved_searches()["Favourites"].filters == {"tag": "favourite"}
    qtbot.waitUntil(lambda: saved_entry(win, "Favourites") == "Favourites  (3)", timeout=10_000)
    # 3. live counts: a paper tagged now is counted once the index has it
    lib.add_tags([diffusion_ids[3]], ["favourite"])
    qtbot.waitUntil(lambda: saved_entry(win, "Favourites") == "Favourites  (4)", timeout=10_000)
    # 4. clicking a saved search applies its words and filters
    qtbot.mouseClick(
        panel.viewport(), Qt.MouseButton.LeftButton, pos=panel.visualRect(panel.index_of("saved", "Diffusion")).center()
    )
    opened.settle()
    assert box.text() == "diffusion" and win.query.tag is None and panel.active["tag"] is None
    assert sorted(win.model.ids()) == diffusion_ids
    assert panel.active["saved"] == "Diffusion"
    # a second click shows every paper again
    qtbot.mouseClick(
        panel.viewport(), Qt.MouseButton.LeftButton, pos=panel.visualRect(panel.index_of("saved", "Diffusion")).center()
    )
    opened.settle()
    assert box.text() == "" and len(win.model.ids()) == len(lib)
    # 5. rename from the sidebar's context menu
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: ("Diffusion papers", True))
    right_click_panel(win, monkeypatch, "Diffusion", "Rename saved search…")
    assert list(lib.saved_searches()) == ["Diffusion papers", "Favourites"]
    qtbot.waitUntil(lambda: count_in(saved_entry(win, "Diffusion papers")) == len(diffusion_ids), timeout=10_000)
    # 6. export it to BibTeX, as a reading list is exported
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a: (str(tmp_path / "diffusion.bib"), a[3].split(";;")[0])
    )
    with qtbot.waitSignal(win.exportFinished, timeout=30_000) as blocker:
        right_click_panel(win, monkeypatch, "Diffusion papers", "Export…")
        export_anyway(qtbot)  # listing papers: all fragments, which the window warns about first
    assert blocker.args[0].entries == len(diffusion_ids)
    assert (tmp_path / "diffusion.bib").read_text(encoding="utf-8").count("\n@") == len(diffusion_ids)
    # 7. close the window and the library, open both again: both are there, counted
    win = opened.reopen().win
    qtbot.waitUntil(lambda: saved_entry(win, "Favourites") == "Favourites  (4)", timeout=10_000)
    # (counted from titles alone until the index is open, then from the index)
    qtbot.waitUntil(lambda: count_in(saved_entry(win, "Diffusion papers")) == len(diffusion_ids), timeout=10_000)
    # 8. delete, after asking
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    right_click_panel(win, monkeypatch, "Favourites", "Delete saved search…")
    assert list(opened.lib.saved_searches()) == ["Diffusion papers"]
    assert saved_entry(win, "Favourites") == ""


@pytest.mark.gui
def test_a_saved_search_is_not_exported_from_titles_alone_while_the_index_is_not_open(
    opened, qtbot, monkeypatch, tmp_path
):
    win, lib = opened.win, opened.lib
    lib.save_search("Diffusion", "diffusion")
    win.sidebar.saved.reload()  # as after saving from the window
    qtbot.waitUntil(lambda: bool(saved_entry(win, "Diffusion")), timeout=10_000)
    lib.close_index()  # searches now match titles only: a partial answer
    asked: list = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: asked.append(a) or ("", ""))
    right_click_panel(win, monkeypatch, "Diffusion", "Export…")
    qtbot.waitUntil(lambda: win.error_box is not None and win.error_box.isVisible(), timeout=30_000)
    assert "search index is not ready" in win.error_box.text()
    assert asked == []  # nothing offered to save: no partial list exported as if whole
    assert not list(tmp_path.glob("*.bib"))


@pytest.mark.gui
def test_a_damaged_file_opens_the_window_with_a_notice_and_no_saved_searches(opened, qtbot):
    folder = opened.folder
    opened.close()
    own_file(folder).parent.mkdir(parents=True, exist_ok=True)
    own_file(folder).write_bytes(b"\xff\xfe not json")
    win = opened.open().win
    assert any("saved searches" in n for n in opened.lib.notices)
    panel = win.filter_panel
    assert panel.isRowHidden(panel._groups["saved"].row(), panel.rootIndex())


# ---- the command line --------------------------------------------------------------------


def test_the_command_line_searches_and_exports_a_saved_search(indexed_seeds, tmp_path):

    folder = tmp_path / "library"
    copy_seeded(indexed_seeds, folder)
    with Library.open(folder) as lib:
        lib.open_index()
        ids = lib.search(Query("diffusion", facets=False)).ids
        lib.set_status(ids[:2], "to-read")
        lib.save_search("Diffusion to read", "diffusion", {"status": "to-read"})
        lib.save_search("All diffusion", "diffusion", {})
    res = run_cli("search", "--saved", "diffusion TO read", "--json", data_dir=folder)
    assert res.returncode == 0, res.stderr
    assert sorted(p["id"] for p in json.loads(res.stdout)) == sorted(ids[:2])
    out = tmp_path / "x.bib"
    res = run_cli("export", "--saved", "all diffusion", "-o", str(out), data_dir=folder)
    assert res.returncode == 0, res.stderr
    assert f"Wrote {len(ids)} entries" in res.stdout and out.read_text(encoding="utf-8").count("\n@") == len(ids)
    res = run_cli("search", "--saved", "diffusoin", data_dir=folder)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "No saved search named 'diffusoin'" in res.stderr
    # a damaged file: said in words, no traceback
    own_file(folder).write_text("[1, 2", encoding="utf-8")
    res = run_cli("search", "--saved", "All diffusion", data_dir=folder)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "were damaged (it is not JSON)" in res.stderr and "no saved searches yet" in res.stderr
