"""BibTeX and BibLaTeX export that compiles without hand repair.

Two dialects:

* ``bibtex``: pure ASCII, for classic BibTeX (and pdfLaTeX): accents as
  ``{\\"u}``-style commands, Greek and math symbols as math, LaTeX specials
  escaped; BibLaTeX's types and field names written as classic BibTeX's;
* ``biblatex``: UTF-8 for biber; Latin letters stay as they are, everything
  pdfLaTeX cannot typeset is handled as in ``bibtex``; BibTeX's types and
  field names written as BibLaTeX's (biber's own driver source map).

A paper with a bibliographic record (from a .bib or .ris file) is written
as it came: its type and every field, each value exactly as the file wrote
it (only renamed by the dialect's map, see bibmaps.py; in ``bibtex`` its
characters outside ASCII spelt as LaTeX with pylatexenc's table). What the
reader changed is written from the paper: a display field whose raw fields
an edit dropped, and the tags (as ``keywords``). A crossref's parent comes
after the entries that name it, and each file's ``@preamble`` once at the top.

A paper from a listing has no record: it goes out as ``@misc`` (or
``@inproceedings`` with a venue and a year). Abstracts arrive as pasted from
web pages: a mix of LaTeX, Markdown and bare specials. Text is taken as the
reader sees it (``plain_text`` rules: markup removed, macros to Unicode) and
then escaped, so nothing in an abstract can end its field or start another
entry. Math in ``$…$`` is kept as math when it only uses what base LaTeX
knows; otherwise it becomes text. Characters with no LaTeX form under
pdfLaTeX (CJK, emoji) are written as ``?`` and counted in the report: the
library keeps the originals.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..biblio.latex import decode
from ..biblio.latex_writer import LatexWriter, math_latex
from ..biblio.names import from_display
from ..biblio.types import VENUE_FIELD, verbatim_value
from ..citation import record_keywords
from ..paper import RAW_SOURCES, Paper, join_tags, normalize_tag
from ..render import plain_text
from ..titles import DERIVED_NOTE
from .bibmaps import to_dialect, value_text
from .controls import controls_note, unpinned_note, without_controls
from .crossrefs import export_order

if TYPE_CHECKING:
    from .entrycache import EntryCache

_MARKUP_RE = re.compile(r"[\\{}$*_`\[~-]")
# $5 and $10 is money, not math: math opens on a non-space and does not close right before a digit
_EXPORT_MATH_RE = re.compile(r"(?<!\\)\$(?!\s)([^$]+?)(?<![\s\\])\$(?!\d)")
# a word with a capital after its first letter; "[a-z]*[A-Z][a-z]*[A-Z0-9]" accepts what
# "[A-Za-z]*[A-Z][A-Za-z0-9]*[A-Z0-9]" did, but a word that fails (a run of capitals
# followed by "_" or "}") backtracks in linear time, not cubic
_PROTECT_RE = re.compile(
    r"(?<![\w{])([a-z]*[A-Z][a-z]*[A-Z0-9][A-Za-z0-9]*|[A-Z]\d[\w]*|[a-z]+[A-Z]\w*)"
    r"(?:-[A-Za-z0-9]+)*(?![\w}])"
)
CHUNK = 256  # entries written in one piece (a write per entry cost as much as copying it)
_ARXIV_RE = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$|^([a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


@dataclass
class ExportReport:
    """What an export wrote: where, how many entries, what it could not write as LaTeX."""

    path: str
    entries: int = 0
    # characters pdfLaTeX cannot typeset, written as "?" (in the BibLaTeX dialect, an accent
    # Unicode has no accented letter for is left off its letter instead)
    replaced_chars: int = 0
    new_keys: dict[str, str] = field(default_factory=dict)  # paper id → key pinned by this export
    # keys of the entries added because an exported entry cross-references them (BibTeX needs them)
    added_parents: list[str] = field(default_factory=list)
    # keys of the entries whose fields held control characters, left out of the file
    controls_removed: list[str] = field(default_factory=list)
    # paper id → key given by this export but not pinned (the library could not be written), and why
    unpinned_keys: dict[str, str] = field(default_factory=dict)
    unpinned_because: str = "the library was open read-only"
    # ids of the exported papers (not the parents added) that are fragments nobody would cite
    # (core.citation.fragments), and whether every one of them has a title derived from its abstract
    fragments: list[str] = field(default_factory=list)
    fragments_derived: bool = False

    def summary(self) -> str:
        """One sentence for the person: entries written and where, characters replaced."""
        where = "standard output" if self.path == "-" else self.path
        text = f"Wrote {self.entries} entr{'y' if self.entries == 1 else 'ies'} to {where}."
        text += controls_note(self.controls_removed, "entr")
        text += unpinned_note(len(self.unpinned_keys), self.unpinned_because)
        if self.replaced_chars:
            text += (
                f" {self.replaced_chars} character(s) with no LaTeX form (CJK, emoji…) were written as '?'"
                " (or an accent left off);"
                " the library keeps the originals."
            )
        if self.added_parents:
            names = ", ".join(self.added_parents[:5]) + (", …" if len(self.added_parents) > 5 else "")
            text += (
                f" {len(self.added_parents)} of them {'was' if len(self.added_parents) == 1 else 'were'} added"
                f" because entries you exported take fields from them (crossref, xdata): {names}."
            )
        return text


class _Encoder(LatexWriter):
    """Text to one dialect's LaTeX (the writer's characters, see biblio.latex_writer), and the
    fields a paper without a record exports: abstracts and titles, names."""

    # ---- fields ------------------------------------------------------------
    def rich(self, raw: str, protect_case: bool = False) -> str:
        """Abstract or title text: markup as the reader sees it, specials
        escaped, safe math kept as math."""
        raw = self.clean(raw)
        if "$" not in raw:
            out = self._prose(raw, protect_case).strip()
            return " ".join(out.split()) if ("  " in out or "\n" in out or "\t" in out) else out
        parts = []
        pos = 0
        for m in _EXPORT_MATH_RE.finditer(raw):
            parts.append(self._prose(raw[pos : m.start()], protect_case))
            parts.append(self._math(m.group(1), braced=protect_case))
            pos = m.end()
        parts.append(self._prose(raw[pos:], protect_case))
        out = "".join(parts).strip()
        return " ".join(out.split()) if ("  " in out or "\n" in out or "\t" in out) else out

    def _prose(self, raw: str, protect_case: bool) -> str:
        if not raw.strip():
            return raw
        # plain_text without touching math (there is none left here); keep edge spaces
        lead = " " if raw[:1].isspace() else ""
        trail = " " if raw[-1:].isspace() else ""
        plain = plain_text(raw)
        if not protect_case:
            return lead + self.text(plain) + trail
        out, pos = [], 0
        for m in _PROTECT_RE.finditer(plain):
            out.append(self.text(plain[pos : m.start()]))
            out.append("{" + self.text(m.group(0)) + "}")
            pos = m.end()
        out.append(self.text(plain[pos:]))
        return lead + "".join(out) + trail

    def _math(self, expr: str, braced: bool = False) -> str:
        expr, typesets = math_latex(expr)
        if typesets:
            # braced in titles: the style must not lower-case it ($\Gamma$ -> $\gamma$)
            return f"{{${expr}$}}" if braced else f"${expr}$"
        # math LaTeX alone cannot typeset: as text
        return self.text(" ".join(plain_text(f"${expr}$").split()))

    def name(self, name: str) -> str:
        """One author as "von Last, Jr, First" (its parts by `names.from_display`); a one-word
        or corporate name double-braced."""
        name = " ".join((plain_text(name) if _MARKUP_RE.search(name) else name).split())
        if not name:
            return ""
        person = from_display(name)
        if person.literal:  # one name, braced
            return "{" + self.text(person.literal) + "}"
        last = " ".join(p for p in (person.von, person.family) if p)
        if not person.given:  # "Aristotle", "Fletcher III": one name
            return "{" + self.text(" ".join(p for p in (last, person.jr) if p)) + "}"
        parts = [last, *([person.jr] if person.jr else []), person.given]
        return ", ".join(self.text(p) for p in parts)


def _verbatim(value: str, dialect: str) -> str:
    """A URL or DOI: as it is, except what would break the field itself."""
    value = verbatim_value(value)
    if dialect == "bibtex":
        # classic styles hand url to LaTeX unprotected: % would start a comment, # a parameter
        value = value.replace("%", r"\%").replace("#", r"\#")
    return value


def entry(paper: Paper, key: str, enc: _Encoder) -> str:
    """One paper's BibTeX entry under `key` (@inproceedings with a venue and a year, else @misc)."""
    kind = "inproceedings" if paper.venue and paper.year else "misc"
    fields = _listing_heading(paper, kind, enc) + _listing_links(paper, enc.dialect) + _listing_about(paper, key, enc)
    width = max((len(n) for n, _ in fields), default=0)
    body = ",\n".join(f"  {n.ljust(width)} = {{{v}}}" for n, v in fields if v)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def _listing_heading(paper: Paper, kind: str, enc: _Encoder) -> list[tuple[str, str]]:
    """A listing paper's author and title, where it appeared (an @inproceedings' booktitle, a
    @misc's howpublished) and the year."""
    fields: list[tuple[str, str]] = []
    if paper.authors:
        fields.append(("author", " and ".join(n for n in (enc.name(a) for a in paper.authors) if n)))
    title = enc.rich(paper.title, protect_case=True) if paper.title else ""
    if title:
        fields.append(("title", title))
    if paper.venue:
        fields.append(("booktitle" if kind == "inproceedings" else "howpublished", enc.rich(paper.venue)))
    if paper.year:
        fields.append(("year", str(int(paper.year))))
    return fields


