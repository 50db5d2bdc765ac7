"""Starting the window: QApplication, one instance per library, logging, errors.

A second start on the same library does not open a second writer: it hands
the files it was given to the running Papershelf (a local socket in a folder
private to the user, see instance.py), which raises its window and imports them.
"""

from __future__ import annotations

import hashlib
import logging
import logging.handlers
import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from PySide6.QtCore import QCoreApplication, QEvent, QSettings, QTimer
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from .. import __version__, paths
from ..core.errors import PapershelfError, SingleInstanceError, StoreCorruptError
from ..core.library import Library
from ..desktop import APP_ID, resources_dir
from .instance import InstanceServer, hand_over

T = TypeVar("T")
ORG = "Papershelf"
log = logging.getLogger("papershelf")


def configure_application(app: QCoreApplication) -> None:
    """Give the application its names (settings are kept under them), desktop file and icon."""
    app.setOrganizationName(ORG)
    app.setApplicationName("Papershelf")
    app.setApplicationVersion(__version__)
    if isinstance(app, QGuiApplication):
        app.setDesktopFileName(APP_ID)
        icon = app_icon()
        if icon is not None:
            app.setWindowIcon(icon)


def app_icon() -> QIcon | None:
    """The application icon, None if the resources are missing."""
    try:
        return QIcon(str(resources_dir() / "papershelf.svg"))
    except FileNotFoundError:
        return None


# ---- logging ---------------------------------------------------------------


def log_file(library: Library) -> Path:
    """Where the window logs: this machine's state folder (never the library folder, which a
    sync tool may copy to other machines), one log per library and device."""
    try:
        real = library.folder.resolve()
    except OSError:
        real = library.folder.absolute()
    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
    return paths.state_dir() / "logs" / f"papershelf-{name}-{library.device}.log"


def setup_logging(library: Library) -> Path | None:
    """Rotating log in this machine's state folder (1 MB x 3); None if it cannot be written."""
    path = log_file(library)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


# ---- errors at the boundary ------------------------------------------------


