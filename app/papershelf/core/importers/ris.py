"""RIS (.ris) files: the records of reference managers' RIS export.

Each record becomes a paper with its bibliographic record: the RIS type mapped to a BibTeX
entry type, and every tag with a BibTeX counterpart as a field (see `_record`). RIS values
are plain text, not LaTeX, so a field's value is the text with LaTeX's specials escaped;
non-ASCII is kept as it is (the BibTeX export encodes it per dialect).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import orjson

from ..biblio.identifiers import ARXIV_URL_RE, clean_doi, doi_of_link
from ..biblio.latex import MONTH_MACROS
from ..biblio.latex_writer import text_to_latex
from ..biblio.types import verbatim_value
from ..paper import Paper
from ..render import plain_text
from .base import Candidate, ParsedFile, Problem
from .bibfile import year_in

_RIS_LINE_RE = re.compile(r"^([A-Z][A-Z0-9])  -(?: (.*))?$")

# RIS reference type -> BibTeX entry type (the 2011 RIS type list; anything else is misc): the
# inverse of the export's table (`exporters.ris.RIS_TYPE_OF`) where RIS has a type of its own.
# CONF is a whole proceedings, CPAPER a paper in one; a CONF naming authors or the proceedings
# it is in (as Zotero writes a conference paper) is a paper (see `entry_type`)
# fmt: off
RIS_TYPES: dict[str, str] = {
    "JOUR": "article", "EJOUR": "article", "MGZN": "article", "NEWS": "article",
    "ABST": "article", "INPR": "article", "JFULL": "periodical",
    "CONF": "proceedings", "CPAPER": "inproceedings",
    "BOOK": "book", "EBOOK": "book", "EDBOOK": "collection", "SER": "book",
    "CHAP": "incollection", "ECHAP": "incollection",
    "THES": "phdthesis",
    "RPRT": "techreport",
    "ELEC": "online", "WEB": "online", "BLOG": "online", "ICOMM": "online",
    "UNPB": "unpublished", "MANSCPT": "unpublished",
    "PAMP": "booklet",
    "GEN": "misc", "PAT": "patent", "DATA": "dataset", "COMP": "software",
}
# what some exporters write in TY instead of the code (EndNote's and rispy's names)
_TYPE_NAMES: dict[str, str] = {
    "journal article": "article", "magazine article": "article", "newspaper article": "article",
    "conference paper": "inproceedings", "conference proceedings": "proceedings",
    "book": "book", "edited book": "book", "book section": "incollection", "thesis": "phdthesis",
    "report": "techreport", "web page": "online", "electronic source": "online",
    "unpublished work": "unpublished", "generic": "misc",
}
# fmt: on
# a whole work: its title may be in BT, and it appears in nothing (T2 is its series)
BOOKS = frozenset({"book", "collection", "proceedings", "periodical"})
# what a thesis's M3 (or U1) says: the words of a master's level thesis, and of a doctoral one
_MASTERS_RE = re.compile(r"master|diplom|bachelor|licen[cst]|magist|m\.?\s?sc\b|m\.?a\.? thesis", re.I)
_DOCTORAL_RE = re.compile(r"ph\.?\s?d|doctor|doktor|dissertation|habilitation", re.I)
# an M3 that only says what the entry type says is no `type` field (a plain @phdthesis wrote it)
_PLAIN_THESIS = {
    "phdthesis": {"phd thesis", "doctoral thesis", "phd dissertation", "doctoral dissertation", "dissertation"},
    "mastersthesis": {"masters thesis", "master thesis"},
}
_PARTS = frozenset({"inproceedings", "incollection", "inbook"})
_ISBN_TYPES = frozenset({"book", "incollection", "inbook", "inproceedings", "booklet"})
_DATE_RE = re.compile(r"^\s*(\d{4})?(?:[/-](\d{1,2})?)?(?:[/-](\d{1,2})?)?")
_MONTH_WORD_RE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?![a-z])", re.I)
# a word the style must not lower-case: a capital after its first letter (BERT, iPhone, LaTeX)


def parse_ris(text: str, path: str) -> ParsedFile:
    """The records of a RIS file as candidates; a line that is not RIS, or a record
    without title and abstract, is a problem with its line. Each candidate keeps its
    record's lines as they came (`Candidate.ris`, see "RIS RECORD" in paper.py)."""
    problems: list[Problem] = []
    papers: list[Candidate] = []
    # tag -> values, each value as its wrapped lines (joined once, at the end:
    # adding each line to a growing string is quadratic in long abstracts)
    record: dict[str, list[list[str]]] | None = None
    kept: list[str] = []  # the record's lines as they came (a tag line as "XX  - value")
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
                kept.append(line)
            else:
                problems.append(Problem(path, n, f"not a RIS line: {line.strip()[:60]!r}; skipped"))
            continue
        tag, written = m.group(1), m.group(2) or ""
        value = written.strip()
        if tag == "TY":
            if record is not None:
                problems.append(Problem(path, start, "a record without its closing ER line; imported anyway"))
                _ris_paper(record, kept, start, path, papers, problems)
            record, kept, start, last_tag = {"TY": [[value]]}, [f"{tag}  - {written}"], n, ""
            continue
        if record is None:
            problems.append(Problem(path, n, f"{tag} line outside a record (no TY line before it); skipped"))
            continue
        kept.append(f"{tag}  - {written}")
        if tag == "ER":
            _ris_paper(record, kept, start, path, papers, problems)
            record, last_tag = None, ""
            continue
        record.setdefault(tag, []).append([value])
        last_tag = tag
    if record is not None:
        problems.append(Problem(path, start, "the last record has no closing ER line; imported anyway"))
        _ris_paper(record, kept, start, path, papers, problems)
    if not papers and not problems:
        problems.append(Problem(path, 0, "no RIS records were found in it"))
    return ParsedFile(path=path, format="ris", papers=papers, problems=problems)


