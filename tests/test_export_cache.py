"""Issue 25 item 3: the rendered entries an export keeps (core/exporters/entrycache.py). An
export with the cache says, byte for byte and report for report, what an export without it
says; an edited paper is rendered again, alone; a damaged cache is only not used. The
cache lives in this machine's folder for the library, never in the (synced) library folder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, local_dir, run_cli
from papershelf.core.exporters import bibtex, ris
from papershelf.core.exporters.entrycache import CACHE_NAME
from papershelf.core.library import Library
from test_bib_export_record import XDATA  # an entry built from another (xdata): never cached

FORMATS = ("bibtex", "biblatex", "ris")


@pytest.fixture
def mixed(data_dir, seeds, tmp_path) -> Path:
    """Listings, a Zotero and a JabRef .bib, a RIS file, an xdata pair, and a paper whose title
    has characters no dialect can write (replaced by "?")."""
    xdata = tmp_path / "xdata.bib"
    xdata.write_text(XDATA, encoding="utf-8")
    with Library.open(data_dir) as lib:
        lib.import_files([*seeds[:2], FIXTURES / "bib" / "zotero.bib", FIXTURES / "bib" / "sample.ris", xdata])
        lib.import_files([FIXTURES / "bib" / "jabref.bib"])
        some = lib.ids()[0]
        lib.set_title(some, "Attention 漢字 is all you need 🙂")
    return data_dir


def export(lib: Library, fmt: str, path: Path) -> tuple[bytes, tuple]:
    """The file an export of every paper writes, and its report's findings."""
    if fmt == "ris":
        r = lib.export_ris(lib.ids(), path)[0]
        return path.read_bytes(), (r.entries, r.controls_removed, r.summary().replace(str(path), "FILE"))
    report = lib.export_bibtex(lib.ids(), path, fmt)[0]
    summary = report.summary().replace(str(path), "FILE")
    return path.read_bytes(), (report.entries, report.replaced_chars, report.controls_removed, summary)


class Counting:
    """Counts the entries rendered (not copied from the cache)."""

    def __init__(self, monkeypatch) -> None:
        self.n = 0
        for module, name in ((bibtex, "any_entry"), (ris, "record")):
            real = getattr(module, name)

            def counted(*args, __real=real, **kwargs):
                self.n += 1
                return __real(*args, **kwargs)

            monkeypatch.setattr(module, name, counted)


def cache_file(folder: Path) -> Path:
    return local_dir(folder) / CACHE_NAME


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_after_an_edit_is_a_cold_export_and_renders_the_edited_paper_alone(mixed, tmp_path, fmt, monkeypatch):
    counting = Counting(monkeypatch)
    with Library.open(mixed) as lib:
        first, first_report = export(lib, fmt, tmp_path / "first")  # fills the cache (and pins the keys)
        n = len(lib)
        assert counting.n >= n - 1  # every entry rendered (an xdata child's own entry goes through record_entry)
        counting.n = 0
        again, again_report = export(lib, fmt, tmp_path / "again")
        assert counting.n <= 1  # nothing rendered but what is made from other papers (BibTeX's xdata child)
        assert (again, again_report) == (first, first_report)
        edited = lib.ids()[3]
        lib.set_title(edited, "A title the reader typed, with ümlauts and {Braces}")
        lib.add_tags([lib.ids()[5]], ["to-read"])
        counting.n = 0
        warm, warm_report = export(lib, fmt, tmp_path / "warm")
        assert 2 <= counting.n <= 3  # the two papers edited (and the xdata child)
    cache_file(mixed).unlink()
    with Library.open(mixed) as lib:
        counting.n = 0
        cold, cold_report = export(lib, fmt, tmp_path / "cold")
        assert counting.n >= n - 1
    assert warm == cold and warm_report == cold_report
    assert warm != first
    assert ("ümlauts" if fmt != "bibtex" else '{\\"u}mlauts').encode() in warm
    if fmt != "ris":
        assert cold_report[1] >= 2  # the characters written as "?" are counted from the cache as well


