"""The services Papershelf asks about papers: arXiv, Crossref, OpenAlex, Semantic Scholar, doi.org.

Each function sends its request through an `Http` (rate limits, retries, cache, errors with words a
user can act on) and reads the answer into FoundRecords (_readers.py). Failures are the OnlineError
family of records.py: NotFound says which service did not know which identifier.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import TypeVar
from urllib.parse import quote

from papershelf.core.biblio.identifiers import Identifier, parse_identifier
from papershelf.core.online._readers import (
    S2_FIELDS,
    bad,
    crossref_message,
    guarded,
    load_json,
    read_arxiv_feed,
    read_bibtex,
    read_crossref_work,
    read_openalex_work,
    read_s2_paper,
)
from papershelf.core.online.http import Http, Response
from papershelf.core.online.records import SERVICE_NAMES, FoundRecord, NotFound, OnlineError

ARXIV_BATCH = 50  # ids per arXiv request: the query stays a short URL
_NOTHING_CHANGED = "Nothing was changed."

_T = TypeVar("_T")


class _Empty(OnlineError):
    """An answer read whole but holding nothing (arXiv sometimes sends an empty feed for a known
    id): given to the caller as "nothing", never kept on disk."""


def _path_part(value: str, service: str) -> str:
    """An identifier as it goes into a URL path, the one way for every service: percent-encoded
    ("?", "#", "<", ">", ";", spaces, controls, non-ASCII), its "/" and ":" kept (the services
    document DOIs so: /works/10.1000/xyz). A "." or ".." segment, which would move the request
    elsewhere on the host (10.1234/../../etc/passwd), is refused: identifiers.py refuses such DOIs
    from the user, this refuses them from a record a service sent."""
    if any(part in (".", "..") for part in value.split("/")):
        name = SERVICE_NAMES.get(service, service)
        raise OnlineError(
            f"{value!r} was not asked of {name}: it holds a '.' or '..' path segment, which no DOI or "
            "arXiv id has. Nothing was changed.",
            service,
        )
    return quote(value, safe="/:")


def _read(
    http: Http,
    service: str,
    path: str,
    read: Callable[[Response], _T],
    params: Mapping[str, str | int] | None = None,
    accept: str = "",
    allow: Collection[int] = (),
) -> tuple[Response, _T]:
    """The answer and what `read` made of it. The reader is Http's `validate`: an answer it
    refuses (a maintenance page, a feed without entries) raises and is not kept in the cache."""
    made: list[_T] = []
    reader = guarded(service)(read)  # the one guarded place: any answer unreadable is BadResponse

    def validate(response: Response) -> None:
        made[:] = [reader(response)]

    response = http.get(service, path, params, accept=accept, allow=allow, validate=validate)
    return response, made[0]


def _feed(response: Response, limit: int) -> list[FoundRecord]:
    records = read_arxiv_feed(response.content or response.text, limit)  # more than asked: not read
    if response.status == 400:  # an error feed raised above; a 400 without one is still an error
        raise bad("arxiv", "HTTP 400 without a reason")
    if not records:
        raise _Empty("arXiv sent no entries", "arxiv")
    return records


# -- arXiv --------------------------------------------------------------------------------------------


def arxiv_by_ids(http: Http, ids: list[str]) -> list[FoundRecord]:
    """The arXiv records of `ids` ("1605.08386", "hep-th/9901001", with or without a version), in
    the order arXiv gives them; ids arXiv does not know are left out. NotFound when it knows none."""
    ids = [i.strip() for i in ids if i.strip()]
    if not ids:
        return []
    records: list[FoundRecord] = []
    for start in range(0, len(ids), ARXIV_BATCH):
        batch = ids[start : start + ARXIV_BATCH]
        params: dict[str, str | int] = {"id_list": ",".join(batch), "start": 0, "max_results": len(batch)}
        try:
            records += _read(http, "arxiv", "/api/query", partial(_feed, limit=len(batch)), params, allow=(400,))[1]
        except _Empty:
            pass
    if not records:
        which = ids[0] if len(ids) == 1 else f"any of {', '.join(ids)}"
        raise NotFound(
            f"arXiv does not know {which}. Check the identifier for typos; {_NOTHING_CHANGED.lower()}",
            "arxiv",
        )
    return records


def arxiv_search(http: Http, query: str, max_results: int = 10) -> list[FoundRecord]:
    """arXiv's answer to a search_query (`abs:"weight space" AND abs:"equivariant"`), most relevant
    first; [] when nothing matches."""
    params: dict[str, str | int] = {"search_query": query, "start": 0, "max_results": max_results}
    params["sortBy"] = "relevance"
    try:
        return _read(http, "arxiv", "/api/query", lambda r: _feed(r, max_results), params, allow=(400,))[1]
    except _Empty:
        return []


# -- Crossref -----------------------------------------------------------------------------------------


def crossref_by_doi(http: Http, doi: str) -> FoundRecord:
    """Crossref's record of a DOI; NotFound when Crossref does not know it (DataCite DOIs, such as
    Zenodo's and arXiv's, are not Crossref's)."""
    try:
        return _read(
            http,
            "crossref",
            f"/works/{_path_part(doi, 'crossref')}",
            lambda r: read_crossref_work(crossref_message(r.text, "work")),
        )[1]
    except NotFound as exc:
        raise NotFound(f"Crossref does not know the DOI {doi}.", "crossref", exc.url) from None


def _crossref_items(response: Response, rows: int) -> list[FoundRecord]:
    items = crossref_message(response.text, "work-list").get("items")
    if not isinstance(items, list):
        raise bad("crossref", "a work-list without items")
    return [read_crossref_work(item) for item in items[:rows]]  # more than asked: not read (see _read)


