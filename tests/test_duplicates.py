"""Duplicates are proposed, not forced (issue 13 item 4): the matching rule at import, every
merge told with both keys, and the Possible Duplicates list to merge or keep apart by hand,
through the command line and the real window."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
from PySide6.QtCore import Qt

from conftest import cli_ok, import_in_turn, listed_papers, run_cli
from test_citekeys_kept import xampl

# ---- files of our own for the cases ----------------------------------------------

DOI_BIB = """@article{shelf2020,
  title = {Deep Nets for Shelving Papers},
  author = {Smith, Jane and Doe, John},
  year = {2020},
  journal = {Journal of Shelving},
  doi = {10.1234/shelf.2020}
}
"""

# the same paper as RIS, its DOI as a resolver link and in capitals, its title recased
DOI_RIS = """TY  - JOUR
TI  - Deep nets for shelving papers
AU  - Smith, Jane
AU  - Doe, John
PY  - 2020
JO  - J. Shelving
DO  - https://doi.org/10.1234/SHELF.2020
ER  -
"""

# three entries nobody titled differently: one file, three entries, three papers
ANONYMOUS = "\n".join(
    f"""@misc{{anon{n},
  title = {{Untitled}},
  author = {{Anonymous}},
  year = {{1995}},
  howpublished = {{Leaflet {n}}}
}}
"""
    for n in (1, 2, 3)
)

SAME_ABSTRACT = (
    "We measure how often readers find a shelved paper again and report the numbers for three "
    "libraries over two years, with every count published alongside the code."
)


def abstract_bib(key: str, title: str, year: int, doi: str) -> str:
    return f"""@article{{{key},
  title = {{{title}}},
  author = {{Lee, Ann}},
  year = {{{year}}},
  doi = {{{doi}}},
  abstract = {{{SAME_ABSTRACT}}}
}}
"""


def pairs(data_dir) -> list[dict]:
    res = run_cli("duplicates", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


# ---- the rule, through the command line ------------------------------------------------------


def test_xampl_twins_are_different_entries_of_one_file_and_only_offered_as_duplicates(data_dir):
    source = xampl()
    res = cli_ok("import", str(source), data_dir=data_dir)
    assert "0 merged" in res.stdout and "merged:" not in res.stdout, res.stdout
    keys = {p["citekey"] for p in listed_papers(data_dir)}
    for kind in "article inbook book incollection mastersthesis inproceedings phdthesis techreport".split():
        assert {f"{kind}-minimal", f"{kind}-full"} <= keys, kind
    # the twins share a title: offered, side by side, never merged by themselves
    offered = {frozenset((p["a"]["citekey"], p["b"]["citekey"])) for p in pairs(data_dir)}
    assert frozenset(("article-minimal", "article-full")) in offered
    # importing the file again adds nothing and merges nothing
    again = cli_ok("import", str(source), data_dir=data_dir)
    assert "nothing changed" in again.stdout and "merged:" not in again.stdout, again.stdout
    assert {p["citekey"] for p in listed_papers(data_dir)} == keys


def test_an_export_imported_back_adds_nothing_and_each_entry_finds_its_own_paper(data_dir, tmp_path):
    cli_ok("import", str(xampl()), data_dir=data_dir)
    out = tmp_path / "out.bib"
    cli_ok("export", "-o", str(out), data_dir=data_dir)
    before = listed_papers(data_dir)
    res = cli_ok("import", str(out), data_dir=data_dir)
    assert "0 added" in res.stdout and "merged:" not in res.stdout, res.stdout  # keys agree: nothing to tell
    after = listed_papers(data_dir)
    assert len(after) == len(before)
    # the twins of one title each take their own entry back, not the other's
    lines = {
        m.group(1): n
        for n, line in enumerate(out.read_text(encoding="utf-8").splitlines(), 1)
        if (m := re.match(r"@\w+\{([^,]+),", line))
    }
    for paper in after:
        (back,) = [s for s in paper["sources"] if s["file"].endswith("out.bib")]
        assert back["line"] == lines[paper["citekey"]], paper["citekey"]


def test_a_bib_and_an_ris_of_the_same_doi_are_one_paper_and_the_merge_names_both_keys(data_dir, tmp_path):
    res = import_in_turn(data_dir, {tmp_path / "shelf.bib": DOI_BIB, tmp_path / "shelf.ris": DOI_RIS})
    (paper,) = listed_papers(data_dir)
    assert "0 added, 1 merged" in res.stdout
    (line,) = [ln for ln in res.stdout.splitlines() if "merged:" in ln]
    assert paper["id"] in line and "'shelf2020'" in line and "the same DOI" in line
    assert sorted(s["format"] for s in paper["sources"]) == ["bibtex", "ris"]


def test_a_bib_entry_merged_into_a_keyed_paper_tells_both_keys(data_dir, tmp_path):
    second = DOI_BIB.replace("shelf2020", "smithDeep20").replace("{2020}", "{2020},\n  pages = {1--9}")
    res = import_in_turn(data_dir, {tmp_path / "first.bib": DOI_BIB, tmp_path / "second.bib": second})
    (line,) = [ln for ln in res.stdout.splitlines() if "merged:" in ln]
    assert "entry 'smithDeep20'" in line and "key 'shelf2020'" in line, line
    assert re.search(r"second\.bib:1\b", line)


def test_three_anonymous_1995_entries_of_one_file_stay_three(data_dir, tmp_path):
    bib = tmp_path / "anon.bib"
    bib.write_text(ANONYMOUS, encoding="utf-8")
    res = cli_ok("import", str(bib), data_dir=data_dir)
    assert "3 added, 0 merged" in res.stdout
    assert sorted(p["citekey"] for p in listed_papers(data_dir)) == ["anon1", "anon2", "anon3"]
    assert len(pairs(data_dir)) == 3  # offered, each with each


def test_an_inproceedings_is_not_folded_into_a_techreport_of_the_same_title_author_and_year(data_dir, tmp_path):
    one, two = tmp_path / "report.bib", tmp_path / "paper.bib"
    fields = "  title = {Shelving at Scale},\n  author = {Roe, Richard},\n  year = {1999},\n"
    one.write_text("@TechReport{roe99tr,\n" + fields + "  institution = {Shelf Lab}\n}\n", encoding="utf-8")
    two.write_text("@InProceedings{roe99,\n" + fields + "  booktitle = {Proc. Shelving}\n}\n", encoding="utf-8")
    cli_ok("import", str(one), data_dir=data_dir)
    res = cli_ok("import", str(two), data_dir=data_dir)
    assert "1 added, 0 merged" in res.stdout
    assert sorted((p["citekey"], p["entrytype"]) for p in listed_papers(data_dir)) == [
        ("roe99", "inproceedings"),
        ("roe99tr", "techreport"),
    ]
    (pair,) = pairs(data_dir)  # offered instead, side by side
    assert pair["reason"] == "the same title"
    assert {pair["a"]["entrytype"], pair["b"]["entrytype"]} == {"inproceedings", "techreport"}


def test_different_titles_years_and_dois_are_two_papers_whatever_their_abstracts(data_dir, tmp_path):
    one, two = tmp_path / "one.bib", tmp_path / "two.bib"
    one.write_text(abstract_bib("lee2019", "Finding Shelved Papers", 2019, "10.1/one"), encoding="utf-8")
    two.write_text(abstract_bib("lee2021", "Readers Return to Shelves", 2021, "10.1/two"), encoding="utf-8")
    cli_ok("import", str(one), data_dir=data_dir)
    res = cli_ok("import", str(two), data_dir=data_dir)
    assert "1 added, 0 merged" in res.stdout
    assert len(listed_papers(data_dir)) == 2 and pairs(data_dir) == []


def test_a_listing_paper_is_recognised_by_its_abstract(data_dir, tmp_path):
    listing, bib = tmp_path / "daily.txt", tmp_path / "one.bib"
    listing.write_text("Daily Papers\n\n" + SAME_ABSTRACT + "\n", encoding="utf-8")
    bib.write_text(abstract_bib("lee2019", "Finding Shelved Papers", 2019, "10.1/one"), encoding="utf-8")
    cli_ok("import", str(listing), data_dir=data_dir)
    res = cli_ok("import", str(bib), data_dir=data_dir)
    (paper,) = listed_papers(data_dir)
    assert paper["title"] == "Finding Shelved Papers"
    assert "the same abstract" in res.stdout and "entry 'lee2019'" in res.stdout


def test_a_year_off_by_one_is_offered_then_merged_by_hand_with_the_lost_key_told(data_dir, tmp_path):
    one, two = tmp_path / "one.bib", tmp_path / "two.bib"
    one.write_text(DOI_BIB, encoding="utf-8")
    two.write_text(
        "@inproceedings{smith2021shelf,\n  title = {Deep Nets for Shelving Papers},\n"
        "  author = {Jane Smith},\n  year = {2021},\n  booktitle = {Shelving Workshop}\n}\n",
        encoding="utf-8",
    )
    cli_ok("import", str(one), str(two), data_dir=data_dir)
    first, second = listed_papers(data_dir)
    (pair,) = pairs(data_dir)
    assert pair["reason"] == "the same title" and {pair["a"]["id"], pair["b"]["id"]} == {first["id"], second["id"]}
    listed = cli_ok("duplicates", data_dir=data_dir).stdout
    assert "1 pair of possible duplicates" in listed and "2020" in listed and "2021" in listed

    cli_ok("tag", second["id"], "--add", "workshop", data_dir=data_dir)
    cli_ok("status", second["id"], "reading", data_dir=data_dir)
    cli_ok("list-add", "to cite", second["id"], data_dir=data_dir)
    cli_ok("tag", first["id"], "--add", "journal", data_dir=data_dir)
    merged = cli_ok("duplicates", "--merge", first["id"][:6], second["id"][:6], data_dir=data_dir)
    assert "'smith2021shelf' is gone" in merged.stdout and "'shelf2020'" in merged.stdout, merged.stdout
    (paper,) = listed_papers(data_dir)
    assert paper["id"] == first["id"] and paper["citekey"] == "shelf2020"
    assert paper["tags"] == ["journal", "workshop"] and paper["status"] == "reading"
    assert paper["lists"] == ["to cite"] and paper["doi"] == "10.1234/shelf.2020"
    assert sorted(s["file"].rsplit("/", 1)[-1] for s in paper["sources"]) == ["one.bib", "two.bib"]
    assert pairs(data_dir) == []


def test_keep_apart_is_remembered_across_starts(data_dir, tmp_path):
    bib = tmp_path / "anon.bib"
    bib.write_text(ANONYMOUS, encoding="utf-8")
    cli_ok("import", str(bib), data_dir=data_dir)
    first = pairs(data_dir)[0]
    res = cli_ok("duplicates", "--keep-apart", first["a"]["id"], first["b"]["id"], data_dir=data_dir)
    assert "kept apart" in res.stdout
    left = pairs(data_dir)  # a new process: read back from the library folder
    assert len(left) == 2
    assert {first["a"]["id"], first["b"]["id"]} not in [{p["a"]["id"], p["b"]["id"]} for p in left]
    again = cli_ok("duplicates", "--keep-apart", first["b"]["id"], first["a"]["id"], data_dir=data_dir)
    assert "already kept apart" in again.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--merge", "nosuchid", "other"), "No paper with id 'nosuchid'"),
        (("--keep-apart", "ID", "ID"), "are the same paper"),
        (("--merge", "ID"), "expected 2 arguments"),
    ],
)
def test_bad_duplicates_arguments_say_what_is_wrong(data_dir, tmp_path, args, message):
    bib = tmp_path / "anon.bib"
    bib.write_text(ANONYMOUS, encoding="utf-8")
    cli_ok("import", str(bib), data_dir=data_dir)
    pid = listed_papers(data_dir)[0]["id"]
    res = run_cli("duplicates", *(pid if a == "ID" else a for a in args), data_dir=data_dir)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert len(listed_papers(data_dir)) == 3


# ---- the rule where the record decides (the entry type), in the core -------------------------


def test_an_inproceedings_and_a_techreport_of_one_title_stay_apart(library):
    from papershelf.core.importers import ParsedFile
    from papershelf.core.importers.base import Candidate

    def entry(kind: str, key: str) -> Candidate:
        fields = {"title": "{On Shelving}", "author": "{Roe, Richard}", "year": "1999"}
        return Candidate(
            "",
            1,
            title="On Shelving",
            authors=["Richard Roe"],
            year=1999,
            citekey=key,
            entrytype=kind,
            bibfields=fields,
        )

    library.import_parsed(ParsedFile("a.bib", "bibtex", [entry("inproceedings", "roe99a")], []))
    report = library.import_parsed(ParsedFile("b.bib", "bibtex", [entry("techreport", "roe99b")], []))
    assert (report.added, report.merged) == (1, 0)
    (pair,) = library.duplicates.pairs()
    assert pair.reason == "the same title"
    # the same entry from another file is the same paper (which gains that file as a source)
    again = library.import_parsed(ParsedFile("c.bib", "bibtex", [entry("techreport", "roe99b")], []))
    assert (again.added, again.merged) == (0, 1) and len(library) == 2
    assert again.merges == []  # the entry itself, key and all: counted, nothing to tell
    # under another key it is told, with both keys
    other = library.import_parsed(ParsedFile("d.bib", "bibtex", [entry("techreport", "roeTR")], []))
    (note,) = other.merges
    assert (note.entry_key, note.paper_key) == ("roeTR", "roe99b") and "the same entry" in str(note)


def test_a_merge_by_hand_is_undone_exactly(seeded):
    lib = seeded
    a, b = lib.ids()[:2]
    lib.add_to_list("mine", [b, a])
    lib.set_notes(b, "read §2")
    before = lib.records([a, b])
    merged = lib.duplicates.merge(a, b)
    assert b not in lib and lib.list_ids("mine") == [a] and "read §2" in lib.get(a).notes
    lib.duplicates.undo(merged)
    assert lib.list_ids("mine") == [b, a]
    after = lib.records([a, b])
    assert {k: {f: v for f, v in r.items() if f != "updated"} for k, r in after.items()} == {
        k: {f: v for f, v in r.items() if f != "updated"} for k, r in before.items()
    }
    lib.duplicates.redo(merged)
    assert b not in lib and lib.list_ids("mine") == [a]


# ---- what a review found (issue 13 item 4): the abstract, title and year, files edited -------

VASWANI_ABSTRACT = (
    "The dominant sequence transduction models are based on complex recurrent or convolutional neural "
    "networks in an encoder-decoder configuration. We propose a new simple network architecture, the "
    "Transformer, based solely on attention mechanisms."
)


def test_in_a_migrated_library_a_titled_paper_is_not_merged_by_its_abstract_alone(data_dir, tmp_path):
    from test_migration import OLD

    data_dir.mkdir()
    for name in ("library.jsonl", "journal.jsonl", "journal.last"):
        shutil.copy2(OLD / name, data_dir / name)
    before = len(listed_papers(data_dir))
    thesis = tmp_path / "thesis.bib"
    thesis.write_text(
        "@phdthesis{other2019, title={A Completely Different Thesis}, author={Other, Olga}, "
        "school={Uni}, year=2019, abstract={" + VASWANI_ABSTRACT + "}}\n",
        encoding="utf-8",
    )
    res = cli_ok("import", str(thesis), data_dir=data_dir)
    assert "1 added, 0 merged" in res.stdout, res.stdout
    after = {p["id"]: p for p in listed_papers(data_dir)}
    assert len(after) == before + 1
    vaswani = after["d659721c2d"]  # a paper of the old library: a title, no record
    assert vaswani["title"] == "Attention is all you need" and vaswani.get("entrytype", "") != "phdthesis"
    assert "other2019" in {p["citekey"] for p in after.values()}


def editorial(key: str, journal: str, volume: int, more: str = "") -> str:
    return f"@article{{{key}, title={{Editorial}}, journal={{{journal}}}, volume={volume}, year=2020{more}}}\n"


def test_editorials_of_one_year_are_one_paper_only_in_one_journal_and_volume(data_dir, tmp_path):
    files = {
        "nature.bib": editorial("ed-nature", "Nature", 580),
        "science.bib": editorial("ed-science", "Science", 367),
        "nature-581.bib": editorial("ed-nature-581", "Nature", 581),
        "nature-again.bib": editorial("natureEd20", "Nature", 580, ", pages={5}"),
    }
    out = {}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = cli_ok("import", str(tmp_path / name), data_dir=data_dir).stdout
    for name in ("science.bib", "nature-581.bib"):
        assert "1 added, 0 merged" in out[name], out[name]
    # no author anywhere: the same title, year, journal and volume is what makes one paper
    (line,) = [ln for ln in out["nature-again.bib"].splitlines() if "merged:" in ln]
    assert "entry 'natureEd20'" in line and "key 'ed-nature'" in line, line
    assert "the same title, year and venue" in line and "authors" not in line, line
    assert sorted(p["citekey"] for p in listed_papers(data_dir)) == ["ed-nature", "ed-nature-581", "ed-science"]
    assert {p["reason"] for p in pairs(data_dir)} == {"the same title"}  # offered side by side


ART = "@article{smith2020, title={Shelving Papers at Scale}, author={Smith, Jane}, journal={J. Shelves}, year=2020}\n"
PRE = (
    "@misc{smith2020arxiv, title={Shelving Papers at Scale}, author={Smith, Jane}, year=2020, "
    "eprint={2001.00001}, archiveprefix={arXiv}}\n"
)


def test_reimporting_a_file_with_an_entry_added_above_an_unchanged_one_keeps_both_keys(data_dir, tmp_path):
    refs = tmp_path / "refs.bib"
    refs.write_text(ART, encoding="utf-8")
    cli_ok("import", str(refs), data_dir=data_dir)
    (first,) = listed_papers(data_dir)
    refs.write_text(PRE + ART, encoding="utf-8")  # the preprint added above the article
    res = cli_ok("import", str(refs), data_dir=data_dir)
    assert "1 added, 0 merged" in res.stdout and "already used" not in res.stdout, res.stdout
    by_key = {p["citekey"]: p for p in listed_papers(data_dir)}
    assert sorted(by_key) == ["smith2020", "smith2020arxiv"]
    assert by_key["smith2020"]["id"] == first["id"] and by_key["smith2020arxiv"]["entrytype"] == "misc"


def test_reimporting_the_source_after_fixing_a_title_typo_adds_nothing(data_dir, tmp_path):
    src = tmp_path / "r.bib"
    entry = (
        "@article{knuth84, title={Literate Programing}, author={Knuth, Donald E.}, journal={Comput. J.}, year=1984,"
        " number=2}\n"
    )
    import_in_turn(data_dir, {src: entry})
    (paper,) = listed_papers(data_dir)
    cli_ok("title", paper["id"], "Literate Programming", data_dir=data_dir)
    res = cli_ok("import", str(src), data_dir=data_dir)
    assert "nothing changed" in res.stdout and "merged:" not in res.stdout, res.stdout
    (again,) = listed_papers(data_dir)
    assert (again["citekey"], again["title"]) == ("knuth84", "Literate Programming")
    # and an entry of that key whose other fields differ is another paper, its key told
    res = import_in_turn(data_dir, {tmp_path / "other.bib": entry.replace("number=2", "number=5")})
    assert "1 added" in res.stdout and "'knuth84' is already used" in res.stdout, res.stdout


def test_a_merge_by_hand_keeps_the_typed_title_and_fills_the_record_from_the_other(data_dir, tmp_path):
    bib = tmp_path / "a.bib"
    entries = (
        "@article{a1, title={Deep Lerning}, author={Lee, Ann}, year=2020, doi={10.1/x}}\n"
        "@article{a2, title={Deep Learning}, author={Lee, Ann}, year=2020, doi={10.1/x}, journal={J}, volume=3}\n"
    )
    import_in_turn(data_dir, {bib: entries})
    by_key = {p["citekey"]: p for p in listed_papers(data_dir)}
    a1, a2 = by_key["a1"]["id"], by_key["a2"]["id"]
    cli_ok("title", a1, "Deep Learning (corrected by me)", data_dir=data_dir)
    cli_ok("duplicates", "--merge", a1, a2, data_dir=data_dir)
    (merged,) = listed_papers(data_dir)
    assert (merged["citekey"], merged["title"]) == ("a1", "Deep Learning (corrected by me)")
    entry = cli_ok("show", "--bibtex", a1, data_dir=data_dir).stdout
    assert "Deep Learning (corrected by me)" in entry and "Lerning" not in entry, entry
    assert re.search(r"volume\s*=\s*3", entry) and re.search(r"journal\s*=\s*\{J\}", entry), entry


@pytest.mark.parametrize("title", ["title={Data set}, ", ""], ids=["one-title", "no-title"])
def test_many_entries_of_one_fingerprint_import_and_reimport_in_linear_time(tmp_path, monkeypatch, title):
    """Linear, counted in comparisons rather than seconds (a loaded machine made the timed form
    flaky): every pair the import's matcher weighs goes through duplicates.same_paper."""
    from papershelf.core import duplicates
    from papershelf.core.library import Library

    weighed = [0]
    real_same_paper = duplicates.same_paper

    def counted(a, b):
        weighed[0] += 1
        return real_same_paper(a, b)

    monkeypatch.setattr(duplicates, "same_paper", counted)

    def run(n: int) -> tuple[int, int]:
        lib = Library.open(tmp_path / f"lib{n}")
        bib = tmp_path / f"big{n}.bib"
        bib.write_text(
            "".join(
                f"@misc{{k{i}, {title}author={{{{NASA}}}}, howpublished={{https://example.org/{i}}}, year=2020}}\n"
                for i in range(n)
            ),
            encoding="utf-8",
        )
        weighed[0] = 0
        start = time.perf_counter()
        (report,) = lib.import_files([bib])
        first, first_s = weighed[0], time.perf_counter() - start
        weighed[0] = 0
        start = time.perf_counter()
        (again,) = lib.import_files([bib])
        second, second_s = weighed[0], time.perf_counter() - start
        assert (report.added, again.added, again.unchanged) == (n, 0, n)
        lib.close()
        print(
            f"\n{title or 'no title'}: {n} entries {first_s:.2f} s, {first} pairs weighed; "
            f"again {second_s:.2f} s, {second}"
        )
        return first, second

    small, big = run(1000), run(4000)
    assert small[1] >= 1000, small  # the re-import did weigh each entry against its paper
    # 4x the entries: 4x the pairs weighed (16x when every entry tried every paper)
    assert big[0] <= 4 * small[0] + 1000 and big[1] <= 4 * small[1] + 1000, (small, big)


