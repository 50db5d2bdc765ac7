"""What the window says after an edit or a search, in words a person reads."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QCoreApplication

from ..core.query import fuzzy_query, query_words


def tr(text: str) -> str:
    """`text` in the user's language."""
    return QCoreApplication.translate("Feedback", text)


def n_papers(n: int) -> str:
    """ "1 paper", "2 papers", "1,234 papers" """
    return tr("1 paper") if n == 1 else tr("%s papers") % f"{n:,}"


def quoted(names: Iterable[str]) -> str:
    """Names in typographic quotes, comma-separated."""
    return ", ".join(f"‘{n}’" for n in names)


def edited(kind: str, n: int, what: str, undo_key: str) -> str:
    """The status-bar line after an edit: what it did to how many papers (`n`,
    the ones it changed), and how to take it back; for 0, that nothing changed."""
    texts = {
        "tag": tr("Tagged %(papers)s %(what)s"),
        "untag": tr("Removed %(what)s from %(papers)s"),
        "status": tr("Marked %(papers)s as %(what)s"),
        "rating": tr("Rated %(papers)s %(what)s"),
        "unrate": tr("Cleared the rating of %(papers)s"),
        "keywords": tr("Tagged %(papers)s with their keywords"),
        "deletetag": tr("Deleted the tag %(what)s from %(papers)s"),
    }
    if n == 0:  # nothing changed, and there is nothing to undo
        texts = {
            "tag": tr("Already tagged %(what)s"),
            "untag": tr("No selected paper has %(what)s"),
            "status": tr("Already %(what)s"),
            "rating": tr("Already rated %(what)s"),
            "unrate": tr("Already not rated"),
            "keywords": tr("The selected papers already have their keywords as tags, or have none"),
            "deletetag": tr("No paper has the tag %(what)s"),
        }
        return texts[kind] % {"what": what.lower() if kind == "status" else what}
    line = texts[kind] % {"papers": n_papers(n), "what": what}
    return line + (" — " + tr("%s undoes") % undo_key if undo_key else "")


def undone(step: str) -> str:
    """The status-bar line after Undo: what it took back ("Undid: Marked 2 papers as Read")."""
    return tr("Undid: %s") % step


def redone(step: str) -> str:
    """The status-bar line after Redo: what it made again."""
    return tr("Redid: %s") % step


# ---- a search that finds nothing -------------------------------------------------


def no_results(text: str, suggestion: str) -> str:
    """What the status bar says when a search finds nothing."""
    line = tr("No papers match “%s”.") % text.strip()
    if suggestion:
        line += " " + tr("Did you mean “%s”?") % suggestion
    words = query_words(text)
    if words:
        line += " " + tr("For close spellings, search %s") % fuzzy_query(text)
    return line
