"""What the window says after an edit or a search, in words a person reads."""

from __future__ import annotations

import difflib
import re

from PySide6.QtCore import QCoreApplication

from ..core.library import Library


def tr(text: str) -> str:
    return QCoreApplication.translate("Feedback", text)


def n_papers(n: int) -> str:
    """ "1 paper", "2 papers", "1,234 papers" """
    return tr("1 paper") if n == 1 else tr("%s papers") % f"{n:,}"


def quoted(names) -> str:
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
    }
    if n == 0:      # nothing changed, and there is nothing to undo
        texts = {
            "tag": tr("Already tagged %(what)s"),
            "untag": tr("No selected paper has %(what)s"),
            "status": tr("Already %(what)s"),
            "rating": tr("Already rated %(what)s"),
            "unrate": tr("Already not rated"),
        }
        return texts[kind] % {"what": what.lower() if kind == "status" else what}
    line = texts[kind] % {"papers": n_papers(n), "what": what}
    return line + (" — " + tr("%s undoes") % undo_key if undo_key else "")


# ---- a search that finds nothing -------------------------------------------------

_WORD = re.compile(r"[^\W\d_]{3,}")
_QUERY_WORD = re.compile(r"(?<![\w:~*\"'])([^\W\d_]{3,})(?![\w:~*])")
_OPERATORS = {"and", "or", "not"}


class Vocabulary:
    """Words of the library's titles and authors, to offer a close one when a
    search finds nothing. Built on the search thread, again after edits."""

    def __init__(self, library: Library):
        self.library = library
        self._generation = None
        self._words: dict[str, list[str]] = {}

    def _load(self) -> None:
        generation = self.library.generation
        if generation == self._generation:
            return
        words: set[str] = set()
        for paper in list(self.library.papers()):
            words.update(w.casefold() for w in _WORD.findall(paper.title))
            for author in paper.authors:
                words.update(w.casefold() for w in _WORD.findall(author))
        by_letter: dict[str, list[str]] = {}
        for w in words:
            by_letter.setdefault(w[0], []).append(w)
        self._words, self._generation = by_letter, generation

    def close_word(self, word: str) -> str:
        self._load()
        word = word.casefold()
        candidates = self._words.get(word[0], [])
        if word in candidates:
            return ""
        found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
        return found[0] if found else ""


def query_words(text: str) -> list[str]:
    """The plain words of a query (not field names, operators, fuzzy or prefix forms)."""
    return [w for w in _QUERY_WORD.findall(text) if w.casefold() not in _OPERATORS]


def no_results(text: str, suggestion: str) -> str:
    """What the status bar says when a search finds nothing."""
    line = tr("No papers match “%s”.") % text.strip()
    if suggestion:
        line += " " + tr("Did you mean “%s”?") % suggestion
    words = query_words(text)
    if words:
        fuzzy = _QUERY_WORD.sub(lambda m: m.group(1) + "~" if m.group(1).casefold() not in _OPERATORS
                                else m.group(1), text.strip())
        line += " " + tr("For close spellings, search %s") % fuzzy
    return line
