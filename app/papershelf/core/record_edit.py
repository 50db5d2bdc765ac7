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

from .biblio.identifiers import clean_doi
from .biblio.latex import MONTH_MACROS as _MONTHS
from .biblio.latex import braces_balanced, decode
from .biblio.latex_writer import text_latex, text_to_latex
from .biblio.names import Name, from_display, name_list_problem, parse_names
from .biblio.types import NAME_FIELDS, VENUE_SOURCES, venue_field, venue_raw, verbatim_value
from .errors import InvalidValueError
from .paper import Paper, without_raw
from .text import clean_text
from .titles import DERIVED_NOTE, derive_title

IDENTIFIERS = ("doi", "url", "eprint")
# edited elsewhere: the abstract is the paper's own text (a record's keywords are a field like
# any other: they are not the user's tags)
NOT_EDITED_HERE = {
    "abstract": "the abstract is the paper's own text and is not edited here",
}
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
    for name in (preferred, *VENUE_SOURCES):
        if name in raw and " ".join(decode(raw[name]).split()) == want:
            return name
    return ""


def _text(name: str, raw: str) -> str:
    if name in _MULTILINE and "\n" in raw.strip() and raw.strip()[:1] + raw.strip()[-1:] in ("{}", '""'):
        lines = raw.strip()[1:-1].split("\n")
        if all(braces_balanced(line) for line in lines):  # line by line, as it was typed
            return "\n".join(decode("{" + line + "}") for line in lines).strip()
    if name in NAME_FIELDS:
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
    wanted = _wanted_texts(changes)
    kind, new_raw = _retyped(paper, view, wanted.pop("entrytype", None))
    changed = _changed_texts(paper, view, wanted)
    if not kind and (changed or paper.entrytype != kind):
        kind = default_type(paper)
    if not paper.entrytype and kind:
        # the paper gets a record: its web link goes with it (the listing export wrote it)
        url = view.fields.get("url", "")
        if url and "url" not in new_raw:
            new_raw["url"] = _braced(verbatim_value(url))
    out: dict[str, Any] = {}
    for key, text in changed.items():
        _write_field(_Edit(paper, kind, out, new_raw), key, text)
    _venue_from_fields(paper, kind, changed, new_raw, out)
    if kind != paper.entrytype:
        out["entrytype"] = kind
    if new_raw != paper.bibfields:
        out["bibfields"] = new_raw
    return out


def _wanted_texts(changes: Mapping[str, str | None]) -> dict[str, str]:
    """The edit's texts by field name (lower case, cleaned; one line but for the multi-line
    fields); InvalidValueError for a field that is not edited here or no BibTeX name."""
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
    return wanted


def _retyped(paper: Paper, view: EditorView, typed: str | None) -> tuple[str, dict[str, str]]:
    """The entry type after the edit, and the record with the venue moved to the field the new
    type keeps it in (journal ↔ booktitle ↔ howpublished; journaltitle is BibLaTeX's journal)."""
    new_raw = dict(paper.bibfields)
    if typed is None or typed == view.entrytype:
        return paper.entrytype, new_raw
    kind = typed.lower()
    if not _TYPE_RE.match(kind):
        raise InvalidValueError(f"{typed!r} is not an entry type (such as article or inproceedings)")
    source, target = _venue_source(paper), venue_field(kind)
    if target == "journal" and source == "journaltitle":
        target = source
    if source and source != target and target not in new_raw:
        new_raw = {(target if k == source else k): v for k, v in new_raw.items()}
    return kind, new_raw


def _changed_texts(paper: Paper, view: EditorView, wanted: dict[str, str]) -> dict[str, str]:
    """The texts that differ from what the editor shows (the names always compared as a list);
    an empty field of the record (`key = ""`) is removed by giving it no text."""
    changed = {k: v for k, v in wanted.items() if view.fields.get(k, "") != v or k == "author"}
    changed.update({k: "" for k, v in wanted.items() if not v and k in paper.bibfields and k not in changed})
    if "author" in changed and changed["author"] == names_text(view.authors, view.others):
        del changed["author"]
    return changed


@dataclass
class _Edit:
    """One edit being made: the paper, its type after the edit, the display fields changed
    (`out`) and the record being rewritten (`new_raw`)."""

    paper: Paper
    kind: str
    out: dict[str, Any]
    new_raw: dict[str, str]


def _write_field(edit: _Edit, key: str, text: str) -> None:
    """Write one changed field's text into the record and the display field it feeds."""
    if key == "title":
        _write_title(edit, text)
    elif key in NAME_FIELDS:
        _write_names(edit, key, text)
    elif key in ("year", "date"):
        _write_date(edit, key, text)
    elif key == "venue":
        _write_venue(edit, text)
    elif key == "doi":
        _write_doi(edit, text)
    elif key == "eprint" and _eprint_is_arxiv(edit.paper, text):
        _write_arxiv(edit, text)
    else:
        _write_raw(edit.new_raw, key, text)


