"""A paper's files in the window: the viewer's Files list, opening a file, attaching files.

The panel sits over the abstract and lists the files of the paper the viewer shows
(`Library.paper_files`): name, size, page count and label; a file not on this machine
(a linked file moved away, a copy a sync tool has not delivered yet) is drawn muted as
"missing", with where it was expected in its tooltip. Opening one that is missing says so in
the status bar, never in a dialog. Enter or a double-click opens a file in the system's
viewer (`QDesktopServices`), as Paper ▸ Open PDF (Ctrl+Shift+O) opens the current paper's
first PDF; opening records when (`Library.mark_opened`, the reading statistics read it).

Attaching (Paper ▸ Attach Files…, or one file dropped on a paper's row) copies the files into
the library folder on a worker (`Library.prepare_attachments`): a 200 MB PDF is hashed and
copied without freezing the window; the record is written on the GUI thread
(`record_attachments`), so the undo step pushed is the attach's own, whatever else landed
meanwhile. It runs in the import's slot (`ImportExport.run_like_import`), so edits and Undo wait
for it as they wait for an import; it is refused, before any dialog, on a read-only library and
while Get PDF or an import runs. Two or more files dropped on a row ask whether to attach them to
that paper or import them as papers; a folder dropped on a row imports (its PDFs become papers).

A PDF whose pages could not be read (encrypted, damaged) says "encrypted" or "unreadable" in its
row, and why in the row's tooltip: the reason the attach found (kept for this session), else the
one the full-text reader left in this machine's text cache (`Library.pdf_problem`); the PDF reader
never runs on the GUI thread.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QAbstractListModel,
    QCoreApplication,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSettings,
    Qt,
    QUrl,
    Signal,
)
from PySide6.QtGui import QDesktopServices, QDropEvent, QKeySequence, QPalette
from PySide6.QtWidgets import QFileDialog, QLabel, QListView, QMessageBox, QVBoxLayout, QWidget

from ..core.attachments import Attachment
from ..core.errors import PapershelfError
from ..core.library import Attached, Change, Library
from ..core.paper import local_date
from ..core.render import plain_text
from .commands import DoneStep
from .import_export import dropped_files
from .tasks import Task

if TYPE_CHECKING:
    from PySide6.QtGui import QAction, QUndoStack

    from .import_export import ImportExport
    from .list_pane import ListPane
    from .status_line import StatusLine

PathRole = Qt.ItemDataRole.UserRole + 1  # where the file is on this machine (str)
ExistsRole = Qt.ItemDataRole.UserRole + 2  # whether it is there (bool)
DetailsRole = Qt.ItemDataRole.UserRole + 3  # "1.2 MB · 12 pages · slides" or "missing"
SHOWN_ROWS = 4  # the list grows to this many files, then scrolls
IMPORTED_SUFFIXES = (".txt", ".md", ".bib", ".ris")  # what a drop on a row still imports (listings)
ATTACH_FOLDER = "attach/folder"  # where the attach dialog opened last (QSettings)
FileRow = tuple[Attachment, Path, bool]
AnyIndex = QModelIndex | QPersistentModelIndex


def tr(text: str) -> str:
    """`text` in the user's language."""
    return QCoreApplication.translate("FilesPanel", text)


def human_size(n: int) -> str:
    """A file's size as people read it: "812 bytes", "14 KB", "1.2 MB", "230 MB" (decimal units,
    as file managers show them)."""
    if n < 1000:
        return tr("1 byte") if n == 1 else tr("%s bytes") % n
    units = {"KB": tr("%s KB"), "MB": tr("%s MB"), "GB": tr("%s GB"), "TB": tr("%s TB")}
    value = float(n)
    for unit, words in units.items():
        value /= 1000
        if value < 999.5 or unit == "TB":
            return words % (f"{value:.1f}" if value < 9.95 else f"{value:.0f}")
    return tr("%s bytes") % n  # not reached


