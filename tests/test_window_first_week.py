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
