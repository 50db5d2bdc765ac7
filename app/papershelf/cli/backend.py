"""The command line's last direct uses of core internals, kept here and nowhere else.

TO BE REPLACED BY LIBRARY METHODS (issue 12): the CLI reaches data only
through `Library`, and these wrap what it does not offer yet. Each function
names the method that replaces it; once `Library` has them, the callers in
commands.py and search_commands.py call the library and this module goes.

The imports stay inside the functions: the search index pulls in Whoosh,
which a command that does not search should not pay for at start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..core.errors import ListingError
from ..core.library import FileReport, Library

if TYPE_CHECKING:
    from ..core.index import Results, SearchIndex

Progress = Callable[[int, int], None]


def import_text(lib: Library, data: bytes, as_listing: bool = False) -> FileReport:
    """Import a paste (standard input) in whatever encoding it came; a paste that cannot be imported is a
    report with its error, as a file's is.  → `Library.import_text(data, as_listing=...)`"""
    from ..core.importers import PASTE_LABEL, parse_bytes

    try:
        return lib.import_parsed(parse_bytes(data, as_listing=as_listing))
    except ListingError as exc:
        return FileReport(path=PASTE_LABEL, error=str(exc))


def rebuild_index(lib: Library, progress: Progress) -> float:
    """Rebuild the search index from the library; the seconds it took (not counting loading the index's
    code).  → `Library.reindex(progress)`"""
    from ..core.index import SearchIndex

    ix = SearchIndex(lib)
    started = time.perf_counter()
    try:
        ix.rebuild(progress=progress)
    finally:
        ix.close()
    return time.perf_counter() - started


class IndexSession:
    """The library's search index, opened (brought up to date, rebuilt if need be) for one command.

    → `Library.search(Query) -> Answer`, `Library.snippets(ids, text)` and the library's index state
    (why it was rebuilt, whether it was damaged, its folder), with open progress reported to a callback.
    """

    def __init__(self, lib: Library, progress: Progress) -> None:
        from ..core.index import SearchIndex

        self._ix: SearchIndex = SearchIndex(lib)
        self._ix.open(progress=progress)

    @property
    def damaged(self) -> str:
        """Why opening rebuilt the index as damaged ("" if it did not)."""
        return self._ix.damaged

    @property
    def rebuilt_because(self) -> str:
        """Why opening rebuilt the index ("" if it did not)."""
        return self._ix.rebuilt_because

    @property
    def folder(self) -> Path:
        """The index's folder."""
        return self._ix.folder

    def search(
        self,
        text: str,
        *,
        status: str | None = None,
        tag: str | None = None,
        area: str | None = None,
        list_name: str | None = None,
        sort: str = "relevance",
        limit: int | None = 20,
    ) -> Results:
        """The papers matching `text` and the filters (no facets: the command line shows none)."""
        return self._ix.search(
            text, status=status, tag=tag, area=area, list_name=list_name, sort=sort, limit=limit, facets=False
        )

    def snippets(self, ids: Iterable[str], text: str) -> dict[str, str]:
        """Highlighted fragments (HTML) of these papers' abstracts for the query `text`."""
        return self._ix.snippets(ids, text)

    def close(self) -> None:
        """Stop following the library and close the index."""
        self._ix.close()

    def __enter__(self) -> IndexSession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
