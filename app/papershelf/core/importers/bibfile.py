"""BibTeX (.bib) files, with bibtexparser v2, read the way BibTeX reads them.

Each entry keeps its whole record (see BIBLIOGRAPHIC RECORD in paper.py): its type, every
field as its value expression was written (the file's @string macros put in; month macros
and macros the file does not define stay bare), and the file's @preamble. The display
fields (title, authors, year, venue, DOI, arXiv id, tags) are the reader's text derived
from it by `core.biblio.latex`, with `crossref`/`xdata` resolved within the file, so a child
shows the year and venue of its parent and a child whose title comes from its parent
imports. As BibTeX does: an entry without a key imports (the library gives it one), a
field given twice keeps its first value (with a note), `@comment` is not bibliography.
The abstract is kept as written (the viewer and the exporter read its LaTeX). An entry
that does not parse is reported with its line and the others still import. Papershelf's
own exports come back as the same papers: a "Title derived from the abstract" note keeps
the title derived. Keywords stay the record's keywords (the tags an export wrote among
them included); they become tags only when the import is asked to (`keywords_as_tags`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..biblio.identifiers import ARXIV_URL_RE, clean_doi
from ..biblio.latex import decode, piece_text, pieces
from ..biblio.names import parse_names
from ..biblio.types import IN_TYPES, venue_raw
from ..limits import MAX_INHERITED_FILE_CHARS, MAX_MACRO_FILE_CHARS, MAX_MACRO_VALUE_CHARS
from ..titles import DERIVED_NOTE
from .base import Candidate, ParsedFile, Problem

_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|2\d\d\d)\b")
_MACRO_RE = re.compile(r"[^\d\s\"#%'(),={}][^\s\"#%'(),={}]*")

# Fields a child never takes from its parent: they name the parent, or only the parent itself.
_NOT_INHERITED = frozenset({"crossref", "xdata", "ids", "entryset", "related", "key", "label", "shorthand", "sortkey"})
# how deep crossref/xdata chains are followed (biber follows chains; BibTeX only one level)
_MAX_INHERITANCE_DEPTH = 8
# the fields a child's shown values are read from (title, names, year, venue, note): what it
# takes of these from its parents counts against the file's limit for inherited text
_SHOWN_FIELDS = frozenset(
    {"title", "author", "year", "date", "booktitle", "journal", "journaltitle", "howpublished", "note"}
)


def year_in(value: str) -> int | None:
    """The first year (1500-2999) the text names, or None."""
    m = _YEAR_RE.search(value or "")
    return int(m.group(1)) if m else None


class MacroError(ValueError):
    """A value whose macros cannot be put in: it would grow past a limit, or uses a refused macro
    (`why`: the limit that refused it, first of all)."""

    def __init__(self, message: str, why: str = "") -> None:
        super().__init__(message)
        self.why = why or message


class Macros:
    """A file's @string macros, put into values the way BibTeX does (`j1 # { x }` → `{Journal } # { x }`);
    numbers, delimited strings and macros the file does not define (month names) stay as written.

    A macro bomb (`@string{s1 = s0 # s0}`, doubled again and again) is refused before it is built:
    the length of each value is added up from its parts before they are joined, against the limit
    for one value and for everything one file's macros put in (core/limits.py)."""

    def __init__(self, budget: int = MAX_MACRO_FILE_CHARS) -> None:
        self.budget = budget  # what the file's macros may put in: the file limit beyond its own size
        self.values: dict[str, str] = {}  # BibTeX's macro names are case-insensitive
        self.refused: dict[str, tuple[int, str]] = {}  # a macro refused → its line, and why
        self.spent = 0  # characters the file's macros have put in so far

    def define(self, name: str, raw: str, line: int) -> None:
        """Define (or define again: the later wins) a macro; MacroError if its value is refused,
        and then entries that use it are refused too."""
        name = name.strip().lower()
        try:
            value = self.resolve(raw)  # with the macro's own earlier value, as BibTeX does
        except MacroError as exc:
            self.values.pop(name, None)
            self.refused[name] = (line, exc.why)
            raise
        self.refused.pop(name, None)
        self.values[name] = value

    def resolve(self, raw: str) -> str:
        """The value expression with the macros put in; MacroError past a limit."""
        if not (self.values or self.refused) or (raw[:1] in '{"' and "#" not in raw):
            return raw
        parts = pieces(raw)
        out: list[str] = []
        size = 3 * (len(parts) - 1)  # the " # " between parts
        changed = False
        for part in parts:
            value = part
            if _MACRO_RE.fullmatch(part):
                name = part.lower()
                if name in self.refused:
                    line, why = self.refused[name]
                    raise MacroError(f"it uses the macro {part!r}, refused at line {line} ({why})", why)
                if name in self.values:
                    value, changed = self.values[name], True
            size += len(value)
            if size > MAX_MACRO_VALUE_CHARS:
                raise MacroError(
                    f"its macros would make it longer than {MAX_MACRO_VALUE_CHARS:,} characters, "
                    "the limit for one value"
                )
            out.append(value)
        if not changed:
            return raw
        if self.spent + size > self.budget:
            raise MacroError(
                f"the file's macros would put in more than {MAX_MACRO_FILE_CHARS:,} characters beyond the "
                "file's own size, the limit for one file"
            )
        self.spent += size
        return " # ".join(out)


