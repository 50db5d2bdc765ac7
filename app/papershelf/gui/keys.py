"""Key bindings that read the same on every platform.

A standard key differs between platforms (Redo is Ctrl+Y on Windows and
Ctrl+Shift+Z on Linux); adding our own alternatives to it must not bind
one key twice, or Qt finds an "ambiguous shortcut" and does nothing.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence


def keys(*wanted: QKeySequence.StandardKey | str) -> list[QKeySequence]:
    """Every binding of each standard key and each "Ctrl+…" string, once each, in order."""
    out: list[QKeySequence] = []
    seen: set[str] = set()
    for item in wanted:
        found = QKeySequence.keyBindings(item) if isinstance(item, QKeySequence.StandardKey) else [QKeySequence(item)]
        for seq in found:
            text = seq.toString(QKeySequence.SequenceFormat.PortableText)
            if text and text not in seen:
                seen.add(text)
                out.append(seq)
    return out


REDO = (QKeySequence.StandardKey.Redo, "Ctrl+Shift+Z", "Ctrl+Y")
PREFERENCES = (QKeySequence.StandardKey.Preferences, "Ctrl+,")
OPEN_PDF = ("Ctrl+Shift+O",)  # Paper ▸ Open PDF: Ctrl+O imports, so the PDF takes Shift
