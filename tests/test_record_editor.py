"""The record editor (Edit ▸ Edit Record, F2, the paper menu, a double-click), driven as a person does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QFormLayout, QLabel, QLineEdit, QToolButton

from conftest import SEEDS, window_on
from papershelf.core.library import Library
from papershelf.gui.record_editor import FieldRow, RecordEditor
from test_paper_menu import right_click, select_rows

pytestmark = pytest.mark.gui

DERIVED_NOTE = "Title derived from the abstract by Papershelf"


def xampl_bib() -> Path:
    """TeX Live's xampl.bib (every standard entry type), found as BibTeX finds it."""
    if shutil.which("kpsewhich") is None:
        pytest.skip("needs TeX Live's kpsewhich")
    found = subprocess.run(["kpsewhich", "xampl.bib"], capture_output=True, text=True).stdout.strip()
    if not found:
        pytest.skip("xampl.bib is not installed")
    return Path(found)


def records(lib: Library, ids: list[str]) -> dict[str, dict]:
    """The stored records, but `updated` (when a paper last changed: an undo is a change too)."""
    return {pid: {k: v for k, v in rec.items() if k != "updated"} for pid, rec in lib.records(ids).items()}


def select_paper(win, pid: str) -> None:
    view = win.paper_list
    row = win.model.row_of(pid)
    assert row >= 0, pid
    view.setFocus()
    view.selectionModel().setCurrentIndex(
        view.model().index(row, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )


def open_editor(win, qtbot) -> RecordEditor:
    """F2 on the list, as a person presses it."""
    qtbot.keyClick(win.paper_list, Qt.Key.Key_F2)
    (dialog,) = [d for d in win.findChildren(RecordEditor, "recordEditor") if d.isVisible()]
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(dialog.isActiveWindow)  # its keys reach it
    return dialog


def field(dialog: RecordEditor, name: str) -> QLineEdit:
    edit = dialog.findChild(QLineEdit, f"fieldEdit_{name}")
    assert edit is not None and edit.isVisibleTo(dialog), name
    return edit


def retype(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def group_fields(dialog: RecordEditor, group: str) -> list[str]:
    """The fields a group shows, top to bottom."""
    box, form = dialog.groups[group]
    if not box.isVisibleTo(dialog):
        return []
    rows = [form.itemAt(i, QFormLayout.ItemRole.FieldRole) for i in range(form.rowCount())]
    return [item.widget().name for item in rows if item is not None and isinstance(item.widget(), FieldRow)]


def enter(qtbot, names) -> None:
    """Return in a name's cell: the table takes the text (on its next turn of the event loop)."""
    qtbot.keyClick(names.focusWidget(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: names.state() != QAbstractItemView.State.EditingState)


def click_ok(qtbot, dialog: RecordEditor) -> None:
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)


@pytest.fixture
def xampl_window(qtbot, tmp_path, settings):
    """The real window on a library of the first listing and xampl.bib."""
    yield from window_on(qtbot, tmp_path / "library", [SEEDS[0], xampl_bib()])


def by_key(lib: Library, key: str) -> str:
    return next(p.id for p in lib.papers() if p.citekey == key)


def test_editing_a_listing_paper_is_one_undo_step_the_viewer_and_the_export_follow(window, qtbot):
    win, lib = window, window.library
    select_rows(win, [0])
    (pid,) = win.selected_ids()
    paper = lib.get(pid)
    assert paper.title_derived and DERIVED_NOTE in lib.bibtex_entries([pid], pin=False)
    before = records(lib, [pid])
    first = paper.authors[0]

    dialog = open_editor(win, qtbot)
    assert dialog.title_edit.text() == ""  # a derived title is not the paper's title
    assert paper.title in dialog.title_edit.placeholderText()
    qtbot.keyClicks(dialog.title_edit, "Verified Optimization Modeling")
    # the authors: a person typed in after the first one, an organisation, the organisation moved up
    qtbot.mouseClick(dialog.authors.add_person_button, Qt.MouseButton.LeftButton)
    names = dialog.authors.view
    qtbot.keyClicks(names.focusWidget(), "Knuth")
    qtbot.keyClick(names.focusWidget(), Qt.Key.Key_Tab)  # on to the given names
    qtbot.keyClicks(names.focusWidget(), "Donald E.")
    enter(qtbot, names)
    qtbot.mouseClick(dialog.authors.add_org_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(names.focusWidget(), "World Health Organization")
    enter(qtbot, names)
    assert dialog.authors.current_row() == 2
    qtbot.keyClick(names, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert dialog.authors.current_row() == 1
    # the type: an article wants a journal, which the form now asks for
    assert "venue" not in group_fields(dialog, "requiredGroup")
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("article"))
    assert group_fields(dialog, "requiredGroup") == ["venue", "year"]
    retype(qtbot, field(dialog, "year"), "2024")
    qtbot.keyClicks(field(dialog, "venue"), "Journal of Tested Software")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())

    paper = lib.get(pid)
    assert paper.title == "Verified Optimization Modeling" and not paper.title_derived
    assert paper.authors[:3] == [first, "World Health Organization", "Donald E. Knuth"]
    assert paper.year == 2024 and paper.entrytype == "article" and paper.venue == "Journal of Tested Software"
    shown = win.abstract_view.toPlainText()
    assert "Verified Optimization Modeling" in shown and "World Health Organization" in shown
    assert "Title derived from the abstract" not in shown
    entry = lib.bibtex_entries([pid], pin=False)
    assert entry.startswith("@article{")
    assert "{World Health Organization} and Knuth, Donald E. and" in entry
    assert re.search(r"\n  journal +?= \{Journal of Tested Software\},", entry)
    assert re.search(r"\n  year +?= \{2024\},", entry)
    assert DERIVED_NOTE not in entry
    after = records(lib, [pid])
    assert win.undo_stack.count() == 1  # every change, one step
    assert "Ctrl+Z undoes" in win.statusBar().currentMessage()

    win.activateWindow()  # back from the dialog
    qtbot.waitUntil(win.isActiveWindow)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert records(lib, [pid]) == before
    assert lib.get(pid).title_derived and DERIVED_NOTE in lib.bibtex_entries([pid], pin=False)
    qtbot.keyClick(
        win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert records(lib, [pid]) == after


def test_one_changed_field_leaves_every_other_field_of_a_bib_entry_byte_for_byte(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "inproceedings-full")
    raw_before = dict(lib.get(pid).bibfields)
    entry_before = lib.bibtex_entries([pid], pin=False).splitlines()
    select_paper(win, pid)
    # a double-click on the row opens the editor too
    view = win.paper_list
    rect = view.visualRect(view.model().index(win.model.row_of(pid), 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # a double-click's first press
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    dialog = win.findChild(RecordEditor, "recordEditor")
    assert dialog is not None and dialog.paper_id == pid
    assert dialog.type_combo.currentData() == "inproceedings"
    assert field(dialog, "month").text() == "March" and field(dialog, "pages").text() == "133–139"
    retype(qtbot, field(dialog, "pages"), "133--140")
    assert dialog.changes() == {"pages": "133--140"}  # only what was changed is sent
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())

    raw_after = dict(lib.get(pid).bibfields)
    assert raw_after.pop("pages") == "{133--140}"
    assert raw_after == {k: v for k, v in raw_before.items() if k != "pages"}
    entry_after = lib.bibtex_entries([pid], pin=False).splitlines()
    assert [line for line in entry_after if "133" not in line] == [line for line in entry_before if "133" not in line]

    # opened and closed with OK, nothing typed: nothing is changed, no step to undo
    steps, before = win.undo_stack.count(), lib.records([pid])
    select_paper(win, pid)
    click_ok(qtbot, open_editor(win, qtbot))
    assert lib.records([pid]) == before and win.undo_stack.count() == steps


def test_required_fields_follow_the_type_and_an_empty_one_is_flagged_without_blocking(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "article-full")
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    assert group_fields(dialog, "requiredGroup") == ["venue", "year"]
    assert dialog.groups["requiredGroup"][0].title() == "Required for @article"
    assert set(group_fields(dialog, "optionalGroup")) >= {"volume", "number", "pages", "month", "note"}
    assert not dialog.missing.isVisible()
    for kind, wanted in (("techreport", ["institution", "year"]), ("phdthesis", ["school", "year"])):
        dialog.type_combo.setCurrentIndex(dialog.type_combo.findData(kind))
        assert group_fields(dialog, "requiredGroup") == wanted
        assert dialog.missing.isVisible() and wanted[0].capitalize() in dialog.missing.text()
        assert dialog.ok_button.isEnabled()  # flagged, not blocking
    # the article's journal is kept under Other fields while the type does not name it
    assert field(dialog, "venue").text() == "G-Animal's Journal"
    assert "venue" in group_fields(dialog, "otherGroup")
    qtbot.keyClicks(field(dialog, "school"), "Fanstord University")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    paper = lib.get(pid)
    assert paper.entrytype == "phdthesis" and paper.bibfields["school"] == "{Fanstord University}"
    assert "@phdthesis{article-full," in lib.bibtex_entries([pid], pin=False)


def test_a_bad_citation_key_is_shown_in_words_and_ok_waits(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "book-full")
    before = records(lib, lib.ids())
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    retype(qtbot, dialog.key_edit, "knuth 1981")
    if dialog.ok_button.isEnabled():  # no check as you type: the library's answer on OK
        click_ok(qtbot, dialog)
    assert dialog.isVisible() and not dialog.ok_button.isEnabled()
    assert dialog.key_problem.isVisible()
    assert "is not a usable citation key: it holds white space" in dialog.key_problem.text()
    assert records(lib, lib.ids()) == before and win.undo_stack.count() == 0
    retype(qtbot, dialog.key_edit, "knuth1981")
    assert dialog.ok_button.isEnabled() and not dialog.key_problem.isVisible()
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert lib.get(pid).citekey == "knuth1981"


def test_a_key_another_paper_holds_is_refused_with_the_librarys_words(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "book-minimal")
    before = records(lib, lib.ids())
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    retype(qtbot, dialog.key_edit, "Article-Full")  # BibTeX tells keys apart case-insensitively
    retype(qtbot, field(dialog, "publisher"), "Another Publisher")
    click_ok(qtbot, dialog)
    assert dialog.isVisible()
    assert "already used by another paper" in dialog.key_problem.text() and dialog.key_problem.isVisible()
    assert not dialog.ok_button.isEnabled()
    assert records(lib, lib.ids()) == before and win.undo_stack.count() == 0  # not even the publisher


def test_escape_changes_nothing(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "misc-full")
    before = records(lib, lib.ids())
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    qtbot.keyClicks(dialog.title_edit, " and more")
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("article"))
    qtbot.mouseClick(dialog.authors.remove_button, Qt.MouseButton.LeftButton)
    assert dialog.changes()
    qtbot.keyClick(dialog.title_edit, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert records(lib, lib.ids()) == before and win.undo_stack.count() == 0


def test_identifiers_are_checked_as_typed_and_fields_can_be_added_and_removed(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "book-full")
    raw = dict(lib.get(pid).bibfields)
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    doi = field(dialog, "doi")
    qtbot.keyClicks(doi, "doi.org/xyz")
    problem = dialog.findChild(QLabel, "fieldProblem_doi")
    assert problem.isVisible() and "A DOI starts with 10." in problem.text()
    assert not dialog.ok_button.isEnabled()
    retype(qtbot, doi, "https://doi.org/10.1000/xyz123")
    assert not problem.isVisible() and dialog.ok_button.isEnabled()
    qtbot.keyClicks(field(dialog, "eprint"), "arXiv 2401")
    assert not dialog.ok_button.isEnabled()
    retype(qtbot, field(dialog, "eprint"), "arXiv:2401.01234v2")
    assert dialog.ok_button.isEnabled()
    # a book's month is one of the record's other fields: removed; a location added by name
    assert group_fields(dialog, "otherGroup") == ["month"]
    qtbot.mouseClick(dialog.findChild(QToolButton, "removeField_month"), Qt.MouseButton.LeftButton)
    assert group_fields(dialog, "otherGroup") == []
    qtbot.keyClicks(dialog.new_field, "Location")
    qtbot.keyClick(dialog.new_field, Qt.Key.Key_Return)
    assert group_fields(dialog, "otherGroup") == ["location"]
    assert dialog.isVisible() and win.undo_stack.count() == 0  # Return added the field; it did not press OK
    qtbot.keyClicks(dialog.focusWidget(), "Reading, MA")
    qtbot.keyClicks(dialog.new_field, "abstract")
    qtbot.keyClick(dialog.new_field, Qt.Key.Key_Return)
    assert "not edited here" in dialog.new_field_problem.text()
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    paper = lib.get(pid)
    assert paper.doi == "10.1000/xyz123" and paper.arxiv_id == "2401.01234" and win.undo_stack.count() == 1
    assert "month" not in paper.bibfields and paper.bibfields["location"] == "{Reading, MA}"
    assert {k: v for k, v in paper.bibfields.items() if k not in ("doi", "eprint", "archiveprefix", "location")} == {
        k: v for k, v in raw.items() if k != "month"
    }


def test_the_paper_menu_and_the_edit_menu_open_it_and_f2_is_its_key(window, qtbot):
    win = window
    action = win.findChild(QAction, "editRecordAction")
    assert action is not None and action.shortcut().toString() == "F2"
    menu = right_click(qtbot, win, 1)
    assert action in menu.actions()
    (pid,) = win.selected_ids()
    menu.close()
    action.trigger()
    dialog = win.findChild(RecordEditor, "recordEditor")
    assert dialog is not None and dialog.paper_id == pid
    assert dialog.windowModality() == Qt.WindowModality.WindowModal
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    win.paper_list.selectionModel().clearSelection()
    action.trigger()
    assert win.statusBar().currentMessage() == "Select a paper first."


def test_the_author_list_is_kept_by_the_keyboard_alone(xampl_window, qtbot):
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "inproceedings-minimal")  # Oaho, Ullman, Yannakakis
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    names = dialog.authors.view
    names.setFocus()
    # Space on the Organisation box makes Oaho one corporate name, and back: nothing changed
    names.setCurrentIndex(names.model().index(0, 2))
    qtbot.keyClick(names, Qt.Key.Key_Space)
    assert dialog.authors.names()[0].literal == "Alfred V. Oaho"
    qtbot.keyClick(names, Qt.Key.Key_Space)
    assert dialog.changes() == {}
    names.setCurrentIndex(names.model().index(0, 0))
    qtbot.keyClick(dialog, Qt.Key.Key_G, Qt.KeyboardModifier.AltModifier)  # Add Or&ganisation, after Oaho
    qtbot.waitUntil(lambda: names.state() == QAbstractItemView.State.EditingState)  # a mnemonic's click is animated
    qtbot.keyClicks(names.focusWidget(), "ACM")
    enter(qtbot, names)
    qtbot.keyClick(names, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)  # below Ullman
    qtbot.keyClick(names, Qt.Key.Key_Up)  # to Ullman
    qtbot.keyClick(names, Qt.Key.Key_Delete)  # ACM takes his place
    qtbot.keyClick(names, Qt.Key.Key_Down)
    qtbot.keyClick(names, Qt.Key.Key_Delete)  # Yannakakis
    assert [n.family or n.literal for n in dialog.authors.names()] == ["Oaho", "ACM"]
    assert not dialog.authors.names()[1].family  # ACM is one corporate name
    qtbot.keyClick(names, Qt.Key.Key_Insert)  # a person after the current one
    qtbot.keyClicks(names.focusWidget(), "van der Berg, Jr")
    qtbot.keyClick(names.focusWidget(), Qt.Key.Key_Tab)
    qtbot.keyClicks(names.focusWidget(), "Anna")
    enter(qtbot, names)
    assert dialog.changes() == {"author": "Oaho, Alfred V. and {ACM} and van der Berg, Jr, Anna"}
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert lib.get(pid).authors[:2] == ["Alfred V. Oaho", "ACM"] and len(lib.get(pid).authors) == 3
    assert "= {Oaho, Alfred V. and {ACM} and van der Berg, Jr, Anna}," in lib.bibtex_entries([pid], pin=False)


def undo(qtbot, win, redo: bool = False) -> None:
    """Ctrl+Z (Ctrl+Shift+Z) on the list, back from the dialog."""
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    win.paper_list.setFocus()
    shift = Qt.KeyboardModifier.ShiftModifier if redo else Qt.KeyboardModifier.NoModifier
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | shift)


def test_a_key_pinned_after_an_edit_survives_its_undo_and_redo_a_key_it_typed_does_not(window, qtbot):
    from PySide6.QtGui import QGuiApplication

    from test_paper_menu import action

    win, lib = window, window.library
    select_rows(win, [0])
    (pid,) = win.selected_ids()
    assert lib.get(pid).citekey == ""
    dialog = open_editor(win, qtbot)
    qtbot.keyClicks(dialog.title_edit, "Weight Space Learning")
    retype(qtbot, field(dialog, "year"), "2024")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    # Copy Citation Key pins the key the edited record gives: it goes into a document's \cite
    action(right_click(qtbot, win, win.model.row_of(pid)), "paperMenuCopyKey").trigger()
    key = QGuiApplication.clipboard().text()
    assert key and "2024" in key and lib.get(pid).citekey == key
    win.paper_menu.menu.close()

    undo(qtbot, win)
    paper = lib.get(pid)
    assert paper.year != 2024 and paper.title_derived  # the edit is undone…
    assert paper.citekey == key and lib.citation_keys([pid]) == {pid: key}  # …but not the \cite
    undo(qtbot, win, redo=True)
    assert lib.get(pid).year == 2024 and lib.get(pid).citekey == key

    # a key the edit itself set goes back with it
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    retype(qtbot, dialog.key_edit, "weights2024")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert lib.get(pid).citekey == "weights2024"
    undo(qtbot, win)
    assert lib.get(pid).citekey == key
    undo(qtbot, win, redo=True)
    assert lib.get(pid).citekey == "weights2024"


@pytest.fixture
def examples_window(qtbot, tmp_path, settings):
    """The real window on a library of biblatex-examples.bib (BibLaTeX's own types and dates)."""

    if shutil.which("kpsewhich") is None:
        pytest.skip("needs TeX Live's kpsewhich")
    found = subprocess.run(["kpsewhich", "biblatex-examples.bib"], capture_output=True, text=True).stdout.strip()
    if not found:
        pytest.skip("biblatex-examples.bib is not installed")
    yield from window_on(qtbot, tmp_path / "library", [Path(found)])


def test_a_biblatex_date_meets_the_year_requirement_and_is_edited_whole(examples_window, qtbot):
    win, lib = examples_window, examples_window.library
    pid = by_key(lib, "baez/online")  # date = {2004-10-27}, no year
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    assert group_fields(dialog, "requiredGroup") == ["date"]
    assert field(dialog, "date").text() == "2004-10-27"
    edit = dialog.findChild(QLineEdit, "fieldEdit_year")
    assert edit is None or not edit.isVisibleTo(dialog)  # no empty Year row to type a year into
    assert "Year" not in dialog.missing.text() and "Date" not in dialog.missing.text()
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("article"))  # any type: the date is its year
    assert group_fields(dialog, "requiredGroup") == ["venue", "date"]
    retype(qtbot, field(dialog, "date"), "")
    assert "Date" in dialog.missing.text()
    retype(qtbot, field(dialog, "date"), "2004-11-03")
    dialog.type_combo.setCurrentIndex(dialog.type_combo.findData("online"))
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    paper = lib.get(pid)
    assert paper.bibfields["date"] == "{2004-11-03}" and "year" not in paper.bibfields and paper.year == 2004


def test_biblatex_types_and_bibtex_aliases_off_the_short_list_are_named_as_they_are(examples_window, qtbot, tmp_path):
    win, lib = examples_window, examples_window.library
    bib = tmp_path / "types.bib"
    bib.write_text(
        "@conference{conf,\n  author = {Doe, Jane},\n  title = {A Talk},\n  booktitle = {Proc. Talks},\n"
        "  year = {2001},\n}\n\n@foo{odd,\n  author = {Roe, Rick},\n  title = {An Odd One},\n  year = {2002},\n}\n",
        encoding="utf-8",
    )
    lib.import_files([bib])
    for key, text in (
        ("britannica", "mvcollection"),
        ("knuth:ct", "mvbook"),
        ("conf", "conference (BibLaTeX reads it as inproceedings)"),
        ("odd", "foo (not a BibLaTeX type)"),
    ):
        pid = by_key(lib, key)
        qtbot.waitUntil(lambda pid=pid: win.model.row_of(pid) >= 0)
        win.activateWindow()  # back from the last dialog
        qtbot.waitUntil(win.isActiveWindow)
        select_paper(win, pid)
        dialog = open_editor(win, qtbot)
        assert dialog.type_combo.currentText() == text, key
        assert dialog.changes() == {}  # kept as the file gave it
        qtbot.keyClick(dialog.title_edit, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda dialog=dialog: not dialog.isVisible())


def test_multi_line_fields_are_sent_with_their_line_breaks_and_their_own_characters(examples_window, qtbot, tmp_path):
    from PySide6.QtWidgets import QPlainTextEdit

    win, lib = examples_window, examples_window.library
    bib = tmp_path / "notes.bib"
    bib.write_text(
        "@article{noted,\n  author = {Doe, Jane},\n  title = {Noted},\n  journal = {J},\n  year = {2001},\n"
        "  note = {Vol.\u00a03 of the series},\n}\n",
        encoding="utf-8",
    )
    lib.import_files([bib])
    pid = by_key(lib, "noted")
    qtbot.waitUntil(lambda: win.model.row_of(pid) >= 0)
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    note = dialog.findChild(QPlainTextEdit, "fieldEdit_note")
    assert note is not None and note.toPlainText() == "Vol. 3 of the series"
    assert dialog.changes() == {}  # the no-break space is the note's own: nothing changed
    note.setFocus()
    note.moveCursor(note.textCursor().MoveOperation.End)
    qtbot.keyClicks(note, ".")
    qtbot.keyClick(note, Qt.Key.Key_Return)
    qtbot.keyClicks(note, "Second line")
    qtbot.keyClicks(dialog.new_field, "comment")
    qtbot.keyClick(dialog.new_field, Qt.Key.Key_Return)
    assert dialog.isVisible() and "Second line" not in lib.get(pid).bibfields["note"]  # Return added, did not save
    comment = dialog.findChild(QPlainTextEdit, "fieldEdit_comment")
    assert comment is not None
    qtbot.waitUntil(comment.hasFocus)  # Add Field goes to the new field
    qtbot.keyClicks(comment, "First line")
    qtbot.keyClick(comment, Qt.Key.Key_Return)
    qtbot.keyClicks(comment, "Second line")
    qtbot.keyClick(comment, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # a line break, too
    qtbot.keyClicks(comment, "Third line")
    assert dialog.changes() == {
        "note": "Vol.\u00a03 of the series.\nSecond line",
        "comment": "First line\nSecond line\nThird line",
    }
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    raw = lib.get(pid).bibfields
    assert raw["note"] == "{Vol.\u00a03 of the series.\nSecond line}"
    assert raw["comment"] == "{First line\nSecond line\nThird line}"


def test_undo_does_not_give_back_a_key_another_paper_has_been_given_since(window, qtbot):
    from PySide6.QtGui import QGuiApplication

    from test_paper_menu import action

    win, lib = window, window.library
    select_rows(win, [0, 1])
    a, b = sorted(win.selected_ids())
    for pid in (a, b):  # two records of one paper (not merged): the same key suits both
        lib.edit_record(pid, {"author": "Zhang, Wei", "year": "2024", "title": "Weight Space Learning"})
    select_paper(win, a)
    action(right_click(qtbot, win, win.model.row_of(a)), "paperMenuCopyKey").trigger()
    win.paper_menu.menu.close()
    key = QGuiApplication.clipboard().text()
    assert key == "zhang2024weight" == lib.get(a).citekey
    select_paper(win, a)
    dialog = open_editor(win, qtbot)
    retype(qtbot, dialog.key_edit, "mine")
    click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow)
    select_paper(win, b)  # the key A gave up goes to B, and into a document
    action(right_click(qtbot, win, win.model.row_of(b)), "paperMenuCopyKey").trigger()
    win.paper_menu.menu.close()
    assert QGuiApplication.clipboard().text() == key == lib.get(b).citekey
    undo(qtbot, win)
    assert lib.get(a).citekey == "mine" and lib.get(b).citekey == key  # not two papers under one key
    undo(qtbot, win, redo=True)
    assert lib.get(a).citekey == "mine" and lib.get(b).citekey == key


def test_a_doi_link_the_library_takes_is_taken_by_the_editor_too(xampl_window, qtbot):
    # the editor had its own DOI pattern: it refused a www.doi.org link the one DOI rule reads
    win, lib = xampl_window, xampl_window.library
    pid = by_key(lib, "book-full")
    select_paper(win, pid)
    dialog = open_editor(win, qtbot)
    qtbot.keyClicks(field(dialog, "doi"), "https://www.doi.org/10.1000/xyz123")
    assert not dialog.findChild(QLabel, "fieldProblem_doi").isVisible()
    assert dialog.ok_button.isEnabled()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert lib.get(pid).doi == "10.1000/xyz123"