def _raw_text(raw: str) -> str:
    """A value's LaTeX without its delimiters (the abstract is kept as LaTeX)."""
    return "".join(piece_text(p) for p in pieces(raw)).strip()


# How much of a file bibtexparser is given at once: a piece ends where a block starts. The
# whole file at once held every block of it with its raw text and the text copied (1.5 GB
# for 100,000 entries); a piece's blocks are read into records and let go
PIECE_CHARS = 1 << 21
# where a block starts as bibtexparser's splitter sees it (see `_pieces`)
_BLOCK_START_RE = re.compile(r"\n[^\S\n]*(@\w*[ \t]*[{(])")


class _Entry:
    """An entry as read from its piece, all that is kept of it until every @string of the file
    is known: its key, type (lower case), line in the whole file, and its fields by name (lower
    case) in the file's order, values as written; an entry giving a field twice keeps the list of
    (name, value, line) instead, so that the note on the second value is told where BibTeX would."""

    __slots__ = ("entrytype", "fields", "key", "line")

    def __init__(self, key: str, entrytype: str, line: int, fields: dict[str, str] | list[tuple[str, str, int]]):
        self.key = key
        self.entrytype = entrytype
        self.line = line
        self.fields = fields


def _pieces(text: str, size: int) -> Iterator[tuple[int, str]]:
    """The text in pieces of about `size` characters or more, each with the number of lines
    before it; a piece ends just before a block starts, where bibtexparser's splitter always
    starts a new block: an `@type{` or `@type(` at the start of a line (after blanks). There it
    ends any block still open (an unclosed brace or quote), an `@` inside a line (an e-mail, `@`
    in a title) does not, so the pieces parse into the blocks the whole text does. A block
    larger than `size` is one piece."""
    start, line = 0, 0
    while start < len(text):
        m = _BLOCK_START_RE.search(text, start + size) if start + size < len(text) else None
        end = m.start(1) if m else len(text)
        yield line, text[start:end]
        line += text.count("\n", start, end)
        start = end


