"""Undoing an import in the core: what an import added and merged, put back exactly."""

from __future__ import annotations

from papershelf.core.library import Library

BIB_ONE = """@article{smith2020deep,
  title = {Deep Nets for Shelving Papers},
  author = {Smith, Jane and Doe, John},
  year = {2020},
  abstract = {We shelve papers with deep networks and measure how often readers find them again later.}
}
"""

BIB_MORE = """@article{smith2020deepx,
  title = {Deep Nets for Shelving Papers},
  author = {Smith, Jane and Doe, John and Roe, Richard},
  year = {2020},
  journal = {Journal of Shelving},
  doi = {10.1234/shelf.2020},
  abstract = {We shelve papers with deep networks and measure how often readers find them again later.}
}

@article{lee2021wide,
  title = {Wide Shelves Hold More Papers},
  author = {Lee, Ann},
  year = {2021},
  abstract = {Wider shelves hold more papers; we count them in three libraries over two years of use.}
}
"""


def same(a: dict, b: dict) -> bool:
    """Equal in every field but `updated` (when the paper last changed)."""
    return {k: v for k, v in a.items() if k != "updated"} == {k: v for k, v in b.items() if k != "updated"}


def test_report_keeps_merged_papers_as_they_were_and_put_records_restores_them(tmp_path):
    one, more = tmp_path / "one.bib", tmp_path / "more.bib"
    one.write_text(BIB_ONE, encoding="utf-8")
    more.write_text(BIB_MORE, encoding="utf-8")
    with Library.open(tmp_path / "lib") as lib:
        (first,) = lib.import_files([one])
        old_id = first.added_ids[0]
        lib.add_tags([old_id], ["mine"])
        before = lib.get(old_id).to_dict()
        (report,) = lib.import_files([more])
        assert report.added == 1 and report.merged == 1
        assert set(report.merged_before) == {old_id}
        assert lib.get(old_id).to_dict() != before
        assert lib.get(old_id).doi == "10.1234/shelf.2020"  # the merge happened
        # and it is told with both keys: the entry's in more.bib and the paper's
        (note,) = report.merges
        assert (note.entry_key, note.paper_id, note.paper_key) == ("smith2020deepx", old_id, "smith2020deep")
        assert "the same title, authors and year" in str(note) and str(note).startswith(str(more))

        after = lib.records(report.added_ids + [old_id])
        lib.put_records(report.merged_before, remove=report.added_ids)
        assert len(lib) == 1 and same(lib.get(old_id).to_dict(), before)
        assert lib.get(old_id).updated >= after[old_id]["updated"]  # the index catches up by it
        lib.put_records(after)
        assert len(lib) == 2 and lib.get(old_id).doi == "10.1234/shelf.2020"
        assert same(lib.records([old_id])[old_id], after[old_id])

    with Library.open(tmp_path / "lib") as lib:  # and it was all made durable
        assert len(lib) == 2 and lib.get(old_id).tags == ["mine"]
        # a re-import after an undo finds the removed paper new again (fingerprints follow)
        lib.put_records({}, remove=[i for i in lib.ids() if i != old_id])
        (again,) = lib.import_files([more])
        assert again.added == 1


def test_citation_keys_and_entries_follow_the_export_and_pin_the_keys(tmp_path):
    bib = tmp_path / "one.bib"
    bib.write_text(BIB_MORE.replace("smith2020deepx", "").replace("@article{,", "@article{x1,"), encoding="utf-8")
    with Library.open(tmp_path / "lib") as lib:
        lib.import_files([bib])
        ids = lib.ids()
        keys = lib.citation_keys(ids)
        assert all(lib.get(pid).citekey == keys[pid] for pid in ids)  # pinned
        text = lib.bibtex_entries(ids[:1])
        assert text.startswith("@") and "{" + keys[ids[0]] + "," in text and "% Exported" not in text
        _report, exported = lib.export_bibtex(ids[:1], "-")
        assert text in exported


ABS = "We shelve papers with deep networks and measure how often readers find them again later."


def test_undoing_a_merge_keeps_a_citation_key_pinned_after_it(tmp_path):
    listing, bib = tmp_path / "l.txt", tmp_path / "one.bib"
    listing.write_text("Daily Papers\n\n" + ABS + "\n", encoding="utf-8")
    bib.write_text(BIB_ONE, encoding="utf-8")
    with Library.open(tmp_path / "lib") as lib:
        (first,) = lib.import_files([listing])
        pid = first.added_ids[0]
        before = lib.get(pid).to_dict()
        (report,) = lib.import_files([bib])
        assert report.merged == 1 and lib.get(pid).title == "Deep Nets for Shelving Papers"
        (note,) = report.merges  # a listing paper has no key yet: its id is told
        assert (note.entry_key, note.paper_id, note.paper_key) == ("smith2020deep", pid, "")
        assert "the same abstract" in str(note)
        after = lib.records([pid])
        key = lib.citation_keys([pid])[pid]  # Copy Key / export pins it
        assert key and lib.get(pid).citekey == key
        lib.swap_fields(after, report.merged_before)  # undo the import
        now = lib.get(pid).to_dict()
        assert now["citekey"] == key  # the pin stays
        assert same({**now, "citekey": ""}, before)  # everything else as it was
        lib.swap_fields(report.merged_before, after)  # redo
        assert same(lib.records([pid])[pid], {**after[pid], "citekey": key})
