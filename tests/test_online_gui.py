"""Online look-ups in the real window: consent, Preferences, Add by Identifier (Ctrl+N), Find
Published Version with its progress, Cancel and review dialog. Every request goes to the loopback
replay server (tests/replay_server.py) serving real recorded answers; a service no test routes is
a closed port."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTreeView,
)

from papershelf.core.online.records import FoundRecord, Proposal
from replay_server import RECORDED, ReplayServer, Reply

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

ARXIV_QUERY = "/arxiv/api/query"


@pytest.fixture
def replay(monkeypatch):
    """The replay server every service points at (as replay_server's fixture, under this name)."""
    server = ReplayServer()
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    yield server
    server.close()


def act(win, name: str) -> QAction:
    action = win.findChild(QAction, name)
    assert action is not None, name
    return action


def select(win, ids):
    from PySide6.QtCore import QItemSelectionModel

    view, model = win.paper_list, win.model
    sel = view.selectionModel()
    sel.clearSelection()
    for pid in ids:
        row = model.row_of(pid)
        assert row >= 0, pid
        sel.select(
            model.index(row, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        )
    assert win.selected_ids() and set(win.selected_ids()) == set(ids)


def shown(qtbot, kind, name):
    """The visible top-level widget (a dialog, a message box) of this kind and name."""
    found = []

    def there():
        found[:] = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, kind) and w.objectName() == name and w.isVisible()
        ]
        return bool(found)

    qtbot.waitUntil(there, timeout=10_000)
    return found[0]


def answer_consent(qtbot, yes: bool):
    box = shown(qtbot, QMessageBox, "onlineConsent")
    assert "arXiv" in box.informativeText() and "Semantic Scholar" in box.informativeText()
    assert "abstract" in box.informativeText()
    box.button(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No).click()
    qtbot.waitUntil(lambda: not box.isVisible())


def allow_online():
    QSettings().setValue("online/allowed", True)


def status(win) -> str:
    return win.statusBar().currentMessage()


