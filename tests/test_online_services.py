"""The service readers against real recorded answers, served over real HTTP by the replay server: each
recorded response becomes the FoundRecord a user would see (titles, authors, years, DOIs, venues),
and each failure an OnlineError whose message says which service and what to do."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from papershelf.core.biblio.identifiers import Identifier, parse_identifier
from papershelf.core.online import services
from papershelf.core.online.http import Http
from papershelf.core.online.records import BadResponse, NotFound, Offline, OnlineError, ServerError
from replay_server import RECORDED, ReplayServer, Reply, replay_fixture  # noqa: F401

PNAS = "10.1073/pnas.1414271111"
PNAS_TITLE = (
    "Developing functional musculoskeletal tissues through hypoxia and lysyl oxidase-induced collagen cross-linking"
)
PNAS_AUTHORS = [
    "Eleftherios A. Makris",
    "Donald J. Responte",
    "Nikolaos K. Paschos",
    "Jerry C. Hu",
    "Kyriacos A. Athanasiou",
]


@pytest.fixture
def http(tmp_path) -> Iterator[Http]:
    with Http(cache_dir=tmp_path / "online-cache", timeout=5) as client:
        yield client


def ident(text: str) -> Identifier:
    found = parse_identifier(text)
    assert found is not None
    return found


# -- arXiv --------------------------------------------------------------------------------------------


def test_arxiv_one_id(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": "1605.08386"})
    (found,) = services.arxiv_by_ids(http, ["1605.08386"])
    assert found.service == "arxiv"
    assert found.arxiv_id == found.ident == "1605.08386"
    assert found.title == "Heat-bath random walks with Markov bases"
    assert found.authors == ["Caprice Stanley", "Tobias Windisch"]
    assert found.year == 2016
    assert found.entrytype == "misc"  # a preprint: no journal reference, no DOI
    assert found.abstract.startswith("Graphs on lattice points are studied whose edges come from a")
    assert found.url == "https://arxiv.org/abs/1605.08386"
    assert found.extra["eprintclass"] == "math.CO"


def test_arxiv_journal_ref_gives_venue_and_year(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/arxiv/api/query",
        RECORDED / "arxiv_query_id_list_astro-ph_0601001.xml",
        query={"id_list": "astro-ph/0601001"},
    )
    found = services.fetch(http, ident("https://arxiv.org/abs/astro-ph/0601001v1"))
    assert found.arxiv_id == "astro-ph/0601001"  # old style, the version kept out
    assert found.title.startswith("Frequency of Hot Jupiters and Very Hot Jupiters from the OGLE-III Transit")
    assert found.authors == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"]
    assert found.venue == "ActaAstron."  # from "ActaAstron.56:1-50,2006"
    assert found.year == 2006
    assert found.entrytype == "article"
    assert "4--16% of those" in found.abstract  # a bare % is text, not a TeX comment


def test_arxiv_versioned_id(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_2104.12255v1.xml")
    (found,) = services.arxiv_by_ids(http, ["2104.12255v1"])
    assert replay.requests[0].query["id_list"] == "2104.12255v1"
    assert (found.arxiv_id, found.title, found.authors, found.year) == (
        "2104.12255",
        "0",
        ["Quan Thoi Minh Nguyen"],
        2021,
    )


def test_arxiv_several_ids_keeps_those_it_knows(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_0808.05394_1707.08567.xml")
    found = services.arxiv_by_ids(http, ["0808.05394", "1707.08567"])
    assert replay.requests[0].query["id_list"] == "0808.05394,1707.08567"
    assert [f.arxiv_id for f in found] == ["1707.08567"]
    assert found[0].title == "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications"
    assert len(found[0].authors) == 34 and "Dirk Wübben" in found[0].authors


def test_arxiv_search(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/arxiv/api/query", RECORDED / "arxiv_query_search_testing_start0_max10.xml", query={"search_query": "testing"}
    )
    found = services.arxiv_search(http, "testing", max_results=10)
    assert replay.requests[0].query["max_results"] == "10"
    assert len(found) == 10
    first = found[0]
    assert first.title == "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    assert first.authors == ["Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"]
    assert (first.doi, first.year, first.entrytype) == ("10.1109/icstw55395.2022.00035", 2022, "article")
    assert found[5].venue == "International Journal of Software Engineering & Applications (IJSEA)"
    assert [f.doi for f in found if f.doi] == [
        "10.1109/icstw55395.2022.00035",
        "10.1109/icstw58534.2023.00023",
        "10.1145/3395363.3397376",
        "10.1145/3533767.3534401",
        "10.1109/icstw58534.2023.00078",
        "10.5121/vlsic.2012.3205",
    ]


def test_arxiv_unknown_id_is_not_found(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_empty_id_list_0000.0000.xml")
    with pytest.raises(NotFound, match=r"arXiv does not know 0000\.0000"):
        services.arxiv_by_ids(http, ["0000.0000"])
    assert services.arxiv_search(http, 'ti:"no such title"') == []


def test_arxiv_error_feed_says_why(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_error_400_id_list_abc.xml", status=400)
    with pytest.raises(ServerError, match="arXiv refused the query: incorrect id format for abc") as caught:
        services.arxiv_by_ids(http, ["abc"])
    assert caught.value.service == "arxiv"


# -- Crossref -----------------------------------------------------------------------------------------


def test_crossref_work(replay: ReplayServer, http: Http) -> None:
    replay.route(f"/crossref/works/{PNAS}", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json")
    found = services.crossref_by_doi(http, PNAS)
    assert (found.service, found.doi, found.title) == ("crossref", PNAS, PNAS_TITLE)
    assert found.authors == PNAS_AUTHORS
    assert found.year == 2014
    assert found.venue == "Proceedings of the National Academy of Sciences"
    assert found.entrytype == "article"
    assert found.extra == {
        "volume": "111",
        "number": "45",
        "publisher": "Proceedings of the National Academy of Sciences",
    }
    # JATS markup gone, the text kept
    assert found.abstract.startswith("Significance The inadequate mechanical properties of engineered tissues")
    assert "<" not in found.abstract and "jats" not in found.abstract


def test_crossref_work_pages(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/crossref/works/10.1371/journal.pone.0033693",
        RECORDED / "crossref_works_doi_10.1371_journal.pone.0033693.json",
    )
    found = services.fetch(http, ident("https://doi.org/10.1371/journal.pone.0033693"))
    assert found.title == (
        "Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal Ganglia of Mice"
    )
    assert found.authors[0] == "Shankar Sadasivan" and found.authors[-1] == "Richard J. Smeyne"
    assert (found.year, found.venue) == (2012, "PLoS ONE")
    assert found.extra["pages"] == "e33693" and found.extra["volume"] == "7" and found.extra["number"] == "3"


def test_crossref_search(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works", RECORDED / "crossref_works_query_ecology_rows2.json")
    found = services.crossref_search(http, "ecology", rows=2)
    assert replay.requests[0].query == {"query.bibliographic": "ecology", "rows": "2"}
    assert [f.title for f in found] == ["Communicating Ecology", "Chemical Ecology"]
    assert found[1].authors == ["André Kessler"]
    assert [f.entrytype for f in found] == ["incollection", "incollection"]  # reference-entry
    assert found[0].doi == "10.1093/obo/9780199830060-0238"


def test_crossref_search_one_hit_and_none(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/crossref/works",
        RECORDED / "crossref_works_query_title_augmenting_llm_chemistry_rows1.json",
        query={"query.bibliographic": "Augmenting large language models with chemistry tools"},
    )
    replay.route("/crossref/works", RECORDED / "crossref_works_query_title_nomatch_rows1.json")
    (hit,) = services.crossref_search(http, "Augmenting large language models with chemistry tools", rows=1)
    assert (hit.doi, hit.year, hit.venue) == ("10.1038/s42256-024-00832-8", 2024, "Nature Machine Intelligence")
    assert hit.authors[:2] == ["Andres M. Bran", "Sam Cox"]
    assert hit.extra["pages"] == "525-535"
    assert services.crossref_search(http, "zzzz qqqq", rows=1) == []


def test_crossref_unknown_doi(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works/10.5555/notarealdoi", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404)
    with pytest.raises(NotFound, match=r"Crossref does not know the DOI 10\.5555/notarealdoi"):
        services.crossref_by_doi(http, "10.5555/notarealdoi")


# -- OpenAlex -----------------------------------------------------------------------------------------


def test_openalex_work(replay: ReplayServer, http: Http) -> None:
    replay.route(f"/openalex/works/doi:{PNAS}", RECORDED / "openalex_work_doi_10.1073_pnas.1414271111.json")
    found = services.openalex_by_doi(http, PNAS)
    assert (found.service, found.ident, found.doi, found.title) == ("openalex", "W2109415576", PNAS, PNAS_TITLE)
    assert found.authors[0] == "Eleftherios Makris" and len(found.authors) == 5
    assert (found.year, found.venue, found.entrytype) == (
        2014,
        "Proceedings of the National Academy of Sciences",
        "article",
    )
    # the inverted index read back into the text, in order
    assert found.abstract.startswith("Significance The inadequate mechanical properties of engineered tissues have")


def test_openalex_work_without_abstract(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/openalex/works/doi:10.1023/a:1007154515475", RECORDED / "openalex_work_doi_10.1023_a_1007154515475.json"
    )
    found = services.openalex_by_doi(http, "10.1023/a:1007154515475")
    assert found.title.startswith("An essential role of active site arginine residue in iodide binding")
    assert found.authors == ["Subrata Adak", "Debasish Bandyopadhyay", "Uday Bandyopadhyay", "Ranajit K. Banerjee"]
    assert (found.year, found.venue, found.abstract) == (2001, "Molecular and Cellular Biochemistry", "")
    assert found.extra == {"volume": "218", "number": "1/2", "pages": "1-11"}


def test_openalex_search(replay: ReplayServer, http: Http) -> None:
    replay.route("/openalex/works", RECORDED / "openalex_works_filter_title_search_augmenting_llm_chemistry.json")
    found = services.openalex_search(http, "Augmenting large language models with chemistry tools", per_page=2)
    assert replay.requests[0].query["search"] == "Augmenting large language models with chemistry tools"
    assert [f.doi for f in found] == ["10.1038/s42256-024-00832-8", "10.48550/arxiv.2304.05376"]
    assert found[0].abstract.startswith("Large language models (LLMs) have shown")  # its "Abstract" heading dropped
    preprint = found[1]
    assert (preprint.arxiv_id, preprint.entrytype, preprint.year) == ("2304.05376", "misc", 2023)
    assert preprint.title == "ChemCrow: Augmenting large-language models with chemistry tools"


def test_openalex_unknown_doi(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/openalex/works/doi:10.1046/j.1365-2699.2003.00795",
        RECORDED / "openalex_work_404_doi_10.1046_j.1365-2699.2003.00795.html",
        status=404,
    )
    with pytest.raises(NotFound, match=r"OpenAlex does not know the DOI 10\.1046/j\.1365-2699\.2003\.00795"):
        services.openalex_by_doi(http, "10.1046/j.1365-2699.2003.00795")


def test_openalex_answer_missing_the_work(replay: ReplayServer, http: Http) -> None:
    # a real answer of another request (select=open_access,doi): no title, nothing to read
    replay.route(
        "/openalex/works/doi:10.1021/acs.jctc.5b00178",
        RECORDED / "openalex_work_select_open_access_doi_10.1021_acs.jctc.5b00178.json",
    )
    with pytest.raises(BadResponse, match="OpenAlex sent an answer Papershelf cannot read"):
        services.openalex_by_doi(http, "10.1021/acs.jctc.5b00178")


# -- Semantic Scholar ---------------------------------------------------------------------------------


def test_s2_paper(replay: ReplayServer, http: Http) -> None:
    replay.route(f"/s2/graph/v1/paper/DOI:{PNAS}", RECORDED / "s2_paper_DOI_10.1073_pnas.1414271111.json")
    found = services.s2_by_id(http, f"DOI:{PNAS}")
    assert "title" in replay.requests[0].query["fields"]
    assert (found.service, found.ident) == ("s2", "db3720c812a462ef955d5654b65ca9189d4b8372")
    assert (found.title, found.doi, found.year) == (PNAS_TITLE, PNAS, 2014)
    assert found.authors[:4] == ["Eleftherios Makris", "D. Responte", "N. Paschos", "Jerry C. Hu"]
    assert found.venue == "Proceedings of the National Academy of Sciences of the United States of America"
    assert found.extra == {"volume": "111", "pages": "E4832 - E4841"}


def test_s2_paper_few_fields(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/s2/graph/v1/paper/DOI:10.1093/mind/lix.236.433",
        RECORDED / "s2_paper_DOI_10.1093_mind_lix.236.433_fields_title.json",
    )
    found = services.s2_by_id(http, "DOI:10.1093/mind/lix.236.433")
    assert (found.title, found.authors, found.year) == ("Computing Machinery and Intelligence", [], None)


def test_s2_search(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/s2/graph/v1/paper/search", RECORDED / "s2_paper_search_turing_full_fields.json", query={"query": "turing"}
    )
    replay.route("/s2/graph/v1/paper/search", RECORDED / "s2_paper_search_empty.json")
    found = services.s2_search(http, "turing", limit=100)
    assert len(found) == 100
    first = found[0]
    assert (first.title, first.authors, first.year) == (
        "Large Language Models Pass the Turing Test",
        ["Cameron R. Jones", "Benjamin K. Bergen"],
        2025,
    )
    assert (first.arxiv_id, first.venue, first.entrytype) == ("2503.23674", "", "misc")  # arXiv is no venue
    deutsch = next(f for f in found if f.doi == "10.1098/rspa.1985.0070")
    assert deutsch.title == "Quantum theory, the Church–Turing principle and the universal quantum computer"
    assert (deutsch.authors, deutsch.year) == (["D. Deutsch"], 1985)
    assert services.s2_search(http, "qqqq zzzz") == []


def test_s2_titles_only_search(replay: ReplayServer, http: Http) -> None:
    replay.route("/s2/graph/v1/paper/search", RECORDED / "s2_paper_search_turing_fields_title.json")
    found = services.s2_search(http, "turing", limit=100)
    assert (
        len(found) == 100
        and found[1].title == "Quantum theory, the Church–Turing principle and the universal quantum computer"
    )


def test_s2_unknown(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/s2/graph/v1/paper/DOI:10.1101/2024.04.01.587366",
        RECORDED / "s2_paper_DOI_404_10.1101_2024.04.01.587366.json",
        status=404,
    )
    with pytest.raises(NotFound, match=r"Semantic Scholar does not know DOI:10\.1101/2024\.04\.01\.587366"):
        services.s2_by_id(http, "DOI:10.1101/2024.04.01.587366")


def test_s2_forbidden_is_a_server_error(replay: ReplayServer, http: Http) -> None:
    replay.route("/s2/graph/v1/paper/ARXIV:2304.05376", RECORDED / "s2_paper_batch_post_403_forbidden.json", status=403)
    with pytest.raises(
        ServerError, match=r"Semantic Scholar \(127\.0\.0\.1:\d+\) answered with an error \(HTTP 403"
    ) as e:
        services.s2_by_id(http, "ARXIV:2304.05376")
    assert e.value.status == 403


# -- doi.org and fetch --------------------------------------------------------------------------------


def route_science_redirect(replay: ReplayServer) -> None:
    """doi.org's real 302 to Crossref's transform, and Crossref's real BibTeX there."""
    replay.route(
        "/doi/10.1126/science.169.3946.635",
        RECORDED / "doiorg_bibtex_10.1126_science.169.3946.635_302.html",
        status=302,
        headers={"Location": replay.base("crossref") + "/v1/works/10.1126%2Fscience.169.3946.635/transform"},
    )
    replay.route(
        "/crossref/v1/works/10.1126/science.169.3946.635/transform",
        RECORDED / "crossref_transform_bibtex_10.1126_science.169.3946.635.bib",
    )


