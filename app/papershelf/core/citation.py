"""A paper's bibliographic record as the reader sees it (the viewer and `show` print this).

The record (`Paper.entrytype`, `Paper.bibfields`) keeps each field as its BibTeX value
expression (`{The {CGAL} Project}`, `"10~" # jan`); here they become text: the entry type
in words ("Journal article", "PhD thesis"), every field under a readable label in a fixed
order (venue, volume, number, pages, publisher, …; unknown fields after, by their own
name), pages with an en dash, month macros as month names, the DOI, URL and arXiv id as
links. A paper from a listing has no record: every function here gives nothing for it.

Values are decoded by `core/biblio/latex.py` (pylatexenc behind fast paths); values without
markup skip the decoder altogether (most are: numbers,
`{Addison-Wesley}`), and every field's text is cached, because the viewer renders the
record on each selection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import NamedTuple

from .biblio.identifiers import arxiv_url, clean_doi, doi_url
from .biblio.latex import MONTHS, decode, piece_text, pieces
from .biblio.names import parse_names
from .biblio.types import NAME_FIELDS, TYPE_KEYS, TYPE_NAMES
from .paper import Paper, normalize_tag
from .render import plain_text


class RecordLine(NamedTuple):
    """One line of the record: the field it shows, its label, its text."""

    name: str  # the field's name in the record ("journal"); "entrytype" for the type line
    label: str  # what the reader sees before the text ("Journal")
    text: str


# fmt: off
# the types whose `type` field names the kind of document (BibTeX: "Research Note" for a report)
_TYPED_ENTRIES = frozenset(
    {"report", "techreport", "thesis", "phdthesis", "mastersthesis", "patent", "manual"}
)
# the types whose `type` field names the kind of part ("Section" 1.2 rather than chapter 1.2)
_TYPED_CHAPTERS = frozenset({"inbook", "incollection", "bookinbook", "inreference"})

# Labels of the known fields, in the order the record shows them; any other field comes
# after these, in the file's order, labelled by its own name.
FIELD_LABELS: dict[str, str] = {
    "journal": "Journal", "journaltitle": "Journal", "journalsubtitle": "Journal subtitle",
    "shortjournal": "Journal abbreviation",
    "booktitle": "In", "booksubtitle": "Book subtitle", "maintitle": "Main title",
    "mainsubtitle": "Main subtitle", "eventtitle": "Event", "eventdate": "Event date", "venue": "Venue",
    "subtitle": "Subtitle", "titleaddon": "Title addition", "shorttitle": "Short title",
    "series": "Series", "volume": "Volume", "volumes": "Volumes", "number": "Number", "issue": "Issue",
    "part": "Part", "pages": "Pages", "pagetotal": "Page count", "chapter": "Chapter",
    "edition": "Edition", "version": "Version", "editor": "Editor", "editora": "Editor",
    "editorb": "Editor", "editorc": "Editor", "translator": "Translator", "annotator": "Annotator",
    "commentator": "Commentator", "introduction": "Introduction", "foreword": "Foreword",
    "afterword": "Afterword", "bookauthor": "Book author", "holder": "Holder",
    "publisher": "Publisher", "organization": "Organization", "institution": "Institution",
    "school": "School", "address": "Address", "location": "Location", "type": "Kind",
    "howpublished": "Published", "month": "Month", "year": "Year", "date": "Date",
    "origdate": "Original date", "urldate": "Visited", "isbn": "ISBN", "issn": "ISSN",
    "isrn": "ISRN", "ismn": "ISMN", "isan": "ISAN", "iswc": "ISWC", "library": "Library",
    "note": "Note", "addendum": "Addendum", "annote": "Annotation", "annotation": "Annotation",
    "language": "Language", "langid": "Language", "origlanguage": "Original language",
    "keywords": "Keywords", "pubstate": "Publication state",
    "url": "URL", "doi": "DOI", "eprint": "E-print", "eprinttype": "E-print archive",
    "archiveprefix": "E-print archive", "eprintclass": "E-print class", "primaryclass": "E-print class",
    "pmid": "PubMed ID", "pmcid": "PubMed Central ID", "shorthand": "Shorthand",
    "crossref": "Part of", "xref": "Part of", "xdata": "Shared data", "entryset": "Set",
}
# fmt: on
# shown elsewhere in every view of a paper: the title heading, the authors line, the abstract
_SHOWN_APART = frozenset({"title", "author", "abstract"})
# values that are not LaTeX text (biblatex reads them verbatim): only their delimiters go
_VERBATIM = frozenset({"url", "doi", "eprint", "file", "pdf", "urlraw", "verba", "verbb", "verbc"})
_MONTH_NUMBERS = {str(i): name for i, name in enumerate(MONTHS.values(), 1)}

# a single value with nothing to decode: a number, or a delimited text free of LaTeX's and
# Markdown's special characters (and of "--", which becomes a dash)
_PLAIN_VALUE_RE = re.compile(r'\s*(?:\{([^{}\\$~#%&_^"`*]*)\}|"([^{}\\$~#%&_^"`*]*)"|(\d+))\s*')
_PAGE_RANGE_RE = re.compile(r"(\w)\s*(?:-{1,3}|\u2013|\u2014)\s*(\w)")
_VERBATIM_ESCAPE_RE = re.compile(r"\\([_%#&$~])")


@lru_cache(maxsize=4096)
def _names(raw: str) -> tuple[list[str], bool]:
    """A name list's names as shown ("First Last") and whether it ends in `and others`."""
    names, others = parse_names(raw)
    return [n.display() for n in names], others


