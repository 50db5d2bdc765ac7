"""Saved searches, for the facade: a name for the search box's words and the sidebar's filters.

They live in `saved-searches.json` in the library folder, not in the store:
the store's journal knows only its own ops (add, set, del, list, rename) and
an older Papershelf refuses a journal with an op it does not know, so a
saved search written there would lock an older version out of the whole
library. A small JSON file, replaced atomically (`fileio.write_atomically`),
costs nothing to the library, and a damaged one costs only itself: it is
read leniently, reported in words (`Library.notices`) and set aside beside
the library, never a traceback. See docs/DESIGN.md, "Saved searches".
"""

from __future__ import annotations

import json
import os
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ExportError, InvalidValueError, NotFoundError, ReadOnlyLibraryError, StoreWriteError
from ..fileio import read_small_file, write_atomically
from ..limits import MAX_FIELD_CHARS, MAX_LABEL_CHARS
from ..query import Query
from .checks import closest, list_name, new_text, status_arg, text_arg

if TYPE_CHECKING:
    from .facade import Library

FILE_NAME = "saved-searches.json"
FORMAT = "papershelf-saved-searches"
VERSION = 1
# the sidebar's filters, by the name `Query` gives them ("list" is taken for "list_name")
FILTER_KEYS = ("status", "tag", "area", "list_name")

# the damaged files already reported, per library (a read-only library cannot set them aside)
_reported: weakref.WeakKeyDictionary[Library, set[tuple[int, int]]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class SavedSearch:
    """A search kept under a name: the search box's words and the sidebar's filters
    (keys of `FILTER_KEYS`, each a value as `Query` takes it)."""

    name: str
    text: str = ""
    filters: Mapping[str, str] = field(default_factory=dict)

    def query(self, **changes: Any) -> Query:
        """The `Query` this search makes (with `changes`, e.g. an order or a limit)."""
        return Query(self.text).with_(**{**self.filters, **changes})

    def describe(self) -> str:
        """The search in words, for a tooltip or a listing: `words · tag: x · list: y`."""
        parts = [repr(self.text.strip())] if self.text.strip() else []
        parts += [f"{'list' if k == 'list_name' else k}: {v}" for k, v in self.filters.items()]
        return " · ".join(parts) or "every paper"


def path_of(lib: Library) -> Path:
    """Where the library's saved searches are kept."""
    return lib.folder / FILE_NAME


def search_name(name: object) -> str:
    """A saved search's name as kept: whitespace collapsed; InvalidValueError for none."""
    name = list_name(text_arg(name, "a saved search's name"))
    if not name:
        raise InvalidValueError("a saved search needs a name")
    return name


def clean_filters(filters: object) -> dict[str, str]:
    """The filters as kept: known keys only, values given (None: no filter), a status by its value."""
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidValueError(f"a saved search's filters are a mapping, not {type(filters).__name__}")
    out: dict[str, str] = {}
    for key, value in filters.items():
        key = "list_name" if key == "list" else key
        if key not in FILTER_KEYS:
            raise InvalidValueError(f"a saved search filters by {', '.join(FILTER_KEYS)} (or list); not by {key!r}")
        if value is None:
            continue
        if key == "status":
            out[key] = status_arg(value).value
        else:
            text = " ".join(text_arg(value, f"the {key} filter").split())
            if text:
                out[key] = text
    return {k: out[k] for k in FILTER_KEYS if k in out}  # one order, whatever order they came in


# ---- reading -------------------------------------------------------------------------


def _parse(raw: bytes) -> tuple[list[SavedSearch], int]:
    """The searches in the file's bytes, and how many entries had to be left out.
    ValueError when the file as a whole is not a saved-searches file."""
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("searches"), list):
        raise ValueError("it is not a saved-searches file")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise ValueError(f"it is of a newer version ({data.get('version')!r}) than this Papershelf reads")
    found: dict[str, SavedSearch] = {}
    bad = 0
    for entry in data["searches"]:
        try:
            if not isinstance(entry, dict):
                raise InvalidValueError("not an entry")
            name = search_name(entry.get("name"))
            text = text_arg(entry.get("text", ""), "a saved search's words")
            filters = clean_filters(entry.get("filters"))
        except InvalidValueError:
            bad += 1
            continue
        found.setdefault(name.casefold(), SavedSearch(name, text, filters))
    return list(found.values()), bad


def _set_aside(lib: Library, path: Path) -> Path | None:
    """Move a damaged file out of the way, keeping it (None where it cannot be moved)."""
    if lib.readonly:
        return None
    aside = path.with_name(f"saved-searches.damaged-{time.strftime('%Y%m%d-%H%M%S')}.json")
    n = 1
    while aside.exists():
        n += 1
        aside = aside.with_name(f"saved-searches.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{n}.json")
    try:
        os.replace(path, aside)
    except OSError:
        return None
    return aside


