"""Screenshots of the real window at 1366x768 on X11, light and dark. Not a pytest test;
run it by hand under Xvfb (the xcb platform, as a Linux desktop runs it)::

    xvfb-run -s '-screen 0 1366x768x24' .venv/bin/python tests/perf/screenshots.py

Needs the Xvfb and xcb packages (Debian: xvfb xauth libxcb-cursor0 libxcb-icccm4
libxcb-image0 libxcb-keysyms1 libxcb-render-util0 libxcb-shape0 libxkbcommon-x11-0).

A first start (no settings, a new library in a temporary folder: the user's own are
never touched) through ``papershelf.gui.app.main``, on the four sample listings and a
public .bib file (so that the Year and Venue columns have something to show). One paper
is marked Read and selected. Writes to resources/screenshots/ (or --out):

* main-window.png: the window, light;
* columns-1366x768.png: the same, sorted by Year (newest first);
* main-window-dark.png: Preferences ▸ Appearance: Dark, the Read paper still selected;
* viewer-files.png: light again, another paper selected whose Files list shows a PDF copied
  into the library, a supplement, and a linked PDF moved away since (missing, muted). Its PDFs
  are made by pdflatex (tests/pdfs.py). `--files` shoots only this one and the next.
* fulltext-hit.png: a search for a word found only on page 3 of that paper's PDF: the paper
  listed, and "In the PDF: p. 3: …" under its abstract.

Prints what it measured: the screen, the window, each column's width and whether its
heading and the sidebar's names are shown whole.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted((ROOT / "seeds").glob("*.txt"))
BIB = ROOT / "tests" / "fixtures" / "public" / "bib" / "bibtexparser-random-mendeley.bib"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "resources" / "screenshots")
    parser.add_argument("--files", action="store_true", help="only viewer-files.png and fulltext-hit.png")
    args = parser.parse_args()
    if not os.environ.get("DISPLAY"):
        print("No X display: run under xvfb-run -s '-screen 0 1366x768x24'", file=sys.stderr)
        return 2
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    work = Path(tempfile.mkdtemp(prefix="papershelf-shots-"))
    os.environ["XDG_CONFIG_HOME"] = str(work / "config")  # a first start: no settings
    os.environ["PAPERSHELF_CACHE_DIR"] = str(work / "cache")
    sys.path.insert(0, str(ROOT / "app"))

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from papershelf.core.library import Library
    from papershelf.gui import app as gui_app
    from papershelf.gui.dialogs import apply_theme
    from papershelf.gui.main_window import MainWindow
    from papershelf.gui.paper_model import COLUMNS

    folder = work / "library"
    with Library.open(folder) as lib:
        lib.import_files([*SEEDS, BIB])
        newest = next(p for p in reversed(lib.ids()) if lib.get(p).year)  # at the top of the first list
        lib.set_status([newest], "read")
        lib.add_tags([newest], ["to-cite"])
        with_files = _attach_files(lib, work, newest)
    qapp = QApplication([sys.argv[0]])
    args.out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, object] = {}

    def window() -> MainWindow | None:
        return next((w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()), None)

    def shoot(name: str) -> None:
        qapp.processEvents()
        path = args.out / name
        win = window()
        assert win is not None
        win.screen().grabWindow(0).save(str(path))
        print("wrote", path)

    def measure(win: MainWindow) -> None:
        header, view, panel = win.paper_list.horizontalHeader(), win.paper_list, win.filter_panel
        seen["screen"] = win.screen().size().toTuple()
        seen["window"] = win.frameGeometry().size().toTuple()
        seen["splitter"] = win.main_split.sizes()
        seen["columns"] = {
            name: {"width": header.sectionSize(col), "heading needs": header.sectionSizeHint(col)}
            for col, name in enumerate(COLUMNS)
            if not header.isSectionHidden(col)
        }
        seen["list scrolls sideways"] = view.horizontalScrollBar().maximum() > 0
        cut = []
        for kind in ("status", "tag", "area", "list"):
            for value, _label in panel.entries(kind):
                name, _count = panel.drawn(kind, value)
                if name.endswith("…"):
                    cut.append(name)
        seen["sidebar names cut"] = cut

    def when(condition, then, waited=[0]) -> None:  # noqa: B006 - one counter for the run
        if condition():
            QTimer.singleShot(300, then)  # painted
        elif waited[0] > 2400:
            print("gave up waiting", file=sys.stderr)
            qapp.exit(1)
        else:
            waited[0] += 1
            QTimer.singleShot(50, lambda: when(condition, then))

    def first() -> None:
        win = window()
        if win is None:
            QTimer.singleShot(50, first)
            return
        when(
            lambda: win.index is not None and win.last_answer is not None and win.last_answer.query == win.query,
            lambda: light(win),
        )

    def light(win: MainWindow) -> None:
        if args.files:
            files(win)
            return
        row = win.model.row_of(newest)
        win.paper_list.selectRow(row)
        win.paper_list.setFocus()
        measure(win)
        shoot("main-window.png")
        header = win.paper_list.horizontalHeader()
        from PySide6.QtCore import Qt

        header.setSortIndicator(COLUMNS.index("year"), Qt.SortOrder.DescendingOrder)
        when(lambda: win.last_answer is not None and win.last_answer.query.sort == "year", lambda: sorted_(win))

    def sorted_(win: MainWindow) -> None:
        from PySide6.QtWidgets import QAbstractItemView

        view = win.paper_list
        view.scrollTo(view.model().index(win.model.row_of(newest), 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        shoot("columns-1366x768.png")
        apply_theme("dark")
        QTimer.singleShot(300, lambda: dark(win))

    def dark(win: MainWindow) -> None:
        shoot("main-window-dark.png")
        apply_theme("light")
        QTimer.singleShot(300, lambda: files(win))

    def files(win: MainWindow) -> None:
        from PySide6.QtWidgets import QAbstractItemView

        view = win.paper_list
        row = win.model.row_of(with_files)
        view.selectRow(row)
        view.scrollTo(view.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        QTimer.singleShot(300, lambda: files_shot(win))

    def files_shot(win: MainWindow) -> None:
        panel = win.files_panel
        seen["files panel"] = {
            "heading": panel.heading.text(),
            "rows": [panel.model.index(r, 0).data() for r in range(panel.model.rowCount())],
            "size": panel.size().toTuple(),
        }
        shoot("viewer-files.png")

        # the PDFs' text is read in the background once the index is open; then search for a
        # word only the PDF holds
        def read() -> bool:
            return not win.fulltext.running() and not lib_pdfs_unread(win)

        when(read, lambda: search_pdf(win))

    def lib_pdfs_unread(win: MainWindow) -> int:
        return win.library.pdfs_to_read()

    def search_pdf(win: MainWindow) -> None:
        win.fulltext.hitShown.connect(lambda _pid: QTimer.singleShot(300, lambda: fulltext_shot(win)))
        from PySide6.QtTest import QTest

        QTest.keyClicks(win.pane.search_box, "zyzzogeton")  # typed, as the search follows what is typed

        def answered() -> bool:
            a = win.last_answer
            return a is not None and a.query.text == "zyzzogeton" and win.model.rowCount() > 0

        when(answered, lambda: win.paper_list.selectRow(win.model.row_of(with_files)))

    def fulltext_shot(win: MainWindow) -> None:
        seen["fulltext hit"] = {"rows": win.model.rowCount(), "query": win.pane.search_box.text()}
        shoot("fulltext-hit.png")
        print(json.dumps(seen, indent=1))
        win.close()

    QTimer.singleShot(0, first)
    return gui_app.main(data_dir=str(folder))


def _attach_files(lib, work: Path, newest: str) -> str:
    """The paper next to `newest` gets three files: a PDF copied into the library, a
    supplement, and a linked PDF that is then moved away (missing); one was opened. Its id."""
    sys.path.insert(0, str(ROOT / "tests"))
    from pdfs import doi_paper, latex_pdf, paper_pdf

    pdfs = work / "pdfs"
    pdfs.mkdir()
    ids = lib.ids()
    pid = ids[ids.index(newest) - 1]
    paper = doi_paper(pdfs, name="priors-for-diffusion.pdf")
    appendix = latex_pdf(pdfs, "supplementary.pdf", "\\newpage ".join(f"Appendix {c}." for c in "ABCDEFG"))
    slides = paper_pdf(pdfs, "talk-slides.pdf", pages=["Slide two.", "Slide three."])
    lib.attach_files(pid, [paper])
    lib.attach_files(pid, [appendix], label="supplement")
    lib.attach_files(pid, [slides], link=True, label="slides")
    slides.unlink()  # moved away since it was linked: missing on this machine
    lib.mark_opened(pid)
    return pid


if __name__ == "__main__":
    sys.exit(main())
