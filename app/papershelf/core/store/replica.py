"""One device's replica of a shared library: the merge rules of merge.py applied
to the store's papers and lists.

The `Store` of a device folder holds a `Replica` (`store.sync`). Local edits
come in as the facade's coarse `Op`s and are turned into fine operations
(`translate`) against the state the user acted on; every action, local or
read from another device's files, is applied by `apply`. A snapshot carries
the replica's metadata as extra lines (`lines`, `load`), so a device's library
file is the whole merged state it knew, and another device can join it
(`join`) when the actions it needs were folded away.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from ..attachments import file_key
from ..paper import FIELDS, Paper, Status
from .journal import Op
from .merge import (
    NO_CONFLICT,
    Action,
    Clock,
    Conflict,
    FileReg,
    Head,
    ListMeta,
    PaperMeta,
    Stamp,
    Tombstone,
    heads_merge,
    iter_conflicts,
    normal_tags,
    shown_files,
    winner,
)

log = logging.getLogger("papershelf.core.store")

# A deleted paper is kept (to take the deletion back, and so that a device that had not seen the
# deletion does not bring the paper back) this long, then dropped at a compaction. A device that
# comes back after longer than this may bring back papers deleted meanwhile.
TOMBSTONE_DAYS = 365


class Replica:
    """The merge state beside a store's papers and lists."""

    def __init__(self, device: str, papers: dict[str, Paper], lists: dict[str, list[str]]):
        self.device = device
        self.papers = papers
        self.lists = lists
        self.metas: dict[str, PaperMeta] = {}
        self.default_add: Stamp = (0, "")
        self.gone: dict[str, Tombstone] = {}
        self.list_metas: dict[str, ListMeta] = {}
        self.applied: dict[str, int] = {}  # device → how many of its actions the state holds
        self.clock = Clock()
        # edits of papers whose add has not arrived (another device's file is late): applied with it
        self.orphans: dict[str, list[tuple[Action, list[Any]]]] = {}
        self.touched: set[str] = set()  # papers changed by `apply` since the caller last looked
        self.touched_lists: set[str] = set()
        self._dirty: set[str] | None = None  # lists to show anew at the end of an action or a join

    # ---- state ---------------------------------------------------------------
    def bind(self, papers: dict[str, Paper], lists: dict[str, list[str]]) -> None:
        """Follow the store's dicts (a load replaces them)."""
        self.papers, self.lists = papers, lists

    def meta(self, pid: str) -> PaperMeta:
        """A paper's metadata (made when first needed)."""
        meta = self.metas.get(pid)
        if meta is None:
            meta = self.metas[pid] = PaperMeta(add=self.default_add)
        return meta

    def list_meta(self, name: str) -> ListMeta:
        """A reading list's metadata (made when first needed, from the list as it is)."""
        meta = self.list_metas.get(name)
        if meta is None:
            # a list of a library from before sync: existing, members in their order
            # (a list never heard of is older than that: one from before sync read elsewhere exists)
            ids = self.lists.get(name)
            meta = ListMeta((0, "", True) if ids is not None else (-1, "", False))
            for i, pid in enumerate(ids or []):
                meta.members[pid] = (0, "", True, float(i))
            self.list_metas[name] = meta
        return meta

    def conflicts(self) -> list[Conflict]:
        """Every kept conflict."""
        return list(iter_conflicts(self.papers, self.metas, self.gone))

    def new_action(self) -> Action:
        """The stamp, number and version vector of this device's next action."""
        seq = self.applied.get(self.device, 0) + 1
        vv = {d: n for d, n in self.applied.items() if d != self.device and n}
        vv[self.device] = seq - 1
        return Action(self.clock.tick(), self.device, seq, vv)

    # ---- local edits -----------------------------------------------------------
    def translate(self, ops: list[Op]) -> list[list[Any]]:
        """The fine operations that say what `ops` change in the current state."""
        out: list[list[Any]] = []
        for op in ops:
            kind, key, value = op.kind, op.key, op.value
            if kind == "add":
                out.append(["a", key, dict(value.raw())])
            elif kind == "set":
                paper = self.papers.get(key)
                if paper is None:
                    continue
                for name, new in value.items():
                    if name == "tags":
                        old, now = set(paper.tags), set(normal_tags(new))
                        out += [["t", key, t, True] for t in sorted(now - old)]
                        out += [["t", key, t, False] for t in sorted(old - now)]
                    elif name == "files":
                        out += self._file_ops(key, paper, new)
                    else:
                        out.append(["f", key, name, new])
            elif kind == "del":
                out.append(["x", key])
            elif kind == "list":
                out += self._list_ops(key, value)
            elif kind == "rename":
                members = list(self.lists.get(key, []))
                out += self._list_ops(key, None)
                out += self._list_ops(value, members, fresh=True)
        return out

    def _file_ops(self, pid: str, paper: Paper, new: Any) -> list[list[Any]]:
        """The "F" operations that make a paper's files `new`: one per file detached, attached,
        changed or moved (appended files go after the last place, so that files appended on
        two devices at once both come after the ones they had)."""
        meta = self.meta(pid)
        regs = self._file_regs(paper.raw(), meta)
        old = [file_key(r) for r in paper.raw().get("files", [])]
        wanted: dict[str, dict[str, Any]] = {}
        for rec in new if isinstance(new, list) else []:
            if isinstance(rec, dict):
                wanted.setdefault(file_key(rec), rec)
        out: list[list[Any]] = [["F", pid, k, False, regs[k][3], regs[k][4]] for k in old if k not in wanted]
        # a conflict kept by a build that merged files as one value: settling it (take, dismiss)
        # says of every file in it whether it is attached, which ends the conflict
        legacy = meta.heads.get("files", [])
        heads = {file_key(r): r for h in legacy if isinstance(h.value, list) for r in h.value if isinstance(r, dict)}
        out += [["F", pid, k, False, 0.0, r] for k, r in heads.items() if k not in wanted and k not in regs]
        places = _file_places(list(wanted), [k for k in old if k in wanted], regs)
        for k, rec in wanted.items():
            reg = regs.get(k)
            if legacy or reg is None or not reg[2] or reg[3] != places[k] or reg[4] != rec:
                out.append(["F", pid, k, True, places[k], dict(rec)])
        return out

    def _list_ops(self, name: str, ids: list[str] | None, fresh: bool = False) -> list[list[Any]]:
        """The fine operations that make list `name` hold `ids` (None: delete it); `fresh`:
        as a new list, whatever a list of that name held."""
        meta = self.list_meta(name) if name in self.lists or name in self.list_metas else None
        old = [] if fresh or meta is None else list(meta.order())
        if ids is None:
            return [["L", name, False], *_members_off(name, old, meta)]
        out: list[list[Any]] = [] if name in self.lists else [["L", name, True]]
        wanted = set(ids)
        out += _members_off(name, [pid for pid in old if pid not in wanted], meta)
        out += _members_on(name, ids, [pid for pid in old if pid in wanted], meta)
        return out

    # ---- applying ----------------------------------------------------------------
    def apply(self, action: Action, ops: list[list[Any]]) -> None:
        """Apply one action's fine operations (local or another device's)."""
        self.clock.see(action.hlc)
        with self._lists_once():
            for op in ops:
                self.apply_one(action, op)
        if self.applied.get(action.dev, 0) < action.seq:
            self.applied[action.dev] = action.seq

    @contextlib.contextmanager
    def _lists_once(self) -> Iterator[None]:
        """Lists changed inside are shown anew once, at the end (an action that puts 10,000
        papers on a list sorted the list 10,000 times)."""
        if self._dirty is not None:
            yield  # an outer one shows them
            return
        self._dirty = set()
        try:
            yield
        finally:
            dirty, self._dirty = self._dirty, None
            for name in sorted(dirty):
                self._materialize(name)

    def apply_one(self, action: Action, op: list[Any]) -> None:
        """Apply one fine operation of `action`; one on a paper not known yet waits for its add."""
        kind = op[0]
        if kind in _PAPER_OPS and op[1] not in self.papers and op[1] not in self.gone:
            waiting = self.orphans.setdefault(op[1], [])
            if not any(a.stamp == action.stamp and o == op for a, o in waiting):  # joins bring them again
                waiting.append((action, op))
            return
        if kind == "a":
            self._add(action, op[1], op[2])
        elif kind == "f":
            self._set(action, op[1], op[2], op[3])
        elif kind == "t":
            self._tag(action, op[1], op[2], bool(op[3]))
        elif kind == "F":
            self._file(action, op[1], op[2], (action.hlc, action.dev, bool(op[3]), float(op[4]), op[5]))
        elif kind == "x":
            self._delete(action, op[1])
        elif kind == "L":
            self._list_exists(action, op[1], bool(op[2]))
        elif kind == "m":
            self._member(action, op[1], op[2], bool(op[3]), float(op[4]))

    def _target(self, action: Action, pid: str) -> tuple[dict[str, Any], PaperMeta] | None:
        """The record and metadata an edit of `pid` goes to: the paper, a deleted paper it
        brings back (stamped after the deletion), or the deleted paper it stays with."""
        paper = self.papers.get(pid)
        if paper is not None:
            return paper.raw(), self.meta(pid)
        tomb = self.gone.get(pid)
        if tomb is None:
            return None  # the caller keeps the edit as an orphan
        if action.stamp > tomb.action.stamp:
            self._bring_back(pid)
            return self.papers[pid].raw(), self.meta(pid)
        return tomb.record, tomb.meta  # an edit the deletion had not seen shows as a conflict

    def _bring_back(self, pid: str) -> None:
        tomb = self.gone.pop(pid)
        self.papers[pid] = Paper.wrap_trusted(tomb.record)
        self.metas[pid] = tomb.meta
        self.touched.add(pid)
        self._relist(pid)

    def _add(self, action: Action, pid: str, record: dict[str, Any]) -> None:
        record = {k: v for k, v in record.items() if k in FIELDS and v != FIELDS[k]}
        record["id"] = pid
        if pid not in self.papers and pid not in self.gone:
            self.papers[pid] = Paper.from_dict(record)
            self.metas[pid] = PaperMeta(add=action.stamp)
            self.touched.add(pid)
            self._relist(pid)
            for early, op in self.orphans.pop(pid, []):
                self.apply_one(early, op)
            return
        target = self._target(action, pid)
        if target is None:
            return
        raw, meta = target
        for name, value in record.items():
            if name in ("id", "tags", "files") or name in meta.heads or name not in FIELDS:
                continue
            current = meta.add_fields.get(name, meta.add if name in raw else (-1, ""))
            if action.stamp > current:
                _put(raw, name, value)
                if action.stamp != meta.add:
                    meta.add_fields[name] = action.stamp
        for tag in normal_tags(record.get("tags", [])):
            self._tag_into(raw, meta, (action.hlc, action.dev, True), tag)
        self._files_attached(action, raw, meta, record.get("files"))
        self.touched.add(pid)

    def _set(self, action: Action, pid: str, name: str, value: Any) -> None:
        if name not in FIELDS or name in ("id", "tags"):
            return
        target = self._target(action, pid)
        if target is None:
            return
        raw, meta = target
        if name == "files":
            # a whole list of files (a Papershelf before the "F" operation): its files are
            # attached, none is detached (what its user acted on is not known)
            if self._files_attached(action, raw, meta, value):
                self.touched.add(pid)
            return
        if name in NO_CONFLICT:
            heads = meta.heads.get(name)
            if heads and heads[0].stamp >= action.stamp:
                return
            meta.heads[name] = [Head(action.hlc, action.dev, action.seq, {}, None)]
            _put(raw, name, value)
        else:
            heads, changed = heads_merge(
                meta.heads.get(name, []), Head(action.hlc, action.dev, action.seq, action.vv, value)
            )
            if not changed:
                return
            meta.heads[name] = heads
            _put(raw, name, winner(heads).value)
        self.touched.add(pid)

    def _tag(self, action: Action, pid: str, tag: str, present: bool) -> None:
        target = self._target(action, pid)
        if target is None:
            return
        raw, meta = target
        if self._tag_into(raw, meta, (action.hlc, action.dev, present), tag):
            self.touched.add(pid)

    def _tag_into(self, raw: dict[str, Any], meta: PaperMeta, reg: tuple[int, str, bool], tag: str) -> bool:
        tags = list(raw.get("tags", []))
        current = meta.tags.get(tag)
        if current is None:
            current = (*meta.add, tag in tags) if tag in tags else (-1, "", False)
        if (reg[0], reg[1]) <= (current[0], current[1]):
            return False
        meta.tags[tag] = reg
        if reg[2] and tag not in tags:
            _put(raw, "tags", sorted([*tags, tag]))
        elif not reg[2] and tag in tags:
            _put(raw, "tags", [t for t in tags if t != tag])
        return True

    def _file(self, action: Action, pid: str, key: str, reg: FileReg) -> None:
        target = self._target(action, pid)
        if target is None:
            return
        raw, meta = target
        if self._file_into(raw, meta, key, reg):
            self.touched.add(pid)

    def _files_attached(self, action: Action, raw: dict[str, Any], meta: PaperMeta, files: Any) -> bool:
        """The files of an add (or a whole list set) attached, each at its place in the list."""
        changed = False
        for i, rec in enumerate(files if isinstance(files, list) else []):
            if isinstance(rec, dict) and isinstance(rec.get("path"), str):
                changed |= self._file_into(raw, meta, file_key(rec), (action.hlc, action.dev, True, float(i), rec))
        return changed

    @staticmethod
    def _file_regs(raw: Mapping[str, Any], meta: PaperMeta) -> dict[str, FileReg]:
        """A paper's attachment registers; for a paper none was kept for yet, made from its list
        (stamped as the paper's add or the latest setting of the whole list, places by order)."""
        if meta.files:
            return meta.files
        stamp = max([meta.add, meta.add_fields.get("files", meta.add), *(h.stamp for h in meta.heads.get("files", []))])
        return {
            file_key(rec): (stamp[0], stamp[1], True, float(i), rec)
            for i, rec in reversed(list(enumerate(raw.get("files", []))))
        }

    def _file_into(self, raw: dict[str, Any], meta: PaperMeta, key: str, reg: FileReg) -> bool:
        regs = self._file_regs(raw, meta)
        current = regs.get(key)
        if current is not None and (reg[0], reg[1]) <= (current[0], current[1]):
            return False
        meta.files = {**regs, key: reg}
        meta.heads.pop("files", None)  # the whole list's values are in the registers now
        meta.add_fields.pop("files", None)
        _put(raw, "files", shown_files(meta.files))
        return True

    def _delete(self, action: Action, pid: str) -> None:
        paper = self.papers.get(pid)
        if paper is not None:
            meta = self.meta(pid)
            if meta.latest() > action.stamp:
                return  # edited after the deletion (by the clocks): the edit brings it back
            self.gone[pid] = Tombstone(action, paper.raw(), meta)
            del self.papers[pid]
            self.metas.pop(pid, None)
            self.touched.add(pid)
            self._relist(pid)
            return
        tomb = self.gone.get(pid)
        if tomb is not None and action.stamp > tomb.action.stamp:
            self.gone[pid] = Tombstone(action, tomb.record, tomb.meta)

    def _list_exists(self, action: Action, name: str, exists: bool) -> None:
        meta = self.list_meta(name)
        if action.stamp > meta.exists[:2]:
            meta.exists = (action.hlc, action.dev, exists)
            self._materialize(name)

    def _member(self, action: Action, name: str, pid: str, present: bool, pos: float) -> None:
        meta = self.list_meta(name)
        current = meta.members.get(pid)
        if current is None or action.stamp > current[:2]:
            meta.members[pid] = (action.hlc, action.dev, present, pos)
            self._materialize(name)

    def _materialize(self, name: str) -> None:
        if self._dirty is not None:
            self._dirty.add(name)
            return
        meta = self.list_meta(name)
        if meta.visible():
            papers = self.papers
            ids = [pid for pid in meta.order() if pid in papers]
            if self.lists.get(name) != ids:
                self.lists[name] = ids
                self.touched_lists.add(name)
        elif name in self.lists:
            del self.lists[name]
            self.touched_lists.add(name)

    def _relist(self, pid: str) -> None:
        for name, meta in list(self.list_metas.items()):
            if pid in meta.members:
                self._materialize(name)

    # ---- snapshots ---------------------------------------------------------------
    def header(self) -> dict[str, Any]:
        """The merge state's part of a snapshot header. Papers whose only metadata is the add
        stamp most of them share (one import is one action) need no line of their own."""
        counts = Counter(m.add for pid, m in self.metas.items() if pid in self.papers and _bare(m))
        missing = len(self.papers) - sum(1 for pid in self.metas if pid in self.papers)
        if missing:
            counts[self.default_add] += missing
        if counts:
            best = counts.most_common(1)[0][0]
            if best != self.default_add:
                for pid in self.papers:
                    if pid not in self.metas:
                        self.metas[pid] = PaperMeta(add=self.default_add)
                self.default_add = best
        return {
            "device": self.device,
            "vv": dict(self.applied),
            "hlc": self.clock.last,
            "add_default": list(self.default_add),
        }

    def lines(self) -> Iterator[dict[str, Any]]:
        """The metadata lines of a snapshot (after the papers and lists)."""
        for pid, meta in self.metas.items():
            if pid in self.papers and not (meta.add == self.default_add and _bare(meta)):
                yield {"smeta": pid, **meta.encode()}
        horizon = int(time.time() * 1000) - TOMBSTONE_DAYS * 86_400_000
        for pid, tomb in list(self.gone.items()):
            if tomb.action.hlc < horizon:
                del self.gone[pid]  # see TOMBSTONE_DAYS
                continue
            yield tomb.encode(pid)
        for name in list(self.lists):
            self.list_meta(name)
        for name, lmeta in self.list_metas.items():
            yield lmeta.encode(name)
        for pid, waiting in self.orphans.items():
            # edits of a paper whose add has not arrived: the header's vv counts them as applied,
            # so they must live in the file until the add comes
            yield {"orphan": pid, "ops": [[a.hlc, a.dev, a.seq, a.vv, op] for a, op in waiting]}

    def load(self, header: Mapping[str, Any], extra: list[dict[str, Any]]) -> None:
        """Take the metadata of this device's own snapshot (ValueError if it is not sound)."""
        self.metas, self.gone, self.list_metas, self.orphans = {}, {}, {}, {}
        vv = header.get("vv", {})
        self.applied = {str(k): int(v) for k, v in vv.items()} if isinstance(vv, dict) else {}
        self.clock.last = int(header.get("hlc", 0))
        add = header.get("add_default", [0, ""])
        self.default_add = (int(add[0]), str(add[1]))
        for rec in extra:
            if "smeta" in rec:
                self.metas[str(rec["smeta"])] = PaperMeta.decode(rec)
            elif "gone" in rec:
                self.gone[str(rec["gone"])] = Tombstone.decode(rec)
            elif "slist" in rec:
                self.list_metas[str(rec["slist"])] = ListMeta.decode(rec)
            elif "orphan" in rec:
                self.orphans[str(rec["orphan"])] = [_decode_orphan(raw) for raw in rec["ops"]]

    def join(self, papers: Mapping[str, Paper], lists: Mapping[str, list[str]], other: Replica) -> None:
        """Merge another device's whole state (its snapshot) into this one: the same merges as
        applying the actions it holds, one register at a time."""
        with self._lists_once():
            self._join(papers, lists, other)

    def _join(self, papers: Mapping[str, Paper], lists: Mapping[str, list[str]], other: Replica) -> None:
        for pid, paper in papers.items():
            self._join_paper(pid, paper.raw(), other.meta(pid))
        for pid, tomb in other.gone.items():
            self._join_paper(pid, tomb.record, tomb.meta)
            self._delete(tomb.action, pid)
        for name in lists:
            other.list_meta(name)
        for name, lmeta in other.list_metas.items():
            self._list_exists(Action(lmeta.exists[0], lmeta.exists[1], 0, {}), name, lmeta.exists[2])
            for pid, (hlc, dev, present, pos) in lmeta.members.items():
                self._member(Action(hlc, dev, 0, {}), name, pid, present, pos)
            self._materialize(name)
        for early in other.orphans.values():
            for action, op in early:
                self.apply_one(action, op)  # applied if the paper is here, kept waiting otherwise
        for dev, n in other.applied.items():
            if dev != self.device and self.applied.get(dev, 0) < n:
                self.applied[dev] = n
        self.clock.see(other.clock.last)

    def _join_paper(self, pid: str, record: dict[str, Any], meta: PaperMeta) -> None:
        base = {
            k: v
            for k, v in record.items()
            if k not in meta.heads and k not in meta.add_fields and k not in ("tags", "files")
        }
        self._add(Action(meta.add[0], meta.add[1], 0, {}), pid, base)
        for name, stamp in meta.add_fields.items():
            if name in record and name not in meta.heads:
                self._add(Action(stamp[0], stamp[1], 0, {}), pid, {name: record[name]})
        for name, heads in meta.heads.items():
            for h in heads:
                value = record.get(name, FIELDS.get(name)) if name in NO_CONFLICT else h.value
                self._set(Action(h.hlc, h.dev, h.seq, h.vv), pid, name, value)
        for tag in record.get("tags", []):
            if tag not in meta.tags:
                self._tag(Action(meta.add[0], meta.add[1], 0, {}), pid, tag, True)
        for tag, (hlc, dev, present) in meta.tags.items():
            self._tag(Action(hlc, dev, 0, {}), pid, tag, present)
        for key, reg in self._file_regs(record, meta).items():
            self._file(Action(reg[0], reg[1], 0, {}), pid, key, reg)


def _put(raw: dict[str, Any], name: str, value: Any) -> None:
    if value == FIELDS[name]:
        raw.pop(name, None)
    else:
        raw[name] = value


def _bare(meta: PaperMeta) -> bool:
    return not meta.add_fields and not meta.heads and not meta.tags and not meta.files


def _decode_orphan(raw: list[Any]) -> tuple[Action, list[Any]]:
    hlc, dev, seq, vv, op = raw
    if not (isinstance(op, list) and op and op[0] in _PAPER_OPS and isinstance(vv, dict)):
        raise ValueError("a waiting edit needs its stamp and operation")
    return Action(int(hlc), str(dev), int(seq), {str(k): int(v) for k, v in vv.items()}), op


# each fine operation's arguments (another device's line is read only if it has this shape, so that
# a line of a newer or faulty Papershelf waits as "cannot be read" rather than stopping the open)
_SHAPES: dict[str, tuple[type | tuple[type, ...], ...]] = {
    "a": (str, dict),
    "f": (str, str, object),
    "t": (str, str, bool),
    "F": (str, str, bool, (int, float), dict),  # paper, attachments.file_key, attached, place, record
    "x": (str,),
    "L": (str, bool),
    "m": (str, str, bool, (int, float)),
}
_STATUSES = frozenset(s.value for s in Status)
# the operations on one paper (one on a paper not known yet waits for its add)
_PAPER_OPS = frozenset({"f", "t", "x", "F"})


