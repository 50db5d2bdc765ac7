"""Importing a .bib keeps the whole record and reads it the way BibTeX does (issue 13,
items 1 and 5): every entry's type and every field as written, names by BibTeX's rules
(corporate names whole, `and others` kept), LaTeX decoded for the reader, a field given
twice keeps its first value with a note, an entry without a key imports, crossref is
resolved for what the reader sees, and a file in GBK reads as GBK.

The real files are TeX Live's `xampl.bib` (BibTeX's own example) and `biblatex-examples.bib`;
what they hold is checked against what bibtexparser reads from them, field by field."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import bibtexparser
import pytest
from bibtexparser import model

from conftest import run_cli
from papershelf.core.biblio import latex
from papershelf.core.biblio.latex import decode
from papershelf.core.biblio.names import Name, parse_names
from papershelf.core.importers.base import read_text
from papershelf.core.importers.bibfile import parse_bib
from papershelf.core.library import Library


def tex_live(name: str) -> Path:
    found = shutil.which("kpsewhich") and subprocess.run(["kpsewhich", name], capture_output=True, text=True).stdout
    if not found or not found.strip():
        pytest.skip(f"TeX Live's {name} is not installed")
    return Path(found.strip())


def reference(path: Path) -> tuple[list[model.Entry], dict[str, str]]:
    """The entries (those with a repeated field too) as bibtexparser reads them with no
    middleware (values as written), and the file's @string macros, lower-cased names."""
    lib = bibtexparser.parse_string(path.read_text(encoding="utf-8"), parse_stack=[])
    entries = [
        b if isinstance(b, model.Entry) else b.ignore_error_block
        for b in lib.blocks
        if isinstance(b, (model.Entry, model.DuplicateFieldKeyBlock, model.DuplicateBlockKeyBlock))
    ]
    return entries, {s.key.lower(): s.value for s in lib.strings}


def defaults(path: Path) -> dict[str, dict[str, str]]:
    """bibtexparser's own reading with its default middleware (macros resolved, delimiters
    removed): key → {field name (lower case) → value}."""
    lib = bibtexparser.parse_file(str(path))
    return {e.key: {f.key.lower(): str(f.value) for f in e.fields} for e in lib.entries}