def _listing_links(paper: Paper, dialect: str) -> list[tuple[str, str]]:
    """The arXiv id (a valid one) as an e-print, the DOI and the first web link."""
    fields: list[tuple[str, str]] = []
    if paper.arxiv_id and _ARXIV_RE.match(paper.arxiv_id):
        fields += [("eprint", paper.arxiv_id), ("archiveprefix" if dialect == "bibtex" else "eprinttype", "arXiv")]
    if paper.doi:
        fields.append(("doi", _verbatim(paper.doi, dialect)))
    url = next((u for u in paper.links if u.lower().startswith(("http://", "https://"))), "")
    if url:
        fields.append(("url", _verbatim(url, dialect)))
    return fields


def _listing_about(paper: Paper, key: str, enc: _Encoder) -> list[tuple[str, str]]:
    """The tags (as keywords), the abstract, the note of a derived title and, for classic
    styles, a sort `key` when there are no authors."""
    fields: list[tuple[str, str]] = []
    if paper.tags:
        fields.append(("keywords", enc.text(join_tags(paper.tags))))
    if paper.abstract:
        fields.append(("abstract", enc.rich(paper.abstract)))
    if paper.title_derived:
        fields.append(("note", enc.text(DERIVED_NOTE)))
    if not paper.authors and enc.dialect == "bibtex":
        # classic styles sort by author, else by `key`: without either they warn
        fields.append(("key", enc.text(" ".join(plain_text(paper.title).split()[:6]) or key)))
    return fields


