"""The text of attached PDFs, extracted once per file content (SHA-256) and kept on this
machine beside the search index: a cache, rebuilt from the files whenever it is lost.

One file per PDF, `<folder>/<sha[:2]>/<sha>.v<CACHE_VERSION>.json`, written atomically: {"pages":
[text of each page], "problem": "" or the lasting reason there is no text (encrypted, damaged,
image-only…), "note": a cap that cut the text short}. The version is in the name, so a new
version simply misses the old entries (and `prune` removes them). A process killed
mid-extraction leaves no half entry, and the next run extracts that file again; an entry that
cannot be parsed is deleted when read, so the next run extracts that file again too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..fileio import remove_stale_temp_files, write_bytes_atomically

FULLTEXT_DIR = "fulltext"
CACHE_VERSION = 1
ENTRY_NAME = re.compile(r"^([0-9a-f]{64})(?:\.v(\d+))?\.json$")  # this version's entries and older ones
SHARD_NAME = re.compile(r"^[0-9a-f]{2}$")


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF's text, page by page, or why it has none (`problem`); `note` says which cap cut the
    text short ("only the first 2,000 of its 2,400 pages were read"), "" when none did. `passing`:
    the problem may not be there next time (the read timed out, crashed or ran out of memory, the
    file could not be opened): such a text is not cached, and the next run reads the file again."""

    pages: list[str] = field(default_factory=list)
    problem: str = ""
    note: str = ""
    passing: bool = False

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
        return self.folder / sha256[:2] / f"{sha256}.v{CACHE_VERSION}.json"

    def get(self, sha256: str) -> PdfText | None:
        """The cached text of the PDF with this content, or None when it was not extracted yet.
        An entry that cannot be parsed (cut short, damaged) is deleted: `has` is then False and
        the next run extracts that file again."""
        path = self._path(sha256)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        try:
            data = orjson.loads(raw)
            pages, problem, note = data["pages"], data.get("problem", ""), data.get("note", "")
            if data.get("v") == CACHE_VERSION and isinstance(pages, list) and isinstance(problem, str):
                return PdfText([str(p) for p in pages], problem, str(note))
        except (ValueError, KeyError, TypeError):
            pass
        try:
            path.unlink()
        except OSError:
            pass
        return None

    def has(self, sha256: str) -> bool:
        """Whether the text of this content was extracted (or found to be missing) already: an
        entry is there and ends as a whole one does (one cut short is not; `get` deletes it)."""
        try:
            with open(self._path(sha256), "rb") as f:
                f.seek(-1, os.SEEK_END)
                return f.read(1) == b"}"
        except OSError:  # none, or empty
            return False

    def put(self, sha256: str, text: PdfText) -> None:
        """Keep a PDF's text (atomically: a killed process leaves the old entry or none). A text
        whose problem is passing is not kept: the file is read again next time."""
        if text.passing:
            return
        path = self._path(sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(
            path, orjson.dumps({"v": CACHE_VERSION, "pages": text.pages, "problem": text.problem, "note": text.note})
        )

    def prune(self, keep: Iterable[str]) -> int:
        """Remove the entries of contents not in `keep` (texts of PDFs detached, of papers deleted)
        and of older versions, and our temporary files of killed writes older than 15 minutes.
        Only names of the cache's own pattern, in its own two-letter folders, are touched.
        Returns how many entries were removed; errors are ignored (this is housekeeping)."""
        held = set(keep)
        removed = 0
        try:
            entries = list(os.scandir(self.folder))
            shards = [d for d in entries if SHARD_NAME.match(d.name) and d.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        for shard in shards:
            remove_stale_temp_files(shard.path)
            try:
                names = os.listdir(shard.path)
            except OSError:
                continue
            for name in names:
                match = ENTRY_NAME.match(name)
                if match is None or not name.startswith(shard.name):
                    continue
                if match.group(1) in held and match.group(2) == str(CACHE_VERSION):
                    continue
                try:
                    os.unlink(os.path.join(shard.path, name))
                    removed += 1
                except OSError:
                    pass
        return removed