def crossref_search(http: Http, text: str, rows: int = 5) -> list[FoundRecord]:
    """Crossref's best matches for a reference's text (query.bibliographic: title, authors, year,
    venue in any order)."""
    params: dict[str, str | int] = {"query.bibliographic": text, "rows": rows}
    return _read(http, "crossref", "/works", lambda r: _crossref_items(r, rows), params)[1]


# -- OpenAlex -----------------------------------------------------------------------------------------


def _openalex_work(response: Response) -> FoundRecord:
    data = load_json("openalex", response.text)
    if not isinstance(data, dict) or not (data.get("display_name") or data.get("title")):
        raise bad("openalex", "a work without a title")
    return read_openalex_work(data)


def openalex_by_doi(http: Http, doi: str) -> FoundRecord:
    """OpenAlex's record of a DOI; NotFound when it does not know it."""
    try:
        return _read(http, "openalex", f"/works/doi:{_path_part(doi, 'openalex')}", _openalex_work)[1]
    except NotFound as exc:
        raise NotFound(f"OpenAlex does not know the DOI {doi}.", "openalex", exc.url) from None


def _openalex_results(response: Response, per_page: int) -> list[FoundRecord]:
    data = load_json("openalex", response.text)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise bad("openalex", "a list without results")
    return [read_openalex_work(item) for item in results[:per_page]]


def openalex_search(http: Http, text: str, per_page: int = 5) -> list[FoundRecord]:
    """OpenAlex's best matches for a text (its `search=`: titles, abstracts, full texts)."""
    params: dict[str, str | int] = {"search": text, "per-page": per_page}
    return _read(http, "openalex", "/works", lambda r: _openalex_results(r, per_page), params)[1]


# -- Semantic Scholar ---------------------------------------------------------------------------------


def _s2_paper(response: Response) -> FoundRecord:
    data = load_json("s2", response.text)
    if not isinstance(data, dict) or "paperId" not in data:
        raise bad("s2", "a paper without an id")
    return read_s2_paper(data)


def s2_by_id(http: Http, ident: str) -> FoundRecord:
    """Semantic Scholar's record of a paper: `ident` is "DOI:10.…", "ARXIV:2401.01234", or its own
    paperId. NotFound when it does not know it."""
    try:
        return _read(http, "s2", f"/graph/v1/paper/{_path_part(ident, 's2')}", _s2_paper, {"fields": S2_FIELDS})[1]
    except NotFound as exc:
        raise NotFound(f"Semantic Scholar does not know {ident}.", "s2", exc.url) from None


def _s2_results(response: Response, limit: int) -> list[FoundRecord]:
    data = load_json("s2", response.text)
    if not isinstance(data, dict):
        raise bad("s2", "a search answer that is not an object")
    papers = data.get("data", [])  # no "data" at all when nothing matched
    if not isinstance(papers, list):
        raise bad("s2", "search results that are not a list")
    return [read_s2_paper(item) for item in papers[:limit]]


def s2_search(http: Http, text: str, limit: int = 5) -> list[FoundRecord]:
    """Semantic Scholar's best matches for a text (/graph/v1/paper/search); [] when none."""
    params: dict[str, str | int] = {"query": text, "limit": limit, "fields": S2_FIELDS}
    return _read(http, "s2", "/graph/v1/paper/search", lambda r: _s2_results(r, limit), params)[1]


# -- doi.org ------------------------------------------------------------------------------------------


def doi_bibtex(http: Http, doi: str) -> str:
    """The BibTeX the DOI's registrar (Crossref, DataCite, …) gives by content negotiation at
    doi.org (the redirect is followed). NotFound when doi.org does not know the DOI."""

    def bibtex(response: Response) -> str:
        text = response.text.strip()
        if not text.startswith("@"):
            raise bad("doi", f"the registrar of {doi} answered with a web page, not BibTeX")
        return text

    try:
        return _read(http, "doi", f"/{_path_part(doi, 'doi')}", bibtex, accept="application/x-bibtex")[1]
    except NotFound as exc:
        raise NotFound(f"doi.org does not know the DOI {doi}.", "doi", exc.url) from None


# -- one identifier -----------------------------------------------------------------------------------


def fetch(http: Http, ident: Identifier) -> FoundRecord:
    """The record of one identifier: an arXiv id (or arXiv's DOI 10.48550/arXiv.X) from the arXiv
    API; a DOI from Crossref, else from its registrar through doi.org (DataCite DOIs: Zenodo,
    figshare…). NotFound, saying who was asked, when nobody knows it."""
    with http.paper():
        return _fetch(http, ident)


def _fetch(http: Http, ident: Identifier) -> FoundRecord:
    if ident.kind == "doi":
        as_arxiv = parse_identifier(ident.value)
        if as_arxiv is not None and as_arxiv.kind == "arxiv":
            ident = as_arxiv
    if ident.kind == "arxiv":
        try:
            return arxiv_by_ids(http, [ident.value])[0]
        except NotFound as exc:
            raise NotFound(
                f"arXiv does not know {ident}. Check the identifier for typos; nothing was changed.",
                "arxiv",
                exc.url,
            ) from None
    if ident.kind != "doi":
        raise OnlineError(f"Cannot look up {ident}: only DOIs and arXiv identifiers can be looked up.")
    doi = ident.value
    try:
        return crossref_by_doi(http, doi)
    except NotFound:
        pass
    try:
        text = doi_bibtex(http, doi)
    except NotFound as exc:
        raise NotFound(
            f"Neither Crossref nor doi.org knows the DOI {doi}. Check it for typos; nothing was changed.",
            "doi",
            exc.url,
        ) from None
    return guarded("doi")(read_bibtex)(text, doi)