def _members_off(name: str, ids: list[str], meta: ListMeta | None) -> list[list[Any]]:
    """The operations that take `ids` off list `name` (at the places they had)."""
    return [["m", name, pid, False, meta.members[pid][3] if meta else 0.0] for pid in ids]


def _members_on(name: str, ids: list[str], kept: list[str], meta: ListMeta | None) -> list[list[Any]]:
    """The operations that put `ids` on list `name` in their order; `kept`: the members
    it held already, in its order."""
    kept_set = set(kept)
    out: list[list[Any]] = []
    if [pid for pid in ids if pid in kept_set] == kept and ids[: len(kept)] == kept:
        # only appended: the old places stay, the new ones go after the last
        last = max((meta.members[p][3] for p in kept), default=-1.0) if meta else -1.0
        for pid in ids[len(kept) :]:
            last += 1.0
            out.append(["m", name, pid, True, last])
        return out
    for i, pid in enumerate(ids):
        place = meta.members.get(pid) if meta else None
        if place is None or not place[2] or place[3] != float(i):
            out.append(["m", name, pid, True, float(i)])
    return out


def _file_places(keys: list[str], kept: list[str], regs: Mapping[str, FileReg]) -> dict[str, float]:
    """The places of a paper's files `keys` (in their order); `kept`: those it had already, in
    its order. Only appended: the old places stay, the new ones go after the last; else by index."""
    if keys[: len(kept)] != kept:
        return {k: float(i) for i, k in enumerate(keys)}
    last = max((regs[k][3] for k in kept), default=-1.0)
    places = {k: regs[k][3] for k in kept}
    for k in keys[len(kept) :]:
        last += 1.0
        places[k] = last
    return places


