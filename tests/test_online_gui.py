"""Online look-ups in the real window: consent, Preferences, Add by Identifier (Ctrl+N), Find
Published Version with its progress, Cancel and review dialog. Every request goes to the loopback
replay server (tests/replay_server.py) serving real recorded answers; a service no test routes is
a closed port."""

from __future__ import annotations

import shutil

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
    QProgressDialog,
    QPushButton,
    QTextEdit,
    QTreeView,
)

from papershelf.core.online.records import Proposal
from replay_server import RECORDED, replay_fixture  # noqa: F401  (the `replay` fixture)

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

ARXIV_QUERY = "/arxiv/api/query"


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
    # the answer is kept either way: the buttons say what they do, the text where to change it
    assert [box.button(b).text() for b in (box.StandardButton.Yes, box.StandardButton.No)] == ["Turn On", "Keep Off"]
    assert "kept" in box.informativeText() and "Edit ▸ Preferences" in box.informativeText()
    box.button(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No).click()
    qtbot.waitUntil(lambda: not box.isVisible())


def allow_online():
    QSettings().setValue("online/allowed", True)


def stored(lib, ids):
    """The stored records of these papers, but `updated` (undo brings every field back but it)."""
    return {pid: {k: v for k, v in rec.items() if k != "updated"} for pid, rec in lib.records(ids).items()}


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


def test_cancel_while_adding_stops_and_adds_nothing(window, qtbot, replay, monkeypatch):
    from PySide6.QtWidgets import QProgressBar

    win, lib = window, window.library
    allow_online()
    route_records(replay)
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "1")  # arXiv's 3 s between requests: time to cancel
    n, steps = len(lib), win.undo_stack.count()
    dialog = add_by_identifier(qtbot, win, f"arXiv:{ARXIV_ID} arXiv:2104.12255")
    bar = dialog.findChild(QProgressBar, "identifierProgress")
    qtbot.waitUntil(lambda: bar.value() >= 1, timeout=30_000)  # the first one fetched, the second waits
    dialog.findChild(QPushButton, "identifierCancelButton").click()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=30_000)
    assert [r.query.get("id_list") for r in replay.requests] == [ARXIV_ID]  # the second was never sent
    assert len(lib) == n and win.undo_stack.count() == steps
    assert "Cancelled" in status(win)


def test_a_wait_asked_by_a_service_is_said_in_add_by_identifiers_progress(window, qtbot, replay):
    # issue 21, defect 8: a Retry-After is waited for, and the dialog says what it waits for
    from PySide6.QtWidgets import QProgressBar

    from replay_server import Reply

    win, lib = window, window.library
    allow_online()
    doi = "10.1073/pnas.1414271111"
    answer = RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json"
    replay.route(f"/crossref/works/{doi}", [Reply(b"{}", 429, {"Retry-After": "2"}), Reply(answer)])
    n = len(lib)
    dialog = add_by_identifier(qtbot, win, doi)
    bar = dialog.findChild(QProgressBar, "identifierProgress")
    qtbot.waitUntil(lambda: bar.format() == "Waiting 2 s: Crossref asked us to slow down…", timeout=30_000)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=30_000)
    assert len(lib) == n + 1


def test_add_by_identifier_says_why_a_doi_with_dot_segments_is_refused(window, qtbot, replay):
    # issue 21, defect 9: nothing can be added, and the dialog says why
    allow_online()
    dialog = add_by_identifier(qtbot, window, "10.1234/../../../etc/passwd")
    label = dialog.findChild(QLabel, "recognisedLabel")
    assert "is not a usable DOI: it holds a '.' or '..' path segment" in label.text()
    assert not dialog.findChild(QPushButton, "identifierAddButton").isEnabled()
    dialog.reject()
    assert replay.requests == []


# ---- the review dialog, with proposals made here -----------------------------------------------
def derived_papers(lib, n):
    papers = [p for p in lib.papers() if p.title_derived][:n]
    assert len(papers) == n
    return papers


