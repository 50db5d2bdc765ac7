"""The abstract viewer: title, authors, area, sources, links and the abstract."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QTextBrowser, QWidget

from ..core.biblio.identifiers import arxiv_url, doi_url
from ..core.citation import RecordDisplay, authors_text, has_record, record_display
from ..core.paper import Paper
from ..core.render import abstract_html, plain_text

STYLE = """
h2 { margin: 0 0 4px 0; }
.derived { color: %(muted)s; font-size: small; }
.meta { color: %(muted)s; }
.match { background-color: %(mark)s; color: %(marktext)s; }
.math { font-family: serif; }
p.abstract { line-height: 140%%; }
table.record { color: %(muted)s; font-size: small; margin-top: 6px; }
td.label { padding-right: 8px; }
a { color: %(link)s; }
"""
# links in the page's own colour: Qt's default link blue is unreadable on the dark background
LIGHT = {"muted": "#57606a", "mark": "#fff3b0", "marktext": "#1f2328", "link": "#0969da"}
DARK = {"muted": "#9aa0a6", "mark": "#7a5c00", "marktext": "#ffffff", "link": "#8ab4f8"}


_PDF_HIT, _PDF_HIT_END = "<!--pdf-hit-->", "<!--/pdf-hit-->"


class AbstractView(QTextBrowser):
    """Read-only and safe: every piece of the paper is escaped; links open in
    the system browser on click, and only http(s) ones. `paperShown` says which
    paper it shows ("": none, or several selected): the related papers follow it."""

    paperShown = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("abstractView")
        self.setAccessibleName(self.tr("Abstract"))
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self._apply_colours()
        self.anchorClicked.connect(self._open_link)
        self.opened_links: list[str] = []  # what was handed to the system browser
        self._shown = ""  # the paper shown
        self.show_nothing()

    def _apply_colours(self) -> None:
        dark = self.palette().base().color().lightness() < 128
        self.document().setDefaultStyleSheet(STYLE % (DARK if dark else LIGHT))
        page = getattr(self, "_page", "")
        if page:  # a style sheet applies when the page is set: the page shown takes the new colours
            scroll = self.verticalScrollBar().value()
            super().setHtml(page)
            self.verticalScrollBar().setValue(scroll)

    def setHtml(self, text: str) -> None:
        """Show `text`, kept to be shown again in the colours of a new palette."""
        self._page = text
        super().setHtml(text)

    def changeEvent(self, event: QEvent) -> None:
        """Follow a change to a light or dark palette."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._apply_colours()
        super().changeEvent(event)

    def show_nothing(self, count: int = 0) -> None:
        """No single paper selected: say how many are (`count` > 1), or how to see an abstract."""
        self._shown = ""
        self.paperShown.emit("")
        if count > 1:
            self.setHtml(f"<p class='meta'>{self.tr('%n papers selected', '', count)}</p>")
        else:
            self.setHtml(f"<p class='meta'>{html.escape(self.tr('Select a paper to read its abstract.'))}</p>")

    def show_paper(
        self,
        paper: Paper,
        terms: set[str] | None = None,
        normal: Callable[[str], str] | None = None,
        parent: Callable[[str], Paper | None] | None = None,
    ) -> None:
        """Show a paper: title, authors, abstract with the search `terms` marked
        (compared through `normal`, the index's own analysis), links, where it came from.
        A paper with a bibliographic record shows it too: type, venue, volume and pages,
        publisher and year under the authors, DOI/arXiv/URL links, the other fields after
        the abstract (`parent` finds a crossref's parent by citation key, to name it)."""
        record = has_record(paper)
        shown = record_display(paper, parent) if record else None
        # the place of a PDF hit (show_pdf_hit): under the title and authors, where it is seen
        parts = [*self._heading(paper, record), _PDF_HIT, *_meta(paper, shown), *_record_links(shown)]
        parts.append(f"<p class='abstract'>{abstract_html(paper.abstract, terms, normal)}</p>")
        parts += _record_details(shown)
        parts += self._links(paper, record, {link.url for link in shown.links} if shown else set())
        parts += self._sources(paper)
        # the same paper again (an edit, here or on another device): the reader's place stays
        scroll = self.verticalScrollBar().value() if paper.id == self._shown else 0
        self.setHtml("".join(parts))
        self.verticalScrollBar().setValue(scroll)
        self._shown = paper.id
        self.paperShown.emit(paper.id)

    def show_pdf_hit(self, paper_id: str, snippet_html: str) -> bool:
        """Add where the paper's PDFs hold the words searched ("p. 3: …", HTML made by the
        index, matches marked), under its abstract; False if another paper is shown now."""
        if paper_id != self._shown:
            return False
        scroll = self.verticalScrollBar().value()
        label = _esc(self.tr("In the PDF"))
        hit = f"{_PDF_HIT}<p class='pdfhit'><span class='meta'>{label}:</span> {snippet_html}</p>{_PDF_HIT_END}"
        page = getattr(self, "_page", "")
        start = page.find(_PDF_HIT)
        if start < 0:
            page += hit
        else:  # the place kept for it, or the hit of an earlier search: one line, the latest
            end = page.find(_PDF_HIT_END, start)
            page = page[:start] + hit + (page[end + len(_PDF_HIT_END) :] if end >= 0 else page[start + len(_PDF_HIT) :])
        self.setHtml(page)
        self.verticalScrollBar().setValue(scroll)
        return True

    def _heading(self, paper: Paper, record: bool) -> list[str]:
        """The title (and whether it was derived), then the authors."""
        parts = [f"<h2>{_esc(plain_text(paper.title))}</h2>"]
        if paper.title_derived:
            parts.append(f"<p class='derived'>{_esc(self.tr('Title derived from the abstract'))}</p>")
        authors = authors_text(paper) if record else ", ".join(paper.authors)
        if authors:
            parts.append(f"<p>{_esc(authors)}</p>")
        return parts

    def _links(self, paper: Paper, record: bool, shown: set[str]) -> list[str]:
        """The paper's web links not shown with its record yet (its DOI and arXiv pages too,
        for a paper without a record, whose record lines would have linked them)."""
        links = [u for u in paper.links if u.lower().startswith(("http://", "https://")) and u not in shown]
        if paper.doi and not record:
            links.append(doi_url(paper.doi))
        if paper.arxiv_id and not record:
            links.append(arxiv_url(paper.arxiv_id))
        if not links:
            return []
        # double quotes: Qt's rich text decodes entities (&amp;) only in double-quoted attributes
        items = "".join(f'<li><a href="{html.escape(u, quote=True)}">{_esc(u)}</a></li>' for u in links)
        return [f"<p class='meta'>{_esc(self.tr('Links'))}</p><ul>{items}</ul>"]

    def _sources(self, paper: Paper) -> list[str]:
        """The files the paper was imported from."""
        sources = sorted({Path(s.file).name for s in paper.sources})
        if not sources:
            return []
        return [f"<p class='meta'>{_esc(self.tr('From'))}: {_esc(', '.join(sources))}</p>"]

    def _open_link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            self.opened_links.append(url.toString())
            QDesktopServices.openUrl(url)


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _meta(paper: Paper, shown: RecordDisplay | None) -> list[str]:
    """The line under the authors: area, then the record's summary (or the year and venue)."""
    area = " · ".join(y for y in (paper.area, paper.subarea) if y)
    if shown:
        meta = [x for x in (area, " · ".join(shown.summary)) if x]
    else:
        meta = [x for x in (area, str(paper.year or ""), paper.venue) if x]
    return [f"<p class='meta'>{_esc(' — '.join(meta))}</p>"] if meta else []


def _record_links(shown: RecordDisplay | None) -> list[str]:
    """The record's DOI, arXiv and URL lines, each a link."""
    if not shown or not shown.links:
        return []
    linked = " · ".join(
        f'{_esc(link.label)} <a href="{html.escape(link.url, quote=True)}">{_esc(link.text)}</a>'
        for link in shown.links
    )
    return [f"<p class='meta'>{linked}</p>"]


def _record_details(shown: RecordDisplay | None) -> list[str]:
    """The record's other fields, after the abstract."""
    if not shown or not shown.details:
        return []
    rows = "".join(
        f"<tr><td class='label'>{_esc(line.label)}</td><td>{_esc(line.text)}</td></tr>" for line in shown.details
    )
    return [f"<table class='record'>{rows}</table>"]
