"""Edit ▸ Reading Statistics…: the charts, opened from the real window on the sample library."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtGui import QAction, QImage
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel, QPushButton

from papershelf.core.library import Library
from papershelf.core.paper import Status
from papershelf.gui.paper_model import STATUS_LABELS

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def open_stats(qtbot, win):
    """Edit ▸ Reading Statistics…, then wait for the numbers."""
    win.findChild(QAction, "readingStatsAction").trigger()
    dialog = win.findChild(QDialog, "readingStatsDialog")
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.stats is not None, timeout=10_000)
    return dialog


def drawn(card) -> list[float]:
    """The bar lengths the pyqtgraph item was given (heights standing, widths lying)."""
    import pyqtgraph as pg

    [bars] = [i for i in card.plot.getPlotItem().items if isinstance(i, pg.BarGraphItem)]
    values = bars.opts["width"] if card.horizontal else bars.opts["height"]
    return [float(v) for v in values]


def top(counts: dict[str, int], n: int = 10) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def test_the_charts_hold_the_library_counts_and_follow_its_edits(window, qtbot):
    win, lib = window, window.library
    dialog = open_stats(qtbot, win)
    # the first listing as imported: nobody has read or tagged anything yet, and those charts say so
    assert dialog.weeks_chart.showing_words() and dialog.tags_chart.showing_words()
    assert "No tags yet" in dialog.tags_chart.empty.text()
    assert "No paper marked Read" in dialog.weeks_chart.empty.text()
    assert dialog.status_chart.bars() == [
        (STATUS_LABELS[s], len(lib)) if s is Status.UNREAD else (STATUS_LABELS[s], 0) for s in Status
    ]

    ids = lib.ids()
    lib.set_status(ids[:7], "read")
    lib.set_status(ids[7:10], "reading")
    lib.add_tags(ids[:6], ["diffusion"])
    lib.add_tags(ids[3:12], ["to-cite"])
    lib.add_tags(ids[-1:], ["Zebra"])  # stored normalised: "zebra"
    # the open dialog counts again once the edits settle
    qtbot.waitUntil(
        lambda: not dialog.tags_chart.showing_words() and dialog.status_chart.bars()[3][1] == 7, timeout=10_000
    )

    status = lib.status_counts()
    assert dialog.status_chart.bars() == [(STATUS_LABELS[s], status[s]) for s in Status]
    assert drawn(dialog.status_chart) == [status[s] for s in Status]
    assert dialog.tags_chart.bars() == top(dict(lib.tag_counts())) == [("to-cite", 9), ("diffusion", 6), ("zebra", 1)]
    assert drawn(dialog.tags_chart) == [9, 6, 1]
    areas = lib.facet_counts(lib.ids())["area"]
    assert [(label.casefold(), n) for label, n in dialog.areas_chart.bars()] == top(areas)
    assert drawn(dialog.areas_chart) == [n for _, n in top(areas)]
    # marked read just now: this week's bar, the last of twelve
    weeks = [n for _, n in dialog.weeks_chart.bars()]
    assert len(weeks) == 12 and weeks[-1] == 7 and sum(weeks) == 7
    # marked read in the window's time: counted by the day they were marked, and the caption says so
    assert dialog.weeks_chart.caption.text() == "Papers marked Read now, by the week they were marked Read."
    assert dialog.tags_chart.caption.text() == f"{len({*ids[:12], ids[-1]})} of {len(lib)} papers tagged."
    with_area = sum(1 for p in lib.papers() if p.area)
    assert dialog.areas_chart.caption.text() == f"{with_area} of {len(lib)} papers have an area."
    assert dialog.summary.text() == f"{len(lib)} papers, 7 of them read."

    # closed and opened again: the same dialog, counted again
    dialog.close()
    lib.set_status(ids[7:10], "read")
    assert open_stats(qtbot, win) is dialog
    qtbot.waitUntil(lambda: dialog.status_chart.bars()[3][1] == 10, timeout=10_000)


def test_export_as_png_writes_a_real_png_of_the_charts(window, qtbot, tmp_path, monkeypatch):
    lib = window.library
    lib.set_status(lib.ids()[:4], "read")
    lib.add_tags(lib.ids()[:5], ["diffusion"])
    dialog = open_stats(qtbot, window)
    qtbot.waitUntil(lambda: not dialog.tags_chart.showing_words(), timeout=10_000)

    out = tmp_path / "stats.png"
    dialog.save_png(out)
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 10_000
    image = QImage(str(out))
    ratio = dialog.charts.devicePixelRatioF()
    assert (image.width(), image.height()) == (
        round(dialog.charts.width() * ratio),
        round(dialog.charts.height() * ratio),
    )

    # through the button: the name typed without .png gets it
    chosen = tmp_path / "from-button"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(chosen), "PNG images (*.png)"))
    button = dialog.findChild(QPushButton, "statsExportButton")
    assert button.isEnabled()
    button.click()
    assert (tmp_path / "from-button.png").read_bytes()[:8] == PNG_MAGIC

    # a folder that does not exist: a message, not a traceback
    shown = []
    monkeypatch.setattr(window, "show_error", lambda title, text: shown.append((title, text)))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(tmp_path / "missing" / "x.png"), ""))
    button.click()
    assert shown and shown[0][0] == "The charts could not be saved"


def test_an_empty_library_shows_words_instead_of_empty_axes(qtbot, tmp_path, settings):
    from papershelf.gui.main_window import MainWindow

    lib = Library.open(tmp_path / "empty")
    win = MainWindow(lib, open_index=False)
    qtbot.addWidget(win)
    win.show()
    try:
        dialog = open_stats(qtbot, win)
        words = dialog.findChild(QLabel, "statsNoPapers")
        assert dialog.pages.currentWidget() is words and words.isVisible()
        assert "No papers yet" in words.text() and "File ▸ Import…" in words.text()
        assert not dialog.charts.isVisible()
        assert not dialog.findChild(QPushButton, "statsExportButton").isEnabled()
        assert dialog.summary.text() == "The library is empty."
    finally:
        win.close()
        lib.close()


def test_opening_the_window_does_not_load_the_plotting_library(tmp_path):
    # pyqtgraph costs about 0.4 s to import: it loads when the dialog first opens, not before
    code = (
        "import sys; from PySide6.QtWidgets import QApplication; app = QApplication([]); "
        "from PySide6.QtGui import QAction; "
        "from papershelf.core.library import Library; from papershelf.gui.main_window import MainWindow; "
        f"lib = Library.open({str(tmp_path / 'lib')!r}); win = MainWindow(lib, open_index=False); win.show(); "
        "before = 'pyqtgraph' in sys.modules; "
        "win.findChild(QAction, 'readingStatsAction').trigger(); "
        "print(before, 'pyqtgraph' in sys.modules); win.close(); lib.close()"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "False True"


def test_papers_read_are_counted_by_the_week_of_their_last_change():
    import datetime as dt

    from papershelf.core.paper import Paper
    from papershelf.gui.stats import reading_stats

    today = dt.date(2026, 12, 2)  # a Wednesday; its week starts on Monday 30 November

    def read(n: int, stamp: str, status: str = "read") -> Paper:
        return Paper(f"p{n}", title=f"Paper {n}", status=status, updated=stamp)

    noon = "T12:00:00+00:00"  # noon UTC is the same day in every time zone a test machine uses
    papers = [
        read(1, "2026-12-01" + noon),
        read(2, "2026-11-30" + noon),
        read(3, "2026-11-29" + noon),  # a Sunday: the week before
        read(4, "2026-09-14" + noon),  # the Monday of the first of the twelve weeks
        read(5, "2026-09-13" + noon),  # before them: not drawn
        read(6, "not a time"),  # a hand-edited store: counted as read, in no week
        read(7, "2026-12-01" + noon, status="reading"),
    ]
    stats = reading_stats(papers, today)
    assert [d.isoformat() for d, _ in stats.weeks][::11] == ["2026-09-14", "2026-11-30"]
    assert [n for _, n in stats.weeks] == [1] + [0] * 9 + [1, 2]
    assert dict(stats.status)["read"] == 6 and stats.total == 7
