"""Editing a paper's bibliographic record: what the editor shows, and what an edit changes.

The editor (window), `papershelf set` (CLI) and an applied look-up (online) speak one
vocabulary, the reader's text per field name:

- "entrytype": the entry type ("article", "inproceedings"…);
- "title": the title ("" goes back to the record's own title, or the derived one);
- "author": a BibTeX name list as text, "Knuth, Donald E. and {Barnes and Noble}": braces
  group a corporate name, never split; "and others" stays;
- "year", "venue" (the journal or book title the type calls for), "doi", "eprint" (the
  arXiv id), "url";
- any other BibTeX field by its name ("pages", "volume", "publisher", "editor"…).

An edit writes each changed field into the record (`bibfields`) as LaTeX made from the
typed text (specials escaped, the text's letters kept), and the display field it feeds
(title, authors, year, venue, doi, arxiv_id), so the export writes what the user typed and
every field nobody touched goes out as it came, byte for byte. A field whose text did not
change is not written at all. `citekey` is the facade's (it needs the whole library).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .biblio.latex import MONTH_MACROS as _MONTHS
from .biblio.latex import braces_balanced, decode
from .biblio.latex_writer import text_latex, text_to_latex
from .biblio.names import Name, from_display, name_list_problem, parse_names
from .errors import InvalidValueError
from .exporters.bibmaps import VENUE_FIELD
from .exporters.bibtex import DERIVED_NOTE
from .importers.ris import _verbatim
from .paper import Paper, without_raw
from .text import clean_doi, clean_text
from .titles import derive_title

# the types offered (BibLaTeX's data model, and BibTeX's names that BibLaTeX reads as aliases)
# fmt: off
ENTRY_TYPES: tuple[str, ...] = (
    "article", "inproceedings", "incollection", "inbook", "book", "collection", "proceedings",
    "thesis", "phdthesis", "mastersthesis", "report", "techreport", "online", "misc", "unpublished",
    "booklet", "manual", "dataset", "software", "patent", "periodical", "reference", "inreference",
)
# BibLaTeX's data model (biblatex.def, \DeclareDatamodelConstraints): the mandatory fields, in
# the editor's names ("venue" = journaltitle/booktitle; every type also needs a year or a date)
_REQUIRED: dict[str, tuple[str, ...]] = {
    "article": ("author", "title", "venue", "year"),
    "book": ("author", "title", "year"), "mvbook": ("author", "title", "year"),
    "inbook": ("author", "title", "venue", "year"), "bookinbook": ("author", "title", "venue", "year"),
    "booklet": ("author", "title", "year"),
    "collection": ("editor", "title", "year"), "reference": ("editor", "title", "year"),
    "incollection": ("author", "editor", "title", "venue", "year"),
    "inreference": ("author", "editor", "title", "venue", "year"),
    "inproceedings": ("author", "title", "venue", "year"), "conference": ("author", "title", "venue", "year"),
    "proceedings": ("title", "year"),
    "manual": ("author", "title", "year"), "misc": ("author", "title", "year"),
    "online": ("author", "title", "year"),  # and a DOI, eprint or URL: any of the three
    "software": ("author", "title", "year"),
    "dataset": ("author", "title", "year"),
    "patent": ("author", "title", "number", "year"), "periodical": ("editor", "title", "year"),
    "report": ("author", "title", "type", "institution", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "thesis": ("author", "title", "type", "institution", "year"),
    "phdthesis": ("author", "title", "school", "year"), "mastersthesis": ("author", "title", "school", "year"),
    "unpublished": ("author", "title", "year"),
}
_OPTIONAL: dict[str, tuple[str, ...]] = {
    "article": ("volume", "number", "pages", "month", "publisher", "issn", "note"),
    "inproceedings": ("editor", "pages", "publisher", "address", "series", "volume", "month", "organization", "note"),
    "incollection": ("pages", "publisher", "address", "edition", "series", "volume", "chapter", "note"),
    "inbook": ("pages", "chapter", "publisher", "address", "edition", "editor", "note"),
    "book": ("editor", "publisher", "address", "edition", "series", "volume", "isbn", "note"),
    "thesis": ("address", "month", "note"), "phdthesis": ("address", "month", "note"),
    "mastersthesis": ("address", "month", "note"),
    "report": ("number", "address", "month", "note"), "techreport": ("number", "type", "address", "month", "note"),
    "online": ("urldate", "organization", "note"), "misc": ("howpublished", "month", "note"),
    "unpublished": ("month", "note"),
}
# fmt: on
_DEFAULT_OPTIONAL = ("publisher", "address", "month", "note")
IDENTIFIERS = ("doi", "url", "eprint")
# edited elsewhere: the abstract is the paper's own text (a record's keywords are a field like
# any other: they are not the user's tags)
NOT_EDITED_HERE = {
    "abstract": "the abstract is the paper's own text and is not edited here",
}
_NAME_FIELDS = frozenset(
    {"author", "editor", "editora", "editorb", "editorc", "translator", "annotator", "commentator"}
    | {"introduction", "foreword", "afterword", "bookauthor", "holder"}
)
_KEY_FIELDS = frozenset({"crossref", "xdata", "xref", "ids", "entryset", "related"})
_VERBATIM = frozenset({"url", "doi", "file", "urlraw", "pdf"})
_MULTILINE = frozenset({"note", "annotation", "addendum", "comment"})
_FIELD_RE = re.compile(r"^[a-z][a-z0-9_.:+-]*$")
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
_ARXIV_RE = re.compile(r"^(?:\d{4}\.\d{4,5}|[a-z][a-z.-]*(?:\.[A-Z]{2})?/\d{7})$", re.IGNORECASE)
_MONTH_NAMES = frozenset(
    [*_MONTHS, "january", "february", "march", "april", "june", "july", "august", "september", "october"]
    + ["november", "december", "sept"]
)
_YEAR_RE = re.compile(r"^-?\d{1,4}$")
_VENUE_SOURCES = ("journal", "journaltitle", "booktitle", "howpublished")

LABELS = {
    "entrytype": "Type",
    "title": "Title",
    "author": "Authors",
    "year": "Year",
    "doi": "DOI",
    "url": "URL",
    "eprint": "arXiv id",
    "editor": "Editors",
    "pages": "Pages",
    "volume": "Volume",
    "number": "Number",
    "publisher": "Publisher",
    "address": "Address",
    "institution": "Institution",
    "school": "School",
    "note": "Note",
    "month": "Month",
    "edition": "Edition",
    "series": "Series",
    "isbn": "ISBN",
    "issn": "ISSN",
    "chapter": "Chapter",
    "type": "Kind",
    "howpublished": "How published",
    "organization": "Organization",
    "date": "Date",
    "urldate": "Visited",
}


def citekey_problem(key: str) -> str:
    """Why `key` cannot be a citation key, in the words `Library.edit_record` refuses it with;
    "" when it can ("" itself lets Papershelf choose one). Whether another paper holds it is
    the library's to say."""
    from .citekeys import key_problem

    key = key.strip()
    why = key_problem(key) if key else ""
    return f"{key!r} is not a usable citation key: {why}" if why else ""


