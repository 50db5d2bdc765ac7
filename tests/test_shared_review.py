"""A review of the shared store's merge: orders of arrival and states of the folder that the
random convergence test (test_shared_merge.py) does not reach. Each test is a case where two
devices disagreed, or a device lost an edit, before its fix."""

from __future__ import annotations

import shutil

import pytest

from conftest import SEEDS
from test_shared_merge import DEVICES, _clock_past, _open, _state

A, B, C = DEVICES


def test_a_delete_between_two_imports_of_one_paper_gives_one_answer_on_every_device(tmp_path):
    """A imports a listing, C deletes a paper of it, then B (which had seen neither) imports the
    same listing: B's import is stamped after the deletion, so the paper is back everywhere. A read
    B's import before C's deletion and dropped the paper (the deletion was weighed against A's own
    import only, not the later one)."""
    folder = tmp_path / "shared"
    a, b, c = _open(folder, A), _open(folder, B), _open(folder, C)
    try:
        a.import_files([SEEDS[0]])
        c.refresh()
        pid = sorted(c.ids())[0]
        _clock_past(a)
        c.delete_papers([pid])
        _clock_past(c)
        b.import_files([SEEDS[0]])
        for lib in (a, b, c, a, b, c):
            lib.refresh()
        assert [pid in lib for lib in (a, b, c)] == [True, True, True]
        assert _state(a)[:2] == _state(b)[:2] == _state(c)[:2]
    finally:
        for lib in (a, b, c):
            lib.close()


@pytest.mark.parametrize("a_compacted", [False, True], ids=["a-journal", "a-library-file"])
def test_an_edit_of_a_paper_whose_device_has_not_arrived_survives_a_compaction(tmp_path, a_compacted):
    """C reads B's note on a paper A imported before A's folder has reached C (the sync tool
    brought B's first). The note waits for the paper; C compacts meanwhile. Once A's folder
    arrives, C has the paper with B's note (it was kept in memory only, and a compaction lost it
    for good: C's library file said B's edit was applied)."""
    folder = tmp_path / "shared"
    a, b = _open(folder, A), _open(folder, B)
    try:
        a.import_files([SEEDS[0]])
        b.refresh()
        pid = sorted(b.ids())[0]
        b.set_notes(pid, "from B")
        if a_compacted:
            a.compact()  # C takes A's library file as it is (it holds nothing yet)
    finally:
        a.close()
        b.close()
    aside = tmp_path / "not-arrived"
    shutil.move(folder / "devices" / A, aside)  # A's folder has not been copied to C's machine yet
    c = _open(folder, C)
    try:
        c.refresh()
        assert pid not in c
        c.compact()
    finally:
        c.close()
    shutil.move(aside, folder / "devices" / A)
    c = _open(folder, C)
    try:
        c.refresh()
        assert c.get(pid).notes == "from B"
    finally:
        c.close()
