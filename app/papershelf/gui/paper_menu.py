"""The paper list's context menu: what can be done to the papers under the mouse.

Built fresh for each right-click from the selection (a click outside it
selects the clicked row first, as file managers do). Edits go through the
window's own slots and actions, so each one is a single undoable step; the
copy actions put citation keys, `\\cite{...}` or BibTeX entries on the
clipboard with the keys an export would use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt, QUrl
from PySide6.QtGui import QAction, QContextMenuEvent, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QInputDialog, QMenu, QWidget

from ..core import overview
from ..core.biblio.identifiers import arxiv_url, doi_url
from ..core.errors import PapershelfError
from ..core.library import Library
from ..core.paper import RATING_MAX, RATING_MIN, Paper, split_tags

if TYPE_CHECKING:
    from .edits import Edits
    from .list_pane import ListPane
    from .status_line import StatusLine


def tr(text: str) -> str:
    """`text` in the user's language (the menu's translation context)."""
    return QCoreApplication.translate("PaperMenu", text)


def paper_link(paper: Paper) -> str:
    """The web page of a paper: its first http(s) link, else its DOI or arXiv page."""
    for url in paper.links:
        if url.lower().startswith(("http://", "https://")):
            return url
    if paper.doi:
        return doi_url(paper.doi)
    if paper.arxiv_id:
        return arxiv_url(paper.arxiv_id)
    return ""


class PaperMenu(QObject):
    """Shows the context menu of the paper list (`pane`'s); `menu` is the one open last.
    Its edits go to `edits`; `shared(name)` is the window's own action of that name (Mark As,
    Edit Record…, with their shortcuts); `edit_record(index)` and `suggest(tag)` open those
    dialogs; `importing()`: an import runs (copies wait)."""

    def __init__(
        self,
        library: Library,
        pane: ListPane,
        edits: Edits,
        status: StatusLine,
        *,
        importing: Callable[[], bool],
        shared: Callable[[str], QAction | None],
        edit_record: Callable[[QModelIndex], object],
        suggest: Callable[[str], object],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self.library, self.pane, self.edits, self.status = library, pane, edits, status
        self.importing, self.shared, self.suggest = importing, shared, suggest
        self.dialog_parent = parent  # the menu and the questions sit over it
        self.menu: QMenu | None = None
        view = self.view = pane.view
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self.show_at)
        view.installEventFilter(self)  # the Menu key: the selection as it is, at the current row
        view.doubleClicked.connect(edit_record)  # the list is not edited in place

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The Menu key on the list opens the menu at the current row."""
        if (
            isinstance(event, QContextMenuEvent)
            and watched is self.view
            and event.reason() == QContextMenuEvent.Reason.Keyboard
        ):
            view = self.view
            current = view.currentIndex()
            area = view.viewport().rect()
            row = view.visualRect(current).center() if current.isValid() else area.center()
            self._popup(
                QPoint(
                    min(row.x(), area.center().x()),
                    row.y() if area.top() <= row.y() <= area.bottom() else area.center().y(),
                )
            )
            return True
        return super().eventFilter(watched, event)

    # ---- building ----------------------------------------------------------
    def show_at(self, pos: QPoint) -> None:
        """`pos` in the list's viewport, as customContextMenuRequested gives it."""
        view = self.view
        index = view.indexAt(pos)
        sel = view.selectionModel()
        if index.isValid() and not sel.isRowSelected(index.row(), index.parent()):
            sel.setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
        self._popup(pos)

    def _popup(self, pos: QPoint) -> None:
        view = self.view
        ids = self.pane.selected_ids()
        if not ids:
            return
        if self.menu is not None:
            self.menu.close()
            self.menu.deleteLater()
        self.menu = self.build(ids)
        self.menu.popup(view.viewport().mapToGlobal(pos))

    def build(self, ids: list[str]) -> QMenu:
        """The menu for these papers (the selection)."""
        lib = self.library
        papers = [lib.get(pid) for pid in ids]
        menu = QMenu(self.dialog_parent)
        menu.setObjectName("paperMenu")
        menu.setAccessibleName(tr("Paper actions"))
        menu.setToolTipsVisible(True)
        self._tag_menu(menu, papers)
        self._status_menu(menu)
        self._rating_menu(menu, papers)
        self._list_menu(menu)
        self._record_items(menu, papers)
        menu.addSeparator()
        self._copy_items(menu, papers)
        menu.addSeparator()
        self._add_shared(menu, "openPdfAction", "attachFilesAction")  # a paper's files (files_panel.py)
        self._add_shared(menu, "exportSelectionAction", "deleteAction")
        return menu

    def _tag_menu(self, menu: QMenu, papers: list[Paper]) -> None:
        """Tag: the number-key tags (checked where every paper has one), New Tag, keywords, Remove."""
        edits = self.edits
        tag_menu = menu.addMenu(tr("&Tag"))
        tag_menu.setObjectName("paperMenuTags")
        top = overview.top_tags(self.library)
        for n, tag in enumerate(top, 1):
            on_all = all(tag in p.tags for p in papers)
            action = self._add(
                tag_menu,
                f"&{n}  {tag}",
                f"paperMenuTag{n}",
                (lambda _=False, t=tag: edits.remove_tag(t))
                if on_all
                else (lambda _=False, t=tag: edits.add_tags([t])),
            )
            action.setCheckable(True)
            action.setChecked(on_all)
        if top:
            tag_menu.addSeparator()
        self._add(tag_menu, tr("New Tag…"), "paperMenuNewTag", self.new_tag)
        # a record's keywords are not tags until the person asks (issue 20)
        keywords = self._add(
            tag_menu, tr("Make Keywords Tags"), "paperMenuKeywordsTags", lambda _=False: edits.make_keywords_tags()
        )
        keywords.setEnabled(any(p.bibfields.get("keywords") for p in papers))
        keywords.setToolTip(tr("Tag each selected paper with its record's keywords (Ctrl+Z undoes)"))
        present = sorted({t for p in papers for t in p.tags} - set(top))
        if present:
            remove = tag_menu.addMenu(tr("Remove"))
            for tag in present:
                remove.addAction(tag).triggered.connect(lambda _=False, t=tag: edits.remove_tag(t))

    def _status_menu(self, menu: QMenu) -> None:
        """Status: the window's Mark As actions, shortcuts and all."""
        status_menu = menu.addMenu(tr("&Status"))
        status_menu.setObjectName("paperMenuStatus")
        for n in range(1, 10):
            mark = self.shared(f"status{n}Action")
            if mark is None:
                break
            status_menu.addAction(mark)

    def _rating_menu(self, menu: QMenu, papers: list[Paper]) -> None:
        """Rating: the stars (checked where every paper has them), No Rating."""
        edits = self.edits
        rating_menu = menu.addMenu(tr("&Rating"))
        rating_menu.setObjectName("paperMenuRating")
        ratings = {p.rating for p in papers}
        for stars in range(RATING_MAX, RATING_MIN - 1, -1):
            action = self._add(
                rating_menu, "★" * stars, f"paperMenuRating{stars}", lambda _=False, r=stars: edits.set_rating(r)
            )
            action.setCheckable(True)
            action.setChecked(ratings == {stars})
        self._add(rating_menu, tr("No Rating"), "paperMenuRating0", lambda: edits.set_rating(None))

    def _list_menu(self, menu: QMenu) -> None:
        """Add to Reading List: each list, then New Reading List."""
        edits = self.edits
        list_menu = menu.addMenu(tr("Add to Reading &List"))
        list_menu.setObjectName("paperMenuLists")
        names = sorted(self.library.lists(), key=str.casefold)
        for name in names:
            list_menu.addAction(name).triggered.connect(lambda _=False, n=name: edits.add_to_list(n))
        if names:
            list_menu.addSeparator()
        self._add(list_menu, tr("New Reading List…"), "paperMenuNewList", lambda: edits.add_to_list(""))

    def _record_items(self, menu: QMenu, papers: list[Paper]) -> None:
        """Edit Title, the window's Edit Record and Find Published, and Suggest Papers for Tag."""
        suggest = self.suggest
        title = self._add(menu, tr("Edit T&itle…"), "paperMenuEditTitle", self.edit_title)
        title.setEnabled(len(papers) == 1)
        self._add_shared(menu, "editRecordAction", "findPublishedAction", "getPdfAction")  # the window's, F2 and all
        # the selection's tags: each opens its suggestions (a tag needs 2 papers; the dialog says so)
        carried = sorted({t for p in papers for t in p.tags}, key=str.casefold)
        suggest_menu = menu.addMenu(tr("Su&ggest Papers for Tag"))
        suggest_menu.setObjectName("paperMenuSuggest")
        suggest_menu.setEnabled(bool(carried))
        suggest_menu.setToolTip(tr("Papers like the ones carrying a tag, ranked by what they have in common"))
        for n, tag in enumerate(carried[:20], 1):
            self._add(suggest_menu, tag, f"paperMenuSuggest{n}", lambda _=False, t=tag: suggest(t))

    def _copy_items(self, menu: QMenu, papers: list[Paper]) -> None:
        """The copies (keys, \\cite, BibTeX entries) and Open Link."""
        one = len(papers) == 1
        copies = [
            self._add(
                menu, tr("Copy Citation &Key") if one else tr("Copy Citation &Keys"), "paperMenuCopyKey", self.copy_keys
            ),
            self._add(menu, tr("Copy \\&cite{…}"), "paperMenuCopyCite", self.copy_cite),
            self._add(
                menu,
                tr("Copy &BibTeX Entry") if one else tr("Copy &BibTeX Entries"),
                "paperMenuCopyBibtex",
                self.copy_bibtex,
            ),
        ]
        for copy_action in copies:  # copying fixes the keys: not while an import changes the library
            copy_action.setEnabled(not self.importing())
        link = paper_link(papers[0]) if one else ""
        open_link = self._add(menu, tr("&Open Link"), "paperMenuOpenLink", lambda: self.open_link(link))
        open_link.setEnabled(bool(link))
        open_link.setToolTip(link or tr("This paper has no web link, DOI or arXiv id."))

    def _add_shared(self, menu: QMenu, *names: str) -> None:
        """The window's own actions of these names (with their shortcuts), those it has."""
        for name in names:
            shared = self.shared(name)
            if shared is not None:
                menu.addAction(shared)

    @staticmethod
    def _add(menu: QMenu, text: str, name: str, slot: Callable[..., object]) -> QAction:
        action = menu.addAction(text)
        action.setObjectName(name)
        action.triggered.connect(slot)
        return action

    # ---- actions -------------------------------------------------------------
    def new_tag(self) -> None:
        """Ask for tags (comma-separated) and add them to the selection."""
        text, ok = QInputDialog.getText(self.dialog_parent, tr("Tag papers"), tr("Tags (comma-separated):"))
        tags = split_tags(text) if ok else []
        if tags:
            self.edits.add_tags(tags)

    def edit_title(self) -> None:
        """Ask for the selected paper's title (empty: derive one from the abstract)."""
        lib, ids = self.library, self.pane.selected_ids()
        if len(ids) != 1:
            return
        pid = ids[0]
        paper = lib.get(pid)
        title, ok = QInputDialog.getText(
            self.dialog_parent,
            tr("Edit title"),
            tr("Title (leave it empty to derive one from the abstract):"),
            text=paper.title,
        )
        if not ok or (" ".join(title.split()) == paper.title and not paper.title_derived):
            return
        self.edits.edit(tr("Edit title"), [pid], lambda: lib.set_title(pid, title))

    def _wait_for_import(self) -> bool:
        if self.importing():
            self.status.say(tr("Wait for the import to finish."), 3000)
            return True
        return False

    def _keys(self) -> list[str]:
        if self._wait_for_import():
            return []
        ids = self.pane.selected_ids()
        try:
            return list(self.library.citation_keys(ids).values())
        except PapershelfError as exc:
            self.status.error(tr("Nothing was copied"), str(exc))
            return []

    def _copy(self, text: str, what: str) -> None:
        if not text:
            return
        QGuiApplication.clipboard().setText(text)
        self.status.say(what, 4000)

    def copy_keys(self) -> None:
        """Copy the selection's citation keys, comma-separated."""
        keys = self._keys()
        self._copy(
            ",".join(keys),
            tr("Copied %s") % ",".join(keys) if len(keys) < 4 else tr("Copied %d citation keys") % len(keys),
        )

    def copy_cite(self) -> None:
        """Copy \\cite{…} of the selection's citation keys."""
        keys = self._keys()
        text = "\\cite{" + ",".join(keys) + "}" if keys else ""
        self._copy(text, tr("Copied %s") % text if len(keys) < 4 else tr("Copied \\cite{…} of %d papers") % len(keys))

    def copy_bibtex(self) -> None:
        """Copy the selection's BibTeX entries, with the keys an export would give."""
        if self._wait_for_import():
            return
        ids = self.pane.selected_ids()
        try:
            text = self.library.bibtex_entries(ids)
        except PapershelfError as exc:
            self.status.error(tr("Nothing was copied"), str(exc))
            return
        self._copy(text, tr("Copied the BibTeX entry") if len(ids) == 1 else tr("Copied %d BibTeX entries") % len(ids))

    def open_link(self, url: str) -> None:
        """Open a paper's web page in the browser (http and https only)."""
        qurl = QUrl(url)
        if qurl.scheme() in ("http", "https"):
            QDesktopServices.openUrl(qurl)
