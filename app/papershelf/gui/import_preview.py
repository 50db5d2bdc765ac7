"""Asking before a file that only partly looks like a listing is imported.

Text with no listing header whose paragraphs are only partly abstracts,
area and author lines (the listing importer's `sniff_listing`) is not
imported at once: the window shows what it would add and imports it as a
listing only on Import.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QMessageBox, QWidget

from ..core.library import FileReport

SHOWN_TITLES = 5


def _tr(text: str) -> str:
    return QCoreApplication.translate("ImportPreview", text)


def shown_name(path: str) -> str:
    """A file's name, or "The pasted text"."""
    return _tr("The pasted text") if path.startswith("<") else Path(path).name or path


def preview_text(reports: list[FileReport]) -> str:
    """What the preview says of each file held back: what reading it as a listing would give."""
    lines = []
    for r in reports:
        n = len(r.unconfirmed)
        what = shown_name(r.path) if r.path.startswith("<") else r.path
        lines.append(
            _tr("%s has no listing header and only partly looks like a paper listing. Read as one, it gives %d %s:")
            % (what, n, _tr("paper") if n == 1 else _tr("papers"))
        )
        lines += [f"  • {title}" for title in r.unconfirmed[:SHOWN_TITLES]]
        if n > SHOWN_TITLES:
            lines.append("  " + _tr("… and %d more") % (n - SHOWN_TITLES))
        if r.unconfirmed_problems:
            lines.append(
                "  "
                + _tr("%d paragraphs would be skipped as neither area, authors nor abstract.") % r.unconfirmed_problems
            )
        lines.append("")
    return "\n".join(lines).rstrip()


def ask_to_import_as_listing(
    parent: QWidget, reports: list[FileReport], accept: Callable[[list[Path]], None]
) -> QMessageBox:
    """Show the preview (window-modal, not blocking); `accept(paths)` runs on Import."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        _tr("Import as a paper listing?"),
        preview_text(reports),
        QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setObjectName("importPreview")
    import_button = box.addButton(_tr("Import"), QMessageBox.ButtonRole.AcceptRole)
    import_button.setObjectName("importPreviewImport")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)  # Enter does not import what looks doubtful

    def finished() -> None:
        if box.clickedButton() is import_button:
            accept([Path(r.path) for r in reports])

    box.finished.connect(finished)
    box.open()
    return box
