"""The tagging panel: tags as removable chips, status, rating, notes, lists.

Every control acts on the whole selection. The panel edits nothing itself:
it emits requests, and the window turns each into one undoable edit.
"""

from __future__ import annotations

from PySide6.QtCore import QDate, QEvent, QLocale, QPoint, QRect, QSize, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QPaintEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QCompleter,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QStyle,
    QStyleOptionToolButton,
    QStylePainter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.paper import Paper, Status, local_date, split_tags
from .filters import tag_color
from .paper_model import STATUS_LABELS

NOTES_DELAY_MS = 600


class FlowLayout(QLayout):
    """Lays chips out left to right, wrapping like text."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    # QLayout's own methods, which Qt calls
    def addItem(self, item: QLayoutItem) -> None:
        """Take a chip (Qt calls this for addWidget)."""
        self._items.append(item)

    def count(self) -> int:
        """How many chips the layout holds."""
        return len(self._items)

    def itemAt(self, i: int) -> QLayoutItem | None:
        """The i-th chip (None past the end)."""
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i: int) -> QLayoutItem | None:
        """Remove the i-th chip and hand it over (None past the end)."""
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        """Grows in neither direction beyond what its chips need."""
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        """Its height depends on its width (chips wrap)."""
        return True

    def heightForWidth(self, width: int) -> int:
        """The height the chips take when wrapped at `width`."""
        return self._place(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        """Place the chips in `rect`, wrapping like text."""
        super().setGeometry(rect)
        self._place(rect, apply=True)

    def sizeHint(self) -> QSize:
        """As small as the largest chip."""
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        """The size of the largest chip."""
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _place(self, rect: QRect, apply: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and line > 0:
                x, y, line = rect.x(), y + line + self._spacing, 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line = max(line, hint.height())
        return y + line - rect.y()


class _TagInput(QLineEdit):
    """The tag box: Ctrl+Z and Ctrl+Shift+Z edit its own text while it has an edit
    to undo or redo, and otherwise reach the window's Undo and Redo (a line edit
    takes them always, so Ctrl+Z right after tagging did nothing visible)."""

    def event(self, e: QEvent) -> bool:
        """Let Undo/Redo through to the window when this box has nothing to undo/redo."""
        if e.type() == QEvent.Type.ShortcutOverride and isinstance(e, QKeyEvent):
            undo = e.matches(QKeySequence.StandardKey.Undo) and not self.isUndoAvailable()
            redo = e.matches(QKeySequence.StandardKey.Redo) and not self.isRedoAvailable()
            if undo or redo:
                e.ignore()
                return True
        return super().event(e)


class StatusButton(QToolButton):
    """A status button that, checked, is drawn in the palette's highlight colours: the
    style's own pressed look (Fusion: the button colour 10% darker) is all but invisible
    on a dark palette. The colours are read at each paint, so a theme switch shows at once."""

    def paintEvent(self, event: QPaintEvent) -> None:
        """The style's tool button, in highlight colours when checked."""
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        if self.isChecked():
            palette = QPalette(option.palette)
            palette.setColor(QPalette.ColorRole.Button, palette.color(QPalette.ColorRole.Highlight))
            palette.setColor(QPalette.ColorRole.ButtonText, palette.color(QPalette.ColorRole.HighlightedText))
            option.palette = palette
        QStylePainter(self).drawComplexControl(QStyle.ComplexControl.CC_ToolButton, option)