def pages_text(n: int) -> str:
    """ "1 page", "12 pages"; "" when not known."""
    return "" if n <= 0 else (tr("1 page") if n == 1 else tr("%s pages") % f"{n:,}")


def n_files(n: int) -> str:
    """ "1 file", "3 files"."""
    return tr("1 file") if n == 1 else tr("%s files") % f"{n:,}"


def short_title(title: str, width: int = 40) -> str:
    """A paper's title as the status line quotes it, cut with "…"."""
    text = plain_text(title)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def first_pdf(rows: list[FileRow]) -> FileRow | None:
    """The file Open PDF opens: the first whose name ends .pdf, else the first file."""
    return next((r for r in rows if r[0].is_pdf()), rows[0] if rows else None)


def short_date(stamp: str) -> str:
    """A stored time's local day: "3 Dec" this year, "3 Dec 2025" another; "" for none."""
    day = local_date(stamp)
    if day is None:
        return ""
    return f"{day.day} {day.strftime('%b')}" + ("" if day.year == _dt.date.today().year else f" {day.year}")


class FilesModel(QAbstractListModel):
    """The files of one paper: (Attachment, where it is here, whether it is there), as
    `Library.paper_files` gives them."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[FileRow] = []
        self.problems: dict[str, str] = {}  # sha256 -> why the PDF cannot be read

    def set_rows(self, rows: list[FileRow], problems: dict[str, str] | None = None) -> None:
        """Show these files (`problems`: why a PDF among them cannot be read, by content)."""
        self.beginResetModel()
        self.rows = list(rows)
        self.problems = dict(problems or {})
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """How many files."""
        return 0 if parent.isValid() else len(self.rows)

    def details(self, item: Attachment, exists: bool) -> str:
        """What the row says after the name."""
        if not exists:
            return tr("missing")
        problem = self.problems.get(item.sha256, "")
        bad = (tr("encrypted") if "encrypted" in problem.lower() else tr("unreadable")) if problem else ""
        return " · ".join(x for x in (human_size(item.size), pages_text(item.pages), bad, item.label) if x)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The row's text, tooltip, muted colour for a missing file, icon, or the custom roles."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        item, where, exists = self.rows[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{item.name}  —  {self.details(item, exists)}"
        if role == DetailsRole:
            return self.details(item, exists)
        if role == PathRole:
            return str(where)
        if role == ExistsRole:
            return exists
        if role == Qt.ItemDataRole.ToolTipRole:
            if not exists:
                return tr("Missing on this machine: expected at %s") % where
            tip = f"{where}" + ("\n" + tr("(linked: left where it was)") if item.linked else "")
            problem = self.problems.get(item.sha256, "")
            return tip + ("\n" + tr("The PDF cannot be read: %s") % problem if problem else "")
        if role == Qt.ItemDataRole.ForegroundRole and not exists:
            return QPalette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        return None


class FilesPanel(QWidget):
    """The viewer's "Files" section: the files of the paper shown (`show_paper`), or a line
    saying how to attach one; `openRequested(row)` when Enter or a double-click opens one."""

    openRequested = Signal(int)

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.setObjectName("filesPanel")
        self.paper_id = ""
        self.problems: dict[str, str] = {}  # why a PDF attached in this session cannot be read, by sha256
        self.model = FilesModel(self)
        self.heading = QLabel()
        self.heading.setObjectName("filesHeading")
        self.list = QListView()
        self.list.setObjectName("filesList")
        self.list.setAccessibleName(self.tr("Files"))
        self.list.setModel(self.model)
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # the name's start and its details stay
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Enter, or a double click (a single one where the desktop opens items so)
        self.list.activated.connect(lambda index: self.openRequested.emit(index.row()))
        self.heading.setBuddy(self.list)
        self.hint = QLabel()
        self.hint.setObjectName("filesHint")
        self.hint.setWordWrap(True)
        self.hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 2, 4, 2)
        box.setSpacing(2)
        box.addWidget(self.heading)
        box.addWidget(self.list)
        box.addWidget(self.hint)
        self.show_paper("")

    def show_paper(self, paper_id: str) -> None:
        """Show the files of this paper ("": none or several selected: the panel hides)."""
        self.paper_id = paper_id
        if not paper_id or paper_id not in self.library:
            self.paper_id = ""
            self.model.set_rows([])
            self.hide()
            return
        self.reload()
        self.show()

    def reload(self) -> None:
        """Read the shown paper's files again (and whether each is on this machine)."""
        pid = self.paper_id
        if not pid or pid not in self.library:
            return
        rows = self.library.paper_files(pid)
        self.model.set_rows(rows, self.unreadable(rows))
        day = short_date(self.library.get(pid).opened_at)
        opened = self.tr("Opened %s") % day if day else ""
        missing = sum(1 for _, _, exists in rows if not exists)
        if rows:
            head = self.tr("F&iles (%d)") % len(rows)  # Alt+I: Alt+F is the File menu
            if missing:
                head += " · " + self.tr("%d missing") % missing
            self.heading.setText(head + (f" · {opened}" if opened else ""))
        else:
            self.heading.setText(self.tr("F&iles") + (f" · {opened}" if opened else ""))
        self.list.setVisible(bool(rows))
        self.hint.setVisible(not rows)
        self.hint.setText(self.tr("No files. Drop a PDF on the paper, or Paper ▸ Attach Files…"))
        if rows:
            height = self.list.sizeHintForRow(0) * min(len(rows), SHOWN_ROWS) + 2 * self.list.frameWidth() + 2
            self.list.setFixedHeight(height)

    def unreadable(self, rows: list[FileRow]) -> dict[str, str]:
        """Why each PDF among `rows` whose pages could not be counted cannot be read: what its
        attach found, else what the full-text reader cached (a small file: such an entry holds no
        text). The reader itself never runs here."""
        out: dict[str, str] = {}
        for item, _where, exists in rows:
            if exists and item.is_pdf() and item.pages <= 0:
                problem = self.problems.get(item.sha256) or self.library.pdf_problem(item.sha256)
                if problem:
                    out[item.sha256] = problem
        return out

    def changed(self, change: Change) -> None:
        """A library change: read the files again if the shown paper's files (or when it was
        opened) changed."""
        if (
            self.paper_id
            and change.kind == "papers-changed"
            and self.paper_id in change.ids
            and change.fields & {"files", "opened_at"}
        ):
            self.reload()


