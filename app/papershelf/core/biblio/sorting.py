"""One sort key per column: the list's columns, the command line's `--sort` and the search
index's title order all read these, so one library sorts the same way from each.

A title sorts by what the reader sees (`plain_text`, case-folded): "{B}ayes" and "$\\alpha$-stable"
sort under B and α, not under "{" and "$". The index keeps the first `TITLE_SORT_CHARS` of the
same key. A key of None (no year, no venue) sorts last whichever way the column is sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..paper import Paper, Status
from ..render import plain_text

TITLE_SORT_CHARS = 200  # what the index stores of a title's key


def title_key(title: str) -> str:
    """A title's sort key: its plain text (no LaTeX, no Markdown), case-folded."""
    return plain_text(title).casefold()


# Columns the list can be sorted by (key of each paper), in display order.
SORT_KEYS: dict[str, Callable[[Paper], Any]] = {
    "title": lambda p: title_key(p.title),
    "authors": lambda p: p.authors[0].casefold() if p.authors else "\uffff",
    "year": lambda p: p.year,  # numerically (stored as an int)
    "venue": lambda p: p.venue.casefold() or None,  # the reader's text of journal/booktitle/journaltitle
    "area": lambda p: (p.area.casefold() or "\uffff", p.subarea.casefold()),
    "status": lambda p: list(Status).index(p.status),
    "rating": lambda p: p.rating or 0,
    "tags": lambda p: ", ".join(p.tags) or "\uffff",
    "added": lambda p: p.added,
    "read": lambda p: p.read_at or None,  # None: never read, or before the date was kept (last)
    "opened": lambda p: p.opened_at or None,  # when one of its files was last opened (None: never, last)
}
