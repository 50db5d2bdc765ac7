"""A .bib file is read a piece at a time (issue 25: 100,000 entries parsed whole held 1.5 GB):
what it imports is exactly what the whole file parsed at once gave, wherever the pieces are cut.

The real files the suite imports (its fixtures, TeX Live's xampl.bib and biblatex-examples.bib)
and hostile ones are parsed with pieces so small that a cut falls before every block, and
compared with the whole file parsed as one piece: the same papers with the same fields, the
same problems at the same lines of the whole file. Then `papershelf import` of a file larger
than one piece, whose child entries come before their crossref parent and use macros defined
at its end, across the cuts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_ok, listed_papers
from papershelf.core.importers import parse_file
from papershelf.core.importers.base import read_text
from papershelf.core.importers.bibfile import _BLOCK_START_RE, PIECE_CHARS, _pieces, parse_bib
from test_bib_export_record import kpsewhich

TESTS = Path(__file__).parent
REAL_FILES = sorted(p for p in (TESTS / "fixtures").rglob("*.bib"))
TEX_FILES = [p for p in (kpsewhich("xampl.bib"), kpsewhich("biblatex-examples.bib")) if p is not None]
# cut before every block, at odd places, and in a few pieces
SIZES = (1, 97, 1000)


def whole(text: str, path: str):
    """The file parsed as one piece: bibtexparser given all of it, as before."""
    return parse_bib(text, path, piece_chars=len(text) + 1)


def assert_same_in_pieces(text: str, path: str = "f.bib") -> None:
    expected = whole(text, path)
    # the text is cut before each block that starts a line (the first's line aside)
    assert len(list(_pieces(text, 1))) >= len(_BLOCK_START_RE.findall(text))
    for size in SIZES:
        got = parse_bib(text, path, piece_chars=size)
        assert got.problems == expected.problems, size
        assert got.papers == expected.papers, size


def test_the_suite_has_real_files_to_compare():
    assert len(REAL_FILES) >= 20
    assert any(p.stat().st_size > 100_000 for p in REAL_FILES)  # the Mendeley export


@pytest.mark.parametrize("path", REAL_FILES + TEX_FILES, ids=lambda p: p.name)
def test_a_real_file_in_pieces_imports_as_parsed_whole(path):
    text, _notes = read_text(path)
    whole_parse = whole(text, str(path))
    assert whole_parse.papers or whole_parse.problems
    assert_same_in_pieces(text, str(path))


def test_tex_live_files_are_compared_where_tex_live_is():
    # the CI installs TeX Live (see test_bib_export_record): its files are among those compared
    if not TEX_FILES:
        pytest.skip("TeX Live is not installed")
    xampl = parse_file(TEX_FILES[0])
    assert len(xampl.papers) > 30


ENTRY = "@article{{{key},\n  title = {{{title}}},\n  author = {{Doe, Jane}},\n  year = {{{year}}},\n}}\n"

HOSTILE = {
    # a brace left open just before the next entry: bibtexparser ends it at the next `@type{`
    # that starts a line, so the entries after it import, and its line is told
    "unclosed brace before a cut": ENTRY.format(key="a", title="A", year=2001)
    + "@article{broken,\n  title = {Never closed,\n  year = 2002,\n\n"
    + ENTRY.format(key="b", title="B", year=2003),
    "unclosed quote spanning lines": '@misc{q,\n  title = "Open\n  on two lines,\n}\n'
    + ENTRY.format(key="c", title="C", year=2004),
    # macros put in with their last definition, wherever the entry is (as the whole parse did)
    "string defined after use": "@article{early, title = {Early}, journal = jml, year = 2001}\n"
    + "@string{jml = {Journal of Machine Learning}}\n"
    + "@article{late, title = {Late}, journal = jml # { Letters}, year = 2002}\n"
    + "@string{jml = {Redefined}}\n",
    "crossref to a later entry": "@inproceedings{child, title = {Child}, crossref = {parent}}\n"
    + ENTRY.format(key="other", title="Other", year=1999)
    + "@proceedings{parent, title = {The Proceedings}, year = 2010, booktitle = {Proc}}\n",
    "xdata to a later entry": "@article{x, title = {X}, xdata = {pub}}\n"
    + "@xdata{pub, journal = {The Journal}, year = 2011}\n",
    "huge entry bigger than a piece": ENTRY.format(key="big", title="Big " + "word " * 3000, year=2005)
    + ENTRY.format(key="small", title="Small", year=2006),
    "at signs inside values and lines": "@misc{mail, title = {Write to a@b.org}, note = {x\n@ y\n  @z}}\n"
    + "@misc{at, title = {LeQua @ {CLEF}}, year = 2022}\n",
    "comment and preamble blocks": "@comment{ @article{not, title = {Not}} }\n"
    + '@preamble{"\\newcommand{\\x}{x}"}\n@string(s = "S")\n'
    + "@misc(paren, title = s # {: in parentheses}, year = 2020)\n  @misc{indented, title = {Indented}}\n",
    "field given twice and key given twice": "@misc{d, title = {One}, title = {Two}, year = 2001}\n"
    + "@misc{d, title = {Again}}\n",
    "macro bomb": "".join(f"@string{{s{i} = s{i - 1} # s{i - 1}}}\n" for i in range(1, 30))
    + '@string{s0 = "xxxxxxxxxx"}\n@misc{boom, title = s25}\n'
    + ENTRY.format(key="fine", title="Fine", year=2000),
    "entry with no fields and text between entries": "junk text\n@misc{nofields}\nmore junk @ here\n"
    + ENTRY.format(key="e", title="E", year=2000),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_in_pieces_imports_as_parsed_whole(name):
    assert_same_in_pieces(HOSTILE[name])


def test_the_hostile_cases_do_what_their_names_say():
    """Each case above tests what it claims (parsed whole: the behaviour the pieces keep)."""
    assert all(len(_BLOCK_START_RE.findall(text)) >= 1 for text in HOSTILE.values())  # each is cut
    broken = whole(HOSTILE["unclosed brace before a cut"], "f.bib")
    assert [c.citekey for c in broken.papers] == ["a", "b"]
    assert [p.line for p in broken.problems if not p.note] == [6]
    macros = whole(HOSTILE["string defined after use"], "f.bib")
    assert [c.venue for c in macros.papers] == ["Redefined", "Redefined Letters"]
    crossref = whole(HOSTILE["crossref to a later entry"], "f.bib")
    child = crossref.papers[0]
    assert (child.year, child.venue) == (2010, "Proc")  # the parent's booktitle, as BibTeX takes it
    assert whole(HOSTILE["xdata to a later entry"], "f.bib").papers[0].year == 2011
    big = HOSTILE["huge entry bigger than a piece"]
    assert len(big) > 10 * SIZES[-1]
    bomb = whole(HOSTILE["macro bomb"], "f.bib")
    assert [c.citekey for c in bomb.papers] == ["fine"]


def test_error_lines_are_lines_of_the_whole_file():
    text = "".join(ENTRY.format(key=f"k{i}", title=f"T{i}", year=2000) for i in range(50))
    text += "@article{broken,\n  title = {Open\n\n" + ENTRY.format(key="after", title="After", year=2001)
    for size in (1, 500, len(text) + 1):
        parsed = parse_bib(text, "f.bib", piece_chars=size)
        assert [(p.line, p.message) for p in parsed.problems] == [
            (50 * 5 + 1, "this entry could not be read (it is not valid BibTeX); it was skipped")
        ]
        assert parsed.papers[-1].line == 50 * 5 + 4


def test_lines_after_a_latex_line_break_are_the_file_s_lines():
    """An abstract whose lines end in LaTeX's line break (a backslash before the newline, which
    bibtexparser does not count): every entry and problem after it is at its real line, whole
    or in pieces (review finding: they drifted low, and differently with each cut)."""
    entry = "@article{{{key},\n  title = {{T}},\n  abstract = {{First line\\\\\nsecond line}},\n}}\n"
    text = "".join(entry.format(key=f"k{i}") for i in range(40))  # 5 lines each
    text += "@article{broken,\n  title = {Open\n\n" + entry.format(key="after")
    for size in (1, 300, len(text) + 1):
        parsed = parse_bib(text, "f.bib", piece_chars=size)
        assert [c.line for c in parsed.papers[:3]] == [1, 6, 11], size
        assert [p.line for p in parsed.problems if not p.note] == [40 * 5 + 1], size
        assert parsed.papers[-1].line == 40 * 5 + 4, size


def test_a_large_file_is_given_to_the_parser_in_pieces(monkeypatch):
    """The point of the pieces (a 100,000-entry file parsed whole held 1.5 GB): bibtexparser is
    handed at most about a piece at a time, never the whole file."""
    import bibtexparser

    seen: list[int] = []
    real = bibtexparser.parse_string

    def parse_string(text, *args, **kwargs):
        seen.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(bibtexparser, "parse_string", parse_string)
    text = "".join(ENTRY.format(key=f"k{i}", title=f"T{i}", year=2000) for i in range(200))
    parsed = parse_bib(text, "f.bib", piece_chars=1000)
    assert len(parsed.papers) == 200
    assert len(seen) > 5 and max(seen) < 1000 + 200 and sum(seen) == len(text)


def test_a_file_larger_than_a_piece_imports_with_its_crossrefs_macros_and_lines(tmp_path, data_dir):
    """`papershelf import` of a file of several pieces: children before their parent and
    entries before their macros (cut apart), a broken entry told at its line in the file."""
    children = "".join(
        "@inproceedings{{c{i},\n  title = {{Child {i}}},\n  author = {{Doe, Jane}},\n  crossref = {{proc}},\n"
        "  note = nt,\n  abstract = {{{abstract}}},\n}}\n".format(i=i, abstract=f"Paper {i}. " + "text " * 200)
        for i in range(3000)
    )
    broken = "@article{broken,\n  title = {Never closed,\n\n"
    tail = (
        "@string{nt = {Note from a macro}}\n@proceedings{proc,\n  title = {Proceedings of Pieces},\n  year = 2019,\n}\n"
    )
    text = children + broken + tail
    assert len(text) > 1.5 * PIECE_CHARS
    bib = tmp_path / "pieces.bib"
    bib.write_text(text)
    res = cli_ok("import", str(bib), data_dir=data_dir)
    broken_line = children.count("\n") + 1
    assert f"pieces.bib:{broken_line}: this entry could not be read" in res.stderr + res.stdout
    papers = {p["citekey"]: p for p in listed_papers(data_dir)}
    assert len(papers) == 3001  # 3000 children and their parent
    for key in ("c0", "c1500", "c2999"):
        assert papers[key]["year"] == 2019
        assert papers[key]["venue"] == "Proceedings of Pieces"
    shown = json.loads(cli_ok("show", "--json", papers["c2999"]["id"], data_dir=data_dir).stdout)
    assert shown["bibfields"]["note"] == "{Note from a macro}"
    assert shown["bibfields"]["crossref"] == "{proc}"
