"""Bad files get a clear message naming the file, and the library is left as it was."""

from __future__ import annotations

import codecs
import os
import resource

import pytest

from conftest import FIXTURES, snapshot_files

LISTINGS = FIXTURES / "listings"


@pytest.fixture
def before(seeded, data_dir):
    seeded.compact()
    return snapshot_files(data_dir)


def import_one(library, path):
    [report] = library.import_files([path])
    return report


def assert_refused(library, data_dir, before, path, *phrases):
    report = import_one(library, path)
    assert not report.ok and report.added == 0
    assert str(path) in report.error
    for phrase in phrases:
        assert phrase in report.error
    assert snapshot_files(data_dir) == before
    assert len(library) == 372


def test_empty_file(seeded, data_dir, before, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert_refused(seeded, data_dir, before, path, "is empty")


def test_whitespace_only_file(seeded, data_dir, before, tmp_path):
    path = tmp_path / "blank.txt"
    path.write_bytes(b"\n\n   \r\n\t\n")
    assert_refused(seeded, data_dir, before, path, "is empty")


def test_binary_file(seeded, data_dir, before, tmp_path):
    path = tmp_path / "paper.pdf"
    path.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 40)
    assert_refused(seeded, data_dir, before, path, "binary file")


def test_a_directory(seeded, data_dir, before, tmp_path):
    assert_refused(seeded, data_dir, before, tmp_path, "is a folder")


def test_missing_file(seeded, data_dir, before, tmp_path):
    assert_refused(seeded, data_dir, before, tmp_path / "nope.txt", "no such file")


def test_a_pipe_is_not_read_forever(seeded, data_dir, before, tmp_path):
    path = tmp_path / "fifo.txt"
    os.mkfifo(path)
    assert_refused(seeded, data_dir, before, path, "not a regular file")


def test_header_only_listing(seeded, data_dir, before, tmp_path):
    path = tmp_path / "header.txt"
    path.write_text("Daily Papers\n\n", encoding="utf-8")
    assert_refused(seeded, data_dir, before, path, "no papers were found")


def test_unreadable_file(seeded, data_dir, before, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file; the permission path is exercised as a normal user")
    path = tmp_path / "secret.txt"
    path.write_text("Daily Papers\n")
    path.chmod(0)
    assert_refused(seeded, data_dir, before, path, "cannot read it")


def test_latin1_listing_is_read_with_a_note(library, tmp_path):
    path = LISTINGS / "latin1.txt"
    report = import_one(library, path)
    assert report.ok and report.added == 2
    assert any("not UTF-8" in str(p) and "Windows-1252" in str(p) for p in report.problems)
    authors = [a for p in library.papers() for a in p.authors]
    assert "François Gatine" in authors and "Pedro Larrañaga" in authors


@pytest.mark.parametrize("name, note", [("utf16-bom.txt", None), ("utf16le-nobom.txt", "UTF-16-LE")])
def test_utf16_listing(library, name, note):
    report = import_one(library, LISTINGS / name)
    assert report.ok and report.added == 2
    assert "Mauricio Álvarez" in [a for p in library.papers() for a in p.authors]
    notes = [str(p) for p in report.problems]
    assert any(note in n for n in notes) if note else notes == []


def test_cut_off_listing_imports_what_is_whole_and_reports_the_rest(library):
    path = LISTINGS / "cut-off.txt"
    report = import_one(library, path)
    assert report.ok and report.added == 2
    assert [p.line for p in report.problems] == [13, 15]
    assert all(str(path) in str(p) for p in report.problems)


def test_messy_listing(library):
    """BOM, CRLF, trailing spaces, runs of blank lines, no header, odd lines."""
    path = LISTINGS / "messy-crlf-bom.txt"
    assert path.read_bytes().startswith(codecs.BOM_UTF8) and b"\r\n" in path.read_bytes()
    report = import_one(library, path)
    assert report.ok and report.added == 3 and report.format == "paper-search"
    by_line = {p.line: p for p in report.problems}
    assert "Sign in to bookmark" in by_line[9].message
    papers = list(library.papers())
    assert papers[0].authors == ["Kunvar Thaman"]
    assert (papers[1].area, papers[1].subarea) == ("Applications", "Neuroscience, Cognitive Science")
    assert papers[2].area == "" and papers[2].authors == []


@pytest.mark.slow
def test_fifty_megabytes_of_one_paragraph(seeded, data_dir, before, tmp_path):
    path = tmp_path / "huge.txt"
    word = b"lorem ipsum dolor sit amet, "
    path.write_bytes(b"Daily Papers\n\n" + word * (50 * 2**20 // len(word)))
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert_refused(seeded, data_dir, before, path, "no papers were found", "too long to be an abstract")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mb < 400, f"reading a 50 MB file cost {grown_mb:.0f} MB"


@pytest.mark.slow
def test_fifty_megabytes_of_binary(seeded, data_dir, before, tmp_path):
    path = tmp_path / "huge.bin"
    path.write_bytes(os.urandom(50 * 2**20))
    assert_refused(seeded, data_dir, before, path, "binary file")


def test_a_bib_file_without_entries_is_named_and_changes_nothing(seeded, data_dir, before, tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text("These are my notes, not BibTeX.\n")
    assert_refused(seeded, data_dir, before, path, "no BibTeX entries were found")


def test_a_bib_file_whose_every_entry_is_broken_reports_each_line(seeded, data_dir, before, tmp_path):
    path = tmp_path / "broken.bib"
    path.write_text("@article{a, title={never closed,\n\n@misc{b, title = {also {unbalanced}\n")
    assert_refused(seeded, data_dir, before, path, "could not be read")