def review_run(win, proposals):
    from papershelf.core.library import LookupResult
    from papershelf.gui.online_lookup import LookupRun

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
    before = {p.id: stored(lib, [p.id])[p.id] for p in (sure, decoy, failed)}
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
    texts = [dialog.model.item(r).child(c).text() for r in range(dialog.model.rowCount()) for c in range(1)]
    assert any("no connection" in t for t in texts)  # the failure, in words, under its paper
    toggle(qtbot, dialog, sure.id, "title")  # unchecked: the derived title stays
    assert dialog.change_rows(sure.id)["title"].checkState() == Qt.CheckState.Unchecked
    dialog.findChild(QPushButton, "reviewApplyButton").click()
    s = lib.get(sure.id)
    assert s.title == sure.title and s.title_derived and s.year == 2019 and s.venue == "Journal of Tests"
    assert stored(lib, [decoy.id, failed.id]) == {k: before[k] for k in (decoy.id, failed.id)}  # never applied
    assert win.undo_stack.count() == steps + 2  # the review's changes: one step
    act(win, "undoAction").trigger()
    assert stored(lib, [sure.id])[sure.id] == before[sure.id]
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


# ---- Find Published Version on the seed replay set -----------------------------------------------
def by_abstract(lib):
    """expected.json's entries of the window's listing → the paper each is about."""
    from seed_replay import EXPECTED

    out = {}
    for entry in EXPECTED:
        if entry["seed"] != "000_db2ace38735e4388.txt":
            continue
        start = " ".join(str(entry["abstract_start"]).split())
        (paper,) = [p for p in lib.papers() if " ".join(p.abstract.split()).startswith(start)]
        out[paper.id] = entry
    return out


def test_published_versions_of_derived_titles_applied_proposed_and_decoys_rejected(window, qtbot, replay):
    from seed_replay import serve_seeds

    win, lib = window, window.library
    allow_online()
    serve_seeds(replay)
    expected = by_abstract(lib)
    before = {pid: stored(lib, [pid])[pid] for pid in expected}
    act(win, "findPublishedDerivedAction").trigger()
    progress = shown(qtbot, QProgressDialog, "lookupProgress")
    assert progress.maximum() == sum(1 for p in lib.papers() if p.title_derived)
    dialog = shown(qtbot, QDialog, "reviewDialog")  # after the batch: the ones to review
    assert not progress.isVisible()
    assert win.undo_stack.count() == 1  # the sure ones: applied at once, one step
    for pid, entry in expected.items():
        paper = lib.get(pid)
        if entry["outcome"] == "auto":
            assert paper.title == entry["title"] and not paper.title_derived, entry["key"]
            if entry["doi"]:
                assert paper.doi == entry["doi"] and paper.year == entry["year"], entry["key"]
        else:  # proposed, decoys and nothing found: untouched so far
            assert stored(lib, [pid])[pid] == before[pid], entry["key"]
        rows = dialog.change_rows(pid)
        if entry["outcome"] == "proposed":
            assert rows["title"].data(Qt.ItemDataRole.UserRole + 3) == entry["title"], entry["key"]
        if entry["outcome"] in ("proposed", "decoy rejected"):  # never checked for the user
            assert all(r.checkState() == Qt.CheckState.Unchecked for r in rows.values()), entry["key"]
    proposed = [pid for pid, e in expected.items() if e["outcome"] == "proposed"]
    decoys = [pid for pid, e in expected.items() if e["outcome"] == "decoy rejected"]
    assert proposed and decoys
    toggle(qtbot, dialog, proposed[0], "title")  # the user takes one proposed title
    dialog.findChild(QPushButton, "reviewApplyButton").click()
    assert lib.get(proposed[0]).title == expected[proposed[0]]["title"]
    assert all(stored(lib, [pid])[pid] == before[pid] for pid in [*proposed[1:], *decoys])
    assert win.undo_stack.count() == 2
    act(win, "undoAction").trigger()  # the review's step
    assert stored(lib, [proposed[0]])[proposed[0]] == before[proposed[0]]
    act(win, "undoAction").trigger()  # the automatic step
    assert all(stored(lib, [pid])[pid] == before[pid] for pid in expected)


