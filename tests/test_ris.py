"""RIS import into the bibliographic record, and RIS export: through the command line and the window."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import FIXTURES, SEEDS, run_cli

PUBLIC = FIXTURES / "public" / "ris"

# A Zotero-style export: every common type, names of every shape, LaTeX specials, DOI prefixes
RICH = """TY  - CHAP
AU  - García-Pérez, José
AU  - Rumble, John R., Jr.
AU  - World Health Organization
AU  - Aristotle
A2  - Knuth, Donald E.
TI  - 100% of $5 & #1: the_best ^ ~ {braces} \\ and BERT on the iPhone
T2  - Handbook of Things
T3  - Lecture Notes in Computer Science
PY  - 2019/05/12/
SP  - 11
EP  - 29
SE  - 3
PB  - Springer
CY  - Berlin
SN  - 978-3-16-148410-0
ET  - 2
DO  - https://doi.org/10.1007/978-3-16-148410-0_3
UR  - https://link.example.org/chapter/3
AB  - An abstract about costs & benefits, 50% of them.
KW  - handbooks
KW  - things
N1  - A note from the file
LA  - en
ER  -

TY  - THES
AU  - Student, Sam
TI  - A Master's Thesis
PB  - University of Somewhere
M3  - Master's thesis
PY  - 2020
DO  - doi:10.5555/thesis.1
ER  -

TY  - THES
AU  - Doctor, Dana
TI  - A Doctoral Thesis
PB  - University of Elsewhere
PY  - 2021
DO  - http://dx.doi.org/10.5555/thesis.2
ER  -

TY  - RPRT
AU  - Writer, Ray
TI  - A Technical Report
PB  - Institute of Reports
M3  - Technical Report
IS  - TR-42
PY  - 2018
ER  -

TY  - ELEC
AU  - Blogger, Bea
TI  - A Web Page
UR  - https://example.org/page
Y2  - 2024/03/01/
PY  - 2024
ER  -

TY  - CONF
AU  - Speaker, Sue
TI  - A Conference Paper
T2  - Proceedings of the Conference
A2  - Chair, Carl
PY  - 2017
DA  - 2017/07/
SP  - 5-9
DO  - DOI: 10.5555/conf.3
ER  -

TY  - BOOK
AU  - Author, Ann
TI  - A Whole Book
T2  - A Book Series
PB  - Addison-Wesley
PY  - 1986
SN  - 0-201-13448-9
SN  - 0302-9743
ER  -

TY  - JOUR
AU  - Doe, Jane
TI  - Dense attention for short documents
JO  - Journal of Long Things
JA  - J. Long Things
VL  - 12
IS  - 3
PY  - 2023
SN  - 1234-5678
ER  -

TY  - BLOG
TI  - Some Other Kind
ER  -