# fields the styles hand to \\url verbatim: outside ASCII they are percent-encoded (as a browser
# does), not spelt as LaTeX commands that would end up in the link
_URL_FIELDS = frozenset(("url", "doi", "urlraw"))


def _ascii_url(value: str) -> str:
    from urllib.parse import quote

    return value if value.isascii() else re.sub(r"[^\x00-\x7f]+", lambda m: quote(m.group()), value)


def _latex_source(paper: Paper) -> bool:
    """Whether the paper's record is LaTeX a .bib file wrote (kept as written) rather than text
    a RIS file gave (escaped by the importer, its letters left to the dialect)."""
    return any(s.get("format") == "bibtex" for s in paper.raw().get("sources", ()))


def _with_tags(kept: str | None, tags: str) -> str:
    """A keywords value expression with `tags` (LaTeX text) after the record's keywords: inside
    its braces or quotes, with its own separator, else concatenated (`expr # {, tags}`)."""
    if not kept:
        return _braced(tags)
    text = decode(kept)
    sep = "; " if ";" in text and "," not in text else ", "
    if kept[0] + kept[-1] in ("{}", '""') and len(kept) > 1:
        return kept[:-1] + (sep if text.strip() else "") + tags + kept[-1]
    return kept + " # " + _braced(sep + tags)


