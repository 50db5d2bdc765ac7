"""One sort key per column (core/biblio/sorting.py): the command line orders titles the same
way whether the search index answers (`search --sort title`) or the papers do (`list --sort
title`, and `search` before the index opens)."""

from __future__ import annotations

import json

from conftest import run_cli
from papershelf.core.library import Library

TITLES = ("Mango harvests", r"\emph{Zebra} crossings", "Apple trees", "$\\alpha$-stable laws", "{B}anana splits")
PLAIN_ORDER = ["Apple trees", "{B}anana splits", "Mango harvests", r"\emph{Zebra} crossings", "$\\alpha$-stable laws"]


def test_list_and_search_sort_titles_by_what_the_reader_sees(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
        ids = lib.ids()[: len(TITLES)]
        for pid, title in zip(ids, TITLES, strict=True):
            lib.edit_record(pid, {"title": title})
    shown = run_cli("list", "--sort", "title", "--json", data_dir=data_dir)
    assert shown.returncode == 0, shown.stderr
    listed = [p["title"] for p in json.loads(shown.stdout) if p["id"] in ids]
    assert listed == PLAIN_ORDER

    found = run_cli("search", "--sort", "title", "--limit", "1000", "--json", data_dir=data_dir)
    assert found.returncode == 0, found.stderr
    searched = [p["title"] for p in json.loads(found.stdout) if p["id"] in ids]
    assert searched == listed