TY  - ABCD
TI  - An Unknown Type
ER  -
"""


def papers_of(data_dir) -> list[dict]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def by_title(papers: list[dict]) -> dict[str, dict]:
    return {p["title"]: p for p in papers}


def test_every_ris_tag_with_a_bibtex_counterpart_is_a_field_of_the_record(data_dir, tmp_path):
    path = tmp_path / "zotero.ris"
    path.write_text(RICH, encoding="utf-8")
    res = run_cli("import", str(path), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    papers = by_title(papers_of(data_dir))
    assert len(papers) == 10

    [chap] = [p for p in papers.values() if p["entrytype"] == "incollection"]
    assert chap["title"].startswith("100% of $5 & #1: the_best")
    assert chap["authors"][:2] == ["José García-Pérez", "John R. Rumble"]
    assert chap["venue"] == "Handbook of Things" and chap["year"] == 2019
    assert chap["doi"] == "10.1007/978-3-16-148410-0_3"  # cleaned of https://doi.org/
    assert chap["tags"] == []  # keywords are the record's, not tags (issue 20 defect 2)
    assert chap["bibfields"] == {
        # a corporate or one-word name braced; the suffix in BibTeX's place
        "author": "{García-Pérez, José and Rumble, Jr., John R. and {World Health Organization} and {Aristotle}}",
        "editor": "{Knuth, Donald E.}",
        # specials escaped, words with inner capitals protected from a style's lower-casing
        "title": "{100\\% of \\$5 \\& \\#1: the\\_best \\textasciicircum{} \\textasciitilde{} \\{braces\\} "
        "\\textbackslash{} and {BERT} on the {iPhone}}",
        "booktitle": "{Handbook of Things}",
        "series": "{Lecture Notes in Computer Science}",
        "year": "2019",
        "month": "may",
        "pages": "{11--29}",
        "chapter": "{3}",
        "publisher": "{Springer}",
        "address": "{Berlin}",
        "edition": "{2}",
        "isbn": "{978-3-16-148410-0}",
        "doi": "{10.1007/978-3-16-148410-0_3}",
        "url": "{https://link.example.org/chapter/3}",
        "abstract": "{An abstract about costs \\& benefits, 50\\% of them.}",
        "keywords": "{handbooks, things}",
        "note": "{A note from the file}",
        "language": "{en}",
    }
    masters, phd = papers["A Master's Thesis"], papers["A Doctoral Thesis"]
    assert masters["entrytype"] == "mastersthesis" and masters["bibfields"]["school"] == "{University of Somewhere}"
    assert phd["entrytype"] == "phdthesis" and phd["bibfields"]["school"] == "{University of Elsewhere}"
    assert (masters["doi"], phd["doi"]) == ("10.5555/thesis.1", "10.5555/thesis.2")
    report = papers["A Technical Report"]
    assert report["entrytype"] == "techreport"
    assert report["bibfields"]["institution"] == "{Institute of Reports}"
    assert report["bibfields"]["number"] == "{TR-42}" and report["bibfields"]["type"] == "{Technical Report}"
    web = papers["A Web Page"]
    assert web["entrytype"] == "online" and web["bibfields"]["urldate"] == "{2024-03-01}"
    conf = papers["A Conference Paper"]
    assert conf["entrytype"] == "inproceedings" and conf["venue"] == "Proceedings of the Conference"
    assert conf["doi"] == "10.5555/conf.3" and conf["bibfields"]["doi"] == "{10.5555/conf.3}"
    assert conf["bibfields"]["pages"] == "{5--9}" and conf["bibfields"]["month"] == "jul"
    assert conf["bibfields"]["editor"] == "{Chair, Carl}"
    book = papers["A Whole Book"]
    assert book["entrytype"] == "book" and book["bibfields"]["series"] == "{A Book Series}"
    assert book["bibfields"]["isbn"] == "{0-201-13448-9}" and book["bibfields"]["issn"] == "{0302-9743}"
    assert book["bibfields"]["publisher"] == "{Addison-Wesley}"
    article = papers["Dense attention for short documents"]
    assert article["entrytype"] == "article" and article["venue"] == "Journal of Long Things"
    assert article["bibfields"]["journal"] == "{Journal of Long Things}"
    assert article["bibfields"]["shortjournal"] == "{J. Long Things}"
    assert article["bibfields"]["issn"] == "{1234-5678}" and article["bibfields"]["volume"] == "{12}"
    assert papers["Some Other Kind"]["entrytype"] == "online"
    assert papers["An Unknown Type"]["entrytype"] == "misc"


TEX = {
    "bibtex": "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}"
    "\\begin{document}\\nocite{*}\\bibliographystyle{plain}\\bibliography{refs}\\end{document}\n",
    "biblatex": "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}"
    "\\usepackage[backend=biber]{biblatex}\\addbibresource{refs.bib}"
    "\\begin{document}\\nocite{*}\\printbibliography\\end{document}\n",
}
needs_tex = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("pdflatex", "bibtex", "biber")) and not os.environ.get("CI"),
    reason="TeX tools missing",
)


@needs_tex
@pytest.mark.parametrize("dialect", ["bibtex", "biblatex"])
def test_the_record_of_a_ris_import_is_bibtex_that_compiles(data_dir, tmp_path, dialect):
    """The fields' values are LaTeX as a .bib file holds it: written out as they are, the
    entries typeset with no error, the specials as the RIS file had them."""
    path = tmp_path / "zotero.ris"
    path.write_text(RICH, encoding="utf-8")
    assert run_cli("import", str(path), data_dir=data_dir).returncode == 0
    entries = []
    for n, p in enumerate(papers_of(data_dir)):
        kind = p["entrytype"]
        if dialect == "bibtex" and kind == "online":
            kind = "misc"  # classic styles know no @online (the dialect mapping is the BibTeX export's)
        fields = {k: v for k, v in p["bibfields"].items() if dialect == "biblatex" or k not in ("urldate",)}
        body = ",\n".join(f"  {k} = {v}" for k, v in fields.items())
        entries.append(f"@{kind}{{k{n},\n{body}\n}}\n")
    (tmp_path / "refs.bib").write_text("\n".join(entries), encoding="utf-8")
    (tmp_path / "doc.tex").write_text(TEX[dialect], encoding="utf-8")

    def run(*cmd):
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, errors="replace", timeout=300)

    run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    tool = run("bibtex", "doc") if dialect == "bibtex" else run("biber", "doc")
    run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    last = run("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
    assert tool.returncode == 0, tool.stdout
    assert last.returncode == 0, last.stdout[-3000:]
    blg = (tmp_path / "doc.blg").read_text(errors="replace")
    assert not re.search(r"error message|I was expecting|ERROR", blg), blg
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert not re.search(r"^!|Undefined control sequence|Missing character", log, re.M)
    bbl = (tmp_path / "doc.bbl").read_text(errors="replace")
    assert "\\$5 \\& \\#1" in bbl and "García" in bbl
    pdftotext = shutil.which("pdftotext")
    if pdftotext:  # what the reader of the paper sees
        text = subprocess.run([pdftotext, str(tmp_path / "doc.pdf"), "-"], capture_output=True, text=True).stdout
        assert "100% of $5 & #1: the_best" in " ".join(text.split())


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        (
            "RisImporterTestScopus.ris",
            {
                "authors": ["S. Federico", "A. Grillo", "W. Herzog"],
                "year": 2004,
                "venue": "Journal of the Mechanics and Physics of Solids",
                "doi": "10.1016/j.jmps.2004.03.010",
                "fields": {
                    "author": "{Federico, S. and Grillo, A. and Herzog, W.}",
                    "volume": "{52}",
                    "number": "{10}",
                    "pages": "{2309--2327}",
                    "note": "{Cited By :44; Export Date: 1 April 2016}",
                    "keywords": "{Composite, Inclusions, Statistical distribution, Transverse isotropy}",
                },
            },
        ),
        (
            "RisImporterTestDOI.ris",
            {
                "authors": ["Sang In Jung", "Na Kyung Lee", "Kyung Woo Kang", "Kyoung Kim", "Do Youn Lee"],
                "year": 2016,
                "venue": "Journal of physical therapy science",
                "doi": "10.1589/jpts.28.186",
                "fields": {
                    "issn": "{0915-5287, 2187-5626}",
                    "shortjournal": "{J Phys Ther Sci}",
                    "month": "jan",
                    "pages": "{186--189}",
                    "publisher": "{The Society of Physical Therapy Science}",
                    "language": "{eng}",
                },
            },
        ),
        (
            "RisImporterTest6.ris",
            {
                "authors": ["Margaret E Sears"],
                "year": 2013,
                "venue": "The Scientific World Journal",
                "doi": "10.1155/2013/219840",
                "fields": {
                    "title": "{Chelation: Harnessing and Enhancing Heavy Metal Detoxification—A Review}",
                    "issn": "{1537-744X}",
                    "month": "apr",
                    "volume": "{2013}",
                    "pages": "{219840}",
                },
            },
        ),
        (
            "example_utf_chars.ris",
            {
                "authors": [
                    "Yu E. Dobrokhotova",
                    "R. O. Yusupova",
                    "R. I. Ozerova",
                    "L. Z. Fayzullin",
                    "V. N. Karnaukhov",
                ],
                "year": 2009,
                "venue": "Gynecology, Obstetrics and Perinatology",
                "doi": "",
                "fields": {"volume": "{8}", "pages": "{52--57}", "note": "{Ä,Ö,Ü,ä,ö,ü,ß}"},
            },
        ),
    ],
)
def test_public_ris_files_import_with_their_fields(data_dir, name, expect):
    res = run_cli("import", str(PUBLIC / name), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    [paper] = papers_of(data_dir)
    assert paper["entrytype"] == "article"
    for key in ("authors", "year", "venue", "doi"):
        assert paper[key] == expect[key], key
    for key, value in expect["fields"].items():
        assert paper["bibfields"][key] == value, key


def test_public_ris_files_with_stray_lines_and_no_title_say_so(data_dir):
    res = run_cli(
        "import",
        str(PUBLIC / "example_full.ris"),
        str(PUBLIC / "RisImporterTestDoiAndJournalTitle.ris"),
        data_dir=data_dir,
    )
    out = res.stdout + res.stderr
    assert "not a RIS line: '1.'" in out and "not a RIS line: '2.'" in out
    # a record with neither is kept, as a .bib entry is, and said
    assert "has neither a title (TI) nor an abstract (AB); it was imported as an untitled paper" in out
    papers = by_title(papers_of(data_dir))
    assert set(papers) == {"Title of reference", "The title of the reference", "Untitled paper"}
    untitled = papers["Untitled paper"]
    assert (untitled["entrytype"], untitled["doi"]) == ("patent", "10.1201/b19107-2")
    assert untitled["bibfields"]["number"] == "{25}" and untitled["bibfields"]["edition"] == "{5}"
    first = papers["Title of reference"]
    assert first["abstract"].startswith("BACKGROUND: Lorem ipsum")  # from N2
    assert first["authors"] == ["Karl Marx", "Astrid Lindgren"]  # from A1
    assert first["bibfields"]["editor"] == "{Glattauer, Daniel}"  # A2
    assert first["bibfields"]["shortjournal"] == "{lorem}" and first["venue"] == "Lorem"
    # the utf-8 file's Cyrillic short title is the title when there is no TI
    assert run_cli("import", str(PUBLIC / "example_utf_chars.ris"), data_dir=data_dir).returncode == 0
    cyrillic = next(p for p in papers_of(data_dir) if p["title"].startswith("Состояние"))
    assert cyrillic["bibfields"]["abstract"].endswith("in the late reproductive period}")


def records(text: str) -> list[dict[str, list[str]]]:
    out: list[dict[str, list[str]]] = []
    for line in text.split("\r\n"):
        if m := re.match(r"^([A-Z][A-Z0-9])  - ?(.*)$", line):
            if m.group(1) == "TY":
                out.append({})
            out[-1].setdefault(m.group(1), []).append(m.group(2))
    return out


def test_ris_export_re_imports_as_the_same_papers(data_dir, tmp_path):
    rich = tmp_path / "zotero.ris"
    rich.write_text(RICH, encoding="utf-8")
    sources = [*SEEDS[:2], rich, FIXTURES / "bib" / "sample.ris", FIXTURES / "bib" / "zotero.bib"]
    sources += sorted(PUBLIC.glob("*.ris"))
    run_cli("import", *map(str, sources), data_dir=data_dir)
    some = papers_of(data_dir)[0]["id"]
    assert run_cli("note", some, "my private thoughts", data_dir=data_dir).returncode == 0
    before = papers_of(data_dir)

    out = tmp_path / "refs.ris"
    res = run_cli("export", "-o", str(out), data_dir=data_dir)  # .ris alone picks RIS
    assert res.returncode == 0, res.stderr
    assert f"Wrote {len(before)} RIS records to {out}" in res.stdout
    data = out.read_bytes()
    text = data.decode("utf-8")
    assert text.startswith("TY  - ") and "\n" not in text.replace("\r\n", "")  # CR LF line ends only
    got = records(text)
    # (a RIS record goes out as it came: RisImporterTestDoiAndJournalTitle.ris ends with "ER  - dsfd")
    assert len(got) == len(before) and all(r.get("ER") in ([""], ["dsfd"]) for r in got)
    assert sum(r["ER"] == ["dsfd"] for r in got) == 1
    assert "my private thoughts" not in text  # the user's notes are private
    chap = next(r for r in got if r.get("TY") == ["CHAP"])
    assert chap["AU"] == ["García-Pérez, José", "Rumble, John R., Jr.", "World Health Organization", "Aristotle"]
    assert chap["A2"] == ["Knuth, Donald E."] and chap["T2"] == ["Handbook of Things"]
    # (a paper from a RIS record goes out as the record came: its date and DOI as written)
    assert (chap["SP"], chap["EP"], chap["PY"]) == (["11"], ["29"], ["2019/05/12/"]) and "DA" not in chap
    assert chap["DO"] == ["https://doi.org/10.1007/978-3-16-148410-0_3"] and chap["SN"] == ["978-3-16-148410-0"]
    assert chap["TI"] == ["100% of $5 & #1: the_best ^ ~ {braces} \\ and BERT on the iPhone"]
    assert chap["N1"] == ["A note from the file"] and chap["PB"] == ["Springer"] and chap["CY"] == ["Berlin"]
    assert {r["TY"][0] for r in got} >= {"JOUR", "CHAP", "THES", "RPRT", "ELEC", "CPAPER", "BOOK", "GEN"}

    # into its own library: nothing added, nothing changed but where the papers came from
    res = run_cli("import", str(out), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    after = papers_of(data_dir)
    assert len(after) == len(before)
    shown = ("title", "authors", "year", "venue", "doi", "arxiv_id", "tags", "abstract", "notes")
    assert [{k: p[k] for k in shown} for p in after] == [{k: p[k] for k in shown} for p in before]
    # the records are as they were; a listing paper, which had none, takes the export's (a merge
    # gives a record to a paper without one)
    keep = (*shown, "entrytype", "bibfields")
    for p, q in zip(before, after, strict=True):
        if p["entrytype"]:
            assert {k: q[k] for k in keep if k != "bibfields"} == {k: p[k] for k in keep if k != "bibfields"}
            assert q["bibfields"].items() ^ p["bibfields"].items() == set(), p["title"]
        else:
            assert q["entrytype"] == "misc"

    # into a fresh library: the same papers with the same records
    fresh = tmp_path / "fresh"
    assert run_cli("import", str(out), data_dir=fresh).returncode == 0
    again = by_title(papers_of(fresh))
    # (a RIS value is one line: white space in an abstract goes out as single spaces; notes stay home)
    same = ("title", "authors", "year", "venue", "doi", "arxiv_id", "tags", "entrytype")
    compared = 0
    for p in before:
        if p["entrytype"] and not p["title_derived"]:
            q = again[p["title"]]
            assert {k: q[k] for k in same} == {k: p[k] for k in same}, p["title"]
            if all(s["format"] == "ris" for s in p["sources"]):
                # from RIS and back: the same record and abstract (a .bib record's LaTeX, such as
                # braces that protect capitals or math in an abstract, has no RIS form: RIS is
                # text; its text fields are compared above)
                assert q["abstract"].split() == p["abstract"].split()
                assert q["bibfields"].items() ^ p["bibfields"].items() == set(), p["title"]
            compared += 1
    print(f"RIS round trip: {len(before)} papers exported, re-import added 0, {compared} records identical")
    assert compared >= 15


def test_export_format_options_and_an_empty_selection(data_dir, tmp_path):
    assert run_cli("import", str(FIXTURES / "bib" / "sample.ris"), data_dir=data_dir).returncode == 0
    sample = by_title(papers_of(data_dir))
    sparse, solo = sample["Sparse attention for long documents"], sample["A record without an abstract"]
    assert (sparse["entrytype"], solo["entrytype"]) == ("article", "inproceedings")
    assert sparse["bibfields"]["journal"] == "{Journal of Long Things}" and sparse["arxiv_id"] == "2301.01234"
    assert (
        sparse["bibfields"]["eprint"] == "{2301.01234}"
        and sparse["bibfields"]["author"] == "{Doe, Jane and Roe, Richard}"
    )
    res = run_cli("export", "--format", "ris", "-o", "-", data_dir=data_dir)
    assert res.returncode == 0 and res.stdout.count("ER  - ") == 2
    assert "Wrote 2 RIS records to standard output." in res.stderr
    # a .bib name with --format ris is still RIS; --dialect keeps choosing BibTeX
    assert run_cli("export", "--format", "ris", "-o", str(tmp_path / "a.bib"), data_dir=data_dir).returncode == 0
    assert (tmp_path / "a.bib").read_text(encoding="utf-8").startswith("TY  - ")
    res = run_cli("export", "--dialect", "biblatex", "-o", str(tmp_path / "b.bib"), data_dir=data_dir)
    assert res.returncode == 0 and "BibLaTeX" in (tmp_path / "b.bib").read_text(encoding="utf-8")
    res = run_cli("export", "--format", "biblatex", "-o", str(tmp_path / "c.ris"), data_dir=data_dir)
    assert res.returncode == 0 and "@" in (tmp_path / "c.ris").read_text(encoding="utf-8")
    res = run_cli("export", "--format", "ris", "--dialect", "biblatex", "-o", "-", data_dir=data_dir)
    assert res.returncode == 2 and "--dialect is for BibTeX output" in res.stderr and "Traceback" not in res.stderr
    # nothing selected: the file stays as it was
    target = tmp_path / "refs.ris"
    target.write_bytes(b"TY  - GEN\r\nTI  - keep me\r\nER  - \r\n")
    res = run_cli("export", "--status", "read", "-o", str(target), data_dir=data_dir)
    assert res.returncode != 0 and "selects no papers" in res.stderr + res.stdout
    assert target.read_bytes() == b"TY  - GEN\r\nTI  - keep me\r\nER  - \r\n"


@pytest.mark.gui
def test_the_window_exports_ris(window, qtbot, monkeypatch, tmp_path):
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QFileDialog

    from test_export_fragments import export_anyway

    offered = []

    def save_as(parent, caption, start, filters, chosen):
        offered.append((filters.split(";;"), start, chosen))
        ris = next(f for f in filters.split(";;") if f.startswith("RIS"))
        return str(tmp_path / "chosen"), ris

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    view = window.paper_list
    view.setFocus()
    view.selectAll()
    n = len(window.selected_ids())
    assert n > 0
    with qtbot.waitSignal(window.exportFinished, timeout=30_000) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
        export_anyway(qtbot)  # listing papers: all fragments, which the window warns about first
    assert "RIS, for reference managers (*.ris)" in offered[0][0]
    assert blocker.args[0].entries == n
    written = (tmp_path / "chosen.ris").read_bytes().decode("utf-8")
    assert written.count("ER  - \r\n") == n
    assert QSettings().value("export/dialect", "bibtex") == "bibtex"  # the preferences' dialect untouched
    # the next export offers RIS again, under a .ris name
    window.activateWindow()  # from the warning box, closed
    qtbot.waitUntil(window.isActiveWindow)
    with qtbot.waitSignal(window.exportFinished, timeout=30_000):
        qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
        export_anyway(qtbot)
    assert offered[-1][1].endswith(".ris") and offered[-1][2].startswith("RIS")


def test_bibtex_names_of_every_shape_become_ris_names():
    """Names as a .bib file writes them (once the BibTeX import keeps its records, they reach
    the RIS export this way): family first, the von part with it, the suffix last."""
    from papershelf.core.exporters.ris import ris_names

    raw = (
        "{Doe, Jane and van der Berg, Anna and {The CGAL Project} and Fletcher, III, Harry George"
        " and Jean de La Fontaine and Ada Lovelace and Aristotle and Garc{\\'\\i}a, Jos{\\'e} and others}"
    )
    assert ris_names(raw) == [
        "Doe, Jane",
        "van der Berg, Anna",
        "The CGAL Project",
        "Fletcher, Harry George, III",
        "de La Fontaine, Jean",
        "Lovelace, Ada",
        "Aristotle",
        "García, José",
    ]


def test_a_value_with_line_breaks_cannot_end_its_record(data_dir, tmp_path):
    """RIS ends a record at an ER line: an abstract holding lines that look like tags stays one value."""
    bib = tmp_path / "hostile.bib"
    bib.write_text(
        "@article{hostile,\n  title = {A Hostile Abstract},\n  author = {Evil, Eve},\n  year = {2020},\n"
        "  abstract = {It starts well.\nER  - \n\nTY  - JOUR\nTI  - An injected paper\nER  - \nand ends.}\n}\n",
        encoding="utf-8",
    )
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    out = tmp_path / "out.ris"
    assert run_cli("export", "-o", str(out), data_dir=data_dir).returncode == 0
    text = out.read_bytes().decode("utf-8")
    assert text.count("TY  - ") == 1 and text.count("\r\nER  - ") == 1
    fresh = tmp_path / "fresh"
    assert run_cli("import", str(out), data_dir=fresh).returncode == 0
    [paper] = papers_of(fresh)
    assert paper["title"] == "A Hostile Abstract" and "An injected paper" in paper["abstract"]


# ---- the reviewer's round trips (issue 13): keys, removed tags, types, arXiv ids -------------
ROUND = """@book{kullback, author={Kullback, S.}, title={Information Theory}, year=1997}
@book{kullback:related, author={Kullback, S.}, title={Information Theory}, year=1997, related={kullback}}
@article{whole-journal, key={GAJ}, journal={G-Animal's Journal}, year=1986, volume=41, number=7}
@proceedings{procs, editor={Bob Jones}, title={Proceedings of Things}, publisher={ACM}, year=1999}
@inproceedings{paper, author={Ann Smith}, title={A Paper in Them}, booktitle={Proceedings of Things}, year=1999}
@thesis{loh, author={Loh, Nin C.}, title={An Accelerometer}, type={mathesis}, institution={MIT}, date={1992}}
@mastersthesis{dipl, author={Doe, Jane}, title={A Diploma Thesis}, school={TU}, type={Diploma Thesis}, year=2001}
@phdthesis{phd, author={Roe, Rick}, title={A Doctoral Thesis}, school={TU Elsewhere}, year=2002}
@mastersthesis{ms, author={Moe, Mia}, title={A Plain Master's Thesis}, school={TU Here}, year=2003}
@collection{coll, editor={Kay, Ken}, title={A Collection}, publisher={P}, year=2004}
@techreport{tr, author={Ng, Nat}, title={A Report}, institution={I}, type={Memo}, year=2006}
@misc{azarchs04, author={Azarchs, A.}, title={Entropic}, year=2004, archivePrefix={arXiv}, eprint={quant-ph/0412083},
  url={http://arxiv.org/abs/quant-ph/0412083}}
@inproceedings{shayevitz11, author={Shayevitz, Ofer}, title={On Renyi Measures}, booktitle={Proc. ISIT},
  year=2011, archivePrefix={arXiv}, eprint={1012.4401},
  url={http://arxiv.org/abs/1012.4401 http://ieeexplore.ieee.org/x?arnumber=6034266}}
@article{modern, author={Mod, Mo}, title={A Modern Id}, journal={J}, year=2023, eprint={2301.01234v2},
  archiveprefix={arXiv}, keywords={Machine Learning; GPUs}}
"""
# what another program writes: no ID; a Zotero conference paper is a CONF; an old-style arXiv link
OTHER = "TY  - CONF\r\nAU  - Ho, Al\r\nTI  - Talk\r\nUR  - http://arxiv.org/pdf/math.GT/0309136v1.pdf\r\nER  - \r\n"


def test_a_ris_export_reimports_as_the_same_papers_with_keys_types_and_arxiv_ids(library, tmp_path):
    from papershelf.core.library import Library

    for name, text in (("in.bib", ROUND), ("other.ris", OTHER)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    library.import_files([tmp_path / "in.bib"])
    before = {p.citekey: p for p in library.papers()}
    library.export_ris([p.id for p in before.values()], tmp_path / "out.ris")
    ris = (tmp_path / "out.ris").read_text(encoding="utf-8")
    assert "UR  - https://arxiv.org/abs/quant-ph/0412083\n" in ris and ris.count("UR  - https://arxiv.org/abs/") == 3
    with Library.open(tmp_path / "fresh") as fresh:
        notes = [str(p) for r in fresh.import_files([tmp_path / "out.ris", tmp_path / "other.ris"]) for p in r.problems]
        after = {p.citekey: p for p in fresh.papers()}
    assert sorted(after) == sorted([*before, ""])  # the ID lines are the keys: the twins are two papers
    assert any("'whole-journal' has neither a title (TI) nor an abstract (AB)" in n for n in notes), notes
    assert not any("citation key" in n for n in notes), notes  # RIS needs no ID: none missing
    journal = after["whole-journal"]  # imported, and said
    assert (journal.entrytype, journal.venue, journal.year) == ("article", "G-Animal's Journal", 1986)
    assert journal.bibfields["volume"] == "{41}" and journal.bibfields["number"] == "{7}"
    types = {k: p.entrytype for k, p in after.items()}
    assert types == {k: p.entrytype for k, p in before.items()} | {"loh": "mastersthesis", "": "inproceedings"}
    # @thesis with type = {mathesis} goes out as M3 "Master's thesis", and comes back a master's
    # thesis; an M3 that says only what the entry type says is no type field
    kinds = {k: p.bibfields["type"] for k, p in after.items() if "type" in p.bibfields}
    assert kinds == {"dipl": "{Diploma Thesis}", "tr": "{Memo}"}
    arxiv = {k: p.arxiv_id for k, p in before.items()} | {"": "math.GT/0309136v1"}
    assert {k: p.arxiv_id for k, p in after.items()} == arxiv


def test_ris_export_writes_the_keywords_as_they_came_then_the_users_other_tags(library, tmp_path):
    (tmp_path / "kw.bib").write_text("@" + ROUND.split("\n@")[-1], encoding="utf-8")  # keywords: Machine Learning; GPUs
    library.import_files([tmp_path / "kw.bib"])
    [paper] = library.papers()
    assert paper.tags == []
    library.add_tags([paper.id], ["mine", "gpus"])
    assert "KW  - Machine Learning\r\nKW  - GPUs\r\nKW  - mine\r\n" in library.export_ris([paper.id], "-")[1]
    library.remove_tags([paper.id], ["gpus", "mine"])
    assert "KW  - Machine Learning\r\nKW  - GPUs\r\nER" in library.export_ris([paper.id], "-")[1]
