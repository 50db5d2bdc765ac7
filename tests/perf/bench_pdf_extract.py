"""PDF text extraction benchmark (issue 24): pypdfium2 against pypdf on the same PDFs, and what
the worker process (core/pdf/worker.py) costs: its start, its per-file overhead, many small
files, a cancel inside a slow file, the memory of a 500-page PDF.

Not a pytest test; run it by hand::

    .venv/bin/python tests/perf/bench_pdf_extract.py [--small 200] [--repeat 3]

The PDFs are made by tests/pdfs.py (pdflatex) in a temporary folder, plus the real ones of
tests/fixtures/pdf/. Targets are printed next to the figures as PASS/MISS; a miss never changes
the exit status. Making the PDFs is not measured.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))
from papershelf.core.pdf import PdfWorker, extract_many
from papershelf.core.pdf.reading import read_pages
from pdfs import doi_paper, long_pdf, paper_pdf, text_bomb_pdf

REAL = TESTS / "fixtures" / "pdf"
READABLE_REAL = ["pypdf-crazyones.pdf", "pypdf-metadata.pdf", "pikepdf-fourpages.pdf", "pikepdf-outlines.pdf"]


WORDS = "diffusion prior sparse graph attention gradient noise model method result shows that the of a".split()


def dense_page(n: int) -> str:
    """About 3,500 characters of words, as dense as a page of a paper."""
    return " ".join(WORDS[(n * 7 + i * i) % len(WORDS)] for i in range(600))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def best(repeat: int, run: Callable[[], object]) -> float:
    """The fastest of `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return min(times)


def pdfium_pages(path: Path) -> int:
    return len(read_pages(path).texts)


def pypdf_pages(path: Path) -> int:
    from pypdf import PdfReader

    reader = PdfReader(path)
    return len([page.extract_text() for page in reader.pages])


def extractors(files: list[Path], repeat: int) -> None:
    print("Text extraction in this process, pages/s (best of", repeat, "runs; target pypdfium2 >= 200 pages/s):")
    print(f"  {'file':<28}{'pages':>6}{'pypdfium2':>12}{'pypdf':>10}{'ratio':>8}")
    totals = {"pdfium": [0.0, 0], "pypdf": [0.0, 0]}
    for path in files:
        pages = pdfium_pages(path)
        a = best(repeat, lambda p=path: pdfium_pages(p))
        b = best(repeat, lambda p=path: pypdf_pages(p))
        totals["pdfium"][0] += a
        totals["pypdf"][0] += b
        totals["pdfium"][1] += pages
        totals["pypdf"][1] += pages
        print(f"  {path.name:<28}{pages:>6}{pages / a:>12,.0f}{pages / b:>10,.0f}{b / a:>7.1f}x")
    pa = totals["pdfium"][1] / totals["pdfium"][0]
    pb = totals["pypdf"][1] / totals["pypdf"][0]
    print(f"  {'all':<28}{totals['pdfium'][1]:>6}{pa:>12,.0f}{pb:>10,.0f}{pa / pb:>7.1f}x   {verdict(pa >= 200)}")


def worker_costs(small: Path, repeat: int) -> None:
    starts = []
    for _ in range(max(repeat, 5)):
        with PdfWorker() as w:
            t = time.perf_counter()
            w.request("text", small)
            first = time.perf_counter() - t
            t = time.perf_counter()
            w.request("text", small)
            warm = time.perf_counter() - t
        starts.append(first - warm)
    start = statistics.median(starts)
    inproc = best(20, lambda: read_pages(small))
    with PdfWorker() as w:
        w.request("text", small)
        warm = best(20, lambda: w.request("text", small))
    print("Worker process:")
    print(
        f"  start (first answer minus a warm one), median of {len(starts)}: {start * 1000:.0f} ms   "
        f"target <= 500 ms  {verdict(start <= 0.5)}"
    )
    print(
        f"  per-file overhead of a warm worker: {(warm - inproc) * 1000:.1f} ms "
        f"({warm * 1000:.1f} ms through it, {inproc * 1000:.1f} ms in this process)   "
        f"target <= 5 ms  {verdict(warm - inproc <= 0.005)}"
    )


def many_small(source: Path, count: int, folder: Path) -> None:
    folder.mkdir()
    files = []
    for n in range(count):
        files.append(folder / f"p{n:04d}.pdf")
        shutil.copy(source, files[-1])
    t = time.perf_counter()
    for f in files:
        read_pages(f)
    inproc = count / (time.perf_counter() - t)
    with PdfWorker() as w:
        t = time.perf_counter()
        texts = extract_many(files, worker=w)
        shared = count / (time.perf_counter() - t)
        assert len(texts) == count and w.starts == 1
    few = files[: min(30, count)]
    t = time.perf_counter()
    for f in few:
        with PdfWorker() as w:
            w.request("text", f)
    fresh = len(few) / (time.perf_counter() - t)
    print(f"Many small PDFs ({count} copies of a 3-page paper), files/s:")
    print(f"  one worker for all (extract_many): {shared:,.0f}   target >= 50  {verdict(shared >= 50)}")
    print(f"  in this process, no worker:        {inproc:,.0f}")
    print(f"  a new process per file ({len(few)} files): {fresh:,.1f}")


def cancel_latency(folder: Path) -> None:
    bomb = text_bomb_pdf(folder, "slow.pdf")
    flag = threading.Event()
    at: list[float] = []

    def cancel_soon() -> None:
        time.sleep(1.0)
        at.append(time.perf_counter())
        flag.set()

    threading.Thread(target=cancel_soon, daemon=True).start()
    extract_many([bomb], cancelled=flag.is_set)
    took = time.perf_counter() - at[0]
    print(
        f"Cancel inside a slow file (a text bomb): returned {took * 1000:.0f} ms after the cancel   "
        f"target <= 1000 ms  {verdict(took <= 1.0)}"
    )


def peak_mb(pid: int | None) -> float:
    """A process's peak resident memory (VmHWM), in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def memory_of_long(path: Path, pages: int) -> None:
    with PdfWorker() as w:
        t = time.perf_counter()
        reply = w.request("text", path)
        took = time.perf_counter() - t
        peak = peak_mb(w.pid)
    print(
        f"A {pages}-page PDF through a fresh worker: {len(reply['pages'])} pages in {took:.2f} s, worker peak RSS "
        f"{peak:.0f} MB   target <= 300 MB  {verdict(peak <= 300)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=200, help="how many small PDFs to read one after another")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        long300 = long_pdf(root, pages=300, name="long-300-pages.pdf")
        long500 = long_pdf(root, pages=500, name="long-500-pages.pdf")
        paper = doi_paper(root)
        dense = paper_pdf(root, "dense-paper.pdf", pages=[dense_page(n) for n in range(49)])
        memory_of_long(long500, 500)
        extractors([long300, dense, paper, *(REAL / n for n in READABLE_REAL)], args.repeat)
        worker_costs(paper, args.repeat)
        many_small(paper, args.small, root / "small")
        cancel_latency(root)


if __name__ == "__main__":
    main()
