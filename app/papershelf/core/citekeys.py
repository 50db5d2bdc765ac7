"""Citation keys: `authorYEARword`, ASCII, unique case-insensitively, stable.

Keys are computed for the whole library at once, in paper-id order within
each clash, so the key a paper gets does not depend on which list is
exported or in what order. Once a paper has been exported its key is stored
on it (`citekey`) and never changes unless the user edits it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from .paper import Paper
from .text import plain_text

_STOP = frozenset(
    """a an the of on in for and or to with from by at via towards toward into over under
is are be we our this that these those using use new novel what when how why do does can""".split()
)
_NAME_PARTICLES = frozenset("van von der den de del della di da du le la dos das ten ter".split())
KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9:_\-.]{0,79}$")


def ascii_fold(text: str) -> str:
    """The text in ASCII letters: accents dropped, ß as ss, æ as ae, ø as o…; what has no ASCII form goes."""
    if text.isascii():
        return text
    text = text.replace("ß", "ss").replace("æ", "ae").replace("ø", "o").replace("ł", "l").replace("đ", "d")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def surname(name: str) -> str:
    """The family name of "First Last", "Last, First" or "First van der Last"."""
    name = " ".join(name.split())
    if "," in name:
        return name.split(",", 1)[0].strip()
    parts = name.split(" ")
    if len(parts) == 1:
        return parts[0]
    last = [parts[-1]]
    for word in reversed(parts[:-1]):
        if word.lower() in _NAME_PARTICLES:
            last.insert(0, word)
        else:
            break
    return " ".join(last)


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", ascii_fold(text).lower())


def base_key(paper: Paper) -> str:
    """The key a paper would get alone: first author's surname, year, first significant title word."""
    author = _alnum(surname(paper.authors[0]).split(" ")[-1]) if paper.authors else ""
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


def valid_key(key: str) -> bool:
    """A key BibTeX and biber accept: an ASCII letter, then letters, digits and `:_-.`, at most 80."""
    return bool(KEY_RE.match(key))
