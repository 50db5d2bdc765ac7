"""The export writes what came in: every field of every entry of TeX Live's xampl.bib
and biblatex-examples.bib, in both dialects, compiled with the real tools and compared
entry by entry (by key) with the original compiled the same way."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.biblio.latex_writer import latex_char
from papershelf.core.exporters.bibmaps import to_dialect, value_text
from papershelf.core.exporters.bibtex import render
from papershelf.core.importers.base import Candidate, ParsedFile
from papershelf.core.library import Library
from papershelf.core.paper import Paper, split_tags
from papershelf.core.render import plain_text
from test_bibtex import compile_bib, needs_tex, problems


def kpsewhich(name: str) -> Path | None:
    """A file of TeX Live, or None where TeX Live is not installed."""
    if shutil.which("kpsewhich") is None:
        return None
    found = subprocess.run(["kpsewhich", name], capture_output=True, text=True).stdout.strip()
    return Path(found) if found else None


XAMPL = kpsewhich("xampl.bib")
EXAMPLES = kpsewhich("biblatex-examples.bib")
FILES = {"xampl": XAMPL, "biblatex-examples": EXAMPLES}


def tex_file(name: str) -> Path:
    path = FILES[name]
    if path is None:  # the CI installs TeX Live; a missing file there fails in needs_tex's way
        pytest.skip(f"{name}.bib not found (TeX Live missing)")
    return path


# ---- reading a .bib as BibTeX does, independently of the importer ---------------------------
def pieces(expr: str) -> list[str]:
    """A value expression split at its top-level '#'."""
    out, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(expr):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == '"' and depth == 0:
            quoted = not quoted
        elif ch == "#" and depth == 0 and not quoted:
            out.append(expr[start:i].strip())
            start = i + 1
    out.append(expr[start:].strip())
    return out


def read_bib(text: str) -> tuple[dict[str, tuple[str, dict[str, str]]], str]:
    """key → (type, fields as value expressions with @string macros put in, the first of a
    repeated field kept), and the preamble; read with bibtexparser, no middleware."""
    import bibtexparser

    lib = bibtexparser.parse_string(text, parse_stack=[])
    strings = {s.key.lower(): s.value for s in lib.strings}
    entries: dict[str, tuple[str, dict[str, str]]] = {}
    for entry in lib.entries:
        fields: dict[str, str] = {}
        for f in entry.fields:
            fields.setdefault(f.key.lower(), " # ".join(strings.get(p.lower(), p) for p in pieces(f.value)))
        entries[entry.key] = (entry.entry_type.lower(), fields)
    return entries, " # ".join(p.value.strip() for p in lib.preambles)


def as_text(expr: str) -> str:
    return " ".join(plain_text(value_text(expr)).split())


def papers_of(path: Path) -> list[Paper]:
    """The entries of a .bib as papers with their records, as the importer stores them."""
    entries, preamble = read_bib(path.read_text(encoding="utf-8"))
    return [
        Paper(
            f"p{n:03}",
            title=as_text(fields.get("title", "")),
            entrytype=kind,
            bibfields=fields,
            preamble=preamble,
            citekey=key,
            tags=split_tags(as_text(fields.get("keywords", "")).replace(";", ",")),
        )
        for n, (key, (kind, fields)) in enumerate(entries.items())
    ]


def candidate(key: str, kind: str, fields: dict[str, str], preamble: str = "") -> Candidate:
    """An entry as the importer hands it to the library."""
    return Candidate(
        abstract="",
        line=1,
        title=as_text(fields.get("title", "")),
        authors=[as_text(a) for a in value_text(fields.get("author", "")).split(" and ") if a.strip()],
        year=int(m.group()) if (m := re.search(r"\d{4}", value_text(fields.get("year", "")))) else None,
        venue=as_text(fields.get("journal", "") or fields.get("booktitle", "")),
        tags=split_tags(as_text(fields.get("keywords", "")).replace(";", ",")),
        citekey=key,
        entrytype=kind,
        bibfields=fields,
        preamble=preamble,
    )


def export_of(name: str, dialect: str) -> tuple[str, list[Paper]]:
    papers = papers_of(tex_file(name))
    text, replaced = render(papers, {p.id: p.citekey for p in papers}, dialect)
    assert replaced == 0
    return text, papers


# ---- comparing compiled bibliographies ------------------------------------------------------
def bbl_entries(bbl: str, dialect: str) -> dict[str, str]:
    """key → that entry's part of the .bbl (\\bibitem … for bibtex, \\entry … \\endentry for biber)."""
    if dialect == "bibtex":
        parts = re.split(r"(?=\\bibitem)", bbl.split("\\end{thebibliography}")[0])[1:]
        return {re.match(r"\\bibitem(?:\[[^\]]*\])?\{([^}]*)\}", p).group(1): p.strip() for p in parts}
    return {m.group(1): m.group(0) for m in re.finditer(r"\\entry\{([^}]*)\}.*?\\endentry", bbl, re.S)}


