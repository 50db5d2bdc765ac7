"""Edges of discovery the review found: related papers of a paper without an abstract, the
reading statistics of a hand-edited store's impossible time stamps."""

from __future__ import annotations

import datetime as dt

import pytest

from papershelf.core.library import Library
from papershelf.core.paper import Paper


def test_a_paper_without_an_abstract_has_related_papers_by_its_title_and_no_index_error(tmp_path, seeds):
    bib = tmp_path / "d.bib"
    bib.write_text("@article{d1, title={Diffusion models beat GANs on image synthesis}, author={G H}, year={2019}}\n")
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files([*seeds, bib])
        assert lib.open_index()
        pid = next(p.id for p in lib.papers() if p.citekey == "d1")
        related = lib.more_like(pid, 8)
        assert related and pid not in related
        abstracts = " ".join(lib.get(r).abstract.lower() for r in related)
        assert "diffusion" in abstracts
        untitled = lib.import_text("@misc{u1, author={Nobody, A}}\n")
        assert untitled.added == 1
        assert lib.more_like(untitled.added_ids[0], 8) == []  # nothing to be like: no error either


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59-12:00", 12345, "garbage"])
def test_reading_stats_count_a_paper_with_an_impossible_time_stamp_by_its_status(stamp):
    from papershelf.gui.stats import reading_stats

    paper = Paper("a", title="x", status="read")
    paper.raw()["updated"] = stamp
    stats = reading_stats([paper], dt.date(2026, 12, 2))
    assert stats.total == 1
