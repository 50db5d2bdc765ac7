"""A paper's files in the real window (gui/files_panel.py): the viewer's Files list, opening a
file (Enter, double-click, Paper ▸ Open PDF), attaching through the dialog and by a drop on a
row, Undo; real PDFs made by pdflatex (tests/pdfs.py) attached through the library.

Opening goes to the system's viewer through QDesktopServices; the tests route file URLs to a
receiver of their own with Qt's documented hook, `QDesktopServices.setUrlHandler`."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, QMimeData, QObject, QPoint, QPointF, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QDragEnterEvent, QDropEvent, QKeySequence, QPalette
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from papershelf.core.library import Query
from papershelf.gui.files_panel import DetailsRole, ExistsRole, PathRole, human_size
from papershelf.gui.paper_model import COLUMNS
from pdfs import arxiv_paper, doi_paper
from test_paper_menu import select_rows

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Two real PDFs (3 pages and 2 pages), made once for the module."""
    folder = tmp_path_factory.mktemp("pdfs")
    return {"doi": doi_paper(folder), "arxiv": arxiv_paper(folder)}


class Viewer(QObject):
    """What the system's viewer was asked to open (file URLs, through Qt's URL handler)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url.toString())


@pytest.fixture
def viewer():
    receiver = Viewer()
    QDesktopServices.setUrlHandler("file", receiver, "open")
    yield receiver
    QDesktopServices.unsetUrlHandler("file")


def pick(win, row: int) -> str:
    """Select one row of the paper list; its paper id."""
    win.paper_list.setFocus()
    # the selection model's own call: the view's would read the keyboard's modifiers, which an
    # earlier test's Ctrl+Z may have left as held
    win.paper_list.selectionModel().setCurrentIndex(
        win.model.index(row, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    (pid,) = win.selected_ids()
    return pid


def rows_shown(win) -> list[tuple[str, str, bool, str]]:
    """The Files list as drawn: (text, details, there, path) per row."""
    model = win.files_panel.list.model()
    out = []
    for r in range(model.rowCount()):
        index = model.index(r, 0)
        out.append((index.data(), index.data(DetailsRole), index.data(ExistsRole), index.data(PathRole)))
    return out


def test_the_viewer_lists_name_size_pages_and_a_missing_file_muted(window, qtbot, made, tmp_path):
    win, lib = window, window.library
    pid = win.model.id_at(0)
    linked = tmp_path / "elsewhere" / "slides.pdf"
    linked.parent.mkdir()
    shutil.copy(made["arxiv"], linked)
    assert lib.attach_files(pid, [made["doi"]]).added
    assert lib.attach_files(pid, [linked], link=True, label="slides").added
    linked.unlink()  # moved away since: missing on this machine

    pick(win, 0)
    panel = win.files_panel
    qtbot.waitUntil(lambda: panel.isVisible() and panel.list.model().rowCount() == 2)
    (text1, details1, there1, path1), (text2, details2, there2, path2) = rows_shown(win)
    size = made["doi"].stat().st_size
    assert text1.startswith("doi-paper.pdf") and details1 == f"{human_size(size)} · 3 pages" and there1
    assert Path(path1).is_file() and Path(path1).is_relative_to(lib.folder / "files")
    assert text2.startswith("slides.pdf") and details2 == "missing" and not there2 and path2 == str(linked)
    missing = panel.list.model().index(1, 0)
    assert str(linked) in missing.data(Qt.ItemDataRole.ToolTipRole)
    muted = QPalette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).color()
    assert missing.data(Qt.ItemDataRole.ForegroundRole).color() == muted
    assert panel.heading.text() == "F&iles (2) · 1 missing"  # Alt+I (Alt+F is the File menu)
    # a file attached by another part of the program (the command line, another device): the list follows
    notes = tmp_path / "supplement.txt"
    notes.write_text("tables", encoding="utf-8")
    lib.attach_files(pid, [notes], label="supplement")
    qtbot.waitUntil(lambda: panel.list.model().rowCount() == 3)
    assert rows_shown(win)[2][1] == "6 bytes · supplement"

    # another paper without files: a line says how to attach one; several selected: no panel
    pick(win, 1)
    qtbot.waitUntil(lambda: panel.hint.isVisible())
    assert "Attach Files" in panel.hint.text() and not panel.list.isVisible()
    select_rows(win, [0, 1])
    qtbot.waitUntil(lambda: not panel.isVisible())


def test_enter_and_double_click_open_the_file_and_record_when(window, qtbot, made, viewer):
    win, lib = window, window.library
    pid = win.model.id_at(2)
    lib.attach_files(pid, [made["arxiv"], made["doi"]])
    assert lib.get(pid).opened_at == ""
    pick(win, 2)
    files = win.files_panel.list
    qtbot.waitUntil(lambda: files.isVisible() and files.model().rowCount() == 2)
    second = files.model().index(1, 0).data(PathRole)

    files.setFocus()
    files.setCurrentIndex(files.model().index(1, 0))
    qtbot.keyClick(files, Qt.Key.Key_Return)
    assert viewer.urls == [QUrl.fromLocalFile(second).toString()]
    assert lib.get(pid).opened_at  # recorded
    qtbot.waitUntil(lambda: "Opened" in win.files_panel.heading.text())

    first = files.model().index(0, 0)
    spot = files.visualRect(first).center()
    qtbot.mouseClick(files.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # a double click: press, release,
    qtbot.mouseDClick(files.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # then the second press
    assert viewer.urls[1:] == [QUrl.fromLocalFile(first.data(PathRole)).toString()]  # once, not twice
    # the list's Opened column (hidden at first) and its sort: the paper opened comes first
    assert win.model.index(win.model.row_of(pid), COLUMNS.index("opened")).data()
    assert lib.search(Query(sort="opened", descending=True)).ids[0] == pid


def test_ctrl_shift_o_opens_the_first_pdf_and_a_missing_one_is_said_in_the_status_bar(
    window, qtbot, made, viewer, tmp_path
):
    win, lib = window, window.library
    action = win.findChild(QAction, "openPdfAction")
    assert action.shortcut() == QKeySequence("Ctrl+Shift+O")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes on it", encoding="utf-8")
    pid = win.model.id_at(3)
    lib.attach_files(pid, [notes, made["doi"]])  # a supplement first, the PDF second
    pick(win, 3)
    win.paper_list.setFocus()
    qtbot.keyClick(win.paper_list, Qt.Key.Key_O, CTRL_SHIFT)
    [(_, _, _, pdf_path)] = [r for r in rows_shown(win) if r[0].startswith("doi-paper.pdf")]
    assert viewer.urls == [QUrl.fromLocalFile(pdf_path).toString()]

    # a paper whose only file is missing: the status bar says which and where; no dialog, no viewer
    gone = tmp_path / "gone.pdf"
    shutil.copy(made["arxiv"], gone)
    other = win.model.id_at(4)
    lib.attach_files(other, [gone], link=True)
    gone.unlink()
    pick(win, 4)
    qtbot.keyClick(win.paper_list, Qt.Key.Key_O, CTRL_SHIFT)
    message = win.statusBar().currentMessage()
    assert "gone.pdf" in message and "missing" in message and str(gone) in message
    assert len(viewer.urls) == 1 and lib.get(other).opened_at == ""
    # (a box closed by an earlier test stays a hidden top-level widget: only a shown one counts)
    assert win.error_box is None
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]

    # a paper with no files: said how to attach one
    pick(win, 5)
    action.trigger()
    assert "has no files" in win.statusBar().currentMessage()


def test_attach_files_through_the_dialog_then_undo_and_redo(window, qtbot, made, monkeypatch):
    win, lib = window, window.library
    pid = pick(win, 1)
    asked = []

    def choose(parent, caption, folder, filters):
        asked.append((caption, filters))
        return [str(made["doi"]), str(made["arxiv"])], filters.split(";;")[0]

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", choose)
    with qtbot.waitSignal(win.files.attached, timeout=30_000) as blocker:
        win.findChild(QAction, "attachFilesAction").trigger()
    [(caption, filters)] = asked
    assert caption.startswith("Attach files to ‘") and filters.split(";;")[0] == "PDF files (*.pdf)"
    assert len(blocker.args[0].added) == 2
    files = lib.get(pid).files
    assert [Path(f["path"]).name for f in files] == ["doi-paper.pdf", "arxiv-paper.pdf"]
    assert all(
        (lib.folder / f["path"]).read_bytes() == made[k].read_bytes()
        for f, k in zip(files, ("doi", "arxiv"), strict=True)
    )
    message = win.statusBar().currentMessage()
    assert message.startswith("Attached 2 files to ‘") and message.endswith("— Ctrl+Z undoes.")
    qtbot.waitUntil(lambda: win.files_panel.list.model().rowCount() == 2)

    # the same files again: nothing added twice, and said so
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        win.findChild(QAction, "attachFilesAction").trigger()
    assert len(lib.get(pid).files) == 2 and "already" in win.statusBar().currentMessage()

    win.findChild(QAction, "undoAction").trigger()
    assert lib.get(pid).files == []
    # the library's own label, the one Get PDF's step has too
    assert win.statusBar().currentMessage().startswith("Undid: Attach 2 files to '")
    qtbot.waitUntil(lambda: win.files_panel.hint.isVisible())
    win.findChild(QAction, "redoAction").trigger()
    assert len(lib.get(pid).files) == 2


def test_a_file_that_cannot_be_attached_is_named_in_words(window, qtbot, monkeypatch, tmp_path):
    win, lib = window, window.library
    pid = pick(win, 0)
    nowhere = tmp_path / "not-here.pdf"
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: ([str(nowhere)], ""))
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        win.findChild(QAction, "attachFilesAction").trigger()
    box = win.error_box
    assert box is not None and box.windowTitle() == "No file was attached"
    assert box.text() == f"{nowhere}: no such file"
    assert lib.get(pid).files == []
    box.close()


def drop_on_row(qtbot, win, row: int, files: list[Path]) -> None:
    """Drag local files over a row of the paper list and drop them there, as the viewport gets it."""
    view = win.paper_list
    spot = view.visualRect(win.model.index(row, 0)).center()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(f)) for f in files])
    with warnings.catch_warnings():  # PySide flags the only constructor Qt 6 has
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(spot), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    QApplication.sendEvent(view.viewport(), enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(spot), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(view.viewport(), drop)
    assert drop.isAccepted()


def test_a_pdf_dropped_on_a_row_attaches_to_that_paper_and_undo_takes_it_back(window, qtbot, made):
    win, lib = window, window.library
    pick(win, 0)  # the selection is elsewhere: the drop goes to the row it lands on
    target = win.model.id_at(3)
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        drop_on_row(qtbot, win, 3, [made["doi"]])
    assert [Path(f["path"]).name for f in lib.get(target).files] == ["doi-paper.pdf"]
    assert [p.id for p in lib.papers() if p.files] == [target]
    assert len(lib) == 20  # attached, not imported as a paper
    assert win.statusBar().currentMessage().startswith("Attached 1 file to ‘")
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert lib.get(target).files == []


def test_every_window_shortcut_is_bound_once(window):
    seen: dict[str, str] = {}
    for action in window.findChildren(QAction):
        for seq in action.shortcuts():
            key = seq.toString(QKeySequence.SequenceFormat.PortableText)
            assert key not in seen, f"{key} is both {seen[key]} and {action.objectName()}"
            seen[key] = action.objectName()
    assert seen["Ctrl+Shift+O"] == "openPdfAction"


def test_sizes_read_as_people_read_them():
    assert [human_size(n) for n in (0, 1, 812, 1000, 14_321, 1_234_567, 45_300_000, 230_000_000, 3_400_000_000)] == [
        "0 bytes",
        "1 byte",
        "812 bytes",
        "1.0 KB",
        "14 KB",
        "1.2 MB",
        "45 MB",
        "230 MB",
        "3.4 GB",
    ]


def test_a_large_file_attaches_on_a_worker_while_the_window_goes_on(window, qtbot, made, tmp_path):
    """A big PDF is hashed and copied off the GUI thread: the window's event loop runs meanwhile,
    and edits wait for it as for an import."""
    win, lib = window, window.library
    big = tmp_path / "big.pdf"
    with open(big, "wb") as f:
        f.write(made["doi"].read_bytes())
        f.write(b"%" + b"\0" * (96 << 20) + b"\n")  # 96 MB of padding after the PDF's end
    pid = pick(win, 2)
    ticks = []
    from PySide6.QtCore import QTimer

    timer = QTimer(interval=5)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    with qtbot.waitSignal(win.files.attached, timeout=60_000):
        win.files.attach(pid, [big])
        assert win.transfers.running() and lib.get(pid).files == []  # on its way, not done in the call
        win.findChild(QAction, "status4Action").trigger()  # Mark As Read waits, as during an import
        assert win.statusBar().currentMessage() == "Wait for the files to be attached."
    timer.stop()
    assert ticks  # the event loop ran while the file was copied
    assert lib.get(pid).files[0]["size"] == big.stat().st_size
    assert (lib.folder / lib.get(pid).files[0]["path"]).stat().st_size == big.stat().st_size


def test_reading_statistics_count_the_papers_opened_this_week(window, qtbot, made, viewer):
    from test_stats import drawn, open_stats

    win, lib = window, window.library
    dialog = open_stats(qtbot, win)
    assert dialog.opened_chart.showing_words() and "No paper's file opened" in dialog.opened_chart.empty.text()
    for row in (0, 1):
        lib.attach_files(win.model.id_at(row), [made["doi"]])
        pick(win, row)
        win.findChild(QAction, "openPdfAction").trigger()
    assert len(viewer.urls) == 2
    qtbot.waitUntil(lambda: not dialog.opened_chart.showing_words(), timeout=10_000)
    weeks = [n for _, n in dialog.opened_chart.bars()]
    assert len(weeks) == 12 and weeks[-1] == 2 and sum(weeks) == 2  # this week's bar
    assert drawn(dialog.opened_chart) == weeks
    assert dialog.opened_chart.caption.text().endswith(f"2 of {len(lib)} papers ever opened.")
    dialog.close()


def test_a_folder_of_pdfs_dropped_on_the_window_becomes_papers_and_one_undo_takes_them_back(
    window, qtbot, made, tmp_path
):
    """PDFs dropped outside a row are imported as papers (Library.import_pdfs), the file attached,
    named by the PDF's own title; a non-PDF beside them still goes through the usual import."""
    win, lib = window, window.library
    folder = tmp_path / "downloads"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(made["arxiv"], folder / "sub" / "sparse.pdf")
    shutil.copy(made["doi"], folder / "priors.pdf")
    (folder / "notes.pdf").write_text("<html>not a pdf</html>", "utf-8")
    before = len(lib)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    with warnings.catch_warnings():  # PySide flags the only constructor Qt 6 has
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
    QApplication.sendEvent(win, enter)
    assert enter.isAccepted()
    with qtbot.waitSignal(win.importFinished, timeout=60_000) as blocker:
        drop = QDropEvent(
            QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
        )
        QApplication.sendEvent(win, drop)
    assert sum(r.added for r in blocker.args[0]) == 2
    assert len(lib) == before + 2
    titles = {p.title: [Path(f["path"]).name for f in p.files] for p in lib.papers() if p.files}
    assert titles == {
        "Priors for Diffusion in Sparse Graphs": ["priors.pdf"],
        "Scaling Sparse Attention to Long Documents": ["sparse.pdf"],
    }
    report = win.findChild(QMessageBox, "importReport")
    assert report is not None and "notes.pdf" in report.detailedText()  # not a PDF: named, not imported
    report.close()
    assert win.undo_stack.undoText().startswith("Import of ")
    win.undo_stack.undo()
    assert len(lib) == before and not any(p.files for p in lib.papers())


