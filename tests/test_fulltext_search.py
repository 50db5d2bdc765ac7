"""Full-text search of attached PDFs (issue 24, item 5), through the command line a user types:
real PDFs made by pdflatex (tests/pdfs.py), attached to real papers, read by `papershelf
reindex` into this machine's text cache, searched by `papershelf search`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_ok, local_dir, run_cli
from papershelf.core.library import Library, Query
from pdfs import doi_paper, encrypted_pdf, image_only_pdf, long_pdf, paper_pdf, text_bomb_pdf

BIB = """
@article{diffusion, title={Priors for Diffusion in Sparse Graphs}, author={Ada Lovelace},
  abstract={We study priors for diffusion on sparse graphs.}, year={2024}}
@article{other, title={Counting Sheep at Night}, author={Bob Smith},
  abstract={Sheep are counted, one by one, until sleep comes.}, year={2023}}
"""


def make_library(data_dir: Path, tmp_path: Path, bib: str = BIB) -> dict[str, str]:
    """A library of the entries in `bib`; citation key → paper id."""
    src = tmp_path / "papers.bib"
    src.write_text(bib, "utf-8")
    cli_ok("import", str(src), data_dir=data_dir)
    with Library.open(data_dir) as lib:
        return {p.citekey: p.id for p in lib.papers()}


def attach(data_dir: Path, paper_id: str, *files: Path) -> None:
    with Library.open(data_dir) as lib:
        done = lib.attach_files(paper_id, files)
        assert len(done.added) == len(files), done


def cache_entries(data_dir: Path) -> list[Path]:
    return sorted((local_dir(data_dir) / "fulltext").glob("*/*.json"))


@pytest.fixture(scope="module")
def pdf_folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pdfs")


@pytest.fixture(scope="module")
def rare_pdf(pdf_folder) -> Path:
    return doi_paper(pdf_folder)


def test_a_word_only_on_page_3_of_the_pdf_is_found_with_its_page(data_dir, tmp_path, rare_pdf):
    ids = make_library(data_dir, tmp_path)
    attach(data_dir, ids["diffusion"], rare_pdf)

    before = run_cli("search", "zyzzogeton", data_dir=data_dir)
    assert before.returncode == 0, before.stderr
    assert "0 papers match" in before.stdout
    assert "1 PDF is not searchable yet; run 'papershelf reindex'" in before.stderr  # search only reads
    assert not cache_entries(data_dir)

    done = cli_ok("reindex", data_dir=data_dir)
    assert "Read the text of 1 PDF for search." in done.stderr

    found = cli_ok("search", "zyzzogeton", data_dir=data_dir)
    assert found.stdout.startswith(ids["diffusion"])
    assert "[in the PDF]" in found.stdout.splitlines()[0]  # it matched only in its PDF
    assert "p. 3: …Here the «zyzzogeton» appears, on page three only" in found.stdout
    assert "1 paper matches" in found.stdout
    assert "not searchable yet" not in found.stderr

    rows = json.loads(cli_ok("search", "--json", "fulltext:zyzzogeton", data_dir=data_dir).stdout)
    assert [(r["id"], r["fulltext_only"]) for r in rows] == [(ids["diffusion"], True)]
    assert rows[0]["snippet"].startswith("p. 3: …Here the zyzzogeton appears")

    # `fulltext:` searches only the PDFs: a word of the paper's title is not found there
    # unless its PDF has it, and the words of the other paper's abstract never are
    assert json.loads(cli_ok("search", "--json", "fulltext:sheep", data_dir=data_dir).stdout) == []
    assert [r["id"] for r in json.loads(cli_ok("search", "--json", "sheep", data_dir=data_dir).stdout)] == [
        ids["other"]
    ]
    assert [r["id"] for r in json.loads(cli_ok("search", "--json", "pdf:method", data_dir=data_dir).stdout)] == [
        ids["diffusion"]
    ]
    # a phrase finds its words in the PDFs (which keep no positions), and still in order in records
    phrase = cli_ok("search", '"zyzzogeton appears"', data_dir=data_dir)
    assert phrase.stdout.startswith(ids["diffusion"]) and "plain words" not in phrase.stdout
    in_order = json.loads(cli_ok("search", "--json", '"sleep comes"', data_dir=data_dir).stdout)
    assert [r["id"] for r in in_order] == [ids["other"]]
    assert json.loads(cli_ok("search", "--json", '"comes sleep"', data_dir=data_dir).stdout) == []


def test_the_index_catches_up_on_texts_read_while_it_was_closed(data_dir, tmp_path, rare_pdf):
    """The text read changes no library generation: the index finds it by the paper's digest."""
    ids = make_library(data_dir, tmp_path)
    cli_ok("search", "sheep", data_dir=data_dir)  # the index is built, without any PDF
    attach(data_dir, ids["diffusion"], rare_pdf)
    cli_ok("search", "sheep", data_dir=data_dir)  # ...and caught up with the attachment, still unread
    with Library.open(data_dir) as lib:  # read, the index closed
        assert lib.extract_fulltext().read == 1
    found = json.loads(cli_ok("search", "--json", "zyzzogeton", data_dir=data_dir).stdout)
    assert [r["id"] for r in found] == [ids["diffusion"]]


