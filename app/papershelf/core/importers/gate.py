"""The library's door for records: every importer's candidates (a .bib or .ris file, a
listing, a paste) and every record a service found pass here before they are stored.

A record over a limit of core/limits.py is refused, with a Problem naming its line (or the
service), the field, its size and the limit; the others still import. Control characters
(`limits.strip_controls`) are removed from every value, and a note says which entry and
fields had them: a value is never changed silently.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..limits import (
    MAX_FIELD_CHARS,
    MAX_NAMES,
    MAX_RECORD_CHARS,
    MAX_TITLE_CHARS,
    field_limit,
    has_controls,
    over_limit,
    strip_controls,
)
from .base import Candidate, ParsedFile, Problem

# a candidate's own text values, beside its name lists and records
# (the file's @preamble, which every entry of a .bib file holds, is looked at once, in `admit`)
_TEXT_FIELDS = ("title", "abstract", "area", "subarea", "venue", "doi", "arxiv_id", "citekey", "entrytype")


def _entry(cand: Candidate) -> str:
    return f"entry {cand.citekey!r}" if cand.citekey else "the entry"


def _strings(cand: Candidate) -> Iterator[tuple[str, str, int]]:
    """Every text value of the candidate: (field name as the user knows it, value, its limit)."""
    yield "title", cand.title, MAX_TITLE_CHARS
    yield "abstract", cand.abstract, MAX_FIELD_CHARS
    for name in ("area", "subarea", "venue", "doi", "arxiv_id", "citekey", "entrytype"):
        yield name, getattr(cand, name), MAX_FIELD_CHARS
    yield "preamble", cand.preamble, MAX_FIELD_CHARS
    for name, value in cand.bibfields.items():
        yield name, value, field_limit(name)
    for name, value in cand.ris.items():
        yield f"RIS {name}", value, MAX_RECORD_CHARS


def too_large(cand: Candidate) -> str:
    """Why the record is more than a real paper holds ("" when it is not): the first field
    past its limit, with its size and the limit (`limits.over_limit`)."""
    if len(cand.authors) <= MAX_NAMES and sum(map(len, _values(cand))) <= MAX_FIELD_CHARS:
        # the common case, in C: only a title can be over its limit
        if len(cand.title) <= MAX_TITLE_CHARS and len(cand.bibfields.get("title", "")) <= MAX_TITLE_CHARS:
            return ""
    tags = ("tags", " ".join(cand.tags), MAX_RECORD_CHARS)
    return over_limit([*_strings(cand), tags], cand.authors)


def strip_candidate(cand: Candidate) -> list[str]:
    """Remove control characters from every value of the candidate, in place; the names of the
    fields that had them."""
    if _printable(cand):
        return []
    stripped: list[str] = []
    for name in _TEXT_FIELDS:
        value = getattr(cand, name)
        if has_controls(value):
            setattr(cand, name, strip_controls(value))
            stripped.append(name)
    for attr, label in (("authors", "author"), ("tags", "tags")):
        values = getattr(cand, attr)
        if any(has_controls(v) for v in values):
            setattr(cand, attr, [s for s in (strip_controls(v) for v in values) if s])
            stripped.append(label)
    for attr, prefix in (("bibfields", ""), ("ris", "RIS ")):
        record: dict[str, str] = getattr(cand, attr)
        if any(has_controls(k) or has_controls(v) for k, v in record.items()):
            cleaned: dict[str, str] = {}
            for k, v in record.items():
                if has_controls(k) or has_controls(v):
                    stripped.append(prefix + strip_controls(k))
                cleaned.setdefault(strip_controls(k), strip_controls(v))
            setattr(cand, attr, cleaned)
    return list(dict.fromkeys(stripped))


def _values(cand: Candidate) -> list[str]:
    """Every text of the candidate (the names of its record's fields too)."""
    values = [getattr(cand, name) for name in _TEXT_FIELDS]
    values += cand.authors
    values += cand.tags
    for record in (cand.bibfields, cand.ris):
        values += record
        values += record.values()
    return values


def _printable(cand: Candidate) -> bool:
    """Whether no value of the candidate can hold a control character: `str.isprintable` over
    them all at once, at C speed (tab and newline taken out; a value it doubts, such as one
    with a no-break space, is then looked at with `limits.has_controls`)."""
    text = "".join(_values(cand))
    if text.isascii():  # the common case: bytes.translate, a byte at a time in C
        data = text.encode("ascii")
        return len(data.translate(None, _ASCII_CONTROLS)) == len(data)
    return text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()


# the control characters of limits.has_controls that ASCII has (tab and newline are text)
_ASCII_CONTROLS = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])


def admit(parsed: ParsedFile) -> ParsedFile:
    """The parsed file with every record over a limit refused and control characters removed,
    each told as a Problem."""
    papers: list[Candidate] = []
    problems = list(parsed.problems)
    preambles: dict[str, str] = {}  # the file's @preamble → without control characters
    for cand in parsed.papers:
        what = "the record found" if parsed.format == "online" else _entry(cand)
        if why := too_large(cand):
            problems.append(Problem(parsed.path, cand.line, f"{what} was not imported: {why}"))
            continue
        if cand.preamble:  # the file's, not the entry's: told once
            clean = preambles.get(cand.preamble)
            if clean is None:
                clean = preambles[cand.preamble] = strip_controls(cand.preamble)
                if clean != cand.preamble:
                    problems.append(
                        Problem(
                            parsed.path,
                            0,
                            "control characters (such as terminal escapes or NUL) were removed from "
                            "the file's @preamble",
                            note=True,
                        )
                    )
            cand.preamble = clean
        if stripped := strip_candidate(cand):
            problems.append(
                Problem(
                    parsed.path,
                    cand.line,
                    f"{what}: control characters (such as terminal escapes or NUL) were removed "
                    f"from {', '.join(stripped)}",
                    note=True,
                )
            )
        papers.append(cand)
    if len(papers) == len(parsed.papers) and len(problems) == len(parsed.problems):
        return parsed
    return ParsedFile(path=parsed.path, format=parsed.format, papers=papers, problems=problems)