def test_cancel_stops_the_batch_and_what_was_found_is_still_applied(window, qtbot, replay, monkeypatch):
    from seed_replay import serve_seeds

    win, lib = window, window.library
    allow_online()
    serve_seeds(replay)
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "1")  # arXiv's real 3 s between requests: time to cancel
    expected = by_abstract(lib)
    act(win, "findPublishedDerivedAction").trigger()
    progress = shown(qtbot, QProgressDialog, "lookupProgress")
    qtbot.waitUntil(lambda: progress.value() >= 1, timeout=30_000)  # the first paper is done
    progress.findChild(QPushButton).click()  # Cancel
    qtbot.waitUntil(lambda: not win.menus.online.running(), timeout=30_000)
    sent = len(replay.requests)
    arxiv = replay.requests_to(ARXIV_QUERY)
    assert len(arxiv) == 1  # the second paper's search waited for its turn, and was cancelled
    assert "Cancelled after 1 paper" in status(win)
    run = win.menus.online.lookup
    assert run.result.cancelled and len(run.result.proposals) == 1
    (done,) = run.result.proposals
    # the first paper's published version was found sure enough: still applied, one step
    assert expected[done.paper_id]["outcome"] == "auto" and done.automatic and done.applied
    assert lib.get(done.paper_id).title == expected[done.paper_id]["title"]
    assert [p.id for p in lib.papers() if not p.title_derived] == [done.paper_id]
    assert win.undo_stack.count() == 1
    assert len(replay.requests) == sent  # nothing more after the batch stopped


def test_cancel_during_a_request_in_flight_closes_at_once_and_changes_nothing(window, qtbot, replay):
    win, lib = window, window.library
    allow_online()
    replay.route(ARXIV_QUERY, hang=True)  # the service takes the request and never answers
    select(win, [derived_papers(lib, 1)[0].id])
    before = stored(lib, lib.ids())
    act(win, "findPublishedAction").trigger()
    progress = shown(qtbot, QProgressDialog, "lookupProgress")
    qtbot.waitUntil(lambda: bool(replay.requests), timeout=30_000)  # the request is in flight
    progress.findChild(QPushButton).click()  # Cancel: not after the client's 20 s timeout, at once
    qtbot.waitUntil(lambda: not progress.isVisible() and not win.menus.online.running(), timeout=5_000)
    assert win.menus.online.lookup.result.cancelled and "Cancelled" in status(win)
    assert stored(lib, lib.ids()) == before and win.undo_stack.count() == 0 and len(replay.requests) == 1


def test_a_type_or_venue_over_the_users_or_from_arxiv_is_unchecked_in_the_review(window, qtbot):
    from papershelf.core.online.records import FoundRecord

    win, lib = window, window.library
    lib.import_text("@inproceedings{doe21, author = {Doe, Jane}, title = {Fast Sorting}, booktitle = {Proc. of SODA}}")
    (bib,) = [p for p in lib.papers() if p.citekey == "doe21"]
    (derived,) = derived_papers(lib, 1)
    ours = {"entrytype": ("inproceedings", "article"), "volume": ("", "7")}
    arxiv = {"title": (derived.title, "A Sure Title"), "venue": ("", "Phys. Rev. D"), "entrytype": ("", "article")}
    crossref = Proposal(bib.id, "crossref", 0.95, ours, candidate=FoundRecord("crossref", title="Fast Sorting"))
    preprint = Proposal(derived.id, "arxiv", 0.95, arxiv, candidate=FoundRecord("arxiv", title="A Sure Title"))
    review_run(win, [crossref, preprint])
    dialog = shown(qtbot, QDialog, "reviewDialog")

    def checked(pid):
        return {f for f, row in dialog.change_rows(pid).items() if row.checkState() == Qt.CheckState.Checked}

    # the type of their .bib entry, and a venue or type from an arXiv record: theirs to check
    assert checked(bib.id) == {"volume"} and checked(derived.id) == {"title"}
    dialog.findChild(QPushButton, "reviewApplyButton").click()
    assert lib.get(bib.id).entrytype == "inproceedings" and lib.get(derived.id).venue == ""


def test_find_published_version_of_the_selection_from_the_paper_menu_offline(window, qtbot):
    win, lib = window, window.library
    allow_online()  # every service is a closed port (conftest)
    ids = [p.id for p in lib.papers() if p.title_derived][:2]
    select(win, ids)
    before = stored(lib, ids)
    menu = win.paper_menu.build(win.selected_ids())
    (action,) = [a for a in menu.actions() if a.objectName() == "findPublishedAction"]
    action.trigger()
    box = shown(qtbot, QMessageBox, "lookupReport")
    words = box.informativeText()
    # one message for both papers, with their count (issue 20: said once, not once per paper)
    assert words.count("\n") == 0 and "arXiv" in words and "connect" in words.lower() and "(2 papers)" in words
    assert stored(lib, ids) == before and win.undo_stack.count() == 0
    box.accept()


