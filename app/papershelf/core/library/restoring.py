"""Undo support for the facade: put back exactly what was there.

The window's undo steps keep what `Library.snapshot_fields`, `lists` and
`records` handed out and give it back through `restore_fields`,
`restore_lists`, `restore_papers`, `put_records` and `swap_fields`; this
module does that work for them (part of the facade: it uses the library's
private parts). What comes back is checked first, so a malformed record
raises InvalidValueError and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..changes import Change, Record, announced
from ..errors import InvalidValueError
from ..paper import FIELDS, RATING_MAX, RATING_MIN, STATUS_VALUES, Paper, Status
from ..store import Op, now_iso
from .lists import touch

if TYPE_CHECKING:
    from .facade import Library

# bibfields: typing a title drops the record's raw title (paper.without_raw), and undoing puts it back
# reading_at, read_at: a status change sets them (paper.status_change), and undoing clears or puts them back
UNDOABLE_FIELDS = (
    "status",
    "tags",
    "notes",
    "rating",
    "title",
    "title_derived",
    "bibfields",
    "reading_at",
    "read_at",
    "files",
    "opened_at",
)


def _copy(value: object) -> object:
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def snapshot_fields(lib: Library, ids: Iterable[str]) -> dict[str, Record]:
    """See `Library.snapshot_fields`."""
    out = {}
    papers = lib._papers
    for pid in ids:
        paper = papers.get(pid)
        if paper is not None:
            out[pid] = {f: _copy(getattr(paper, f)) for f in UNDOABLE_FIELDS}
    return out


def restore_fields(lib: Library, snapshot: Mapping[str, Record]) -> int:
    """See `Library.restore_fields`."""
    for pid, fields in snapshot.items():
        _check_fields(pid, fields, UNDOABLE_FIELDS)
    present = lib.present(snapshot)
    return lib._set_many(present, lambda p: snapshot[p.id])


def restore_lists(lib: Library, lists: Mapping[str, list[str] | None]) -> None:
    """See `Library.restore_lists`."""
    _check_lists(lists)
    store = lib._store
    ops: list[Op] = []
    touched: set[str] = set()
    names: set[str] = set()
    for name, members in lists.items():
        current = store.lists.get(name)
        if current == members:
            continue
        if members is not None:
            members = lib.present(members)
        ops.append(Op("list", name, members))
        touched |= set(current or ()) ^ set(members or ())
        names.add(name)
    if ops:
        lib._commit(
            ops + touch(lib, touched), [Change("lists-changed", ids=frozenset(touched), lists=frozenset(names))]
        )


def restore_papers(lib: Library, papers: Iterable[Paper], lists: Mapping[str, list[str] | None]) -> int:
    """See `Library.restore_papers`."""
    papers = list(papers)
    for p in papers:
        if not isinstance(p, Paper):
            raise InvalidValueError(f"only papers the library handed out can be restored, not {p!r:.60}")
    _check_lists(lists)
    back = [p for p in papers if p.id not in lib]
    if not back:
        return 0
    ops = [Op("add", p.id, Paper.from_dict(dict(p.raw()))) for p in back]
    for name, members in lists.items():
        if members is not None and lib._store.lists.get(name) != members:
            ops.append(Op("list", name, list(members)))
    lib._commit(
        ops,
        [Change("papers-added", ids=frozenset(p.id for p in back)), Change("lists-changed", lists=frozenset(lists))],
    )
    for p in back:
        if lib._fp_index is not None and p.fingerprint:
            lib._fp_index[p.fingerprint] = p.id
    return len(back)


def put_records(lib: Library, records: Mapping[str, Record], remove: Iterable[str] = ()) -> None:
    """See `Library.put_records`."""
    papers = lib._papers
    for pid, record in records.items():
        _check_record(pid, record)
        _check_types(pid, record, papers.get(pid))
    gone = [pid for pid in dict.fromkeys(remove) if pid in papers and pid not in records]
    ops, touched_lists = _removal_ops(lib, gone)
    record_ops, added, changed, fields = _record_ops(papers, records, now_iso())
    ops += record_ops
    old_fps = [papers[pid].fingerprint for pid in gone + changed]
    events = announced(
        Change("papers-removed", ids=frozenset(gone)),
        Change("lists-changed", lists=frozenset(touched_lists)),
        Change("papers-added", ids=frozenset(added)),
        Change("papers-changed", ids=frozenset(changed), fields=frozenset(fields)),
    )
    lib._commit(ops, events)
    if lib._fp_index is not None:
        for fp in old_fps:
            lib._fp_index.pop(fp, None)
        for pid in added + changed:
            fp = papers[pid].fingerprint
            if fp:
                lib._fp_index[fp] = pid


def _removal_ops(lib: Library, gone: list[str]) -> tuple[list[Op], list[str]]:
    """The ops that delete papers `gone` and take them off every list; the lists' names."""
    ops: list[Op] = [Op("del", pid) for pid in gone]
    touched_lists: list[str] = []
    if gone:
        gone_set = set(gone)
        for name, members in lib._store.lists.items():
            if gone_set.intersection(members):
                ops.append(Op("list", name, [i for i in members if i not in gone_set]))
                touched_lists.append(name)
    return ops, touched_lists


