"""Desktop integration files: the freedesktop .desktop entry and the icon.

`papershelf --install-desktop` writes them into the user's data folders
(``$XDG_DATA_HOME``, default ``~/.local/share``): ``applications/`` and
``icons/hicolor/scalable/apps/``, so Papershelf appears in the desktop's menu
and opens .bib and .ris files. `--uninstall-desktop` removes them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

APP_ID = "io.github.papershelf.Papershelf"


def resources_dir() -> Path:
    """resources/ in a checkout, papershelf/resources/ in an installed wheel."""
    here = Path(__file__).resolve().parent
    for folder in (here / "resources", here.parents[1] / "resources"):
        if (folder / "papershelf.svg").is_file():
            return folder
    raise FileNotFoundError("the Papershelf resources (icon, .desktop file) are missing from this installation")


def xdg_data_home() -> Path:
    """The user's data folder of the freedesktop specs: $XDG_DATA_HOME, or ~/.local/share."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _launcher() -> str:
    """The command that starts the window, as an Exec= line can hold it: the installed `papershelf-gui`
    (the one beside this Python first), else this Python running `-m papershelf` (both go through
    papershelf.launcher, which opens the window on the files a file manager passes)."""
    script = shutil.which("papershelf-gui")
    beside = Path(sys.executable).with_name("papershelf-gui")
    if beside.exists():
        script = str(beside)
    if script:
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m papershelf"


def desktop_entry() -> str:
    """The .desktop file's text, its Exec= line pointing at this installation's launcher."""
    template = (resources_dir() / f"{APP_ID}.desktop").read_text(encoding="utf-8")
    return template.replace("Exec=papershelf-gui %F", f"Exec={_launcher()} %F")


def install() -> list[Path]:
    """Write the .desktop entry and the icon into the user's data folder; the files written."""
    data = xdg_data_home()
    apps = data / "applications"
    icons = data / "icons" / "hicolor" / "scalable" / "apps"
    apps.mkdir(parents=True, exist_ok=True)
    icons.mkdir(parents=True, exist_ok=True)
    entry = apps / f"{APP_ID}.desktop"
    icon = icons / f"{APP_ID}.svg"
    entry.write_text(desktop_entry(), encoding="utf-8")
    shutil.copyfile(resources_dir() / "papershelf.svg", icon)
    for tool, arg in (("update-desktop-database", apps), ("gtk-update-icon-cache", data / "icons" / "hicolor")):
        if shutil.which(tool):  # optional refreshes; the files are in place either way
            subprocess.run(
                [tool, "-q", str(arg)] if tool.startswith("update") else [tool, "-q", "-t", str(arg)],
                capture_output=True,
                timeout=60,
            )
    return [entry, icon]


def uninstall() -> list[Path]:
    """Remove what `install` wrote; the files removed."""
    data = xdg_data_home()
    removed: list[Path] = []
    for path in (
        data / "applications" / f"{APP_ID}.desktop",
        data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
    ):
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed
