"""Suggest Papers: the library ranked by a small model trained on the papers
that carry a tag (or sit in a reading list), with the terms that explain
each suggestion; the checked ones are tagged (or listed) as one undoable step.

`Library.suggest` trains and ranks on a worker (tasks.py), with a busy bar
and Cancel; the dialog stays alive while it is open so that a late answer
never reaches a deleted widget. Too few papers carrying the tag: the
library's own message, in words, in place of the list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QInputDialog,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.discovery_types import Suggestion
from ..core.errors import PapershelfError
from ..core.library import Library
from ..core.render import plain_text
from .feedback import n_papers, quoted
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .main_window import MainWindow

SUGGESTIONS = 30  # shown at most: a page to read, not the whole library ranked
AnyIndex = QModelIndex | QPersistentModelIndex


def tr(text: str) -> str:
    """`text` in the user's language (the dialog's translation context)."""
    return QCoreApplication.translate("SuggestDialog", text)


class SuggestionModel(QAbstractTableModel):
    """Suggestions, best first; the
    title column is checkable, and `checked_ids()` are the ones to tag."""

    COLUMNS = ("title", "score", "terms")
    changedChecks = Signal()

    def __init__(self, library: Library, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.rows: list[Suggestion] = []
        self.checked: set[str] = set()

    def set_suggestions(self, suggestions: Sequence[Suggestion]) -> None:
        """Show these suggestions (those still in the library), none checked."""
        self.beginResetModel()
        self.rows = [s for s in suggestions if s.paper_id in self.library]
        self.checked = set()
        self.endResetModel()
        self.changedChecks.emit()

    def drop(self, ids: set[str]) -> None:
        """Take these papers out (they carry the tag now)."""
        self.set_suggestions([s for s in self.rows if s.paper_id not in ids])

    def checked_ids(self) -> list[str]:
        """The checked papers, best first."""
        return [s.paper_id for s in self.rows if s.paper_id in self.checked]

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """How many suggestions."""
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        """Title, score, terms."""
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """The columns' names."""
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return (tr("Title"), tr("Score"), tr("Why: the words that weighed most"))[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == 1:
            return tr("The model's score: the higher, the more like the papers it was trained on")
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        """Selectable rows; the title is checkable."""
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return base | Qt.ItemFlag.ItemIsUserCheckable if index.column() == 0 else base

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        """A suggestion's title (checkable), score or explaining terms."""
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        s, col = self.rows[index.row()], self.COLUMNS[index.column()]
        paper = self.library.find(s.paper_id)
        if paper is None:
            return None
        if role == Qt.ItemDataRole.CheckStateRole and col == "title":
            return Qt.CheckState.Checked if s.paper_id in self.checked else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.DisplayRole:
            if col == "title":
                return plain_text(paper.title)
            if col == "score":
                return f"{s.score:.2f}"
            return ", ".join(s.terms)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == "terms":
                return tr("The model's largest weights among this paper's words: %s") % ", ".join(s.terms)
            return " · ".join(x for x in (", ".join(paper.authors[:3]), str(paper.year or ""), paper.venue) if x)
        if role == Qt.ItemDataRole.TextAlignmentRole and col == "score":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index: AnyIndex, value: object, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Check or uncheck a suggestion (a click on its box, or Space)."""
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != 0 or not index.isValid():
            return False
        pid = self.rows[index.row()].paper_id
        checked = value in (Qt.CheckState.Checked, Qt.CheckState.Checked.value)
        (self.checked.add if checked else self.checked.discard)(pid)
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.changedChecks.emit()
        return True


class SuggestDialog(QDialog):
    """Suggestions for a tag (or a reading list, `list_name`) in `window`'s library."""

    answered = Signal()  # the list (or the message) shows the answer

    def __init__(self, window: MainWindow, tag: str | None = None, list_name: str | None = None) -> None:
        super().__init__(window)
        self.main = window
        self.tag, self.list_name = tag, list_name
        self.task: Task | None = None
        self.setObjectName("suggestDialog")
        what = f"‘{tag}’" if tag else tr("the reading list ‘%s’") % list_name
        self.setWindowTitle(tr("Suggestions for %s") % what)
        lib = window.library
        carrying = sum(1 for p in lib.papers() if tag in p.tags) if tag else len(lib.list_ids(list_name or ""))
        intro = (
            tr("Papers not yet tagged %s, ranked by a model trained on the %s that are.")
            if tag
            else tr("Papers not yet on %s, ranked by a model trained on the %s on it.")
        )
        self.intro = QLabel(
            (intro % (what, n_papers(carrying)))
            + " "
            + (tr("Check the ones to tag.") if tag else tr("Check the ones to add."))
        )
        self.intro.setWordWrap(True)

        self.model = SuggestionModel(lib, self)
        table = self.table = QTableView()
        table.setObjectName("suggestionList")
        table.setAccessibleName(tr("Suggested papers"))
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setWordWrap(False)
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.verticalHeader().hide()
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        table.doubleClicked.connect(self._toggle)

        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setObjectName("suggestProgress")
        busy_page = QWidget()
        busy_box = QVBoxLayout(busy_page)
        busy_box.addStretch(1)
        busy_box.addWidget(QLabel(tr("Training on %s and ranking the library…") % n_papers(carrying)))
        busy_box.addWidget(self.busy)
        busy_box.addStretch(1)
        self.message = QLabel()
        self.message.setObjectName("suggestMessage")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget()
        for page in (busy_page, table, self.message):
            self.stack.addWidget(page)

        buttons = QDialogButtonBox()
        self.apply_button = QPushButton(tr("&Tag Checked") if tag else tr("&Add Checked to List"))
        self.apply_button.setObjectName("suggestApplyButton")
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self.apply)
        buttons.addButton(self.apply_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.close_button = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.close_button.setObjectName("suggestCloseButton")
        buttons.rejected.connect(self.reject)
        self.model.changedChecks.connect(self._update_apply)

        box = QVBoxLayout(self)
        box.addWidget(self.intro)
        box.addWidget(self.stack, 1)
        box.addWidget(buttons)
        self.resize(1000, 520)

    # ---- asking ---------------------------------------------------------------------
    def start(self) -> None:
        """Train and rank on a worker; the list fills when the answer comes."""
        lib, tag, list_name = self.main.library, self.tag, self.list_name
        self.stack.setCurrentIndex(0)

        def work(_progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> list[Suggestion]:
            return list(lib.suggest(tag=tag, list_name=list_name, limit=SUGGESTIONS, cancelled=cancelled))

        # no parent: an answer after the window or the dialog is gone reaches a live Task; a
        # closed dialog has detached its callbacks (done), a closing window drops it (_done)
        self.task = run_task(work, name="papershelf-suggest", on_done=self._done, on_error=self._failed)

    def _done(self, suggestions: list[Suggestion]) -> None:
        if self.main.closing:
            return
        self.model.set_suggestions(suggestions)
        if self.model.rowCount():
            self.stack.setCurrentWidget(self.table)
            self.table.setFocus()
            self.table.setCurrentIndex(self.model.index(0, 0))
        else:
            self._say(tr("Every paper like these already carries it: nothing to suggest."))
        self.answered.emit()

    def _failed(self, exc: BaseException) -> None:
        if self.main.closing:
            return
        if isinstance(exc, PapershelfError):  # too few papers carry the tag: its own words
            self._say(str(exc))
        else:
            self._say(tr("Suggestions could not be made: %s") % exc)
        self.answered.emit()

    def _say(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def text(self) -> str:
        """The message shown in place of the list ("" while the list shows)."""
        return self.message.text() if self.stack.currentWidget() is self.message else ""

    def done(self, result: int) -> None:
        """Close, cancelling the ranking under way: its answer is dropped (the dialog is deleted)."""
        if self.task is not None and not self.task.finished:
            self.task.cancel()
            self.task.on_done = self.task.on_error = None
        super().done(result)

    # ---- tagging ----------------------------------------------------------------------
    def _toggle(self, index: QModelIndex) -> None:
        first = self.model.index(index.row(), 0)
        state = self.model.data(first, Qt.ItemDataRole.CheckStateRole)
        new = Qt.CheckState.Unchecked if state == Qt.CheckState.Checked else Qt.CheckState.Checked
        self.model.setData(first, new, Qt.ItemDataRole.CheckStateRole)

    def _update_apply(self) -> None:
        n = len(self.model.checked)
        self.apply_button.setEnabled(n > 0)
        label = tr("&Tag %d Checked") if self.tag else tr("&Add %d Checked to List")
        self.apply_button.setText(label % n if n else label.replace("%d ", ""))

    def apply(self) -> None:
        """Tag the checked papers (or add them to the list): one step on the undo stack."""
        win, lib = self.main, self.main.library
        ids = self.model.checked_ids()
        gone = set(ids) - set(lib.present(ids))
        if gone:  # deleted or merged away since the suggestions were made
            self.model.drop(gone)
            ids = [pid for pid in ids if pid not in gone]
        if not ids:
            self._update_apply()
            return
        if self.tag:
            tag = self.tag
            n = win.edits.edit(
                tr("Tag %d suggested papers %s") % (len(ids), quoted([tag])), ids, lambda: lib.add_tags(ids, [tag])
            )
            win.edits.say_edited("tag", n, quoted([tag]))
        else:
            name = self.list_name or ""
            n = win.edits.edit(
                tr("Add %d suggested papers to %s") % (len(ids), quoted([name])),
                ids,
                lambda: lib.add_to_list(name, ids),
                touches_lists=True,
            )
            if n:
                win.statusBar().showMessage(tr("Added %s to %s") % (n_papers(n), quoted([name])), 8000)
        if n is not None:
            self.model.drop(set(ids))
            win.sidebar.refresh_lists_and_tags()


def suggest_for(window: MainWindow, tag: str | None = None, list_name: str | None = None) -> SuggestDialog:
    """Open the suggestions for a tag or a reading list (not modal) and start ranking."""
    old = window.findChild(SuggestDialog, "suggestDialog")
    if old is not None:
        old.reject()
    dialog = SuggestDialog(window, tag=tag, list_name=list_name)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()  # not modal: the window stays usable (look a paper up, undo) beside it
    dialog.start()
    return dialog


def choose_and_suggest(window: MainWindow) -> SuggestDialog | None:
    """Edit ▸ Suggest Papers: ask which tag or reading list (the selection's
    commonest tag first), then open its suggestions."""
    lib = window.library
    counts = lib.tag_counts()
    selected = [lib.get(pid) for pid in window.selected_ids()[:1000] if pid in lib]
    mine = {t: sum(t in p.tags for p in selected) for t in counts}
    tags = sorted(counts, key=lambda t: (-mine[t], -counts[t], t.casefold()))
    lists = sorted(lib.lists(), key=str.casefold)
    items = [tr("Tag: %s") % t for t in tags] + [tr("Reading list: %s") % n for n in lists]
    if not items:
        window.statusBar().showMessage(tr("Tag a few papers first: suggestions are papers like them."), 5000)
        return None
    item, ok = QInputDialog.getItem(
        window, tr("Suggest Papers"), tr("Suggest papers like the ones in:"), items, 0, False
    )
    if not ok or item not in items:
        return None
    n = items.index(item)
    return suggest_for(window, tag=tags[n]) if n < len(tags) else suggest_for(window, list_name=lists[n - len(tags)])
