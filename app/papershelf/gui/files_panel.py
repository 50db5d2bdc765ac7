"""A paper's files in the window: the viewer's Files list, opening a file, attaching files.

The panel sits over the abstract and lists the files of the paper the viewer shows
(`Library.paper_files`): name, size, page count and label; a file not on this machine
(a linked file moved away, a copy a sync tool has not delivered yet) is drawn muted as
"missing", with where it was expected in its tooltip. Opening one that is missing says so in
the status bar, never in a dialog. Enter or a double-click opens a file in the system's
viewer (`QDesktopServices`), as Paper ▸ Open PDF (Ctrl+Shift+O) opens the current paper's
first PDF; opening records when (`Library.mark_opened`, the reading statistics read it).

Attaching (Paper ▸ Attach Files…, or files dropped on a paper's row) copies the files into
the library folder on a worker: a 200 MB PDF is hashed and copied without freezing the
window. It runs in the import's slot (`ImportExport.run_like_import`), so edits and Undo wait
for it as they wait for an import, and it is one undoable step (the library's own undo).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QAbstractListModel,
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
from PySide6.QtWidgets import QFileDialog, QLabel, QListView, QVBoxLayout, QWidget

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
PDF_FILTER = "PDF files (*.pdf);;All files (*)"
IMPORTED_SUFFIXES = (".txt", ".md", ".bib", ".ris")  # what a drop on a row still imports (listings)
ATTACH_FOLDER = "attach/folder"  # where the attach dialog opened last (QSettings)
FileRow = tuple[Attachment, Path, bool]
AnyIndex = QModelIndex | QPersistentModelIndex


def human_size(n: int) -> str:
    """A file's size as people read it: "812 bytes", "14 KB", "1.2 MB", "230 MB" (decimal units,
    as file managers show them)."""
    if n < 1000:
        return "1 byte" if n == 1 else f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.5 or unit == "TB":
            return f"{value:.1f} {unit}" if value < 9.95 else f"{value:.0f} {unit}"
    return f"{n} bytes"  # not reached


def pages_text(n: int) -> str:
    """ "1 page", "12 pages"; "" when not known."""
    return "" if n <= 0 else ("1 page" if n == 1 else f"{n:,} pages")


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

    def set_rows(self, rows: list[FileRow]) -> None:
        """Show these files."""
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """How many files."""
        return 0 if parent.isValid() else len(self.rows)

    @staticmethod
    def details(item: Attachment, exists: bool) -> str:
        """What the row says after the name."""
        if not exists:
            return "missing"
        return " · ".join(x for x in (human_size(item.size), pages_text(item.pages), item.label) if x)

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
                return f"Missing on this machine: expected at {where}"
            return f"{where}" + ("\n(linked: left where it was)" if item.linked else "")
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
        self.model.set_rows(rows)
        day = short_date(self.library.get(pid).opened_at)
        opened = self.tr("Opened %s") % day if day else ""
        missing = sum(1 for _, _, exists in rows if not exists)
        if rows:
            head = self.tr("&Files (%d)") % len(rows)
            if missing:
                head += " · " + self.tr("%d missing") % missing
            self.heading.setText(head + (f" · {opened}" if opened else ""))
        else:
            self.heading.setText(self.tr("&Files") + (f" · {opened}" if opened else ""))
        self.list.setVisible(bool(rows))
        self.hint.setVisible(not rows)
        self.hint.setText(self.tr("No files. Drop a PDF on the paper, or Paper ▸ Attach Files…"))
        if rows:
            height = self.list.sizeHintForRow(0) * min(len(rows), SHOWN_ROWS) + 2 * self.list.frameWidth() + 2
            self.list.setFixedHeight(height)

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
    def choose_and_attach(self) -> None:
        """Paper ▸ Attach Files…: ask for files (PDFs, or any) and attach them to the current paper."""
        pid = self.current_paper()
        if not pid:
            self.status.say(self.tr("Select the paper to attach files to first."), 4000)
            return
        settings = QSettings()
        folder = settings.value(ATTACH_FOLDER, str(Path.home()), str)
        files, _ = QFileDialog.getOpenFileNames(
            self.dialog_parent,
            self.tr("Attach files to ‘%s’") % short_title(self.library.get(pid).title),
            str(folder),
            self.tr(PDF_FILTER),
        )
        if files:
            settings.setValue(ATTACH_FOLDER, str(Path(files[0]).parent))
            self.attach(pid, [Path(f) for f in files])

    def attach(self, paper_id: str, paths: list[Path], then: Callable[[], None] | None = None) -> Task | None:
        """Attach files to a paper on a worker (copied into the library folder); the status line
        says what it did, and Undo takes it back. `then` runs once it is done."""
        lib = self.library
        before = lib.undo_token()
        title = short_title(lib.get(paper_id).title)

        def work(_progress: Callable[[int, int], None], _cancelled: Callable[[], bool]) -> Attached:
            return lib.attach_files(paper_id, paths)

        def done(result: object) -> None:
            assert isinstance(result, Attached)
            self._attached(result, title, before)
            if then is not None:
                then()

        def failed(exc: BaseException) -> None:
            if not isinstance(exc, (PapershelfError, OSError)):
                raise exc  # a bug: the window's error reporter shows it
            self.status.error(self.tr("No file was attached"), str(exc))

        n = len(paths)
        text = self.tr("Attaching %s…") % (self.tr("1 file") if n == 1 else self.tr("%d files") % n)
        return self.transfers.run_like_import(work, text, "papershelf-attach", done, failed)

    def _attached(self, result: Attached, title: str, before: object | None) -> None:
        lib = self.library
        n = len(result.added)
        said: list[str] = []
        if n:
            what = self.tr("Attached %s to ‘%s’") % (self.tr("1 file") if n == 1 else self.tr("%d files") % n, title)
            token = lib.undo_token()
            if token is not None and token is not before:
                self.undo_stack.push(DoneStep(lib, what, token))  # Undo says "Undid: Attached…"
            action = self.undo_action()
            key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if action is not None else ""
            said.append(what + (" — " + self.tr("%s undoes") % key if key else ""))
        if result.already:
            k = len(result.already)
            said.append(
                self.tr("‘%s’ has that file already") % title
                if k == 1
                else self.tr("‘%s’ has %d of them already") % (title, k)
            )
        said += result.notes
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
        """Files dragged over a paper's row attach to it when dropped (listings and .bib files
        still import); dropped anywhere else, they import as before."""
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
        attach = [f for f in files if not f.name.lower().endswith(IMPORTED_SUFFIXES)]
        if kind != QEvent.Type.Drop:
            event.acceptProposedAction()
            if pid and attach and row != self._drop_row:
                self.status.say(self.tr("Drop to attach to ‘%s’") % short_title(self.library.get(pid).title), 3000)
            self._drop_row = row
            return True
        self._drop_row = -1
        event.acceptProposedAction()
        self.dropped(pid, files)
        return True

    def dropped(self, paper_id: str | None, files: list[Path]) -> None:
        """Files dropped on the paper `paper_id` (None: on no row): the PDFs and other files
        attach to it, listings and bibliographies import; on no row, everything imports."""
        attach = [f for f in files if not f.name.lower().endswith(IMPORTED_SUFFIXES)]
        rest = [f for f in files if f not in attach]
        if not paper_id or not attach:
            self.transfers.import_files(files)
            return
        if self.transfers.running():
            self.status.say(self.tr("Wait for the import to finish."), 3000)
            return
        self.attach(paper_id, attach, then=(lambda: self.transfers.import_files(rest)) if rest else None)
