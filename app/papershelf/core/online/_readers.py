"""The services' answers read into FoundRecords: arXiv's Atom, Crossref's, OpenAlex's and Semantic
Scholar's JSON, and the BibTeX doi.org negotiates. Pure functions of the text; a part that is not
what the service sends raises BadResponse naming the service (services.py adds the request)."""

from __future__ import annotations

import html
import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from papershelf.core.biblio.identifiers import ARXIV_DOI_RE, clean_doi, parse_identifier
from papershelf.core.biblio.latex import decode, latex_text
from papershelf.core.biblio.names import parse_names
from papershelf.core.limits import MAX_FIELD_CHARS, MAX_TITLE_CHARS, field_limit
from papershelf.core.online.records import SERVICE_NAMES, BadResponse, FoundRecord, ServerError

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"

# Crossref's work types as BibLaTeX entry types (api.crossref.org/types); preprints and anything
# without a closer type are @misc, valid in both dialects and needing no particular field
CROSSREF_TYPES = {
    "journal-article": "article",
    "proceedings-article": "inproceedings",
    "book-chapter": "incollection",
    "book-section": "incollection",
    "book-part": "incollection",
    "reference-entry": "incollection",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "reference-book": "book",
    "book-set": "book",
    "book-series": "book",
    "proceedings": "proceedings",
    "dissertation": "phdthesis",
    "report": "report",
    "report-series": "report",
    "posted-content": "misc",
    "dataset": "misc",
    "standard": "misc",
    "peer-review": "misc",
    "component": "misc",
    "other": "misc",
}

# OpenAlex's own types, when it gives no Crossref type
OPENALEX_TYPES = {
    "article": "article",
    "review": "article",
    "letter": "article",
    "editorial": "article",
    "erratum": "article",
    "book-chapter": "incollection",
    "reference-entry": "incollection",
    "book": "book",
    "dissertation": "phdthesis",
    "report": "report",
    "preprint": "misc",
    "dataset": "misc",
    "standard": "misc",
    "other": "misc",
}

S2_TYPES = {
    "JournalArticle": "article",
    "Review": "article",
    "LettersAndComments": "article",
    "Editorial": "article",
    "Conference": "inproceedings",
    "Book": "book",
    "BookSection": "incollection",
    "Dataset": "misc",
}

_ARXIV_VERSION = re.compile(r"v\d+$")
_ARXIV_ABS = re.compile(r"arxiv\.org/(?:abs|pdf)/", re.I)
_ARXIV_TAIL = re.compile(r"([^?#\s]+?)(?:v\d+)?(?:\.pdf)?", re.I)  # what follows the last abs/ or pdf/
_TAG = re.compile(r"<[^<>]+>")  # not [^>]: a "<" without its ">" would scan to the end, for each "<"
_BLOCK_END = re.compile(r"</(?:jats:)?(?:p|title|sec|list-item)>", re.I)


def bad(service: str, what: str) -> BadResponse:
    """The error for an answer that is not what `service` sends."""
    return BadResponse(
        f"{SERVICE_NAMES.get(service, service)} sent an answer Papershelf cannot read ({what}). "
        "Try again later; if it keeps happening, please report it. Nothing was changed.",
        service,
    )


_P = ParamSpec("_P")
_T = TypeVar("_T")


