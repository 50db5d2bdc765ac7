"""What an action changed, and the ops that take it back: the diffs of the library's undo.

`Library._commit` hands each action's ops to `diff` before they are applied;
`diff` reads, from the state the user acted on, what the ops will change:

- fields set: per paper, per field, [old, new] in their JSON form (`updated` is
  not kept: any edit moves it on, an undo too);
- papers added: their ids and a digest of the record as added (an import of
  10,000 papers keeps 10,000 short digests, not its records a second time);
- papers deleted: the records as they were (what an undo must bring back);
- reading lists: [members before, members after] (None: no list), and renames.

`inverse` turns that back into ops against the library as it is now, and
leaves alone whatever changed since the action (here, or on another device
once its edits are merged in): a field whose value is no longer the one the
action set, a paper added whose record changed, a list whose members changed.
Tags and list members are taken back one by one (a tag the action added is
removed, one it removed is put back), so another edit of the same paper's tags
is kept. `label` says the action in words. history.py keeps the diffs.
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..attachments import file_key
from ..changes import Change, announced
from ..paper import FIELDS, Paper
from ..store import Op, now_iso

if TYPE_CHECKING:
    from .facade import Library

_SKIP = frozenset(("updated", "fingerprint"))  # not the user's: moved on by any edit, or derived


def digest(raw: Mapping[str, Any]) -> str:
    """A short digest of a paper's record, to tell later whether it changed (not `updated`:
    an edit undone since moved it on, and the record is as it was)."""
    d = {k: v for k, v in raw.items() if k not in _SKIP}
    return "%08x" % zlib.crc32(orjson.dumps(d, option=orjson.OPT_SORT_KEYS))


@dataclass
class Diff:
    """What one action changed (see the module's docstring), in JSON form."""

    label: str = ""
    fields: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    added: dict[str, str] = field(default_factory=dict)
    deleted: dict[str, dict[str, Any]] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict)
    renames: list[list[str]] = field(default_factory=list)

    def empty(self) -> bool:
        """Whether the action changed nothing."""
        return not (self.fields or self.added or self.deleted or self.lists)

    def to_json(self) -> dict[str, Any]:
        """The entry as a history line holds it."""
        return {"label": self.label, "f": self.fields, "a": self.added, "d": self.deleted, "l": self.lists,
                "r": self.renames}  # fmt: skip

    @classmethod
    def from_json(cls, d: Any) -> Diff:
        """An entry read back from a history line; ValueError if it is not one."""
        if not isinstance(d, dict) or not isinstance(d.get("label"), str):
            raise ValueError("not an undo entry")
        out = cls(d["label"], d.get("f") or {}, d.get("a") or {}, d.get("d") or {}, d.get("l") or {}, d.get("r") or [])
        if not all(isinstance(x, dict) for x in (out.fields, out.added, out.deleted, out.lists)):
            raise ValueError("not an undo entry")
        if not isinstance(out.renames, list):
            raise ValueError("not an undo entry")
        return out


@dataclass(frozen=True)
class Undone:
    """What `Library.undo` or `redo` did: the action's label, the changes it
    emitted, and how many parts it left alone because they changed since."""

    label: str
    changes: list[Change]
    kept: int = 0
    redo: bool = False

    @property
    def message(self) -> str:
        """In words, for the status bar and the command line."""
        line = ("Redone: " if self.redo else "Undone: ") + self.label
        if self.kept:
            what = "part was" if self.kept == 1 else "parts were"
            how = "it is" if self.kept == 1 else "they are"
            line += f" ({self.kept} {what} changed since, here or on another device, and kept as {how} now)"
        elif not self.changes:
            line += " (nothing left to change: it had been changed back since)"
        return line


# ---- what ops change ------------------------------------------------------------------


def diff(lib: Library, ops: list[Op]) -> Diff:
    """What `ops` will change, read from the library before they are applied."""
    reading = _DiffReader(lib._papers, lib._store.lists)
    for op in ops:
        reading.take(op)
    return reading.result()


class _DiffReader:
    """A `Diff` read op by op, from the state before the ops."""

    def __init__(self, papers: Mapping[str, Paper], lists: Mapping[str, list[str]]) -> None:
        self.papers = papers
        self.lists = lists
        self.out = Diff()
        self.view: dict[str, list[str] | None] = {}  # lists as the ops so far left them

    def take(self, op: Op) -> None:
        """What one op changes."""
        if op.kind == "set":
            self._set(op.key, op.value)
        elif op.kind == "add":
            self._deleted(op.key)
            self.out.added[op.key] = ""
        elif op.kind == "del":
            if op.key in self.out.added:
                del self.out.added[op.key]
            else:
                self._deleted(op.key)
        elif op.kind == "list":
            self._set_list(op.key, op.value)
        elif op.kind == "rename":
            moved = self._members(op.key)
            if moved is not None:
                self._set_list(op.value, moved)
                self._set_list(op.key, None)
                self.out.renames.append([op.key, op.value])

    def _set(self, pid: str, values: Mapping[str, Any]) -> None:
        out = self.out
        if pid in out.added:
            return  # added by this action: its digest is taken after
        paper = self.papers.get(pid)
        if paper is None or pid in out.deleted:
            return
        raw = paper.raw()
        f = out.fields.setdefault(pid, {})
        for name, value in values.items():
            if name in _SKIP:
                continue
            if name in f:
                f[name][1] = copy.deepcopy(value)
            else:
                f[name] = [copy.deepcopy(raw.get(name, FIELDS.get(name))), copy.deepcopy(value)]
        if not f:
            del out.fields[pid]

    def _deleted(self, pid: str) -> None:
        """A paper the op replaces or deletes: its record as it was before the action."""
        out = self.out
        if pid in self.papers and pid not in out.deleted:
            out.deleted[pid] = _before(self.papers[pid].raw(), out.fields.pop(pid, {}))

    def _members(self, name: str) -> list[str] | None:
        if name in self.view:
            return self.view[name]
        cur = self.lists.get(name)
        return list(cur) if cur is not None else None

    def _set_list(self, name: str, value: list[str] | None) -> None:
        out = self.out
        before = out.lists[name][0] if name in out.lists else self._members(name)
        self.view[name] = list(value) if value is not None else None
        out.lists[name] = [before, self.view[name]]

    def result(self) -> Diff:
        """The diff, less what the action set back to what it was (no change)."""
        out = self.out
        for pid in list(out.fields):
            f = {k: v for k, v in out.fields[pid].items() if v[0] != v[1]}
            if f:
                out.fields[pid] = f
            else:
                del out.fields[pid]
        out.lists = {k: v for k, v in out.lists.items() if v[0] != v[1]}
        return out


def _before(raw: Mapping[str, Any], olds: Mapping[str, list[Any]]) -> dict[str, Any]:
    rec = copy.deepcopy(dict(raw))
    for name, (old, _new) in olds.items():
        rec[name] = old
    return rec


def finish(lib: Library, d: Diff) -> None:
    """After the ops were applied: the digests of the papers added."""
    papers = lib._papers
    for pid in list(d.added):
        paper = papers.get(pid)
        if paper is None:
            del d.added[pid]
        else:
            d.added[pid] = digest(paper.raw())


# ---- taking an action back -------------------------------------------------------------


def inverse(lib: Library, d: Diff) -> tuple[list[Op], list[Change], int]:
    """The ops that take `d` back where nothing changed since, the changes they make, and
    how many parts were left alone because they had changed since."""
    papers = lib._papers
    lists = lib._store.lists
    now = now_iso()
    ops, removed, kept = _remove_added(lib, d)
    back = [pid for pid in d.deleted if pid not in papers or pid in removed]
    ops += [Op("add", pid, Paper.from_dict(copy.deepcopy(d.deleted[pid]))) for pid in back]
    kept += sum(1 for pid in d.deleted if pid in papers and pid not in removed)
    field_ops, fields_changed, fields_kept = _fields_back(d, papers, removed, now)
    ops += field_ops
    kept += fields_kept
    changed = {op.key for op in field_ops}
    alive = (set(papers) - removed) | set(back)
    list_ops, touched, names, list_kept = _lists_back(d, lists, alive)
    ops += list_ops
    kept += list_kept
    ops += _off_other_lists(lists, names, removed)
    touched -= removed | set(back)
    ops += [Op.set_fields(pid, {"updated": now}) for pid in touched if pid in papers and pid not in changed]
    return ops, _undo_changes(removed, back, changed, fields_changed, names, touched), kept


