"""RIS export: papers as the tagged records reference managers read (Zotero, EndNote, JabRef).

Lines end with CR LF, as the RIS specification asks ("each tag and its contents must be on a
separate line, preceded by a carriage return/line feed"); the text is UTF-8. Each value is one
line of plain text: the record's LaTeX is decoded, and what the reader sees (title, authors,
year, venue, DOI, abstract, tags) is written as the library shows it, so an edit goes out.
A paper imported from a RIS record goes out as that record came, every tag and line in order
(`Paper.ris`), but for the fields the user changed since: only their tags are written anew
(`_kept_record`). The user's own notes are private and never written. A written file imports
again as the same papers (see `importers.ris`, which reads every tag written here); the tags
written as KW lines come back as the record's keywords, and as tags only when asked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..biblio.latex import MONTH_MACROS, decode, latex_text, piece_text, pieces
from ..biblio.names import Name, from_display, parse_names
from ..biblio.types import TYPE_KEYS
from ..citation import record_keywords
from ..importers.ris import BOOKS, candidate_of_lines, digest, ris_lines
from ..paper import Paper, normalize_tag
from ..render import plain_text
from .controls import RIS_EXPORTED, controls_note, holds_controls, without_controls

if TYPE_CHECKING:
    from .entrycache import EntryCache

EOL = "\r\n"
CHUNK = 256  # records written in one piece

# BibTeX / BibLaTeX entry type -> RIS type; a type not here (misc, a listing paper's "") is GEN
# fmt: off
RIS_TYPE_OF: dict[str, str] = {
    "article": "JOUR", "periodical": "JFULL", "suppperiodical": "JOUR",
    "inproceedings": "CPAPER", "conference": "CPAPER", "proceedings": "CONF", "mvproceedings": "CONF",
    "book": "BOOK", "mvbook": "BOOK", "collection": "EDBOOK", "mvcollection": "EDBOOK",
    "incollection": "CHAP", "inbook": "CHAP", "bookinbook": "CHAP", "suppbook": "CHAP", "suppcollection": "CHAP",
    "phdthesis": "THES", "mastersthesis": "THES", "thesis": "THES",
    "techreport": "RPRT", "report": "RPRT",
    "online": "ELEC", "www": "ELEC", "electronic": "ELEC",
    "unpublished": "UNPB", "booklet": "PAMP", "manual": "GEN", "misc": "GEN",
    "patent": "PAT", "dataset": "DATA", "software": "COMP",
}
# fmt: on
_PARTS = frozenset({"inproceedings", "conference", "incollection", "inbook", "bookinbook"})
_BOOKS = frozenset({"book", "mvbook", "collection", "mvcollection", "proceedings", "mvproceedings"})
_THESES = {"phdthesis": "Doctoral thesis", "mastersthesis": "Master's thesis"}
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_PAGES_RE = re.compile(r"^\s*([^-\u2013\u2014]+?)\s*(?:[-\u2013\u2014]+\s*(.+?))?\s*$")


@dataclass
class RisExportReport:
    """What a RIS export wrote: where and how many records."""

    path: str
    entries: int = 0
    # ids of the papers whose fields held control characters, left out of the file
    controls_removed: list[str] = field(default_factory=list)
    # ids of the papers that are fragments nobody would cite, and whether all have derived titles
    fragments: list[str] = field(default_factory=list)
    fragments_derived: bool = False

    def summary(self) -> str:
        """One sentence for the person: records written and where."""
        where = "standard output" if self.path == "-" else self.path
        text = f"Wrote {self.entries} RIS record{'' if self.entries == 1 else 's'} to {where}."
        return text + controls_note(self.controls_removed, "record")


# ---- the record's LaTeX as text --------------------------------------------------------------


def text_of(latex: str) -> str:
    """LaTeX text (a value without its delimiters, or a part of a name) as one line of text."""
    return " ".join(unicodedata.normalize("NFC", latex_text(latex)).split())


def value_latex(raw: str) -> str:
    """The LaTeX text a BibTeX value expression stands for (delimiters off, parts joined,
    month macros as month names)."""
    return "".join(piece_text(p) for p in pieces(raw))


def field_text(paper_fields: dict[str, str], *names: str) -> str:
    """The plain text of the first of these record fields the paper has, or ""."""
    for name in names:
        raw = paper_fields.get(name)
        if raw:
            text = " ".join(unicodedata.normalize("NFC", decode(raw)).split())
            if text:
                return text
    return ""


def month_number(raw: str) -> int:
    """The month of a `month` field (`jan`, `{January}`, `1`), or 0."""
    text = value_latex(raw).strip().lower().rstrip(".")
    if text.isdigit():
        return int(text) if 1 <= int(text) <= 12 else 0
    return MONTH_MACROS.index(text[:3]) + 1 if text[:3] in MONTH_MACROS else 0


# ---- names -----------------------------------------------------------------------------------


def ris_names(raw: str) -> list[str]:
    """A BibTeX name list as RIS names: "Family, Given" ("Family, Given, Jr"), a corporate or
    one-word name as it is; "others" has no RIS form and is left out."""
    names, _others = parse_names(raw)
    return [n for n in (_from_name(name) for name in names) if n]


def _from_name(name: Name) -> str:
    """A `Name` read from a .bib name list as a RIS name."""
    if name.literal:
        return text_of(name.literal)
    family = text_of(" ".join(p for p in (name.von, name.family) if p))
    parts = [family, text_of(name.given), text_of(name.jr)]
    if not parts[1] and not parts[2]:
        return family
    return ", ".join(parts if parts[2] else parts[:2])


def _display_name(name: str) -> str:
    """A name as the library shows it ("First Last", or "Last, First") as a RIS name."""
    name = " ".join(name.split())
    if "," in name or " " not in name:
        return name
    person = from_display(name)
    if person.literal:
        return name
    family = " ".join(p for p in (person.von, person.family) if p)
    parts = [family, person.given, person.jr]
    return ", ".join(parts if person.jr else parts[:2]) if person.given else " ".join(p for p in parts if p)


# ---- records ---------------------------------------------------------------------------------


def _line(tag: str, value: str) -> str:
    value = " ".join(_CONTROL_RE.sub(" ", value).split())
    return f"{tag}  - {value}{EOL}" if value else ""


def record(paper: Paper) -> str:
    """One paper as a RIS record, ending with its ER line: a paper imported from a RIS record
    is that record's lines as they came, but for the fields the user changed (`_kept_record`);
    any other is written from its record and display fields (`_generated`)."""
    kept = paper.ris.get("lines")
    if kept and isinstance(kept, str):
        return _kept_record(paper, ris_lines(kept))
    return "".join(text for _group, text in _generated(paper)) + f"ER  - {EOL}"


def _generated(paper: Paper) -> list[tuple[str, str]]:
    """The lines Papershelf writes for a paper, each with its group (see `_TAG_GROUP`), before ER."""
    lines = [("TY", _line("TY", RIS_TYPE_OF.get(paper.entrytype, "GEN")))]
    if paper.citekey:
        lines.append(("ID", _line("ID", paper.citekey)))
    stages = (_name_lines, _title_lines, _date_lines, _numbering_lines, _publisher_lines, _link_lines, _about_lines)
    for stage in stages:
        lines += stage(paper)
    return [(group, text) for group, text in lines if text]


def _name_lines(paper: Paper) -> list[tuple[str, str]]:
    """AU, A2 and A4: the record's names keep family and given apart; an edit drops them
    (then the names the library shows are split as they read)."""
    raw = paper.bibfields
    authors = ris_names(raw["author"]) if raw.get("author") else [_display_name(a) for a in paper.authors]
    lines = [("AU", _line("AU", a)) for a in authors]
    if raw.get("editor"):
        lines += [("A2", _line("A2", a)) for a in ris_names(raw["editor"])]
    if raw.get("translator"):
        lines += [("A4", _line("A4", a)) for a in ris_names(raw["translator"])]
    return lines


def _title_lines(paper: Paper) -> list[tuple[str, str]]:
    """TI, ST, and where it appeared (T2, J2) and its series (T3); a whole book appears in nothing."""
    raw = paper.bibfields
    # the record's title when nobody edited it (an edit drops it): the display title lost
    # what plain text it took for markup; one Papershelf made up from the abstract is no title
    title = field_text(raw, "title") or ("" if paper.title_derived else paper.title)
    lines = [("TI", _line("TI", title)), ("ST", _line("ST", field_text(raw, "shorttitle")))]
    if paper.entrytype not in _BOOKS:
        lines.append(("T2", _line("T2", paper.venue)))
        lines.append(("J2", _line("J2", field_text(raw, "shortjournal"))))
    lines.append(("T3", _line("T3", field_text(raw, "series"))))
    return lines


def _date_lines(paper: Paper) -> list[tuple[str, str]]:
    """PY, and DA when the record gives the month."""
    if not paper.year:
        return []
    lines = [("PY", _line("PY", str(paper.year)))]
    month = _month(paper.bibfields)
    if month:
        lines.append(("PY", _line("DA", f"{paper.year}/{month:02d}//")))
    return lines


def _month(raw: dict[str, str]) -> int:
    """The month the record gives: its `month` field, else the month of BibLaTeX's `date` = {2019-05-12}; or 0."""
    month = month_number(raw["month"]) if raw.get("month") else 0
    if not month and (m := re.match(r"\s*\{?\d{4}-(\d\d)", raw.get("date", ""))):
        month = int(m.group(1)) if 1 <= int(m.group(1)) <= 12 else 0
    return month