def guarded(service: str) -> Callable[[Callable[_P, _T]], Callable[_P, _T]]:
    """A reader whose every part of an unexpected type ("authors": 5, a number where a list is
    sent) or nested too deeply ([[[[… a hundred thousand times) raises BadResponse for that answer,
    never a TypeError or a RecursionError that would end a whole batch. services._read puts every
    reader of every service's answer (JSON, XML, BibTeX) through it."""

    def wrap(read: Callable[_P, _T]) -> Callable[_P, _T]:
        @wraps(read)
        def reading(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            try:
                return read(*args, **kwargs)
            except RecursionError:
                raise bad(service, "parts nested too deeply") from None
            except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
                raise bad(service, f"a part of an unexpected type: {type(exc).__name__}") from None

        return reading

    return wrap


def _list(value: object) -> list[Any]:
    """A JSON array, or [] for anything else (null, a number, an object)."""
    return value if isinstance(value, list) else []


def one_line(text: str) -> str:
    """Runs of white space (the services' line breaks and indentation) as one space."""
    return " ".join(text.split())


def markup_text(text: str) -> str:
    """JATS or HTML markup (Crossref's abstracts, OpenAlex's titles) as plain text: tags dropped,
    entities decoded, a leading "Abstract" heading dropped."""
    text = re.sub(r"^\s*<(jats:)?title>\s*abstract\s*</(jats:)?title>", "", text, flags=re.I)
    text = _BLOCK_END.sub(" ", text)
    return one_line(html.unescape(_TAG.sub("", text)))


def _not_too_long(service: str, what: str, text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """The text, or BadResponse if it is longer than any paper's field: decoding TeX costs tens of
    microseconds a character, so a hostile answer is refused before it is decoded."""
    if len(text) > limit:
        raise bad(
            service, f"its {what} is {len(text):,} characters long, more than any paper's (the limit is {limit:,})"
        )
    return text


def tex_text(text: str, what: str = "text") -> str:
    """arXiv's text (authors write TeX there: accents, $math$) as one line of the reader's text."""
    text = one_line(_not_too_long("arxiv", what, text))
    if "\\" not in text and "$" not in text:
        return text
    # a bare % is a percent sign in arXiv's plain text, but a comment to LaTeX
    return latex_text(re.sub(r"(?<!\\)%", r"\\%", text))


def bare_doi(value: object) -> str:
    """A DOI as FoundRecord keeps it: bare, lower case ("" when absent)."""
    return clean_doi(value).lower() if isinstance(value, str) else ""


def arxiv_id_of(value: str) -> str:
    """An arXiv id without its version, from an abs/pdf URL or a bare id."""
    # the last "arxiv.org/abs/" and what follows it to the end: one search from each of many such
    # paths, each scanning to the end, was quadratic and worse on an answer repeating them
    ends = [found.end() for found in _ARXIV_ABS.finditer(value)]
    match = _ARXIV_TAIL.fullmatch(value, ends[-1]) if ends else None
    ident = match.group(1) if match else value.strip()
    return _ARXIV_VERSION.sub("", ident)


def _year(value: object) -> int | None:
    if isinstance(value, int) and 1000 <= value <= 2999:
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}", value.strip()):
        return int(value)
    return None


def _obj(value: object) -> dict[str, Any]:
    """A JSON object, or {} for anything else (null, a list): a missing part reads as empty."""
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else str(value) if isinstance(value, (int, float)) else ""


# -- arXiv ------------------------------------------------------------------------------------------


@guarded("arxiv")
def read_arxiv_feed(data: bytes | str, limit: int | None = None) -> list[FoundRecord]:
    """The entries of an arXiv API Atom feed (the first `limit`: as many as were asked for), read
    from the bytes sent (the XML's own encoding declaration decides; text is read as UTF-8). An
    error feed (arXiv's answer to a malformed query, sent with HTTP 400 or 200) raises ServerError
    with arXiv's reason."""
    try:
        root = ET.fromstring(data.encode("utf-8") if isinstance(data, str) else data)
    except ET.ParseError as exc:
        raise bad("arxiv", f"not XML: {exc}") from None
    if root.tag != f"{ATOM}feed":
        raise bad("arxiv", "not an Atom feed")
    records = []
    for entry in root.findall(f"{ATOM}entry")[:limit]:
        ident = (entry.findtext(f"{ATOM}id") or "").strip()
        title = one_line(entry.findtext(f"{ATOM}title") or "")
        if "/api/errors" in ident or (title == "Error" and "/abs/" not in ident):
            reason = one_line(entry.findtext(f"{ATOM}summary") or "") or "no reason given"
            raise ServerError(
                f"arXiv refused the query: {reason}. Check the arXiv identifier or the search; nothing was changed.",
                "arxiv",
                status=400,
            )
        records.append(_arxiv_entry(entry, ident, title))
    return records


def _arxiv_entry(entry: ET.Element, ident: str, title: str) -> FoundRecord:
    arxiv_id = arxiv_id_of(ident)
    if not arxiv_id:
        raise bad("arxiv", "an entry without an id")
    if parse_identifier(f"arXiv:{arxiv_id}") is None:
        raise bad("arxiv", "an entry whose id is no arXiv id")
    authors = [one_line(a.findtext(f"{ATOM}name") or "") for a in entry.findall(f"{ATOM}author")]
    published = (entry.findtext(f"{ATOM}published") or "").strip()
    year = _year(published[:4])
    doi = bare_doi(entry.findtext(f"{ARXIV}doi") or "")
    journal_ref = one_line(entry.findtext(f"{ARXIV}journal_ref") or "")
    venue, ref_year = journal_venue(journal_ref)
    if venue and ref_year is not None:
        year = ref_year
    primary = entry.find(f"{ARXIV}primary_category")
    extra = {"eprinttype": "arxiv"}
    if primary is not None and primary.get("term") and "/" not in arxiv_id:
        extra["eprintclass"] = primary.get("term", "")
    return FoundRecord(
        service="arxiv",
        ident=arxiv_id,
        title=tex_text(_not_too_long("arxiv", "title", title, MAX_TITLE_CHARS), "title"),
        authors=[a for a in authors if a],
        year=year,
        venue=venue,
        doi=doi,
        arxiv_id=arxiv_id,
        # a journal reference that names no journal ("Accepted at NeurIPS 2023") says no type
        entrytype="article" if (doi or venue) else "" if journal_ref else "misc",
        abstract=tex_text(entry.findtext(f"{ATOM}summary") or "", "abstract"),
        url=f"https://arxiv.org/abs/{arxiv_id}",
        extra=extra,
    )


# what authors write in arXiv's journal_ref that is no publication ("Accepted at NeurIPS 2023",
# "To appear in CVPR 2023", "12 pages, 5 figures", "Submitted to …", "ICLR 2024 (spotlight)")
_NOT_A_REFERENCE = re.compile(
    r"\b(?:accepted|appear|appears|submitted|under review|in press|preprint|pages?|figures?|talk|poster|"
    r"spotlight|oral|presented|workshop|camera[- ]ready|extended|version)\b",
    re.I,
)
# a journal's name (no digits), its volume, then pages and a year in any of the usual orders:
# "Phys. Rev. D 76, 044016 (2007)", "ActaAstron.56:1-50,2006", "Astrophys. J. 645 (2006) 1-10",
# "Nature 521, 436-444 (2015)", "J. Mach. Learn. Res. 18(1):1-52, 2017", "Int. J. X (IJX), Vol.3, 2012"
_JOURNAL_REF = re.compile(
    r"(?P<name>[^\W\d][^\d:;,()]*?[.\w](?:\s*\([^\d()]+\))?)\s*,?\s*(?P<vol>[Vv]ol(?:ume)?\.?\s*)?"
    r"(?P<volume>\d+[A-Z]?)"
    r"(?:\s*\((?!(?:19|20)\d\d\))(?P<issue>\d+(?:[-/]\d+)?)\))?"
    r"(?P<rest>\s*(?:[:,]|\(\s*(?:19|20)\d\d\s*\)|\s(?:no\.|p\.|pp\.)?\s*\d).*)",
)
_REF_PAGES = re.compile(r"(?<![\d.])(?:pp?\.\s*)?[A-Za-z]?\d+(?:\s*-{1,2}\s*[A-Za-z]?\d+)?(?![\d.])")
_REF_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def journal_venue(journal_ref: str) -> tuple[str, int | None]:
    """The journal's name and year (None when not given) of an arXiv journal_ref, when it is one (a
    name, then volume, pages and perhaps the year); ("", None) for anything else: a note, a
    conference's name with a year."""
    if not journal_ref or _NOT_A_REFERENCE.search(journal_ref):
        return "", None
    match = _JOURNAL_REF.fullmatch(journal_ref.strip())
    if match is None:
        return "", None
    name, volume, rest = match.group("name"), match.group("volume"), match.group("rest")
    if _REF_YEAR.fullmatch(volume):  # "ICLR 2024, 1-10": a year is no volume; conferences use it so
        return "", None
    years = _REF_YEAR.findall(rest)
    pages = [p for p in _REF_PAGES.findall(rest) if not _REF_YEAR.fullmatch(p.strip())]
    if not pages and not (match.group("vol") and years):  # "…, Vol.3, No.1, January 2012"
        return "", None
    name = re.sub(r"[\s,;:]*\b(?:vol|volume|no)\.?$", "", name, flags=re.I).strip(" ,;:")
    if len(name) < 3:
        return "", None
    return name, int(years[-1]) if years else None


# -- JSON ---------------------------------------------------------------------------------------------


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def load_json(service: str, text: str) -> Any:
    """The JSON of an answer, or BadResponse. Half a UTF-16 pair escaped alone ("\\ud800"), which no
    UTF-8 text can hold (printing or saving it would fail), is read as U+FFFD."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise bad(service, f"not JSON: {exc}") from None
    except RecursionError:  # [[[[…: deeper than the interpreter's recursion limit (about 1,000)
        raise bad(service, "JSON nested too deeply") from None
    return _without_lone_surrogates(data) if _SURROGATE_ESCAPE.search(text) else data


def _mended(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _without_lone_surrogates(data: Any) -> Any:
    """`data` with every string (keys too) mended; without recursion (the nesting is the sender's)."""
    if isinstance(data, str):
        return _mended(data)
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            node.clear()
            for key, value in items:
                node[_mended(key) if isinstance(key, str) else key] = (
                    _mended(value) if isinstance(value, str) else value
                )
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = _mended(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
    return data


@guarded("crossref")
def crossref_message(text: str, kind: str) -> dict[str, Any]:
    """The `message` of a Crossref answer of `kind` ("work" or "work-list")."""
    data = load_json("crossref", text)
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        raise bad("crossref", "no message")
    if data.get("message-type") not in (None, kind):
        raise bad("crossref", f"a {data.get('message-type')} where a {kind} was expected")
    message: dict[str, Any] = data["message"]
    return message


@guarded("crossref")
def read_crossref_work(item: dict[str, Any]) -> FoundRecord:
    """One Crossref work (the message of /works/{doi}, or an item of a work-list)."""
    if not isinstance(item, dict):
        raise bad("crossref", "a work that is not an object")
    titles = item.get("title") or []
    title = markup_text(titles[0]) if isinstance(titles, list) and titles and isinstance(titles[0], str) else ""
    containers = item.get("container-title") or []
    venue = _str(containers[0]) if isinstance(containers, list) and containers else ""
    doi = bare_doi(item.get("DOI"))
    abstract = item.get("abstract")
    return FoundRecord(
        service="crossref",
        ident=doi,
        title=title,
        authors=[a for a in _crossref_authors(item) if a],
        year=_crossref_year(item),
        venue=markup_text(venue),
        doi=doi,
        entrytype=CROSSREF_TYPES.get(_str(item.get("type")), "misc"),
        abstract=markup_text(abstract) if isinstance(abstract, str) else "",
        url=_str(item.get("URL")),
        extra=_crossref_extra(item),
    )


def _crossref_authors(item: dict[str, Any]) -> list[str]:
    """A Crossref work's authors as display names ("Given Family", or a group's name)."""
    authors = []
    for person in _list(item.get("author")):
        if not isinstance(person, dict):
            continue
        name = " ".join(_str(person.get(k)) for k in ("given", "family") if _str(person.get(k)))
        authors.append(name or _str(person.get("name")))
    return authors


def _crossref_year(item: dict[str, Any]) -> int | None:
    """A Crossref work's year: the first of its dates that has one, issued first."""
    for key in ("issued", "published", "published-print", "published-online"):
        parts = _obj(item.get(key)).get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = _year(parts[0][0])
            if year is not None:
                return year
    return None


def _crossref_extra(item: dict[str, Any]) -> dict[str, str]:
    """A Crossref work's plain BibTeX fields: volume, number, pages, publisher, subtitle."""
    extra = {}
    for source, name in (("volume", "volume"), ("issue", "number"), ("page", "pages"), ("publisher", "publisher")):
        value = _str(item.get(source))
        if value:
            extra[name] = value
    subtitles = item.get("subtitle") or []
    if isinstance(subtitles, list) and subtitles and isinstance(subtitles[0], str) and subtitles[0].strip():
        extra["subtitle"] = markup_text(subtitles[0])
    return extra


def inverted_abstract(index: object) -> str:
    """OpenAlex's abstract_inverted_index (word → positions) as the text it was made from."""
    if not isinstance(index, dict):
        return ""
    at: dict[int, str] = {}
    for word, positions in index.items():
        if isinstance(positions, list):
            for pos in positions:
                if isinstance(pos, int):
                    at[pos] = str(word)
    text = one_line(" ".join(at[p] for p in sorted(at)))
    # the index often starts with the heading of the abstract, as one more word
    return re.sub(r"^Abstract:?\s+(?=\S)", "", text)


@guarded("openalex")
def read_openalex_work(item: dict[str, Any]) -> FoundRecord:
    """One OpenAlex work (the answer of /works/{id}, or an item of `results`)."""
    if not isinstance(item, dict):
        raise bad("openalex", "a work that is not an object")
    authors = []
    for authorship in _list(item.get("authorships")):
        if isinstance(authorship, dict):
            author = _obj(authorship.get("author"))
            authors.append(_str(author.get("display_name")) or _str(authorship.get("raw_author_name")))
    location = _obj(item.get("primary_location"))
    source = _obj(location.get("source"))
    doi = bare_doi(item.get("doi"))
    ids = _obj(item.get("ids"))
    arxiv = _str(ids.get("arxiv"))
    match = ARXIV_DOI_RE.match(doi)
    if not arxiv and match:
        arxiv = match.group(1)
    if not arxiv:
        for loc in _list(item.get("locations")):
            url = _str(loc.get("landing_page_url")) if isinstance(loc, dict) else ""
            if "arxiv.org/abs/" in url:
                arxiv = url
                break
    entrytype = CROSSREF_TYPES.get(_str(item.get("type_crossref"))) or OPENALEX_TYPES.get(
        _str(item.get("type")), "misc"
    )
    if entrytype == "article" and _str(source.get("type")) == "conference":
        entrytype = "inproceedings"
    biblio = _obj(item.get("biblio"))
    extra = {}
    if _str(biblio.get("volume")):
        extra["volume"] = _str(biblio.get("volume"))
    if _str(biblio.get("issue")):
        extra["number"] = _str(biblio.get("issue"))
    first, last = _str(biblio.get("first_page")), _str(biblio.get("last_page"))
    if first:
        extra["pages"] = f"{first}-{last}" if last and last != first else first
    ident = _str(item.get("id")).rsplit("/", 1)[-1]
    return FoundRecord(
        service="openalex",
        ident=ident,
        title=markup_text(_str(item.get("display_name")) or _str(item.get("title"))),
        authors=[a for a in authors if a],
        year=_year(item.get("publication_year")),
        venue=_str(source.get("display_name")),
        doi=doi,
        arxiv_id=arxiv_id_of(arxiv) if arxiv else "",
        entrytype=entrytype,
        abstract=inverted_abstract(item.get("abstract_inverted_index")),
        url=f"https://doi.org/{doi}" if doi else _str(location.get("landing_page_url")),
        extra=extra,
    )


S2_FIELDS = "title,authors,year,venue,publicationVenue,journal,externalIds,abstract,publicationTypes,url"


@guarded("s2")
def read_s2_paper(item: dict[str, Any]) -> FoundRecord:
    """One Semantic Scholar paper (the answer of /paper/{id}, or an item of `data`)."""
    if not isinstance(item, dict):
        raise bad("s2", "a paper that is not an object")
    external = _obj(item.get("externalIds"))
    doi = bare_doi(external.get("DOI"))
    arxiv = _str(external.get("ArXiv"))
    journal = _obj(item.get("journal"))
    venue_obj = _obj(item.get("publicationVenue"))
    venue = _str(item.get("venue")) or _str(journal.get("name")) or _str(venue_obj.get("name"))
    preprint = venue.lower() in ("arxiv", "arxiv.org", "biorxiv", "medrxiv")
    if preprint:
        venue = ""  # a preprint server is where the paper waits for a venue, not one
    types = [t for t in _list(item.get("publicationTypes")) if isinstance(t, str)]
    entrytype = next((S2_TYPES[t] for t in types if t in S2_TYPES), "")
    if preprint and (not doi or ARXIV_DOI_RE.match(doi)):
        entrytype = "misc"
    extra = {}
    volume = _str(journal.get("volume"))
    if volume and not volume.startswith("abs/"):
        extra["volume"] = volume
    pages = one_line(_str(journal.get("pages")))
    if pages:
        extra["pages"] = pages
    authors = [_str(a.get("name")) for a in _list(item.get("authors")) if isinstance(a, dict)]
    return FoundRecord(
        service="s2",
        ident=_str(item.get("paperId")),
        title=one_line(_str(item.get("title"))),
        authors=[a for a in authors if a],
        year=_year(item.get("year")),
        venue=venue,
        doi=doi,
        arxiv_id=arxiv_id_of(arxiv) if arxiv else "",
        entrytype=entrytype,
        abstract=one_line(_str(item.get("abstract"))),
        url=_str(item.get("url")),
        extra=extra,
    )


# -- BibTeX -------------------------------------------------------------------------------------------

_BIB_SKIP = {"title", "author", "year", "journal", "journaltitle", "booktitle", "doi", "url", "abstract"}


def read_bibtex(text: str, doi: str) -> FoundRecord:
    """The first entry of the BibTeX a registrar negotiated for `doi` (doi.org), its values and
    names decoded as the importer decodes them."""
    # imported here: reading the other services' answers does not load bibtexparser
    import bibtexparser

    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # a failure is reported below instead
    try:
        library = bibtexparser.parse_string(text, parse_stack=[])
    except Exception as exc:  # bibtexparser raises its own and builtin errors on bad input
        raise bad("doi", f"not BibTeX: {exc}") from None
    if not library.entries:
        raise bad("doi", "no BibTeX entry")
    entry = library.entries[0]
    fields = {f.key.lower(): f.value for f in entry.fields if isinstance(f.value, str)}
    for key, value in fields.items():  # before any is decoded (see _not_too_long)
        _not_too_long("doi", f"field '{key}'", value, field_limit(key))
    names, _others = parse_names(fields["author"]) if "author" in fields else ([], False)
    extra = {k: decode(v) for k, v in fields.items() if k not in _BIB_SKIP and k != "month" and decode(v)}
    year_text = decode(fields.get("year", ""))
    venue = decode(fields.get("journal") or fields.get("journaltitle") or fields.get("booktitle") or "")
    found_doi = bare_doi(decode(fields.get("doi", ""))) or doi
    match = ARXIV_DOI_RE.match(found_doi)
    return FoundRecord(
        service="doi",
        ident=found_doi,
        title=decode(fields.get("title", "")),
        authors=[shown for n in names if (shown := n.display().strip())],  # {{}} names nobody
        year=_year(year_text[:4]),
        venue=venue,
        doi=found_doi,
        arxiv_id=arxiv_id_of(match.group(1)) if match else "",
        entrytype=entry.entry_type.lower(),
        abstract=decode(fields.get("abstract", "")),
        url=decode(fields.get("url", "")),
        extra=extra,
    )
