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
    QFormLayout,
    QLabel,
    QLineEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from .library_folder import DefaultLibraryRow

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
    """Default library folder, export dialect, search as you type, theme; saved on OK."""

    def __init__(self, current_folder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle(self.tr("Preferences"))
        s = QSettings()
        form = QFormLayout()
        source = parent.property("librarySource") if parent is not None else None
        self.library_row = DefaultLibraryRow(current_folder, source=source if isinstance(source, str) else "")
        form.addRow(self.tr("Default library (from the next start; the command line's too)"), self.library_row)
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
        self._add_online_rows(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def _add_online_rows(self, form: QFormLayout) -> None:
        from .online import online_allowed

        s = QSettings()
        self.online = QCheckBox(self.tr("Look papers up online (arXiv, Crossref, OpenAlex, Semantic Scholar, doi.org)"))
        self.online.setObjectName("onlineAllowed")
        self.online.setToolTip(
            self.tr(
                "Sends identifiers, and to find a published version distinctive phrases of the "
                "abstract, the title and the authors. Tags, notes and reading lists are never sent."
            )
        )
        self.online.setChecked(bool(online_allowed()))
        form.addRow(self.tr("Online"), self.online)
        self.email = QLineEdit(str(s.value("online/email", "", str) or ""))
        self.email.setObjectName("contactEmail")
        self.email.setAccessibleName(self.tr("Contact e-mail"))
        self.email.setPlaceholderText(self.tr("you@example.org (optional)"))
        self.email.setToolTip(self.tr("Sent to Crossref and OpenAlex, whose polite pools answer faster."))
        form.addRow(self.tr("Contact e-mail"), self.email)
        self.email_problem = QLabel()
        self.email_problem.setObjectName("contactEmailProblem")
        self.email_problem.setWordWrap(True)
        self.email_problem.hide()
        form.addRow("", self.email_problem)

    def accept(self) -> None:
        """Save the choices (a folder chosen is the default library from the next start) and apply the theme;
        an e-mail that does not look like one is shown, and nothing saved."""
        from .online import email_problem, online_allowed, set_online_allowed

        problem = email_problem(self.email.text())
        if problem:
            self.email_problem.setText(problem)
            self.email_problem.show()
            self.email.setFocus()
            return
        if not self.library_row.save():  # only a folder the person chose: a --data-dir stays one-off
            return
        # never asked and left unchecked: still never asked (the first look-up asks)
        if self.online.isChecked() or online_allowed() is not None:
            set_online_allowed(self.online.isChecked())
        s = QSettings()
        s.setValue("online/email", self.email.text().strip())
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
    ("Ctrl+Shift+O", "Open the current paper's PDF in the system's viewer"),
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