def test_metadata_hits_rank_above_a_pdf_only_hit_that_scores_higher(data_dir, tmp_path, pdf_folder):
    bib = """
@article{meta, title={A Survey of Marsupials}, author={Ada Lovelace},
  abstract={Among the many animals of the island we also saw a quokka once, far away, in the long grass,
  while counting the birds, the lizards, the insects and the plants of the dry season of the year.},
  year={2020}}
@article{pdfonly, title={Island Fieldwork Notes}, author={Bob Smith}, abstract={Notes from fieldwork.}, year={2021}}
@article{title, title={The Quokka}, author={Carl Jones}, abstract={A small animal.}, year={2022}}
"""
    ids = make_library(data_dir, tmp_path, bib)
    crowded = paper_pdf(pdf_folder, "quokka.pdf", pages=["Quokka quokka quokka. The quokka quokka quokka quokka."])
    attach(data_dir, ids["pdfonly"], crowded)
    cli_ok("reindex", data_dir=data_dir)

    with Library.open(data_dir, readonly=True) as lib:
        lib.open_index()
        answer = lib.search(Query("quokka", index_order=True))
    assert answer.fulltext_only == {ids["pdfonly"]}
    # the PDF-only hit outscores the abstract that says "quokka" once in many words...
    assert answer.scores[ids["pdfonly"]] > answer.scores[ids["meta"]]
    # ...and still comes after every paper matching in its record, each group by score
    assert answer.ids == [ids["title"], ids["meta"], ids["pdfonly"]]
    rows = json.loads(cli_ok("search", "--json", "quokka", data_dir=data_dir).stdout)
    assert [r["id"] for r in rows] == answer.ids
    assert [r["fulltext_only"] for r in rows] == [False, False, True]