def warning_kinds(found: list[str]) -> set[str]:
    """Warnings without what names their place (entry keys, lines, counts, temporary files):
    biber warns once per kind and entry in an order that follows the file."""
    kinds = set()
    for line in found:
        if re.search(r"There w(as|ere) \d+ warning|WARNINGS: \d+", line):
            continue
        line = re.sub(r"\[\d+\] \S+:\d+> ", "", line)
        line = re.sub(r"/tmp/\S+|line \d+ of file \S+|'[^']*'|\"[^\"]*\"|\b(in|for) \S+$|\d+", "#", line)
        kinds.add(line)
    return kinds


# ---- the tests --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["xampl", "biblatex-examples"])
@pytest.mark.parametrize("dialect", ["bibtex", "biblatex"])
def test_every_field_of_every_entry_goes_out_in_the_dialects_names(name, dialect):
    text, _ = export_of(name, dialect)
    original, preamble = read_bib(tex_file(name).read_text(encoding="utf-8"))
    exported, exported_preamble = read_bib(text)
    written = re.findall(r"^@(?!preamble)\w+\{([^,]+),", text, re.M)
    assert len(written) == len(set(written)) == len(original)  # no entry twice
    assert set(exported) == set(original)  # every key kept
    assert exported_preamble.split() == preamble.split()
    for key, (kind, fields) in original.items():
        assert exported[key] == to_dialect(kind, fields, dialect), key
    if dialect == "bibtex":
        # the file's values byte for byte: nothing outside ASCII that the file did not have
        assert set(re.findall(r"[^\x00-\x7f]", text)) <= set(tex_file(name).read_text(encoding="utf-8"))
        # BibLaTeX's names, written as classic BibTeX's
        types = {k: t for k, (t, _) in exported.items()}
        assert not {"online", "report", "thesis", "mvbook", "collection"} & set(types.values())
        if name == "biblatex-examples":
            assert types["ctan"] == "misc" and types["padhye"] == "techreport" and types["geer"] == "phdthesis"
            assert types["loh"] == "mastersthesis"
            sigfridsson = exported["sigfridsson"][1]
            assert "journal" in sigfridsson and "journaltitle" not in sigfridsson
            assert value_text(sigfridsson["year"]) == "1998" and "date" not in sigfridsson
            assert "school" in exported["geer"][1] and "institution" not in exported["geer"][1]
            assert "address" in exported["knuth:ct:a"][1]
            # plain knows no subtitle, but joining it to the title would make the title another
            # one: re-imported into its library, the entry would no longer be the same paper
            assert "subtitle" in exported["kastenholz"][1]
    else:
        types = {k: t for k, (t, _) in exported.items()}
        assert not {"phdthesis", "mastersthesis", "techreport", "conference"} & set(types.values())
        if name == "xampl":
            assert types["phdthesis-minimal"] == "thesis" and exported["phdthesis-minimal"][1]["type"] == "{phdthesis}"
            assert exported["mastersthesis-full"][1]["type"] == '"Master\'s project"'  # biber keeps the file's
            assert "journaltitle" in exported["article-full"][1] and "location" in exported["book-full"][1]