def test_the_cache_is_on_this_machine_and_an_export_of_everything_drops_the_entries_of_edited_papers(mixed, tmp_path):
    with Library.open(mixed) as lib:
        export(lib, "bibtex", tmp_path / "a.bib")
        export(lib, "ris", tmp_path / "a.ris")
        n = len(lib)
        for pid in lib.ids()[:4]:
            lib.set_notes(pid, "changed: the stored record, so the digest")
        export(lib, "bibtex", tmp_path / "b.bib")
        lib.export_ris(lib.ids()[:3], tmp_path / "part.ris")  # a part of the library drops nothing
    assert not list(Path(mixed).rglob("*.sqlite3*"))  # nothing in the (synced) library folder
    with sqlite3.connect(cache_file(mixed)) as db:
        counts = dict(db.execute("SELECT kind, count(*) FROM entries GROUP BY kind").fetchall())
    # the BibTeX dialect keeps no entry made from an xdata parent: one fewer than the papers
    assert counts == {"bibtex": n - 1, "ris": n}


@pytest.mark.parametrize("damage", ["garbage", "not-a-table"])
def test_a_damaged_cache_is_not_used_and_the_export_is_the_same(mixed, tmp_path, damage):
    with Library.open(mixed) as lib:
        good = export(lib, "biblatex", tmp_path / "good.bib")
    path = cache_file(mixed)
    if damage == "garbage":
        path.write_bytes(b"this is no SQLite database" * 100)
        for extra in path.parent.glob(CACHE_NAME + "-*"):
            extra.unlink()
    else:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE entries")
            db.execute("CREATE TABLE entries (digest BLOB PRIMARY KEY, kind TEXT NOT NULL)")
    with Library.open(mixed) as lib:
        assert export(lib, "biblatex", tmp_path / "damaged.bib") == good


def test_another_version_of_the_exporters_empties_the_cache(mixed, tmp_path, monkeypatch):
    from papershelf.core.exporters import entrycache

    with Library.open(mixed) as lib:
        good = export(lib, "bibtex", tmp_path / "good.bib")
        with sqlite3.connect(cache_file(mixed)) as db:  # an entry as an older exporter wrote it
            db.execute("UPDATE entries SET text = 'stale'")
        monkeypatch.setattr(entrycache, "ENTRY_VERSION", entrycache.ENTRY_VERSION + 1)
        assert export(lib, "bibtex", tmp_path / "new.bib") == good


def test_export_files_and_stdout_equal_the_uncached_export(mixed, tmp_path):
    with Library.open(mixed) as lib:
        ids = lib.ids()
        pdf = tmp_path / "paper.pdf"
        pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
        lib.attach_files(ids[2], [pdf], link=True)
        lib.export_bibtex(ids, tmp_path / "warmup.bib", files=True)
        lib.export_bibtex(ids, tmp_path / "files.bib", files=True)
        pieces: list[str] = []
        lib.export_bibtex(ids, "-", "biblatex", out=pieces.append)
        text = lib.export_bibtex(ids, "-", "biblatex")[1]
        ris_pieces: list[str] = []
        lib.export_ris(ids, "-", out=ris_pieces.append)
        ris_text = lib.export_ris(ids, "-")[1]
    assert "".join(pieces) == text and len(pieces) >= 2  # the header, then the entries
    assert "".join(ris_pieces) == ris_text
    cache_file(mixed).unlink()
    with Library.open(mixed) as lib:
        lib.export_bibtex(ids, tmp_path / "cold.bib", files=True)
    written = (tmp_path / "files.bib").read_text(encoding="utf-8")
    assert written == (tmp_path / "cold.bib").read_text(encoding="utf-8") and "paper.pdf" in written
    # the command line writes standard output as it renders: the same text
    res = run_cli("export", "--format", "biblatex", "-o", "-", data_dir=mixed)
    assert res.returncode == 0, res.stderr
    assert res.stdout == text and "Wrote" in res.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_entry_that_held_control_characters_is_reported_from_the_cache_too(mixed, tmp_path, fmt):
    with Library.open(mixed) as lib:
        held = lib.ids()[1]
        # a record as a version that kept control characters stored it (in memory only)
        lib._papers[held].update_raw({"abstract": "An abstract with a terminal escape \x1b[31m in it."})
        cold = export(lib, fmt, tmp_path / "cold")
        warm = export(lib, fmt, tmp_path / "warm")
    assert warm == cold and len(cold[1][-2]) == 1 and b"\x1b" not in cold[0]
