"""Issue 25 item 3: the rendered entries an export keeps (core/exporters/entrycache.py). An
export with the cache says, byte for byte and report for report, what an export without it
says; an edited paper is rendered again, alone; a damaged cache is only not used. The
cache lives in this machine's folder for the library, never in the (synced) library folder."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

from conftest import FIXTURES, local_dir, run_cli
from papershelf.core.exporters import bibtex, ris
from papershelf.core.exporters.entrycache import CACHE_NAME
from papershelf.core.library import Library
from papershelf.core.store import readview
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


def test_an_entry_is_kept_under_the_versions_that_made_it(monkeypatch):
    """The digest holds Papershelf's version and the store's schema as well as ENTRY_VERSION:
    an entry made by another version is never found (review finding)."""
    from papershelf.core.exporters import entrycache

    record = {"id": "p1", "title": "A title", "authors": ["A. Author"], "year": 2020}
    before = entrycache.EntryCache(None, "bibtex").digest(record, "author2020")
    for name, other in (("__version__", "0.0.0-other"), ("SCHEMA_VERSION", entrycache.SCHEMA_VERSION + 1)):
        with monkeypatch.context() as patched:
            patched.setattr(entrycache, name, other)
            assert entrycache.EntryCache(None, "bibtex").digest(record, "author2020") != before, name
    assert entrycache.EntryCache(None, "bibtex").digest(record, "author2020") == before


def test_a_read_only_single_device_library_keeps_its_export_cache_on_this_machine(tmp_path):
    """A library of the layout from before shared libraries, opened read-only, keeps its locks in
    its own folder; its export cache still goes to this machine's folder (review finding)."""
    from papershelf.core.store import machine

    folder = tmp_path / "library"
    shutil.copytree(FIXTURES / "library-v2", folder)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    with Library.open(folder, readonly=True) as lib:
        first = lib.export_bibtex(lib.ids(), tmp_path / "a.bib")[0]
        again = lib.export_bibtex(lib.ids(), tmp_path / "b.bib")[0]
    assert first.entries > 0 and first.unpinned_keys  # read-only: the keys went out unpinned
    assert (tmp_path / "a.bib").read_bytes() == (tmp_path / "b.bib").read_bytes()
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before  # nothing new in the folder
    with sqlite3.connect(machine.local_dir(folder, machine.device_id()) / CACHE_NAME) as db:
        (kept,) = db.execute("SELECT count(*) FROM entries").fetchone()
    assert kept == again.entries


def test_exports_of_part_of_the_library_bound_the_cache_and_spare_the_whole_export(mixed, tmp_path, monkeypatch):
    """Each edit of a paper exported alone leaves an entry nobody uses any more; the cache keeps at
    most `bound` entries of a format, and never those of the last export of everything."""
    from papershelf.core.exporters import entrycache

    monkeypatch.setattr(entrycache, "SPARE", 0)  # the bound: twice the library's papers
    counting = Counting(monkeypatch)
    with Library.open(mixed) as lib:
        _, whole_report = export(lib, "biblatex", tmp_path / "whole.bib")
        n = len(lib)
        edited = lib.ids()[1]  # (not the fixture's paper with "?" characters: the report stays the same)
        for i in range(2 * n + 5):
            lib.set_title(edited, f"Edited title number {i}")
            lib.export_bibtex([edited], tmp_path / "one.bib", "biblatex")
            with sqlite3.connect(cache_file(mixed)) as db:
                (kept,) = db.execute("SELECT count(*) FROM entries WHERE kind = 'biblatex'").fetchone()
            assert kept <= entrycache.bound(n)
        assert kept == entrycache.bound(n)  # it did grow to the bound
        counting.n = 0
        again, again_report = export(lib, "biblatex", tmp_path / "again.bib")
        assert counting.n == 0  # every entry of the whole export was still kept (the edited one too)
    assert again_report == whole_report and b"Edited title number" in again