def _write_title(edit: _Edit, text: str) -> None:
    title = title_change(edit.paper, text)
    edit.out.update({k: v for k, v in title.items() if k != "bibfields"})
    if "bibfields" in title:
        edit.new_raw.pop("title", None)
        if "title" in title["bibfields"]:
            edit.new_raw["title"] = title["bibfields"]["title"]


def _write_names(edit: _Edit, key: str, text: str) -> None:
    if not text:
        edit.new_raw.pop(key, None)
        if key == "author":
            edit.out["authors"] = []
        return
    problem = name_list_problem(text)
    if problem:
        raise InvalidValueError(f"{key}: {problem}. Nothing was changed.")
    value, display = _names_raw(text)
    edit.new_raw[key] = _braced(value)
    if key == "author":
        edit.out["authors"] = display


def _write_date(edit: _Edit, key: str, text: str) -> None:
    """A year or a BibLaTeX date: either replaces the other."""
    other = "date" if key == "year" else "year"
    edit.new_raw.pop(other, None)
    if not text:
        edit.out["year"] = None
        edit.new_raw.pop(key, None)
    elif key == "year":
        edit.out["year"] = _year(text)
        edit.new_raw["year"] = _braced(str(edit.out["year"]))
    else:
        edit.out["year"] = _date_year(text)
        edit.new_raw["date"] = _braced(text)


def _write_venue(edit: _Edit, text: str) -> None:
    target = venue_field(edit.kind)
    for gone in {_venue_source(edit.paper), target} - {""}:
        edit.new_raw.pop(gone, None)
    edit.out["venue"] = text
    if text:
        edit.new_raw[target] = _braced(text_latex(text))


def _write_doi(edit: _Edit, text: str) -> None:
    doi = clean_doi(text)
    if any(ch.isspace() for ch in doi):
        raise InvalidValueError(f"{text!r} is not a DOI: a DOI holds no spaces")
    if text and not doi.startswith("10."):
        raise InvalidValueError(f"{text!r} is not a DOI (a DOI starts with 10., like 10.1000/xyz123)")
    edit.out["doi"] = doi
    edit.new_raw.pop("doi", None)
    if doi:
        edit.new_raw["doi"] = _braced(verbatim_value(doi))


def _eprint_is_arxiv(paper: Paper, text: str) -> bool:
    """Whether a typed eprint is the paper's arXiv id: a record's own eprint of another archive
    (JSTOR, HDL) is written as it is, unless an arXiv id replaces it explicitly ("arXiv:2401.01234")."""
    return bool(paper.arxiv_id) or "eprint" not in paper.bibfields or text.lower().startswith("arxiv:")


def _write_arxiv(edit: _Edit, text: str) -> None:
    arxiv = _arxiv(text) if text else ""
    edit.out["arxiv_id"] = arxiv
    for gone in ("eprint", "eprinttype", "archiveprefix", "arxivid", "primaryclass", "eprintclass"):
        edit.new_raw.pop(gone, None)
    if arxiv:
        edit.new_raw["eprint"], edit.new_raw["archiveprefix"] = _braced(arxiv), "{arXiv}"


def _write_raw(new_raw: dict[str, str], key: str, text: str) -> None:
    """Any other field: its text as the record's LaTeX (verbatim, a month macro, a page range
    with "--", citation keys), or the field removed when it has no text."""
    if not text:
        new_raw.pop(key, None)
    elif key in _VERBATIM:
        if any(ch.isspace() for ch in text):
            raise InvalidValueError(f"{key}: {text!r} holds a space; a {key.upper()} has none (write %20)")
        new_raw[key] = _braced(verbatim_value(text))
    elif key == "month" and text.lower()[:3] in _MONTHS and text.lower() in _MONTH_NAMES:
        new_raw[key] = text.lower()[:3]  # the month macro: every style prints it in its language
    elif key == "pages":
        new_raw[key] = _braced(text_latex(re.sub(r"\s*[–—]\s*", "--", text)))
    elif key in _KEY_FIELDS:
        new_raw[key] = _braced(re.sub(r"[{}\"\s]", "", text))
    else:
        new_raw[key] = _braced(text_latex(text))


def _venue_from_fields(
    paper: Paper, kind: str, changed: Mapping[str, str], new_raw: Mapping[str, str], out: dict[str, Any]
) -> None:
    """The venue as the import reads it from the fields, after a new type or a changed venue
    field (`set ID journal=…` is the venue); an entry that inherits keeps its parent's."""
    if "crossref" in new_raw or "xdata" in new_raw or "venue" in changed:
        return
    touched = any(k in changed for k in VENUE_SOURCES)
    if kind != paper.entrytype or touched:
        found = decode(venue_raw(kind, new_raw)) or None
        if found is not None or touched:
            out["venue"] = found or ""
