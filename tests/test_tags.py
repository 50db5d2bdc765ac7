"""Tags the user chose, apart from a record's keywords; deleting tags; renames that keep saved
searches; tag typos on the command line (issue 20, defects 2, 5 and 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, SEEDS, run_cli
from papershelf.core.library import Library

MENDELEY = FIXTURES / "public" / "bib" / "bibtexparser-random-mendeley.bib"


@pytest.fixture
def tagged(data_dir) -> Path:
    """A library of the first sample listing, two papers tagged 'diffusion models'."""
    with Library.open(data_dir) as lib:
        lib.import_files(SEEDS[:1])
        ids = lib.ids()
        lib.add_tags(ids[:2], ["diffusion models"])
        lib.add_tags(ids[2:3], ["llm"])
    return data_dir


def ok(*args: str, data_dir) -> str:
    """`papershelf ARGS` on the library, which must succeed; what it printed."""
    res = run_cli(*args, data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return res.stdout


# ---- defect 9: tag typos on the command line ----


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--tag", "difusion models"),
        ("search", "--tag", "difusion models"),
        ("search", "attention", "--tag", "difusion models"),
        ("tag", "ID", "--remove", "difusion models"),
    ],
)
def test_a_tag_typo_on_the_command_line_is_an_error_with_the_closest_tag(tagged, args):
    if "ID" in args:
        with Library.open(tagged, readonly=True) as lib:
            args = tuple(lib.ids()[0] if a == "ID" else a for a in args)
    before = {p: p.read_bytes() for p in tagged.glob("library.jsonl")}
    res = run_cli(*args, data_dir=tagged)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "No tag 'difusion models'; did you mean 'diffusion models'?" in res.stderr
    assert "Traceback" not in res.stderr
    assert "No papers match" not in res.stdout and "No tags changed" not in res.stdout
    assert before == {p: p.read_bytes() for p in tagged.glob("library.jsonl")}


def test_the_right_tag_still_lists_searches_and_removes(tagged):
    assert '"diffusion models"' in ok("list", "--tag", "Diffusion Models", "--json", data_dir=tagged)
    ok("search", "--tag", "diffusion models", "--json", data_dir=tagged)
    with Library.open(tagged, readonly=True) as lib:
        first = lib.ids()[0]
    res = run_cli("tag", first, "--remove", "diffusion models", data_dir=tagged)
    assert res.returncode == 0 and "Tags changed on 1 of 1 paper." in res.stdout
    # a tag the library has, but not on this paper: nothing to do, said so, not an error
    res = run_cli("tag", first, "--remove", "llm", data_dir=tagged)
    assert res.returncode == 0 and "No tags changed." in res.stdout


# ---- defect 2: a record's keywords are its keywords, not tags ----


def test_importing_a_mendeley_bib_keeps_keywords_as_keywords_not_tags(tagged):
    res = run_cli("import", str(MENDELEY), data_dir=tagged)
    assert res.returncode == 0, res.stderr
    with Library.open(tagged, readonly=True) as lib:
        assert set(lib.tag_counts()) == {"diffusion models", "llm"}  # the user's own, not buried
    # searchable as keyword:, in the window's search and the command line's alike
    res = run_cli("search", "keyword:entanglement", "--json", data_dir=tagged)
    assert res.returncode == 0, res.stderr

    found = json.loads(res.stdout)
    assert len(found) == 2, found  # the two entries with the keyword Entanglement
    res = run_cli("search", "tag:entanglement", "--json", data_dir=tagged)
    assert json.loads(res.stdout) == []
    # and shown with the record
    pid = found[0]["id"]
    res = run_cli("show", pid, data_dir=tagged)
    assert "keywords:" in res.stdout and "Entanglement" in res.stdout


def test_keywords_as_tags_is_asked_for_on_the_import(data_dir):
    res = run_cli("import", "--keywords-as-tags", str(FIXTURES / "bib" / "sample.ris"), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    with Library.open(data_dir, readonly=True) as lib:
        assert {"attention", "efficiency"} <= set(lib.tag_counts())


def test_an_export_writes_the_keywords_as_they_came_then_the_users_tags(data_dir, tmp_path):
    zotero = FIXTURES / "bib" / "zotero.bib"
    assert run_cli("import", str(zotero), str(FIXTURES / "bib" / "sample.ris"), data_dir=data_dir).returncode == 0
    with Library.open(data_dir) as lib:
        assert not lib.tag_counts()
        vaswani = next(p.id for p in lib.papers() if p.citekey == "vaswani_attention_2017")
        sparse = next(p.id for p in lib.papers() if p.title.startswith("Sparse attention"))
        lib.add_tags([vaswani], ["to-read-first", "transformers"])
        lib.add_tags([sparse], ["llm"])
    out = tmp_path / "out.bib"
    assert run_cli("export", "-o", str(out), data_dir=data_dir).returncode == 0
    text = out.read_text()
    assert "{Computer Science - Computation and Language, transformers, to-read-first}" in text
    ris = tmp_path / "out.ris"
    assert run_cli("export", "-o", str(ris), data_dir=data_dir).returncode == 0
    lines = [ln for ln in ris.read_text().splitlines() if ln.startswith("KW")]
    assert lines == [
        "KW  - Computer Science - Computation and Language",
        "KW  - transformers",
        "KW  - to-read-first",
        "KW  - attention",
        "KW  - efficiency",
        "KW  - llm",
    ]


# ---- deleting tags, and renames that keep saved searches (defects 2 and 5) ----


def test_tags_delete_on_the_command_line_names_the_saved_searches_it_affects(tagged):
    with Library.open(tagged) as lib:
        lib.save_search("diffusion reading", "", {"tag": "diffusion models"})
        lib.save_search("llm only", "tag:llm", {})
    res = run_cli("tags", "--delete", "Diffusion Models", data_dir=tagged)
    assert res.returncode == 0, res.stderr
    assert "Deleted the tag 'diffusion models' from 2 papers." in res.stdout
    assert "'diffusion reading'" in res.stdout and "'llm only'" not in res.stdout
    with Library.open(tagged, readonly=True) as lib:
        assert set(lib.tag_counts()) == {"llm"}
    res = run_cli("tags", "--delete", "difusion", data_dir=tagged)
    assert res.returncode == 2 and "No tag 'difusion'" in res.stderr and "Traceback" not in res.stderr
    res = run_cli("tags", data_dir=tagged)
    assert res.returncode == 0 and res.stdout == "llm  (1 paper)\n"


def test_renaming_a_tag_updates_the_saved_searches_that_use_it(tagged):
    with Library.open(tagged) as lib:
        lib.save_search("by filter", "", {"tag": "diffusion models"})
        lib.save_search("by words", "tag:llm OR tags:LLM", {})
    assert "'by words'" in ok("tags", "--rename", "llm", "language models", data_dir=tagged)
    ok("tags", "--rename", "diffusion models", "diffusion", data_dir=tagged)
    with Library.open(tagged, readonly=True) as lib:
        saved = lib.saved_searches()
        assert saved["by filter"].filters == {"tag": "diffusion"}
        assert saved["by words"].text == 'tag:"language models" OR tag:"language models"'
    # the saved search still finds the papers, on the command line as in the window
    res = run_cli("search", "--saved", "by filter", "--json", data_dir=tagged)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)) == 2


def test_a_library_with_old_keyword_tags_can_drop_them_and_keep_the_users_own(data_dir):
    # a library from before: its import made tags of every keyword (they stay until asked)
    assert run_cli("import", "--keywords-as-tags", str(MENDELEY), data_dir=data_dir).returncode == 0
    with Library.open(data_dir) as lib:
        many = len(lib.tag_counts())
        assert many > 20
        ids = [p.id for p in lib.papers() if p.tags]
    res = run_cli("tag", ids[0], ids[1], "--add", "to-read-first", data_dir=data_dir)
    assert res.returncode == 0
    with Library.open(data_dir, readonly=True) as lib:
        mine = next(t for t in lib.get(ids[0]).tags if t != "to-read-first")  # one of its keywords, as a tag
    assert run_cli("tag", ids[0], "--add", mine, data_dir=data_dir).returncode == 0  # the user keeps this one
    res = run_cli("tags", "--drop-keyword-tags", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "Took keyword tags off" in res.stdout
    with Library.open(data_dir, readonly=True) as lib:
        assert set(lib.tag_counts()) == {"to-read-first", mine}
        assert "keywords" in lib.get(ids[0]).bibfields  # the record keeps its keywords


def test_a_ris_line_of_several_keywords_made_tags_is_not_written_again(data_dir, tmp_path):
    ris = tmp_path / "packed.ris"
    ris.write_text(
        "TY  - JOUR\r\nTI  - Packed keywords\r\nAU  - Doe, Jane\r\nPY  - 2021\r\nKW  - Optim; stuff\r\nER  - \r\n",
        encoding="utf-8",
    )
    assert run_cli("import", "--keywords-as-tags", str(ris), data_dir=data_dir).returncode == 0
    listed = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
    assert sorted(listed[0]["tags"]) == ["optim", "stuff"]
    out = tmp_path / "out.ris"
    assert run_cli("export", "--format", "ris", "-o", str(out), data_dir=data_dir).returncode == 0
    keywords = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("KW")]
    assert keywords == ["KW  - Optim; stuff"]  # as it came; its tags are its own keywords, not extra lines


def test_a_records_keywords_are_edited_like_any_field(data_dir, tmp_path):
    with Library.open(data_dir) as lib:
        lib.import_files([MENDELEY])
        pid = next(p.id for p in lib.papers() if p.bibfields.get("keywords"))
    res = run_cli("set", pid, "keywords=literate programming, typesetting", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    shown = json.loads(run_cli("show", pid, "--json", data_dir=data_dir).stdout)
    assert shown["tags"] == []  # still no tags: the keywords are the record's
    found = json.loads(run_cli("search", "keyword:typesetting", "--json", data_dir=data_dir).stdout)
    assert [p["id"] for p in found] == [pid]
    bib = run_cli("show", pid, "--bibtex", data_dir=data_dir).stdout
    assert "literate programming, typesetting" in bib
