"""What a new user runs into first (issue 11), through the command line as a subprocess."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from papershelf.core.library import Library


def test_searching_an_empty_library_finds_nothing_and_says_why(tmp_path):
    folder = tmp_path / "new-library"
    res = run_cli("search", "foo", data_dir=folder)
    assert res.returncode == 0, res.stderr
    assert "The library is empty, so nothing matches." in res.stdout
    assert "failed" not in res.stderr and "Traceback" not in res.stderr
    assert json.loads(run_cli("search", "foo", "--json", data_dir=folder).stdout) == []
    again = run_cli("reindex", data_dir=folder)
    assert again.returncode == 0 and "Indexed 0 papers" in again.stderr
    res = run_cli("search", "author:nobody", data_dir=folder)
    assert res.returncode == 0 and "The library is empty" in res.stdout and res.stderr == ""


@pytest.fixture
def library_folder(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
        first = lib.ids()[0]
        lib.add_tags([first], ["to-read"])
        lib.add_to_list("Thesis", [first])
    return data_dir


def _ids(folder):
    return [p["id"] for p in json.loads(run_cli("list", "--json", data_dir=folder).stdout)]


def test_a_unique_id_prefix_of_any_length_names_its_paper(library_folder):
    ids = _ids(library_folder)
    short = next(pid[:n] for n in (1, 2, 3) for pid in ids if sum(o.startswith(pid[:n]) for o in ids) == 1)
    res = run_cli("show", short, "--json", data_dir=library_folder)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["id"].startswith(short)
    # an ambiguous one says how many match and how much of the id tells them apart
    first = Counter(pid[0] for pid in ids).most_common(1)[0][0]
    res = run_cli("show", first, data_dir=library_folder)
    matching = [pid for pid in ids if pid.startswith(first)]
    assert res.returncode == 2
    assert f"The id prefix '{first}' matches {len(matching)} papers" in res.stderr
    assert "type at least" in res.stderr and len(res.stderr.splitlines()) == 1


def test_an_export_with_a_misspelt_tag_or_status_is_refused_and_offers_the_name(library_folder, tmp_path):
    refs = tmp_path / "refs.bib"
    refs.write_text("@misc{kept, title={Mine}}\n")
    res = run_cli("export", "--tag", "to-raed", "-o", str(refs), data_dir=library_folder)
    assert res.returncode == 2 and "did you mean 'to-read'?" in res.stderr and "Wrote" not in res.stdout
    res = run_cli("export", "--status", "raed", "-o", str(refs), data_dir=library_folder)
    assert res.returncode == 2 and "did you mean 'read'" in res.stderr
    res = run_cli("export", "--list", "Thesys", "-o", str(refs), data_dir=library_folder)
    assert res.returncode == 2 and "did you mean 'Thesis'?" in res.stderr
    assert refs.read_text() == "@misc{kept, title={Mine}}\n"
    # the file is the user's own: replaced only when asked (test_export_safety)
    ok = run_cli("export", "--tag", "to-read", "--force", "-o", str(refs), data_dir=library_folder)
    assert ok.returncode == 0 and "@misc{kept" not in refs.read_text()


def test_an_export_that_selects_nothing_leaves_the_file_alone(library_folder, tmp_path):
    refs = tmp_path / "refs.bib"
    refs.write_text("@misc{kept, title={Mine}}\n")
    for args in (["--status", "skipped"], ["--query", "zzzqqq"]):
        res = run_cli("export", *args, "-o", str(refs), data_dir=library_folder)
        assert res.returncode == 1, res.stderr
        assert "selects no papers" in res.stderr and f"{refs} was left as it was" in res.stderr
        assert refs.read_text() == "@misc{kept, title={Mine}}\n"
    res = run_cli("export", "--status", "skipped", "-o", "-", data_dir=library_folder)
    assert res.returncode == 1 and res.stdout == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["list-add", "   ", "{id}"], "a reading list needs a name"),
        (["list-remove", "", "{id}"], "No reading list named ''"),
        (["show", ""], "A paper id is needed here"),
        (["status", "{id}", "raed"], "did you mean 'read'"),
        (["key", "{id}", "9 bad key"], "is not a usable citation key"),
    ],
)
def test_bad_input_is_one_line_not_a_traceback(library_folder, args, message):
    pid = _ids(library_folder)[0]
    res = run_cli(*[a.format(id=pid) for a in args], data_dir=library_folder)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert message in res.stderr


ROOT = Path(__file__).resolve().parents[1]


def partly_a_listing(tmp_path, seeds) -> Path:
    """Three abstracts of a real listing among notes that are not: no header, 3 of 7 paragraphs."""
    abstracts = [p for p in seeds[2].read_text(encoding="utf-8").split("\n\n") if len(p.split()) > 40][:3]
    path = tmp_path / "notes.txt"
    path.write_text(
        "## Papers to look at\n\n" + "\n\n".join(abstracts) + "\n\n- ask Anna\n\nTODO\n\nsee the other file\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("name", ["README.md", "app/papershelf/cli/commands.py", "pyproject.toml"])
def test_text_that_is_no_listing_is_refused_and_says_what_is_read(data_dir, name):
    res = run_cli("import", str(ROOT / name), data_dir=data_dir)
    assert res.returncode == 1, res.stdout
    assert "does not look like a list of papers" in res.stdout
    assert "Papershelf reads paper-search listings" in res.stdout and "BibTeX (.bib) and RIS (.ris)" in res.stdout
    assert res.stdout.splitlines()[-1] == "The library now holds 0 papers."


def test_listings_and_bibliographies_still_import_without_asking(data_dir, seeds):
    fixtures = ROOT / "tests" / "fixtures"
    files = [*seeds, *sorted(p for d in ("bib", "listings") for p in (fixtures / d).glob("*.*"))]
    res = run_cli("import", *map(str, files), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "not imported" not in res.stdout
    assert res.stdout.count(" added, ") == len(files)


def test_text_that_partly_looks_like_a_listing_needs_as_listing(data_dir, seeds, tmp_path):
    path = partly_a_listing(tmp_path, seeds)
    res = run_cli("import", str(path), data_dir=data_dir)
    assert res.returncode == 1
    assert "only partly looks like a paper listing (3 of its 7 paragraphs" in res.stdout
    assert "--as listing" in res.stdout and "it would add 3 papers" in res.stdout
    assert res.stdout.splitlines()[-1] == "The library now holds 0 papers."
    res = run_cli("import", "--as", "listing", str(path), data_dir=data_dir)
    assert res.returncode == 0 and "3 added" in res.stdout
    assert res.stdout.splitlines()[-1] == "The library now holds 3 papers."
    piped = run_cli("import", "-", data_dir=tmp_path / "other", input=(ROOT / "README.md").read_text())
    assert piped.returncode == 1 and "<pasted text> does not look like a list of papers" in piped.stdout


def test_as_listing_still_reads_bibtex_and_ris_as_bibliographies(data_dir, seeds, tmp_path):
    """`import --as listing notes.txt refs.bib`: the .bib keeps its real title, not its raw text."""
    path = partly_a_listing(tmp_path, seeds)
    bib = FIXTURES / "bib" / "zotero.bib"
    ris = FIXTURES / "bib" / "sample.ris"
    res = run_cli("import", "--as", "listing", str(path), str(bib), str(ris), data_dir=data_dir)
    assert res.returncode == 0, res.stdout + res.stderr
    with Library.open(data_dir, readonly=True) as lib:
        titles = [p.title for p in lib.papers()]
    assert not [t for t in titles if "@" in t or "TY  -" in t or "title =" in t], titles
    assert len(titles) > 3


def test_the_readme_describes_the_window_as_it_is():
    """What a reader of the README looks for: the paper menu, import undo, Last import, the columns."""
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "Right-click a paper" in text and "Copy Citation Key" in text
    assert "An import is one step of Edit ▸ Undo" in text and "Imports ▸ Last import" in text
    assert "right-click the header to choose the columns" in text
    assert "how many papers match and how long it took" not in text
    assert "hover over it to see how long the search took" in text
