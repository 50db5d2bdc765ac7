"""Desktop integration: the .desktop entry, one instance per library, errors
shown at the boundary, preferences."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton

from conftest import SEEDS, run_cli
from papershelf.gui.app import ErrorReporter, InstanceServer

pytestmark = pytest.mark.gui


def test_install_desktop_writes_a_valid_entry_and_icon_and_uninstall_removes_them(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "share")}
    res = run_cli("--install-desktop", env=env)
    assert res.returncode == 0, res.stderr
    entry = tmp_path / "share" / "applications" / "io.github.papershelf.Papershelf.desktop"
    icon = tmp_path / "share" / "icons" / "hicolor" / "scalable" / "apps" / "io.github.papershelf.Papershelf.svg"
    assert str(entry) in res.stdout and entry.exists() and icon.read_text().lstrip().startswith("<?xml")
    text = entry.read_text()
    assert "MimeType=text/x-bibtex;application/x-research-info-systems;" in text
    launcher = next(line for line in text.splitlines() if line.startswith("Exec=")).split("=", 1)[1]
    assert Path(launcher.split()[0]).exists() and launcher.endswith("%F")
    validator = shutil.which("desktop-file-validate")
    if validator is None and not os.environ.get("CI"):
        pytest.skip("desktop-file-validate (desktop-file-utils) is not installed here; CI installs it")
    check = subprocess.run([validator, str(entry)], capture_output=True, text=True)
    assert check.returncode == 0 and "error" not in check.stdout.lower(), check.stdout
    gone = run_cli("--uninstall-desktop", env=env)
    assert gone.returncode == 0 and not entry.exists() and not icon.exists()


def test_a_second_start_hands_its_file_to_the_running_window(window, qtbot, tmp_path):
    server = InstanceServer(window.library.folder, window)
    proc = None
    try:
        before = len(window.library)
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        with qtbot.waitSignal(window.importFinished, timeout=60_000) as blocker:
            proc = subprocess.Popen(
                [sys.executable, "-m", "papershelf", "--data-dir", str(window.library.folder), str(SEEDS[1])],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=60_000)  # the window keeps serving meanwhile
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert "already running" in out
        assert [r.added for r in blocker.args[0]] == [19]  # the second listing's new papers
        assert len(window.library) == before + 19
    finally:
        if proc is not None and proc.poll() is None:  # it opened a window of its own: do not leave it running
            proc.kill()
            proc.communicate(timeout=10)
        server.close()


@pytest.mark.qt_no_exception_capture
def test_an_unexpected_error_shows_a_dialog_with_details_and_the_log(window, qtbot, tmp_path):
    reporter = ErrorReporter(tmp_path / "logs" / "papershelf.log")
    old = sys.excepthook
    sys.excepthook = reporter
    try:

        def boom():
            raise RuntimeError("injected failure")

        QTimer.singleShot(0, boom)
        qtbot.waitUntil(lambda: bool(reporter.dialogs), timeout=5_000)
    finally:
        sys.excepthook = old
    box = reporter.dialogs[0]
    assert box.objectName() == "crashDialog" and "injected failure" in box.text()
    assert str(tmp_path / "logs" / "papershelf.log") in box.informativeText()
    assert "RuntimeError: injected failure" in box.detailedText()
    copy = box.findChild(QPushButton, "copyDetailsButton")
    assert copy is not None
    qtbot.waitExposed(box)
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert "injected failure" in QApplication.clipboard().text()
    assert box.isVisible()  # copying does not close it
    assert window.isVisible()  # and the window keeps running
    box.close()


def test_search_on_enter_when_as_you_type_is_off(window, qtbot):
    QSettings().setValue("search/asYouType", False)
    box = window.findChild(QLineEdit, "searchBox")
    qtbot.waitUntil(lambda: window.last_answer is not None, timeout=10_000)
    everything = window.last_answer.total
    qtbot.keyClicks(box, "reward")
    # nothing ran and nothing is due to run: typing as you type starts the search timer
    assert not window.search_due()
    assert window.last_answer.query.text == "" and window.model.rowCount() == everything
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.last_answer.query.text == "reward", timeout=10_000)
    assert 0 < window.model.rowCount() < everything


def test_a_file_given_without_a_display_is_imported(tmp_path):
    folder = tmp_path / "lib"
    res = run_cli(str(SEEDS[0]), data_dir=folder, env={"QT_QPA_PLATFORM": "", "DISPLAY": "", "WAYLAND_DISPLAY": ""})
    assert res.returncode == 0, res.stderr
    assert "20 added" in res.stdout


def test_the_first_window_fits_the_screen_and_carries_the_icon(window):
    screen = window.screen().availableGeometry()
    assert window.width() <= screen.width() and window.height() <= screen.height()
    assert not QApplication.windowIcon().isNull()
    assert QApplication.desktopFileName() == "io.github.papershelf.Papershelf"


def test_the_next_start_removes_what_a_killed_export_left_in_the_last_export_folder(tmp_path, settings):
    from papershelf.gui.app import tidy_last_export_folder

    folder = tmp_path / "paper"
    folder.mkdir()
    stale = folder / ".refs.bib.papershelf-abcd1234.tmp"  # left by an export killed mid-write
    fresh = folder / ".refs.bib.papershelf-efgh5678.tmp"  # another export writing right now
    mine = folder / ".refs.bib.mine.tmp"  # not ours
    for path in (stale, fresh, mine):
        path.write_text("half an export")
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))
    os.utime(mine, (an_hour_ago, an_hour_ago))
    QSettings().setValue("export/folder", str(folder))
    tidy_last_export_folder().join(10)
    assert not stale.exists() and fresh.exists() and mine.exists()