def wait_settled(folder: Path) -> None:
    """Until every store file is old enough for an export of the library to be kept
    (readview.SETTLE_NS: a file changed just before an open might change again unseen)."""
    deadline = time.monotonic() + 60
    while not readview.settled(readview.input_keys(folder) or {}, time.time_ns()):
        assert time.monotonic() < deadline, "the library's files kept changing"
        time.sleep(0.05)


def settled_library(folder: Path) -> Library:
    """The library opened once its files are settled (`wait_settled`)."""
    wait_settled(folder)
    return Library.open(folder)


def kept_export_files(folder: Path, tmp_path: Path, fmt: str, name: str) -> tuple[bytes, str, str]:
    """The installed command's export of everything in `fmt`: the file, what it said, and its
    text on standard output."""
    out = tmp_path / f"{name}.{'ris' if fmt == 'ris' else 'bib'}"
    res = run_cli("export", "--format", fmt, "-o", str(out), "--force", data_dir=folder)
    assert res.returncode == 0, res.stderr
    streamed = run_cli("export", "--format", fmt, "-o", "-", data_dir=folder)
    assert streamed.returncode == 0, streamed.stderr
    said = (res.stdout + res.stderr).replace(str(out), "FILE")
    return out.read_bytes(), said, streamed.stdout + streamed.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unchanged_library_is_exported_again_from_the_cache_alone(mixed, tmp_path, fmt):
    """An export of everything, when the library's files are as the last one found them, is written
    from the kept entries without the library (Library.kept_export): the same bytes and the same
    words, fragments warning included; any edit, or a version of the cache's from another Papershelf,
    sends it back to the library."""
    pin = tmp_path / "pin.out"
    res = run_cli("export", "--format", fmt, "-o", str(pin), data_dir=mixed)  # BibTeX pins the keys
    assert res.returncode == 0, res.stderr
    wait_settled(mixed)  # (an export of files changed a moment ago is not kept: readview.SETTLE_NS)
    first = kept_export_files(mixed, tmp_path, fmt, "first")  # read whole and kept; its standard output kept
    assert first[0] == pin.read_bytes()
    kept = Library.kept_export(mixed, fmt)
    # ...but for the BibTeX dialect, which writes an xdata parent's fields into its child: never kept
    assert (kept is None) == (fmt == "bibtex")
    if kept is not None:
        kept.close()
    third = kept_export_files(mixed, tmp_path, fmt, "third")  # from the cache (BibTeX: the library)
    assert first == third
    assert "Wrote" in third[1] and "nobody would cite" in third[1]
    with Library.open(mixed) as lib:
        pid = lib.ids()[2]
    res = run_cli("tag", pid, "--add", "edited-since", data_dir=mixed)
    assert res.returncode == 0, res.stderr
    assert Library.kept_export(mixed, fmt) is None  # the library changed: read again
    edited = kept_export_files(mixed, tmp_path, fmt, "edited")
    assert edited != third and b"edited-since" in edited[0]
    cache_file(mixed).unlink()
    for extra in cache_file(mixed).parent.glob(CACHE_NAME + "-*"):
        extra.unlink()
    assert kept_export_files(mixed, tmp_path, fmt, "cold") == edited


