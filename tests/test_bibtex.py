"""BibTeX / BibLaTeX export, compiled with the real tools (pdflatex, bibtex, biber)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.citation import record_keywords
from papershelf.core.citekeys import assign_keys
from papershelf.core.importers import parse_text
from papershelf.core.library import Library

TEX_TOOLS = ("pdflatex", "bibtex", "biber")
missing = [t for t in TEX_TOOLS if shutil.which(t) is None]
# CI installs the tools (.ci/run): there a missing tool fails the test instead of skipping it
needs_tex = pytest.mark.skipif(bool(missing) and not os.environ.get("CI"), reason=f"TeX tools missing: {missing}")

HOSTILE = [
    "We close the field early } and then @misc{evil, title={pwned}} follows, with \\end{document} "
    "and 100% of {unbalanced braces in a paragraph that keeps going for long enough to be an abstract.",
    "An abstract about costs & benefits: 50% of #hashtags use snake_case_names and ~tildes^carets, "
    "with $\\mathbb{R}^n$ and $\\Delta x_{i}$ and $\\frac{a}{b$ broken math and $x \\mathfrak{g}$ in it too.",
    "Emoji 🚀 and CJK 中文摘要 and Greek αβγ and accents Mălan Schrödinger Łukasz Ørsted in the text of an "
    "abstract long enough that the listing importer takes it as an abstract rather than something else.",
    "A \\textsc{VeriSimpl} paper with **bold** and *emphasis* and [a link](https://example.org/a_b%20c#frag) "
    "and \\emph{nested \\textbf{markup}} that a reader should see as text, not as raw markup, in the export.",
    "Long abstract " + "word " * 4000 + "the end of a twenty thousand character abstract that must compile.",
    # found in review: \\ then a brace (BibTeX counts braces, backslash or not), math pdflatex rejects,
    # and money that looks like math
    "An abstract whose first line\\\\} second, note = {Injected ends in a LaTeX line break and a brace, "
    "then $x\u2028= 1$ and $a\x1fb$ and $x_1_2$ and $\\left( x$ and $x^$ and costs $5 and $10 in the text.",
]

DOC = {
    "bibtex": r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\begin{document}
\nocite{*}
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
""",
    "biblatex": r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\begin{document}
\nocite{*}
\printbibliography
\end{document}
""",
}


def compile_bib(folder: Path, bib: str, dialect: str, cite: list[str] | None = None) -> dict:
    """pdflatex, bibtex|biber, pdflatex twice; the logs. The document cites every entry,
    or with `cite` these keys (each in its own \\cite, as a user's paper would)."""
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    doc = DOC[dialect]
    if cite is not None:
        doc = doc.replace("\\nocite{*}", "".join(f"\\cite{{{key}}}\n" for key in cite))
    (folder / "doc.tex").write_text(doc, encoding="utf-8")

    def run(*cmd):
        return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, errors="replace", timeout=300)

    first = run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    tool = run("bibtex", "doc") if dialect == "bibtex" else run("biber", "doc")
    run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    last = run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    log = (folder / "doc.log").read_text(errors="replace")
    blg = (folder / "doc.blg").read_text(errors="replace")
    bbl = (folder / "doc.bbl").read_text(errors="replace")
    return {"first": first, "tool": tool, "last": last, "log": log, "blg": blg, "bbl": bbl}


def problems(out: dict, dialect: str) -> list[str]:
    found = []
    if out["tool"].returncode != 0 or out["last"].returncode != 0:
        found.append(f"exit codes: tool {out['tool'].returncode}, pdflatex {out['last'].returncode}")
    for line in out["log"].splitlines():
        if re.search(r"^!|Warning|Undefined control sequence|Missing character", line) and "Font shape" not in line:
            found.append("latex: " + line)
    for line in out["blg"].splitlines():
        if dialect == "bibtex" and re.search(
            r"^Warning--|error message|I was expecting|I'm ignoring|"
            r"---line \d+ of file|There w(as|ere) \d+ warning",
            line,
        ):
            found.append("bibtex: " + line)
        if dialect == "biblatex" and re.search(r"WARN|ERROR", line):
            found.append("biber: " + line)
    return found


