"""The files commands and the PDF reader in this process (issue 24): the same commands the
subprocess tests run (`attach`, `files`, `open`, `detach`, `show`, `import` of PDFs, `export
--files`, `reindex`, `search`, `fetch-pdf`) through `papershelf.cli.main`, and the reader's own
functions (core/pdf/reading.py, which the app runs in its worker process) on real PDFs: what each
prints and does. Coverage traces only this process, so these also keep the ratchet honest."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from papershelf import cli
from papershelf.core.pdf import reading
from pdfs import arxiv_paper, doi_paper, encrypted_pdf, image_only_pdf, junk_title_paper, truncated_pdf
from replay_server import Reply, replay_fixture  # noqa: F401  (the `replay` fixture)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pdfs")
    return {
        "doi": doi_paper(folder),
        "arxiv": arxiv_paper(folder),
        "encrypted": encrypted_pdf(folder),
        "truncated": truncated_pdf(folder),
        "scan": image_only_pdf(folder),
        "junk": junk_title_paper(folder),
    }


def run(capsys, data_dir: Path, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data_dir), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_files_commands_in_process(made, data_dir, tmp_path, capsys, monkeypatch):
    code, out, err = run(capsys, data_dir, "import", str(made["doi"]), str(made["encrypted"]), str(made["truncated"]))
    assert code == 1 and "1 skipped" in out and "truncated.pdf" in out + err  # damaged: named, not imported
    code, out, _ = run(capsys, data_dir, "list", "--json")
    papers = {p["title"]: p["id"] for p in json.loads(out)}
    pid = papers["Priors for Diffusion in Sparse Graphs"]
    assert "encrypted" in papers  # imported under its file name

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes", "utf-8")
    code, out, err = run(capsys, data_dir, "attach", pid, str(notes), "--label", "notes")
    assert code == 0 and "Attached 1 file" in out, err
    code, out, err = run(capsys, data_dir, "attach", pid, str(made["arxiv"]), "--link")
    assert code == 0 and "Attached 1 file" in out, err
    code, out, _ = run(capsys, data_dir, "attach", pid, str(made["doi"]))
    assert "already" in out
    code, out, err = run(capsys, data_dir, "attach", pid, str(tmp_path / "nope.pdf"))
    assert code != 0 and "no such file" in out + err

    code, out, _ = run(capsys, data_dir, "files", pid)
    assert code == 0 and out.splitlines()[0].strip().startswith("1. doi-paper.pdf") and "3 pages" in out
    assert "notes" in out and "linked" in out

    log = tmp_path / "opened.txt"
    opener = tmp_path / "viewer"
    opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{log}"\n')
    opener.chmod(opener.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PAPERSHELF_OPENER", str(opener))
    code, out, err = run(capsys, data_dir, "open", pid, "3")
    assert code == 0, err
    assert log.read_text().strip() == str(made["arxiv"].resolve())
    code, out, _ = run(capsys, data_dir, "show", pid)
    assert "doi-paper.pdf" in out and "notes.txt" in out

    code, out, _ = run(capsys, data_dir, "export", "--files", "-o", "-")
    assert "file = {" in out and "doi-paper.pdf:PDF" in out

    code, out, err = run(capsys, data_dir, "reindex")
    assert code == 0 and "Read the text of" in err
    code, out, _ = run(capsys, data_dir, "search", "fulltext:zyzzogeton")
    assert out.startswith(pid) and "p. 3" in out

    code, out, _ = run(capsys, data_dir, "detach", pid, "2")
    assert code == 0 and "Removed file 2 (notes.txt)" in out
    code, out, _ = run(capsys, data_dir, "files", pid)
    assert "notes.txt" not in out


def test_fetch_pdf_in_process(made, data_dir, tmp_path, capsys, monkeypatch, replay):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={On arXiv}, author={Doe, Jane}, year={2024}, eprint={2401.01234},"
                   " archiveprefix={arXiv}}\n", "utf-8")  # fmt: skip
    assert run(capsys, data_dir, "import", str(bib))[0] == 0
    for key, value in {**replay.env(), "PAPERSHELF_FETCH_SECONDS": "20"}.items():
        monkeypatch.setenv(key, value)
    replay.route("/arxiv/pdf/2401.01234", Reply(made["arxiv"], 200, {"Content-Type": "application/pdf"}))
    code, out, err = run(capsys, data_dir, "fetch-pdf", "--all-missing")
    assert code == 0, out + err
    assert "1 PDF attached" in out
    code, out, _ = run(capsys, data_dir, "fetch-pdf", "--all-missing")
    assert code == 0 and "nothing to fetch" in out


def test_the_reader_in_process(made):
    info = reading.read_info(made["arxiv"])
    assert (info.title, info.arxiv_id, info.pages) == ("Scaling Sparse Attention to Long Documents", "2401.01234", 2)
    info = reading.read_info(made["doi"])
    assert info.doi == "10.1234/papershelf.2024.5678" and info.title == "Priors for Diffusion in Sparse Graphs"
    assert reading.read_info(made["junk"]).title != ""  # the largest text, not "Microsoft Word - …"
    pages = reading.read_pages(made["doi"])
    assert "zyzzogeton" in pages.texts[2]
    assert not "".join(reading.read_pages(made["scan"]).texts).strip()
    for bad, words in ((made["encrypted"], "encrypted"), (made["truncated"], "not a readable PDF")):
        with pytest.raises(reading.PdfProblem, match=words):
            reading.read_info(bad)


def test_the_worker_answers_in_words(made, tmp_path):
    """What the reader's process answers each request (its loop runs it in the child)."""
    from papershelf.core.pdf import worker

    info = worker.answer({"op": "info", "path": str(made["doi"])})
    assert info["ok"] and info["info"]["doi"] == "10.1234/papershelf.2024.5678"
    text = worker.answer({"op": "text", "path": str(made["doi"]), "first": 2, "last": 3})
    assert text["ok"] and "zyzzogeton" in text["pages"][0]
    locked = worker.answer({"op": "info", "path": str(made["encrypted"])})
    assert not locked["ok"] and "encrypted" in locked["problem"] and not locked.get("passing")
    gone = worker.answer({"op": "text", "path": str(tmp_path / "gone.pdf")})
    assert not gone["ok"] and gone["passing"] and "cannot be read" in gone["problem"]
    assert worker.memory_cap() > 0