def required(entrytype: str) -> tuple[str, ...]:
    """The fields BibLaTeX's data model requires of this type, in the editor's names."""
    return _REQUIRED.get(entrytype.lower(), ("author", "title", "year"))


def optional(entrytype: str) -> tuple[str, ...]:
    """The fields commonly given for this type beyond the required ones, in the editor's names."""
    return _OPTIONAL.get(entrytype.lower(), _DEFAULT_OPTIONAL)


def venue_field(entrytype: str) -> str:
    """The BibTeX field the type keeps its venue in: journal, booktitle, else howpublished (a
    periodical's own title is its title, not a venue)."""
    target = VENUE_FIELD.get(entrytype.lower(), "howpublished")
    return target if target in ("journal", "booktitle") else "howpublished"


def field_label(name: str, entrytype: str) -> str:
    """A field's label in the editor ("venue" is "Journal" or "Book title" by the type)."""
    if name == "venue":
        return {"journal": "Journal", "booktitle": "Book title", "title": "Title"}.get(
            venue_field(entrytype), "Published in"
        )
    return LABELS.get(name, name.capitalize())


def names_text(names: list[Name], others: bool = False) -> str:
    """A name list as the "author" text an edit takes ("Family, Given and {Corporate}")."""
    out = [n.text() for n in names if n.text() not in ("", "{}")]
    if others:
        out.append("others")
    return " and ".join(out)


@dataclass
class EditorView:
    """What the editor shows of a paper: its type, key, names, and every field as text."""

    entrytype: str
    citekey: str
    authors: list[Name]
    others: bool  # the list ends with "and others" (et al.)
    fields: dict[str, str] = field(default_factory=dict)
    title_derived: bool = False


def default_type(paper: Paper) -> str:
    """The type the paper's export has without a record (as the listing export chooses)."""
    return paper.entrytype or ("inproceedings" if paper.venue and paper.year else "misc")


