"""Which library: the window and the command line open the same one, and both say which (issue 20, item 1).

A one-off `--data-dir` stays one-off; the default library chosen in Preferences is the command line's too.
Precedence: --data-dir > $PAPERSHELF_DATA_DIR > the chosen default library > the platform's folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QFileDialog, QLabel, QPushButton

from conftest import SEEDS, run_cli

pytestmark = pytest.mark.gui


@pytest.fixture
def no_library_env(monkeypatch, tmp_path):
    """A user's machine: no $PAPERSHELF_DATA_DIR, the platform's data folder under tmp_path."""
    monkeypatch.delenv("PAPERSHELF_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    return tmp_path / "xdg-data" / "Papershelf"


def start_window(monkeypatch, argv: list[str], act=None) -> dict:
    """`papershelf ARGV` opening the real window (through the launcher, as the installed command does):
    what its title and status bar say, after `act(window)` has run on it; then the window is closed."""
    from papershelf import launcher
    from papershelf.gui.main_window import MainWindow

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # the window installs its own
    seen: dict = {}

    def look():
        for w in QApplication.topLevelWidgets():
            # once its index is open: a window closed at once stops a build half-way
            if isinstance(w, MainWindow) and w.isVisible() and w.index is not None:
                status = w.findChild(QLabel, "libraryFolderStatus")
                seen["status"], seen["tip"] = (status.text(), status.toolTip()) if status else ("", "")
                seen["folder"], seen["title"] = w.library.folder, w.windowTitle()
                try:
                    if act is not None:
                        act(w)
                except BaseException as exc:  # raised once the window is closed, not left to hang it
                    seen["error"] = exc
                finally:
                    w.close()
                return
        QTimer.singleShot(20, look)

    QTimer.singleShot(0, look)
    assert launcher.main(argv) == 0
    assert seen, "the window did not open"
    if "error" in seen:
        raise seen["error"]
    return seen


def open_preferences(w) -> QDialog:
    """Edit ▸ Preferences, opened with its keys (Ctrl+,)."""
    w.activateWindow()
    QTest.keyClick(w, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    dialog = w.findChild(QDialog, "preferencesDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def press_ok(dialog: QDialog) -> None:
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    QTest.mouseClick(ok, Qt.MouseButton.LeftButton)


def help_library(env: dict | None = None, *args: str) -> str:
    """The line of `papershelf --help` that names the library."""
    wide = {"COLUMNS": "10000", **(env or {})}  # argparse breaks long lines at hyphens
    text = " ".join(run_cli(*args, "--help", env=wide).stdout.split())
    return text.split("Library: ", 1)[1].split(". positional", 1)[0]


def test_preferences_ok_after_a_one_off_data_dir_leaves_the_default_library_alone(
    tmp_path, qtbot, settings, monkeypatch, no_library_env
):
    other = tmp_path / "other-library"
    closed = []

    def ok_unchanged(w):
        dialog = open_preferences(w)
        assert dialog.findChild(QLabel, "libraryFolderLabel").text() == str(no_library_env)
        note = dialog.findChild(QLabel, "libraryFolderNote")
        assert note.isVisible() and str(other) in note.text() and "this start only" in note.text()
        press_ok(dialog)
        closed.append(not dialog.isVisible())

    first = start_window(monkeypatch, ["--data-dir", str(other)], ok_unchanged)
    assert closed == [True]
    assert first["folder"] == other and str(other) in first["status"]
    # a plain start: the window opens the default library, and the command line reads the same
    plain = start_window(monkeypatch, [])
    assert plain["folder"] == no_library_env, "a one-off --data-dir became the default library"
    assert str(no_library_env) in plain["status"] and plain["title"] == "Papershelf — " + str(no_library_env)
    assert help_library() == f"{no_library_env} (the standard folder)"


def test_a_default_library_chosen_in_preferences_is_the_command_lines_too(
    tmp_path, qtbot, settings, monkeypatch, no_library_env
):
    chosen = tmp_path / "papers"
    assert run_cli("import", str(SEEDS[0]), data_dir=chosen).returncode == 0
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(chosen))  # the native picker

    def choose(w):
        dialog = open_preferences(w)
        change = dialog.findChild(QPushButton, "changeFolderButton")
        QTest.mouseClick(change, Qt.MouseButton.LeftButton)
        assert dialog.findChild(QLabel, "libraryFolderLabel").text() == str(chosen)
        press_ok(dialog)

    start_window(monkeypatch, [], choose)
    listed = json.loads(run_cli("list", "--json").stdout)
    assert len(listed) == 20  # the chosen library's papers
    assert help_library() == f"{chosen} (the default library chosen in Preferences)"
    again = start_window(monkeypatch, [])
    assert again["folder"] == chosen and str(chosen) in again["status"]
    # precedence: $PAPERSHELF_DATA_DIR, then --data-dir, over the choice
    env_dir = tmp_path / "from-env"
    assert help_library({"PAPERSHELF_DATA_DIR": str(env_dir)}) == f"{env_dir} ($PAPERSHELF_DATA_DIR)"
    one_off = tmp_path / "one-off"
    assert (
        help_library({"PAPERSHELF_DATA_DIR": str(env_dir)}, "--data-dir", str(one_off))
        == f"{one_off} (--data-dir, for this start only)"
    )
    assert json.loads(run_cli("list", "--json", env={"PAPERSHELF_DATA_DIR": str(env_dir)}).stdout) == []


def test_a_damaged_settings_file_is_said_and_no_other_library_used(tmp_path, no_library_env):
    settings_file = tmp_path / "config" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"default library": ', encoding="utf-8")
    res = run_cli("list")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert f"The settings file {settings_file} is damaged" in res.stderr and "--data-dir" in res.stderr
    assert not no_library_env.exists()
    assert settings_file.read_text(encoding="utf-8") == '{"default library": '  # nothing lost
    assert run_cli("--help").returncode == 0  # the help still shows, and says why it cannot name the library


def test_a_folder_the_old_preferences_kept_becomes_the_shared_default(
    tmp_path, qtbot, settings, monkeypatch, no_library_env
):
    from PySide6.QtCore import QSettings

    kept = tmp_path / "kept-library"
    QSettings().setValue("library/folder", str(kept))
    opened = start_window(monkeypatch, [])
    assert opened["folder"] == kept and not QSettings().contains("library/folder")
    assert help_library() == f"{kept} (the default library chosen in Preferences)"


def test_the_window_status_bar_tooltip_says_where_the_library_came_from(tmp_path, qtbot, settings, monkeypatch):
    folder = tmp_path / "lib"
    opened = start_window(monkeypatch, ["--data-dir", str(folder)])
    assert opened["status"] == f"Library: {folder}" and Path(opened["folder"]) == folder
    assert opened["tip"] == "Why this library: --data-dir, for this start only"
