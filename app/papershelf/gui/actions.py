"""The window's menus, actions and shortcuts, and the keys its list and search box take.

Each action is the window's own (added to it, so its shortcut works wherever
the focus is), named so that tests and the paper menu find it. Undo and
Redo are the window's actions too, not the undo stack's: they wait while an
import runs, and say what they would undo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox

from ..core.paper import Status
from .import_export import keywords_as_tags, set_keywords_as_tags
from .keys import OPEN_PDF, PREFERENCES, REDO, keys
from .online import OnlineActions
from .paper_model import STATUS_LABELS
from .pdf_fetch import get_pdfs
from .stats import ReadingStatsView

if TYPE_CHECKING:
    from .main_window import MainWindow

Shortcut = QKeySequence | QKeySequence.StandardKey | None


def _edit_record(window: MainWindow) -> None:
    from .record_editor import edit_record  # loaded when first used, not at every start

    edit_record(window)


def _choose_and_suggest(window: MainWindow) -> None:
    from .suggest_dialog import choose_and_suggest  # loaded when first used, not at every start

    choose_and_suggest(window)


class WindowActions(QObject):
    """Builds the menu bar of `window` and keeps Undo and Redo up to date."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        w, transfers, edits = window, window.transfers, window.edits
        file_menu = w.menuBar().addMenu(self.tr("&File"))
        self.import_action = self._action(
            file_menu, self.tr("&Import…"), transfers.choose_files, QKeySequence.StandardKey.Open, "importAction"
        )
        self._action(
            file_menu,
            self.tr("Import Pasted &Text"),
            transfers.import_clipboard,
            QKeySequence("Ctrl+Shift+V"),
            "importPasteAction",
        )
        online = self.online = OnlineActions(w)  # Add by Identifier, Find Published Version (issue 14)
        self._action(
            file_menu,
            self.tr("Add by &Identifier…"),
            lambda: online.add_by_identifier(),
            QKeySequence.StandardKey.New,
            "addByIdentifierAction",
        )
        self._action(file_menu, self.tr("Open the &Sample Library"), transfers.import_samples, None, "samplesAction")
        # a record's keywords stay its keywords; this makes them tags too, as `import --keywords-as-tags`
        as_tags = self._action(
            file_menu, self.tr("&Keywords as Tags on Import"), lambda: None, None, "keywordsAsTagsAction"
        )
        as_tags.setCheckable(True)
        as_tags.setChecked(keywords_as_tags())
        as_tags.toggled.connect(set_keywords_as_tags)
        file_menu.addSeparator()
        self._action(
            file_menu,
            self.tr("&Export Selection…"),
            transfers.export_selection,
            QKeySequence("Ctrl+E"),
            "exportSelectionAction",
        )
        self._action(
            file_menu,
            self.tr("Export &Shown Papers…"),
            transfers.export_shown,
            QKeySequence("Ctrl+Shift+E"),
            "exportShownAction",
        )
        self._action(
            file_menu, self.tr("&Rebuild Search Index"), lambda: w.indexer.open(rebuild=True), None, "reindexAction"
        )
        file_menu.addSeparator()
        self._action(file_menu, self.tr("&Quit"), w.close, QKeySequence.StandardKey.Quit, "quitAction")

        edit = w.menuBar().addMenu(self.tr("&Edit"))
        # the window's own actions, not the stack's: they wait while an import runs
        undo = self.undo_action = QAction(self.tr("&Undo"), w)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        undo.setObjectName("undoAction")
        undo.triggered.connect(edits.undo)
        redo = self.redo_action = QAction(self.tr("&Redo"), w)
        redo.setShortcuts(keys(*REDO))
        redo.setObjectName("redoAction")
        redo.triggered.connect(edits.redo)
        stack = w.undo_stack
        for signal in (stack.canUndoChanged, stack.canRedoChanged):
            signal.connect(self.update_undo)
        for signal in (stack.undoTextChanged, stack.redoTextChanged):
            signal.connect(self.update_undo)
        self.update_undo()
        edit.addAction(undo)
        edit.addAction(redo)
        w.addAction(undo)
        w.addAction(redo)
        edit.addSeparator()
        self._action(edit, self.tr("&Find"), w.pane.focus_search, QKeySequence.StandardKey.Find, "findAction")
        self._action(edit, self.tr("Sa&ve Search…"), lambda: w.sidebar.saved.save_current(), None, "saveSearchAction")
        # the record editor: F2, the usual "edit this item" key; double-click on a row too (paper_menu.py)
        self._action(edit, self.tr("Edit R&ecord…"), lambda: _edit_record(w), QKeySequence("F2"), "editRecordAction")
        self._action(
            edit, self.tr("Add to Reading &List…"), edits.choose_list, QKeySequence("Ctrl+L"), "addToListAction"
        )
        self.delete_action = self._action(
            edit,
            self.tr("&Delete From Library…"),
            edits.delete_selected,
            QKeySequence.StandardKey.Delete,
            "deleteAction",
        )
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        w.paper_list.addAction(self.delete_action)
        from .duplicates import DuplicatesView  # its dialog is built on first use

        self.duplicates = DuplicatesView(w)
        self._action(edit, self.tr("Possible &Duplicates…"), self.duplicates.open, None, "duplicatesAction")
        self._action(edit, self.tr("Reading &Statistics…"), ReadingStatsView(w).open, None, "readingStatsAction")
        self._action(edit, self.tr("&Conflicts…"), w.conflicts.open, None, "conflictsAction")
        self._action(
            edit, self.tr("Find &Published Version…"), online.find_published_selected, None, "findPublishedAction"
        )
        self._action(
            edit,
            self.tr("Find Published Versions of Derived Titles…"),
            online.find_published_derived,
            None,
            "findPublishedDerivedAction",
        )
        self._action(edit, self.tr("Su&ggest Papers…"), lambda: _choose_and_suggest(w), None, "suggestAction")
        status_menu = edit.addMenu(self.tr("Mark &As"))
        for n, status in enumerate(Status, 1):
            self._action(
                status_menu,
                self.tr(STATUS_LABELS[status]),
                lambda _=False, s=status.value: edits.set_status(s),
                QKeySequence(f"Alt+{n}"),
                f"status{n}Action",
            )
        # 1-9 toggle the nine most used tags, only while the list has the focus (eventFilter)
        w.paper_list.installEventFilter(self)
        w.search_box.installEventFilter(self)  # Esc clears it

        edit.addSeparator()
        self._action(
            edit, self.tr("&Preferences…"), self.preferences, QKeySequence.StandardKey.Preferences, "preferencesAction"
        ).setShortcuts(keys(*PREFERENCES))

        # a paper's files (issue 24; gui/files_panel.py): they act on the current paper, so they are
        # the Paper menu's, not File's (whose actions all work on the library as a whole)
        paper_menu = self.paper_menu = w.menuBar().addMenu(self.tr("&Paper"))
        paper_menu.setObjectName("paperBarMenu")
        self._action(paper_menu, self.tr("&Open PDF"), w.files.open_pdf, None, "openPdfAction").setShortcuts(
            keys(*OPEN_PDF)
        )
        self._action(paper_menu, self.tr("&Attach Files…"), w.files.choose_and_attach, None, "attachFilesAction")
        self._action(paper_menu, self.tr("Get &PDF"), lambda: get_pdfs(online), None, "getPdfAction")  # online

        help_menu = w.menuBar().addMenu(self.tr("&Help"))
        self._action(
            help_menu,
            self.tr("&Keyboard Shortcuts"),
            self.show_shortcuts,
            QKeySequence.StandardKey.HelpContents,
            "shortcutsAction",
        )
        self._action(help_menu, self.tr("&About Papershelf"), self.about, None, "aboutAction")

    def _action(self, menu: QMenu, text: str, slot: Callable[..., object], shortcut: Shortcut, name: str) -> QAction:
        action = QAction(text, self.window)
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.window.addAction(action)
        return action

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc in the search box clears it; 1-9 on the paper list toggle the nine most used tags."""
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key, mods = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if watched is self.window.search_box and key == Qt.Key.Key_Escape and not mods:
                self.window.pane.clear_search()
                return True
            if (
                watched is self.window.paper_list
                and Qt.Key.Key_1 <= key <= Qt.Key.Key_9
                and mods == Qt.KeyboardModifier.NoModifier
            ):
                self.window.edits.toggle_top_tag(key - Qt.Key.Key_0)
                return True
        return super().eventFilter(watched, event)

    def update_undo(self, *_args: object) -> None:
        """Undo and Redo say what they would take back, and wait while an import runs."""
        stack = self.window.undo_stack
        if not shiboken6.isValid(stack):  # it clears itself (and says so) while the window is destroyed
            return
        busy = self.window.transfers.running()
        for action, prefix, can, text in (
            (self.undo_action, self.tr("&Undo"), stack.canUndo(), stack.undoText()),
            (self.redo_action, self.tr("&Redo"), stack.canRedo(), stack.redoText()),
        ):
            action.setEnabled(can and not busy)
            action.setText(f"{prefix} {text}" if text else prefix)

    # ---- the dialogs the menus open ------------------------------------------------
    def preferences(self) -> None:
        """Open the preferences (not modal)."""
        from .dialogs import PreferencesDialog

        dialog = PreferencesDialog(str(self.window.library.folder), self.window)
        dialog.open()
        self.preferences_dialog = dialog

    def show_shortcuts(self) -> None:
        """Open the list of keyboard shortcuts."""
        from .dialogs import ShortcutsDialog

        dialog = ShortcutsDialog(self.window)
        dialog.open()
        self.shortcuts_dialog = dialog

    def about(self) -> None:
        """The version, and where the library is."""
        from .. import __version__

        QMessageBox.about(
            self.window,
            self.tr("About Papershelf"),
            self.tr("<b>Papershelf %s</b><p>A reading-list manager for research papers.</p><p>Library: %s</p>")
            % (__version__, self.window.library.folder),
        )
