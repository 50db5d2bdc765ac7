"""Edit ▸ Edit Record: a paper's bibliographic record in a form, saved as one undoable step.

The dialog shows the entry type, the citation key, the title, the authors
(`NameList`) and every field, grouped by what the BibLaTeX data model says
of the chosen type: required, identifiers, optional, and the others the
record has. OK sends the library only the values that changed
(`Library.edit_record`), so a field nobody touched stays byte for byte as
the .bib file gave it; the library validates, and a value it refuses is
shown here in its words with nothing changed.

The dialog is window-modal: while it is open the paper cannot change under
it (no undo, import, delete or other edit of the window can run), so what
it calls "changed" is measured against the record the library still holds.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeyEvent, QKeySequence, QPalette, QUndoCommand
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core import record_edit
from ..core.biblio import identifiers, types
from ..core.errors import PapershelfError
from ..core.library import Library
from ..core.paper import Record
from .commands import keep_later_keys
from .name_list import NameList

if TYPE_CHECKING:
    from .main_window import MainWindow

IDENTIFIERS = record_edit.IDENTIFIERS
SHOWN_APART = frozenset({"title", "author", "entrytype", "citekey", *record_edit.NOT_EDITED_HERE})  # not field rows
DISPLAY_FIELDS = frozenset({"year", "date", "venue", "doi", "eprint", "url"})  # editor_view has them always
LONG_FIELDS = frozenset({"note", "annotation", "annote", "addendum", "comment"})
FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_:.+-]*\Z")
# a light check as typed: what is left once the one DOI rule took off a resolver or doi: prefix
DOI = re.compile(r"10\.\d{3,9}/\S+\Z", re.IGNORECASE)
ARXIV = re.compile(r"(?:arxiv:)?(?:\d{4}\.\d{4,5}|[a-z][a-z.-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?\Z", re.IGNORECASE)
ARXIV_URL = re.compile(r"https?://arxiv\.org/(?:abs|pdf)/", re.IGNORECASE)
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+\Z", re.IGNORECASE)
LINE_BREAKS = str.maketrans({"\u2029": "\n", "\u2028": "\n"})  # a box's paragraph ends, Shift+Return's breaks


def tr(text: str) -> str:
    """`text` in the user's language (the editor's translation context)."""
    return QCoreApplication.translate("RecordEditor", text)


def field_label(name: str, entrytype: str = "") -> str:
    """How a field is named in the form ("doi" → "DOI", "venue" → "Journal" for an article)."""
    return tr(record_edit.field_label(name, entrytype))


def identifier_problem(name: str, value: str, eprint_type: str = "") -> str:
    """A light check of an identifier as typed; "" when it looks right (or is empty)."""
    value = value.strip()
    if not value:
        return ""
    if name == "doi" and not DOI.match(identifiers.clean_doi(value)):
        return tr("A DOI starts with 10. and a slash follows its prefix, as in 10.1145/3290605.3300520.")
    arxiv = ARXIV_URL.sub("", value).removesuffix(".pdf")
    if name == "eprint" and eprint_type.strip().lower() in ("", "arxiv") and not ARXIV.match(arxiv):
        return tr("An arXiv id looks like 2401.01234 (or hep-th/9901001 for older papers).")
    if name == "url" and not URL.match(value):
        return tr("A URL starts with https:// (or http://) and holds no spaces.")
    return ""


def type_label(entrytype: str) -> str:
    """How the type combo names a type off the short list: BibLaTeX's own as it is, an alias
    with the type BibLaTeX reads it as, and one the data model does not know as such."""
    kind = entrytype.lower()
    if kind in types.ALIASES:
        return tr("%s (BibLaTeX reads it as %s)") % (entrytype, types.ALIASES[kind])
    if kind in types.KNOWN_TYPES:
        return entrytype
    return tr("%s (not a BibLaTeX type)") % entrytype


def problem_label(name: str) -> QLabel:
    """A hidden line in red that says what is wrong, readable on a light or a dark palette."""
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    palette = label.palette()
    dark = palette.window().color().lightness() < 128
    palette.setColor(QPalette.ColorRole.WindowText, QColor("#ff8a80" if dark else "#b71c1c"))
    label.setPalette(palette)
    label.hide()
    return label


class EditRecord(QUndoCommand):
    """A record edit: made when it is built (raising InvalidValueError, with nothing
    changed and nothing to push, when the library refuses it); undo and redo put
    back the stored records of every paper it could touch, but a citation key
    pinned since (by Copy Key or an export) keeps its value either way."""

    def __init__(self, library: Library, paper_id: str, changes: dict[str, str | None], label: str) -> None:
        super().__init__(label)
        self.library = library
        scope = library.edit_scope(paper_id)
        self.before: dict[str, Record] = library.records(scope)
        self.changed = library.edit_record(paper_id, changes)
        self.after: dict[str, Record] = library.records(scope)
        self._made = True  # the first redo (the push) is the edit just made

    def redo(self) -> None:
        """Put the edited records back (after an undo)."""
        if self._made:
            self._made = False
            return
        self.library.put_records(keep_later_keys(self.library, self.after, self.before))

    def undo(self) -> None:
        """Put the records back as they were before the edit (a key pinned since stays)."""
        self.library.put_records(keep_later_keys(self.library, self.before, self.after))


class FieldRow(QWidget):
    """One field: its text box, a line under it for a problem, and (for the
    record's other fields) a button that removes the field."""

    edited = Signal()

    def __init__(self, name: str, value: str, removable: bool) -> None:
        super().__init__()
        self.name = name
        self.value = value  # as the record gives it
        self.setObjectName(f"field_{name}")
        self.edit: QLineEdit | QPlainTextEdit
        if name in LONG_FIELDS or "\n" in value:
            self.edit = QPlainTextEdit(value)
            self.edit.setTabChangesFocus(True)
            self.edit.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 12)
        else:
            self.edit = QLineEdit(value)
        self.edit.textChanged.connect(self.edited)
        self.edit.setObjectName(f"fieldEdit_{name}")
        self.edit.setToolTip(tr("BibTeX field: %s") % name)
        self.problem = problem_label(f"fieldProblem_{name}")
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setObjectName(f"removeField_{name}")
        self.remove_button.setToolTip(tr("Remove the field %s") % name)
        self.remove_button.setAccessibleName(tr("Remove the field %s") % name)
        self.remove_button.setVisible(removable)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(row)
        column.addWidget(self.problem)

    def text(self) -> str:
        """The field's text as edited; a multi-line box's lines end in "\\n"."""
        if isinstance(self.edit, QPlainTextEdit):
            # the document's own characters: toPlainText() would make a no-break space a plain
            # one, and so change a field nobody touched
            text = self.edit.document().toRawText().translate(LINE_BREAKS)
            return self.value if text == self.value.translate(LINE_BREAKS) else text
        return self.edit.text()

    def set_problem(self, text: str) -> None:
        """Say what is wrong under the field ("": nothing)."""
        self.problem.setText(text)
        self.problem.setVisible(bool(text))

    def set_required(self, required: bool) -> None:
        """An empty required field says so in its box."""
        self.edit.setPlaceholderText(tr("Required, empty") if required else "")