def parse_bib(text: str, path: str, piece_chars: int = PIECE_CHARS) -> ParsedFile:
    """The entries of a BibTeX file as candidates, each with its full record; an entry that
    does not parse is a problem with its line, and the others still import.

    bibtexparser reads the file a piece at a time (`_pieces`); what each piece holds is kept
    as `_Entry`s, its @string macros defined and its @preamble kept. The entries' values get
    their macros once the whole file is read, as they did when it was parsed whole (a macro
    defined after the entry that uses it is put in), and crossref/xdata parents are looked
    up among all of them (a parent may come after its child)."""
    import bibtexparser

    problems: list[Problem] = []
    logging.getLogger("bibtexparser").setLevel(logging.CRITICAL)  # failures are reported below instead
    # a large real file puts in more than a small bomb may (100,000 entries naming their journal,
    # publisher and its address by macros: some 16,000,000 characters): the file's own size is added
    macros = Macros(MAX_MACRO_FILE_CHARS + len(text))
    preambles: list[str] = []
    entries: list[_Entry] = []
    for lines_before, piece in _pieces(text, piece_chars):
        # no middleware: the values stay the expressions the file wrote ({...}, "...", macros, #)
        library = bibtexparser.parse_string(piece, parse_stack=[])
        _blocks(library.blocks, _line_map(piece, lines_before), macros, path, problems, preambles, entries)
        del library, piece
    preamble = _preamble(preambles, macros, path, problems)
    records, by_key = _records(entries, macros, path, problems)
    del entries
    # what children take from their crossref/xdata parents: a parent's long author list shared
    # by thousands of one-line children would be copied into each of them (a bomb like the
    # macros'); the file may put in MAX_INHERITED_FILE_CHARS beyond its own size
    papers = _candidates(records, by_key, preamble, MAX_INHERITED_FILE_CHARS + len(text), path, problems)
    if not papers and not problems:
        problems.append(Problem(path, 0, "no BibTeX entries were found in it"))
    return ParsedFile(path=path, format="bibtex", papers=papers, problems=problems)


def _line_map(piece: str, lines_before: int) -> Callable[[int], int]:
    """bibtexparser's line of a block or field in `piece` -> its line in the whole file (0-based).

    bibtexparser does not count a newline that follows a backslash (its marks are "not after a
    backslash", the newline too): every line ending in LaTeX's line break put the lines after it
    one too low. Its Nth counted newline is this piece's `mapped[N]`th real one."""
    if "\\\n" not in piece:
        return lambda line: line + lines_before
    mapped = [0]
    real = 0
    for m in re.finditer("\n", piece):
        real += 1
        if m.start() == 0 or piece[m.start() - 1] != "\\":
            mapped.append(real)

    def where(line: int) -> int:
        return lines_before + mapped[min(max(line, 0), len(mapped) - 1)]

    return where


def _blocks(
    blocks: list[Any],
    where: Callable[[int], int],
    macros: Macros,
    path: str,
    problems: list[Problem],
    preambles: list[str],
    entries: list[_Entry],
) -> None:
    """A piece's blocks read in order (`where` gives a piece's line in the whole file):
    its @string macros defined (into `macros`), its @preamble values and its entries kept (into
    `preambles` and `entries`); a block that does not parse is a problem. @comment and text
    between entries are not bibliography."""
    from bibtexparser import model

    for block in blocks:
        if isinstance(block, model.DuplicateBlockKeyBlock):
            # a macro defined again (concatenated files repeat their abbreviations): the later wins;
            # a key used twice: the library reports the clash and gives the paper another key
            block = block.ignore_error_block
        line = where(block.start_line or 0) + 1
        if isinstance(block, model.String):
            _define(block, line, macros, path, problems)
        elif isinstance(block, model.Preamble):
            preambles.append(block.value.strip())
        elif isinstance(block, model.Entry):
            entries.append(_entry(block, where))
        elif isinstance(block, model.DuplicateFieldKeyBlock):
            # a field given twice (first wins, below): the entry is read whole all the same
            entries.append(_entry(block.ignore_error_block, where))
        elif isinstance(block, model.ParsingFailedBlock):
            error = block.error
            reason = str(error).splitlines()[0] if error and str(error) else "it is not valid BibTeX"
            problems.append(Problem(path, line, f"this entry could not be read ({reason}); it was skipped"))


def _entry(entry: Any, where: Callable[[int], int]) -> _Entry:
    """What is kept of a bibtexparser entry (its raw text and field objects are not)."""
    fields: dict[str, str] = {}
    for f in entry.fields:
        name = f.key.strip().lower()
        if name in fields:  # given twice: every field with its line, for the note
            start = entry.start_line or 0
            listed = [(g.key.strip().lower(), _value(g), where(g.start_line or start)) for g in entry.fields]
            return _Entry(entry.key.strip(), entry.entry_type.strip().lower(), where(start), listed)
        fields[name] = _value(f)
    return _Entry(entry.key.strip(), entry.entry_type.strip().lower(), where(entry.start_line or 0), fields)