def test_a_kept_export_says_which_papers_are_fragments(data_dir, seeds):
    """The fragments warning of an export from the cache is the library's (listing papers have no
    year: every one is a fragment)."""
    res = run_cli("import", str(seeds[0]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    said = [run_cli("export", "-o", "-", data_dir=data_dir).stderr]  # pins the keys
    wait_settled(data_dir)
    said.append(run_cli("export", "-o", "-", data_dir=data_dir).stderr)  # read whole, kept
    assert Library.kept_export(data_dir, "bibtex") is not None
    said.append(run_cli("export", "-o", "-", data_dir=data_dir).stderr)  # from the cache
    assert said[0] == said[1] == said[2] and "nobody would cite" in said[2]


def test_what_an_export_said_is_kept_only_beside_its_own_manifest(mixed, tmp_path):
    """Two exports at once: one with --files replaced the manifest after another export of the
    same library wrote its own; the first one's words must not be kept beside the second's entries
    (a later export would write the file fields it was not asked for)."""
    from papershelf.core.exporters import entrycache
    from papershelf.core.store import machine

    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    with Library.open(mixed) as lib:
        ids = lib.ids()
        lib.export_bibtex(ids, tmp_path / "pin.bib", "biblatex")  # pins the keys
        lib.attach_files(ids[2], [pdf], link=True)
    with settled_library(mixed) as lib:
        lib.export_bibtex(ids, tmp_path / "plain.bib", "biblatex")
        kept = Library.kept_export(mixed, "biblatex")
        assert kept is not None
        kept.close()
        with sqlite3.connect(cache_file(mixed)) as db:
            (said,) = db.execute("SELECT said FROM exports WHERE kind = 'biblatex'").fetchone()
        lib.export_bibtex(ids, tmp_path / "files.bib", "biblatex", files=True)  # a manifest of its own
    assert Library.kept_export(mixed, "biblatex") is None
    inputs = json.dumps({"files": readview.input_keys(mixed), "machine": machine.machine_fingerprint()}, sort_keys=True)
    earlier = entrycache.EntryCache(cache_file(mixed), "biblatex")
    earlier.manifest = "the token of the export before"
    entrycache.seal(earlier, inputs, orjson.loads(said))
    assert Library.kept_export(mixed, "biblatex") is None
    earlier.manifest = _manifest_token(mixed)  # (the test's own check: with the right token it is kept)
    entrycache.seal(earlier, inputs, orjson.loads(said))
    kept = Library.kept_export(mixed, "biblatex")
    assert kept is not None
    kept.close()


def _manifest_token(folder: Path) -> str:
    with sqlite3.connect(cache_file(folder)) as db:
        (token,) = db.execute("SELECT value FROM about WHERE name = 'manifest biblatex'").fetchone()
    return str(token)


@pytest.mark.parametrize("fmt", ("biblatex", "ris"))
def test_a_chosen_set_that_covers_the_library_is_not_kept_as_the_plain_export(mixed, tmp_path, fmt):
    """`export --ids` naming every paper in another order (RIS keeps the order chosen) says and
    writes what a chosen set does: the next plain export is the library's, not a copy of it
    (review finding)."""
    run_cli("export", "--format", fmt, "-o", str(tmp_path / "pin.out"), data_dir=mixed)
    with Library.open(mixed) as lib:
        ids = lib.ids()
    wait_settled(mixed)
    res = run_cli("export", "--format", fmt, "--ids", *reversed(ids), "-o", str(tmp_path / "rev.out"), data_dir=mixed)
    assert res.returncode == 0, res.stderr
    assert Library.kept_export(mixed, fmt) is None
    plain = kept_export_files(mixed, tmp_path, fmt, "plain")
    for path in cache_file(mixed).parent.glob(CACHE_NAME + "*"):
        path.unlink()
    assert kept_export_files(mixed, tmp_path, fmt, "cold") == plain


def test_a_kept_export_whose_cache_is_damaged_is_the_export_as_usual(mixed, tmp_path):
    """A page of the cache that holds entries' text damaged after the export was kept (its counts
    still answer from the index): a file export and one to standard output are the library's
    export, no traceback (review finding: every export failed)."""
    run_cli("export", "--format", "biblatex", "-o", str(tmp_path / "pin.bib"), data_dir=mixed)
    wait_settled(mixed)
    first = kept_export_files(mixed, tmp_path, "biblatex", "first")
    kept = Library.kept_export(mixed, "biblatex")
    assert kept is not None
    kept.close()
    data = bytearray(cache_file(mixed).read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    at = data.index(b"@article{") // page * page  # a page of entries' text
    data[at : at + 8] = b"\xff" * 8
    cache_file(mixed).write_bytes(bytes(data))
    again = kept_export_files(mixed, tmp_path, "biblatex", "again")
    assert again == first
    assert "Traceback" not in again[1] + again[2]