def test_doi_bibtex_follows_the_redirect(replay: ReplayServer, http: Http) -> None:
    route_science_redirect(replay)
    text = services.doi_bibtex(http, "10.1126/science.169.3946.635")
    assert text.startswith("@article{Frank_1970,")
    assert [r.headers["accept"] for r in replay.requests] == ["application/x-bibtex"] * 2


def test_fetch_a_doi_crossref_does_not_know(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/crossref/works/10.1126/science.169.3946.635", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404
    )
    route_science_redirect(replay)
    found = services.fetch(http, ident("doi:10.1126/science.169.3946.635"))
    assert [r.path for r in replay.requests] == [
        "/crossref/works/10.1126/science.169.3946.635",
        "/doi/10.1126/science.169.3946.635",
        "/crossref/v1/works/10.1126/science.169.3946.635/transform",
    ]
    assert found.service == "doi"
    assert found.title == (
        "The Structure of Ordinary Water: New data and interpretations are yielding new insights into this "
        "fascinating substance."
    )
    assert (found.authors, found.year, found.venue, found.entrytype) == (["Henry S. Frank"], 1970, "Science", "article")
    assert found.doi == "10.1126/science.169.3946.635"
    assert found.extra["pages"] == "635–641" and found.extra["volume"] == "169"