def _venue_source(paper: Paper) -> str:
    """The raw field the paper's venue was read from ("" when none holds it)."""
    raw = paper.bibfields
    want = " ".join(paper.venue.split())
    preferred = venue_field(paper.entrytype)
    for name in (preferred, *_VENUE_SOURCES):
        if name in raw and " ".join(decode(raw[name]).split()) == want:
            return name
    return ""


def _text(name: str, raw: str) -> str:
    if name in _MULTILINE and "\n" in raw.strip() and raw.strip()[:1] + raw.strip()[-1:] in ("{}", '""'):
        lines = raw.strip()[1:-1].split("\n")
        if all(braces_balanced(line) for line in lines):  # line by line, as it was typed
            return "\n".join(decode("{" + line + "}") for line in lines).strip()
    if name in _NAME_FIELDS:
        names, others = parse_names(raw)
        return names_text([n.decoded() for n in names], others)
    from .citation import field_text

    return field_text(name, raw)


def editor_view(paper: Paper) -> EditorView:
    """Every field of the paper's record as the editor shows it: the title first, then the
    display fields, then the record's other fields in its own order."""
    raw = paper.bibfields
    if "author" in raw:
        parsed, others = parse_names(raw["author"])
        authors = [n.decoded() for n in parsed]
    else:
        authors, others = [from_display(a) for a in paper.authors], False
    fields: dict[str, str] = {"title": paper.title}
    if "date" in raw and "year" not in raw:
        fields["date"] = _text("date", raw["date"])
    else:
        fields["year"] = str(paper.year) if paper.year is not None else ""
    fields["venue"] = paper.venue
    fields["doi"] = paper.doi
    if paper.arxiv_id or "eprint" not in raw:
        fields["eprint"] = paper.arxiv_id  # else the record's own eprint (JSTOR, HDL…) is shown as it is
    hidden = {"title", "author", "year", "date", "doi", "abstract", _venue_source(paper)}
    if paper.arxiv_id:
        hidden |= {"eprint", "eprinttype", "archiveprefix"}
    if "url" not in raw:
        fields["url"] = next((u for u in paper.links if u.lower().startswith(("http://", "https://"))), "")
    for name, value in raw.items():
        if name not in hidden and name not in fields:
            fields[name] = _text(name, value)
    if paper.title_derived and fields.get("note") == DERIVED_NOTE:
        del fields["note"]
    return EditorView(default_type(paper), paper.citekey, authors, others, fields, paper.title_derived)


def _braced(text: str) -> str:
    return "{" + text + "}"


def _names_raw(text: str) -> tuple[str, list[str]]:
    """Typed name-list text as a raw BibTeX value, and the display names."""
    names, others = parse_names(_braced(_escape_names(text)))
    parts: list[str] = []
    for n in names:
        if n.literal:
            parts.append(_braced(n.literal))
            continue
        family = " ".join(p for p in (n.von, n.family) if p)
        given = n.given
        if not family:
            raise InvalidValueError(f"the name {n.given!r} has no family name")
        bits = [family, *([n.jr] if n.jr else []), *([given] if given else [])]
        parts.append(", ".join(bits) if len(bits) > 1 else _braced(family))
    if others:
        parts.append("others")
    display = [a for a in (n.display() for n in names) if a]
    return " and ".join(parts), display


def _escape_names(text: str) -> str:
    """Typed names as LaTeX: specials escaped, but the braces that group a corporate name kept."""
    out, depth = [], 0
    for piece in re.split(r"([{}])", text):
        if piece == "{":
            depth += 1
            out.append(piece)
        elif piece == "}":
            depth = max(0, depth - 1)
            out.append(piece)
        else:
            out.append(text_to_latex(piece))
    if depth:
        raise InvalidValueError("a brace in the names is not closed: a corporate name is written {Like This}")
    return "".join(out)


_DATE_PART_RE = re.compile(r"^(-?\d{4})(?:-(\d\d)(?:-(\d\d))?)?$")


def _date_year(text: str) -> int:
    """The year of a BibLaTeX date (2024, 2024-05, 2024-05-17, a range a/b, open ranges a/ or
    /b); InvalidValueError for anything biber would reject."""
    import datetime

    parts = text.split("/")
    if len(parts) > 2 or not any(parts):
        parts = ["bad"]
    years = []
    for part in parts:
        if not part and len(parts) == 2:
            continue
        m = _DATE_PART_RE.match(part)
        ok = m is not None
        if m is not None and m.group(2):
            try:
                datetime.date(max(1, abs(int(m.group(1)))), int(m.group(2)), int(m.group(3) or 1))
            except ValueError:
                ok = False
        if not ok or m is None:
            raise InvalidValueError(
                f"{text!r} is not a date: give it as 2024, 2024-05, 2024-05-17 or a range 2023/2024"
            )
        years.append(int(m.group(1)))
    return years[0]


