"""The review of what Find Published Version found: each paper, each change, a checkbox each.

One row per paper (its current title, the service and how sure the match
is), under it one row per change (field, now → found) with a checkbox. A
change is checked at first when the match is sure enough to apply by itself
and it does not overwrite a value of the user's; the paper's own checkbox
checks or unchecks all its changes. Papers with nothing found, or an error,
are listed with the message. Apply hands the checked changes to the window
(`applyRequested`: paper id → {field: new text}), which makes them one
undoable step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QBrush, QFont, QPalette, QShowEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..core.library import SERVICE_NAMES, Proposal
from ..core.paper import Paper
from .screen_fit import fit_size, keep_on_screen

PAPER_ROLE = Qt.ItemDataRole.UserRole + 1  # the paper id (paper rows and change rows)
FIELD_ROLE = Qt.ItemDataRole.UserRole + 2  # the field a change row sets
NEW_ROLE = Qt.ItemDataRole.UserRole + 3  # the text it sets

FIELD_LABELS = {
    "title": "Title",
    "author": "Authors",
    "year": "Year",
    "venue": "Venue",
    "doi": "DOI",
    "eprint": "arXiv id",
    "entrytype": "Entry type",
}
# what an arXiv record's authors wrote in its journal_ref ("To appear in CVPR"): never
# checked at first (the look-up never applies it by itself either)
_FROM_PREPRINT = {"venue", "entrytype"}


def auto_confidence() -> float:
    """The confidence at which a match is applied without asking (the look-up's threshold)."""
    try:
        from ..core.library import AUTO_CONFIDENCE
    except ImportError:  # the matching is not installed: nothing counts as sure
        return 1.01
    return float(AUTO_CONFIDENCE)


def users_value(field: str, old: str, paper: Paper | None) -> bool:
    """Whether `old` is a value the user has (a change would overwrite it), not a blank or a
    title Papershelf derived from the abstract. An entry type is the user's too: a paper from
    a listing has none (""), so a type there is the type their .bib entry has."""
    if not old.strip():
        return False
    return not (field == "title" and paper is not None and paper.title_derived)


def checked_at_first(proposal: Proposal, field: str, old: str, paper: Paper | None, sure: float) -> bool:
    """A sure match's change is checked, unless it overwrites a value of the user's or it is a
    venue or type an arXiv record gives."""
    if proposal.candidate is not None and proposal.candidate.service == "arxiv" and field in _FROM_PREPRINT:
        return False
    return (proposal.automatic or proposal.confidence >= sure) and not users_value(field, old, paper)


class ReviewDialog(QDialog):
    """The proposals of a look-up, change by change; Apply emits the checked ones."""

    applyRequested = Signal(dict)  # paper id → {field: new text}

    def __init__(
        self,
        proposals: Sequence[Proposal],
        papers: Mapping[str, Paper],
        parent: QWidget | None = None,
        applied: int = 0,
    ) -> None:
        """`applied`: how many papers' sure versions were applied before the review (said at the top)."""
        super().__init__(parent)
        self.setObjectName("reviewDialog")
        self.setWindowTitle(self.tr("Review the Published Versions Found"))
        self.proposals = list(proposals)
        self._syncing = False  # setting check states from code: not the user's toggle
        self.papers = dict(papers)
        found = [p for p in self.proposals if p.changes]
        missing = [p for p in self.proposals if not p.changes]
        summary = QLabel()
        summary.setObjectName("reviewSummary")
        summary.setWordWrap(True)
        text = self.tr("To review: 1 paper.") if len(found) == 1 else self.tr("To review: %d papers.") % len(found)
        if applied:
            text = (
                (
                    self.tr("Applied already: 1 paper, whose published version was sure.")
                    if applied == 1
                    else self.tr("Applied already: %d papers, whose published versions were sure.") % applied
                )
                + " "
                + text
            )
        if missing:
            text += " " + (
                self.tr("1 paper got nothing to change (listed at the end).")
                if len(missing) == 1
                else self.tr("%d papers got nothing to change (listed at the end).") % len(missing)
            )
        summary.setText(
            text
            + " "
            + self.tr(
                "Check the changes to make. Changes that would overwrite a value you have are unchecked; "
                "citation keys you fixed never change. Undo takes everything applied back in one step."
            )
        )
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels([self.tr("Paper / field"), self.tr("Now"), self.tr("Found online")])
        self.view = QTreeView()
        self.view.setObjectName("reviewChanges")
        self.view.setAccessibleName(self.tr("Changes found"))
        self.view.setModel(self.model)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setWordWrap(True)
        self.view.setUniformRowHeights(False)
        self.view.setAlternatingRowColors(True)
        header = self.view.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        sure = auto_confidence()
        for proposal in found:
            self._add_paper(proposal, sure)
        shared: dict[str, list[Proposal]] = {}
        for proposal in missing:
            shared.setdefault(proposal.message, []).append(proposal)
        for message, alike in shared.items():
            if len(alike) > 1 and message:  # said once, with the papers under it
                self._add_shared(message, alike)
            else:
                for proposal in alike:
                    self._add_missing(proposal)
        self.model.itemChanged.connect(self._item_changed)
        for r in range(self.model.rowCount()):  # a paper's row: its title, across the columns
            head = self.model.item(r, 0)
            self.view.setFirstColumnSpanned(r, self.model.indexFromItem(head).parent(), True)
            for c in range(head.rowCount()):
                if head.child(c, 1) is None:  # a message row
                    self.view.setFirstColumnSpanned(c, head.index(), True)
        self.view.expandAll()
        self.view.setColumnWidth(0, 170)
        self.view.setColumnWidth(1, 470)
        buttons = QDialogButtonBox()
        self.apply_button: QPushButton = buttons.addButton(self.tr("&Apply"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setObjectName("reviewApplyButton")
        self.apply_button.setEnabled(bool(found))
        cancel = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        cancel.setObjectName("reviewCancelButton")
        self.apply_button.clicked.connect(self.accept)
        cancel.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        # as tall as its rows need, within reason: the rest scrolls
        rows = self.model.rowCount() + sum(self.model.item(r).rowCount() for r in range(self.model.rowCount()))
        fit_size(self, 1100, min(700, max(360, 170 + rows * (self.fontMetrics().height() + 6))))
        if found:  # the keyboard starts at the first paper (Space checks all its changes)
            self.view.selectionModel().setCurrentIndex(
                self.model.index(0, 0), QItemSelectionModel.SelectionFlag.NoUpdate
            )

    def showEvent(self, event: QShowEvent) -> None:
        """Shown: its frame within the screen (a small laptop's too)."""
        super().showEvent(event)
        keep_on_screen(self)

    # ---- building ----------------------------------------------------------------------
    def _add_paper(self, proposal: Proposal, sure: float) -> None:
        paper = self.papers.get(proposal.paper_id)
        current = paper.title if paper is not None else proposal.paper_id
        service = SERVICE_NAMES.get(proposal.service, proposal.service)
        how = self.tr("%s, %d%% sure") % (service, round(proposal.confidence * 100))
        head = QStandardItem(f"{current}   ·   {how}")
        head.setData(proposal.paper_id, PAPER_ROLE)
        head.setToolTip(f"{current}\n\n{proposal.message}" if proposal.message else current)
        font = QFont(head.font())
        font.setBold(True)
        head.setFont(font)
        head.setCheckable(True)
        self.model.appendRow(head)
        for field, (old, new) in proposal.changes.items():
            label = QStandardItem(self.tr(FIELD_LABELS.get(field, field)))
            label.setCheckable(True)
            label.setData(proposal.paper_id, PAPER_ROLE)
            label.setData(field, FIELD_ROLE)
            label.setData(new, NEW_ROLE)
            checked = checked_at_first(proposal, field, old, paper, sure)
            label.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            if users_value(field, old, paper):
                label.setToolTip(self.tr("This would replace a value you have: unchecked until you check it."))
            now = QStandardItem(old or "—")
            if field == "title" and paper is not None and paper.title_derived:
                now.setText(self.tr("(derived) %s") % old)
            if not old:
                now.setForeground(QBrush(self.palette().color(QPalette.ColorRole.PlaceholderText)))
            now.setToolTip(old)
            after = QStandardItem(new or self.tr("(removed)"))
            after.setToolTip(new)
            head.appendRow([label, now, after])
        self._follow_changes(head)

    def _follow_changes(self, head: QStandardItem) -> None:
        """The paper's box shows its changes': all, none, or some (partly checked)."""
        states = {head.child(r, 0).checkState() for r in range(head.rowCount())}
        state = states.pop() if len(states) == 1 else Qt.CheckState.PartiallyChecked
        if head.checkState() != state:
            self._syncing = True
            head.setCheckState(state)
            self._syncing = False

    def _item_changed(self, item: QStandardItem) -> None:
        if self._syncing or not item.isCheckable() or item.column() != 0:
            return
        parent = item.parent()
        if parent is not None:  # a change: its paper's box follows
            self._follow_changes(parent)
        elif item.checkState() != Qt.CheckState.PartiallyChecked:  # a paper's box: all its changes follow
            self._syncing = True
            for r in range(item.rowCount()):
                item.child(r, 0).setCheckState(item.checkState())
            self._syncing = False

    def _add_missing(self, proposal: Proposal) -> None:
        paper = self.papers.get(proposal.paper_id)
        head = QStandardItem(paper.title if paper is not None else proposal.paper_id)
        head.setData(proposal.paper_id, PAPER_ROLE)
        head.setToolTip(head.text())
        why = proposal.message or self.tr("Nothing found.")
        message = QStandardItem(why)
        message.setToolTip(why)
        message.setForeground(QBrush(self.palette().color(QPalette.ColorRole.PlaceholderText)))
        head.appendRow(message)
        self.model.appendRow(head)

    def _add_shared(self, message: str, proposals: Sequence[Proposal]) -> None:
        """A message several papers got: one row saying it with their count, their titles under it."""
        head = QStandardItem(self.tr("%s (%d papers)") % (message, len(proposals)))
        head.setToolTip(message)
        for proposal in proposals:
            paper = self.papers.get(proposal.paper_id)
            row = QStandardItem(paper.title if paper is not None else proposal.paper_id)
            row.setData(proposal.paper_id, PAPER_ROLE)
            row.setForeground(QBrush(self.palette().color(QPalette.ColorRole.PlaceholderText)))
            head.appendRow(row)
        self.model.appendRow(head)

    # ---- reading the choices ------------------------------------------------------------------
    def change_rows(self, paper_id: str) -> dict[str, QStandardItem]:
        """The change rows of a paper, by field (their first column: the checkbox)."""
        for r in range(self.model.rowCount()):
            head = self.model.item(r, 0)
            if head.data(PAPER_ROLE) == paper_id and head.isCheckable():
                return {head.child(c, 0).data(FIELD_ROLE): head.child(c, 0) for c in range(head.rowCount())}
        return {}

    def checked(self) -> dict[str, dict[str, str]]:
        """paper id → {field: new text} of the changes checked."""
        out: dict[str, dict[str, str]] = {}
        for r in range(self.model.rowCount()):
            head = self.model.item(r, 0)
            for c in range(head.rowCount()):
                item = head.child(c, 0)
                if item.checkState() == Qt.CheckState.Checked:
                    out.setdefault(head.data(PAPER_ROLE), {})[item.data(FIELD_ROLE)] = item.data(NEW_ROLE)
        return out

    def accept(self) -> None:
        """Apply: hand the checked changes on, and close."""
        self.applyRequested.emit(self.checked())
        super().accept()
