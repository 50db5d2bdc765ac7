"""Find the published version of a paper (issue 14, item 3): search the services by the
paper's abstract, score the candidates (matching.score), and propose the changes the best
one would make, field by field, in the editor's vocabulary (core/record_edit.py).

Search order: the paper's own DOI or arXiv id when it has one (services.fetch), then
arXiv's `abs:"phrase" AND abs:"phrase"` query (most papers of a listing are on arXiv), then
OpenAlex's search, Crossref's query.bibliographic, Semantic Scholar's search; stop at the
first service that gives a candidate at or above AUTO_CONFIDENCE. When the best is an arXiv
record that names a DOI (its published version), that DOI is fetched from Crossref and the
published record is preferred, keeping the arXiv id as the eprint.

The policy of the changes (`changes_for`):
- a title derived from the abstract (`title_derived`) is replaced; a real title of ours that
  differs is proposed, never applied without asking;
- empty fields are filled: authors, year, venue, doi, eprint (the arXiv id), entrytype (the
  type of a published journal or proceedings version only: an arXiv preprint gives none),
  and plain BibTeX fields the record has (volume, number, pages, publisher);
- a field that differs from a non-empty value of ours is proposed; the proposal is then not
  automatic (a non-arXiv eprint of the record, "jstor: 99887766", is such a value, and page
  ranges are compared with their dashes alike: "1--10" is "1-10");
- a venue or an entry type an arXiv record gives (from its authors' journal_ref) is proposed,
  never automatic: only a published record (Crossref, OpenAlex, Semantic Scholar, doi.org)
  gives them without asking;
- `Proposal.automatic` is True only when the candidate is at or above AUTO_CONFIDENCE and
  every change fills an empty field or replaces a derived title (none of them an arXiv
  record's venue or type), so a caller may apply all of `changes` at once with
  Library.apply_found (which checks the paper is still what was read);
- the citation key and the abstract are never in the changes.

A failure of one service (offline, timed out, a 5xx, a malformed answer) does not stop the
others; what went wrong is in `Proposal.message` (service and what happened), and
`Proposal.failed` is set unless a candidate at or above AUTO_CONFIDENCE was found all the same
(a published version that could not be read always sets it). A paper's
look-up keeps its deadline (Http.paper, 60 s): past it the services not yet asked are not,
and the batch goes on with the next paper. Only
Cancelled propagates: the batch stops at once. A service that cannot be reached at all is
skipped for the rest of a batch, and a batch none of whose services can be reached stops
after the paper that found out (Reach).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from ..biblio.identifiers import parse_identifier
from ..biblio.names import from_display
from ..biblio.types import PUBLISHED_TYPES
from ..record_edit import names_text
from ..render import plain_text
from ..text import fold
from . import services as svc
from .matching import (
    ABSTRACT_MATCH,
    AUTO_CONFIDENCE,
    PROPOSE_CONFIDENCE,
    abstract_similarity,
    arxiv_query,
    author_overlap,
    real_abstract,
    score,
    search_text,
    title_similarity,
)
from .records import SERVICE_NAMES, Cancelled, FoundRecord, OnlineError, OutOfTime, Proposal, Unreachable

if TYPE_CHECKING:
    from ..paper import Paper
    from .http import Http

__all__ = [
    "AUTO_CONFIDENCE",
    "PROPOSE_CONFIDENCE",
    "Reach",
    "bibtex_names",
    "changes_for",
    "lookup",
    "lookup_many",
]

DEFAULT_SERVICES = ("arxiv", "openalex", "crossref", "s2")
# BibTeX fields of a record's `extra` that a look-up may fill
EXTRA_FIELDS = ("volume", "number", "pages", "publisher")
_TRAILING_YEAR_RE = re.compile(r"\s*\((?:19|20)\d\d\)$")
_DASHES_RE = re.compile(r"\s*(?:-+|[‐‑‒–—−])\s*")
_PREPRINT_VENUES = frozenset({"arxiv", "arxiv.org", "corr", "arxiv preprint", "biorxiv", "medrxiv"})


def bibtex_names(names: Iterable[str]) -> str:
    """Display names ("Given Family") as the editor's "author" text, a BibTeX name list
    ("Family, Given and …", a corporate name braced whole: "{The CGAL Project}"), by the
    editor's own rules (names.from_display, record_edit.names_text)."""
    return names_text([from_display(n) for n in names if n.strip()])


