"""RIS (.ris) files: the records of reference managers' RIS export."""

from __future__ import annotations

import re

from .base import Candidate, ParsedFile, Problem
from .bibfile import _ARXIV_URL_RE, _text, _year

_RIS_LINE_RE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")


def parse_ris(text: str, path: str) -> ParsedFile:
    """The records of a RIS file as candidates; a line that is not RIS, or a record
    without title and abstract, is a problem with its line."""
    problems: list[Problem] = []
    papers: list[Candidate] = []
    # tag -> values, each value as its wrapped lines (joined once, at the end:
    # adding each line to a growing string is quadratic in long abstracts)
    record: dict[str, list[list[str]]] | None = None
    start = 0
    last_tag = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _RIS_LINE_RE.match(line)
        if not m:
            if record is not None and last_tag:  # a wrapped value goes on
                record[last_tag][-1].append(line.strip())
            else:
                problems.append(Problem(path, n, f"not a RIS line: {line.strip()[:60]!r}; skipped"))
            continue
        tag, value = m.group(1), (m.group(2) or "").strip()
        if tag == "TY":
            if record is not None:
                problems.append(Problem(path, start, "a record without its closing ER line; imported anyway"))
                _ris_paper(record, start, path, papers, problems)
            record, start, last_tag = {}, n, ""
            continue
        if record is None:
            problems.append(Problem(path, n, f"{tag} line outside a record (no TY line before it); skipped"))
            continue
        if tag == "ER":
            _ris_paper(record, start, path, papers, problems)
            record, last_tag = None, ""
            continue
        record.setdefault(tag, []).append([value])
        last_tag = tag
    if record is not None:
        problems.append(Problem(path, start, "the last record has no closing ER line; imported anyway"))
        _ris_paper(record, start, path, papers, problems)
    if not papers and not problems:
        problems.append(Problem(path, 0, "no RIS records were found in it"))
    return ParsedFile(path=path, format="ris", papers=papers, problems=problems)


def _ris_paper(
    lines: dict[str, list[list[str]]], line: int, path: str, papers: list[Candidate], problems: list[Problem]
) -> None:
    """Add the paper of one RIS record to `papers`, or say in `problems` why it has none."""
    rec = {tag: [" ".join(parts) for parts in values] for tag, values in lines.items()}

    def first(*tags: str) -> str:
        for t in tags:
            if rec.get(t):
                return rec[t][0]
        return ""

    title = _text(first("TI", "T1", "CT"))
    abstract = first("AB", "N2").strip()
    if not title and not abstract:
        problems.append(Problem(path, line, "a record with neither a title (TI) nor an abstract (AB); skipped"))
        return
    authors = []
    for name in rec.get("AU", []) + rec.get("A1", []):
        parts = [p.strip() for p in name.split(",")]
        authors.append(f"{parts[1]} {parts[0]}".strip() if len(parts) >= 2 else name.strip())
    url = first("UR")
    m = _ARXIV_URL_RE.search(url)
    papers.append(
        Candidate(
            abstract=abstract,
            line=line,
            title=title,
            authors=[a for a in authors if a],
            year=_year(first("PY", "Y1", "DA")),
            venue=_text(first("T2", "JO", "JF", "BT", "JA")),
            doi=first("DO"),
            arxiv_id=m.group(1) if m else "",
            tags=[k for k in rec.get("KW", []) if k],
        )
    )