@pytest.fixture
def hostile_library(seeded):
    lib = seeded
    text = "Daily Papers\n\n" + "\n\n".join(HOSTILE) + "\n"
    report = lib.import_parsed(parse_text(text, "<pasted text>"))
    assert report.added == len(HOSTILE)
    ids = list(lib.ids())
    lib.add_tags(ids[:30], ["to_read & 100%", "llm"])
    return lib


@needs_tex
@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["bibtex", "biblatex"])
def test_the_whole_library_compiles_without_errors_or_warnings(hostile_library, tmp_path, dialect):
    lib = hostile_library
    target = tmp_path / f"all-{dialect}.bib"
    report, _ = lib.export_bibtex(lib.ids(), target, dialect)
    text = target.read_text(encoding="utf-8")
    assert report.entries == len(lib) == 372 + len(HOSTILE)
    assert report.replaced_chars > 0  # the emoji and the CJK, counted
    if dialect == "bibtex":
        assert text.isascii()
    out = compile_bib(tmp_path, target.read_text(encoding="utf-8"), dialect)
    assert problems(out, dialect) == []
    keys = re.findall(r"^@\w+\{([^,]+),", text, re.M)
    assert len(keys) == len({k.casefold() for k in keys}) == report.entries
    cited = (
        set(re.findall(r"\\bibitem\{([^}]+)\}", out["bbl"]))
        if dialect == "bibtex"
        else set(re.findall(r"\\entry\{([^}]+)\}", out["bbl"]))
    )
    assert cited == set(keys)


@needs_tex
def test_math_in_titles_keeps_its_case_and_team_names_stay_one_author(seeded, tmp_path):
    from papershelf.core.importers.base import Candidate, ParsedFile

    lib = seeded
    cand = Candidate(
        abstract="We study the $\\Gamma$ function and sigma algebras with a team of many people "
        "over a long period and report what we found about both of them.",
        line=1,
        title="The $\\Gamma$ function and $\\Sigma$-algebras",
        authors=["Research and Development Team", "Ada Lovelace"],
    )
    report = lib.import_parsed(ParsedFile(path="<pasted text>", format="test", papers=[cand], problems=[]))
    pid = report.added_ids[0]
    target = tmp_path / "one.bib"
    lib.export_bibtex([pid], target, "bibtex")
    text = target.read_text()
    assert "{Research and Development Team} and Lovelace, Ada" in text
    out = compile_bib(tmp_path, text, "bibtex")
    assert problems(out, "bibtex") == []
    assert "\\Gamma" in out["bbl"] and "\\gamma" not in out["bbl"]
    assert "Team" in out["bbl"] and "Lovelace" in out["bbl"]


def test_hostile_text_cannot_leave_its_field(hostile_library, tmp_path):
    lib = hostile_library
    _, text = lib.export_bibtex(lib.ids(), "-", "bibtex")
    entries = re.findall(r"^@(\w+)\{", text, re.M)
    assert len(entries) == len(lib)  # no entry smuggled in by an abstract
    assert "@misc{evil" not in text and "\\end{document}" not in text
    assert "$$" not in text  # adjacent math would start display math
    # every entry's braces balance on their own
    for block in re.split(r"\n(?=@)", text.split("\n\n", 1)[1]):
        depth = 0
        for ch in re.sub(r"\\[{}]", "", block):
            depth += ch == "{"
            depth -= ch == "}"
            assert depth >= 0
        assert depth == 0
    assert "$\\mathbf{R}^n$" in text and "$\\Delta x_{i}$" in text  # safe math stays math
    assert "\\frac{a}{b$" not in text  # broken math does not
    assert '{\\"o}' in text and "{\\L}" in text and "{$\\alpha$}{$\\beta$}" in text
    assert "50\\% of \\#hashtags use snake\\_case\\_names" in text


def test_titles_protect_acronyms_and_urls_stay_usable(seeded):
    lib = seeded
    _, text = lib.export_bibtex(lib.ids(), "-", "bibtex")
    assert "title    = {{VeriSimpl}: a solver--{LLM} framework" in text or "{VeriSimpl}" in text
    assert "{QRPO}: Quantile Reward Policy Optimization" in text
    _, biblatex = lib.export_bibtex(lib.ids(), "-", "biblatex")
    assert "url      = {https://github.com/xufangzhi/Genius}" in biblatex