def _record_ops(
    papers: Mapping[str, Paper], records: Mapping[str, Record], now: str
) -> tuple[list[Op], list[str], list[str], set[str]]:
    """The ops that make each paper's record the one given (a paper not there is added):
    the ops, the papers added, those changed, and the fields changed."""
    ops: list[Op] = []
    added: list[str] = []
    changed: list[str] = []
    fields: set[str] = set()
    for pid, record in records.items():
        current = papers.get(pid)
        if current is None:
            ops.append(Op("add", pid, Paper.from_dict({**record, "id": pid})))
            added.append(pid)
            continue
        raw = current.raw()
        diff = {
            k: record.get(k, FIELDS[k])
            for k in set(raw) | set(record)
            if k not in ("id", "updated") and raw.get(k, FIELDS[k]) != record.get(k, FIELDS[k])
        }
        if diff:
            # `updated` moves on, as after any undo (the index catches up by digests, not by it)
            diff["updated"] = now
            ops.append(Op("set", pid, diff))
            changed.append(pid)
            fields.update(diff)
    return ops, added, changed, fields


def swap_fields(
    lib: Library,
    frm: Mapping[str, Record],
    to: Mapping[str, Record],
    add: Mapping[str, Record] | None = None,
    remove: Iterable[str] = (),
) -> None:
    """See `Library.swap_fields`."""
    for records in (frm, to, add or {}):
        for pid, record in records.items():
            _check_record(pid, record)
    papers = lib._papers
    out: dict[str, Record] = {}
    for pid, target in to.items():
        current, source = papers.get(pid), frm.get(pid)
        if current is None or source is None:
            continue
        raw = current.raw()
        record = dict(raw)
        for k in set(source) | set(target):
            if k in ("id", "updated"):
                continue
            old, new = source.get(k, FIELDS[k]), target.get(k, FIELDS[k])
            if old != new and raw.get(k, FIELDS[k]) == old:
                record[k] = new
        out[pid] = record
    out.update(add or {})
    put_records(lib, out, remove=remove)


# ---- checks: what comes back must be what was handed out ---------------------------


def _check_record(pid: str, record: object) -> None:
    """A stored record (JSON form) for paper `pid`; InvalidValueError if it cannot be one."""
    if not isinstance(pid, str) or not isinstance(record, dict):
        raise InvalidValueError(f"a paper's record is a dict under its id, not {record!r:.60} under {pid!r}")
    unknown = set(record) - set(FIELDS)
    if unknown:
        raise InvalidValueError(f"the record of {pid} has fields a paper does not have: {', '.join(sorted(unknown))}")
    if record.get("id", pid) != pid:
        raise InvalidValueError(f"the record under {pid} is of another paper ({record['id']!r})")
    if "status" in record and record["status"] not in STATUS_VALUES:
        raise InvalidValueError(f"the record of {pid} has an unknown status {record['status']!r}")


_STR_LISTS = frozenset(("authors", "links", "tags", "distinct"))


def _well_typed(name: str, value: object) -> bool:
    """Whether `value` is what a paper's field `name` holds in its JSON form."""
    default = FIELDS[name]
    if name in _STR_LISTS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if name == "sources":
        return isinstance(value, list) and all(
            isinstance(s, dict)
            and isinstance(s.get("file"), str)
            and isinstance(s.get("format"), str)
            and type(s.get("line")) is int
            for s in value
        )
    if name == "files":
        return isinstance(value, list) and all(isinstance(f, dict) and isinstance(f.get("path"), str) for f in value)
    if name == "bibfields":
        return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    if name == "rating":
        return value is None or (type(value) is int and RATING_MIN <= value <= RATING_MAX)
    if name == "year":
        return value is None or type(value) is int
    return type(value) is type(default)  # str fields, and title_derived a bool


def _check_types(pid: str, record: Record, current: Paper | None) -> None:
    """InvalidValueError for a field of the wrong type (it would be saved and break reading,
    search and export later); a value the paper holds already is taken as it is."""
    raw = current.raw() if current is not None else {}
    for name, value in record.items():
        if name not in raw or raw[name] != value:
            if not _well_typed(name, value):
                raise InvalidValueError(f"the {name} of {pid} cannot be {value!r:.60}")


def _check_fields(pid: str, fields: object, allowed: Iterable[str]) -> None:
    """Editable fields as Python values (a snapshot); InvalidValueError if they cannot be set."""
    if not isinstance(fields, dict):
        raise InvalidValueError(f"the fields of {pid!r} are a dict, not {fields!r:.60}")
    unknown = set(fields) - set(allowed)
    if unknown:
        raise InvalidValueError(f"{', '.join(sorted(unknown))} cannot be put back by undo (paper {pid})")
    status = fields.get("status", Status.UNREAD)
    if not isinstance(status, Status) and status not in STATUS_VALUES:
        raise InvalidValueError(f"unknown status {status!r} for paper {pid}")
    tags = fields.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidValueError(f"the tags of {pid} must be a list of strings, not {tags!r:.60}")
    rating = fields.get("rating")
    if rating is not None and (type(rating) is not int or not RATING_MIN <= rating <= RATING_MAX):
        raise InvalidValueError(f"a rating is {RATING_MIN} to {RATING_MAX} stars, or none, not {rating!r}")
    for name in ("notes", "title", "reading_at", "read_at"):
        if not isinstance(fields.get(name, ""), str):
            raise InvalidValueError(f"the {name} of {pid} must be text, not {fields[name]!r:.60}")
    if not isinstance(fields.get("title_derived", False), bool):
        raise InvalidValueError(f"title_derived of {pid} is True or False, not {fields['title_derived']!r}")


def _check_lists(lists: Mapping[str, list[str] | None]) -> None:
    """Reading lists as handed out (name → ids, or None); InvalidValueError otherwise."""
    for name, members in lists.items():
        if not isinstance(name, str) or not name:
            raise InvalidValueError(f"a reading list needs a name, not {name!r}")
        if members is not None and (not isinstance(members, list) or not all(isinstance(i, str) for i in members)):
            raise InvalidValueError(f"the reading list {name!r} must hold a list of paper ids, not {members!r:.60}")