# ---- the review's fixes (issue 24): drops on a row, keys, read-only, busy, unreadable PDFs, labels ----


def test_a_folder_dropped_on_a_row_imports_its_pdfs_as_papers(window, qtbot, made, tmp_path):
    win, lib = window, window.library
    folder = tmp_path / "fifty"
    folder.mkdir()
    shutil.copy(made["doi"], folder / "priors.pdf")
    shutil.copy(made["arxiv"], folder / "sparse.pdf")
    before = len(lib)
    target = win.model.id_at(2)
    with qtbot.waitSignal(win.importFinished, timeout=60_000) as blocker:
        drop_on_row(qtbot, win, 2, [folder])
        assert win.statusBar().currentMessage() == "Drop to import (PDFs become papers)"  # said while dragged
    assert sum(r.added for r in blocker.args[0]) == 2 and len(lib) == before + 2
    assert lib.get(target).files == []  # nothing attached to the row's paper
    assert "is not a file" not in win.statusBar().currentMessage()


def drop_box(qtbot, win) -> QMessageBox:
    qtbot.waitUntil(
        lambda: (
            win.files.drop_box is not None
            and win.files.drop_box.isVisible()
            and win.findChild(QMessageBox, "dropAttachOrImport") is win.files.drop_box
        )  # an answered one is gone
    )
    return win.findChild(QMessageBox, "dropAttachOrImport")


