"""Typed errors of the core. Each carries the path involved and a message a
person can act on; the CLI and the GUI show `str(error)` as it is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .importers.base import ParsedFile


class PapershelfError(Exception):
    """Base of every error the core raises on purpose."""

    def __init__(self, message: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = Path(path) if path is not None else None

    def __str__(self) -> str:
        return self.message


class ListingError(PapershelfError):
    """A file could not be imported at all (unreadable, binary, empty...)."""


class StoreError(PapershelfError):
    """Base of the store's errors."""


class StoreCorruptError(StoreError):
    """The library file or its journal could not be parsed. Nothing was written."""

    def __init__(self, message: str, path: Path | str, backup: Path | None = None) -> None:
        super().__init__(message, path)
        self.backup = backup


class StoreUnreadableError(StoreError):
    """The library file exists but cannot be opened (permissions, I/O). Not damage."""


class StoreOddFileError(StoreUnreadableError):
    """A store file is not a regular file (a named pipe, a device, a folder...) or is
    larger than any library: refused unread, nothing changed. Not damage that
    `recover` could mend: the user moves it away."""


class StoreLockedError(StoreError):
    """Another Papershelf process has this library open for writing."""


class StoreVersionError(StoreError):
    """The library was written by a newer Papershelf."""


class StoreWriteError(StoreError):
    """Writing failed (read-only folder, full disk...). The edit was not applied."""


class ReadOnlyLibraryError(StoreError):
    """An edit was asked of a library opened read-only."""


class SearchIndexError(PapershelfError):
    """The search index could not be built or used (the library itself is fine)."""


class SearchIndexDamagedError(SearchIndexError):
    """Reading the search index failed: it is marked damaged, and opening it
    again rebuilds it from the library."""


class NotFoundError(PapershelfError):
    """No paper or reading list by that id or name."""


class ExportError(PapershelfError):
    """An export could not be written (full disk, permissions...). A file that was there is unchanged."""


class SingleInstanceError(PapershelfError):
    """The channel to a running Papershelf (socket folder, server, message) is not
    the user's own or not valid; it is not used, and the window opens on its own."""


class InvalidValueError(PapershelfError, ValueError):
    """A value given to the library is not usable (an empty list name, a rating
    of 7, a malformed citation key...). Nothing was changed. Also a ValueError,
    which is what callers caught before this type existed."""


class NothingToExportError(ExportError):
    """An export selected no papers: nothing was written, a file that was there is unchanged."""


class NotAListingError(ListingError):
    """A text file that is no paper listing, BibTeX or RIS file (a README, source code): refused."""


class UncertainListingError(ListingError):
    """A header-less text file that only partly looks like a listing: nothing is imported
    until the person confirms it (`parsed` holds what would be)."""

    def __init__(self, message: str, path: Path | str | None, parsed: ParsedFile) -> None:
        super().__init__(message, path)
        self.parsed = parsed