def _remove_added(lib: Library, d: Diff) -> tuple[list[Op], set[str], int]:
    """The papers the action added, deleted again unless changed since (or imported on another
    device too: that import stays): the ops, their ids, and how many were kept."""
    papers = lib._papers
    added_elsewhere = _added_by_others(lib)
    ops: list[Op] = []
    removed: set[str] = set()
    kept = 0
    for pid, dg in d.added.items():
        paper = papers.get(pid)
        if paper is None:
            continue
        if digest(paper.raw()) != dg or added_elsewhere(pid):
            kept += 1
            continue
        ops.append(Op("del", pid))
        removed.add(pid)
    return ops, removed, kept


def _fields_back(d: Diff, papers: Mapping[str, Paper], removed: set[str], now: str) -> tuple[list[Op], set[str], int]:
    """The fields the action set, set back where they are still as it left them: the ops
    (one per paper), the fields they set, and how many were kept (changed since)."""
    ops: list[Op] = []
    fields_changed: set[str] = set()
    kept = 0
    for pid, f in d.fields.items():
        paper = papers.get(pid)
        if paper is None or pid in removed:
            kept += 1 if paper is None else 0
            continue
        out, paper_kept = _paper_fields_back(paper.raw(), f)
        kept += paper_kept
        if out:
            out["updated"] = now
            ops.append(Op("set", pid, out))
            fields_changed.update(out)
    return ops, fields_changed, kept


def _paper_fields_back(raw: Mapping[str, Any], f: Mapping[str, list[Any]]) -> tuple[dict[str, Any], int]:
    """One paper's fields set back (tags one by one), and how many were changed since."""
    out: dict[str, Any] = {}
    kept = 0
    for name, (old, new) in f.items():
        cur = raw.get(name, FIELDS.get(name))
        if name == "tags" and isinstance(cur, list) and isinstance(old, list) and isinstance(new, list):
            plus, minus = set(new) - set(old), set(old) - set(new)
            tags = sorted((set(cur) - plus) | minus)
            if tags != sorted(cur):
                out[name] = tags
        elif name == "files" and isinstance(cur, list) and isinstance(old, list) and isinstance(new, list):
            files = _files_back(cur, old, new)
            if files != cur:
                out[name] = files
        elif cur == new:
            out[name] = copy.deepcopy(old)
        elif cur != old:
            kept += 1
    return out, kept


def _files_back(cur: list[Any], old: list[Any], new: list[Any]) -> list[Any]:
    """A paper's files with an action's attaching and detaching taken back one by one (keyed
    as the merge keys them), so a file attached since, here or on another device, stays."""
    if cur == new:
        return copy.deepcopy(old)
    before = {file_key(f): f for f in old if isinstance(f, dict)}
    after = {file_key(f): f for f in new if isinstance(f, dict)}
    out: list[Any] = []
    for f in cur:
        k = file_key(f) if isinstance(f, dict) else ""
        if k in after and k not in before:
            continue  # attached by the action
        out.append(copy.deepcopy(before[k] if k in before and after.get(k) == f else f))
    have = {file_key(f) for f in out if isinstance(f, dict)}
    for i, f in enumerate(old):
        k = file_key(f) if isinstance(f, dict) else ""
        if k not in after and k not in have:  # detached by the action: back at its place
            out.insert(min(i, len(out)), copy.deepcopy(f))
            have.add(k)
    return out


