"""Issue 20, the window as a new user met it at 1366x768: the status marked in dark mode,
Year and Venue columns, a first window that shows the columns a reader needs, the sidebar's
whole names, undo and redo that say what they took back, and a row that stays in view
when a status change takes it out of the filter."""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QDialogButtonBox, QToolButton

from test_paper_menu import select_rows

pytestmark = [
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore(r"This plugin does not support"),
]


@pytest.fixture
def app_theme_restored(qapp):
    """The application's palette, style and colour scheme as they were, after the test."""
    palette, style = qapp.palette(), qapp.style().name()
    yield
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "unsetColorScheme"):
        hints.unsetColorScheme()
    qapp.setStyle(style)
    qapp.setPalette(palette)


def choose_theme(qtbot, win, theme: str) -> None:
    """Edit ▸ Preferences…, Appearance: `theme`, OK — as a person switches it."""
    win.findChild(object, "preferencesAction").trigger()
    dialog = win.findChild(QDialog, "preferencesDialog")
    qtbot.waitUntil(lambda: dialog.isVisible())
    picker = dialog.findChild(QComboBox, "themePicker")
    picker.setCurrentIndex(picker.findData(theme))
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())


def fill_lightness(button: QToolButton) -> int:
    """The lightness of the colour most of the button is painted in (its face, not its text)."""
    image = button.grab().toImage()
    counts = Counter(image.pixel(x, y) for y in range(image.height()) for x in range(image.width()))
    return QColor.fromRgb(counts.most_common(1)[0][0]).lightness()


# ---- defect 7: dark mode hides the current status ------------------------------------------


def test_dark_mode_marks_the_status_of_a_read_paper(window, qtbot, app_theme_restored):
    win = window
    choose_theme(qtbot, win, "dark")
    assert QApplication.palette().window().color().lightness() < 128  # the window is dark now
    qtbot.waitUntil(lambda: win.tag_panel.palette().window().color().lightness() < 128)
    select_rows(win, [0])
    buttons = {b.property("status"): b for b in win.tag_panel.status_buttons.buttons()}
    qtbot.mouseClick(buttons["read"], Qt.MouseButton.LeftButton)
    assert win.library.get(win.selected_ids()[0]).status.value == "read"
    assert [s for s, b in buttons.items() if b.isChecked()] == ["read"]
    read = fill_lightness(buttons["read"])
    for status, button in buttons.items():
        if status != "read":  # the marked one stands out from every other, as in light mode
            assert abs(read - fill_lightness(button)) >= 60, (status, read, fill_lightness(button))


# ---- the first window at 1366x768: the columns a reader needs ---------------------------

FIRST_START_PROBE = r"""
import json, sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from papershelf.core.library import Library
from papershelf.gui import app as gui_app
from papershelf.gui.main_window import MainWindow
from papershelf.gui.paper_model import COLUMNS

folder = sys.argv[1]
with Library.open(folder) as lib:
    lib.import_files([Path(p) for p in sys.argv[2:]])
app = QApplication([])

def look():
    win = next(w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
    header, view, panel = win.paper_list.horizontalHeader(), win.paper_list, win.filter_panel
    chars = view.fontMetrics().averageCharWidth()
    print(json.dumps({
        "screen": [win.screen().availableGeometry().width(), win.screen().availableGeometry().height()],
        "window": [win.frameGeometry().width(), win.frameGeometry().height()],
        "viewport": view.viewport().width(),
        "scrolls": view.horizontalScrollBar().maximum(),
        "columns": {
            name: {
                "hidden": header.isSectionHidden(col),
                "left": header.sectionViewportPosition(col),
                "width": header.sectionSize(col),
                "chars": header.sectionSize(col) / chars,
                "needs": header.sectionSizeFromContents(col).width(),
            }
            for col, name in enumerate(COLUMNS)
        },
        "sidebar": {
            kind: [(label, panel.drawn(kind, value)[0]) for value, label in panel.entries(kind)]
            for kind in ("status", "area")
        },
    }))
    win.close()

def wait_for_window():
    shown = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if shown:
        QTimer.singleShot(200, look)  # its layout settled
    else:
        QTimer.singleShot(50, wait_for_window)

QTimer.singleShot(0, wait_for_window)
sys.exit(gui_app.main(data_dir=folder))
"""


