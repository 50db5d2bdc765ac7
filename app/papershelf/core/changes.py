"""What an operation on the library touched, as announced to its subscribers.

Its own module so that every part of the core (importing, the search index)
can name a `Change` without importing the facade that emits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Change:
    """What an operation touched, for subscribers to decide what to refresh."""

    kind: str  # papers-added | papers-changed | papers-removed | lists-changed
    ids: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()  # for papers-changed: which fields
    lists: frozenset[str] = frozenset()  # for lists-changed: which list names


def announced(*changes: Change) -> list[Change]:
    """Of `changes`, in their order, those that touched something (papers, or for
    lists-changed lists): what an operation announces to its subscribers."""
    return [c for c in changes if (c.lists if c.kind == "lists-changed" else c.ids)]


Subscriber = Callable[[Change], None]

Record = dict[str, Any]
"""A paper's stored dict (`Paper.raw()`), as undo keeps and puts back."""
