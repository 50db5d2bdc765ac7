"""The paper record and the user's reading state.

A `Paper` is a typed view over one JSON-ready dict, the very dict the store
reads from and writes to disk. Loading 100,000 papers is then one
`orjson.loads` per line and no conversion, and saving is one `orjson.dumps`:
building 100,000 dataclass instances field by field cost more than parsing
the JSON itself (3 s against a 1 s budget). Fields at their default value
are left out of the dict, which keeps both memory and the file smaller.
"""

from __future__ import annotations

import datetime as _dt
import enum
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .errors import InvalidValueError
from .text import clean_text

if TYPE_CHECKING:
    from typing_extensions import Self

Record = dict[str, Any]
"""A paper as JSON-ready values (what the store reads and writes)."""


class Status(str, enum.Enum):
    """Where the user is with a paper; the value is the stored form."""

    UNREAD = "unread"
    TO_READ = "to-read"
    READING = "reading"
    READ = "read"
    SKIPPED = "skipped"

    @classmethod
    def parse(cls, text: str) -> Status:
        """Accept the canonical names plus the spellings people type.

        Anything else raises InvalidValueError (a ValueError) naming the accepted values.
        """
        key = text.strip().lower().replace("_", "-").replace(" ", "-")
        key = {"toread": "to-read", "todo": "to-read", "skip": "skipped"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise InvalidValueError(f"unknown status {text!r}; use one of: {names}") from None


_STATUS_BY_VALUE = {s.value: s for s in Status}
STATUS_VALUES = frozenset(_STATUS_BY_VALUE)
RATING_MIN, RATING_MAX = 1, 5


def normalize_tag(tag: str) -> str:
    """Tags compare case-insensitively with whitespace collapsed.

    The stored form is the case-folded one, so "Diffusion  Models" and
    "diffusion models" are the same tag everywhere (store, index, export).
    """
    tag = unicodedata.normalize("NFC", clean_text(tag))
    return " ".join(tag.split()).casefold()


TAG_SEPARATOR = ","
"""Where people type several tags in one go ("llm, to cite"): the one place
the rule lives. A tag itself may hold a comma only when it arrives as one
value (a .bib keyword list is split by its own rules, a list passed in code
is taken as it is)."""

_KEYWORD_COMMA = "\u201a"  # a look-alike of the comma, for the index's comma-separated keyword fields


def split_tags(typed: str | Iterable[str]) -> list[str]:
    """Tags from what a person typed (one string or several), split at commas,
    normalised, empty ones and repeats dropped, in the order typed."""
    values = [typed] if isinstance(typed, str) else list(typed)
    out: dict[str, None] = {}
    for value in values:
        for part in value.split(TAG_SEPARATOR):
            tag = normalize_tag(part)
            if tag:
                out[tag] = None
    return list(out)


def join_tags(tags: Iterable[str]) -> str:
    """Tags as one line to show or edit: the inverse of `split_tags` for tags without commas."""
    return (TAG_SEPARATOR + " ").join(tags)


def tag_keyword(name: str) -> str:
    """A tag or list name as one search-index keyword: those fields are split
    at commas, so a comma inside a name is stored as a look-alike."""
    return " ".join(name.split()).casefold().replace(TAG_SEPARATOR, _KEYWORD_COMMA)


def keyword_tag(keyword: str) -> str:
    """The tag a search-index keyword stands for (the inverse of `tag_keyword`)."""
    return keyword.replace(_KEYWORD_COMMA, TAG_SEPARATOR)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a copy of a paper came from: one per file that held it."""

    file: str  # absolute path as imported
    format: str  # "paper-search", "daily-papers", ...
    line: int  # 1-based line of the paper's first line in that file

    def to_dict(self) -> dict[str, str | int]:
        """The JSON form stored in a paper's `sources`."""
        return {"file": self.file, "format": self.format, "line": self.line}


# name → default, in display order: the record's schema (the store and the library read
# it). `Paper` declares each with its Python type below. Lists are copied, never shared.
# fmt: off
FIELDS: dict[str, object] = {
    "id": "", "title": "", "title_derived": False, "authors": [], "area": "", "subarea": "",
    "abstract": "", "links": [], "year": None, "venue": "", "doi": "", "arxiv_id": "",
    # the bibliographic record as it came from a .bib/.ris file (see BIBLIOGRAPHIC RECORD below)
    "entrytype": "", "bibfields": {}, "preamble": "",
    # a .ris record's own lines, kept to write it back as it came (see RIS RECORD below)
    "ris": {},
    "sources": [], "fingerprint": "", "added": "", "updated": "",
    # reading state, owned by the user; imports never overwrite it
    "status": "unread", "tags": [], "rating": None, "notes": "", "citekey": "",
    # when the paper last became Reading and Read (UTC, as `added`); "" unknown (see status_change)
    "reading_at": "", "read_at": "",
    # ids of papers the user said are different papers (never offered as duplicates again)
    "distinct": [],
    # the paper's files (PDFs…): one dict each, see ATTACHED FILES below; when one was last opened
    "files": [], "opened_at": "",
}
# fmt: on
EDITABLE_FIELDS = frozenset(FIELDS) - {"id"}

# BIBLIOGRAPHIC RECORD. `entrytype` is the entry type as the file gave it, lower case
# ("article", "inproceedings", "online", "phdthesis"…; "" for a paper from a listing, which
# has no record yet). `bibfields` holds every field of the entry, standard or not, in the
# file's order, name lower case → its BibTeX value exactly as written (the LaTeX source:
# "{The {CGAL} Project}", "\"Ann\"", "jan", "1995", "{Proc. } # jan"), with the file's own
# @string macros put in; the export writes these back. `preamble` is the @preamble text of
# the file the entry came from. The display fields (title, authors, year, venue, doi,
# arxiv_id) are the reader's text derived from the record at import; an edit of one of
# them drops the raw fields it was derived from (RAW_SOURCES), so the export writes the
# edit, and every field nobody edited goes out as it came.
RAW_SOURCES: dict[str, tuple[str, ...]] = {
    "title": ("title",),
    "authors": ("author",),
    "year": ("year", "date"),
    "venue": ("journal", "journaltitle", "booktitle", "howpublished"),
    "doi": ("doi",),
    "arxiv_id": ("eprint", "eprinttype", "archiveprefix"),
}

# ATTACHED FILES. `files` lists the paper's files in the user's order (the paper first, then a
# supplement, slides…), each {"path": str, "sha256": hex, "size": bytes, "pages": int (0 when not
# known), "label": str ("" none), "added": ISO time, "linked": true only for a file left where it
# was}. A copied file's path is relative to the library folder with "/" separators
# ("files/<key>/name.pdf"), so it travels with the library; a linked file's path is absolute.
# `opened_at` is when one of them was last opened (core/attachments.py holds the rules).

# RIS RECORD. A paper imported from a .ris file also keeps that record as it came: `ris` is
# {"lines": the record's lines from TY to ER joined by "\n" (each tag line "XX  - value", a
# wrapped value's further lines as written; trailing white space and blank lines left out),
# "digest": a digest of the record and display fields the import made of them}. The RIS export
# writes these lines back, every tag as it came (tags Papershelf does not read, such as DB, AD,
# L2 or M1, included), when the paper's fields still give the digest; otherwise it writes anew
# only the tags of the fields that changed (`exporters.ris`). The fields themselves stay in
# `bibfields`. Only an import sets it (in the added paper: an edit or a merge never writes it, so
# a library file stays one that the schema-3 Papershelf reads and journals); a merge that changes
# the record shows as changed fields, whose tags the export writes anew.


def without_raw(paper: Paper, edited: Iterable[str]) -> dict[str, Any]:
    """The change of `bibfields` that an edit of the display fields `edited` makes: the raw
    fields they were derived from are dropped ({} when there are none), so the export writes
    what the user set and not what the file said."""
    raw = paper._d.get("bibfields")
    if not raw:
        return {}
    gone = {name for field in edited for name in RAW_SOURCES.get(field, ())}
    if not gone & raw.keys():
        return {}
    return {"bibfields": {k: v for k, v in raw.items() if k not in gone}}


def encode_field(name: str, value: Any) -> Any:
    """A field's value in its JSON form (a Status as its value, a Source as a dict, a tuple as a list)."""
    if name == "status":
        return value.value if isinstance(value, Status) else Status(value).value
    if name == "sources":
        return [s.to_dict() if isinstance(s, Source) else dict(s) for s in value]
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


_G = TypeVar("_G")
_S = TypeVar("_S")

if TYPE_CHECKING:

    class Field(Generic[_G, _S]):
        """What the type checker sees of a field of `Paper`: reads give `_G`, writes take `_S`.

        At run time each field is a plain `property` over the paper's dict (see `_field`):
        a descriptor class of our own would cost a Python-level `__get__` call per read.
        """

        @overload
        def __get__(self, obj: None, owner: type[Any] | None = None) -> Self: ...
        @overload
        def __get__(self, obj: Paper, owner: type[Any] | None = None) -> _G: ...
        def __get__(self, obj: Paper | None, owner: type[Any] | None = None) -> _G | Self: ...
        def __set__(self, obj: Paper, value: _S) -> None: ...


def _field(name: str) -> Any:
    """The property of one field of `FIELDS`: reads from the paper's dict (the default when
    the field is left out), writes through `update_raw` in the field's JSON form."""
    default = FIELDS[name]
    getter = itemgetter(name)
    get: Any
    if isinstance(default, list):

        def get(self: Paper) -> list[Any]:
            value = self._d.get(name)
            return list(value) if value is not None else []
    elif isinstance(default, dict):

        def get(self: Paper) -> dict[str, Any]:
            value = self._d.get(name)
            return dict(value) if value is not None else {}
    else:

        def get(self: Paper) -> Any:
            d = self._d
            return getter(d) if name in d else default

    def set_(self: Paper, value: Any) -> None:
        self.update_raw({name: encode_field(name, value)})

    return property(get, set_, doc=f"the paper's {name}")


# what a list field accepts (copied into a list; a lone string is not a list of names)
StrList = list[str] | tuple[str, ...]


class Paper:
    """One paper. Attribute access gives Python values (Status, Source);
    `to_dict()` gives the JSON form with every field present.

    Each field of `FIELDS` is declared below with its type: reading gives the first type,
    assigning takes the second (stored in its JSON form, so tuples become lists).
    """

    __slots__ = ("_d",)

    _d: Record

    id: Field[str, str] = _field("id")
    title: Field[str, str] = _field("title")
    title_derived: Field[bool, bool] = _field("title_derived")
    authors: Field[list[str], StrList] = _field("authors")
    area: Field[str, str] = _field("area")
    subarea: Field[str, str] = _field("subarea")
    abstract: Field[str, str] = _field("abstract")
    links: Field[list[str], StrList] = _field("links")
    year: Field[int | None, int | None] = _field("year")
    venue: Field[str, str] = _field("venue")
    doi: Field[str, str] = _field("doi")
    arxiv_id: Field[str, str] = _field("arxiv_id")
    entrytype: Field[str, str] = _field("entrytype")
    bibfields: Field[dict[str, str], Mapping[str, str]] = _field("bibfields")
    preamble: Field[str, str] = _field("preamble")
    ris: Field[dict[str, str], Mapping[str, str]] = _field("ris")
    # sources: a property below
    fingerprint: Field[str, str] = _field("fingerprint")
    added: Field[str, str] = _field("added")
    updated: Field[str, str] = _field("updated")
    # status: a property below
    tags: Field[list[str], StrList] = _field("tags")
    rating: Field[int | None, int | None] = _field("rating")
    notes: Field[str, str] = _field("notes")
    citekey: Field[str, str] = _field("citekey")
    reading_at: Field[str, str] = _field("reading_at")
    read_at: Field[str, str] = _field("read_at")
    distinct: Field[list[str], StrList] = _field("distinct")
    files: Field[list[dict[str, Any]], list[dict[str, Any]]] = _field("files")
    opened_at: Field[str, str] = _field("opened_at")

    def __init__(self, id: str, **values: Any):
        unknown = set(values) - EDITABLE_FIELDS
        if unknown:
            raise TypeError(f"unknown paper fields: {sorted(unknown)}")
        self._d = {"id": id}
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def from_dict(cls, d: Record) -> Paper:
        """Wrap a dict read from disk (no copy: the store hands over ownership)."""
        if not isinstance(d.get("id"), str):
            raise ValueError("a paper record needs a string id")
        status = d.get("status")
        if status is not None and status not in _STATUS_BY_VALUE:
            raise ValueError(f"unknown status {status!r}")
        paper = object.__new__(cls)
        paper._d = d
        return paper

    @classmethod
    def wrap_trusted(cls, d: Record) -> Paper:
        """from_dict without the checks, for a caller that made them."""
        paper = object.__new__(cls)
        paper._d = d
        return paper

    def to_dict(self) -> Record:
        """Every field in its JSON form, defaults included, as a new dict (lists copied)."""
        out = {}
        d = self._d
        for name, default in FIELDS.items():
            value = d.get(name, default)
            out[name] = list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value
        out["sources"] = [dict(s) for s in out["sources"]]
        return out

    def raw(self) -> Record:
        """The stored dict itself, for the store's writer only."""
        return self._d

    def update_raw(self, encoded: Mapping[str, Any]) -> None:
        """Apply already-encoded field values (from the journal)."""
        d = self._d
        for name, value in encoded.items():
            if value == FIELDS[name]:
                d.pop(name, None)
            else:
                d[name] = value

    def __copy__(self) -> Paper:
        return Paper.from_dict(dict(self._d))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Paper) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]   # mutable: equal papers may change

    def __repr__(self) -> str:
        return f"Paper(id={self.id!r}, title={self.title!r})"

    # the two fields that convert between their JSON form and a Python value
    @property
    def status(self) -> Status:
        """The reading status; set it with a Status or its value."""
        return _STATUS_BY_VALUE[self._d.get("status", "unread")]

    @status.setter
    def status(self, value: Status | str) -> None:
        self.update_raw({"status": encode_field("status", value)})

    @property
    def sources(self) -> list[Source]:
        """Where copies of the paper came from; set it with Sources or their dicts."""
        return [Source(s["file"], s["format"], s["line"]) for s in self._d.get("sources", ())]

    @sources.setter
    def sources(self, value: Iterable[Source | Mapping[str, Any]]) -> None:
        self.update_raw({"sources": encode_field("sources", value)})


def status_change(paper: Paper, status: Status, now: str) -> dict[str, Any]:
    """The fields a change of `paper`'s status to `status` at `now` sets ({} if it has it).

    The dates follow the status: becoming Reading starts `reading_at` (a Read paper read
    again loses its `read_at`); becoming Read sets `read_at` and keeps when reading began;
    going back to unread, to-read or skipped clears both, so a date shown is never of a
    status the paper no longer has. Undo puts the old dates back with the old status."""
    if paper.status is status:
        return {}
    out: dict[str, Any] = {"status": status}
    if status is Status.READ:
        out["read_at"] = now
    elif status is Status.READING:
        out["reading_at"], out["read_at"] = now, ""
    else:
        out["reading_at"], out["read_at"] = "", ""
    return out


def local_date(stamp: str) -> _dt.date | None:
    """The reader's local date of a stored time stamp (UTC); None for "" or one that is no time."""
    if not stamp:
        return None
    try:
        return _dt.datetime.fromisoformat(stamp).astimezone().date()
    except (ValueError, OverflowError, TypeError):  # a hand-edited store
        return None


# the class declares exactly the fields of the table
assert {n for n in vars(Paper) if isinstance(vars(Paper)[n], property)} == set(FIELDS), "Paper and FIELDS differ"
