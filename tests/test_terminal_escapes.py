"""Issue 21 defect 6, the output half: control characters stored by an older version (NUL, ESC with
its OSC and CSI sequences, the 8-bit CSI, a carriage return) reach neither the terminal nor an
export. Every command runs as the installed command in a real subprocess; its standard output and
standard error are read as bytes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS
from papershelf.core.library import Library
from papershelf.core.paper import Paper
from papershelf.core.store import open_store
from papershelf.core.store.journal import Op
from replay_server import RECORDED, replay_fixture  # noqa: F401
from test_bibtex import compile_bib, needs_tex, problems

# an OSC that retitles the terminal, a CSI that colours, NUL, the 8-bit CSI, a carriage return
EVIL = "\x1b]0;pwned\x07\x1b[31mRED\x00nul\x9b2J\rX"
ARG = EVIL.replace("\x00", "")  # what a command line can carry
HOSTILE_TAG = "t" + ARG
HOSTILE_LIST = "rl" + ARG
# what no byte of output may hold: C0 but tab and newline, DEL, C1 (as text: U+0080..U+009F)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Papershelf's own: the carriage return that starts a progress line over the one before
OWN_RETURN = re.compile("\r(?=Index|looking up|The search index)")


def run_bytes(*args: str, data_dir: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The installed command with its output as bytes (text mode would turn a raw CR into a newline)."""
    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(data_dir), *args]
    return subprocess.run(cmd, capture_output=True, input=stdin, timeout=120, env=dict(os.environ))


def assert_clean(res: subprocess.CompletedProcess, eol: str = "\n") -> None:
    for name, data in (("stdout", res.stdout), ("stderr", res.stderr)):
        text = OWN_RETURN.sub("", data.decode("utf-8"))  # also: nothing printed is broken UTF-8
        text = text.replace(eol, "\n")  # a RIS export's own line ends
        found = CONTROL.findall(text)
        assert not found, f"{name} holds control characters {found!r}: {text[:600]!r}"
    assert b"Traceback" not in res.stderr


def hostile_papers() -> list[Paper]:
    """Two papers as a version that stored everything as it came would have kept them."""
    out = []
    for n in range(2):
        out.append(
            Paper(
                f"e{n}e1e2e3",
                title=f"Evil {n} {EVIL} title about graph neural networks",
                authors=[f"Doe{EVIL}, Jane", "Roe, Richard"],
                abstract=f"An abstract {EVIL} on graph neural networks and message passing.",
                venue=f"Venue{EVIL}",
                year=2020 + n,
                tags=[HOSTILE_TAG, "gnn"],
                notes=f"note {EVIL}",
                doi=f"10.1234/evil{n}",
                links=[f"https://example.org/{n}{EVIL}"],
                entrytype="article",
                bibfields={
                    "title": f"{{Evil {n} {EVIL} title}}",
                    "author": f"{{Doe{EVIL}, Jane and Roe, Richard}}",
                    "journal": f"{{J{EVIL}}}",
                    "year": f"{{{2020 + n}}}",
                    "note": f'"quoted{EVIL}"',
                },
                sources=[{"file": f"old{EVIL}.bib", "line": 1, "format": "bibtex"}],
            )
        )
    return out


@pytest.fixture
def evil_library(tmp_path) -> Path:
    """The four sample listings, then two hostile papers and a hostile reading list written
    through the store (bypassing every importer), as an older version would have."""
    folder = tmp_path / "library"
    with Library.open(folder) as lib:
        lib.import_files(SEEDS)
    store = open_store(folder)  # this device's store of the (shared) library
    try:
        papers = hostile_papers()
        store.apply([Op("add", p.id, p) for p in papers] + [Op("list", HOSTILE_LIST, [p.id for p in papers])])
    finally:
        store.close()
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("list", "--tag", HOSTILE_TAG),
        ("list", "--list", HOSTILE_LIST),
        ("show", "e0e1"),
        ("show", "e0e1", "--bibtex"),
        ("search", "evil"),
        ("search", "graph neural"),
        ("tags",),
        ("lists",),
        ("suggest", "--tag", HOSTILE_TAG),
        ("suggest", "--list", HOSTILE_LIST),
        ("export", "-o", "-"),
        ("export", "--dialect", "biblatex", "-o", "-"),
        ("export", "--format", "ris", "-o", "-"),
        # errors that quote what was typed
        ("show", "zz" + ARG),
        ("list", "--tag", "no" + ARG),
        ("tag", "zz" + ARG, "--add", "x"),
        ("nosuchcommand" + ARG,),
    ],
)
def test_no_command_writes_a_control_character(evil_library, args):
    res = run_bytes(*args, data_dir=evil_library)
    assert_clean(res, "\r\n" if "ris" in args else "\n")


