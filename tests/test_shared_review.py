"""A review of the shared store's merge: orders of arrival and states of the folder that the
random convergence test (test_shared_merge.py) does not reach. Each test is a case where two
devices disagreed, or a device lost an edit, before its fix."""

from __future__ import annotations

import shutil
from pathlib import Path

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