# ---- consent and preferences ----------------------------------------------------------------
def test_the_first_look_up_asks_once_and_no_sends_nothing(window, qtbot, replay):
    win, lib = window, window.library
    ids = lib.ids()[:2]
    select(win, ids)
    assert QSettings().value("online/allowed") is None  # never asked yet
    act(win, "findPublishedAction").trigger()
    answer_consent(qtbot, yes=False)
    assert replay.requests == []  # nothing left the machine
    assert "nothing was sent" in status(win)
    assert str(QSettings().value("online/allowed")).lower() == "false"
    # asked once: the next look-up does not ask again, and still sends nothing
    act(win, "findPublishedAction").trigger()
    assert not [w for w in QApplication.topLevelWidgets() if w.objectName() == "onlineConsent" and w.isVisible()]
    assert "Preferences" in status(win)
    qtbot.keyClick(win, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # Add by Identifier
    dialog = shown(qtbot, QDialog, "identifierDialog")
    dialog.findChild(QPlainTextEdit, "identifierText").setPlainText("arXiv:1605.08386")
    dialog.findChild(QPushButton, "identifierAddButton").click()
    problems = dialog.findChild(QLabel, "identifierProblems")
    assert problems.isVisible() and "nothing was sent" in problems.text()
    assert replay.requests == [] and len(lib) == len(lib.ids())
    dialog.reject()


def test_preferences_turn_look_ups_on_and_keep_a_contact_email(window, qtbot):
    win = window
    act(win, "preferencesAction").trigger()
    dialog = shown(qtbot, QDialog, "preferencesDialog")
    box, email = dialog.findChild(QCheckBox, "onlineAllowed"), dialog.findChild(QLineEdit, "contactEmail")
    assert not box.isChecked() and email.text() == ""
    box.setChecked(True)
    email.setText("not an address")
    dialog.accept()  # OK
    problem = dialog.findChild(QLabel, "contactEmailProblem")
    assert dialog.isVisible() and problem.isVisible() and "does not look like an e-mail" in problem.text()
    assert QSettings().value("online/allowed") is None  # nothing saved
    email.setText("  reader@example.org ")
    dialog.accept()
    assert not dialog.isVisible()
    assert str(QSettings().value("online/allowed")).lower() == "true"
    assert QSettings().value("online/email") == "reader@example.org"
    # opened again: as saved; unchecking turns look-ups off
    act(win, "preferencesAction").trigger()
    dialog = shown(qtbot, QDialog, "preferencesDialog")
    box = dialog.findChild(QCheckBox, "onlineAllowed")
    assert box.isChecked() and dialog.findChild(QLineEdit, "contactEmail").text() == "reader@example.org"
    box.setChecked(False)
    dialog.accept()
    assert str(QSettings().value("online/allowed")).lower() == "false"


def test_preferences_left_alone_do_not_count_as_an_answer(window, qtbot):
    act(window, "preferencesAction").trigger()
    shown(qtbot, QDialog, "preferencesDialog").accept()
    assert QSettings().value("online/allowed") is None  # the first look-up still asks


def test_the_menus_offer_the_online_actions(window):
    assert act(window, "addByIdentifierAction").shortcut() == QKeySequence(QKeySequence.StandardKey.New)
    for name in ("findPublishedAction", "findPublishedDerivedAction"):
        assert act(window, name) in window.actions()


# ---- Add by Identifier (Ctrl+N) ---------------------------------------------------------------
ARXIV_ID, DOI = "1605.08386", "10.1073/pnas.1414271111"


def route_records(replay):
    replay.route(ARXIV_QUERY, RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": ARXIV_ID})
    replay.route(f"/crossref/works/{DOI}", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json")


def add_by_identifier(qtbot, win, text):
    """Ctrl+N, the text typed, Add; returns the dialog."""
    win.activateWindow()  # a shortcut works in the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    dialog = shown(qtbot, QDialog, "identifierDialog")
    box = dialog.findChild(QPlainTextEdit, "identifierText")
    qtbot.keyClicks(box, text)
    dialog.findChild(QPushButton, "identifierAddButton").click()
    return dialog


def test_ctrl_n_asks_once_then_adds_a_paper_by_its_arxiv_id_and_undo_removes_it(window, qtbot, replay):
    win, lib = window, window.library
    route_records(replay)
    n, steps = len(lib), win.undo_stack.count()
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    dialog = shown(qtbot, QDialog, "identifierDialog")
    qtbot.keyClicks(dialog.findChild(QPlainTextEdit, "identifierText"), f"see https://arxiv.org/abs/{ARXIV_ID}v2 ")
    assert dialog.findChild(QLabel, "recognisedLabel").text() == f"Recognised: arXiv:{ARXIV_ID}"
    dialog.findChild(QPushButton, "identifierAddButton").click()
    answer_consent(qtbot, yes=True)  # the first online action asks
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=20_000)
    assert [r.query.get("id_list") for r in replay.requests] == [ARXIV_ID]
    assert "Papershelf/" in replay.requests[0].headers["user-agent"]
    assert len(lib) == n + 1
    (pid,) = set(lib.ids()) - {p for p in win.model.ids() if p != ""} or [lib.ids()[-1]]
    paper = lib.get(pid)
    assert paper.arxiv_id == ARXIV_ID and paper.title and not paper.title_derived
    qtbot.waitUntil(lambda: win.selected_ids() == [pid])  # the new paper, selected
    assert "Added 1 new paper" in status(win)
    assert win.undo_stack.count() == steps + 1
    act(win, "undoAction").trigger()
    assert len(lib) == n and pid not in lib
    # asked once: the next one does not ask
    dialog = add_by_identifier(qtbot, win, ARXIV_ID)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=20_000)
    assert len(lib) == n + 1


def test_a_doi_is_added_and_merged_when_the_paper_is_already_there(window, qtbot, replay):
    win, lib = window, window.library
    allow_online()
    QSettings().setValue("online/email", "reader@example.org")
    route_records(replay)
    n = len(lib)
    dialog = add_by_identifier(qtbot, win, f"https://doi.org/{DOI}")
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=20_000)
    assert len(lib) == n + 1
    (request,) = replay.requests
    assert request.path == f"/crossref/works/{DOI}" and request.query.get("mailto") == "reader@example.org"
    (pid,) = [p.id for p in lib.papers() if p.doi == DOI]
    qtbot.waitUntil(lambda: win.selected_ids() == [pid])
    steps = win.undo_stack.count()
    select(win, [win.model.id_at(0) if win.model.id_at(0) != pid else win.model.id_at(1)])
    dialog = add_by_identifier(qtbot, win, f"doi:{DOI}")  # again: the same paper, not a second one
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=20_000)
    assert len(lib) == n + 1 and "Already in the library" in status(win)
    qtbot.waitUntil(lambda: win.selected_ids() == [pid])
    assert win.undo_stack.count() == steps  # nothing changed: nothing to undo


