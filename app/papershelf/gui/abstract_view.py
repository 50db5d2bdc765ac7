"""The abstract viewer: title, authors, area, sources, links and the abstract."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QTextBrowser, QWidget

from ..core.citation import authors_text, has_record, record_display
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
        esc = lambda s: html.escape(s, quote=False)  # noqa: E731
        record = has_record(paper)
        parts = [f"<h2>{esc(plain_text(paper.title))}</h2>"]
        if paper.title_derived:
            parts.append(f"<p class='derived'>{esc(self.tr('Title derived from the abstract'))}</p>")
        authors = authors_text(paper) if record else ", ".join(paper.authors)
        if authors:
            parts.append(f"<p>{esc(authors)}</p>")
        area = " · ".join(y for y in (paper.area, paper.subarea) if y)
        record_shown = record_display(paper, parent) if record else None
        if record_shown:
            meta = [x for x in (area, " · ".join(record_shown.summary)) if x]
        else:
            meta = [x for x in (area, str(paper.year or ""), paper.venue) if x]
        if meta:
            parts.append(f"<p class='meta'>{esc(' — '.join(meta))}</p>")
        shown: set[str] = set()
        if record_shown and record_shown.links:
            shown = {link.url for link in record_shown.links}
            linked = " · ".join(
                f'{esc(link.label)} <a href="{html.escape(link.url, quote=True)}">{esc(link.text)}</a>'
                for link in record_shown.links
            )
            parts.append(f"<p class='meta'>{linked}</p>")
        parts.append(f"<p class='abstract'>{abstract_html(paper.abstract, terms, normal)}</p>")
        if record_shown and record_shown.details:
            rows = "".join(
                f"<tr><td class='label'>{esc(line.label)}</td><td>{esc(line.text)}</td></tr>"
                for line in record_shown.details
            )
            parts.append(f"<table class='record'>{rows}</table>")
        links = [u for u in paper.links if u.lower().startswith(("http://", "https://")) and u not in shown]
        if paper.doi and not record:
            links.append(f"https://doi.org/{paper.doi}")
        if paper.arxiv_id and not record:
            links.append(f"https://arxiv.org/abs/{paper.arxiv_id}")
        if links:
            # double quotes: Qt's rich text decodes entities (&amp;) only in double-quoted attributes
            items = "".join(f'<li><a href="{html.escape(u, quote=True)}">{esc(u)}</a></li>' for u in links)
            parts.append(f"<p class='meta'>{esc(self.tr('Links'))}</p><ul>{items}</ul>")
        sources = sorted({Path(s.file).name for s in paper.sources})
        if sources:
            parts.append(f"<p class='meta'>{esc(self.tr('From'))}: {esc(', '.join(sources))}</p>")
        # the same paper again (an edit, here or on another device): the reader's place stays
        scroll = self.verticalScrollBar().value() if paper.id == self._shown else 0
        self.setHtml("".join(parts))
        self.verticalScrollBar().setValue(scroll)
        self._shown = paper.id
        self.paperShown.emit(paper.id)

    def _open_link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https"):
            self.opened_links.append(url.toString())
            QDesktopServices.openUrl(url)