def errors(out: dict) -> set[str]:
    """pdflatex's errors, without their line numbers."""
    return {re.sub(r"\d+", "#", line) for line in out["log"].splitlines() if line.startswith("!")}


# biber numbers entries with equal names and years in the order of the file (extraname,
# extradate): the export is sorted by key, so two such entries may swap their numbers
_ORDER_FIELDS = re.compile(r"^\s*\\field\{extra(?:name|date|title|titleyear)\}\{\d+\}\n", re.M)


@needs_tex
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, dialect",
    [("xampl", "bibtex"), ("xampl", "biblatex"), ("biblatex-examples", "biblatex"), ("biblatex-examples", "bibtex")],
)
def test_the_export_compiles_as_the_original_does(name, dialect, tmp_path):
    """pdflatex + bibtex (plain) and pdflatex + biber: no warning or error the original does not
    give, and the bibliography the same entry by entry where the file was written for that tool."""
    text, _ = export_of(name, dialect)
    (tmp_path / "original").mkdir()
    (tmp_path / "export").mkdir()
    before = compile_bib(tmp_path / "original", tex_file(name).read_text(encoding="utf-8"), dialect)
    after = compile_bib(tmp_path / "export", text, dialect)
    assert after["tool"].returncode == 0, after["blg"][-2000:]
    # xampl's \={\i} is a combining accent to biber that pdflatex cannot typeset, and
    # biblatex-examples uses biblatex's commands (\mkbibquote) that plain does not define:
    # the original stops there too
    assert errors(after) <= errors(before)
    new = warning_kinds(problems(after, dialect)) - warning_kinds(problems(before, dialect))
    assert new == set()
    old_entries, new_entries = bbl_entries(before["bbl"], dialect), bbl_entries(after["bbl"], dialect)
    assert set(new_entries) == set(old_entries) and len(new_entries) >= 20
    same = [k for k in old_entries if _ORDER_FIELDS.sub("", old_entries[k]) == _ORDER_FIELDS.sub("", new_entries[k])]
    print(f"\n{name}, {dialect}: {len(same)} of {len(old_entries)} entries typeset identically")
    if (name, dialect) != ("biblatex-examples", "bibtex"):
        assert len(same) == len(old_entries), [k for k in old_entries if k not in same]
    else:  # written for biber: plain now gets classic types and names, and warns far less
        assert len(warning_kinds(problems(after, dialect))) < len(warning_kinds(problems(before, dialect)))


def test_a_bib_files_values_go_out_as_written_and_a_ris_records_text_is_spelt_as_latex_for_bibtex():
    value = '{M{\\"u}ller, Müller and Łukasz Þór, “Quoted” – α ≤ β, Ǩ q̃, 中}'
    from_bib = [{"file": "/x.bib", "format": "bibtex", "line": 1}]
    written = Paper("p0", title="x", entrytype="misc", bibfields={"title": value}, sources=from_bib)
    for dialect in ("bibtex", "biblatex"):  # a .bib file's LaTeX source, UTF-8 and all: as it came
        text, replaced = render([written], {"p0": "k"}, dialect)
        assert value in text and replaced == 0
    from_ris = [{"file": "/x.ris", "format": "ris", "line": 1}]
    paper = Paper(
        "p1", title="x", entrytype="misc", bibfields={"title": value, "note": "{Schro\u0308dinger}"}, sources=from_ris
    )
    text, replaced = render([paper], {"p1": "k"}, "bibtex")
    assert text.isascii() and replaced == 1  # the CJK character, counted
    assert '{M{\\"u}ller, M{\\"u}ller and {\\L}ukasz {\\TH}{\\\'o}r,' in text
    assert "``Quoted'' -- {\\ensuremath{\\alpha}} {\\ensuremath{\\leq}} {\\ensuremath{\\beta}}" in text
    assert '{Schr{\\"o}dinger}' in text  # NFC first
    assert "{\\v{K}} {\\~{q}}, ?" in text
    biblatex, _ = render([paper], {"p1": "k"}, "biblatex")
    # for biber a RIS record's Latin letters stay UTF-8, what pdflatex cannot typeset is LaTeX
    assert "Müller and Łukasz Þór, “Quoted” – {\\ensuremath{\\alpha}}" in biblatex
    # a typed name: in BibTeX as LaTeX; for biber without the accent Unicode has no letter for
    # (biber would hand pdflatex a combining accent it cannot typeset), counted
    typed = Paper("p3", title="Notes", authors=["Paul P\u0304ot"])
    assert "{\\={P}}ot, Paul" in render([typed], {"p3": "k"}, "bibtex")[0]
    assert "author = {Pot, Paul}" in render([typed], {"p3": "k"}, "biblatex")[0]
    assert render([typed], {"p3": "k"}, "biblatex")[1] == 1
    linked = Paper(
        "p2",
        title="x",
        entrytype="online",
        bibfields={"url": "{https://de.wikipedia.org/wiki/Gödel}"},
        sources=from_ris,
    )
    assert "https://de.wikipedia.org/wiki/G%C3%B6del}" in render([linked], {"p2": "k"}, "bibtex")[0]


