"""The entry types and field names BibTeX and BibLaTeX know: what `papershelf set` questions.

An unknown type is refused (a record of `@nonsense` exports as @misc, silently); a field no
type knows (a misspelt `titel=`) is added only when the person insists (`set --force`), and
the refusal names the nearest known name. The tables (core/biblio/types.py) are BibLaTeX's data model (biblatex
manual §2.1 and §2.2: regular, custom and special fields; the BibTeX names it reads as
aliases), classic BibTeX's, and the fields the common tools write (DBLP, ACM, JabRef, Zotero,
arXiv, MathSciNet), besides the editor's own names (`venue`, `entrytype`, `citekey`).
"""

from __future__ import annotations

from collections.abc import Iterable

from .biblio.types import COMMON_TYPES, KNOWN_FIELDS, KNOWN_TYPES


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
    return (
        f"{kind!r} is not an entry type BibTeX or BibLaTeX knows{_did_you_mean(_near(kind, KNOWN_TYPES))}, "
        f"so it would export as @misc; the common types are {', '.join(COMMON_TYPES)} "
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
