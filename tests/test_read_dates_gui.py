"""When a paper was read (issue 20), in the real window: Alt+4 marks a paper Read and the panel
says on which day; Ctrl+Z takes the day back with the status; the "Read on" column, chosen on
the header's menu, shows the day and sorts by it, papers not read last either way."""

from __future__ import annotations

import datetime as dt

import pytest
from PySide6.QtCore import QDate, QLocale, QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QLabel, QMenu

from papershelf.core.paper import Status
from papershelf.gui.paper_model import COLUMNS
from test_paper_menu import select_rows

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]

NOON = "T12:00:00+00:00"  # noon UTC is the same day in every time zone a test machine uses


def local_date(stamp: str) -> dt.date:
    return dt.datetime.fromisoformat(stamp).astimezone().date()


def day_words(date: dt.date) -> str:
    """A day as the panel writes it: "30 Nov 2026" (month names in the user's language)."""
    return QLocale().toString(QDate(date.year, date.month, date.day), "d MMM yyyy")


def press(qtbot, win, key) -> None:
    qtbot.keyClick(win.paper_list, key, Qt.KeyboardModifier.AltModifier)


def test_alt4_shows_the_day_read_under_the_status_and_undo_takes_it_back(window, qtbot):
    win, lib = window, window.library
    label = win.findChild(QLabel, "statusDateLabel")
    select_rows(win, [0])
    [pid] = win.selected_ids()
    assert label is not None and label.isHidden()  # an unread paper has no day to show

    before = dt.date.today()
    press(qtbot, win, Qt.Key.Key_3)  # Alt+3: Reading
    qtbot.waitUntil(lambda: label.isVisible())
    started = local_date(lib.get(pid).reading_at)
    assert label.text() == f"Reading since {day_words(started)}"
    press(qtbot, win, Qt.Key.Key_4)  # Alt+4: Read
    after = dt.date.today()
    paper = lib.get(pid)
    assert paper.status is Status.READ and paper.read_at
    read = local_date(paper.read_at)
    assert before <= started <= read <= after
    qtbot.waitUntil(lambda: label.text().startswith("Read on"))
    assert label.text() == f"Read on {day_words(read)} (started {day_words(started)})"

    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back to Reading
    qtbot.waitUntil(lambda: label.text().startswith("Reading since"))
    assert (lib.get(pid).status, lib.get(pid).read_at) == (Status.READING, "")
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # back to Unread
    qtbot.waitUntil(lambda: label.isHidden())
    back = {**paper.to_dict(), "status": "unread", "read_at": "", "reading_at": "", "updated": lib.get(pid).updated}
    assert lib.get(pid).to_dict() == back
    qtbot.keyClick(
        win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    qtbot.waitUntil(lambda: label.text().startswith("Reading since"))
    assert lib.get(pid).reading_at == paper.reading_at  # redo puts back the very day, not today's


def header_menu(qtbot, win) -> QMenu:
    header = win.paper_list.horizontalHeader()
    pos = QPoint(10, header.height() // 2)
    QApplication.sendEvent(
        header.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, header.viewport().mapToGlobal(pos))
    )
    menu = win.findChild(QMenu, "columnMenu")
    qtbot.waitUntil(lambda: menu is not None and menu.isVisible())
    return menu


def test_the_read_on_column_is_chosen_on_the_header_and_sorts_by_the_day(window, qtbot):
    win, lib = window, window.library
    ids = lib.ids()
    older, newer, undated = ids[6], ids[2], ids[4]
    lib.restore_fields(  # papers read on these days, as weeks of use leave them (undo's door takes the dates)
        {
            older: {"status": Status.READ, "read_at": "2026-10-01" + NOON},
            newer: {"status": Status.READ, "read_at": "2026-11-20" + NOON},
            undated: {"status": Status.READ},  # marked Read before Papershelf kept the day
        }
    )
    win.resize(int(1366 * 0.92), int(768 * 0.9))  # what the first start gives on the screen
    qtbot.waitUntil(lambda: win.paper_list.viewport().width() > 300)
    header = win.paper_list.horizontalHeader()
    col = COLUMNS.index("read")
    assert header.isSectionHidden(col)  # hidden at first: the list fits 1366×768

    menu = header_menu(qtbot, win)
    labels = {a.text(): a for a in menu.actions() if a.isCheckable()}
    assert not labels["Read on"].isChecked()
    labels["Read on"].trigger()
    menu.close()
    assert not header.isSectionHidden(col)
    # in view beside the default columns, with nothing to scroll to
    qtbot.waitUntil(lambda: win.paper_list.horizontalScrollBar().maximum() == 0)
    assert header.sectionViewportPosition(col) + header.sectionSize(col) <= header.viewport().width()

    model = win.model

    def cell(pid: str, role=Qt.ItemDataRole.DisplayRole):
        return model.index(model.row_of(pid), col).data(role)

    assert (cell(older), cell(newer), cell(undated), cell(ids[0])) == ("2026-10-01", "2026-11-20", "", "")
    assert cell(undated, Qt.ItemDataRole.ToolTipRole) == "Marked Read before Papershelf kept the date"

    def click_header() -> None:
        x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))

    def sorted_as(descending: bool) -> bool:
        answer = win.last_answer
        return answer is not None and (answer.query.sort, answer.query.descending) == ("read", descending)

    rest = [pid for pid in ids if pid not in (older, newer)]
    click_header()
    qtbot.waitUntil(lambda: sorted_as(False))
    qtbot.waitUntil(lambda: model.ids() == [older, newer, *rest])
    click_header()
    qtbot.waitUntil(lambda: sorted_as(True))
    qtbot.waitUntil(lambda: model.ids() == [newer, older, *rest])  # still the papers without a day last