def first_start_at(tmp_path, width: int, height: int, files) -> dict:
    """The real window's first start (papershelf.gui.app.main, no settings yet) on an
    offscreen screen of this size, and what its list showed."""
    import json

    from conftest import run_window_probe

    config = tmp_path / "screen.json"
    screen = {"name": "S", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96, "dpr": 1}
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    platform = f"offscreen:configfile={config}"
    res = run_window_probe(FIRST_START_PROBE, tmp_path, str(tmp_path / "library"), *map(str, files), platform=platform)
    return json.loads(res.stdout.strip().splitlines()[-1])


BIB_YEARS = """@article{a, title = {Shelving at Scale}, author = {Ng, Andrea}, year = {2019},
  journal = {Journal of {\\"U}ber Shelves}}
@inproceedings{b, title = {Reading Lists Considered Helpful}, author = {Okafor, Chidi}, year = {2023},
  booktitle = {proceedings of the reading conference}}
@online{c, title = {A Preprint Without a Year}, author = {Patel, Ravi}}
@article{d, title = {Tags All the Way Down}, author = {Quinn, Mo}, year = {2007},
  journaltitle = {Bulletin of Tagging}}
@article{e, title = {A Three-Digit Year}, author = {Rossi, Lia}, year = {1998},
  journal = {annals of tagging}}
"""


def test_the_first_window_on_a_1366x768_screen_shows_title_authors_year_status_and_tags(tmp_path):
    from conftest import SEEDS

    bib = tmp_path / "years.bib"
    bib.write_text(BIB_YEARS, encoding="utf-8")
    seen = first_start_at(tmp_path, 1366, 768, [*SEEDS, bib])
    assert seen["screen"] == [1366, 768]
    width, height = seen["window"]
    assert 1100 <= width <= 1366 and 600 <= height <= 768, seen["window"]  # most of the screen, all on it
    columns = seen["columns"]
    for name in ("title", "authors", "year", "status", "tags"):
        column = columns[name]
        assert not column["hidden"], name
        assert 0 <= column["left"] and column["left"] + column["width"] <= seen["viewport"], (name, column)
        assert column["width"] >= column["needs"], (name, column)  # its heading whole, sort arrow and all
    assert columns["title"]["chars"] >= 30 and columns["authors"]["chars"] >= 16
    assert seen["scrolls"] == 0  # nothing hides to the right
    for kind, entries in seen["sidebar"].items():  # the sidebar's names whole, beside their counts
        assert entries, kind
        for label, drawn in entries:
            assert label.startswith(drawn) and not drawn.endswith("…"), (kind, label, drawn)


# ---- Year and Venue, sortable ---------------------------------------------------------


@pytest.fixture
def bib_window(qtbot, tmp_path, settings):
    """The real window (no index) on the first listing and a .bib of years and venues."""
    from conftest import SEEDS, window_on

    bib = tmp_path / "years.bib"
    bib.write_text(BIB_YEARS, encoding="utf-8")
    yield from window_on(qtbot, tmp_path / "library", [SEEDS[0], bib])


def click_heading(qtbot, win, name: str) -> None:
    """A click on a column's heading; waits for the list to show the answer."""
    from PySide6.QtCore import QPoint

    from papershelf.gui.paper_model import COLUMNS

    header = win.paper_list.horizontalHeader()
    col = COLUMNS.index(name)
    assert not header.isSectionHidden(col), name
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2))
    qtbot.waitUntil(lambda: win.last_answer is not None and win.last_answer.query == win.query)
    assert win.query.sort == name


def column_texts(win, name: str) -> list[str]:
    """A column's cells, top to bottom, as the list shows them."""
    from papershelf.gui.paper_model import COLUMNS

    col = COLUMNS.index(name)
    model = win.paper_list.model()
    return [model.index(row, col).data() for row in range(model.rowCount())]