def _same_authors(ours: list[str], theirs: list[str]) -> bool:
    overlap = author_overlap(ours, theirs)
    return overlap is not None and overlap == 1.0 and len(ours) == len(theirs)


def _is_preprint_venue(venue: str) -> bool:
    return fold(venue).strip() in _PREPRINT_VENUES or fold(venue).startswith("arxiv")


def _same_text(a: str, b: str) -> bool:
    """Whether two field texts say the same: "1--10", "1-10" and "1–10" are one page range."""
    return _DASHES_RE.sub("-", " ".join(a.split())) == _DASHES_RE.sub("-", " ".join(b.split()))


def own_eprint(paper: Paper) -> str:
    """The paper's eprint as the record has it: its arXiv id, or a non-arXiv eprint of its
    .bib entry ("jstor: 99887766"), which is a value of the user's, not an empty field."""
    if paper.arxiv_id:
        return paper.arxiv_id
    fields = paper.bibfields
    eprint = plain_text(fields.get("eprint", "")).strip()
    kind = plain_text(fields.get("eprinttype", "") or fields.get("archiveprefix", "")).strip()
    return f"{kind}: {eprint}" if eprint and kind else eprint


def changes_for(paper: Paper, rec: FoundRecord) -> dict[str, tuple[str, str]]:
    """What `rec` would change in `paper`: editor field name → (our text, its text).

    See the module's policy: a derived title is replaced, empty fields are filled, differing
    non-empty fields are listed too (for the user to decide); never the key or the abstract.
    """
    changes: dict[str, tuple[str, str]] = {}
    title = " ".join(rec.title.split())
    if title and (paper.title_derived or not paper.title or fold(plain_text(paper.title)) != fold(title)):
        changes["title"] = (paper.title, title)
    if rec.authors and not _same_authors(paper.authors, rec.authors):
        changes["author"] = (bibtex_names(paper.authors), bibtex_names(rec.authors))
    if rec.year and rec.year != paper.year:
        changes["year"] = (str(paper.year) if paper.year else "", str(rec.year))
    venue = _venue(rec)
    if venue and fold(venue) != fold(paper.venue):
        changes["venue"] = (paper.venue, venue)
    if rec.doi and rec.doi.lower() != paper.doi.lower():
        changes["doi"] = (paper.doi, rec.doi)
    if rec.arxiv_id and rec.arxiv_id != paper.arxiv_id:
        changes["eprint"] = _eprint_change(paper, rec.arxiv_id)
    # the type of a published version only (an arXiv preprint's "misc" fills nothing)
    if rec.entrytype in PUBLISHED_TYPES and venue and rec.entrytype != paper.entrytype:
        changes["entrytype"] = (paper.entrytype, rec.entrytype)
    return changes | _extra_changes(paper, rec)


def _venue(rec: FoundRecord) -> str:
    """The record's venue, "" for a preprint server's. An arXiv journal_ref taken whole can end
    in its year: "Journal (2026)", "Journal (": no venue ends so."""
    venue = _TRAILING_YEAR_RE.sub("", " ".join(rec.venue.split())).rstrip(" ,;:([")
    return "" if not venue or _is_preprint_venue(venue) else venue


def _eprint_change(paper: Paper, arxiv_id: str) -> tuple[str, str]:
    """The eprint change to a found arXiv id: over an eprint of another archive the arXiv id says
    what it is (record_edit replaces that eprint only when told so)."""
    eprint = own_eprint(paper)
    return eprint, arxiv_id if paper.arxiv_id or not eprint else "arXiv:" + arxiv_id


