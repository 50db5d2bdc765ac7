"""Text as Papershelf compares and stores it: folded (case and accents), an abstract's
fingerprint, text that UTF-8 JSON can hold, a DOI without its prefix.

(An abstract's markup, read as plain text, is render.py's.)
"""

from __future__ import annotations

import re
import unicodedata

from .render import plain_text

_COMBINING_RE = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())


def clean_text(text: str) -> str:
    """Text that can be stored as UTF-8 JSON.

    File names and command-line arguments that are not valid UTF-8 reach
    Python with surrogate escapes, which JSON cannot hold; they are kept
    visible as backslash escapes instead of failing the whole operation.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: 'Mălan' and 'malan' fold alike."""
    text = text.casefold()
    if text.isascii():
        return text
    # casefold again after NFKD: "𝔼" decomposes to "E"
    return _COMBINING_RE.sub("", unicodedata.normalize("NFKD", text)).casefold()


def fingerprint_text(raw: str, plain: str | None = None) -> str:
    """Letters and digits only, folded: two copies of one abstract agree here
    whatever their whitespace, case, LaTeX, Markdown and punctuation."""
    text = fold(plain if plain is not None else plain_text(raw))
    # ASCII spaces and punctuation go as bytes (ten times faster than a regex
    # over the whole abstract); what non-ASCII is left is then small work
    text = text.encode("utf-8").translate(None, _ASCII_NOT_ALNUM).decode("utf-8")
    if not text.isascii():
        text = _NOT_ALNUM_RE.sub("", text)
    return text
