"""File ▸ Add by Identifier: a box for DOIs and arXiv ids, and what happened to each.

The dialog only reads the text (`find_identifiers`, as typed) and shows the
fetching's progress and failures; `online.OnlineActions` asks for consent,
fetches on a worker thread and adds what was found. While fetching, Cancel
(or Esc) asks the work to stop and the dialog closes once it has.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.biblio.identifiers import Identifier, find_identifiers, identifier_problem


class IdentifierDialog(QDialog):
    """One or several DOIs / arXiv ids / doi.org or arxiv.org links; Add fetches and adds them."""

    addRequested = Signal(list)  # the Identifiers recognised
    cancelRequested = Signal()  # Cancel while fetching

    def __init__(self, parent: QWidget | None = None, text: str = "") -> None:
        super().__init__(parent)
        self.setObjectName("identifierDialog")
        self.setWindowTitle(self.tr("Add by Identifier"))
        self.busy = False
        self.idents: list[Identifier] = []
        intro = QLabel(
            self.tr(
                "DOIs, arXiv ids, or doi.org / arxiv.org links, one or several (for example "
                "10.1073/pnas.1414271111 or arXiv:1605.08386). Papershelf fetches each record "
                "and adds it, or merges it into the paper already here."
            )
        )
        intro.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setObjectName("identifierText")
        self.text.setAccessibleName(self.tr("Identifiers"))
        self.text.setTabChangesFocus(True)
        self.text.setPlaceholderText("10.1073/pnas.1414271111\narXiv:1605.08386\nhttps://arxiv.org/abs/2104.12255")
        self.recognised = QLabel()
        self.recognised.setObjectName("recognisedLabel")
        self.recognised.setWordWrap(True)
        self.recognised.setTextFormat(Qt.TextFormat.PlainText)  # a SICI DOI's <…> is no markup
        self.progress = QProgressBar()
        self.progress.setObjectName("identifierProgress")
        self.progress.hide()
        self.problems = QLabel()
        self.problems.setObjectName("identifierProblems")
        self.problems.setWordWrap(True)
        self.problems.hide()
        buttons = QDialogButtonBox()
        self.add_button = buttons.addButton(self.tr("&Add"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setObjectName("identifierAddButton")
        self.add_button.setDefault(True)
        self.cancel_button: QPushButton = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setObjectName("identifierCancelButton")
        self.add_button.clicked.connect(self._add)
        self.cancel_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.recognised)
        layout.addWidget(self.progress)
        layout.addWidget(self.problems)
        layout.addWidget(buttons)
        self.text.textChanged.connect(self._recognise)
        self.text.setPlainText(text)
        self._recognise()
        self.resize(560, 360)

    def _recognise(self) -> None:
        self.idents = find_identifiers(self.text.toPlainText())
        if self.idents:
            self.recognised.setText(self.tr("Recognised: %s") % ", ".join(str(i) for i in self.idents))
        elif self.text.toPlainText().strip():
            # a DOI refused for what it holds (a ".." segment, a control character) says why
            why = next(filter(None, map(identifier_problem, self.text.toPlainText().split())), "")
            said = self.tr("No DOI or arXiv id recognised in this text.")
            self.recognised.setText(f"{said} {why}." if why else said)
        else:
            self.recognised.setText(self.tr("Type or paste a DOI or an arXiv id."))
        self.add_button.setEnabled(bool(self.idents) and not self.busy)

    def _add(self) -> None:
        if self.idents and not self.busy:
            self.problems.hide()
            self.addRequested.emit(list(self.idents))

    # ---- what the fetching says -------------------------------------------------------
    def fetching(self, n: int) -> None:
        """Fetching `n` records has begun."""
        self.busy = True
        self.text.setReadOnly(True)
        self.add_button.setEnabled(False)
        self.progress.setRange(0, n)
        self.progress.setValue(0)
        self.progress.setFormat(self.tr("Fetching %v of %m…"))
        self.progress.show()

    def step(self, done: int, total: int) -> None:
        """`done` of `total` records fetched."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(self.tr("Fetching %v of %m…"))

    def waiting(self, text: str) -> None:
        """What the fetching waits for ("Waiting 12 s: Crossref asked us to slow down…", "Still
        waiting for Crossref…"), in the progress bar until the next record is fetched."""
        self.progress.setFormat(text)

    def show_refusal(self, text: str) -> None:
        """Online look-ups are off: say so here."""
        self.problems.setText(html.escape(text))
        self.problems.show()

    def finished_fetching(self, failed: list[tuple[Identifier, str]], cancelled: bool) -> None:
        """The fetching ended. Nothing failed (or cancelled): close. Failures: list them in
        words, and keep their identifiers in the box to try again."""
        self.busy = False
        self.text.setReadOnly(False)
        self.progress.hide()
        if cancelled or not failed:
            self.done(QDialog.DialogCode.Rejected if cancelled else QDialog.DialogCode.Accepted)
            return
        rows = "".join(f"<li><b>{html.escape(str(i))}</b>: {html.escape(why)}</li>" for i, why in failed)
        self.problems.setText(self.tr("Not added:") + f"<ul style='margin-left:-20px'>{rows}</ul>")
        self.problems.show()
        self.text.setPlainText("\n".join(str(i) for i, _ in failed))
        self.cancel_button.setText(self.tr("Close"))

    def reject(self) -> None:
        """Cancel: while fetching, stop the fetching (the dialog closes once it has)."""
        if self.busy:
            self.progress.setFormat(self.tr("Cancelling…"))
            self.cancelRequested.emit()
            return
        super().reject()