def _extra_changes(paper: Paper, rec: FoundRecord) -> dict[str, tuple[str, str]]:
    """The plain BibTeX fields the record has (volume, number, pages, publisher) that say
    otherwise than ours (page ranges compared with their dashes alike)."""
    ours = paper.bibfields
    changes = {}
    for name in EXTRA_FIELDS:
        value = rec.extra.get(name, "").strip()
        if value and not _same_text(plain_text(ours.get(name, "")), value):
            changes[name] = (plain_text(ours.get(name, "")), value)
    return changes


def fills_only(paper: Paper, changes: dict[str, tuple[str, str]]) -> bool:
    """Whether every change fills an empty field or replaces a derived title (what may be
    applied without asking)."""
    return all(old == "" or (name == "title" and paper.title_derived) for name, (old, _new) in changes.items())


def from_preprint(rec: FoundRecord, name: str) -> bool:
    """Whether the change of `name` comes from what an arXiv record's authors wrote in its
    journal_ref ("To appear in CVPR", "Phys. Rev. D 76, 044016"): a venue or an entry type
    of an arXiv record is never applied without asking; only a published record (Crossref,
    OpenAlex, Semantic Scholar, doi.org) with a proper venue gives them so."""
    return rec.service == "arxiv" and name in ("venue", "entrytype")


def _search(http: Http, service: str, paper: Paper) -> list[FoundRecord]:
    if service == "arxiv":
        abstract = real_abstract(paper.abstract)
        query = arxiv_query(abstract) if abstract else ""
        if not query and paper.title and not paper.title_derived:
            query = 'ti:"' + " ".join(plain_text(paper.title).replace('"', " ").split()) + '"'
        return svc.arxiv_search(http, query, max_results=10) if query else []
    text = search_text(paper)
    if not text:
        return []
    if service == "openalex":
        return svc.openalex_search(http, text, per_page=5)
    if service == "crossref":
        return svc.crossref_search(http, text, rows=5)
    if service == "s2":
        return svc.s2_search(http, text, limit=5)
    raise ValueError(f"unknown service {service!r}; use one of: {', '.join(DEFAULT_SERVICES)}")


def _identified(http: Http, kind: str, value: str) -> list[FoundRecord]:
    """The record of an identifier the paper already has (its DOI, its arXiv id)."""
    ident = parse_identifier(value if kind == "doi" else f"arXiv:{value}")
    return [svc.fetch(http, ident)] if ident is not None else []


def _failure(service: str, error: OnlineError) -> str:
    """What went wrong at one service, as one sentence that names the service."""
    name = SERVICE_NAMES.get(service, service)
    text = " ".join(str(error).split()) or type(error).__name__
    if name.casefold() not in text.casefold():
        text = f"{name}: {text}"
    return text if text.endswith((".", "!", "?")) else text + "."


class _PublishedUnread(Exception):
    """The published version an arXiv record names could not be read (the note says why)."""