def _value_ok(name: str, value: Any) -> bool:
    """Whether `value` has the type of field `name` (a field Papershelf does not know is ignored)."""
    default = FIELDS.get(name)
    if name not in FIELDS:
        return True
    if name == "status":
        return value in _STATUSES
    if default is None:
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    if isinstance(default, list):
        if name == "files":
            return isinstance(value, list) and all(
                isinstance(x, dict) and isinstance(x.get("path"), str) for x in value
            )
        if name == "sources":
            return isinstance(value, list) and all(isinstance(x, dict) for x in value)
        return isinstance(value, list) and all(isinstance(x, str) for x in value)
    return isinstance(value, type(default))


def parse_action(record: Mapping[str, Any]) -> tuple[Action, list[list[Any]]]:
    """The action and fine operations of a device's journal line (ValueError if malformed)."""
    hlc, dev, seq, vv, ops = record["hlc"], record["dev"], record["seq"], record.get("vv", {}), record["ops"]
    if not (isinstance(hlc, int) and isinstance(dev, str) and isinstance(seq, int) and isinstance(vv, dict)):
        raise ValueError("its stamp has the wrong type")
    if not isinstance(ops, list) or not all(isinstance(op, list) and op and op[0] in _SHAPES for op in ops):
        raise ValueError("unknown operation")
    for op in ops:
        shape = _SHAPES[op[0]]
        if len(op) != len(shape) + 1 or not all(isinstance(x, t) for x, t in zip(op[1:], shape, strict=True)):
            raise ValueError(f"an operation {op[0]!r} has the wrong shape")
        if op[0] == "F" and not _value_ok("files", [op[5]]):
            raise ValueError("an attached file's record has the wrong type")
        if op[0] == "f" and not _value_ok(op[2], op[3]):
            raise ValueError(f"a value of {op[2]!r} has the wrong type")
        if op[0] == "a" and not all(isinstance(k, str) and _value_ok(k, v) for k, v in op[2].items()):
            raise ValueError("an added paper has a value of the wrong type")
    return Action(hlc, dev, seq, {str(k): int(v) for k, v in vv.items()}), ops