def test_several_pdfs_dropped_on_a_row_ask_whether_to_attach_or_import(window, qtbot, made):
    from PySide6.QtWidgets import QPushButton

    win, lib = window, window.library
    target = win.model.id_at(3)
    title = lib.get(target).title
    two = [made["doi"], made["arxiv"]]
    drop_on_row(qtbot, win, 3, two)
    assert "you will be asked" in win.statusBar().currentMessage()
    box = drop_box(qtbot, win)
    assert box.text().startswith("Attach 2 files to ‘")
    assert box.findChild(QPushButton, "dropAttach").text().startswith("Attach to ‘")
    box.findChild(QPushButton, "dropCancel").click()
    qtbot.waitUntil(lambda: not box.isVisible())
    assert lib.get(target).files == [] and len(lib) == 20
    assert win.statusBar().currentMessage() == "Nothing was attached or imported."

    # Import as Papers: each PDF a paper of its own, the row's paper untouched
    drop_on_row(qtbot, win, 3, two)
    with qtbot.waitSignal(win.importFinished, timeout=60_000):
        drop_box(qtbot, win).findChild(QPushButton, "dropImport").click()
    assert len(lib) == 22 and lib.get(target).files == []

    # Attach to the paper: both on it, one undo step
    target = next(p.id for p in lib.papers() if p.title == title)
    row = next(r for r in range(win.model.rowCount()) if win.model.id_at(r) == target)
    drop_on_row(qtbot, win, row, two)
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        drop_box(qtbot, win).findChild(QPushButton, "dropAttach").click()
    assert len(lib.get(target).files) == 2 and len(lib) == 22
    assert win.undo_stack.undoText().startswith("Attach 2 files to '")