def test_bibtex_names_and_values_decoded(replay: ReplayServer, http: Http) -> None:
    replay.route(f"/crossref/works/{PNAS}", b'{"status":"error"}', status=404)
    replay.route(f"/doi/{PNAS}", RECORDED / "crossref_transform_bibtex_10.1073_pnas.1414271111.bib")
    found = services.fetch(http, ident(PNAS))
    assert (found.title, found.authors, found.year) == (PNAS_TITLE, PNAS_AUTHORS, 2014)
    assert found.extra["number"] == "45"


def test_a_doi_nobody_knows(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works/10.1126/foo", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404)
    replay.route("/doi/10.1126/foo", RECORDED / "doiorg_bibtex_404_10.1126_foo.html", status=404)
    with pytest.raises(NotFound) as caught:
        services.fetch(http, ident("https://doi.org/10.1126/foo"))
    assert str(caught.value) == (
        "Neither Crossref nor doi.org knows the DOI 10.1126/foo. Check it for typos; nothing was changed."
    )


def test_an_arxiv_doi_goes_to_arxiv(replay: ReplayServer, http: Http) -> None:
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": "1605.08386"})
    found = services.fetch(http, Identifier("doi", "10.48550/arxiv.1605.08386"))
    assert found.arxiv_id == "1605.08386"
    assert [r.path for r in replay.requests] == ["/arxiv/api/query"]


def test_the_registrar_answering_with_a_web_page(replay: ReplayServer, http: Http) -> None:
    replay.route("/crossref/works/10.1126/foo", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404)
    replay.route("/doi/10.1126/foo", RECORDED / "doiorg_bibtex_404_10.1126_foo.html")  # served as a 200 here
    with pytest.raises(BadResponse, match=r"doi\.org sent an answer Papershelf cannot read .*web page"):
        services.fetch(http, ident("10.1126/foo"))


def test_crossref_arxiv_doi_transform_404(replay: ReplayServer, http: Http) -> None:
    # Crossref's real 404 for a DataCite DOI, served as doi.org's answer
    replay.route(
        "/doi/10.5281/zenodo.1", RECORDED / "crossref_transform_bibtex_404_10.48550_arXiv.2304.05376.txt", status=404
    )
    with pytest.raises(NotFound, match=r"doi.org does not know the DOI 10\.5281/zenodo\.1"):
        services.doi_bibtex(http, "10.5281/zenodo.1")


# -- answers that are not what the service sends (made here, not recorded) ----------------------------

MALFORMED = [
    ("arxiv", "/arxiv/api/query", b"<feed><entry>unclosed", lambda h: services.arxiv_by_ids(h, ["1605.08386"])),
    ("arxiv", "/arxiv/api/query", b"<html>maintenance</html>", lambda h: services.arxiv_search(h, "x")),
    ("crossref", f"/crossref/works/{PNAS}", b'{"message": ', lambda h: services.crossref_by_doi(h, PNAS)),
    (
        "crossref",
        "/crossref/works",
        b'{"status": "ok", "message": {"items": 3}}',
        lambda h: services.crossref_search(h, "x"),
    ),
    ("openalex", "/openalex/works", b"[1, 2", lambda h: services.openalex_search(h, "x")),
    ("s2", "/s2/graph/v1/paper/search", b'{"data": {"x": 1}}', lambda h: services.s2_search(h, "x")),
    ("s2", f"/s2/graph/v1/paper/DOI:{PNAS}", b"<!doctype html>", lambda h: services.s2_by_id(h, f"DOI:{PNAS}")),
]


@pytest.mark.parametrize(("service", "path", "body", "call"), MALFORMED, ids=[m[0] + m[1] for m in MALFORMED])
def test_malformed_answers(replay: ReplayServer, http: Http, service, path, body, call) -> None:
    # MADE HERE (not recorded): broken XML/JSON and answers of the wrong shape
    replay.route(path, body)
    names = {"arxiv": "arXiv", "crossref": "Crossref", "openalex": "OpenAlex", "s2": "Semantic Scholar"}
    with pytest.raises(BadResponse, match=f"^{names[service]} sent an answer Papershelf cannot read") as caught:
        call(http)
    assert caught.value.service == service


def test_a_doi_with_brackets_and_semicolons_reaches_the_service(replay: ReplayServer, http: Http) -> None:
    sici = "10.1002/(sici)1097-4636(199602)30:2<239::aid-jbm13>3.0.co;2-s"
    # a real Crossref answer (of another DOI) at this path: what is tested is the way there
    replay.route(f"/crossref/works/{sici}", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json")
    assert services.fetch(http, ident(f"https://doi.org/{sici}")).title == PNAS_TITLE
    (request,) = replay.requests
    assert request.path == f"/crossref/works/{sici}"
    assert "<" not in request.raw_path and ";" not in request.raw_path  # escaped on the wire


def test_offline_names_the_service_and_asks_nobody_else(http: Http) -> None:
    # conftest: every service is the closed port 9
    with pytest.raises(Offline, match=r"^Cannot reach Crossref \(127\.0\.0\.1:9\): the connection was refused"):
        services.fetch(http, ident("10.1073/pnas.1414271111"))


# -- answers that are not what the service sends ------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "path", "body", "call"),
    [
        ("crossref", f"/works/{PNAS}", '{"message-type": "work", "message": {"title": ["T"], "author": 5}}', "c"),
        ("crossref", "/works", '{"message": {"items": [{"title": ["T"], "author": {"given": "A"}}]}}', "cs"),
        ("openalex", f"/works/doi:{PNAS}", '{"display_name": "T", "authorships": 5}', "o"),
        ("openalex", "/works", '{"results": [{"display_name": "T", "locations": 7, "authorships": [3]}]}', "os"),
        ("openalex", f"/works/doi:{PNAS}", '{"display_name": "T", "ids": [], "biblio": 3, "locations": "x"}', "o"),
        ("s2", f"/graph/v1/paper/DOI:{PNAS}", '{"paperId": "p", "authors": 5}', "s"),
        ("s2", "/graph/v1/paper/search", '{"data": [{"paperId": "p", "publicationTypes": 3}]}', "ss"),
        ("s2", f"/graph/v1/paper/DOI:{PNAS}", '{"paperId": "p", "title": ["a"], "authors": [{"name": 1}]}', "s"),
    ],
)
def test_wrong_typed_json_is_a_bad_answer_for_that_paper(
    replay: ReplayServer, http: Http, service: str, path: str, body: str, call: str
) -> None:
    replay.route(f"/{service}{path}", body.encode(), headers={"Content-Type": "application/json"})
    ask = {
        "c": lambda: services.crossref_by_doi(http, PNAS),
        "cs": lambda: services.crossref_search(http, "x"),
        "o": lambda: services.openalex_by_doi(http, PNAS),
        "os": lambda: services.openalex_search(http, "x"),
        "s": lambda: services.s2_by_id(http, f"DOI:{PNAS}"),
        "ss": lambda: services.s2_search(http, "x"),
    }[call]
    try:
        found = ask()  # a part of the wrong type read as absent is fine too…
    except BadResponse as exc:  # …or the answer is refused in words; never a TypeError
        assert "sent an answer Papershelf cannot read" in str(exc)
    else:
        assert found


def test_wrong_typed_authors_are_refused_not_crashed_on(replay: ReplayServer, http: Http) -> None:
    replay.route(f"/crossref/works/{PNAS}", b'{"message": {"title": ["T"], "author": 5, "container-title": 3}}')
    found = services.crossref_by_doi(http, PNAS)
    assert (found.title, found.authors, found.venue) == ("T", [], "")


# -- what is kept on disk -----------------------------------------------------------------------------


def test_a_maintenance_page_is_not_kept(replay: ReplayServer, http: Http) -> None:
    page = Reply(b"<html><body>arXiv is down for maintenance</body></html>", headers={"Content-Type": "text/html"})
    replay.route("/arxiv/api/query", [page, RECORDED / "arxiv_query_id_list_1605.08386.xml"])
    with pytest.raises(BadResponse, match="arXiv sent an answer Papershelf cannot read"):
        services.arxiv_by_ids(http, ["1605.08386"])
    (found,) = services.arxiv_by_ids(http, ["1605.08386"])  # asked again, not read back from disk
    assert found.title == "Heat-bath random walks with Markov bases"
    (again,) = services.arxiv_by_ids(http, ["1605.08386"])  # the good answer is kept
    assert again.title == found.title
    assert len(replay.requests) == 2


def test_an_empty_arxiv_feed_is_not_kept(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/arxiv/api/query",
        [RECORDED / "arxiv_query_empty_id_list_0000.0000.xml", RECORDED / "arxiv_query_id_list_1605.08386.xml"],
    )
    with pytest.raises(NotFound):
        services.arxiv_by_ids(http, ["1605.08386"])  # arXiv's intermittent empty feed
    assert services.arxiv_by_ids(http, ["1605.08386"])[0].arxiv_id == "1605.08386"


def test_a_landing_page_from_doi_org_is_not_kept(replay: ReplayServer, http: Http) -> None:
    replay.route(
        "/doi/10.5281/zenodo.1",
        [Reply(b"<html>Zenodo</html>", headers={"Content-Type": "text/html"}), b"@misc{z, title={Z}}"],
    )
    with pytest.raises(BadResponse, match="answered with a web page"):
        services.doi_bibtex(http, "10.5281/zenodo.1")
    assert services.doi_bibtex(http, "10.5281/zenodo.1") == "@misc{z, title={Z}}"


# -- the feed's own encoding --------------------------------------------------------------------------


def test_an_arxiv_feed_in_latin_1(replay: ReplayServer, http: Http) -> None:
    feed = (RECORDED / "arxiv_query_id_list_1605.08386.xml").read_text(encoding="utf-8")
    feed = feed.replace("Heat-bath random walks", "Café walks").replace(
        "<?xml version='1.0' encoding='UTF-8'?>", "<?xml version='1.0' encoding='ISO-8859-1'?>"
    )
    assert "encoding='ISO-8859-1'" in feed
    # the HTTP header says nothing of the charset, as a misconfigured mirror might
    replay.route("/arxiv/api/query", Reply(feed.encode("iso-8859-1"), headers={"Content-Type": "application/atom+xml"}))
    (found,) = services.arxiv_by_ids(http, ["1605.08386"])
    assert found.title == "Café walks with Markov bases"


# -- arXiv's journal_ref ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("journal_ref", "venue", "year", "entrytype"),
    [
        ("Phys. Rev. D 76, 044016 (2007)", "Phys. Rev. D", 2007, "article"),
        ("Nature 521, 436-444 (2015)", "Nature", 2015, "article"),
        ("J. Mach. Learn. Res. 18(1):1-52, 2017", "J. Mach. Learn. Res.", 2017, "article"),
        ("Astrophys. J. 645 (2006) 1-10", "Astrophys. J.", 2006, "article"),
        ("Accepted at NeurIPS 2023", "", 2016, ""),
        ("To appear in CVPR 2023", "", 2016, ""),
        ("12 pages, 5 figures", "", 2016, ""),
        ("ICLR 2024 (spotlight)", "", 2016, ""),
        ("Proceedings of the 40th ICML, PMLR 202:1234-1250, 2023", "", 2016, ""),
        ("2023 IEEE International Conference on Software Testing (ICST)", "", 2016, ""),
    ],
)
def test_a_journal_ref_is_a_venue_only_when_it_names_one(
    replay: ReplayServer, http: Http, journal_ref: str, venue: str, year: int, entrytype: str
) -> None:
    feed = (RECORDED / "arxiv_query_id_list_1605.08386.xml").read_text(encoding="utf-8")
    assert "<arxiv:journal_ref" not in feed
    feed = feed.replace(
        "<arxiv:primary_category", f"<arxiv:journal_ref>{journal_ref}</arxiv:journal_ref><arxiv:primary_category", 1
    )
    replay.route("/arxiv/api/query", feed.encode("utf-8"))
    (found,) = services.arxiv_by_ids(http, ["1605.08386"])
    assert (found.venue, found.year, found.entrytype) == (venue, year, entrytype)
    assert "journal_ref" not in found.extra