def _published(
    http: Http, paper: Paper, rec: FoundRecord, conf: float, notes: list[str], reach: Reach
) -> tuple[FoundRecord, float, list[str]] | None:
    """The published version an arXiv record names by DOI, when Crossref knows it and it is
    the same work (title or abstract agree, authors do not disagree)."""
    try:
        pub = svc.crossref_by_doi(http, rec.doi)
        reach.answered("crossref")
    except Cancelled:
        raise
    except OnlineError as error:
        reach.failed("crossref", error)
        notes.append(f"the published version ({rec.doi}) could not be read: {_failure('crossref', error)}")
        raise _PublishedUnread from error
    same_title = title_similarity(rec.title, pub.title) >= 0.6
    pub_abstract = real_abstract(pub.abstract)
    same_abstract = bool(pub_abstract) and abstract_similarity(rec.abstract, pub_abstract) >= ABSTRACT_MATCH
    authors = author_overlap(rec.authors, pub.authors)
    if not (same_title or same_abstract) or (authors is not None and authors < 0.5):
        notes.append(f"the DOI the arXiv record names ({rec.doi}) is another work: kept the arXiv record")
        return None
    merged = dataclasses.replace(
        pub,
        arxiv_id=pub.arxiv_id or rec.arxiv_id,
        abstract=pub_abstract or rec.abstract,
        authors=pub.authors or rec.authors,
        year=pub.year or rec.year,
    )
    pub_conf, reasons = score(paper, merged)
    reasons.append(f"the published version of arXiv:{rec.arxiv_id} (DOI {rec.doi})")
    return merged, max(pub_conf, conf) if pub_abstract else conf, reasons


class Reach:
    """Which services a batch gave up on because they could not be reached (records.Unreachable:
    DNS, refused, no route, TLS, a connection timed out), so the rest of the batch does not wait on
    them paper after paper (arXiv's 3 s each).

    A service unreachable before it answered anything in the batch is given up on at once; one
    that had answered, after GIVE_UP_AFTER unreachable requests in a row (the network went away,
    not a blip). An answer of any kind (a 5xx, a 429 after its retries, a malformed page) shows
    the service is there: it is never given up on. When every service of the batch is given up
    on, `stopped` says so in one sentence and the batch asks nothing more."""

    GIVE_UP_AFTER = 3

    def __init__(self, services: Sequence[str] = DEFAULT_SERVICES) -> None:
        self.services = tuple(services)
        self.gone: dict[str, Unreachable] = {}  # service → the error that made us give up on it
        self.skipped: dict[str, set[str]] = {}  # service → the papers looked up without it
        self.looked_up = 0  # papers asked about (lookup_many counts them)
        self._answered: set[str] = set()
        self._streak: dict[str, int] = {}

    def answered(self, service: str) -> None:
        """`service` answered (whatever it said)."""
        self._answered.add(service)
        self._streak[service] = 0

    def failed(self, service: str, error: OnlineError) -> None:
        """A request to `service` failed with `error`."""
        if not isinstance(error, Unreachable):
            self.answered(service)
            return
        self._streak[service] = self._streak.get(service, 0) + 1
        if service not in self._answered or self._streak[service] >= self.GIVE_UP_AFTER:
            self.gone.setdefault(service, error)

    def skip(self, service: str, paper_id: str) -> bool:
        """Whether `service` is skipped for the paper (kept, for the report)."""
        if service in self.gone:
            self.skipped.setdefault(service, set()).add(paper_id)
            return True
        return False

    @property
    def stopped(self) -> str:
        """Why the batch stopped ("" while it goes on): none of its services can be reached."""
        if not self.services or any(s not in self.gone for s in self.services):
            return ""
        names = [SERVICE_NAMES.get(s, s) for s in self.services]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        first = next(iter(self.gone.items()))
        why = f" {SERVICE_NAMES.get(first[0], first[0])}: {first[1].reason}." if first[1].reason else ""
        return f"Cannot reach {listed}: check your internet connection; nothing was changed.{why}"

    def skipped_note(self, service: str) -> str:
        """What a paper looked up without `service` says about it."""
        error = self.gone[service]
        name = SERVICE_NAMES.get(service, service)
        why = f" ({error.reason})" if error.reason else ""
        return f"{name} was skipped: it could not be reached{why}."


def lookup(
    http: Http, paper: Paper, services: Sequence[str] = DEFAULT_SERVICES, reach: Reach | None = None
) -> Proposal:
    """Look one paper up; never raises for a failure of this paper (the message says what
    happened), only Cancelled. `reach` (a batch's) skips the services it gave up on and learns
    from every request. The whole look-up keeps the paper's deadline (Http.paper): past it, the
    services not yet asked are not asked, and the message says so."""
    with http.paper():
        return _lookup(http, paper, services, reach if reach is not None else Reach(services))


