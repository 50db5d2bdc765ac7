"""Completing a record by hand: `papershelf set` and Library.edit_record (issue 14 item 1),
and adding records found online (Library.add_found)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.biblio.types import required
from papershelf.core.library import Library
from papershelf.core.online.records import FoundRecord
from papershelf.core.record_edit import editor_view
from test_bibtex import compile_bib, problems

XAMPL = subprocess.run(["kpsewhich", "xampl.bib"], capture_output=True, text=True).stdout.strip()


def _json(data_dir: Path, *args: str) -> list[dict]:
    res = run_cli("list", "--json", *args, data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _first_listing_paper(data_dir: Path, seeds: list[Path]) -> dict:
    assert run_cli("import", str(seeds[0]), data_dir=data_dir).returncode == 0
    return next(p for p in _json(data_dir) if p["title_derived"] and p["authors"])


def test_set_completes_a_listing_paper_so_that_bibtex_typesets_it(data_dir, seeds, tmp_path):
    paper = _first_listing_paper(data_dir, seeds)
    res = run_cli(
        "set",
        paper["id"][:8],
        "title=VeriSimpl: Verifying LLM Formalizations of Optimization Problems",
        "author=Abdul Rahman, Sumaya and {Google DeepMind} and van der Berg, Jan",
        "--type",
        "inproceedings",
        "venue=Advances in Neural Information Processing Systems",
        "year=2025",
        "pages=1–12",
        data_dir=data_dir,
    )
    assert res.returncode == 0, res.stderr
    assert "type: misc → inproceedings" in res.stdout
    assert "year: (none) → 2025" in res.stdout
    shown = run_cli("show", paper["id"], "--bibtex", data_dir=data_dir).stdout
    assert shown.startswith("@inproceedings{")
    assert "author    = {Abdul Rahman, Sumaya and {Google DeepMind} and van der Berg, Jan}" in shown
    assert "booktitle = {Advances in Neural Information Processing Systems}" in shown
    assert "pages     = {1--12}" in shown
    assert "Title derived from the abstract" not in shown  # a real title now: no note
    after = next(p for p in _json(data_dir) if p["id"] == paper["id"])
    assert after["title"] == "VeriSimpl: Verifying LLM Formalizations of Optimization Problems"
    assert after["title_derived"] is False
    assert after["authors"] == ["Sumaya Abdul Rahman", "Google DeepMind", "Jan van der Berg"]
    assert after["year"] == 2025
    assert after["abstract"] == paper["abstract"]  # the paper's own text is kept
    # the entry goes through BibTeX and LaTeX without a warning
    key = shown.split("{", 1)[1].split(",", 1)[0]
    out = compile_bib(tmp_path, shown, "bibtex", cite=[key])
    assert problems(out, "bibtex") == []
    assert "Google DeepMind" in out["bbl"] and "van~der Berg" in out["bbl"]


def test_a_bad_value_is_refused_in_words_and_changes_nothing(data_dir, seeds):
    paper = _first_listing_paper(data_dir, seeds)
    before = _json(data_dir)
    for bad, words in [
        (["year=twenty"], "'twenty' is not a year"),
        (["doi=xyz"], "is not a DOI"),
        (["eprint=not an id"], "is not an arXiv id"),
        (["abstract=new text"], "the abstract is the paper's own text"),
        (["title"], "give fields as FIELD=VALUE"),
        (["author=Knuth, {Donald"], "brace"),
        (["citekey=has space"], "not a usable citation key"),
        (["year=2020", "year=2021"], "given twice"),
        (["--type", "not a type!"], "is not an entry type"),
        ([], "nothing to set"),
    ]:
        res = run_cli("set", paper["id"], *bad, data_dir=data_dir)
        assert res.returncode == 2, (bad, res.stdout, res.stderr)
        assert words in res.stderr, (bad, res.stderr)
        assert "Traceback" not in res.stderr
    assert _json(data_dir) == before


def test_editing_one_field_of_a_bib_entry_keeps_every_other_field_as_written(tmp_path):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([XAMPL])
    paper = next(p for p in lib.papers() if p.citekey == "article-full")
    raw = paper.bibfields
    assert lib.edit_record(paper.id, {"pages": "73–80", "note": ""}) == [paper.id]
    after = lib.get(paper.id).bibfields
    assert after["pages"] == "{73--80}"
    assert "note" not in after
    assert {k: v for k, v in after.items() if k not in ("pages", "note")} == {
        k: v for k, v in raw.items() if k not in ("pages", "note")
    }
    # sending the text the editor shows changes nothing at all (no rewrite of the raw LaTeX)
    view = editor_view(lib.get(paper.id))
    assert lib.edit_record(paper.id, dict(view.fields)) == []
    assert lib.get(paper.id).bibfields == after


def test_changing_the_type_moves_the_venue_and_the_required_fields_follow(tmp_path):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([XAMPL])
    paper = next(p for p in lib.papers() if p.citekey == "article-full")
    assert required("article") == ("author", "title", "venue", "year")
    assert "institution" in required("techreport")
    raw, venue = paper.bibfields, paper.venue
    lib.edit_record(paper.id, {"entrytype": "inproceedings"})
    after = lib.get(paper.id)
    assert after.entrytype == "inproceedings"
    assert after.bibfields["booktitle"] == raw["journal"]
    assert "journal" not in after.bibfields
    assert after.venue == venue
    entry = lib.bibtex_entries([paper.id], pin=False)
    assert entry.startswith("@inproceedings{article-full,") and "booktitle = {\\mbox{G-Animal's} Journal}" in entry


def test_a_month_typed_by_name_is_the_month_macro(tmp_path):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([XAMPL])
    paper = next(p for p in lib.papers() if p.citekey == "article-full")
    assert editor_view(paper).fields["month"] == "July"
    lib.edit_record(paper.id, {"month": "September"})
    assert lib.get(paper.id).bibfields["month"] == "sep"
    assert "month   = sep," in lib.bibtex_entries([paper.id], pin=False)


def test_a_new_key_is_checked_and_the_crossref_children_follow_it(data_dir):
    assert run_cli("import", XAMPL, data_dir=data_dir).returncode == 0
    papers = _json(data_dir)
    parent = next(p for p in papers if p["citekey"] == "whole-proceedings")
    children = [p for p in papers if p["fields"].get("crossref") == "whole-proceedings"]
    assert children
    taken = run_cli("set", parent["id"], "citekey=article-full", data_dir=data_dir)
    assert taken.returncode == 2 and "already used by another paper" in taken.stderr
    res = run_cli("set", parent["id"], "citekey=Proc1983", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "citekey: whole-proceedings → Proc1983" in res.stdout
    assert "citing the old key by crossref now cite the new one" in res.stdout
    again = {p["id"]: p for p in _json(data_dir)}
    for child in children:
        assert again[child["id"]]["bibfields"]["crossref"] == "{Proc1983}"
    lib = Library.open(data_dir, readonly=True)
    assert sorted(lib.edit_scope(parent["id"])) == sorted([parent["id"], *(c["id"] for c in children)])


def test_an_arxiv_id_is_kept_without_its_version_and_exported_as_an_eprint(tmp_path, seeds):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([seeds[1]])
    pid = lib.ids()[0]
    lib.edit_record(pid, {"eprint": "https://arxiv.org/abs/2401.01234v3"})
    assert lib.get(pid).arxiv_id == "2401.01234"
    entry = lib.bibtex_entries([pid], "biblatex", pin=False)
    assert re.search(r"eprint += \{2401\.01234\},\n +eprinttype += \{arXiv\}", entry), entry


def test_a_record_found_online_is_added_with_its_fields_and_merges_into_the_paper_it_is(tmp_path, seeds):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([seeds[0]])
    listing = next(p for p in lib.papers() if p.title_derived)
    listing_authors = listing.authors
    found = FoundRecord(
        service="crossref",
        ident="10.1000/found",
        title="The Published Version",
        authors=["Ada Lovelace", "The CGAL Project"],
        year=2025,
        venue="Journal of Found Things",
        doi="10.1000/found",
        entrytype="article",
        abstract=listing.abstract,
        extra={"volume": "12", "pages": "1--20", "publisher": "ACM & Co"},
    )
    report = lib.add_found([found])
    assert report.error == "" and report.added == 0 and report.merged == 1
    merged = lib.get(listing.id)
    assert merged.title == "The Published Version" and not merged.title_derived
    assert merged.doi == "10.1000/found" and merged.year == 2025
    entry = lib.bibtex_entries([listing.id], pin=False)
    assert entry.startswith("@article{")
    assert "journal   = {Journal of Found Things}" in entry
    assert "publisher = {ACM \\& Co}" in entry
    # an import's merge: the paper keeps the authors it had (the listing's), as with any duplicate
    assert merged.authors == listing_authors
    # a record of a paper not there yet is a new paper
    other = FoundRecord(service="arxiv", ident="1605.08386", title="A New One", arxiv_id="1605.08386", year=2016)
    report = lib.add_found([other])
    assert report.added == 1
    assert lib.get(report.added_ids[0]).arxiv_id == "1605.08386"


def test_the_abstract_is_not_a_field_of_the_editor(tmp_path, seeds):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([seeds[1]])
    with pytest.raises(ValueError, match="abstract"):
        lib.edit_record(lib.ids()[0], {"abstract": "x"})


BLX = subprocess.run(["kpsewhich", "biblatex-examples.bib"], capture_output=True, text=True).stdout.strip()


def _blx(tmp_path) -> Library:
    lib = Library.open(tmp_path / "blx")
    lib.import_files([BLX])
    return lib


def _keyed(lib: Library, key: str):
    return next(p for p in lib.papers() if p.citekey == key)


def test_a_crossref_parents_key_cannot_be_cleared_while_children_cite_it(tmp_path):
    lib = _blx(tmp_path)
    parent, child = _keyed(lib, "westfahl:frontier"), _keyed(lib, "westfahl:space")
    with pytest.raises(ValueError, match="cite 'westfahl:frontier' by crossref"):
        lib.edit_record(parent.id, {"citekey": ""})
    assert parent.citekey == "westfahl:frontier" and "westfahl:frontier" in child.bibfields["crossref"]


def test_a_type_change_and_back_keeps_the_journal_where_the_type_reads_it(tmp_path):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([XAMPL])
    paper = _keyed(lib, "article-full")
    journal = paper.bibfields["journal"]
    for kind in ("phdthesis", "article", "book", "inproceedings", "misc", "article"):
        lib.edit_record(paper.id, {"entrytype": kind})
    assert paper.entrytype == "article" and paper.bibfields["journal"] == journal
    assert not {"howpublished", "booktitle"} & set(paper.bibfields)
    # BibLaTeX's journaltitle goes to booktitle and comes back as journaltitle
    blx = _blx(tmp_path)
    glashow = _keyed(blx, "glashow")
    blx.edit_record(glashow.id, {"entrytype": "inproceedings"})
    assert glashow.bibfields["booktitle"] == "{Nucl.~Phys.}" and "journaltitle" not in glashow.bibfields
    lib2_entry = blx.bibtex_entries([glashow.id], "bibtex", pin=False)
    assert "booktitle = {Nucl.~Phys.}" in lib2_entry
    blx.edit_record(glashow.id, {"entrytype": "article"})
    assert glashow.bibfields["journal"] == "{Nucl.~Phys.}"  # biber reads journal as journaltitle


def test_the_venue_typed_under_its_field_name_is_the_venue_and_a_periodical_keeps_its_title(tmp_path):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([XAMPL])
    paper = _keyed(lib, "article-full")
    lib.edit_record(paper.id, {"journal": "Journal of Other Things"})
    assert paper.venue == "Journal of Other Things"
    assert editor_view(paper).fields["venue"] == "Journal of Other Things"
    title = paper.title
    lib.edit_record(paper.id, {"entrytype": "periodical"})
    lib.edit_record(paper.id, {"venue": "Some Journal"})
    assert paper.title == title and paper.bibfields["title"] != "{Some Journal}"
    assert paper.venue == "Some Journal"


def test_editing_a_title_keeps_its_capitals_and_escapes_what_typesets_otherwise(tmp_path):
    lib = _blx(tmp_path)
    aksin = _keyed(lib, "aksin")
    new = aksin.title.replace("Effect of", "The effect of")
    lib.edit_record(aksin.id, {"title": new})
    assert aksin.title == new and "title" not in aksin.bibfields  # the user's own words (dedupe.typed_title)
    entry = lib.bibtex_entries([aksin.id], "bibtex", pin=False)
    assert "{Pd-N-heterocyclic}" in entry and "{Mizoroki-Heck}" in entry, entry
    lib.edit_record(aksin.id, {"title": "Price $5 and $6 for a~b in {DNA} a\\b"})
    entry = lib.bibtex_entries([aksin.id], "bibtex", pin=False)
    assert "title      = {Price \\$5 and \\$6 for a\\textasciitilde{}b in {DNA} a\\textbackslash{}b}," in entry, entry
    out = compile_bib(tmp_path, entry, "bibtex", cite=["aksin"])
    assert "\\$5 and \\$6" in out["bbl"] and "{DNA}" in out["bbl"]
    # a crossref child's typed title goes into its record, the phrases its old title braced kept
    child = _keyed(lib, "westfahl:space")
    lib.edit_record(child.id, {"title": "The Fiction of {Space} in NASA reports"})
    assert child.bibfields["title"] == "{The Fiction of {Space} in {NASA} reports}"


def test_a_tilde_a_date_and_a_url_are_checked_and_read_back_as_typed(tmp_path, seeds):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([seeds[1]])
    pid = lib.ids()[0]
    lib.edit_record(pid, {"note": "See https://a.org/~user"})
    assert editor_view(lib.get(pid)).fields["note"] == "See https://a.org/~user"
    for bad in ("2024-13-45", "2024/garbage", "24", "2024-02-30"):
        with pytest.raises(ValueError, match="is not a date"):
            lib.edit_record(pid, {"date": bad})
    lib.edit_record(pid, {"date": "2023-05/2024"})
    assert lib.get(pid).year == 2023
    with pytest.raises(ValueError, match="holds a space"):
        lib.edit_record(pid, {"url": "https://example.org/a b"})
    with pytest.raises(ValueError, match="given twice"):
        lib.edit_record(pid, {"doi": "10.1/a", "DOI": "10.1/b"})


def test_a_found_name_with_a_suffix_keeps_it_as_the_jr_part(tmp_path):
    lib = Library.open(tmp_path / "lib")
    rec = FoundRecord(
        service="crossref",
        title="Why We Can't Wait",
        authors=["Martin Luther King, Jr.", "Harry George Fletcher III", "Ada Lovelace"],
        year=1964,
        doi="10.1000/kingjr",
        entrytype="book",
    )
    report = lib.add_found([rec])
    paper = lib.get(report.added_ids[0])
    assert paper.bibfields["author"] == "{King, Jr., Martin Luther and Fletcher, III, Harry George and Lovelace, Ada}"
    assert paper.authors == ["Martin Luther King, Jr.", "Harry George Fletcher III", "Ada Lovelace"]


def test_a_records_own_eprint_of_another_archive_is_not_an_arxiv_id(tmp_path):
    lib = _blx(tmp_path)  # the knuth:ct:a book's eprint is a Google Books id
    paper = next(p for p in lib.papers() if "googlebooks" in p.bibfields.get("eprinttype", "").lower())
    assert editor_view(paper).fields["eprint"] and not paper.arxiv_id
    lib.edit_record(paper.id, {"eprint": "2401.01234"})
    assert paper.bibfields["eprint"] == "{2401.01234}" and "googlebooks" in paper.bibfields["eprinttype"]
    assert not paper.arxiv_id
    # told it is an arXiv id (as an applied look-up says it), it replaces the other archive's
    lib.edit_record(paper.id, {"eprint": "arXiv:2401.01234"})
    assert paper.arxiv_id == "2401.01234" and "eprinttype" not in paper.bibfields
    assert paper.bibfields["archiveprefix"] == "{arXiv}"


def test_set_refuses_the_type_given_twice_and_takes_fields_after_a_double_dash(data_dir, seeds):
    paper = _first_listing_paper(data_dir, seeds)
    res = run_cli("set", paper["id"], "entrytype=book", "--type", "article", data_dir=data_dir)
    assert res.returncode == 2 and "given twice" in res.stderr
    res = run_cli("set", paper["id"], "--type", "article", "--", "note=-x", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "note: (none) → -x" in res.stdout


def test_a_note_keeps_its_line_breaks_and_reads_back_as_typed(tmp_path, seeds):
    lib = Library.open(tmp_path / "lib")
    lib.import_files([seeds[1]])
    pid = lib.ids()[0]
    lib.edit_record(pid, {"note": "First line & more\nSecond line"})
    assert lib.get(pid).bibfields["note"] == "{First line \\& more\nSecond line}"
    assert editor_view(lib.get(pid)).fields["note"] == "First line & more\nSecond line"
    assert lib.edit_record(pid, {"note": "First line & more\nSecond line"}) == []  # the same text: no change