def test_offline_says_so_and_changes_nothing(window, qtbot, tmp_path):
    from conftest import snapshot_files

    win, lib = window, window.library
    allow_online()  # every service is a closed port (conftest)
    before, steps = snapshot_files(lib.folder), win.undo_stack.count()
    dialog = add_by_identifier(qtbot, win, f"{DOI} arXiv:{ARXIV_ID}")
    problems = dialog.findChild(QLabel, "identifierProblems")
    qtbot.waitUntil(problems.isVisible, timeout=30_000)
    assert dialog.isVisible() and "Not added" in problems.text()
    assert f"doi:{DOI}" in problems.text() and f"arXiv:{ARXIV_ID}" in problems.text()
    assert "connect" in problems.text().lower()  # the Http's words: no connection
    assert snapshot_files(lib.folder) == before and win.undo_stack.count() == steps
    # the identifiers stay in the box, to try again
    assert dialog.findChild(QPlainTextEdit, "identifierText").toPlainText().splitlines() == [
        f"doi:{DOI}",
        f"arXiv:{ARXIV_ID}",
    ]
    dialog.reject()
    assert not dialog.isVisible()


def test_one_identifier_not_found_the_others_still_added(window, qtbot, replay):
    win, lib = window, window.library
    allow_online()
    route_records(replay)
    replay.route("/crossref/works/10.1234/notarealdoi", RECORDED / "crossref_works_doi_404_notarealdoi.txt", 404)
    n = len(lib)
    dialog = add_by_identifier(qtbot, win, f"10.1234/notarealdoi arXiv:{ARXIV_ID}")
    problems = dialog.findChild(QLabel, "identifierProblems")
    qtbot.waitUntil(problems.isVisible, timeout=20_000)
    assert "doi:10.1234/notarealdoi" in problems.text() and "arXiv" not in problems.text().split("notarealdoi")[1][:3]
    assert len(lib) == n + 1 and any(p.arxiv_id == ARXIV_ID for p in lib.papers())
    dialog.reject()


# ---- the review dialog, with proposals made here -----------------------------------------------
def derived_papers(lib, n):
    papers = [p for p in lib.papers() if p.title_derived][:n]
    assert len(papers) == n
    return papers


def review_run(win, proposals):
    from papershelf.gui.online_lookup import LookupResult, LookupRun

    run = LookupRun(win.menus.online, [p.paper_id for p in proposals])
    run.show_results(LookupResult(proposals))
    return run


def toggle(qtbot, dialog, paper_id, field):
    """Check or uncheck one change as a person does: its row current, Space."""
    view = dialog.findChild(QTreeView, "reviewChanges")
    item = dialog.change_rows(paper_id)[field]
    view.setFocus()
    view.setCurrentIndex(item.index())
    qtbot.keyClick(view, Qt.Key.Key_Space)