def _value(f: Any) -> str:
    return (f.value if isinstance(f.value, str) else str(f.value)).strip()


def _define(block: Any, line: int, macros: Macros, path: str, problems: list[Problem]) -> None:
    """Define an @string macro (at `line` of the file); one refused is a problem (and the entries
    using it are not imported)."""
    try:
        macros.define(block.key, block.value.strip(), line)
    except MacroError as exc:
        problems.append(
            Problem(
                path,
                line,
                f"the @string macro {block.key.strip()!r} was not defined: {exc}; entries that use it are not imported",
            )
        )


def _preamble(preambles: list[str], macros: Macros, path: str, problems: list[Problem]) -> str:
    """The file's @preamble values, macros put in, as one value; one refused is left out (a problem)."""
    resolved: list[str] = []
    for value in preambles:
        try:
            resolved.append(macros.resolve(value))
        except MacroError as exc:
            problems.append(Problem(path, 0, f"the file's @preamble was left out: {exc}"))
    return " # ".join(p for p in resolved if p)


def _records(
    entries: list[_Entry], macros: Macros, path: str, problems: list[Problem]
) -> tuple[list[tuple[_Entry, dict[str, str]]], dict[str, dict[str, str]]]:
    """Each entry with its fields (an entry whose macros are refused is a problem and left
    out), and the fields by key (the first entry of a key), for crossref and xdata."""
    records: list[tuple[_Entry, dict[str, str]]] = []
    by_key: dict[str, dict[str, str]] = {}
    for entry in entries:
        try:
            fields = _fields(entry, macros, path, problems)
        except MacroError as exc:
            problems.append(Problem(path, entry.line + 1, str(exc)))
            continue
        records.append((entry, fields))
        by_key.setdefault(entry.key.lower(), fields)
    return records, by_key


def _candidates(
    records: list[tuple[_Entry, dict[str, str]]],
    by_key: Mapping[str, dict[str, str]],
    preamble: str,
    inherit_budget: int,
    path: str,
    problems: list[Problem],
) -> list[Candidate]:
    """The paper of each entry, with what it inherits; an entry whose inherited text would
    pass the file's budget (`inherit_budget` characters) is a problem and not imported."""
    papers = []
    for entry, fields in records:
        line, entrytype = entry.line + 1, entry.entrytype
        shown = _inherited(entrytype, fields, by_key)
        if shown is not fields:
            taken = sum(len(v) for k, v in shown.items() if k in _SHOWN_FIELDS and fields.get(k) is not v)
            if taken > inherit_budget:
                problems.append(
                    Problem(
                        path,
                        line,
                        f"entry {entry.key!r} was not imported: what it takes from its crossref or "
                        f"xdata entries would put in more than {MAX_INHERITED_FILE_CHARS:,} characters beyond "
                        "the file's own size, the limit for one file",
                    )
                )
                continue
            inherit_budget -= taken
        cand = _candidate(entry.key, line, entrytype, fields, shown, preamble)
        if not cand.title and not cand.abstract and DERIVED_NOTE not in decode(shown.get("note", "")):
            # kept, as BibTeX keeps it, but the list will show "Untitled paper": say which entry that is
            problems.append(
                Problem(
                    path,
                    line,
                    f"entry {entry.key!r} has neither a title nor an abstract; "
                    "it was imported as an untitled paper with the fields it has",
                    note=True,
                )
            )
        papers.append(cand)
    return papers


def _fields(entry: _Entry, macros: Macros, path: str, problems: list[Problem]) -> dict[str, str]:
    """Every field of the entry, name lower case, in the file's order, macros put in; a field
    given twice keeps its first value, as BibTeX does, and the user is told. MacroError, saying
    which entry and field, when a field's macros are refused (the entry is not imported)."""
    if isinstance(entry.fields, dict):  # each field once (nearly every entry): its values put in where they are
        fields = entry.fields
        for name, value in fields.items():
            fields[name] = _resolved(entry, name, value, macros)
        return fields
    fields = {}
    for name, value, line in entry.fields:
        if name in fields:
            problems.append(
                Problem(
                    path,
                    line + 1,
                    f"entry {entry.key!r} gives the field '{name}' again; "
                    "the first value was kept (as BibTeX does) and this one ignored",
                    note=True,
                )
            )
            continue
        fields[name] = _resolved(entry, name, value, macros)
    return fields