def test_sorting_by_year_puts_papers_without_one_last_both_ways(bib_window, qtbot):
    win = bib_window
    click_heading(qtbot, win, "year")
    years = column_texts(win, "year")
    assert years[:4] == ["1998", "2007", "2019", "2023"] and set(years[4:]) == {""}
    click_heading(qtbot, win, "year")  # again: newest first
    assert win.query.descending
    years = column_texts(win, "year")
    assert years[:4] == ["2023", "2019", "2007", "1998"] and set(years[4:]) == {""}


def test_sorting_by_venue_reads_the_venue_as_shown_whatever_its_case(bib_window, qtbot):
    win = bib_window
    click_heading(qtbot, win, "venue")
    venues = column_texts(win, "venue")
    named = [
        "annals of tagging",  # journal
        "Bulletin of Tagging",  # journaltitle
        "Journal of Über Shelves",  # journal, its LaTeX read: {\"U}ber
        "proceedings of the reading conference",  # booktitle
    ]
    assert venues[:4] == named and set(venues[4:]) == {""}
    click_heading(qtbot, win, "venue")
    assert column_texts(win, "venue")[:4] == named[::-1]


# ---- Undo and Redo say what they took back -----------------------------------------------


def test_undo_and_redo_say_in_the_status_bar_what_they_undid(window, qtbot, tmp_path):
    from test_import_undo_core import BIB_MORE
    from test_import_undo_gui import drop

    win, bar = window, window.statusBar()
    more = tmp_path / "more.bib"
    more.write_text(BIB_MORE, encoding="utf-8")
    drop(qtbot, win, more)
    select_rows(win, [0, 1])
    qtbot.keyClick(win.paper_list, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)  # Alt+4: Read
    assert bar.currentMessage() == "Marked 2 papers as Read — Ctrl+Z undoes"
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert bar.currentMessage() == "Undid: Marked 2 papers as Read"
    assert {win.library.get(pid).status.value for pid in win.selected_ids()} == {"unread"}
    redo = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, redo)
    assert bar.currentMessage() == "Redid: Marked 2 papers as Read"
    assert {win.library.get(pid).status.value for pid in win.selected_ids()} == {"read"}
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(win.paper_list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # the import, next
    assert bar.currentMessage() == "Undid: Import of more.bib (2 papers)"


# ---- a row that stays -------------------------------------------------------------------


def click_filter(qtbot, win, kind: str, value) -> None:
    """A click on a sidebar entry; waits for the list to show its answer."""
    panel = win.filter_panel
    index = panel.index_of(kind, value)
    assert index.isValid(), (kind, value)
    panel.scrollTo(index)
    qtbot.mouseClick(panel.viewport(), Qt.MouseButton.LeftButton, pos=panel.visualRect(index).center())
    qtbot.waitUntil(lambda: win.last_answer is not None and win.last_answer.query == win.query)


@pytest.fixture
def seeds_window(qtbot, tmp_path, settings):
    """The real window (no index) on the four sample listings: a list longer than the window."""
    from conftest import SEEDS, window_on

    yield from window_on(qtbot, tmp_path / "library", SEEDS)


def test_a_paper_marked_read_under_a_to_read_filter_stays_in_view_until_the_next_sort(seeds_window, qtbot):
    win, lib = seeds_window, seeds_window.library
    lib.set_status(lib.ids(), "to-read")
    qtbot.waitUntil(lambda: win.filter_panel.index_of("status", "to-read").isValid())
    click_filter(qtbot, win, "status", "to-read")
    assert win.query.status == "to-read"
    shown = win.model.ids()
    row = len(shown) // 2
    select_rows(win, [row])
    view = win.paper_list
    view.scrollTo(view.model().index(row, 0))
    pid, scrolled = shown[row], view.verticalScrollBar().value()
    assert scrolled > 0  # a long list, scrolled down to the paper
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):  # the list is asked again after the edit
        qtbot.keyClick(view, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)  # Alt+4: Read
    assert lib.get(pid).status.value == "read"
    assert win.last_answer is not None and pid not in win.last_answer.ids  # no longer matches the filter…
    assert win.model.ids() == shown  # …but stays where it was, and so does every other row
    assert win.selected_ids() == [pid]
    assert view.verticalScrollBar().value() == scrolled
    rect = view.visualRect(view.model().index(row, 0))
    assert view.viewport().rect().contains(rect.center())  # still under the user's eyes
    assert win.tag_panel.findChild(QToolButton, "status-read").isChecked()
    click_heading(qtbot, win, "title")  # the next sort: the list is the filter's answer again
    assert pid not in win.model.ids() and len(win.model.ids()) == len(shown) - 1


