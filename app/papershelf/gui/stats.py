"""Reading statistics: a dialog of five charts over the library (Edit ▸ Reading Statistics…).

Papers by status, papers read per week, papers opened per week, the most used tags and the most
common areas, drawn with pyqtgraph (see docs/DESIGN.md, "Dependencies", for
why pyqtgraph and not QtCharts or matplotlib). pyqtgraph is imported when the
dialog is first built, never at start-up: it costs about 0.4 s to import.

The numbers are one pass over `Library.papers()`, done on a worker thread
(0.12 s at 100,000 papers, more than a frame). The dialog follows the
library while it is open.

"Opened per week" (issue 24): the papers by the week one of their files was last opened
(`Paper.opened_at`, which keeps the last opening only: a paper opened again moves to that week).

"Read per week": the papers marked Read now, by the week they became Read
(`Paper.read_at`). Papers marked Read before Papershelf kept that date have
only their last change of any field (`Paper.updated`): they are counted by
it, and the chart's caption says how many were.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.library import Change
from ..core.paper import Paper, Status
from .paper_model import STATUS_LABELS
from .tasks import Task, run_task

if TYPE_CHECKING:
    from .main_window import MainWindow

WEEKS = 12
"""How many weeks the read-per-week chart covers, ending with this one."""
TOP = 10
"""How many tags and areas their charts show."""
REFRESH_MS = 500  # edits come in bursts (a tag on 50 papers): count once they settle


@dataclass(frozen=True, slots=True)
class ReadingStats:
    """What the charts show; every list is (label, papers), in the chart's order."""

    total: int
    status: list[tuple[str, int]]  # every status, in Status order (zeros too)
    weeks: list[tuple[_dt.date, int]]  # the Monday of each of the last WEEKS weeks → papers
    tags: list[tuple[str, int]]  # the TOP most used, most used first, ties alphabetical
    areas: list[tuple[str, int]]  # the TOP most common (case-folded as the sidebar counts), the same order
    tagged: int = 0  # papers with at least one tag
    with_area: int = 0  # papers with an area
    undated: int = 0  # papers read with no read date, counted by their last change
    opened_weeks: list[tuple[_dt.date, int]] | None = None  # as `weeks`, by when a file was last opened
    opened: int = 0  # papers whose file was ever opened


def reading_stats(papers: Iterable[Paper], today: _dt.date | None = None) -> ReadingStats:
    """Count `papers` (`Library.papers()`) for the charts; `today` (local) ends the weeks."""
    today = today or _dt.date.today()
    this_monday = today - _dt.timedelta(days=today.weekday())
    first = this_monday - _dt.timedelta(weeks=WEEKS - 1)
    status: Counter[Status] = Counter()
    tags: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    spelling: dict[str, str] = {}  # case-folded area → the first spelling met, to show
    read_days: Counter[str] = Counter()  # when the papers read became Read → how many (a bulk edit shares one)
    opened_days: Counter[str] = Counter()  # when a file of a paper was last opened → how many
    total = tagged = with_area = undated = 0
    for p in papers:
        total += 1
        s = p.status
        status[s] += 1
        if p.tags:
            tagged += 1
            tags.update(p.tags)
        if p.area:
            with_area += 1
            key = p.area.casefold()
            areas[key] += 1
            spelling.setdefault(key, p.area)
        if s is Status.READ:
            stamp = p.read_at
            if not stamp:  # read before the date was kept: its last change stands in
                stamp, undated = p.updated, undated + 1
            if stamp:
                read_days[stamp] += 1
        if p.opened_at:
            opened_days[p.opened_at] += 1
    weeks, opened = _by_week(read_days), _by_week(opened_days)
    return ReadingStats(
        total=total,
        status=[(s.value, status[s]) for s in Status],
        weeks=[(first + _dt.timedelta(weeks=i), weeks[first + _dt.timedelta(weeks=i)]) for i in range(WEEKS)],
        opened_weeks=[(first + _dt.timedelta(weeks=i), opened[first + _dt.timedelta(weeks=i)]) for i in range(WEEKS)],
        opened=sum(opened_days.values()),
        tags=_top(tags),
        areas=[(spelling[k], n) for k, n in _top(areas)],
        tagged=tagged,
        with_area=with_area,
        undated=undated,
    )


