"""Issue 24, reading PDFs safely and well (core/pdf/): the paper's identity from the PDF itself,
every kind of bad file a problem in words naming it, hostile files capped in memory and time in
the worker process, many files by one worker with progress and cancel, and real PDFs from
public projects' test data (tests/fixtures/pdf/SOURCES.md).

The PDFs are real: made by pdflatex (tests/pdfs.py), written by hand (the text bomb) or shipped
by pypdf and pikepdf."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from papershelf.core.pdf import (
    MAX_PAGES,
    PdfInfo,
    PdfProblem,
    PdfText,
    PdfWorker,
    TextCache,
    extract_many,
    extract_text,
    page_texts,
    pdf_info,
)
from papershelf.core.pdf.reading import plausible_title
from pdfs import (
    arxiv_paper,
    cited_doi_paper,
    doi_paper,
    encrypted_pdf,
    image_only_pdf,
    junk_title_paper,
    long_pdf,
    not_a_pdf,
    paper_pdf,
    text_bomb_pdf,
    truncated_pdf,
)

REAL = Path(__file__).parent / "fixtures" / "pdf"


# --- identity --------------------------------------------------------------------------------


def test_arxiv_paper_title_is_the_largest_text_and_the_stamp_gives_the_id(tmp_path: Path) -> None:
    info = pdf_info(arxiv_paper(tmp_path))
    assert info == PdfInfo(pages=2, title="Scaling Sparse Attention to Long Documents", arxiv_id="2401.01234")


def test_doi_paper_identity_from_metadata_and_page_one(tmp_path: Path) -> None:
    info = pdf_info(doi_paper(tmp_path))
    assert info.pages == 3
    assert info.title == "Priors for Diffusion in Sparse Graphs"
    assert info.authors == "Ada Lovelace and Charles Babbage"
    assert info.doi == "10.1234/papershelf.2024.5678"
    assert info.arxiv_id == ""


def test_a_word_processors_metadata_title_gives_way_to_the_largest_text(tmp_path: Path) -> None:
    info = pdf_info(junk_title_paper(tmp_path))
    assert info.title == "Gradient Noise in Shallow Networks"
    assert info.authors == "Emmy Noether"


def test_the_papers_own_doi_cut_at_a_line_end_wins_over_a_cited_one(tmp_path: Path) -> None:
    pdf = cited_doi_paper(tmp_path)
    assert "10.5555/jphys.\n2024.00417." in page_texts(pdf, 0, 1)[0]  # as PDFium gives it: cut, then a full stop
    assert pdf_info(pdf).doi == "10.5555/jphys.2024.00417"


def test_a_doi_only_in_the_references_is_not_the_papers(tmp_path: Path) -> None:
    pdf = paper_pdf(tmp_path, pages=["References\n\n[1] A. Author, Earlier work, doi:10.1000/cited.1999.12."])
    assert "10.1000/cited.1999.12" in page_texts(pdf)[1]
    info = pdf_info(pdf)
    assert (info.title, info.doi) == ("A Rare Study of Things", "")


@pytest.mark.parametrize(
    ("title", "plausible"),
    [
        ("Microsoft Word - draft3.docx", False),
        ("untitled", False),
        ("", False),
        ("draft_v3", False),
        ("paper.pdf", False),
        ("Slide 1", False),
        ("Attention Is All You Need", True),
        ("The Crazy Ones", True),
    ],
)
def test_which_metadata_titles_look_like_titles(title: str, plausible: bool) -> None:
    assert plausible_title(title) is plausible


def test_a_metadata_title_that_is_the_files_name_is_not_a_title() -> None:
    assert not plausible_title("Report 2024", "/tmp/report 2024.pdf")


def test_a_page_all_in_one_size_has_no_title(tmp_path: Path) -> None:
    assert pdf_info(long_pdf(tmp_path, pages=3)).title == ""


# --- bad files: a problem in words that names the file --------------------------------------


def test_encrypted_pdf_is_named_and_said_to_need_a_password(tmp_path: Path) -> None:
    pdf = encrypted_pdf(tmp_path)
    with pytest.raises(PdfProblem, match="needs a password") as err:
        pdf_info(pdf)
    assert str(pdf) in str(err.value)
    text = extract_text(pdf)
    assert text.pages == [] and str(pdf) in text.problem and "encrypted" in text.problem


def test_truncated_pdf_is_said_to_be_cut_short(tmp_path: Path) -> None:
    pdf = truncated_pdf(tmp_path)
    text = extract_text(pdf)
    assert text.pages == [] and text.problem.startswith(f"{pdf} is not a readable PDF (damaged or cut short")
    with pytest.raises(PdfProblem, match="cut short"):
        pdf_info(pdf)


def test_an_html_page_named_pdf_is_said_not_to_be_a_pdf(tmp_path: Path) -> None:
    pdf = not_a_pdf(tmp_path)
    assert extract_text(pdf).problem == f"{pdf} is not a PDF (it does not start with %PDF-)"


def test_image_only_pdf_has_its_page_but_no_text(tmp_path: Path) -> None:
    pdf = image_only_pdf(tmp_path)
    assert pdf_info(pdf).pages == 1
    text = extract_text(pdf)
    assert len(text.pages) == 1 and text.problem == f"{pdf} has no text to search (scanned pages without OCR?)"


def test_a_missing_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    text = extract_text(tmp_path / "gone.pdf")
    assert text.pages == [] and str(tmp_path / "gone.pdf") in text.problem
    assert text.passing  # it may be back next time (a drive plugged in again): not a fact to cache


def test_a_file_that_cannot_be_opened_is_a_passing_problem_a_bad_pdf_a_lasting_one(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-file.pdf"
    folder.mkdir()  # EISDIR: an OSError as EACCES or EIO would be, even for root
    text = extract_text(folder)
    assert text.problem == f"{folder} cannot be read: Is a directory" and text.passing
    cache = TextCache(tmp_path / "cache")
    cache.put("cd" * 32, text)
    assert not cache.has("cd" * 32) and cache.get("cd" * 32) is None  # never kept
    for bad in (encrypted_pdf(tmp_path), truncated_pdf(tmp_path), not_a_pdf(tmp_path), image_only_pdf(tmp_path)):
        lasting = extract_text(bad)
        assert lasting.problem and not lasting.passing, lasting


def test_long_pdfs_read_whole_page_by_page_in_little_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERSHELF_PDF_MEMORY", str(128 << 20))  # an eighth of the usual cap
    files = {pages: long_pdf(tmp_path, pages=pages, name=f"long{pages}.pdf") for pages in (300, 500)}
    texts = extract_many(files.values())
    for pages, pdf in files.items():
        text = texts[pdf]
        assert len(text.pages) == pages and text.problem == "" and text.note == ""
        assert "Page 250 of the long report" in text.pages[249]
        assert text.page_of(text.joined().index(f"Page {pages} of")) == pages


def test_the_page_cap_reads_the_first_pages_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the cap is MAX_PAGES (2,000); a 2,001-page PDF is slow to make, so the worker's reading of
    # a 500-page one is checked against the same rule through page_texts' range
    assert MAX_PAGES == 2000
    pdf = long_pdf(tmp_path, pages=500)
    assert len(page_texts(pdf, 490)) == 10
    from papershelf.core.pdf import reading

    monkeypatch.setattr(reading, "MAX_PAGES", 120)
    pages = reading.read_pages(pdf)
    assert len(pages.texts) == 120 and pages.note == "only the first 120 of its 500 pages were read"


# --- hostile files: memory and time caps in the worker ---------------------------------------


def test_a_text_bomb_over_the_memory_cap_is_skipped_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = text_bomb_pdf(tmp_path)  # 7 KB on disk, 3 million characters on its page (~470 MB to read)
    good = doi_paper(tmp_path)
    monkeypatch.setenv("PAPERSHELF_PDF_MEMORY", str(300 << 20))
    with PdfWorker() as worker:
        texts = extract_many([bomb, good], worker=worker)
        assert texts[bomb].pages == [] and texts[bomb].problem.startswith(f"{bomb} made the PDF reader stop")
        assert "more than 300 MB of memory" in texts[bomb].problem
        assert "zyzzogeton" in texts[good].pages[2]  # the next file is read by a new worker
        assert worker.starts == 2


def test_a_text_bomb_within_the_memory_cap_keeps_the_page_cap(tmp_path: Path) -> None:
    text = extract_text(text_bomb_pdf(tmp_path, chars=400_000))
    assert len(text.pages) == 1 and len(text.pages[0]) == 100_000
    assert text.note == "pages longer than 100,000 characters were cut (per page cap)"


def test_a_file_slower_than_the_timeout_is_killed_and_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERSHELF_PDF_TIMEOUT", "0.5")
    bomb = text_bomb_pdf(tmp_path)  # several seconds of PDFium's work
    good = doi_paper(tmp_path)
    with PdfWorker() as worker:
        texts = extract_many([bomb, good], worker=worker)
        assert texts[bomb].problem == f"{bomb} took longer than 0.5 s to read; skipped"
        assert len(texts[good].pages) == 3
    with pytest.raises(PdfProblem, match=r"took longer than 0\.5 s to read; skipped"):
        pdf_info(bomb)  # the shared worker of single calls keeps the same rule


# --- many files: one worker, progress, cancel -------------------------------------------------


def test_many_files_share_one_worker_and_report_progress(tmp_path: Path) -> None:
    good = doi_paper(tmp_path)
    files = []
    for n in range(20):
        files.append(tmp_path / f"copy{n}.pdf")
        shutil.copy(good, files[-1])
    files.append(encrypted_pdf(tmp_path))
    seen: list[tuple[int, int]] = []
    with PdfWorker() as worker:
        texts = extract_many(files, progress=lambda done, total: seen.append((done, total)), worker=worker)
        assert worker.starts == 1
    assert seen == [(n, 21) for n in range(1, 22)]
    assert all("zyzzogeton" in texts[f].joined() for f in files[:20])
    assert "needs a password" in texts[files[20]].problem


def test_cancel_stops_inside_a_slow_file_and_keeps_what_was_done(tmp_path: Path) -> None:
    good = doi_paper(tmp_path)
    bomb = text_bomb_pdf(tmp_path)  # would take seconds
    calls = {"during bomb": 0}
    done: list[int] = []

    def cancelled() -> bool:
        if len(done) == 1:  # the good file is done, the bomb is being read: cancel on the 3rd look
            calls["during bomb"] += 1
        return calls["during bomb"] >= 3

    with PdfWorker() as worker:
        texts = extract_many(
            [good, bomb, good], progress=lambda n, _t: done.append(n), cancelled=cancelled, worker=worker
        )
        assert list(texts) == [good] and done == [1]
        assert calls["during bomb"] == 3  # looked at every tenth of a second while the bomb was read
        assert worker.request("text", good)["ok"]  # a new worker after the kill


def test_cancel_while_the_worker_starts_stops_it(tmp_path: Path) -> None:
    good = doi_paper(tmp_path)
    looks = iter([False, True])  # the batch's look before the file, then the start's first
    with PdfWorker() as worker:
        assert extract_many([good], cancelled=lambda: next(looks, True), worker=worker) == {}
        assert worker.starts == 1 and worker.pid is None


# --- the cache keeps the note ----------------------------------------------------------------


def test_text_cache_keeps_pages_problem_and_note(tmp_path: Path) -> None:
    cache = TextCache(tmp_path / "cache")
    text = PdfText(["a", "b"], "", "only the first 2,000 of its 2,400 pages were read")
    cache.put("ab" * 32, text)
    assert cache.get("ab" * 32) == text


# --- real PDFs from public projects' test data (tests/fixtures/pdf/SOURCES.md) -----------------


def test_real_pdf_pypdf_crazyones() -> None:
    pdf = REAL / "pypdf-crazyones.pdf"
    assert pdf_info(pdf).title == "The Crazy Ones"
    text = extract_text(pdf)
    assert len(text.pages) == 1 and "to the crazy ones. The misfits. The rebels." in text.pages[0]


def test_real_pdf_pypdf_metadata() -> None:
    info = pdf_info(REAL / "pypdf-metadata.pdf")
    assert (info.pages, info.title, info.authors) == (1, "The Title", "Martin Thoma")
    assert "Whatever" in extract_text(REAL / "pypdf-metadata.pdf").pages[0]


def test_real_pdf_pikepdf_fourpages() -> None:
    text = extract_text(REAL / "pikepdf-fourpages.pdf")
    assert [p.strip() for p in text.pages] == ["First page", "Second page", "Third page", "Last page"]


def test_real_pdf_pikepdf_outlines() -> None:
    text = extract_text(REAL / "pikepdf-outlines.pdf")
    assert len(text.pages) == 2 and "One-B-II" in text.pages[0] and "Three" in text.pages[1]


def test_real_pdf_libreoffice_encrypted() -> None:
    pdf = REAL / "pypdf-libreoffice-writer-password.pdf"
    assert extract_text(pdf).problem == f"{pdf} is encrypted: it needs a password to open"


def test_real_pdf_fuzzed_page_is_damaged_in_words() -> None:
    pdf = REAL / "pikepdf-fuzz-378014596.pdf"
    assert extract_text(pdf).problem == f"{pdf} is damaged: none of its 1 pages can be read"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line for line in f)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc to follow the worker")
def test_a_worker_busy_in_a_file_ends_when_the_app_is_killed(tmp_path: Path) -> None:
    # 60 pages of two million characters (50 read before the file cap): PDFium works on it for a
    # minute or more, and its
    # answer's broken pipe would end the worker only then
    bomb = text_bomb_pdf(tmp_path, chars=2_000_000, pages=60)
    script = (
        "import sys, threading\n"
        "from papershelf.core.pdf import PdfWorker\n"
        "w = PdfWorker(seconds=600)\n"
        "threading.Thread(target=w.request, args=('text', sys.argv[1])).start()\n"
        "while w.pid is None: pass\n"
        "print(w.pid, flush=True)\n"
        "threading.Event().wait()\n"
    )
    app = subprocess.Popen([sys.executable, "-c", script, str(bomb)], stdout=subprocess.PIPE, text=True)
    assert app.stdout is not None
    worker_pid = int(app.stdout.readline())
    assert _running(worker_pid)
    app.kill()
    app.wait()
    app.stdout.close()
    deadline = time.monotonic() + 20
    while _running(worker_pid) and time.monotonic() < deadline:
        threading.Event().wait(0.05)
    assert not _running(worker_pid)
