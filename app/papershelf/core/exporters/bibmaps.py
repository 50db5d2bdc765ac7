"""The two dialects' vocabularies and how a record moves between them.

The tables follow biblatex's own driver source map for BibTeX data
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

# fmt: off
# biber's driver source map (biblatex.def): BibTeX type → (BibLaTeX type, value of `type` it sets)
TYPES_TO_BIBLATEX: dict[str, tuple[str, str]] = {
    "conference": ("inproceedings", ""), "electronic": ("online", ""), "www": ("online", ""),
    "mastersthesis": ("thesis", "mathesis"), "phdthesis": ("thesis", "phdthesis"),
    "techreport": ("report", "techreport"),
}
# biber's driver source map: BibTeX field → BibLaTeX field
FIELDS_TO_BIBLATEX: dict[str, str] = {
    "hyphenation": "langid", "address": "location", "school": "institution", "annote": "annotation",
    "archiveprefix": "eprinttype", "journal": "journaltitle", "primaryclass": "eprintclass",
    "key": "sortkey", "pdf": "file",
}
# the reverse, for the BibTeX dialect (file stays file: JabRef and Zotero write it so in BibTeX
# files; school only for theses, where BibLaTeX writes institution: reports keep institution)
FIELDS_TO_BIBTEX: dict[str, str] = {
    v: k for k, v in FIELDS_TO_BIBLATEX.items() if k not in ("pdf", "school")
}
# the types classic BibTeX styles (plain, abbrv, alpha, unsrt…) define
BIBTEX_TYPES = frozenset(
    "article book booklet conference inbook incollection inproceedings manual mastersthesis misc phdthesis "
    "proceedings techreport unpublished".split()
)
# BibLaTeX types → the classic type that prints them (anything else becomes misc)
TYPES_TO_BIBTEX: dict[str, str] = {
    "online": "misc", "electronic": "misc", "www": "misc", "report": "techreport",
    "mvbook": "book", "collection": "book", "mvcollection": "book", "reference": "book", "mvreference": "book",
    "bookinbook": "inbook", "suppbook": "inbook", "inreference": "incollection", "suppcollection": "incollection",
    "mvproceedings": "proceedings", "suppperiodical": "article",
}
# what plain.bst requires of each type (one of the names separated by "|"): a converted entry
# without them goes out as misc, which requires nothing
REQUIRED: dict[str, tuple[str, ...]] = {
    "article": ("author", "title", "journal", "year"),
    "book": ("author|editor", "title", "publisher", "year"),
    "inbook": ("author|editor", "title", "chapter|pages", "publisher", "year"),
    "incollection": ("author", "title", "booktitle", "publisher", "year"),
    "inproceedings": ("author", "title", "booktitle", "year"),
    "proceedings": ("title", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "phdthesis": ("author", "title", "school", "year"),
    "mastersthesis": ("author", "title", "school", "year"),
}
# fields plain.bst refuses to see together ("can't use both author and editor fields")
EXCLUSIVE: dict[str, tuple[str, str]] = {"book": ("author", "editor"), "inbook": ("author", "editor")}
# biblatex's localisation keys in `type`: the classic type prints them itself, or needs words
THESIS_TYPES = {"phdthesis": "phdthesis", "mathesis": "mastersthesis"}
TYPE_WORDS = {"candthesis": "Candidate thesis", "habthesis": "Habilitation thesis", "resreport": "Research report"}
# where a type wants the venue the reader typed (in BibTeX's names; the dialect map renames)
VENUE_FIELD = {
    "article": "journal", "suppperiodical": "journal", "periodical": "title",
    "inproceedings": "booktitle", "conference": "booktitle", "incollection": "booktitle", "inbook": "booktitle",
    "inreference": "booktitle", "bookinbook": "booktitle", "suppbook": "booktitle", "suppcollection": "booktitle",
}
# fmt: on
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
    kind = entrytype
    out = _rename(fields, FIELDS_TO_BIBTEX)
    type_key = value_text(out.get("type", "")).strip()
    if entrytype == "thesis":
        kind = THESIS_TYPES.get(type_key, "phdthesis")
    elif entrytype in TYPES_TO_BIBTEX:
        kind = TYPES_TO_BIBTEX[entrytype]
    elif entrytype not in BIBTEX_TYPES:
        kind = "misc"
    if kind in ("phdthesis", "mastersthesis") and "school" not in out and "institution" in out:
        out = {("school" if k == "institution" else k): v for k, v in out.items()}
    if type_key in THESIS_TYPES or type_key in ("techreport",):
        out.pop("type")  # the classic type prints these words itself
    elif type_key in TYPE_WORDS:
        out["type"] = "{" + TYPE_WORDS[type_key] + "}"
    if "year" not in out and "date" in out:
        m = _DATE_RE.match(value_text(out["date"]))
        if m:
            dated: dict[str, str] = {}
            for k, v in out.items():
                if k != "date":
                    dated[k] = v
                    continue
                dated["year"] = "{" + m.group(1) + "}"
                if m.group(2) and 1 <= int(m.group(2)) <= 12 and "month" not in out:
                    dated["month"] = MONTH_MACROS[int(m.group(2)) - 1]
            out = dated
    month = out.get("month")
    # BibLaTeX's month = {3}: plain would print "3"; a BibTeX entry's own month = {6} is what its
    # author wrote (and plain printed): it stays
    if (
        (kind != entrytype or "date" in fields)
        and month is not None
        and value_text(month).strip().isdecimal()
        and 1 <= int(value_text(month)) <= 12
    ):
        out["month"] = MONTH_MACROS[int(value_text(month)) - 1]  # BibLaTeX's month = {3}: plain would print "3"
    if kind != entrytype and (
        (kind in REQUIRED and not all(_has(out, want) for want in REQUIRED[kind]))
        or (kind in EXCLUSIVE and all(_has(out, name) for name in EXCLUSIVE[kind]))
    ):
        kind = "misc"  # what the classic type would warn about: misc prints it without a warning
    return kind, out


def to_dialect(entrytype: str, fields: dict[str, str], dialect: str) -> tuple[str, dict[str, str]]:
    """The record's type and fields in `dialect`'s names ("bibtex" or "biblatex")."""
    return to_biblatex(entrytype, fields) if dialect == "biblatex" else to_bibtex(entrytype, fields)
