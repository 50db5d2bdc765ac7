"""Find the published version, through a loopback replay server serving the seed replay set
(tests/fixtures/metadata/seeds): applied without asking, proposed, decoys rejected, nothing
found; every per-paper fault; cancel."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from papershelf.core.library import Library
from papershelf.core.online.http import Http
from papershelf.core.online.lookup import Reach, bibtex_names, changes_for, lookup, lookup_many
from papershelf.core.online.matching import AUTO_CONFIDENCE, PROPOSE_CONFIDENCE
from papershelf.core.online.records import Cancelled, FoundRecord
from papershelf.core.paper import Paper
from replay_server import RECORDED, ReplayServer, Reply
from seed_replay import arxiv_key, expected_by_abstract, serve_seeds

EXPECTED = expected_by_abstract()
VERISIMPL = "Natural language interfaces can greatly benefit"  # arXiv record naming its DOI
CURVATURE = "Many machine learning techniques rely on approximating"  # arXiv only
PERTURBATION = "Single-cell perturbation analysis aims"  # OpenAlex only
MOVE = "Modeling the learning curve is critical"  # a decoy ranked above the true record
FLOW = "Conditional flow matching has emerged"  # a largely rewritten version: proposed
MOE = "Mixture-of-Experts (MoE) models scale by activating"  # the version names other authors
COUNTERFACTUAL = "Group counterfactual explanations find"  # only a look-alike is served
SCHUR = "Sparse Mixture-of-Experts (MoE) language models"  # only unrelated papers are served


def paper_for(lib: Library, start: str) -> Paper:
    [paper] = [p for p in lib.papers() if p.abstract.startswith(start)]
    return paper


@pytest.fixture
def http(tmp_path: Path) -> Iterator[Http]:
    with Http(cache_dir=tmp_path / "online-cache", timeout=2.0, retries=0) as client:
        yield client


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    """A replay server every service points at (as replay_server's `replay` fixture)."""
    replay = ReplayServer()
    for name, value in replay.env().items():
        monkeypatch.setenv(name, value)
    yield replay
    replay.close()


@pytest.fixture
def seeds_served(server: ReplayServer) -> ReplayServer:
    serve_seeds(server)
    return server


def test_a_derived_title_is_replaced_by_the_published_version_without_asking(
    seeded: Library, seeds_served: ReplayServer, http: Http
) -> None:
    paper = paper_for(seeded, VERISIMPL)
    assert paper.title_derived
    proposal = lookup(http, paper)

    want = EXPECTED[VERISIMPL]
    assert proposal.automatic and proposal.confidence >= AUTO_CONFIDENCE
    assert proposal.service == "crossref"  # the published version the arXiv record names
    assert proposal.changes["title"] == (paper.title, want["title"])
    assert proposal.changes["doi"] == ("", want["doi"])
    assert proposal.changes["venue"] == ("", want["venue"])
    assert proposal.changes["year"] == ("", str(want["year"]))
    assert proposal.changes["entrytype"][1] == "article"
    assert proposal.changes["eprint"][0] == "" and proposal.changes["eprint"][1].startswith("2601.")
    assert "author" not in proposal.changes  # the listing's authors are the record's
    assert "abstract" not in proposal.changes and "citekey" not in proposal.changes
    assert "abstract matches" in proposal.message and "published version" in proposal.message

    # arXiv first, by two phrases of the abstract; then the DOI at Crossref; nothing more
    paths = [r.path for r in seeds_served.requests]
    assert paths[0] == "/arxiv/api/query" and paths[1].startswith("/crossref/works/10.5555/")
    assert len(paths) == 2
    assert seeds_served.requests[0].query["search_query"].count('abs:"') == 2

    # applying it is one edit of the record: the library shows the published title
    seeded.edit_record(paper.id, {name: new for name, (_old, new) in proposal.changes.items()})
    after = seeded.get(paper.id)
    assert after.title == want["title"] and not after.title_derived
    assert after.doi == want["doi"] and after.venue == want["venue"] and after.year == want["year"]


def test_a_record_found_only_by_openalex_is_applied_and_the_search_stops_there(
    seeded: Library, seeds_served: ReplayServer, http: Http
) -> None:
    paper = paper_for(seeded, PERTURBATION)
    proposal = lookup(http, paper)
    assert proposal.automatic and proposal.service == "openalex"
    assert proposal.changes["title"][1] == EXPECTED[PERTURBATION]["title"]
    services = [r.path.split("/")[1] for r in seeds_served.requests]
    assert services == ["arxiv", "openalex"]  # Crossref and Semantic Scholar never asked


def test_a_decoy_ranked_first_loses_to_the_true_record(seeded: Library, seeds_served: ReplayServer, http: Http) -> None:
    paper = paper_for(seeded, MOVE)
    proposal = lookup(http, paper)
    assert proposal.automatic
    assert proposal.changes["title"][1] == EXPECTED[MOVE]["title"]
    assert proposal.candidate is not None and "Seed Decoy" not in proposal.candidate.venue


def test_only_a_look_alike_found_proposes_nothing(seeded: Library, seeds_served: ReplayServer, http: Http) -> None:
    paper = paper_for(seeded, COUNTERFACTUAL)
    assert EXPECTED[COUNTERFACTUAL]["outcome"] == "decoy rejected"
    proposal = lookup(http, paper)
    assert not proposal.changes and not proposal.automatic and proposal.confidence < PROPOSE_CONFIDENCE
    assert proposal.message.startswith("No match")


def test_a_rewritten_version_or_other_authors_is_proposed_not_applied(
    seeded: Library, seeds_served: ReplayServer, http: Http
) -> None:
    rewritten = lookup(http, paper_for(seeded, FLOW))
    assert PROPOSE_CONFIDENCE <= rewritten.confidence < AUTO_CONFIDENCE and not rewritten.automatic
    assert rewritten.changes["title"][1] == EXPECTED[FLOW]["title"]
    assert "partly alike" in rewritten.message

    paper = paper_for(seeded, MOE)
    strangers = lookup(http, paper)
    assert not strangers.automatic and PROPOSE_CONFIDENCE <= strangers.confidence
    assert strangers.changes["author"] == (bibtex_names(paper.authors), "Arbogast, Quentin and Sörensen, Wilhelmina")
    assert "no author in common" in strangers.message


def test_nothing_found_asks_every_service_once(seeded: Library, seeds_served: ReplayServer, http: Http) -> None:
    unplanned = next(p for p in seeded.papers() if not any(p.abstract.startswith(s) for s in EXPECTED))
    proposal = lookup(http, unplanned)
    assert proposal.message == "Nothing found." and not proposal.changes and proposal.candidate is None
    assert [r.path.split("/")[1] for r in seeds_served.requests] == ["arxiv", "openalex", "crossref", "s2"]

    only_unrelated = lookup(http, paper_for(seeded, SCHUR))
    assert not only_unrelated.changes and only_unrelated.message.startswith("No match")


def test_lookup_many_reports_progress_and_every_outcome(
    seeded: Library, seeds_served: ReplayServer, http: Http
) -> None:
    papers = [paper_for(seeded, s) for s in (VERISIMPL, COUNTERFACTUAL, FLOW, SCHUR)]
    seen: list[tuple[int, int]] = []
    proposals = list(lookup_many(http, papers, lambda done, total: seen.append((done, total))))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [p.paper_id for p in proposals] == [p.id for p in papers]
    assert [p.automatic for p in proposals] == [True, False, False, False]
    assert [bool(p.changes) for p in proposals] == [True, False, True, False]


def test_a_paper_with_a_doi_is_read_by_it_first(server: ReplayServer, http: Http) -> None:
    # a recorded real answer: Crossref's record of a PNAS paper, against OpenAlex's abstract of it
    server.route(
        "/crossref/works/10.1073/pnas.1414271111", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json"
    )
    openalex = json.loads((RECORDED / "openalex_work_doi_10.1073_pnas.1414271111.json").read_text())
    index = openalex["abstract_inverted_index"]
    abstract = " ".join(w for _, w in sorted((p, w) for w, ps in index.items() for p in ps))
    paper = Paper("p1", title=abstract[:60], title_derived=True, abstract=abstract, doi="10.1073/pnas.1414271111")
    proposal = lookup(http, paper)
    assert proposal.automatic and proposal.service == "crossref"
    assert proposal.changes["title"][1] == openalex["title"]
    assert proposal.changes["venue"] == ("", "Proceedings of the National Academy of Sciences")
    assert "doi" not in proposal.changes and proposal.changes["author"][1].startswith("Makris, Eleftherios A.")
    assert [r.path for r in server.requests] == ["/crossref/works/10.1073/pnas.1414271111"]


def test_a_look_alike_with_our_own_title_is_rejected(seeded: Library, seeds_served: ReplayServer, http: Http) -> None:
    seed = paper_for(seeded, "Learning in weight spaces, where neural networks")
    want = EXPECTED["Learning in weight spaces, where neural networks"]
    assert want["outcome"] == "decoy rejected"  # only "Revisiting <the title>" over another abstract is served
    # our real title (plan.py's) is the served look-alike's, less its "Revisiting"
    titled = Paper(
        "p1", title="Equivariant Learning in Weight Spaces of Heterogeneous Architectures", abstract=seed.abstract
    )
    proposal = lookup(http, titled)
    assert not proposal.changes and "look-alike" in proposal.message


# ---- per-paper faults: a message for that paper, the others still looked up ---------------------------


def _arxiv_for(start: str):  # type: ignore[no-untyped-def]
    key = str(EXPECTED[start]["key"])
    return lambda query: arxiv_key(query.get("search_query", "")) == key


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (
            Reply(b"<?xml version='1.0'?><feed><entry><title>cut off", 200, {"Content-Type": "application/atom+xml"}),
            "arXiv",
        ),
        (Reply(b"Internal Server Error", 500), "500"),
    ],
    ids=["malformed", "5xx"],
)
def test_a_bad_answer_for_one_paper_is_its_message(
    seeded: Library,
    server: ReplayServer,
    http: Http,
    reply: Reply,
    words: str,
) -> None:
    server.route("/arxiv/api/query", reply, query=_arxiv_for(CURVATURE))
    serve_seeds(server)
    papers = [paper_for(seeded, s) for s in (CURVATURE, VERISIMPL)]
    failed, fine = list(lookup_many(http, papers))
    assert not failed.changes and "arXiv" in failed.message and words in failed.message
    assert failed.message.startswith("Nothing found. Not every service answered: arXiv")
    assert failed.failed and not fine.failed
    assert fine.automatic and fine.changes["title"][1] == EXPECTED[VERISIMPL]["title"]


