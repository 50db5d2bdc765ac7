"""Listings pasted from web pages: the paper-search format and Daily Papers.

Both are plain text with blank lines between fields and no titles:

* paper-search (first line ``论文检索``): per paper an optional area line
  (``Area · Subarea`` or ``Area``), an optional author line (comma-separated;
  a single author has no comma), then the abstract;
* Daily Papers (first line ``Daily Papers``): abstracts only.

The grammar is the same for both, so one parser reads both and the header
only names the format. A line that is none of area, authors or abstract is
reported with its line number, never dropped in silence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..limits import MAX_FIELD_CHARS
from .base import Candidate, ParsedFile, Problem

HEADERS = {"论文检索": "paper-search", "daily papers": "daily-papers"}

# Top-level areas of the ML conference taxonomies these listings come from.
# fmt: off
KNOWN_AREAS = {
    a.casefold(): a for a in (
        "Applications", "Deep Learning", "Evaluation", "General Machine Learning",
        "Infrastructure", "Neuroscience and Cognitive Science", "Optimization",
        "Probabilistic Methods", "Reinforcement Learning", "Social Aspects", "Theory",
        "Computer Vision", "Natural Language Processing", "Robotics",
        "Machine Learning Systems", "Data-centric AI", "Datasets and Benchmarks",
    )
}
# fmt: on
_AREA_SEP_RE = re.compile(r"\s*[·•・‧∙]\s*")
# fmt: off
_PARTICLES = {
    "van", "von", "der", "den", "de", "del", "della", "di", "da", "dos", "das", "du",
    "la", "le", "y", "bin", "binti", "al", "el", "ter", "ten", "zu", "st.", "mc", "ibn",
}
# fmt: on
_PROSE_RE = re.compile(r"\s(?:the|of|we|to|is|for|with|that|this|in|on|are|our|a|an)\s")
_NAME_TOKEN_RE = re.compile(r"^[^\W\d_][\w'’.\-]*[*†‡§¶]*\d{0,2}[*†‡§¶]*$")
# A paragraph shorter than this that is neither area nor authors is no abstract.
MIN_ABSTRACT_WORDS = 15
_TERMINAL_RE = re.compile(r"""([.!?)\]"'”’]|https?://\S+)$""")


def _ends_complete(text: str) -> bool:
    """The text ends like a finished sentence (or with a link)."""
    # only the last word can match: searching the whole text retries
    # "https?://\S+$" at every "http" of a long unbroken run (quadratic)
    words = text.rsplit(None, 1)
    return bool(words) and bool(_TERMINAL_RE.search(words[-1]))


def parse_area(line: str) -> tuple[str, str, bool] | None:
    """(area, subarea, known) if the line is an area line, else None."""
    if len(line) > 300:
        return None
    parts = _AREA_SEP_RE.split(line.strip(), maxsplit=1)
    top = parts[0].strip()
    sub = parts[1].strip() if len(parts) > 1 else ""
    known = KNOWN_AREAS.get(top.casefold())
    if known:
        return known, sub, True
    if len(parts) > 1 and sub and _title_like(top) and not top.endswith("."):
        return top, sub, False
    return None


def _title_like(text: str) -> bool:
    words = text.split()
    return 1 <= len(words) <= 6 and all(w[0].isupper() or w.casefold() in {"and", "of", "&"} for w in words)


def split_authors(line: str) -> list[str] | None:
    """The names on an author line, or None if the line is not one."""
    line = line.strip()
    if not _could_be_author_line(line):
        return None
    parts = [p.strip() for p in re.split(r",|;|\band\b|&", line)]
    names = [p for p in parts if p]
    if not names:
        return None
    if len(names) == 1 and len(names[0].split()) < 2:
        return None  # one word: a name alone is too ambiguous ("Optimization")
    return names if all(_reads_as_name(name) for name in names) else None


def _could_be_author_line(line: str) -> bool:
    """What rules a line out before it is split into names: empty or too long, sentence words
    (the cheap way to rule out an abstract), a sentence's end, characters no name list holds."""
    if not line or len(line) > 5000 or _PROSE_RE.search(line):
        return False
    if line.endswith((".", ":", "?", "!")) and not _ends_with_initial(line):
        return False
    return not any(ch in line for ch in "·•()[]{}$\\=<>@#%/|")


def _reads_as_name(name: str) -> bool:
    """One to six words, each (but the particles: van, de, al …) a capitalised name token, at
    least one of them."""
    tokens = name.split()
    if not 1 <= len(tokens) <= 6:
        return False
    capitals = 0
    for tok in tokens:
        if tok.casefold() in _PARTICLES:
            continue
        if not _NAME_TOKEN_RE.match(tok) or tok[0].islower():
            return False
        capitals += 1
    return capitals > 0


