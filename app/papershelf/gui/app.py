"""Starting the window: QApplication, the user's library, first run."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from .. import __version__, paths
from ..core.errors import PapershelfError
from ..core.library import Library

ORG = "Papershelf"
APP_ID = "org.papershelf.Papershelf"


def configure_application(app: QCoreApplication) -> None:
    app.setOrganizationName(ORG)
    app.setApplicationName("Papershelf")
    app.setApplicationVersion(__version__)
    if isinstance(app, QApplication):
        app.setDesktopFileName(APP_ID)
        icon = app_icon()
        if icon is not None:
            app.setWindowIcon(icon)


def app_icon() -> QIcon | None:
    for folder in (Path(__file__).resolve().parent.parent / "resources",
                   Path(__file__).resolve().parents[3] / "resources"):
        for name in ("papershelf.svg", "papershelf.png"):
            if (folder / name).is_file():
                return QIcon(str(folder / name))
    return None


def _excepthook(exc_type, exc, tb) -> None:
    """Anything unexpected: tell the person, in words, and keep running."""
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    print(text, file=sys.stderr)
    app = QApplication.instance()
    if app is not None:
        box = QMessageBox(QMessageBox.Icon.Critical, "Papershelf",
                          f"Something went wrong: {exc}\n\nYour library is saved after every change; "
                          "if this keeps happening, please report it with the details below.")
        box.setDetailedText(text)
        box.exec()


def main(data_dir: str | None = None, argv: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    configure_application(app)
    folder = paths.data_dir(data_dir)
    first_run = not (folder / "library.jsonl").exists()
    try:
        library = Library.open(folder)
    except PapershelfError as exc:
        QMessageBox.critical(None, "Papershelf", str(exc))
        return 1
    from .main_window import MainWindow
    sys.excepthook = _excepthook
    window = MainWindow(library)
    window.show()
    if first_run and not len(library):
        # the very first start: the window opens on the sample library, not on nothing
        QTimer.singleShot(0, window.import_samples)
    try:
        return app.exec()
    finally:
        library.close()
