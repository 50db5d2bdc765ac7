"""How edits of several devices merge: the library's replicated state.

Each device appends its own edits, one journal line per user action, stamped
with a hybrid logical clock (`hlc`: max(wall-clock ms, last stamp seen + 1)),
its device id, its own action number `seq` and `vv`, the version vector of
what it had applied before (device → how many of its actions). A line holds
fine-grained operations (`FineOp` kinds below); the store turns the facade's
coarse `Op`s into them by comparing with the state the user acted on
(`translate`). Merging rules, each commutative, associative and idempotent so
that every device reaches the same library from the same actions in any
order (lines of one device in its order, and a line only once what its `vv`
names has been applied: causal delivery, `SyncState.ready`):

* a paper's field is a multi-value register: the values set by actions that
  no other action on that field had seen are its *heads*; the winner is the
  head with the highest (hlc, device), the others are conflicts, kept with
  their values until an action that saw them sets the field again (taking
  one, or the winner, is such an action). Bookkeeping fields (`NO_CONFLICT`)
  keep only the winner.
* a paper added twice (one paper imported on two devices: ids come from the
  content's fingerprint) is one paper; per field, the latest add that has it.
  A field set by an action always wins over a value an add brought.
* a tag, and a paper's place on a reading list, are one last-writer-wins
  register each: adding one tag is never undone by an unrelated edit.
* a paper's files are a set of attachments, one last-writer-wins register
  each (`FileReg`, keyed by `attachments.file_key`: the content's sha256, or
  the path when it is not known) holding whether it is attached, its place
  and its record: attaching one file and detaching another never undo each
  other; attaching and detaching the same file at once, the later stamp wins.
  They are shown by (place, stamp of the register, key): a file appended on
  two devices at once goes after the files both had, the earlier stamp first.
* a reading list's existence is a register; its order is a position per
  member, ordered by (position, id).
* a deletion is a tombstone holding the paper. An edit stamped later than the
  deletion brings the paper back; an edit the deletion had not seen, stamped
  before it, stays with the deleted paper and is listed as a conflict that can
  restore it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..paper import FIELDS, Paper, normalize_tag

# fields the store keeps for itself: the latest value wins, no conflict is kept
NO_CONFLICT = frozenset(
    {"updated", "fingerprint", "sources", "added", "reading_at", "read_at", "title_derived", "distinct", "opened_at"}
)

Stamp = tuple[int, str]  # (hlc, device): the total order of actions
# one attachment of a paper: (hlc, device, attached, place, its record)
FileReg = tuple[int, str, bool, float, dict[str, Any]]


@dataclass(slots=True)
class Action:
    """One journal line's identity: when, which device, its number there, what it had seen."""

    hlc: int
    dev: str
    seq: int
    vv: dict[str, int]

    @property
    def stamp(self) -> Stamp:
        """The action's place in the total order of actions."""
        return (self.hlc, self.dev)

    def saw(self, dev: str, seq: int) -> bool:
        """Whether this action was made after `dev`'s action number `seq` had been applied."""
        if dev == self.dev:
            return seq < self.seq
        return self.vv.get(dev, 0) >= seq


@dataclass(slots=True)
class Head(Action):
    """One value of a field set by an action no other action on the field had seen: the
    action (its stamp, number and what it had seen) and the value it set."""

    value: Any

    def encode(self) -> list[Any]:
        """As a snapshot line holds it."""
        return [self.hlc, self.dev, self.seq, self.vv, self.value]

    @classmethod
    def decode(cls, raw: list[Any]) -> Head:
        """From a snapshot line (ValueError if it is not one)."""
        hlc, dev, seq, vv, value = raw
        if not (isinstance(hlc, int) and isinstance(dev, str) and isinstance(seq, int) and isinstance(vv, dict)):
            raise ValueError("a field's value needs its stamp")
        return cls(hlc, dev, seq, {str(k): int(v) for k, v in vv.items()}, value)


