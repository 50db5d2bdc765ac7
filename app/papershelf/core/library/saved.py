"""Saved searches, for the facade: a name for the search box's words and the sidebar's filters.

They live in `devices/<device>/saved-searches.json` in the library folder, one
file per device, merged on reading (synced.py: each device writes only its
own; per name, the latest save wins; a delete is a tombstone), not in the
store: the store's journal knows only its own ops (add, set, del, list,
rename) and an older Papershelf refuses a journal with an op it does not
know. A small JSON file, replaced atomically (`fileio.write_atomically`),
costs nothing to the library, and a damaged one costs only itself: this
device's is read leniently, reported in words (`Library.notices`) and set
aside beside itself, never a traceback; another device's is skipped until a
sync brings it whole. See docs/DESIGN.md, "Saved searches".
"""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ExportError, InvalidValueError, NotFoundError, ReadOnlyLibraryError, StoreWriteError
from ..limits import MAX_FIELD_CHARS, MAX_LABEL_CHARS
from ..query import Query
from . import synced
from .checks import closest, list_name, new_text, status_arg, text_arg

if TYPE_CHECKING:
    from .facade import Library

FILE_NAME = "saved-searches.json"
FORMAT = "papershelf-saved-searches"
# the sidebar's filters, by the name `Query` gives them ("list" is taken for "list_name")
FILTER_KEYS = ("status", "tag", "area", "list_name")

# the damaged files already reported, per library (a read-only library cannot set them aside)
_reported: weakref.WeakKeyDictionary[Library, set[tuple[str, int, int]]] = weakref.WeakKeyDictionary()


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


def _read_item(raw: object, deleted: bool) -> tuple[str, dict[str, Any]]:
    """One entry of a saved-searches file: (its name in any case, its fields); InvalidValueError."""
    if not isinstance(raw, dict):
        raise InvalidValueError("not an entry")
    name = search_name(raw.get("name"))
    if deleted:
        return name.casefold(), {"name": name}
    text = text_arg(raw.get("text", ""), "a saved search's words")
    return name.casefold(), {"name": name, "text": text, "filters": clean_filters(raw.get("filters"))}


KIND = synced.Kind(FILE_NAME, FORMAT, "searches", "name", "saved-searches", _read_item)


def path_of(lib: Library) -> Path:
    """Where this device keeps the library's saved searches."""
    return synced.own_path(lib, KIND)


def _set_aside(lib: Library, path: Path) -> Path | None:
    """Move this device's damaged file out of the way, keeping it (None where it cannot be moved)."""
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


def _report(lib: Library, got: synced.FileRead, merged: synced.Merged, base: bool) -> None:
    """Say once what was wrong with this device's file (set aside) or the library's old one
    (left as it is: no longer read once this device has a file of its own, which gets
    what could be read), and keep what could be read."""
    if got.error is None and not got.bad:
        return
    seen = _reported.setdefault(lib, set())
    if (str(got.path), *got.stat) in seen:
        return
    seen.add((str(got.path), *got.stat))
    why = got.error or f"{got.bad} entr{'ies' if got.bad != 1 else 'y'} could not be read"
    aside = None if base else _set_aside(lib, got.path)
    kept = len([e for e in got.entries if not e.deleted])
    if not lib.readonly and (base or aside is not None):
        try:  # what could be read stays saved, in this device's file
            _write(lib, None, merged)
        except StoreWriteError:
            pass
    where = f"; the file is kept as {aside.name}" if aside is not None else ""
    if kept:
        many = kept != 1
        what = f"{kept} saved search{'es' if many else ''} could be read and {'are' if many else 'is'} kept"
    else:
        what = "no saved search could be read from it"
    lib._store.notices.append(f"The saved searches in {got.path} were damaged ({why}): {what}{where}.")


def _merged(lib: Library) -> synced.Merged:
    """Every device's saved searches merged; this device's damaged file (or the old one's)
    reported and set aside, never raised."""
    merged = synced.read(lib, KIND)
    for got, base in ((merged.own, False), (merged.base, True)):
        if got is not None:
            _report(lib, got, merged, base)
    return merged


def _search(entry: synced.Entry) -> SavedSearch:
    return SavedSearch(entry.item["name"], entry.item["text"], entry.item["filters"])


def load(lib: Library) -> list[SavedSearch]:
    """The saved searches in the order saved; a damaged file is reported and set aside, never raised."""
    return [_search(e) for e in _merged(lib).live()]


# ---- writing -------------------------------------------------------------------------


def _item(s: SavedSearch) -> dict[str, Any]:
    return {"name": s.name, "text": s.text, "filters": dict(s.filters)}


def _write(
    lib: Library,
    searches: list[SavedSearch] | None,
    merged: synced.Merged | None = None,
    places: Mapping[str, str] | None = None,
) -> None:
    """Make the saved searches `searches` (None: as they are), in this device's file: only
    those changed, added or gone are stamped anew (a new one goes last; `places`: new name
    → the old name whose place it takes)."""
    if lib.readonly:
        raise ReadOnlyLibraryError(
            f"The library in {lib.folder} was opened read-only; the saved searches were not changed.", lib.folder
        )
    merged = synced.read(lib, KIND) if merged is None else merged
    changes = {} if searches is None else synced.diff(merged, ((s.name.casefold(), _item(s)) for s in searches))
    path = path_of(lib)
    try:
        synced.write(lib, KIND, merged, changes, places or {})
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
    _write(lib, searches, places={new.casefold(): s.name.casefold()})
    return new