def test_review_applies_what_is_checked_as_one_step_and_keeps_the_rest(window, qtbot):
    from papershelf.core.online.lookup import AUTO_CONFIDENCE

    win, lib = window, window.library
    auto, sure, decoy, failed = derived_papers(lib, 4)
    lib.set_citekey(auto.id, "navon2023equivariant")  # pinned: never changes
    lib.edit_record(sure.id, {"year": "2019"})  # a value of the user's
    before = {p.id: lib.records([p.id])[p.id] for p in (sure, decoy, failed)}
    proposals = [
        Proposal(
            auto.id,
            "arxiv",
            0.98,
            {
                "title": (auto.title, "Equivariant Architectures for Learning in Deep Weight Spaces"),
                "author": ("", "Navon, Aviv and Shamsian, Aviv"),
                "year": ("", "2023"),
                "eprint": ("", "2301.12780"),
            },
            automatic=True,
        ),
        Proposal(
            sure.id,
            "crossref",
            max(AUTO_CONFIDENCE, 0.95),
            {
                "title": (sure.title, "A Sure Published Title"),
                "year": ("2019", "2021"),
                "venue": ("", "Journal of Tests"),
            },
        ),
        Proposal(decoy.id, "s2", 0.41, {"title": (decoy.title, "A Decoy With The Same Words")}),
        Proposal(failed.id, message="arXiv: no connection (is this computer online?)", failed=True),
    ]
    steps = win.undo_stack.count()
    run = review_run(win, proposals)
    # the automatic one is applied at once, as one step; its pinned key stays
    a = lib.get(auto.id)
    assert a.title == "Equivariant Architectures for Learning in Deep Weight Spaces" and not a.title_derived
    assert a.year == 2023 and a.arxiv_id == "2301.12780" and a.citekey == "navon2023equivariant"
    assert win.undo_stack.count() == steps + 1
    dialog = shown(qtbot, QDialog, "reviewDialog")
    assert dialog is run.review
    rows = dialog.change_rows(sure.id)
    assert rows["title"].checkState() == Qt.CheckState.Checked  # a derived title is not the user's
    assert rows["venue"].checkState() == Qt.CheckState.Checked
    assert rows["year"].checkState() == Qt.CheckState.Unchecked  # it would overwrite the user's 2019
    assert dialog.change_rows(decoy.id)["title"].checkState() == Qt.CheckState.Unchecked
    assert dialog.change_rows(auto.id) == {}  # applied already, not offered again
    texts = [dialog.model.item(r, 1).text() for r in range(dialog.model.rowCount())]
    assert any("no connection" in t for t in texts)  # the failure, in words
    toggle(qtbot, dialog, sure.id, "title")  # unchecked: the derived title stays
    assert dialog.change_rows(sure.id)["title"].checkState() == Qt.CheckState.Unchecked
    dialog.findChild(QPushButton, "reviewApplyButton").click()
    s = lib.get(sure.id)
    assert s.title == sure.title and s.title_derived and s.year == 2019 and s.venue == "Journal of Tests"
    assert lib.records([decoy.id, failed.id]) == {k: before[k] for k in (decoy.id, failed.id)}  # never applied
    assert win.undo_stack.count() == steps + 2  # the review's changes: one step
    act(win, "undoAction").trigger()
    assert lib.records([sure.id])[sure.id] == before[sure.id]
    assert lib.get(auto.id).year == 2023
    act(win, "redoAction").trigger()
    assert lib.get(sure.id).venue == "Journal of Tests"


def test_a_paper_checkbox_checks_all_its_changes(window, qtbot):
    win, lib = window, window.library
    (paper,) = derived_papers(lib, 1)
    review_run(win, [Proposal(paper.id, "openalex", 0.5, {"title": (paper.title, "T"), "year": ("", "2020")})])
    dialog = shown(qtbot, QDialog, "reviewDialog")
    assert all(i.checkState() == Qt.CheckState.Unchecked for i in dialog.change_rows(paper.id).values())
    view = dialog.findChild(QTreeView, "reviewChanges")
    view.setFocus()
    view.setCurrentIndex(dialog.model.index(0, 0))
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert dialog.checked() == {paper.id: {"title": "T", "year": "2020"}}
    dialog.findChild(QPushButton, "reviewCancelButton").click()
    assert lib.get(paper.id).title == paper.title  # Cancel changes nothing


def test_nothing_found_is_said_paper_by_paper(window, qtbot):
    win, lib = window, window.library
    a, b = derived_papers(lib, 2)
    review_run(
        win,
        [
            Proposal(a.id, message="Nothing found on arXiv, OpenAlex, Crossref or Semantic Scholar."),
            Proposal(b.id, message="Crossref: the service answered 503.", failed=True),
        ],
    )
    box = shown(qtbot, QMessageBox, "lookupReport")
    assert "Nothing found on arXiv" in box.informativeText() and "503" in box.informativeText()
    assert win.undo_stack.count() == 0
    box.accept()


def candidate(**kw) -> FoundRecord:
    return FoundRecord(service="arxiv", **kw)