def _braced(value: str) -> str:
    return "{" + value + "}"


def record_fields(paper: Paper, enc: _Encoder) -> dict[str, str]:
    """A paper's record as value expressions in BibTeX's names: every field as the file wrote it,
    and what the reader changed from the paper: a display field whose raw fields are gone (an
    edit drops them, see paper.RAW_SOURCES), and the tags (as keywords)."""
    raw = paper.bibfields
    # a child shows what it inherits from its crossref/xdata entries: not the reader's edit
    inherits = "crossref" in raw or "xdata" in raw
    out = _edited_heading(paper, enc, inherits)
    # a .bib file's values go out byte for byte, UTF-8 included (its bibliography typesets as it
    # did, and nothing is lost to "?"); a RIS record's were text, spelt as LaTeX for classic BibTeX
    written = _latex_source(paper)
    for name, value in raw.items():
        if name in _URL_FIELDS and enc.dialect == "bibtex" and not written:
            out[name] = _ascii_url(value)
        else:
            out[name] = enc.raw(value, written)
    if not inherits:
        _add_edited_facts(out, paper, enc)
    _add_about(out, paper, enc)
    return out


def _edited_heading(paper: Paper, enc: _Encoder, inherits: bool) -> dict[str, str]:
    """The author and title fields of a paper whose record lost them to an edit."""
    raw = paper.bibfields
    # a title derived from the abstract goes out with its note, as a listing paper's; a record
    # with neither title nor abstract (a @misc may have none) is named only for the reader
    derived = paper.title_derived
    out: dict[str, str] = {}
    if "author" not in raw and paper.authors and not inherits:
        out["author"] = _braced(" and ".join(n for n in (enc.name(a) for a in paper.authors) if n))
    if "title" not in raw and paper.title and (paper.abstract if derived else not inherits):
        if derived:  # words of the abstract: its math stays math
            out["title"] = _braced(enc.rich(paper.title, protect_case=True))
        else:  # typed: specials escaped, typed braces kept as groups, inner capitals braced
            from ..biblio.latex_writer import text_latex

            out["title"] = enc.raw(_braced(text_latex(paper.title, protect_case=True)), _latex_source(paper))
    return out


def _add_edited_facts(out: dict[str, str], paper: Paper, enc: _Encoder) -> None:
    """The year, venue, DOI and arXiv id of a paper whose record lacks them (or lost them to an edit)."""
    raw = paper.bibfields
    if not ("year" in raw or "date" in raw) and paper.year:
        out["year"] = _braced(str(int(paper.year)))
    if paper.venue and not any(n in raw for n in RAW_SOURCES["venue"]):
        target = VENUE_FIELD.get(paper.entrytype, "howpublished")
        if target not in out:
            out[target] = _braced(enc.rich(paper.venue))
    if "doi" not in raw and paper.doi:
        out["doi"] = _braced(_verbatim(paper.doi, enc.dialect))
    arxiv = paper.arxiv_id if paper.arxiv_id and _ARXIV_RE.match(paper.arxiv_id) else ""
    if arxiv and not any(n in raw for n in RAW_SOURCES["arxiv_id"]):
        out["eprint"], out["archiveprefix"] = _braced(arxiv), "{arXiv}"


