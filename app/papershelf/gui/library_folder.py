"""Which library the window shows: its title and status bar say it, Preferences chooses the default.

The default library is kept by `paths` (a plain settings file the command
line reads too), not in QSettings: whatever a start without --data-dir opens
in the window, `papershelf list` reads as well.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QMainWindow, QPushButton, QVBoxLayout, QWidget

from .. import paths

log = logging.getLogger("papershelf")
LEGACY_KEY = "library/folder"  # where Preferences kept the folder before, read by the window only


def _tr(text: str) -> str:
    return QCoreApplication.translate("LibraryFolder", text)


def shown(folder: Path) -> str:
    """A folder as the title shows it: the home folder as ~."""
    try:
        return "~/" + str(folder.relative_to(Path.home()))
    except ValueError:
        return str(folder)


def source_of(folder: Path) -> str:
    """Why the window shows this library: what a start without --data-dir opens, or --data-dir."""
    try:
        choice = paths.library_choice()
    except paths.SettingsError:  # the window started all the same: on --data-dir or $PAPERSHELF_DATA_DIR
        return paths.FROM_ENV if os.environ.get(paths.ENV_DATA_DIR) else paths.FROM_OPTION
    if choice.folder.expanduser().absolute() == folder.expanduser().absolute():
        return choice.source
    return paths.FROM_OPTION


def adopt_legacy_choice() -> None:
    """A folder the window's Preferences saved in QSettings before becomes the shared default
    library (unless one is chosen already), and leaves QSettings: one place says which library."""
    s = QSettings()
    legacy = s.value(LEGACY_KEY, "", str)
    if not legacy:
        return
    try:
        if paths.chosen_library() is None:
            paths.set_chosen_library(str(legacy))
    except paths.SettingsError as exc:
        log.warning("The library folder of the old preferences was kept where it was: %s", exc)
        return
    s.remove(LEGACY_KEY)


def show_library(window: QMainWindow, folder: Path) -> QLabel:
    """Put the library's folder in the window's title and, with where it came from, in its status bar."""
    window.setWindowTitle(_tr("Papershelf — %s") % shown(folder))
    label = QLabel(_tr("Library: %s") % folder)
    label.setObjectName("libraryFolderStatus")
    source = source_of(folder)  # said once, at the start: a default chosen later opens next time
    window.setProperty("librarySource", source)
    label.setToolTip(_tr("Why this library: %s") % source)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    window.statusBar().addPermanentWidget(label)
    return label


class DefaultLibraryRow(QWidget):
    """Preferences' row for the default library: the folder, Change…, and what this window shows if
    that is another one. Saved only when changed (a one-off --data-dir stays one-off)."""

    def __init__(self, current_folder: str, parent: QWidget | None = None, source: str = "") -> None:
        super().__init__(parent)
        self.source = source  # where this window's library came from at its start
        try:
            chosen = paths.chosen_library()
            problem = ""
        except paths.SettingsError as exc:
            chosen, problem = None, str(exc)
        self.initial = str(chosen or paths.platform_data_dir())
        self.folder = QLabel(self.initial)
        self.folder.setObjectName("libraryFolderLabel")
        self.folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        change = QPushButton(_tr("Change…"))
        change.setObjectName("changeFolderButton")
        change.clicked.connect(self._choose_folder)
        self.note = QLabel(problem or self._note(Path(current_folder)))
        self.note.setObjectName("libraryFolderNote")
        self.note.setWordWrap(True)
        self.note.setVisible(bool(self.note.text()))
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.folder, 1)
        row.addWidget(change)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.note)

    def _note(self, current: Path) -> str:
        if os.environ.get(paths.ENV_DATA_DIR):
            return _tr("$%s is set, so starts use %s instead of the default library.") % (
                paths.ENV_DATA_DIR,
                os.environ[paths.ENV_DATA_DIR],
            )
        if current.expanduser().absolute() == Path(self.initial).expanduser().absolute():
            return ""
        if self.source == paths.FROM_OPTION:
            return _tr("This window shows %s, given with --data-dir for this start only.") % current
        return (
            _tr(
                "This window shows %s; the default library above opens from the next start "
                "(the command line uses it already)."
            )
            % current
        )

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, _tr("Default library folder"), self.folder.text())
        if folder:
            self.folder.setText(folder)

    def changed(self) -> bool:
        """Whether the person chose another folder."""
        return self.folder.text() != self.initial

    def save(self) -> bool:
        """Keep the chosen folder as the default library, if it changed; False, with the problem
        said under the folder and nothing saved, if it cannot be kept."""
        if not self.changed():
            return True
        try:
            paths.set_chosen_library(self.folder.text())
        except paths.SettingsError as exc:
            self.note.setText(str(exc))
            self.note.show()
            return False
        return True
