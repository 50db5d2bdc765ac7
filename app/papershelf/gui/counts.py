"""Sidebar counts worked out from the library, for the papers a list shows.

The index answers counts with each search, but an edit reaches the index a
moment later (its writer gathers edits for a quarter second). So that a
count never shows the value from before the edit, the window recounts the
shown papers from the library right after an edit; the next answer from
the index agrees with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.library import Library

# Above this many shown papers the recount would cost more than a frame
# (measured on a busy 2-core machine: 25 ms for 20,000 papers, so about 6 ms for 5,000):
# the counts then follow the index's answer, a moment after the edit.
RECOUNT_LIMIT = 5_000


def facet_counts(library: Library, ids: Iterable[str]) -> dict[str, dict[str, int]]:
    """status value / tag / casefolded area → how many of `ids` have it (as the index counts)."""
    return library.facet_counts(ids)


def list_counts(library: Library, shown: Iterable[str] | None) -> dict[str, int]:
    """Reading list name → how many of its papers are shown (None: the whole library is)."""
    lists = library.lists()
    if shown is None:
        return {name: len(members) for name, members in lists.items()}
    wanted = shown if isinstance(shown, (set, frozenset)) else set(shown)
    return {name: sum(1 for pid in members if pid in wanted) for name, members in lists.items()}