def _numbering_lines(paper: Paper) -> list[tuple[str, str]]:
    """VL, NV, IS, the pages as SP and EP, and SE (the chapter)."""
    raw = paper.bibfields
    lines = [
        ("VL", _line("VL", field_text(raw, "volume"))),
        ("NV", _line("NV", field_text(raw, "volumes"))),
        ("IS", _line("IS", field_text(raw, "number", "issue"))),
    ]
    if m := _PAGES_RE.match(field_text(raw, "pages")):
        lines += [("SP", _line("SP", m.group(1))), ("SP", _line("EP", m.group(2) or ""))]
    lines.append(("SE", _line("SE", field_text(raw, "chapter"))))
    return lines


def _publisher_lines(paper: Paper) -> list[tuple[str, str]]:
    """PB, M3 (the kind of document), CY, ET and the SN lines."""
    raw = paper.bibfields
    lines = [
        ("PB", _line("PB", field_text(raw, "publisher", "school", "institution", "organization"))),
        ("M3", _line("M3", kind_words(paper))),
        ("CY", _line("CY", field_text(raw, "address", "location"))),
        ("ET", _line("ET", field_text(raw, "edition"))),
    ]
    for name in ("isbn", "issn"):
        lines += [("SN", _line("SN", sn)) for sn in field_text(raw, name).split(", ")]
    return lines