def test_window_mnemonics_are_each_used_once_and_files_is_alt_i(window, qtbot, made):
    from PySide6.QtWidgets import QAbstractButton, QLabel

    win = window
    win.library.attach_files(win.model.id_at(0), [made["doi"]])
    pick(win, 0)
    qtbot.waitUntil(lambda: win.files_panel.list.isVisible())

    def letter(text: str) -> str | None:
        at = text.replace("&&", "").find("&")
        return text.replace("&&", "")[at + 1].lower() if at >= 0 else None

    texts = [a.text() for a in win.menuBar().actions()]
    texts += [w.text() for w in win.findChildren(QLabel) if w.buddy() is not None and w.isVisible()]
    texts += [w.text() for w in win.findChildren(QAbstractButton) if w.isVisible()]
    letters = [x for x in map(letter, texts) if x]
    assert len(letters) == len(set(letters)), texts
    assert letter(win.files_panel.heading.text()) == "i" and "f" in letters  # the File menu keeps Alt+F


def test_tab_leaves_the_paper_list_for_the_viewer_without_changing_the_paper(window, qtbot, made):
    win = window
    win.activateWindow()
    win.library.attach_files(win.model.id_at(0), [made["doi"]])
    pid = pick(win, 0)
    qtbot.waitUntil(lambda: win.files_panel.list.isVisible() and win.paper_list.hasFocus())
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Tab)
    focus = QApplication.focusWidget()
    assert focus is not None and focus is not win.paper_list
    assert win.selected_ids() == [pid]  # Tab did not move to another paper
    column = win.files_panel.parentWidget()
    assert column.isAncestorOf(focus)  # the viewer's column: the abstract, then Files
    for _ in range(6):  # on through the viewer: the Files list is reached
        if focus is win.files_panel.list:
            break
        qtbot.keyClick(focus, Qt.Key.Key_Tab)
        focus = QApplication.focusWidget()
    assert focus is win.files_panel.list and win.selected_ids() == [pid]