def braced_groups(raw: str) -> list[str]:
    """The text of the groups braced inside a value (`{The {CGAL} Project}` → ["CGAL"]): the
    phrases whose case the value protects."""
    value = raw.strip()
    if len(value) >= 2 and value[0] in '{"' and value[-1] in '}"':
        value = value[1:-1]
    out, depth, start = [], 0, 0
    for i, ch in enumerate(value):
        if ch == "{" and (i == 0 or value[i - 1] != "\\"):
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth and (i == 0 or value[i - 1] != "\\"):
            depth -= 1
            if depth == 0:
                group = value[start : i + 1]
                if not group.startswith("{\\"):  # {\em x}, {\"u}: markup, not a protected phrase
                    out.append(decode(group))
    return [g for g in out if g.strip()]


def _arxiv(text: str) -> str:
    value = text.strip()
    value = re.sub(r"^(?:arxiv:|https?://arxiv\.org/(?:abs|pdf)/)", "", value, flags=re.IGNORECASE)
    value = re.sub(r"(?:v\d+)?(?:\.pdf)?$", "", value)
    if not _ARXIV_RE.match(value):
        raise InvalidValueError(f"{text!r} is not an arXiv id (like 2401.01234 or hep-th/9901001)")
    return value


def _year(text: str) -> int:
    if not _YEAR_RE.match(text.strip()):
        raise InvalidValueError(f"{text!r} is not a year: give it as digits, like 2024")
    return int(text)


def title_change(paper: Paper, title: str) -> dict[str, Any]:
    """The fields a title the user typed changes (`title` cleaned; "" goes back), and how the
    export then writes it: the record's own title is dropped so that the typed one goes out,
    except in an entry that inherits (crossref/xdata), where a missing title would let the
    parent's show through: there the typed title becomes the record's. Going back takes the
    record's own title when it still has one, else the title derived from the abstract."""
    raw = paper.bibfields
    if title:
        if "crossref" in raw or "xdata" in raw:
            # into the record, as LaTeX (a missing title would let the parent's show through):
            # the phrases the old title braced stay braced ({Pd-N}), specials are escaped
            value = "{" + text_latex(title, True, braced_groups(raw.get("title", ""))) + "}"
            shown = decode(value) or title  # what the reader sees: {DNA} is DNA
            return {"title": shown, "title_derived": False, "bibfields": {**raw, "title": value}}
        return {"title": title, "title_derived": False, **without_raw(paper, ("title",))}
    if paper.entrytype and raw.get("title") and decode(raw["title"]):
        return {"title": decode(raw["title"]), "title_derived": False}
    return {"title": derive_title(paper.abstract), "title_derived": True, **without_raw(paper, ("title",))}


