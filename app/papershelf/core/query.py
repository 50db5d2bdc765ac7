"""What to look for and what came back: `Query`, `Answer`, the orders a list
can be sorted in, the title-only fallback and the "did you mean" suggestion.

Plain data and pure functions, no index: `Library.search` (core/library/searching.py)
answers a `Query` with the search index when it is ready and with these
helpers over the library's own filters while it is not. The window and the
command line build queries and read answers; neither needs the index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .biblio.sorting import SORT_KEYS
from .paper import Paper

RELEVANCE = "relevance"

# The index's own orders (`Query.index_order`): best first, newest first, by plain title.
INDEX_SORTS = ("relevance", "added", "title")


@dataclass(frozen=True)
class Query:
    """One search: words, filters and an order. Immutable; `with_` makes a changed copy.

    Two kinds of order. By default (the window's list) `sort` is "relevance"
    or a column of `SORT_KEYS`, sorted from the papers; with no words a
    reading list keeps its own order, and `descending` reverses either. With
    `index_order` (the command line's `search`) `sort` is one of
    `INDEX_SORTS` and the index orders the answer itself: "added" newest
    first, ties and all as the index breaks them, and a `limit` costs less.
    """

    text: str = ""
    status: str | None = None
    tag: str | None = None
    area: str | None = None
    list_name: str | None = None
    only_ids: frozenset[str] | None = None  # e.g. the papers the last import added
    sort: str = RELEVANCE  # "relevance" or a SORT_KEYS column (INDEX_SORTS with index_order)
    descending: bool = False
    limit: int | None = None  # at most this many ids (the total still counts every match)
    facets: bool = True  # count status, tags and area over every match
    highlight: bool = True  # work out `Answer.terms`, the words to highlight
    suggest: bool = True  # nothing found: work out `Answer.suggestion` (reads the library's words)
    index_order: bool = False  # see above: the index's order, not the list's

    def with_(self, **changes: Any) -> Query:
        """A copy with these fields changed."""
        return replace(self, **changes)


@dataclass
class Answer:
    """What a `Query` found: the ids in order, how many, and what to show with them."""

    query: Query
    ids: list[str]
    total: int  # every match, even beyond `query.limit`
    facets: dict[str, dict[str, int]] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    indexed: bool = True  # False: the index was not ready, text was matched on titles only
    fallback: bool = False  # the query was not understood: its plain words were searched
    error: str = ""
    terms: set[str] = field(default_factory=set)  # query words as the index holds them, to highlight
    index_damaged: bool = False  # the index failed to read: open it again to rebuild it
    suggestion: str = ""  # nothing found: the query with a close word in place of an unknown one
    scores: dict[str, float] = field(default_factory=dict)  # id → relevance, when the index ranked them
    # of `ids`: papers that matched only through the text of their PDFs (they rank after the rest)
    fulltext_only: frozenset[str] = frozenset()
    # (papers indexed so far, papers in all) while the index is being built: the answer is from those
    # only (partial: shown as such, never kept as the answer, no close word offered, no facets)
    building: tuple[int, int] | None = None


def title_matches(ids: Iterable[str], find: Callable[[str], Paper | None], text: str) -> list[str]:
    """The title-only fallback while the index is not ready: the `ids` whose
    title holds every word of `text` (case-folded substrings), in order."""
    words = text.casefold().split()
    if not words:
        return list(ids)
    # a paper deleted meanwhile is just not there
    return [pid for pid in ids if (p := find(pid)) is not None and all(w in p.title.casefold() for w in words)]


def sort_ids(ids: Iterable[str], find: Callable[[str], Paper | None], column: str, descending: bool) -> list[str]:
    """`ids` sorted by a `SORT_KEYS` column (stable: ties keep their order); papers
    whose key is None (no year, say) come last in either direction."""
    key = SORT_KEYS[column]
    keys = {pid: key(p) for pid in ids if (p := find(pid)) is not None}  # read once: edits go on meanwhile
    known = [pid for pid, k in keys.items() if k is not None]
    missing = [pid for pid, k in keys.items() if k is None]
    return sorted(known, key=keys.__getitem__, reverse=descending) + missing


# ---- a search that finds nothing -------------------------------------------------

_WORD = re.compile(r"[^\W\d_]{3,}")
_QUERY_WORD = re.compile(r"(?<![\w:~*\"'])([^\W\d_]{3,})(?![\w:~*])")
_OPERATORS = {"and", "or", "not"}


class PaperReader(Protocol):
    """What the vocabulary reads of a library."""

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever the library does."""

    def papers(self) -> Iterable[Paper]:
        """Every paper."""


class Vocabulary:
    """Words of the library's titles and authors, to offer a close one when a
    search finds nothing. Built on the thread that searches, again after edits."""

    def __init__(self, library: PaperReader):
        self.library = library
        self._generation: tuple[int, int] | None = None
        self._words: dict[str, list[str]] = {}

    def _load(self) -> None:
        generation = self.library.generation
        if generation == self._generation:
            return
        words: set[str] = set()
        for paper in list(self.library.papers()):
            words.update(w.casefold() for w in _WORD.findall(paper.title))
            for author in paper.authors:
                words.update(w.casefold() for w in _WORD.findall(author))
        by_letter: dict[str, list[str]] = {}
        for w in words:
            by_letter.setdefault(w[0], []).append(w)
        self._words, self._generation = by_letter, generation

    def close_word(self, word: str) -> str:
        """A word of the library close to `word` ("" if `word` is one, or none is close)."""
        self._load()
        word = word.casefold()
        candidates = self._words.get(word[0], [])
        if word in candidates:
            return ""
        import difflib  # here, not at start-up: only a search that finds nothing needs it

        found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
        return found[0] if found else ""

    def suggest(self, text: str) -> str:
        """The query with each word the library does not hold replaced by a close one ("" if none)."""
        out, changed = text.strip(), False
        for word in query_words(text):
            close = self.close_word(word)
            if close:
                out = re.sub(rf"\b{re.escape(word)}\b", close, out, count=1)
                changed = True
        return out if changed else ""


def query_words(text: str) -> list[str]:
    """The plain words of a query (not field names, operators, fuzzy or prefix forms)."""
    return [w for w in _QUERY_WORD.findall(text) if w.casefold() not in _OPERATORS]


def fuzzy_query(text: str) -> str:
    """The query with each plain word made fuzzy (`word~`): close spellings match too."""
    return _QUERY_WORD.sub(
        lambda m: m.group(1) + "~" if m.group(1).casefold() not in _OPERATORS else m.group(1), text.strip()
    )