def _ends_with_initial(line: str) -> bool:
    return bool(_INITIAL_END_RE.search(line[-5:]))


_INITIAL_END_RE = re.compile(r"(?:^|\s)[A-Z]\.$|\bJr\.$")


@dataclass(slots=True)
class _Unit:
    kind: str  # "area", "authors", "text", "odd"
    line: int
    text: str
    area: tuple[str, str, bool] | None = None
    names: list[str] | None = None


def _units(lines: list[str], start: int, path: str, problems: list[Problem]) -> Iterator[_Unit]:
    """Blocks of lines between blank lines, split into classified units."""
    block: list[tuple[int, str]] = []

    def flush() -> Iterator[_Unit]:
        nonlocal block
        i = 0
        # leading short lines of a block may be area/author lines pasted without blank lines
        while i < len(block) - 1:
            no, text = block[i]
            unit = _classify_line(no, text)
            if unit.kind not in ("area", "authors"):
                break
            yield unit
            i += 1
        rest = block[i:]
        if rest:
            no = rest[0][0]
            text = " ".join(t for _, t in rest)
            yield _classify_line(no, text) if len(rest) == 1 else _classify_text(no, text)
        block = []

    for no, raw in enumerate(lines[start:], start + 1):
        text = raw.strip()
        if text:
            block.append((no, text))
        elif block:
            yield from flush()
    if block:
        yield from flush()


def _classify_line(no: int, text: str) -> _Unit:
    area = parse_area(text)
    if area:
        return _Unit("area", no, text, area=area)
    names = split_authors(text) if len(text) <= 5000 else None
    if names:
        return _Unit("authors", no, text, names=names)
    return _classify_text(no, text)


def _classify_text(no: int, text: str) -> _Unit:
    if len(text) > MAX_FIELD_CHARS or len(text.split(None, MIN_ABSTRACT_WORDS)) >= MIN_ABSTRACT_WORDS:
        return _Unit("text", no, text)
    return _Unit("odd", no, text)


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def parse_listing(text: str, path: str) -> ParsedFile:
    """The papers of a paper-search or Daily Papers listing (with or without its header
    line); each line that is none of area, authors or abstract is a problem with its line."""
    lines = text.split("\n")
    fmt, start = _header(lines)
    reader = _Reader(path)
    for unit in _units(lines, start, path, reader.problems):
        reader.read(unit)
    reader.finish()
    if not fmt:
        fmt = "paper-search" if reader.saw_area or any(p.authors for p in reader.papers) else "daily-papers"
    return ParsedFile(path=path, format=fmt, papers=reader.papers, problems=reader.problems)


def _header(lines: list[str]) -> tuple[str, int]:
    """The format the header line names ("" without one) and the index of the first line after it."""
    for i, raw in enumerate(lines):
        if raw.strip():
            fmt = HEADERS.get(raw.strip().casefold(), "")
            return fmt, i + 1 if fmt else i
    return "", 0


