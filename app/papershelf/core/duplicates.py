"""Which copies are the same paper, and which papers only might be.

The rule (issue 13 item 4). Entries of one file are distinct unless identical:
a file that lists two entries meant two entries (xampl.bib's `-minimal` and
`-full` twins). Across files, or against the library:

- the same DOI, or the same arXiv id, is the same paper;
- the same entry (the same record, or the same citation key and title, or the same
  key and the record less the fields the user edited since) is the same paper;
- otherwise the title must agree, and the first author's surname and the year
  must agree wherever both copies have them (at least one of the two present on
  both sides), the entry types must not contradict each other, and no
  identifier may conflict (two different DOIs or arXiv ids are two papers);
  without an author on both sides, the year and the venue must agree too, and
  the volume, number and pages where both have them (two "Editorial" 2020
  entries of Nature and Science are two works);
- the abstract alone decides only where one side has no title of its own (a
  listing's paper, which has nothing else), or both titles agree.

What the rule does not merge but looks alike (the same title, DOI or arXiv id)
is a *possible duplicate*, for a person to merge or keep apart
(`possible_duplicates`); a pair kept apart is remembered on both papers (`Paper.distinct`).

Everything is found through dict lookups on normalised keys, never by comparing
every pair, so an import of 10,000 entries stays linear.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from .biblio.identifiers import clean_doi
from .biblio.names import family_key
from .biblio.types import LOOSE_TYPES, biblatex_type
from .paper import RAW_SOURCES
from .text import fingerprint_text

if TYPE_CHECKING:
    from .changes import Change
    from .importers.base import Candidate
    from .paper import Paper

__all__ = [
    "Matcher",
    "Pair",
    "arxiv_key",
    "doi_key",
    "possible_duplicates",
    "record_key",
    "same_paper",
    "title_key",
]

_K = TypeVar("_K")
_ARXIV_PREFIX = re.compile(r"^(?:https?://arxiv\.org/(?:abs|pdf)/|arxiv:\s*)", re.IGNORECASE)
_ARXIV_VERSION = re.compile(r"v\d+$")
GENERIC_GROUP = 12
"""A title shared by more papers than this ("Introduction", "Editorial") says nothing:
its papers are not offered as possible duplicates of each other."""


CROWDED = 4 * GENERIC_GROUP
"""The most papers the matcher lists under one key (a title, DOI, abstract or record)."""


class Copy(Protocol):
    """What the rule reads of a paper or of an entry from a file."""

    @property
    def title(self) -> str:
        """The title (perhaps derived from the abstract, for a paper)."""

    @property
    def authors(self) -> list[str]:
        """The authors' names."""

    @property
    def year(self) -> int | None:
        """The year."""

    @property
    def venue(self) -> str:
        """The journal or proceedings, as shown to the reader."""

    @property
    def doi(self) -> str:
        """The DOI."""

    @property
    def arxiv_id(self) -> str:
        """The arXiv id."""

    @property
    def entrytype(self) -> str:
        """The entry type ("" without a record)."""

    @property
    def bibfields(self) -> dict[str, str]:
        """The record's fields."""


def doi_key(doi: str) -> str:
    """A DOI as two copies of it agree: no resolver prefix, case-folded (DOIs ignore case)."""
    if not doi:
        return ""
    return clean_doi(doi).casefold()


def arxiv_key(arxiv_id: str) -> str:
    """An arXiv id as two copies of it agree: no prefix, no version."""
    if not arxiv_id:
        return ""
    key = _ARXIV_PREFIX.sub("", arxiv_id.strip()).strip().casefold()
    return _ARXIV_VERSION.sub("", key)


@functools.lru_cache(maxsize=8192)
def title_key(title: str) -> str:
    """A title as two copies of it agree whatever their case, LaTeX and punctuation
    (remembered: an import compares each entry's title with several papers')."""
    return fingerprint_text(title) if title else ""


def _first_family(authors: list[str]) -> str:
    return family_key(authors[0]) if authors else ""


def _type(entrytype: str) -> str:
    t = entrytype.casefold()
    return biblatex_type(t)


