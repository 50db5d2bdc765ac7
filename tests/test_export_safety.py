"""`papershelf export -o FILE` replaces only what Papershelf wrote (issue 20, defect 6): a
hand-written .bib, or an export changed since, is kept unless --force."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from papershelf.core.library import Library

HAND_WRITTEN = (
    "% my own references, typed by hand\n"
    "@book{knuth84,\n  author = {Knuth, Donald},\n  title = {The TeXbook},\n  year = 1984,\n}\n"
)


@pytest.fixture
def small_library(data_dir, seeds) -> Path:
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
    return data_dir


@pytest.mark.parametrize("name", ["myrefs.bib", "myrefs.ris"])
def test_export_keeps_a_file_papershelf_did_not_write(small_library, tmp_path, name):
    out = tmp_path / name
    out.write_text(HAND_WRITTEN)
    res = run_cli("export", "-o", str(out), data_dir=small_library)
    assert res.returncode == 1
    assert out.read_text() == HAND_WRITTEN  # byte for byte
    assert "Papershelf did not write it" in res.stderr
    assert "--force" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""


def test_export_with_force_replaces_it(small_library, tmp_path):
    out = tmp_path / "myrefs.bib"
    out.write_text(HAND_WRITTEN)
    res = run_cli("export", "--force", "-o", str(out), data_dir=small_library)
    assert res.returncode == 0, res.stderr
    assert out.read_text().startswith("% Exported by Papershelf")


def test_export_replaces_its_own_export_until_it_is_edited(small_library, tmp_path):
    out = tmp_path / "refs.bib"
    first = run_cli("export", "-o", str(out), data_dir=small_library)
    assert first.returncode == 0, first.stderr
    again = run_cli("export", "--format", "biblatex", "-o", str(out), data_dir=small_library)
    assert again.returncode == 0, again.stderr  # ours, unchanged: no question
    assert "(BibLaTeX" in out.read_text().splitlines()[0]

    edited = out.read_text() + "\n@misc{mine, title = {Added by hand}}\n"
    out.write_text(edited)
    refused = run_cli("export", "-o", str(out), data_dir=small_library)
    assert refused.returncode == 1
    assert "changed since Papershelf wrote it" in refused.stderr
    assert out.read_text() == edited


def test_an_export_from_elsewhere_is_kept_too(small_library, tmp_path):
    """A file with Papershelf's header that this computer has no record of writing (another
    machine's export, a cleared cache) may hold edits: kept, and the message says why."""
    out = tmp_path / "refs.bib"
    run_cli("export", "-o", str(out), data_dir=small_library, env={"PAPERSHELF_CACHE_DIR": str(tmp_path / "other")})
    before = out.read_bytes()
    res = run_cli("export", "-o", str(out), data_dir=small_library)
    assert res.returncode == 1
    assert "a Papershelf export, but not one this computer remembers writing" in res.stderr
    assert out.read_bytes() == before


def test_an_empty_file_a_new_path_and_standard_output_need_no_force(small_library, tmp_path):
    empty = tmp_path / "empty.bib"
    empty.touch()
    assert run_cli("export", "-o", str(empty), data_dir=small_library).returncode == 0
    assert empty.read_text().startswith("% Exported by Papershelf")
    assert run_cli("export", "-o", str(tmp_path / "new.ris"), data_dir=small_library).returncode == 0
    assert run_cli("export", "-o", "-", data_dir=small_library).returncode == 0
    assert run_cli("export", "-o", "/dev/null", data_dir=small_library).returncode == 0
