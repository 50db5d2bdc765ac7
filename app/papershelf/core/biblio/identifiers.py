"""Identifiers a user pastes or a record carries: DOIs and arXiv ids, in one normal form.

The one home of the rules about identifiers: `clean_doi` (a DOI without its resolver prefix, as
the imports and the editor keep it), `doi_url` and `arxiv_url` (their links), `ARXIV_URL_RE` (the
id in an arXiv link of a record's url field) and `ARXIV_DOI_RE` (the DOI arXiv gives a paper).

`parse_identifier` reads one (a bare DOI, `doi:…`, a doi.org or publisher URL, `arXiv:2401.01234v2`, a
bare new or old style arXiv id, an arxiv.org abs/pdf URL, arXiv's DOI 10.48550/arXiv.X) and gives
None for anything else; `find_identifiers` picks every one out of a pasted block of text.

A DOI that could not be one asked about safely is none: longer than MAX_DOI_LENGTH, holding a
control character or a space, or a "." or ".." path segment (10.1234/../../etc/passwd would ask the
service's host for /etc/passwd); `identifier_problem` says which, for the user.

Normal forms: a DOI is lower case (DOIs are case-insensitive) without the resolver prefix or the
punctuation around it in prose; an arXiv id has no version ("2401.01234", "hep-th/9901001": a version
names one revision, the look-up wants the work) and an old-style id no subject class ("math.GT/0309136"
is arXiv's legacy spelling of "math/0309136").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from urllib.parse import quote, unquote

from ..limits import escape_controls, has_controls

MAX_DOI_LENGTH = 300  # the longest DOIs registered (old SICI ones) are about 100 characters

# the archives of arXiv's old (before 2007-04) identifiers, "archive/YYMMNNN"
OLD_ARCHIVES = (
    "acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas cond-mat "
    "cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex nucl-th patt-sol "
    "physics plasm-ph q-alg q-bio q-fin quant-ph solv-int stat supr-con"
).split()

_ARCHIVE = "|".join(sorted((re.escape(a) for a in OLD_ARCHIVES), key=len, reverse=True))
_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = rf"(?:{_ARCHIVE})(?:\.[A-Za-z]{{2}})?/\d{{7}}"
_VERSION = r"(?:v\d+)?"
_ARXIV_ID = rf"(?:{_NEW_ID}|{_OLD_ID})"


# The three patterns holding every old archive's name cost milliseconds to compile, and every
# command imports this module (the store's format, the importers, `show`'s record): compiled
# when first used.
@cache
def _arxiv_id_re() -> re.Pattern[str]:
    return re.compile(rf"({_ARXIV_ID}){_VERSION}", re.I)


# arXiv's own links carry a listing's context or an anchor: …/abs/2401.01234?context=cs, …v2#
_ARXIV_URL = (
    rf"(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html|format)/({_ARXIV_ID}){_VERSION}(?:\.pdf)?"
    r"/?(?:[?#][^\s\"<>]*)?"
)
_ARXIV_PREFIXED = rf"arxiv:\s*({_ARXIV_ID}){_VERSION}"
_ARXIV_DOI = rf"10\.48550/arxiv\.({_ARXIV_ID}){_VERSION}"


# the whole text is one identifier (surrounding spaces, brackets and quotes aside)
@cache
def _whole_arxiv() -> re.Pattern[str]:
    return re.compile(
        rf"(?:{_ARXIV_URL}|{_ARXIV_PREFIXED}|(?:(?:https?://)?(?:dx\.|www\.)?doi\.org/|doi:\s*)?{_ARXIV_DOI}"
        rf"|({_ARXIV_ID}){_VERSION})/?(?:\s*\[[\w.-]+\])?",
        re.I,
    )


_DOI_RE = re.compile(r"10\.\d{4,9}/\S+", re.I)  # a whole DOI: old SICI DOIs carry <, > and ;
# a ";" that starts another identifier ("10.1/a;10.1/b"), not one inside a SICI DOI ("…3.0.CO;2-0")
_NEXT = r"(?:10\.\d|doi:|https?://|arxiv:|\d{4}\.\d{4,5}(?!\d)|[a-z-]+(?:\.[a-z]{2})?/\d{7})"
_SEPARATOR = re.compile(rf";(?={_NEXT})", re.I)
_DOI_BODY = rf"(?:[^\s\";]|;(?!{_NEXT}))+"
# what a page copied from the web hides in a DOI or a link: zero-width spaces and joiners, a soft
# hyphen, a byte-order mark; and the typographic quotes put around one
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_QUOTES = str.maketrans("\u201c\u201d\u201e\u00ab\u00bb\u2018\u2019\u201a", '"""""\'\'\'')
# a resolver's or a publisher's URL: what follows the DOI is the page's, not the DOI's
_RESOLVER_PREFIX = r"(?:https?://)?(?:dx\.|www\.)?doi\.org/"
_RESOLVER = re.compile("^" + _RESOLVER_PREFIX, re.I)
_PAGE_TAIL = re.compile(r"/(?:full|abstract|pdf|epdf|html|fulltext|meta)/?$", re.I)
# bioRxiv/medRxiv links name a version and a view after the DOI: …/10.1101/2020.01.01.123456v1.full
_PREPRINT_DOI = re.compile(
    r"(10\.1101/(?:\d{4}\.\d{2}\.\d{2}\.)?\d{6,})(?:v\d+)?"
    r"(?:\.(?:full|abstract|article-info|article-metrics|supplementary-material|full-text)(?:\.pdf(?:\+html)?)?|\.pdf)?",
    re.I,
)
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$", re.I)


