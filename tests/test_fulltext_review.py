"""What the review of full-text search found, through the command line a user types: `fulltext:*`
answers from the field's lengths (it walked every term of every PDF), the index's table of
contents does not carry the analyzer's word cache (a PDF's vocabulary made every search slow),
and a paper with several PDFs says which file a page is in."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli_ok, local_dir
from papershelf.core.library import Library
from pdfs import doi_paper, latex_pdf

BIB = """
@article{diffusion, title={Priors for Diffusion in Sparse Graphs}, author={Ada Lovelace},
  abstract={We study priors for diffusion on sparse graphs.}, year={2024}}
@article{other, title={Counting Sheep at Night}, author={Bob Smith},
  abstract={Sheep are counted, one by one, until sleep comes.}, year={2023}}
"""


def _library(data_dir: Path, tmp_path: Path) -> dict[str, str]:
    src = tmp_path / "papers.bib"
    src.write_text(BIB, "utf-8")
    cli_ok("import", str(src), data_dir=data_dir)
    with Library.open(data_dir) as lib:
        return {p.citekey: p.id for p in lib.papers()}


def test_fulltext_star_lists_the_papers_with_searchable_pdfs(data_dir, tmp_path):
    ids = _library(data_dir, tmp_path)
    with Library.open(data_dir) as lib:
        assert lib.attach_files(ids["diffusion"], [doi_paper(tmp_path)]).added
    cli_ok("reindex", data_dir=data_dir)
    for query in ("fulltext:*", "pdf:*"):
        rows = json.loads(cli_ok("search", "--json", query, data_dir=data_dir).stdout)
        assert [r["id"] for r in rows] == [ids["diffusion"]], query


def test_the_index_does_not_keep_the_words_of_the_pdfs_in_its_table_of_contents(data_dir, tmp_path):
    ids = _library(data_dir, tmp_path)
    with Library.open(data_dir) as lib:
        assert lib.attach_files(ids["diffusion"], [doi_paper(tmp_path)]).added
    cli_ok("reindex", data_dir=data_dir)
    cli_ok("tag", ids["other"], "--add", "sheep", data_dir=data_dir)  # a commit after the PDF's words were analysed
    assert json.loads(cli_ok("search", "--json", "zyzzogeton", data_dir=data_dir).stdout)
    tocs = list((local_dir(data_dir) / "index").rglob("*.toc"))
    assert tocs and not any(b"zyzzogeton" in toc.read_bytes() for toc in tocs)


def test_a_page_of_a_paper_with_several_pdfs_names_its_file(data_dir, tmp_path):
    ids = _library(data_dir, tmp_path)
    slides = latex_pdf(tmp_path, "slides.pdf", "Nothing here.\\newpage Still nothing.\\newpage Or here.")
    with Library.open(data_dir) as lib:
        assert len(lib.attach_files(ids["diffusion"], [slides, doi_paper(tmp_path)]).added) == 2
    cli_ok("reindex", data_dir=data_dir)
    rows = json.loads(cli_ok("search", "--json", "fulltext:zyzzogeton", data_dir=data_dir).stdout)
    assert rows[0]["snippet"].startswith("doi-paper.pdf, p. 3: …Here the zyzzogeton appears")