# ---- the column layout, kept by name ---------------------------------------------------


def open_window(qtbot, tmp_path):
    from conftest import SEEDS, window_on

    return window_on(qtbot, tmp_path / "library", SEEDS[:1])


def shown_in_order(win) -> list[str]:
    from papershelf.gui.paper_model import COLUMNS

    header = win.paper_list.horizontalHeader()
    order = sorted(range(len(COLUMNS)), key=header.visualIndex)
    return [COLUMNS[c] for c in order if not header.isSectionHidden(c)]


def test_a_layout_saved_before_year_and_venue_existed_keeps_its_columns_and_gains_them(qtbot, tmp_path, settings):
    import json

    from PySide6.QtCore import QSettings

    from papershelf.gui.paper_model import COLUMNS

    saved = [
        {"name": "title", "width": 300, "hidden": False},
        {"name": "status", "width": 90, "hidden": False},
        {"name": "authors", "width": 200, "hidden": False},
        {"name": "added", "width": 100, "hidden": False},
        {"name": "tags", "width": 80, "hidden": True},
        {"name": "colour", "width": 80, "hidden": False},  # a column this version does not have
    ]
    QSettings().setValue("list/layout", json.dumps(saved))
    QSettings().setValue("list/sort", "status")
    opened = open_window(qtbot, tmp_path)
    win = next(opened)
    header = win.paper_list.horizontalHeader()
    assert shown_in_order(win) == ["title", "status", "authors", "added", "year", "venue"]
    assert header.sectionSize(COLUMNS.index("authors")) == 200
    assert header.sortIndicatorSection() == COLUMNS.index("status")  # the arrow where the sort is
    win.close()
    next(opened, None)


def test_an_unreadable_column_layout_gives_the_default_columns(qtbot, tmp_path, settings):
    from PySide6.QtCore import QSettings

    QSettings().setValue("list/layout", "[{not json")
    opened = open_window(qtbot, tmp_path)
    win = next(opened)
    assert shown_in_order(win) == ["title", "authors", "year", "venue", "status", "tags"]
    win.close()
    next(opened, None)


# ---- the tag panel at 1366x768 -------------------------------------------------------


def test_the_key_tags_line_is_never_drawn_over_the_tag_box(window, qtbot):
    win, lib = window, window.library
    win.resize(1256, 691)  # the first window on a 1366x768 screen
    names = [f"{word} information measures" for word in "quantum classical renyi shannon von-neumann".split()]
    ids = lib.ids()
    for n, name in enumerate(names * 2):
        lib.add_tags(ids[n : n + 2], [name + str(n)])
    panel, keys = win.tag_panel, win.tag_panel.key_tags
    qtbot.waitUntil(lambda: keys.isVisible() and "9 " in keys.text())
    select_rows(win, [0])
    win.right_split.setSizes([600, 100])  # squeezed as far as the splitter lets it
    qtbot.waitUntil(lambda: keys.height() >= keys.heightForWidth(keys.width()))  # every line of it
    assert keys.heightForWidth(keys.width()) > 2 * keys.fontMetrics().lineSpacing()  # it wraps
    assert keys.geometry().top() >= panel.tag_input.geometry().bottom()
    assert keys.geometry().bottom() <= panel.status_picker.geometry().top()