def _ris_paper(
    lines: dict[str, list[list[str]]],
    kept: list[str],
    line: int,
    path: str,
    papers: list[Candidate],
    problems: list[Problem],
) -> None:
    """Add the paper of one RIS record to `papers`, or say in `problems` why it has none."""
    rec = {tag: [v for v in (" ".join(parts).strip() for parts in values) if v] for tag, values in lines.items()}
    entrytype = entry_type((rec.get("TY") or [""])[0], rec)
    first = _first(rec)

    title = _text(_title(rec, entrytype))
    abstract = first("AB", "N2")
    if not title and not abstract:
        # kept, as a .bib entry without either is (a whole journal issue, an exported @set): the
        # list will show "Untitled paper", so say which record that is
        which = f"record {first('ID')!r}" if first("ID") else "a record"
        problems.append(
            Problem(
                path,
                line,
                f"{which} has neither a title (TI) nor an abstract (AB); "
                "it was imported as an untitled paper with the fields it has",
                note=True,
            )
        )
    names = rec.get("AU", []) + rec.get("A1", [])
    doi = clean_doi(first("DO"))
    url = first("UR")
    doi = doi or doi_of_link(url)
    # the last arXiv link of the UR lines: an export writes the paper's id as the abs link after
    # the record's own URL, which may name another form of it (Mendeley's eprint = {0412083})
    m = next((m for u in reversed(rec.get("UR", [])) if (m := ARXIV_URL_RE.search(u))), None)
    fields = _record(rec, entrytype, doi)
    if m and "eprint" not in fields:
        fields.update(eprint="{" + verbatim_value(m.group(1)) + "}", archiveprefix="{arXiv}")
    papers.append(
        Candidate(
            abstract=abstract,
            line=line,
            title=title,
            authors=[a for a in (_display_name(n) for n in names) if a],
            year=year_in(first("PY", "Y1", "DA")),
            venue=_text(_venue(rec, entrytype)),
            doi=doi,
            arxiv_id=m.group(1) if m else "",
            citekey=first("ID"),
            entrytype=entrytype,
            bibfields=fields,
        )
    )
    if kept:
        cand = papers[-1]
        cand.ris = {"lines": "\n".join(kept), "digest": digest(cand)}