class PaperFiles(QObject):
    """Opening and attaching a paper's files from the window: Paper ▸ Open PDF, Paper ▸ Attach
    Files…, Enter on the Files list, files dropped on a row of the paper list (`pane`). The work
    that changes the library runs through `transfers` (an import's slot: edits wait);
    `undo_stack` gets the attach as a step whose undo is the library's."""

    attached = Signal(object)  # the Attached report of an attach that ran (tests wait on it)

    def __init__(
        self,
        library: Library,
        panel: FilesPanel,
        pane: ListPane,
        transfers: ImportExport,
        status: StatusLine,
        undo_stack: QUndoStack,
        undo_action: Callable[[], QAction | None],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.library, self.panel, self.pane, self.transfers = library, panel, pane, transfers
        self.status, self.undo_stack, self.undo_action = status, undo_stack, undo_action
        self.dialog_parent = parent
        self.opened_urls: list[str] = []  # what was handed to the system's viewer, in order
        self._pending_opened: list[str] = []  # opened while an import ran: recorded after it
        self._drop_row = -1
        self.drop_box: QMessageBox | None = None  # the last "attach or import?" of a drop on a row
        panel.openRequested.connect(self.open_row)
        transfers.finished.connect(self._flush_opened)
        viewport = pane.view.viewport()
        viewport.setAcceptDrops(True)
        viewport.installEventFilter(self)

    # ---- which paper ---------------------------------------------------------------------
    def current_paper(self) -> str:
        """The paper Open PDF and Attach act on: the one selected, else the current row of several."""
        ids = self.pane.selected_ids()
        if len(ids) == 1:
            return ids[0]
        if ids:
            current = self.pane.model.id_at(self.pane.view.currentIndex().row())
            return current if current in ids else ids[0]
        return ""

    # ---- opening -------------------------------------------------------------------------
    def open_pdf(self) -> None:
        """Paper ▸ Open PDF: the current paper's first PDF (else its first file)."""
        pid = self.current_paper()
        if not pid:
            self.status.say(self.tr("Select a paper first."), 3000)
            return
        rows = self.library.paper_files(pid)
        row = first_pdf(rows)
        if row is None:
            self.status.say(
                self.tr("‘%s’ has no files. Drop a PDF on it, or Paper ▸ Attach Files…")
                % short_title(self.library.get(pid).title),
                6000,
            )
            return
        self.open_file(pid, *row)

    def open_row(self, row: int) -> None:
        """Enter or a double-click on the Files list: open that file."""
        pid = self.panel.paper_id
        rows = self.panel.model.rows
        if pid and 0 <= row < len(rows):
            self.open_file(pid, *rows[row])

    def open_file(self, paper_id: str, item: Attachment, where: Path, _exists: bool = True) -> bool:
        """Open one file in the system's viewer and record when; a file that is not here is said
        in the status bar (nothing else). Whether it was handed to a viewer."""
        if not where.is_file():  # looked at now: it may have gone since the list was drawn
            self.status.say(self.tr("‘%s’ is missing: it was expected at %s") % (item.name, where), 10000)
            self.panel.reload()
            return False
        url = QUrl.fromLocalFile(str(where))
        if not QDesktopServices.openUrl(url):  # no application for the file's type
            self.status.say(self.tr("No application on this system opens ‘%s’ (%s).") % (item.name, where), 10000)
            return False
        self.opened_urls.append(url.toString())
        if self.library.readonly:
            self.status.say(
                self.tr("Opened ‘%s’. The library was opened read-only: when was not recorded.") % item.name, 8000
            )
            return True
        self.status.say(self.tr("Opened ‘%s’") % item.name, 4000)
        self._record_opened(paper_id)
        return True

    def _record_opened(self, paper_id: str) -> None:
        if self.transfers.running():  # the library must not change under an import: after it
            self._pending_opened.append(paper_id)
            return
        try:
            self.library.mark_opened(paper_id)
        except PapershelfError as exc:  # a full disk: the file opened all the same
            self.status.say(self.tr("The file opened, but when was not saved: %s") % exc, 8000)

    def _flush_opened(self) -> None:
        pending, self._pending_opened = self._pending_opened, []
        for pid in dict.fromkeys(pending):
            if pid in self.library:
                self._record_opened(pid)

    # ---- attaching -----------------------------------------------------------------------
    def refused(self) -> bool:
        """Say why no attach can start now (a read-only library, an import or an attach or Get
        PDF running) and return True; False when one can."""
        if self.library.readonly:
            self.status.say(self.tr("The library was opened read-only: no file can be attached."), 6000)
            return True
        words = self.transfers.refusal()
        if words:
            self.status.say(words, 4000)
            return True
        return False

    def choose_and_attach(self) -> None:
        """Paper ▸ Attach Files…: ask for files (PDFs, or any) and attach them to the current paper."""
        pid = self.current_paper()
        if not pid:
            self.status.say(self.tr("Select the paper to attach files to first."), 4000)
            return
        if self.refused():  # before the dialog: a choice is never thrown away
            return
        settings = QSettings()
        folder = settings.value(ATTACH_FOLDER, str(Path.home()), str)
        files, _ = QFileDialog.getOpenFileNames(
            self.dialog_parent,
            self.tr("Attach files to ‘%s’") % short_title(self.library.get(pid).title),
            str(folder),
            self.tr("PDF files (*.pdf);;All files (*)"),
        )
        if files:
            settings.setValue(ATTACH_FOLDER, str(Path(files[0]).parent))
            self.attach(pid, [Path(f) for f in files])

    def attach(self, paper_id: str, paths: list[Path], then: Callable[[], None] | None = None) -> Task | None:
        """Attach files to a paper: hashed and copied into the library folder on a worker, the
        record written on the GUI thread (one undo step, the library's own); the status line
        says what it did. `then` runs once it is done."""
        if self.refused():
            return None
        lib = self.library
        title = short_title(lib.get(paper_id).title)

        def work(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Attached:
            return lib.prepare_attachments(paper_id, paths)

        def done(result: object) -> None:
            assert isinstance(result, Attached)
            before = lib.undo_token()
            try:
                report = lib.record_attachments(result)
            except PapershelfError as exc:  # deleted meanwhile, a full disk: the copies are gone again
                self.status.error(self.tr("No file was attached"), str(exc))
                return
            token = lib.undo_token()
            if token is not None and token is not before:
                self.undo_stack.push(DoneStep(lib, lib.undo_label(), token))  # "Attach 2 files to '…'"
            self._attached(report, title)
            if then is not None:
                then()

        def failed(exc: BaseException) -> None:
            if not isinstance(exc, (PapershelfError, OSError)):
                raise exc  # a bug: the window's error reporter shows it
            self.status.error(self.tr("No file was attached"), str(exc))

        text = self.tr("Attaching %s…") % n_files(len(paths))
        return self.transfers.run_like_import(work, text, "papershelf-attach", done, failed)

    def _remember_problems(self, result: Attached) -> int:
        """Keep why each unreadable PDF just attached cannot be read (for its row's tooltip);
        how many notes were kept."""
        zero = [a for a in result.added if a.is_pdf() and a.pages <= 0]
        notes = list(result.notes)
        kept = 0
        for i, item in enumerate(zero):
            note = next((n for n in notes if item.name in n), "")
            if not note and notes and len(notes) == len(zero) - i:  # a renamed copy: the notes come in order
                note = notes[0]
            if note:
                self.panel.problems[item.sha256] = note
                notes.remove(note)
                kept += 1
        return kept

    def _attached(self, result: Attached, title: str) -> None:
        n = len(result.added)
        said: list[str] = []
        if n:
            what = self.tr("Attached %s to ‘%s’") % (n_files(n), title)
            action = self.undo_action()
            key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if action is not None else ""
            said.append(what + (" — " + self.tr("%s undoes") % key if key else ""))
        if result.already:
            k = len(result.already)
            said.append(
                self.tr("‘%s’ has that file already") % title
                if k == 1
                else self.tr("‘%s’ has %s of them already") % (title, f"{k:,}")
            )
        kept = self._remember_problems(result)
        if kept:  # the reason is long (it names the file): in the row's tooltip, not the status line
            said.append(
                self.tr("1 PDF cannot be read: see its tooltip in Files")
                if kept == 1
                else self.tr("%s PDFs cannot be read: see their tooltips in Files") % kept
            )
        elif result.notes:
            said.append(self.tr("Notes: %s") % "; ".join(result.notes))
        if not said and not result.problems:
            said.append(self.tr("Nothing was attached."))
        if said:
            self.status.say(". ".join(s.rstrip(".") for s in said) + ".", 10000)
        if result.problems:
            self.status.error(
                self.tr("Some files were not attached") if n else self.tr("No file was attached"),
                "\n".join(result.problems),
            )
        if self.panel.paper_id == result.paper_id:
            self.panel.reload()
        self.attached.emit(result)

    # ---- drops on a row of the paper list ----------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Files dragged over a paper's row: one file attaches to it when dropped, several ask
        first, a folder (and listings, .bib files) import; dropped anywhere else, they import."""
        kind = event.type()
        if kind not in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop, QEvent.Type.DragLeave):
            return super().eventFilter(watched, event)
        if kind == QEvent.Type.DragLeave:
            self._drop_row = -1
            return False
        assert isinstance(event, QDropEvent)  # DragEnter and DragMove are drop events too
        files = dropped_files(event.mimeData())
        if not files:
            return False
        row = self.pane.view.indexAt(event.position().toPoint()).row()
        pid = self.pane.model.id_at(row) if row >= 0 else None
        if kind != QEvent.Type.Drop:
            event.acceptProposedAction()
            if pid and row != self._drop_row:
                self._say_drop(pid, files)
            self._drop_row = row
            return True
        self._drop_row = -1
        event.acceptProposedAction()
        self.dropped(pid, files)
        return True

    @staticmethod
    def split(files: list[Path]) -> tuple[list[Path], list[Path]]:
        """What a drop on a row would attach (files, not listings) and what it imports; a folder
        among them imports everything (its PDFs become papers)."""
        if any(f.is_dir() for f in files):
            return [], files
        attach = [f for f in files if not f.name.lower().endswith(IMPORTED_SUFFIXES)]
        return attach, [f for f in files if f not in attach]

    def _say_drop(self, paper_id: str, files: list[Path]) -> None:
        attach, _rest = self.split(files)
        title = short_title(self.library.get(paper_id).title)
        if len(attach) == 1:
            self.status.say(self.tr("Drop to attach to ‘%s’") % title, 3000)
        elif attach:
            self.status.say(self.tr("Drop to attach to ‘%s’ or import as papers (you will be asked)") % title, 3000)
        else:
            self.status.say(self.tr("Drop to import (PDFs become papers)"), 3000)

    def dropped(self, paper_id: str | None, files: list[Path]) -> None:
        """Files dropped on the paper `paper_id` (None: on no row): one file attaches to it, two or
        more ask whether to attach them or import them as papers, a folder imports; listings and
        bibliographies import; on no row, everything imports."""
        attach, rest = self.split(files)
        if not paper_id or not attach:
            self.transfers.import_files(files)
            return
        if self.refused():
            return
        if len(attach) == 1:
            self.attach(paper_id, attach, then=(lambda: self.transfers.import_files(rest)) if rest else None)
            return
        self.ask_attach_or_import(paper_id, attach, rest)

    def ask_attach_or_import(self, paper_id: str, attach: list[Path], rest: list[Path]) -> QMessageBox:
        """Several files dropped on a row: attach them to that paper, or import them as papers?"""
        title = short_title(self.library.get(paper_id).title)
        if self.drop_box is not None:  # the last one was answered: it goes (found by name no more)
            self.drop_box.setObjectName("")
            self.drop_box.deleteLater()
        box = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Attach or Import"),
            self.tr("Attach %s to ‘%s’, or import them as papers?") % (n_files(len(attach)), title),
            QMessageBox.StandardButton.NoButton,
            self.dialog_parent,
        )
        box.setObjectName("dropAttachOrImport")
        box.setInformativeText(self.tr("Imported, each PDF becomes a paper of its own, with the file attached."))
        to_paper = box.addButton(self.tr("Attach to ‘%s’") % short_title(title, 30), QMessageBox.ButtonRole.AcceptRole)
        to_paper.setObjectName("dropAttach")
        as_papers = box.addButton(self.tr("Import as Papers"), QMessageBox.ButtonRole.ActionRole)
        as_papers.setObjectName("dropImport")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        cancel.setObjectName("dropCancel")
        box.setDefaultButton(to_paper)
        box.setEscapeButton(cancel)

        def answered() -> None:
            clicked = box.clickedButton()
            if clicked is to_paper and paper_id in self.library:
                self.attach(paper_id, attach, then=(lambda: self.transfers.import_files(rest)) if rest else None)
            elif clicked is as_papers:
                self.transfers.import_files([*attach, *rest])
            else:
                self.status.say(self.tr("Nothing was attached or imported."), 4000)

        box.finished.connect(answered)
        box.open()
        self.drop_box = box
        return box