def _add_about(out: dict[str, str], paper: Paper, enc: _Encoder) -> None:
    """The user's tags after the record's keywords (so they reach the user's reference manager
    too), an abstract the record lacks, and the note of a derived title."""
    raw = paper.bibfields
    have = {normalize_tag(k) for k in record_keywords(raw)}
    extra = [t for t in paper.tags if t not in have]
    if extra:
        out["keywords"] = _with_tags(out.get("keywords"), enc.text(join_tags(extra)))
    if "abstract" not in raw and paper.abstract:
        out["abstract"] = _braced(enc.rich(paper.abstract))
    if "title" in out and paper.title_derived and "title" not in raw and "note" not in out:
        out["note"] = _braced(enc.text(DERIVED_NOTE))


def record_entry(paper: Paper, key: str, enc: _Encoder, xdata: Mapping[str, Paper] | None = None) -> str:
    """The entry of a paper with a record: its type and fields in the dialect's names. In the
    BibTeX dialect, which knows no xdata, the fields of its xdata entries among `xdata` (folded
    key → paper) are written into it where it has none of its own."""
    fields = record_fields(paper, enc)
    if xdata and "xdata" in fields:
        names = [k.strip().casefold() for k in value_text(fields["xdata"]).split(",")]
        parents = [xdata[k] for k in names if k in xdata]
        if len(parents) == len(names):  # all there: BibTeX gets the fields instead of the names
            del fields["xdata"]
            for parent in parents:
                for name, value in parent.bibfields.items():
                    if name not in ("xdata", "crossref"):
                        fields.setdefault(name, enc.raw(value, _latex_source(parent)))
    kind, fields = to_dialect(paper.entrytype, fields, enc.dialect)
    width = max((len(n) for n in fields), default=0)
    body = "".join(f"  {n.ljust(width)} = {v},\n" for n, v in fields.items())
    return f"@{kind}{{{key},\n{body}}}\n"


def any_entry(paper: Paper, key: str, enc: _Encoder, xdata: Mapping[str, Paper] | None = None) -> str:
    """A paper's entry: from its record when it has one, else from what the listing gave."""
    return record_entry(paper, key, enc, xdata) if paper.entrytype else entry(paper, key, enc)


def preambles(papers: Iterable[Paper], enc: _Encoder) -> list[str]:
    """The distinct @preamble blocks of the papers' files, in order."""
    out: dict[str, None] = {}
    for paper in papers:
        text = paper.preamble.strip()
        if text:
            expr = text if text[0] in '{"' and value_text(text) else _braced(text)
            out[f"@preamble{{{enc.raw(expr, _latex_source(paper))}}}\n"] = None
    if len(out) > 1:
        # two files' preambles often define the same command (xampl's \noopsort): a second
        # \newcommand stops LaTeX ("already defined"); \providecommand defines it only once
        return [block.replace("\\newcommand", "\\providecommand") for block in out]
    return list(out)


