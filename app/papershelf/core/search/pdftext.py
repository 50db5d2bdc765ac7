"""The text of a paper's attached PDFs, as the index reads it: from the text cache
(`core.pdf.fulltext.TextCache`, filled by `Library.extract_fulltext`), never from the PDFs.

A paper's document gets the joined text of its PDFs, capped at MAX_FULLTEXT_CHARS, and its
digest gets `state`: which of its PDFs have an entry in the cache, so a text extracted later
changes the digest and the catch-up indexes the paper again. Reading the cache is the only
disk access: the rebuild's worker processes read it themselves (the parent hands them the
hashes, not the texts, so a rebuild never holds every PDF's text at once).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..attachments import Attachment, attachments
from ..paper import Paper
from ..pdf.fulltext import PdfText, TextCache

MAX_FULLTEXT_CHARS = 300_000  # of a paper's PDFs' text indexed, at most (~100 pages of a paper)


def is_pdf(item: Attachment) -> bool:
    """Whether an attachment is a PDF whose text can be extracted (named .pdf, or pages counted)."""
    return bool(item.sha256) and (item.is_pdf() or item.pages > 0)


def pdf_hashes(paper: Paper) -> list[str]:
    """The content hashes of a paper's PDFs, in its order, each once."""
    files = paper.files
    if not files:
        return []
    return list(dict.fromkeys(a.sha256 for a in attachments(files) if is_pdf(a)))


class PaperTexts:
    """The cached texts of a library's PDFs (`folder`: the TextCache's; None: no PDF text at all)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.cache = TextCache(folder) if folder is not None else None

    def state(self, paper: Paper) -> str:
        """What the paper's document takes from the cache, for its digest: each PDF's hash and
        whether its text was extracted ("" for a paper without PDFs)."""
        shas = pdf_hashes(paper)
        if not shas or self.cache is None:
            return ""
        has = self.cache.has
        return ",".join(f"{sha[:16]}{'+' if has(sha) else '-'}" for sha in shas)

    def texts(self, shas: Iterable[str]) -> list[PdfText]:
        """The cached texts of these PDFs (those not extracted yet left out)."""
        if self.cache is None:
            return []
        out = []
        for sha in shas:
            text = self.cache.get(sha)
            if text is not None and text.pages:
                out.append(text)
        return out

    def joined(self, shas: Iterable[str]) -> str:
        """The text the index holds of these PDFs: one after another, at most MAX_FULLTEXT_CHARS."""
        parts: list[str] = []
        left = MAX_FULLTEXT_CHARS
        for text in self.texts(shas):
            if left <= 0:
                break
            joined = text.joined()[:left]
            parts.append(joined)
            left -= len(joined) + 2
        return "\n\n".join(parts)

    def document_parts(self, paper: Paper) -> tuple[str, str]:
        """(state, joined text) of a paper's PDFs, for its document."""
        shas = pdf_hashes(paper)
        if not shas:
            return "", ""
        return self.state(paper), self.joined(shas)
