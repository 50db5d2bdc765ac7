"""Starting the window: QApplication, one instance per library, logging, errors.

A second start on the same library does not open a second writer: it hands
the files it was given to the running Papershelf (a QLocalServer named after
the library folder), which raises its window and imports them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import logging.handlers
import os
import sys
import traceback
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, QTimer
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from .. import __version__, paths
from ..core.errors import PapershelfError
from ..core.library import Library
from ..desktop import APP_ID, resources_dir

ORG = "Papershelf"
log = logging.getLogger("papershelf")


def configure_application(app: QCoreApplication) -> None:
    app.setOrganizationName(ORG)
    app.setApplicationName("Papershelf")
    app.setApplicationVersion(__version__)
    if isinstance(app, QGuiApplication):
        app.setDesktopFileName(APP_ID)
        icon = app_icon()
        if icon is not None:
            app.setWindowIcon(icon)


def app_icon() -> QIcon | None:
    try:
        return QIcon(str(resources_dir() / "papershelf.svg"))
    except FileNotFoundError:
        return None


# ---- logging ---------------------------------------------------------------

def log_file(folder: Path) -> Path:
    return folder / "logs" / "papershelf.log"


def setup_logging(folder: Path) -> Path | None:
    """Rotating log in the library folder (1 MB x 3); None if it cannot be written."""
    path = log_file(folder)
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

    def __init__(self, log_path: Path | None):
        self.log_path = log_path
        self.dialogs: list[QMessageBox] = []

    def __call__(self, exc_type, exc, tb) -> None:
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        log.error("unexpected error\n%s", details)
        print(details, file=sys.stderr)
        if QApplication.instance() is None:
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Papershelf", "")
        box.setObjectName("crashDialog")
        box.setText(QCoreApplication.translate("ErrorReporter", "Something went wrong: %s") % (exc or exc_type.__name__))
        where = (QCoreApplication.translate("ErrorReporter", "The details are also in %s.") % self.log_path
                 if self.log_path else "")
        box.setInformativeText(QCoreApplication.translate(
            "ErrorReporter", "Your library is saved after every change, so nothing you did before this is lost. "
            "You can keep working; if it happens again, please report it with the details.") + " " + where)
        box.setDetailedText(details)
        # parented: addButton alone leaves the button to Python, which frees it on return
        copy = QPushButton(QCoreApplication.translate("ErrorReporter", "Copy details"), box)
        copy.setObjectName("copyDetailsButton")
        box.addButton(copy, QMessageBox.ButtonRole.ActionRole)
        copy.clicked.disconnect()          # the button would close the box
        copy.clicked.connect(lambda: QApplication.clipboard().setText(details))
        box.addButton(QMessageBox.StandardButton.Close)
        box.finished.connect(lambda _=0, b=box: self.dialogs.remove(b) if b in self.dialogs else None)
        self.dialogs.append(box)
        box.open()


# ---- one instance per library ----------------------------------------------

def server_name(folder: Path) -> str:
    digest = hashlib.sha1(str(Path(folder).expanduser().resolve()).encode("utf-8")).hexdigest()[:16]
    return f"papershelf-{digest}"


def hand_over(folder: Path, files: list[str], timeout_ms: int = 1000) -> bool:
    """If a Papershelf runs on this library, give it the files (and the focus); True if one did."""
    sock = QLocalSocket()
    sock.connectToServer(server_name(folder))
    if not sock.waitForConnected(timeout_ms):
        return False
    payload = json.dumps({"files": [str(Path(f).resolve()) for f in files]}).encode("utf-8") + b"\n"
    sock.write(payload)
    sock.flush()
    if sock.bytesToWrite():
        sock.waitForBytesWritten(timeout_ms)
    # the running one answers once it has taken them
    ok = sock.waitForReadyRead(timeout_ms * 5) and bytes(sock.readLine()).startswith(b"ok")
    sock.disconnectFromServer()
    return ok


class InstanceServer:
    """Listens for later starts on the same library."""

    def __init__(self, folder: Path, window):
        self.window = window
        self.server = QLocalServer()
        name = server_name(folder)
        if not self.server.listen(name):
            QLocalServer.removeServer(name)      # left behind by a crash
            self.server.listen(name)
        self.server.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            sock.readyRead.connect(lambda s=sock: self._read(s))

    def _read(self, sock) -> None:
        if not sock.canReadLine():
            return
        try:
            message = json.loads(bytes(sock.readLine()).decode("utf-8"))
        except ValueError:
            sock.disconnectFromServer()
            return
        sock.write(b"ok\n")
        sock.flush()
        w = self.window
        w.showNormal()
        w.raise_()
        w.activateWindow()
        files = [Path(f) for f in message.get("files", []) if Path(f).exists()]
        if files:
            w.import_files(files)

    def close(self) -> None:
        self.server.close()


# ---- main ------------------------------------------------------------------

def main(data_dir: str | None = None, argv: list[str] | None = None, files: list[str] | None = None) -> int:
    files = list(files or [])
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    configure_application(app)
    if not data_dir and not os.environ.get(paths.ENV_DATA_DIR):
        data_dir = QSettings().value("library/folder", "", str) or None   # Preferences
    folder = paths.data_dir(data_dir)
    if hand_over(folder, files):
        print(f"Papershelf is already running on {folder}; handed it over.")
        return 0
    try:
        library = Library.open(folder)
    except PapershelfError as exc:
        QMessageBox.critical(None, "Papershelf", str(exc))
        return 1
    sys.excepthook = ErrorReporter(setup_logging(folder))
    from .dialogs import apply_theme
    apply_theme()
    from .main_window import MainWindow
    window = MainWindow(library)
    server = InstanceServer(folder, window)
    window.show()
    # an empty library opens on the welcome view, the sample library one click away
    if files:
        QTimer.singleShot(0, lambda: window.import_files([Path(f) for f in files]))
    try:
        return app.exec()
    finally:
        server.close()
        library.close()