def ris_lines(text: str) -> list[tuple[str, str]]:
    """The (tag, value) lines of a kept record (`Paper.ris["lines"]`), a wrapped value's lines
    joined by "\n" as they were kept."""
    out: list[tuple[str, str]] = []
    for line in text.split("\n"):
        m = _RIS_LINE_RE.match(line)
        if m:
            out.append((m.group(1), m.group(2) or ""))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return out


def candidate_of_lines(lines: list[tuple[str, str]]) -> Candidate:
    """The candidate a kept record's lines make, as their import made it: what the RIS export
    compares a paper with to find the fields the user changed."""
    rec: dict[str, list[list[str]]] = {}
    for tag, value in lines:
        if tag != "ER":
            rec.setdefault(tag, []).append([part.strip() for part in value.split("\n")])
    papers: list[Candidate] = []
    _ris_paper(rec, [], 0, "", papers, [])
    return papers[0]


def digest(paper: Candidate | Paper) -> str:
    """A digest of what the import makes of a RIS record (type, display and record fields; the
    key is compared apart), from the candidate at import and from the paper at export: the
    same digest, nothing changed."""
    title = "" if isinstance(paper, Paper) and paper.title_derived else paper.title
    shown = (paper.entrytype, title, paper.authors, paper.year, paper.venue, paper.doi)
    data = orjson.dumps([*shown, paper.arxiv_id, paper.abstract, paper.bibfields], option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def _text(value: str) -> str:
    """A title, name or venue as one line of plain text."""
    return " ".join(plain_text(value).split())


def _first(rec: dict[str, list[str]]) -> Callable[..., str]:
    def first(*tags: str) -> str:
        for t in tags:
            if rec.get(t):
                return rec[t][0]
        return ""

    return first


def entry_type(ty: str, rec: dict[str, list[str]]) -> str:
    """The BibTeX entry type of a RIS record of type `ty`: a thesis is a master's thesis when its
    M3 or U1 names one (master's, diploma, bachelor's) and not a doctorate; a CONF with authors
    or the title of the proceedings it is in is a paper in them."""
    code = ty.strip().upper()
    kind = RIS_TYPES.get(code) or _TYPE_NAMES.get(" ".join(ty.split()).lower(), "misc")
    if kind == "phdthesis":
        said = " ".join(v for t in ("M3", "U1") for v in rec.get(t, []))
        if _MASTERS_RE.search(said) and not _DOCTORAL_RE.search(said):
            return "mastersthesis"
    if kind == "proceedings" and any(rec.get(t) for t in ("AU", "A1", "T2", "BT")):
        return "inproceedings"
    return kind


def _title(rec: dict[str, list[str]], entrytype: str) -> str:
    """The primary title; a book's may be in BT, and a record with only a short title has that."""
    first = _first(rec)
    return first("TI", "T1", "CT") or (first("BT") if entrytype in BOOKS else "") or first("ST")


def _venue(rec: dict[str, list[str]], entrytype: str) -> str:
    """Where the paper appeared: the journal, the book or proceedings, or what else the record names."""
    first = _first(rec)
    if entrytype == "article":
        return first("T2", "JF", "JO", "JA", "J2", "J1")
    if entrytype in _PARTS:
        return first("T2", "BT", "JF", "JO")
    if entrytype in BOOKS:
        return ""
    return first("T2", "JF", "JO", "BT")


def _record(rec: dict[str, list[str]], entrytype: str, doi: str) -> dict[str, str]:
    """The BibTeX fields of one RIS record, as BibTeX value expressions, in the order written:
    names, titles and venue, date, numbering, publisher, standard numbers, links, the rest."""
    first = _first(rec)
    out: dict[str, str] = {}
    _put_names(out, rec)
    _put_titles(out, rec, entrytype)
    _put_date(out, rec)
    _put_numbering(out, rec, entrytype)
    _put_publisher(out, rec, entrytype)
    _put_standard_numbers(out, rec, entrytype)
    if doi:
        out["doi"] = "{" + verbatim_value(doi) + "}"
    if url := first("UR"):
        out["url"] = "{" + verbatim_value(url) + "}"
    _put(out, "abstract", first("AB", "N2"))
    _put(out, "keywords", ", ".join(rec.get("KW", [])))
    _put(out, "note", "; ".join(rec.get("N1", [])))
    _put(out, "language", first("LA"))
    return out


def _put(out: dict[str, str], name: str, value: str, title: bool = False) -> None:
    """Add a text field (one line of it, LaTeX's specials escaped; a title's inner capitals
    braced) unless it is empty or the field is there already."""
    value = " ".join(value.split())
    if value and name not in out:
        out[name] = "{" + text_to_latex(value, protect_case=title) + "}"


def _put_names(out: dict[str, str], rec: dict[str, list[str]]) -> None:
    """The author, editor and translator lists (AU/A1, ED/A2, A4) as BibTeX name lists."""
    lists = (
        ("author", rec.get("AU", []) + rec.get("A1", [])),
        ("editor", rec.get("ED", []) or rec.get("A2", [])),
        ("translator", rec.get("A4", [])),
    )
    for name, names in lists:
        if names:
            out[name] = "{" + " and ".join(bibtex_name(a) for a in names) + "}"


def _put_titles(out: dict[str, str], rec: dict[str, list[str]], entrytype: str) -> None:
    """The title and short title, where the work appeared (the field the entry type names it
    in) and the series."""
    first = _first(rec)
    _put(out, "title", _title(rec, entrytype), title=True)
    _put(out, "shorttitle", first("ST"), title=True)
    venue = _venue(rec, entrytype)
    if entrytype == "article":
        _put(out, "journal", venue)
        short = next((v for t in ("JA", "J2", "J1") for v in rec.get(t, []) if v != venue), "")
        _put(out, "shortjournal", short)
    elif entrytype in _PARTS:
        _put(out, "booktitle", venue)
    elif entrytype not in BOOKS:
        _put(out, "howpublished", venue)
    _put(out, "series", first("T3") or (first("T2") if entrytype in BOOKS else ""))


def _put_date(out: dict[str, str], rec: dict[str, list[str]]) -> None:
    """The year and month (the month of any date line when the first gives none), and the
    date the record was visited."""
    first = _first(rec)
    year, month = _date(first("PY", "Y1", "DA"))
    if not month:
        month = next((m for t in ("DA", "Y1", "PY") for v in rec.get(t, []) if (m := _date(v)[1])), "")
    if year:
        out["year"] = year
    if month:
        out["month"] = month  # the macro: every style prints it in its own language
    _put(out, "urldate", _iso_date(first("Y2")))


def _put_numbering(out: dict[str, str], rec: dict[str, list[str]], entrytype: str) -> None:
    """Volume, volumes, number (a report's may be in M1), pages and a chapter's number."""
    first = _first(rec)
    _put(out, "volume", first("VL", "VO"))
    _put(out, "volumes", first("NV"))
    _put(out, "number", first("IS", "CP") or (first("M1") if entrytype == "techreport" else ""))
    _put(out, "pages", _pages(first("SP"), first("EP")))
    if entrytype == "incollection" and first("SE"):
        _put(out, "chapter", first("SE"))


def _put_publisher(out: dict[str, str], rec: dict[str, list[str]], entrytype: str) -> None:
    """Who published it (a thesis's school, a report's institution) and the kind of thesis or
    report, then the place and the edition."""
    first = _first(rec)
    publisher = first("PB")
    if entrytype in ("phdthesis", "mastersthesis"):
        _put(out, "school", publisher)
        kind = first("M3")
        if re.sub(r"[^a-z ]", "", kind.lower()) not in _PLAIN_THESIS[entrytype]:
            _put(out, "type", kind)  # "Diploma Thesis": what the bibliography prints instead
    elif entrytype == "techreport":
        _put(out, "institution", publisher)
        _put(out, "type", first("M3"))
    else:
        _put(out, "publisher", publisher)
    _put(out, "address", first("CY", "PP"))
    _put(out, "edition", first("ET"))


def _put_standard_numbers(out: dict[str, str], rec: dict[str, list[str]], entrytype: str) -> None:
    """The SN lines as the ISBN and the ISSN (a book in a series has both)."""
    numbers: dict[str, list[str]] = {}
    for sn in rec.get("SN", []):
        numbers.setdefault(_sn_field(sn, entrytype), []).append(sn)
    for name in ("isbn", "issn"):
        _put(out, name, ", ".join(numbers.get(name, [])))


def bibtex_name(name: str) -> str:
    """One RIS name ("Last, First" or "Last, First, Suffix") as a BibTeX name; a name without a
    comma (one word, or a corporate author) is braced so BibTeX takes it whole."""
    parts = [" ".join(p.split()) for p in name.split(",")]
    parts = [p for p in parts if p]
    if len(parts) >= 3:  # Last, First, Jr.  ->  Last, Jr., First
        return f"{_name_part(parts[0])}, {_name_part(', '.join(parts[2:]))}, {_name_part(parts[1])}"
    if len(parts) == 2:
        return f"{_name_part(parts[0])}, {_name_part(parts[1])}"
    return "{" + text_to_latex(parts[0]) + "}" if parts else ""


def _name_part(text: str) -> str:
    out = text_to_latex(text)
    # " and " inside a part would split the name list
    return re.sub(r"(?i)\band\b", lambda m: "{" + m.group() + "}", out)


def _display_name(name: str) -> str:
    """A RIS name as the reader sees it: "First Last"."""
    parts = [_text(p) for p in name.split(",")]
    parts = [p for p in parts if p]
    if len(parts) >= 2:
        return f"{parts[1]} {parts[0]}"
    return parts[0] if parts else ""


def _date(value: str) -> tuple[str, str]:
    """Year and month macro of a RIS date ("2019/05/12/", "2019-05", "2019///", "July 1948")."""
    m = _DATE_RE.match(value)
    year = m.group(1) or "" if m else ""
    month = ""
    if m and m.group(2) and 1 <= int(m.group(2)) <= 12:
        month = MONTH_MACROS[int(m.group(2)) - 1]
    elif w := _MONTH_WORD_RE.search(value):
        month = w.group(1).lower()
    if not year and (y := year_in(value)):
        year = str(y)
    return year, month


def _iso_date(value: str) -> str:
    """A RIS date ("2019/05/12/") as an ISO date ("2019-05-12"), as far as it goes."""
    m = _DATE_RE.match(value)
    if not m or not m.group(1):
        return ""
    out = m.group(1)
    for g in (m.group(2), m.group(3)):
        if not g or not int(g):
            break
        out += f"-{int(g):02d}"
    return out


def _pages(start: str, end: str) -> str:
    """SP and EP as one page range "SP--EP" (an SP holding a range already gets the BibTeX dash)."""
    start, end = start.strip(), end.strip()
    if start and end and end != start:
        return f"{start}--{end}"
    return re.sub(r"\s*[-\u2013\u2014]+\s*", "--", start) if start else end


def _sn_field(value: str, entrytype: str) -> str:
    """ISBN or ISSN: an ISSN has 8 digits, an ISBN 10 or 13; otherwise by the type of the work."""
    digits = len(re.sub(r"[^0-9Xx]", "", value.split(",")[0].split("(")[0]))
    if digits == 8:
        return "issn"
    if digits in (10, 13):
        return "isbn"
    return "isbn" if entrytype in _ISBN_TYPES else "issn"
