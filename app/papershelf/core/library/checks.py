"""Checking what callers hand the facade, and the words of its errors.

Bad input raises `InvalidValueError` (or `NotFoundError`) with a message a
person can act on, before anything is changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InvalidValueError
from ..paper import Status
from ..text import clean_text


def text_arg(value: object, what: str) -> str:
    """`value` if it is a string; else InvalidValueError naming `what` was expected."""
    if not isinstance(value, str):
        raise InvalidValueError(f"{what} must be text, not {type(value).__name__} ({value!r:.40})")
    return value


def status_arg(value: object) -> Status:
    """A Status from a Status or the words people type for one; InvalidValueError otherwise."""
    if isinstance(value, Status):
        return value
    if not isinstance(value, str):
        raise InvalidValueError(f"a status is one of: {', '.join(s.value for s in Status)}; not {value!r}")
    try:
        return Status.parse(value)
    except ValueError as exc:
        raise InvalidValueError(str(exc)) from None


def id_list(ids: Iterable[str]) -> list[str]:
    """Paper ids as a list; one id given on its own (a string) is a mistake, not its letters."""
    if isinstance(ids, str):
        raise InvalidValueError(f"paper ids are given as a list, not as one string ({ids!r}); put it in a list")
    try:
        return list(ids)
    except TypeError:
        raise InvalidValueError(f"paper ids are given as a list, not {type(ids).__name__}") from None


def tag_list(tags: Iterable[str]) -> list[str]:
    """Tags as a list of strings; a single string is a mistake (it would be read letter by letter)."""
    if isinstance(tags, str):
        raise InvalidValueError(f"tags are given as a list, not as one string ({tags!r}); put it in a list")
    try:
        out = list(tags)
    except TypeError:
        raise InvalidValueError(f"tags are given as a list, not {type(tags).__name__}") from None
    for tag in out:
        text_arg(tag, "a tag")
    return out


def new_text(value: str, what: str, limit: int) -> str:
    """`value`, a text the user gives to be stored (a tag, a list's name, notes, a title); InvalidValueError,
    in words, when it is longer than `limit` or holds control characters (`limits.has_controls`):
    refused, never changed behind the user's back."""
    from ..limits import has_controls

    if len(value) > limit:
        raise InvalidValueError(
            f"{what} is {len(value):,} characters long, more than the {limit:,} it may hold. Nothing was changed."
        )
    if has_controls(value):
        raise InvalidValueError(
            f"{what} holds control characters (such as terminal escapes, a carriage return or NUL), which are "
            "not stored; remove them and try again. Nothing was changed."
        )
    return value


def new_tags(tags: Iterable[str]) -> list[str]:
    """Tags to be given to papers, as a list (`tag_list`), each checked by `new_text`."""
    from ..limits import MAX_LABEL_CHARS

    return [new_text(t, f"the tag {t[:40]!r}", MAX_LABEL_CHARS) for t in tag_list(tags)]


def list_name(name: str) -> str:
    """List names compare case-insensitively with whitespace collapsed."""
    return " ".join(clean_text(name).split())


def common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at the start."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def closest(wanted: str, names: Iterable[str], what: str) -> str:
    """'did you mean …?' with the nearest names, else a few of them, for an error message."""
    import difflib  # here, not at start-up: only an error message needs it

    names = list(names)
    folded = {n.casefold(): n for n in names}
    near = [folded[m] for m in difflib.get_close_matches(wanted.casefold(), list(folded), n=3, cutoff=0.6)]
    if near:
        return "did you mean " + " or ".join(repr(n) for n in near) + "?"
    few = ", ".join(repr(n) for n in names[:8]) + (", …" if len(names) > 8 else "")
    return f"the {what} are: {few}."