def test_keys_are_stable_pinned_and_independent_of_export_order(seeded, data_dir, tmp_path):
    lib = seeded
    ids = list(lib.ids())
    whole = assign_keys(lib.papers())
    # a subset first, then everything: the same keys as everything at once
    report, _ = lib.export_bibtex(ids[100:140], tmp_path / "part.bib")
    assert report.new_keys == {pid: whole[pid] for pid in ids[100:140]}
    lib.export_bibtex(ids, tmp_path / "all.bib")
    assert {pid: lib.get(pid).citekey for pid in ids} == whole
    # new papers that would clash never take a pinned key
    clone = lib.get(ids[120])
    lib.import_parsed(parse_text("Daily Papers\n\n" + plain_clash(clone.abstract) + "\n", "<pasted text>"))
    after = assign_keys(lib.papers())
    assert all(after[pid] == whole[pid] for pid in ids)
    assert len({k.casefold() for k in after.values()}) == len(after)
    lib.close()
    with Library.open(data_dir) as again:
        assert again.get(ids[120]).citekey == whole[ids[120]]


def plain_clash(abstract: str) -> str:
    """Another paper whose derived title (and so key) starts like the given one's."""
    return abstract + " In addition, this second version differs in its final sentence entirely."


def test_user_keys_are_checked(seeded):
    lib = seeded
    a, b = list(lib.ids())[:2]
    lib.set_citekey(a, "Smith2024:deep")
    with pytest.raises(ValueError, match="already used"):
        lib.set_citekey(b, "smith2024:DEEP")
    with pytest.raises(ValueError, match="not a usable citation key"):
        lib.set_citekey(b, "has space")
    assert assign_keys(lib.papers())[a] == "Smith2024:deep"


def test_cli_exports_a_tag_a_list_a_query_and_ids(imported_cli, tmp_path):
    folder = imported_cli
    with Library.open(folder) as lib:
        ids = list(lib.ids())
        lib.add_tags(ids[:7], ["llm"])
        lib.add_to_list("Thesis", ids[10:13])
    cases = [
        (["--tag", "llm"], 7),
        (["--list", "Thesis"], 3),
        (["--query", "verisimpl"], 1),
        (["--ids", ids[20], ids[21]], 2),
        (["--status", "unread"], 372),
    ]
    for args, count in cases:
        out = tmp_path / "x.bib"
        res = run_cli("export", *args, "-o", str(out), data_dir=folder)
        assert res.returncode == 0, res.stderr
        assert f"Wrote {count} entr" in res.stdout
        assert len(re.findall(r"^@", out.read_text(encoding="utf-8"), re.M)) == count
    res = run_cli("export", "--tag", "llm", "--dialect", "biblatex", "-o", "-", data_dir=folder)
    assert res.returncode == 0 and res.stdout.count("\n@misc{") == 7
    bad = run_cli("export", "--tag", "llm", "-o", str(tmp_path / "no" / "such" / "dir.bib"), data_dir=folder)
    assert bad.returncode == 1 and "Nothing was exported" in bad.stderr