def test_file_fields_of_three_programs_attach_what_is_there(made, tmp_path, data_dir):
    """JabRef's, Zotero's and Mendeley's `file` fields, read in this process: the files there
    attached (linked), the one missing named."""
    from papershelf.core.library import Library

    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "a b.pdf").write_bytes(made["doi"].read_bytes())
    mendeley = str(made["arxiv"].resolve()).lstrip("/")
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{j, title={From JabRef}, author={Doe, Jane}, year={2020},"
        " file={Main:papers/a b.pdf:PDF;:papers/missing.pdf:PDF}}\n"
        f"@article{{z, title={{From Zotero}}, author={{Roe, Rich}}, year={{2021}}, file={{{made['arxiv']}}}}}\n"
        f"@article{{m, title={{From Mendeley}}, author={{Poe, Ed}}, year={{2022}}, file={{:{mendeley}:pdf}}}}\n",
        "utf-8",
    )
    with Library.open(data_dir) as lib:
        [report] = lib.import_files([bib])
        assert report.added == 3
        said = " ".join(p.message for p in report.problems)
        assert "1 file(s) named in the .bib were not found: papers/missing.pdf" in said
        files = {p.citekey: [(i.name, i.linked, there) for i, _w, there in lib.paper_files(p.id)] for p in lib.papers()}
    assert files == {
        "j": [("a b.pdf", True, True)],
        "z": [("arxiv-paper.pdf", True, True)],
        "m": [("arxiv-paper.pdf", True, True)],
    }


def test_a_session_of_reading_commands_in_process(made, data_dir, capsys, seeds):
    """The everyday commands around a paper with its PDF, in this process: what each says."""
    assert run(capsys, data_dir, "import", str(seeds[0]), str(made["doi"]))[0] == 0
    _code, out, _ = run(capsys, data_dir, "list", "--json")
    pid = next(p["id"] for p in json.loads(out) if p["title"] == "Priors for Diffusion in Sparse Graphs")
    assert run(capsys, data_dir, "tag", pid, "--add", "diffusion, to cite")[0] == 0
    assert run(capsys, data_dir, "status", pid, "reading")[0] == 0
    assert run(capsys, data_dir, "note", pid, "page 3 has the word")[0] == 0
    assert run(capsys, data_dir, "rate", pid, "4")[0] == 0
    assert run(capsys, data_dir, "title", pid, "Priors for Diffusion")[0] == 0
    assert run(capsys, data_dir, "key", pid, "lovelace2024priors")[0] == 0
    assert run(capsys, data_dir, "list-add", "thesis", pid)[0] == 0
    _code, out, _ = run(capsys, data_dir, "lists")
    assert "thesis" in out
    _code, out, _ = run(capsys, data_dir, "show", pid, "--json")
    shown = json.loads(out)
    assert shown["tags"] == ["diffusion", "to cite"] and shown["status"] == "reading" and shown["rating"] == 4
    assert shown["citekey"] == "lovelace2024priors" and shown["files"][0]["path"].endswith("doi-paper.pdf")
    _code, out, _ = run(capsys, data_dir, "tags")
    assert "diffusion" in out
    _code, out, _ = run(capsys, data_dir, "undo", "--list")
    assert "list 'thesis'" in out
    assert run(capsys, data_dir, "undo")[0] == 0
    assert run(capsys, data_dir, "redo")[0] == 0
    assert run(capsys, data_dir, "list-remove", "thesis", pid)[0] == 0
    _code, out, _ = run(capsys, data_dir, "list", "--status", "reading", "--sort", "opened")
    assert "Priors for Diffusion" in out
    assert run(capsys, data_dir, "delete", pid, "--yes")[0] == 0
    _code, out, _ = run(capsys, data_dir, "list", "--json")
    assert pid not in out
