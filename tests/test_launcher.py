"""Window or terminal: the launcher decides, and the command line never imports the GUI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SEEDS
from papershelf import cli, launcher
from papershelf.core.errors import InvalidValueError, NotFoundError, StoreLockedError

CLI_DIR = Path(cli.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """Every module a file imports (at the top or inside a function), relative imports made absolute."""
    package = "papershelf.cli"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_command_line_imports_no_gui_and_reaches_core_only_through_the_facade():
    # besides the facade: the paper, its errors, the query, and words about what the facade hands
    # back (core.citation: the record as the reader sees it; core.reports: what a report says),
    # pure functions with no access to the data of their own
    facade = {"papershelf.core.library", "papershelf.core.paper", "papershelf.core.errors", "papershelf.core.query"}
    facade |= {"papershelf.core.citation", "papershelf.core.reports"}
    # the record editor's vocabulary (pure functions of a paper); the online door is the facade's
    # (OnlineSession, exported by core.library, issue 23): the CLI imports nothing of core.online
    facade |= {"papershelf.core.record_edit"}
    # bibliographic text, one home per rule (issue 23): names, identifiers, types, sort keys
    facade |= {"papershelf.core.biblio"}
    # the reader's text of a field (`show` prints the viewer's reading without its markup)
    facade |= {"papershelf.core.render"}
    # the entry types and fields BibTeX and BibLaTeX know (what `set` questions): words, no data
    facade |= {"papershelf.core.vocabulary"}
    # which files Papershelf wrote (a checksum per export in the cache folder, not library data):
    # whether `export -o` may replace a file without --force
    facade |= {"papershelf.core.written"}
    # the one rule for control characters (issue 21): everything printed is escaped by it
    facade |= {"papershelf.core.limits"}
    # a paper's files as recorded (issue 24): the Attachment view, what a PDF's first bytes are
    facade |= {"papershelf.core.attachments"}
    for path in sorted(CLI_DIR.glob("*.py")):
        imported = _imports(path)
        assert not {m for m in imported if m.startswith(("papershelf.gui", "PySide6", "papershelf.launcher"))}, path
        core = {m for m in imported if m.startswith("papershelf.core.")}
        assert {m for m in core if not any(m == f or m.startswith(f + ".") for f in facade)} == set(), path
        assert "._store" not in path.read_text(encoding="utf-8"), path


def test_a_command_loads_neither_qt_nor_the_window(tmp_path):
    code = (
        "import sys; from papershelf import launcher; "
        f"code = launcher.main(['--data-dir', {str(tmp_path / 'lib')!r}, 'search', 'reward', '--json']); "
        "loaded = sorted(m for m in sys.modules if m.startswith(('papershelf.gui', 'PySide6'))); "
        "print(code, loaded)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "0 []"


def test_help_and_opening_a_library_load_no_more_than_they_did(tmp_path):
    # start-up time of `papershelf --help` and of opening a library: what only an error
    # message or a search that finds nothing needs (difflib) was imported when first used
    # before the restructure, and still is
    code = (
        "import sys; from papershelf import launcher; from papershelf.core.library import Library; "
        f"Library.open({str(tmp_path / 'lib')!r}).close(); "
        "sys.argv = ['papershelf', '--help']\n"
        "try:\n    launcher.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('difflib', 'whoosh', 'numpy', 'PySide6', 'bibtexparser') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "[]"


def test_every_command_has_a_function_and_a_parser():
    parser = cli.build_parser()
    [sub] = [a for a in parser._actions if a.dest == "command"]
    assert set(cli.COMMANDS) == set(cli.COMMAND_NAMES) == set(sub.choices)


@pytest.mark.parametrize(
    "argv, window",
    [
        ([], True),
        (["--data-dir", "lib"], True),
        ([str(SEEDS[0])], True),  # what a file manager runs
        (["--data-dir=lib", str(SEEDS[0]), str(SEEDS[1])], True),
        (["list"], False),
        (["--data-dir", "lib", "search", "x"], False),
        (["--install-desktop"], False),
        (["--uninstall-desktop"], False),
        (["missing-file.bib"], None),  # no such file: read as a command, and a wrong one
    ],
)
def test_what_opens_the_window(argv, window, capsys):
    if window is None:
        with pytest.raises(SystemExit) as exc:
            cli.parse_args(argv)
        assert exc.value.code == cli.EXIT_USAGE and "invalid choice" in capsys.readouterr().err
    else:
        assert cli.wants_window(cli.parse_args(argv)) is window


@pytest.fixture
def window_opened(monkeypatch):
    """Stands in for the window: records the arguments it was opened with."""
    opened = []
    monkeypatch.setattr(launcher, "have_display", lambda: True)
    monkeypatch.setattr(launcher, "open_window", lambda args: opened.append(args) or 0)
    return opened


def test_no_command_opens_the_window_with_the_files_given_instead(window_opened, tmp_path):
    assert launcher.main(["--data-dir", str(tmp_path), str(SEEDS[0])]) == 0
    [args] = window_opened
    assert args.data_dir == str(tmp_path) and args.open_files == [str(SEEDS[0])]
    assert launcher.main([]) == 0 and window_opened[1].open_files is None
    assert launcher.gui_main(["--data-dir", str(tmp_path), str(tmp_path / "gone.bib"), "-"]) == 0
    assert window_opened[2].open_files == [str(tmp_path / "gone.bib")]  # "-" is no file for the window
    assert launcher.gui_main(["--data-dir", str(tmp_path)]) == 0 and window_opened[3].open_files is None


def test_a_command_runs_in_the_terminal_even_with_a_display(window_opened, tmp_path, capsys):
    assert launcher.main(["--data-dir", str(tmp_path / "lib"), "lists"]) == 0
    assert not window_opened and "No reading lists yet" in capsys.readouterr().out


@pytest.mark.parametrize(
    "error, code, said",
    [
        (
            StoreLockedError("The library is open in another Papershelf."),
            1,
            "papershelf: The library is open in another Papershelf.",
        ),
        (NotFoundError("No paper with id 'x'."), 2, "papershelf: error: No paper with id 'x'."),
        (KeyboardInterrupt(), 130, ""),
    ],
)
def test_what_the_window_raises_at_start_is_said_as_a_command_would(monkeypatch, capsys, error, code, said):
    def fail(args):
        raise error

    monkeypatch.setattr(launcher, "have_display", lambda: True)
    monkeypatch.setattr(launcher, "open_window", fail)
    assert launcher.main([]) == code
    assert capsys.readouterr().err.strip() == said


def test_the_gui_script_says_any_refusal_as_a_failure_not_a_usage_error(monkeypatch, capsys, tmp_path):
    def fail(args):
        raise InvalidValueError("not a usable value")

    monkeypatch.setattr(launcher, "have_display", lambda: True)
    monkeypatch.setattr(launcher, "open_window", fail)
    assert launcher.gui_main([str(tmp_path / "a.bib")]) == 1
    assert capsys.readouterr().err.strip() == "papershelf: not a usable value"


@pytest.mark.parametrize(
    "env, platform, expected",
    [
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "freebsd14", True),
        ({}, "linux", False),
        ({}, "darwin", True),
        ({}, "win32", True),
    ],
)
def test_have_display(monkeypatch, env, platform, expected):
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "platform", platform)
    assert launcher.have_display() is expected
