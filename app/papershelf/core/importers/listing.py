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
    if not line or len(line) > 5000 or _PROSE_RE.search(line):
        return None  # sentence words: the cheap way to rule out an abstract
    if line.endswith((".", ":", "?", "!")) and not _ends_with_initial(line):
        return None
    if any(ch in line for ch in "·•()[]{}$\\=<>@#%/|"):
        return None
    parts = [p.strip() for p in re.split(r",|;|\band\b|&", line)]
    names = [p for p in parts if p]
    if not names:
        return None
    if len(names) == 1 and len(names[0].split()) < 2:
        return None  # one word: a name alone is too ambiguous ("Optimization")
    for name in names:
        tokens = name.split()
        if not 1 <= len(tokens) <= 6:
            return None
        capitals = 0
        for tok in tokens:
            if tok.casefold() in _PARTICLES:
                continue
            if not _NAME_TOKEN_RE.match(tok):
                return None
            if tok[0].islower():
                return None
            capitals += 1
        if capitals == 0:
            return None
    return names


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
    problems: list[Problem] = []
    fmt = ""
    start = 0
    for i, raw in enumerate(lines):
        if raw.strip():
            fmt = HEADERS.get(raw.strip().casefold(), "")
            start = i + 1 if fmt else i
            break

    papers: list[Candidate] = []
    area: _Unit | None = None
    authors: _Unit | None = None
    saw_area = False

    def dangling(reason: str) -> None:
        for unit in (area, authors):
            if unit is not None:
                what = "area" if unit.kind == "area" else "author"
                problems.append(
                    Problem(path, unit.line, f"{what} line “{_short(unit.text)}” {reason}; it was not used")
                )

    for unit in _units(lines, start, path, problems):
        if unit.kind == "area":
            if area is not None or authors is not None:
                dangling("has no abstract after it")
                authors = None
            area = unit
            saw_area = True
            assert unit.area is not None
            if not unit.area[2]:
                problems.append(Problem(path, unit.line, f"unfamiliar area “{unit.area[0]}”; kept as the paper's area"))
        elif unit.kind == "authors":
            if authors is not None:
                problems.append(
                    Problem(
                        path,
                        authors.line,
                        f"author line “{_short(authors.text)}” has no abstract after it; it was not used",
                    )
                )
            authors = unit
        elif unit.kind == "text":
            abstract = unit.text
            if len(abstract) > MAX_FIELD_CHARS:
                problems.append(
                    Problem(
                        path,
                        unit.line,
                        f"a paragraph of {len(abstract):,} characters is too long to be an abstract; skipped",
                    )
                )
                area = authors = None
                continue
            first = area or authors or unit
            cand = Candidate(abstract=abstract, line=first.line)
            if area is not None and area.area is not None:
                cand.area, cand.subarea = area.area[0], area.area[1]
            if authors is not None and authors.names is not None:
                cand.authors = list(authors.names)
            papers.append(cand)
            area = authors = None
        else:
            problems.append(
                Problem(path, unit.line, f"not an area, author line or abstract, skipped: “{_short(unit.text)}”")
            )
    if area is not None or authors is not None:
        dangling("ends the file with no abstract after it (the listing seems cut off)")
    elif papers and not _ends_complete(papers[-1].abstract):
        problems.append(
            Problem(
                path,
                papers[-1].line,
                "the last abstract stops mid-sentence; the listing may be cut off (the paper was imported as it is)",
            )
        )
    if not fmt:
        fmt = "paper-search" if saw_area or any(p.authors for p in papers) else "daily-papers"
    return ParsedFile(path=path, format=fmt, papers=papers, problems=problems)


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