@dataclasses.dataclass
class _Asked:
    """What asking the services about one paper gave so far."""

    best: tuple[float, FoundRecord, list[str]] | None = None  # (confidence, record, reasons)
    failures: list[str] = dataclasses.field(default_factory=list)  # what went wrong, a sentence each
    failed_here: set[str] = dataclasses.field(default_factory=set)  # the services that failed for it
    rejected: int = 0  # look-alikes rejected (their abstracts are other papers')
    notes: list[str] = dataclasses.field(default_factory=list)  # about the published version

    @property
    def sure(self) -> bool:
        return self.best is not None and self.best[0] >= AUTO_CONFIDENCE

    def weigh(self, paper: Paper, found: Iterable[FoundRecord]) -> None:
        """Score what a service found; keep the best."""
        for rec in found:
            conf, reasons = score(paper, rec)
            if any("rejected" in r for r in reasons):
                self.rejected += 1
            if self.best is None or conf > self.best[0]:
                self.best = (conf, rec, reasons)


def _searchable(paper: Paper) -> bool:
    return bool(
        real_abstract(paper.abstract) or paper.doi or paper.arxiv_id or (paper.title and not paper.title_derived)
    )


def _lookup(http: Http, paper: Paper, services: Sequence[str], reach: Reach) -> Proposal:
    if not _searchable(paper):
        return Proposal(paper.id, message="Nothing to search with: the paper has no abstract, title, DOI or arXiv id.")
    asked = _ask_services(http, paper, services, reach)
    # a failed service makes the look-up a failed one unless a confident candidate had been
    # found all the same (a later service could not have changed the outcome)
    failed = bool(asked.failures) and not asked.sure
    failed = _prefer_published(http, paper, asked, reach) or failed
    unanswered = ("Not every service answered: " + " ".join(asked.failures)) if asked.failures else ""
    if asked.best is None or asked.best[0] < PROPOSE_CONFIDENCE:
        return _no_match(paper, asked, unanswered, failed)
    return _proposal(paper, asked.best, asked.notes, unanswered, failed)


def _steps(paper: Paper, services: Sequence[str]) -> list[tuple[str, str, str]]:
    """What to ask, in order: (kind, identifier or "" for a search, the service asked). The
    identifiers the paper has come first, one request each, no search: the DOI goes to
    Crossref, the arXiv id to arXiv."""
    steps = [("doi", paper.doi, "crossref")] if paper.doi else []
    steps += [("arxiv-id", paper.arxiv_id, "arxiv")] if paper.arxiv_id else []
    return steps + [(s, "", s) for s in services]


def _ask_services(http: Http, paper: Paper, services: Sequence[str], reach: Reach) -> _Asked:
    """Ask each step in turn until a candidate is sure enough, the paper's time is up or none is
    left; a service the batch gave up on is skipped (said once a paper)."""
    out = _Asked()
    for kind, value, asked in _steps(paper, services):
        if reach.skip(asked, paper.id):
            if value == "" and asked not in out.failed_here:  # said once a paper
                out.failures.append(reach.skipped_note(asked))
            continue
        try:
            found = _identified(http, kind, value) if value else _search(http, kind, paper)
        except Cancelled:
            raise
        except OnlineError as error:
            out.failures.append(_failure(error.service or asked, error))
            out.failed_here.add(error.service or asked)
            reach.failed(error.service or asked, error)
            if isinstance(error, OutOfTime):  # the paper's time is up: the others are not asked
                break
            continue
        reach.answered(asked)
        out.weigh(paper, found)
        if out.sure:
            break
    return out