class _Reader:
    """The papers of a listing, unit by unit: an area line and an author line wait for the
    abstract they belong to; a line that is none of them is a problem with its line."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.papers: list[Candidate] = []
        self.problems: list[Problem] = []
        self.area: _Unit | None = None
        self.authors: _Unit | None = None
        self.saw_area = False

    def read(self, unit: _Unit) -> None:
        """Take the next unit of the listing."""
        if unit.kind == "area":
            self._area(unit)
        elif unit.kind == "authors":
            self._authors(unit)
        elif unit.kind == "text":
            self._abstract(unit)
        else:
            self._problem(unit.line, f"not an area, author line or abstract, skipped: “{_short(unit.text)}”")

    def _problem(self, line: int, message: str) -> None:
        self.problems.append(Problem(self.path, line, message))

    def _dangling(self, reason: str) -> None:
        """The area and author lines waiting for an abstract are not used: say so."""
        for unit in (self.area, self.authors):
            if unit is not None:
                what = "area" if unit.kind == "area" else "author"
                self._problem(unit.line, f"{what} line “{_short(unit.text)}” {reason}; it was not used")

    def _area(self, unit: _Unit) -> None:
        if self.area is not None or self.authors is not None:
            self._dangling("has no abstract after it")
            self.authors = None
        self.area = unit
        self.saw_area = True
        assert unit.area is not None
        if not unit.area[2]:
            self._problem(unit.line, f"unfamiliar area “{unit.area[0]}”; kept as the paper's area")

    def _authors(self, unit: _Unit) -> None:
        if self.authors is not None:
            self._problem(
                self.authors.line,
                f"author line “{_short(self.authors.text)}” has no abstract after it; it was not used",
            )
        self.authors = unit

    def _abstract(self, unit: _Unit) -> None:
        """A paper: the abstract with the area and author lines before it."""
        area, authors = self.area, self.authors
        self.area = self.authors = None
        abstract = unit.text
        if len(abstract) > MAX_FIELD_CHARS:
            self._problem(
                unit.line, f"a paragraph of {len(abstract):,} characters is too long to be an abstract; skipped"
            )
            return
        cand = Candidate(abstract=abstract, line=(area or authors or unit).line)
        if area is not None and area.area is not None:
            cand.area, cand.subarea = area.area[0], area.area[1]
        if authors is not None and authors.names is not None:
            cand.authors = list(authors.names)
        self.papers.append(cand)

    def finish(self) -> None:
        """The end of the listing: lines still waiting for an abstract, or a last abstract that
        stops mid-sentence, mean it may be cut off."""
        if self.area is not None or self.authors is not None:
            self._dangling("ends the file with no abstract after it (the listing seems cut off)")
        elif self.papers and not _ends_complete(self.papers[-1].abstract):
            self._problem(
                self.papers[-1].line,
                "the last abstract stops mid-sentence; the listing may be cut off (the paper was imported as it is)",
            )


# ---- telling a header-less listing from any other text ------------------------
#
# A listing pasted without its header is read when most of its paragraphs are
# what a listing holds. Each paragraph (lines between blank lines) counts as
# listing-like when it is an area or author line, or reads like an abstract:
# prose of at least MIN_ABSTRACT_WORDS words, mostly letters, no Markdown
# heading, list, quote, table or code-fence line and no indented code, at most
# one inline `code` span, ending like a sentence or holding two sentences.
# Then, by the share of listing-like paragraphs:
#   at least LISTING_SHARE                      a listing: imported as usual;
#   no abstract at all, or below PARTIAL_SHARE  not a listing: refused;
#   in between                                  only partly a listing: imported
#                                               only once the person confirms it.
# The seeds and pasted listings score 0.85-1.0; the README and the design
# notes about 0.2, source files about 0.01.
LISTING_SHARE = 0.6
PARTIAL_SHARE = 0.3
_MARKUP_LINE_RE = re.compile(r"^\s*(?:#|[-*+•]\s|\d+[.)]\s|>|\||```|~~~|[-=]{3,}\s*$)")
_SENTENCE_END_RE = re.compile(r"[.!?](?:\s|$)")


@dataclass(slots=True)
class Sniff:
    """How much of a text reads like a listing: counts of its paragraphs by kind."""

    paragraphs: int
    abstracts: int  # paragraphs that read like abstracts
    fields: int  # area and author lines

    @property
    def share(self) -> float:
        """The part of the paragraphs that are listing-like (0 to 1)."""
        return (self.abstracts + self.fields) / max(1, self.paragraphs)

    @property
    def verdict(self) -> str:
        """'listing', 'partial' or 'none' (see above)."""
        if not self.abstracts or self.share < PARTIAL_SHARE:
            return "none"
        return "listing" if self.share >= LISTING_SHARE else "partial"


def listing_header(text: str) -> str:
    """The format a listing's header line names, or "" when the first line is no header."""
    for raw in text.split("\n", 50):
        if raw.strip():
            return HEADERS.get(raw.strip().lstrip("\ufeff").casefold(), "")
    return ""


def reads_like_abstract(lines: list[str]) -> bool:
    """The paragraph (its lines) is prose the length of an abstract, without Markdown or code (see above)."""
    if any(_MARKUP_LINE_RE.match(line) or line.startswith(("    ", "\t")) for line in lines):
        return False
    text = " ".join(line.strip() for line in lines)
    if len(text.split(None, MIN_ABSTRACT_WORDS)) < MIN_ABSTRACT_WORDS or text.count("`") > 2:
        return False
    if sum(c.isalpha() for c in text) < 0.6 * len(text):
        return False
    return _ends_complete(text) or len(_SENTENCE_END_RE.findall(text)) >= 2


def sniff_listing(text: str) -> Sniff:
    """Count the paragraphs of a header-less text that read like a listing's (see above)."""
    paragraphs = abstracts = fields = 0
    block: list[str] = []
    for raw in text.split("\n") + [""]:
        if raw.strip():
            block.append(raw)
            continue
        if not block:
            continue
        paragraphs += 1
        if reads_like_abstract(block):
            abstracts += 1
        elif len(block) == 1 and (parse_area(block[0]) or split_authors(block[0])):
            fields += 1
        block = []
    return Sniff(paragraphs, abstracts, fields)
