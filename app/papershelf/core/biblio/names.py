"""Names of people and organisations: the one home of every rule about them.

A name is kept in parts (`Name`: family, given, von, jr, or a whole `literal` for an
organisation). A .bib name list is split by BibTeX's rules with bibtexparser's name splitting
(`parse_names`), keeping corporate names whole and `and others`. A name the library only has
as display text ("Donald E. Knuth", "Knuth, Donald", "Martin Luther King, Jr.", "The CGAL
Project") is read into parts once, by one rule (`from_display`); its family name is what
every comparison (duplicates, fingerprints, look-up matching) and every citation key uses
(`family_key`, `key_word`). A paper's names in parts are its record's author field (parsed
as written, never re-split); only a paper without one has its names read from the display
text (see "The bibliographic record" in docs/DESIGN.md).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from ..text import fold
from .latex import decode, piece_text, pieces

# a name typed as one corporate name ("Research and Development Team", "The CGAL Project"):
# BibTeX must not take its last word for a family name
CORPORATE_RE = re.compile(
    r"(?i:\band\b)|^The\s|\d|\b(?:Project|Team|Group|Consortium|Collaboration|Committee|Institute|University|"
    r"Foundation|Association|Society|Laborator(?:y|ies)|Labs?|Organi[sz]ation|Council|Agency|Department|"
    r"Cent(?:er|re)|Network|Initiative|Community|Corporation|Company|Inc|Ltd|LLC|GmbH|Contributors|Developers|"
    r"Board|Office|Ministry|Alliance|Federation|Bureau|Commission|Working Group)\b\.?"
)


@dataclass(frozen=True, slots=True)
class Name:
    """One person's or organisation's name, in parts (BibTeX's First, von, Last, Jr).

    Read from a .bib name list (`parse_names`) the parts are LaTeX as the file wrote them
    (`Garc{\\'\\i}a`); read from a display name (`from_display`), typed in the editor or
    turned into the reader's text (`decoded`) they are text. `literal` is a name given as one
    braced group (`{The CGAL Project}`, `{Rumble, Jr.}`): a corporate name, never split, and
    then the other parts are empty.
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

    def text(self) -> str:
        """The name as BibTeX name-list text: "von Family, Jr, Given", or "{Literal}"."""
        if self.literal:
            return "{" + self.literal.strip() + "}"
        family = " ".join(p for p in (self.von.strip(), self.family.strip()) if p)
        parts = [family] + ([self.jr.strip()] if self.jr.strip() else []) + [self.given.strip()]
        return ", ".join(parts) if self.given.strip() or self.jr.strip() else "{" + family + "}"

    def decoded(self) -> Name:
        """The name with its LaTeX parts as the reader's text (`Garc{\\'\\i}a` → García)."""
        if self.literal:
            return Name(literal=decode("{" + self.literal + "}"))
        return Name(
            family=decode("{" + self.family + "}"),
            given=decode("{" + self.given + "}"),
            von=decode("{" + self.von + "}"),
            jr=decode("{" + self.jr + "}"),
        )


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
    shown, problem = _typed_names(text)
    if problem:
        return problem
    for n, name in enumerate(shown):
        problem = _and_problem(shown, n) if not name and len(shown) > 1 else _commas_problem(name, n)
        if problem:
            return problem
    return ""


def _typed_names(text: str) -> tuple[list[str], str]:
    """The names of a typed list, split at "and" outside braces (an empty one where an "and"
    has no name on one side), or the problem of its braces."""
    names: list[list[str]] = [[]]  # the words of each name
    word, depth = "", 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return [], f"the brace at {text[: i + 1]!r} closes nothing: a corporate name is written {{Like This}}"
        if ch.isspace() and depth == 0:
            _add_word(names, word)
            word = ""
        else:
            word += ch
    if depth > 0:
        return [], "a brace is not closed: a corporate name is written {Like This}"
    _add_word(names, word)
    return [" ".join(words) for words in names], ""


def _and_problem(shown: list[str], n: int) -> str:
    """What is wrong with the empty name `n` of a list: an "and" with no name on one side."""
    if n == 0:
        return "the list starts with 'and': there is no name before it"
    if n == len(shown) - 1:
        return f"the list ends with 'and' after {shown[n - 1]!r}: remove it, or add the name that follows"
    return f"'and and' after {shown[n - 1]!r}: there is no name between them"


def _commas_problem(name: str, n: int) -> str:
    """What is wrong with the commas of name `n` ("" when nothing is)."""
    commas = _top_level_commas(name)
    if not commas:
        return ""
    parts = [p.strip() for p in _split_top_level(name, commas)]
    if not any(parts):
        return f"name {n + 1} ({name!r}) is only a comma"
    if not parts[0]:
        return f"the name {name!r} has nothing before its comma: write it Family, Given"
    if not parts[-1]:
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


# ---- display names: one rule ----

_SUFFIXES = frozenset({"Jr", "Sr", "II", "III", "IV", "V"})
# the particles a family name starts with however they are written: BibTeX takes only lower-case
# words as "von", so "Valentin De Bortoli" would be given "Valentin De"; a display name's
# capitalised particle before the family name is its von part ("De Bortoli, Valentin")
PARTICLES = frozenset("van von der den de del della di da du le la dos das ten ter".split())
_SUFFIX_RE = re.compile(r"^(.+?\S),?\s+(Jr\.?|Sr\.?|II|III|IV|V)$")


@lru_cache(maxsize=8192)
def from_display(display: str) -> Name:
    """A display name ("Donald E. Knuth", "Knuth, Donald", "Martin Luther King, Jr.", "The
    CGAL Project") in parts, as text: a corporate name whole, a suffix as jr, "Family, Given"
    and "Given von Family" by BibTeX's rules, one word a family name."""
    display = " ".join(display.split())
    if not display:
        return Name()
    if CORPORATE_RE.search(display):
        return Name(literal=display)
    m = _SUFFIX_RE.match(display) if display.rpartition(" ")[2].rstrip(".") in _SUFFIXES else None
    if m:  # "Martin Luther King, Jr.", "Harry Fletcher III": given family, jr
        person = from_display(m.group(1))
        return Name(family=person.family, given=person.given, von=person.von, jr=m.group(2))
    if " " not in display and "," not in display:
        return Name(family=display)
    if (plain := _plain_person(display)) is not None:
        return _capital_particles(plain)
    if "," in display:
        return parse_name(display).decoded()
    name = parse_name(display)
    return _capital_particles(name.decoded()) if name.family else Name(literal=display)


def _capital_particles(name: Name) -> Name:
    """A "Given Family" name whose given part ends with capitalised particles ("Valentin De",
    "Guy Van den"): those words are its von part, as readers and the export before the one name
    rule took them ("De Bortoli, Valentin", "Van den Broeck, Guy")."""
    given = name.given.split()
    moved: list[str] = []
    while len(given) > 1 and given[-1].lower() in PARTICLES:
        moved.insert(0, given.pop())
    if not moved:
        return name
    return Name(family=name.family, given=" ".join(given), von=" ".join([*moved, name.von]).strip(), jr=name.jr)


# what BibTeX's name rules or the LaTeX decoder would read otherwise than the fast path does
_NOT_PLAIN_RE = re.compile(r"[{}\\$~,]|--|``|''")


def _plain_person(display: str) -> Name | None:
    """ "Given Given Family" when every word starts with a capital and holds nothing LaTeX would
    read (most names): BibTeX's reading of it without bibtexparser's cost (~0.3 ms a name);
    None for any other name."""
    words = display.split(" ")
    if _NOT_PLAIN_RE.search(display) or not all(w[:1].isupper() for w in words):
        return None
    return Name(family=words[-1], given=" ".join(words[:-1]))


def family_key(display: str) -> str:
    """The family name two copies of one author agree on, folded ("Knuth, Donald", "Donald E.
    Knuth" and "D. Knuth" → "knuth"; "Ludwig van Beethoven" and "van Beethoven, Ludwig" →
    "beethoven"); an organisation's whole name; "" for none."""
    name = from_display(display)
    return fold(name.family or name.literal)


def key_word(display: str) -> str:
    """The word of a name a citation key starts with: the last word of the family name
    ("Jean de La Fontaine" → "Fontaine", "Harry Fletcher III" → "Fletcher"), or of an
    organisation's name."""
    name = from_display(display)
    words = (name.family or name.literal).split()
    return words[-1] if words else ""