def import_cli(data_dir: Path, *paths: Path) -> str:
    res = run_cli("import", *map(str, paths), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


def listed(data_dir: Path) -> dict[str, dict]:
    """title → the paper as `list --json` gives it (the first of papers with the same title)."""
    return {p["title"]: p for p in reversed(papers(data_dir))}


def papers(data_dir: Path) -> list[dict]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def records(data_dir: Path) -> dict[str, tuple[str, dict[str, str], str]]:
    """citekey → (entry type, fields, preamble) of every paper in the library."""
    with Library.open(data_dir, readonly=True) as lib:
        return {p.citekey: (p.entrytype, dict(p.bibfields), p.preamble) for p in lib.papers()}


def assert_record_is_the_files(entry: model.Entry, entrytype: str, fields: dict[str, str], strings, plain) -> None:
    """The record holds the entry's type and every field, in the file's order, each value as
    the file wrote it (with the file's macros put in)."""
    where = f"entry {entry.key}"
    assert entrytype == entry.entry_type.lower(), where
    assert list(fields) == [f.key.lower() for f in entry.fields], where
    for f in entry.fields:
        name, written = f.key.lower(), f.value.strip()
        if written.lower() in strings:
            # a macro of the file: its value put in (what bibtexparser's middleware resolves too)
            assert fields[name] == strings[written.lower()].strip(), (where, name)
            assert decode(fields[name]) == latex.latex_text(plain[entry.key][name]), (where, name)
        elif "#" in written:
            assert all(p.strip() in fields[name] or p.strip().lower() in strings for p in written.split("#"))
        else:
            assert fields[name] == written, (where, name)


@pytest.mark.parametrize("name", ["xampl.bib", "biblatex-examples.bib"])
def test_every_entry_of_a_real_file_becomes_a_paper_with_its_type_and_every_field(name):
    path = tex_live(name)
    entries, strings = reference(path)
    plain = defaults(path)
    text, notes = read_text(path)
    assert notes == []
    parsed = parse_bib(text, str(path))
    # nothing skipped: BibTeX's @misc needs no field, and crossref children get their title; an
    # entry left with neither title nor abstract (xampl's whole-journal, misc-minimal and
    # random-note-crossref) is imported with a note saying it will show as untitled
    untitled = {c.citekey for c in parsed.papers if not c.title and not c.abstract}
    assert all(p.note and "neither a title nor an abstract" in p.message for p in parsed.problems)
    assert len(parsed.problems) == len(untitled)
    if name == "xampl.bib":
        assert untitled == {"whole-journal", "misc-minimal", "random-note-crossref"}
    assert [c.citekey for c in parsed.papers] == [e.key for e in entries]
    for entry, cand in zip(entries, parsed.papers, strict=True):
        assert_record_is_the_files(entry, cand.entrytype, cand.bibfields, strings, plain)
    if name == "xampl.bib":
        assert len(parsed.papers) == 36
        # the three entries that were skipped for want of a title import now
        keys = {c.citekey for c in parsed.papers}
        assert {"whole-journal", "misc-minimal", "random-note-crossref"} <= keys
        [first] = {c.preamble for c in parsed.papers}
        assert first.startswith('"\\newcommand{\\noopsort}[1]{} "') and "\\switchargs" in first


def test_a_real_file_imported_through_the_cli_keeps_each_papers_record(data_dir):
    xampl, examples = tex_live("xampl.bib"), tex_live("biblatex-examples.bib")
    out = import_cli(data_dir, xampl, examples)
    assert "skipped" not in out
    held = records(data_dir)
    for path in (xampl, examples):
        entries, strings = reference(path)
        plain = defaults(path)
        for entry in entries:
            if entry.key in held:  # (entries merged as duplicates are issue 13 item 4's)
                entrytype, fields, _ = held[entry.key]
                assert_record_is_the_files(entry, entrytype, fields, strings, plain)
    assert held["whole-journal"][1]["month"] == "jul"  # a month macro stays a macro
    assert held["whole-journal"][2].startswith('"\\newcommand{\\noopsort}')
    assert held["aksin"][1]["author"].startswith('{Aks{\\i}n, {\\"O}zge and T{\\"u}rkmen, Hayati')
    shown = listed(data_dir)
    # what the reader sees is decoded: names, accents, dotless i, biblatex's \hyphen, & unescaped
    assert shown["Effect of immobilization on catalytic characteristics of saturated Pd-N-heterocyclic "
                 "carbenes in Mizoroki-Heck reactions"]["authors"][:2] == ["Özge Aksın", "Hayati Türkmen"]  # fmt: skip
    assert shown["Computers & Typesetting"]["authors"] == ["Donald E. Knuth"]
    assert any(t.startswith("Computation of methodology-independent ionic solvation") for t in shown)
    assert shown["Lower Bounds for Wishful Research Results"]["authors"] == ["Ulrich Ünderwood", "Ned Ñet", "Paul P̄ot"]
    assert shown["Fighting Fire with Fire: Festooning French Phrases"]["authors"] == ["F. Phidias Phony-Baloney"]
    # \noopsort{1973b}1972 (defined in xampl's @preamble) prints 1972, and the year reads so
    assert shown["Seminumerical Algorithms"]["year"] == 1981
    assert shown["Fundamental Algorithms"]["year"] == 1973
    # month and journal macros: the reader sees the text, the record keeps the macro
    assert shown["The Gnats and Gnus Document Preparation System"]["venue"] == "G-Animal's Journal"


NAMES_BIB = r"""
@book{cgal,
  author = {{The CGAL Project} and others},
  title = {{CGAL} User and Reference Manual},
  year = {2024}
}
@misc{rumble,
  author = {{Rumble, Jr.} and Fletcher, III, Harry George and van Beethoven, Ludwig},
  title = {Names That Keep Their Suffix},
  year = {1999}
}
@article{garcia,
  author = {Garc{\'\i}a, Jos{\'e} and {\L}ukasiewicz, Jan and M{\"u}ller, J{\"u}rgen and King, Jr., Martin Luther},
  title = {Accents in Names},
  year = {2001}
}
"""


def test_names_follow_bibtex_rules(data_dir, tmp_path):
    bib = tmp_path / "names.bib"
    bib.write_text(NAMES_BIB, encoding="utf-8")
    import_cli(data_dir, bib)
    shown = listed(data_dir)
    # a corporate name is one name, not "Project, The CGAL"; `others` is not a person
    assert shown["CGAL User and Reference Manual"]["authors"] == ["The CGAL Project"]
    assert shown["Names That Keep Their Suffix"]["authors"] == [
        "Rumble, Jr.",
        "Harry George Fletcher III",
        "Ludwig van Beethoven",
    ]
    assert shown["Accents in Names"]["authors"] == [
        "José García",
        "Jan Łukasiewicz",
        "Jürgen Müller",
        "Martin Luther King, Jr.",
    ]
    # the record keeps the names as written, `and others` with them
    held = records(data_dir)
    assert held["cgal"][1]["author"] == "{{The CGAL Project} and others}"


def test_names_are_structured():
    names, others = parse_names("{{The CGAL Project} and others}")
    assert names == [Name(literal="The CGAL Project")] and others is True
    names, others = parse_names("{Fletcher, III, Harry George and {Rumble, Jr.} and Ludwig van Beethoven}")
    assert others is False
    assert names == [
        Name(family="Fletcher", given="Harry George", jr="III"),
        Name(literal="Rumble, Jr."),
        Name(family="Beethoven", given="Ludwig", von="van"),
    ]
    assert [n.display() for n in names] == ["Harry George Fletcher III", "Rumble, Jr.", "Ludwig van Beethoven"]
    [garcia], _ = parse_names(r"{Garc{\'\i}a, Jos{\'e}}")
    assert garcia.family == r"Garc{\'\i}a" and garcia.display() == "José García"
    assert parse_names('"Doe, Jane" # { and Roe, Richard}')[0] == [
        Name(family="Doe", given="Jane"),
        Name(family="Roe", given="Richard"),
    ]
    assert parse_names("") == ([], False)


@pytest.mark.parametrize(
    "raw, text",
    [
        (r"{Garc{\'\i}a}", "García"),
        (r"{Hyphen\-ation and shelf\/ful}", "Hyphenation and shelfful"),
        (r"{a\,b and c\!d}", "a b and cd"),
        (r"{{\"u}ber \c{c}a {\L}{\'o}d{\'z}}", "über ça Łódź"),
        ("{a--b---c}", "a–b—c"),
        ("{``quoted'' text}", "“quoted” text"),
        ("{Figure~1}", "Figure 1"),
        # an unknown macro keeps its name, or shows its argument; it never eats the next word
        (r"{the \foo bar}", r"the \foo bar"),
        (r"{the \foo{arg} bar}", "the arg bar"),
        (r"{$\alpha$-helix and $\beta$}", "α-helix and β"),
        (r"{\textbf{Bold} and {\em emphasis}}", "Bold and emphasis"),
        (r"{The {\TeX}book and \LaTeX}", "The TeXbook and LaTeX"),
        (r"{50% of \& and 12\%}", "50% of & and 12%"),
        (r"{\ldots{} and \ldots done}", "… and …done"),
        (r"{\mbox{G-Animal's} Journal}", "G-Animal's Journal"),
        (r"{\url{https://example.org/a_b}}", "https://example.org/a_b"),
        ("{Proc. } # jan", "Proc. January"),
        ('"Ann" # { } # 1995', "Ann 1995"),
        ("{The {CGAL} Project}", "The CGAL Project"),
        ("dec", "December"),
        ("STOC", "STOC"),
        (r"{{\noopsort{1973b}}1972}", "1972"),
        ("{  many \n  spaces  }", "many spaces"),
    ],
)
def test_latex_values_decode_to_the_readers_text(raw, text):
    assert decode(raw) == text


def test_the_quick_path_reads_real_files_as_pylatexenc_does():
    """Values with only symbol macros and accents skip pylatexenc (speed): the same text."""
    seen = 0
    for name in ("xampl.bib", "biblatex-examples.bib"):
        entries, _ = reference(tex_live(name))
        for entry in entries:
            for f in entry.fields:
                value = "".join(latex.piece_text(p) for p in latex.pieces(f.value))
                if "\\" in value and latex._simple_macros(value) is not None:
                    seen += 1
                    assert latex.latex_text(value) == latex._latex_text(value), (entry.key, f.key)
    assert seen > 20


def test_a_field_given_twice_keeps_the_first_value_with_a_note(data_dir, tmp_path):
    bib = tmp_path / "twice.bib"
    bib.write_text(
        "@article{twice2020,\n"
        "  title = {The First Title Wins},\n"
        "  author = {Doe, Jane},\n"
        "  Title = {The Second Title Is Ignored},\n"
        "  year = {2020}\n"
        "}\n",
        encoding="utf-8",
    )
    out = import_cli(data_dir, bib)
    assert "1 added" in out
    assert re.search(
        rf"note: {re.escape(str(bib))}:4: entry 'twice2020' gives the field 'title' again; "
        r"the first value was kept \(as BibTeX does\)",
        out,
    ), out
    assert list(listed(data_dir)) == ["The First Title Wins"]
    assert records(data_dir)["twice2020"][1] == {
        "title": "{The First Title Wins}",
        "author": "{Doe, Jane}",
        "year": "{2020}",
    }


def test_an_entry_without_a_key_imports_and_is_given_one(data_dir, tmp_path):
    bib = tmp_path / "nokey.bib"
    bib.write_text("@article{,\n  author = {Keyless, Erin},\n  title = {No Key at All},\n  year = {2018}\n}\n")
    out = import_cli(data_dir, bib)
    assert "1 added" in out
    assert re.search(r"nokey\.bib:1: the entry has no citation key: the paper was given 'keyless2018no'", out), out
    assert records(data_dir)["keyless2018no"][0] == "article"


CROSSREF_BIB = r"""
@string{stoc = "Proc. Fifteenth Annual ACM Symposium on the Theory of Computing"}

@inproceedings{child,
  author = {Oaho, Alfred V.},
  title = {On Notions of Information Transfer},
  pages = {133--139},
  crossref = {parent-proc}
}
@inbook{chapter-of-book,
  author = {Writer, Wanda},
  chapter = {3},
  crossref = {parent-book}
}
@proceedings{parent-proc,
  editor = {Johnson, David S.},
  title = stoc,
  publisher = {ACM},
  year = 1983,
  month = apr
}
@book{parent-book,
  author = {Knuth, Donald E.},
  title = {Fundamental Algorithms},
  publisher = {Addison-Wesley},
  year = {1973}
}
"""


def test_crossref_children_show_their_parents_year_and_venue(data_dir, tmp_path):
    bib = tmp_path / "crossref.bib"
    bib.write_text(CROSSREF_BIB, encoding="utf-8")
    out = import_cli(data_dir, bib)
    assert "4 added" in out and "skipped" not in out
    shown = listed(data_dir)
    child = shown["On Notions of Information Transfer"]
    books = sorted(p["authors"][0] for p in papers(data_dir) if p["title"] == "Fundamental Algorithms")
    assert books == ["Donald E. Knuth", "Wanda Writer"]  # the book, and its chapter by another author
    # the parent's title is the child's venue (biber's booktitle), its year the child's
    assert child["venue"] == "Proc. Fifteenth Annual ACM Symposium on the Theory of Computing"
    assert child["year"] == 1983
    # a child without a title of its own (BibTeX's @inbook) takes its parent's: not skipped
    [chapter] = [p for p in papers(data_dir) if p["authors"] == ["Wanda Writer"]]
    assert chapter["title"] == "Fundamental Algorithms" and chapter["year"] == 1973
    # the record keeps the child's own fields, crossref as written; nothing copied in
    held = records(data_dir)
    assert held["child"][1] == {
        "author": "{Oaho, Alfred V.}",
        "title": "{On Notions of Information Transfer}",
        "pages": "{133--139}",
        "crossref": "{parent-proc}",
    }
    assert held["chapter-of-book"][1] == {"author": "{Writer, Wanda}", "chapter": "{3}", "crossref": "{parent-book}"}
    assert held["parent-proc"][1]["title"] == '"Proc. Fifteenth Annual ACM Symposium on the Theory of Computing"'


def test_macros_preamble_and_comments(data_dir, tmp_path):
    bib = tmp_path / "macros.bib"
    bib.write_text(
        '@string{ACM = "Assoc. {for} Comp."}\n'
        "@String{j1 = {Journal of the } # acm}\n"
        '@preamble{"\\newcommand{\\noopsort}[1]{}"}\n'
        "@comment{this is not an entry, @article{fake, title = {Fake}}}\n"
        "Free text between entries is a comment too.\n"
        "@Article{real,\n"
        "  author = {Doe, Jane},\n"
        "  title = {A Real Entry},\n"
        "  journal = J1 # { (Letters)},\n"
        "  month = jan # {~1},\n"
        "  year = 1995,\n"
        "  volume = unknownmacro\n"
        "}\n",
        encoding="utf-8",
    )
    out = import_cli(data_dir, bib)
    assert "1 added" in out
    [paper] = listed(data_dir).values()
    assert paper["venue"] == "Journal of the Assoc. for Comp. (Letters)"
    entrytype, fields, preamble = records(data_dir)["real"]
    assert entrytype == "article"
    assert fields == {
        "author": "{Doe, Jane}",
        "title": "{A Real Entry}",
        "journal": '{Journal of the } # "Assoc. {for} Comp." # { (Letters)}',
        "month": "jan # {~1}",
        "year": "1995",
        "volume": "unknownmacro",
    }
    assert preamble == '"\\newcommand{\\noopsort}[1]{}"'


def test_a_gbk_bib_reads_as_gbk(data_dir, tmp_path):
    title = "基于深度学习的中文文本分类方法研究"
    bib = tmp_path / "gbk.bib"
    text = (
        f"@article{{zhang2020,\n  title = {{{title}}},\n  author = {{张伟 and 李娜}},\n"
        "  journal = {计算机学报},\n  year = {2020}\n}\n"
    )
    bib.write_bytes(text.encode("gbk"))
    out = import_cli(data_dir, bib)
    assert "1 added" in out
    assert re.search(r"note: .*gbk\.bib:2: the file is not UTF-8; it was read as GBK", out), out
    [paper] = listed(data_dir).values()
    assert paper["title"] == title
    assert paper["authors"] == ["张伟", "李娜"] and paper["venue"] == "计算机学报"


def test_a_windows_1252_bib_reads_as_windows_1252(data_dir, tmp_path):
    bib = tmp_path / "cp1252.bib"
    text = "@article{g, title = {Über „Ñandú“ — œuvres}, author = {García, José and Müller, Jürgen}, year = {2020}}\n"
    bib.write_bytes(text.encode("cp1252"))
    out = import_cli(data_dir, bib)
    assert "Windows-1252" in out
    [paper] = listed(data_dir).values()
    assert paper["title"] == "Über „Ñandú“ — œuvres"
    assert paper["authors"] == ["José García", "Jürgen Müller"]


def test_a_key_used_twice_in_one_file_keeps_both_entries(data_dir, tmp_path):
    """bibtexparser calls the second a failed block; the library gives it another key and says so."""
    bib = tmp_path / "samekey.bib"
    bib.write_text(
        "@misc{same, author = {One, Ann}, title = {First Paper}, year = 2001}\n"
        "@misc{same, author = {Two, Bob}, title = {Second Paper}, year = 2002}\n",
        encoding="utf-8",
    )
    out = import_cli(data_dir, bib)
    assert "2 added" in out
    assert re.search(r"samekey\.bib:2: key 'same' is already used by an entry imported before it", out), out
    assert set(listed(data_dir)) == {"First Paper", "Second Paper"}


@pytest.mark.parametrize("accent", list(latex.ACCENTS))
def test_the_quick_path_reads_every_accent_of_the_one_table_as_pylatexenc_does(accent):
    """The one accent table (biblio.latex.ACCENTS), which an abstract's reading shares, read by
    the quick path in every way a file writes an accent: the same text as pylatexenc's."""
    forms = [f"\\{accent}{{e}}", f"\\{accent}{{ e }}", f"\\{accent} e"]
    if not accent.isalpha():
        forms.append(f"\\{accent}e")
    for form in forms:
        value = f"x {form} y"
        assert latex._simple_macros(value) is not None, form
        assert latex.latex_text(value) == latex._latex_text(value), form
