"""Every bound on what comes in, and the one rule for control characters.

A record comes from a file, a paste, a service's answer or an edit; none of
them may hold more than a real paper ever does, and none may carry characters
that act on a terminal (ESC, OSC and CSI sequences, NUL, C1 controls). The
numbers are in docs/DESIGN.md ("Limits"), with what happens past each.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

# Control characters: C0 but tab and newline, DEL, and C1 (0x9b is CSI on its own).
# A carriage return counts: on a terminal it rewrites the line already shown.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def has_controls(text: str) -> bool:
    """Whether the text holds a control character (tab and newline are text)."""
    return _CONTROL_RE.search(text) is not None


def strip_controls(text: str) -> str:
    """The text without its control characters (what is stored or exported)."""
    if text.isprintable():  # the common case, at C speed
        return text
    return _CONTROL_RE.sub("", text)


def _escaped(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


def escape_controls(text: str) -> str:
    """The text with each control character shown as `\\xNN` (what a terminal is given)."""
    if text.isprintable():
        return text
    return _CONTROL_RE.sub(_escaped, text)


# What one record may hold. A real paper stays far below each: the longest titles run to
# a few hundred characters, an abstract to a few thousand, and the largest author lists
# (ATLAS, CMS) to about 5,200 names. Past a limit the record is refused, with words.
MAX_TITLE_CHARS = 4_000
"""Characters of a title (as text, or as the BibTeX field that holds it)."""
MAX_FIELD_CHARS = 100_000
"""Characters of any one other field: an abstract, a note, a BibTeX or RIS field."""
MAX_NAMES = 10_000
"""Names in one name list (authors, editors)."""
MAX_NAME_LIST_CHARS = 1_000_000
"""Characters of one name-list field (10,000 names of 100 characters)."""
MAX_RECORD_CHARS = 2_000_000
"""Characters of a whole record: every field together."""
MAX_LABEL_CHARS = 1_000
"""Characters of a tag, a reading list's name or a saved search's name."""

# What a .bib file's @string macros may expand to: one value (a field, or a macro's own
# value) with its macros put in, and everything one file's macros put in together. The
# lengths are added up before anything is joined, so a macro bomb is never built.
MAX_MACRO_VALUE_CHARS = MAX_NAME_LIST_CHARS
MAX_MACRO_FILE_CHARS = 10_000_000
# What the entries of a .bib file take from their crossref/xdata parents (title, names, year,
# venue) may add up to this beyond the file's own size: one parent's long author list is not
# copied into thousands of one-line children.
MAX_INHERITED_FILE_CHARS = 10_000_000

# the names of the fields a record's name lists are kept in
NAME_FIELDS = frozenset({"author", "editor", "translator", "bookauthor", "editora", "editorb", "editorc"})


def field_limit(name: str) -> int:
    """The characters a field of this name may hold."""
    if name == "title":
        return MAX_TITLE_CHARS
    if name in NAME_FIELDS:
        return MAX_NAME_LIST_CHARS
    return MAX_FIELD_CHARS


def over_limit(values: Iterable[tuple[str, str, int]], names: Sequence[str] = ()) -> str:
    """Why a record is more than a real paper holds ("" when it is not): the name list past
    MAX_NAMES, else the first (field name, value, its limit) past its limit, else the whole
    record past MAX_RECORD_CHARS; with the size and the limit, in words."""
    if len(names) > MAX_NAMES:
        return f"its author list has {len(names):,} names (the limit is {MAX_NAMES:,})"
    total = sum(len(n) for n in names)
    for name, value, limit in values:
        if len(value) > limit:
            return f"its field {name!r} is {len(value):,} characters long (the limit is {limit:,})"
        total += len(value)
    if total > MAX_RECORD_CHARS:
        return f"the whole record is {total:,} characters long (the limit is {MAX_RECORD_CHARS:,})"
    return ""


def strip_found(changes: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Changes a service's record proposes, without control characters (a found value is
    cleaned, where a typed one is refused), and the names of the fields that had them."""
    stripped = [name for name, value in changes.items() if value and has_controls(value)]
    return {name: strip_controls(value) if value else value for name, value in changes.items()}, stripped


CONTROLS_REMOVED = "control characters (such as terminal escapes or NUL) were removed from"


def found_too_large(title: str, authors: Sequence[str], abstract: str, venue: str, extra: Mapping[str, str]) -> str:
    """Why a record a service found is more than a real paper holds ("" when it is not),
    checked before anything is made of it (or shown)."""
    values = [
        ("title", title, MAX_TITLE_CHARS),
        ("abstract", abstract, MAX_FIELD_CHARS),
        ("venue", venue, MAX_FIELD_CHARS),
    ]
    return over_limit([*values, *((k, v, field_limit(k)) for k, v in extra.items())], authors)