def _undelimited(raw: str) -> str:
    """A value expression's text still in LaTeX: the parts joined without their delimiters."""
    return "".join(piece_text(part) for part in pieces(raw))


def _verbatim_text(raw: str) -> str:
    """A URL, DOI or e-print id: the delimiters and the escapes of LaTeX's specials gone."""
    text = _undelimited(raw)
    return (_VERBATIM_ESCAPE_RE.sub(r"\1", text) if "\\" in text else text).strip()


def _field_text(name: str, raw: str) -> str:
    if raw.isdigit():  # volume = 12, year = 1995: the commonest values
        return raw
    if name in _VERBATIM:
        return _verbatim_text(raw)
    if name == "abstract":
        # as the rest of Papershelf reads an abstract (LaTeX, math, Markdown; cached), and
        # not through the field decoder: a long abstract with math costs it milliseconds
        return plain_text(_undelimited(raw))
    if name == "month":
        key = piece_text(raw.strip()).strip().lower()
        if key in MONTHS or key in _MONTH_NUMBERS:
            return MONTHS.get(key) or _MONTH_NUMBERS[key]
    m = _PLAIN_VALUE_RE.fullmatch(raw)
    if m and "--" not in raw and "''" not in raw:
        text = m.group(1) or m.group(2) or m.group(3) or ""
        if "  " in text or "\n" in text or "\t" in text or text[:1].isspace() or text[-1:].isspace():
            text = " ".join(text.split())
    else:
        text = " ".join(decode(raw).split())
    if name == "pages" and ("-" in text or "\u2013" in text or "\u2014" in text):
        text = _PAGE_RANGE_RE.sub("\\1\u2013\\2", text)
    return text


_cached_field_text = lru_cache(maxsize=8192)(_field_text)


def field_text(name: str, raw: str) -> str:
    """The reader's text of one field (`name` lower case, `raw` its value expression):
    decoded LaTeX, page ranges with an en dash, months by name. Cached: the viewer asks
    again on each selection."""
    return _cached_field_text(name, raw)


def fields_text(paper: Paper) -> dict[str, str]:
    """Every field of the paper's record as text, name → text, in the record's order ({}
    without a record). Not through the cache: `list --json` reads each paper once, and
    100,000 papers' values would only evict one another."""
    return {name: _field_text(name, value) for name, value in paper.bibfields.items()}


_KEYWORD_SPLIT_RE = re.compile(r"[,;]")
# a braced value with nothing LaTeX would change (most keyword lists): its text is its inside
_PLAIN_BRACED_RE = re.compile(r"\{[^\\{}$~%#&^_\-]*\}")


def record_keywords(bibfields: Mapping[str, str]) -> list[str]:
    """The keywords of a record as the reader sees them, in the record's order, each once
    (a .bib `keywords` field, and a RIS file's KW lines, are separated by commas or
    semicolons). They are the record's, not the user's tags: searched as `keyword:`, shown,
    exported as they came; they become tags only when the user asks."""
    raw = bibfields.get("keywords")
    if not raw:
        return []
    text = raw[1:-1] if _PLAIN_BRACED_RE.fullmatch(raw) else decode(raw)  # the index reads every paper's
    out: dict[str, str] = {}
    for part in _KEYWORD_SPLIT_RE.split(text):
        word = " ".join(part.split())
        if word:
            out.setdefault(normalize_tag(word), word)
    return list(out.values())