def record_key(copy: Copy) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The whole record of an entry, to tell identical entries (None: no record)."""
    if not copy.entrytype:
        return None
    return (copy.entrytype.casefold(), tuple(sorted(copy.bibfields.items())))


def conflict(a: Copy, b: Copy) -> str:
    """Why two copies cannot be one paper ("" if nothing says so): different DOIs or arXiv ids."""
    if a.doi and b.doi and doi_key(a.doi) != doi_key(b.doi):
        return "different DOIs"
    if a.arxiv_id and b.arxiv_id and arxiv_key(a.arxiv_id) != arxiv_key(b.arxiv_id):
        return "different arXiv ids"
    return ""


def _types_agree(a: Copy, b: Copy) -> bool:
    ta, tb = _type(a.entrytype), _type(b.entrytype)
    return ta == tb or ta in LOOSE_TYPES or tb in LOOSE_TYPES


def title_match(a: Copy, b: Copy) -> str:
    """Why two copies of one title are one paper, or "": the first author and the year agree
    wherever both have them (at least one of the two on both sides), the types do not
    contradict each other, and when no author is on both sides the venue (journal or
    booktitle) agrees too: a title and a year alone ("Editorial", 2020) name many works."""
    ka = title_key(a.title)
    if not ka or ka != title_key(b.title) or not _types_agree(a, b):
        return ""
    sa, sb = _first_family(a.authors), _first_family(b.authors)
    if sa and sb and sa != sb:
        return ""
    if a.year and b.year and a.year != b.year:
        return ""
    if sa and sb:
        return "the same title, authors and year" if a.year and b.year else "the same title and authors"
    if not (a.year and b.year):
        return ""
    va, vb = title_key(a.venue), title_key(b.venue)
    if va and va == vb and not _issue_conflict(a, b):
        return "the same title, year and venue"
    return ""


def _issue_conflict(a: Copy, b: Copy) -> bool:
    """Whether the records put two copies in different places of one venue (another volume,
    number or pages), where both say."""
    for name in ("volume", "number", "pages"):
        x, y = a.bibfields.get(name), b.bibfields.get(name)
        if x and y and title_key(x) != title_key(y):
            return True
    return False


def same_paper(a: Copy, b: Copy) -> str:
    """Why copies `a` and `b` (from different files) are the same paper, in a few words;
    "" when the rule says they are not. The abstract is not looked at here (see `Matcher`)."""
    if a.entrytype and a.entrytype.casefold() == b.entrytype.casefold() and a.bibfields == b.bibfields:
        return "the same entry"  # record_key(a) == record_key(b), without sorting the fields
    if conflict(a, b):
        return ""
    if (d := doi_key(a.doi)) and d == doi_key(b.doi):
        return "the same DOI"
    if (x := arxiv_key(a.arxiv_id)) and x == arxiv_key(b.arxiv_id):
        return "the same arXiv id"
    return title_match(a, b)


class Matcher:
    """The library's papers by DOI, arXiv id, title, record and abstract fingerprint: the
    papers an import's entry may be a copy of, found by dict lookups.

    Kept up to date by following the library's changes; it may hold ids of papers since
    removed or changed, so every lookup checks the paper as it is now (`get`)."""

    def __init__(self, get: Callable[[str], Paper | None]) -> None:
        # weakly: the matcher is the library's (see matcher_for) and must not keep it alive
        self._get: Callable[[], Callable[[str], Paper | None] | None] = (
            weakref.WeakMethod(get) if hasattr(get, "__self__") else lambda: get
        )
        self.by_doi: dict[str, list[str]] = {}
        self.by_arxiv: dict[str, list[str]] = {}
        # titles and records by their hash (an int, not a second copy of the text): every
        # lookup checks the paper itself, so a collision costs one comparison
        self.by_title: dict[int, list[str]] = {}
        self.by_abstract: dict[str, list[str]] = {}
        self.by_record: dict[int, list[str]] = {}
        self.known: set[str] = set()  # every id indexed (an added paper already known is skipped)

    def add(self, paper: Paper) -> None:
        """Index one paper under each of its keys."""
        # the stored dict, not the properties: this runs once per paper of every import
        d = paper.raw()
        pid = d["id"]
        self.known.add(pid)
        if doi := d.get("doi"):
            _put(self.by_doi, doi_key(doi), pid)
        if arxiv := d.get("arxiv_id"):
            _put(self.by_arxiv, arxiv_key(arxiv), pid)
        if (title := d.get("title")) and not d.get("title_derived"):
            _put(self.by_title, hash(title_key(title)), pid)
        if d.get("abstract") and (fp := d.get("fingerprint")):
            _put(self.by_abstract, fp, pid)
        if entrytype := d.get("entrytype"):
            _put(self.by_record, _record_hash(entrytype, d.get("bibfields") or {}), pid)

    def follow(self, change: Change) -> None:
        """Index the papers a change added, or changed in a field the keys come from
        (a library subscriber; the old keys stay, as every lookup checks the paper)."""
        changed = change.kind == "papers-changed" and change.fields & _KEYED
        if change.kind == "papers-added" or changed:
            get = self._get()
            if get is None:
                return
            for pid in change.ids:
                if not changed and pid in self.known:  # an import's papers: indexed as it read them
                    continue
                paper = get(pid)
                if paper is not None:
                    self.add(paper)

    def _ids(self, cand: Candidate, fp: str) -> dict[str, None]:
        """The papers that may be copies of `cand` (a dict: ordered, each once)."""
        out: dict[str, None] = {}
        if cand.entrytype:
            out.update(dict.fromkeys(self.by_record.get(_record_hash(cand.entrytype, cand.bibfields), ())))
        if cand.doi:
            out.update(dict.fromkeys(self.by_doi.get(doi_key(cand.doi), ())))
        if cand.arxiv_id:
            out.update(dict.fromkeys(self.by_arxiv.get(arxiv_key(cand.arxiv_id), ())))
        if cand.title:
            out.update(dict.fromkeys(self.by_title.get(hash(title_key(cand.title)), ())))
        if cand.abstract:
            out.update(dict.fromkeys(self.by_abstract.get(fp, ())))
        return out

    def find(
        self,
        cand: Candidate,
        fp: str,
        get: Callable[[str], Paper | None],
        skip: Callable[[str], bool],
        citekey_of: Callable[[str], str | None],
    ) -> tuple[str, str] | None:
        """The paper `cand` is a copy of and why, or None. `fp` is the entry's fingerprint
        (its abstract's, when it has one); `get(id)` the paper as the import sees it;
        `skip(id)` says a paper is not to be matched (one an earlier entry of the same file
        took); `citekey_of(folded key)` is the id of the paper holding a citation key."""
        best: tuple[int, str, str] | None = None
        ids = self._ids(cand, fp)
        if cand.citekey and (holder := citekey_of(cand.citekey.casefold())) is not None:
            ids[holder] = None  # a paper of the same key (one without a title of its own too)
        for pid in ids:
            if skip(pid):
                continue
            paper = get(pid)
            if paper is None:
                continue
            why = same_paper(cand, paper)
            if (
                not why
                and cand.abstract
                and paper.abstract
                and paper.fingerprint == fp
                and not conflict(cand, paper)
                and _abstract_may_decide(cand, paper)
            ):
                why = "the same abstract"
            # an export coming back: its key is the paper's. Before the title rule, which cannot
            # tell twins of one title apart (xampl's -minimal and -full)
            if (
                why != "the same entry"
                and cand.citekey
                and citekey_of(cand.citekey.casefold()) == pid
                and not conflict(cand, paper)
            ):
                if _same_title(cand, paper, fp):
                    why = "the same citation key and title"
                elif _edited_record(cand, paper):
                    why = "the same citation key and record"
            if why:
                rank = _RANK.get(why, 9)
                if best is None or rank < best[0]:
                    best = (rank, pid, why)
        return (best[1], best[2]) if best else None


def _put(index: dict[_K, list[str]], key: _K, pid: str) -> None:
    ids = index.setdefault(key, [])
    # a key shared by more than CROWDED papers (10,000 entries titled "Data set") stops
    # growing: every entry of that key would check every paper of it, and an import would
    # grow as the square of its size. Its later papers are still found by their record, DOI,
    # arXiv id or citation key (a title that common identifies nothing)
    if len(ids) < CROWDED and pid not in ids:
        ids.append(pid)


def _record_hash(entrytype: str, fields: dict[str, str]) -> int:
    """The whole record's hash (as `record_key` compares it): entries of one title and
    author that differ elsewhere (data sets, each with its own URL) are not one bucket."""
    return hash((entrytype.casefold(), tuple(sorted(fields.items()))))


_KEYED = frozenset({"title", "title_derived", "doi", "arxiv_id", "abstract", "fingerprint", "entrytype", "bibfields"})
_RANK = {
    "the same entry": 0,
    "the same citation key and title": 1,
    "the same citation key and record": 1,
    "the same DOI": 2,
    "the same arXiv id": 3,
}
# the record's fields a display field comes from: an edit of the display field drops them
_EDITABLE = frozenset(raw for raws in RAW_SOURCES.values() for raw in raws)


def _same_title(cand: Candidate, paper: Paper, fp: str) -> bool:
    """The same title, or neither has one of its own and their fingerprints agree (an
    untitled entry, exported with the title Papershelf made up, coming back)."""
    if cand.title:
        return title_key(cand.title) == title_key(paper.title)
    return paper.title_derived and paper.fingerprint == fp


def _edited_record(cand: Candidate, paper: Paper) -> bool:
    """Whether the paper holding the entry's key is the entry with some display fields
    edited (a title's typo fixed): the same type, and every field of the paper's record
    that no edit of a display field writes (title, author, year, venue, doi, eprint) is the
    entry's, the entry having no other such field. A paper whose record has no such field
    is not told apart."""
    ours = paper.bibfields
    if not ours or not cand.entrytype or cand.entrytype.casefold() != paper.entrytype.casefold():
        return False
    theirs = cand.bibfields
    kept = {name: value for name, value in ours.items() if name not in _EDITABLE}
    if not kept or any(theirs.get(name) != value for name, value in kept.items()):
        return False
    return all(name in _EDITABLE for name in theirs.keys() - ours.keys())


def _abstract_may_decide(cand: Candidate, paper: Paper) -> bool:
    """Whether the abstract may decide for this pair: one of the two has no title of its own
    (a listing's paper: the abstract is all there is to know it by), or both titles agree.
    Not a missing record: a library from before records were kept has none on any paper,
    and two titled works that share an abstract (a thesis and its paper) are two."""
    if not cand.title or paper.title_derived or not paper.title:
        return True
    return title_key(cand.title) == title_key(paper.title)


_matchers: weakref.WeakKeyDictionary[object, Matcher] = weakref.WeakKeyDictionary()


def matcher_for(
    owner: object,
    papers: Iterable[Paper],
    get: Callable[[str], Paper | None],
    subscribe: Callable[[Callable[[Change], None]], object],
) -> Matcher:
    """The matcher of a library (`owner`), built on its first import and kept up to date
    by following its changes: later imports pay nothing to build it."""
    matcher = _matchers.get(owner)
    if matcher is None:
        matcher = Matcher(get)
        for paper in papers:
            matcher.add(paper)
        subscribe(matcher.follow)
        _matchers[owner] = matcher
    return matcher


# ---- possible duplicates ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Pair:
    """Two papers that look like one: `a` and `b` (ids, `a` the older) and why."""

    a: str
    b: str
    reason: str  # "the same DOI", "the same arXiv id", "the same title"


def _pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def possible_duplicates(papers: Iterable[Paper], apart: Iterable[tuple[str, str]] = ()) -> list[Pair]:
    """Pairs of papers that may be one paper: the same DOI, arXiv id or title (a title's
    papers with conflicting identifiers aside), less the pairs kept apart. Papers are
    grouped by those keys, so this costs one pass however large the library."""
    kept = {_pair_key(a, b) for a, b in apart}
    groups: dict[tuple[str, str], list[Paper]] = {}
    order: dict[str, int] = {}
    for n, paper in enumerate(papers):
        order[paper.id] = n
        if paper.doi:
            groups.setdefault(("the same DOI", doi_key(paper.doi)), []).append(paper)
        if paper.arxiv_id:
            groups.setdefault(("the same arXiv id", arxiv_key(paper.arxiv_id)), []).append(paper)
        if paper.title and not paper.title_derived and (tkey := title_key(paper.title)):
            groups.setdefault(("the same title", tkey), []).append(paper)
    seen: dict[tuple[str, str], Pair] = {}
    for (reason, _key), members in groups.items():
        if len(members) < 2 or len(members) > GENERIC_GROUP:
            continue
        for i, first in enumerate(members):
            for second in members[i + 1 :]:
                pkey = _pair_key(first.id, second.id)
                if pkey in kept or pkey in seen:
                    continue
                if reason == "the same title" and conflict(first, second):
                    continue
                seen[pkey] = Pair(first.id, second.id, reason)
    return sorted(seen.values(), key=lambda p: (order[p.a], order[p.b]))