@needs_tex
def test_every_character_pylatexenc_answers_for_compiles(tmp_path):
    """The allow-list of commands in biblio/latex_writer.py is what pdflatex really typesets."""
    chars = [chr(c) for c in [*range(0xA0, 0x250), *range(0x370, 0x400), *range(0x2000, 0x2070)]]
    answered = [c for c in chars if latex_char(c) is not None]
    assert len(answered) > 300
    papers = [
        Paper(
            f"p{n}",
            title="t",
            entrytype="misc",
            bibfields={"author": "{Ann Author}", "title": "{" + "".join(answered[n::8]) + "}"},
        )
        for n in range(8)
    ]
    text, _ = render(papers, {p.id: f"k{n}" for n, p in enumerate(papers)}, "bibtex")
    out = compile_bib(tmp_path, text, "bibtex")
    assert problems(out, "bibtex") == []


def one_record_library(folder: Path, entries: dict[str, tuple[str, dict[str, str]]], preamble: str = "") -> None:
    with Library.open(folder) as lib:
        for key, (kind, fields) in entries.items():
            lib.import_parsed(ParsedFile("refs.bib", "bibtex", [candidate(key, kind, fields, preamble)], []))


def xampl_entries(*keys: str) -> dict[str, tuple[str, dict[str, str]]]:
    entries, _ = read_bib(tex_file("xampl").read_text(encoding="utf-8"))
    return {k: entries[k] for k in keys}


def exported(folder: Path, *args: str) -> tuple[dict[str, tuple[str, dict[str, str]]], subprocess.CompletedProcess]:
    res = run_cli("export", *args, "-o", "-", data_dir=folder)
    assert res.returncode == 0, res.stderr
    return read_bib(res.stdout)[0], res


def test_an_edited_title_and_edited_tags_go_out_as_edited(data_dir):
    one_record_library(data_dir, xampl_entries("article-full"))
    with Library.open(data_dir) as lib:
        (pid,) = lib.ids()
        lib.set_title(pid, "Gnats & Gnus, Revised")
    entries, _ = exported(data_dir)
    kind, fields = entries["article-full"]
    original = xampl_entries("article-full")["article-full"][1]
    assert kind == "article" and fields["title"] == "{Gnats \\& Gnus, Revised}"
    assert {k: v for k, v in fields.items() if k != "title"} == {k: v for k, v in original.items() if k != "title"}
    assert run_cli("tag", pid, "--add", "gnus", data_dir=data_dir).returncode == 0
    fields = exported(data_dir)[0]["article-full"][1]
    assert fields["keywords"] == "{gnus}"