def test_shown_escaped_not_dropped(evil_library):
    # the reader still sees that something odd is there, as \\xNN
    res = run_bytes("show", "e0e1", data_dir=evil_library)
    assert res.returncode == 0, res.stderr
    out = res.stdout.decode()
    assert "Evil 0 \\x1b]0;pwned\\x07\\x1b[31mRED" in out
    assert "note \\x1b]0;pwned\\x07\\x1b[31mRED\\x00nul\\x9b2J\\x0dX" in out


@pytest.mark.parametrize("args", [("list", "--json"), ("show", "e0e1", "--json"), ("search", "evil", "--json")])
def test_json_stays_valid_json_with_every_control_escaped(evil_library, args):
    res = run_bytes(*args, data_dir=evil_library)
    assert_clean(res)
    data = json.loads(res.stdout)
    papers = data if isinstance(data, list) else [data]
    titles = [p["title"] for p in papers if p["id"] == "e0e1e2e3"]
    assert titles == [f"Evil 0 {EVIL} title about graph neural networks"]  # the same text, once decoded


def test_an_import_report_quoting_a_file_name_and_an_entry(evil_library, tmp_path):
    bib = tmp_path / f"refs{ARG}.bib"
    bib.write_text(
        f"@article{{k{ARG.replace(' ', '')},\n  title = {{A title {ARG}}},\n"
        "  author = {Doe, Jane},\n  year = 20x\n}\n"
        "@article{broken,\n title = {unclosed\n",
        encoding="utf-8",
    )
    res = run_bytes("import", str(bib), data_dir=evil_library)
    assert_clean(res)
    missing = run_bytes("import", str(tmp_path / f"gone{ARG}.bib"), data_dir=evil_library)
    assert missing.returncode == 1
    assert_clean(missing)
    assert b"gone\\x1b]0;pwned" in missing.stdout + missing.stderr


def test_add_prints_a_hostile_answer_escaped(replay, tmp_path):
    pnas = "10.1073/pnas.1414271111"
    answer = json.loads((RECORDED / "crossref_works_doi_10.1073_pnas.1414271111.json").read_text())
    answer["message"]["title"] = [f"A title {EVIL} from a hostile server"]
    replay.route(f"/crossref/works/{pnas}", json.dumps(answer).encode())
    res = run_bytes("add", pnas, data_dir=tmp_path / "library")
    assert res.returncode == 0, res.stderr
    assert_clean(res)


def test_search_on_a_terminal_keeps_its_own_bold_and_escapes_the_rest(evil_library):
    # a pseudo-terminal: the snippet's matched words in bold (Papershelf's own sequence), nothing else raw
    import pty

    cmd = [sys.executable, "-m", "papershelf", "--data-dir", str(evil_library), "search", "message passing"]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=follower, stderr=follower, env=dict(os.environ))
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    out = b"".join(chunks).decode("utf-8")
    assert "\x1b[1m" in out  # bold on a terminal
    out = OWN_RETURN.sub("", out.replace("\x1b[1m", "").replace("\x1b[0m", "").replace("\r\n", "\n"))
    assert not CONTROL.findall(out), out[:600]
    assert "\\x1b]0;pwned" in out


@needs_tex
@pytest.mark.parametrize("dialect", ["bibtex", "biblatex"])
def test_an_export_of_such_records_holds_none_and_compiles(evil_library, tmp_path, dialect):
    out = tmp_path / "refs.bib"
    res = run_bytes("export", "--dialect", dialect, "--ids", "e0e1", "e1e1", "-o", str(out), data_dir=evil_library)
    assert res.returncode == 0, res.stderr
    assert_clean(res)
    assert b"2 entries held control characters" in res.stdout
    bib = out.read_text(encoding="utf-8")
    assert not CONTROL.findall(bib)
    assert "pwned" in bib  # the printable rest of each field is kept
    compiled = compile_bib(tmp_path, bib, dialect)
    assert problems(compiled, dialect) == []
    assert "Evil 0" in compiled["bbl"]


def test_a_ris_export_of_such_records_holds_none_but_its_line_ends(evil_library, tmp_path):
    out = tmp_path / "refs.ris"
    res = run_bytes("export", "--ids", "e0e1", "-o", str(out), data_dir=evil_library)
    assert res.returncode == 0, res.stderr
    assert b"1 record held control characters" in res.stdout
    text = out.read_bytes().decode("utf-8")
    assert not CONTROL.findall(text.replace("\r\n", "\n")) and "TI  - Evil 0" in text