def _link_lines(paper: Paper) -> list[tuple[str, str]]:
    """DO, UR (the record's URL or the paper's first web link, then the arXiv abs link) and Y2."""
    raw = paper.bibfields
    url = value_latex(raw["url"]).strip() if raw.get("url") else ""
    url = url or next((u for u in paper.links if u.lower().startswith(("http://", "https://"))), "")
    lines = [("DO", _line("DO", paper.doi)), ("UR", _line("UR", url))]
    # the arXiv id goes out as its own abs link (the import reads the id from it): one named in
    # another URL (a list of links, a PDF's) is not always read back, so only that exact link will do
    arxiv = f"https://arxiv.org/abs/{paper.arxiv_id}"
    if paper.arxiv_id and url != arxiv:
        lines.append(("UR", _line("UR", arxiv)))
    lines.append(("Y2", _line("Y2", field_text(raw, "urldate").replace("-", "/"))))
    return lines


def _about_lines(paper: Paper) -> list[tuple[str, str]]:
    """AB, KW, N1 and LA: the abstract as the reader sees it, the keywords and tags, the
    record's note (the user's notes stay private) and its language."""
    raw = paper.bibfields
    # abstracts are kept as pasted (LaTeX, Markdown): RIS readers get what the reader sees
    lines = [("AB", _line("AB", plain_text(paper.abstract) if paper.abstract else ""))]
    lines += [("KW", _line("KW", keyword)) for keyword in keywords(paper)]
    lines.append(("N1", _line("N1", field_text(raw, "note"))))
    lines.append(("LA", _line("LA", field_text(raw, "language"))))
    return lines


# ---- a RIS record written back as it came ----------------------------------------------------

