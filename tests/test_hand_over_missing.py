"""`papershelf-gui x.bib missing.bib` while the window runs: the window says the missing file (issue 20, item 11)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtWidgets import QMessageBox

from conftest import FIXTURES
from papershelf.gui.instance import InstanceServer

pytestmark = pytest.mark.gui


def test_a_missing_file_handed_to_the_running_window_is_said_in_its_import_report(window, qtbot, tmp_path):
    server = InstanceServer(window.library.folder, window)
    try:
        bib, gone = FIXTURES / "bib" / "zotero.bib", tmp_path / "missing.bib"
        before = len(window.library)
        # the papershelf-gui script's entry point, as a desktop launcher runs it, in its own process
        later = subprocess.Popen(
            [sys.executable, "-c", "import sys; from papershelf.launcher import gui_main; sys.exit(gui_main())"]
            + ["--data-dir", str(window.library.folder), str(bib), str(gone)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ,
        )
        qtbot.waitUntil(lambda: window.findChild(QMessageBox, "importReport") is not None, timeout=60_000)
        out, err = later.communicate(timeout=60)
        assert later.returncode == 0 and "handed it over" in out, err
        report = window.findChild(QMessageBox, "importReport")
        assert f"{gone}: no such file" in report.detailedText()
        assert len(window.library) == before + 2  # the file that is there was imported
        report.close()
    finally:
        server.close()