def _resolved(entry: _Entry, name: str, value: str, macros: Macros) -> str:
    """A field's value with its macros put in; MacroError naming the entry and field."""
    try:
        return macros.resolve(value)
    except MacroError as exc:
        told = f"entry {entry.key!r} was not imported: its field {name!r}: {exc}"
        raise MacroError(told, exc.why) from None


def _inherited(entrytype: str, fields: dict[str, str], by_key: Mapping[str, dict[str, str]]) -> Mapping[str, str]:
    """The fields as the reader sees them: the entry's own, and what it lacks taken from its
    `xdata` and `crossref` entries in the same file: every field it lacks, as BibTeX does (so a
    child without a title shows its parent's), and, as biber does, the parent's title as the
    booktitle of a child in it. The record itself keeps only the entry's own fields."""
    if "crossref" not in fields and "xdata" not in fields:
        return fields
    shown = dict(fields)
    for parent in _parents(fields, by_key, set(), 0):
        for name, value in parent.items():
            if name not in _NOT_INHERITED:
                shown.setdefault(name, value)
        if entrytype in IN_TYPES and "title" in parent and "booktitle" not in shown:
            shown["booktitle"] = parent["title"]
    return shown


def _parents(
    fields: Mapping[str, str], by_key: Mapping[str, dict[str, str]], seen: set[str], depth: int
) -> Iterator[dict[str, str]]:
    """The entries this one inherits from, nearest first: its xdata entries, then its crossref
    parent, each followed by what they inherit in turn (cycles and long chains cut)."""
    if depth >= _MAX_INHERITANCE_DEPTH:
        return
    keys = [k.strip().lower() for k in _raw_text(fields.get("xdata", "")).split(",") if k.strip()]
    keys.append(_raw_text(fields.get("crossref", "")).lower())
    for key in keys:
        parent = by_key.get(key)
        if not key or parent is None or key in seen:
            continue
        seen.add(key)
        yield parent
        yield from _parents(parent, by_key, seen, depth + 1)


def _candidate(
    citekey: str, line: int, entrytype: str, fields: dict[str, str], shown: Mapping[str, str], preamble: str
) -> Candidate:
    """The paper an entry makes. An entry may have neither a title nor an abstract (BibTeX's
    @misc needs no field at all): it imports all the same, and the library names it."""
    title = decode(shown.get("title", ""))
    # what identifies the work and what is about it is the entry's own, never its parent's: the
    # children of one proceedings share its DOI, and are different papers
    abstract = _raw_text(fields.get("abstract", ""))
    if decode(fields.get("note", "")).strip() == DERIVED_NOTE:
        title = ""  # ours, derived: derive it again
        fields = {k: v for k, v in fields.items() if k != "note"}  # and the note is not the record's
    arxiv = ""
    eprint = decode(fields.get("eprint", ""))
    if eprint.isdigit() and len(eprint) == 7 and fields.get("primaryclass"):
        eprint = f"{decode(fields['primaryclass'])}/{eprint}"  # an old-style id split in two (Mendeley)
    if fields.get("arxivid"):  # Mendeley's own field, the whole id
        arxiv = decode(fields["arxivid"])
    elif eprint and decode(fields.get("archiveprefix", "") or fields.get("eprinttype", "")).lower() == "arxiv":
        arxiv = eprint
    elif m := ARXIV_URL_RE.search(_raw_text(fields.get("url", ""))):
        arxiv = m.group(1)
    names, _others = parse_names(shown.get("author", ""))
    return Candidate(
        abstract=abstract,
        line=line,
        title=title,
        authors=[a for a in (n.display() for n in names) if a],
        year=year_in(decode(shown.get("year", "") or shown.get("date", ""))),
        venue=decode(venue_raw(entrytype, shown)),
        doi=clean_doi(decode(fields.get("doi", ""))),
        arxiv_id=arxiv,
        citekey=citekey,
        entrytype=entrytype,
        bibfields=fields,
        preamble=preamble,
    )