@dataclass(slots=True)
class PaperMeta:
    """What a paper's record alone does not say: who set what, when."""

    add: Stamp = (0, "")  # the latest add of the paper
    add_fields: dict[str, Stamp] = field(default_factory=dict)  # per field, when a second add differed
    heads: dict[str, list[Head]] = field(default_factory=dict)  # fields set by actions
    tags: dict[str, tuple[int, str, bool]] = field(default_factory=dict)  # tag → (hlc, dev, present)
    files: dict[str, FileReg] = field(default_factory=dict)  # attachments.file_key → its register

    def latest(self) -> Stamp:
        """The stamp of the paper's latest change (a second add of the paper, stamped later than
        the first, counts: whichever of the two arrived first, `add` is that one's stamp)."""
        best = max(self.add, *self.add_fields.values()) if self.add_fields else self.add
        for heads in self.heads.values():
            for h in heads:
                best = max(best, h.stamp)
        for hlc, dev, _ in self.tags.values():
            best = max(best, (hlc, dev))
        for reg in self.files.values():
            best = max(best, (reg[0], reg[1]))
        return best

    def is_plain(self) -> bool:
        """Whether nothing but a library from before sharing is known of the paper."""
        return self.add == (0, "") and not self.add_fields and not self.heads and not self.tags and not self.files

    def encode(self) -> dict[str, Any]:
        """As a snapshot line holds it (only what is set)."""
        out: dict[str, Any] = {"a": list(self.add)}
        if self.add_fields:
            out["o"] = {k: list(v) for k, v in self.add_fields.items()}
        if self.heads:
            out["f"] = {k: [h.encode() for h in hs] for k, hs in self.heads.items()}
        if self.tags:
            out["t"] = {k: list(v) for k, v in self.tags.items()}
        if self.files:
            out["F"] = {k: list(v) for k, v in self.files.items()}
        return out

    @classmethod
    def decode(cls, raw: Mapping[str, Any]) -> PaperMeta:
        """From a snapshot line (ValueError, KeyError or TypeError if it is not one)."""
        meta = cls()
        a = raw.get("a", [0, ""])
        meta.add = (int(a[0]), str(a[1]))
        meta.add_fields = {str(k): (int(v[0]), str(v[1])) for k, v in raw.get("o", {}).items()}
        meta.heads = {str(k): [Head.decode(h) for h in hs] for k, hs in raw.get("f", {}).items()}
        meta.tags = {str(k): (int(v[0]), str(v[1]), bool(v[2])) for k, v in raw.get("t", {}).items()}
        meta.files = {str(k): decode_file_reg(v) for k, v in raw.get("F", {}).items()}
        for name in list(meta.add_fields) + list(meta.heads):
            if name not in FIELDS or name == "id":
                raise ValueError(f"unknown field {name!r}")
        return meta


def decode_file_reg(raw: list[Any]) -> FileReg:
    """An attachment's register from a snapshot line (ValueError if it is not one)."""
    hlc, dev, present, pos, record = raw
    if not (isinstance(record, dict) and isinstance(record.get("path"), str)):
        raise ValueError("an attached file needs its record")
    return (int(hlc), str(dev), bool(present), float(pos), record)


def shown_files(regs: Mapping[str, FileReg]) -> list[dict[str, Any]]:
    """A paper's files as shown: the attached ones by (place, stamp, key)."""
    on = sorted((reg[3], reg[0], reg[1], key) for key, reg in regs.items() if reg[2])
    return [regs[key][4] for _, _, _, key in on]


@dataclass(slots=True)
class Tombstone:
    """A deleted paper: when, by which action, and the paper as it was (edits it had not seen included)."""

    action: Action
    record: dict[str, Any]
    meta: PaperMeta

    def unseen(self) -> list[Head]:
        """The edits of the paper the deletion had not seen (a conflict: it can be restored)."""
        return [h for hs in self.meta.heads.values() for h in hs if not self.action.saw(h.dev, h.seq)]

    def encode(self, pid: str) -> dict[str, Any]:
        """As a snapshot line holds it."""
        a = self.action
        return {
            "gone": pid,
            "by": [a.hlc, a.dev, a.seq, a.vv],
            "record": self.record,
            "meta": self.meta.encode(),
        }

    @classmethod
    def decode(cls, raw: Mapping[str, Any]) -> Tombstone:
        """From a snapshot line (ValueError, KeyError or TypeError if it is not one)."""
        hlc, dev, seq, vv = raw["by"]
        record = raw["record"]
        if not isinstance(record, dict):
            raise ValueError("a deleted paper needs its record")
        return cls(
            Action(int(hlc), str(dev), int(seq), {str(k): int(v) for k, v in vv.items()}),
            record,
            PaperMeta.decode(raw.get("meta", {})),
        )


