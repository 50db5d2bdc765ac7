"""The entry-type and field model: BibLaTeX's data model, with the BibTeX names it reads as
aliases. The importers, the exporters, the editor, the viewer, the checks of `papershelf set`,
the duplicate finder and the online look-up all read their types and fields from here.

- the types: every type BibTeX or BibLaTeX knows (`KNOWN_TYPES`), in words (`TYPE_NAMES`), the
  common ones the editor offers first (`COMMON_TYPES`), the fields each requires (`required`,
  BibLaTeX's constraints) and commonly has (`optional`);
- the two dialects: biber's driver source map from BibTeX's names to BibLaTeX's
  (`TYPES_TO_BIBLATEX`, `FIELDS_TO_BIBLATEX`) and the classic types that print BibLaTeX's
  (`TYPES_TO_BIBTEX`, `BIBTEX_TYPES`, `BIBTEX_REQUIRED`: plain.bst's);
- the fields: every field a type knows (`KNOWN_FIELDS`), the name lists (`NAME_FIELDS`), where
  a type keeps its venue (`VENUE_FIELD`, `venue_field`, `venue_raw`), and how a verbatim
  field (a DOI, a URL) is written (`verbatim_value`).
"""

from __future__ import annotations

from collections.abc import Mapping

# fmt: off
# ---- entry types ------------------------------------------------------------------------------
# The BibLaTeX data model's entry types and BibTeX's (and a few common aliases), in words.
TYPE_NAMES: dict[str, str] = {
    "article": "Journal article", "book": "Book", "mvbook": "Multi-volume book",
    "inbook": "Part of a book", "bookinbook": "Book in a book", "suppbook": "Supplement to a book",
    "booklet": "Booklet", "collection": "Collection", "mvcollection": "Multi-volume collection",
    "incollection": "Chapter in a collection", "suppcollection": "Supplement to a collection",
    "dataset": "Data set", "manual": "Manual", "misc": "Miscellaneous", "online": "Web page",
    "electronic": "Web page", "www": "Web page", "patent": "Patent", "periodical": "Journal issue",
    "suppperiodical": "Supplement to a periodical", "proceedings": "Conference proceedings",
    "mvproceedings": "Multi-volume proceedings", "inproceedings": "Conference paper",
    "conference": "Conference paper", "reference": "Reference work",
    "mvreference": "Multi-volume reference work", "inreference": "Entry in a reference work",
    "report": "Report", "techreport": "Technical report", "set": "Entry set", "xdata": "Shared data",
    "software": "Software", "thesis": "Thesis", "mastersthesis": "Master's thesis",
    "phdthesis": "PhD thesis", "unpublished": "Unpublished", "artwork": "Artwork", "audio": "Audio",
    "bibnote": "Note", "commentary": "Commentary", "image": "Image", "jurisdiction": "Court decision",
    "legislation": "Legislation", "legal": "Legal document", "letter": "Letter", "movie": "Film",
    "music": "Music", "performance": "Performance", "review": "Review", "standard": "Standard",
    "video": "Video",
}
# BibLaTeX's localisation keys, as the `type` field of a @thesis, @report or @patent gives them
TYPE_KEYS: dict[str, str] = {
    "phdthesis": "PhD thesis", "mathesis": "Master's thesis", "mastersthesis": "Master's thesis",
    "candthesis": "Candidate thesis", "techreport": "Technical report", "resreport": "Research report",
    "software": "Software", "datacd": "Data CD", "audiocd": "Audio CD", "patent": "Patent",
    "patentus": "U.S. patent", "patenteu": "European patent", "patentde": "German patent",
    "patentfr": "French patent", "patentuk": "British patent", "patentjp": "Japanese patent",
    "patentrequs": "U.S. patent request", "patentreqeu": "European patent request",
    "habthesis": "Habilitation thesis",
}
# BibLaTeX's custom types (customa…customf): known, named by themselves
CUSTOM_TYPES = frozenset(f"custom{letter}" for letter in "abcdef")
# every type BibTeX or BibLaTeX knows (another exports as @misc)
KNOWN_TYPES = frozenset(TYPE_NAMES) | CUSTOM_TYPES
# the types the editor offers (BibLaTeX's, and BibTeX's names that BibLaTeX reads as aliases)
COMMON_TYPES: tuple[str, ...] = (
    "article", "inproceedings", "incollection", "inbook", "book", "collection", "proceedings",
    "thesis", "phdthesis", "mastersthesis", "report", "techreport", "online", "misc", "unpublished",
    "booklet", "manual", "dataset", "software", "patent", "periodical", "reference", "inreference",
)
# BibLaTeX's data model (biblatex.def, \DeclareDatamodelConstraints): the mandatory fields, in
# the editor's names ("venue" = journaltitle/booktitle; every type also needs a year or a date)
REQUIRED: dict[str, tuple[str, ...]] = {
    "article": ("author", "title", "venue", "year"),
    "book": ("author", "title", "year"), "mvbook": ("author", "title", "year"),
    "inbook": ("author", "title", "venue", "year"), "bookinbook": ("author", "title", "venue", "year"),
    "booklet": ("author", "title", "year"),
    "collection": ("editor", "title", "year"), "reference": ("editor", "title", "year"),
    "incollection": ("author", "editor", "title", "venue", "year"),
    "inreference": ("author", "editor", "title", "venue", "year"),
    "inproceedings": ("author", "title", "venue", "year"), "conference": ("author", "title", "venue", "year"),
    "proceedings": ("title", "year"),
    "manual": ("author", "title", "year"), "misc": ("author", "title", "year"),
    "online": ("author", "title", "year"),  # and a DOI, eprint or URL: any of the three
    "software": ("author", "title", "year"),
    "dataset": ("author", "title", "year"),
    "patent": ("author", "title", "number", "year"), "periodical": ("editor", "title", "year"),
    "report": ("author", "title", "type", "institution", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "thesis": ("author", "title", "type", "institution", "year"),
    "phdthesis": ("author", "title", "school", "year"), "mastersthesis": ("author", "title", "school", "year"),
    "unpublished": ("author", "title", "year"),
}
OPTIONAL: dict[str, tuple[str, ...]] = {
    "article": ("volume", "number", "pages", "month", "publisher", "issn", "note"),
    "inproceedings": ("editor", "pages", "publisher", "address", "series", "volume", "month", "organization", "note"),
    "incollection": ("pages", "publisher", "address", "edition", "series", "volume", "chapter", "note"),
    "inbook": ("pages", "chapter", "publisher", "address", "edition", "editor", "note"),
    "book": ("editor", "publisher", "address", "edition", "series", "volume", "isbn", "note"),
    "thesis": ("address", "month", "note"), "phdthesis": ("address", "month", "note"),
    "mastersthesis": ("address", "month", "note"),
    "report": ("number", "address", "month", "note"), "techreport": ("number", "type", "address", "month", "note"),
    "online": ("urldate", "organization", "note"), "misc": ("howpublished", "month", "note"),
    "unpublished": ("month", "note"),
}
# fmt: on
DEFAULT_REQUIRED = ("author", "title", "year")
DEFAULT_OPTIONAL = ("publisher", "address", "month", "note")
# types any other type may stand for: a listing exported as @misc, a preprint, a web page
LOOSE_TYPES = frozenset({"", "misc", "online", "unpublished", "electronic", "www", "preprint"})
# entry types a published version has (an arXiv preprint's "misc"/"online" is none)
PUBLISHED_TYPES = frozenset({"article", "inproceedings", "incollection", "book", "inbook", "phdthesis", "techreport"})

# fmt: off
# ---- BibTeX and BibLaTeX ----------------------------------------------------------------------
# biber's driver source map (biblatex.def): BibTeX type → (BibLaTeX type, value of `type` it sets)
TYPES_TO_BIBLATEX: dict[str, tuple[str, str]] = {
    "conference": ("inproceedings", ""), "electronic": ("online", ""), "www": ("online", ""),
    "mastersthesis": ("thesis", "mathesis"), "phdthesis": ("thesis", "phdthesis"),
    "techreport": ("report", "techreport"),
}
# the BibTeX types BibLaTeX reads as another type of its own, nothing else set (conference is
# inproceedings); the theses and reports also set `type`, so they are not mere aliases
ALIASES: dict[str, str] = {kind: to for kind, (to, set_type) in TYPES_TO_BIBLATEX.items() if not set_type}
# biber's driver source map: BibTeX field → BibLaTeX field
FIELDS_TO_BIBLATEX: dict[str, str] = {
    "hyphenation": "langid", "address": "location", "school": "institution", "annote": "annotation",
    "archiveprefix": "eprinttype", "journal": "journaltitle", "primaryclass": "eprintclass",
    "key": "sortkey", "pdf": "file",
}
# the reverse, for the BibTeX dialect (file stays file: JabRef and Zotero write it so in BibTeX
# files; school only for theses, where BibLaTeX writes institution: reports keep institution)
FIELDS_TO_BIBTEX: dict[str, str] = {
    v: k for k, v in FIELDS_TO_BIBLATEX.items() if k not in ("pdf", "school")
}
# the types classic BibTeX styles (plain, abbrv, alpha, unsrt…) define
BIBTEX_TYPES = frozenset(
    "article book booklet conference inbook incollection inproceedings manual mastersthesis misc phdthesis "
    "proceedings techreport unpublished".split()
)
# BibLaTeX types → the classic type that prints them (anything else becomes misc)
TYPES_TO_BIBTEX: dict[str, str] = {
    "online": "misc", "electronic": "misc", "www": "misc", "report": "techreport",
    "mvbook": "book", "collection": "book", "mvcollection": "book", "reference": "book", "mvreference": "book",
    "bookinbook": "inbook", "suppbook": "inbook", "inreference": "incollection", "suppcollection": "incollection",
    "mvproceedings": "proceedings", "suppperiodical": "article",
}
# what plain.bst requires of each type (one of the names separated by "|"): a converted entry
# without them goes out as misc, which requires nothing
BIBTEX_REQUIRED: dict[str, tuple[str, ...]] = {
    "article": ("author", "title", "journal", "year"),
    "book": ("author|editor", "title", "publisher", "year"),
    "inbook": ("author|editor", "title", "chapter|pages", "publisher", "year"),
    "incollection": ("author", "title", "booktitle", "publisher", "year"),
    "inproceedings": ("author", "title", "booktitle", "year"),
    "proceedings": ("title", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "phdthesis": ("author", "title", "school", "year"),
    "mastersthesis": ("author", "title", "school", "year"),
}
# fields plain.bst refuses to see together ("can't use both author and editor fields")
EXCLUSIVE: dict[str, tuple[str, str]] = {"book": ("author", "editor"), "inbook": ("author", "editor")}
# biblatex's localisation keys in `type`: the classic type prints them itself, or needs words
THESIS_TYPES = {"phdthesis": "phdthesis", "mathesis": "mastersthesis"}
TYPE_WORDS = {key: TYPE_KEYS[key] for key in ("candthesis", "habthesis", "resreport")}
# where a type wants the venue the reader typed (in BibTeX's names; the dialect map renames)
VENUE_FIELD = {
    "article": "journal", "suppperiodical": "journal", "periodical": "title",
    "inproceedings": "booktitle", "conference": "booktitle", "incollection": "booktitle", "inbook": "booktitle",
    "inreference": "booktitle", "bookinbook": "booktitle", "suppbook": "booktitle", "suppcollection": "booktitle",
}
# the types whose parent (by crossref) is the book or proceedings they appear in: the parent's
# title is their booktitle (biber's inheritance; BibTeX files give the parent a booktitle too)
IN_TYPES = frozenset(kind for kind, field in VENUE_FIELD.items() if field == "booktitle")
# the raw fields a venue is read from, after the one the type prefers
VENUE_SOURCES = ("journal", "journaltitle", "booktitle", "howpublished")

# ---- fields -----------------------------------------------------------------------------------
_BIBLATEX_FIELDS = (
    # data fields
    "abstract addendum afterword annotation annotator author authortype bookauthor bookpagination booksubtitle"
    " booktitle booktitleaddon chapter commentator date doi edition editor editora editorb editorc editortype"
    " editoratype editorbtype editorctype eid entrysubtype eprint eprintclass eprinttype eventdate eventtitle"
    " eventtitleaddon file foreword holder howpublished indextitle institution introduction isan isbn ismn isrn"
    " issn issue issuesubtitle issuetitle issuetitleaddon iswc journalsubtitle journaltitle journaltitleaddon"
    " label language library location mainsubtitle maintitle maintitleaddon month nameaddon note number"
    " organization origdate origlanguage origlocation origpublisher origtitle pages pagetotal pagination part"
    " publisher pubstate reprinttitle series shortauthor shorteditor shorthand shorthandintro shortjournal"
    " shortseries shorttitle subtitle title titleaddon translator type url urldate venue version volume volumes"
    " year"
    # special fields
    " crossref entryset execute gender langid langidopts ids indexsorttitle keywords options presort related"
    " relatedoptions relatedtype relatedstring sortkey sortname sortshorthand sorttitle sortyear xdata xref"
    # custom fields
    " namea nameb namec nameatype namebtype namectype lista listb listc listd liste listf usera userb userc"
    " userd usere userf verba verbb verbc"
    # BibTeX's names that biber maps (aliases)
    " address annote archiveprefix journal key pdf primaryclass school"
)
_OTHER_FIELDS = (
    # written by the tools people import from
    "lccn mrclass mrnumber mrreviewer zbl zblnumber timestamp biburl bibsource arxivid articleno numpages acmid"
    " issue_date copyright owner comment groups ranking readstatus priority pmid pmcid urlraw eventdate"
    " citeulike-article-id bdsk-url-1 bdsk-url-2 howpublished day endyear endmonth endday"
    # the editor's own names
    " entrytype citekey venue"
)
KNOWN_FIELDS = frozenset((_BIBLATEX_FIELDS + " " + _OTHER_FIELDS).split())
# fmt: on
# fields that hold a list of names ("Last, First and Last, First and others")
NAME_FIELDS = frozenset(
    {"author", "editor", "editora", "editorb", "editorc", "translator", "annotator", "commentator"}
    | {"introduction", "foreword", "afterword", "bookauthor", "holder"}
)


def biblatex_type(kind: str) -> str:
    """The BibLaTeX type a BibTeX type is read as (biber's map: conference is inproceedings,
    phdthesis a thesis…); any other type is its own."""
    return TYPES_TO_BIBLATEX.get(kind, (kind, ""))[0]


def required(entrytype: str) -> tuple[str, ...]:
    """The fields BibLaTeX's data model requires of this type, in the editor's names."""
    return REQUIRED.get(entrytype.lower(), DEFAULT_REQUIRED)


def optional(entrytype: str) -> tuple[str, ...]:
    """The fields commonly given for this type beyond the required ones, in the editor's names."""
    return OPTIONAL.get(entrytype.lower(), DEFAULT_OPTIONAL)


def venue_field(entrytype: str) -> str:
    """The BibTeX field the type keeps its venue in: journal, booktitle, else howpublished (a
    periodical's own title is its title, not a venue)."""
    target = VENUE_FIELD.get(entrytype.lower(), "howpublished")
    return target if target in ("journal", "booktitle") else "howpublished"


def venue_raw(entrytype: str, fields: Mapping[str, str]) -> str:
    """The raw value of the field that names where the work appeared: the journal of an
    article, the book or proceedings of a part of one, else whatever of these the entry has."""
    order = (
        ("journaltitle", "journal", "booktitle") if entrytype == "article" else ("booktitle", "journal", "journaltitle")
    )
    for name in (*order, "howpublished"):
        if fields.get(name):
            return fields[name]
    return ""


def verbatim_value(value: str) -> str:
    """A DOI or URL as a .bib file holds it: as it is, without what would end the field."""
    return "".join(ch for ch in value if ch.isprintable() and ch not in '{}\\ "')