# candidates in a block of text, tried left to right (the alternatives in order of preference)
@cache
def _find_re() -> re.Pattern[str]:
    return re.compile(
        rf"(?<![\w/.-])(?:{_ARXIV_URL}|{_ARXIV_PREFIXED}"
        rf"|(?:(?:https?://)?(?:dx\.|www\.)?doi\.org/|doi:\s*)?10\.\d{{4,9}}(?:/|%2F){_DOI_BODY}"
        rf"|https?://\S+"
        rf"|{_ARXIV_ID}{_VERSION})",
        re.I,
    )


# "https://doi.org/", "http://dx.doi.org/", "doi.org/", "doi:" and the like before a DOI
_DOI_PREFIX_RE = re.compile(rf"^\s*(?:{_RESOLVER_PREFIX}|doi:\s*)", re.I)
# an arXiv link's id: new style (2301.01234v2) or old (quant-ph/0412083, math.GT/0309136), ended
# by the URL's end, a query, a fragment or white space (a field may list several URLs)
ARXIV_URL_RE = re.compile(
    r"arxiv\.org/(?:abs|pdf)/((?:[a-z][a-z-]*(?:\.[a-z]{2})?/)?[^\s/?#]+?)(?:\.pdf)?(?=[?#\s]|$)", re.I
)
# the DOI arXiv gives each paper (DataCite's 10.48550/arXiv.2401.01234): the id after it
ARXIV_DOI_RE = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)

_TRAILING = ".,;:!?'\"`/"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}


@dataclass(frozen=True)
class Identifier:
    """A DOI (`kind` "doi", value "10.1073/pnas.1414271111") or an arXiv id (`kind` "arxiv", value
    "2401.01234" or "hep-th/9901001"), in normal form."""

    kind: str
    value: str

    def __str__(self) -> str:
        return f"doi:{self.value}" if self.kind == "doi" else f"arXiv:{self.value}"


def clean_doi(value: str) -> str:
    """A DOI without the "https://doi.org/", "http://dx.doi.org/" or "doi:" people put before it
    (the one rule for .bib and .ris imports, the editor, the duplicate finder and the links)."""
    value = value.strip()
    while True:
        cleaned = _DOI_PREFIX_RE.sub("", value, count=1).strip()
        if cleaned == value:
            return value
        value = cleaned


def doi_of_link(url: str) -> str:
    """The DOI a resolver's link names (https://doi.org/10.1000/x, dx.doi.org, www.doi.org),
    "" for any other URL."""
    value = url.strip()
    if not _RESOLVER.match(value):
        return ""
    doi = clean_doi(value)
    return doi if doi.startswith("10.") and not any(ch.isspace() for ch in doi) else ""


def doi_url(doi: str) -> str:
    """The resolver's link for a DOI (given bare, as `doi:…` or as a doi.org link)."""
    return "https://doi.org/" + quote(clean_doi(doi), safe="/:;()[]._-+,=@")


def arxiv_url(arxiv_id: str) -> str:
    """arXiv's abstract page of an id."""
    return "https://arxiv.org/abs/" + quote(arxiv_id, safe="/._-")


def _trim(value: str) -> str:
    """A DOI without the punctuation prose puts after it: a full stop, a comma, a closing bracket
    that has no opening one inside the DOI (10.1002/(SICI)… keeps its own)."""
    while value:
        last = value[-1]
        if last in _TRAILING:
            value = value[:-1]
        elif last in _PAIRS and value.count(last) > value.count(_PAIRS[last]):
            value = value[:-1]
        else:
            break
    return value


def _arxiv(value: str) -> Identifier | None:
    """The arXiv id in normal form, or None when it cannot be one (a month 13, a year 2000 for
    an old id number)."""
    match = _arxiv_id_re().fullmatch(value)
    if match is None:
        return None
    ident = match.group(1)
    if "/" in ident:
        archive, number = ident.split("/")
        archive = archive.split(".")[0].lower()
        yymm = number[:4]
    else:
        archive, number = "", ident
        yymm = ident[:4]
        # five digits after the point from 2015-01 on, four before
        if (len(ident) == 10) != (yymm >= "1501"):
            return None
    if not 1 <= int(yymm[2:]) <= 12:
        return None
    if archive and not ("91" <= yymm[:2] or yymm[:2] <= "07"):
        return None
    return Identifier("arxiv", f"{archive}/{number}" if archive else ident)


