"""`papershelf set` questions what it used to accept (issue 20, defect 10): an unknown type, a
field no BibTeX/BibLaTeX type knows (unless --force), a malformed name list. Nothing changes
when it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, snapshot_files


@pytest.fixture
def paper_id(data_dir: Path, seeds) -> str:
    assert run_cli("import", str(seeds[0]), data_dir=data_dir).returncode == 0
    papers = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
    return str(papers[0]["id"])


def _refused(data_dir: Path, *args: str):
    before = snapshot_files(data_dir)
    res = run_cli("set", *args, data_dir=data_dir)
    assert res.returncode == 2, res.stdout
    assert "Traceback" not in res.stderr
    assert "Nothing was changed" in res.stderr
    assert snapshot_files(data_dir) == before  # the library as it was
    return res


def test_set_refuses_an_unknown_type(data_dir, paper_id):
    res = _refused(data_dir, paper_id, "--type", "nonsense")
    assert "'nonsense' is not an entry type" in res.stderr
    assert "article" in res.stderr  # what to give instead
    res = _refused(data_dir, paper_id, "--type", "artcle")
    assert "did you mean 'article'" in res.stderr
    res = _refused(data_dir, paper_id, "entrytype=nonsense")
    assert "'nonsense' is not an entry type" in res.stderr


def test_set_takes_a_type_biblatex_knows(data_dir, paper_id):
    res = run_cli("set", paper_id, "--type", "mvbook", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "type: misc → mvbook" in res.stdout


def test_set_asks_for_force_before_adding_an_unknown_field(data_dir, paper_id):
    res = _refused(data_dir, paper_id, "titel=The Art of Computer Programming")
    assert "'titel'" in res.stderr and "did you mean 'title'" in res.stderr
    assert "--force" in res.stderr
    forced = run_cli("set", paper_id, "titel=The Art", "--force", data_dir=data_dir)
    assert forced.returncode == 0, forced.stderr
    assert "titel: (none) → The Art" in forced.stdout
    # once the record has it, editing it again is no new field
    again = run_cli("set", paper_id, "titel=The Art of Computer Programming", data_dir=data_dir)
    assert again.returncode == 0, again.stderr


def test_set_takes_fields_of_biblatex_and_of_the_common_tools(data_dir, paper_id):
    res = run_cli("set", paper_id, "journaltitle=JACM", "pagetotal=12", "mrnumber=1234567", data_dir=data_dir)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(
    "authors, where",
    [
        ("Knuth, Donald and", "ends with 'and' after 'Knuth, Donald'"),
        ("and Knuth, Donald", "starts with 'and'"),
        ("Knuth, Donald and and Lamport, Leslie", "'and and' after 'Knuth, Donald'"),
        ("Knuth, Donald and , and Lamport, Leslie", "name 2 (',') is only a comma"),
        (", Donald", "nothing before its comma"),
        ("Knuth, Donald, E., Jr", "3 commas"),
        ("{Barnes and Noble", "a brace is not closed"),
        ("Knuth} and Lamport", "closes nothing"),
    ],
)
def test_set_refuses_a_malformed_name_list_and_says_where(data_dir, paper_id, authors, where):
    res = _refused(data_dir, paper_id, f"author={authors}")
    assert where in res.stderr


def test_set_takes_well_formed_names(data_dir, paper_id):
    res = run_cli("set", paper_id, "author=Knuth, Donald E. and {Barnes and Noble} and others", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    shown = run_cli("show", paper_id, data_dir=data_dir).stdout
    assert "Donald E. Knuth, Barnes and Noble" in shown
