"""No control character in an export (core.limits): which fields of a paper an export writes,
whether one holds a control character (a record stored by a version that kept them), the last
guard over an export's text, and the report's sentence about the entries that held some (and
the one about keys an export from a library it could not write gave but could not keep)."""

from __future__ import annotations

from collections.abc import Iterable

from ..limits import has_controls, strip_controls
from ..paper import Paper

# what an export writes of a paper: a control character in any of these is left out of it
_EXPORTED = ("title", "authors", "abstract", "venue", "doi", "arxiv_id", "links", "tags", "bibfields", "preamble")
RIS_EXPORTED = (*_EXPORTED, "ris", "citekey")


def holds_controls(paper: Paper, fields: Iterable[str] = _EXPORTED) -> bool:
    """Whether a field an export writes holds a control character (core.limits: a record stored
    by a version that kept them)."""
    d = paper.raw()
    for name in fields:
        value = d.get(name)
        if not value:
            continue
        if isinstance(value, str):
            values: Iterable[object] = (value,)
        elif isinstance(value, list):
            values = value
        elif isinstance(value, dict):
            values = value.values()
        else:
            continue
        # isprintable first: C speed, and true for nearly every value (no tab or line end either)
        if any(isinstance(v, str) and not v.isprintable() and has_controls(v) for v in values):
            return True
    return False


def without_controls(text: str, eol: str = "\n") -> str:
    """An export's text with no control character (core.limits) but its line ends `eol`: the
    last guard, whatever a field held."""
    if text.replace(eol, "").isprintable():  # the usual case, at C speed
        return text
    if eol == "\n":
        return strip_controls(text)
    return eol.join(strip_controls(line) for line in text.split(eol))


def controls_note(keys: list[str], noun: str) -> str:
    """The export report's sentence about entries that held control characters ("" for none)."""
    if not keys:
        return ""
    n = len(keys)
    one = n == 1
    names = ", ".join(keys[:5]) + (", …" if n > 5 else "")
    things = f"{noun}{'y' if one else 'ies'}" if noun == "entr" else f"{noun}{'' if one else 's'}"
    return (
        f" {n} {things} held control characters (terminal escapes, NUL…), left out of the file: {names};"
        " the library still holds them (edit the fields to remove them there)."
    )


def unpinned_note(n: int, because: str) -> str:
    """The export report's sentence about `n` keys given but not pinned, and why ("" for none)."""
    if not n:
        return ""
    return (
        f" {n} entr{'y has' if n == 1 else 'ies have'} a key that could not be kept for the next export"
        f" ({because}): an export from the library once it is writable may give"
        " different keys if papers that would take the same key are added first."
    )
