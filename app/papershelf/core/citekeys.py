"""Citation keys: the user's as given, else `authorYEARword`; unique case-insensitively, stable.

A key from a .bib file or typed by the user is kept exactly as it is
whenever BibTeX, biber and LaTeX's `\\cite` all take it (`key_problem`):
DBLP's `DBLP:conf/wicsa/ZimmermannWKG15`, a bare number, `Smith+Jones*2020`.
Papershelf's own keys are `authorYEARword` in ASCII.

Generated keys are computed for the whole library at once, in paper-id
order within each clash, so the key a paper gets does not depend on which
list is exported or in what order. Once a paper has been exported its key is
stored on it (`citekey`) and never changes unless the user edits it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container, Iterable, Iterator

from .biblio.names import key_word
from .paper import Paper
from .render import plain_text

_STOP = frozenset(
    """a an the of on in for and or to with from by at via towards toward into over under
is are be we our this that these those using use new novel what when how why do does can""".split()
)

# What a key cannot hold, each found with the real tools (pdflatex + bibtex with
# plain.bst, pdflatex + biber with biblatex): white space and "," end a key for
# BibTeX and split \cite's list; "{" and "}" end the entry (bibtexparser cannot
# read it either); "%" comments out the rest of \cite's line and "#" is a macro
# parameter (both stop pdflatex); "\\" and "~" are expanded by \cite (pdflatex
# stops under BibTeX, the citation is undefined under biber); '"', "'", "(",
# ")" and "=" are refused by biber's parser (btparse: the entry is skipped, the
# citation undefined). Control and other invisible characters are refused too:
# a key must be what the user sees. Everything else printable is fine, tried
# one by one (! $ & * + - . / : ; < > ? @ [ ] ^ _ ` |), and so is any length
# (5,000 characters compiled). Letters outside ASCII are kept: biber and LuaLaTeX
# take them; pdflatex + bibtex takes some (ü, ß, é) and not others (É, Ł, Cyrillic).
KEY_FORBIDDEN = frozenset(",{}%#\\~\"'()=")
KEY_FORBIDDEN_SHOWN = ", { } % # \\ ~ \" ' ( ) ="


def ascii_fold(text: str) -> str:
    """The text in ASCII letters: accents dropped, ß as ss, æ as ae, ø as o…; what has no ASCII form goes."""
    if text.isascii():
        return text
    text = text.replace("ß", "ss").replace("æ", "ae").replace("ø", "o").replace("ł", "l").replace("đ", "d")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", ascii_fold(text).lower())


def base_key(paper: Paper) -> str:
    """The key a paper would get alone: first author's surname, year, first significant title word."""
    author = _alnum(key_word(paper.authors[0])) if paper.authors else ""
    words = []
    for w in plain_text(paper.title).split():  # only the first two significant words are used
        w = _alnum(w)
        if w and w not in _STOP:
            words.append(w)
            if len(words) == 2:
                break
    word = words[0] if words else ""
    if not author:
        # no author: the title's first two significant words carry the key
        author, word = (words[0], words[1] if len(words) > 1 else "") if words else ("paper", "")
    year = str(paper.year) if paper.year else ""
    key = f"{author[:24]}{year}{word[:20]}"
    if not key[:1].isalpha():
        key = "p" + key
    return key or "paper"


def _suffixes() -> Iterator[str]:
    """a, b, …, z, aa, ab, …: what tells apart papers whose keys clash."""
    n = 0
    while True:
        n += 1
        s, k = "", n
        while k:
            k, r = divmod(k - 1, 26)
            s = chr(97 + r) + s
        yield s


def assign_keys(papers: Iterable[Paper]) -> dict[str, str]:
    """paper id → citation key for every paper given (all of the library, for
    stability): stored keys as they are, new ones unique case-insensitively."""
    papers = list(papers)
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for p in papers:
        if p.citekey:
            keys[p.id] = p.citekey
            taken.add(p.citekey.casefold())
    groups: dict[str, list[Paper]] = {}
    for p in papers:
        if not p.citekey:
            groups.setdefault(base_key(p), []).append(p)
    for base in sorted(groups):
        members = sorted(groups[base], key=lambda p: p.id)
        candidates = _suffixes()
        first = True
        for p in members:
            key = base if first else base + next(candidates)
            first = False
            while key.casefold() in taken:
                key = base + next(candidates)
            keys[p.id] = key
            taken.add(key.casefold())
    return keys


def key_problem(key: str) -> str:
    """Why `key` cannot be a citation key, in words a person can act on; "" when it can."""
    if not key:
        return "it is empty"
    if any(ch.isspace() for ch in key):
        return "it holds white space"
    bad = sorted({ch for ch in key if ch in KEY_FORBIDDEN})
    if bad:
        return (
            "it holds " + " and ".join(repr(ch) for ch in bad) + " (BibTeX, biber or \\cite cannot take "
            f"any of {KEY_FORBIDDEN_SHOWN})"
        )
    if key == "*":
        return "'\\cite{*}' means every entry of the bibliography"
    if "^^" in key:
        return "it holds '^^', which TeX reads as a character code"
    if unicodedata.normalize("NFC", key) != key:
        return "its accented letters are written as a letter and a separate accent (biber cannot find such a key)"
    if not key.isprintable():
        return "it holds an invisible or control character"
    return ""


def valid_key(key: str) -> bool:
    """A key BibTeX, biber and LaTeX's \\cite all take (see `KEY_FORBIDDEN`), kept exactly as it is."""
    return not key_problem(key)


def generated_key(paper: Paper, taken: Container[str]) -> str:
    """A new `authorYEARword` key for `paper` that is not in `taken` (case-folded keys), as
    `assign_keys` would make it: the base key, else with a, b, … after it."""
    base = base_key(paper)
    key = base
    candidates = _suffixes()
    while key.casefold() in taken:
        key = base + next(candidates)
    return key
