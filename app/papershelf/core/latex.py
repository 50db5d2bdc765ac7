"""BibTeX names: a name list split by BibTeX's rules with bibtexparser's name splitting,
keeping corporate names whole and `and others`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

from .biblio.latex import decode, piece_text, pieces

# ---- names ----


@dataclass(frozen=True, slots=True)
class Name:
    """One name of a BibTeX name list, its parts as LaTeX (BibTeX's First, von, Last, Jr).

    `literal` is a name given as one braced group (`{The CGAL Project}`, `{Rumble, Jr.}`):
    a corporate name, never split, and then the other parts are empty.
    """

    family: str = ""
    given: str = ""
    von: str = ""
    jr: str = ""
    literal: str = ""

    def display(self) -> str:
        """The name as a reader writes it: "Harry George Fletcher III", "Ludwig van Beethoven",
        "The CGAL Project"."""
        if self.literal:
            return decode("{" + self.literal + "}")
        words = " ".join(p for p in (self.given, self.von, self.family) if p)
        if self.jr:
            # "Fletcher III", but "Martin Luther King, Jr."
            words += (", " if self.jr[-1:] == "." else " ") + self.jr
        return decode("{" + words + "}")


def _is_one_group(name: str) -> bool:
    """Whether the whole name is a single braced group, `{...}`."""
    if len(name) < 2 or name[0] != "{" or name[-1] != "}":
        return False
    depth = 0
    for i, ch in enumerate(name):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and i != len(name) - 1:
                return False
    return True


def parse_names(raw: str) -> tuple[list[Name], bool]:
    """The names of a name field (author, editor…) as written in the file, and whether the
    list ends with `and others` (the reader's "et al.")."""
    text = "".join(piece_text(p) for p in pieces(raw))
    names: list[Name] = []
    others = False
    # imported here: opening a library (and `papershelf --help`) must not load bibtexparser
    from bibtexparser.middlewares.names import split_multiple_persons_names

    for one in split_multiple_persons_names(text):
        one = one.strip()
        if not one:
            continue
        if one.lower() == "others":
            others = True
            continue
        others = False  # "others" only counts at the end
        names.append(parse_name(one))
    return names, others


@lru_cache(maxsize=8192)
def parse_name(one: str) -> Name:
    """One name by BibTeX's rules ("von Last, Jr, First", "First von Last", `{Literal}`)."""
    if _is_one_group(one):
        return Name(literal=one[1:-1].strip())
    from bibtexparser.middlewares.names import InvalidNameError, parse_single_name_into_parts

    try:
        parts = parse_single_name_into_parts(one, strict=False)
    except InvalidNameError:
        return Name(literal=one)
    return Name(
        family=" ".join(parts.last),
        given=" ".join(parts.first),
        von=" ".join(parts.von),
        jr=" ".join(parts.jr),
    )


def name_list_problem(text: str) -> str:
    """Where a typed name list ("Knuth, Donald and {Barnes and Noble}") breaks, in words that
    say what to change; "" when it reads as BibTeX reads it. Caught: unbalanced braces, an "and"
    with no name on one side, a name that is only commas or has nothing before its comma, a
    name ending in a comma and one with more than two commas (BibTeX: "too many commas")."""
    names: list[list[str]] = [[]]  # the words of each name, split at "and" outside braces
    word, depth = "", 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return f"the brace at {text[: i + 1]!r} closes nothing: a corporate name is written {{Like This}}"
        if ch.isspace() and depth == 0:
            _add_word(names, word)
            word = ""
        else:
            word += ch
    if depth > 0:
        return "a brace is not closed: a corporate name is written {Like This}"
    _add_word(names, word)
    shown = [" ".join(words) for words in names]
    for n, name in enumerate(shown):
        if not name and len(shown) > 1:
            if n == 0:
                return "the list starts with 'and': there is no name before it"
            if n == len(shown) - 1:
                return f"the list ends with 'and' after {shown[n - 1]!r}: remove it, or add the name that follows"
            return f"'and and' after {shown[n - 1]!r}: there is no name between them"
        commas = _top_level_commas(name)
        parts = [p.strip() for p in _split_top_level(name, commas)]
        if commas and not any(parts):
            return f"name {n + 1} ({name!r}) is only a comma"
        if commas and not parts[0]:
            return f"the name {name!r} has nothing before its comma: write it Family, Given"
        if commas and not parts[-1]:
            return f"the name {name!r} ends with a comma: write it Family, Given"
        if len(commas) > 2:
            return f"the name {name!r} has {len(commas)} commas; a name has at most two (von Family, Jr, Given)"
    return ""


def _add_word(names: list[list[str]], word: str) -> None:
    if word.lower() == "and":
        names.append([])
    elif word:
        names[-1].append(word)


def _top_level_commas(name: str) -> list[int]:
    out, depth = [], 0
    for i, ch in enumerate(name):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(i)
    return out


def _split_top_level(name: str, commas: list[int]) -> list[str]:
    bounds = [-1, *commas, len(name)]
    return [name[a + 1 : b] for a, b in itertools.pairwise(bounds)]