def field_changes(paper: Paper, changes: Mapping[str, str | None]) -> dict[str, Any]:
    """The stored fields an edit changes (see the module's docstring), {} when it changes
    nothing; InvalidValueError, changing nothing, for a value that cannot be stored.
    `citekey` is not handled here."""
    view = editor_view(paper)
    wanted: dict[str, str] = {}
    for name, value in changes.items():
        key = name.strip().lower()
        if key == "citekey":
            continue
        text = clean_text(value or "").strip() if key in _MULTILINE else " ".join(clean_text(value or "").split())
        if key in NOT_EDITED_HERE:
            raise InvalidValueError(f"{key}: {NOT_EDITED_HERE[key]}")
        if key not in ("entrytype", "venue") and not _FIELD_RE.match(key):
            raise InvalidValueError(f"{name!r} is not a BibTeX field name (letters, digits and - _ . : +)")
        wanted[key] = text
    out: dict[str, Any] = {}
    raw = paper.bibfields
    new_raw = dict(raw)
    kind = paper.entrytype
    if "entrytype" in wanted and wanted["entrytype"] != view.entrytype:
        kind = wanted["entrytype"].lower()
        if not _TYPE_RE.match(kind):
            raise InvalidValueError(f"{wanted['entrytype']!r} is not an entry type (such as article or inproceedings)")
        # the venue moves to the field the new type keeps it in (journal ↔ booktitle ↔ howpublished;
        # journaltitle is BibLaTeX's journal)
        source, target = _venue_source(paper), venue_field(kind)
        if target == "journal" and source == "journaltitle":
            target = source
        if source and source != target and target not in new_raw:
            new_raw = {(target if k == source else k): v for k, v in new_raw.items()}
    wanted.pop("entrytype", None)
    changed = {k: v for k, v in wanted.items() if view.fields.get(k, "") != v or k == "author"}
    # an empty field of the record (`key = ""`) is removed by giving it no text
    changed.update({k: "" for k, v in wanted.items() if not v and k in raw and k not in changed})
    if "author" in changed and changed["author"] == names_text(view.authors, view.others):
        del changed["author"]
    if not kind and (changed or paper.entrytype != kind):
        kind = default_type(paper)
    if not paper.entrytype and kind:
        # the paper gets a record: its web link goes with it (the listing export wrote it)
        url = view.fields.get("url", "")
        if url and "url" not in new_raw:
            new_raw["url"] = _braced(_verbatim(url))
    for key, text in changed.items():
        if key == "title":
            title = title_change(paper, text)
            out.update({k: v for k, v in title.items() if k != "bibfields"})
            if "bibfields" in title:
                new_raw.pop("title", None)
                if "title" in title["bibfields"]:
                    new_raw["title"] = title["bibfields"]["title"]
        elif key in _NAME_FIELDS:
            if not text:
                new_raw.pop(key, None)
                if key == "author":
                    out["authors"] = []
                continue
            problem = name_list_problem(text)
            if problem:
                raise InvalidValueError(f"{key}: {problem}. Nothing was changed.")
            value, display = _names_raw(text)
            new_raw[key] = _braced(value)
            if key == "author":
                out["authors"] = display
        elif key == "year":
            new_raw.pop("date", None)
            if text:
                out["year"] = _year(text)
                new_raw["year"] = _braced(str(out["year"]))
            else:
                out["year"] = None
                new_raw.pop("year", None)
        elif key == "date":
            new_raw.pop("year", None)
            if text:
                out["year"] = _date_year(text)
                new_raw["date"] = _braced(text)
            else:
                out["year"] = None
                new_raw.pop("date", None)
        elif key == "venue":
            source = _venue_source(paper)
            target = venue_field(kind)
            for gone in {source, target} - {""}:
                new_raw.pop(gone, None)
            out["venue"] = text
            if text:
                new_raw[target] = _braced(text_latex(text))
        elif key == "doi":
            doi = clean_doi(text)
            if any(ch.isspace() for ch in doi):
                raise InvalidValueError(f"{text!r} is not a DOI: a DOI holds no spaces")
            if text and not doi.startswith("10."):
                raise InvalidValueError(f"{text!r} is not a DOI (a DOI starts with 10., like 10.1000/xyz123)")
            out["doi"] = doi
            new_raw.pop("doi", None)
            if doi:
                new_raw["doi"] = _braced(_verbatim(doi))
        elif key == "eprint" and (paper.arxiv_id or "eprint" not in raw or text.lower().startswith("arxiv:")):
            # a record's own eprint of another archive (JSTOR, HDL) is written as it is below,
            # unless an arXiv id replaces it explicitly ("arXiv:2401.01234")
            arxiv = _arxiv(text) if text else ""
            out["arxiv_id"] = arxiv
            for gone in ("eprint", "eprinttype", "archiveprefix", "arxivid", "primaryclass", "eprintclass"):
                new_raw.pop(gone, None)
            if arxiv:
                new_raw["eprint"], new_raw["archiveprefix"] = _braced(arxiv), "{arXiv}"
        elif not text:
            new_raw.pop(key, None)
        elif key in _VERBATIM:
            if any(ch.isspace() for ch in text):
                raise InvalidValueError(f"{key}: {text!r} holds a space; a {key.upper()} has none (write %20)")
            new_raw[key] = _braced(_verbatim(text))
        elif key == "month" and text.lower()[:3] in _MONTHS and text.lower() in _MONTH_NAMES:
            new_raw[key] = text.lower()[:3]  # the month macro: every style prints it in its language
        elif key == "pages":
            new_raw[key] = _braced(text_latex(re.sub(r"\s*[–—]\s*", "--", text)))
        elif key in _KEY_FIELDS:
            new_raw[key] = _braced(re.sub(r"[{}\"\s]", "", text))
        else:
            new_raw[key] = _braced(text_latex(text))
    if not ("crossref" in new_raw or "xdata" in new_raw) and "venue" not in changed:
        if kind != paper.entrytype or any(k in changed for k in _VENUE_SOURCES):
            # the venue as the import reads it from the fields (`set ID journal=…` is the venue)
            from .importers.bibfile import _venue  # the import's own rule

            found = decode(_venue(kind, new_raw)) or None
            if found is not None or any(k in changed for k in _VENUE_SOURCES):
                out["venue"] = found or ""
    if kind != paper.entrytype:
        out["entrytype"] = kind
    if new_raw != raw:
        out["bibfields"] = new_raw
    return out
