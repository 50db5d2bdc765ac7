"""What independent review of the full record found, each through the library as the window
and the CLI use it: edits of a record's title, identifiers of crossref children, files that
define a macro twice, preambles of two files, RIS text for biber, links in LaTeX."""

from __future__ import annotations

import subprocess
from pathlib import Path

from papershelf.core.citation import field_text
from papershelf.core.library import Library

PROC = "@proceedings{conf20, title={Proceedings of Conf 2020}, editor={Ed, Ann}, year=2020, doi={10.1145/3000000}}\n"


def _import(lib: Library, folder: Path, name: str, text: str):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return lib.import_files([path])[0]


def _by_key(lib: Library) -> dict:
    return {p.citekey: p for p in lib.papers()}


def _export(lib: Library, ids: list[str], dialect: str = "bibtex") -> str:
    return lib.bibtex_entries(ids, dialect, pin=False)


def test_the_children_of_one_proceedings_are_not_one_paper_by_its_doi(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        _import(
            lib,
            tmp_path,
            "f1.bib",
            "@inproceedings{alpha, title={Alpha Paper}, author={Aa, Bob}, crossref={conf20}}\n" + PROC,
        )
        rep = _import(
            lib,
            tmp_path,
            "f2.bib",
            "@inproceedings{gamma, title={Gamma Paper}, author={Cc, Dan}, crossref={conf20}}\n" + PROC,
        )
        keys = _by_key(lib)
        assert "gamma" in keys, [str(m) for m in rep.merges]
        # the child shows its parent's year and venue, but the DOI is the proceedings' own
        assert keys["alpha"].year == 2020 and keys["alpha"].venue == "Proceedings of Conf 2020"
        assert keys["alpha"].doi == "" and keys["conf20"].doi == "10.1145/3000000"


def test_clearing_a_bib_papers_title_goes_back_to_the_files_title(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        _import(lib, tmp_path, "k.bib", "@book{knuth, title={The {\\TeX}book}, author={Knuth, Donald E.}, year=1984}\n")
        pid = _by_key(lib)["knuth"].id
        lib.set_title(pid, "")  # "back": to the record's own title, as written (not "Untitled paper")
        assert lib.get(pid).title == "The TeXbook" and not lib.get(pid).title_derived
        assert "{The {\\TeX}book}" in _export(lib, [pid])


def test_a_typed_title_of_a_paper_from_a_papershelf_export_survives_the_next_round_trip(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        _import(
            lib,
            tmp_path,
            "a.bib",
            "@article{k1, abstract={We measure how often readers find a shelved paper again and report numbers.}, "
            "author={Lee, Ann}, year=2020}\n",
        )
        exported = _export(lib, lib.ids())
    assert "Title derived from the abstract" in exported
    with Library.open(tmp_path / "lib2") as lib2:
        lib2.import_text(exported)
        [pid] = lib2.ids()
        assert lib2.get(pid).title_derived
        lib2.set_title(pid, "Typed Title")
        text = _export(lib2, [pid])
    assert "Title derived from the abstract" not in text  # plain.bst would print the note
    with Library.open(tmp_path / "lib3") as lib3:
        lib3.import_text(text)
        assert [p.title for p in lib3.papers()] == ["Typed Title"]


def test_a_typed_title_of_a_crossref_child_goes_out_and_undo_takes_it_back(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        _import(
            lib, tmp_path, "a.bib", "@inproceedings{child, author={Aa, Bob}, pages={1--10}, crossref={conf20}}\n" + PROC
        )
        pid = _by_key(lib)["child"].id
        before = lib.snapshot_fields([pid])
        lib.set_title(pid, "My Real Child Title")
        text = _export(lib, [pid])
        assert "{My Real Child Title}" in text and "crossref" in text
        lib.restore_fields(before)
        assert "title" not in lib.get(pid).bibfields


def test_a_file_that_defines_a_string_twice_imports(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        rep = _import(
            lib,
            tmp_path,
            "s.bib",
            '@string{tpami = "IEEE Trans. PAMI"}\n@article{a2019, title={One}, journal=tpami, year=2019}\n'
            '@string{tpami = "IEEE Transactions on PAMI"}\n@article{b2020, title={Two}, journal=tpami, year=2020}\n',
        )
        assert rep.added == 2 and not rep.error
        assert _by_key(lib)["b2020"].venue == "IEEE Transactions on PAMI"


def test_two_files_preambles_do_not_define_one_command_twice(tmp_path):
    xampl = subprocess.run(["kpsewhich", "xampl.bib"], capture_output=True, text=True).stdout.strip()
    second = '@preamble{ "\\newcommand{\\noopsort}[1]{} " }\n@article{sec1, title={T}, journal={J}, year=2001}\n'
    with Library.open(tmp_path / "lib") as lib:
        if xampl:
            lib.import_files([Path(xampl)])
        _import(lib, tmp_path, "first.bib", '@preamble{"\\newcommand{\\noopsort}[1]{}"}\n@misc{f1, title={F}}\n')
        _import(lib, tmp_path, "second.bib", second)
        lib.export_bibtex(lib.ids(), tmp_path / "all.bib")
    text = (tmp_path / "all.bib").read_text(encoding="utf-8")
    # LaTeX stops on a second \newcommand of one name ("already defined")
    assert text.count("\\newcommand{\\noopsort}") == 0 and text.count("\\providecommand{\\noopsort}") >= 2


def test_a_ris_records_text_goes_to_biber_as_pdflatex_can_typeset_it(tmp_path):
    ris = (
        "TY  - JOUR\r\nAU  - Smith, Ann\r\nTI  - The \u03b1\u03b2 model of Caf\u00e9 \u6f22\r\nPY  - 2020\r\nER  - \r\n"
    )
    with Library.open(tmp_path / "lib") as lib:
        _import(lib, tmp_path, "u.ris", ris)
        text = _export(lib, lib.ids(), "biblatex")
    assert "\u03b1" not in text and "\u6f22" not in text  # pdflatex stops on each ("not set up")
    assert "Caf\u00e9" in text  # a Latin letter stays UTF-8 for biber


def test_links_in_a_records_latex_read_as_text():
    assert field_text("note", r"{See \href{https://x.org}{the site}}") == "See the site"
    assert field_text("note", r"{At \url{https://y.org/a_b}}") == "At https://y.org/a_b"


def test_a_crossref_follows_its_parent_when_the_user_changes_the_parents_key(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        _import(
            lib, tmp_path, "a.bib", "@inproceedings{child, title={Child}, author={Aa, Bob}, crossref={CONF20}}\n" + PROC
        )
        keys = _by_key(lib)
        lib.set_citekey(keys["conf20"].id, "procNew")
        child = lib.get(keys["child"].id)
        assert child.bibfields["crossref"] == "{procNew}"
        lib.export_bibtex([child.id], tmp_path / "child.bib")  # the parent comes along
    text = (tmp_path / "child.bib").read_text(encoding="utf-8")
    assert "crossref = {procNew}" in " ".join(text.split()) and "@proceedings{procNew," in text


def test_a_ris_record_with_an_empty_type_line_imports(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        rep = _import(
            lib,
            tmp_path,
            "e.ris",
            "TY  - \nTI  - A record whose type line is empty\nAU  - Doe, Jane\nPY  - 2020\nER  - \n",
        )
        assert rep.added == 1 and [p.entrytype for p in lib.papers()] == ["misc"]


def test_merging_a_crossref_parent_keeps_its_children_citable_and_undo_puts_them_back(tmp_path):
    twin = (
        "@inproceedings{child1, title={Child One}, author={Aa, Bob}, crossref={proc99}}\n"
        "@proceedings{proc99, editor={Jones, Bob}, title={Proceedings of Things}, year=1999}\n"
        "@proceedings{proc-twin, editor={Jones, Bob}, title={Proceedings of Things}, year=1999}\n"
    )
    with Library.open(tmp_path / "lib") as lib:
        _import(lib, tmp_path, "cr.bib", twin)
        keys = _by_key(lib)
        merged = lib.duplicates.merge(keys["proc-twin"].id, keys["proc99"].id)  # as the dialog offers
        assert merged.lost_key == "proc99"
        assert lib.get(keys["child1"].id).bibfields["crossref"] == "{proc-twin}"
        lib.duplicates.undo(merged)
        assert lib.get(keys["child1"].id).bibfields["crossref"] == "{proc99}"
        lib.duplicates.redo(merged)
        assert lib.get(keys["child1"].id).bibfields["crossref"] == "{proc-twin}"


def test_a_crossref_follows_its_parent_when_the_import_gives_the_parent_another_key(tmp_path):
    with Library.open(tmp_path / "lib") as lib:
        # a different paper already holds the key the file's proceedings use
        _import(lib, tmp_path, "first.bib", "@article{conf20, title={Something Else}, author={Zz, Zed}, year=2001}\n")
        rep = _import(
            lib, tmp_path, "a.bib", "@inproceedings{child, title={Child}, author={Aa, Bob}, crossref={conf20}}\n" + PROC
        )
        keys = _by_key(lib)
        parent = next(p for p in lib.papers() if p.title == "Proceedings of Conf 2020")
        assert parent.citekey != "conf20" and any("conf20" in str(p) for p in rep.problems)
        assert keys["child"].bibfields["crossref"] == "{" + parent.citekey + "}"
        lib.export_bibtex([keys["child"].id], tmp_path / "child.bib")
    text = (tmp_path / "child.bib").read_text(encoding="utf-8")
    assert "Something Else" not in text and f"@proceedings{{{parent.citekey}," in text