def test_pdfs_without_text_are_named_and_nothing_breaks(data_dir, tmp_path, pdf_folder, rare_pdf):
    ids = make_library(data_dir, tmp_path)
    scan = image_only_pdf(pdf_folder)
    locked = encrypted_pdf(pdf_folder)
    attach(data_dir, ids["other"], scan, locked)
    attach(data_dir, ids["diffusion"], rare_pdf)

    done = run_cli("reindex", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    said = done.stderr
    assert "Read the text of 1 PDF for search." in said
    assert "2 PDFs have no text to search:" in said
    # named where the library keeps them (copied into files/<key>/)
    assert f"{Path('files', 'other', locked.name)} is encrypted" in said
    assert f"{Path('files', 'other', scan.name)} has no text to search (scanned pages without OCR?)" in said
    assert len(cache_entries(data_dir)) == 3  # their problems are kept: not read again every time

    again = cli_ok("reindex", data_dir=data_dir)
    assert "PDF" not in again.stderr  # nothing left to read
    found = json.loads(cli_ok("search", "--json", "zyzzogeton", data_dir=data_dir).stdout)
    assert [r["id"] for r in found] == [ids["diffusion"]]


def test_one_pdf_without_text_is_said_in_the_singular(data_dir, tmp_path, pdf_folder):
    ids = make_library(data_dir, tmp_path)
    attach(data_dir, ids["other"], image_only_pdf(pdf_folder, "scan-alone.pdf"))
    done = cli_ok("reindex", data_dir=data_dir)
    assert "1 PDF has no text to search:" in done.stderr


def test_a_killed_reindex_goes_on_where_it_stopped(data_dir, tmp_path, pdf_folder):
    """`reindex` killed mid-extraction keeps every text it stored; the next run reads the rest."""
    base = long_pdf(pdf_folder, pages=300, name="report.pdf")
    copies = []
    for n in range(24):  # distinct contents: bytes after %%EOF change the hash, not the PDF
        copy = tmp_path / f"report-{n:02d}.pdf"
        copy.write_bytes(base.read_bytes() + f"\n% copy {n}\n".encode())
        copies.append(copy)
    bib = "".join(
        f"@article{{p{n:02d}, title={{Report number {n}}}, author={{Ada Lovelace}}, year={{2020}}}}\n"
        for n in range(len(copies))
    )
    ids = make_library(data_dir, tmp_path, bib)
    with Library.open(data_dir) as lib:
        for n, copy in enumerate(copies):
            lib.attach_files(ids[f"p{n:02d}"], [copy])

    proc = subprocess.Popen(
        [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), "reindex"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not cache_entries(data_dir) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # waiting on the condition: the first text stored
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = len(cache_entries(data_dir))
    assert 1 <= stored < len(copies), f"killed after {stored} of {len(copies)} PDFs"
    # what was stored is whole: no temporary files left as entries, each one readable
    for entry in cache_entries(data_dir):
        assert json.loads(entry.read_bytes())["pages"]

    done = cli_ok("reindex", data_dir=data_dir)
    assert f"Read the text of {len(copies) - stored} PDFs for search." in done.stderr
    assert len(cache_entries(data_dir)) == len(copies)
    found = json.loads(cli_ok("search", "--json", "--limit", "100", "fulltext:topic5", data_dir=data_dir).stdout)
    assert sorted(r["id"] for r in found) == sorted(ids.values())


def test_search_of_a_library_without_pdfs_says_nothing_about_them(data_dir, tmp_path):
    make_library(data_dir, tmp_path)
    found = cli_ok("search", "sheep", data_dir=data_dir)
    assert "PDF" not in found.stderr
    assert shutil.which(sys.executable)


def test_a_rebuild_by_worker_processes_reads_the_pdf_texts_from_the_cache(data_dir, tmp_path, rare_pdf, monkeypatch):
    """A large library's rebuild hands its workers the PDFs' hashes; they read the texts."""
    import papershelf.core.search.rebuild as rebuild_module

    bib = "".join(
        f"@article{{p{n:02d}, title={{Paper number {n}}}, author={{Ada Lovelace}}, year={{2020}}}}\n" for n in range(60)
    )
    ids = make_library(data_dir, tmp_path, bib)
    copy = tmp_path / "copy.pdf"
    copy.write_bytes(rare_pdf.read_bytes() + b"\n% another copy\n")
    attach(data_dir, ids["p07"], rare_pdf)
    attach(data_dir, ids["p51"], copy)
    monkeypatch.setattr(rebuild_module, "PARALLEL_MIN", 10)
    monkeypatch.setattr(rebuild_module, "SEGMENT_DOCS", 20)
    with Library.open(data_dir) as lib:
        assert lib.extract_fulltext().read == 2
        assert lib.reindex()
        lib.open_index()
        assert len(lib._search._ready()._get_searcher().reader().leaf_readers()) > 1
        answer = lib.search(Query("fulltext:zyzzogeton", index_order=True))
        assert sorted(answer.ids) == sorted([ids["p07"], ids["p51"]])
        assert lib.snippets(answer.ids, "zyzzogeton")[ids["p51"]].startswith("p. 3: …Here the")


def found_ids(data_dir: Path, query: str) -> list[str]:
    return sorted(r["id"] for r in json.loads(cli_ok("search", "--json", query, data_dir=data_dir).stdout))


def test_a_read_that_fails_this_time_is_not_kept_and_the_next_reindex_reads_it(data_dir, tmp_path, pdf_folder):
    """A timeout (a busy machine) is no lasting fact about the PDF: it is said, not cached."""
    ids = make_library(data_dir, tmp_path)
    report = long_pdf(pdf_folder, pages=300, name="slow-report.pdf")
    attach(data_dir, ids["diffusion"], report)

    hurried = run_cli("reindex", data_dir=data_dir, env={"PAPERSHELF_PDF_TIMEOUT": "0.001"})
    assert hurried.returncode == 0 and "Traceback" not in hurried.stderr, hurried.stderr
    assert "Read the text of 0 PDFs for search." in hurried.stderr
    assert "1 PDF could not be read this time: " in hurried.stderr
    assert "slow-report.pdf took longer than 0.001 s to read; skipped; tried again next time." in hurried.stderr
    assert not cache_entries(data_dir)
    assert "1 PDF is not searchable yet" in run_cli("search", "topic5", data_dir=data_dir).stderr

    done = cli_ok("reindex", data_dir=data_dir)
    assert "Read the text of 1 PDF for search." in done.stderr
    assert found_ids(data_dir, "fulltext:topic5") == [ids["diffusion"]]


def test_a_damaged_or_older_cache_entry_is_read_again(data_dir, tmp_path, rare_pdf, pdf_folder):
    ids = make_library(data_dir, tmp_path)
    attach(data_dir, ids["diffusion"], rare_pdf)
    other = paper_pdf(pdf_folder, "sheep.pdf", pages=["The shepherd counted the wombats of the valley."])
    attach(data_dir, ids["other"], other)
    cli_ok("reindex", data_dir=data_dir)
    entries = cache_entries(data_dir)
    assert len(entries) == 2 and all(e.name.endswith(".v1.json") for e in entries)
    assert found_ids(data_dir, "zyzzogeton") == [ids["diffusion"]]

    rare_sha = _sha256(rare_pdf)
    damaged = next(e for e in entries if e.name.startswith(rare_sha))
    damaged.write_bytes(damaged.read_bytes()[:50])  # a disk error, a copy cut short
    older = next(e for e in entries if e != damaged)
    older.rename(older.with_name(older.name.replace(".v1.json", ".json")))  # as an older version named it

    done = cli_ok("reindex", data_dir=data_dir)
    assert "Read the text of 2 PDFs for search." in done.stderr
    assert found_ids(data_dir, "zyzzogeton") == [ids["diffusion"]]
    assert found_ids(data_dir, "wombats") == [ids["other"]]
    assert sorted(e.name for e in cache_entries(data_dir)) == sorted(e.name for e in entries)  # the old one pruned


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_texts_no_paper_holds_and_stale_temp_files_are_pruned(data_dir, tmp_path, rare_pdf, pdf_folder):
    ids = make_library(data_dir, tmp_path)
    kept = paper_pdf(pdf_folder, "kept.pdf", pages=["The wombats of the valley, counted."])
    attach(data_dir, ids["diffusion"], rare_pdf)
    attach(data_dir, ids["other"], kept)
    cli_ok("reindex", data_dir=data_dir)
    assert len(cache_entries(data_dir)) == 2
    rare_entry = next(e for e in cache_entries(data_dir) if e.name.startswith(_sha256(rare_pdf)))
    kept_entry = next(e for e in cache_entries(data_dir) if e.name.startswith(_sha256(kept)))
    shard = rare_entry.parent
    stale = shard / f".{rare_entry.name}.papershelf-abcd1234.tmp"  # a write killed long ago
    fresh = shard / f".{rare_entry.name}.papershelf-efgh5678.tmp"  # a write going on now
    foreign = shard / "notes.json"  # not the cache's: left alone
    for f in (stale, fresh, foreign):
        f.write_text("{", "utf-8")
    hour_ago = time.time() - 3600
    os.utime(stale, (hour_ago, hour_ago))

    with Library.open(data_dir) as lib:
        lib.detach_file(ids["diffusion"], 0)
        assert lib.extract_fulltext().read == 0  # nothing to read; the cache is pruned at the end

    assert sorted(cache_entries(data_dir)) == sorted([kept_entry, foreign])
    assert not rare_entry.exists() and not stale.exists()
    assert fresh.exists() and foreign.exists()
    assert found_ids(data_dir, "zyzzogeton") == []
    assert found_ids(data_dir, "wombats") == [ids["other"]]


def test_cancel_stops_the_pdf_being_read_and_keeps_nothing_of_it(data_dir, tmp_path, pdf_folder, monkeypatch):
    """Cancel pressed while a slow PDF is read: the reader is stopped, not waited for."""
    monkeypatch.setenv("PAPERSHELF_PDF_TIMEOUT", "600")  # only Cancel can end this read early
    ids = make_library(data_dir, tmp_path)
    attach(data_dir, ids["diffusion"], text_bomb_pdf(pdf_folder, "slow-bomb.pdf", chars=400_000))
    attach(data_dir, ids["other"], paper_pdf(pdf_folder, "after.pdf", pages=["The wombats come after."]))
    pressed: list[bool] = []

    def progress(done: int, total: int) -> None:
        if done == 0:
            pressed.append(True)  # the user presses Cancel as the first PDF's reading starts

    with Library.open(data_dir) as lib:
        # after progress(0, …) the first look at `cancelled` is the reader's own, inside the file
        out = lib.extract_fulltext(progress, cancelled=lambda: bool(pressed))
        assert out.cancelled and out.read == 0 and not out.papers
        assert "cancelled with 2 still to read" in out.summary()
    assert not cache_entries(data_dir)

    assert "Read the text of 2 PDFs for search." in cli_ok("reindex", data_dir=data_dir).stderr
    assert found_ids(data_dir, "wombats") == [ids["other"]]


def test_every_paper_of_a_content_gets_its_text_whatever_the_attachment_order(data_dir, tmp_path, rare_pdf):
    """The first paper links a copy on a drive not plugged in; the second holds the same content."""
    ids = make_library(data_dir, tmp_path)
    drive = tmp_path / "usb"
    drive.mkdir()
    shutil.copy(rare_pdf, drive / "linked.pdf")
    with Library.open(data_dir) as lib:
        first, second = lib.ids()[:2]
        assert lib.attach_files(first, [drive / "linked.pdf"], link=True).added
        assert lib.attach_files(second, [rare_pdf]).added
    shutil.rmtree(drive)
    cli_ok("search", "sheep", data_dir=data_dir)  # an index built before the text is read

    with Library.open(data_dir) as lib:
        lib.open_index()
        out = lib.extract_fulltext()
        assert out.read == 1 and out.missing == 0 and out.papers == {first, second}
        assert sorted(lib.search(Query("zyzzogeton")).ids) == sorted([first, second])
    assert found_ids(data_dir, "zyzzogeton") == sorted(ids.values())