def has_record(paper: Paper) -> bool:
    """Whether the paper came with a bibliographic record (from a .bib or .ris file)."""
    return bool(paper.entrytype or paper.bibfields)


def entry_type_text(paper: Paper) -> str:
    """The entry type in words ("Journal article"); BibLaTeX's key in a thesis's or report's
    `type` field (`phdthesis`, `techreport`) says which kind it is (free text there, such as
    "Research Note", is a field of its own). "" for a paper without a record."""
    kind = paper.entrytype.lower()
    if not kind:
        return ""
    if kind in _TYPED_ENTRIES and "type" in paper.bibfields:
        given = TYPE_KEYS.get(field_text("type", paper.bibfields["type"]).lower())
        if given:
            return given
    return TYPE_NAMES.get(kind, kind.capitalize())


def authors_text(paper: Paper) -> str:
    """The authors as shown ("A, B"), with "et al." when the record's list ends in `and others`."""
    shown = ", ".join(paper.authors)
    raw = paper.bibfields.get("author", "")
    if raw and _names(raw)[1]:
        return f"{shown} et al." if shown else "et al."
    return shown


def shown_names(raw: str) -> str:
    """A name list (editor, translator…) as the reader sees it: "First Last, First Last",
    with "et al." for `and others`."""
    names, others = _names(raw)
    shown = ", ".join(names)
    if others:
        return f"{shown} et al." if shown else "et al."
    return shown


def find_by_key(papers: Iterable[Paper], key: str) -> Paper | None:
    """The paper whose citation key is `key` (BibTeX compares keys without case), or None."""
    folded = key.strip().casefold()
    return next((p for p in papers if p.citekey and p.citekey.casefold() == folded), None)


def record_view(paper: Paper, parent: Callable[[str], Paper | None] | None = None) -> list[RecordLine]:
    """The whole record as the reader sees it: the type, the authors, then every non-empty
    field but the title and the abstract (known fields first, in a fixed order, then the
    others by name). `parent` finds a paper by citation key, to name a crossref's parent.
    Empty for a paper without a record."""
    if not has_record(paper):
        return []
    fields = paper.bibfields
    kind = paper.entrytype.lower()
    lines = [RecordLine("entrytype", "Type", entry_type_text(paper))]
    authors = authors_text(paper)
    if authors:
        lines.append(RecordLine("author", "Authors", authors))
    known = [n for n in FIELD_LABELS if n in fields]
    others = [n for n in fields if n not in FIELD_LABELS and n not in _SHOWN_APART]
    for name in known + others:
        line = _field_line(name, kind, fields, parent)
        if line is not None:
            lines.append(line)
    return lines


def _field_line(
    name: str, kind: str, fields: Mapping[str, str], parent: Callable[[str], Paper | None] | None
) -> RecordLine | None:
    """The line of one field of a record of type `kind`, or None when it shows nothing: empty,
    or said by the type line or by the chapter's label."""
    text = shown_names(fields[name]) if name in NAME_FIELDS else field_text(name, fields[name])
    if not text:
        return None
    if name == "type" and (
        (kind in _TYPED_ENTRIES and text.lower() in TYPE_KEYS) or (kind in _TYPED_CHAPTERS and "chapter" in fields)
    ):
        return None  # said by the type line, or by the chapter's label
    label = FIELD_LABELS.get(name, name)
    if name == "chapter" and kind in _TYPED_CHAPTERS and fields.get("type"):
        label = field_text("type", fields["type"]) or label
    elif name in ("crossref", "xref") and parent is not None:
        found = parent(text)
        if found is not None and found.title:
            text = f"{plain_text(found.title)} [{text}]"
    return RecordLine(name, label, text)


def _first(paper: Paper, *names: str, used: set[str] | None = None) -> str:
    """The text of the first of the fields `names` that has some (noted in `used`)."""
    fields = paper.bibfields
    for name in names:
        if name in fields:
            text = field_text(name, fields[name])
            if text:
                if used is not None:
                    used.add(name)
                return text
    return ""


class RecordLink(NamedTuple):
    """An identifier of the record as a link."""

    label: str  # "DOI", "arXiv", "URL"
    text: str  # what the reader sees: the bare DOI, the arXiv id, the URL
    url: str  # http(s) only


class RecordDisplay(NamedTuple):
    """The record laid out for the viewer: one summary line, the links, the other fields."""

    summary: list[str]  # type, venue, volume(number) and pages, publisher, year
    links: list[RecordLink]
    details: list[RecordLine]  # every field neither the summary nor the links show