@pytest.fixture
def imported_cli(data_dir, seeds):
    res = run_cli("import", *map(str, seeds), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return data_dir


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bib"


def test_zotero_export_imports_with_real_titles_and_decoded_latex(library):
    report = library.import_files([FIXTURES / "zotero.bib"])[0]
    assert report.added == 2 and not report.problems
    papers = {p.citekey: p for p in library.papers()}
    attention = papers["vaswani_attention_2017"]
    assert attention.title == "Attention is all you need" and not attention.title_derived
    assert attention.authors[0] == "Ashish Vaswani" and attention.authors[6] == "Łukasz Kaiser"
    assert attention.year == 2017 and "Neural Information Processing Systems" in attention.venue
    # the record's keywords are its keywords, not tags (issue 20 defect 2)
    assert record_keywords(attention.bibfields) == ["Computer Science - Computation and Language", "transformers"]
    assert attention.tags == []
    schrodinger = papers["muller_schrodinger_2021"]
    assert schrodinger.title == "Schrödinger bridges for Bayesian inference with diffusion models"
    assert schrodinger.authors == ["Jürgen Müller", "OpenAI"] and schrodinger.arxiv_id == "2101.00001"


def test_jabref_file_with_a_broken_entry_reports_its_line_and_imports_the_rest(library):
    report = library.import_files([FIXTURES / "jabref.bib"])[0]
    assert report.added == 2
    assert any(p.line == 16 and "could not be read" in p.message for p in report.problems), report.problems
    smith = next(p for p in library.papers() if p.citekey == "Smith2020")
    assert smith.venue == "International Conference on Machine Learning"  # @String resolved
    assert smith.title.startswith("BayeSQP: Bayesian Optimization")
    assert smith.authors == ["John Smith", "Anna van der Berg"]
    assert record_keywords(smith.bibfields) == ["optimization", "gaussian processes"] and smith.tags == []


def test_ris_records(library):
    report = library.import_files([FIXTURES / "sample.ris"])[0]
    assert report.added == 2 and report.format == "ris"
    sparse = next(p for p in library.papers() if p.title.startswith("Sparse attention"))
    assert sparse.authors == ["Jane Doe", "Richard Roe"] and sparse.year == 2023
    assert sparse.doi == "10.1000/xyz123" and sparse.arxiv_id == "2301.01234"
    assert record_keywords(sparse.bibfields) == ["attention", "efficiency"] and sparse.tags == []


@pytest.mark.parametrize("dialect", ["bibtex", "biblatex"])
def test_export_then_import_round_trips_and_merges(seeded, tmp_path, data_dir, dialect):
    lib = seeded
    ids = list(lib.ids())
    lib.add_tags(ids[:20], ["llm", "to_read & 100%"])
    lib.set_title(ids[3], "A Real Title: 100% & #1 of the_best, Schrödinger's $\\alpha$")
    target = tmp_path / f"out-{dialect}.bib"
    lib.export_bibtex(ids, target, dialect)
    before = {
        pid: (shown(p.title), list(p.authors), p.year, plain_abstract(p), sorted(p.tags))
        for pid, p in ((pid, lib.get(pid)) for pid in ids)
    }
    fresh = Library.open(tmp_path / "fresh")
    # the tags went out as keywords: asked for, they come back as tags
    report = fresh.import_files([target], keywords_as_tags=True)[0]
    assert report.added == len(ids) and not report.problems
    after = {p.id: (shown(p.title), list(p.authors), p.year, plain_abstract(p), sorted(p.tags)) for p in fresh.papers()}
    assert after == before
    fresh.close()
    again = lib.import_files([target])[0]  # into the library it came from: merged, not doubled
    assert again.added == 0 and len(lib) == len(ids)


def shown(title):
    from papershelf.core.render import plain_text

    return plain_text(title)


def plain_abstract(paper):
    """The abstract as read. Compared as NFKC with ASCII quotes: the BibTeX
    dialect writes ’ as ' (how TeX spells it) and has no blackboard bold without
    amssymb (𝔼 goes out as \\mathbf{E})."""
    import unicodedata

    from papershelf.core.render import plain_text

    text = " ".join(plain_text(paper.abstract).split())
    return unicodedata.normalize("NFKC", text).translate({0x2019: "'", 0x2018: "'", 0x201C: '"', 0x201D: '"'})


def test_cli_shows_and_sets_citation_keys(imported_cli):
    folder = imported_cli
    with Library.open(folder, readonly=True) as lib:
        pid = next(p.id for p in lib.papers() if p.title.startswith("RHB"))
    shown = run_cli("key", pid[:6], data_dir=folder)
    assert shown.returncode == 0 and shown.stdout.startswith(f"{pid}: thamanrhb") and "not exported yet" in shown.stdout
    assert run_cli("key", pid, "Thaman2025RHB", data_dir=folder).returncode == 0
    out = run_cli("export", "--ids", pid, "-o", "-", data_dir=folder)
    assert out.stdout.startswith("% Exported") and "@misc{Thaman2025RHB," in out.stdout
    bad = run_cli("key", pid, "two words", data_dir=folder)
    assert bad.returncode == 2 and "not a usable citation key" in bad.stderr
