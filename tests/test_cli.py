"""The command line, run as the installed program in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli, store_dir
from papershelf.core.library import Library

JSON_KEYS = {"id", "title", "title_derived", "authors", "area", "subarea", "abstract", "status", "tags", "lists"}


@pytest.fixture
def imported(data_dir, seeds):
    res = run_cli("import", *map(str, seeds), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return data_dir


def test_import_prints_per_file_and_total(data_dir, seeds):
    res = run_cli("import", *map(str, seeds), data_dir=data_dir)
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert f"{seeds[1]} (paper-search): 19 added, 1 merged as duplicates" in lines
    assert f"{seeds[3]} (daily-papers): 213 added, 14 merged as duplicates" in lines
    assert lines[-1] == "The library now holds 372 papers."
    again = run_cli("import", str(seeds[0]), data_dir=data_dir)
    assert again.returncode == 0
    assert "nothing changed; every paper in it is already in the library" in again.stdout


def test_import_goes_on_past_a_bad_file_and_exits_1(data_dir, seeds, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    res = run_cli("import", str(empty), str(seeds[0]), str(tmp_path / "missing.txt"), data_dir=data_dir)
    assert res.returncode == 1
    assert f"not imported: {empty} is empty; there is nothing to import." in res.stdout
    assert "missing.txt: no such file" in res.stdout
    assert "20 added" in res.stdout
    with Library.open(data_dir, readonly=True) as lib:
        assert len(lib) == 20


def test_list_json_has_the_documented_fields(imported):
    res = run_cli("list", "--json", data_dir=imported)
    assert res.returncode == 0
    papers = json.loads(res.stdout)
    assert len(papers) == 372
    assert all(JSON_KEYS <= set(p) for p in papers)
    thaman = [p for p in papers if p["authors"] == ["Kunvar Thaman"]]
    assert len(thaman) == 1 and thaman[0]["area"] == "General Machine Learning"
    assert thaman[0]["title_derived"] is True and thaman[0]["status"] == "unread"


def test_list_table_shows_readable_titles(imported):
    res = run_cli("list", data_dir=imported, env={"COLUMNS": "200"})
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert len(lines) == 372 + 2
    assert any("~VeriSimpl: a solver–LLM framework" in line for line in lines)
    assert any("~BayeSQP: a novel algorithm for general black-box optimization" in line for line in lines)
    assert lines[-1] == "372 papers; ~ marks a title derived from the abstract."


def test_tag_status_note_rate_lists_round_trip(imported):
    papers = json.loads(run_cli("list", "--json", data_dir=imported).stdout)
    a, b, c = (p["id"] for p in papers[:3])
    assert run_cli("tag", a, b, "--add", "To Read", "--add", "llm,agents", data_dir=imported).returncode == 0
    assert run_cli("tag", b, "--remove", "LLM", data_dir=imported).returncode == 0
    res = run_cli("status", a, c, "reading", data_dir=imported)
    assert res.returncode == 0 and "2 of 2 papers are now reading" in res.stdout
    assert run_cli("note", a[:6], "-", input="Check the proof of Lemma 2.\n", data_dir=imported).returncode == 0
    assert run_cli("rate", a, "5", data_dir=imported).returncode == 0
    assert run_cli("list-add", "Thesis", c, a, data_dir=imported).returncode == 0
    assert run_cli("lists", data_dir=imported).stdout.strip() == "Thesis  (2 papers)"

    shown = json.loads(run_cli("show", a, "--json", data_dir=imported).stdout)
    assert shown["tags"] == ["agents", "llm", "to read"]
    assert shown["status"] == "reading" and shown["rating"] == 5
    assert shown["notes"] == "Check the proof of Lemma 2.\n"
    assert shown["lists"] == ["Thesis"]
    listed = json.loads(run_cli("list", "--json", "--list", "thesis", data_dir=imported).stdout)
    assert [p["id"] for p in listed] == [c, a]
    tagged = json.loads(run_cli("list", "--json", "--tag", "to read", "--status", "reading", data_dir=imported).stdout)
    assert [p["id"] for p in tagged] == [a]
    text = run_cli("show", b, data_dir=imported).stdout
    assert "tags:     agents, to read" in text and "(title derived from the abstract)" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["status", "nosuchid", "read"], "No paper with id 'nosuchid'"),
        (["status", "read"], "give one or more paper ids, then the status"),
        (["list", "--status", "later"], "unknown status 'later'"),
        (["tag", "abc"], "--add TAG"),
        (["frobnicate"], "invalid choice"),
        (["show"], "the following arguments are required: id"),
        (["rate", "x", "7"], "a rating is a number from 1 to 5"),
        (["import"], "name at least one FILE"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(imported, args, message):
    res = run_cli(*args, data_dir=imported)
    assert res.returncode == 2
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and message in res.stderr


def test_data_dir_from_the_environment(tmp_path, seeds):
    folder = tmp_path / "env-library"
    res = run_cli("import", str(seeds[0]), env={"PAPERSHELF_DATA_DIR": str(folder)})
    assert res.returncode == 0
    assert (store_dir(folder) / "library.jsonl").exists() or (store_dir(folder) / "journal.jsonl").exists()
    assert len(json.loads(run_cli("list", "--json", env={"PAPERSHELF_DATA_DIR": str(folder)}).stdout)) == 20


def test_write_while_another_process_holds_the_library(imported):
    with Library.open(imported):
        res = run_cli(
            "status",
            json.loads(run_cli("list", "--json", data_dir=imported).stdout)[0]["id"],
            "read",
            data_dir=imported,
        )
    assert res.returncode == 1
    assert "open in another Papershelf" in res.stderr and "Traceback" not in res.stderr


def test_damaged_library_gets_a_clear_message_and_recover(imported):
    with Library.open(imported) as lib:
        lib.compact()
        lib.compact()
    snap = store_dir(imported) / "library.jsonl"
    snap.write_bytes(snap.read_bytes()[:5000])
    res = run_cli("list", data_dir=imported)
    assert res.returncode == 1
    assert str(snap) in res.stderr and "papershelf recover" in res.stderr and "Traceback" not in res.stderr
    rec = run_cli("recover", data_dir=imported)
    assert rec.returncode == 0 and "from the backup" in rec.stdout and "Kept the damaged library.jsonl" in rec.stdout
    assert len(json.loads(run_cli("list", "--json", data_dir=imported).stdout)) == 372


NO_DISPLAY = {"QT_QPA_PLATFORM": "", "DISPLAY": "", "WAYLAND_DISPLAY": ""}


def test_no_command_without_a_display_adds_nothing_and_says_how_to_add_the_samples(tmp_path):
    folder = tmp_path / "first-run"
    res = run_cli(data_dir=folder, env=NO_DISPLAY)
    assert res.returncode == 0, res.stderr
    assert f"Library: {folder} (--data-dir, for this start only)" in res.stdout
    assert "papershelf import --samples" in res.stdout and "No display was found" in res.stdout
    assert not folder.exists()  # nothing imported unasked, not even a folder made
    assert run_cli("import", "--samples", data_dir=folder).returncode == 0
    second = run_cli(data_dir=folder, env=NO_DISPLAY)
    assert "Showing 20 of 372." in second.stdout and "import --samples" not in second.stdout


def test_import_samples_flag(data_dir):
    res = run_cli("import", "--samples", data_dir=data_dir)
    assert res.returncode == 0 and res.stdout.splitlines()[-1] == "The library now holds 372 papers."


def test_list_names_with_odd_spacing(imported):
    pid = json.loads(run_cli("list", "--json", data_dir=imported).stdout)[0]["id"]
    res = run_cli("list-add", "to  read", pid, data_dir=imported)
    assert res.returncode == 0 and "'to read'" in res.stdout
    assert run_cli("lists", data_dir=imported).stdout.strip() == "to read  (1 paper)"
    assert run_cli("list-remove", "TO READ", pid, data_dir=imported).returncode == 0


def test_file_name_that_is_not_utf8(data_dir, seeds, tmp_path):
    odd = tmp_path / os.fsdecode(b"caf\xe9.txt")
    odd.write_bytes(seeds[0].read_bytes())
    res = run_cli("import", str(odd), str(seeds[1]), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    assert "20 added" in res.stdout and "Traceback" not in res.stderr
    paper = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]
    assert paper["sources"][0]["file"].endswith("caf\\udce9.txt")


def test_import_a_paste_from_standard_input(data_dir, seeds):
    paste = seeds[0].read_text(encoding="utf-8")
    res = run_cli("import", "-", data_dir=data_dir, input=paste)
    assert res.returncode == 0, res.stderr
    assert "<pasted text> (paper-search): 20 added" in res.stdout
    again = run_cli("import", "-", data_dir=data_dir, input=paste)
    assert "nothing changed" in again.stdout
    # the same papers from the file add that file as a second provenance
    res = run_cli("import", str(seeds[0]), data_dir=data_dir)
    assert "0 added, 20 merged" in res.stdout
    empty = run_cli("import", "-", data_dir=data_dir, input="  \n")
    assert empty.returncode == 1 and "<pasted text> is empty" in empty.stdout


def test_title_replaces_the_derived_one_and_back(imported):
    pid = json.loads(run_cli("list", "--json", data_dir=imported).stdout)[0]["id"]
    res = run_cli("title", pid, "VeriSimpl: Verifying LLM Formalisations by Simplification", data_dir=imported)
    assert res.returncode == 0
    shown = json.loads(run_cli("show", pid, "--json", data_dir=imported).stdout)
    assert shown["title"].startswith("VeriSimpl: Verifying") and shown["title_derived"] is False
    run_cli("title", pid, "", data_dir=imported)
    shown = json.loads(run_cli("show", pid, "--json", data_dir=imported).stdout)
    assert shown["title_derived"] is True and shown["title"].startswith("VeriSimpl: a solver")


def test_search_and_reindex(imported):
    res = run_cli("search", "verisimpl", data_dir=imported)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "~VeriSimpl: a solver–LLM framework" in lines[0]
    assert "«VeriSimpl»" in lines[1]
    assert lines[-1].startswith("1 paper matches")
    assert "Indexed 372 papers for search (there is no index yet)" in res.stderr
    hits = json.loads(run_cli("search", "author:thaman", "--json", data_dir=imported).stdout)
    assert [h["title"] for h in hits] == ["RHB: Reward Hacking Benchmark"]
    pid = hits[0]["id"]
    assert run_cli("tag", pid, "--add", "to-read", data_dir=imported).returncode == 0
    tagged = json.loads(run_cli("search", "tag:to-read", "--json", data_dir=imported).stdout)
    assert [h["id"] for h in tagged] == [pid]  # the index caught up with the CLI's edit
    filtered = json.loads(run_cli("search", "reward", "--tag", "to-read", "--json", data_dir=imported).stdout)
    assert [h["id"] for h in filtered] == [pid]
    assert run_cli("search", '"unbalanced (', data_dir=imported).returncode == 0
    again = run_cli("reindex", data_dir=imported)
    assert again.returncode == 0 and "Indexed 372 papers" in again.stderr
    assert run_cli("search", "x", "--limit", "0", data_dir=imported).returncode == 2


def test_the_gui_launcher_takes_files_and_the_data_dir(tmp_path):
    """What a double-click on a .bib runs (`papershelf-gui %F`), through the installed script."""
    script = Path(sys.executable).with_name("papershelf-gui")
    if not script.exists():
        pytest.skip(f"papershelf-gui is not installed next to {sys.executable}")
    folder = tmp_path / "gui-library"
    bib = FIXTURES / "bib" / "zotero.bib"
    env = {**os.environ, **NO_DISPLAY, "PYTHONPATH": os.pathsep.join(sys.path)}
    res = subprocess.run(
        [str(script), str(bib), "--data-dir", str(folder)], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert str(bib) in res.stdout and "added" in res.stdout
    with Library.open(folder, readonly=True) as lib:
        assert len(lib) == len(json.loads(run_cli("list", "--json", data_dir=folder).stdout)) > 0
        assert {s.file for p in lib.papers() for s in p.sources} == {str(bib.resolve())}
    assert not (tmp_path / "default-library").exists()  # the environment's folder was not used


def test_the_gui_launcher_given_a_missing_file_imports_the_rest_and_says_which_is_missing(tmp_path):
    """A launcher passes `papershelf-gui %F`; a file gone since is no usage error (exit 2, stderr only)."""
    script = Path(sys.executable).with_name("papershelf-gui")
    if not script.exists():
        pytest.skip(f"papershelf-gui is not installed next to {sys.executable}")
    gone, bib = tmp_path / "gone.bib", FIXTURES / "bib" / "zotero.bib"
    env = {**os.environ, **NO_DISPLAY, "PYTHONPATH": os.pathsep.join(sys.path)}
    res = subprocess.run(
        [str(script), "--data-dir", str(tmp_path / "lib"), str(gone), str(bib)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 1, res.stderr
    assert f"not imported: {gone}: no such file." in res.stdout and f"{bib} (bibtex): 2 added" in res.stdout
    assert "invalid choice" not in res.stderr


def test_the_gui_launcher_opens_the_window_and_reports_a_missing_file_there(tmp_path, qtbot, settings, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from papershelf import launcher
    from papershelf.gui.main_window import MainWindow

    monkeypatch.setattr(launcher, "have_display", lambda: True)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # the window installs its own
    gone = tmp_path / "gone.bib"
    seen = []

    def look():  # once the window has reported on the import, close it: the launcher returns
        for w in QApplication.topLevelWidgets():
            if isinstance(w, MainWindow) and w.isVisible():
                report = w.findChild(QMessageBox, "importReport")
                if report is not None:
                    seen.append(report.detailedText())
                    report.close()
                    w.close()
                    return
        QTimer.singleShot(20, look)

    QTimer.singleShot(0, look)
    monkeypatch.setattr(sys, "argv", ["papershelf-gui", "--data-dir", str(tmp_path / "lib"), str(gone)])
    assert launcher.gui_main() == 0
    assert seen and f"{gone}: no such file" in seen[0]


def test_one_paper_is_counted_as_one_paper(data_dir, tmp_path):
    bib = tmp_path / "one.bib"
    bib.write_text(
        "@article{smith2020deep,\n  title = {Deep Nets for Shelving Papers},\n"
        "  author = {Smith, Jane},\n  year = {2020}\n}\n",
        encoding="utf-8",
    )
    res = run_cli("import", str(bib), data_dir=data_dir)
    assert res.stdout.splitlines()[-1] == "The library now holds 1 paper.", res.stdout
    listed = run_cli("list", data_dir=data_dir).stdout
    assert listed.splitlines()[-1] == "1 paper."
    pid = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[0]["id"]
    assert run_cli("rate", pid, "4", data_dir=data_dir).stdout.strip() == "Rated 1 paper."
    assert run_cli("rate", pid, "0", data_dir=data_dir).stdout.strip() == "Cleared the rating of 1 paper."
    assert run_cli("status", pid, "read", data_dir=data_dir).stdout.strip() == "1 of 1 paper is now read."
    assert (
        run_cli("list-add", "Thesis", pid, data_dir=data_dir).stdout.strip() == "Added 1 paper to 'Thesis'; it holds 1."
    )
    assert run_cli("lists", data_dir=data_dir).stdout.strip() == "Thesis  (1 paper)"
    assert run_cli("list-remove", "Thesis", pid, data_dir=data_dir).stdout.strip() == "Took 1 paper off 'Thesis'."
    reindex = run_cli("reindex", data_dir=data_dir)
    assert "1 paper " in reindex.stderr and "1 papers" not in reindex.stderr


@pytest.mark.parametrize(
    "argv", [["search", "author:thaman", "--json"], ["export", "--query", "author:thaman", "-o", "-"]]
)
def test_an_index_a_search_finds_damaged_is_opened_again_and_asked_once_more(imported, monkeypatch, capsys, argv):
    """The library answers from titles when its index fails to read (`Answer.index_damaged`); the command
    line opens the index again, which rebuilds it, and prints what the rebuilt index finds."""
    from papershelf import cli
    from papershelf.core.library import Answer

    assert cli.main(["--data-dir", str(imported), *argv]) == 0
    expected = capsys.readouterr().out
    opened, searched = [], []
    real_open, real_search = Library.open_index, Library.search

    def open_index(lib, *args, **kwargs):
        opened.append(1)
        return real_open(lib, *args, **kwargs)

    def search(lib, query, *args, **kwargs):
        searched.append(query)
        if len(searched) == 1:  # what the library answers when reading the index failed
            return Answer(query, [], 0, indexed=False, index_damaged=True)
        return real_search(lib, query, *args, **kwargs)

    monkeypatch.setattr(Library, "open_index", open_index)
    monkeypatch.setattr(Library, "search", search)
    assert cli.main(["--data-dir", str(imported), *argv]) == 0
    assert capsys.readouterr().out == expected and "Reward Hacking Benchmark" in expected
    assert len(opened) == 2 and len(searched) == 2 and searched[0] == searched[1]


def test_a_library_folder_with_a_tilde_naming_no_user_is_an_error_in_words(tmp_path):
    for how in (["--data-dir", "~no-such-user-here/lib", "list"], ["list"]):
        env = {} if how[0] == "--data-dir" else {"PAPERSHELF_DATA_DIR": "~no-such-user-here/lib"}
        res = run_cli(*how, env=env)
        assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
        assert "~no-such-user-here/lib" in res.stderr and "full path" in res.stderr


def test_help_names_the_library_of_the_options_given_and_takes_no_abbreviation(tmp_path):
    res = run_cli("--data", str(tmp_path / "lib"), "list")
    assert res.returncode == 2 and "error" in res.stderr  # refused: not silently another library
    assert not (tmp_path / "lib").exists()
    res = run_cli("--data-dir", str(tmp_path / "lib"), "--help")
    assert str(tmp_path / "lib") in "".join(res.stdout.split())  # help text wraps long paths
