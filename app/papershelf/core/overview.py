"""What the window's sidebar and shortcuts show of a library, worked out without Qt.

The counts next to each filter, the nine tags the number keys toggle, the
papers a tag rename or a sidebar export takes, the file name an export
offers. Each is a function over the library's reading methods; the window
only shows what they give.

They take any object with those methods (`LibraryView`), not `Library`
itself: the facade imports the rest of the core, and nothing in the core
imports it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

TOP_TAGS = 9
"""How many tags the number keys 1-9 (and the paper menu's Tag entries) reach."""

# Above this many shown papers the recount would cost more than a frame
# (measured on a busy 2-core machine: 25 ms for 20,000 papers, so about 6 ms for 5,000):
# the counts then follow the index's answer, a moment after the edit.
RECOUNT_LIMIT = 5_000


class PaperView(Protocol):
    """The fields of a paper these functions read."""

    @property
    def id(self) -> str:
        """The paper's id."""

    @property
    def tags(self) -> list[str]:
        """Its tags, as stored (normalised: see `paper.normalize_tag`)."""


class LibraryView(Protocol):
    """The reading methods of `Library` these functions use."""

    def __len__(self) -> int:
        """How many papers the library holds."""

    def ids(self) -> list[str]:
        """Every paper id, in library order."""

    def get(self, paper_id: str, /) -> PaperView:
        """The paper with this id."""

    def query(self, status: str | None = None, tag: str | None = None) -> Sequence[PaperView]:
        """Papers with this status and tag, in library order."""

    def tag_counts(self) -> Mapping[str, int]:
        """Tag → how many papers have it."""

    def key_tags(self, n: int, /) -> list[str]:
        """The `n` tags the user applied by hand that papers have, most used first."""

    def lists(self) -> dict[str, list[str]]:
        """Reading list name → its paper ids, in the list's order."""

    def list_ids(self, name: str, /) -> list[str]:
        """The paper ids of one reading list."""

    def facet_counts(self, ids: Iterable[str], /) -> dict[str, dict[str, int]]:
        """Status value / tag / case-folded area → how many of `ids` have it."""


# ---- tags -----------------------------------------------------------------------


def top_tags(library: LibraryView, n: int = TOP_TAGS) -> list[str]:
    """The `n` tags the number keys reach: of the tags the user applied by hand (never an
    import's keywords), the most used first, ties in alphabetical order (`Library.key_tags`)."""
    return library.key_tags(n)


def all_tagged(library: LibraryView, ids: Iterable[str], tag: str) -> bool:
    """Whether every one of these papers has the tag (so a toggle removes it)."""
    return all(tag in library.get(pid).tags for pid in ids)


def tag_rename_ids(library: LibraryView, tag: str) -> list[str]:
    """The papers that renaming `tag` changes: every one that has it (the
    tag compared in its normalised form, as `Library.rename_tag` does)."""
    return [p.id for p in library.query(tag=tag)]


# ---- exports --------------------------------------------------------------------


def sidebar_export_ids(library: LibraryView, kind: str, value: str) -> list[str]:
    """The papers an export from a sidebar entry takes: a reading list's in
    its order; a tag's or a status's in library order."""
    if kind == "list":
        return library.list_ids(value)
    if kind == "tag":
        return [p.id for p in library.query(tag=value)]
    return [p.id for p in library.query(status=value)]


def export_file_stem(name: str) -> str:
    """The file name (without .bib) an export of `name` (a list, tag or
    "selection") offers: letters, digits, - and _ kept, the rest as -."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name).strip("-") or "papers"


# ---- the sidebar's counts -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Counts:
    """What the sidebar shows next to each entry, for the papers a list shows."""

    status: dict[str, int]  # status value → papers
    tags: dict[str, int]  # tag → papers
    area: dict[str, int]  # case-folded area → papers
    lists: dict[str, int]  # reading list → how many of its papers are shown
    total: int  # the papers shown


def list_counts(library: LibraryView, shown: Iterable[str] | None) -> dict[str, int]:
    """Reading list name → how many of its papers are shown (None: the whole library is)."""
    lists = library.lists()
    if shown is None:
        return {name: len(members) for name, members in lists.items()}
    wanted = shown if isinstance(shown, (set, frozenset)) else set(shown)
    return {name: sum(1 for pid in members if pid in wanted) for name, members in lists.items()}


def shown_counts(library: LibraryView, shown: Sequence[str] | None, total: int | None = None) -> Counts:
    """The sidebar's counts worked out from the library for the papers shown
    (`shown` None: the whole library), as the index counts them.

    The index answers counts with each search, but an edit reaches the index a
    moment later (its writer gathers edits for a quarter second). So that a
    count never shows the value from before the edit, the window recounts the
    shown papers from the library right after an edit (see `RECOUNT_LIMIT`),
    and while the index is not open; the next answer from the index agrees.
    `total` is the number the list says it shows (default: every shown paper).
    """
    facets = library.facet_counts(library.ids() if shown is None else shown)
    lists = list_counts(library, None if shown is None else set(shown))
    if total is None:
        total = len(library) if shown is None else len(shown)
    return Counts(facets["status"], facets["tags"], facets["area"], lists, total)
