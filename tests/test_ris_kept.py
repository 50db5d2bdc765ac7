"""RIS kept whole (issue 20): a RIS file goes out as it came in, every tag and line, but for
the fields the user edited. Through the real command: `papershelf import x.ris`, then
`papershelf export --format ris -o out.ris`, on real files from other projects' test data
(tests/fixtures/public/ris/, see SOURCES.md there) and on the lines the issue named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from ris_roundtrip import PUBLIC, records, round_trip

REAL = sorted(p.name for p in PUBLIC.glob("*.ris"))


def papers_of(data_dir: Path) -> list[dict]:
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def export(data_dir: Path, out: Path) -> list[list[tuple[str, str]]]:
    res = run_cli("export", "--format", "ris", "-o", str(out), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    text = out.read_bytes().decode("utf-8")
    assert "\n" not in text.replace("\r\n", "")  # CR LF line ends only
    return records(text)


@pytest.mark.parametrize("name", REAL)
def test_a_real_ris_file_goes_out_as_it_came_every_tag_and_line_in_order(tmp_path, name):
    figures, original, exported = round_trip(PUBLIC / name, tmp_path)
    print(f"{name}: {figures.kept} of {figures.lines} tag lines back ({figures.share:.1%})")
    assert figures.records >= 1 and len(exported) == len(original)
    seen: set[str] = set()
    for came, went in zip(original, exported, strict=True):
        ids = [value for tag, value in came if tag == "ID"]
        if ids and ids[0] in seen:
            # a key the file gives twice (example_full.ris): the import gave the second paper a
            # key of its own and said so; the ID line is that key, so the two stay two papers
            key = dict(went)["ID"]
            assert key != ids[0]
            came = [(tag, key if tag == "ID" else value) for tag, value in came]
        seen.update(ids)
        assert went == came  # the same (tag, value) lines, in the same order


def test_the_lines_the_issue_found_lost_or_changed_come_back(tmp_path):
    """L2, AD, M1, DB, M3, L1, L4, the day of DA, an EP equal to SP, several N1 lines, a
    two-line UR, a non-breaking space and `~`, keywords differing only in case."""
    text = (
        "TY  - JOUR\n"
        "TI  - Seagrass within ~500\u00a0m of the shore\n"
        "AU  - Nguyen, Thi\n"
        "PY  - 2021\n"
        "DA  - 2021/03/17/\n"
        "T2  - Marine Ecology\n"
        "SP  - 12\n"
        "EP  - 12\n"
        "AD  - School of Biology, Hanoi\n"
        "DB  - Embase\n"
        "M1  - 4\n"
        "M3  - Article\n"
        "L1  - internal-pdf://1234/nguyen.pdf\n"
        "L2  - https://example.org/full\n"
        "L4  - https://example.org/fig1.png\n"
        "N1  - Export Date: 3 March 2022\n"
        "N1  - Cited By: 4\n"
        "UR  - https://example.org/a\n"
        "https://example.org/b\n"
        "KW  - Seagrass\n"
        "KW  - seagrass\n"
        "KW  - SEAGRASS\n"
        "ER  - \n"
    )
    path = tmp_path / "embase.ris"
    path.write_text(text, encoding="utf-8")
    figures, original, exported = round_trip(path, tmp_path)
    assert exported == original, figures
    went = dict(exported[0])
    assert went["TI"] == "Seagrass within ~500\u00a0m of the shore" and went["DA"] == "2021/03/17/"
    assert [v for t, v in exported[0] if t in ("SP", "EP")] == ["12", "12"]
    assert [v for t, v in exported[0] if t == "KW"] == ["Seagrass", "seagrass", "SEAGRASS"]
    assert went["UR"] == "https://example.org/a\nhttps://example.org/b"


def test_an_edited_field_is_written_anew_and_every_other_line_as_it_came(tmp_path):
    data_dir = tmp_path / "library"
    files = [PUBLIC / n for n in ("RisImporterTestScopus.ris", "RisImporterTestDOI.ris", "RisImporterTest8_date.ris")]
    res = run_cli("import", *map(str, files), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    by_doi = {p["doi"]: p for p in papers_of(data_dir)}
    scopus, pubmed, dated = (
        by_doi["10.1016/j.jmps.2004.03.010"],
        by_doi["10.1589/jpts.28.186"],
        by_doi["10.1063/1.1954747"],
    )
    original = {
        pid: records((PUBLIC / f.name).read_text(encoding="utf-8"))[0]
        for pid, f in zip((scopus["id"], pubmed["id"], dated["id"]), files, strict=True)
    }

    # the user's edits: a title, a year, tags and a status
    new_title = "A transversely isotropic composite: geometry ~ and 100% of it"
    assert run_cli("set", scopus["id"], f"title={new_title}", data_dir=data_dir).returncode == 0
    assert run_cli("set", pubmed["id"], "title=Smartphones and posture", data_dir=data_dir).returncode == 0
    assert run_cli("set", dated["id"], "year=2006", data_dir=data_dir).returncode == 0
    assert run_cli("tag", scopus["id"], "--add", "to cite", data_dir=data_dir).returncode == 0
    # (a tag the import made of a KW line, while imports make tags of keywords)
    assert "Traceback" not in run_cli("tag", scopus["id"], "--remove", "inclusions", data_dir=data_dir).stderr
    assert run_cli("status", scopus["id"], "read", data_dir=data_dir).returncode == 0

    exported = {p["id"]: r for p, r in zip(papers_of(data_dir), export(data_dir, tmp_path / "out.ris"), strict=True)}

    # Scopus: TI written anew where it was; its KW lines as they came (a removed tag's too), then
    # the user's new tag; every other line untouched
    expected = [("TI", new_title) if tag == "TI" else (tag, value) for tag, value in original[scopus["id"]]]
    last_kw = max(i for i, (tag, _v) in enumerate(expected) if tag == "KW")
    expected.insert(last_kw + 1, ("KW", "to cite"))
    assert exported[scopus["id"]] == expected

    # PubMed's title was a T1 line: the edit is written as TI in its place
    expected = [
        ("TI", "Smartphones and posture") if tag == "T1" else (tag, value) for tag, value in original[pubmed["id"]]
    ]
    assert exported[pubmed["id"]] == expected

    # the year: Y1, PY and DA give way to the year written anew (the month kept), where Y1 was
    came = original[dated["id"]]
    first = next(i for i, (tag, _v) in enumerate(came) if tag in ("Y1", "PY", "DA"))
    rest = [(tag, value) for tag, value in came if tag not in ("Y1", "PY", "DA")]
    expected = [*rest[:first], ("PY", "2006"), ("DA", "2006/07//"), *rest[first:]]
    assert exported[dated["id"]] == expected

    # exported again, the file imports as the same papers with the edits
    fresh = tmp_path / "fresh"
    assert run_cli("import", str(tmp_path / "out.ris"), data_dir=fresh).returncode == 0
    again = {p["doi"]: p for p in papers_of(fresh)}
    assert again[scopus["doi"]]["fields"]["title"] == new_title
    assert again[pubmed["doi"]]["title"] == "Smartphones and posture"
    assert again[dated["doi"]]["year"] == 2006 and again[dated["doi"]]["bibfields"]["month"] == "jul"


def test_a_paper_from_a_bib_file_goes_out_as_before(tmp_path):
    """Not from a RIS record: the RIS lines are written from the record, as they always were."""
    data_dir = tmp_path / "library"
    bib = tmp_path / "a.bib"
    bib.write_text("@article{k, author={Doe, Jane}, title={A Title}, journal={J}, year=2020, pages={5--5}}\n")
    assert run_cli("import", str(bib), data_dir=data_dir).returncode == 0
    [rec] = export(data_dir, tmp_path / "out.ris")
    assert rec == [
        ("TY", "JOUR"),
        ("ID", "k"),
        ("AU", "Doe, Jane"),
        ("TI", "A Title"),
        ("T2", "J"),
        ("PY", "2020"),
        ("SP", "5"),
        ("EP", "5"),
        ("ER", ""),
    ]


def scopus_and_bib(tmp_path, bib_text: str):
    """A library of the public Scopus RIS record, then a .bib of `bib_text`, imported in that
    order by the command line; (its folder, the RIS file)."""
    data_dir, scopus, bib = tmp_path / "library", PUBLIC / "RisImporterTestScopus.ris", tmp_path / "copy.bib"
    bib.write_text(bib_text, encoding="utf-8")
    for f in (scopus, bib):
        res = run_cli("import", str(f), data_dir=data_dir)
        assert res.returncode == 0, res.stdout + res.stderr
    return data_dir, scopus


def test_a_copy_from_a_bib_file_adds_its_abstract_and_leaves_the_ris_lines(tmp_path):
    """A merge that fills a field the RIS record lacked: that field is written, the rest as it came."""
    data_dir, scopus = scopus_and_bib(
        tmp_path,
        "@article{federico2004, author={Federico, S. and Grillo, A. and Herzog, W.},\n"
        "  title={A transversely isotropic composite with a statistical distribution of spheroidal inclusions},\n"
        "  journal={J. Mech. Phys. Solids}, year=2004, doi={10.1016/j.jmps.2004.03.010},\n"
        "  abstract={Spheroidal inclusions, half of them aligned.}}\n",
    )
    [paper] = papers_of(data_dir)
    assert paper["abstract"].startswith("Spheroidal")
    [rec] = export(data_dir, tmp_path / "out.ris")
    came = records(scopus.read_text(encoding="utf-8"))[0]
    assert rec == [*came[:-1], ("AB", "Spheroidal inclusions, half of them aligned."), came[-1]]


def test_a_paper_merged_by_hand_keeps_its_ris_lines_and_writes_what_the_merge_gave(tmp_path):
    data_dir, scopus = scopus_and_bib(
        tmp_path,
        "@misc{pre, title={Spheroidal inclusions in composites}, year=2003,\n"
        "  abstract={A preprint of the paper, with its abstract.}}\n",
    )
    by_title = {p["title"][:10]: p["id"] for p in papers_of(data_dir)}
    res = run_cli("duplicates", "--merge", by_title["A transver"], by_title["Spheroidal"], data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    [rec] = export(data_dir, tmp_path / "out.ris")
    came = records(scopus.read_text(encoding="utf-8"))[0]
    # the merge gave the paper the other's abstract and key: those two are written, before ER
    assert rec == [*came[:-1], ("ID", "pre"), ("AB", "A preprint of the paper, with its abstract."), came[-1]]


def test_a_key_the_first_bibtex_export_gives_goes_out_as_an_id_line(tmp_path):
    data_dir = tmp_path / "library"
    scopus = PUBLIC / "RisImporterTestScopus.ris"  # no ID line
    assert run_cli("import", str(scopus), data_dir=data_dir).returncode == 0
    assert run_cli("export", "--format", "bibtex", "-o", str(tmp_path / "refs.bib"), data_dir=data_dir).returncode == 0
    [paper] = papers_of(data_dir)
    assert paper["citekey"]
    [rec] = export(data_dir, tmp_path / "out.ris")
    came = records(scopus.read_text(encoding="utf-8"))[0]
    assert rec == [*came[:-1], ("ID", paper["citekey"]), came[-1]]
