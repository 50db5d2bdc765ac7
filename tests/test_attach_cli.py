"""`papershelf attach / detach / files / open` and `show`'s files (issue 24 items 1 and 4), through
the installed command in a real subprocess, with real PDFs made by pdflatex (tests/pdfs.py)."""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from conftest import listed_papers, run_cli
from papershelf.core.library import Library
from pdfs import doi_paper, encrypted_pdf, not_a_pdf


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("made")
    return {"doi": doi_paper(d), "encrypted": encrypted_pdf(d), "html": not_a_pdf(d)}


@pytest.fixture
def one_paper(data_dir, tmp_path) -> str:
    """A library of one paper (from a .bib file, no file yet); its id."""
    bib = tmp_path / "one.bib"
    bib.write_text("@article{one2024,\n  title = {One Paper},\n  author = {Ann Author},\n  year = {2024},\n}\n")
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    return listed_papers(data_dir)[0]["id"]


@pytest.fixture
def opener(tmp_path) -> tuple[dict[str, str], Path]:
    """$PAPERSHELF_OPENER: a tiny real script that writes down the path it was given."""
    log = tmp_path / "opened.txt"
    script = tmp_path / "fake-viewer"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{log}"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PAPERSHELF_OPENER": str(script)}, log


def test_attach_copies_into_the_library_and_files_lists_it(made, one_paper, data_dir):
    res = run_cli("attach", one_paper, str(made["doi"]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Attached 1 file to" in res.stdout and "copied into the library" in res.stdout
    copy = data_dir / "files" / "one2024" / "doi-paper.pdf"  # the folder is the citation key's
    assert copy.read_bytes() == made["doi"].read_bytes()
    listed = run_cli("files", one_paper, data_dir=data_dir)
    assert listed.returncode == 0
    assert re.fullmatch(r"1\. doi-paper\.pdf  \(\d+\.\d KB, 3 pages\)", listed.stdout.strip()), listed.stdout
    # the same content again: not twice
    again = run_cli("attach", one_paper, str(made["doi"]), data_dir=data_dir)
    assert again.returncode == 0 and "has this file already" in again.stdout
    assert len(run_cli("files", one_paper, data_dir=data_dir).stdout.strip().splitlines()) == 1
    shown = run_cli("show", one_paper, data_dir=data_dir).stdout
    assert "files:" in shown and "doi-paper.pdf" in shown


def test_a_non_pdf_and_an_encrypted_pdf_attach_with_what_can_be_said(made, one_paper, data_dir):
    res = run_cli(
        "attach", one_paper, str(made["html"]), str(made["encrypted"]), "--label", "supplement", data_dir=data_dir
    )
    assert res.returncode == 0, res.stderr
    assert "Attached 2 files" in res.stdout
    assert "encrypted.pdf is encrypted" in res.stdout  # a note, not a failure
    lines = [line.strip() for line in run_cli("files", one_paper, data_dir=data_dir).stdout.splitlines()]
    assert lines[0] == "1. page.pdf  (63 bytes, supplement)"  # no page count: not a PDF
    assert re.fullmatch(r"2\. encrypted\.pdf  \(\d+\.\d KB, supplement\)", lines[1]), lines


def test_a_file_that_does_not_exist_is_named_and_nothing_changes(one_paper, data_dir, tmp_path):
    res = run_cli("attach", one_paper, str(tmp_path / "nope.pdf"), data_dir=data_dir)
    assert res.returncode == 1
    assert f"{tmp_path / 'nope.pdf'}: no such file" in res.stderr and "Traceback" not in res.stderr
    assert "has no files" in run_cli("files", one_paper, data_dir=data_dir).stdout


def test_a_linked_file_that_went_missing_is_shown_missing_and_open_says_so(made, one_paper, data_dir, tmp_path, opener):
    env, log = opener
    moved = tmp_path / "elsewhere" / "paper.pdf"
    moved.parent.mkdir()
    moved.write_bytes(made["doi"].read_bytes())
    assert run_cli("attach", one_paper, str(moved), "--link", data_dir=data_dir).returncode == 0
    assert not (data_dir / "files").exists()  # linked: nothing copied
    moved.unlink()
    listed = run_cli("files", one_paper, data_dir=data_dir)
    assert listed.returncode == 0
    assert "linked" in listed.stdout and f"MISSING: not found at {moved}" in listed.stdout
    res = run_cli("open", one_paper, data_dir=data_dir, env=env)
    assert res.returncode == 1
    assert f"file 1 of {one_paper} is missing: {moved} (the linked file was moved or deleted)" in res.stderr
    assert not log.exists()  # the viewer was not run


def test_open_runs_the_viewer_with_the_files_path_and_records_it(made, one_paper, data_dir, opener):
    env, log = opener
    run_cli("attach", one_paper, str(made["doi"]), data_dir=data_dir)
    res = run_cli("open", one_paper, data_dir=data_dir, env=env)
    assert res.returncode == 0, res.stderr
    assert log.read_text().splitlines() == [str(data_dir / "files" / "one2024" / "doi-paper.pdf")]
    with Library.open(data_dir, readonly=True) as lib:
        assert lib.get(one_paper).opened_at
    bad = run_cli("open", one_paper, "2", data_dir=data_dir, env=env)
    assert bad.returncode == 2 and "has 1 file; there is no file number 2" in bad.stderr


def test_a_viewer_that_fails_is_said(made, one_paper, data_dir):
    run_cli("attach", one_paper, str(made["doi"]), data_dir=data_dir)
    res = run_cli("open", one_paper, data_dir=data_dir, env={"PAPERSHELF_OPENER": "false"})
    assert res.returncode == 1 and "false exited with 1" in res.stderr and "Traceback" not in res.stderr
    gone = run_cli("open", one_paper, data_dir=data_dir, env={"PAPERSHELF_OPENER": "/no/such/viewer"})
    assert gone.returncode == 1 and "there is no '/no/such/viewer' program" in gone.stderr


def test_detach_keeps_the_file_and_undo_brings_it_back(made, one_paper, data_dir):
    run_cli("attach", one_paper, str(made["doi"]), str(made["html"]), data_dir=data_dir)
    res = run_cli("detach", one_paper, "1", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Removed file 1 (doi-paper.pdf)" in res.stdout and "The copy stays at" in res.stdout
    assert (data_dir / "files" / "one2024" / "doi-paper.pdf").exists()
    assert run_cli("files", one_paper, data_dir=data_dir).stdout.strip().startswith("1. page.pdf")
    undone = run_cli("undo", data_dir=data_dir)
    assert "Remove 1 file from 'One Paper'" in undone.stdout
    listed = run_cli("files", one_paper, data_dir=data_dir).stdout
    assert "doi-paper.pdf" in listed and "MISSING" not in listed
    bad = run_cli("detach", one_paper, "5", data_dir=data_dir)
    assert bad.returncode == 2 and "there is no file number 5" in bad.stderr


def test_a_read_only_library_attaches_nothing_and_says_so(made, one_paper, data_dir, tmpfs, opener):
    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root)")
    env, log = opener
    run_cli("attach", one_paper, str(made["doi"]), data_dir=data_dir)
    with tmpfs("16m") as mount:
        folder = mount.path / "library"
        shutil.copytree(data_dir, folder)
        mount.remount_readonly()
        res = run_cli("attach", one_paper, str(made["html"]), data_dir=folder)
        assert res.returncode == 1 and "Traceback" not in res.stderr
        assert "read-only" in res.stderr or "cannot" in res.stderr.lower()
        # reading still works: the files are listed and open (when it was opened is not recorded)
        assert "doi-paper.pdf" in run_cli("files", one_paper, data_dir=folder).stdout
        opened = run_cli("open", one_paper, data_dir=folder, env=env)
        assert opened.returncode == 0, opened.stderr
        assert log.read_text().strip() == str(folder / "files" / "one2024" / "doi-paper.pdf")
        assert "not recorded" in opened.stderr
