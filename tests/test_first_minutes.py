"""What a new user runs into first (issue 11), through the command line as a subprocess."""

from __future__ import annotations

import json

from conftest import run_cli


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