def _off_other_lists(lists: Mapping[str, list[str]], names: set[str], removed: set[str]) -> list[Op]:
    """Papers the undo removes come off the lists the undo does not set already (their
    names are added to `names`)."""
    ops: list[Op] = []
    if not removed:
        return ops
    for name, members in lists.items():
        if name not in names and removed.intersection(members):
            ops.append(Op("list", name, [i for i in members if i not in removed]))
            names.add(name)
    return ops


def _undo_changes(
    removed: set[str], back: list[str], changed: set[str], fields: set[str], names: set[str], touched: set[str]
) -> list[Change]:
    """What an undo changes, for the library's listeners."""
    return announced(
        Change("papers-removed", ids=frozenset(removed)),
        Change("papers-added", ids=frozenset(back)),
        Change("papers-changed", ids=frozenset(changed), fields=frozenset(fields)),
        Change("lists-changed", ids=frozenset(touched), lists=frozenset(names)),
    )


def _added_by_others(lib: Library) -> Any:
    """Whether another device added the paper too (the same paper imported there, not having
    seen this device's import): undoing this device's import must not take that one back."""
    sync = getattr(lib._store, "sync", None)
    me = getattr(lib._store, "device", None)
    if sync is None or me is None:
        return lambda pid: False

    def check(pid: str) -> bool:
        meta = sync.metas.get(pid)
        if meta is None:
            return False
        return any(dev not in ("", me) for _, dev in (meta.add, *meta.add_fields.values()))

    return check


def _lists_back(d: Diff, lists: Mapping[str, list[str]], alive: set[str]) -> tuple[list[Op], set[str], set[str], int]:
    """The reading lists the action changed, set back where they still hold its change:
    the ops, the papers they touch, the lists' names, and how many were kept."""
    ops, touched, names = _renames_back(d, lists)
    done = set(names)
    kept = 0
    for name, (before, after) in d.lists.items():
        if name in done:
            continue
        cur = lists.get(name)
        target, changed_since = _list_back(before, after, cur, alive)
        if changed_since:
            kept += 1
            continue
        if target == cur:
            continue
        ops.append(Op("list", name, target))
        touched |= set(cur or ()) ^ set(target or ())
        names.add(name)
    return ops, touched, names, kept


def _renames_back(d: Diff, lists: Mapping[str, list[str]]) -> tuple[list[Op], set[str], set[str]]:
    """A rename still as it was: renamed back (the list keeps its place among the lists).
    The ops, the papers they touch, and the names of the lists (both names of each)."""
    ops: list[Op] = []
    touched: set[str] = set()
    names: set[str] = set()
    for old, new in reversed(d.renames):
        if new in lists and old not in lists and d.lists.get(new, [None, None])[1] == lists[new]:
            if d.lists.get(old, [None, None])[0] == lists[new]:
                ops.append(Op("rename", new, old))
                touched |= set(lists[new])
                names |= {old, new}
    return ops, touched, names


def _list_back(
    before: list[str] | None, after: list[str] | None, cur: list[str] | None, alive: set[str]
) -> tuple[list[str] | None, bool]:
    """A list's members with the action taken back, and whether it was changed since so
    that nothing is left to take back (deleted since, or only its order changed)."""
    if cur == after:
        return ([i for i in before if i in alive] if before is not None else None), False
    if cur is None:
        return None, True  # deleted since
    target = _members_back(before, after, cur, alive)
    if target == cur:
        return target, True  # only the order changed since, or nothing of the action is left
    if before is None and not target:
        return None, False
    return target, False


def _members_back(before: list[str] | None, after: list[str] | None, cur: list[str], alive: set[str]) -> list[str]:
    """A list changed since the action: the members it added taken off, those it removed
    put back near their old places; the rest as it is now."""
    has = set(after or ())
    plus = has - set(before or ())
    minus = [i for i in (before or ()) if i not in has]  # (sets made once, not per paper)
    target = [i for i in cur if i not in plus]
    placed = set(target)
    where = {pid: n for n, pid in enumerate(before or ())}
    for i in minus:
        if i in alive and i not in placed:
            target.insert(min(where[i], len(target)), i)
            placed.add(i)
    return target


# ---- labels -----------------------------------------------------------------------------


