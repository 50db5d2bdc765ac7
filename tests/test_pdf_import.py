"""Importing PDFs as papers (issue 24 item 2): `papershelf import DIR|FILE.pdf` and
`Library.import_pdfs`, with real PDFs made by pdflatex (tests/pdfs.py); the online completion
against the loopback replay server serving arXiv's recorded answer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import listed_papers, run_cli
from papershelf.core.library import Library
from pdfs import arxiv_paper, doi_paper, encrypted_pdf, image_only_pdf, not_a_pdf, truncated_pdf
from replay_server import RECORDED, replay_fixture  # noqa: F401

DOI = "10.1234/papershelf.2024.5678"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """The PDFs, made once for the module (pdflatex takes a second each)."""
    d = tmp_path_factory.mktemp("made")
    return {
        "doi": doi_paper(d),
        "arxiv": arxiv_paper(d),
        "scan": image_only_pdf(d),
        "encrypted": encrypted_pdf(d),
        "truncated": truncated_pdf(d),
        "html": not_a_pdf(d),
        "online": arxiv_paper(d, "online.pdf", arxiv_id="1605.08386v1"),
    }


def folder_of(tmp_path: Path, made: dict[str, Path], *names: str) -> Path:
    """A folder of the PDFs named, the last ones in a sub-folder (the walk is recursive)."""
    top = tmp_path / "inbox"
    (top / "sub" / "deeper").mkdir(parents=True)
    for n, name in enumerate(names):
        shutil.copy(made[name], (top if n % 2 == 0 else top / "sub" / "deeper") / made[name].name)
    (top / "notes.txt").write_text("not a PDF, not taken from a folder", "utf-8")
    return top


def by_file(data_dir: Path) -> dict[str, dict]:
    papers = listed_papers(data_dir)
    out = {}
    for p in papers:
        res = run_cli("files", p["id"], data_dir=data_dir)
        assert res.returncode == 0, res.stderr
        out[res.stdout.split()[1]] = p
    return out


def test_a_folder_becomes_one_paper_per_pdf_with_its_file(made, tmp_path, data_dir):
    inbox = folder_of(tmp_path, made, "doi", "arxiv", "scan", "encrypted", "truncated", "html")
    res = run_cli("import", str(inbox), data_dir=data_dir)
    assert "Traceback" not in res.stderr
    assert res.returncode == 1  # two files could not be imported: said, the others imported
    assert "6 PDF(s): 4 added as papers" in res.stdout
    assert "page.pdf is not a PDF" in res.stdout and "truncated.pdf is not a readable PDF" in res.stdout
    assert "encrypted.pdf is encrypted" in res.stdout and "imported under its file name" in res.stdout
    papers = by_file(data_dir)
    assert set(papers) == {"doi-paper.pdf", "arxiv-paper.pdf", "scan.pdf", "encrypted.pdf"}
    doi = papers["doi-paper.pdf"]
    assert doi["doi"] == DOI and doi["title"] == "Priors for Diffusion in Sparse Graphs" and not doi["title_derived"]
    assert doi["authors"] == ["Ada Lovelace", "Charles Babbage"]
    assert papers["arxiv-paper.pdf"]["arxiv_id"] == "2401.01234"
    # no title anywhere in it: named by its file, marked derived
    assert papers["scan.pdf"]["title"] == "scan" and papers["scan.pdf"]["title_derived"]
    assert papers["encrypted.pdf"]["title"] == "encrypted" and papers["encrypted.pdf"]["title_derived"]
    # the files were copied into the library folder, byte for byte
    shown = run_cli("files", doi["id"], data_dir=data_dir).stdout
    assert "3 pages" in shown and "MISSING" not in shown
    copy = data_dir / "files" / doi["id"] / "doi-paper.pdf"
    assert copy.read_bytes() == made["doi"].read_bytes()


def test_the_same_pdf_again_is_not_added_twice(made, tmp_path, data_dir):
    assert run_cli("import", str(made["doi"]), data_dir=data_dir).returncode == 0
    renamed = tmp_path / "elsewhere" / "copy of the paper.pdf"
    renamed.parent.mkdir()
    shutil.copy(made["doi"], renamed)
    res = run_cli("import", str(renamed), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert 'is already attached to "Priors for Diffusion in Sparse Graphs"' in res.stdout
    assert len(listed_papers(data_dir)) == 1


def test_a_pdf_of_a_paper_already_there_is_attached_to_it_and_undo_takes_it_off(made, tmp_path, data_dir):
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{known2024,\n  title = {Priors for Diffusion in Sparse Graphs: the Journal Version},\n"
        f"  author = {{Someone Else}},\n  doi = {{{DOI}}},\n  year = {{2024}},\n}}\n",
        "utf-8",
    )
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    [paper] = listed_papers(data_dir)
    res = run_cli("import", str(made["doi"]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "1 attached to papers already here" in res.stdout
    assert "the Journal Version" in res.stdout and "(the same DOI)" in res.stdout
    [after] = listed_papers(data_dir)
    assert after["id"] == paper["id"] and after["title"] == paper["title"]  # the record kept, the file added
    assert "doi-paper.pdf" in run_cli("files", paper["id"], data_dir=data_dir).stdout
    undone = run_cli("undo", data_dir=data_dir)
    assert undone.returncode == 0 and "Undone:" in undone.stdout
    assert "has no files" in run_cli("files", paper["id"], data_dir=data_dir).stdout
    assert [p["id"] for p in listed_papers(data_dir)] == [paper["id"]]


def test_an_import_of_pdfs_is_one_undo_step(made, tmp_path, data_dir):
    inbox = folder_of(tmp_path, made, "doi", "arxiv")
    assert run_cli("import", str(inbox), data_dir=data_dir).returncode == 0
    assert len(listed_papers(data_dir)) == 2
    assert run_cli("undo", data_dir=data_dir).returncode == 0
    assert listed_papers(data_dir) == []
    assert run_cli("redo", data_dir=data_dir).returncode == 0
    assert {p["doi"] or p["arxiv_id"] for p in listed_papers(data_dir)} == {DOI, "2401.01234"}


def test_progress_is_told_and_a_cancelled_import_leaves_nothing(made, tmp_path, data_dir):
    inbox = folder_of(tmp_path, made, "doi", "arxiv", "scan")
    seen: list[tuple[int, int, str]] = []
    with Library.open(data_dir) as lib:
        report = lib.import_pdfs(
            [inbox], progress=lambda n, total, path: seen.append((n, total, path)), cancelled=lambda: len(seen) >= 2
        )
        assert report.cancelled and report.lines() == ["Import cancelled; the library is unchanged."]
        assert len(lib) == 0
    assert [s[:2] for s in seen] == [(0, 3), (1, 3)]
    assert not any((data_dir / "files").rglob("*.pdf"))  # the copies made before the cancel are gone
    with Library.open(data_dir) as lib:
        seen.clear()
        report = lib.import_pdfs([inbox], progress=lambda n, total, path: seen.append((n, total, path)))
        assert len(report.added) == 3 and report.ok and len(lib) == 3
        assert all(r.format == "pdf" and r.added == 1 and r.added_ids for r in report.reports)
    assert seen[-1] == (3, 3, "")


def test_a_read_only_library_imports_nothing(made, data_dir):
    with Library.open(data_dir):
        pass
    with Library.open(data_dir, readonly=True) as lib:
        from papershelf.core.errors import ReadOnlyLibraryError

        with pytest.raises(ReadOnlyLibraryError, match="read-only; nothing was imported"):
            lib.import_pdfs([made["doi"]])


def test_online_completes_a_new_paper_by_its_arxiv_id(made, replay, data_dir):
    replay.route("/arxiv/api/query", RECORDED / "arxiv_query_id_list_1605.08386.xml", query={"id_list": "1605.08386"})
    res = run_cli("import", "--online", str(made["online"]), data_dir=data_dir)
    assert "Traceback" not in res.stderr
    assert res.returncode == 0, res.stdout + res.stderr
    [paper] = listed_papers(data_dir)
    assert paper["arxiv_id"] == "1605.08386"
    assert "completed from arXiv: author, title, year" in res.stdout
    # the record is arXiv's now (the PDF made here says "Scaling Sparse Attention…")
    assert paper["title"] != "Scaling Sparse Attention to Long Documents" and not paper["title_derived"]
    assert paper["year"] == 2016 and paper["authors"]
    assert any(r.query.get("id_list") == ["1605.08386"] or "1605.08386" in str(r.query) for r in replay.requests)


def test_without_online_nothing_is_asked(made, replay, data_dir):
    res = run_cli("import", str(made["online"]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert replay.requests == []
    [paper] = listed_papers(data_dir)
    assert paper["arxiv_id"] == "1605.08386" and paper["year"] is None