def test_closing_the_window_never_waits_for_the_network(qtbot, tmp_path, settings, replay, monkeypatch):
    from conftest import SEEDS, Library
    from papershelf.gui.main_window import MainWindow

    allow_online()
    replay.route(ARXIV_QUERY, hang=True)  # a request in flight that would never end by itself
    lib = Library.open(tmp_path / "library")
    lib.import_files(SEEDS[:1])
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    before = stored(lib, lib.ids())
    act(win, "findPublishedDerivedAction").trigger()
    qtbot.waitUntil(lambda: bool(replay.requests), timeout=30_000)
    task = win.menus.online.task
    ended = task.wait
    waited = []
    monkeypatch.setattr(task, "wait", lambda timeout=None: waited.append(timeout) or ended(timeout))
    win.close()
    assert waited == []  # the GUI thread did not wait for the worker (nor for the network)
    qtbot.waitUntil(lambda: ended(0), timeout=30_000)  # the worker ends on its own, the request abandoned
    assert len(replay.requests) == 1  # nothing more was sent
    assert stored(lib, lib.ids()) == before  # nothing applied, nothing offered
    assert not [w for w in QApplication.topLevelWidgets() if w.objectName() == "reviewDialog" and w.isVisible()]
    lib.close()


def test_a_paste_of_only_identifiers_is_told_apart_from_a_listing():
    from papershelf.gui.online import only_identifiers

    sici = "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"
    assert only_identifiers("10.1073/pnas.1414271111")
    assert only_identifiers(" arXiv:1605.08386v2,\nhttps://doi.org/10.1073/pnas.1414271111; 2104.12255 ")
    assert not only_identifiers("")
    assert not only_identifiers("Deep learning 10.1073/pnas.1414271111")
    assert not only_identifiers("Title: A paper\nAbstract: arXiv:1605.08386 is cited here.")
    # a SICI DOI holds a semicolon (and <, >, :): one identifier, not two words
    assert only_identifiers(sici)
    assert only_identifiers(f"https://doi.org/{sici}, arXiv:1605.08386")
    assert not only_identifiers(f"{sici}; see also our notes")


