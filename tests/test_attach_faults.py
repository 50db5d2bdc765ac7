"""What the review of issue 24 found in attaching and importing files, each through the command
line or the library as a user meets it: a viewer that keeps running, a cancelled import that
must not delete a file Redo needs, long non-ASCII names, two PDFs of one paper in one import,
and `file` fields that must come back as they went out."""

from __future__ import annotations

import os
import shutil
import signal
import stat
from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.library import Library
from pdfs import doi_paper, paper_pdf


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pdfs")
    return {
        "doi": doi_paper(folder),
        "v1": paper_pdf(folder, "v1.pdf", title="One Paper Twice", doi="10.1234/same.doi"),
        "v2": paper_pdf(folder, "v2.pdf", title="One Paper Twice", doi="10.1234/same.doi", pages=["A newer version."]),
    }


def test_open_returns_when_the_opener_leaves_a_viewer_running(made, data_dir, tmp_path):
    """xdg-open may leave the viewer running with the opener's output: `open` must not wait for it."""
    assert run_cli("import", str(made["doi"]), data_dir=data_dir).returncode == 0
    with Library.open(data_dir, readonly=True) as lib:
        (pid,) = lib.ids()
    pidfile = tmp_path / "viewer.pid"
    script = tmp_path / "opener"
    script.write_text(f'#!/bin/sh\nsleep 300 &\necho $! > "{pidfile}"\nexit 0\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    try:
        res = run_cli("open", pid, data_dir=data_dir, env={"PAPERSHELF_OPENER": str(script)})
        assert res.returncode == 0, res.stderr
        with Library.open(data_dir, readonly=True) as lib:
            assert lib.get(pid).opened_at
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def test_a_cancelled_import_keeps_the_copy_an_undone_import_needs_for_redo(made, data_dir, tmp_path):
    lib = Library.open(data_dir)
    try:
        report = lib.import_pdfs([made["doi"]])
        (pid,) = report.added
        copy = lib.paper_files(pid)[0][1]
        lib.undo()  # the paper goes; its copy stays for Redo
        assert copy.exists() and len(lib) == 0
        calls = iter([False, True, True])  # cancelled once the PDF was read and copied
        again = lib.import_pdfs([made["doi"]], cancelled=lambda: next(calls))
        assert again.cancelled and len(lib) == 0
        assert copy.exists()  # it was there before this import: not this import's to remove
        lib.redo()
        [(_item, where, there)] = lib.paper_files(pid)
        assert there and where == copy
    finally:
        lib.close()


def test_a_long_non_ascii_name_is_attached_under_a_name_the_disk_takes(made, data_dir, tmp_path):
    assert run_cli("import", str(made["doi"]), data_dir=data_dir).returncode == 0
    with Library.open(data_dir, readonly=True) as lib:
        (pid,) = lib.ids()
    long = tmp_path / ("論" * 80 + ".pdf")  # 244 bytes: a valid name whose temporary copy was not
    shutil.copy(made["v1"], long)
    res = run_cli("attach", pid, str(long), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Attached 1 file" in res.stdout
    with Library.open(data_dir, readonly=True) as lib:
        [_, (_item, where, there)] = lib.paper_files(pid)
    assert there and where.read_bytes() == made["v1"].read_bytes()
    assert where.name.startswith("論論") and where.name.endswith(".pdf") and len(where.name.encode()) <= 150


def test_two_pdfs_of_one_new_paper_make_one_paper_and_the_report_says_so(made, data_dir):
    res = run_cli("import", str(made["v1"]), str(made["v2"]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "1 added as papers" in res.stdout and "1 attached to papers already here" in res.stdout
    assert "a paper of this import" in res.stdout + res.stderr
    with Library.open(data_dir, readonly=True) as lib:
        (pid,) = lib.ids()
        assert [item.name for item, _w, _t in lib.paper_files(pid)] == ["v1.pdf", "v2.pdf"]


def test_exported_file_fields_come_back_whatever_the_names_hold(made, data_dir, tmp_path):
    """Braces in a label, two spaces in a row and a ';' in a name: `export --files` writes a .bib
    that imports into another library with every file found again."""
    assert run_cli("import", str(made["doi"]), data_dir=data_dir).returncode == 0
    with Library.open(data_dir, readonly=True) as lib:
        (pid,) = lib.ids()
    odd = tmp_path / "we}ird;na:me  two  spaces 100%.pdf"
    shutil.copy(made["v1"], odd)
    assert run_cli("attach", pid, str(odd), "--label", "my {label", data_dir=data_dir).returncode == 0
    linked = tmp_path / "Ünïcode  two  spaces.pdf"
    shutil.copy(made["v2"], linked)
    assert run_cli("attach", pid, str(linked), "--link", data_dir=data_dir).returncode == 0
    out = tmp_path / "out.bib"
    res = run_cli("export", "--files", "-o", str(out), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    other = tmp_path / "other"
    back = run_cli("import", str(out), data_dir=other)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "not found" not in back.stdout + back.stderr
    with Library.open(other, readonly=True) as lib:
        (pid2,) = lib.ids()
        found = lib.paper_files(pid2)
    assert len(found) == 3 and all(there for _i, _w, there in found)


def test_a_relative_windows_path_in_a_file_field_is_found(made, tmp_path, data_dir):
    (tmp_path / "papers").mkdir()
    shutil.copy(made["v1"], tmp_path / "papers" / "x.pdf")
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{a, title={From JabRef on Windows}, author={Doe, Jane}, year={2020}, file={:papers\\\\x.pdf:PDF}}\n"
        "@article{b, title={From Zotero on Windows}, author={Roe, Rich}, year={2021}, file={papers\\x.pdf}}\n",
        "utf-8",
    )
    res = run_cli("import", str(bib), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "not found" not in res.stdout + res.stderr
    with Library.open(data_dir, readonly=True) as lib:
        assert all(len(lib.paper_files(pid)) == 1 for pid in lib.ids()) and len(lib) == 2
