"""BibTeX `file` fields (issue 24 item 6): JabRef's, Zotero/Better BibTeX's and Mendeley's forms read
on import (the files there attached, linked; the missing ones named), and `export --files` writing
one that imports back with the attachment found. Through the installed command, with real PDFs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import listed_papers, run_cli
from papershelf.core.importers.filefield import file_field, file_paths
from pdfs import arxiv_paper, doi_paper


@pytest.mark.parametrize(
    ("value", "paths"),
    [
        (":papers/x.pdf:PDF", ["papers/x.pdf"]),  # JabRef, relative
        ("Full text:papers/x.pdf:PDF;Slides:talk/s.pdf:PDF", ["papers/x.pdf", "talk/s.pdf"]),
        (r":C\:\\Users\\me\\x.pdf:PDF", [r"C:\Users\me\x.pdf"]),  # JabRef on Windows, escaped
        (r":papers/a\;b.pdf:PDF", ["papers/a;b.pdf"]),
        ("/home/u/Zotero/storage/AB12/a.pdf;/home/u/b.pdf", ["/home/u/Zotero/storage/AB12/a.pdf", "/home/u/b.pdf"]),
        (r"C:\Users\me\Zotero\a.pdf", [r"C:\Users\me\Zotero\a.pdf"]),  # Zotero on Windows: no escapes
        (r":C$\backslash$:/Users/me/Documents/Mendeley/a.pdf:pdf", ["C:/Users/me/Documents/Mendeley/a.pdf"]),
        (":home/u/Mendeley/a.pdf:pdf", ["home/u/Mendeley/a.pdf"]),  # Mendeley drops the "/": resolve() tries it
        ("", []),
    ],
)
def test_each_tools_form_gives_its_paths(value, paths):
    assert file_paths(value) == paths


def test_a_written_field_reads_back_with_the_odd_characters():
    field = file_field([("", Path("/data/My Papers/a;b:c.pdf")), ("slides", Path("/data/x.PDF"))])
    assert field == r":/data/My Papers/a\;b\:c.pdf:PDF;slides:/data/x.PDF:PDF"
    assert file_paths(field) == ["/data/My Papers/a;b:c.pdf", "/data/x.PDF"]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("made")
    return {"doi": doi_paper(d), "arxiv": arxiv_paper(d)}


def files_of(data_dir: Path, pid: str) -> list[str]:
    res = run_cli("files", pid, data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return [line.strip() for line in res.stdout.splitlines()]


def test_import_attaches_the_files_there_linked_and_names_the_missing(made, tmp_path, data_dir):
    bibdir = tmp_path / "thesis"
    (bibdir / "papers").mkdir(parents=True)
    zotero = tmp_path / "Zotero" / "storage" / "AB12CD"
    zotero.mkdir(parents=True)
    shutil.copy(made["doi"], bibdir / "papers" / "x.pdf")
    shutil.copy(made["arxiv"], zotero / "a.pdf")
    mendeley = str(bibdir / "papers" / "x.pdf").lstrip("/")  # Mendeley writes no leading "/"
    bib = bibdir / "refs.bib"
    bib.write_text(
        "@article{jab, title={JabRef Paper}, author={A B}, year={2020},\n"
        "  file={:papers/x.pdf:PDF;Slides:papers/gone.pdf:PDF}}\n"
        f"@article{{zot, title={{Zotero Paper}}, author={{C D}}, year={{2021}},\n  file={{{zotero / 'a.pdf'}}}}}\n"
        f"@article{{men, title={{Mendeley Paper}}, author={{E F}}, year={{2022}},\n  file={{:{mendeley}:pdf}}}}\n"
        "@article{far, title={Far Paper}, author={G H}, year={2023}, file={/nowhere/else.pdf}}\n",
        "utf-8",
    )
    res = run_cli("import", str(bib), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "2 file(s) named in the .bib were not found: papers/gone.pdf, /nowhere/else.pdf" in res.stdout
    papers = {p["citekey"]: p["id"] for p in listed_papers(data_dir)}
    assert (
        files_of(data_dir, papers["jab"])[0].startswith("1. x.pdf") and "linked" in files_of(data_dir, papers["jab"])[0]
    )
    assert files_of(data_dir, papers["zot"])[0].startswith("1. a.pdf")
    assert files_of(data_dir, papers["men"])[0].startswith("1. x.pdf")
    assert "has no files" in files_of(data_dir, papers["far"])[0]
    assert not (data_dir / "files").exists()  # linked, not copied: the user's folder is their store
    # the raw field goes back out as it came (no --files)
    out = run_cli("export", "--ids", papers["jab"], "-o", "-", data_dir=data_dir).stdout
    assert re.search(r"\n  file *= \{:papers/x\.pdf:PDF;Slides:papers/gone\.pdf:PDF\},\n", out), out
    # the same .bib again attaches nothing twice
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    assert len(files_of(data_dir, papers["jab"])) == 1


def test_export_files_writes_a_field_that_imports_back_with_the_attachment(made, tmp_path, data_dir):
    assert run_cli("import", str(made["doi"]), data_dir=data_dir).returncode == 0
    [paper] = listed_papers(data_dir)
    out = tmp_path / "out.bib"
    res = run_cli("export", "--files", "-o", str(out), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    copy = data_dir / "files" / paper["id"] / "doi-paper.pdf"
    assert f"file = {{:{copy}:PDF}}" in out.read_text("utf-8")
    # without --files no field is written for it
    plain = run_cli("export", "-o", "-", data_dir=data_dir).stdout
    assert "file =" not in plain
    # into another library: the paper comes with its file found (linked to the first library's copy)
    other = tmp_path / "other"
    back = run_cli("import", str(out), data_dir=other)
    assert back.returncode == 0 and "not found" not in back.stdout
    [again] = listed_papers(other)
    [line] = files_of(other, again["id"])
    assert line.startswith("1. doi-paper.pdf") and "3 pages, linked" in line and "MISSING" not in line


def test_export_files_with_ris_is_a_usage_error(data_dir, tmp_path):
    res = run_cli("export", "--files", "--format", "ris", "-o", str(tmp_path / "x.ris"), data_dir=data_dir)
    assert res.returncode == 2 and "--files is for BibTeX output" in res.stderr
