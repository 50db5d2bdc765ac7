"""The two dialects' vocabularies and how a record moves between them.

The tables (core/biblio/types.py) follow biblatex's own driver source map for BibTeX data
(``\\DeclareDriverSourcemap[datatype=bibtex]`` in ``biblatex.def``): biber
applies it to every entry it reads, so writing a record in BibLaTeX's names
gives the very ``.bbl`` that its BibTeX names give. The BibTeX dialect runs
the map backwards, and also writes BibLaTeX-only types as the classic type
that prints them best (or ``@misc`` when the entry lacks a field the classic
type requires, which would only trade one warning for another).

Values are BibTeX value expressions exactly as the file wrote them
(``{…}``, ``"…"``, a macro such as ``jan``, a number, or pieces joined by
``#``); only the few values the mapping has to read are looked into.
"""

from __future__ import annotations

import re

from ..biblio.latex import MONTH_MACROS, piece_text, pieces
from ..biblio.types import (
    BIBTEX_REQUIRED,
    BIBTEX_TYPES,
    EXCLUSIVE,
    FIELDS_TO_BIBLATEX,
    FIELDS_TO_BIBTEX,
    THESIS_TYPES,
    TYPE_WORDS,
    TYPES_TO_BIBLATEX,
    TYPES_TO_BIBTEX,
)

_DATE_RE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2}))?")


def value_text(expr: str) -> str:
    """The text of a value expression, LaTeX left in: ``{Proc. } # jan`` → ``Proc. January``
    (biblio.latex's reading of the pieces, without its decoding)."""
    return "".join(piece_text(p) for p in pieces(expr))


def _has(fields: dict[str, str], want: str) -> bool:
    return any(value_text(fields.get(name, "")).strip() for name in want.split("|"))


def _rename(fields: dict[str, str], table: dict[str, str]) -> dict[str, str]:
    """`fields` with names renamed by `table`, in their order; a field whose new name is taken
    keeps its own (as biber does: its map never overwrites)."""
    out: dict[str, str] = {}
    for name, value in fields.items():
        new = table.get(name, name)
        if new != name and (new in fields or new in out):
            new = name
        if new in out:  # two fields mapped onto one: the first wins, as in BibTeX
            continue
        out[new] = value
    return out


def to_biblatex(entrytype: str, fields: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A record in BibLaTeX's names: what biber's driver source map makes of it."""
    kind, type_value = TYPES_TO_BIBLATEX.get(entrytype, (entrytype, ""))
    out = _rename(fields, FIELDS_TO_BIBLATEX)
    if type_value and "type" not in out:  # biber's map does not overwrite a type the file gave
        out["type"] = "{" + type_value + "}"
    return kind, out


def to_bibtex(entrytype: str, fields: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A record in classic BibTeX's names and types (see the module's docstring)."""
    out = _rename(fields, FIELDS_TO_BIBTEX)
    type_key = value_text(out.get("type", "")).strip()
    kind = _classic_type(entrytype, type_key)
    if kind in ("phdthesis", "mastersthesis") and "school" not in out and "institution" in out:
        out = {("school" if k == "institution" else k): v for k, v in out.items()}
    if type_key in THESIS_TYPES or type_key in ("techreport",):
        out.pop("type")  # the classic type prints these words itself
    elif type_key in TYPE_WORDS:
        out["type"] = "{" + TYPE_WORDS[type_key] + "}"
    if "year" not in out and "date" in out:
        out = _dated(out)
    if (kind != entrytype or "date" in fields) and (month := _month_number(out.get("month"))):
        out["month"] = MONTH_MACROS[month - 1]  # BibLaTeX's month = {3}: plain would print "3"
    if kind != entrytype and _classic_would_warn(kind, out):
        kind = "misc"  # what the classic type would warn about: misc prints it without a warning
    return kind, out


def _classic_type(entrytype: str, type_key: str) -> str:
    """The classic type that prints a type: a thesis by its `type` key, BibLaTeX's types by the
    map, a type the classic styles lack as misc."""
    if entrytype == "thesis":
        return THESIS_TYPES.get(type_key, "phdthesis")
    if entrytype in TYPES_TO_BIBTEX:
        return TYPES_TO_BIBTEX[entrytype]
    return entrytype if entrytype in BIBTEX_TYPES else "misc"


def _dated(out: dict[str, str]) -> dict[str, str]:
    """A BibLaTeX date as BibTeX's year (and month, unless the record has one), in its place."""
    m = _DATE_RE.match(value_text(out["date"]))
    if not m:
        return out
    dated: dict[str, str] = {}
    for k, v in out.items():
        if k != "date":
            dated[k] = v
            continue
        dated["year"] = "{" + m.group(1) + "}"
        if m.group(2) and 1 <= int(m.group(2)) <= 12 and "month" not in out:
            dated["month"] = MONTH_MACROS[int(m.group(2)) - 1]
    return dated


def _month_number(month: str | None) -> int:
    """A month given as a number 1-12 ({3}), else 0. A BibTeX entry's own month = {6} is what
    its author wrote (and plain printed): only a converted or dated entry's is turned into a macro."""
    if month is None:
        return 0
    text = value_text(month).strip()
    return int(text) if text.isdecimal() and 1 <= int(text) <= 12 else 0


def _classic_would_warn(kind: str, out: dict[str, str]) -> bool:
    """Whether plain.bst would warn about the converted entry: a required field missing, or
    two fields it refuses together."""
    if kind in BIBTEX_REQUIRED and not all(_has(out, want) for want in BIBTEX_REQUIRED[kind]):
        return True
    return kind in EXCLUSIVE and all(_has(out, name) for name in EXCLUSIVE[kind])


def to_dialect(entrytype: str, fields: dict[str, str], dialect: str) -> tuple[str, dict[str, str]]:
    """The record's type and fields in `dialect`'s names ("bibtex" or "biblatex")."""
    return to_biblatex(entrytype, fields) if dialect == "biblatex" else to_bibtex(entrytype, fields)