# -- issue 21: what a service sent cannot steer a request, nor end a batch ----------------------------


@pytest.mark.parametrize("doi", ["10.1234/../../../etc/passwd", "10.1234/./x", "10.1234/a/.."])
def test_a_doi_a_service_sent_with_dot_segments_is_never_requested(replay: ReplayServer, http: Http, doi) -> None:
    # a found record's DOI goes to Crossref unparsed (the published version of an arXiv record)
    for ask in (services.crossref_by_doi, services.openalex_by_doi, services.doi_bibtex):
        with pytest.raises(OnlineError) as caught:
            ask(http, doi)
        assert "holds a '.' or '..' path segment" in str(caught.value)
    assert replay.requests == []


@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"results": ' + b"[" * 100_000])
def test_an_answer_nested_too_deeply_is_that_services_bad_response(replay: ReplayServer, http: Http, body) -> None:
    replay.route("/openalex/works", Reply(body, 200, {"Content-Type": "application/json"}))
    replay.route("/s2/graph/v1/paper/search", Reply(body, 200, {"Content-Type": "application/json"}))
    with pytest.raises(BadResponse, match=r"OpenAlex sent an answer Papershelf cannot read \(JSON nested too deeply\)"):
        services.openalex_search(http, "anything")
    with pytest.raises(BadResponse, match=r"Semantic Scholar sent an answer Papershelf cannot read"):
        services.s2_search(http, "anything")