def test_with_the_search_index_open_a_paper_marked_read_stays_until_the_next_search(opened, qtbot):
    win, lib = opened.win, opened.lib
    click_filter(qtbot, win, "status", "unread")
    opened.settle()
    shown = win.model.ids()
    select_rows(win, [3])
    pid = shown[3]
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):  # asked again once the index has the edit
        qtbot.keyClick(win.paper_list, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)  # Alt+4: Read
    assert lib.get(pid).status.value == "read" and pid not in win.last_answer.ids
    assert win.model.ids() == shown and win.selected_ids() == [pid]
    qtbot.keyClicks(win.search_box, "a")  # the next search
    opened.settle()
    assert pid not in win.model.ids()


def test_a_tag_chip_shown_when_the_theme_turns_dark_is_readable(window, qtbot, app_theme_restored):
    win = window
    select_rows(win, [0])
    with qtbot.waitSignal(win.searchAnswered, timeout=10_000):  # the edit and all it refreshes, done
        win.edits.add_tags(["to-cite"])
    qtbot.waitUntil(lambda: len(win.tag_panel.findChildren(QToolButton, "chip-to-cite")) == 1)  # old ones gone
    chip = win.tag_panel.findChild(QToolButton, "chip-to-cite")
    choose_theme(qtbot, win, "dark")
    qtbot.waitUntil(lambda: win.tag_panel.palette().window().color().lightness() < 128)
    assert win.tag_panel.findChild(QToolButton, "chip-to-cite") is chip  # the chip shown before the switch
    image = chip.grab().toImage()
    inside = [  # within the chip's border: its face and its text
        QColor.fromRgb(image.pixel(x, y)).lightness()
        for y in range(4, image.height() - 4)
        for x in range(6, image.width() - 6)
    ]
    face = Counter(inside).most_common(1)[0][0]
    assert face < 128  # a dark face…
    assert sum(1 for v in inside if v - face >= 100) >= 20  # …with light letters on it


def test_a_link_in_an_abstract_is_readable_in_dark_mode(qtbot, tmp_path, settings, app_theme_restored):
    from conftest import SEEDS, window_on

    for win in window_on(qtbot, tmp_path / "library", SEEDS[3:]):
        links_turn_light_with_the_theme(qtbot, win)


def links_turn_light_with_the_theme(qtbot, win) -> None:
    view = win.abstract_view
    with_link = next(pid for pid in win.library.ids() if "http" in win.library.get(pid).abstract)
    win.paper_list.setFocus()
    select_rows(win, [win.model.row_of(with_link)])  # shown in light mode, then the theme turns dark
    choose_theme(qtbot, win, "dark")
    qtbot.waitUntil(lambda: view.palette().base().color().lightness() < 128)

    def link_colours() -> list[QColor]:
        block, found = view.document().begin(), []
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fmt = it.fragment().charFormat()
                if fmt.isAnchor() and fmt.anchorHref().startswith("http"):
                    found.append(fmt.foreground().color())
                it += 1
            block = block.next()
        return found

    qtbot.waitUntil(lambda: bool(link_colours()) and link_colours()[0].lightness() > 128)
    background = view.palette().base().color().lightness()
    for colour in link_colours():  # light on dark, as the text around it
        assert colour.lightness() - background >= 100, (colour.name(), background)


def test_a_first_start_says_search_is_ready_not_that_the_index_was_rebuilt(qtbot, tmp_path, settings):
    from conftest import SEEDS, Opened
    from papershelf.core.library import Library

    with Library.open(tmp_path / "library") as lib:
        lib.import_files(SEEDS[:1])  # a library whose index was never built
    opened = Opened(qtbot, tmp_path / "library").open()
    try:
        win = opened.win
        qtbot.waitUntil(lambda: win.statusBar().currentMessage() != "")
        assert win.statusBar().currentMessage() == "Full-text search is ready."
    finally:
        opened.win.close()
        opened.lib.close()