def doi_problem(value: str) -> str:
    """Why `value`, a DOI's text, cannot be asked about ("" when it can)."""
    if len(value) > MAX_DOI_LENGTH:
        return f"it is {len(value)} characters long, and no DOI is longer than {MAX_DOI_LENGTH}"
    if has_controls(value) or any(ch.isspace() for ch in value):
        return "it holds a control character or a space, which no DOI has"
    if any(part in (".", "..") for part in value.split("/")):
        return "it holds a '.' or '..' path segment, which no DOI has (it would ask the service for another address)"
    return ""


def identifier_problem(text: str) -> str:
    """Why `text`, which parse_identifier refused, is no identifier, when it looks like a DOI: a
    sentence naming it and what is wrong ("" when it does not look like a DOI at all)."""
    value = text.strip()
    if re.search(r"%[0-9a-f]{2}", value, re.I):
        value = unquote(value)
    value = clean_doi(value)
    if not re.match(r"10\.\d{4,9}/", value):
        return ""
    problem = doi_problem(value)
    shown = value if len(value) <= 80 else value[:79] + "…"
    return f"'{escape_controls(shown)}' is not a usable DOI: {problem}" if problem else ""


def _doi(value: str) -> Identifier | None:
    value = _trim(clean_doi(value))
    preprint = _PREPRINT_DOI.fullmatch(value)
    if preprint is not None:
        value = preprint.group(1)
    if not _DOI_RE.fullmatch(value):
        return None
    value = value.lower()
    if doi_problem(value):
        return None
    arxiv = re.fullmatch(rf"10\.48550/arxiv\.({_ARXIV_ID}{_VERSION})", value, re.I)
    if arxiv:
        return _arxiv(arxiv.group(1))
    _, _, suffix = value.partition("/")
    if not suffix.strip("/"):
        return None
    return Identifier("doi", value)


def parse_identifier(text: str) -> Identifier | None:
    """The one DOI or arXiv id `text` is (see the module's docstring for the forms read), in normal
    form; None when `text` is anything else."""
    value = text.translate(_INVISIBLE).translate(_QUOTES).strip()
    while (
        len(value) > 1
        and value[0] in "([{<\"'`"
        and value[-1] == {"(": ")", "[": "]", "{": "}", "<": ">"}.get(value[0], value[0])
    ):
        value = value[1:-1].strip()
    value = _trim(value) if value[-1:] in _TRAILING else value
    if not value or len(value) > 2000:
        return None
    if _RESOLVER.match(value):  # https://doi.org/10.1073/pnas.1414271111#abstract, …?download=true
        value = re.split(r"[?#]", value, maxsplit=1)[0]
    if re.search(r"%[0-9a-f]{2}", value, re.I):
        value = unquote(value)
    whole = _whole_arxiv().fullmatch(value)
    if whole is not None:
        found = next((g for g in whole.groups() if g), None)
        return _arxiv(found) if found else None
    cleaned = clean_doi(value)
    if _DOI_RE.fullmatch(_trim(cleaned)):
        return _doi(cleaned)
    if _URL_RE.match(value):
        # a publisher's page names the DOI in its path: …/doi/abs/10.1111/…, …/article/10.1023/…
        inside = re.search(r"/(10\.\d{4,9}/[^\s?#\"<>]+)", value)
        if inside is not None:
            return _doi(_PAGE_TAIL.sub("", inside.group(1)))
    return None


def find_identifiers(text: str) -> list[Identifier]:
    """Every DOI and arXiv id in a block of text (a pasted reference list, a .bib entry, URLs), in
    the order they come, each once."""
    found: list[Identifier] = []
    for match in _find_re().finditer(text.translate(_INVISIBLE).translate(_QUOTES)):
        ident = parse_identifier(match.group(0))
        if ident is not None and ident not in found:
            found.append(ident)
    return found


def only_identifiers(text: str) -> bool:
    """Whether `text` is nothing but DOIs, arXiv ids and their links, separated by spaces, commas,
    semicolons or lines (a paste Add by Identifier should take, not the importer). A semicolon
    inside an old SICI DOI ("…<693::AID-ASI4>3.0.CO;2-0") is part of it, not a separator."""
    words = [w for w in re.split(r"[\s,]+", text.translate(_INVISIBLE)) if w]
    pieces = [p for w in words for p in _SEPARATOR.split(w) if p.strip(";")]
    return bool(pieces) and all(parse_identifier(p) is not None for p in pieces)