class ErrorReporter:
    """sys.excepthook for the window: log it, tell the person, keep running."""

    def __init__(self, log_path: Path | None) -> None:
        self.log_path = log_path
        self.dialogs: list[QMessageBox] = []

    def __call__(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        """Log an uncaught exception and show it in a dialog (the window keeps running)."""
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unexpected error\n%s", details)
        print(details, file=sys.stderr)
        if QApplication.instance() is None:
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Papershelf", "")
        box.setObjectName("crashDialog")
        box.setText(
            QCoreApplication.translate("ErrorReporter", "Something went wrong: %s") % (exc or exc_type.__name__)
        )
        where = (
            QCoreApplication.translate("ErrorReporter", "The details are also in %s.") % self.log_path
            if self.log_path
            else ""
        )
        box.setInformativeText(
            QCoreApplication.translate(
                "ErrorReporter",
                "Your library is saved after every change, so nothing you did before this is lost. "
                "You can keep working; if it happens again, please report it with the details.",
            )
            + " "
            + where
        )
        box.setDetailedText(details)
        # parented: addButton alone leaves the button to Python, which frees it on return
        copy = QPushButton(QCoreApplication.translate("ErrorReporter", "Copy details"), box)
        copy.setObjectName("copyDetailsButton")
        box.addButton(copy, QMessageBox.ButtonRole.ActionRole)
        copy.clicked.disconnect()  # the button would close the box
        copy.clicked.connect(lambda: QApplication.clipboard().setText(details))
        box.addButton(QMessageBox.StandardButton.Close)
        box.finished.connect(lambda _=0, b=box: self.dialogs.remove(b) if b in self.dialogs else None)
        self.dialogs.append(box)
        box.open()


# ---- main ------------------------------------------------------------------


def open_library(folder: Path) -> Library | None:
    """Open the library; a damaged one is offered a repair (the same as `papershelf recover`)."""
    while True:
        try:
            return Library.open(folder)
        except StoreCorruptError as exc:
            box = QMessageBox(
                QMessageBox.Icon.Critical, "Papershelf", "Your library is damaged. Nothing has been changed yet."
            )
            box.setInformativeText(
                str(exc)
                .replace("Run 'papershelf recover'", "Choose Repair")
                .replace("run 'papershelf recover'", "choose Repair")
            )
            repair = box.addButton("Repair", QMessageBox.ButtonRole.AcceptRole)
            box.addButton(QMessageBox.StandardButton.Close)
            box.setDefaultButton(repair)
            box.exec()
            if box.clickedButton() is not repair:
                return None
            report = _run_with_busy_dialog(lambda: Library.recover(folder), "Repairing your library…")
            if isinstance(report, PapershelfError):
                QMessageBox.critical(None, "Papershelf", str(report))
                return None
            done = QMessageBox(QMessageBox.Icon.Information, "Papershelf", "The library was repaired.")
            done.setInformativeText(report)
            done.exec()
        except PapershelfError as exc:
            QMessageBox.critical(None, "Papershelf", str(exc))
            return None


def tidy_last_export_folder() -> threading.Thread | None:
    """An export killed mid-write leaves a hidden temporary file beside its target: the next
    start removes those of ours in the folder exported to last (off the GUI thread: it may be
    a slow network folder). Returns the thread."""
    folder = QSettings().value("export/folder", "", str)
    if not folder:
        return None
    worker = threading.Thread(
        target=Library.remove_stale_export_files, args=(folder,), daemon=True, name="tidy-exports"
    )
    worker.start()
    return worker


def _run_with_busy_dialog(fn: Callable[[], T], label: str) -> T | PapershelfError:
    """fn() on a worker thread while a busy dialog keeps the GUI responsive; its result or error."""
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QProgressDialog

    out: list[T | PapershelfError] = []

    def work() -> None:
        try:
            out.append(fn())
        except PapershelfError as exc:
            out.append(exc)
        except Exception as exc:  # shown, never lost: the window has not started yet
            log.exception("repair failed")
            out.append(
                PapershelfError(
                    f"The repair stopped with an unexpected error ({exc}); your "
                    "files were left as the repair found them."
                )
            )

    dialog = QProgressDialog(label, "", 0, 0)
    dialog.setCancelButton(None)  # a repair is not left half done
    dialog.setMinimumDuration(300)
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    loop = QEventLoop()
    timer = QTimer()
    timer.timeout.connect(lambda: loop.quit() if not worker.is_alive() else None)
    timer.start(20)
    loop.exec()
    timer.stop()
    dialog.close()
    return out[0]


def main(data_dir: str | None = None, argv: list[str] | None = None, files: list[str] | None = None) -> int:
    """Open the window on the library (handing `files` to a running one instead); the exit status."""
    files = list(files or [])
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    configure_application(app)
    from .library_folder import adopt_legacy_choice

    adopt_legacy_choice()
    try:
        folder = paths.data_dir(data_dir)  # the command line's library too (paths.py says why)
    except paths.SettingsError as exc:
        QMessageBox.critical(None, "Papershelf", str(exc))
        return 1
    try:
        if hand_over(folder, files):
            print(f"Papershelf is already running on {folder}; handed it over.")
            return 0
    except SingleInstanceError as exc:
        # nothing was handed over: open as usual (the store's lock says if the library is open elsewhere)
        log.warning("Nothing handed over to a running Papershelf: %s", exc)
    library = open_library(folder)
    if library is None:
        return 1
    sys.excepthook = ErrorReporter(setup_logging(library))
    from .dialogs import apply_theme

    apply_theme()
    from .main_window import MainWindow

    window = MainWindow(library)
    try:
        server = InstanceServer(folder, window)
    except SingleInstanceError as exc:
        log.warning("Later starts cannot hand their files to this window: %s", exc)
        server = None
    window.show()
    tidy_last_export_folder()
    if library.notices:
        QTimer.singleShot(0, lambda: QMessageBox.information(window, "Papershelf", "\n\n".join(library.notices)))
    # an empty library opens on the welcome view, the sample library one click away
    if files:
        QTimer.singleShot(0, lambda: window.transfers.import_files([Path(f) for f in files]))
    try:
        return app.exec()
    finally:
        if server is not None:
            server.close()
        # the window and its threads go before the application does, not when
        # Python collects them after it (a timer started then warns at exit)
        if window.isVisible():
            window.close()
        window.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        library.close()
