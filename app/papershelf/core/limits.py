"""Every bound on what comes in, and the one rule for control characters.

A record comes from a file, a paste, a service's answer or an edit; none of
them may hold more than a real paper ever does, and none may carry characters
that act on a terminal (ESC, OSC and CSI sequences, NUL, C1 controls). The
numbers are in docs/DESIGN.md ("Limits"), with what happens past each.
"""

from __future__ import annotations

import re

# Control characters: C0 but tab and newline, DEL, and C1 (0x9b is CSI on its own).
# A carriage return counts: on a terminal it rewrites the line already shown.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def has_controls(text: str) -> bool:
    """Whether the text holds a control character (tab and newline are text)."""
    return _CONTROL_RE.search(text) is not None


def strip_controls(text: str) -> str:
    """The text without its control characters (what is stored or exported)."""
    if text.isprintable():  # the common case, at C speed
        return text
    return _CONTROL_RE.sub("", text)


def _escaped(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


def escape_controls(text: str) -> str:
    """The text with each control character shown as `\\xNN` (what a terminal is given)."""
    if text.isprintable():
        return text
    return _CONTROL_RE.sub(_escaped, text)