@pytest.fixture
def readonly_window(qtbot, tmp_path, settings, made):
    from conftest import SEEDS
    from papershelf.core.library import Library
    from papershelf.gui.main_window import MainWindow

    folder = tmp_path / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS[:1])
        lib.attach_files(lib.ids()[0], [made["doi"]])
    lib = Library.open(folder, readonly=True)
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    lib.close()


def test_a_read_only_library_refuses_attach_and_get_pdf_first_and_opening_says_when_is_not_kept(
    readonly_window, qtbot, monkeypatch, viewer
):
    win, lib = readonly_window, readonly_window.library
    pid = next(p.id for p in lib.papers() if p.files)
    row = next(r for r in range(win.model.rowCount()) if win.model.id_at(r) == pid)
    pick(win, row)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: asked.append(a) or ([], ""))
    win.findChild(QAction, "attachFilesAction").trigger()
    assert asked == []  # no dialog whose choice would be thrown away
    assert win.statusBar().currentMessage() == "The library was opened read-only: no file can be attached."
    win.findChild(QAction, "getPdfAction").trigger()
    assert win.statusBar().currentMessage() == "The library was opened read-only: no PDF can be attached."
    assert not win.menus.online.running()
    win.findChild(QAction, "openPdfAction").trigger()
    assert len(viewer.urls) == 1
    assert win.statusBar().currentMessage() == (
        "Opened ‘doi-paper.pdf’. The library was opened read-only: when was not recorded."
    )
    assert lib.get(pid).opened_at == ""


