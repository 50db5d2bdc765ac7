"""`papershelf add IDENTIFIER…` (issue 14 item 2) through the installed command, against the
loopback replay server serving real recorded answers of arXiv, Crossref and doi.org."""

from __future__ import annotations

from conftest import listed_papers, run_cli
from replay_server import RECORDED, replay_fixture  # noqa: F401

PNAS = "10.1073/pnas.1414271111"


def test_add_by_arxiv_id_and_by_doi_then_again_changes_nothing(replay, data_dir):
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": "1605.08386"})
    replay.route(f"/crossref/works/{PNAS}", RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json")
    res = run_cli("add", "https://arxiv.org/abs/1605.08386v1", f"https://doi.org/{PNAS}", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "added 2 papers" in res.stdout
    papers = {p["arxiv_id"] or p["doi"]: p for p in listed_papers(data_dir)}
    arxiv, pnas = papers["1605.08386"], papers[PNAS]
    assert arxiv["title"] and not arxiv["title_derived"] and arxiv["authors"] and arxiv["year"] == 2016
    assert pnas["entrytype"] == "article" and pnas["year"] == 2014 and pnas["venue"]
    assert pnas["authors"] and pnas["fields"]["volume"]
    shown = run_cli("show", pnas["id"], "--bibtex", data_dir=data_dir).stdout
    assert shown.startswith("@article{") and f"{{{PNAS}}}" in shown
    # the same again: the papers are there, nothing new (answers come from the cache now)
    asked = len(replay.requests)
    again = run_cli("add", "arXiv:1605.08386", f"doi:{PNAS}", data_dir=data_dir)
    assert again.returncode == 0, again.stderr
    assert "added 0 papers" in again.stdout
    assert len(listed_papers(data_dir)) == 2
    assert len(replay.requests) == asked  # the on-disk cache answered


def test_an_identifier_nobody_knows_is_told_and_the_others_are_added(replay, data_dir):
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": "1605.08386"})
    replay.route("/crossref/works/10.1126/foo", RECORDED / "crossref_works_doi_404_notarealdoi.txt", status=404)
    replay.route("/doi/10.1126/foo", RECORDED / "doiorg_bibtex_404_10.1126_foo.html", status=404)
    res = run_cli("add", "10.1126/foo", "arXiv:1605.08386", data_dir=data_dir)
    assert res.returncode == 1
    assert "doi:10.1126/foo" in res.stderr and "Neither Crossref nor doi.org knows the DOI" in res.stderr
    assert "Traceback" not in res.stderr
    assert "added 1 paper" in res.stdout
    assert [p["arxiv_id"] for p in listed_papers(data_dir)] == ["1605.08386"]


def test_offline_says_so_and_leaves_the_library_as_it_was(data_dir, seeds):
    # the services point at a closed port (tests/conftest.py): as offline as a laptop on a train
    assert run_cli("import", str(seeds[1]), data_dir=data_dir).returncode == 0
    before = listed_papers(data_dir)
    res = run_cli("add", "arXiv:2401.01234", data_dir=data_dir)
    assert res.returncode == 1
    assert "Cannot reach arXiv" in res.stderr and "nothing was changed" in res.stderr
    assert "Traceback" not in res.stderr
    assert listed_papers(data_dir) == before


def test_text_that_holds_no_identifier_is_a_usage_error(data_dir):
    res = run_cli("add", "not an identifier", data_dir=data_dir)
    assert res.returncode == 2
    assert "is not a DOI or an arXiv id" in res.stderr