def record_display(paper: Paper, parent: Callable[[str], Paper | None] | None = None) -> RecordDisplay:
    """The record as the viewer shows it (see RecordDisplay): each field once, in the summary
    under the authors, as a link, or among the details after the abstract. Empty for a
    paper without a record. `parent` finds a crossref's parent by citation key."""
    if not has_record(paper):
        return RecordDisplay([], [], [])
    used: set[str] = {"entrytype", "author"}
    parts = [
        _type_part(paper, used),
        _venue_part(paper, used),
        _where_part(paper, used),
        _first(paper, "publisher", "school", "institution", "organization", used=used),
        _year_part(paper, used),
    ]
    links = record_links(paper, used)
    details = [line for line in record_view(paper, parent) if line.name not in used]
    return RecordDisplay([p for p in parts if p], links, details)


def _type_part(paper: Paper, used: set[str]) -> str:
    """The entry type in words; a `type` field that names a known kind is said by it."""
    if raw_type := paper.bibfields.get("type"):
        if field_text("type", raw_type).lower() in TYPE_KEYS:
            used.add("type")  # said by the type
    return entry_type_text(paper)


def _venue_part(paper: Paper, used: set[str]) -> str:
    """Where it appeared: the reader's text (and the raw field it came from, if one reads the
    same, is used), else the first venue field the record has."""
    venue_fields = ("journal", "journaltitle", "booktitle", "howpublished")
    venue = paper.venue
    if not venue:
        return _first(paper, *venue_fields, used=used)
    same = next((n for n in venue_fields if n in paper.bibfields and _first(paper, n) == venue), None)
    if same:
        used.add(same)
    return venue


def _where_part(paper: Paper, used: set[str]) -> str:
    """Volume(number) and pages: "vol. 12(3), pp. 1–9", "no. 4", "p. 7"."""
    volume = _first(paper, "volume", used=used)
    number = _first(paper, "number", "issue", used=used)
    pages = _first(paper, "pages", used=used)
    where = []
    if volume:
        where.append(f"vol. {volume}" + (f"({number})" if number else ""))
    elif number:
        where.append(f"no. {number}")
    if pages:
        where.append(("pp. " if "\u2013" in pages or "," in pages else "p. ") + pages)
    return ", ".join(where)


def _year_part(paper: Paper, used: set[str]) -> str:
    """The year the reader sees (and the raw fields that read the same are used), else the
    record's date or year."""
    if not paper.year:
        return _first(paper, "date", "year", used=used)
    year = str(paper.year)
    used.update(n for n in ("year", "date") if n in paper.bibfields and _first(paper, n) == year)
    return year


def record_summary(paper: Paper) -> list[str]:
    """One line's parts, for the top of the viewer: type, venue, volume(number) and pages,
    publisher (or school, institution, organization), year. Empty without a record."""
    return record_display(paper).summary


def record_links(paper: Paper, used: set[str] | None = None) -> list[RecordLink]:
    """The record's identifiers as links, for the DOI, the arXiv id and an http(s) URL, when
    there are any; the fields they show are noted in `used`."""
    used = set() if used is None else used
    out: list[RecordLink] = []
    doi = paper.doi or _first(paper, "doi")
    if doi:
        out.append(RecordLink("DOI", clean_doi(doi), doi_url(doi)))
        used.add("doi")
    arxiv = paper.arxiv_id
    if not arxiv and _first(paper, "eprinttype", "archiveprefix").lower() == "arxiv":
        arxiv = _first(paper, "eprint")
    if arxiv:
        out.append(RecordLink("arXiv", arxiv, arxiv_url(arxiv)))
        if _first(paper, "eprint") == arxiv:
            used.update(("eprint", "eprinttype", "archiveprefix"))
    url = _first(paper, "url")
    if url.lower().startswith(("http://", "https://")):
        out.append(RecordLink("URL", url, url))
        used.add("url")
    return out


def is_fragment(paper: Paper) -> bool:
    """Whether the paper's export is a fragment nobody would cite: its title derived from the
    abstract (or none), or no authors (nor editors), or no year. A record that inherits
    (crossref, xdata) takes its names and year from its parent: only its title counts."""
    if paper.title_derived or not paper.title.strip():
        return True
    raw = paper.bibfields
    if "crossref" in raw or "xdata" in raw:
        return False
    return (not paper.authors and not raw.get("editor")) or paper.year is None


def fragments(papers: Iterable[Paper]) -> list[str]:
    """The ids of the papers whose exports are fragments (`is_fragment`), in the order given."""
    return [p.id for p in papers if is_fragment(p)]