def test_pasting_only_identifiers_opens_add_by_identifier_filled_in_and_sends_nothing(window, qtbot, replay):
    win, lib = window, window.library
    n = len(lib)
    QApplication.clipboard().setText(f"arXiv:{ARXIV_ID}\nhttps://doi.org/10.1073/pnas.1414271111\n")
    win.paper_list.setFocus()
    qtbot.keyClick(
        win.paper_list, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    dialog = shown(qtbot, QDialog, "identifierDialog")
    assert "arXiv:" + ARXIV_ID in dialog.findChild(QLabel, "recognisedLabel").text()
    assert "doi:10.1073/pnas.1414271111" in dialog.findChild(QLabel, "recognisedLabel").text()
    assert replay.requests == [] and len(lib) == n  # nothing sent, nothing imported before Add
    dialog.reject()


# ---- issue 20, defect 3: offline, the batch gives up at once; the result fits the screen ----------
def fits_the_screen(widget) -> bool:
    return widget.screen().availableGeometry().contains(widget.frameGeometry())


def test_offline_find_published_of_derived_titles_stops_at_once_and_says_it_once(window, qtbot, monkeypatch):
    win, lib = window, window.library
    allow_online()  # every service is a closed port (conftest)
    monkeypatch.setenv("PAPERSHELF_RATE_SCALE", "1")  # arXiv's real 3 s: asked paper by paper, this would take minutes
    derived = [p.id for p in lib.papers() if p.title_derived]
    assert len(derived) >= 10
    before = stored(lib, derived)
    act(win, "findPublishedDerivedAction").trigger()
    box = shown(qtbot, QMessageBox, "lookupReport")
    assert box.text() == "Stopped: none of the services could be reached."
    assert box.informativeText().splitlines() == [
        "Cannot reach arXiv, OpenAlex, Crossref or Semantic Scholar: check your internet connection; nothing was "
        f"changed. arXiv: the connection was refused. ({len(derived)} papers)"
    ]
    assert fits_the_screen(box)
    (details,) = [b for b in box.findChildren(QPushButton) if b.text().startswith("Show Details")]
    qtbot.mouseClick(details, Qt.MouseButton.LeftButton)  # the papers it is about
    qtbot.waitUntil(lambda: any(t.isVisible() for t in box.findChildren(QTextEdit)))
    assert all(lib.get(pid).title[:60] in box.detailedText() for pid in derived)
    assert fits_the_screen(box)
    assert stored(lib, derived) == before and win.undo_stack.count() == 0
    box.accept()


def test_the_review_of_many_papers_fits_the_screen(window, qtbot):
    win, lib = window, window.library
    papers = derived_papers(lib, 10)
    review_run(
        win,
        [Proposal(p.id, "crossref", 0.6, {"title": (p.title, "A Title"), "year": ("", "2020")}) for p in papers],
    )
    dialog = shown(qtbot, QDialog, "reviewDialog")
    assert fits_the_screen(dialog), (dialog.frameGeometry(), dialog.screen().availableGeometry())
    dialog.findChild(QPushButton, "reviewCancelButton").click()


def test_the_review_says_a_message_many_papers_share_once_with_a_count(window, qtbot):
    win, lib = window, window.library
    found, *lost = derived_papers(lib, 6)
    gone = "Cannot reach arXiv, OpenAlex, Crossref or Semantic Scholar: check your internet connection."
    review_run(
        win,
        [Proposal(found.id, "crossref", 0.6, {"title": (found.title, "A Title")})]
        + [Proposal(p.id, message=gone, failed=True) for p in lost],
    )
    dialog = shown(qtbot, QDialog, "reviewDialog")
    model = dialog.model
    heads = [model.item(r, 0).text() for r in range(model.rowCount())]
    assert heads[1:] == [f"{gone} (5 papers)"]  # once, the papers under it
    assert [model.item(1, 0).child(r, 0).text() for r in range(5)] == [p.title for p in lost]
    assert fits_the_screen(dialog)
    dialog.findChild(QPushButton, "reviewCancelButton").click()


def test_a_message_many_papers_share_is_said_once_with_a_count(window, qtbot):
    win, lib = window, window.library
    a, b, c = derived_papers(lib, 3)
    same = "Crossref: the service answered 503."
    review_run(
        win,
        [
            Proposal(a.id, message=same, failed=True),
            Proposal(b.id, message="Nothing found."),
            Proposal(c.id, message=same, failed=True),
        ],
    )
    box = shown(qtbot, QMessageBox, "lookupReport")
    shared, alone = box.informativeText().splitlines()
    assert shared == f"{same} (2 papers)"
    assert alone.startswith(b.title[:40]) and alone.endswith(": Nothing found.")
    assert fits_the_screen(box)
    box.accept()


FIT_PROBE = r"""
import json, sys
from pathlib import Path
from PySide6.QtCore import QDeadlineTimer, QSettings
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QPushButton, QTextEdit
from papershelf.core.library import Library
from papershelf.core.online.records import Proposal
from papershelf.gui.app import configure_application
from papershelf.gui.main_window import MainWindow
from papershelf.core.library import LookupResult
from papershelf.gui.online_lookup import LookupRun

app = QApplication([])
configure_application(app)
QSettings().setValue("online/allowed", True)
lib = Library.open(sys.argv[1])
lib.import_files([Path(p) for p in sys.argv[2:]])
win = MainWindow(lib, open_index=False)
win.show()
QTest.qWaitForWindowExposed(win)

def wait_for(kind, name):
    deadline = QDeadlineTimer(60_000)
    while not deadline.hasExpired():
        found = [w for w in app.topLevelWidgets() if isinstance(w, kind) and w.objectName() == name and w.isVisible()]
        if found:
            return found[0]
        QTest.qWait(20)
    sys.exit(f"no {name} shown")

def frame(w):
    QTest.qWaitForWindowExposed(w)
    f, room = w.frameGeometry(), w.screen().availableGeometry()
    return {"frame": [f.x(), f.y(), f.width(), f.height()], "room": [room.x(), room.y(), room.width(), room.height()],
            "fits": room.contains(f)}

out = {"platform": app.platformName()}
win.findChild(QAction, "findPublishedDerivedAction").trigger()
box = wait_for(QMessageBox, "lookupReport")
out["report"] = frame(box)
out["said"] = box.informativeText()
(details,) = [b for b in box.findChildren(QPushButton) if b.text().startswith("Show Details")]
details.click()
deadline = QDeadlineTimer(10_000)
while not any(t.isVisible() for t in box.findChildren(QTextEdit)) and not deadline.hasExpired():
    QTest.qWait(20)
out["details"] = frame(box)
box.accept()
derived = [p for p in lib.papers() if p.title_derived]
run = LookupRun(win.menus.online, [p.id for p in derived])
run.show_results(LookupResult([Proposal(p.id, "crossref", 0.6, {"title": (p.title, "A Title")}) for p in derived]))
out["review"] = frame(wait_for(QDialog, "reviewDialog"))
out["papers"] = len(derived)
print(json.dumps(out))
"""


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs Xvfb (xvfb-run)")
def test_on_a_1366x768_screen_the_offline_report_and_the_review_fit(tmp_path):
    """Under a real X server at 1366×768 (the issue's laptop), offline, on the 372 seed papers."""
    import json

    from conftest import SEEDS, run_window_probe

    folder = str(tmp_path / "library")
    res = run_window_probe(FIT_PROBE, tmp_path, folder, *map(str, SEEDS), x11=True, timeout=300)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["platform"] == "xcb" and out["papers"] == 372
    assert out["said"].splitlines() == [
        "Cannot reach arXiv, OpenAlex, Crossref or Semantic Scholar: check your internet connection; nothing was "
        "changed. arXiv: the connection was refused. (372 papers)"
    ]
    for shown_as in ("report", "details", "review"):
        assert out[shown_as]["room"][2:] == [1366, 768]
        assert out[shown_as]["fits"], (shown_as, out[shown_as])


def test_a_found_value_with_control_characters_is_applied_without_them_and_told(window, qtbot):
    # issue 21, defect 6: a service's answer holding a terminal escape is cleaned, not refused
    # (an edit the user types with one is refused; the user cannot remove them from an answer)
    from papershelf.core.limits import has_controls

    win, lib = window, window.library
    (paper,) = derived_papers(lib, 1)
    found = "Navon\x1b]0;pwned\x07, Aviv and Shamsian, Aviv"
    review_run(
        win, [Proposal(paper.id, "crossref", 0.98, {"author": ("", found), "year": ("", "2023")}, automatic=True)]
    )
    p = lib.get(paper.id)
    assert p.authors == ["Aviv Navon]0;pwned", "Aviv Shamsian"] and p.year == 2023, p.authors
    import json

    assert not has_controls(json.dumps(lib.records([paper.id]), ensure_ascii=False))
    box = shown(qtbot, QMessageBox, "errorDialog")
    assert "control characters (such as terminal escapes or NUL) were removed from author" in box.text()


# ---- issue 23: one door online, one rule for what was found ----------------------------------------
def test_a_paper_edited_while_the_look_up_runs_is_not_overwritten_and_is_offered_again(window, qtbot, replay):
    # the command line always refused such a paper; the window applied the sure answer over the edit
    import threading

    from papershelf.gui.review_dialog import PAPER_ROLE
    from seed_replay import serve_seeds

    win, lib = window, window.library
    allow_online()
    expected = by_abstract(lib)
    pid = next(pid for pid, e in expected.items() if e["outcome"] == "auto")
    asked, answer = threading.Event(), threading.Event()

    def hold(_query) -> bool:  # the first request waits until the user has edited the paper
        asked.set()
        answer.wait(20)
        return False  # not this route's request: the seed answers come next

    replay.route(ARXIV_QUERY, b"", query=hold)
    serve_seeds(replay)
    select(win, [pid])
    act(win, "findPublishedAction").trigger()
    qtbot.waitUntil(asked.is_set, timeout=10_000)
    lib.edit_record(pid, {"title": "My Own Careful Title"})  # the user's edit, while the look-up waits
    answer.set()
    dialog = shown(qtbot, QDialog, "reviewDialog")
    assert lib.get(pid).title == "My Own Careful Title"  # never overwritten
    assert win.undo_stack.count() == 0  # nothing was applied
    rows = dialog.change_rows(pid)  # offered again, against the paper as it is now
    assert rows["title"].data(Qt.ItemDataRole.UserRole + 3) == expected[pid]["title"]
    assert rows["title"].checkState() == Qt.CheckState.Unchecked  # over the user's own title
    (head,) = [
        dialog.model.item(r) for r in range(dialog.model.rowCount()) if dialog.model.item(r).data(PAPER_ROLE) == pid
    ]
    assert "edited after the look-up read it" in head.toolTip()  # why it is offered again, where it is shown