class RecordEditor(QDialog):
    """The record of one paper in a form; OK makes the changes as one step on the window's undo stack."""

    def __init__(self, window: MainWindow, paper_id: str) -> None:
        super().__init__(window)
        self.window_ = window
        self.paper_id = paper_id
        self.setObjectName("recordEditor")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        paper = window.library.get(paper_id)
        view = self.view = record_edit.editor_view(paper)
        self.setWindowTitle(tr("Edit record: %s") % (view.citekey or paper.title[:60]))
        self.original_fields = dict(view.fields)
        self.removed: set[str] = set()  # the record's fields taken out
        self.added: set[str] = set()  # fields added by name (shown under Other fields while empty)
        self.rows: dict[str, FieldRow] = {}
        self.refused_keys: dict[str, str] = {}  # key → why the library refused it

        # ---- the left column: type, key, title, authors ----
        self.type_combo = QComboBox()
        self.type_combo.setObjectName("entryTypeCombo")
        for name in types.COMMON_TYPES:
            self.type_combo.addItem(name, name)
        if view.entrytype and self.type_combo.findData(view.entrytype) < 0:
            # a type the file gave that is not on the short list: kept, and offered as it is
            self.type_combo.addItem(type_label(view.entrytype), view.entrytype)
        self.type_combo.setCurrentIndex(max(self.type_combo.findData(view.entrytype), 0))
        self.key_edit = QLineEdit(view.citekey)
        self.key_edit.setObjectName("citekeyEdit")
        self.key_edit.setPlaceholderText(tr("Empty: Papershelf makes one up"))
        self.key_problem = problem_label("citekeyProblem")
        self.title_edit = QLineEdit(view.fields.get("title", ""))
        self.title_edit.setObjectName("titleEdit")
        self.title_edit.setMinimumWidth(360)
        if view.title_derived:  # not a title: the words the list shows until the paper gets one
            self.title_edit.setPlaceholderText(tr("Derived from the abstract: %s") % view.fields.get("title", ""))
            self.title_edit.setToolTip(self.title_edit.placeholderText())
            self.title_edit.setText("")
            self.original_fields["title"] = ""  # any title typed is a change
        self.authors = NameList()
        self.authors.setObjectName("authorList")
        self.authors.set_names(list(view.authors))
        self.others = QCheckBox(tr("… and &others (et al.)"))
        self.others.setObjectName("andOthers")
        self.others.setToolTip(tr("The list ends with “and others”: more authors than it names"))
        self.others.setChecked(view.others)

        top = QFormLayout()
        top.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        top.addRow(self._buddy(tr("&Type:"), self.type_combo), self.type_combo)
        key_box = QVBoxLayout()
        key_box.setSpacing(2)
        key_box.addWidget(self.key_edit)
        key_box.addWidget(self.key_problem)
        top.addRow(self._buddy(tr("Citation &key:"), self.key_edit), key_box)
        top.addRow(self._buddy(tr("T&itle:"), self.title_edit), self.title_edit)
        authors_box = QGroupBox(tr("Authors"))
        authors_box.setObjectName("authorsGroup")
        authors_column = QVBoxLayout(authors_box)
        authors_column.addWidget(self.authors)
        authors_column.addWidget(self.others)
        left = QVBoxLayout()
        left.addLayout(top)
        left.addWidget(authors_box, 1)

        # ---- the right column: the fields, grouped by the type ----
        self.groups_host = QWidget()
        self.groups_layout = QVBoxLayout(self.groups_host)
        self.groups_layout.setContentsMargins(0, 0, 6, 0)
        self.new_field = QLineEdit()
        self.new_field.setObjectName("newFieldName")
        self.new_field.setPlaceholderText(tr("Field name, such as series"))
        self.add_field_button = QPushButton(tr("&Add Field"))
        self.add_field_button.setObjectName("addFieldButton")
        self.add_field_button.setAutoDefault(False)
        self.add_field_button.clicked.connect(self.add_field)
        self.new_field.installEventFilter(self)  # Return adds the field (eventFilter)
        self.new_field_problem = problem_label("newFieldProblem")
        self.groups: dict[str, tuple[QGroupBox, QFormLayout]] = {}
        for name, title in (
            ("requiredGroup", ""),
            ("identifiersGroup", tr("Identifiers")),
            ("optionalGroup", ""),
            ("otherGroup", tr("Other fields")),
        ):
            box = QGroupBox(title)
            box.setObjectName(name)
            column = QVBoxLayout(box)
            form = QFormLayout()
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            column.addLayout(form)
            self.groups[name] = (box, form)
            self.groups_layout.addWidget(box)
        self.groups_layout.addStretch(1)
        adder = QHBoxLayout()
        adder.addWidget(self.new_field, 1)
        adder.addWidget(self.add_field_button)
        other_column = self.groups["otherGroup"][0].layout()
        assert isinstance(other_column, QVBoxLayout)
        other_column.addLayout(adder)
        other_column.addWidget(self.new_field_problem)
        scroll = QScrollArea()
        scroll.setObjectName("fieldsScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.groups_host)
        scroll.setMinimumWidth(420)

        self.missing = QLabel()
        self.missing.setObjectName("missingRequired")
        self.missing.setWordWrap(True)
        self.error = problem_label("editError")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.apply)
        self.buttons.rejected.connect(self.reject)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setObjectName("recordEditorOk")

        columns = QHBoxLayout()
        columns.addLayout(left, 5)
        columns.addWidget(scroll, 6)
        layout = QVBoxLayout(self)
        layout.addLayout(columns, 1)
        layout.addWidget(self.missing)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)

        self.type_combo.currentIndexChanged.connect(self.relayout)
        self.key_edit.textChanged.connect(self.validate)
        self.title_edit.textChanged.connect(self.validate)
        self.authors.changed.connect(self.validate)
        self.others.toggled.connect(self.validate)
        self.relayout()
        self.resize(1080, 720)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Return in the field-name box adds the field, and only that: a line edit passes
        Return on after its returnPressed, and the dialog would press OK with it too."""
        key = event.key() if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress else None
        if watched is self.new_field and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.add_field()
            return True
        return super().eventFilter(watched, event)

    @staticmethod
    def _buddy(text: str, widget: QWidget) -> QLabel:
        label = QLabel(text)
        label.setBuddy(widget)
        return label

    # ---- the fields, grouped by the chosen type ------------------------------------
    def entrytype(self) -> str:
        """The type chosen."""
        return str(self.type_combo.currentData() or "")

    def _row(self, name: str, removable: bool) -> FieldRow:
        row = self.rows.get(name)
        if row is None:
            row = FieldRow(name, self.original_fields.get(name, ""), removable)
            row.edited.connect(self.validate)
            row.remove_button.clicked.connect(lambda _=False, n=name: self.remove_field(n))
            self.rows[name] = row
        row.remove_button.setVisible(removable)
        return row

    def relayout(self, *_args: object) -> None:
        """Group the fields as the chosen type names them; values typed so far are kept."""
        kind = self.entrytype()
        self.required_fields = self._required(kind)
        grouped = self._grouped(kind)
        labels: list[QLabel] = []
        for (box, form), names in zip(self.groups.values(), grouped, strict=True):
            self._empty_form(form)
            labels += self._fill_form(form, names, kind, grouped[0])
            box.setVisible(bool(names) or box is self.groups["otherGroup"][0])
        # one label column for every group, so the boxes line up
        width = max((label.sizeHint().width() for label in labels), default=0)
        for label in labels:
            label.setMinimumWidth(width)
        self.groups["requiredGroup"][0].setTitle(tr("Required for @%s") % kind)
        self.groups["optionalGroup"][0].setTitle(tr("Optional for @%s") % kind)
        self.shown_fields = [field for names in grouped for field in names]
        self.validate()

    def _grouped(self, kind: str) -> tuple[list[str], list[str], list[str], list[str]]:
        """The fields of each group: required, identifiers, optional (as the type names them), other."""
        apart = {*SHOWN_APART, *IDENTIFIERS}
        required = [f for f in self.required_fields if f not in apart]
        optional = [f for f in types.optional(kind) if f not in apart and f not in required]
        named = {*required, *optional, *IDENTIFIERS, *SHOWN_APART, *self.removed}
        have = dict.fromkeys([*self.original_fields, *self.rows, *sorted(self.added)])
        return required, list(IDENTIFIERS), optional, [f for f in have if f not in named and self._has_other(f)]

    def _has_other(self, field: str) -> bool:
        """A field no group names shows under Other: the record's own, added, or typed into."""
        if field in self.original_fields and (self.original_fields[field] or field not in DISPLAY_FIELDS):
            return True  # the view's empty display fields (venue, year…) are not the record's
        return field in self.added or (field in self.rows and bool(self.rows[field].text()))

    @staticmethod
    def _empty_form(form: QFormLayout) -> None:
        """Take a group's rows out: the field rows go back to the pool (hidden), their labels go."""
        while form.rowCount():
            taken = form.takeRow(0)
            for item in (taken.labelItem, taken.fieldItem):
                if item is not None and (widget := item.widget()) is not None:
                    widget.hide()  # at once: not painted under the new label until it goes
                    if not isinstance(widget, FieldRow):
                        widget.deleteLater()

    def _fill_form(self, form: QFormLayout, names: list[str], kind: str, required: list[str]) -> list[QLabel]:
        """Put these fields' rows (from the pool, self.rows) into a group's form; their labels."""
        labels: list[QLabel] = []
        for field in names:
            row = self._row(field, removable=form is self.groups["otherGroup"][1])
            row.set_required(field in required)
            label = QLabel(field_label(field, kind) + ":")
            row.edit.setAccessibleName(field_label(field, kind))
            label.setToolTip(tr("BibTeX field: %s") % field)
            form.addRow(label, row)
            labels.append(label)
            label.show()  # at once, not when the layout's queued show comes: a grab or a test sees it
            row.show()
        return labels

    def _required(self, kind: str) -> list[str]:
        """The fields the type requires; a record dated by `date` (BibLaTeX's full date, and no
        year) meets the year's requirement with it: its Date row is shown there, and no Year
        row, whose text would replace the full date."""
        fields = list(types.required(kind))
        if "date" in self.original_fields and "year" not in self.original_fields:
            fields = ["date" if f == "year" else f for f in fields]
        return fields

    def add_field(self) -> None:
        """Add the field named in the box under Other fields (or go to it if it is shown)."""
        name = self.new_field.text().strip().lower()
        if not name:
            return
        problem = ""
        if not FIELD_NAME.match(name):
            problem = tr("A field name is letters, digits and - _ : . + (starting with a letter).")
        elif name in record_edit.NOT_EDITED_HERE:
            problem = tr(record_edit.NOT_EDITED_HERE[name]).capitalize() + "."
        elif name in SHOWN_APART:
            problem = tr("%s has its own place at the top.") % field_label(name, self.entrytype())
        self.new_field_problem.setText(problem)
        self.new_field_problem.setVisible(bool(problem))
        if problem:
            return
        self.removed.discard(name)
        if name not in self.shown_fields:
            self.added.add(name)
            self.relayout()
        self.new_field.clear()
        self.rows[name].edit.setFocus()

    def remove_field(self, name: str) -> None:
        """Take one of the record's other fields out (sent as removed on OK)."""
        self.removed.add(name)
        self.added.discard(name)
        row = self.rows.pop(name, None)
        self.relayout()
        if row is not None:
            row.deleteLater()

    # ---- checking and saving ------------------------------------------------------
    def changes(self) -> dict[str, str | None]:
        """Only what the person changed, in edit_record's vocabulary."""
        view = self.view
        out: dict[str, str | None] = {}
        if self.entrytype() != view.entrytype:
            out["entrytype"] = self.entrytype()
        key = self.key_edit.text().strip()
        if key != view.citekey:
            out["citekey"] = key
        title = self.title_edit.text()
        if title != self.original_fields.get("title", ""):
            out["title"] = title
        names = self.authors.names()
        if names != list(view.authors) or self.others.isChecked() != view.others:
            out["author"] = record_edit.names_text(names, self.others.isChecked())
        for name in self.removed:
            if name in self.original_fields:
                out[name] = None
        for name, row in self.rows.items():
            text = row.text()
            if name in self.removed or name not in self.shown_fields:
                continue
            if text != self.original_fields.get(name, ""):
                out[name] = text
        return out

    def validate(self, *_args: object) -> bool:
        """Check what can be checked as it is typed; OK waits while something is wrong."""
        ok = True
        key = self.key_edit.text().strip()
        problem = ""
        if key != self.view.citekey and key:
            # the library's own rule, as typed, where the core offers it; else its answer to OK,
            # kept until the key is changed
            check = getattr(record_edit, "citekey_problem", None)
            problem = check(key) if callable(check) else ""
            problem = problem or self.refused_keys.get(key, "")
        self.key_problem.setText(problem)
        self.key_problem.setVisible(bool(problem))
        ok = ok and not problem
        eprint_type = self.rows["eprinttype"].text() if "eprinttype" in self.rows else ""
        eprint_type = eprint_type or (self.rows["archiveprefix"].text() if "archiveprefix" in self.rows else "")
        for name, row in self.rows.items():
            text = row.text()
            changed = text != self.original_fields.get(name, "")
            bad = identifier_problem(name, text, eprint_type) if name in IDENTIFIERS and changed else ""
            row.set_problem(bad)
            ok = ok and not bad
        self.ok_button.setEnabled(ok)
        self._say_missing()
        return ok

    def _say_missing(self) -> None:
        missing = []
        for name in getattr(self, "required_fields", []):
            if name == "author":
                empty = not self.authors.names()
            elif name == "title":
                empty = not self.title_edit.text().strip()
            else:
                row = self.rows.get(name)
                empty = row is None or not row.text().strip()
            if empty:
                missing.append(field_label(name, self.entrytype()))
        self.missing.setText(
            tr("Empty but required for @%s: %s (the record is saved anyway).") % (self.entrytype(), ", ".join(missing))
            if missing
            else ""
        )
        self.missing.setVisible(bool(missing))

    def apply(self) -> None:
        """OK: make the changes as one undoable step; a refused value is shown here and nothing changes."""
        win = self.window_
        if not self.validate():
            return
        if win.transfers.running():
            self._show_error(tr("Wait for the import to finish."))
            return
        changes = self.changes()
        if not changes:
            self.accept()
            return
        label = tr("Edit the record of %s") % (self.view.citekey or self.paper_id)
        try:
            command = EditRecord(win.library, self.paper_id, changes, label)
        except (PapershelfError, ValueError) as exc:
            message = str(exc)
            if "citekey" in changes and "citation key" in message:  # said under the key, OK waits
                self.refused_keys[str(changes["citekey"])] = message
                self.validate()
            else:
                self._show_error(message)
            return
        if command.changed:
            win.undo_stack.push(command)
            undo = win.findChild(QAction, "undoAction")
            key = undo.shortcut().toString(QKeySequence.SequenceFormat.NativeText) if undo is not None else ""
            line = tr("Edited the record")
            win.statusBar().showMessage(line + (" — " + tr("%s undoes") % key if key else ""), 8000)
        self.accept()

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()


def current_paper(window: MainWindow) -> str | None:
    """The paper the editor is for: the current row if it is selected, else the first selected."""
    ids = window.selected_ids()
    if not ids:
        return None
    index = window.paper_list.currentIndex()
    pid = window.model.id_at(index.row()) if index.isValid() else None
    return pid if pid in ids else ids[0]


def edit_record(window: MainWindow, index: QModelIndex | None = None) -> RecordEditor | None:
    """Open the record editor for the current paper (or the row of `index`, on a double-click)."""
    pid = window.model.id_at(index.row()) if index is not None and index.isValid() else current_paper(window)
    if not pid or pid not in window.library:
        window.statusBar().showMessage(tr("Select a paper first."), 3000)
        return None
    if window.transfers.running():
        window.statusBar().showMessage(tr("Wait for the import to finish."), 3000)
        return None
    dialog = RecordEditor(window, pid)
    dialog.open()
    return dialog
