"""A shared library's own doors: merging what other devices wrote, and the conflicts kept.

See core/store/shared.py for the folder and core/store/merge.py for the rules.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..changes import Change
from ..errors import InvalidValueError, NotFoundError
from ..paper import FIELDS
from ..store import Conflict, Op, SharedStore, Store, layout_of, now_iso

if TYPE_CHECKING:
    from .facade import Library


def recover(folder: Path | str) -> str:
    """Repair a damaged library folder (see Store.recover): this device's files of a shared
    library; returns the report in words."""
    if layout_of(Path(folder)) == "shared":
        return SharedStore(folder).recover()
    return Store(folder).recover()


def device(lib: Library) -> str | None:
    """This device's id in a shared library (None for a library read as a single device's)."""
    return getattr(lib._store, "device", None)


def unchanged_on_disk(lib: Library) -> bool:
    """False once another process (or device) saved an edit after this read-only library was
    read (its copy is older than the library); always True for the writer."""
    return lib._store.unchanged_on_disk()


def refresh(lib: Library) -> list[Change]:
    """Merge what other devices' files brought since (a sync tool or git put them in the
    folder), and announce it as any edit is; returns the changes."""
    store = lib._store
    if not isinstance(store, SharedStore):
        return []
    ids, lists = store.refresh()
    papers = store.papers
    changes = []
    present = frozenset(i for i in ids if i in papers)
    gone = frozenset(i for i in ids if i not in papers)
    if present:
        changes.append(Change("papers-changed", ids=present, fields=frozenset(FIELDS)))
    if gone:
        changes.append(Change("papers-removed", ids=gone))
    if lists:
        changes.append(Change("lists-changed", lists=frozenset(lists)))
    if present or gone:
        lib._fp_index = None  # built again when next needed
    for change in changes:
        lib._emit(change)
    return changes


def conflicts(lib: Library) -> list[Conflict]:
    """Values kept because two devices changed one field at once, and papers deleted on one
    device while another edited them, oldest first."""
    sync = lib._store.sync
    return [] if sync is None else sorted(sync.conflicts(), key=lambda c: (c.hlc, c.device, c.paper, c.field))


def take_conflict(lib: Library, number: int, keep: bool = True) -> str:
    """Settle conflict `number` (1-based, as `conflicts` lists them): `keep` takes the kept value
    (or brings the deleted paper back); otherwise the library's value stays and the kept one is
    let go. Either way it is an edit of this device that has seen every value, so it syncs and
    settles the conflict on every device. Returns what was done, in words."""
    found = conflicts(lib)
    if not 1 <= number <= len(found):
        raise NotFoundError(f"There is no conflict {number}; there are {len(found)}.")
    c = found[number - 1]
    with lib._history.labelled(settle_label(lib, c, keep)):
        return _settle(lib, c, keep)


def settle_label(lib: Library, c: Conflict, keep: bool) -> str:
    """How settling conflict `c` is named in the undo history."""
    paper = lib.find(c.paper)
    title = paper.title if paper is not None else str(deleted_record(lib, c.paper).get("title", ""))
    them = "'" + (title if len(title) <= 40 else title[:39] + "…") + "'" if title else c.paper
    if not c.field:
        return f"Bring back {them}" if keep else f"Keep {them} deleted"
    if keep:
        return f"Use the other device's {c.field} of {them}"
    return f"Keep the {c.field} shown for {them}"


def _settle(lib: Library, c: Conflict, keep: bool) -> str:
    now = now_iso()
    if not c.field:
        sync = lib._store.sync
        assert sync is not None
        tomb = sync.gone[c.paper]
        if keep:
            from ..paper import Paper

            lib._commit(
                [Op("add", c.paper, Paper.from_dict({**tomb.record, "id": c.paper, "updated": now}))],
                [Change("papers-added", ids=frozenset([c.paper]))],
            )
            return f"Paper {c.paper} is back in the library."
        lib._commit([Op("del", c.paper)], [Change("papers-removed", ids=frozenset([c.paper]))])
        return f"Paper {c.paper} stays deleted."
    if c.field not in FIELDS:
        raise InvalidValueError(f"unknown field {c.field!r}")
    value = c.value if keep else c.current
    lib._commit(
        [Op("set", c.paper, {c.field: value, "updated": now})],
        [Change("papers-changed", ids=frozenset([c.paper]), fields=frozenset([c.field]))],
    )
    return f"Paper {c.paper}: {c.field} is now the {'kept' if keep else 'current'} value."


def deleted_record(lib: Library, pid: str) -> dict[str, object]:
    """A deleted paper's record as the deletion kept it ({} if there is none)."""
    sync = lib._store.sync
    tomb = None if sync is None else sync.gone.get(pid)
    return dict(tomb.record) if tomb is not None else {}


# The facade's edits that read the library, work out what to change and apply it: each holds the
# store's write lock throughout, so a merge of another device's files (`refresh`, which the window
# runs on a worker thread) cannot land between the reading and the applying. Otherwise a tag
# another device had just added would be taken off again by an edit computed from the tags as they
# were before the merge (the store turns "tags = [...]" into per-tag adds and removes).
EDITS = (
    "set_status remove_tags set_tags set_notes set_rating set_title delete_papers add_tags rename_tag "
    "delete_tag make_keywords_tags drop_keyword_tags set_citekey edit_record add_found apply_found restore_fields "
    "restore_lists restore_papers put_records swap_fields create_list add_to_list remove_from_list "
    "reorder_list rename_list delete_list take_conflict undo redo citation_keys bibtex_entries "
    "export_bibtex detach_file mark_opened"
).split()


def hold_lock_for_edits(cls: type) -> None:
    """Wrap each of `cls`'s EDITS so that it runs under its store's write lock."""
    for name in EDITS:
        method = getattr(cls, name)

        def locked(self: Any, *args: Any, __method: Any = method, **kwargs: Any) -> Any:
            with self._store._write_lock:
                return __method(self, *args, **kwargs)

        functools.update_wrapper(locked, method)
        setattr(cls, name, locked)