def _report(lib: Library, path: Path, stamp: tuple[int, int], why: str, kept: list[SavedSearch]) -> None:
    """Say once what was wrong with the file, set it aside and keep what could be read."""
    seen = _reported.setdefault(lib, set())
    if stamp in seen:
        return
    seen.add(stamp)
    aside = _set_aside(lib, path)
    if aside is not None and kept:
        _write(lib, kept)  # the searches that could be read stay saved
    where = f"; the file is kept as {aside.name}" if aside is not None else ""
    if kept:
        many = len(kept) != 1
        what = f"{len(kept)} saved search{'es' if many else ''} could be read and {'are' if many else 'is'} kept"
    else:
        what = "no saved search could be read from it"
    lib._store.notices.append(f"The saved searches in {path} were damaged ({why}): {what}{where}.")


def load(lib: Library) -> list[SavedSearch]:
    """The saved searches in the order saved; a damaged file is reported and set aside, never raised."""
    path = path_of(lib)
    try:
        st = path.stat()
        raw = read_small_file(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        _report(lib, path, (0, 0), exc.strerror or str(exc), [])
        return []
    stamp = (st.st_mtime_ns, st.st_size)
    try:
        searches, bad = _parse(raw)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, not ours
        why = "it is not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc).split("\n")[0]
        _report(lib, path, stamp, why, [])
        return []
    if bad:
        _report(lib, path, stamp, f"{bad} entr{'ies' if bad != 1 else 'y'} could not be read", searches)
    return searches


# ---- writing -------------------------------------------------------------------------


def _write(lib: Library, searches: list[SavedSearch]) -> None:
    if lib.readonly:
        raise ReadOnlyLibraryError(
            f"The library in {lib.folder} was opened read-only; the saved searches were not changed.", lib.folder
        )
    data = {
        "format": FORMAT,
        "version": VERSION,
        "searches": [{"name": s.name, "text": s.text, "filters": dict(s.filters)} for s in searches],
    }
    path = path_of(lib)
    try:
        write_atomically(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    except ExportError as exc:  # its words speak of an export: say what this was
        cause = exc.__cause__
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else "the write failed"
        raise StoreWriteError(
            f"Could not save the saved searches in {path}: {reason}. They are as they were.", path
        ) from exc


def _key(searches: list[SavedSearch], name: object) -> int:
    """The position of the search called `name` (case-insensitive); NotFoundError naming the closest."""
    wanted = search_name(name).casefold()
    for i, s in enumerate(searches):
        if s.name.casefold() == wanted:
            return i
    if not searches:
        raise NotFoundError(f"No saved search named {name!r}; there are no saved searches yet.")
    raise NotFoundError(
        f"No saved search named {name!r}; " + closest(wanted, [s.name for s in searches], "saved searches")
    )


# ---- the facade's methods (Library.saved_searches, …: one line each in facade.py) ----


def saved_searches(lib: Library) -> dict[str, SavedSearch]:
    """Name → saved search, in the order they were saved (a damaged file: see `Library.notices`)."""
    return {s.name: s for s in load(lib)}


def saved_search(lib: Library, name: str) -> SavedSearch:
    """The saved search called `name` (case-insensitive); NotFoundError naming the closest."""
    searches = load(lib)
    return searches[_key(searches, name)]


def save_search(lib: Library, name: str, query_text: str, filters: Mapping[str, str | None] | None = None) -> str:
    """Save the search box's words and the sidebar's filters under `name` (one of that
    name is replaced, in its place); returns the name as kept."""
    words = new_text(text_arg(query_text, "a search's words"), "a search's words", MAX_FIELD_CHARS)
    new_text(text_arg(name, "a saved search's name"), "a saved search's name", MAX_LABEL_CHARS)
    search = SavedSearch(search_name(name), words, clean_filters(filters))
    searches = load(lib)
    try:
        searches[_key(searches, search.name)] = search
    except NotFoundError:
        searches.append(search)
    _write(lib, searches)
    return search.name


def delete_saved_search(lib: Library, name: str) -> None:
    """Forget a saved search; NotFoundError if there is none of that name."""
    searches = load(lib)
    del searches[_key(searches, name)]
    _write(lib, searches)


def rename_saved_search(lib: Library, old: str, new: str) -> str:
    """Give a saved search another name; returns it as kept. InvalidValueError when
    another saved search has that name."""
    searches = load(lib)
    i = _key(searches, old)
    new = search_name(new_text(text_arg(new, "a saved search's name"), "a saved search's name", MAX_LABEL_CHARS))
    if any(s.name.casefold() == new.casefold() for j, s in enumerate(searches) if j != i):
        raise InvalidValueError(f"there is already a saved search named {new!r}")
    s = searches[i]
    searches[i] = SavedSearch(new, s.text, s.filters)
    _write(lib, searches)
    return new
