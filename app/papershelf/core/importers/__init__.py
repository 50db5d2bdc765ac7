"""Importers, one module per input format, and the sniffing that picks one."""

from __future__ import annotations

from pathlib import Path

from ..errors import NotAListingError, UncertainListingError
from ..text import clean_text
from .base import Candidate, ParsedFile, Problem, decode_text, read_text
from .bibfile import parse_bib
from .listing import listing_header, parse_listing, sniff_listing
from .ris import parse_ris

__all__ = ["PASTE_LABEL", "Candidate", "ParsedFile", "Problem", "parse_bytes", "parse_file", "parse_text"]

# The source name of text that came from a paste rather than a file.
PASTE_LABEL = "<pasted text>"


# What the refusal of other text says is read.
FORMATS_READ = (
    "paper-search listings (first line 论文检索), Daily Papers listings (first line "
    "Daily Papers), either one pasted without its first line, BibTeX (.bib) and RIS (.ris) files"
)


def parse_text(text: str, path: str, as_listing: bool = False) -> ParsedFile:
    """Parse already-decoded text (a paste, or a file's contents).

    Text with no listing header, BibTeX or RIS structure is read as a listing
    only when it looks like one (see listing.sniff_listing): otherwise
    NotAListingError, or UncertainListingError when it partly does.
    `as_listing` reads such text as a listing whatever the sniffing says;
    BibTeX and RIS are still read as BibTeX and RIS.
    """
    if "\r" in text:  # line ends as a file's are read (a carriage return is no control character here)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    head = text.lstrip("\ufeff \t\r\n")[:200]
    suffix = Path(path).suffix.lower()
    if suffix == ".ris" or head.startswith("TY  -"):
        return parse_ris(text, path)
    if suffix == ".bib" or head.startswith("@") or (head.startswith("%") and "\n@" in text[:5000]):
        return parse_bib(text, path)
    if not as_listing:
        if not listing_header(text):
            sniff = sniff_listing(text)
            verdict = sniff.verdict
            counts = (
                f"{sniff.abstracts + sniff.fields} of its {sniff.paragraphs} paragraphs read like "
                "abstracts, area or author lines"
            )
            if verdict == "none":
                why = "no paragraph reads like an abstract" if not sniff.abstracts else "only " + counts
                raise NotAListingError(
                    f"{path} does not look like a list of papers ({why}), "
                    f"so nothing was imported from it. Papershelf reads {FORMATS_READ}.",
                    path,
                )
            if verdict == "partial":
                parsed = parse_listing(text, path)
                raise UncertainListingError(
                    f"{path} only partly looks like a paper listing ({counts}) and has no listing header, "
                    f"so nothing was imported from it; if it is one, import it as a listing "
                    f"('papershelf import --as listing', or Import in the window's preview).",
                    path,
                    parsed,
                )
    return parse_listing(text, path)


def parse_bytes(data: bytes, label: str = PASTE_LABEL, as_listing: bool = False) -> ParsedFile:
    """Parse a paste (clipboard, standard input) in whatever encoding it came."""
    text, notes = decode_text(data, label)
    parsed = parse_text(text, label, as_listing)
    parsed.problems[:0] = notes
    return parsed


def parse_file(path: Path | str, as_listing: bool = False) -> ParsedFile:
    """Read and parse one file; ListingError if it cannot be imported at all."""
    path = Path(path)
    text, notes = read_text(path)
    parsed = parse_text(text, clean_text(str(path)), as_listing)
    parsed.problems[:0] = notes
    return parsed
