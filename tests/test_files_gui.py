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
    assert win.error_box is None and not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]

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