@dataclass(slots=True)
class ListMeta:
    """A reading list's existence and its members' places."""

    exists: tuple[int, str, bool] = (0, "", True)
    members: dict[str, tuple[int, str, bool, float]] = field(default_factory=dict)  # id → (hlc, dev, on, pos)

    def visible(self) -> bool:
        """Whether the list is shown: it exists, or a paper was put on it after it was deleted."""
        if self.exists[2]:
            return True
        return any(on and (h, d) > self.exists[:2] for h, d, on, _ in self.members.values())

    def order(self) -> list[str]:
        """The ids on the list, by (position, id)."""
        on = [(pos, pid) for pid, (_, _, present, pos) in self.members.items() if present]
        return [pid for _, pid in sorted(on)]

    def encode(self, name: str) -> dict[str, Any]:
        """As a snapshot line holds it."""
        return {"slist": name, "e": list(self.exists), "m": {k: list(v) for k, v in self.members.items()}}

    @classmethod
    def decode(cls, raw: Mapping[str, Any]) -> ListMeta:
        """From a snapshot line (ValueError, KeyError or TypeError if it is not one)."""
        e = raw["e"]
        meta = cls((int(e[0]), str(e[1]), bool(e[2])))
        meta.members = {str(k): (int(v[0]), str(v[1]), bool(v[2]), float(v[3])) for k, v in raw.get("m", {}).items()}
        return meta


class Clock:
    """A hybrid logical clock: never behind the wall clock, never behind what was seen."""

    def __init__(self) -> None:
        self.last = 0

    def see(self, hlc: int) -> None:
        """Another action's stamp was seen: the next stamp is later."""
        self.last = max(self.last, hlc)

    def tick(self) -> int:
        """The stamp of a new action."""
        self.last = max(int(time.time() * 1000), self.last + 1)
        return self.last


def heads_merge(heads: list[Head], new: Head) -> tuple[list[Head], bool]:
    """`heads` with `new` merged in (those it saw drop out; it is dropped if one saw it).
    Returns the heads and whether anything changed."""
    if any(h.stamp == new.stamp for h in heads) or any(h.saw(new.dev, new.seq) for h in heads):
        return heads, False
    return [h for h in heads if not new.saw(h.dev, h.seq)] + [new], True


def winner(heads: Iterable[Head]) -> Head:
    """The value shown: the head with the highest (hlc, device)."""
    return max(heads, key=lambda h: h.stamp)


@dataclass
class Conflict:
    """A value kept because another device set the same field at the same time, or
    a paper deleted while another device edited it."""

    paper: str
    field: str  # "" for a paper deleted while edited
    value: Any  # the value kept (the deleted paper's title for a deletion)
    current: Any  # the value the library shows
    device: str  # the device that set the kept value
    hlc: int

    def describe(self) -> dict[str, Any]:
        """As `papershelf conflicts --json` prints it."""
        return {
            "paper": self.paper,
            "field": self.field or "(deleted)",
            "kept": self.value,
            "current": self.current,
            "device": self.device,
            "when": self.hlc,
        }


def iter_conflicts(
    papers: Mapping[str, Paper], metas: Mapping[str, PaperMeta], gone: Mapping[str, Tombstone]
) -> Iterator[Conflict]:
    """Every kept conflict: fields with more than one head, deletions that had not seen an edit."""
    for pid, meta in metas.items():
        paper = papers.get(pid)
        if paper is None:
            continue
        for name, heads in meta.heads.items():
            if len(heads) > 1:
                win = winner(heads)
                for h in sorted(heads, key=lambda h: h.stamp):
                    if h is not win:
                        yield Conflict(pid, name, h.value, win.value, h.dev, h.hlc)
    for pid, tomb in gone.items():
        unseen = tomb.unseen()
        if unseen and pid not in papers:
            last = max(unseen, key=lambda h: h.stamp)
            yield Conflict(pid, "", tomb.record.get("title", ""), None, last.dev, last.hlc)


def normal_tags(value: Any) -> list[str]:
    """Tags as the store keeps them: normalized, sorted, no empty one."""
    return sorted({normalize_tag(t) for t in value} - {""}) if isinstance(value, list) else []