# ---- the window ---------------------------------------------------------------------------------


def open_dialog(qtbot, win):
    from PySide6.QtGui import QAction

    win.findChild(QAction, "duplicatesAction").trigger()  # Edit ▸ Possible Duplicates
    dialog = win.findChild(object, "duplicatesDialog")
    summary = dialog.findChild(object, "duplicatesSummary")
    qtbot.waitUntil(lambda: dialog.isVisible() and not summary.text().startswith("Looking"))
    return dialog


def pair_rows(dialog):
    from PySide6.QtWidgets import QTableView

    view = dialog.findChild(QTableView, "duplicatePairs")
    model = view.model()
    return [tuple(model.index(r, c).data() for c in range(3)) for r in range(model.rowCount())]


@pytest.mark.gui
def test_the_window_lists_pairs_merges_and_keeps_apart_and_ctrl_z_takes_each_back(window, qtbot, tmp_path):
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QPushButton, QTableView

    from test_import_undo_gui import drop

    win, lib = window, window.library
    start = len(lib)
    bib = tmp_path / "anon.bib"
    bib.write_text(ANONYMOUS, encoding="utf-8")
    drop(qtbot, win, bib)
    assert len(lib) == start + 3
    dialog = open_dialog(qtbot, win)
    assert len(pair_rows(dialog)) == 3
    assert all(row[1].startswith("Untitled") and row[2].startswith("Untitled") for row in pair_rows(dialog))
    compare = dialog.findChild(QTableView, "duplicateCompare").model()
    labels = [compare.headerData(r, Qt.Orientation.Vertical) for r in range(compare.rowCount())]
    assert "key" in labels and "title" in labels
    shown = {compare.index(labels.index("key"), c).data() for c in (0, 1)}
    assert shown == {"anon1", "anon2"}

    qtbot.mouseClick(dialog.findChild(QPushButton, "mergeButton"), Qt.MouseButton.LeftButton)
    assert len(lib) == start + 2
    assert "'anon2' is gone" in win.statusBar().currentMessage()
    qtbot.waitUntil(lambda: len(pair_rows(dialog)) == 1)  # anon1 (with anon2 in it) and anon3

    qtbot.mouseClick(dialog.findChild(QPushButton, "keepApartButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: pair_rows(dialog) == [])
    assert "No possible duplicates" in dialog.findChild(object, "duplicatesSummary").text()

    # Ctrl+Z in the dialog takes back the keep-apart, then the merge
    pairs_view = dialog.findChild(QTableView, "duplicatePairs")
    qtbot.keyClick(pairs_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(pair_rows(dialog)) == 1)
    qtbot.keyClick(pairs_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert len(lib) == start + 3
    qtbot.waitUntil(lambda: len(pair_rows(dialog)) == 3)
    assert sorted(p.citekey for p in lib.papers() if p.citekey.startswith("anon")) == ["anon1", "anon2", "anon3"]
    dialog.close()  # and in the window, Edit ▸ Redo makes the merge again
    redo = win.findChild(QAction, "redoAction")
    assert redo.text().endswith("Merge of 2 papers")
    redo.trigger()
    assert len(lib) == start + 2


@pytest.mark.gui
def test_an_import_that_merges_says_so_without_a_box_and_the_dialog_names_both_keys(window, qtbot, tmp_path):
    from PySide6.QtWidgets import QMessageBox, QPlainTextEdit

    from test_import_undo_gui import drop

    win, lib = window, window.library
    bib, ris = tmp_path / "shelf.bib", tmp_path / "shelf.ris"
    bib.write_text(DOI_BIB, encoding="utf-8")
    ris.write_text(DOI_RIS, encoding="utf-8")
    drop(qtbot, win, bib)
    (report,) = drop(qtbot, win, ris)
    assert report.merged == 1
    assert "1 entry was merged into a paper already here" in win.statusBar().currentMessage()
    assert not [b for b in win.findChildren(QMessageBox) if b.isVisible()]  # nothing stops the user
    assert win.findChild(object, "undoAction").isEnabled()
    dialog = open_dialog(qtbot, win)
    text = dialog.findChild(QPlainTextEdit, "lastImportMerges").toPlainText()
    pid = next(p.id for p in lib.papers() if p.citekey == "shelf2020")
    assert "shelf.ris" in text and pid in text and "'shelf2020'" in text and "the same DOI" in text
