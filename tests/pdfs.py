"""Real PDFs for the tests, made by pdflatex (TeX Live) and damaged or encrypted with pypdf.

Every maker writes into the folder it is given and returns the file's path. pdflatex runs in
batch mode in a folder of its own; a run that fails raises with the end of its log.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PDFLATEX = shutil.which("pdflatex")


def _escape(text: str) -> str:
    """Plain text as LaTeX (the few characters the makers' words may hold)."""
    out = text
    for ch, rep in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_")):
        out = out.replace(ch, rep)
    return out


def latex_pdf(folder: Path, name: str, body: str, preamble: str = "") -> Path:
    """The PDF of a LaTeX document whose body is `body` (LaTeX source), as `folder/name`."""
    if PDFLATEX is None:
        raise RuntimeError("pdflatex is not installed (texlive-latex-base); .ci/run installs it")
    work = folder / f".{name}.tex.d"
    work.mkdir(parents=True, exist_ok=True)
    tex = work / "doc.tex"
    tex.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\input{glyphtounicode}\\pdfgentounicode=1\n"
        + preamble
        + "\n\\begin{document}\n"
        + body
        + "\n\\end{document}\n",
        "utf-8",
    )
    res = subprocess.run(
        [PDFLATEX, "-interaction=batchmode", "-halt-on-error", "doc.tex"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    pdf = work / "doc.pdf"
    if res.returncode != 0 or not pdf.exists():
        log = (work / "doc.log").read_text("utf-8", "replace") if (work / "doc.log").exists() else res.stdout
        raise RuntimeError(f"pdflatex failed for {name}:\n{log[-2000:]}")
    out = folder / name
    shutil.move(pdf, out)
    shutil.rmtree(work, ignore_errors=True)
    return out


def paper_pdf(
    folder: Path,
    name: str = "paper.pdf",
    title: str = "A Rare Study of Things",
    authors: str = "Ada Lovelace and Charles Babbage",
    doi: str = "",
    pages: list[str] | None = None,
    metadata_title: bool = True,
    first_page_extra: str = "",
    preamble: str = "",
    meta_title: str = "",
) -> Path:
    """A paper: its title set large on page 1 (and in the PDF's metadata unless
    `metadata_title` is False; `meta_title` there instead when given), the authors, an optional
    DOI line, then one page per item of `pages` (plain text)."""
    shown = _escape(meta_title or title)
    meta = f"\\hypersetup{{pdftitle={{{shown}}},pdfauthor={{{_escape(authors)}}}}}" if metadata_title else ""
    extra = preamble
    preamble = extra + "\n\\usepackage{hyperref}\n" + meta
    if not metadata_title:
        preamble = extra + "\n\\usepackage{hyperref}\n\\hypersetup{pdftitle={},pdfauthor={}}"
    body = f"\\begin{{center}}{{\\LARGE {_escape(title)}\\par}}\\vspace{{1em}}{_escape(authors)}\\end{{center}}\n"
    if doi:
        body += f"\\noindent DOI: \\texttt{{{_escape(doi)}}}\\par\n"
    body += first_page_extra + "\n"
    body += "\\noindent This paper studies things.\n"
    for text in pages or []:
        body += "\\newpage\n" + _escape(text) + "\n"
    return latex_pdf(folder, name, body, preamble)


def doi_paper(folder: Path, name: str = "doi-paper.pdf", rare: str = "zyzzogeton") -> Path:
    """The issue's first PDF: a DOI on page 1, a rare word on page 3 only."""
    return paper_pdf(
        folder,
        name,
        title="Priors for Diffusion in Sparse Graphs",
        doi="10.1234/papershelf.2024.5678",
        pages=["The method section says nothing unusual.", f"Here the {rare} appears, on page three only."],
    )


def arxiv_paper(folder: Path, name: str = "arxiv-paper.pdf", arxiv_id: str = "2401.01234v2") -> Path:
    """An arXiv-style first page: the identifier stamped in the margin, as arXiv does, and no
    title in the PDF's metadata (the title is the largest text on page 1)."""
    stamp = (
        "\\noindent\\makebox[0pt][l]{\\raisebox{-14cm}[0pt][0pt]{\\hspace{-2.5cm}\\rotatebox{90}"
        f"{{\\large arXiv:{arxiv_id} [cs.LG] 12 Jan 2024}}}}}}"
    )
    return paper_pdf(
        folder,
        name,
        title="Scaling Sparse Attention to Long Documents",
        authors="Grace Hopper",
        metadata_title=False,
        first_page_extra=stamp + "\n",
        preamble="\\usepackage{graphicx}",
        pages=["Attention is what we study."],
    )


def long_pdf(folder: Path, pages: int = 300, name: str = "long.pdf") -> Path:
    """A PDF of `pages` pages, each with a little text naming its number."""
    body = "\n".join(
        f"Page {i} of the long report: words about topic{i % 17} and more.\\newpage" for i in range(1, pages + 1)
    )
    return latex_pdf(folder, name, body)


def image_only_pdf(folder: Path, name: str = "scan.pdf") -> Path:
    """A page with a picture and no text at all (a scan without OCR)."""
    body = "\\thispagestyle{empty}\\noindent\\rule{10cm}{10cm}"
    return latex_pdf(folder, name, body)


def encrypted_pdf(folder: Path, name: str = "encrypted.pdf", password: str = "secret") -> Path:
    """A paper that needs a password to open."""
    from pypdf import PdfReader, PdfWriter

    plain = doi_paper(folder, name=f".plain-{name}")
    writer = PdfWriter()
    for page in PdfReader(plain).pages:
        writer.add_page(page)
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    out = folder / name
    with open(out, "wb") as f:
        writer.write(f)
    plain.unlink()
    return out


def truncated_pdf(folder: Path, name: str = "truncated.pdf", keep: float = 0.4) -> Path:
    """A paper cut short: only the first `keep` of its bytes (a download that stopped)."""
    full = doi_paper(folder, name=f".full-{name}")
    data = full.read_bytes()
    out = folder / name
    out.write_bytes(data[: int(len(data) * keep)])
    full.unlink()
    return out


def not_a_pdf(folder: Path, name: str = "page.pdf") -> Path:
    """An HTML error page saved under a .pdf name."""
    out = folder / name
    out.write_text("<!DOCTYPE html><html><body><h1>403 Forbidden</h1></body></html>", "utf-8")
    return out


def _raw_pdf(pages: list[bytes]) -> bytes:
    """A PDF written by hand: one page per content stream (Flate-compressed), Helvetica text."""
    import zlib

    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n)) + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, content in enumerate(pages):
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % (5 + 2 * i)
        )
        packed = zlib.compress(content, 9)
        objs.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for k, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def text_bomb_pdf(folder: Path, name: str = "bomb.pdf", chars: int = 3_000_000, pages: int = 1) -> Path:
    """A hostile PDF: a file of a few kilobytes each of whose `pages` holds `chars` characters
    once its content is inflated (the reader's memory and time grow with them)."""
    line = b"(" + b"A" * 1000 + b") Tj 0 -1 Td\n"
    content = b"BT /F1 1 Tf 10 780 Td\n" + line * (chars // 1000) + b"ET\n"
    out = folder / name
    out.write_bytes(_raw_pdf([content] * pages))
    return out


def junk_title_paper(folder: Path, name: str = "junk-title.pdf") -> Path:
    """A paper whose metadata title is what a word processor wrote ("Microsoft Word - draft3.docx"):
    the real title is the largest text on page 1."""
    return paper_pdf(
        folder,
        name,
        title="Gradient Noise in Shallow Networks",
        authors="Emmy Noether",
        meta_title="Microsoft Word - draft3.docx",
    )


def cited_doi_paper(folder: Path, name: str = "cited-doi.pdf") -> Path:
    """A paper whose own DOI is broken at a line end on page 1 and followed by a full stop, and
    whose references on page 2 cite another paper's DOI."""
    first = "\\noindent This article is available as doi:10.5555/jphys.\\\\2024.00417. Please cite it so.\\par\n"
    return paper_pdf(
        folder,
        name,
        title="Friction in Granular Media",
        first_page_extra=first,
        pages=["References: [1] A. Author, Earlier work, doi:10.1000/cited.1999.12."],
    )