def test_attach_files_while_an_import_or_an_attach_runs_is_refused_before_the_dialog(
    window, qtbot, made, monkeypatch, tmp_path
):
    win = window
    pid = pick(win, 0)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a: asked.append(a) or ([], ""))
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(made["doi"], folder / "a.pdf")
    with qtbot.waitSignal(win.importFinished, timeout=60_000):
        win.transfers.import_files([folder])
        win.findChild(QAction, "attachFilesAction").trigger()
        assert asked == [] and win.statusBar().currentMessage() == "Wait for the import to finish."
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        win.files.attach(pid, [made["arxiv"]])
        win.findChild(QAction, "attachFilesAction").trigger()
        assert asked == [] and win.statusBar().currentMessage() == "Wait for the files to be attached."
        win.findChild(QAction, "deleteAction").trigger()
        assert win.statusBar().currentMessage() == "Wait for the files to be attached."


def test_an_encrypted_pdf_attached_says_so_in_its_row_and_tooltip(window, qtbot, made, tmp_path):
    from pdfs import encrypted_pdf

    win, lib = window, window.library
    locked = encrypted_pdf(tmp_path)
    pid = pick(win, 0)
    with qtbot.waitSignal(win.files.attached, timeout=30_000):
        win.files.attach(pid, [made["doi"], locked])
    message = win.statusBar().currentMessage()
    assert message.startswith("Attached 2 files to ‘") and "1 PDF cannot be read: see its tooltip in Files" in message
    assert len(message) < 130 and "password" not in message  # the reason is in the row, whole
    qtbot.waitUntil(lambda: win.files_panel.list.model().rowCount() == 2)
    (_, ok, _, _), (text, details, _, _) = rows_shown(win)
    assert "encrypted" not in ok and text.startswith("encrypted.pdf") and details.endswith("encrypted")
    tip = win.files_panel.list.model().index(1, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "is encrypted: it needs a password to open" in tip

    # another session (nothing remembered): the full-text reader's cache tells, the reader is not run here
    win.files_panel.problems.clear()
    lib.extract_fulltext()
    win.files_panel.reload()
    assert rows_shown(win)[1][1].endswith("encrypted")
    assert "password" in win.files_panel.list.model().index(1, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_undoing_a_folder_of_many_pdfs_has_a_short_edit_menu_label(window, qtbot, made, tmp_path):
    from papershelf.gui.last_import import LABEL_CHARS, import_label

    win = window
    folder = tmp_path / "downloads"
    folder.mkdir()
    for n in range(6):  # the same paper six times (different bytes after the PDF's end): one paper
        (folder / f"a-rather-long-file-name-{n:02d}.pdf").write_bytes(made["doi"].read_bytes() + b"%" * (n + 1))
    with qtbot.waitSignal(win.importFinished, timeout=60_000):
        win.transfers.import_files([folder])
    undo = win.findChild(QAction, "undoAction")
    text = win.undo_stack.undoText()
    assert text.startswith("Import of a-rather-long-file-name-0") and " more (1 paper)" in text
    assert len(text) <= LABEL_CHARS and undo.text() == "&Undo " + text
    names = [f"p{n:02d}.pdf" for n in range(50)]
    assert import_label(names[:2], 2, 0) == "Import of p00.pdf, p01.pdf (2 papers)"
    assert import_label(names, 50, 0) == "Import of p00.pdf, p01.pdf, p02.pdf and 47 more (50 papers)"
    assert all(len(import_label(names[:k], k, 0)) <= LABEL_CHARS for k in range(1, 51))
    assert len(import_label(["x" * 300], 1, 0)) <= LABEL_CHARS