def test_a_service_refusing_connections_leaves_the_others(
    seeded: Library,
    server: ReplayServer,
    http: Http,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    serve_seeds(server)
    monkeypatch.setenv("PAPERSHELF_ARXIV_URL", "http://127.0.0.1:9")  # a closed port
    papers = [paper_for(seeded, s) for s in (CURVATURE, PERTURBATION)]
    arxiv_only, openalex = list(lookup_many(http, papers))
    assert not arxiv_only.changes and "arXiv" in arxiv_only.message
    assert openalex.automatic and openalex.changes["title"][1] == EXPECTED[PERTURBATION]["title"]
    # arXiv, unreachable before it answered anything, is not asked again in this batch
    assert "Not every service answered: arXiv was skipped: it could not be reached" in openalex.message
    assert arxiv_only.failed and not openalex.failed  # found with confidence all the same


def _network(monkeypatch: pytest.MonkeyPatch, server: ReplayServer, up: bool) -> None:
    for name, value in server.env().items():
        monkeypatch.setenv(name, value if up or not name.endswith("_URL") else "http://127.0.0.1:9")


def test_when_the_network_goes_away_mid_batch_it_stops_after_three_papers(
    seeded: Library, seeds_served: ReplayServer, http: Http, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first two papers ask every service (nothing to find: all answered); then the network goes
    first = [paper_for(seeded, s) for s in (COUNTERFACTUAL, SCHUR)]
    rest = [p for p in seeded.papers() if p.title_derived and p not in first][:6]
    reach = Reach()

    def progress(done: int, _total: int) -> None:
        if done == 2:
            _network(monkeypatch, seeds_served, up=False)

    proposals = list(lookup_many(http, [*first, *rest], progress, reach=reach))
    stop = "Cannot reach arXiv, OpenAlex, Crossref or Semantic Scholar: check your internet connection"
    # services that had answered are given up on after three papers in a row, not at the first failure
    assert [p.message.startswith(stop) for p in proposals] == [False] * 4 + [True] * 4
    assert all("Cannot reach arXiv (127.0.0.1:9)" in p.message for p in proposals[2:4])
    assert all(p.failed for p in proposals[2:])


def test_one_unreachable_paper_in_a_batch_is_a_blip_not_the_end(
    seeded: Library, seeds_served: ReplayServer, http: Http, monkeypatch: pytest.MonkeyPatch
) -> None:
    papers = [paper_for(seeded, s) for s in (COUNTERFACTUAL, SCHUR, PERTURBATION)]

    def progress(done: int, _total: int) -> None:
        _network(monkeypatch, seeds_served, up=done != 1)  # down for the second paper only

    nothing, blip, found = list(lookup_many(http, papers, progress))
    assert "Cannot reach" not in nothing.message and "Cannot reach arXiv (127.0.0.1:9)" in blip.message
    assert found.automatic and "skipped" not in found.message  # every service asked again


def test_a_service_that_never_answers_times_out_for_that_paper(
    seeded: Library,
    server: ReplayServer,
    tmp_path: Path,
) -> None:
    server.route("/arxiv/api/query", hang=True, query=_arxiv_for(CURVATURE))
    serve_seeds(server)
    papers = [paper_for(seeded, s) for s in (CURVATURE, VERISIMPL)]
    with Http(cache_dir=tmp_path / "c", timeout=0.3, retries=0) as client:
        slow, fine = list(lookup_many(client, papers))
    assert not slow.changes and "arXiv" in slow.message and "answer" in slow.message.lower()
    assert fine.automatic
    assert slow.failed


def test_cancel_stops_the_batch(seeded: Library, seeds_served: ReplayServer, tmp_path: Path) -> None:
    papers = [paper_for(seeded, s) for s in (VERISIMPL, PERTURBATION, MOVE)]
    stop = False

    def progress(done: int, total: int) -> None:
        nonlocal stop
        stop = True

    got = []
    with Http(cache_dir=tmp_path / "c", cancelled=lambda: stop, retries=0) as client:
        with pytest.raises(Cancelled):
            for proposal in lookup_many(client, papers, progress):
                got.append(proposal)
    assert len(got) == 1
    asked = len(seeds_served.requests)
    assert asked == 2  # the first paper's arXiv search and DOI; nothing after the cancel


# ---- the changes' policy ------------------------------------------------------------------------------


def test_changes_fill_empty_fields_and_list_differences_without_applying_them() -> None:
    paper = Paper(
        "p1",
        title="Our Own Title",
        abstract="x",
        authors=["Ada Lovelace"],
        venue="Old Venue",
        year=2024,
        citekey="lovelace2024",
    )
    rec = FoundRecord(
        "crossref",
        title="Their Title",
        authors=["Ada Lovelace", "The CGAL Project"],
        year=2025,
        venue="Journal of Tests",
        doi="10.5555/x",
        entrytype="article",
        abstract="other",
        extra={"volume": "7", "pages": "1--9"},
    )
    changes = changes_for(paper, rec)
    assert changes["title"] == ("Our Own Title", "Their Title")
    assert changes["author"] == ("Lovelace, Ada", "Lovelace, Ada and {The CGAL Project}")
    assert changes["venue"] == ("Old Venue", "Journal of Tests") and changes["year"] == ("2024", "2025")
    assert changes["doi"] == ("", "10.5555/x") and changes["volume"] == ("", "7")
    assert "citekey" not in changes and "abstract" not in changes

    preprint = FoundRecord("arxiv", title="T", arxiv_id="2601.00001", venue="arXiv", entrytype="misc")
    assert set(changes_for(Paper("p2", title="t", title_derived=True), preprint)) == {"title", "eprint"}


def test_a_paper_with_nothing_to_search_with_sends_nothing(server: ReplayServer, http: Http) -> None:
    proposal = lookup(http, Paper("p1", title="", abstract=""))
    assert proposal.message.startswith("Nothing to search with") and not server.requests


def test_a_published_version_that_cannot_be_read_keeps_the_arxiv_record(
    seeded: Library, server: ReplayServer, http: Http
) -> None:
    want = EXPECTED[VERISIMPL]
    server.route(f"/crossref/works/{want['doi']}", Reply(b"Service Unavailable", 500))
    serve_seeds(server)
    proposal = lookup(http, paper_for(seeded, VERISIMPL))
    assert proposal.failed and proposal.service == "arxiv"
    # the arXiv record's own title, and the DOI and journal it names
    assert proposal.changes["title"][1] != want["title"] and proposal.changes["doi"][1] == want["doi"]
    assert proposal.changes["venue"][1] == want["venue"]
    assert f"The published version ({want['doi']}) could not be read: Crossref" in proposal.message


# ---- what must never be applied without asking (review 2) ----------------------------------------------

ATOM_FEED = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
    'xmlns:arxiv="http://arxiv.org/schemas/atom">{entries}</feed>'
)


def arxiv_feed(*entries: dict[str, str]) -> Reply:
    """An arXiv API answer holding these records (id, title, abstract, authors separated by
    ";", journal_ref)."""
    from xml.sax.saxutils import escape

    out = []
    for e in entries:
        names = "".join(
            f"<author><name>{escape(n)}</name></author>" for n in e.get("authors", "Ada Lovelace").split(";")
        )
        ref = f"<arxiv:journal_ref>{escape(e['journal_ref'])}</arxiv:journal_ref>" if e.get("journal_ref") else ""
        out.append(
            f"<entry><id>http://arxiv.org/abs/{e['id']}v1</id><published>2024-03-01T00:00:00Z</published>"
            f"<title>{escape(e['title'])}</title><summary>{escape(e['abstract'])}</summary>"
            f"{names}{ref}</entry>"
        )
    body = ATOM_FEED.format(entries="".join(out)).encode()
    return Reply(body, 200, {"Content-Type": "application/atom+xml"})


def first_sentences(text: str, n: int) -> str:
    import re

    return " ".join(re.split(r"(?<=\.)\s+", " ".join(text.split()))[:n])


@pytest.mark.parametrize("short", ["ours", "theirs"])
def test_a_short_abstract_and_a_longer_one_that_starts_with_it_are_never_applied_without_asking(
    seeded: Library, server: ReplayServer, http: Http, short: str
) -> None:
    # a truncated abstract (ours, or the service's) matches every paper opening with its
    # sentences: at most proposed, never applied
    seed = paper_for(seeded, CURVATURE)
    opening = first_sentences(seed.abstract, 2)
    other = opening + (
        " We instead study tropical geometry of piecewise linear networks, count their linear regions "
        "exactly with a new polyhedral algorithm, and relate the count to the depth and the width of "
        "the network on image benchmarks, which earlier bounds overestimate by orders of magnitude. "
        "The regions of a trained network turn out to be far fewer than those of a random one."
    )
    ours, theirs = (opening, other) if short == "ours" else (other, opening)
    paper = Paper("p1", title=ours[:60] + "…", title_derived=True, abstract=ours)
    server.route("/arxiv/api/query", arxiv_feed({"id": "2401.01234", "title": "Tropical Regions", "abstract": theirs}))
    proposal = lookup(http, paper, services=("arxiv",))
    assert proposal.changes and not proposal.automatic
    assert PROPOSE_CONFIDENCE <= proposal.confidence < AUTO_CONFIDENCE
    assert "review it" in proposal.message


def test_a_placeholder_abstract_is_no_abstract(server: ReplayServer, http: Http) -> None:
    # "No abstract available." on both sides is no evidence: an unrelated title proposes nothing
    server.route(
        "/arxiv/api/query",
        arxiv_feed({"id": "2401.04321", "title": "Totally Different Paper", "abstract": "No abstract available."}),
    )
    paper = Paper("p1", title="Sorting Networks of Small Depth", abstract="No abstract available.")
    proposal = lookup(http, paper, services=("arxiv",))
    assert not proposal.changes and proposal.confidence < PROPOSE_CONFIDENCE
    # a derived title from a placeholder is nothing to search with: nothing is sent
    server.clear()
    nothing = lookup(http, Paper("p2", title="No abstract available.", title_derived=True, abstract="N/A"))
    assert nothing.message.startswith("Nothing to search with") and not server.requests


@pytest.mark.parametrize("journal_ref", ["Phys. Rev. D 76, 044016 (2007)", "Accepted at NeurIPS 2023"])
def test_a_venue_from_an_arxiv_journal_ref_is_proposed_never_applied(
    seeded: Library, server: ReplayServer, http: Http, journal_ref: str
) -> None:
    seed = paper_for(seeded, CURVATURE)
    server.route(
        "/arxiv/api/query",
        arxiv_feed(
            {
                "id": "2401.01234",
                "title": "Curvature",
                "abstract": seed.abstract,
                "authors": ";".join(seed.authors),
                "journal_ref": journal_ref,
            }
        ),
    )
    proposal = lookup(http, seed, services=("arxiv",))
    assert proposal.confidence >= AUTO_CONFIDENCE
    # whatever the arXiv reader makes of the journal_ref, a venue or a type from it is never
    # applied without asking
    assert not (proposal.automatic and {"venue", "entrytype"} & set(proposal.changes))
    if journal_ref.startswith("Phys. Rev. D"):  # a journal reference: the journal is proposed
        assert proposal.changes["venue"] == ("", "Phys. Rev. D") and not proposal.automatic
        assert "review it" in proposal.message


BIB_JSTOR = r"""@article{smith2020,
  author = {Smith, John},
  title = {Curvature of Networks},
  journal = {Journal of Tests},
  year = 2020,
  volume = {12},
  pages = {1--10},
  doi = {10.5555/curvature},
  eprint = {99887766},
  eprinttype = {jstor},
  abstract = {%s},
}
"""


def test_a_non_arxiv_eprint_is_the_users_value_and_pages_written_otherwise_are_no_change(
    seeded: Library, server: ReplayServer, http: Http, tmp_path: Path
) -> None:
    abstract = paper_for(seeded, CURVATURE).abstract
    with Library.open(tmp_path / "bib") as lib:
        lib.import_text(BIB_JSTOR % abstract)
        [paper] = list(lib.papers())
    # the DOI's record: the same volume and pages, written "1-10"
    work = {
        "DOI": "10.5555/curvature",
        "type": "journal-article",
        "title": ["Curvature of Networks"],
        "author": [{"given": "John", "family": "Smith"}],
        "container-title": ["Journal of Tests"],
        "issued": {"date-parts": [[2020]]},
        "volume": "12",
        "page": "1-10",
        "abstract": abstract,
    }
    server.route("/crossref/works/10.5555/curvature", Reply(json.dumps({"message": work}).encode(), 200))
    proposal = lookup(http, paper, services=())
    assert proposal.confidence >= AUTO_CONFIDENCE and not proposal.changes  # "1--10" is "1-10"
    # the arXiv record of the same paper: its id would replace the JSTOR eprint, so it is asked
    server.clear()
    feed = {"id": "2401.01234", "title": "Curvature", "abstract": abstract, "authors": "John Smith"}
    server.route("/arxiv/api/query", arxiv_feed(feed))
    paper.doi = ""
    proposal = lookup(http, paper, services=("arxiv",))
    assert proposal.changes["eprint"] == ("jstor: 99887766", "arXiv:2401.01234")
    assert not proposal.automatic
