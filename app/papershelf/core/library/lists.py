"""Reading lists, for the facade: named, ordered lists of paper ids.

`Library.create_list`, `add_to_list`, … are the way in; this module does
the work for them (part of the facade: it uses the library's private parts).
A list name compares case-insensitively with whitespace collapsed; a change
to a list marks its papers updated, which the search index follows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..changes import Change
from ..errors import InvalidValueError, NotFoundError
from ..limits import MAX_LABEL_CHARS
from ..store import Op, now_iso
from .checks import closest, id_list, list_name, new_text, text_arg

if TYPE_CHECKING:
    from .facade import Library


def list_key(lib: Library, name: str) -> str:
    """The stored name of the list called `name`; NotFoundError naming the closest lists."""
    lists = lib._store.lists
    name = text_arg(name, "a reading list's name")
    if name in lists:
        return name
    folded = list_name(name).casefold()
    for key in lists:
        if key.casefold() == folded:
            return key
    if not lists:
        raise NotFoundError(f"No reading list named {name!r}; there are no reading lists yet.")
    raise NotFoundError(f"No reading list named {name!r}; " + closest(folded, lists, "lists"))


def touch(lib: Library, ids: Iterable[str]) -> list[Op]:
    """Mark papers as updated: a list they are on changed, which the
    search index (and anything else that follows `updated`) must see."""
    now = now_iso()
    papers = lib._papers
    return [Op.set_fields(pid, {"updated": now}) for pid in ids if pid in papers]


def _new_name(name: str) -> str:
    name = list_name(new_text(text_arg(name, "a reading list's name"), "a reading list's name", MAX_LABEL_CHARS))
    if not name:
        raise InvalidValueError("a reading list needs a name")
    return name


def create_list(lib: Library, name: str) -> str:
    """See `Library.create_list`."""
    name = _new_name(name)
    try:
        return list_key(lib, name)  # already there: nothing to do
    except NotFoundError:
        pass
    lib._commit([Op("list", name, [])], [Change("lists-changed", lists=frozenset([name]))])
    return name


def add_to_list(lib: Library, name: str, ids: Iterable[str]) -> int:
    """See `Library.add_to_list`."""
    wanted = [lib.get(pid).id for pid in dict.fromkeys(id_list(ids))]  # an unknown id creates no list
    key = _new_name(name)
    try:
        key = list_key(lib, key)
    except NotFoundError:
        pass  # made with its first papers, as one action (one undo)
    members = lib._store.lists.get(key, [])
    present = set(members)
    added = [pid for pid in wanted if pid not in present]
    if added or key not in lib._store.lists:
        lib._commit(
            [Op("list", key, members + added), *touch(lib, added)],
            [Change("lists-changed", ids=frozenset(added), lists=frozenset([key]))],
        )
    return len(added)


def remove_from_list(lib: Library, name: str, ids: Iterable[str]) -> int:
    """See `Library.remove_from_list`."""
    key = list_key(lib, name)
    gone = set(id_list(ids))
    members = lib._store.lists[key]
    kept = [i for i in members if i not in gone]
    if len(kept) != len(members):
        taken = gone & set(members)
        lib._commit(
            [Op("list", key, kept), *touch(lib, taken)],
            [Change("lists-changed", ids=frozenset(taken), lists=frozenset([key]))],
        )
    return len(members) - len(kept)


def reorder_list(lib: Library, name: str, ids: Iterable[str]) -> None:
    """See `Library.reorder_list`."""
    key = list_key(lib, name)
    order = id_list(ids)
    if sorted(order) != sorted(lib._store.lists[key]):
        raise InvalidValueError("a new order must hold exactly the papers already on the list")
    lib._commit([Op("list", key, order)], [Change("lists-changed", lists=frozenset([key]))])


def rename_list(lib: Library, old: str, new: str) -> str:
    """See `Library.rename_list`."""
    key = list_key(lib, old)
    new = list_name(new_text(text_arg(new, "a reading list's name"), "a reading list's name", MAX_LABEL_CHARS))
    if not new:
        raise InvalidValueError("a reading list needs a name")
    lists = lib._store.lists
    if new != key and any(k.casefold() == new.casefold() and k != key for k in lists):
        raise InvalidValueError(f"there is already a reading list named {new!r}")
    members = lists[key]
    lib._commit(
        [Op("rename", key, new), *touch(lib, members)],
        [Change("lists-changed", ids=frozenset(members), lists=frozenset([key, new]))],
    )
    return new


def delete_list(lib: Library, name: str) -> None:
    """See `Library.delete_list`."""
    key = list_key(lib, name)
    members = lib._store.lists[key]
    lib._commit(
        [Op("list", key, None), *touch(lib, members)],
        [Change("lists-changed", ids=frozenset(members), lists=frozenset([key]))],
    )