def label(lib: Library, d: Diff) -> str:
    """The action in words, from what it changed ("Tag 3 papers 'ml'")."""
    papers = lib._papers

    def them(ids: list[str], records: Mapping[str, Any] | None = None) -> str:
        if len(ids) == 1:
            rec = (records or {}).get(ids[0])
            title = rec.get("title", "") if isinstance(rec, dict) else ""
            if not title and ids[0] in papers:
                title = papers[ids[0]].title
            if title:
                return "'" + (title if len(title) <= 40 else title[:39] + "…") + "'"
        return f"{len(ids)} paper" + ("" if len(ids) == 1 else "s")

    parts: list[str] = []
    added = [p for p in d.added if p not in d.deleted]
    if added:
        parts.append("Import " + them(added))
    gone = [p for p in d.deleted if p not in d.added]
    if gone:
        parts.append("Delete " + them(gone, d.deleted))
    if d.fields:
        parts.append(_fields_label(d.fields, them))
    if d.renames:
        parts += [f"Rename list '{a}' to '{b}'" for a, b in d.renames]
    elif d.lists and not gone:
        parts += [_list_label(name, before, after, them) for name, (before, after) in d.lists.items()]
    return "; ".join(parts) if parts else "Edit"


def _fields_label(fields: Mapping[str, Mapping[str, list[Any]]], them: Any) -> str:
    ids = list(fields)
    names = set().union(*(set(f) for f in fields.values()))
    if names == {"tags"}:
        plus: set[str] = set()
        minus: set[str] = set()
        for f in fields.values():
            old, new = f["tags"]
            plus |= set(new) - set(old)
            minus |= set(old) - set(new)
        if plus and not minus:
            return f"Tag {them(ids)} " + ("with " if len(ids) == 1 else "") + _quoted(plus)
        if minus and not plus:
            return f"Take {_quoted(minus)} off {them(ids)}"
        return f"Change the tags of {them(ids)}"
    if "status" in names and names <= {"status", "reading_at", "read_at"}:
        values = {f["status"][1] for f in fields.values() if "status" in f}
        return f"Mark {them(ids)} " + (values.pop() if len(values) == 1 else "with new statuses")
    if names == {"rating"}:
        values = {f["rating"][1] for f in fields.values()}
        value = values.pop() if len(values) == 1 else "?"
        return f"Clear the rating of {them(ids)}" if value is None else f"Rate {them(ids)} {value} stars"
    if names == {"files"}:
        return _files_label(fields, them(ids))
    words = {"notes": "the notes", "title": "the title", "citekey": "the citation key"}
    main = [n for n in ("notes", "title", "citekey") if n in names]
    if main:
        return f"Edit {words[main[0]]} of {them(ids)}"
    return f"Edit {them(ids)}"


def _files_label(fields: Mapping[str, Mapping[str, list[Any]]], them: str) -> str:
    counts = [len(f["files"][1]) - len(f["files"][0]) for f in fields.values()]
    if all(c > 0 for c in counts):
        return f"Attach {_files(sum(counts))} to {them}"
    if all(c < 0 for c in counts):
        return f"Remove {_files(-sum(counts))} from {them}"
    return f"Change the files of {them}"


def _files(n: int) -> str:
    return "1 file" if n == 1 else f"{n} files"


def _quoted(tags: set[str]) -> str:
    return ", ".join(f"'{t}'" for t in sorted(tags))


def _list_label(name: str, before: list[str] | None, after: list[str] | None, them: Any) -> str:
    if after is None:
        return f"Delete list '{name}'"
    had, has = set(before or ()), set(after)  # once: inside the comprehensions they were built per paper
    plus = [i for i in after if i not in had]
    minus = [i for i in (before or ()) if i not in has]
    if plus and not minus:
        return f"Add {them(plus)} to list '{name}'"
    if minus and not plus:
        return f"Remove {them(minus)} from list '{name}'"
    if before is None:
        return f"Create list '{name}'"
    return f"Reorder list '{name}'" if not plus else f"Change list '{name}'"
