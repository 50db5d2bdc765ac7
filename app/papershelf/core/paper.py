"""The paper record and the user's reading state: plain data, no I/O."""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass, field, fields


class Status(str, enum.Enum):
    UNREAD = "unread"
    TO_READ = "to-read"
    READING = "reading"
    READ = "read"
    SKIPPED = "skipped"

    @classmethod
    def parse(cls, text: str) -> "Status":
        """Accept the canonical names plus the spellings people type."""
        key = text.strip().lower().replace("_", "-").replace(" ", "-")
        key = {"toread": "to-read", "todo": "to-read", "skip": "skipped"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown status {text!r}; use one of: {names}") from None


RATING_MIN, RATING_MAX = 1, 5


def normalize_tag(tag: str) -> str:
    """Tags compare case-insensitively with whitespace collapsed.

    The stored form is the case-folded one, so "Diffusion  Models" and
    "diffusion models" are the same tag everywhere (store, index, export).
    """
    tag = unicodedata.normalize("NFC", tag)
    return " ".join(tag.split()).casefold()


@dataclass(slots=True)
class Source:
    """Where a copy of a paper came from: one per import that found it."""

    file: str            # absolute path as imported
    format: str          # "paper-search", "daily-papers", ...
    line: int            # 1-based line of the paper's first line in that file

    def to_dict(self) -> dict:
        return {"file": self.file, "format": self.format, "line": self.line}

    @classmethod
    def from_dict(cls, d: dict) -> "Source":
        return cls(file=d["file"], format=d["format"], line=int(d["line"]))


@dataclass(slots=True)
class Paper:
    id: str
    title: str = ""
    title_derived: bool = False
    authors: list[str] = field(default_factory=list)
    area: str = ""
    subarea: str = ""
    abstract: str = ""
    links: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""
    doi: str = ""
    arxiv_id: str = ""
    sources: list[Source] = field(default_factory=list)
    fingerprint: str = ""
    added: str = ""        # ISO 8601 UTC
    updated: str = ""
    # reading state, owned by the user; imports never overwrite it
    status: Status = Status.UNREAD
    tags: list[str] = field(default_factory=list)   # normalised, sorted, unique
    rating: int | None = None
    notes: str = ""
    citekey: str = ""

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["status"] = self.status.value
        d["sources"] = [s.to_dict() for s in self.sources]
        d["authors"] = list(self.authors)
        d["links"] = list(self.links)
        d["tags"] = list(self.tags)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Paper":
        kwargs = {k: d[k] for k in _FIELD_NAMES if k in d}
        kwargs["status"] = Status(d.get("status", "unread"))
        kwargs["sources"] = [Source.from_dict(s) for s in d.get("sources", ())]
        return cls(**kwargs)


_FIELD_NAMES = frozenset(f.name for f in fields(Paper))
# Fields a journal patch may set; everything but the identity.
EDITABLE_FIELDS = _FIELD_NAMES - {"id"}


def encode_field(name: str, value):
    """A field value in its JSON form (the inverse of decode_field)."""
    if name == "status":
        return value.value
    if name == "sources":
        return [s.to_dict() for s in value]
    if isinstance(value, list):
        return list(value)
    return value


def decode_field(name: str, value):
    if name == "status":
        return Status(value)
    if name == "sources":
        return [Source.from_dict(s) for s in value]
    return value


@dataclass(slots=True)
class ReadingList:
    """A named, ordered list of paper ids."""

    name: str
    ids: list[str] = field(default_factory=list)