# the group of written lines (`_generated`) that stands for each tag of a kept RIS record: the
# kept lines of a group the user changed give way to the written ones; a tag of no group (DB,
# AD, AN, M1, L1, L2, U1, C7 ...) is not read into the record, so nobody edits it: it goes out
# as it came
# fmt: off
_TAG_GROUP: dict[str, str] = {
    "TY": "TY", "ID": "ID", "AU": "AU", "A1": "AU", "ED": "A2", "A2": "A2", "A4": "A4",
    "TI": "TI", "T1": "TI", "CT": "TI", "ST": "ST", "T2": "T2", "JF": "T2", "JO": "T2", "BT": "T2",
    "JA": "J2", "J2": "J2", "J1": "J2", "T3": "T3", "PY": "PY", "Y1": "PY", "DA": "PY",
    "VL": "VL", "VO": "VL", "NV": "NV", "IS": "IS", "CP": "IS", "SP": "SP", "EP": "SP", "SE": "SE",
    "PB": "PB", "M3": "M3", "CY": "CY", "PP": "CY", "ET": "ET", "SN": "SN", "DO": "DO", "UR": "UR",
    "Y2": "Y2", "AB": "AB", "N2": "AB", "KW": "KW", "N1": "N1", "LA": "LA",
}
# a whole book's T2 is its series, and its BT its title (as the import reads them)
_BOOK_TAG_GROUP = {**_TAG_GROUP, "T2": "T3", "BT": "TI"}
# the group of each record field the import makes of RIS tags (and the edits' other names for them)
_FIELD_GROUP: dict[str, str] = {
    "author": "AU", "editor": "A2", "translator": "A4", "title": "TI", "shorttitle": "ST",
    "journal": "T2", "journaltitle": "T2", "booktitle": "T2", "howpublished": "T2",
    "shortjournal": "J2", "series": "T3", "year": "PY", "month": "PY", "date": "PY",
    "urldate": "Y2", "volume": "VL", "volumes": "NV", "number": "IS", "issue": "IS", "pages": "SP",
    "chapter": "SE", "publisher": "PB", "school": "PB", "institution": "PB", "organization": "PB",
    "type": "M3", "address": "CY", "location": "CY", "edition": "ET", "isbn": "SN", "issn": "SN",
    "doi": "DO", "url": "UR", "eprint": "UR", "eprinttype": "UR", "archiveprefix": "UR",
    "abstract": "AB", "keywords": "KW", "note": "N1", "language": "LA",
}
# fmt: on


def _kept_line(tag: str, value: str) -> str:
    """A kept line as it came (a wrapped value on its own lines again)."""
    return f"{tag}  - {value}".replace("\n", EOL) + EOL


def changed_groups(paper: Paper, kept: list[tuple[str, str]]) -> tuple[set[str], bool]:
    """The groups of tags (`_TAG_GROUP`) whose field is no longer what the kept lines give,
    and whether the lines are a whole book's: the paper's record and display fields are
    compared with what importing the lines makes (none when the paper still gives the digest
    its import made); the key with the first ID line (a key given since, as the first BibTeX
    export gives one, goes out as an ID line)."""
    ids = (" ".join(part.strip() for part in value.split("\n")).strip() for tag, value in kept if tag == "ID")
    key = next((k for k in ids if k), "")
    keyed = {"ID"} if paper.citekey != key else set()
    if paper.ris.get("digest") == digest(paper):
        return keyed, False
    cand = candidate_of_lines(kept)
    derived, current = cand.bibfields, paper.bibfields
    changed = {
        _FIELD_GROUP[name]
        for name in derived.keys() | current.keys()
        if name in _FIELD_GROUP and derived.get(name) != current.get(name)
    }
    shown: tuple[tuple[str, object, object], ...] = (
        ("TY", paper.entrytype, cand.entrytype),
        ("TI", "" if paper.title_derived else paper.title, cand.title),
        ("AU", paper.authors, cand.authors),
        ("PY", paper.year, cand.year),
        ("T2", paper.venue, cand.venue),
        ("DO", paper.doi, cand.doi),
        ("UR", paper.arxiv_id, cand.arxiv_id),
        ("AB", paper.abstract, cand.abstract),
    )
    changed.update(group for group, ours, theirs in shown if ours != theirs)
    return changed | keyed, cand.entrytype in BOOKS


def _kept_record(paper: Paper, kept: list[tuple[str, str]]) -> str:
    """A paper imported from a RIS record: the record's lines in order, as they came, but for
    the groups of tags whose field the user changed, written from the paper where the group's
    first line was (a group the record did not have goes before ER); the user's tags that no KW
    line names follow the KW lines."""
    changed, book = changed_groups(paper, kept)
    written = _rewritten(paper, changed)
    out, placed, after_keywords, end = _merged(kept, _BOOK_TAG_GROUP if book else _TAG_GROUP, changed, written)
    if "KW" not in changed and paper.tags:
        at = after_keywords if after_keywords >= 0 else len(out)
        out[at:at] = _unnamed_tags(paper, kept)
    for group, texts in written.items():
        if group not in placed:
            out += texts
    return "".join(out) + end


