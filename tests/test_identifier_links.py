"""One link builder for DOIs (core/biblio/identifiers.py): the paper menu's Open Link gives the
link the viewer's record shows, also for a DOI with characters a URL must escape."""

from __future__ import annotations

import pytest

from test_paper_menu import action, right_click

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

SICI = "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"


def test_open_link_of_an_old_sici_doi_is_the_viewer_s_escaped_link(window, qtbot, tmp_path):
    # the menu built "https://doi.org/" + the DOI by hand: its < and > went into the link as they are
    win, lib = window, window.library
    bib = tmp_path / "sici.bib"
    bib.write_text(
        "@article{s1, title = {An Old Paper With a SICI DOI}, author = {Ames, Ann}, year = {1998},\n"
        f"  journal = {{JASIS}}, doi = {{{SICI}}}}}\n",
        encoding="utf-8",
    )
    lib.import_files([bib])
    win.run_search()
    qtbot.waitUntil(lambda: win.model.rowCount() == len(lib))
    row = next(r for r in range(win.model.rowCount()) if lib.get(win.model.id_at(r)).doi == SICI)
    link = action(right_click(qtbot, win, row), "paperMenuOpenLink")
    assert link.toolTip() == "https://doi.org/10.1002/(SICI)1097-4571(199806)49:8%3C693::AID-ASI4%3E3.0.CO;2-0"
