"""`papershelf delete ID…` (issue 20, item 12): through the facade's delete, asked on a terminal, --yes otherwise."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

import pytest

from conftest import SEEDS, run_cli


@pytest.fixture
def imported(data_dir):
    assert run_cli("import", str(SEEDS[0]), data_dir=data_dir).returncode == 0
    return data_dir


def ids_of(folder) -> list[str]:
    return [p["id"] for p in json.loads(run_cli("list", "--json", data_dir=folder).stdout)]


def test_delete_with_yes_deletes_says_what_and_lasts(imported):
    ids = ids_of(imported)
    assert run_cli("list-add", "thesis", ids[0], data_dir=imported).returncode == 0
    res = run_cli("delete", ids[0], ids[1][:8], "--yes", data_dir=imported)
    assert res.returncode == 0, res.stderr
    assert f"Deleted {ids[0]}" in res.stdout and f"Deleted {ids[1]}" in res.stdout
    assert res.stdout.splitlines()[-1] == "Deleted 2 papers; the library now holds 18 papers."
    assert ids_of(imported) == ids[2:]
    assert run_cli("lists", data_dir=imported).stdout.strip() == "thesis  (0 papers)"


def test_delete_without_a_terminal_needs_yes_and_deletes_nothing(imported):
    ids = ids_of(imported)
    res = run_cli("delete", ids[0], data_dir=imported, input="y\n")
    assert res.returncode == 2 and "add --yes" in res.stderr and "Traceback" not in res.stderr
    assert ids_of(imported) == ids


def test_delete_of_an_unknown_id_deletes_nothing(imported):
    ids = ids_of(imported)
    res = run_cli("delete", ids[0], "nosuchpaper", "--yes", data_dir=imported)
    assert res.returncode == 2 and "No paper with id 'nosuchpaper'" in res.stderr
    assert ids_of(imported) == ids


def _on_a_terminal(folder, args: list[str], answer: bytes, stdout=None) -> str:
    """`papershelf ARGS` with a pseudo-terminal as its standard input and output (or `stdout`, an
    open file: `papershelf … > file` typed at a terminal); `answer` typed once it asks."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "papershelf", "--data-dir", str(folder), *args],
        stdin=follower,
        stdout=follower if stdout is None else stdout,
        stderr=follower,
        env=os.environ,
    )
    os.close(follower)
    seen = b""
    while b"[y/N]" not in seen:
        ready, _, _ = select.select([leader], [], [], 60)
        assert ready, f"no question on the terminal within 60 s; it shows {seen!r}"
        seen += os.read(leader, 4096)
    os.write(leader, answer)
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the command ended: the terminal closed
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=60) == 0
    os.close(leader)
    return seen.decode("utf-8", "replace")


def test_delete_on_a_terminal_asks_first(imported):
    ids = ids_of(imported)
    said = _on_a_terminal(imported, ["delete", ids[0], ids[1]], b"n\n")
    assert "Delete 2 papers? [y/N]" in said and "Nothing deleted." in said
    assert ids_of(imported) == ids
    said = _on_a_terminal(imported, ["delete", ids[0]], b"y\n")
    assert "Delete 1 paper? [y/N]" in said and f"Deleted {ids[0]}" in said
    assert ids_of(imported) == ids[1:]


def test_delete_asks_on_the_terminal_when_its_output_goes_to_a_file(imported, tmp_path):
    ids = ids_of(imported)
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as out:
        said = _on_a_terminal(imported, ["delete", ids[0]], b"y\n", stdout=out)
    assert "Delete 1 paper? [y/N]" in said  # asked where the person sees it
    written = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert "[y/N]" not in written and f"Deleted {ids[0]}" in written  # the file has the result only
    assert ids_of(imported) == ids[1:]
