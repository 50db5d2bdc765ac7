"""The entry types and field names BibTeX and BibLaTeX know: what `papershelf set` questions.

An unknown type is refused (a record of `@nonsense` exports as @misc, silently); a field no
type knows (a misspelt `titel=`) is added only when the person insists (`set --force`), and
the refusal names the nearest known name. The tables are BibLaTeX's data model (biblatex
manual §2.1 and §2.2: regular, custom and special fields; the BibTeX names it reads as
aliases), classic BibTeX's, and the fields the common tools write (DBLP, ACM, JabRef, Zotero,
arXiv, MathSciNet), besides the editor's own names (`venue`, `entrytype`, `citekey`).
"""

from __future__ import annotations

from collections.abc import Iterable

# fmt: off
KNOWN_TYPES = frozenset(
    "article book mvbook inbook bookinbook suppbook booklet collection mvcollection incollection suppcollection"
    " dataset manual misc online patent periodical suppperiodical proceedings mvproceedings inproceedings"
    " reference mvreference inreference report set software thesis unpublished xdata customa customb customc"
    " customd custome customf artwork audio bibnote commentary image jurisdiction legislation legal letter movie"
    " music performance review standard video conference electronic mastersthesis phdthesis techreport www".split()
)
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
# fmt: on
KNOWN_FIELDS = frozenset((_BIBLATEX_FIELDS + " " + _OTHER_FIELDS).split())


def _near(word: str, known: Iterable[str]) -> list[str]:
    import difflib  # here: only a refusal needs it

    return difflib.get_close_matches(word, sorted(known), n=2, cutoff=0.6)


def _did_you_mean(near: list[str]) -> str:
    return f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""


def type_problem(kind: str, current: str = "") -> str:
    """Why `kind` cannot be the entry type ("" when BibTeX or BibLaTeX knows it, or it is the
    type the record already has)."""
    kind = kind.strip().lower()
    if kind in KNOWN_TYPES or kind == current.lower():
        return ""
    from .record_edit import ENTRY_TYPES  # the editor's list: the common ones

    return (
        f"{kind!r} is not an entry type BibTeX or BibLaTeX knows{_did_you_mean(_near(kind, KNOWN_TYPES))}, "
        f"so it would export as @misc; the common types are {', '.join(ENTRY_TYPES)} "
        "(and the rest of BibLaTeX's, such as mvbook or standard)"
    )


def unknown_fields(names: Iterable[str], present: Iterable[str] = ()) -> dict[str, list[str]]:
    """The names among `names` that no type knows and the record does not already have, each
    with the nearest known names (a misspelling's likely meaning)."""
    have = {n.lower() for n in present}
    out: dict[str, list[str]] = {}
    for name in names:
        key = name.strip().lower()
        if key not in KNOWN_FIELDS and key not in have:
            out[key] = _near(key, KNOWN_FIELDS)
    return out


def unknown_fields_problem(unknown: dict[str, list[str]]) -> str:
    """The refusal of `unknown_fields`' answer, or "" when it is empty."""
    if not unknown:
        return ""
    said = "; ".join(f"{name!r}{_did_you_mean(near)}" for name, near in unknown.items())
    one = len(unknown) == 1
    return f"no BibTeX or BibLaTeX type knows the field{'' if one else 's'} {said}"