class Rendering:
    """The .bib text of `papers`, piece by piece: the preambles, then the entries sorted by key
    (parents of a crossref after their children); `replaced` counts the characters written as
    "?" once it has been iterated. With an `EntryCache` (entrycache.py) the entries rendered by
    an earlier export of the same papers are copied from it (`whole`: these are all the
    library's papers, so the cache may drop what the export did not use)."""

    def __init__(
        self,
        papers: Iterable[Paper],
        keys: dict[str, str],
        dialect: str = "bibtex",
        files: Mapping[str, str] | None = None,
        cache: EntryCache | None = None,
        whole: bool = False,
    ) -> None:
        self.enc = _Encoder(dialect)
        self.files = files or {}  # paper id → a `file` field written for it (export --files)
        self.papers = export_order(papers, keys)
        self.records = [p for p in self.papers if p.entrytype]
        # BibTeX knows no xdata: the dialect writes their fields into the entries that name them
        self.xdata = (
            {keys[p.id].casefold(): p for p in self.records if p.entrytype == "xdata"} if dialect == "bibtex" else {}
        )
        self.keys = keys
        self.dialect = dialect
        self.cache = cache
        self.whole = whole
        self._replaced = 0
        self.controls_removed: list[str] = []  # keys of the entries that held control characters
        self.head: list[str] = []  # what is written before the entries (the export cache keeps it)

    @property
    def replaced(self) -> int:
        """Characters written as "?" so far."""
        return self._replaced

    def _entry(self, paper: Paper) -> tuple[str, int, int]:
        """The entry of `paper`, the characters it wrote as "?" and whether it held control characters."""
        key = self.keys[paper.id]
        before, replaced = self.enc.controls, self.enc.replaced
        file_value = self.files.get(paper.id)
        if file_value is not None and "file" in paper.bibfields:  # the paper's files now, not the field it came with
            paper = copy.copy(paper)
            paper.bibfields = {k: v for k, v in paper.bibfields.items() if k != "file"}
        text = any_entry(paper, key, self.enc, self.xdata)
        if file_value is not None:
            text = with_file_field(text, file_value)
        out = without_controls(text)
        held = self.enc.controls != before or (out is not text and out != text)
        return out, self.enc.replaced - replaced, int(held)

    def _digests(self) -> list[bytes | None]:
        """What each entry is made from (None: from other papers too, never kept): the paper's
        record, its key and its `file` field."""
        assert self.cache is not None
        digest, keys, files, xdata = self.cache.digest, self.keys, self.files, self.xdata
        out: list[bytes | None] = []
        for paper in self.papers:
            d = paper.raw()
            pid = d["id"]
            if xdata and "xdata" in d.get("bibfields", ()):
                out.append(None)
                continue
            out.append(digest(d, keys[pid], files[pid]) if pid in files else digest(d, keys[pid]))
        return out

    def __iter__(self) -> Iterator[str]:
        self.head = [
            "% Exported by Papershelf"
            + (" (BibLaTeX, UTF-8, for biber)" if self.dialect == "biblatex" else " (BibTeX)")
            + "\n\n"
        ]
        yield self.head[0]
        blocks = preambles(self.records, self.enc)
        self._replaced = self.enc.replaced
        if blocks:
            self.head.append(without_controls("".join(blocks)) + "\n")
            yield self.head[1]
        if self.cache is None:
            entries: Iterable[tuple[str, int, int]] = map(self._entry, self.papers)
        else:
            digests = self._digests()
            entries = self.cache.entries(self.papers, digests, self._entry, self.whole)
        chunk: list[str] = []
        started = False
        for paper, (text, replaced, held) in zip(self.papers, entries, strict=True):
            if held:
                self.controls_removed.append(self.keys[paper.id])
            self._replaced += replaced
            chunk.append(text)
            if len(chunk) >= CHUNK:
                yield ("\n" if started else "") + "\n".join(chunk)
                started = True
                chunk = []
        if chunk:
            yield ("\n" if started else "") + "\n".join(chunk)


def with_file_field(entry_text: str, value: str) -> str:
    """An entry with a `file = {value}` field added last (JabRef's form, see importers/filefield.py)."""
    body = entry_text.rstrip()
    if not body.endswith("}"):
        return entry_text
    body = body[:-1].rstrip()
    sep = "" if body.endswith(",") else ","
    return f"{body}{sep}\n  file = {{{value}}},\n}}\n"


def render(papers: Iterable[Paper], keys: dict[str, str], dialect: str = "bibtex") -> tuple[str, int]:
    """The whole .bib text and how many characters were replaced."""
    rendering = Rendering(papers, keys, dialect)
    text = "".join(rendering)
    return text, rendering.replaced


def entries_text(papers: Iterable[Paper], keys: dict[str, str], dialect: str = "bibtex") -> str:
    """The entries of `papers` in the order given, without the file's header."""
    enc = _Encoder(dialect)
    return "\n".join(without_controls(any_entry(p, keys[p.id], enc)) for p in papers)