def _rewritten(paper: Paper, changed: set[str]) -> dict[str, list[str]]:
    """The lines written anew for each changed group; a key given since alone is its ID line,
    without writing the rest."""
    written: dict[str, list[str]] = {}
    if changed == {"ID"}:
        written["ID"] = [_line("ID", paper.citekey)] if paper.citekey else []
    for group, text in _generated(paper) if changed - {"ID"} else ():
        if group in changed:
            written.setdefault(group, []).append(text)
    return written


def _merged(
    kept: list[tuple[str, str]], kinds: dict[str, str], changed: set[str], written: dict[str, list[str]]
) -> tuple[list[str], set[str], int, str]:
    """The kept lines with each changed group's written lines where its first line was: the
    lines, the groups placed, where the last KW line ends (-1 without one) and the ER line."""
    out: list[str] = []
    placed: set[str] = set()
    after_keywords = -1
    end = f"ER  - {EOL}"
    for tag, value in kept:
        if tag == "ER":
            end = _kept_line(tag, value)
            continue
        of = kinds.get(tag)
        if of is not None and of in changed:
            if of not in placed:
                out += written.get(of, [])
                placed.add(of)
        else:
            out.append(_kept_line(tag, value))
        if tag == "KW":
            after_keywords = len(out)
    return out, placed, after_keywords, end


def _unnamed_tags(paper: Paper, kept: list[tuple[str, str]]) -> list[str]:
    """KW lines for the user's tags that neither a kept KW line nor the record's keywords name
    (a KW line may hold several keywords, "Optim; stuff": a tag made of any of them is named)."""
    named = {normalize_tag(value) for tag, value in kept if tag == "KW"}
    named |= {normalize_tag(k) for k in record_keywords(paper.bibfields)}
    return [_line("KW", tag) for tag in paper.tags if tag not in named]


def kind_words(paper: Paper) -> str:
    """The M3 line: the record's `type` (a BibLaTeX key such as `mathesis` in words), or what
    kind of thesis the entry type says; RIS readers show it, and the import reads a thesis's kind from it."""
    raw = paper.bibfields
    text = field_text(raw, "type")
    if text:
        return TYPE_KEYS.get(text.strip().lower(), text)
    return _THESES.get(paper.entrytype, "")


def keywords(paper: Paper) -> list[str]:
    """The record's keywords as they came, then the user's tags that are not among them (so the
    tags reach the user's reference manager too)."""
    written = record_keywords(paper.bibfields)
    folded = {normalize_tag(k) for k in written}
    return written + [t for t in paper.tags if t not in folded]


class RisRendering:
    """The RIS text of `papers`, record by record (for a streamed write); with an `EntryCache`
    (entrycache.py) the records an earlier export rendered are copied from it (`whole`: these
    are all the library's papers, so the cache may drop what the export did not use)."""

    def __init__(self, papers: Iterable[Paper], cache: EntryCache | None = None, whole: bool = False) -> None:
        self.papers = list(papers)
        self.cache = cache
        self.whole = whole
        self.controls_removed: list[str] = []  # ids of the papers that held control characters

    @staticmethod
    def _record(paper: Paper) -> tuple[str, int, int]:
        """The record of `paper`, 0 characters replaced, and whether it held control characters."""
        held = holds_controls(paper, RIS_EXPORTED)
        return without_controls(record(paper), EOL), 0, int(held)

    def __iter__(self) -> Iterator[str]:
        if self.cache is None:
            records: Iterable[tuple[str, int, int]] = map(self._record, self.papers)
        else:
            digests = [self.cache.digest(p.raw()) for p in self.papers]
            records = self.cache.entries(self.papers, digests, self._record, self.whole)
        chunk: list[str] = []
        started = False
        for paper, (text, _replaced, held) in zip(self.papers, records, strict=True):
            if held:
                self.controls_removed.append(paper.id)
            chunk.append(text)
            if len(chunk) >= CHUNK:
                yield (EOL if started else "") + EOL.join(chunk)
                started = True
                chunk = []
        if chunk:
            yield (EOL if started else "") + EOL.join(chunk)


def render(papers: Iterable[Paper]) -> str:
    """The whole RIS text of `papers`, in the order given."""
    return "".join(RisRendering(papers))