def _prefer_published(http: Http, paper: Paper, asked: _Asked, reach: Reach) -> bool:
    """When the best is an arXiv record naming the DOI of its published version, prefer that
    version (Crossref's record) if it is the same work. Returns True when the published version
    could not be read (the look-up failed)."""
    best = asked.best
    # arXiv's own DOIs (10.48550/arXiv.…) name the preprint, not a published version
    if (
        best is None
        or best[1].service != "arxiv"
        or not best[1].doi
        or best[1].doi.lower().startswith("10.48550/")
        or best[0] < PROPOSE_CONFIDENCE
    ):
        return False
    try:
        if reach.skip("crossref", paper.id):
            asked.notes.append(f"the published version ({best[1].doi}) was not read: {reach.skipped_note('crossref')}")
            raise _PublishedUnread
        published = _published(http, paper, best[1], best[0], asked.notes, reach)
    except _PublishedUnread:
        return True
    if published is not None:
        asked.best = (published[1], published[0], published[2])
    return False


def _no_match(paper: Paper, asked: _Asked, unanswered: str, failed: bool) -> Proposal:
    """Nothing sure enough to propose: why, in words."""
    best = asked.best
    if best is None:
        what = "Nothing found."
    elif asked.rejected:
        what = f"No match: {asked.rejected} look-alike(s) rejected (their abstracts are other papers')."
    else:
        what = f"No match: the closest candidate ({best[1].title[:60]!r}) is another paper."
    return Proposal(
        paper.id,
        confidence=best[0] if best else 0.0,
        message=" ".join(filter(None, [what, unanswered])),
        failed=failed,
    )


def _proposal(
    paper: Paper, best: tuple[float, FoundRecord, list[str]], notes: list[str], unanswered: str, failed: bool
) -> Proposal:
    """The changes the best candidate makes, whether they may be applied without asking, and
    why, in words."""
    conf, rec, reasons = best
    changes = changes_for(paper, rec)
    automatic = (
        conf >= AUTO_CONFIDENCE
        and bool(changes)
        and fills_only(paper, changes)
        and not any(from_preprint(rec, name) for name in changes)
    )
    parts = ["; ".join(reasons)] + notes
    if not changes:
        parts.append("the record already says what this version says")
    elif conf >= AUTO_CONFIDENCE and not automatic and not fills_only(paper, changes):
        parts.append("some fields differ from yours: review them")
    elif conf >= AUTO_CONFIDENCE and not automatic:
        parts.append("the venue is the one the arXiv record's authors gave: review it")
    sentences = [p[0].upper() + p[1:] + "." for p in parts if p]
    message = " ".join(sentences + ([unanswered] if unanswered else []))
    return Proposal(
        paper.id,
        service=rec.service,
        confidence=round(conf, 3),
        changes=changes,
        automatic=automatic,
        message=message,
        failed=failed,
        candidate=rec,
    )


def lookup_many(
    http: Http,
    papers: Iterable[Paper],
    progress: Callable[[int, int], None] | None = None,
    services: Sequence[str] = DEFAULT_SERVICES,
    reach: Reach | None = None,
) -> Iterator[Proposal]:
    """Look papers up one after the other, yielding each paper's Proposal as it is ready;
    `progress(done, total)` after each. A paper's failure is its Proposal's message and the
    batch goes on; Cancelled stops it (raised from the iterator).

    A service that cannot be reached is skipped for the rest of the batch (`reach`, see Reach);
    when none can be, the batch stops: every paper left gets a failed Proposal saying so
    (`reach.stopped`) at once, without a request."""
    todo = list(papers)
    reach = reach if reach is not None else Reach(services)
    for done, paper in enumerate(todo, 1):
        if reach.stopped:
            proposal = Proposal(paper.id, message=reach.stopped, failed=True)
        else:
            reach.looked_up += 1
            proposal = lookup(http, paper, services, reach)
            if reach.stopped and not proposal.changes:  # the paper that found out: said alike
                proposal.message, proposal.failed = reach.stopped, True
        yield proposal
        if progress is not None:
            progress(done, len(todo))
