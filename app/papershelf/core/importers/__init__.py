"""Importers, one module per input format, and the sniffing that picks one."""

from __future__ import annotations

from pathlib import Path


from .base import Candidate, ParsedFile, Problem, decode_text, read_text
from .bibfile import parse_bib, parse_ris
from .listing import parse_listing
from ..text import clean_text

__all__ = ["Candidate", "ParsedFile", "Problem", "PASTE_LABEL", "parse_bytes", "parse_file", "parse_text"]

# The source name of text that came from a paste rather than a file.
PASTE_LABEL = "<pasted text>"


def parse_text(text: str, path: str) -> ParsedFile:
    """Parse already-decoded text (a paste, or a file's contents)."""
    head = text.lstrip("\ufeff \t\r\n")[:200]
    suffix = Path(path).suffix.lower()
    if suffix == ".ris" or head.startswith("TY  -"):
        return parse_ris(text, path)
    if suffix == ".bib" or head.startswith("@") or head.startswith("%") and "\n@" in text[:5000]:
        return parse_bib(text, path)
    return parse_listing(text, path)


def parse_bytes(data: bytes, label: str = PASTE_LABEL) -> ParsedFile:
    """Parse a paste (clipboard, standard input) in whatever encoding it came."""
    text, notes = decode_text(data, label)
    parsed = parse_text(text, label)
    parsed.problems[:0] = notes
    return parsed


def parse_file(path: Path | str) -> ParsedFile:
    """Read and parse one file; ListingError if it cannot be imported at all."""
    path = Path(path)
    text, notes = read_text(path)
    parsed = parse_text(text, clean_text(str(path)))
    parsed.problems[:0] = notes
    return parsed