def _by_week(days: Counter[str]) -> Counter[_dt.date]:
    """Time stamps (UTC) and their counts → the Monday of the reader's week → the sum."""
    weeks: Counter[_dt.date] = Counter()
    for stamp, n in days.items():
        try:  # stored in UTC; the week is the reader's
            day = _dt.datetime.fromisoformat(stamp).astimezone().date()
        except (ValueError, OverflowError, TypeError):  # a hand-edited store: counted by status only
            continue
        weeks[day - _dt.timedelta(days=day.weekday())] += n
    return weeks


def _top(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]


# ---- the charts ---------------------------------------------------------------------


class ChartCard(QWidget):
    """One chart: a title, a bar chart (or words when there is nothing to draw), a caption.

    `bars()` gives back what the chart was given: (label, value) in the order drawn.
    """

    def __init__(self, title: str, caption: str, horizontal: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg  # type: ignore[import-untyped]  # here, not at start-up (about 0.4 s)

        self._pg = pg
        self.horizontal = horizontal
        self._bars: list[tuple[str, int]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.title = QLabel(f"<b>{title}</b>")
        self.stack = QStackedWidget()
        self.plot = pg.PlotWidget()
        self.plot.setMinimumSize(260, 180)
        item = self.plot.getPlotItem()
        item.setMouseEnabled(x=False, y=False)  # a picture to read, not to pan
        item.setMenuEnabled(False)
        item.hideButtons()
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setObjectName("chartEmpty")
        self.stack.addWidget(self.plot)
        self.stack.addWidget(self.empty)
        self.caption = QLabel(caption)
        self.caption.setWordWrap(True)
        self.caption.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.caption.setVisible(bool(caption))
        layout.addWidget(self.title)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.caption)

    def bars(self) -> list[tuple[str, int]]:
        """The (label, value) pairs the chart draws, in its order (empty when it shows words)."""
        return list(self._bars)

    def set_caption(self, text: str) -> None:
        """The words under the chart (hidden when empty)."""
        self.caption.setText(text)
        self.caption.setVisible(bool(text))

    def showing_words(self) -> bool:
        """Whether the chart shows a sentence instead of axes."""
        return self.stack.currentWidget() is self.empty

    def set_bars(self, bars: list[tuple[str, int]], empty_text: str, color: QColor) -> None:
        """Draw `bars`; when every value is 0, show `empty_text` instead of empty axes."""
        pg = self._pg
        item = self.plot.getPlotItem()
        item.clear()
        # the palette's colours, read at each drawing: the theme may have changed (Preferences)
        pal = self.palette()
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        for side in ("left", "bottom"):
            axis = item.getAxis(side)
            axis.setPen(pg.mkPen(pal.color(QPalette.ColorRole.Mid)))
            axis.setTextPen(pg.mkPen(pal.color(QPalette.ColorRole.Text)))
        if not any(n for _, n in bars):
            self._bars = []
            self.empty.setText(empty_text)
            self.stack.setCurrentWidget(self.empty)
            return
        self._bars = list(bars)
        self.stack.setCurrentWidget(self.plot)
        values = [n for _, n in bars]
        top = max(values)
        brush, pen = pg.mkBrush(color), pg.mkPen(None)
        text = self.palette().color(QPalette.ColorRole.Text)
        if self.horizontal:  # labels down the left, the most at the top
            rows = max(len(bars), 6)  # a few tags do not make bars as thick as the chart
            ys = [rows - 1 - i for i in range(len(bars))]
            item.addItem(pg.BarGraphItem(x0=0, y=ys, width=values, height=0.7, brush=brush, pen=pen))
            labels = [_short(label) for label, _ in bars]
            left = item.getAxis("left")
            left.setTicks([list(zip(ys, labels, strict=True))])
            # pyqtgraph drops a tick label that does not fit the axis: make room for the longest
            left.setWidth(max(self.fontMetrics().horizontalAdvance(t) for t in labels) + 14)
            item.showAxis("left")
            item.hideAxis("bottom")  # every bar carries its number
            for y, n in zip(ys, values, strict=True):
                item.addItem(self._value_label(pg, n, text, (0, 0.5), n, y))
            item.setXRange(0, top * 1.15, padding=0)
            item.setYRange(-0.6, rows - 0.4, padding=0)
        else:
            xs = list(range(len(bars)))
            item.addItem(pg.BarGraphItem(x=xs, height=values, width=0.7, brush=brush, pen=pen))
            item.getAxis("bottom").setTicks([[(x, label) for x, (label, _) in zip(xs, bars, strict=True)]])
            item.showAxis("bottom")
            item.hideAxis("left")  # every bar carries its number
            for x, n in zip(xs, values, strict=True):
                if n:
                    item.addItem(self._value_label(pg, n, text, (0.5, 1), x, n))
            # room for the first and last labels, which pyqtgraph drops when they overflow
            item.setXRange(-0.9, len(bars) - 0.1, padding=0)
            item.setYRange(0, top * 1.18, padding=0)

    @staticmethod
    def _value_label(pg: Any, n: int, color: QColor, anchor: tuple[float, float], x: float, y: float) -> Any:
        label = pg.TextItem(f" {n} ", color=color, anchor=anchor)
        label.setPos(x, y)
        return label


def _short(label: str, width: int = 28) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


class ReadingStatsDialog(QDialog):
    """The five charts, an "Export as PNG…" button and Close (not modal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readingStatsDialog")
        self.setWindowTitle(self.tr("Reading Statistics"))
        self.resize(1000, 640)
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setObjectName("statsSummary")
        layout.addWidget(self.summary)
        self.pages = QStackedWidget()
        self.charts = QWidget()  # what Export as PNG saves
        self.charts.setObjectName("statsCharts")
        self.charts.setAutoFillBackground(True)
        grid = QGridLayout(self.charts)
        self.status_chart = ChartCard(self.tr("Papers by status"), "", horizontal=False)
        self.weeks_chart = ChartCard(self.tr("Papers read per week"), "", horizontal=False)
        self.tags_chart = ChartCard(self.tr("Top tags"), "", horizontal=True)
        self.areas_chart = ChartCard(self.tr("Top areas"), "", horizontal=True)
        self.opened_chart = ChartCard(self.tr("Papers opened per week"), "", horizontal=False)
        # three over two: the weekly charts side by side, the tags and areas under them
        for n, card in enumerate((self.status_chart, self.weeks_chart, self.opened_chart)):
            grid.addWidget(card, 0, 2 * n, 1, 2)
        grid.addWidget(self.tags_chart, 1, 0, 1, 3)
        grid.addWidget(self.areas_chart, 1, 3, 1, 3)
        self.no_papers = QLabel(
            self.tr(
                "No papers yet, so nothing to chart.\n\nImport a listing or a .bib file (File ▸ Import…),"
                " or open the sample library (File ▸ Open the Sample Library)."
            )
        )
        self.no_papers.setObjectName("statsNoPapers")
        self.no_papers.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_papers.setWordWrap(True)
        self.pages.addWidget(self.charts)
        self.pages.addWidget(self.no_papers)
        layout.addWidget(self.pages, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.export_button = buttons.addButton(self.tr("Export as &PNG…"), QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button.setObjectName("statsExportButton")
        self.export_button.setEnabled(False)  # until there is something drawn
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.stats: ReadingStats | None = None

    def show_stats(self, stats: ReadingStats) -> None:
        """Draw `stats`; an empty library shows a sentence instead of five empty charts."""
        self.stats = stats
        if stats.total == 0:
            self.summary.setText(self.tr("The library is empty."))
            self.pages.setCurrentWidget(self.no_papers)
            self.export_button.setEnabled(False)
            return
        read = dict(stats.status).get(Status.READ.value, 0)
        self.summary.setText(self.tr("%d papers, %d of them read.") % (stats.total, read))
        self.pages.setCurrentWidget(self.charts)
        self.export_button.setEnabled(True)
        color = self.palette().color(QPalette.ColorRole.Highlight)
        self.status_chart.set_bars(
            [(self.tr(STATUS_LABELS[Status(s)]), n) for s, n in stats.status], self.tr("No papers."), color
        )
        self.weeks_chart.set_bars(
            # every other week named, counting back from this one (all twelve do not fit side by side)
            [
                (d.strftime("%d %b").lstrip("0") if (len(stats.weeks) - 1 - i) % 2 == 0 else "", n)
                for i, (d, n) in enumerate(stats.weeks)
            ],
            self.tr("No paper marked Read in the last %d weeks.") % WEEKS,
            color,
        )
        caption = self.tr("Papers marked Read now, by the week they were marked Read.")
        if stats.undated:
            caption += (
                " "
                + self.tr(
                    "%d of them were marked Read before Papershelf kept that date: they are counted by the week"
                    " of their last change."
                )
                % stats.undated
            )
        self.weeks_chart.set_caption(caption)
        self._show_opened(stats, color)
        self.tags_chart.set_bars(stats.tags, self.tr("No tags yet: tag papers to see which you use most."), color)
        self.tags_chart.set_caption(self.tr("%d of %d papers tagged.") % (stats.tagged, stats.total))
        self.areas_chart.set_bars(stats.areas, self.tr("No paper has an area."), color)
        self.areas_chart.set_caption(self.tr("%d of %d papers have an area.") % (stats.with_area, stats.total))

    def _show_opened(self, stats: ReadingStats, color: QColor) -> None:
        weeks = stats.opened_weeks or []
        self.opened_chart.set_bars(
            [
                (d.strftime("%d %b").lstrip("0") if (len(weeks) - 1 - i) % 2 == 0 else "", n)
                for i, (d, n) in enumerate(weeks)
            ],
            self.tr("No paper's file opened in the last %d weeks (Paper ▸ Open PDF).") % WEEKS,
            color,
        )
        self.opened_chart.set_caption(
            self.tr("Papers by the week one of their files was last opened; %d of %d papers ever opened.")
            % (stats.opened, stats.total)
        )

    def save_png(self, path: Path | str) -> None:
        """Save the five charts as one PNG image at `path`; OSError when it cannot be written."""
        image = self.charts.grab()
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")


class ReadingStatsView(QObject):
    """Opens the dialog and keeps its numbers in step with the library while it is open."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: ReadingStatsDialog | None = None
        self.task: Task | None = None
        self.again = False  # the library changed while counting
        self._timer = QTimer(self, singleShot=True, interval=REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        window.events.changed.connect(self._library_changed)

    def open(self) -> None:
        """Show the dialog (built on first use) and count the library as it is now."""
        if self.dialog is None:
            self.dialog = ReadingStatsDialog(self.window)
            self.dialog.export_button.clicked.connect(self.export_png)
        self.dialog.summary.setText(self.tr("Counting…"))
        self.refresh()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()

    def export_png(self) -> None:
        """Ask where to save the charts (a file dialog), then save them; a failure is said."""
        dialog = self.dialog
        if dialog is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            dialog, self.tr("Export Charts as PNG"), "reading-statistics.png", self.tr("PNG images (*.png)")
        )
        if not path:
            return
        if not path.lower().endswith(".png"):
            path += ".png"
        try:
            dialog.save_png(path)
        except OSError as exc:
            self.window.show_error(self.tr("The charts could not be saved"), str(exc))

    def busy(self) -> bool:
        """Whether the numbers are being counted (or will be, once edits settle)."""
        return self.task is not None or self._timer.isActive()

    def refresh(self) -> None:
        """Count again on a worker thread (a pass over every paper) and redraw."""
        if self.dialog is None:
            return
        if self.task is not None:
            self.again = True
            return
        papers = list(self.window.library.papers())  # a copy: the GUI thread may edit meanwhile
        today = _dt.date.today()

        def work(_progress: object, _cancelled: object) -> ReadingStats:
            return reading_stats(papers, today)

        def failed(exc: BaseException) -> None:
            self.task = None
            if not getattr(self.window, "closing", False):
                self.window.show_error(self.tr("The reading statistics could not be counted"), str(exc))

        # no parent: a count still running when the window goes delivers to a live Task (dropped)
        self.task = run_task(work, name="papershelf-stats", on_done=self._counted, on_error=failed)

    def _counted(self, stats: ReadingStats) -> None:
        self.task = None
        if getattr(self.window, "closing", False):
            return
        if self.dialog is not None:
            self.dialog.show_stats(stats)
        if self.again:
            self.again = False
            self.refresh()

    def _library_changed(self, _change: Change) -> None:
        if self.dialog is not None and self.dialog.isVisible():
            self._timer.start()
