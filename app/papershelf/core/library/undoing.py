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

from ..changes import Change
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
    papers = lib._papers
    lists = lib._store.lists
    out = Diff()
    view: dict[str, list[str] | None] = {}  # lists as the ops so far left them

    def members(name: str) -> list[str] | None:
        if name in view:
            return view[name]
        cur = lists.get(name)
        return list(cur) if cur is not None else None

    def set_list(name: str, value: list[str] | None) -> None:
        before = out.lists[name][0] if name in out.lists else members(name)
        view[name] = list(value) if value is not None else None
        out.lists[name] = [before, view[name]]

    for op in ops:
        pid = op.key
        if op.kind == "set":
            if pid in out.added:
                continue  # added by this action: its digest is taken after
            paper = papers.get(pid)
            if paper is None or pid in out.deleted:
                continue
            raw = paper.raw()
            f = out.fields.setdefault(pid, {})
            for name, value in op.value.items():
                if name in _SKIP:
                    continue
                if name in f:
                    f[name][1] = copy.deepcopy(value)
                else:
                    f[name] = [copy.deepcopy(raw.get(name, FIELDS.get(name))), copy.deepcopy(value)]
            if not f:
                del out.fields[pid]
        elif op.kind == "add":
            if pid in papers and pid not in out.deleted:
                out.deleted[pid] = _before(papers[pid].raw(), out.fields.pop(pid, {}))
            out.added[pid] = ""
        elif op.kind == "del":
            if pid in out.added:
                del out.added[pid]
            elif pid in papers and pid not in out.deleted:
                out.deleted[pid] = _before(papers[pid].raw(), out.fields.pop(pid, {}))
        elif op.kind == "list":
            set_list(pid, op.value)
        elif op.kind == "rename":
            moved = members(pid)
            if moved is not None:
                set_list(op.value, moved)
                set_list(pid, None)
                out.renames.append([pid, op.value])
    # a field set back to what it was in the same action is no change
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
    ops: list[Op] = []
    kept = 0
    now = now_iso()
    removed: set[str] = set()
    added_elsewhere = _added_by_others(lib)
    for pid, dg in d.added.items():
        paper = papers.get(pid)
        if paper is None:
            continue
        if digest(paper.raw()) != dg or added_elsewhere(pid):
            kept += 1  # changed since, or imported on another device too: that import stays
            continue
        ops.append(Op("del", pid))
        removed.add(pid)
    back = [pid for pid in d.deleted if pid not in papers or pid in removed]
    for pid in back:
        ops.append(Op("add", pid, Paper.from_dict(copy.deepcopy(d.deleted[pid]))))
    kept += sum(1 for pid in d.deleted if pid in papers and pid not in removed)
    changed: set[str] = set()
    fields_changed: set[str] = set()
    for pid, f in d.fields.items():
        paper = papers.get(pid)
        if paper is None or pid in removed:
            kept += 1 if paper is None else 0
            continue
        raw = paper.raw()
        out: dict[str, Any] = {}
        for name, (old, new) in f.items():
            cur = raw.get(name, FIELDS.get(name))
            if name == "tags" and isinstance(cur, list) and isinstance(old, list) and isinstance(new, list):
                plus, minus = set(new) - set(old), set(old) - set(new)
                tags = sorted((set(cur) - plus) | minus)
                if tags != sorted(cur):
                    out[name] = tags
            elif cur == new:
                out[name] = copy.deepcopy(old)
            elif cur != old:
                kept += 1
        if out:
            out["updated"] = now
            ops.append(Op("set", pid, out))
            changed.add(pid)
            fields_changed.update(out)
    alive = (set(papers) - removed) | set(back)
    list_ops, touched, names, list_kept = _lists_back(d, lists, alive)
    ops += list_ops
    kept += list_kept
    if removed:  # papers the undo removes come off the other lists too
        for name, members in lists.items():
            if name not in names and removed.intersection(members):
                ops.append(Op("list", name, [i for i in members if i not in removed]))
                names.add(name)
    touched -= removed | set(back)
    ops += [Op.set_fields(pid, {"updated": now}) for pid in touched if pid in papers and pid not in changed]
    events: list[Change] = []
    if removed:
        events.append(Change("papers-removed", ids=frozenset(removed)))
    if back:
        events.append(Change("papers-added", ids=frozenset(back)))
    if changed:
        events.append(Change("papers-changed", ids=frozenset(changed), fields=frozenset(fields_changed)))
    if names:
        events.append(Change("lists-changed", ids=frozenset(touched), lists=frozenset(names)))
    return ops, events, kept


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
    ops: list[Op] = []
    touched: set[str] = set()
    names: set[str] = set()
    kept = 0
    done: set[str] = set()
    for old, new in reversed(d.renames):
        # a rename still as it was: renamed back (the list keeps its place among the lists)
        if new in lists and old not in lists and d.lists.get(new, [None, None])[1] == lists[new]:
            if d.lists.get(old, [None, None])[0] == lists[new]:
                ops.append(Op("rename", new, old))
                touched |= set(lists[new])
                names |= {old, new}
                done |= {old, new}
    for name, (before, after) in d.lists.items():
        if name in done:
            continue
        cur = lists.get(name)
        if cur == after:
            target = [i for i in before if i in alive] if before is not None else None
        elif cur is None:
            kept += 1  # deleted since
            continue
        else:
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
            if target == cur:
                kept += 1  # only the order changed since, or nothing of the action is left
                continue
            if before is None and not target:
                target = None
        if target == cur:
            continue
        ops.append(Op("list", name, target))
        touched |= set(cur or ()) ^ set(target or ())
        names.add(name)
    return ops, touched, names, kept


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
    words = {"notes": "the notes", "title": "the title", "citekey": "the citation key"}
    main = [n for n in ("notes", "title", "citekey") if n in names]
    if main:
        return f"Edit {words[main[0]]} of {them(ids)}"
    return f"Edit {them(ids)}"


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
