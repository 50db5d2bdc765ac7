"""The text of attached PDFs, extracted once per file content (SHA-256) and kept on this
machine beside the search index: a cache, rebuilt from the files whenever it is lost.

One file per PDF, `<folder>/<sha[:2]>/<sha>.json`, written atomically: {"pages": [text of each
page], "problem": "" or the reason there is no text (encrypted, damaged, image-only…), "note": a
cap that cut the text short}. A
process killed mid-extraction leaves no half entry, and the next run extracts that file again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..fileio import write_bytes_atomically

FULLTEXT_DIR = "fulltext"
CACHE_VERSION = 1


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF's text, page by page, or why it has none (`problem`); `note` says which cap cut the
    text short ("only the first 2,000 of its 2,400 pages were read"), "" when none did."""

    pages: list[str] = field(default_factory=list)
    problem: str = ""
    note: str = ""

    def page_of(self, offset: int) -> int:
        """The 1-based page that holds character `offset` of `joined()`."""
        at = 0
        for n, text in enumerate(self.pages, 1):
            at += len(text) + 1
            if offset < at:
                return n
        return len(self.pages)

    def joined(self) -> str:
        """Every page's text, one after another (a form feed between pages)."""
        return "\f".join(self.pages)


class TextCache:
    """The extracted texts of one library's PDFs on this machine."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    def _path(self, sha256: str) -> Path:
        return self.folder / sha256[:2] / f"{sha256}.json"

    def get(self, sha256: str) -> PdfText | None:
        """The cached text of the PDF with this content, or None when it was not extracted yet
        (or its entry is damaged: extracted again)."""
        try:
            data = orjson.loads(self._path(sha256).read_bytes())
            pages, problem, note = data["pages"], data.get("problem", ""), data.get("note", "")
            if data.get("v") != CACHE_VERSION or not isinstance(pages, list) or not isinstance(problem, str):
                return None
            return PdfText([str(p) for p in pages], problem, str(note))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def has(self, sha256: str) -> bool:
        """Whether the text of this content was extracted (or found to be missing) already."""
        return self._path(sha256).is_file()

    def put(self, sha256: str, text: PdfText) -> None:
        """Keep a PDF's text (atomically: a killed process leaves the old entry or none)."""
        path = self._path(sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(
            path, orjson.dumps({"v": CACHE_VERSION, "pages": text.pages, "problem": text.problem, "note": text.note})
        )
