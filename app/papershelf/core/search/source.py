"""What the search index reads of a library: a small protocol, not the facade.

The index sits below `Library` (which owns it): it reads papers, lists and
the library's generation through `PaperSource`, and follows edits through
`subscribe`. `Library` satisfies the protocol as it is and passes itself;
nothing in this package imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Protocol

from ..paper import Paper


class ChangeEvent(Protocol):
    """A change the library announces after it is durable (`library.Change`
    has these and more): what kind, and which papers it touched."""

    @property
    def kind(self) -> str:
        """papers-added | papers-changed | papers-removed | lists-changed."""
        ...

    @property
    def ids(self) -> Collection[str]:
        """The papers touched (none for a change to lists only)."""
        ...


class PaperSource(Protocol):
    """What the index reads of a library. Every method may be called from the
    index's writer thread while the owner's thread edits: `find` and `lists`
    must be safe for that (a single dict read; copies)."""

    @property
    def folder(self) -> Path:
        """The library's folder (named in messages; the index is never kept in it)."""
        ...

    @property
    def index_folder(self) -> Path:
        """Where the index lives: a folder of this machine's, outside the library folder
        (which a sync tool may copy to other machines)."""
        ...

    @property
    def fulltext_folder(self) -> Path:
        """Where the texts of the library's PDFs are cached (a `TextCache`'s folder): this
        machine's, beside the index; the index reads the PDFs' texts there."""
        ...

    @property
    def readonly(self) -> bool:
        """A read-only library never changes: the index does not subscribe."""
        ...

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the library does; recorded in the index's state."""
        ...

    def unchanged_on_disk(self) -> bool:
        """False once the library's files changed after a read-only source read
        them (another process saved an edit: this copy is older); True for the writer."""
        ...

    def papers(self) -> Iterable[Paper]:
        """Every paper, in library order."""
        ...

    def ids(self) -> list[str]:
        """Every paper's id, in library order."""
        ...

    def find(self, paper_id: str) -> Paper | None:
        """The paper with this id, or None (safe from any thread)."""
        ...

    def get(self, paper_id: str) -> Paper:
        """The paper with this id; raises NotFoundError if there is none."""
        ...

    def lists(self) -> dict[str, list[str]]:
        """Reading lists, name → paper ids (copies, safe from any thread)."""
        ...

    def memberships(self) -> dict[str, list[str]]:
        """Paper id → names of the lists that hold it."""
        ...

    def subscribe(self, callback: Callable[[ChangeEvent], None]) -> Callable[[], None]:
        """Call `callback(change)` after every change; returns an unsubscribe function."""
        ...