@pytest.mark.parametrize(
    "kind, bibtex_name, biblatex_name",
    [
        ("article", "journal", "journaltitle"),
        ("inproceedings", "booktitle", "booktitle"),
        ("misc", "howpublished", "howpublished"),
    ],
)
def test_a_display_field_whose_raw_fields_are_gone_goes_where_the_type_wants_it(kind, bibtex_name, biblatex_name):
    """A venue, year or DOI the record has no field for (an edit dropped it, or a merge brought
    it) is written from the paper; a crossref child's inherited venue is not."""
    record = {"author": "{Ann Author}", "title": "{A Title}", "note": "{Kept as it came}"}
    paper = Paper("p1", title="A Title", venue="Gnu Letters", year=1999, doi="10.1/x", entrytype=kind, bibfields=record)
    for dialect, name in (("bibtex", bibtex_name), ("biblatex", biblatex_name)):
        fields = read_bib(render([paper], {"p1": "k"}, dialect)[0])[0]["k"][1]
        assert fields[name] == "{Gnu Letters}" and fields["year"] == "{1999}" and fields["doi"] == "{10.1/x}"
        assert fields["note"] == "{Kept as it came}" and fields["title"] == "{A Title}"
    child = Paper(
        "p2", title="A Title", venue="Gnu Letters", year=1999, entrytype=kind, bibfields={**record, "crossref": "{k}"}
    )
    fields = read_bib(render([child], {"p2": "c"}, "bibtex")[0])[0]["c"][1]
    assert bibtex_name not in fields and "year" not in fields


@needs_tex
def test_a_cross_referenced_parent_is_added_after_its_children(data_dir, tmp_path):
    _, preamble = read_bib(tex_file("xampl").read_text(encoding="utf-8"))  # \noopsort is defined there
    one_record_library(data_dir, xampl_entries("inbook-crossref", "whole-set", "article-full"), preamble)
    with Library.open(data_dir, readonly=True) as lib:
        child = next(p.id for p in lib.papers() if p.citekey == "inbook-crossref")
    entries, res = exported(data_dir, "--ids", child)
    assert list(entries) == ["inbook-crossref", "whole-set"]  # the parent after its child
    assert "Wrote 2 entries" in res.stderr and "crossref" in res.stderr and "whole-set" in res.stderr
    _, all_res = exported(data_dir)
    keys = re.findall(r"^@\w+\{([^,]+),", all_res.stdout, re.M)
    assert keys.index("whole-set") > keys.index("inbook-crossref") and "crossref" not in all_res.stderr
    # BibTeX resolves it: the child gets the parent's fields
    out = compile_bib(tmp_path, all_res.stdout, "bibtex", cite=["inbook-crossref"])
    assert problems(out, "bibtex") == []
    assert "Fundamental Algorithms" in out["bbl"] and "Knuth" in out["bbl"] and "Addison-Wesley" in out["bbl"]


def test_preambles_are_written_once_at_the_top(data_dir):
    entries, preamble = read_bib(tex_file("xampl").read_text(encoding="utf-8"))
    one_record_library(data_dir, {k: entries[k] for k in ("article-full", "book-full")}, preamble)
    res = run_cli("export", "-o", "-", data_dir=data_dir)
    assert res.stdout.count("@preamble{") == 1
    assert res.stdout.index("@preamble{") < res.stdout.index("@article{") and "\\noopsort" in res.stdout