class TagPanel(QWidget):
    """Tags, status, rating, notes and reading lists of the selected papers, as requests."""

    addTagsRequested = Signal(list)  # tag names
    removeTagRequested = Signal(str)
    statusRequested = Signal(str)  # a Status value
    ratingRequested = Signal(object)  # 1-5 or None
    notesEdited = Signal(str, str)  # paper id, text (after a pause in typing)
    addToListRequested = Signal(str)  # list name ("" = ask for a new one)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tagPanel")
        self.setAccessibleName(self.tr("Tags and status"))
        self._ids: list[str] = []
        self._notes_for: str | None = None
        self._notes_typed_for: str | None = None  # the paper whose notes were typed, not yet saved
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        self.heading = QLabel(self.tr("No paper selected"))
        self.heading.setObjectName("selectionLabel")
        layout.addWidget(self.heading)

        self.chips = QWidget()
        self.chips.setObjectName("tagChips")
        self.chips.setAccessibleName(self.tr("Tags of the selection"))
        self._flow = FlowLayout(self.chips)
        self.chips.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout.addWidget(self.chips)

        self.tag_input = _TagInput()
        self.tag_input.setObjectName("tagInput")
        self.tag_input.setAccessibleName(self.tr("Add tags"))
        self.tag_input.setPlaceholderText(self.tr("Add tags (comma-separated), Enter"))
        self._completion = QStringListModel(self)
        completer = QCompleter(self._completion, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.tag_input.setCompleter(completer)
        self.tag_input.returnPressed.connect(self._add_typed_tags)
        layout.addWidget(self.tag_input)

        self.key_tags = QLabel()
        self.key_tags.setObjectName("keyTagsLabel")
        self.key_tags.setAccessibleName(self.tr("Tags on keys 1 to 9"))
        self.key_tags.setWordWrap(True)
        self.key_tags.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.key_tags)

        self.status_picker = QWidget()
        self.status_picker.setObjectName("statusPicker")
        self.status_picker.setAccessibleName(self.tr("Reading status"))
        row = QHBoxLayout(self.status_picker)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        self.status_buttons = QButtonGroup(self)
        self.status_buttons.setExclusive(False)  # a mixed selection shows none checked
        for n, status in enumerate(Status, 1):
            button = StatusButton()
            button.setText(self.tr(STATUS_LABELS[status]))
            button.setCheckable(True)
            button.setObjectName(f"status-{status.value}")
            button.setAccessibleName(self.tr("Mark as %s") % self.tr(STATUS_LABELS[status]))
            button.setToolTip(self.tr("Mark as %s (Alt+%d)") % (self.tr(STATUS_LABELS[status]), n))
            button.setProperty("status", status.value)
            self.status_buttons.addButton(button)
            row.addWidget(button)
        row.addStretch(1)
        self.status_buttons.buttonClicked.connect(self._status_clicked)
        layout.addWidget(self.status_picker)
        self.status_date = QLabel()  # "Read on 30 Nov 2026" under the status picker
        self.status_date.setObjectName("statusDateLabel")
        self.status_date.setAccessibleName(self.tr("When the status was set"))
        self.status_date.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.status_date)

        line = QHBoxLayout()
        self.rating = QComboBox()
        self.rating.setObjectName("ratingPicker")
        self.rating.setAccessibleName(self.tr("Rating"))
        self.rating.addItem(self.tr("No rating"), None)
        for n in range(1, 6):
            self.rating.addItem("★" * n, n)
        self.rating.activated.connect(lambda i: self.ratingRequested.emit(self.rating.itemData(i)))
        line.addWidget(self.rating)
        self.list_button = QToolButton()
        self.list_button.setObjectName("addToListButton")
        self.list_button.setText(self.tr("Add to reading list"))
        self.list_button.setAccessibleName(self.tr("Add to reading list"))
        self.list_button.setToolTip(self.tr("Add the selection to a reading list (Ctrl+L)"))
        self.list_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.list_menu = QMenu(self.list_button)
        self.list_button.setMenu(self.list_menu)
        line.addWidget(self.list_button)
        line.addStretch(1)
        layout.addLayout(line)

        self.notes = QPlainTextEdit()
        self.notes.setObjectName("notesEdit")
        self.notes.setAccessibleName(self.tr("Notes"))
        self.notes.setPlaceholderText(self.tr("Notes (saved as you type)"))
        self._notes_timer = QTimer(self)
        self._notes_timer.setSingleShot(True)
        self._notes_timer.setInterval(NOTES_DELAY_MS)
        self._notes_timer.timeout.connect(self.flush_notes)
        self.notes.textChanged.connect(self._notes_typed)
        layout.addWidget(self.notes, 1)
        self._loading = False
        self.show_selection([])

    # ---- showing the selection ---------------------------------------------
    def set_known_tags(self, tags: list[str]) -> None:
        """The tags the input completes."""
        self._completion.setStringList(tags)

    def set_lists(self, names: list[str]) -> None:
        """The reading lists the list button's menu offers, then a new one."""
        self.list_menu.clear()
        for name in names:
            self.list_menu.addAction(name).triggered.connect(lambda _=False, n=name: self.addToListRequested.emit(n))
        if names:
            self.list_menu.addSeparator()
        self.list_menu.addAction(self.tr("New reading list…"), lambda: self.addToListRequested.emit(""))

    def minimumSizeHint(self) -> QSize:
        """Tall enough for the key tags wrapped at the panel's width, with the chips: a
        splitter squeezing the panel below that drew them over the tag box (1366x768)."""
        hint = super().minimumSizeHint()
        extra = 0
        for part in (self.key_tags, self.chips):
            if part.isVisible() and part.hasHeightForWidth():
                extra += max(0, part.heightForWidth(part.width()) - part.minimumSizeHint().height())
        return QSize(hint.width(), hint.height() + extra)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new width wraps the key tags and chips anew: the minimum height follows."""
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()

    def changeEvent(self, event: QEvent) -> None:
        """A new palette (light or dark chosen in Preferences): the chips' style sheets
        are applied again, or they keep the colours of the palette they were made in."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            for i in range(self._flow.count()):
                item = self._flow.itemAt(i)
                chip = item.widget() if item is not None else None
                if chip is not None:
                    chip.setStyleSheet(chip.styleSheet())

    def set_key_tags(self, tags: list[str]) -> None:
        """Show which tag each of the keys 1-9 toggles (on the paper list)."""
        self.key_tags.setVisible(bool(tags))
        self.key_tags.setText(self.tr("Keys: %s") % "   ".join(f"{n} {t}" for n, t in enumerate(tags, 1)))
        self.key_tags.setToolTip(
            self.tr(
                "With the paper list focused, a number key adds its tag to the "
                "selection, or removes it if every selected paper has it."
            )
        )
        self.updateGeometry()

    def show_selection(self, papers: list[Paper]) -> None:
        """Show what these papers (the selection) have; unsaved notes are saved first."""
        self.flush_notes()
        self._loading = True
        self._ids = [p.id for p in papers]
        n = len(papers)
        self.heading.setText(
            self.tr("No paper selected") if not n else self.tr("1 paper") if n == 1 else self.tr("%d papers") % n
        )
        for w in (self.tag_input, self.status_picker, self.rating, self.list_button):
            w.setEnabled(bool(n))
        # chips: the union of the selection's tags; "(k/n)" when not all have it
        while self._flow.count():
            item = self._flow.takeAt(0)
            old = item.widget() if item is not None else None
            if old is not None:
                old.deleteLater()
        counts: dict[str, int] = {}
        for p in papers:
            for t in p.tags:
                counts[t] = counts.get(t, 0) + 1
        for tag in sorted(counts):
            chip = QToolButton()
            chip.setObjectName(f"chip-{tag}")
            label = tag if counts[tag] == n else f"{tag} ({counts[tag]}/{n})"
            chip.setText(f"{label}  ✕")
            chip.setAccessibleName(self.tr("Remove tag %s") % tag)
            chip.setToolTip(self.tr("Remove %s from the selection") % tag)
            color = tag_color(tag)
            chip.setStyleSheet(
                "QToolButton { border: 1px solid #d0d7de; border-radius: 9px; padding: 1px 6px;"
                + (f" background: {color};" if color else "")
                + " }"
            )
            chip.clicked.connect(lambda _=False, t=tag: self.removeTagRequested.emit(t))
            self._flow.addWidget(chip)
        self.chips.updateGeometry()
        self.updateGeometry()  # the chips may wrap to more lines
        statuses = {p.status for p in papers}
        for button in self.status_buttons.buttons():
            button.setChecked(len(statuses) == 1 and button.property("status") == next(iter(statuses)).value)
        dated = self._status_date(papers[0]) if n == 1 else ""
        self.status_date.setText(dated)
        self.status_date.setVisible(bool(dated))
        ratings = {p.rating for p in papers}
        self.rating.setCurrentIndex(self.rating.findData(next(iter(ratings))) if len(ratings) == 1 else 0)
        self.notes.setEnabled(n == 1)
        self._notes_for = papers[0].id if n == 1 else None
        notes = papers[0].notes if n == 1 else ""
        if self.notes.toPlainText() != notes:  # the same text (another device's edit of the paper
            self.notes.setPlainText(notes)  # shown arrived): the cursor stays where it is typed
        if n > 1:
            self.notes.setPlaceholderText(self.tr("Notes are per paper: select one"))
        else:
            self.notes.setPlaceholderText(self.tr("Notes (saved as you type)"))
        self._loading = False

    def _status_date(self, paper: Paper) -> str:
        """When the paper became Read or Reading, in words ("" when it is neither)."""
        locale = QLocale()

        def day(stamp: str) -> str:
            date = local_date(stamp)
            return locale.toString(QDate(date.year, date.month, date.day), "d MMM yyyy") if date else ""

        read, reading = day(paper.read_at), day(paper.reading_at)
        if paper.status is Status.READ:
            if not read:
                return self.tr("Marked Read before Papershelf kept the date")
            return self.tr("Read on %s (started %s)") % (read, reading) if reading else self.tr("Read on %s") % read
        if paper.status is Status.READING and reading:
            return self.tr("Reading since %s") % reading
        return ""

    def chip_labels(self) -> list[str]:
        """The chips' texts, as shown (without the ✕)."""
        items = (self._flow.itemAt(i) for i in range(self._flow.count()))
        chips = [item.widget() for item in items if item is not None]
        return [chip.text().removesuffix("  ✕") for chip in chips if isinstance(chip, QToolButton)]

    # ---- requests ------------------------------------------------------------
    def _add_typed_tags(self) -> None:
        tags = split_tags(self.tag_input.text())
        if tags and self._ids:
            self.addTagsRequested.emit(tags)
        # setText, not clear(): clear() is an edit the box could undo, and Ctrl+Z
        # right after tagging must undo the tag (the status line says so)
        self.tag_input.setText("")

    def _status_clicked(self, button) -> None:
        self.statusRequested.emit(button.property("status"))

    def _notes_typed(self) -> None:
        if not self._loading and self._notes_for:
            self._notes_typed_for = self._notes_for
            self._notes_timer.start()

    def flush_notes(self) -> None:
        """Save notes typed but not yet saved (called before the selection changes)."""
        if self._notes_timer.isActive():
            self._notes_timer.stop()
        # only what was typed: showing a paper's notes is no edit (the box may show them
        # changed: a carriage return an older version stored shows as a line break)
        if self._notes_for and not self._loading and self._notes_typed_for == self._notes_for:
            self._notes_typed_for = None
            text = self.notes.toPlainText()
            self.notesEdited.emit(self._notes_for, text)
