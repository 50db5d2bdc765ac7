"""Imports and exports from the window: file dialogs, drops, the work on a
worker thread with progress and Cancel, and what the window says afterwards.

Pasted text (File ▸ Import Pasted Text) is imported on a worker too. One
import or export runs at a time. While it runs, edits and Undo wait
(the import becomes one undoable step, and the library must not change
under it) and the tag panel is disabled. A file that only partly looks like
a listing is held back and previewed (`preview`); files that could
not be imported, or parts of them, are listed in a report.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QMimeData, QObject, QSettings, Signal
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QPushButton, QWidget

from .. import paths
from ..core import overview
from ..core import reports as import_reports
from ..core.citation import fragments
from ..core.errors import PapershelfError, UncertainListingError
from ..core.library import PASTE_LABEL, FileReport, Library
from .feedback import n_papers
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .last_import import LastImport
    from .list_pane import ListPane
    from .progress import TaskProgress
    from .query_state import QueryState
    from .status_line import StatusLine

IMPORTABLE = "Listings, bibliographies and PDFs (*.txt *.md *.bib *.ris *.pdf);;All files (*)"
EXPORT_FILTERS = {"bibtex": "BibTeX, for bibtex (*.bib)", "biblatex": "BibLaTeX, for biber (*.bib)"}
# RIS is a format of its own, not a BibTeX dialect: the choice is kept apart ("export/format"),
# so the preferences' BibTeX dialect stays what the user set
RIS_FILTER = "RIS, for reference managers (*.ris)"
# the dialect the dialog chose last, and Preferences' default then ("export/dialect", which only
# Preferences writes): a change of that default since wins over the dialog's last choice
LAST_DIALECT, LAST_DIALECT_OVER = "export/lastDialect", "export/lastDialectDefault"


class ExportReport(Protocol):
    """What an export says it did (`exporters.bibtex.ExportReport` or `exporters.ris.RisExportReport`,
    through the facade)."""

    def summary(self) -> str:
        """One line for the status bar."""


KEYWORDS_AS_TAGS = "import/keywordsAsTags"


def keywords_as_tags() -> bool:
    """Whether imports also tag new papers with their records' keywords (File ▸ Keywords as
    Tags on Import; off unless the person turns it on, as `import --keywords-as-tags`)."""
    return QSettings().value(KEYWORDS_AS_TAGS, False, bool) is True


def set_keywords_as_tags(on: bool) -> None:
    """Turn the import option on or off (kept in the settings)."""
    QSettings().setValue(KEYWORDS_AS_TAGS, bool(on))


def dropped_files(mime: QMimeData) -> list[Path]:
    """The local files of a drag (what a drop would import)."""
    return [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()] if mime.hasUrls() else []


class ImportExport(QObject):
    """Runs the imports into `library` and the exports from it, with `progress` in the status bar;
    `task` is the one running or run last. An import becomes a step of `last_import`, and the list
    (`pane`) shows the answer to the query (`state`) again."""

    started = Signal(bool)  # an import (True) or an export (False) began: edits and Undo wait
    finished = Signal()  # it ended, however
    imported = Signal()  # an import ended that may have added papers, tags and lists
    importFinished = Signal(list)  # the FileReports of an import ([]: cancelled or failed)
    exportFinished = Signal(object)  # the ExportReport of an export (None: failed or cancelled)
    identifiersPasted = Signal(str)  # the paste is DOIs or arXiv ids: Add by Identifier takes them
    findPublishedRequested = Signal(list)  # ids of papers that would export as fragments

    def __init__(
        self,
        library: Library,
        pane: ListPane,
        state: QueryState,
        status: StatusLine,
        progress: TaskProgress,
        last_import: LastImport,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.library, self.pane, self.state, self.status = library, pane, state, status
        self.progress, self.last_import = progress, last_import
        self.dialog_parent = parent  # the dialogs it opens sit over it
        self.task: Task | None = None
        self._attach_task: Task | None = None  # the last run_like_import (an attach)
        self.fetching: Callable[[], bool] = lambda: False  # Get PDF runs (the window sets it)
        self.preview: QMessageBox | None = None  # the last preview of a file held back
        self.report: QMessageBox | None = None  # the last "finished with problems"
        self.fragments_box: QMessageBox | None = None  # the last "would export as fragments"
        pane.samples_button.clicked.connect(self.import_samples)  # the empty library's page
        pane.import_button.clicked.connect(self.choose_files)

    def running(self) -> bool:
        """An import (or an export) is running: the library must not change under it."""
        return self.task is not None and not self.task.finished

    def wait_words(self) -> str:
        """What to tell someone who must wait for the task running in this slot."""
        if self.running() and self.task is self._attach_task:
            return self.tr("Wait for the files to be attached.")
        return self.tr("Wait for the import to finish.")

    def refusal(self) -> str:
        """Why an import or an attach cannot start now ("" when it can): one runs already, or
        Get PDF is attaching its downloads on the GUI thread."""
        if self.running():
            return self.wait_words()
        if self.fetching():
            return self.tr("Wait for Get PDF to finish: it is attaching the PDFs it downloads.")
        return ""

    def _finished(self) -> None:
        self.progress.idle()
        self.finished.emit()

    # ---- importing ---------------------------------------------------------------------
    def choose_files(self) -> None:
        """Ask for files and import them."""
        files, _ = QFileDialog.getOpenFileNames(
            self.dialog_parent, self.tr("Import listings"), str(Path.home()), self.tr(IMPORTABLE)
        )
        if files:
            self.import_files([Path(f) for f in files])

    def import_samples(self) -> None:
        """Import the sample listings that come with the application."""
        samples = paths.sample_listings()
        if not samples:
            self.status.error(
                self.tr("No sample library"), self.tr("The sample listings are missing from this installation.")
            )
            return
        self.import_files(samples)

    def import_files(
        self, files: list[Path], as_listing: bool = False, completes: list[FileReport] | None = None
    ) -> None:
        """Import files on a worker thread. `completes`: the reports of the import
        these files were held back from (for a preview); both then make one undoable step."""
        if self.running() and self.task is not self._attach_task:
            self.status.say(self.tr("An import is already running."), 4000)
            return
        if self.refusal():
            self.status.say(self.refusal(), 4000)
            return
        lib = self.library

        as_tags = keywords_as_tags()

        # PDFs, and folders (walked for PDFs), become one paper each with the file attached
        pdfs = [f for f in files if f.is_dir() or f.suffix.lower() == ".pdf"]
        others = [f for f in files if f not in pdfs]

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> list[FileReport]:
            reports: list[FileReport] = []
            if pdfs:
                reports += lib.import_pdfs(pdfs, lambda n, total, _path: progress(n, total), cancelled).reports
            if others and not cancelled():
                reports += lib.import_files(
                    others,
                    progress=lambda n, total, _path: progress(n, total),
                    cancelled=cancelled,
                    as_listing=as_listing,
                    keywords_as_tags=as_tags,
                )
            return reports

        self.progress.busy(self.tr("Importing…"))
        self.task = run_task(
            work,
            parent=self.dialog_parent,
            name="papershelf-import",
            on_done=lambda reports: self.import_done(reports, completes),
            on_error=self._import_failed,
            on_progress=lambda n, total: self.progress.step(n, total, self.tr("Importing")),
        )
        self.started.emit(True)

    def import_clipboard(self) -> None:
        """Import the text on the clipboard on a worker (a preview first if it only partly
        looks like a listing: what the worker read then is what Import imports)."""
        if self.refusal():
            self.status.say(self.refusal(), 3000)
            return
        text = QApplication.clipboard().text()
        if not text.strip():
            self.status.say(self.tr("The clipboard holds no text to import."), 4000)
            return
        from .online import only_identifiers

        if only_identifiers(text):  # DOIs / arXiv ids: Add by Identifier, filled in (nothing sent before Add)
            self.identifiersPasted.emit(text)
            return
        lib, as_tags = self.library, keywords_as_tags()
        self._import_pasted(lambda: lib.import_text(text, keywords_as_tags=as_tags))

    def _import_pasted(self, read: Callable[[], FileReport]) -> None:
        """Run `read` (an import of pasted text) on a worker, with a moving bar: one text is one
        commit, so there is no Cancel (the bar shows while it runs)."""

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> FileReport:
            return read()

        self.progress.busy(self.tr("Importing pasted text…"), cancellable=False)
        self.task = run_task(
            work,
            parent=self.dialog_parent,
            name="papershelf-import-paste",
            on_done=lambda report: self.import_done([report]),
            on_error=self._paste_refused,
        )
        self.started.emit(True)

    def _paste_refused(self, exc: BaseException) -> None:
        """The pasted text was not imported: previewed if it partly looks like a listing (Import
        then imports what was read, not read again), else said why."""
        self._finished()
        if isinstance(exc, UncertainListingError):
            parsed, lib, as_tags = exc.parsed, self.library, keywords_as_tags()
            self.ask_about(
                [FileReport.uncertain(PASTE_LABEL, exc)],
                [],
                lambda _paths: self._confirmed_paste(lambda: lib.import_parsed(parsed, as_tags)),
            )
        elif isinstance(exc, PapershelfError):
            self.status.error(self.tr("The pasted text was not imported"), str(exc))
        else:
            raise exc  # a bug: the window's error reporter shows it

    def _confirmed_paste(self, read: Callable[[], FileReport]) -> None:
        if self.refusal():
            self.status.say(self.refusal(), 3000)
            return
        self._import_pasted(read)

    def imported_message(self, reports: list[FileReport]) -> str:
        """ "Imported 3 new papers, 1 merged with ones already here." """
        added, merged = import_reports.totals(reports)
        return self.tr("Imported %s, %s merged with ones already here.") % (
            n_papers(added).replace(" paper", " new paper"),
            f"{merged:,}",
        )

    def ask_about(self, unsure: list[FileReport], sure: list[FileReport], accept: Callable[[list[Path]], None]) -> None:
        """Show the preview of files held back; say so in the status bar until it is answered."""
        from .import_preview import ask_to_import_as_listing, shown_name

        names = ", ".join(shown_name(r.path) for r in unsure)
        waiting = self.tr("%s waits for your answer.") % names
        self.status.say(f"{self.imported_message(sure)} {waiting}" if sure else waiting)
        box = self.preview = ask_to_import_as_listing(self.dialog_parent, unsure, accept)

        def answered() -> None:
            if box.clickedButton() is not box.findChild(QPushButton, "importPreviewImport"):
                not_imported = (
                    self.tr("%s was not imported.") if len(unsure) == 1 else self.tr("%s were not imported.")
                ) % names
                self.status.say(f"{self.imported_message(sure)} {not_imported}" if sure else not_imported, 8000)

        box.finished.connect(answered)

    def import_done(self, reports: list[FileReport], completes: list[FileReport] | None = None) -> None:
        """An import ended (no reports: cancelled): record it as an undoable step and say what it did."""
        self._finished()
        if not reports:
            self.status.say(self.tr("Import cancelled; the library is unchanged."), 5000)
            self.importFinished.emit([])
            return
        self.last_import.record(reports, completes)
        unsure, sure = import_reports.held_back(reports)  # shown with a preview, imported on Import
        if unsure:
            self.ask_about(unsure, sure, lambda files: self.import_files(files, as_listing=True, completes=reports))
        else:
            self.status.say(self.imported_message([*(completes or []), *reports]), 8000)
        if import_reports.had_trouble(reports):
            self._show_report(
                sure,
                QMessageBox.Icon.Warning,
                self.tr("Import finished with problems"),
                self.tr("Some files, or parts of them, could not be imported. Everything else was imported."),
            )
        elif import_reports.had_notes(reports):
            self._show_report(
                sure,
                QMessageBox.Icon.Information,
                self.tr("Import finished with notes"),
                self.tr(
                    "Everything was imported. Some entries were changed on the way, for example a "
                    "citation key another paper already had: the details say which, and what they became."
                ),
            )
        self.imported.emit()
        self.pane.update_empty_state()
        self.state.run()
        self.importFinished.emit(reports)

    def _show_report(self, reports: list[FileReport], icon: QMessageBox.Icon, title: str, text: str) -> None:
        """The import's report box, its details each file's summary and problems or notes."""
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self.dialog_parent)
        box.setObjectName("importReport")
        box.setDetailedText(import_reports.problem_details(reports))
        box.open()
        self.report = box

    def _import_failed(self, exc: BaseException) -> None:
        self._finished()
        self.status.error(self.tr("Nothing was imported"), str(exc))
        self.importFinished.emit([])

    def drag_entered(self, event: QDropEvent) -> None:
        """Take a drag that holds local files."""
        if dropped_files(event.mimeData()):
            event.acceptProposedAction()

    def dropped(self, event: QDropEvent) -> None:
        """Import the local files of a drop."""
        files = dropped_files(event.mimeData())
        if files:
            event.acceptProposedAction()
            self.import_files(files)

    # ---- work that changes the library as an import does (attaching files: files_panel.py) ----
    def run_like_import(
        self,
        work: Callable[[Callable[[int, int], None], Callable[[], bool]], object],
        text: str,
        name: str,
        on_done: Callable[[object], None],
        on_error: Callable[[BaseException], None],
    ) -> Task | None:
        """Run `work` on a worker in the import's slot: edits and Undo wait for it as for an
        import, the bar shows `text` (no Cancel: it is one step). None (said why) if an import,
        an attach or Get PDF runs."""
        if self.refusal():
            self.status.say(self.refusal(), 3000)
            return None

        def done(result: object) -> None:
            self._finished()
            on_done(result)

        def failed(exc: BaseException) -> None:
            self._finished()
            on_error(exc)

        self.progress.busy(text, cancellable=False)
        self.task = self._attach_task = run_task(
            work, parent=self.dialog_parent, name=name, on_done=done, on_error=failed
        )
        self.started.emit(True)
        return self.task

    # ---- exporting ---------------------------------------------------------------------
    def export_selection(self) -> None:
        """Export the selected papers."""
        self.export_ids(self.pane.selected_ids(), self.tr("selection"))

    def export_shown(self) -> None:
        """Export the papers the list shows, in its order."""
        query = self.state.query
        self.export_ids(self.pane.model.ids(), query.list_name or query.tag or self.tr("papers"))

    def export_ids(self, ids: list[str], name: str) -> None:
        """Export these papers to a .bib or .ris file named after `name`: first, on a worker, find
        those that would export as fragments (no real title, authors or year) and offer to find
        their published versions; then ask where to (`choose_and_export`)."""
        if not ids:
            self.status.say(self.tr("Nothing to export: no papers."), 4000)
            return
        if self.running():
            self.status.say(self.wait_words(), 3000)
            return
        lib = self.library

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> list[str]:
            return fragments(lib.get(pid) for pid in ids)  # 100,000 papers take longer than a frame

        self.progress.busy(self.tr("Exporting…"))
        self.task = run_task(
            work,
            parent=self.dialog_parent,
            name="papershelf-export-check",
            on_done=lambda found: self._checked(ids, name, found),
            on_error=self._export_failed,
        )
        self.started.emit(False)

    def _export_failed(self, exc: BaseException) -> None:
        self._finished()
        self.status.error(self.tr("Nothing was exported"), str(exc))
        self.exportFinished.emit(None)

    def _checked(self, ids: list[str], name: str, found: list[str]) -> None:
        """The fragments are known: none, export; some, ask first."""
        self._finished()
        if not found:
            self.choose_and_export(ids, name)
            return
        if len(ids) == 1:
            text = self.tr("The paper has no real title, authors or year: it would export as a fragment.")
        else:
            text = self.tr("%s of the %s have no real title, authors or year: they would export as fragments.") % (
                f"{len(found):,}",
                n_papers(len(ids)),
            )
        box = QMessageBox(
            QMessageBox.Icon.Warning, self.tr("Export"), text, QMessageBox.StandardButton.NoButton, self.dialog_parent
        )
        box.setObjectName("exportFragments")
        box.setInformativeText(
            self.tr(
                "Find Published Versions looks them up online and proposes their complete records; "
                "export again once they are filled in."
            )
        )
        find = box.addButton(self.tr("Find Published Versions"), QMessageBox.ButtonRole.ActionRole)
        find.setObjectName("exportFindPublished")
        anyway = box.addButton(self.tr("Export Anyway"), QMessageBox.ButtonRole.AcceptRole)
        anyway.setObjectName("exportAnyway")
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        cancel.setObjectName("exportCancel")
        box.setDefaultButton(anyway)
        box.setEscapeButton(cancel)

        def answered() -> None:
            clicked = box.clickedButton()
            if clicked is find:
                self.findPublishedRequested.emit(found)
            elif clicked is anyway:
                self.choose_and_export(ids, name)
            else:
                self.status.say(self.tr("Nothing was exported."), 4000)

        box.finished.connect(answered)
        box.open()
        self.fragments_box = box

    def choose_and_export(self, ids: list[str], name: str) -> None:
        """Ask where to, then export these papers (in the folder and format used last time, the
        dialect the export dialog chose last unless Preferences' default changed since)."""
        if self.running():
            self.status.say(self.wait_words(), 3000)
            return
        s = QSettings()
        folder = s.value("export/folder", str(Path.home()), str)
        default = s.value("export/dialect", "bibtex", str)  # Preferences' own: the dialog never writes it
        dialect = s.value(LAST_DIALECT, "", str) if s.value(LAST_DIALECT_OVER, "", str) == default else default
        if dialect not in EXPORT_FILTERS:
            dialect = default if default in EXPORT_FILTERS else "bibtex"
        ris = s.value("export/format", "bibtex", str) == "ris"
        path, chosen = QFileDialog.getSaveFileName(
            self.dialog_parent,
            self.tr("Export %s") % n_papers(len(ids)),
            str(Path(str(folder)) / f"{overview.export_file_stem(name)}.{'ris' if ris else 'bib'}"),
            ";;".join([*EXPORT_FILTERS.values(), RIS_FILTER]),
            RIS_FILTER if ris else EXPORT_FILTERS[dialect],
        )
        if not path:
            return
        # the RIS filter, or a name typed with .ris whatever the filter, is RIS
        ris = chosen == RIS_FILTER or path.lower().endswith(".ris")
        dialect = next((k for k, v in EXPORT_FILTERS.items() if v == chosen), dialect)
        suffix = ".ris" if ris else ".bib"
        if not path.lower().endswith(suffix):
            path += suffix
        s.setValue("export/folder", str(Path(path).parent))
        s.setValue("export/format", "ris" if ris else "bibtex")
        if not ris:
            s.setValue(LAST_DIALECT, dialect)
            s.setValue(LAST_DIALECT_OVER, default)
        lib = self.library

        def work(progress: Callable[[int, int], None], cancelled: Callable[[], bool]) -> ExportReport:
            if ris:
                return lib.export_ris(ids, path)[0]
            return lib.export_bibtex(ids, path, dialect)[0]

        def done(report: ExportReport) -> None:
            self._finished()
            self.status.say(report.summary(), 10000)
            self.exportFinished.emit(report)

        self.progress.busy(self.tr("Exporting…"))
        self.task = run_task(
            work, parent=self.dialog_parent, name="papershelf-export", on_done=done, on_error=self._export_failed
        )
        self.started.emit(False)