def test_show_bibtex_prints_the_entry(data_dir):
    one_record_library(data_dir, xampl_entries("phdthesis-minimal"))
    with Library.open(data_dir, readonly=True) as lib:
        (pid,) = lib.ids()
    res = run_cli("show", "--bibtex", pid[:6], data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("@phdthesis{phdthesis-minimal,\n") and 'school = "Fanstord University",' in res.stdout
    res = run_cli("show", pid[:6], "--bibtex", "--dialect", "biblatex", data_dir=data_dir)
    assert res.returncode == 0 and res.stdout.startswith("@thesis{phdthesis-minimal,\n")
    assert 'institution = "Fanstord University",' in res.stdout and "type        = {phdthesis}," in res.stdout
    # showing is no export: the key is not pinned, the library not written
    shown = json.loads(run_cli("show", "--json", pid, data_dir=data_dir).stdout)
    assert shown["citekey"] == "phdthesis-minimal"
    bad = run_cli("show", "--bibtex", "--json", pid, data_dir=data_dir)
    assert bad.returncode == 2 and "not allowed with" in bad.stderr


def test_a_corporate_name_typed_stays_one_name(data_dir):
    with Library.open(data_dir) as lib:
        cand = Candidate(abstract="", line=1, title="CGAL User Manual", authors=["The CGAL Project", "Ada Lovelace"])
        lib.import_parsed(ParsedFile("<pasted text>", "test", [cand], []))
    res = run_cli("export", "-o", "-", data_dir=data_dir)
    assert "{The CGAL Project} and Lovelace, Ada" in res.stdout


@pytest.mark.parametrize("name", ["xampl", "biblatex-examples"])
def test_the_cli_round_trip_of_the_tex_live_files(data_dir, name):
    """Through the real importer and exporter: every entry an import kept as its own paper goes
    out with every field as it came (in the dialect's names)."""
    res = run_cli("import", str(tex_file(name)), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    with Library.open(data_dir, readonly=True) as lib:
        papers = len(lib)
    original, _ = read_bib(tex_file(name).read_text(encoding="utf-8"))
    # entries with the same title, author and year are still merged by the import (the duplicate
    # finder's part of issue 13), and the paper takes its twin's venue: those are left out here
    twins: dict[tuple[str, ...], list[str]] = {}
    for key, (_, fields) in original.items():
        twins.setdefault(tuple(as_text(fields.get(f, "")) for f in ("title", "author", "year")), []).append(key)
    merged = {k for group in twins.values() if len(group) > 1 for k in group}
    for dialect in ("bibtex", "biblatex"):
        entries, _ = exported(data_dir, "--dialect", dialect)
        assert len(entries) == papers and set(entries) <= set(original)
        kept = [k for k in entries if k not in merged]
        assert [k for k in kept if entries[k] != to_dialect(*original[k], dialect)] == []
        print(
            f"\n{name}, {dialect}: all {len(kept)} entries without a twin out as they came in;"
            f" {len(original) - len(entries)} of {len(original)} entries merged away by the import"
        )


XDATA = r"""@xdata{hostetler:xd,
  journaltitle = {J.~Chem. Phys.},
  date         = 1998,
}

@article{hostetler:child,
  author = {Hostetler, Michael J. and Wingate, Julia E.},
  title  = {Alkanethiolate gold cluster molecules},
  volume = 14,
  pages  = {17--30},
  xdata  = {hostetler:xd},
}
"""


@needs_tex
def test_an_xdata_entry_comes_along_and_biber_fills_the_child_from_it(data_dir, tmp_path):
    refs = tmp_path / "refs-in.bib"
    refs.write_text(XDATA, encoding="utf-8")
    assert run_cli("import", str(refs), data_dir=data_dir).returncode == 0
    with Library.open(data_dir, readonly=True) as lib:
        child = next(p.id for p in lib.papers() if p.citekey == "hostetler:child")
    entries, res = exported(data_dir, "--dialect", "biblatex", "--ids", child)
    assert list(entries) == ["hostetler:child", "hostetler:xd"] and "hostetler:xd" in res.stderr
    out = compile_bib(tmp_path, res.stdout, "biblatex", cite=["hostetler:child"])
    assert problems(out, "biblatex") == []
    assert "\\field{journaltitle}{J.~Chem. Phys.}" in out["bbl"] and "\\field{year}{1998}" in out["bbl"]
    # BibTeX knows no xdata: its fields are written into the child
    entries, res = exported(data_dir, "--ids", child)
    assert (
        entries["hostetler:child"][1]["journal"] == "{J.~Chem. Phys.}" and "xdata" not in entries["hostetler:child"][1]
    )
    (tmp_path / "bibtex").mkdir()
    out = compile_bib(tmp_path / "bibtex", res.stdout, "bibtex", cite=["hostetler:child"])
    assert problems(out, "bibtex") == [] and "J.~Chem. Phys." in out["bbl"] and "1998" in out["bbl"]
