"""BibTeX (.bib) files, with bibtexparser v2.

Real titles come in as real titles (replacing derived ones when the paper is
already here); `@string` macros are resolved; LaTeX in titles, names and
venues is turned into text; the abstract is kept as written (the viewer and
the exporter read its LaTeX). An entry that does not parse is reported with
its line and the others still import. Papershelf's own exports come back
as the same papers: a "Title derived from the abstract" note keeps the title
derived, and keywords come back as tags.
"""

from __future__ import annotations

import logging
import re

from ..paper import TAG_SEPARATOR, split_tags
from ..text import plain_text
from .base import Candidate, ParsedFile, Problem

DERIVED_NOTE = "Title derived from the abstract by Papershelf"
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")
_ARXIV_URL_RE = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s/?#]+?)(?:\.pdf)?(?:[?#]|$)", re.I)


def _text(value: str) -> str:
    """A title, name or venue as one line of plain text."""
    return " ".join(plain_text(value).split())


def split_authors(value: str) -> list[str]:
    """BibTeX author lists: split on top-level " and ", each name as "First Last"."""
    names: list[str] = []
    depth, start = 0, 0
    lowered = value
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and lowered[i : i + 5].lower() == " and ":
            names.append(value[start:i])
            start = i + 5
            i += 4
        i += 1
    names.append(value[start:])
    out = []
    for raw in names:
        raw = raw.strip()
        if not raw or raw.lower() == "others":
            continue
        if raw.startswith("{") and raw.endswith("}") and raw.count("{") == 1:
            out.append(_text(raw))  # {Corporate Name}
            continue
        name = _text(raw)
        parts = _top_level_commas(raw)
        if len(parts) >= 2:  # Last, First  or  Last, Jr, First
            last, first = _text(parts[0]), _text(parts[-1])
            name = f"{first} {last}".strip()
        if name:
            out.append(name)
    return out


def _top_level_commas(value: str) -> list[str]:
    """The value split at the commas outside braces."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(value):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return parts


def _year(value: str) -> int | None:
    m = _YEAR_RE.search(value or "")
    return int(m.group(1)) if m else None


def parse_bib(text: str, path: str) -> ParsedFile:
    """The entries of a BibTeX file as candidates; an entry that does not parse is a
    problem with its line, and the others still import."""
    import bibtexparser

    problems: list[Problem] = []
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # failures are reported below instead
    library = bibtexparser.parse_string(text)
    for block in library.failed_blocks:
        start_line: int | None = getattr(block, "start_line", 0)
        line = (start_line or 0) + 1
        error = getattr(block, "error", None)
        reason = str(error).splitlines()[0] if error and str(error) else "it is not valid BibTeX"
        problems.append(Problem(path, line, f"this entry could not be read ({reason}); it was skipped"))
    papers = []
    for entry in library.entries:
        fields = {
            k.lower(): (f.value if isinstance(f.value, str) else str(f.value)) for k, f in entry.fields_dict.items()
        }
        line = (entry.start_line or 0) + 1
        title = _text(fields.get("title", ""))
        abstract = fields.get("abstract", "").strip()
        note = _text(fields.get("note", ""))
        if DERIVED_NOTE in note:
            title = ""  # ours, derived: derive it again
        if not title and not abstract:
            problems.append(Problem(path, line, f"entry {entry.key!r} has neither a title nor an abstract; skipped"))
            continue
        arxiv = ""
        if fields.get("eprint") and (fields.get("archiveprefix", "") + fields.get("eprinttype", "")).lower() == "arxiv":
            arxiv = fields["eprint"].strip()
        elif m := _ARXIV_URL_RE.search(fields.get("url", "")):
            arxiv = m.group(1)
        # a .bib keyword list is separated by commas or semicolons
        tags = split_tags(_text(fields.get("keywords", "")).replace(";", TAG_SEPARATOR))
        papers.append(
            Candidate(
                abstract=abstract,
                line=line,
                title=title,
                authors=split_authors(fields.get("author", "")),
                year=_year(fields.get("year", "") or fields.get("date", "")),
                venue=_text(fields.get("booktitle") or fields.get("journal") or fields.get("journaltitle") or ""),
                doi=fields.get("doi", "").strip(),
                arxiv_id=arxiv,
                tags=tags,
                citekey=entry.key.strip(),
            )
        )
    if not papers and not problems:
        problems.append(Problem(path, 0, "no BibTeX entries were found in it"))
    return ParsedFile(path=path, format="bibtex", papers=papers, problems=problems)
