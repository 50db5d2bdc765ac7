"""Preferences and the keyboard-shortcut list."""

from __future__ import annotations

import html

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

THEMES = {"system": "Follow the system", "light": "Light", "dark": "Dark"}
DIALECTS = {"bibtex": "BibTeX (classic styles, for bibtex)", "biblatex": "BibLaTeX (for biber)"}


def search_as_you_type() -> bool:
    """Whether the list follows each key typed in the search box (else: on Enter)."""
    return bool(QSettings().value("search/asYouType", True, bool))


def apply_theme(theme: str | None = None) -> None:
    """Light, dark, or the system's colours. Platforms with a theme switch
    through Qt's colour scheme; elsewhere (plain X11) a dark choice sets a dark
    Fusion palette itself."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if not isinstance(app, QApplication):  # none yet, or one without widgets: nothing to colour
        return
    theme = theme or str(QSettings().value("appearance/theme", "system", str))
    hints = QGuiApplication.styleHints()
    scheme = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}.get(theme, Qt.ColorScheme.Unknown)
    if hasattr(hints, "setColorScheme"):
        hints.setColorScheme(scheme)
    wants_dark = theme == "dark" or (theme == "system" and hints.colorScheme() == Qt.ColorScheme.Dark)
    looks_dark = app.palette().window().color().lightness() < 128
    if wants_dark and not looks_dark:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    elif theme == "light" and looks_dark:
        app.setStyle("Fusion")
        app.setPalette(app.style().standardPalette())


def dark_palette() -> QPalette:
    """The dark Fusion palette, for platforms without a colour-scheme switch."""
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#232427",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2b2c2f",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.Highlight: "#2f6fde",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#2b2c2f",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.BrightText: "#ffffff",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7378"))
    return p


class PreferencesDialog(QDialog):
    """Library folder, export dialect, search as you type, theme; saved on OK."""

    def __init__(self, current_folder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle(self.tr("Preferences"))
        s = QSettings()
        form = QFormLayout()
        folder_row = QWidget()
        row = QHBoxLayout(folder_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.folder = QLabel(str(s.value("library/folder", "", str)) or current_folder)
        self.folder.setObjectName("libraryFolderLabel")
        self.folder.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        change = QPushButton(self.tr("Change…"))
        change.setObjectName("changeFolderButton")
        change.clicked.connect(self._choose_folder)
        row.addWidget(self.folder, 1)
        row.addWidget(change)
        form.addRow(self.tr("Library folder (used from the next start)"), folder_row)
        self.dialect = QComboBox()
        self.dialect.setObjectName("dialectPicker")
        for key, label in DIALECTS.items():
            self.dialect.addItem(self.tr(label), key)
        self.dialect.setCurrentIndex(max(0, self.dialect.findData(s.value("export/dialect", "bibtex", str))))
        form.addRow(self.tr("BibTeX export"), self.dialect)
        self.as_you_type = QCheckBox(self.tr("Search as you type (otherwise on Enter)"))
        self.as_you_type.setObjectName("searchAsYouType")
        self.as_you_type.setChecked(search_as_you_type())
        form.addRow(self.tr("Search"), self.as_you_type)
        self.theme = QComboBox()
        self.theme.setObjectName("themePicker")
        for key, label in THEMES.items():
            self.theme.addItem(self.tr(label), key)
        self.theme.setCurrentIndex(max(0, self.theme.findData(s.value("appearance/theme", "system", str))))
        form.addRow(self.tr("Appearance"), self.theme)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Library folder"), self.folder.text())
        if folder:
            self.folder.setText(folder)

    def accept(self) -> None:
        """Save the choices (the folder is used from the next start) and apply the theme."""
        s = QSettings()
        s.setValue("library/folder", self.folder.text())
        s.setValue("export/dialect", self.dialect.currentData())
        s.setValue("search/asYouType", self.as_you_type.isChecked())
        s.setValue("appearance/theme", self.theme.currentData())
        apply_theme(self.theme.currentData())
        super().accept()


SHORTCUTS = [
    ("Ctrl+F", "Search"),
    ("Esc", "Clear the search (in the search box)"),
    ("1 … 9", "Toggle your nine most used tags on the selection (in the list)"),
    ("Alt+1 … Alt+5", "Mark as unread, to read, reading, read, skipped"),
    ("Ctrl+L", "Add the selection to a reading list"),
    ("F2 or double-click", "Edit the current paper's record (type, key, authors, every field)"),
    ("Ctrl+N", "Add papers by DOI or arXiv id (fetched online)"),
    ("Delete", "Remove the selection from the library"),
    ("Ctrl+Z", "Undo"),
    ("Ctrl+Shift+Z or Ctrl+Y", "Redo"),
    ("Ctrl+O", "Import files"),
    ("Ctrl+Shift+V", "Import a listing from the clipboard"),
    ("Ctrl+E", "Export the selection (BibTeX, BibLaTeX or RIS)"),
    ("Ctrl+Shift+E", "Export the shown papers (BibTeX, BibLaTeX or RIS)"),
    ("Ctrl+,", "Preferences"),
    ("F1", "This list"),
    ("Ctrl+Q", "Quit"),
]


class ShortcutsDialog(QDialog):
    """The keyboard shortcuts, in a table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        view = QTextBrowser()
        rows = "".join(
            f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(self.tr(v))}</td></tr>"
            for k, v in SHORTCUTS
        )
        view.setHtml(f"<table cellpadding='3'>{rows}</table>")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(view)
        layout.addWidget(buttons)
        self.resize(520, 460)