def test_after_an_upgrade_the_columns_chosen_stay_and_read_on_stays_hidden(qtbot, tmp_path, settings):
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QStandardItemModel
    from PySide6.QtWidgets import QTableView

    from conftest import SEEDS, window_on

    # the header state an older Papershelf kept: its seven columns, Rating shown and Tags hidden by hand
    old = QTableView()
    old.setModel(QStandardItemModel(0, 7, old))
    for col, hidden in enumerate([False, False, True, False, False, True, False]):
        old.horizontalHeader().setSectionHidden(col, hidden)
    old.horizontalHeader().setSortIndicator(6, Qt.SortOrder.DescendingOrder)  # sorted by Added, newest first
    QSettings().setValue("list/columns", old.horizontalHeader().saveState())

    for win in window_on(qtbot, tmp_path / "library", SEEDS[:1]):
        header = win.paper_list.horizontalHeader()
        shown = [name for col, name in enumerate(COLUMNS) if not header.isSectionHidden(col)]
        # the user's choice; of the columns added since, Year and Venue are shown by default, Read on is not
        assert shown == ["title", "authors", "year", "venue", "status", "rating", "added"]
        assert (header.sortIndicatorSection(), header.sortIndicatorOrder()) == (
            COLUMNS.index("added"),
            Qt.SortOrder.DescendingOrder,
        )
        menu = header_menu(qtbot, win)
        [read_on] = [a for a in menu.actions() if a.text() == "Read on"]
        read_on.trigger()
        menu.close()
        win.close()  # saves the layout by column name
    assert "read" in QSettings().value("list/layout")
    for win in window_on(qtbot, tmp_path / "again", SEEDS[:1]):
        assert not win.paper_list.horizontalHeader().isSectionHidden(COLUMNS.index("read"))  # chosen, kept


def test_reading_statistics_count_by_the_day_read_and_say_which_papers_had_none(window, qtbot):
    from test_stats import open_stats

    win, lib = window, window.library
    ids = lib.ids()
    lib.set_status(ids[1:3], "read")  # today: this week's bar
    three_weeks_ago = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(weeks=3)).isoformat(timespec="seconds")
    lib.restore_fields(
        {
            ids[0]: {"status": Status.READ, "read_at": three_weeks_ago},
            ids[3]: {"status": Status.READ},  # marked Read before the day was kept
        }
    )
    lib.set_notes(ids[0], "edited today, read three weeks ago")
    dialog = open_stats(qtbot, win)
    weeks = [n for _, n in dialog.weeks_chart.bars()]
    # this week: the two read today and the undated one (by its last change); ids[0] weeks ago
    assert weeks[-1] == 3 and sum(weeks) == 4
    assert dialog.weeks_chart.caption.text() == (
        "Papers marked Read now, by the week they were marked Read. 1 of them were marked Read before"
        " Papershelf kept that date: they are counted by the week of their last change."
    )
    select_rows(win, [win.model.row_of(ids[3])])
    label = win.findChild(QLabel, "statusDateLabel")
    qtbot.waitUntil(lambda: label.isVisible())
    assert label.text() == "Marked Read before Papershelf kept the date"
